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

"""End to end: UI tool results reach the model only as their projection.

Real MCP servers over stdio (the connection-stateful conformance server and
the dashboard sample's server, each behind a directly constructed
`McpToolset` with no tool filter) are driven through ADK's `Runner` by a
scripted model that records every `LlmRequest` (`differential_scenarios`).

The View-only sentinels are server-chosen: the conformance server's
`ui_result` puts the key `forView` only into `structuredContent` and the key
`conformance/private` only into `_meta` (its `label` argument is echoed into
`content` as well, so no caller-chosen value could be a sentinel); the
dashboard's `show_agent_dashboard` returns `recentEvents` and `eventTypes`
only in `structuredContent`. `raw_ui_result` proves they are on the wire.

Cases: P1-PROJ-06, -07, -08, -09, -10, -11, -13 of the conformance list.
"""

from __future__ import annotations

import asyncio
import json
import pathlib
import sys
import textwrap
from typing import Any

import differential
import differential_scenarios as ds
from google.adk.apps.app import App
from google.adk.apps.app import EventsCompactionConfig
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.events.ui_widget import UiWidget
from google.adk.models.llm_request import LlmRequest
from google.adk.sessions.session import Session
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types
from mcp import Client
from mcp import StdioServerParameters
import pytest

pytestmark = [
    pytest.mark.integration,
    pytest.mark.usefixtures("no_leaked_processes"),
]

SENTINELS = ds.UI_RESULT_SENTINELS
PROJECTED_UI_RESULT = {
    "content": [{"type": "text", "text": ds.UI_RESULT_TEXT}],
    "isError": False,
    "resultType": "complete",
}
"""`ui_result`'s projection: `content`, `isError`, `resultType`; no more."""
LEGACY_UI_RESULT = {
    "meta": {"conformance/private": {"label": "result"}},
    "content": [{"type": "text", "text": ds.UI_RESULT_TEXT}],
    "structuredContent": {"label": "result", "forView": True},
    "isError": False,
}
"""`ui_result` as pristine ADK 2.13.0 persists it (the differential harness's
`ui_result` scenario shows pristine producing exactly this)."""
LEGACY_CALL_ID = "legacy-call-1"


@pytest.fixture(scope="module")
def raw_ui_result() -> dict[str, Any]:
  """`ui_result` straight from the server (MCP SDK client): the control."""

  async def call() -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_apps_conformance_server", "--transport", "stdio"],
        env={"PYTHONPATH": str(ds.FIXTURES_DIR)},
    )
    async with Client(params) as client:
      result = await client.call_tool(ds.UI_RESULT_TOOL, {})
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)

  raw = asyncio.run(call())
  assert raw["structuredContent"]["forView"] is True
  assert raw["_meta"]["conformance/private"] == {"label": "result"}
  assert raw["content"] == PROJECTED_UI_RESULT["content"]
  assert "forView" not in json.dumps(raw["content"])
  return raw


def _hits(text: str, sentinels: tuple[str, ...] = SENTINELS) -> list[str]:
  return [s for s in sentinels if s in text]


def _request_json(request: LlmRequest) -> str:
  return request.model_dump_json()


def _ui_responses(request: LlmRequest) -> list[types.FunctionResponse]:
  return [
      part.function_response
      for content in request.contents
      for part in content.parts or []
      if part.function_response
      and part.function_response.name == ds.UI_RESULT_TOOL
  ]


def _legacy_ui_events(
    author: str = ds.AGENT_NAME, invocation_id: str = "legacy-invocation"
) -> list[Event]:
  """An old-style call and its whole result, persisted as pristine ADK does.

  The widget rides on the function-response event, as it always has.
  """
  call = Event(
      author=author,
      invocation_id=invocation_id,
      content=types.Content(
          role="model",
          parts=[
              types.Part(
                  function_call=types.FunctionCall(
                      id=LEGACY_CALL_ID, name=ds.UI_RESULT_TOOL, args={}
                  )
              )
          ],
      ),
  )
  response = Event(
      author=author,
      invocation_id=invocation_id,
      content=types.Content(
          role="user",
          parts=[
              types.Part(
                  function_response=types.FunctionResponse(
                      id=LEGACY_CALL_ID,
                      name=ds.UI_RESULT_TOOL,
                      response=json.loads(json.dumps(LEGACY_UI_RESULT)),
                  )
              )
          ],
      ),
      actions=EventActions(
          render_ui_widgets=[
              UiWidget(
                  id=LEGACY_CALL_ID,
                  provider="mcp",
                  payload={
                      "resource_uri": "ui://conformance/view.html",
                      "tool": {"name": ds.UI_RESULT_TOOL},
                      "tool_args": {},
                  },
              )
          ]
      ),
  )
  return [call, response]


def _stored_legacy_response(session: Session) -> dict[str, Any]:
  for event in session.events:
    for response in event.get_function_responses():
      if response.id == LEGACY_CALL_ID:
        return response.response
  raise AssertionError("the legacy event is not in the session")


# --------------------------------------------------------------------------
# P1-PROJ-06: the next model turn.
# --------------------------------------------------------------------------


@pytest.mark.conformance("P1-PROJ-06")
async def test_next_turn_request_holds_exactly_the_projection(
    raw_ui_result: dict[str, Any],
) -> None:
  """P1-PROJ-06: the next LLM requests carry exactly the projection."""
  del raw_ui_result  # The control: the sentinels are on the wire.
  model = ds.RecordingLlm(calls=[[[ds.UI_RESULT_TOOL, {}]], []])
  events, _, _ = await ds.run_turns(
      ds.make_agent(model, [ds.conformance_toolset()]),
      ["show the result", "and now?"],
  )

  # Turn 1's call, the same turn after the result, and the next turn.
  assert len(model.requests) == 3
  assert _ui_responses(model.requests[0]) == []
  for request in model.requests[1:]:
    (response,) = _ui_responses(request)
    assert response.id == "call-0-0"
    assert response.response == PROJECTED_UI_RESULT
    assert _hits(_request_json(request)) == []
  texts = [p.text for e in events if e.content for p in e.content.parts or []]
  assert f"saw: {ds.UI_RESULT_TEXT}" in texts


# --------------------------------------------------------------------------
# P1-PROJ-07 / -08: both compaction modes.
# --------------------------------------------------------------------------


async def _compaction_run(
    config: EventsCompactionConfig, model: ds.RecordingLlm
) -> tuple[Session, list[str]]:
  """A legacy UI result, a live one, compaction, then one more turn."""
  app = App(
      name=ds.APP_NAME,
      root_agent=ds.make_agent(model, [ds.conformance_toolset()]),
      events_compaction_config=config,
  )
  _, session, _ = await ds.run_turns(
      app, ["show the result", "thanks"], before=_legacy_ui_events()
  )
  return session, [_request_json(r) for r in model.requests]


def _assert_summarized_projection_only(
    summarizer: ds.EchoSummarizerLlm, session: Session, requests: list[str]
) -> None:
  # The summarizer ran, over both the legacy and the live UI result.
  assert summarizer.requests, "no compaction happened"
  lines = [
      line
      for request in summarizer.requests
      for line in request.contents[0].parts[0].text.splitlines()
  ]
  responses = {l for l in lines if l.startswith("Tool response from ")}
  # Exactly the projections: the legacy one (pristine had popped
  # resultType) and the live one, whichever summary they went into.
  legacy = {"content": PROJECTED_UI_RESULT["content"], "isError": False}
  assert responses == {
      f"Tool response from {ds.UI_RESULT_TOOL}: {legacy}",
      f"Tool response from {ds.UI_RESULT_TOOL}: {PROJECTED_UI_RESULT}",
  }
  for request in summarizer.requests:
    assert _hits(_request_json(request)) == []
  # What compaction produced, as persisted.
  compactions = [e for e in session.events if e.actions.compaction]
  assert compactions
  for event in compactions:
    summary = event.actions.compaction.compacted_content
    summary_json = summary.model_dump_json()
    assert "SUMMARY OF:" in summary_json
    assert ds.UI_RESULT_TEXT in summary_json
    assert _hits(summary_json) == []
  # The turn after compaction reads the summary, still without sentinels.
  assert "SUMMARY OF:" in requests[-1]
  assert _hits(requests[-1]) == []
  # Replay projects; it never rewrites history: the stored legacy event
  # still holds the whole result.
  assert _stored_legacy_response(session) == LEGACY_UI_RESULT


@pytest.mark.conformance("P1-PROJ-07")
async def test_sliding_window_compaction_consumes_projection(
    raw_ui_result: dict[str, Any],
) -> None:
  """P1-PROJ-07: sliding-window compaction sees only the projection."""
  del raw_ui_result
  summarizer = ds.EchoSummarizerLlm()
  config = EventsCompactionConfig(
      compaction_interval=2,
      overlap_size=0,
      summarizer=LlmEventSummarizer(llm=summarizer),
  )
  session, requests = await _compaction_run(
      config, ds.RecordingLlm(calls=[[[ds.UI_RESULT_TOOL, {}]], []])
  )
  _assert_summarized_projection_only(summarizer, session, requests)


@pytest.mark.conformance("P1-PROJ-08")
async def test_token_threshold_compaction_consumes_projection(
    raw_ui_result: dict[str, Any],
) -> None:
  """P1-PROJ-08: token-threshold compaction sees only the projection."""
  del raw_ui_result
  summarizer = ds.EchoSummarizerLlm()
  config = EventsCompactionConfig(
      token_threshold=100,
      event_retention_size=1,
      summarizer=LlmEventSummarizer(llm=summarizer),
  )
  session, requests = await _compaction_run(
      config,
      ds.RecordingLlm(
          calls=[[[ds.UI_RESULT_TOOL, {}]], []], prompt_token_count=10_000
      ),
  )
  _assert_summarized_projection_only(summarizer, session, requests)
  (compaction,) = [e for e in session.events if e.actions.compaction][:1]
  # Only the token-threshold trigger was configured, so this is its summary.
  assert config.compaction_interval is None
  assert compaction.actions.compaction.compacted_content is not None


# --------------------------------------------------------------------------
# P1-PROJ-09: an event persisted by pristine ADK, replayed by patched ADK.
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pristine_session_db(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[pathlib.Path, dict[str, Any]]:
  """A SQLite session file written by pristine ADK running `ui_result`."""
  located = differential.trees()
  if located.pristine is None:
    pytest.skip(located.reason)
  db = tmp_path_factory.mktemp("pristine") / "sessions.db"
  name = "persist_ui_session"
  output = differential.run_scenarios(
      [name], {name: {"db": str(db)}}, on=("pristine",)
  )[name]
  return db, output


async def _replay_pristine_session(
    db: pathlib.Path, output: dict[str, Any], agent_name: str
) -> tuple[ds.RecordingLlm, Session]:
  service = SqliteSessionService(db_path=str(db))
  stored = await service.get_session(
      app_name=output["app_name"],
      user_id=output["user_id"],
      session_id=output["session_id"],
  )
  assert stored is not None
  # The control: pristine persisted the whole result, sentinels included,
  # with the widget on the same event.
  (fr_event,) = ds.function_response_events(stored)
  (response,) = fr_event.get_function_responses()
  assert _hits(json.dumps(response.response)) == list(SENTINELS)
  assert [w.id for w in fr_event.actions.render_ui_widgets] == [response.id]

  model = ds.RecordingLlm()
  _, session, _ = await ds.run_turns(
      ds.make_agent(model, name=agent_name),
      ["what did the tool say?"],
      session_service=service,
      session_id=output["session_id"],
  )
  return model, session


@pytest.mark.conformance("P1-PROJ-09")
async def test_pristine_persisted_event_is_replayed_projected(
    pristine_session_db: tuple[pathlib.Path, dict[str, Any]],
) -> None:
  """P1-PROJ-09: a pristine-persisted whole result replays projected."""
  db, output = pristine_session_db
  model, session = await _replay_pristine_session(db, output, ds.AGENT_NAME)

  (request,) = model.requests
  (response,) = _ui_responses(request)
  # Pristine popped resultType; the projection keeps what is there.
  assert response.response == {
      "content": PROJECTED_UI_RESULT["content"],
      "isError": False,
  }
  assert _hits(_request_json(request)) == []
  (fr_event,) = ds.function_response_events(session)
  assert _hits(fr_event.model_dump_json()) == list(SENTINELS)


@pytest.mark.conformance("P1-PROJ-09")
async def test_pristine_event_of_another_agent_is_replayed_projected(
    pristine_session_db: tuple[pathlib.Path, dict[str, Any]],
) -> None:
  """P1-PROJ-09: the same replay when another agent made the UI call."""
  db, output = pristine_session_db
  model, _ = await _replay_pristine_session(db, output, "successor_agent")

  (request,) = model.requests
  request_json = _request_json(request)
  assert ds.UI_RESULT_TEXT in request_json  # It is relayed as context.
  assert _hits(request_json) == []


# --------------------------------------------------------------------------
# P1-PROJ-10: the public Session API and the SSE frames.
# --------------------------------------------------------------------------

AGENT_PY = textwrap.dedent("""\
    import differential_scenarios as ds

    root_agent = ds.make_agent(
        ds.RecordingLlm(calls=[[[ds.UI_RESULT_TOOL, {}]]]),
        [ds.conformance_toolset()],
    )
    """)


@pytest.mark.conformance("P1-PROJ-10")
def test_session_api_and_sse_frames_hold_no_sentinel(
    tmp_path: pathlib.Path, raw_ui_result: dict[str, Any]
) -> None:
  """P1-PROJ-10: GET session and /run_sse frames carry no View-only field."""
  del raw_ui_result
  from fastapi.testclient import TestClient
  from google.adk.cli.fast_api import get_fast_api_app

  agents_dir = tmp_path / "agents"
  (agents_dir / ds.APP_NAME).mkdir(parents=True)
  (agents_dir / ds.APP_NAME / "__init__.py").write_text("from . import agent\n")
  (agents_dir / ds.APP_NAME / "agent.py").write_text(AGENT_PY)
  app = get_fast_api_app(
      agents_dir=str(agents_dir),
      session_service_uri=f"sqlite:///{tmp_path / 'sessions.db'}",
      artifact_service_uri="memory://",
      memory_service_uri="memory://",
      web=False,
  )
  base = f"/apps/{ds.APP_NAME}/users/{ds.USER_ID}/sessions"
  with TestClient(app) as client:
    created = client.post(base, json={})
    assert created.status_code == 200, created.text
    session_id = created.json()["id"]
    streamed = client.post(
        "/run_sse",
        json={
            "app_name": ds.APP_NAME,
            "user_id": ds.USER_ID,
            "session_id": session_id,
            "new_message": {"role": "user", "parts": [{"text": "go"}]},
            "streaming": False,
        },
    )
    assert streamed.status_code == 200, streamed.text
    fetched = client.get(f"{base}/{session_id}")
    assert fetched.status_code == 200, fetched.text

  frames = [
      line[len("data: ") :]
      for line in streamed.text.splitlines()
      if line.startswith("data: ")
  ]
  frame_events = [json.loads(frame) for frame in frames]
  # The UI result was streamed (content kept, widget on the same frame)...
  response_frames = [
      e
      for e in frame_events
      for p in e.get("content", {}).get("parts", [])
      if p.get("functionResponse", {}).get("name") == ds.UI_RESULT_TOOL
  ]
  assert len(response_frames) == 1
  (response_frame,) = response_frames
  assert ds.UI_RESULT_TEXT in json.dumps(response_frame)
  assert [w["id"] for w in response_frame["actions"]["renderUiWidgets"]] == [
      "call-0-0"
  ]
  # ...and no frame holds a View-only field.
  for frame in frames:
    assert _hits(frame) == []

  session = fetched.json()
  (persisted,) = [
      p["functionResponse"]
      for e in session["events"]
      for p in (e.get("content") or {}).get("parts", [])
      if "functionResponse" in p
  ]
  assert persisted["response"] == PROJECTED_UI_RESULT
  assert _hits(fetched.text) == []


# --------------------------------------------------------------------------
# P1-PROJ-11: unconditional, for a directly constructed toolset.
# --------------------------------------------------------------------------


@pytest.mark.conformance("P1-PROJ-11")
async def test_directly_constructed_toolset_projects(
    tmp_path: pathlib.Path,
) -> None:
  """P1-PROJ-11: no profile, no filter: the dashboard result is projected."""
  db = tmp_path / "events.sqlite3"
  # The control: the dashboard's result carries the sentinels on the wire.
  params = StdioServerParameters(
      command=sys.executable,
      args=[str(ds.DASHBOARD_SERVER), "--transport", "stdio", "--db", str(db)],
  )
  async with Client(params) as client:
    raw = await client.call_tool(ds.DASHBOARD_TOOL, {})
  raw_json = raw.model_dump_json(by_alias=True)
  assert _hits(raw_json, ds.DASHBOARD_SENTINELS) == list(ds.DASHBOARD_SENTINELS)
  assert (
      _hits(
          json.dumps(raw.model_dump(mode="json")["content"]),
          ds.DASHBOARD_SENTINELS,
      )
      == []
  )

  # Nothing but connection parameters: no profile exists in PR 1.
  toolset = ds.dashboard_toolset(db)
  assert toolset.tool_filter is None
  model = ds.RecordingLlm(calls=[[[ds.DASHBOARD_TOOL, {}]]])
  _, session, _ = await ds.run_turns(
      ds.make_agent(model, [toolset]), ["how are my agents?"]
  )

  (fr_event,) = ds.function_response_events(session)
  (response,) = fr_event.get_function_responses()
  assert set(response.response) == {"content", "isError", "resultType"}
  assert response.response["content"][0]["text"].startswith("Agent dashboard:")
  assert [w.id for w in fr_event.actions.render_ui_widgets] == [response.id]
  assert _hits(session.model_dump_json(), ds.DASHBOARD_SENTINELS) == []
  for request in model.requests:
    assert _hits(_request_json(request), ds.DASHBOARD_SENTINELS) == []


# --------------------------------------------------------------------------
# P1-PROJ-13: the widget and its FunctionResponse share one Event.
# --------------------------------------------------------------------------


@pytest.mark.conformance("P1-PROJ-13")
async def test_widget_and_function_response_in_one_event() -> None:
  """P1-PROJ-13: one Event holds the UiWidget and its FunctionResponse."""
  # A UI call and a non-UI call in one parallel batch (no profile bound, so
  # the batch is allowed), then the UI call alone.
  model = ds.RecordingLlm(
      calls=[
          [
              [ds.UI_RESULT_TOOL, {}],
              ["progress_then_result", {"steps": 0}],
          ],
          [[ds.UI_RESULT_TOOL, {}]],
      ]
  )
  _, session, _ = await ds.run_turns(
      ds.make_agent(model, [ds.conformance_toolset()]),
      ["both", "the UI one"],
  )

  widget_events = [e for e in session.events if e.actions.render_ui_widgets]
  fr_events = ds.function_response_events(session)
  assert widget_events == fr_events
  batch, single = fr_events
  by_id = {r.id: r for r in batch.get_function_responses()}
  assert [w.id for w in batch.actions.render_ui_widgets] == ["call-0-0"]
  assert by_id["call-0-0"].response == PROJECTED_UI_RESULT
  # The non-UI neighbour is untouched: structuredContent stays.
  assert by_id["call-0-1"].response["structuredContent"] == {"steps": 0}
  assert [w.id for w in single.actions.render_ui_widgets] == ["call-1-0"]
  assert [r.id for r in single.get_function_responses()] == ["call-1-0"]
  assert single.get_function_responses()[0].response == PROJECTED_UI_RESULT
  for widget in (
      batch.actions.render_ui_widgets + single.actions.render_ui_widgets
  ):
    assert widget.provider == "mcp"
    assert widget.payload["resource_uri"] == "ui://conformance/view.html"
