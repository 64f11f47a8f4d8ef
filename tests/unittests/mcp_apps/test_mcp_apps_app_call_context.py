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

"""The app-call tool context over a real batch ledger.

`AppCallToolContext.state` hands out a snapshot of each live value (the
shared golden table, at the default limits: a read snapshots the value
itself) and records writes in the call's child ledger of a real
`EventBatchEffects`.
"""

from __future__ import annotations

from typing import Any

from google.adk.mcp_apps.batch.errors import BatchError
from google.adk.mcp_apps.batch.errors import BatchErrorReason
from google.adk.mcp_apps.batch.ledger import EventBatchEffects
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.facades.app_call_context import AppCallToolContext
from google.adk.mcp_apps.facades.errors import FacadeError
from google.adk.mcp_apps.facades.errors import FacadeErrorReason
import pytest
from snapshot_properties import check_golden_table

KEY = SessionKey('app', 'user', 'session')


async def _no_artifacts(
    filename: str, artifact: Any, custom_metadata: Any
) -> int:
  raise AssertionError(f'no artifact is saved here ({filename})')


def _context(
    live: dict[str, Any], effects: EventBatchEffects
) -> AppCallToolContext:
  return AppCallToolContext(
      session=KEY,
      invocation_id='e-1',
      function_call_id='op-1',
      agent_name='agent',
      live_state=live,
      ledger=effects.child('op-1'),
      save_artifact=_no_artifacts,
  )


@pytest.mark.conformance('P3-BAT-19')
def test_app_call_state_reads_pass_the_golden_table() -> None:
  def take(value: Any) -> Any:
    live = {'v': value}
    return _context(live, EventBatchEffects(['op-1'], live_state=live)).state[
        'v'
    ]

  check_golden_table(take)


@pytest.mark.conformance('P3-BAT-19')
def test_a_state_write_is_recorded_in_the_child_and_refused_after_freeze() -> (
    None
):
  live: dict[str, Any] = {'cart': ['A1'], 'temp:token': 'secret'}
  effects = EventBatchEffects(['op-1'], live_state=live)
  context = _context(live, effects)
  value = {'items': ['B2']}
  context.state['cart'] = value
  value['items'].append('forged')  # An independent copy was stored.
  assert live['cart'] == {'items': ['B2']}
  # `temp:` keys (where ADK keeps exchanged credentials) are not shown.
  assert set(context.state) == {'cart'}
  assert 'temp:token' not in context.state
  frozen = effects.freeze()
  assert dict(frozen.state_delta) == {'cart': {'items': ['B2']}}
  with pytest.raises(BatchError) as caught:
    context.state['late'] = 1
  assert caught.value.reason is BatchErrorReason.FROZEN
  assert 'late' not in live
  assert context.refused == ()
