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

"""The batch ledger: child ledgers, one freeze, id-order precedence.

Writes go through real ADK objects: a `ToolContext` over an
`InvocationContext` of an `InMemorySessionService` session (its
`State`), and `save_artifact` into an `InMemoryArtifactService`. Races are
forced with `asyncio.Event`s; nothing sleeps to order anything.

Cases: P3-BAT-01..04, 06..08, 10, 11, 16, 17.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import datetime
import threading
from typing import Any
from typing import Callable
from typing import Optional

from google.adk.agents.context import Context
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.artifacts.in_memory_artifact_service import InMemoryArtifactService
from google.adk.events.event_actions import EventActions
from google.adk.mcp_apps.batch.errors import BatchError
from google.adk.mcp_apps.batch.errors import BatchErrorReason
from google.adk.mcp_apps.batch.ledger import EVENT_POLICY
from google.adk.mcp_apps.batch.ledger import EventBatchEffects
from google.adk.mcp_apps.batch.ledger import FrozenBatch
from google.adk.mcp_apps.batch.ledger import LedgerState
from google.adk.mcp_apps.batch.ledger import StateWrite
from google.adk.mcp_apps.errors import McpAppsError
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.session import Session
from google.adk.sessions.state import State
from google.adk.tools.tool_context import ToolContext
from google.genai import types
import pytest

APP = 'batch-app'
USER = 'u'


@dataclasses.dataclass
class _Fanout:
  """One batch as the seam sets it up: a ToolContext per call."""

  session: Session
  invocation: InvocationContext
  effects: EventBatchEffects
  tools: dict[str, ToolContext]
  artifacts: Optional[InMemoryArtifactService]

  def event_policy_state(self) -> State:
    """What the event-policy facade writes through."""
    context = Context(
        self.invocation,
        event_actions=self.effects.event_policy.event_actions(),
    )
    return context.state


async def _fanout(
    *call_ids: str,
    state: Optional[dict[str, Any]] = None,
    artifacts: Optional[InMemoryArtifactService] = None,
) -> _Fanout:
  service = InMemorySessionService()
  session = await service.create_session(
      app_name=APP, user_id=USER, state=state
  )
  invocation = InvocationContext(
      session_service=service,
      invocation_id='e-batch',
      session=session,
      agent=LlmAgent(name='batch_agent'),
      artifact_service=artifacts,
  )
  effects = EventBatchEffects(call_ids, live_state=session.state)
  tools = {
      call_id: ToolContext(
          invocation,
          function_call_id=call_id,
          event_actions=effects.child(call_id).event_actions(),
      )
      for call_id in call_ids
  }
  return _Fanout(session, invocation, effects, tools, artifacts)


def _reason(excinfo: pytest.ExceptionInfo[BatchError]) -> BatchErrorReason:
  return excinfo.value.reason


# P3-BAT-01: one record per merged Event, a child per call.


@pytest.mark.conformance('P3-BAT-01')
async def test_a_batch_holds_one_child_per_call_and_one_event_policy_ledger() -> (
    None
):
  fan = await _fanout('call-b', 'call-a', 'call-c')
  effects = fan.effects

  children = [effects.child(i) for i in ('call-a', 'call-b', 'call-c')]
  assert [c.writer for c in children] == ['call-a', 'call-b', 'call-c']
  assert len({id(c) for c in children}) == 3
  assert effects.event_policy.writer is EVENT_POLICY
  assert effects.event_policy not in children
  assert effects.calls == ('call-a', 'call-b', 'call-c')
  with pytest.raises(BatchError) as excinfo:
    effects.child('call-z')
  assert _reason(excinfo) is BatchErrorReason.UNKNOWN_CALL
  assert isinstance(excinfo.value, McpAppsError)


@pytest.mark.conformance('P3-BAT-01')
@pytest.mark.parametrize(
    'call_ids',
    [
        pytest.param(['a', 'a'], id='duplicate'),
        pytest.param(['a', ''], id='empty-id'),
        pytest.param([], id='no-calls'),
        pytest.param(['a', '\ud800'], id='no-utf8-form'),
    ],
)
def test_a_batch_refuses_call_ids_that_cannot_rank(call_ids: list[str]) -> None:
  with pytest.raises(ValueError):
    EventBatchEffects(call_ids, live_state={})


# P3-BAT-02/03: record-and-apply through the real State.


@pytest.mark.conformance('P3-BAT-02')
async def test_the_tool_context_is_built_over_the_ledgers_own_maps() -> None:
  fan = await _fanout('call-a')
  child = fan.effects.child('call-a')
  actions = child.event_actions()

  assert child.event_actions() is actions
  assert fan.tools['call-a'].actions is actions
  # Writes reach the ledger only if these are the objects State writes.
  assert fan.tools['call-a'].state._delta is actions.state_delta
  assert isinstance(actions, EventActions)


@pytest.mark.conformance('P3-BAT-02', 'P3-BAT-03')
async def test_a_state_write_is_live_at_once_and_recorded_in_its_child() -> (
    None
):
  fan = await _fanout('call-a', 'call-b')
  tool_a, tool_b = fan.tools['call-a'], fan.tools['call-b']

  tool_a.state['color'] = 'red'
  tool_a.state.update({'size': 3, 'shape': 'round'})

  assert fan.session.state['color'] == 'red'
  assert tool_b.state['size'] == 3  # A sibling sees it live.
  assert dict(tool_a.actions.state_delta) == {
      'color': 'red',
      'size': 3,
      'shape': 'round',
  }
  assert dict(tool_b.actions.state_delta) == {}
  frozen = fan.effects.freeze()
  assert dict(frozen.state_delta) == {
      'color': 'red',
      'size': 3,
      'shape': 'round',
  }
  assert set(frozen.state_winners.values()) == {'call-a'}
  assert [(w.sequence, w.writer, w.key) for w in frozen.writes] == [
      (0, 'call-a', 'color'),
      (1, 'call-a', 'size'),
      (2, 'call-a', 'shape'),
  ]


@pytest.mark.conformance('P3-BAT-02')
async def test_a_nested_write_is_recorded_when_the_actions_are_read() -> None:
  fan = await _fanout('call-a', state={'prefs': {'theme': 'dark'}})
  tool = fan.tools['call-a']

  tool.state['prefs']['font'] = 'mono'
  delta = tool.actions.state_delta

  assert delta == {'prefs': {'theme': 'dark', 'font': 'mono'}}
  frozen = fan.effects.freeze()
  assert dict(frozen.state_delta) == {
      'prefs': {'theme': 'dark', 'font': 'mono'}
  }
  assert frozen.state_winners['prefs'] == 'call-a'


@pytest.mark.conformance('P3-BAT-02')
async def test_calls_writing_from_threads_at_once_lose_no_write() -> None:
  fan = await _fanout('call-1', 'call-2')
  start = threading.Barrier(2, timeout=10.0)

  def call(call_id: str) -> None:
    start.wait()  # Both threads write at the same time.
    for n in range(200):
      fan.tools[call_id].state[f'{call_id}-{n}'] = n

  threads = [
      threading.Thread(target=call, args=(i,)) for i in ('call-1', 'call-2')
  ]
  for thread in threads:
    thread.start()
  for thread in threads:
    thread.join(timeout=10.0)

  frozen = fan.effects.freeze()
  assert len(frozen.state_delta) == 400
  assert [w.sequence for w in frozen.writes] == list(range(400))
  assert all(fan.session.state[k] == v for k, v in frozen.state_delta.items())


@pytest.mark.conformance('P3-BAT-06')
async def test_an_empty_update_after_freeze_is_no_write() -> None:
  fan = await _fanout('call-a')
  fan.effects.freeze()

  fan.tools['call-a'].state.update({})

  assert fan.tools['call-a'].actions.state_delta == {}


# P3-BAT-04: OPEN, then one freeze.


@pytest.mark.conformance('P3-BAT-04')
async def test_a_batch_is_open_until_it_freezes_and_freezes_once() -> None:
  fan = await _fanout('call-a', 'call-b')
  seen = [fan.effects.state]

  fan.tools['call-a'].state['k'] = 1
  fan.event_policy_state()['k'] = 2
  seen.append(fan.effects.state)
  frozen = fan.effects.freeze()
  seen.append(fan.effects.state)

  assert seen == [LedgerState.OPEN, LedgerState.OPEN, LedgerState.FROZEN]
  assert isinstance(frozen, FrozenBatch)
  with pytest.raises(BatchError) as excinfo:
    fan.effects.freeze()
  assert _reason(excinfo) is BatchErrorReason.ALREADY_FROZEN


# P3-BAT-06: a write after freeze.


def _late_set_existing(fan: _Fanout) -> None:
  fan.tools['call-a'].state['kept'] = 'late'


def _late_set_new(fan: _Fanout) -> None:
  fan.tools['call-a'].state['fresh'] = 'late'


def _late_update(fan: _Fanout) -> None:
  fan.tools['call-a'].state.update({'kept': 'late', 'fresh': 'late'})


def _late_direct(fan: _Fanout) -> None:
  fan.tools['call-a'].actions.state_delta['kept'] = 'late'


def _late_event_policy(fan: _Fanout) -> None:
  fan.event_policy_state()['kept'] = 'late'


@pytest.mark.conformance('P3-BAT-06')
@pytest.mark.parametrize(
    'late_write',
    [
        pytest.param(_late_set_existing, id='state-set-existing-key'),
        pytest.param(_late_set_new, id='state-set-new-key'),
        pytest.param(_late_update, id='state-update'),
        pytest.param(_late_direct, id='delta-map-directly'),
        pytest.param(_late_event_policy, id='event-policy-ledger'),
    ],
)
async def test_a_state_write_after_freeze_is_refused_and_undone(
    late_write: Callable[[_Fanout], None],
) -> None:
  fan = await _fanout('call-a', state={'kept': 'before'})
  fan.tools['call-a'].state['kept'] = 'ledgered'
  frozen = fan.effects.freeze()
  live_at_freeze = dict(fan.session.state)

  with pytest.raises(BatchError) as excinfo:
    late_write(fan)

  assert _reason(excinfo) is BatchErrorReason.FROZEN
  assert fan.session.state == live_at_freeze
  assert 'fresh' not in fan.session.state
  assert dict(frozen.state_delta) == {'kept': 'ledgered'}
  assert [w.value for w in frozen.writes] == ['ledgered']
  assert fan.tools['call-a'].actions.state_delta == {'kept': 'ledgered'}


@pytest.mark.conformance('P3-BAT-06')
async def test_an_artifact_save_after_freeze_is_refused_and_in_no_view() -> (
    None
):
  store = InMemoryArtifactService()
  fan = await _fanout('call-a', artifacts=store)
  tool = fan.tools['call-a']
  await tool.save_artifact('early.txt', types.Part(text='early'))
  frozen = fan.effects.freeze()

  with pytest.raises(BatchError) as excinfo:
    await tool.save_artifact('late.txt', types.Part(text='late'))

  assert _reason(excinfo) is BatchErrorReason.FROZEN
  assert dict(frozen.artifact_delta) == {'early.txt': 0}
  assert [r.filename for r in frozen.artifacts] == ['early.txt']
  assert tool.actions.artifact_delta == {'early.txt': 0}


# P3-BAT-07: id-order precedence.


async def _commit_in_order(
    ids: tuple[str, ...], order: tuple[str, ...], key: str = 'shared'
) -> tuple[_Fanout, FrozenBatch]:
  """Each call writes `key` in its own task, released in `order`."""
  fan = await _fanout(*ids)
  turns = {call_id: asyncio.Event() for call_id in ids}
  done = {call_id: asyncio.Event() for call_id in ids}

  async def call(call_id: str) -> None:
    await turns[call_id].wait()
    fan.tools[call_id].state[key] = f'from {call_id}'
    done[call_id].set()

  tasks = [asyncio.create_task(call(i)) for i in ids]
  for call_id in order:
    turns[call_id].set()
    await done[call_id].wait()
  await asyncio.gather(*tasks)
  return fan, fan.effects.freeze()


@pytest.mark.conformance('P3-BAT-07')
@pytest.mark.parametrize(
    'order',
    [('call-1', 'call-2'), ('call-2', 'call-1')],
    ids=['ascending-commit', 'descending-commit'],
)
async def test_the_greatest_call_id_wins_a_shared_key_in_any_commit_order(
    order: tuple[str, str],
) -> None:
  fan, frozen = await _commit_in_order(('call-1', 'call-2'), order)

  assert frozen.state_delta['shared'] == 'from call-2'
  assert frozen.state_winners['shared'] == 'call-2'
  assert fan.session.state['shared'] == 'from call-2'  # Live agrees.
  # Both writes stay, in the order they were committed.
  assert [(w.writer, w.value) for w in frozen.writes] == [
      (call_id, f'from {call_id}') for call_id in order
  ]
  assert [w.sequence for w in frozen.writes] == [0, 1]


@pytest.mark.conformance('P3-BAT-07')
@pytest.mark.parametrize('reverse', [False, True], ids=['order', 'reversed'])
async def test_precedence_compares_call_ids_as_utf8_bytes(
    reverse: bool,
) -> None:
  # U+FF5E encodes to EF BD 9E and U+1F600 to F0 9F 98 80, so the emoji id
  # ranks higher in byte order; UTF-16 code units (FF5E vs D83D) rank them
  # the other way, as would a JavaScript host's string comparison.
  fullwidth, emoji, ascii_id = 'call-\uff5e', 'call-\U0001f600', 'call-z'
  assert fullwidth.encode('utf-16-be') > emoji.encode('utf-16-be')
  ids = (ascii_id, fullwidth, emoji)
  order = tuple(reversed(ids)) if reverse else ids

  _, frozen = await _commit_in_order(ids, order)

  assert frozen.state_winners['shared'] == emoji
  assert frozen.calls == (ascii_id, fullwidth, emoji)
  assert frozen.calls == tuple(sorted(ids, key=lambda i: i.encode('utf-8')))


@pytest.mark.conformance('P3-BAT-07')
async def test_the_delta_lists_keys_as_the_ascending_id_run_would_write_them() -> (
    None
):
  fans = []
  for first, second in (('call-1', 'call-2'), ('call-2', 'call-1')):
    fan = await _fanout('call-1', 'call-2')
    fan.tools[first].state[f'only-{first}'] = 1
    fan.tools[second].state[f'only-{second}'] = 2
    fans.append(fan.effects.freeze())

  assert list(fans[0].state_delta) == list(fans[1].state_delta)
  assert list(fans[0].state_delta) == ['only-call-1', 'only-call-2']


# P3-BAT-08: artifacts, the applied winner.


@pytest.mark.conformance('P3-BAT-08')
@pytest.mark.parametrize(
    'order',
    [('call-1', 'call-2'), ('call-2', 'call-1')],
    ids=['ascending-save', 'descending-save'],
)
async def test_an_artifact_collision_names_the_save_the_store_holds(
    order: tuple[str, str],
) -> None:
  store = InMemoryArtifactService()
  fan = await _fanout('call-1', 'call-2', artifacts=store)
  saved: dict[str, int] = {}
  for call_id in order:
    saved[call_id] = await fan.tools[call_id].save_artifact(
        'report.txt', types.Part(text=f'by {call_id}')
    )

  frozen = fan.effects.freeze()

  applied = order[-1]
  assert frozen.artifact_delta['report.txt'] == saved[applied] == 1
  assert frozen.artifact_winners['report.txt'] == applied
  latest = await store.load_artifact(
      app_name=APP,
      user_id=USER,
      session_id=fan.session.id,
      filename='report.txt',
  )
  assert latest is not None and latest.text == f'by {applied}'
  # Nothing was rewritten: both saves are still stored, as saved.
  assert await store.list_versions(
      app_name=APP,
      user_id=USER,
      session_id=fan.session.id,
      filename='report.txt',
  ) == [0, 1]
  assert [(r.writer, r.version) for r in frozen.artifacts] == [
      (order[0], 0),
      (order[1], 1),
  ]


# P3-BAT-10/16: cancellation.


@pytest.mark.conformance('P3-BAT-10', 'P3-BAT-16')
async def test_a_call_cancelled_between_two_writes_keeps_exactly_the_first() -> (
    None
):
  fan = await _fanout('call-a', 'call-b')
  between = asyncio.Event()
  never = asyncio.Event()

  async def call_a() -> None:
    fan.tools['call-a'].state['a1'] = 'done'
    between.set()
    await never.wait()
    fan.tools['call-a'].state['a2'] = 'never'

  async def call_b() -> None:
    await between.wait()
    fan.tools['call-b'].state['b1'] = 'done'

  task_a = asyncio.create_task(call_a())
  task_b = asyncio.create_task(call_b())
  await between.wait()
  task_a.cancel()
  await task_b
  with pytest.raises(asyncio.CancelledError):
    await task_a

  frozen = fan.effects.freeze()
  assert dict(frozen.state_delta) == {'a1': 'done', 'b1': 'done'}
  assert [(w.writer, w.key) for w in frozen.writes] == [
      ('call-a', 'a1'),
      ('call-b', 'b1'),
  ]
  assert 'a2' not in fan.session.state
  assert {k: fan.session.state[k] for k in ('a1', 'b1')} == dict(
      frozen.state_delta
  )


# P3-BAT-11: the event-policy ledger.


@pytest.mark.conformance('P3-BAT-11')
async def test_an_event_policy_write_after_the_calls_lands_in_the_one_freeze() -> (
    None
):
  fan = await _fanout('call-1', 'call-2')
  fan.tools['call-2'].state['shared'] = 'call'
  fan.tools['call-1'].state['mine'] = 'call'

  policy_state = fan.event_policy_state()
  policy_state['shared'] = 'policy'
  policy_state['audit'] = 'policy'
  frozen = fan.effects.freeze()

  assert frozen.state_winners['shared'] is EVENT_POLICY
  assert frozen.state_winners['audit'] is EVENT_POLICY
  assert frozen.state_winners['mine'] == 'call-1'
  assert frozen.state_delta['shared'] == 'policy'
  assert fan.session.state['shared'] == 'policy'
  assert [w.writer for w in frozen.writes][-2:] == [EVENT_POLICY] * 2
  assert len(frozen.writes) == 4


@pytest.mark.conformance('P3-BAT-11')
async def test_the_event_policy_outranks_a_call_that_commits_after_it() -> None:
  fan = await _fanout('call-1')
  fan.event_policy_state()['shared'] = 'policy'
  fan.tools['call-1'].state['shared'] = 'call'

  frozen = fan.effects.freeze()

  assert frozen.state_delta['shared'] == 'policy'
  assert fan.session.state['shared'] == 'policy'


# P3-BAT-17: delta-map adversaries.


@pytest.mark.conformance('P3-BAT-17')
async def test_a_direct_delta_map_write_fails_closed_and_is_not_recorded() -> (
    None
):
  fan = await _fanout('call-a', state={'k': 'live'})
  actions = fan.tools['call-a'].actions

  with pytest.raises(BatchError) as excinfo:
    actions.state_delta['k'] = 'forged'
  assert _reason(excinfo) is BatchErrorReason.OUT_OF_API
  with pytest.raises(BatchError):
    actions.state_delta.update({'other': 'forged'})
  with pytest.raises(BatchError):
    actions.state_delta.setdefault('third', 'forged')
  with pytest.raises(BatchError):
    actions.state_delta |= {'fourth': 'forged'}

  assert actions.state_delta == {}
  assert fan.session.state == {'k': 'live'}
  frozen = fan.effects.freeze()
  assert dict(frozen.state_delta) == {}
  assert frozen.writes == ()


@pytest.mark.conformance('P3-BAT-17')
async def test_an_update_with_one_forged_key_records_none_of_it() -> None:
  fan = await _fanout('call-a')
  tool = fan.tools['call-a']
  tool.state['real'] = 'via-state'

  with pytest.raises(BatchError):
    tool.actions.state_delta.update({'real': 'via-state', 'forged': 1})

  assert [w.key for w in fan.effects.freeze().writes] == ['real']


@pytest.mark.conformance('P3-BAT-17')
@pytest.mark.parametrize(
    'remove',
    [
        pytest.param(lambda m: m.pop('k'), id='pop'),
        pytest.param(lambda m: m.pop('k', None), id='pop-default'),
        pytest.param(lambda m: m.__delitem__('k'), id='del'),
        pytest.param(lambda m: m.popitem(), id='popitem'),
        pytest.param(lambda m: m.clear(), id='clear'),
    ],
)
async def test_removing_a_recorded_state_write_fails_closed(
    remove: Callable[[dict[str, Any]], Any],
) -> None:
  fan = await _fanout('call-a')
  tool = fan.tools['call-a']
  tool.state['k'] = {'json': True}

  with pytest.raises(BatchError) as excinfo:
    remove(tool.actions.state_delta)

  assert _reason(excinfo) is BatchErrorReason.OUT_OF_API
  assert tool.actions.state_delta == {'k': {'json': True}}
  assert dict(fan.effects.freeze().state_delta) == {'k': {'json': True}}


@pytest.mark.conformance('P3-BAT-17')
async def test_state_withdrawing_a_nested_write_without_json_form_is_honoured() -> (
    None
):
  fan = await _fanout('call-a', state={'log': []})
  tool = fan.tools['call-a']
  log = tool.state['log']
  log.append('entry')
  assert tool.actions.state_delta == {'log': ['entry']}  # Recorded.

  log.append(datetime.datetime(2026, 1, 1))
  assert tool.actions.state_delta == {}  # State withdrew it.

  frozen = fan.effects.freeze()
  assert 'log' not in frozen.state_delta
  assert [(w.key, w.withdrawn) for w in frozen.writes] == [
      ('log', False),
      ('log', True),
  ]


@pytest.mark.conformance('P3-BAT-17')
@pytest.mark.parametrize(
    'record',
    [
        pytest.param(lambda m: m.__setitem__('f.txt', True), id='bool'),
        pytest.param(lambda m: m.__setitem__('f.txt', -1), id='negative'),
        pytest.param(lambda m: m.__setitem__('f.txt', '3'), id='str'),
        pytest.param(lambda m: m.pop('saved.txt'), id='pop'),
        pytest.param(lambda m: m.__delitem__('saved.txt'), id='del'),
        pytest.param(lambda m: m.clear(), id='clear'),
    ],
)
async def test_an_artifact_map_change_no_save_reports_fails_closed(
    record: Callable[[dict[str, Any]], Any],
) -> None:
  fan = await _fanout('call-a', artifacts=InMemoryArtifactService())
  tool = fan.tools['call-a']
  await tool.save_artifact('saved.txt', types.Part(text='x'))

  with pytest.raises(BatchError) as excinfo:
    record(tool.actions.artifact_delta)

  assert _reason(excinfo) is BatchErrorReason.OUT_OF_API
  assert dict(fan.effects.freeze().artifact_delta) == {'saved.txt': 0}


@pytest.mark.conformance('P3-BAT-17')
async def test_a_replaced_delta_map_is_discarded() -> None:
  fan = await _fanout('call-a')
  tool = fan.tools['call-a']
  tool.state['real'] = 1

  tool.actions.state_delta = {'injected': 'x'}
  tool.actions.artifact_delta = {'injected.txt': 7}
  tool.state['after'] = 2  # State still writes the ledger's map.

  frozen = fan.effects.freeze()
  assert dict(frozen.state_delta) == {'real': 1, 'after': 2}
  assert dict(frozen.artifact_delta) == {}


@pytest.mark.conformance('P3-BAT-17')
async def test_a_map_aliased_into_a_sibling_moves_no_write_between_children() -> (
    None
):
  fan = await _fanout('call-1', 'call-2')
  tool_1, tool_2 = fan.tools['call-1'], fan.tools['call-2']

  tool_2.actions.state_delta = tool_1.actions.state_delta
  tool_2.state['k'] = 'from call-2'
  with pytest.raises(BatchError) as excinfo:
    tool_2.actions.state_delta['forged'] = 'via alias'
  assert _reason(excinfo) is BatchErrorReason.OUT_OF_API

  frozen = fan.effects.freeze()
  assert frozen.state_winners['k'] == 'call-2'
  assert [w.writer for w in frozen.writes] == ['call-2']
  assert 'forged' not in frozen.state_delta


@pytest.mark.conformance('P3-BAT-17')
async def test_a_copy_of_the_actions_is_detached_from_the_ledger() -> None:
  fan = await _fanout('call-a')
  actions = fan.tools['call-a'].actions

  for detached in (copy.deepcopy(actions), actions.model_copy(deep=True)):
    detached.state_delta['k'] = 'copied'
    detached.artifact_delta['f.txt'] = 3
    assert type(detached.state_delta) is dict

  frozen = fan.effects.freeze()
  assert dict(frozen.state_delta) == {}
  assert dict(frozen.artifact_delta) == {}


@pytest.mark.conformance('P3-BAT-17')
async def test_the_ledgers_actions_serialize_like_plain_actions() -> None:
  fan = await _fanout('call-a', artifacts=InMemoryArtifactService())
  tool = fan.tools['call-a']
  tool.state['k'] = [1]
  await tool.save_artifact('f.txt', types.Part(text='x'))

  dumped = tool.actions.model_dump(exclude_none=True, by_alias=True)

  assert dumped['stateDelta'] == {'k': [1]}
  assert dumped['artifactDelta'] == {'f.txt': 0}
  assert EventActions.model_validate(dumped).state_delta == {'k': [1]}


# The frozen view.


@pytest.mark.conformance('P3-BAT-06')
async def test_the_frozen_batch_cannot_be_changed() -> None:
  fan = await _fanout('call-a', artifacts=InMemoryArtifactService())
  fan.tools['call-a'].state['k'] = 1
  await fan.tools['call-a'].save_artifact('f.txt', types.Part(text='x'))
  frozen = fan.effects.freeze()

  with pytest.raises(dataclasses.FrozenInstanceError):
    frozen.state_delta = {}  # type: ignore[misc]
  for view in (
      frozen.state_delta,
      frozen.state_winners,
      frozen.artifact_delta,
      frozen.artifact_winners,
  ):
    with pytest.raises(TypeError):
      view['k'] = 2  # type: ignore[index]
  assert isinstance(frozen.writes, tuple)
  assert isinstance(frozen.artifacts, tuple)
  assert isinstance(frozen.calls, tuple)
  with pytest.raises(dataclasses.FrozenInstanceError):
    frozen.writes[0].value = 2  # type: ignore[misc]
  assert isinstance(frozen.writes[0], StateWrite)
