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

"""A registry-bound `McpToolset`'s I/O on the registry loop, end to end.

The toolset is built with `AppsClientBinding.for_mcp_apps(registry_loop=...)`
and talks over stdio to the connection-stateful conformance server:
`open_view` mints a nonce into its connection, `app_followup(nonce)` succeeds
only on that same connection, so a passing follow-up proves the connection
generation (and its server process, counted with `child_pids`) survived.
An `LlmAgent` on a scripted model calls `open_view` (then
`progress_then_result`) through synchronous `Runner.run()`, whose worker loop
is gone once its generator finishes.

Where each piece ran is recorded, not inferred: a spy on the real
`ClientSession` (`__aenter__`, `send_request`, `__aexit__`) records the
thread of every session operation, and the user callbacks (tool filter,
header provider, progress, tool callbacks) record theirs. Nothing sleeps to
order anything; the one delay (a deliberately slow progress callback) only
makes the drain observable.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
import copy
import dataclasses
import pickle
import re
import threading
from typing import Any

from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.mcp_apps.binding.client_extensions import AppsClientBinding
from google.adk.mcp_apps.binding.loop_routing import RoutedSession
from google.adk.mcp_apps.binding.registry_loop import RegistryEventLoop
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.mcp_tool import McpToolset
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.adk.tools.mcp_tool.session_context import SessionContext
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from mcp.client.session import ClientSession
from mcp_apps_conformance_server import names
import pytest
from scripted_llm import ScriptedLlm

pytestmark = pytest.mark.integration

TIMEOUT = 30.0
APP = "loop_routing"
USER = "user"
PROGRESS_STEPS = 3


# --- Recording ---------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Op:
  """One session operation or user-code invocation, and where it ran."""

  what: str
  thread: int
  loop: asyncio.AbstractEventLoop | None


def _here(what: str) -> Op:
  try:
    loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
  except RuntimeError:
    loop = None
  return Op(what, threading.get_ident(), loop)


class Recorder:
  """A thread-safe log of `Op`s."""

  def __init__(self) -> None:
    self._lock = threading.Lock()
    self._ops: list[Op] = []

  def add(self, what: str) -> None:
    op = _here(what)
    with self._lock:
      self._ops.append(op)

  def ops(self, prefix: str = "") -> list[Op]:
    with self._lock:
      return [op for op in self._ops if op.what.startswith(prefix)]


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> Recorder:
  """Records every real `ClientSession` open, request and close."""
  recorder = Recorder()
  enter, send, exit_ = (
      ClientSession.__aenter__,
      ClientSession.send_request,
      ClientSession.__aexit__,
  )

  async def spy_enter(self: Any) -> Any:
    recorder.add("session:open")
    return await enter(self)

  async def spy_send(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
    recorder.add(f"session:request:{getattr(request, 'method', '?')}")
    return await send(self, request, *args, **kwargs)

  async def spy_exit(self: Any, *args: Any) -> Any:
    recorder.add("session:close")
    return await exit_(self, *args)

  monkeypatch.setattr(ClientSession, "__aenter__", spy_enter)
  monkeypatch.setattr(ClientSession, "send_request", spy_send)
  monkeypatch.setattr(ClientSession, "__aexit__", spy_exit)
  return recorder


@pytest.fixture
def registry() -> Iterator[RegistryEventLoop]:
  """A started registry loop, closed (and checked closed) at teardown."""
  loop = RegistryEventLoop(name="test-registry-loop")
  loop.start()
  yield loop
  loop.close(timeout=15)
  assert loop.thread is not None and not loop.thread.is_alive()


def _registry_thread(registry: RegistryEventLoop) -> int:
  assert registry.thread is not None and registry.thread.ident is not None
  return registry.thread.ident


# --- The agent ---------------------------------------------------------------


@dataclasses.dataclass
class Harness:
  """A bound toolset, the agent using it, and what its user code saw."""

  toolset: McpToolset
  agent: LlmAgent
  user_code: Recorder
  nonces: list[str]
  worker_reads: list[Any]
  worker_facades: list[RoutedSession]

  async def session(self) -> Any:
    return await self.toolset._mcp_session_manager.create_session()


def _harness(
    mcp_apps: Any, binding: AppsClientBinding | None = None
) -> Harness:
  user_code = Recorder()
  nonces: list[str] = []
  worker_reads: list[Any] = []
  worker_facades: list[RoutedSession] = []

  def tool_filter(
      tool: BaseTool, readonly_context: ReadonlyContext | None = None
  ) -> bool:
    user_code.add("user:tool_filter")
    return True

  def header_provider(readonly_context: ReadonlyContext) -> dict[str, str]:
    user_code.add("user:header_provider")
    return {}

  async def progress(
      value: float, total: float | None, message: str | None
  ) -> None:
    user_code.add(f"user:progress:{value:g}")

  kwargs: dict[str, Any] = {}
  if binding is not None:
    kwargs["_apps_client_binding"] = binding
  toolset = McpToolset(
      connection_params=StdioConnectionParams(
          server_params=mcp_apps.stdio_parameters(), timeout=TIMEOUT
      ),
      tool_filter=tool_filter,
      header_provider=header_provider,
      progress_callback=progress,
      **kwargs,
  )

  async def after_tool(
      tool: BaseTool,
      args: dict[str, Any],
      tool_context: ToolContext,
      tool_response: dict[str, Any],
  ) -> None:
    user_code.add(f"user:after_tool:{tool.name}")
    if tool.name != names.OPEN_VIEW:
      return None
    text = " ".join(c.get("text", "") for c in tool_response["content"])
    match = re.search(r"nonce ([0-9a-f]+)", text)
    assert match, tool_response
    nonces.append(match.group(1))
    # P2-LOOP-03's equivalent: read the View while the worker loop is live.
    worker_reads.append(await toolset.read_resource_by_uri(names.VIEW_URI))
    facade = await toolset._mcp_session_manager.create_session()
    if isinstance(facade, RoutedSession):
      worker_facades.append(facade)
    return None

  agent = LlmAgent(
      name="loop_routing_agent",
      model=ScriptedLlm(
          steps=[
              [(names.OPEN_VIEW, {})],
              [(names.PROGRESS_THEN_RESULT, {"steps": PROGRESS_STEPS})],
          ]
      ),
      tools=[toolset],
      after_tool_callback=after_tool,
  )
  return Harness(
      toolset, agent, user_code, nonces, worker_reads, worker_facades
  )


async def _new_session(runner: Runner) -> str:
  session = await runner.session_service.create_session(
      app_name=APP, user_id=USER
  )
  return session.id


def _message() -> types.Content:
  return types.Content(role="user", parts=[types.Part(text="open the view")])


def _run_sync(runner: Runner, session_id: str) -> list[Any]:
  """`Runner.run()` to exhaustion: its worker loop is closed on return."""
  return list(
      runner.run(user_id=USER, session_id=session_id, new_message=_message())
  )


async def _followup(session: Any, nonce: str) -> dict[str, Any]:
  result = await session.call_tool(names.APP_FOLLOWUP, {"nonce": nonce})
  assert not result.is_error, result
  structured: dict[str, Any] = result.structured_content
  assert structured["verdict"] == "ok"
  return structured


async def _whoami(session: Any) -> dict[str, Any]:
  result = await session.call_tool(names.WHOAMI, {})
  structured: dict[str, Any] = result.structured_content
  return structured


def _function_responses(events: list[Any]) -> dict[str, Any]:
  return {
      part.function_response.name: part.function_response.response
      for event in events
      for part in (event.content.parts if event.content else None) or []
      if part.function_response
  }


# --- P2-LOOP: Runner.run() and the generation's survival ---------------------


@pytest.mark.conformance("P2-LOOP-01", "P2-LOOP-02", "P2-LOOP-03", "P2-LOOP-04")
async def test_sync_run_initial_ui_call_and_generation_survives(
    registry: RegistryEventLoop, wire: Recorder, mcp_apps: Any
) -> None:
  """P2-LOOP-01/02/03/04 (read equivalent): through sync `Runner.run()`."""
  binding = AppsClientBinding.for_mcp_apps(registry_loop=registry)
  harness = _harness(mcp_apps, binding)
  runner = Runner(
      app_name=APP,
      agent=harness.agent,
      session_service=InMemorySessionService(),
  )
  session_id = await _new_session(runner)
  baseline = mcp_apps.child_pids()
  main_thread = threading.get_ident()
  try:
    # A plain thread, as a synchronous caller would run it.
    events = await asyncio.to_thread(_run_sync, runner, session_id)

    # P2-LOOP-02: the initial UI call (and the progress call) succeeded.
    responses = _function_responses(events)
    assert not responses[names.OPEN_VIEW].get("isError"), responses
    assert responses[names.PROGRESS_THEN_RESULT]["structuredContent"] == {
        "steps": PROGRESS_STEPS
    }
    (nonce,) = harness.nonces
    server_pids = mcp_apps.child_pids() - baseline
    assert len(server_pids) == 1, "one stdio server for the generation"

    # User code ran on the Runner's worker thread, whose loop is now closed.
    user_ops = harness.user_code.ops("user:")
    worker_threads = {op.thread for op in user_ops}
    (worker_thread,) = worker_threads
    assert worker_thread not in (_registry_thread(registry), main_thread)
    worker_loops = {op.loop for op in user_ops}
    (worker_loop,) = worker_loops
    assert worker_loop is not None and worker_loop.is_closed()
    kinds = {":".join(op.what.split(":")[:2]) for op in user_ops}
    assert {
        "user:tool_filter",
        "user:header_provider",
        "user:after_tool",
        "user:progress",
    } <= kinds
    assert len(harness.user_code.ops("user:progress:")) == PROGRESS_STEPS

    # P2-LOOP-03 (equivalent): the View's resource read on the live worker.
    (contents,) = harness.worker_reads
    assert str(contents[0].uri) == names.VIEW_URI

    # P2-LOOP-02: from the main test loop, the same connection is live.
    session = await harness.session()
    assert isinstance(session, RoutedSession)
    assert harness.worker_facades == [session], "the same pooled session"
    followup = await _followup(session, nonce)
    assert followup["pid"] in server_pids
    who = await _whoami(session)
    assert who["connectionId"] == followup["connectionId"]

    # P2-LOOP-04 (equivalent): the View's resource read after the worker.
    contents = await harness.toolset.read_resource_by_uri(names.VIEW_URI)
    assert str(contents[0].uri) == names.VIEW_URI
    assert mcp_apps.child_pids() - baseline == server_pids, "no new server"

    # P2-LOOP-01: every session operation ran on the registry thread.
    ops = wire.ops("session:")
    methods = {op.what for op in ops}
    assert {
        "session:open",
        "session:request:initialize",
        "session:request:tools/list",
        "session:request:tools/call",
        "session:request:resources/read",
    } <= methods
    assert {op.thread for op in ops} == {_registry_thread(registry)}
  finally:
    await harness.toolset.close()

  # Closing from the main loop closes the session on the registry loop.
  closes = wire.ops("session:close")
  assert closes and {op.thread for op in closes} == {_registry_thread(registry)}
  assert mcp_apps.child_pids() == baseline


@pytest.mark.conformance("P2-LOOP-01", "P2-LOOP-05")
async def test_app_call_from_a_third_loop(
    registry: RegistryEventLoop, wire: Recorder, mcp_apps: Any
) -> None:
  """P2-LOOP-05: a host-server loop's app call runs on the registry loop."""
  harness = _harness(
      mcp_apps, AppsClientBinding.for_mcp_apps(registry_loop=registry)
  )
  baseline = mcp_apps.child_pids()
  try:
    opened = await (await harness.session()).call_tool(names.OPEN_VIEW, {})
    nonce = opened.structured_content["nonce"]
    connection = opened.structured_content["connectionId"]

    async def host_server() -> tuple[dict[str, Any], RoutedSession]:
      session = await harness.session()
      return await _followup(session, nonce), session

    # The host server's loop: its own thread, its own loop.
    followup, host_session = await asyncio.to_thread(asyncio.run, host_server())
    assert followup["connectionId"] == connection
    assert host_session is await harness.session()
    # The generation survives the host loop too.
    assert (await _followup(await harness.session(), nonce))[
        "connectionId"
    ] == connection
    assert len(mcp_apps.child_pids() - baseline) == 1
    assert {op.thread for op in wire.ops("session:")} == {
        _registry_thread(registry)
    }
  finally:
    await harness.toolset.close()
  assert mcp_apps.child_pids() == baseline


@pytest.mark.conformance("P2-LOOP-06")
async def test_generation_survives_explicit_worker_loop_shutdown(
    registry: RegistryEventLoop, wire: Recorder, mcp_apps: Any
) -> None:
  """P2-LOOP-06: run_async on a loop shut down explicitly; still live."""
  harness = _harness(
      mcp_apps, AppsClientBinding.for_mcp_apps(registry_loop=registry)
  )
  runner = Runner(
      app_name=APP,
      agent=harness.agent,
      session_service=InMemorySessionService(),
  )
  session_id = await _new_session(runner)
  baseline = mcp_apps.child_pids()

  def worker() -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    try:

      async def drive() -> None:
        async for _ in runner.run_async(
            user_id=USER, session_id=session_id, new_message=_message()
        ):
          pass

      loop.run_until_complete(drive())
    finally:
      # The explicit shutdown sequence `asyncio.run` would perform.
      for task in asyncio.all_tasks(loop):
        task.cancel()
      loop.run_until_complete(loop.shutdown_asyncgens())
      loop.run_until_complete(loop.shutdown_default_executor())
      loop.close()
    return loop

  try:
    worker_loop = await asyncio.to_thread(worker)
    assert worker_loop.is_closed()
    (nonce,) = harness.nonces
    followup = await _followup(await harness.session(), nonce)
    assert followup["pid"] in mcp_apps.child_pids() - baseline
    assert len(mcp_apps.child_pids() - baseline) == 1
    assert {op.thread for op in wire.ops("session:")} == {
        _registry_thread(registry)
    }
  finally:
    await harness.toolset.close()
  assert mcp_apps.child_pids() == baseline


# --- User code stays on the caller's loop -------------------------------------


async def test_progress_runs_on_the_caller_loop_and_drains_before_result(
    registry: RegistryEventLoop, wire: Recorder, mcp_apps: Any
) -> None:
  """Progress is marshalled back and drained before the result returns."""
  harness = _harness(
      mcp_apps, AppsClientBinding.for_mcp_apps(registry_loop=registry)
  )
  me = asyncio.get_running_loop()
  seen: list[Op] = []
  finished: list[float] = []
  lock = asyncio.Lock()  # Owned by this loop: usable only on it.

  async def on_progress(
      value: float, total: float | None, message: str | None
  ) -> None:
    seen.append(_here(f"progress:{value:g}"))
    async with lock:
      # Deliberately slow, so the response overtakes it: only the drain
      # makes it finish before `call_tool` returns.
      await asyncio.sleep(0.05)
    finished.append(value)

  try:
    session = await harness.session()
    result = await session.call_tool(
        names.PROGRESS_THEN_RESULT,
        {"steps": 4},
        progress_callback=on_progress,
    )
    assert result.structured_content == {"steps": 4}
    assert sorted(finished) == [1, 2, 3, 4]
    assert {op.loop for op in seen} == {me}
    assert {op.thread for op in seen} == {threading.get_ident()}
    requests = wire.ops("session:request:tools/call")
    assert requests and {op.thread for op in requests} == {
        _registry_thread(registry)
    }
  finally:
    await harness.toolset.close()


@pytest.mark.conformance("P2-LOOP-01")
async def test_registry_close_closes_the_pool(
    wire: Recorder, mcp_apps: Any
) -> None:
  """A registry shutdown closes its pooled sessions on the registry loop."""
  registry = RegistryEventLoop()
  registry.start()
  harness = _harness(
      mcp_apps, AppsClientBinding.for_mcp_apps(registry_loop=registry)
  )
  baseline = mcp_apps.child_pids()
  await harness.toolset.get_tools()
  assert len(mcp_apps.child_pids() - baseline) == 1
  thread = _registry_thread(registry)
  await registry.aclose(timeout=15)
  closes = wire.ops("session:close")
  assert closes and {op.thread for op in closes} == {thread}
  assert mcp_apps.child_pids() == baseline
  await harness.toolset.close()  # A no-op once the registry has closed.


@pytest.mark.conformance("P2-LOOP-01")
async def test_discard_from_the_caller_applies_on_the_registry_loop(
    registry: RegistryEventLoop, wire: Recorder, mcp_apps: Any
) -> None:
  """`_discard_session` with a facade drops the pooled session registry-side.

  What `McpTool` does when the server reports the session terminated: the
  next `create_session` must not hand the dead session back.
  """
  harness = _harness(
      mcp_apps, AppsClientBinding.for_mcp_apps(registry_loop=registry)
  )
  manager = harness.toolset._mcp_session_manager
  baseline = mcp_apps.child_pids()
  try:
    first = await harness.session()
    first_pid = (await _whoami(first))["pid"]
    manager._discard_session(None, session=first)
    second = await harness.session()
    assert second is not first
    assert (await _whoami(second))["pid"] != first_pid
  finally:
    await harness.toolset.close()
  closes = wire.ops("session:close")
  assert len(closes) == 2
  assert {op.thread for op in wire.ops("session:")} == {
      _registry_thread(registry)
  }
  assert mcp_apps.child_pids() == baseline


# --- Without a registry loop: upstream behaviour -----------------------------


@pytest.mark.parametrize("advertise", [False, True], ids=["plain", "no-loop"])
async def test_without_a_registry_loop_sessions_live_on_the_caller_loop(
    wire: Recorder, mcp_apps: Any, advertise: bool
) -> None:
  """No binding (or one without a loop): pooled on the caller's loop."""
  harness = _harness(
      mcp_apps, AppsClientBinding.for_mcp_apps() if advertise else None
  )
  manager = harness.toolset._mcp_session_manager
  try:
    tools = await harness.toolset.get_tools()
    assert names.OPEN_VIEW in {t.name for t in tools}
    session = await manager.create_session()
    assert type(session) is ClientSession
    (entry,) = manager._sessions.values()
    assert entry[0] is session and entry[2] is asyncio.get_running_loop()
    assert isinstance(manager._get_session_context(), SessionContext)
    result = await session.call_tool(names.OPEN_VIEW, {})
    assert not result.is_error
    ops = wire.ops("session:")
    assert ops and {op.thread for op in ops} == {threading.get_ident()}
    assert {op.loop for op in ops} == {asyncio.get_running_loop()}
  finally:
    await harness.toolset.close()


# --- The binding's registry loop ----------------------------------------------


def test_registry_loop_is_outside_the_binding_value(
    registry: RegistryEventLoop,
) -> None:
  """Fingerprint, equality, hash and pickle ignore it; copies keep it."""
  plain = AppsClientBinding.for_mcp_apps()
  routed = AppsClientBinding.for_mcp_apps(registry_loop=registry)
  assert routed.registry_loop is registry and plain.registry_loop is None
  assert routed == plain and hash(routed) == hash(plain)
  assert routed.fingerprint == plain.fingerprint
  assert plain.with_registry_loop(registry).registry_loop is registry
  assert copy.deepcopy(routed).registry_loop is registry
  assert copy.copy(routed).registry_loop is registry
  restored = pickle.loads(pickle.dumps(routed))
  assert restored == routed and restored.registry_loop is None
  assert "test-registry-loop" in repr(routed)
  with pytest.raises(TypeError, match="RegistryEventLoop"):
    not_a_loop: Any = object()
    AppsClientBinding.for_mcp_apps(registry_loop=not_a_loop)
