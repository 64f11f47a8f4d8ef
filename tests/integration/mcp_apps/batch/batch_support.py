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

"""Helpers of the batch admission tests: a bound Runner over the
conformance server, the server's request log, and a recording plugin.

Example:

  async with BatchConversation(served, session_service) as talk:
    events = await talk.turn([("side_effect", {"key": "a"}), ("whoami", {})])
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any
from typing import Optional

from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps.app import App
from google.adk.apps.app import EventsCompactionConfig
from google.adk.events.event import Event
from google.adk.mcp_apps.binding.registry import McpAppBindingRegistry
from google.adk.mcp_apps.binding.spec import McpToolsetSpec
from google.adk.mcp_apps.profile import local_dev_profile
from google.adk.models.llm_request import LlmRequest
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.tools.mcp_tool.mcp_toolset import McpToolset
from google.genai import types
from scripted_llm import Call
from scripted_llm import ScriptedLlm

APP = "batch"
USER = "u"
TOOLSET = "conf"


@dataclasses.dataclass
class Served:
  """A conformance server (or stdio recipe) and its request log."""

  connection_params: Any
  log: Path

  def entries(self) -> list[dict[str, Any]]:
    """Every message the server (all its processes) received, in order."""
    if not self.log.exists():
      return []
    return [json.loads(line) for line in self.log.read_text().splitlines()]

  def mark(self) -> int:
    """A position in the log."""
    return len(self.entries())

  def tool_calls(self, since: int = 0) -> list[str]:
    """The names of every `tools/call` that reached the server."""
    return [
        entry["name"]
        for entry in self.entries()[since:]
        if entry["method"] == "tools/call"
    ]

  def methods(self, since: int = 0) -> list[str]:
    """Every method that reached the server, in order."""
    return [entry["method"] for entry in self.entries()[since:]]


class IdScriptedLlm(ScriptedLlm):
  """A `ScriptedLlm` whose calls carry the ids in `ids` (None: ADK's)."""

  ids: list[Optional[str]] = []

  def call_id(self, index: int) -> Optional[str]:
    return self.ids[index] if index < len(self.ids) else None


class EventRecorder(BasePlugin):
  """Records every Event its `on_event_callback` sees; can misbehave.

  Attributes:
    seen: The ids of the Events the callback was called with.
    attack: Awaited with (invocation_context, event) on every Event whose
      content holds a function response; what it returns is returned.
  """

  def __init__(self, attack: Any = None) -> None:
    super().__init__(name="event_recorder")
    self.seen: list[str] = []
    self.attack = attack

  async def on_event_callback(
      self, *, invocation_context: InvocationContext, event: Event
  ) -> Optional[Event]:
    self.seen.append(event.id)
    if self.attack is not None and event.get_function_responses():
      result: Optional[Event] = await self.attack(invocation_context, event)
      return result
    return None


class BatchConversation:
  """A Runner whose model makes scripted parallel calls on a bound toolset.

  Attributes:
    llm: The scripted model.
    runner: The Runner.
    session_id: The Session all turns run in.
  """

  def __init__(
      self,
      connection_params: Any,
      session_service: BaseSessionService,
      *,
      bound: bool = True,
      plugins: Optional[list[BasePlugin]] = None,
      before_model: Any = None,
      toolset_spec: Optional[dict[str, Any]] = None,
      artifact_service: Any = None,
      compaction: Optional[EventsCompactionConfig] = None,
      **agent_options: Any,
  ) -> None:
    self.llm = IdScriptedLlm()
    self._session_service = session_service
    self._registry: Optional[McpAppBindingRegistry] = None
    self._toolset: Optional[McpToolset] = None
    if bound:
      self._registry = McpAppBindingRegistry(
          {
              TOOLSET: McpToolsetSpec(
                  connection_params=connection_params, **(toolset_spec or {})
              )
          },
          local_dev_profile(),
          allow_dev_providers=True,
      )
      tools: list[Any] = [self._registry.toolset(TOOLSET)]
    else:
      self._toolset = McpToolset(connection_params=connection_params)
      tools = [self._toolset]
    self._before_model = before_model
    self.agent = LlmAgent(
        name="probe",
        model=self.llm,
        tools=tools,
        before_model_callback=self._before_model_callback,
        **agent_options,
    )
    self.runner = Runner(
        app=App(
            name=APP,
            root_agent=self.agent,
            plugins=plugins or [],
            events_compaction_config=compaction,
        ),
        session_service=session_service,
        artifact_service=artifact_service,
    )
    self.session_id = ""

  @property
  def registry(self) -> McpAppBindingRegistry:
    """The binding registry of a bound conversation."""
    assert self._registry is not None, "an unbound conversation"
    return self._registry

  async def _before_model_callback(
      self, callback_context: CallbackContext, llm_request: LlmRequest
  ) -> None:
    hook, self._before_model = self._before_model, None
    if hook is not None:
      # After the turn's catalog was listed, before the model calls.
      await hook(callback_context, llm_request)

  async def __aenter__(self) -> BatchConversation:
    if self._registry is not None:
      await self._registry.__aenter__()
    session = await self._session_service.create_session(
        app_name=APP, user_id=USER, state={"before": 1}
    )
    self.session_id = session.id
    return self

  async def __aexit__(self, *exc_info: object) -> None:
    await self.runner.close()
    if self._toolset is not None:
      await self._toolset.close()
    if self._registry is not None:
      await self._registry.__aexit__(*exc_info)

  async def turn(
      self,
      *steps: list[Call],
      ids: Optional[list[Optional[str]]] = None,
      before_model: Any = None,
  ) -> list[Event]:
    """One user turn whose model responses make `steps`; the Events."""
    self.llm.steps = list(steps)
    self.llm.ids = list(ids or [])
    if before_model is not None:
      self._before_model = before_model
    yielded = []
    async for event in self.runner.run_async(
        user_id=USER,
        session_id=self.session_id,
        new_message=types.Content(role="user", parts=[types.Part(text="go")]),
    ):
      yielded.append(event)
    return yielded

  async def stored(self) -> list[Event]:
    """The Session's Events, as the service stores them."""
    session = await self._session_service.get_session(
        app_name=APP, user_id=USER, session_id=self.session_id
    )
    assert session is not None
    return list(session.events)

  async def state(self) -> dict[str, Any]:
    """The Session's state, as the service stores it."""
    session = await self._session_service.get_session(
        app_name=APP, user_id=USER, session_id=self.session_id
    )
    assert session is not None
    return dict(session.state)


def responses_of(event: Event) -> list[tuple[Optional[str], Optional[str]]]:
  """`(id, name)` of each function response of `event`, in order."""
  return [(r.id, r.name) for r in event.get_function_responses()]


def calls_of(event: Event) -> list[tuple[Optional[str], Optional[str]]]:
  """`(id, name)` of each function call of `event`, in order."""
  return [(c.id, c.name) for c in event.get_function_calls()]


@dataclasses.dataclass
class Outcome:
  """What one user turn left behind.

  Attributes:
    stored: The Session's Events after the turn.
    state: The Session's state after the turn.
    methods: Every method that reached the server during the turn.
    ran: The names of the tools the server ran during the turn.
    llm: The scripted model (its `requests`).
    session_id: The Session's id.
  """

  stored: list[Event]
  state: dict[str, Any]
  methods: list[str]
  ran: list[str]
  llm: IdScriptedLlm
  session_id: str


async def one_turn(
    served: Served,
    session_service: BaseSessionService,
    *steps: list[Call],
    ids: Optional[list[Optional[str]]] = None,
    **conversation: Any,
) -> Outcome:
  """A fresh conversation's one user turn making `steps`."""
  async with BatchConversation(
      served.connection_params, session_service, **conversation
  ) as talk:
    mark = served.mark()
    await talk.turn(*steps, ids=ids)
    methods = served.methods(mark)
    return Outcome(
        stored=await talk.stored(),
        state=await talk.state(),
        methods=methods,
        ran=served.tool_calls(mark),
        llm=talk.llm,
        session_id=talk.session_id,
    )
