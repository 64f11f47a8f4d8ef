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

"""Shared set-up of the app-call ownership and execution tests.

A `Stage` is a bound stack over the real conformance server (stdio), a
Session with a View rendered by a real Runner turn (`open_view`) and that
View's hold. The Runner carries a `Recorder` plugin and an agent whose
callbacks (tool, model and agent-lifecycle) write to an `AgentLog`, so a
test sees every callback family a direct app call does or does not run.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
import contextlib
import dataclasses
import json
from pathlib import Path
from typing import Any
from typing import Optional

from google.adk.events.event import Event
from google.adk.mcp_apps.affinity.generations import GenerationHold
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.operations.app_call import AppCallRequest
from google.adk.mcp_apps.operations.app_call import OperationEnvironment
from google.adk.mcp_apps.operations.app_call import OperationOutcome
from google.adk.mcp_apps.operations.app_call import OperationOutcomeCache
from google.adk.mcp_apps.operations.app_call import OperationSignal
from google.adk.mcp_apps.operations.app_call import run_app_call
from google.adk.mcp_apps.profile import local_dev_profile
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.genai import types as genai_types
from mcp_apps_conformance_server import names
from sealing_support import APP
from sealing_support import bound_stack
from sealing_support import BoundStack
from sealing_support import close_profile
from sealing_support import ServerGate
from sealing_support import sql_profile
from sealing_support import TOOLSET
from sealing_support import USER
from sealing_support import widget_event

TIMEOUT = 30.0
BOUND = 10.0
"""Seconds a wait that must end may take before the test fails."""

Hook = Callable[..., Awaitable[Any]]


class Recorder(BasePlugin):
  """A real plugin logging every callback it gets; tool phases scriptable.

  Attributes:
    log: The phases that ran, as `"<phase>:<tool or agent>"`.
    before / after / on_error: Awaited with the callback's keyword
      arguments; what they return is the plugin's answer.
    observe: Awaited in the audit observer phase with the Event.
    errors: The errors `on_tool_error_callback` received.
  """

  def __init__(self) -> None:
    super().__init__(name="recorder")
    self.log: list[str] = []
    self.before: Optional[Hook] = None
    self.after: Optional[Hook] = None
    self.on_error: Optional[Hook] = None
    self.observe: Optional[Hook] = None
    self.errors: list[BaseException] = []

  async def before_run_callback(self, *, invocation_context: Any) -> None:
    self.log.append("plugin_before_run")

  async def after_run_callback(self, *, invocation_context: Any) -> None:
    self.log.append("plugin_after_run")

  async def before_agent_callback(
      self, *, agent: Any, callback_context: Any
  ) -> None:
    self.log.append("plugin_before_agent")

  async def after_agent_callback(
      self, *, agent: Any, callback_context: Any
  ) -> None:
    self.log.append("plugin_after_agent")

  async def before_model_callback(
      self, *, callback_context: Any, llm_request: Any
  ) -> None:
    self.log.append("plugin_before_model")

  async def after_model_callback(
      self, *, callback_context: Any, llm_response: Any
  ) -> None:
    self.log.append("plugin_after_model")

  async def before_tool_callback(
      self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any
  ) -> Optional[dict[str, Any]]:
    self.log.append(f"plugin_before_tool:{tool.name}")
    if self.before is None:
      return None
    answer: Optional[dict[str, Any]] = await self.before(
        tool=tool, tool_args=tool_args, tool_context=tool_context
    )
    return answer

  async def after_tool_callback(
      self,
      *,
      tool: Any,
      tool_args: dict[str, Any],
      tool_context: Any,
      result: dict[str, Any],
  ) -> Optional[dict[str, Any]]:
    self.log.append(f"plugin_after_tool:{tool.name}")
    if self.after is None:
      return None
    answer: Optional[dict[str, Any]] = await self.after(
        tool=tool, tool_context=tool_context, result=result
    )
    return answer

  async def on_tool_error_callback(
      self,
      *,
      tool: Any,
      tool_args: dict[str, Any],
      tool_context: Any,
      error: Exception,
  ) -> Optional[dict[str, Any]]:
    self.log.append(f"plugin_on_tool_error:{tool.name}")
    self.errors.append(error)
    if self.on_error is None:
      return None
    answer: Optional[dict[str, Any]] = await self.on_error(error=error)
    return answer

  async def on_event_callback(
      self, *, invocation_context: Any, event: Event
  ) -> Optional[Event]:
    self.log.append("plugin_on_event")
    return None

  async def on_audit_event_callback(
      self, *, readonly_context: Any, event: Event
  ) -> None:
    self.log.append("plugin_observe")
    if self.observe is not None:
      await self.observe(event=event)


class AgentLog:
  """The originating agent's callbacks, as `LlmAgent` fields.

  Each tool phase is a real chain of `SLOTS` callbacks (the agent's
  canonical chain); slot i runs entry i of `before_tool`, `after_tool` or
  `on_tool_error` when there is one: `(label, answer)`, where `answer`
  gets the callback's keyword arguments and its return is the slot's.
  Entries may change between calls. Model and agent-lifecycle callbacks
  only log.
  """

  SLOTS = 3

  def __init__(self) -> None:
    self.log: list[str] = []
    self.before_tool: list[tuple[str, Callable[..., Any]]] = []
    self.after_tool: list[tuple[str, Callable[..., Any]]] = []
    self.on_tool_error: list[tuple[str, Callable[..., Any]]] = []
    self.errors: list[BaseException] = []

  def _chain(
      self, phase: str, entries: list[tuple[str, Callable[..., Any]]]
  ) -> list[Callable[..., Any]]:
    def slot(index: int) -> Callable[..., Any]:
      async def callback(**kwargs: Any) -> Any:
        if index >= len(entries):
          return None
        label, answer = entries[index]
        self.log.append(f"agent_{phase}:{label}:{kwargs['tool'].name}")
        if "error" in kwargs:
          self.errors.append(kwargs["error"])
        return answer(**kwargs)

      return callback

    return [slot(i) for i in range(self.SLOTS)]

  def fields(self) -> dict[str, Any]:
    """`LlmAgent` fields wiring every callback family to this log."""

    def logged(name: str) -> Callable[..., Any]:
      async def callback(*args: Any, **kwargs: Any) -> None:
        del args, kwargs
        self.log.append(name)

      return callback

    return {
        "before_tool_callback": self._chain("before_tool", self.before_tool),
        "after_tool_callback": self._chain("after_tool", self.after_tool),
        "on_tool_error_callback": self._chain(
            "on_tool_error", self.on_tool_error
        ),
        "before_model_callback": logged("agent_before_model"),
        "after_model_callback": logged("agent_after_model"),
        "before_agent_callback": logged("agent_before_agent"),
        "after_agent_callback": logged("agent_after_agent"),
    }


@dataclasses.dataclass
class Stage:
  """One bound stack, one Session, one rendered View and its hold."""

  st: BoundStack
  sid: str
  hold: GenerationHold
  session: Any
  recorder: Recorder
  agent_log: AgentLog
  effects: Path
  requests_log: Path
  cache: OperationOutcomeCache
  events_before: int

  @property
  def key(self) -> SessionKey:
    return SessionKey(APP, USER, self.sid)

  @property
  def server_id(self) -> str:
    server_id: str = self.st.registry.lookup(TOOLSET).spec.server_id
    return server_id

  def counts(self) -> dict[str, int]:
    """The server's side-effect counters, by key."""
    if not self.effects.exists() or not self.effects.read_text().strip():
      return {}
    counts: dict[str, int] = json.loads(self.effects.read_text())["counts"]
    return counts

  def tool_calls(self, tool: str) -> int:
    """How many `tools/call` of `tool` the server received."""
    if not self.requests_log.exists():
      return 0
    entries = [
        json.loads(line) for line in self.requests_log.read_text().splitlines()
    ]
    return sum(
        1
        for e in entries
        if e.get("method") == "tools/call" and e.get("name") == tool
    )

  def tool_calls_total(self) -> int:
    """How many `tools/call` and `resources/read` the server received."""
    if not self.requests_log.exists():
      return 0
    return sum(
        1
        for line in self.requests_log.read_text().splitlines()
        if json.loads(line).get("method") in ("tools/call", "resources/read")
    )

  def clear_logs(self) -> None:
    self.recorder.log.clear()
    self.agent_log.log.clear()

  def environment(self, **overrides: Any) -> OperationEnvironment:
    fields: dict[str, Any] = {
        "session_service": self.st.session_service,
        "session": self.session,
        "plugin_manager": self.st.runner.plugin_manager,
        "agent": self.st.runner.agent,
        "root_agent": self.st.runner.agent,
    }
    fields.update(overrides)
    return OperationEnvironment(**fields)

  def request(
      self, tool: str, arguments: dict[str, Any], op: str, **fields: Any
  ) -> AppCallRequest:
    return AppCallRequest(
        operation_id=op,
        hold=self.hold,
        tool_name=tool,
        arguments=arguments,
        view_server_id=self.server_id,
        target_server_id=self.server_id,
        **fields,
    )

  async def call(
      self,
      tool: str,
      arguments: dict[str, Any],
      op: str = "op-1",
      *,
      signal: Optional[OperationSignal] = None,
      environment: Optional[OperationEnvironment] = None,
      **fields: Any,
  ) -> OperationOutcome:
    return await run_app_call(
        self.request(tool, arguments, op, **fields),
        environment=environment or self.environment(),
        cache=self.cache,
        signal=signal,
    )

  async def stored(self) -> list[Event]:
    """The Session's Events after the View rendered, read fresh."""
    session = await self.st.session_service.get_session(
        app_name=APP, user_id=USER, session_id=self.sid
    )
    assert session is not None
    return list(session.events)[self.events_before :]

  async def stored_state(self) -> dict[str, Any]:
    session = await self.st.session_service.get_session(
        app_name=APP, user_id=USER, session_id=self.sid
    )
    assert session is not None
    return dict(session.state)

  async def turn_events(self) -> list[Event]:
    """One Runner turn on the Session, its Events collected."""
    events: list[Event] = []
    async for event in self.st.runner.run_async(
        user_id=USER,
        session_id=self.sid,
        new_message=genai_types.Content(
            role="user", parts=[genai_types.Part(text="go")]
        ),
    ):
      events.append(event)
    return events


async def eventually(predicate: Callable[[], bool], what: str) -> None:
  """Yields to the loop until `predicate` holds; fails after `BOUND`."""
  loop = asyncio.get_running_loop()
  deadline = loop.time() + BOUND
  while not predicate():
    if loop.time() > deadline:
      raise AssertionError(f"never happened: {what}")
    await asyncio.sleep(0)


@contextlib.asynccontextmanager
async def stage(
    mcp_apps: Any,
    tmp_path: Path,
    backend: str,
    *,
    gate: Optional[ServerGate] = None,
    options: Optional[dict[str, Any]] = None,
    plugins: Sequence[BasePlugin] = (),
    agent_fields: Optional[dict[str, Any]] = None,
    profile_fields: Optional[dict[str, Any]] = None,
    connect: Optional[Callable[[dict[str, Any]], Any]] = None,
    session_service: Optional[Callable[[Path], Any]] = None,
    spec_fields: Optional[dict[str, Any]] = None,
) -> AsyncIterator[Stage]:
  """A Session with a View rendered by a real turn, on `backend`.

  `plugins` run after the `Recorder`; `agent_fields` replace the
  `AgentLog`'s callbacks of the same name; `profile_fields` replace fields
  of the backend's profile (a deployment contract of the test's own);
  `connect` maps the server options to the connection parameters (a stdio
  server by default); `session_service` builds the Session service from the
  test's directory (the backend's by default); `spec_fields` are further
  `McpToolsetSpec` fields (`require_confirmation`).
  """
  effects = tmp_path / "effects.json"
  requests_log = tmp_path / "requests.jsonl"
  server_options: dict[str, Any] = {
      "effects_file": str(effects),
      "request_log_file": str(requests_log),
      **(options or {}),
  }
  if gate is not None:
    server_options["gate_socket"] = gate.path
  if connect is not None:
    params = connect(server_options)
  else:
    params = StdioConnectionParams(
        server_params=mcp_apps.stdio_parameters(server_options),
        timeout=TIMEOUT,
    )
  profile: Any = None
  service: Any = InMemorySessionService()
  if backend == "sqlite":
    profile = await sql_profile(f"sqlite+aiosqlite:///{tmp_path / 'stores.db'}")
    service = SqliteSessionService(str(tmp_path / "sessions.db"))
  if session_service is not None:
    service = session_service(tmp_path)
  if profile_fields:
    profile = dataclasses.replace(
        profile or local_dev_profile(), **profile_fields
    )
  recorder = Recorder()
  log = AgentLog()
  try:
    async with bound_stack(
        params,
        session_service=service,
        profile=profile,
        plugins=[recorder, *plugins],
        agent_fields={**log.fields(), **(agent_fields or {})},
        **(spec_fields or {}),
    ) as st:
      created = await service.create_session(
          app_name=APP, user_id=USER, state={"cart": {"items": ["A1"]}}
      )
      sid = str(created.id)
      event = widget_event(await st.turn(sid, (names.OPEN_VIEW, {})))
      (call_id,) = [w.id for w in event.actions.render_ui_widgets]
      hold = st.registry.render_reservations.take(
          TOOLSET, SessionKey(APP, USER, sid), call_id
      )
      assert hold is not None
      session = await service.get_session(
          app_name=APP, user_id=USER, session_id=sid
      )
      assert session is not None
      st.llm.steps = []
      s = Stage(
          st,
          sid,
          hold,
          session,
          recorder,
          log,
          effects,
          requests_log,
          OperationOutcomeCache(),
          len(session.events),
      )
      s.clear_logs()
      try:
        yield s
      finally:
        hold.release()
  finally:
    if profile is not None:
      await close_profile(profile)
