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

"""The Runner's entry points own an app-enabled Session: P4-COORD-01..03,
07, 08, 17, 18.

A real Runner over a profile-bound registry and the stdio conformance
server. Turn 1 is held mid-turn at a barrier (the scripted model's answer,
after its tool call's Events were appended); a second entry point started
meanwhile on the same Session must queue at the coordinator, append
nothing, and run once turn 1 ended.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from coordination_support import Attempt
from coordination_support import BOUND
from coordination_support import call_entry
from coordination_support import collect
from coordination_support import Gate
from coordination_support import invocation_runs
from coordination_support import key
from coordination_support import ReentryPlugin
from coordination_support import run_sync
from coordination_support import texts
from coordination_support import until_queued
from google.adk.apps.app import App
from google.adk.apps.app import EventsCompactionConfig
from google.adk.apps.base_events_summarizer import BaseEventsSummarizer
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.events.event_actions import EventCompaction
from google.adk.live.live_request_queue import LiveRequestQueue
from google.adk.mcp_apps.coordination.coordinator import session_coordinator
from google.adk.mcp_apps.coordination.errors import CoordinationError
from google.adk.mcp_apps.coordination.errors import CoordinationErrorReason
from google.adk.mcp_apps.coordination.runner_entry import app_enabled
from google.adk.runners import Runner
from google.genai import types
import pytest
from sealing_support import APP
from sealing_support import USER

pytestmark = pytest.mark.integration


class TurnThread:
  """A synchronous `run()` turn consumed on a thread of its own."""

  def __init__(self, runner: Any, session_id: str, text: str) -> None:
    self.events: list[Any] = []
    self.error: BaseException | None = None
    self._thread = threading.Thread(
        target=self._main, args=(runner, session_id, text)
    )

  def _main(self, runner: Any, session_id: str, text: str) -> None:
    try:
      self.events = run_sync(runner, session_id, text)
    except BaseException as e:  # pylint: disable=broad-except
      self.error = e

  def start(self) -> TurnThread:
    self._thread.start()
    return self

  async def join(self) -> list[Any]:
    """Its events once it ended; fails if it runs longer than `BOUND`."""
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, self._thread.join, BOUND)
    assert not self._thread.is_alive(), "the run() turn never ended"
    if self.error is not None:
      raise self.error
    return self.events


@pytest.mark.conformance("P4-COORD-01", "P4-COORD-18")
@pytest.mark.parametrize(
    "session_service", ["in_memory", "database"], indirect=True
)
async def test_a_second_run_async_waits_for_the_whole_first_turn(stack):
  async with stack() as st:
    assert app_enabled(st.runner)
    sid = await st.new_session()
    gate = Gate()
    st.llm.on_answer = gate.hold
    first = asyncio.create_task(collect(st.runner, sid, "first"))
    await gate.reached()
    second = asyncio.create_task(collect(st.runner, sid, "second"))
    await until_queued(sid)
    held = await st.stored_events(sid)
    assert "second" not in texts(held)
    assert not second.done()
    assert session_coordinator().owner(key(sid)).operation == "Runner.run_async"
    gate.open()
    one, two = await asyncio.wait_for(asyncio.gather(first, second), BOUND)
    stored = await st.stored_events(sid)
    assert stored[: len(held)] == held
    assert texts(stored) == ["first", "done", "second", "done"]
    first_id, second_id = one[-1].invocation_id, two[-1].invocation_id
    assert invocation_runs(stored) == [first_id, second_id]
    assert session_coordinator().owner(key(sid)) is None


class GatedSummarizer(BaseEventsSummarizer):
  """Summarizes every window into one fixed text; the first waits at a
  gate (the turn has yielded all its Events and is compacting)."""

  def __init__(self, gate: Gate) -> None:
    self.gate = gate

  async def maybe_summarize_events(self, *, events: list[Event]) -> Event:
    await self.gate.hold()
    return Event(
        author="user",
        invocation_id=Event.new_id(),
        actions=EventActions(
            compaction=EventCompaction(
                start_timestamp=events[0].timestamp,
                end_timestamp=events[-1].timestamp,
                compacted_content=types.Content(
                    role="model", parts=[types.Part(text="summary")]
                ),
            )
        ),
    )


@pytest.mark.conformance("P4-COORD-01", "P4-COORD-18")
async def test_the_turns_compaction_runs_before_the_next_turn_starts(stack):
  """Post-invocation compaction is part of the turn: a turn started while
  it summarizes waits, and the summary lands before its message."""
  async with stack() as st:
    gate = Gate()
    runner = Runner(
        app=App(
            name=APP,
            root_agent=st.runner.agent,
            events_compaction_config=EventsCompactionConfig(
                summarizer=GatedSummarizer(gate),
                compaction_interval=1,
                overlap_size=0,
            ),
        ),
        session_service=st.session_service,
    )
    try:
      assert app_enabled(runner)
      sid = await st.new_session()
      first = asyncio.create_task(collect(runner, sid, "first"))
      await gate.reached()
      assert texts(await st.stored_events(sid)) == ["first", "done"]
      second = asyncio.create_task(collect(runner, sid, "second"))
      await until_queued(sid)
      assert texts(await st.stored_events(sid)) == ["first", "done"]
      gate.open()
      one, _ = await asyncio.wait_for(asyncio.gather(first, second), BOUND)
      stored = await st.stored_events(sid)
      compacted = [i for i, e in enumerate(stored) if e.actions.compaction]
      last_of_first = max(
          i
          for i, e in enumerate(stored)
          if e.invocation_id == one[-1].invocation_id
      )
      assert compacted[0] == last_of_first + 1
      assert texts(stored[compacted[0] :])[0] == "second"
    finally:
      await runner.close()


@pytest.mark.conformance("P4-COORD-02", "P4-COORD-18")
async def test_run_debug_waits_for_the_running_turn_before_its_message(stack):
  async with stack() as st:
    sid = await st.new_session()
    gate = Gate()
    st.llm.on_answer = gate.hold
    first = asyncio.create_task(collect(st.runner, sid, "first"))
    await gate.reached()
    second = asyncio.create_task(
        st.runner.run_debug("second", user_id=USER, session_id=sid, quiet=True)
    )
    await until_queued(sid)
    held = await st.stored_events(sid)
    assert "second" not in texts(held)
    gate.open()
    one, two = await asyncio.wait_for(asyncio.gather(first, second), BOUND)
    stored = await st.stored_events(sid)
    assert texts(stored) == ["first", "done", "second", "done"]
    assert texts(two) == ["done"]
    assert invocation_runs(stored) == [
        one[-1].invocation_id,
        two[-1].invocation_id,
    ]


@pytest.mark.conformance("P4-COORD-03", "P4-COORD-17")
@pytest.mark.parametrize("held", ["run_async", "run"])
async def test_run_on_its_worker_loop_and_run_async_are_serialized(stack, held):
  """The held turn is either one; the other, on the other loop and thread,
  waits at the same coordinator."""
  async with stack() as st:
    sid = await st.new_session()
    gate = Gate()
    st.llm.on_answer = gate.hold
    if held == "run_async":
      first: Any = asyncio.create_task(collect(st.runner, sid, "first"))
      await gate.reached()
      second: Any = TurnThread(st.runner, sid, "second").start()
    else:
      first = TurnThread(st.runner, sid, "first").start()
      await gate.reached()
      second = asyncio.create_task(collect(st.runner, sid, "second"))
    await until_queued(sid)
    assert "second" not in texts(await st.stored_events(sid))
    gate.open()
    if held == "run_async":
      one = await asyncio.wait_for(first, BOUND)
      two = await second.join()
    else:
      one = await first.join()
      two = await asyncio.wait_for(second, BOUND)
    stored = await st.stored_events(sid)
    assert texts(stored) == ["first", "done", "second", "done"]
    assert invocation_runs(stored) == [
        one[-1].invocation_id,
        two[-1].invocation_id,
    ]


@pytest.mark.conformance("P4-COORD-03", "P4-REEN-12")
async def test_top_level_run_on_an_app_enabled_session_completes(stack):
  async with stack() as st:
    assert app_enabled(st.runner)
    sid = await st.new_session()
    events = await TurnThread(st.runner, sid, "solo").start().join()
    assert texts(events) == ["done"]
    assert [e.get_function_responses()[0].name for e in events[1:2]] == [
        "whoami"
    ]
    assert texts(await st.stored_events(sid)) == ["solo", "done"]
    assert session_coordinator().owner(key(sid)) is None


@pytest.mark.conformance("P4-COORD-07")
@pytest.mark.parametrize("session", ["missing", "existing"])
async def test_run_live_is_refused_before_any_read_callback_or_append(
    stack, session
):
  plugin = ReentryPlugin()
  async with stack(plugins=[plugin]) as st:
    sid = "no-such-session" if session == "missing" else await st.new_session()
    before = None if session == "missing" else await st.stored_events(sid)

    async def live() -> None:
      async for _ in st.runner.run_live(
          user_id=USER, session_id=sid, live_request_queue=LiveRequestQueue()
      ):
        pass

    with pytest.raises(CoordinationError) as refused:
      await asyncio.wait_for(live(), BOUND)
    assert refused.value.reason is CoordinationErrorReason.LIVE_NOT_SUPPORTED
    assert refused.value.operation == "Runner.run_live"
    assert plugin.called == []
    stored = await st.session_service.get_session(
        app_name=st.runner.app_name, user_id=USER, session_id=sid
    )
    if session == "missing":
      assert stored is None
    else:
      assert stored.events == before
    assert session_coordinator().waiting(key(sid)) == 0


@pytest.mark.conformance("P4-COORD-08")
async def test_rewind_waits_for_the_running_turn_then_rewinds_it(stack):
  async with stack() as st:
    sid = await st.new_session()
    await collect(st.runner, sid, "first")
    gate = Gate()
    st.llm.on_answer = gate.hold
    second = asyncio.create_task(collect(st.runner, sid, "second"))
    await gate.reached()
    held = await st.stored_events(sid)
    second_id = held[-1].invocation_id
    rewind = asyncio.create_task(
        st.runner.rewind_async(
            user_id=USER,
            session_id=sid,
            rewind_before_invocation_id=second_id,
        )
    )
    await until_queued(sid)
    assert not rewind.done()
    assert await st.stored_events(sid) == held
    gate.open()
    turn = await asyncio.wait_for(second, BOUND)
    await asyncio.wait_for(rewind, BOUND)
    stored = await st.stored_events(sid)
    assert stored[-1].actions.rewind_before_invocation_id == second_id
    assert stored[-2].id == turn[-1].id
    assert texts(stored) == ["first", "done", "second", "done"]


async def _ask(runner: Runner, session_id: str, text: str) -> Event:
  """ADK's quickstart loop: stop at the final response, without closing
  the turn (its loop closes the dropped generator later)."""
  async for event in runner.run_async(
      user_id=USER,
      session_id=session_id,
      new_message=types.Content(role="user", parts=[types.Part(text=text)]),
  ):
    if event.is_final_response():
      return event
  raise AssertionError("no final response")


@pytest.mark.conformance("P4-COORD-01", "P4-REEN-14")
async def test_a_turn_left_at_its_final_response_lets_the_next_one_queue(
    stack,
):
  """Leaving a turn's `async for` early drops the turn, which its loop
  closes in a task of its own: the caller does not own the Session any
  more, so its next turn queues behind the closing (after-run callbacks,
  compaction) instead of being refused as a reentry."""
  plugin = ReentryPlugin()
  async with stack(plugins=[plugin]) as st:
    closing: list[Attempt] = []

    async def reenter(family: str, session_id: str) -> None:
      closing.append(await call_entry(st.runner, "run_async", session_id))

    # The first turn's after-run callback runs in the task closing it.
    plugin.acting = {"after_run"}
    plugin.act = reenter
    sid = await st.new_session()
    one = await asyncio.wait_for(_ask(st.runner, sid, "one"), BOUND)
    two = await asyncio.wait_for(_ask(st.runner, sid, "two"), BOUND)
    three = await asyncio.wait_for(collect(st.runner, sid, "three"), BOUND)
    stored = await st.stored_events(sid)
    assert texts(stored) == ["one", "done", "two", "done", "three", "done"]
    assert invocation_runs(stored) == [
        one.invocation_id,
        two.invocation_id,
        three[-1].invocation_id,
    ]
    [refused] = closing
    assert isinstance(refused.error, CoordinationError)
    assert refused.error.reason is CoordinationErrorReason.SAME_SESSION_REENTRY
    # Refused without queueing: the one waiter then was the caller's turn.
    assert refused.waiting == 1
    lifecycle = [c for c in plugin.called if c in ("before_run", "after_run")]
    assert lifecycle == ["before_run", "after_run"] * 3
    assert session_coordinator().owner(key(sid)) is None
