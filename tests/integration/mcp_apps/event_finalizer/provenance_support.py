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

"""Helpers of the provenance tests: a real Runner turn and what it saw.

`Observed` records, from real callbacks, the execution context's
`invocation_origin` at run start and the tool context's `immediate_caller`
at before-tool time and inside the tool; `turn` runs one Runner turn with
the scripted model calling the `probe` tool and returns the Events as
stored (re-read from the session service).

Example:

  observed = Observed()
  runner = probe_runner(observed)
  stored = await turn(runner, "hello")
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any
from typing import Optional

from fastapi import FastAPI
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps.app import App
from google.adk.artifacts.in_memory_artifact_service import InMemoryArtifactService
from google.adk.auth.credential_service.in_memory_credential_service import InMemoryCredentialService
from google.adk.cli.api_server import ApiServer
from google.adk.cli.utils.base_agent_loader import BaseAgentLoader
from google.adk.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager
from google.adk.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager
from google.adk.events.event import Event
from google.adk.memory.in_memory_memory_service import InMemoryMemoryService
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from scripted_llm import ScriptedLlm

APP_NAME = "provenance_app"
USER_ID = "user"
PROTECTED = ("audience", "invocation_origin", "emitter")


@dataclasses.dataclass
class Observed:
  """What the real callbacks and the tool saw during a turn."""

  run_origins: list[str] = dataclasses.field(default_factory=list)
  before_tool_callers: list[str] = dataclasses.field(default_factory=list)
  tool_callers: list[str] = dataclasses.field(default_factory=list)
  assignment_errors: list[str] = dataclasses.field(default_factory=list)


class ObservingPlugin(BasePlugin):
  """Records the provenance a plugin sees; tries to assign it (refused)."""

  def __init__(self, observed: Observed) -> None:
    super().__init__(name="observing")
    self.observed = observed

  async def before_run_callback(
      self, *, invocation_context: InvocationContext
  ) -> Optional[types.Content]:
    self.observed.run_origins.append(invocation_context.invocation_origin)
    try:
      invocation_context.invocation_origin = "system"  # type: ignore[misc]
    except AttributeError as e:
      self.observed.assignment_errors.append(type(e).__name__)
    return None

  async def before_tool_callback(
      self,
      *,
      tool: BaseTool,
      tool_args: dict[str, Any],
      tool_context: ToolContext,
  ) -> Optional[dict[str, Any]]:
    del tool, tool_args
    self.observed.before_tool_callers.append(tool_context.immediate_caller)
    return None


def probe_tool(observed: Observed) -> FunctionTool:
  """A tool that records its immediate caller and tries to change it."""

  def probe(
      tool_context: ToolContext,
      invocation_origin: str = "",
      immediate_caller: str = "",
  ) -> dict[str, str]:
    """Reports who called it (arguments named like provenance are inert)."""
    del invocation_origin, immediate_caller
    observed.tool_callers.append(tool_context.immediate_caller)
    try:
      tool_context.immediate_caller = "app"  # type: ignore[misc]
    except AttributeError as e:
      observed.assignment_errors.append(type(e).__name__)
    return {"caller": tool_context.immediate_caller}

  return FunctionTool(probe)


def probe_runner(
    observed: Observed,
    *,
    plugins: Optional[list[BasePlugin]] = None,
    session_service: Optional[BaseSessionService] = None,
    args: Optional[dict[str, Any]] = None,
    tools: Optional[list[Any]] = None,
    **app_kwargs: Any,
) -> Runner:
  """A Runner whose scripted model calls `probe` once, then answers."""
  llm = ScriptedLlm(steps=[[("probe", dict(args or {}))]])
  agent = LlmAgent(
      name="prober", model=llm, tools=[probe_tool(observed), *(tools or [])]
  )
  app = App(
      name=APP_NAME,
      root_agent=agent,
      plugins=[ObservingPlugin(observed), *(plugins or [])],
      **app_kwargs,
  )
  return Runner(
      app=app,
      session_service=session_service or InMemorySessionService(),
      auto_create_session=True,
  )


async def turn(
    runner: Runner,
    text: str,
    *,
    session_id: str = "s1",
    **run_kwargs: Any,
) -> list[Event]:
  """Runs one user turn to its end; returns the session's stored Events."""
  async for _ in runner.run_async(
      user_id=USER_ID,
      session_id=session_id,
      new_message=types.UserContent(parts=[types.Part(text=text)]),
      **run_kwargs,
  ):
    pass
  return await stored_events(runner.session_service, session_id)


async def stored_events(
    service: BaseSessionService, session_id: str = "s1"
) -> list[Event]:
  """The Events of a session as the service returns them now."""
  session = await service.get_session(
      app_name=APP_NAME, user_id=USER_ID, session_id=session_id
  )
  assert session is not None
  return list(session.events)


def protected(event: Event) -> tuple[Any, Any, Any]:
  """`(audience, invocation_origin, emitter)` of `event`."""
  return tuple(getattr(event, name) for name in PROTECTED)  # type: ignore[return-value]


class _OneAppLoader(BaseAgentLoader):
  """Serves one app whose root agent does nothing."""

  def __init__(self, app_name: str) -> None:
    self._app_name = app_name

  def load_agent(self, agent_name: str) -> LlmAgent:
    return LlmAgent(name=agent_name)

  def list_agents(self) -> list[str]:
    return [self._app_name]


def api_server_app(
    service: BaseSessionService, app_name: str, tmp_path: pathlib.Path
) -> FastAPI:
  """ADK's own API server (its FastAPI app) over `service`."""
  server = ApiServer(
      agent_loader=_OneAppLoader(app_name),
      session_service=service,
      memory_service=InMemoryMemoryService(),
      artifact_service=InMemoryArtifactService(),
      credential_service=InMemoryCredentialService(),
      eval_sets_manager=InMemoryEvalSetsManager(),
      eval_set_results_manager=LocalEvalSetResultsManager(str(tmp_path)),
      agents_dir=str(tmp_path),
  )
  return server.get_fast_api_app()
