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


"""Tests for the deployment contracts and their local-development providers.

Cases: P2-RDY-11 (loopback-only local-development providers). The contract
suites of P5-CTR run against the reference implementations later.
"""

from __future__ import annotations

import asyncio

from google.adk.mcp_apps.contracts import BindingKey
from google.adk.mcp_apps.contracts import BindingKeyUnavailableError
from google.adk.mcp_apps.contracts import BindingRevisionKeyProvider
from google.adk.mcp_apps.contracts import CreationReceipt
from google.adk.mcp_apps.contracts import ExportAuditRecord
from google.adk.mcp_apps.contracts import ExportAuditStatus
from google.adk.mcp_apps.contracts import ExportAuditStore
from google.adk.mcp_apps.contracts import LifecycleConflictError
from google.adk.mcp_apps.contracts import LifecycleState
from google.adk.mcp_apps.contracts import local_dev
from google.adk.mcp_apps.contracts import Principal
from google.adk.mcp_apps.contracts import PrincipalRequest
from google.adk.mcp_apps.contracts import PrincipalResolver
from google.adk.mcp_apps.contracts import PrincipalUnresolvedError
from google.adk.mcp_apps.contracts import RendererRegistration
from google.adk.mcp_apps.contracts import ReplayClass
from google.adk.mcp_apps.contracts import ReplayClassificationAuthority
from google.adk.mcp_apps.contracts import SealedEnvelope
from google.adk.mcp_apps.contracts import SealedRecordScope
from google.adk.mcp_apps.contracts import SealedResultReason
from google.adk.mcp_apps.contracts import SealedResultStore
from google.adk.mcp_apps.contracts import SealedResultStoreError
from google.adk.mcp_apps.contracts import SessionAuthorizer
from google.adk.mcp_apps.contracts import SessionKey
from google.adk.mcp_apps.contracts import SessionLifecycleStore
from google.adk.mcp_apps.contracts import SessionPurpose
from google.adk.mcp_apps.contracts import ToolIdentity
from google.adk.mcp_apps.errors import McpAppsError
import pytest

_SESSION = SessionKey('app', 'user', 'session')

_DEV_PROVIDERS = [
    (local_dev.LocalDevRenderer, RendererRegistration),
    (local_dev.LocalDevPrincipalResolver, PrincipalResolver),
    (local_dev.LocalDevSessionAuthorizer, SessionAuthorizer),
    (local_dev.LocalDevSealedResultStore, SealedResultStore),
    (local_dev.LocalDevSessionLifecycleStore, SessionLifecycleStore),
    (local_dev.LocalDevExportAuditStore, ExportAuditStore),
    (local_dev.LocalDevKeyProvider, BindingRevisionKeyProvider),
    (local_dev.LocalDevReplayClassification, ReplayClassificationAuthority),
]


def _raises(reason: SealedResultReason):
  """`pytest.raises` for a `SealedResultStoreError` with this reason."""
  return pytest.raises(
      SealedResultStoreError, check=lambda e: e.reason is reason
  )


@pytest.mark.conformance('P2-RDY-11')
@pytest.mark.parametrize('cls, contract', _DEV_PROVIDERS)
def test_dev_providers_implement_and_are_marked(cls, contract):
  """P2-RDY-11: each dev provider implements its contract, marked dev-only."""
  provider = cls()
  assert isinstance(provider, contract)
  assert cls.__name__.startswith('LocalDev')
  assert provider.dev_only is True
  assert provider.loopback_only is True
  assert 'DEV ONLY' in cls.__doc__


@pytest.mark.conformance('P2-RDY-11', 'P5-CTR-01')
@pytest.mark.parametrize(
    'client_host, origin',
    [
        ('127.0.0.1', None),
        ('127.8.9.10', None),
        ('::1', None),
        ('[::1]', 'http://[::1]:8000'),
        ('::ffff:127.0.0.1', None),
        ('localhost', 'http://localhost:8000'),
        ('127.0.0.1', 'https://127.0.0.1'),
    ],
)
def test_dev_resolver_accepts_loopback_requests(client_host, origin):
  """P2-RDY-11: a loopback peer and origin resolve to the dev principal."""
  resolver = local_dev.LocalDevPrincipalResolver('dev-user')
  principal = asyncio.run(
      resolver.resolve(PrincipalRequest(client_host, origin=origin))
  )
  assert principal == Principal('dev-user')
  assert 'dev-user' not in repr(principal)


@pytest.mark.conformance('P2-RDY-11', 'P5-CTR-01')
@pytest.mark.parametrize(
    'client_host, origin',
    [
        ('10.0.0.5', None),
        ('192.168.1.2', 'http://localhost:8000'),
        ('0.0.0.0', None),
        ('example.com', None),
        ('', None),
        ('127.0.0.1', 'https://evil.example'),
        ('127.0.0.1', 'http://127.0.0.1.evil.example'),
        ('127.0.0.1', 'null'),
        ('127.0.0.1', 'file://localhost'),
        ('::ffff:10.0.0.1', None),
    ],
)
def test_dev_resolver_refuses_non_loopback_requests(client_host, origin):
  """P2-RDY-11: a non-loopback peer or origin resolves no principal."""
  resolver = local_dev.LocalDevPrincipalResolver()
  with pytest.raises(PrincipalUnresolvedError) as excinfo:
    asyncio.run(resolver.resolve(PrincipalRequest(client_host, origin=origin)))
  assert excinfo.value.reason == 'not_loopback'
  assert isinstance(excinfo.value, McpAppsError)


@pytest.mark.conformance('P2-RDY-11', 'P5-CTR-02')
def test_dev_authorizer_grants_export_only_when_enabled():
  """P2-RDY-11: the dev authorizer never grants export by default."""
  principal = Principal('p')
  default = local_dev.LocalDevSessionAuthorizer()
  enabled = local_dev.LocalDevSessionAuthorizer(allow_export=True)
  assert asyncio.run(
      default.authorize(principal, _SESSION, SessionPurpose.VIEW)
  )
  assert not asyncio.run(
      default.authorize(principal, _SESSION, SessionPurpose.EXPORT)
  )
  assert asyncio.run(
      enabled.authorize(principal, _SESSION, SessionPurpose.EXPORT)
  )


@pytest.mark.conformance('P2-RDY-11')
def test_dev_sealed_store_is_scoped_and_immutable():
  """P2-RDY-11: the dev sealed store honours scope and immutable create."""
  store = local_dev.LocalDevSealedResultStore()
  scope = SealedRecordScope(_SESSION, 1, 'event-1', 'call-1')
  envelope = SealedEnvelope(b'{"content":[]}', b'{"tool":"show"}')

  async def scenario():
    ref = await store.create(
        scope, operation_instance_id='op-1', envelope=envelope, expires_at=10
    )
    again = await store.create(
        scope, operation_instance_id='op-1', envelope=envelope, expires_at=10
    )
    assert again == ref
    assert len(ref.record_id) >= 22
    assert ref.to_wire() == {'recordId': ref.record_id, 'schemaVersion': 1}
    with _raises(SealedResultReason.CONFLICT):
      await store.create(
          scope,
          operation_instance_id='op-1',
          envelope=SealedEnvelope(b'other'),
          expires_at=10,
      )
    assert await store.resolve(scope, ref) == envelope
    other_incarnation = SealedRecordScope(_SESSION, 2, 'event-1', 'call-1')
    with _raises(SealedResultReason.NOT_FOUND):
      await store.resolve(other_incarnation, ref)

    async def referenced(scope, ref):
      return False

    assert await store.collect_garbage(now=5, is_referenced=referenced) == 0
    assert await store.delete_incarnation(_SESSION, 1) == 1
    with _raises(SealedResultReason.NOT_FOUND):
      await store.resolve(scope, ref)

  asyncio.run(scenario())
  assert '{"content"' not in repr(envelope)


@pytest.mark.conformance('P2-RDY-11')
def test_dev_lifecycle_store_enforces_the_state_machine():
  """P2-RDY-11: the dev lifecycle store refuses out-of-order transitions."""
  store = local_dev.LocalDevSessionLifecycleStore()

  async def scenario():
    absent = await store.read(_SESSION)
    assert (absent.state, absent.incarnation) == (LifecycleState.ABSENT, 0)
    creating = await store.reserve_creation(
        _SESSION, expected=absent, operation_id='create-1'
    )
    assert (creating.state, creating.incarnation) == (
        LifecycleState.CREATING,
        1,
    )
    with pytest.raises(LifecycleConflictError):
      await store.reserve_creation(
          _SESSION, expected=absent, operation_id='create-2'
      )
    with pytest.raises(LifecycleConflictError):
      await store.activate(
          _SESSION, receipt=CreationReceipt('create-2', 1, 'digest')
      )
    active = await store.activate(
        _SESSION, receipt=CreationReceipt('create-1', 1, 'digest')
    )
    assert active.state is LifecycleState.ACTIVE
    await store.begin_deletion(_SESSION, incarnation=1)
    await store.record_cascade_step(_SESSION, incarnation=1, step='sidecar')
    deleted = await store.complete_deletion(_SESSION, incarnation=1)
    assert deleted.cascade_steps == frozenset({'sidecar'})
    again = await store.reserve_creation(
        _SESSION, expected=deleted, operation_id='create-3'
    )
    assert (again.state, again.incarnation) == (LifecycleState.CREATING, 2)

  asyncio.run(scenario())


@pytest.mark.conformance('P2-RDY-11')
def test_dev_audit_store_is_idempotent_per_status():
  """P2-RDY-11: the dev audit store keeps one record per status."""
  store = local_dev.LocalDevExportAuditStore(retention_seconds=10)
  record = ExportAuditRecord(
      'op-1', 'p', _SESSION, 1, 'e', 'c', 'r', ExportAuditStatus.AUTHORIZED, 0
  )

  async def scenario():
    await store.append(record)
    await store.append(record)
    assert await store.records('op-1') == (record,)
    assert await store.purge_expired(now=20) == 1
    assert await store.records('op-1') == ()

  asyncio.run(scenario())


@pytest.mark.conformance('P2-RDY-11')
def test_dev_key_provider_and_classification():
  """P2-RDY-11: dev key lookup is typed; unknown tools are not replay-safe."""
  keys = local_dev.LocalDevKeyProvider(secret=b'k' * 32)
  assert keys.key('local-dev-1') == keys.active_key()
  with pytest.raises(BindingKeyUnavailableError):
    keys.key('retired')
  assert 'kkkk' not in repr(keys.active_key())
  with pytest.raises(ValueError):
    BindingKey('bad:id', b'k' * 32)
  with pytest.raises(ValueError):
    BindingKey('short', b'k' * 16)
  authority = local_dev.LocalDevReplayClassification(['show'])
  assert (
      authority.classify(ToolIdentity('s', 't', 'show'))
      is ReplayClass.REPLAY_SAFE
  )
  assert (
      authority.classify(ToolIdentity('s', 't', 'buy'))
      is ReplayClass.NOT_REPLAY_SAFE
  )
