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

"""The coordinator-wide reentry rule on a real Runner: P4-REEN-01, 02, 04,
07..10, 12..14, 16, 17.

A callback of a turn on an app-enabled Session calls each Runner entry
point on the same Session. Every call is refused with a typed
`CoordinationError` before it waits (bounded, nothing queued), nothing it
would have written is stored, and the turn itself completes. A task that
acts after the turn ended, and a call on another Session, proceed. With no
profile bound the coordinator stays out of the way.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Any
from typing import Optional

from coordination_support import Attempt
from coordination_support import BOUND
from coordination_support import call_entry
from coordination_support import call_run_sync
from coordination_support import collect
from coordination_support import invocation_runs
from coordination_support import key
from coordination_support import message
from coordination_support import MISSING_TOOL
from coordination_support import ReentryPlugin
from coordination_support import run_sync
from coordination_support import texts
from coordination_support import until_queued
from google.adk.mcp_apps.coordination.coordinator import session_coordinator
from google.adk.mcp_apps.coordination.errors import CoordinationError
from google.adk.mcp_apps.coordination.errors import CoordinationErrorReason
from google.adk.mcp_apps.coordination.runner_entry import app_enabled
from mcp_apps_conformance_server import names
import pytest
from sealing_support import USER

pytestmark = pytest.mark.integration

SAME = CoordinationErrorReason.SAME_SESSION_REENTRY

ENTRIES = (
    "run_async",
    "run_debug",
    "rewind_async",
    "run_live",
    "run",
    "run_in_thread",
)
"""Every Runner entry point a callback tries on its own Session."""

REFUSAL = {
    "run_async": (SAME, "Runner.run_async"),
    # run_debug reads the Session, then starts a run_async turn.
    "run_debug": (SAME, "Runner.run_async"),
    "rewind_async": (SAME, "Runner.rewind_async"),
    "run_live": (CoordinationErrorReason.LIVE_NOT_SUPPORTED, "Runner.run_live"),
    "run": (SAME, "Runner.run"),
    "run_in_thread": (SAME, "Runner.run"),
}
"""How each entry point is refused from a callback on its own Session."""


def assert_refused(attempt: Attempt) -> None:
  """The call raised its typed refusal, queued nothing, started no thread."""
  reason, operation = REFUSAL[attempt.entry]
  assert isinstance(attempt.error, CoordinationError), (
      attempt.entry,
      attempt.error,
  )
  assert attempt.error.reason is reason, attempt.entry
  assert attempt.error.operation == operation, attempt.entry
  assert attempt.waiting == 0, attempt.entry
  if attempt.entry in ("run", "run_in_thread"):
    assert attempt.threads_started == [], attempt.threads_started
    assert attempt.threads_after == attempt.threads_before


async def reentry_turn(st: Any, tool: str = "whoami") -> str:
  """One turn (the model calls `tool`) whose acting callbacks re-enter;
  returns the Session id once the turn completed and nothing leaked in."""
  st.llm.steps = [[(tool, {})]]
  sid = await st.new_session()
  events = await asyncio.wait_for(collect(st.runner, sid, "first"), BOUND)
  assert texts(events) == ["done"]
  stored = await st.stored_events(sid)
  assert texts(stored) == ["first", "done"]
  assert invocation_runs(stored) == [events[-1].invocation_id]
  assert session_coordinator().owner(key(sid)) is None
  return sid


def every_entry(runner: Any, attempts: list[Attempt]) -> Any:
  """A callback action trying every entry point on its own Session."""

  async def act(family: str, session_id: str) -> None:
    del family
    for entry in ENTRIES:
      attempts.append(await call_entry(runner, entry, session_id))

  return act


@pytest.mark.conformance(
    "P4-REEN-01",
    "P4-REEN-07",
    "P4-REEN-08",
    "P4-REEN-09",
    "P4-REEN-10",
    "P4-REEN-12",
    "P4-REEN-13",
)
@pytest.mark.parametrize(
    "family", ["plugin_before_tool", "plugin_after_tool", "plugin_tool_error"]
)
async def test_plugin_tool_callbacks_are_refused_every_same_session_entry(
    stack, family
):
  plugin = ReentryPlugin()
  async with stack(plugins=[plugin]) as st:
    attempts: list[Attempt] = []
    plugin.acting = {family}
    plugin.act = every_entry(st.runner, attempts)
    tool = MISSING_TOOL if family == "plugin_tool_error" else "whoami"
    await reentry_turn(st, tool)
    assert [a.entry for a in attempts] == list(ENTRIES)
    for attempt in attempts:
      assert_refused(attempt)


@pytest.mark.conformance(
    "P4-REEN-07",
    "P4-REEN-08",
    "P4-REEN-09",
    "P4-REEN-10",
    "P4-REEN-12",
    "P4-REEN-13",
)
@pytest.mark.parametrize(
    "family", ["on_user_message", "before_run", "before_model", "after_run"]
)
async def test_turn_lifecycle_plugin_callbacks_are_refused_every_entry(
    stack, family
):
  """Not only tool callbacks: everything that runs while the turn owns its
  Session, from before its message is appended to after its last Event."""
  plugin = ReentryPlugin()
  async with stack(plugins=[plugin]) as st:
    attempts: list[Attempt] = []
    plugin.acting = {family}
    plugin.act = every_entry(st.runner, attempts)
    await reentry_turn(st)
    assert [a.entry for a in attempts] == list(ENTRIES)
    for attempt in attempts:
      assert_refused(attempt)


class AgentToolCallbacks:
  """An agent's before/after tool callbacks; `acting` ones re-enter."""

  def __init__(self, acting: str) -> None:
    self.acting = acting
    self.attempts: list[Attempt] = []
    self.runner: Any = None
    self._done = False

  async def _act(self, tool_context: Any) -> None:
    if self._done:
      return
    self._done = True
    act = every_entry(self.runner, self.attempts)
    await act(self.acting, tool_context.session.id)

  async def before(self, tool: Any, args: Any, tool_context: Any) -> None:
    if self.acting == "agent_before_tool":
      await self._act(tool_context)

  async def after(
      self, tool: Any, args: Any, tool_context: Any, tool_response: Any
  ) -> None:
    if self.acting == "agent_after_tool":
      await self._act(tool_context)


@pytest.mark.conformance(
    "P4-REEN-02",
    "P4-REEN-07",
    "P4-REEN-08",
    "P4-REEN-09",
    "P4-REEN-10",
    "P4-REEN-12",
    "P4-REEN-13",
)
@pytest.mark.parametrize("family", ["agent_before_tool", "agent_after_tool"])
async def test_agent_tool_callbacks_are_refused_every_same_session_entry(
    stack, family
):
  callbacks = AgentToolCallbacks(family)
  agent_fields = {
      "before_tool_callback": callbacks.before,
      "after_tool_callback": callbacks.after,
  }
  async with stack(agent_fields=agent_fields) as st:
    callbacks.runner = st.runner
    await reentry_turn(st)
    assert [a.entry for a in callbacks.attempts] == list(ENTRIES)
    for attempt in callbacks.attempts:
      assert_refused(attempt)


@pytest.mark.conformance("P4-REEN-12", "P4-REEN-02")
async def test_a_sync_agent_callback_running_run_is_refused_before_a_thread(
    stack,
):
  attempts: list[Attempt] = []
  runner: list[Any] = []

  def after(tool: Any, args: Any, tool_context: Any, tool_response: Any):
    attempt = Attempt("run")
    call_run_sync(runner[0], tool_context.session.id, attempt)
    attempts.append(attempt)

  async with stack(agent_fields={"after_tool_callback": after}) as st:
    runner.append(st.runner)
    sid = await reentry_turn(st)
    assert len(attempts) == 1
    assert_refused(attempts[0])
    # The Session is free again: an ordinary top-level run() proceeds.
    loop = asyncio.get_running_loop()
    events = await asyncio.wait_for(
        loop.run_in_executor(None, run_sync, st.runner, sid, "again"), BOUND
    )
    assert texts(events) == ["done"]
    assert texts(await st.stored_events(sid)) == [
        "first",
        "done",
        "again",
        "done",
    ]


@pytest.mark.conformance(
    "P4-REEN-04",
    "P4-REEN-07",
    "P4-REEN-08",
    "P4-REEN-09",
    "P4-REEN-10",
    "P4-REEN-12",
    "P4-REEN-13",
)
async def test_the_event_callback_is_refused_every_same_session_entry(stack):
  plugin = ReentryPlugin()
  async with stack(plugins=[plugin]) as st:
    attempts: list[Attempt] = []
    plugin.acting = {"on_event"}
    plugin.act = every_entry(st.runner, attempts)
    await reentry_turn(st)
    assert [a.entry for a in attempts] == list(ENTRIES)
    for attempt in attempts:
      assert_refused(attempt)


@pytest.mark.conformance("P4-REEN-14")
async def test_a_task_a_callback_spawned_runs_its_turn_after_the_turn_ended(
    stack,
):
  plugin = ReentryPlugin()
  async with stack(plugins=[plugin]) as st:
    turn_over = asyncio.Event()
    spawned: list[asyncio.Task[Any]] = []

    async def spawn(family: str, session_id: str) -> None:
      async def later() -> Any:
        await turn_over.wait()
        return await collect(st.runner, session_id, "later")

      spawned.append(asyncio.create_task(later()))

    plugin.acting = {"plugin_after_tool"}
    plugin.act = spawn
    sid = await st.new_session()
    first = await asyncio.wait_for(collect(st.runner, sid, "first"), BOUND)
    assert len(spawned) == 1 and not spawned[0].done()
    assert session_coordinator().owner(key(sid)) is None
    turn_over.set()
    later = await asyncio.wait_for(spawned[0], BOUND)
    assert texts(later) == ["done"]
    stored = await st.stored_events(sid)
    assert texts(stored) == ["first", "done", "later", "done"]
    assert invocation_runs(stored) == [
        first[-1].invocation_id,
        later[-1].invocation_id,
    ]


@pytest.mark.conformance("P4-REEN-16")
async def test_a_callback_runs_a_turn_on_another_session_of_the_runner(stack):
  plugin = ReentryPlugin()
  async with stack(plugins=[plugin]) as st:
    other = await st.new_session()
    nested: list[Any] = []

    async def visit(family: str, session_id: str) -> None:
      assert session_coordinator().owner(key(session_id)) is not None
      nested.append(
          await asyncio.wait_for(collect(st.runner, other, "other"), BOUND)
      )

    plugin.acting = {"plugin_after_tool"}
    plugin.act = visit
    sid = await st.new_session()
    await asyncio.wait_for(collect(st.runner, sid, "first"), BOUND)
    assert [texts(events) for events in nested] == [["done"]]
    assert texts(await st.stored_events(sid)) == ["first", "done"]
    assert texts(await st.stored_events(other)) == ["other", "done"]


def _run_async_on_a_new_loop(runner: Any, session_id: str) -> Attempt:
  """`run_async` from a worker thread with its own event loop."""
  return asyncio.run(call_entry(runner, "run_async", session_id))


@pytest.mark.conformance("P4-REEN-17", "P4-REEN-07")
@pytest.mark.parametrize("turn", ["run_async", "run"])
@pytest.mark.parametrize("path", ["same_loop", "worker_thread"])
async def test_reentry_is_detected_across_loops_and_threads(stack, turn, path):
  """The turn runs on the test's loop (`run_async`) or on `run()`'s worker
  loop; its callback calls `run_async` there, or on a thread of its own
  with a new loop (`asyncio.to_thread` carries the callback's context)."""
  plugin = ReentryPlugin()
  async with stack(plugins=[plugin]) as st:
    attempts: list[Attempt] = []
    where: list[tuple[int, Any]] = []

    async def reenter(family: str, session_id: str) -> None:
      where.append((threading.get_ident(), asyncio.get_running_loop()))
      if path == "same_loop":
        attempts.append(await call_entry(st.runner, "run_async", session_id))
      else:
        attempts.append(
            await asyncio.wait_for(
                asyncio.to_thread(
                    _run_async_on_a_new_loop, st.runner, session_id
                ),
                BOUND,
            )
        )

    plugin.acting = {"plugin_after_tool"}
    plugin.act = reenter
    sid = await st.new_session()
    if turn == "run_async":
      events = await asyncio.wait_for(collect(st.runner, sid, "first"), BOUND)
    else:
      loop = asyncio.get_running_loop()
      events = await asyncio.wait_for(
          loop.run_in_executor(None, run_sync, st.runner, sid, "first"), BOUND
      )
    assert texts(events) == ["done"]
    [(thread, loop_seen)] = where
    if turn == "run":
      assert thread != threading.get_ident()
      assert loop_seen is not asyncio.get_running_loop()
    [attempt] = attempts
    assert_refused(attempt)
    assert texts(await st.stored_events(sid)) == ["first", "done"]


async def test_without_a_bound_profile_a_callback_may_run_a_nested_turn(stack):
  """Unbound, the coordinator is inert: the callback's same-session
  `run_async` runs (inside the outer turn, as pristine ADK does)."""
  plugin = ReentryPlugin()
  async with stack(bind=False, plugins=[plugin]) as st:
    assert not app_enabled(st.runner)
    attempts: list[Attempt] = []

    async def nested_turn(family: str, session_id: str) -> None:
      attempts.append(await call_entry(st.runner, "run_async", session_id))

    plugin.acting = {"plugin_after_tool"}
    plugin.act = nested_turn
    sid = await st.new_session()
    outer = await asyncio.wait_for(collect(st.runner, sid, "first"), BOUND)
    [attempt] = attempts
    assert attempt.error is None
    assert session_coordinator().owner(key(sid)) is None
    stored = await st.stored_events(sid)
    assert sorted(texts(stored)) == sorted(
        ["first", "nested run_async", "done", "done"]
    )
    # The nested turn's Events land inside the outer turn's.
    assert invocation_runs(stored)[0] == outer[-1].invocation_id
    assert len(invocation_runs(stored)) == 3


async def test_the_code_iterating_a_turn_may_not_start_one_on_its_session(
    stack,
):
  """The consumer of a turn's Events owns the Session as its callbacks do:
  starting a same-session turn inside its loop would wait for itself."""
  async with stack() as st:
    sid = await st.new_session()
    other = await st.new_session()
    attempts: list[Attempt] = []
    nested: list[Any] = []
    async for _ in st.runner.run_async(
        user_id=USER, session_id=sid, new_message=message("first")
    ):
      if not attempts:
        attempts.append(await call_entry(st.runner, "run_async", sid))
        nested.append(await collect(st.runner, other, "other"))
    [attempt] = attempts
    assert_refused(attempt)
    assert [texts(events) for events in nested] == [["done"]]
    assert texts(await st.stored_events(sid)) == ["first", "done"]


async def test_a_task_spawned_with_a_fresh_context_queues_behind_the_turn(
    stack,
):
  """A task spawned in a callback inherits the turn's ownership, so one
  that acts while the turn runs is refused (the coordinator cannot tell
  whether the turn awaits it). Spawned in a fresh context it queues
  instead, and runs its turn once the spawning turn ended."""
  plugin = ReentryPlugin()
  async with stack(plugins=[plugin]) as st:
    spawned: list[asyncio.Task[Any]] = []

    async def spawn(family: str, session_id: str) -> None:
      inherited = asyncio.create_task(
          call_entry(st.runner, "run_async", session_id)
      )
      assert_refused(await asyncio.wait_for(inherited, BOUND))
      fresh = asyncio.create_task(
          collect(st.runner, session_id, "later"),
          context=contextvars.Context(),
      )
      spawned.append(fresh)
      await until_queued(session_id)

    plugin.acting = {"plugin_after_tool"}
    plugin.act = spawn
    sid = await st.new_session()
    first = await asyncio.wait_for(collect(st.runner, sid, "first"), BOUND)
    later = await asyncio.wait_for(spawned[0], BOUND)
    stored = await st.stored_events(sid)
    assert texts(stored) == ["first", "done", "later", "done"]
    assert invocation_runs(stored) == [
        first[-1].invocation_id,
        later[-1].invocation_id,
    ]


@pytest.mark.conformance("P4-REEN-17", "P4-REEN-07")
@pytest.mark.parametrize("turn", ["run_async", "run"])
async def test_a_progress_callback_relayed_by_the_registry_loop_is_refused(
    stack, turn
):
  """The tool call's MCP I/O runs on the registry loop; its progress
  notifications come back to the turn's loop in the call's context, so a
  progress callback is still inside the turn."""
  attempts: list[Attempt] = []
  where: list[int] = []
  runner: list[Any] = []

  async def progress(
      progress: float, total: Optional[float], message: Optional[str]
  ) -> None:
    if where:
      return  # Deliveries run one at a time; the first acts.
    where.append(threading.get_ident())
    attempts.append(await call_entry(runner[0], "run_async", session[0]))

  session: list[str] = []
  async with stack(progress_callback=progress) as st:
    runner.append(st.runner)
    st.llm.steps = [[(names.PROGRESS_THEN_RESULT, {"steps": 2})]]
    sid = await st.new_session()
    session.append(sid)
    if turn == "run_async":
      events = await asyncio.wait_for(collect(st.runner, sid, "first"), BOUND)
    else:
      loop = asyncio.get_running_loop()
      events = await asyncio.wait_for(
          loop.run_in_executor(None, run_sync, st.runner, sid, "first"), BOUND
      )
    assert texts(events) == ["done"]
    registry_thread = st.registry.event_loop.thread
    assert registry_thread is not None
    assert where and where[0] != registry_thread.ident
    [attempt] = attempts
    assert_refused(attempt)
    assert texts(await st.stored_events(sid)) == ["first", "done"]
