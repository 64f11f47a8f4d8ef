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


"""Tests for the profile fingerprint and `binding_revision`.

Cases: P2-PROF-03 .. P2-PROF-12.
"""

from __future__ import annotations

import dataclasses
import json
import re

from google.adk.mcp_apps import canonical_json
from google.adk.mcp_apps.catalog.listing import ToolListingBounds
from google.adk.mcp_apps.contracts import BindingKeyUnavailableError
from google.adk.mcp_apps.contracts.local_dev import LocalDevExportAuditStore
from google.adk.mcp_apps.contracts.local_dev import LocalDevKeyProvider
from google.adk.mcp_apps.contracts.local_dev import LocalDevPrincipalResolver
from google.adk.mcp_apps.contracts.local_dev import LocalDevRenderer
from google.adk.mcp_apps.contracts.local_dev import LocalDevReplayClassification
from google.adk.mcp_apps.contracts.local_dev import LocalDevSealedResultStore
from google.adk.mcp_apps.contracts.local_dev import LocalDevSessionAuthorizer
from google.adk.mcp_apps.contracts.local_dev import LocalDevSessionLifecycleStore
from google.adk.mcp_apps.profile import AppPathProgress
from google.adk.mcp_apps.profile import binding_revision
from google.adk.mcp_apps.profile import CallbackPolicy
from google.adk.mcp_apps.profile import ConnectionAffinityPolicy
from google.adk.mcp_apps.profile import ContextModality
from google.adk.mcp_apps.profile import CrossSessionSharing
from google.adk.mcp_apps.profile import DeliveryLimits
from google.adk.mcp_apps.profile import ExtensionSettings
from google.adk.mcp_apps.profile import fingerprint_subset
from google.adk.mcp_apps.profile import HostCapabilities
from google.adk.mcp_apps.profile import HostLimits
from google.adk.mcp_apps.profile import HostProfileError
from google.adk.mcp_apps.profile import local_dev_profile
from google.adk.mcp_apps.profile import MCP_APP_MIME_TYPE
from google.adk.mcp_apps.profile import ProfileErrorReason
from google.adk.mcp_apps.profile import ResourcePolicySettings
from google.adk.mcp_apps.profile import verify_binding_revision
from google.adk.mcp_apps.profile.fingerprint import fingerprint_bytes
from google.adk.mcp_apps.resources import canonicalize_generic
from google.adk.mcp_apps.resources import ResourcePolicyEntry
from google.adk.mcp_apps.resources import UriCanonicalizer
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import pytest

_SECRET = bytes(range(32))
_NAME = st.text(
    alphabet='abcdefghijklmnopqrstuvwxyz0123456789-/.', min_size=1, max_size=12
)


def _profile(**overrides):
  fields = {
      'key_provider': LocalDevKeyProvider(key_id='k1', secret=_SECRET),
      'sealed_result_store': LocalDevSealedResultStore(
          namespace='sealed', revision='1'
      ),
      'session_lifecycle_store': LocalDevSessionLifecycleStore(
          namespace='lifecycle', revision='1'
      ),
      'replay_classification': LocalDevReplayClassification(['show']),
  }
  fields.update(overrides)
  return local_dev_profile(**fields)


_BASE = binding_revision(_profile())


@pytest.mark.conformance('P2-PROF-03')
def test_binding_revision_format_and_determinism():
  """P2-PROF-03..12 precondition: `v1:<key_id>:<hex>`, deterministic."""
  assert re.fullmatch(r'v1:k1:[0-9a-f]{64}', _BASE)
  assert binding_revision(_profile()) == _BASE
  assert verify_binding_revision(_profile(), _BASE)
  header, _, body = fingerprint_bytes(_profile()).partition(b'\n')
  assert header == b'adk-canonical-json/v1 binding-revision'
  assert json.loads(body) == fingerprint_subset(_profile())
  other_key = _profile(
      key_provider=LocalDevKeyProvider(key_id='k1', secret=b'\x01' * 32)
  )
  assert binding_revision(other_key) != _BASE
  assert not verify_binding_revision(other_key, _BASE)


@pytest.mark.conformance('P2-PROF-03')
def test_extension_settings_change_revision():
  """P2-PROF-03: changing the settings map (`mimeTypes`) changes it."""
  changed = _profile(
      extension_settings=ExtensionSettings(
          (MCP_APP_MIME_TYPE, 'text/html;profile=mcp-app-next')
      )
  )
  assert binding_revision(changed) != _BASE
  assert not verify_binding_revision(changed, _BASE)


@pytest.mark.conformance('P2-PROF-04')
@pytest.mark.parametrize(
    'capabilities',
    [
        HostCapabilities(
            update_model_context=frozenset({ContextModality.TEXT})
        ),
        HostCapabilities(
            update_model_context=frozenset({ContextModality.STRUCTURED_CONTENT})
        ),
        HostCapabilities(message=None),
        HostCapabilities(update_model_context=None),
        HostCapabilities(server_tools=False),
        HostCapabilities(server_resources=False),
    ],
)
def test_host_capability_modality_change_revision(capabilities):
  """P2-PROF-04: changing any host capability or modality changes it."""
  assert binding_revision(_profile(host_capabilities=capabilities)) != _BASE


@pytest.mark.conformance('P2-PROF-05')
def test_callback_policy_change_revision():
  """P2-PROF-05: changing the MCP-callback-matrix selection changes it."""
  changed = _profile(
      callback_policy=CallbackPolicy(app_path_progress=AppPathProgress.DISABLED)
  )
  assert binding_revision(changed) != _BASE


@pytest.mark.conformance('P2-PROF-06')
@pytest.mark.parametrize(
    'policy',
    [
        ConnectionAffinityPolicy(
            cross_session_sharing=CrossSessionSharing('handles/v1')
        ),
        ConnectionAffinityPolicy(idle_eviction_seconds=301),
        ConnectionAffinityPolicy(max_lifetime_seconds=7200),
    ],
)
def test_connection_affinity_change_revision(policy):
  """P2-PROF-06: changing the connection-affinity policy changes it."""
  assert binding_revision(_profile(connection_affinity=policy)) != _BASE


@pytest.mark.conformance('P2-PROF-06')
def test_handle_contracts_are_distinguished():
  """P2-PROF-06: two different declared handle contracts differ."""
  revisions = {
      binding_revision(
          _profile(
              connection_affinity=ConnectionAffinityPolicy(
                  cross_session_sharing=CrossSessionSharing(name)
              )
          )
      )
      for name in ('handles/v1', 'handles/v2')
  }
  assert len(revisions) == 2


@pytest.mark.conformance('P2-PROF-07')
@pytest.mark.parametrize(
    'policy',
    [
        ResourcePolicySettings([ResourcePolicyEntry.exact('ui://bqaa/x')]),
        ResourcePolicySettings([ResourcePolicyEntry.prefix('ui://bqaa/x')]),
        ResourcePolicySettings(
            canonicalizer=UriCanonicalizer().with_scheme(
                'ui', canonicalize_generic, revision='custom-1'
            )
        ),
    ],
)
def test_resource_policy_revision_change_revision(policy):
  """P2-PROF-07: changing the resource-policy revision changes it."""
  assert policy.revision != ResourcePolicySettings().revision
  assert binding_revision(_profile(resource_policy=policy)) != _BASE


@pytest.mark.conformance('P2-PROF-07')
def test_equal_policies_have_equal_revisions():
  """P2-PROF-07: spelling and order of entries do not change the revision."""
  a = ResourcePolicySettings([
      ResourcePolicyEntry.exact('ui://bqaa/x'),
      ResourcePolicyEntry.prefix('ui://bqaa/assets'),
  ])
  b = ResourcePolicySettings([
      ResourcePolicyEntry.prefix('UI://BQAA/assets'),
      ResourcePolicyEntry.exact('ui://bqaa/x#frag'),
  ])
  assert a.revision == b.revision
  assert binding_revision(_profile(resource_policy=a)) == binding_revision(
      _profile(resource_policy=b)
  )
  assert a.for_widget('ui://bqaa/dash').admits('ui://bqaa/assets/logo.png')


@pytest.mark.conformance('P2-PROF-08', 'P5-LIM-05')
@pytest.mark.parametrize(
    'limits',
    [
        HostLimits(sealing_max_bytes=1024),
        HostLimits(sealing_max_depth=32),
        HostLimits(register_max_bytes=1024),
        HostLimits(registers_max_total_bytes=1024 * 1024),
        HostLimits(mrtr_max_rounds=3),
        HostLimits(mrtr_max_seconds=5),
        HostLimits(discovery=ToolListingBounds(max_pages=2)),
        HostLimits(delivery=DeliveryLimits(max_queued_operations=2)),
    ],
)
def test_limits_revision_change_revision(limits):
  """P2-PROF-08: changing any limit changes the limits revision and it."""
  assert limits.revision != HostLimits().revision
  assert binding_revision(_profile(limits=limits)) != _BASE


@pytest.mark.conformance('P2-PROF-09')
@pytest.mark.parametrize(
    'store',
    [
        LocalDevSealedResultStore(namespace='sealed-2', revision='1'),
        LocalDevSealedResultStore(namespace='sealed', revision='2'),
    ],
)
def test_sealed_store_identity_change_revision(store):
  """P2-PROF-09: the sealed store's namespace or revision changes it."""
  assert binding_revision(_profile(sealed_result_store=store)) != _BASE


@pytest.mark.conformance('P2-PROF-10')
@pytest.mark.parametrize(
    'store',
    [
        LocalDevSessionLifecycleStore(namespace='lifecycle-2', revision='1'),
        LocalDevSessionLifecycleStore(namespace='lifecycle', revision='2'),
    ],
)
def test_lifecycle_store_identity_change_revision(store):
  """P2-PROF-10: the lifecycle store's namespace or revision changes it."""
  assert binding_revision(_profile(session_lifecycle_store=store)) != _BASE


@pytest.mark.conformance('P2-PROF-11')
def test_replay_classification_revision_change_revision():
  """P2-PROF-11: the classification revision is in the fingerprint.

  Reading: the RFC's readiness paragraph (revision in fingerprint and
  persistence validation) wins over the table row that omits it.
  """
  changed = _profile(
      replay_classification=LocalDevReplayClassification(['show', 'list'])
  )
  assert (
      changed.replay_classification_revision
      != _profile().replay_classification_revision
  )
  assert binding_revision(changed) != _BASE
  assert not verify_binding_revision(changed, _BASE)


@pytest.mark.conformance('P2-PROF-11')
def test_replay_classification_source_change_revision():
  """P2-PROF-11: the classification source is in the fingerprint too."""

  class OtherSource(LocalDevReplayClassification):

    @property
    def source(self):
      return 'tool-metadata'

  changed = _profile(replay_classification=OtherSource(['show']))
  assert changed.replay_classification_revision == (
      _profile().replay_classification_revision
  )
  assert binding_revision(changed) != _BASE


@pytest.mark.conformance('P2-PROF-11')
def test_missing_classification_cannot_be_fingerprinted():
  """P2-PROF-11: without an authority no binding revision exists."""
  with pytest.raises(
      HostProfileError,
      match='replay_classification',
      check=lambda e: e.reason is ProfileErrorReason.NO_BINDING_REVISION,
  ):
    binding_revision(_profile(replay_classification=None))


@pytest.mark.conformance('P2-PROF-12')
@pytest.mark.parametrize(
    'overrides',
    [
        {'name': 'another-name'},
        {'renderer': LocalDevRenderer('other-renderer', '9')},
        {'principal_resolver': LocalDevPrincipalResolver('someone-else')},
        {'session_authorizer': LocalDevSessionAuthorizer(allow_export=True)},
        {
            'export_audit_store': LocalDevExportAuditStore(
                namespace='audit-2', revision='7'
            )
        },
        {'export_audit_store': None},
        {'renderer': None},
        {
            'key_provider': LocalDevKeyProvider(key_id='k1', secret=_SECRET),
            'sealed_result_store': LocalDevSealedResultStore(
                namespace='sealed', revision='1'
            ),
        },
    ],
)
def test_fields_outside_subset_do_not_change_revision(overrides):
  """P2-PROF-12: fields outside the subset leave `binding_revision` alone.

  The last row replaces the providers by new objects with the same identity
  (a provider replacement), which also leaves it unchanged.
  """
  changed = _profile(**overrides)
  assert binding_revision(changed) == _BASE
  assert verify_binding_revision(changed, _BASE)


@pytest.mark.conformance('P2-PROF-12')
def test_missing_key_provider_fails_closed():
  """P2-PROF-12: the key provider is required, though not fingerprinted."""
  with pytest.raises(BindingKeyUnavailableError):
    binding_revision(_profile(key_provider=None))
  with pytest.raises(BindingKeyUnavailableError):
    verify_binding_revision(
        _profile(key_provider=LocalDevKeyProvider(key_id='k2', secret=_SECRET)),
        _BASE,
    )


# Property-based: one change inside the subset always changes the revision,
# one change outside it never does.

_INSIDE = st.one_of(
    _NAME.map(
        lambda n: {
            'extension_settings': ExtensionSettings(
                (MCP_APP_MIME_TYPE, f'application/x-{n.replace("/", "-")}')
            )
        }
    ),
    st.sampled_from([
        {'host_capabilities': HostCapabilities(message=None)},
        {
            'callback_policy': CallbackPolicy(
                app_path_progress=AppPathProgress.DISABLED
            )
        },
    ]),
    st.floats(min_value=1, max_value=1e6)
    .filter(lambda s: s != 300.0)
    .map(
        lambda s: {
            'connection_affinity': ConnectionAffinityPolicy(
                idle_eviction_seconds=s
            )
        }
    ),
    _NAME.map(
        lambda n: {
            'connection_affinity': ConnectionAffinityPolicy(
                cross_session_sharing=CrossSessionSharing(n)
            )
        }
    ),
    _NAME.map(
        lambda n: {
            'resource_policy': ResourcePolicySettings(
                [ResourcePolicyEntry.exact(f'ui://bqaa/{n.strip("./")}x')]
            )
        }
    ),
    st.integers(min_value=1, max_value=2**40)
    .filter(lambda v: v != 8 * 1024 * 1024)
    .map(lambda v: {'limits': HostLimits(sealing_max_bytes=v)}),
    st.tuples(_NAME, _NAME)
    .filter(lambda t: t != ('sealed', '1'))
    .map(
        lambda t: {
            'sealed_result_store': LocalDevSealedResultStore(
                namespace=t[0], revision=t[1]
            )
        }
    ),
    st.tuples(_NAME, _NAME)
    .filter(lambda t: t != ('lifecycle', '1'))
    .map(
        lambda t: {
            'session_lifecycle_store': LocalDevSessionLifecycleStore(
                namespace=t[0], revision=t[1]
            )
        }
    ),
    st.frozensets(_NAME, max_size=4)
    .filter(lambda s: s != frozenset({'show'}))
    .map(lambda s: {'replay_classification': LocalDevReplayClassification(s)}),
)

_OUTSIDE = st.one_of(
    _NAME.map(lambda n: {'name': n}),
    st.tuples(_NAME, _NAME).map(
        lambda t: {'renderer': LocalDevRenderer(t[0], t[1])}
    ),
    _NAME.map(lambda n: {'principal_resolver': LocalDevPrincipalResolver(n)}),
    st.booleans().map(
        lambda b: {
            'session_authorizer': LocalDevSessionAuthorizer(allow_export=b)
        }
    ),
    st.tuples(_NAME, _NAME).map(
        lambda t: {
            'export_audit_store': LocalDevExportAuditStore(
                namespace=t[0], revision=t[1]
            )
        }
    ),
)


@pytest.mark.conformance('P2-PROF-03')
@settings(max_examples=150, deadline=None)
@given(_INSIDE)
def test_any_single_subset_change_changes_revision(change):
  """P2-PROF-03..11: any single change inside the subset changes it."""
  assert binding_revision(_profile(**change)) != _BASE


@pytest.mark.conformance('P2-PROF-12')
@settings(max_examples=100, deadline=None)
@given(_OUTSIDE)
def test_any_change_outside_subset_keeps_revision(change):
  """P2-PROF-12: any change outside the subset keeps it."""
  assert binding_revision(_profile(**change)) == _BASE


@pytest.mark.conformance('P2-PROF-12', 'P2-CJ-09')
def test_fingerprint_subset_holds_no_ephemeral_or_identity_values():
  """P2-PROF-12: the subset names no renderer, principal or generation."""
  subset = fingerprint_subset(_profile())
  assert set(subset) == {
      'extension',
      'host_capabilities',
      'callback_policy',
      'connection_affinity',
      'resource_policy_revision',
      'limits_revision',
      'sealed_result_store',
      'session_lifecycle_store',
      'replay_classification',
  }
  text = json.dumps(subset)
  for absent in ('adk-web-local-dev', 'local-dev-1', 'generation', 'audit'):
    assert absent not in text
  assert dataclasses.is_dataclass(_profile())


@pytest.mark.conformance('P2-CJ-09')
def test_binding_revision_input_is_the_identity_subset_only():
  """P2-CJ-09: the HMAC input is the canonical envelope of the subset alone."""
  profile = _profile()
  subset = fingerprint_subset(profile)
  assert set(subset) == {
      'extension',
      'host_capabilities',
      'callback_policy',
      'connection_affinity',
      'resource_policy_revision',
      'limits_revision',
      'sealed_result_store',
      'session_lifecycle_store',
      'replay_classification',
  }
  assert fingerprint_bytes(profile) == canonical_json.envelope(
      canonical_json.Purpose.BINDING_REVISION, subset
  )
  assert canonical_json.open_envelope(
      canonical_json.Purpose.BINDING_REVISION, fingerprint_bytes(profile)
  ) == canonical_json.canonicalize(subset)
