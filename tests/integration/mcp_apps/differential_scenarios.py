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

"""Named ADK scenarios against real MCP servers, runnable on any ADK tree.

Each scenario drives a real MCP server over stdio through ADK's `Runner`
with a scripted, request-recording model, and returns what ADK observably
produced: the persisted function responses (`model_dump_json`), the widgets
persisted next to them, the model catalog, or the recorded LLM requests.

The module imports only ADK APIs that pristine google-adk 2.13.0 already
has, so `differential.py` can run the same scenario in a subprocess on the
pristine tree and on the patched one and compare the printed JSON:

    python differential_scenarios.py '[["<scenario>", {<kwargs>}], ...]'

runs the scenarios in order and prints exactly one JSON object on its last
stdout line: `{"adk_file": ..., "results": {"<scenario>": {...}, ...}}`.
The in-process end-to-end tests import the helpers (`RecordingLlm`,
`EchoSummarizerLlm`, the toolset builders, `run_turns`) from here as well.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
import json
import os
import pathlib
import sys
from typing import Any

from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps.app import App
from google.adk.events.event import Event
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.session import Session
from google.adk.tools.mcp_tool import McpToolset
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.genai import types
from mcp import StdioServerParameters
from model_context.rewind_scenario import rewind_with_audit_events
from pydantic import Field
from scripted_llm import Call
from scripted_llm import ScriptedLlm

HERE = pathlib.Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[2]
FIXTURES_DIR = REPO_ROOT / "tests" / "integration" / "fixtures"
DASHBOARD_SERVER = (
    REPO_ROOT / "contributing" / "samples" / "mcp_apps_dashboard" / "server.py"
)

APP_NAME = "mcp_apps_projection"
USER_ID = "tester"
AGENT_NAME = "projection_agent"

# The conformance server's `ui_result` (see its `results.py`) puts these
# server-chosen markers only into View-only fields: the key `forView` into
# `structuredContent` and the key `conformance/private` into `_meta`. Its
# `label` argument is echoed into `content` too, so it cannot be a sentinel.
UI_RESULT_TOOL = "ui_result"
UI_RESULT_SENTINELS = ("forView", "conformance/private")
UI_RESULT_TEXT = "result: for the model"
# `show_agent_dashboard`'s structuredContent keys that its text never names.
DASHBOARD_TOOL = "show_agent_dashboard"
DASHBOARD_SENTINELS = ("recentEvents", "eventTypes")


# --------------------------------------------------------------------------
# Models.
# --------------------------------------------------------------------------


def _function_response_texts(request: LlmRequest) -> list[str]:
  """The text blocks of the MCP results in the request's last content."""
  last = request.contents[-1] if request.contents else None
  texts = []
  for part in (last.parts if last else None) or []:
    response = part.function_response
    if not response:
      continue
    payload: Any = response.response or {}
    for block in payload.get("content") or []:
      if isinstance(block, dict) and block.get("type") == "text":
        texts.append(block.get("text", ""))
  return texts


class RecordingLlm(ScriptedLlm):
  """The shared scripted model, recording every request as it was sent.

  On a user turn number `n` (counted from 0) it calls the tools listed in
  `calls[n]` (`[name, args]` pairs) in one response, with deterministic ids
  `call-<n>-<i>`; when none are listed it answers `turn <n> done`, and after
  function responses with text naming the results' text blocks.
  """

  model: str = "scripted-recording-llm"
  calls: list[list[list[Any]]] = Field(default_factory=list)
  turn: int = -1

  def plan(self, llm_request: LlmRequest, step: int) -> list[Call]:
    if step:
      return []
    self.turn += 1
    planned = self.calls[self.turn] if self.turn < len(self.calls) else []
    return [(name, args) for name, args in planned]

  def answer(self, llm_request: LlmRequest, step: int) -> str:
    if step:
      return "saw: " + " | ".join(_function_response_texts(llm_request))
    return f"turn {self.turn} done"

  def call_id(self, index: int) -> str:
    return f"call-{self.turn}-{index}"

  def record(self, llm_request: LlmRequest) -> None:
    self.requests.append(llm_request.model_copy(deep=True))


class EchoSummarizerLlm(BaseLlm):
  """A summarizer model: records each request, answers with its prompt.

  Echoing the whole prompt makes the summary (what compaction produces) hold
  everything the summarizer was given, so a leak into either is visible.
  """

  model: str = "echo-summarizer-llm"
  requests: list[LlmRequest] = Field(default_factory=list)

  async def generate_content_async(
      self, llm_request: LlmRequest, stream: bool = False
  ) -> AsyncGenerator[LlmResponse, None]:
    del stream
    self.requests.append(llm_request.model_copy(deep=True))
    prompt = " ".join(
        part.text or ""
        for content in llm_request.contents
        for part in content.parts or []
    )
    yield LlmResponse(
        content=types.Content(
            role="model", parts=[types.Part(text="SUMMARY OF: " + prompt)]
        )
    )


# --------------------------------------------------------------------------
# Real MCP servers over stdio, with no tool filter.
# --------------------------------------------------------------------------


def server_python() -> str:
  """The interpreter that runs the fixture servers (SDK-2 programs).

  `ADK_FIXTURE_SERVER_PYTHON` names another one when the ADK under test
  runs on MCP SDK 1.x (`tools/compat_legs.py mcp1`); the servers are
  separate processes, like any server a user's agent talks to.
  """
  return os.environ.get("ADK_FIXTURE_SERVER_PYTHON") or sys.executable


def _stdio_toolset(args: Sequence[str]) -> McpToolset:
  return McpToolset(
      connection_params=StdioConnectionParams(
          server_params=StdioServerParameters(
              command=server_python(),
              args=list(args),
              env={"PYTHONPATH": str(FIXTURES_DIR)},
          ),
          timeout=30.0,
      )
  )


def conformance_toolset(options: dict[str, Any] | None = None) -> McpToolset:
  """The connection-stateful conformance server over stdio.

  Args:
    options: Its `ServerOptions` (default: none switched on).
  """
  args = ["-m", "mcp_apps_conformance_server", "--transport", "stdio"]
  if options:
    args += ["--options", json.dumps(options)]
  return _stdio_toolset(args)


def plain_toolset() -> McpToolset:
  """`mcp_apps_plain_server`: no `_meta.ui` anywhere."""
  return _stdio_toolset(["-m", "mcp_apps_plain_server"])


def dashboard_toolset(db_path: pathlib.Path) -> McpToolset:
  """The dashboard sample's server, built directly (no `tool_filter`)."""
  return _stdio_toolset(
      [str(DASHBOARD_SERVER), "--transport", "stdio", "--db", str(db_path)]
  )


# --------------------------------------------------------------------------
# Running turns.
# --------------------------------------------------------------------------


def make_agent(
    model: BaseLlm, tools: Sequence[Any] = (), name: str = AGENT_NAME
) -> LlmAgent:
  """An `LlmAgent` with a fixed instruction, so requests are reproducible."""
  return LlmAgent(
      name=name,
      model=model,
      instruction="Call the tools you are told to call.",
      tools=list(tools),
  )


async def run_turns(
    root: LlmAgent | App,
    messages: Sequence[str],
    *,
    session_service: BaseSessionService | None = None,
    session_id: str | None = None,
    before: Sequence[Event] = (),
) -> tuple[list[Event], Session, BaseSessionService]:
  """Runs one invocation per message through a `Runner`.

  Args:
    root: The agent, or an `App` (which carries a compaction config).
    messages: The user messages, one invocation each.
    session_service: Defaults to a fresh `InMemorySessionService`.
    session_id: An existing session to continue; else one is created.
    before: Events appended to a newly created session before the turns.

  Returns:
    The yielded events, the session as re-read from the service, and the
    service.
  """
  service = session_service or InMemorySessionService()
  if isinstance(root, App):
    runner = Runner(app=root, session_service=service)
  else:
    runner = Runner(agent=root, app_name=APP_NAME, session_service=service)
  app_name = runner.app_name
  if session_id is None:
    session = await service.create_session(app_name=app_name, user_id=USER_ID)
    for event in before:
      await service.append_event(session=session, event=event)
    session_id = session.id
  events: list[Event] = []
  try:
    for message in messages:
      async for event in runner.run_async(
          user_id=USER_ID,
          session_id=session_id,
          new_message=types.Content(
              role="user", parts=[types.Part(text=message)]
          ),
      ):
        events.append(event)
  finally:
    await runner.close()
  session = await service.get_session(
      app_name=app_name, user_id=USER_ID, session_id=session_id
  )
  assert session is not None
  return events, session, service


def function_response_events(session: Session) -> list[Event]:
  """The session's persisted events that carry function responses."""
  return [e for e in session.events if e.get_function_responses()]


class IdNormalizer:
  """Renames function-call ids to `<call-N>`, N by first appearance.

  Call ids are the only run-dependent values in what the scenarios print
  (the scripted model names its calls `call-<turn>-<i>`, but ADK would mint
  `adk-<uuid>` ones for a model that does not). Event ids and timestamps
  are never printed: only function responses, widget ids, declarations and
  LLM requests are, and those carry neither.
  """

  def __init__(self) -> None:
    self._names: dict[str, str] = {}

  def name(self, call_id: str | None) -> str | None:
    if call_id is None:
      return None
    return self._names.setdefault(call_id, f"<call-{len(self._names)}>")

  def learn(self, contents: Sequence[types.Content]) -> None:
    for content in contents:
      for part in content.parts or []:
        for item in (part.function_call, part.function_response):
          if item is not None:
            self.name(item.id)

  def apply(self, text: str) -> str:
    for call_id, placeholder in self._names.items():
      text = text.replace(json.dumps(call_id), json.dumps(placeholder))
    return text


def persisted_responses(session: Session) -> list[dict[str, Any]]:
  """Per function-response event: `model_dump_json` of each response.

  Call ids are normalized (`IdNormalizer`); the widget ids with them.
  """
  ids = IdNormalizer()
  ids.learn([e.content for e in session.events if e.content])
  return [
      {
          "function_responses": [
              ids.apply(r.model_dump_json()) for r in e.get_function_responses()
          ],
          "ui_widget_ids": [
              ids.name(w.id) for w in e.actions.render_ui_widgets or []
          ],
      }
      for e in function_response_events(session)
  ]


def normalized_requests(requests: Sequence[LlmRequest]) -> list[str]:
  """`model_dump_json` of each request, call ids normalized."""
  ids = IdNormalizer()
  for request in requests:
    ids.learn(request.contents)
  return [ids.apply(r.model_dump_json(exclude_none=True)) for r in requests]


# --------------------------------------------------------------------------
# Scenarios.
# --------------------------------------------------------------------------


async def _responses_scenario(
    toolset: McpToolset, calls: list[list[Any]]
) -> dict[str, Any]:
  model = RecordingLlm(calls=[calls])
  _, session, _ = await run_turns(
      make_agent(model, [toolset]), ["call the tools"]
  )
  return {"events": persisted_responses(session)}


async def non_ui_standalone(_: dict[str, Any]) -> dict[str, Any]:
  """A non-UI conformance tool (structuredContent + _meta), called alone."""
  return await _responses_scenario(
      conformance_toolset(), [["progress_then_result", {"steps": 0}]]
  )


async def non_ui_parallel(_: dict[str, Any]) -> dict[str, Any]:
  """Two non-UI conformance tools in one all-non-UI parallel batch."""
  return await _responses_scenario(
      conformance_toolset(),
      [
          ["progress_then_result", {"steps": 0}],
          ["slow_operation", {"ms": 0, "tag": "diff"}],
      ],
  )


async def plain_parallel(_: dict[str, Any]) -> dict[str, Any]:
  """Both plain-server tools in one batch (`_meta` and structuredContent)."""
  return await _responses_scenario(
      plain_toolset(),
      [["lookup", {"key": "alpha"}], ["total", {"values": [1, 2, 39]}]],
  )


async def plain_catalog(_: dict[str, Any]) -> dict[str, Any]:
  """The model catalog of a server with no `_meta.ui`."""
  toolset = plain_toolset()
  try:
    tools = await toolset.get_tools()
    return {
        "catalog": [
            {
                "name": tool.name,
                "declaration": tool._get_declaration().model_dump_json(  # pylint: disable=protected-access
                    exclude_none=True
                ),
            }
            for tool in tools
        ]
    }
  finally:
    await toolset.close()


async def plain_llm_requests(_: dict[str, Any]) -> dict[str, Any]:
  """Every LLM request of a two-turn run that involves no UI tool."""
  model = RecordingLlm(calls=[[["lookup", {"key": "beta"}]], []])
  await run_turns(
      make_agent(model, [plain_toolset()]), ["look beta up", "thanks"]
  )
  return {"llm_requests": normalized_requests(model.requests)}


async def ui_result(_: dict[str, Any]) -> dict[str, Any]:
  """A UI tool's result (the tolerated-difference demonstration)."""
  return await _responses_scenario(
      conformance_toolset(), [[UI_RESULT_TOOL, {}]]
  )


async def conformance_catalog(_: dict[str, Any]) -> dict[str, Any]:
  """The model catalog of the conformance server, with each tool's `_meta`."""
  toolset = conformance_toolset()
  try:
    tools = await toolset.get_tools()
    return {
        "catalog": [
            {"name": tool.name, "meta": tool._mcp_tool.meta}  # pylint: disable=protected-access
            for tool in tools
        ]
    }
  finally:
    await toolset.close()


async def persist_ui_session(kwargs: dict[str, Any]) -> dict[str, Any]:
  """Runs `ui_result` once and keeps the session in a SQLite file.

  Args:
    kwargs: `{"db": path}`, the `SqliteSessionService` database file.
  """
  # Imported here: only this scenario needs aiosqlite.
  from google.adk.sessions.sqlite_session_service import SqliteSessionService

  service = SqliteSessionService(db_path=kwargs["db"])
  model = RecordingLlm(calls=[[[UI_RESULT_TOOL, {}]]])
  _, session, _ = await run_turns(
      make_agent(model, [conformance_toolset()]),
      ["show the result"],
      session_service=service,
  )
  return {
      "app_name": session.app_name,
      "user_id": session.user_id,
      "session_id": session.id,
      "events": persisted_responses(session),
  }


def stored_event_dumps(
    events: Sequence[Event], *, by_alias: bool = False
) -> list[str]:
  """`model_dump_json(exclude_none=True)` of each Event, run values masked.

  Event ids, invocation ids and timestamps become placeholders; call ids are
  normalized (`IdNormalizer`). Each function response's `response` is
  masked too: it is compared, under the declared projection, through
  `persisted_responses`.
  """
  ids = IdNormalizer()
  ids.learn([e.content for e in events if e.content])
  event_ids: dict[str, str] = {}
  invocation_ids: dict[str, str] = {}
  dumps = []
  for event in events:
    data = json.loads(
        event.model_dump_json(exclude_none=True, by_alias=by_alias)
    )
    data["id"] = event_ids.setdefault(event.id, f"<event-{len(event_ids)}>")
    invocation = "invocationId" if by_alias else "invocation_id"
    if invocation in data:
      data[invocation] = invocation_ids.setdefault(
          data[invocation], f"<invocation-{len(invocation_ids)}>"
      )
    data["timestamp"] = "<timestamp>"
    for part in (data.get("content") or {}).get("parts") or []:
      for key in ("function_response", "functionResponse"):
        if key in part:
          part[key]["response"] = "<compared as function_responses>"
    dumps.append(ids.apply(json.dumps(data, sort_keys=True)))
  return dumps


async def ui_event_serialization(_: dict[str, Any]) -> dict[str, Any]:
  """A UI tool run end to end: every yielded and stored Event, serialized.

  No profile is bound (plain `McpToolset`). Besides the function responses,
  prints each Event's `exclude_none` dump (snake case and by alias), the
  Runner's yielded Events included, and every widget's payload.
  """
  model = RecordingLlm(calls=[[[UI_RESULT_TOOL, {"label": "golden"}]]])
  yielded, session, _ = await run_turns(
      make_agent(model, [conformance_toolset()]), ["show the result"]
  )
  widgets = [
      w.model_dump(exclude_none=True, mode="json")
      for e in session.events
      for w in e.actions.render_ui_widgets or []
  ]
  ids = IdNormalizer()
  ids.learn([e.content for e in session.events if e.content])
  return {
      "events": persisted_responses(session),
      "stored_events": stored_event_dumps(session.events),
      "stored_events_by_alias": stored_event_dumps(
          session.events, by_alias=True
      ),
      "yielded_events": stored_event_dumps(yielded),
      "widgets": [{**w, "id": ids.name(w.get("id"))} for w in widgets],
  }


SCENARIOS: dict[str, Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]] = {
    "non_ui_standalone": non_ui_standalone,
    "non_ui_parallel": non_ui_parallel,
    "plain_parallel": plain_parallel,
    "plain_catalog": plain_catalog,
    "plain_llm_requests": plain_llm_requests,
    "ui_result": ui_result,
    "conformance_catalog": conformance_catalog,
    "persist_ui_session": persist_ui_session,
    "ui_event_serialization": ui_event_serialization,
    "rewind_with_audit_events": rewind_with_audit_events,
}


def main(argv: Sequence[str]) -> None:
  """Runs the `[name, kwargs]` pairs of JSON `argv[0]`; prints the results."""
  import google.adk  # pylint: disable=g-import-not-at-top

  results = {}
  for name, kwargs in json.loads(argv[0]):
    results[name] = asyncio.run(SCENARIOS[name](kwargs))
  print(json.dumps({"adk_file": google.adk.__file__, "results": results}))


if __name__ == "__main__":
  main(sys.argv[1:])
