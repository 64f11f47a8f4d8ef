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


"""The event-policy and audit-observer facades: snapshots and refusals.

Both facades hand out the Session state as a snapshot the shared golden
table covers (the state sits one level down in the facade's own snapshot,
so the limits shift by that wrapper), refuse every other attribute with a
recorded `UNAVAILABLE`, and refuse changes with `READ_ONLY`.
"""

from __future__ import annotations

from typing import Any
from typing import Callable

from google.adk.mcp_apps.batch.errors import BatchError
from google.adk.mcp_apps.batch.errors import BatchErrorReason
from google.adk.mcp_apps.batch.ledger import EVENT_POLICY
from google.adk.mcp_apps.batch.ledger import EventBatchEffects
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.facades.audit_context import ReadonlyAuditContext
from google.adk.mcp_apps.facades.errors import FacadeError
from google.adk.mcp_apps.facades.errors import FacadeErrorReason
from google.adk.mcp_apps.facades.event_policy import EventPolicyContext
from google.adk.mcp_apps.facades.snapshot import DEFAULT_MAX_DEPTH
from google.adk.mcp_apps.facades.snapshot import DEFAULT_MAX_VALUES
import pytest
from snapshot_properties import check_golden_table

KEY = SessionKey('app', 'user', 'session')

UNAVAILABLE_NAMES = (
    'session',
    'session_service',
    'artifact_service',
    'credential_service',
    'memory_service',
    'runner',
    'plugin_manager',
    'agent',
    'end_invocation',
    'actions',
    'event_actions',
    'state_delta',
    'save_artifact',
    'load_artifact',
    'load_credential',
    'request_credential',
    'run_config',
    'anything_else',
)


def _policy_context(
    state: dict[str, Any],
) -> tuple[EventPolicyContext, EventBatchEffects]:
  effects = EventBatchEffects(['call-1'], live_state=state)
  context = EventPolicyContext.build(
      session=KEY,
      invocation_id='inv-1',
      branch='root.app',
      agent_name='app_agent',
      state=state,
      ledger=effects.event_policy,
  )
  return context, effects


def _audit_context(state: dict[str, Any]) -> ReadonlyAuditContext:
  return ReadonlyAuditContext.build(
      session=KEY, state=state, invocation_id='inv-1', branch='root.app'
  )


FACADES: dict[str, Callable[[dict[str, Any]], Any]] = {
    'event_policy': lambda state: _policy_context(state)[0],
    'audit_observer': _audit_context,
}


@pytest.mark.conformance('P3-SNAP-17')
def test_event_policy_state_snapshot_passes_the_golden_table() -> None:
  check_golden_table(
      lambda value: _policy_context({'v': value})[0].state['v'],
      max_values=DEFAULT_MAX_VALUES - 1,
      max_depth=DEFAULT_MAX_DEPTH - 1,
  )


@pytest.mark.conformance('P3-SNAP-16')
def test_audit_observer_state_snapshot_passes_the_golden_table() -> None:
  check_golden_table(
      lambda value: _audit_context({'v': value}).state['v'],
      max_values=DEFAULT_MAX_VALUES - 1,
      max_depth=DEFAULT_MAX_DEPTH - 1,
  )


@pytest.mark.conformance('P3-FAC-01', 'P3-SNAP-16', 'P3-SNAP-17')
@pytest.mark.parametrize('facade', list(FACADES))
def test_facades_expose_identifiers_and_an_independent_state_snapshot(
    facade: str,
) -> None:
  live: dict[str, Any] = {'cart': {'items': ['A1']}}
  context = FACADES[facade](live)

  live['cart']['items'].append('B2')
  live['later'] = 1

  assert (context.app_name, context.user_id, context.session_id) == (
      'app',
      'user',
      'session',
  )
  assert (context.invocation_id, context.branch) == ('inv-1', 'root.app')
  assert context.state == {'cart': {'items': ['A1']}}
  with pytest.raises(FacadeError) as raised:
    context.state['cart']['items'].append('C3')
  assert raised.value.reason is FacadeErrorReason.READ_ONLY
  assert context.state == {'cart': {'items': ['A1']}}
  assert context.refused == ()


@pytest.mark.conformance('P3-FAC-01', 'P3-FAC-02')
@pytest.mark.parametrize('facade', list(FACADES))
@pytest.mark.parametrize('name', UNAVAILABLE_NAMES)
def test_every_other_attribute_is_unavailable_and_recorded(
    facade: str, name: str
) -> None:
  context = FACADES[facade]({'k': 1})

  with pytest.raises(FacadeError) as raised:
    getattr(context, name)

  assert raised.value.reason is FacadeErrorReason.UNAVAILABLE
  assert context.refused == (name,)


@pytest.mark.conformance('P3-FAC-02')
@pytest.mark.parametrize('facade', list(FACADES))
@pytest.mark.parametrize('name', ['state', 'app_name', 'ledger', 'session'])
def test_facades_cannot_be_changed(facade: str, name: str) -> None:
  context = FACADES[facade]({'k': 1})

  with pytest.raises(FacadeError) as set_raised:
    setattr(context, name, {'k': 2})
  with pytest.raises(FacadeError) as del_raised:
    delattr(context, name)

  assert set_raised.value.reason is FacadeErrorReason.READ_ONLY
  assert del_raised.value.reason is FacadeErrorReason.READ_ONLY
  assert context.state == {'k': 1}


def test_python_protocol_probes_are_not_recorded_as_refusals() -> None:
  context, _ = _policy_context({})

  assert not hasattr(context, '__wrapped__')
  assert context.refused == ()


@pytest.mark.conformance('P3-FAC-04')
def test_ledger_writes_record_in_the_event_policy_ledger_and_win() -> None:
  live: dict[str, Any] = {}
  context, effects = _policy_context(live)
  value = {'seen': [1]}

  context.ledger.set_state('audit', value)
  value['seen'].append(2)  # The caller's object is not what was stored.
  frozen = effects.freeze()

  assert context.ledger.written == ('audit',)
  assert frozen.state_delta == {'audit': {'seen': [1]}}
  assert frozen.state_winners == {'audit': EVENT_POLICY}
  assert live == {'audit': {'seen': [1]}}
  assert context.state == {}  # Taken once, before the write.


@pytest.mark.parametrize(
    ('key', 'value', 'reason'),
    [
        ('k', {1, 2}, FacadeErrorReason.UNSUPPORTED_TYPE),
        ('k', (1, 2), FacadeErrorReason.TUPLE),
        ('k', float('nan'), FacadeErrorReason.NON_FINITE),
        (7, 'v', FacadeErrorReason.NON_STRING_KEY),
    ],
)
def test_ledger_refuses_values_outside_the_snapshot_domain(
    key: Any, value: Any, reason: FacadeErrorReason
) -> None:
  live: dict[str, Any] = {}
  context, effects = _policy_context(live)

  with pytest.raises(FacadeError) as raised:
    context.ledger.set_state(key, value)

  assert raised.value.reason is reason
  assert live == {}
  assert effects.freeze().state_delta == {}


def test_a_ledger_write_after_the_freeze_raises_and_changes_nothing() -> None:
  live: dict[str, Any] = {'k': 'before'}
  context, effects = _policy_context(live)
  effects.freeze()

  with pytest.raises(BatchError) as raised:
    context.ledger.set_state('k', 'after')

  assert raised.value.reason is BatchErrorReason.FROZEN
  assert live == {'k': 'before'}
