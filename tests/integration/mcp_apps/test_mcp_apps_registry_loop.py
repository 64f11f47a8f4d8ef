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

"""The binding registry's dedicated loop against a real stdio MCP server.

A `LoopBoundSession` on a `RegistryEventLoop` talks to the connection-stateful
conformance server: `open_view` mints a nonce into the connection's state,
and `app_followup` succeeds only on that same connection, so a passing
follow-up proves the connection (and its server process) survived. Short-
lived loops are made the way a synchronous `Runner.run()` makes them,
`asyncio.run(...)` on a worker thread that then ends. Races are forced with
events; nothing sleeps to order anything.

The loop-level half of P2-LOOP-01..06 is proved here; P2-LOOP-02/03/04 also
need the binding registry and `Runner.run()` integration (sibling work).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
import json
from pathlib import Path
import threading
import time
from typing import Any

from google.adk.dependencies._mcp import ClientSession
from google.adk.dependencies._mcp import stdio_client
from google.adk.mcp_apps.binding.registry_loop import RegistryEventLoop
from google.adk.mcp_apps.binding.registry_loop import RegistryLoopError
from google.adk.mcp_apps.errors import McpAppsError
from loop_bound_session import LoopBoundSession
from loop_bound_session import LoopBoundSessionClosedError
from mcp_apps_conformance_server import names
import pytest

pytestmark = pytest.mark.integration

WAIT = 20.0
"""Upper bound on any single wait for the server (never a pacing delay)."""


@pytest.fixture
def registry() -> Any:
  """A started registry loop, closed (and checked closed) at teardown."""
  loop = RegistryEventLoop()
  loop.start()
  yield loop
  loop.close(timeout=15)
  assert loop.thread is not None and not loop.thread.is_alive()


def _session(
    registry: RegistryEventLoop,
    mcp_apps: Any,
    options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> LoopBoundSession:
  params = mcp_apps.stdio_parameters(options)
  return LoopBoundSession(
      registry,
      lambda: stdio_client(params),
      session_kwargs={"read_timeout_seconds": 30.0},
      **kwargs,
  )


def _in_fresh_loop(coro_fn: Callable[[], Any]) -> tuple[Any, int]:
  """Runs `coro_fn()` under `asyncio.run` on a worker thread that then ends.

  This is what a synchronous `Runner.run()` does. Returns the result and the
  worker's thread id, after asserting the worker loop is closed and the
  thread has exited.
  """
  outcome: dict[str, Any] = {}

  def worker() -> None:
    async def body() -> Any:
      outcome["loop"] = asyncio.get_running_loop()
      return await coro_fn()

    try:
      outcome["result"] = asyncio.run(body())
    except BaseException as error:  # pylint: disable=broad-exception-caught
      outcome["error"] = error
    outcome["ident"] = threading.get_ident()

  thread = threading.Thread(target=worker, name="runner-worker")
  thread.start()
  thread.join(WAIT)
  assert not thread.is_alive()
  assert outcome["loop"].is_closed()
  if "error" in outcome:
    raise outcome["error"]
  return outcome["result"], outcome["ident"]


async def _open_view(session: LoopBoundSession) -> dict[str, Any]:
  result = await session.call_tool(names.OPEN_VIEW, {})
  assert not result.is_error
  return dict(result.structured_content)


async def _slow_call_started(
    session: LoopBoundSession, tag: str
) -> asyncio.Task[Any]:
  """Starts a 60 s `slow_operation`; returns once the server reports it."""
  started = asyncio.Event()

  async def on_progress(progress: float, total: Any, message: Any) -> None:
    if message == "started":
      started.set()

  slow = asyncio.create_task(
      session.call_tool(
          names.SLOW_OPERATION,
          {"ms": 60_000, "tag": tag},
          progress_callback=on_progress,
      )
  )
  async with asyncio.timeout(WAIT):
    await started.wait()
  return slow


async def _followup(session: LoopBoundSession, nonce: str) -> dict[str, Any]:
  result = await session.call_tool(names.APP_FOLLOWUP, {"nonce": nonce})
  answer = dict(result.structured_content)
  assert not result.is_error, answer
  assert answer["verdict"] == "ok"
  return answer


class _RecordingSession(ClientSession):
  """Records the thread of every session operation (client-side only)."""

  calls: list[tuple[str, int]]

  def __init__(self, *args: Any, **kwargs: Any) -> None:
    super().__init__(*args, **kwargs)
    self.calls = []
    _RecordingSession.last = self

  def _note(self, name: str) -> None:
    self.calls.append((name, threading.get_ident()))

  async def __aenter__(self) -> _RecordingSession:
    self._note("enter")
    return await super().__aenter__()

  async def __aexit__(self, *exc_info: Any) -> Any:
    self._note("exit")
    return await super().__aexit__(*exc_info)

  async def initialize(self) -> Any:
    self._note("initialize")
    return await super().initialize()

  async def list_tools(self, *args: Any, **kwargs: Any) -> Any:
    self._note("list_tools")
    return await super().list_tools(*args, **kwargs)

  async def read_resource(self, *args: Any, **kwargs: Any) -> Any:
    self._note("read_resource")
    return await super().read_resource(*args, **kwargs)

  async def call_tool(self, *args: Any, **kwargs: Any) -> Any:
    self._note("call_tool")
    return await super().call_tool(*args, **kwargs)


@pytest.mark.conformance("P2-LOOP-01")
async def test_every_session_operation_runs_on_registry_thread(
    registry: RegistryEventLoop, mcp_apps: Any
) -> None:
  """P2-LOOP-01: open, handshake, list, read, call and close: registry only."""
  transport_threads: list[int] = []
  params = mcp_apps.stdio_parameters()

  def transport() -> Any:
    transport_threads.append(threading.get_ident())
    return stdio_client(params)

  session = LoopBoundSession(
      registry, transport, session_factory=_RecordingSession
  )
  await session.open()
  recorder = _RecordingSession.last
  await session.initialize()
  listed = await session.list_tools()
  assert names.OPEN_VIEW in {tool.name for tool in listed.tools}
  read = await session.read_resource(names.VIEW_URI)
  assert read.contents
  await _open_view(session)
  on_registry = await session.execute(
      lambda _: _async_value(registry.is_registry_thread())
  )
  await session.aclose()

  assert on_registry and not registry.is_registry_thread()
  assert registry.thread is not None
  registry_ident = registry.thread.ident
  assert [name for name, _ in recorder.calls] == [
      "enter",
      "initialize",
      "list_tools",
      "read_resource",
      "call_tool",
      "exit",
  ]
  assert {ident for _, ident in recorder.calls} == {registry_ident}
  assert transport_threads == [registry_ident]
  assert threading.get_ident() != registry_ident


async def _async_value(value: Any) -> Any:
  return value


@pytest.mark.conformance("P2-LOOP-02", "P2-LOOP-06")
async def test_connection_survives_the_opening_loop(
    registry: RegistryEventLoop, mcp_apps: Any
) -> None:
  """P2-LOOP-02/04/06, loop level: the generation outlives its opener's loop.

  The session is opened and the View-producing call made inside a
  short-lived `asyncio.run` loop on a worker thread (what `Runner.run()`
  does); that loop and thread end. The app-only follow-up then succeeds on
  the same connection and process from the main loop and from a second
  fresh `asyncio.run`.
  """
  before = mcp_apps.child_pids()
  session = _session(registry, mcp_apps)

  async def initial_run() -> dict[str, Any]:
    await session.open()
    await session.initialize()
    return await _open_view(session)

  opened, first_worker = _in_fresh_loop(initial_run)
  assert session.is_open
  spawned = mcp_apps.child_pids() - before
  assert spawned == {opened["pid"]}

  from_main = await _followup(session, opened["nonce"])

  async def later_run() -> dict[str, Any]:
    return await _followup(session, opened["nonce"])

  from_second, second_worker = _in_fresh_loop(later_run)

  # `_in_fresh_loop` asserted each worker's loop closed and its thread gone
  # (thread ids are reused by the OS, so they prove nothing more).
  del first_worker, second_worker
  for answer in (from_main, from_second):
    assert answer["connectionId"] == opened["connectionId"]
    assert answer["processNonce"] == opened["processNonce"]
    assert answer["pid"] == opened["pid"]
  await session.aclose()
  assert mcp_apps.child_pids() == before


@pytest.mark.conformance("P2-LOOP-05")
async def test_app_call_from_a_third_loop_while_another_is_in_flight(
    registry: RegistryEventLoop, mcp_apps: Any
) -> None:
  """P2-LOOP-05, loop level: a host-server loop's call runs on the registry.

  While the main loop has a slow call in flight on the connection, a third
  loop on another thread makes the app-only follow-up; it succeeds on the
  same connection, and the slow call is unaffected until cancelled.
  """
  async with _session(registry, mcp_apps) as session:
    await session.initialize()
    opened = await _open_view(session)
    slow = await _slow_call_started(session, "in-flight")

    async def host_server_call() -> dict[str, Any]:
      return await _followup(session, opened["nonce"])

    answer, _ = await asyncio.to_thread(_in_fresh_loop, host_server_call)
    assert answer["connectionId"] == opened["connectionId"]
    assert not slow.done()
    slow.cancel()
    with pytest.raises(asyncio.CancelledError):
      await slow
    assert await _followup(session, opened["nonce"])


@pytest.mark.parametrize("kind", ["async", "sync"])
async def test_progress_callback_runs_on_the_callers_loop_and_may_raise(
    registry: RegistryEventLoop,
    mcp_apps: Any,
    kind: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
  """User code never runs on the registry thread; its failure is contained.

  The SDK delivers progress on the registry loop; the callback runs on the
  loop that issued the call (the main loop, then a fresh worker loop), in the
  caller's context. The second notification's callback raises; the call
  still returns its result.
  """
  steps = 3
  async with _session(registry, mcp_apps) as session:
    await session.initialize()

    async def call_with_progress() -> tuple[list[Any], dict[str, Any]]:
      seen: list[Any] = []
      all_seen = asyncio.Event()
      loop = asyncio.get_running_loop()

      def record(progress: float, total: Any, message: Any) -> None:
        seen.append(
            (progress, threading.get_ident(), asyncio.get_running_loop())
        )
        if len(seen) == steps:
          all_seen.set()
        if progress == 2:
          raise RuntimeError("callback failure must not break the call")

      async def async_callback(
          progress: float, total: Any, message: Any
      ) -> None:
        await asyncio.sleep(0)  # A real suspension on the owning loop.
        record(progress, total, message)

      callback: Any = async_callback if kind == "async" else record
      result = await session.call_tool(
          names.PROGRESS_THEN_RESULT,
          {"steps": steps},
          progress_callback=callback,
      )
      # The terminal response may overtake progress handlers (SDK behaviour);
      # wait for them on this loop before this loop may end.
      async with asyncio.timeout(WAIT):
        await all_seen.wait()
      assert all(entry[2] is loop for entry in seen)
      return seen, dict(result.structured_content)

    seen, result = await call_with_progress()
    assert result == {"steps": steps}
    assert sorted(entry[0] for entry in seen) == [1, 2, 3]
    assert {entry[1] for entry in seen} == {threading.get_ident()}

    (seen, result), worker = await asyncio.to_thread(
        _in_fresh_loop, call_with_progress
    )
    assert result == {"steps": steps}
    assert {entry[1] for entry in seen} == {worker}
    assert registry.thread is not None
    assert registry.thread.ident not in {worker, threading.get_ident()}
  failures = [r for r in caplog.records if "raised; ignored" in r.getMessage()]
  assert len(failures) == 2  # Logged once per call, never propagated.


async def test_callbacks_cannot_be_bound_to_the_registry_loop_or_no_loop(
    registry: RegistryEventLoop,
) -> None:
  """A callback needs an owning loop, and the registry loop never owns one."""

  async def bind_on_registry() -> None:
    registry.marshal_callback(lambda: None)

  with pytest.raises(RegistryLoopError, match="^callback_owner:"):
    await registry.run(bind_on_registry)
  with pytest.raises(RegistryLoopError, match="^callback_owner:"):
    await asyncio.to_thread(registry.marshal_callback, lambda: None)


async def test_cancelling_the_caller_cancels_the_registry_side_call(
    registry: RegistryEventLoop, mcp_apps: Any, tmp_path: Path
) -> None:
  """Caller cancellation reaches the registry task and then the server.

  The registry-side operation records its own cancellation (on the registry
  thread) before the caller's cancellation completes; the server records
  `slow:cancelled`, and the connection stays usable.
  """
  ledger = tmp_path / "effects.json"
  options = {"effects_file": str(ledger)}
  async with _session(registry, mcp_apps, options) as session:
    await session.initialize()
    started = asyncio.Event()
    registry_side: list[str] = []

    async def on_progress(progress: float, total: Any, message: Any) -> None:
      if message == "started":
        started.set()

    async def slow_call(client: ClientSession) -> Any:
      try:
        return await client.call_tool(
            names.SLOW_OPERATION,
            {"ms": 60_000, "tag": "cancel-me"},
            progress_callback=on_progress_on_registry,
        )
      except asyncio.CancelledError:
        registry_side.append(
            "cancelled-on-registry"
            if registry.is_registry_thread()
            else "cancelled-elsewhere"
        )
        raise

    on_progress_on_registry = registry.marshal_callback(on_progress)
    caller = asyncio.create_task(session.execute(slow_call))
    async with asyncio.timeout(WAIT):
      await started.wait()
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
      await caller
    # `run` waited for the registry side to unwind before re-raising.
    assert registry_side == ["cancelled-on-registry"]

    # The server's record follows the client's notifications/cancelled; poll
    # the in-band ledger (an observation bound, not a pacing delay).
    deadline = time.monotonic() + WAIT
    events: list[str] = []
    while time.monotonic() < deadline:
      result = await session.call_tool(names.READ_EFFECTS, {})
      events = list(result.structured_content["events"])
      if "slow:cancelled:cancel-me" in events:
        break
      await asyncio.sleep(0.02)
    assert events[:2] == ["slow:started:cancel-me", "slow:cancelled:cancel-me"]
    assert (await session.list_tools()).tools  # Still usable.


async def test_close_cancels_in_flight_work_joins_thread_and_reaps_server(
    mcp_apps: Any, tmp_path: Path
) -> None:
  """Registry shutdown: bounded, leaves no thread, task or server process."""
  ledger = tmp_path / "effects.json"
  before = mcp_apps.child_pids()
  registry = RegistryEventLoop(name="registry-under-test")
  registry.start()
  registry.start()  # Idempotent.
  thread = registry.thread
  assert thread is not None and thread.name == "registry-under-test"
  assert thread.daemon

  session = _session(registry, mcp_apps, {"effects_file": str(ledger)})
  await session.open()
  await session.initialize()
  assert len(mcp_apps.child_pids() - before) == 1
  slow = await _slow_call_started(session, "shutdown")

  close_timeout = 10.0
  begun = time.monotonic()
  await registry.aclose(timeout=close_timeout)
  assert time.monotonic() - begun < close_timeout

  with pytest.raises(RegistryLoopError, match="^closed:"):
    await slow
  assert not thread.is_alive()
  assert mcp_apps.child_pids() == before
  # The server process has exited, so its ledger is final.
  events = json.loads(ledger.read_text())["events"]
  assert events == ["slow:started:shutdown", "slow:cancelled:shutdown"]

  with pytest.raises(RegistryLoopError, match="^closed:"):
    await registry.run(_async_value, 1)
  with pytest.raises(RegistryLoopError, match="^closed:"):
    registry.run_sync(_async_value, 1)
  with pytest.raises(RegistryLoopError, match="^closed:"):
    await session.call_tool(names.OPEN_VIEW, {})
  with pytest.raises(RegistryLoopError, match="^closed:"):
    registry.start()
  assert issubclass(RegistryLoopError, McpAppsError)
  registry.close()  # Idempotent.
  await session.aclose()  # Already closed by the shutdown: a no-op.
  assert not session.is_open


async def test_run_and_run_sync_contract(registry: RegistryEventLoop) -> None:
  """Results and exceptions cross loops; blocking on the registry is refused."""

  async def where(value: int) -> tuple[int, bool]:
    return value, registry.is_registry_thread()

  async def fail() -> None:
    raise ValueError("from the registry loop")

  assert await registry.run(where, 7) == (7, True)
  with pytest.raises(ValueError, match="from the registry loop"):
    await registry.run(fail)
  assert await asyncio.to_thread(registry.run_sync, where, 8) == (8, True)

  async def nested() -> tuple[int, bool]:
    return await registry.run(where, 9)  # Already there: awaited inline.

  assert await registry.run(nested) == (9, True)

  async def block_on_registry() -> None:
    registry.run_sync(where, 1)

  with pytest.raises(RegistryLoopError, match="^thread_reentry:"):
    await registry.run(block_on_registry)

  async def close_on_registry() -> None:
    registry.close()

  with pytest.raises(RegistryLoopError, match="^thread_reentry:"):
    await registry.run(close_on_registry)

  unstarted = RegistryEventLoop()
  with pytest.raises(RegistryLoopError, match="^not_started:"):
    await unstarted.run(where, 1)
  unstarted.close()
  assert unstarted.thread is None


async def test_session_operations_fail_typed_when_not_open(
    registry: RegistryEventLoop, mcp_apps: Any
) -> None:
  """A session that is not open refuses work with a typed error."""
  session = _session(registry, mcp_apps)
  with pytest.raises(LoopBoundSessionClosedError):
    await session.list_tools()
  async with session:
    await session.initialize()
  with pytest.raises(LoopBoundSessionClosedError):
    await session.call_tool(names.OPEN_VIEW, {})
