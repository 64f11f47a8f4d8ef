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

"""The progress-delivery gate of a registry-bound call, end to end.

A registry-bound `McpToolset` talks over stdio to the conformance server:
`progress_then_result(steps)` sends its progress and then answers at once,
`slow_operation` sends one progress and then holds the call open. Each test
supplies its own progress callback and orders the race with barriers, never
with sleeps: a spy on the real `ClientSession.call_tool` (registry side)
resolves `Terminal` in the step in which the terminal response surfaces,
and callbacks that must still be running past the response wait on it.

The drain bound is shortened per test (`PROGRESS_DRAIN_TIMEOUT`) where a
callback is meant to outlive it; elapsed times are only asserted as upper
bounds (and, for "drains first", as a lower bound the code must wait).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Iterator
import concurrent.futures
import contextvars
import dataclasses
import logging
import threading
import time
from typing import Any

from google.adk.agents.llm_agent import LlmAgent
from google.adk.mcp_apps.binding import loop_routing
from google.adk.mcp_apps.binding.client_extensions import AppsClientBinding
from google.adk.mcp_apps.binding.registry_loop import RegistryEventLoop
from google.adk.mcp_apps.binding.registry_loop import RegistryLoopError
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.mcp_tool import McpToolset
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from mcp.client.session import ClientSession
from mcp_apps_conformance_server import names
import pytest
from scripted_llm import ScriptedLlm

pytestmark = pytest.mark.integration

TIMEOUT = 30.0
APP = "progress_gate"
USER = "user"
STEPS = 3
SHORT_BOUND = 0.5
"""The drain bound of tests whose callback outlives it."""
SLACK = 5.0
"""Generous upper-bound slack for a loaded 2-core CI machine."""

_LOGGER = "google_adk.google.adk.mcp_apps.binding.loop_routing"


# --- Barriers and records ----------------------------------------------------


class Timeline:
  """A thread-safe ordered log of what happened, with monotonic times."""

  def __init__(self) -> None:
    self._lock = threading.Lock()
    self._entries: list[tuple[str, float]] = []

  def add(self, what: str) -> None:
    with self._lock:
      self._entries.append((what, time.monotonic()))

  def names(self) -> list[str]:
    with self._lock:
      return [what for what, _ in self._entries]

  def at(self, what: str) -> float:
    with self._lock:
      return next(t for name, t in self._entries if name == what)

  def index(self, what: str) -> int:
    return self.names().index(what)


@dataclasses.dataclass
class Terminal:
  """The registry side's view of each `tools/call`, through a spy.

  Attributes:
    reached: Resolved (on the registry thread) in the step in which the
      first terminal response surfaces, before the gate or anything else
      there sees it.
    handlers: The SDK-facing progress handlers (the gates' intake) passed
      to the real `ClientSession.call_tool`.
    late: Offered to the intake right after the terminal response, queued
      on the registry loop in that same step (see the test using it).
  """

  reached: concurrent.futures.Future[None] = dataclasses.field(
      default_factory=concurrent.futures.Future
  )
  handlers: list[Any] = dataclasses.field(default_factory=list)
  late: tuple[float, float | None, str | None] | None = None

  async def wait(self) -> None:
    """From any loop: until the terminal response has surfaced."""
    await asyncio.wrap_future(self.reached)


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Terminal:
  """Spies on the real `ClientSession.call_tool` (it runs registry-side)."""
  state = Terminal()
  real = ClientSession.call_tool

  async def spy(self: Any, name: str, *args: Any, **kwargs: Any) -> Any:
    handler = args[2] if len(args) > 2 else kwargs.get("progress_callback")
    if handler is not None:
      state.handlers.append(handler)
    result = await real(self, name, *args, **kwargs)
    if handler is not None and state.late is not None:
      # Spawned like the SDK spawns a handler, in the step the response
      # surfaces: it runs only after that step, i.e. after the close.
      asyncio.get_running_loop().create_task(handler(*state.late))
    if not state.reached.done():
      state.reached.set_result(None)
    return result

  monkeypatch.setattr(ClientSession, "call_tool", spy)
  return state


@pytest.fixture
def registry() -> Iterator[RegistryEventLoop]:
  """A started registry loop, closed at teardown (idempotently)."""
  loop = RegistryEventLoop(name="progress-gate-registry")
  loop.start()
  yield loop
  loop.close(timeout=15)


@pytest.fixture
def short_bound(monkeypatch: pytest.MonkeyPatch) -> float:
  monkeypatch.setattr(loop_routing, "PROGRESS_DRAIN_TIMEOUT", SHORT_BOUND)
  return SHORT_BOUND


def _toolset(
    mcp_apps: Any, registry: RegistryEventLoop, progress: Any
) -> McpToolset:
  return McpToolset(
      connection_params=StdioConnectionParams(
          server_params=mcp_apps.stdio_parameters(), timeout=TIMEOUT
      ),
      progress_callback=progress,
      _apps_client_binding=AppsClientBinding.for_mcp_apps(
          registry_loop=registry
      ),
  )


async def _session(toolset: McpToolset) -> Any:
  return await toolset._mcp_session_manager.create_session()


# --- Through the Runner ------------------------------------------------------


class RecordingSessions(InMemorySessionService):
  """Records the append of every Event that carries a function response."""

  def __init__(self, timeline: Timeline) -> None:
    super().__init__()
    self._timeline = timeline

  async def append_event(self, session: Any, event: Any) -> Any:
    appended = await super().append_event(session, event)
    if event.get_function_responses():
      self._timeline.add("event appended")
    return appended


@dataclasses.dataclass
class Conversation:
  """A Runner whose scripted model calls one tool of a bound toolset."""

  runner: Runner
  sessions: RecordingSessions
  toolset: McpToolset
  session_id: str = ""

  async def state(self) -> dict[str, Any]:
    session = await self.sessions.get_session(
        app_name=APP, user_id=USER, session_id=self.session_id
    )
    assert session is not None
    return dict(session.state)

  async def responses(self) -> dict[str, Any]:
    session = await self.sessions.get_session(
        app_name=APP, user_id=USER, session_id=self.session_id
    )
    assert session is not None
    return {
        str(response.name): response.response
        for event in session.events
        for response in event.get_function_responses()
    }


@pytest.fixture
async def conversation(
    mcp_apps: Any, registry: RegistryEventLoop
) -> AsyncIterator[Callable[..., Any]]:
  """Builds `Conversation`s; closes their toolsets at teardown."""
  built: list[Conversation] = []

  async def build(
      progress: Any, timeline: Timeline, call: tuple[str, dict[str, Any]]
  ) -> Conversation:
    toolset = _toolset(mcp_apps, registry, progress)

    async def after_tool(
        tool: BaseTool,
        args: dict[str, Any],
        tool_context: ToolContext,
        tool_response: dict[str, Any],
    ) -> None:
      timeline.add("after-tool callback")

    sessions = RecordingSessions(timeline)
    agent = LlmAgent(
        name="progress_gate_agent",
        model=ScriptedLlm(steps=[[call]]),
        tools=[toolset],
        after_tool_callback=after_tool,
    )
    runner = Runner(app_name=APP, agent=agent, session_service=sessions)
    session = await sessions.create_session(app_name=APP, user_id=USER)
    result = Conversation(runner, sessions, toolset, session.id)
    built.append(result)
    return result

  yield build
  for each in built:
    await each.toolset.close()


def _message() -> types.Content:
  return types.Content(role="user", parts=[types.Part(text="go")])


async def _drive(conversation: Conversation, mode: str) -> None:
  """One turn through `run_async` (on this loop) or `run()` (a worker)."""
  kwargs: dict[str, Any] = dict(
      user_id=USER, session_id=conversation.session_id, new_message=_message()
  )
  if mode == "run_async":
    async for _ in conversation.runner.run_async(**kwargs):
      pass
  else:
    await asyncio.to_thread(lambda: list(conversation.runner.run(**kwargs)))


RUN_MODES = [
    pytest.param("run", marks=pytest.mark.conformance("P3-PROG-12")),
    pytest.param("run_async", marks=pytest.mark.conformance("P3-PROG-13")),
]


@pytest.mark.conformance("P3-PROG-02", "P3-PROG-03", "P3-PROG-04", "P3-PROG-05")
@pytest.mark.parametrize("mode", RUN_MODES)
async def test_late_handler_finishes_before_approval_append_and_release(
    mode: str, terminal: Terminal, conversation: Callable[..., Any]
) -> None:
  """Drained before after-tool approval, the Event's append and run's end.

  Every handler waits until the terminal response has surfaced on the
  registry loop, so each is still running when the response arrives.
  PROG-02/03 are stood for by the after-tool callback (result approval; the
  effect ledger freezes with the Event built after it), PROG-04 by the
  session service's append, PROG-05 by the run's return.
  """
  timeline = Timeline()
  loops: set[asyncio.AbstractEventLoop] = set()

  async def progress(value: float, total: float | None, message: Any) -> None:
    loops.add(asyncio.get_running_loop())
    await terminal.wait()
    timeline.add(f"handler finished {value:g}")

  chat = await conversation(
      progress, timeline, (names.PROGRESS_THEN_RESULT, {"steps": STEPS})
  )
  await _drive(chat, mode)
  timeline.add("run returned")

  handlers = [f"handler finished {i}" for i in range(1, STEPS + 1)]
  assert timeline.names() == handlers + [
      "after-tool callback",
      "event appended",
      "run returned",
  ]
  (loop,) = loops  # One owning loop, never the registry's.
  assert (loop is asyncio.get_running_loop()) == (mode == "run_async")
  responses = await chat.responses()
  assert responses[names.PROGRESS_THEN_RESULT]["structuredContent"] == {
      "steps": STEPS
  }


@pytest.mark.conformance("P3-PROG-11")
@pytest.mark.parametrize("mode", RUN_MODES)
async def test_progress_factory_using_runner_loop_state_and_a_lock(
    mode: str, terminal: Terminal, conversation: Callable[..., Any]
) -> None:
  """The factory's lock is contended on the Runner loop; its state lands.

  The factory (run on the Runner loop) starts a holder that keeps the lock
  until the terminal response, so every delivery waits on it: a delivery
  running on any other loop would fail with a cross-loop RuntimeError.
  """
  timeline = Timeline()
  failures: list[BaseException] = []
  holders: list[asyncio.Task[None]] = []

  def factory(
      tool_name: str, *, callback_context: Any = None, **_: Any
  ) -> Callable[..., Any]:
    lock = asyncio.Lock()
    held = asyncio.Event()

    async def hold() -> None:
      async with lock:
        held.set()
        await terminal.wait()

    holders.append(asyncio.get_running_loop().create_task(hold()))

    async def callback(value: float, total: Any, message: Any) -> None:
      try:
        await held.wait()
        async with lock:
          callback_context.state["progress_seen"] = value
      except BaseException as error:
        failures.append(error)
        raise

    return callback

  chat = await conversation(
      factory, timeline, (names.PROGRESS_THEN_RESULT, {"steps": STEPS})
  )
  await _drive(chat, mode)

  assert not failures
  assert all(holder.done() for holder in holders)
  # Written by the last delivery, before the tool's Event was built.
  assert (await chat.state())["progress_seen"] == STEPS


@pytest.mark.conformance("P3-PROG-07")
async def test_raising_progress_callback_is_logged_and_the_result_stands(
    terminal: Terminal,
    conversation: Callable[..., Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
  """Every delivery raises; each is logged, the tool result is untouched."""
  timeline = Timeline()
  calls: list[float] = []

  async def progress(value: float, total: Any, message: Any) -> None:
    calls.append(value)
    raise ValueError(f"progress {value:g} rejected")

  chat = await conversation(
      progress, timeline, (names.PROGRESS_THEN_RESULT, {"steps": STEPS})
  )
  with caplog.at_level(logging.ERROR, logger=_LOGGER):
    await _drive(chat, "run_async")

  assert calls == [1, 2, 3]
  raised = [r for r in caplog.records if "raised; ignored" in r.getMessage()]
  assert len(raised) == STEPS
  assert all(r.exc_info and r.exc_info[0] is ValueError for r in raised)
  response = (await chat.responses())[names.PROGRESS_THEN_RESULT]
  assert not response.get("isError")
  assert response["structuredContent"] == {"steps": STEPS}


# --- On the toolset's session facade -----------------------------------------


@pytest.mark.conformance("P3-PROG-01", "P3-PROG-06")
async def test_progress_offered_after_the_terminal_response_is_dropped_unseen(
    terminal: Terminal,
    mcp_apps: Any,
    registry: RegistryEventLoop,
    caplog: pytest.LogCaptureFixture,
) -> None:
  """Intake closes in the step the response surfaces; late offers never run.

  Two late offers: one spawned on the registry loop in the very step the
  response surfaces (the earliest anything can follow it), one made long
  after the call returned.
  """
  seen: list[float] = []

  async def progress(value: float, total: Any, message: Any) -> None:
    seen.append(value)

  toolset = _toolset(mcp_apps, registry, progress)
  terminal.late = (98.0, None, "in the response's step")
  try:
    session = await _session(toolset)
    with caplog.at_level(logging.DEBUG, logger=_LOGGER):
      result = await session.call_tool(
          names.PROGRESS_THEN_RESULT,
          {"steps": STEPS},
          progress_callback=progress,
      )
      (intake,) = terminal.handlers

      async def offer_late() -> None:
        await intake(99.0, None, "after the call returned")

      await registry.run(offer_late)
      # The same-step offer ran on the registry loop before `run` came back.
    assert result.structured_content == {"steps": STEPS}
    assert seen == [1, 2, 3]
    dropped = [
        r.getMessage()
        for r in caplog.records
        if "after the terminal result dropped" in r.getMessage()
    ]
    assert sorted(dropped) == [
        "Progress 98.0 after the terminal result dropped.",
        "Progress 99.0 after the terminal result dropped.",
    ]
  finally:
    await toolset.close()


@pytest.mark.conformance("P3-PROG-09")
async def test_overflowing_the_delivery_queue_drops_the_newest_and_logs_once(
    terminal: Terminal,
    mcp_apps: Any,
    registry: RegistryEventLoop,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
  """Limit 2, six notifications, deliveries held: 1 and 2 arrive, once logged.

  Every delivery waits for the terminal response, which follows all six
  notifications: the first is running and the second queued when the
  other four are offered, so those four (the newest) are dropped.
  """
  monkeypatch.setattr(loop_routing, "PROGRESS_QUEUE_LIMIT", 2)
  seen: list[float] = []

  async def progress(value: float, total: Any, message: Any) -> None:
    await terminal.wait()
    seen.append(value)

  toolset = _toolset(mcp_apps, registry, progress)
  try:
    session = await _session(toolset)
    with caplog.at_level(logging.WARNING, logger=_LOGGER):
      result = await session.call_tool(
          names.PROGRESS_THEN_RESULT, {"steps": 6}, progress_callback=progress
      )
    assert result.structured_content == {"steps": 6}
    assert seen == [1, 2]
    overflow = [r for r in caplog.records if "dropping" in r.getMessage()]
    assert len(overflow) == 1
  finally:
    await toolset.close()


CALLER_VAR: contextvars.ContextVar[str] = contextvars.ContextVar(
    "caller_var", default="unset"
)


@pytest.mark.conformance("P3-PROG-10")
async def test_handlers_see_the_context_of_the_calls_admission(
    terminal: Terminal, mcp_apps: Any, registry: RegistryEventLoop
) -> None:
  """Each delivery sees admission-time values; none of its writes leak."""
  seen: list[str] = []

  async def progress(value: float, total: Any, message: Any) -> None:
    seen.append(CALLER_VAR.get())
    CALLER_VAR.set(f"written by delivery {value:g}")

  toolset = _toolset(mcp_apps, registry, progress)
  try:
    session = await _session(toolset)
    CALLER_VAR.set("at admission")
    await session.call_tool(
        names.PROGRESS_THEN_RESULT, {"steps": STEPS}, progress_callback=progress
    )
    assert seen == ["at admission"] * STEPS
    assert CALLER_VAR.get() == "at admission"
  finally:
    await toolset.close()


@dataclasses.dataclass
class Stuck:
  """A progress callback that never finishes by itself."""

  timeline: Timeline = dataclasses.field(default_factory=Timeline)
  entered: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)

  async def __call__(self, value: float, total: Any, message: Any) -> None:
    self.entered.set()
    try:
      await asyncio.Event().wait()
    except asyncio.CancelledError:
      self.timeline.add("handler cancelled")
      raise


@pytest.mark.conformance("P3-PROG-08")
async def test_drain_past_its_bound_cancels_the_handler_and_returns_the_result(
    terminal: Terminal,
    mcp_apps: Any,
    registry: RegistryEventLoop,
    short_bound: float,
    caplog: pytest.LogCaptureFixture,
) -> None:
  """A handler outliving the drain bound is cancelled, not waited for."""
  stuck = Stuck()
  toolset = _toolset(mcp_apps, registry, stuck)
  try:
    session = await _session(toolset)
    with caplog.at_level(logging.WARNING, logger=_LOGGER):
      call = asyncio.create_task(
          session.call_tool(
              names.PROGRESS_THEN_RESULT, {"steps": 1}, progress_callback=stuck
          )
      )
      await terminal.wait()
      surfaced = time.monotonic()
      result = await asyncio.wait_for(call, short_bound + SLACK)
    assert result.structured_content == {"steps": 1}
    assert stuck.timeline.names() == ["handler cancelled"]
    # It drained first: cancelled no earlier than the bound.
    assert (
        stuck.timeline.at("handler cancelled") - surfaced >= short_bound * 0.9
    )
    assert any("cancelled" in r.getMessage() for r in caplog.records)
  finally:
    await toolset.close()


@pytest.mark.conformance("P3-PROG-08")
async def test_cancelling_the_call_during_the_drain_ends_within_the_bound(
    terminal: Terminal,
    mcp_apps: Any,
    registry: RegistryEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
  """The drain bound stays long; the caller's cancellation cuts it short."""
  draining = asyncio.Event()
  real_drain = loop_routing._ProgressGate.drain

  async def drain(self: Any) -> None:
    draining.set()
    await real_drain(self)

  monkeypatch.setattr(loop_routing._ProgressGate, "drain", drain)
  stuck = Stuck()
  toolset = _toolset(mcp_apps, registry, stuck)
  try:
    session = await _session(toolset)
    call = asyncio.create_task(
        session.call_tool(
            names.PROGRESS_THEN_RESULT, {"steps": 1}, progress_callback=stuck
        )
    )
    await stuck.entered.wait()
    await draining.wait()
    cancelled_at = time.monotonic()
    call.cancel()
    done, _ = await asyncio.wait([call], timeout=SLACK)
    assert done and call.cancelled()
    assert stuck.timeline.names() == ["handler cancelled"]
    assert stuck.timeline.at("handler cancelled") - cancelled_at < SLACK
    assert loop_routing.PROGRESS_DRAIN_TIMEOUT > SLACK  # Not the bound's doing.
  finally:
    await toolset.close()


# --- Shutdown and teardown during delivery -----------------------------------


@pytest.mark.conformance("P3-PROG-14")
async def test_registry_shutdown_mid_delivery_drains_boundedly_then_cancels(
    terminal: Terminal,
    mcp_apps: Any,
    registry: RegistryEventLoop,
    short_bound: float,
) -> None:
  """The call fails (registry closed); delivery gets the bound, then goes."""
  stuck = Stuck()
  toolset = _toolset(mcp_apps, registry, stuck)
  try:
    session = await _session(toolset)
    call = asyncio.create_task(
        session.call_tool(
            names.SLOW_OPERATION,
            {"ms": 60_000, "tag": "shutdown"},
            progress_callback=stuck,
        )
    )
    await stuck.entered.wait()
    closing = time.monotonic()
    await registry.aclose(timeout=15)
    with pytest.raises(RegistryLoopError):
      await asyncio.wait_for(call, short_bound + SLACK)
    assert stuck.timeline.names() == ["handler cancelled"]
    elapsed = stuck.timeline.at("handler cancelled") - closing
    assert short_bound * 0.9 <= elapsed < short_bound + SLACK
    assert not terminal.reached.done()  # It never answered.
  finally:
    await toolset.close()  # A no-op once the registry has closed.


@pytest.mark.conformance("P3-PROG-15")
async def test_toolset_close_mid_delivery_drains_boundedly_then_cancels(
    terminal: Terminal,
    mcp_apps: Any,
    registry: RegistryEventLoop,
    short_bound: float,
) -> None:
  """`close()` waits for the delivery (bounded), which is then cancelled."""
  stuck = Stuck()
  toolset = _toolset(mcp_apps, registry, stuck)
  session = await _session(toolset)
  call = asyncio.create_task(
      session.call_tool(
          names.SLOW_OPERATION,
          {"ms": 60_000, "tag": "teardown"},
          progress_callback=stuck,
      )
  )
  await stuck.entered.wait()
  closing = time.monotonic()
  await asyncio.wait_for(toolset.close(), short_bound * 2 + SLACK)
  closed = time.monotonic()
  # Teardown returned only once the delivery was gone.
  assert stuck.timeline.names() == ["handler cancelled"]
  assert short_bound * 0.9 <= stuck.timeline.at("handler cancelled") - closing
  assert closed - closing < short_bound * 2 + SLACK
  done, _ = await asyncio.wait([call], timeout=SLACK)
  assert done and call.exception() is not None
