# Copyright 2026 Google LLC
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.


"""Tests for readiness-gated binding of the host profile.

Cases: P2-RDY-02 .. P2-RDY-09 (which missing prerequisite makes a profile
not bindable, and that nothing is then advertised) and P2-RDY-11 (the
loopback-only local-development configuration).
"""

from __future__ import annotations

from google.adk.mcp_apps.contracts import BindingKeyUnavailableError
from google.adk.mcp_apps.contracts.local_dev import LocalDevExportAuditStore
from google.adk.mcp_apps.contracts.local_dev import LocalDevKeyProvider
from google.adk.mcp_apps.contracts.local_dev import LocalDevPrincipalResolver
from google.adk.mcp_apps.contracts.local_dev import LocalDevRenderer
from google.adk.mcp_apps.contracts.local_dev import LocalDevReplayClassification
from google.adk.mcp_apps.contracts.local_dev import LocalDevSealedResultStore
from google.adk.mcp_apps.contracts.local_dev import LocalDevSessionAuthorizer
from google.adk.mcp_apps.contracts.local_dev import LocalDevSessionLifecycleStore
from google.adk.mcp_apps.profile import check_readiness
from google.adk.mcp_apps.profile import local_dev_profile
from google.adk.mcp_apps.profile import McpAppsHostProfile
from google.adk.mcp_apps.profile import Prerequisite
from google.adk.mcp_apps.profile import Problem
from google.adk.mcp_apps.profile import ProfileNotReadyError
from google.adk.mcp_apps.profile.readiness import PROVIDERS
import pytest

# One case per missing or non-conforming binding prerequisite.
PREREQUISITE_CASES = tuple(f'P2-RDY-{n:02d}' for n in range(2, 10))


def _production(cls):
  """A production stand-in: the dev implementation without the dev marker."""
  return type(f'Prod{cls.__name__}', (cls,), {'dev_only': False})


class _RemoteResolver:
  """A production resolver that accepts remote callers."""

  dev_only = False

  async def resolve(self, request):
    raise NotImplementedError


_PROD = {
    'renderer': lambda: _production(LocalDevRenderer)(),
    'principal_resolver': _RemoteResolver,
    'session_authorizer': lambda: _production(LocalDevSessionAuthorizer)(),
    'sealed_result_store': lambda: _production(LocalDevSealedResultStore)(),
    'session_lifecycle_store': lambda: _production(
        LocalDevSessionLifecycleStore
    )(),
    'export_audit_store': lambda: _production(LocalDevExportAuditStore)(),
    'key_provider': lambda: _production(LocalDevKeyProvider)(),
    'replay_classification': lambda: _production(
        LocalDevReplayClassification
    )(),
}


def _production_profile(**overrides):
  fields = {name: factory() for name, factory in _PROD.items()}
  fields.update(overrides)
  return McpAppsHostProfile(name='prod', **fields)


def test_complete_production_profile_is_bindable():
  """P2-RDY-02..09 baseline: all eight prerequisites present → bindable."""
  readiness = check_readiness(_production_profile(), allow_dev_providers=False)
  assert readiness.bindable
  assert readiness.reasons == ()
  readiness.raise_if_not_bindable()
  assert readiness.client_extensions() == {
      'io.modelcontextprotocol/ui': {'mimeTypes': ['text/html;profile=mcp-app']}
  }


@pytest.mark.parametrize(
    'case_id, prerequisite',
    [
        ('P2-RDY-02', Prerequisite.RENDERER),
        ('P2-RDY-03', Prerequisite.PRINCIPAL_RESOLVER),
        ('P2-RDY-04', Prerequisite.SESSION_AUTHORIZER),
        ('P2-RDY-05', Prerequisite.SEALED_RESULT_STORE),
        ('P2-RDY-06', Prerequisite.SESSION_LIFECYCLE_STORE),
        ('P2-RDY-07', Prerequisite.EXPORT_AUDIT_STORE),
        ('P2-RDY-08', Prerequisite.KEY_PROVIDER),
        ('P2-RDY-09', Prerequisite.REPLAY_CLASSIFICATION),
    ],
)
@pytest.mark.parametrize('allow_dev_providers', [False, True])
def test_missing_prerequisite_is_not_bindable(
    case_id, prerequisite, allow_dev_providers
):
  """P2-RDY-02..09: one missing prerequisite → not bindable, no advertising.

  Checked in both configurations; the reason names exactly that
  prerequisite, and no extension map is produced.
  """
  del case_id
  profile = _production_profile(**{prerequisite.value: None})
  readiness = check_readiness(profile, allow_dev_providers=allow_dev_providers)
  assert not readiness.bindable
  assert readiness.missing() == {prerequisite}
  assert [(r.prerequisite, r.problem) for r in readiness.reasons] == [
      (prerequisite, Problem.MISSING)
  ]
  assert readiness.client_extensions() == {}
  with pytest.raises(ProfileNotReadyError, match=prerequisite.value):
    readiness.raise_if_not_bindable()


@pytest.mark.conformance('P2-RDY-02')
def test_detached_renderer_is_not_bindable():
  """P2-RDY-02: a registered but detached renderer is not a renderer."""
  renderer = _production(LocalDevRenderer)()
  renderer.detach()
  readiness = check_readiness(
      _production_profile(renderer=renderer), allow_dev_providers=False
  )
  assert not readiness.bindable
  assert [(r.prerequisite, r.problem) for r in readiness.reasons] == [
      (Prerequisite.RENDERER, Problem.RENDERER_DETACHED)
  ]
  assert readiness.client_extensions() == {}


@pytest.mark.conformance(*PREREQUISITE_CASES)
def test_every_missing_prerequisite_is_listed():
  """P2-RDY-02..09: an empty profile lists all eight prerequisites."""
  readiness = check_readiness(
      McpAppsHostProfile(name='empty'), allow_dev_providers=True
  )
  assert readiness.missing() == frozenset(PROVIDERS)
  assert len(readiness.reasons) == 8
  assert readiness.client_extensions() == {}


@pytest.mark.conformance(*PREREQUISITE_CASES)
@pytest.mark.parametrize('prerequisite', list(PROVIDERS))
def test_non_conforming_provider_is_not_bindable(prerequisite):
  """P2-RDY-02..09: an object lacking its contract's members is refused."""
  readiness = check_readiness(
      _production_profile(**{prerequisite.value: object()}),
      allow_dev_providers=False,
  )
  assert [(r.prerequisite, r.problem) for r in readiness.reasons] == [
      (prerequisite, Problem.NOT_CONFORMING)
  ]


@pytest.mark.conformance('P2-RDY-08')
def test_key_provider_without_active_key_is_not_bindable():
  """P2-RDY-08: a key provider that cannot supply its active key."""

  class NoKey:

    def active_key(self):
      raise BindingKeyUnavailableError(None, 'not loaded')

    def key(self, key_id):
      raise BindingKeyUnavailableError(key_id)

  readiness = check_readiness(
      _production_profile(key_provider=NoKey()), allow_dev_providers=False
  )
  assert [(r.prerequisite, r.problem) for r in readiness.reasons] == [
      (Prerequisite.KEY_PROVIDER, Problem.KEY_UNAVAILABLE)
  ]


@pytest.mark.conformance('P2-RDY-05', 'P2-RDY-06', 'P2-RDY-07')
@pytest.mark.parametrize(
    'field, store_cls',
    [
        ('sealed_result_store', LocalDevSealedResultStore),
        ('session_lifecycle_store', LocalDevSessionLifecycleStore),
        ('export_audit_store', LocalDevExportAuditStore),
    ],
)
@pytest.mark.parametrize(
    'namespace, revision, problem',
    [
        ('', '1', Problem.MISSING_NAMESPACE),
        ('ns-x', '', Problem.MISSING_REVISION),
        ('   ', '1', Problem.MISSING_NAMESPACE),
    ],
)
def test_store_needs_namespace_and_revision(
    field, store_cls, namespace, revision, problem
):
  """P2-RDY-05..07: persistence hook: empty namespace or revision refused."""
  store = _production(store_cls)(namespace=namespace, revision=revision)
  readiness = check_readiness(
      _production_profile(**{field: store}), allow_dev_providers=False
  )
  assert [(r.prerequisite.value, r.problem) for r in readiness.reasons] == [
      (field, problem)
  ]


@pytest.mark.conformance('P2-RDY-05', 'P2-RDY-06')
def test_stores_sharing_a_namespace_are_refused():
  """P2-RDY-05/06: the lifecycle store needs a namespace of its own."""
  readiness = check_readiness(
      _production_profile(
          sealed_result_store=_production(LocalDevSealedResultStore)(
              namespace='shared'
          ),
          session_lifecycle_store=_production(LocalDevSessionLifecycleStore)(
              namespace='shared'
          ),
      ),
      allow_dev_providers=False,
  )
  assert [(r.prerequisite, r.problem) for r in readiness.reasons] == [
      (Prerequisite.SESSION_LIFECYCLE_STORE, Problem.NAMESPACE_COLLISION)
  ]


@pytest.mark.conformance('P2-RDY-09')
def test_classification_needs_source_and_revision():
  """P2-RDY-09: an authority with an empty revision is refused."""

  class NoRevision(_production(LocalDevReplayClassification)):

    @property
    def revision(self):
      return ''

  readiness = check_readiness(
      _production_profile(replay_classification=NoRevision()),
      allow_dev_providers=False,
  )
  assert [(r.prerequisite, r.problem) for r in readiness.reasons] == [
      (Prerequisite.REPLAY_CLASSIFICATION, Problem.MISSING_REVISION)
  ]


# P2-RDY-11


@pytest.mark.conformance('P2-RDY-11')
def test_local_dev_profile_binds_only_in_dev_configuration():
  """P2-RDY-11: loopback-only dev providers bind in the dev configuration."""
  profile = local_dev_profile()
  dev = check_readiness(profile, allow_dev_providers=True)
  assert dev.bindable
  assert dev.client_extensions() == profile.client_extensions()
  production = check_readiness(profile, allow_dev_providers=False)
  assert not production.bindable
  assert {r.prerequisite for r in production.reasons} == set(PROVIDERS)
  assert {r.problem for r in production.reasons} == {
      Problem.DEV_PROVIDER_REFUSED
  }
  assert production.client_extensions() == {}


@pytest.mark.conformance('P2-RDY-11')
@pytest.mark.parametrize('prerequisite', list(PROVIDERS))
def test_production_refuses_any_single_dev_provider(prerequisite):
  """P2-RDY-11: one dev provider in a production profile is refused."""
  dev_provider = getattr(local_dev_profile(), prerequisite.value)
  readiness = check_readiness(
      _production_profile(**{prerequisite.value: dev_provider}),
      allow_dev_providers=False,
  )
  assert [(r.prerequisite, r.problem) for r in readiness.reasons] == [
      (prerequisite, Problem.DEV_PROVIDER_REFUSED)
  ]


@pytest.mark.conformance('P2-RDY-11')
def test_dev_providers_need_a_loopback_resolver():
  """P2-RDY-11: dev stores behind a remote-capable resolver are refused."""
  readiness = check_readiness(
      local_dev_profile(principal_resolver=_RemoteResolver()),
      allow_dev_providers=True,
  )
  assert [(r.prerequisite, r.problem) for r in readiness.reasons] == [
      (Prerequisite.PRINCIPAL_RESOLVER, Problem.DEV_RESOLVER_NOT_LOOPBACK)
  ]


@pytest.mark.conformance('P2-RDY-11')
def test_dev_provider_not_marked_loopback_is_refused():
  """P2-RDY-11: a dev provider that is not loopback-only is refused."""
  not_loopback = type(
      'WideDevStore', (LocalDevSealedResultStore,), {'loopback_only': False}
  )()
  readiness = check_readiness(
      local_dev_profile(sealed_result_store=not_loopback),
      allow_dev_providers=True,
  )
  assert [(r.prerequisite, r.problem) for r in readiness.reasons] == [
      (Prerequisite.SEALED_RESULT_STORE, Problem.DEV_PROVIDER_NOT_LOOPBACK)
  ]


@pytest.mark.conformance('P2-RDY-11')
def test_production_profile_binds_in_dev_configuration_too():
  """P2-RDY-11: the dev flag only permits dev providers; it requires none."""
  assert check_readiness(
      _production_profile(), allow_dev_providers=True
  ).bindable
