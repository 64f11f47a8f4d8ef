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


"""An app call owns its Session: P4-COORD-04, 14, 15, P4-REEN-05, 11.

`run_app_call` acquires `session_coordinator()` for the View's Session
for its whole run. Every race is forced: a Runner turn is held in its
model (`ScriptedLlm.on_answer`), an app call at the server's gate
(`gated_view`), and a rewind is started before the app call so that it
owns the Session first. Real conformance server (stdio), real Runner,
in-memory and SQLite Session services. Readings:
docs/decisions/issue22-exec.md.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from exec_ownership_support import BOUND
from exec_ownership_support import eventually
from exec_ownership_support import stage
from exec_ownership_support import Stage
from google.adk.events.event import Event
from google.adk.mcp_apps.affinity.errors import InvalidationReason
from google.adk.mcp_apps.coordination.coordinator import session_coordinator
from google.adk.mcp_apps.coordination.errors import CoordinationError
from google.adk.mcp_apps.coordination.errors import CoordinationErrorReason
from google.adk.mcp_apps.operations.app_call import APP_CALL_OPERATION
from google.adk.mcp_apps.operations.app_call import OPERATION_METADATA_KEY
from google.adk.mcp_apps.operations.app_call import OperationOutcomeKind
from google.adk.mcp_apps.operations.errors import OperationErrorReason
from mcp import types as mcp_types
from mcp_apps_conformance_server import names
import pytest
from sealing_support import ServerGate
from sealing_support import USER

pytestmark = pytest.mark.integration


def _records(events: list[Event]) -> list[Event]:
  return [
      e
      for e in events
      if e.custom_metadata and OPERATION_METADATA_KEY in e.custom_metadata
  ]


def _user_messages(events: list[Event]) -> list[Event]:
  return [
      e
      for e in events
      if e.author == "user"
      and e.content is not None
      and any(p.text == "go" for p in e.content.parts or [])
  ]


async def _hold_turn_in_model(s: Stage) -> tuple[asyncio.Future[Any], Any]:
  """Starts a turn calling `side_effect("turn")`, held in its model."""
  blocked = asyncio.Event()
  release = asyncio.Event()

  async def in_model() -> None:
    blocked.set()
    await release.wait()

  s.st.llm.on_answer = in_model
  s.st.llm.steps = [[(names.SIDE_EFFECT, {"key": "turn"})]]
  turn = asyncio.ensure_future(s.turn_events())
  await asyncio.wait_for(blocked.wait(), BOUND)
  return turn, release


@pytest.mark.conformance("P4-COORD-14", "P4-COORD-04")
async def test_app_call_waits_for_a_turn_in_its_model_and_stores_after_it(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    turn, release = await _hold_turn_in_model(s)
    s.clear_logs()
    call = asyncio.ensure_future(s.call(names.SIDE_EFFECT, {"key": "app"}))
    await eventually(
        lambda: session_coordinator().waiting(s.key) == 1, "the call queues"
    )
    owner = session_coordinator().owner(s.key)
    assert owner is not None and owner.operation == "Runner.run_async"
    # Queued, the call did nothing: no callback, no server call, no record.
    assert s.recorder.log == [] and s.agent_log.log == []
    assert s.counts() == {"turn": 1}
    assert _records(await s.stored()) == [] and not call.done()

    release.set()
    turn_events = await asyncio.wait_for(turn, BOUND)
    outcome = await asyncio.wait_for(call, BOUND)
    assert isinstance(outcome.wire, mcp_types.CallToolResult)
    assert s.counts() == {"turn": 1, "app": 1}
    stored = [e.id for e in await s.stored()]
    # Every Event of the turn precedes the app call's record.
    assert stored[-1] == outcome.record_id
    assert {e.id for e in turn_events if not e.partial} <= set(stored[:-1])


@pytest.mark.conformance("P4-COORD-14", "P4-COORD-04")
async def test_a_turn_waits_for_an_app_call_at_the_server(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with ServerGate() as gate:
    async with stage(mcp_apps, tmp_path, backend, gate=gate) as s:
      call = asyncio.ensure_future(s.call(names.GATED_VIEW, {"tag": "a"}))
      await asyncio.wait_for(gate.entered.wait(), BOUND)
      owner = session_coordinator().owner(s.key)
      assert owner is not None and owner.operation == APP_CALL_OPERATION
      turn = asyncio.ensure_future(s.turn_events())
      await eventually(
          lambda: session_coordinator().waiting(s.key) == 1,
          "the turn queues",
      )
      # The queued turn appended nothing, not even its new message.
      assert _user_messages(await s.stored()) == []
      assert "plugin_before_run" not in s.recorder.log

      gate.open()
      outcome = await asyncio.wait_for(call, BOUND)
      await asyncio.wait_for(turn, BOUND)
      stored = await s.stored()
      ids = [e.id for e in stored]
      (message,) = _user_messages(stored)
      assert ids.index(outcome.record_id) < ids.index(message.id)
      assert ids[0] == outcome.record_id


@pytest.mark.conformance("P4-COORD-04")
async def test_a_call_whose_view_was_torn_down_while_queued_runs_nothing(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    turn, release = await _hold_turn_in_model(s)
    s.clear_logs()
    call = asyncio.ensure_future(s.call(names.SIDE_EFFECT, {"key": "late"}))
    await eventually(
        lambda: session_coordinator().waiting(s.key) == 1, "the call queues"
    )
    assert await s.st.registry.connections.invalidate(
        s.hold.generation_id, InvalidationReason.SESSION_DELETED
    )
    release.set()
    await asyncio.wait_for(turn, BOUND)
    outcome = await asyncio.wait_for(call, BOUND)
    # The post-queue barrier: the View is gone, the call is a teardown
    # cancellation; no callback ran, nothing was sent or recorded.
    assert outcome.kind is OperationOutcomeKind.CANCELLED
    assert outcome.cause is not None
    assert outcome.cause.reason is OperationErrorReason.TEARDOWN
    assert outcome.record_id is None
    assert not [x for x in s.recorder.log if x.endswith(":side_effect")]
    assert all("side_effect" not in x for x in s.agent_log.log)
    assert s.counts() == {"turn": 1}
    assert _records(await s.stored()) == []


async def _rewind_point(s: Stage) -> str:
  """A plain turn after the View; the invocation a rewind goes back to."""
  s.st.llm.steps = []
  events = await s.turn_events()
  return events[-1].invocation_id


def _state_write(**kwargs: Any) -> None:
  kwargs["tool_context"].state["note"] = "app"


@pytest.mark.conformance("P4-COORD-15")
async def test_rewind_queued_behind_an_app_delta_undoes_it(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with ServerGate() as gate:
    async with stage(mcp_apps, tmp_path, backend, gate=gate) as s:
      point = await _rewind_point(s)
      s.agent_log.before_tool[:] = [("cart", _state_write)]
      call = asyncio.ensure_future(s.call(names.GATED_VIEW, {"tag": "r"}))
      await asyncio.wait_for(gate.entered.wait(), BOUND)
      rewind = asyncio.ensure_future(
          s.st.runner.rewind_async(
              user_id=USER,
              session_id=s.sid,
              rewind_before_invocation_id=point,
          )
      )
      await eventually(
          lambda: session_coordinator().waiting(s.key) == 1,
          "the rewind queues",
      )
      gate.open()
      outcome = await asyncio.wait_for(call, BOUND)
      await asyncio.wait_for(rewind, BOUND)
      assert outcome.record_id is not None
      # Serial: the app delta, then the rewind that reverts it (the key
      # did not exist before the rewind point).
      assert (await s.stored_state()).get("note") is None
      stored = await s.stored()
      assert stored[-1].id != outcome.record_id  # The rewind's Event.


@pytest.mark.conformance("P4-COORD-15")
async def test_app_delta_queued_behind_a_rewind_lands_after_it(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    point = await _rewind_point(s)
    s.agent_log.before_tool[:] = [("cart", _state_write)]
    # Started first, the rewind owns the Session before the call asks.
    rewind = asyncio.ensure_future(
        s.st.runner.rewind_async(
            user_id=USER, session_id=s.sid, rewind_before_invocation_id=point
        )
    )
    call = asyncio.ensure_future(s.call(names.SIDE_EFFECT, {"key": "r2"}))
    await asyncio.wait_for(rewind, BOUND)
    outcome = await asyncio.wait_for(call, BOUND)
    assert isinstance(outcome.wire, mcp_types.CallToolResult)
    # Serial: the rewind, then the app delta on the rewound Session (read
    # again after the queue: the given Session object was stale).
    assert (await s.stored_state())["note"] == "app"
    stored = await s.stored()
    assert stored[-1].id == outcome.record_id
    assert stored[-1].actions.state_delta == {"note": "app"}


@pytest.mark.conformance("P4-REEN-11")
async def test_callbacks_that_own_the_session_cannot_start_an_app_call_on_it(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    refused: list[BaseException] = []

    async def reenter(**kwargs: Any) -> None:
      op = f"nested-{len(refused)}"
      try:
        await asyncio.wait_for(
            s.call(names.SIDE_EFFECT, {"key": "nested"}, op=op), BOUND
        )
      except CoordinationError as error:
        refused.append(error)
      return None

    s.recorder.before = reenter
    # (1) A Runner turn's plugin tool callback.
    s.st.llm.steps = [[(names.SIDE_EFFECT, {"key": "turn"})]]
    await asyncio.wait_for(s.turn_events(), BOUND)
    # (2) An app call's own plugin tool callback.
    s.st.llm.steps = []
    outcome = await asyncio.wait_for(
        s.call(names.SIDE_EFFECT, {"key": "outer"}, op="outer"), BOUND
    )
    assert len(refused) == 2
    for error in refused:
      assert isinstance(error, CoordinationError)
      assert error.reason is CoordinationErrorReason.SAME_SESSION_REENTRY
      assert error.operation == APP_CALL_OPERATION
    # The refused calls ran nothing and were never cached.
    assert s.cache.get("nested-0") is None and s.cache.get("nested-1") is None
    assert s.counts() == {"turn": 1, "outer": 1}
    assert isinstance(outcome.wire, mcp_types.CallToolResult)
    assert session_coordinator().owner(s.key) is None


@pytest.mark.conformance("P4-REEN-05")
async def test_an_audit_observer_cannot_start_a_turn_or_app_call_on_its_session(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    refused: list[CoordinationError] = []

    async def observe(**kwargs: Any) -> None:
      try:
        await asyncio.wait_for(s.turn_events(), BOUND)
      except CoordinationError as error:
        refused.append(error)
      try:
        await asyncio.wait_for(
            s.call(names.SIDE_EFFECT, {"key": "nested"}, op="nested"), BOUND
        )
      except CoordinationError as error:
        refused.append(error)

    s.recorder.observe = observe
    outcome = await asyncio.wait_for(
        s.call(names.SIDE_EFFECT, {"key": "outer"}), BOUND
    )
    assert [type(e) for e in refused] == [CoordinationError] * 2
    assert [e.operation for e in refused] == [
        "Runner.run_async",
        APP_CALL_OPERATION,
    ]
    assert all(
        e.reason is CoordinationErrorReason.SAME_SESSION_REENTRY
        for e in refused
    )
    # Only the outer call's record exists: the refused turn appended no
    # message, the refused call ran nothing.
    stored = await s.stored()
    assert [e.id for e in stored] == [outcome.record_id]
    assert s.counts() == {"outer": 1} and s.cache.get("nested") is None
