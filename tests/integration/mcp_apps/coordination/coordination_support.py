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

"""Helpers of the Runner coordination tests: barriers, a plugin whose
callbacks re-enter, and one call of each Runner entry point.

Example:

  gate = Gate()
  stack.llm.on_answer = gate.hold
  turn = asyncio.create_task(collect(stack.runner, sid, "first"))
  await gate.reached()
  ...
  gate.open()
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
import dataclasses
import sys
import threading
from typing import Any
from typing import Optional

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events.event import Event
from google.adk.live.live_request_queue import LiveRequestQueue
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.coordination.coordinator import session_coordinator
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from sealing_support import APP
from sealing_support import USER

BOUND = 10.0
"""Seconds any awaited step may take before the test fails (never slept)."""

TOOL = "whoami"
"""The conformance server's plain tool every scripted turn calls once."""

MISSING_TOOL = "no_such_tool"
"""A name no toolset serves: its call goes through the tool-error callbacks."""


def message(text: str) -> types.Content:
  """A user message."""
  return types.Content(role="user", parts=[types.Part(text=text)])


def key(session_id: str) -> SessionKey:
  """The coordinator's key of a Session of the test app."""
  return SessionKey(APP, USER, session_id)


class Gate:
  """A barrier the first turn to reach it waits at, on any loop or thread.

  `hold` is the model's `on_answer` hook (or any callback's body): the
  first call signals `reached` and waits until `open()`; later calls pass.
  Thread events, so a turn on a `run()` worker loop is held the same way.
  """

  def __init__(self) -> None:
    self._entered = threading.Event()
    self._open = threading.Event()
    self._lock = threading.Lock()
    self._armed = True

  async def hold(self) -> None:
    with self._lock:
      first, self._armed = self._armed, False
    if not first:
      return
    self._entered.set()
    loop = asyncio.get_running_loop()
    opened = await loop.run_in_executor(None, self._open.wait, BOUND)
    assert opened, "the test never opened the gate"

  async def reached(self) -> None:
    """Returns once a turn waits at the gate; fails after `BOUND`."""
    loop = asyncio.get_running_loop()
    entered = await loop.run_in_executor(None, self._entered.wait, BOUND)
    assert entered, "no turn reached the gate"

  def open(self) -> None:
    """Lets the held turn (and every later one) pass."""
    self._open.set()


async def until_queued(session_id: str, count: int = 1) -> None:
  """Returns once `count` acquisitions of the Session wait; bounded."""

  async def poll() -> None:
    while session_coordinator().waiting(key(session_id)) < count:
      await asyncio.sleep(0)

  await asyncio.wait_for(poll(), BOUND)


async def collect(runner: Runner, session_id: str, text: str) -> list[Event]:
  """One `run_async` turn, to its end."""
  events = []
  async for event in runner.run_async(
      user_id=USER, session_id=session_id, new_message=message(text)
  ):
    events.append(event)
  return events


def run_sync(runner: Runner, session_id: str, text: str) -> list[Event]:
  """One synchronous `run()` turn, to its end (call it off the loop)."""
  return list(
      runner.run(user_id=USER, session_id=session_id, new_message=message(text))
  )


def texts(events: list[Event]) -> list[str]:
  """The text parts of `events`, in order."""
  return [
      part.text
      for event in events
      if event.content
      for part in event.content.parts or ()
      if part.text
  ]


def invocation_runs(events: list[Event]) -> list[str]:
  """The invocation ids of `events`, consecutive repeats merged: a turn
  whose Events are contiguous appears once."""
  runs: list[str] = []
  for event in events:
    if not runs or runs[-1] != event.invocation_id:
      runs.append(event.invocation_id)
  return runs


@dataclasses.dataclass
class Attempt:
  """What one entry-point call made from inside a callback did.

  Attributes:
    entry: The entry point called.
    error: What it raised (None: it ran to its end).
    waiting: Queued acquisitions of the Session just after it returned.
    threads_started: Threads that began running during the call.
    threads_before: `threading.enumerate()` before the call.
    threads_after: `threading.enumerate()` after it.
  """

  entry: str
  error: Optional[BaseException] = None
  waiting: int = 0
  threads_started: list[str] = dataclasses.field(default_factory=list)
  threads_before: list[threading.Thread] = dataclasses.field(
      default_factory=list
  )
  threads_after: list[threading.Thread] = dataclasses.field(
      default_factory=list
  )


def _watch_thread_starts(started: list[str]) -> Callable[[], None]:
  """Records the name of every thread that starts from now; returns the
  function that stops recording. `threading.setprofile` runs in each new
  thread before its target."""
  previous = threading.getprofile()

  def on_start(*_: Any) -> None:
    started.append(threading.current_thread().name)
    sys.setprofile(None)

  threading.setprofile(on_start)
  return lambda: threading.setprofile(previous)


def call_run_sync(runner: Runner, session_id: str, attempt: Attempt) -> None:
  """`runner.run(...)` here, on this thread; fills the thread fields."""
  attempt.threads_before = threading.enumerate()
  stop = _watch_thread_starts(attempt.threads_started)
  try:
    run_sync(runner, session_id, "nested run")
  except Exception as e:  # pylint: disable=broad-except
    attempt.error = e
  finally:
    stop()
    attempt.threads_after = threading.enumerate()
    attempt.waiting = session_coordinator().waiting(key(session_id))


async def call_entry(runner: Runner, entry: str, session_id: str) -> Attempt:
  """Calls one Runner entry point on `session_id` and records the outcome.

  `entry`: `run_async`, `run_debug`, `rewind_async`, `run_live`, `run`
  (synchronously, on the calling loop's thread) or `run_in_thread` (`run()`
  through `asyncio.to_thread`, which carries the caller's context). The
  call is bounded: a call that waited would end in `TimeoutError`.
  """
  attempt = Attempt(entry)
  if entry == "run":
    call_run_sync(runner, session_id, attempt)
    return attempt
  if entry == "run_in_thread":
    await asyncio.wait_for(
        asyncio.to_thread(call_run_sync, runner, session_id, attempt), BOUND
    )
    return attempt

  async def go() -> None:
    if entry == "run_async":
      await collect(runner, session_id, "nested run_async")
    elif entry == "run_debug":
      await runner.run_debug(
          "nested run_debug", user_id=USER, session_id=session_id, quiet=True
      )
    elif entry == "rewind_async":
      await runner.rewind_async(
          user_id=USER,
          session_id=session_id,
          rewind_before_invocation_id="e-nowhere",
      )
    elif entry == "run_live":
      async for _ in runner.run_live(
          user_id=USER,
          session_id=session_id,
          live_request_queue=LiveRequestQueue(),
      ):
        pass
    else:
      raise AssertionError(f"unknown entry point {entry}")

  try:
    await asyncio.wait_for(go(), BOUND)
  except Exception as e:  # pylint: disable=broad-except
    attempt.error = e
  attempt.waiting = session_coordinator().waiting(key(session_id))
  return attempt


Act = Callable[[str, str], Awaitable[None]]
"""A callback's action: given the family and the Session id, do something."""


class ReentryPlugin(BasePlugin):
  """Records every callback it gets; the families in `acting` call `act`.

  Each acting family acts once (its first call), so a nested turn the
  action starts does not act again.
  """

  def __init__(self) -> None:
    super().__init__(name="reentry")
    self.called: list[str] = []
    self.acting: set[str] = set()
    self.act: Optional[Act] = None
    self._acted: set[str] = set()

  async def _maybe(self, family: str, session_id: str) -> None:
    self.called.append(family)
    if family in self.acting and family not in self._acted:
      self._acted.add(family)
      assert self.act is not None
      await self.act(family, session_id)

  async def on_user_message_callback(
      self, *, invocation_context: InvocationContext, user_message: Any
  ) -> None:
    await self._maybe("on_user_message", invocation_context.session.id)

  async def before_run_callback(
      self, *, invocation_context: InvocationContext
  ) -> None:
    await self._maybe("before_run", invocation_context.session.id)

  async def on_event_callback(
      self, *, invocation_context: InvocationContext, event: Event
  ) -> None:
    if event.get_function_responses():
      await self._maybe("on_event", invocation_context.session.id)
    else:
      self.called.append("on_event")

  async def before_model_callback(
      self, *, callback_context: Any, llm_request: Any
  ) -> None:
    await self._maybe("before_model", callback_context.session.id)

  async def before_tool_callback(
      self,
      *,
      tool: BaseTool,
      tool_args: dict[str, Any],
      tool_context: ToolContext,
  ) -> None:
    await self._maybe("plugin_before_tool", tool_context.session.id)

  async def after_tool_callback(
      self,
      *,
      tool: BaseTool,
      tool_args: dict[str, Any],
      tool_context: ToolContext,
      result: dict[str, Any],
  ) -> None:
    await self._maybe("plugin_after_tool", tool_context.session.id)

  async def on_tool_error_callback(
      self,
      *,
      tool: BaseTool,
      tool_args: dict[str, Any],
      tool_context: ToolContext,
      error: Exception,
  ) -> Optional[dict[str, Any]]:
    await self._maybe("plugin_tool_error", tool_context.session.id)
    return {"answered_by": "on_tool_error_callback"}

  async def after_run_callback(
      self, *, invocation_context: InvocationContext
  ) -> None:
    await self._maybe("after_run", invocation_context.session.id)
