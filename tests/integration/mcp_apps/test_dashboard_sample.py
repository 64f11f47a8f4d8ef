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

"""Integration tests for the ``mcp_apps_dashboard`` sample's MCP App server.

The server (``contributing/samples/mcp_apps_dashboard/server.py``) runs as a
real subprocess over stdio and over streamable HTTP on loopback, and is
driven with the MCP Python SDK's own ``Client`` rather than google-adk, so the
sample is proven independently of the ADK host code it exists to exercise.
One last test runs the sample agent through an ADK ``Runner`` turn.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
import contextlib
import hashlib
import json
import pathlib
import re
import sqlite3
import sys
from typing import Any

from mcp import Client
from mcp import StdioServerParameters
import pytest
from third_party_support import servers

APP_MIME_TYPE = "text/html;profile=mcp-app"
VIEW_URI = "ui://agent-dashboard/view.html"
REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
SAMPLE_DIR = REPO_ROOT / "contributing" / "samples" / "mcp_apps_dashboard"
SERVER_SCRIPT = SAMPLE_DIR / "server.py"
TRANSPORTS = ("stdio", "streamable-http")


pytestmark = [
    pytest.mark.integration,
    pytest.mark.usefixtures("no_leaked_descendants"),
]


@pytest.fixture
def db_path(tmp_path: pathlib.Path) -> pathlib.Path:
  """A database path that does not exist yet."""
  return tmp_path / "cache" / "events.sqlite3"


def _server_argv(transport: str, db: pathlib.Path, *extra: str) -> list[str]:
  return [
      sys.executable,
      str(SERVER_SCRIPT),
      "--transport",
      transport,
      "--db",
      str(db),
      *extra,
  ]


@contextlib.asynccontextmanager
async def _connect(
    transport: str, db: pathlib.Path, *extra: str
) -> AsyncIterator[Client]:
  """Starts the sample server on ``transport`` and yields a client.

  Over HTTP it also checks the server announced a loopback URL, listens on
  127.0.0.1 only, and exits cleanly (code 0) on SIGTERM.
  """
  argv = _server_argv(transport, db, *extra)
  if transport == "stdio":
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    async with Client(params) as client:
      yield client
    return

  with servers.start_process([*argv, "--port", "0"]) as running:
    match = re.fullmatch(r"http://127\.0\.0\.1:(\d+)/mcp", running.url)
    assert match, running.output
    port = int(match.group(1))
    assert port > 0
    assert servers.listening_addresses(running.pid) == {("127.0.0.1", port)}
    async with Client(running.url) as client:
      yield client
    exit_code = servers.stop_process(running.process)
  assert exit_code == 0


def _rows(db: pathlib.Path) -> list[tuple[Any, ...]]:
  with contextlib.closing(sqlite3.connect(db)) as conn:
    return conn.execute("SELECT * FROM events ORDER BY event_id").fetchall()


def _row_dict(db: pathlib.Path, event_id: str) -> dict[str, Any]:
  with contextlib.closing(sqlite3.connect(db)) as conn:
    conn.row_factory = sqlite3.Row
    row = conn.execute(
        "SELECT * FROM events WHERE event_id = ?", (event_id,)
    ).fetchone()
  return dict(row)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_listing_declares_visibility_and_view(
    transport: str, db_path: pathlib.Path
) -> None:
  async with _connect(transport, db_path) as client:
    capabilities = client.server_capabilities
    tools = {t.name: t for t in (await client.list_tools()).tools}
    resources = {r.uri: r for r in (await client.list_resources()).resources}
    templates = (await client.list_resource_templates()).resource_templates

  assert "io.modelcontextprotocol/ui" in (capabilities.extensions or {})
  assert set(tools) == {
      "show_agent_dashboard",
      "query_agent_events",
      "get_event_detail",
  }
  expected_visibility = {
      "show_agent_dashboard": ["model", "app"],
      "query_agent_events": ["app"],
      "get_event_detail": ["app"],
  }
  for name, tool in tools.items():
    assert tool.meta["ui"] == {
        "resourceUri": VIEW_URI,
        "visibility": expected_visibility[name],
    }
    assert tool.annotations.read_only_hint is True
    assert tool.annotations.idempotent_hint is True
    assert tool.annotations.destructive_hint is False
  query_params = tools["query_agent_events"].input_schema["properties"]
  assert set(query_params) == {
      "agent",
      "event_type",
      "start_time",
      "end_time",
      "limit",
      "cursor",
  }

  assert set(resources) == {VIEW_URI, "dashboard://summary"}
  assert resources[VIEW_URI].mime_type == APP_MIME_TYPE
  assert resources["dashboard://summary"].mime_type == "application/json"
  assert [t.uri_template for t in templates] == ["dashboard://agents/{agent}"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_dashboard_and_drill_down_tools(
    transport: str, db_path: pathlib.Path
) -> None:
  async with _connect(transport, db_path) as client:
    dashboard = await client.call_tool("show_agent_dashboard", {})
    filtered = await client.call_tool(
        "show_agent_dashboard", {"agent": "billing_agent"}
    )
    page1 = await client.call_tool(
        "query_agent_events", {"agent": "research_agent", "limit": 7}
    )
    page2 = await client.call_tool(
        "query_agent_events",
        {
            "agent": "research_agent",
            "limit": 7,
            "cursor": page1.structured_content["nextCursor"],
        },
    )
    errors = await client.call_tool(
        "query_agent_events",
        {
            "event_type": "TOOL_ERROR",
            "start_time": "2026-01-06T00:00:00Z",
            "end_time": "2026-01-10T00:00:00Z",
            "limit": 100,
        },
    )
    first_id = page1.structured_content["events"][0]["eventId"]
    detail = await client.call_tool("get_event_detail", {"event_id": first_id})
    missing = await client.call_tool(
        "get_event_detail", {"event_id": "evt-99999"}
    )
    bad_cursor = await client.call_tool(
        "query_agent_events", {"cursor": "not-a-cursor"}
    )

  rows = _rows(db_path)
  data = dashboard.structured_content
  assert not dashboard.is_error
  assert data["totals"]["events"] == len(rows)
  assert sum(a["events"] for a in data["byAgent"]) == len(rows)
  assert sum(t["events"] for t in data["byEventType"]) == len(rows)
  assert len(data["recentEvents"]) == 20
  (text,) = dashboard.content
  assert text.text.startswith(f"Agent dashboard: {len(rows)} agent events")

  billing = filtered.structured_content
  assert billing["filters"]["agent"] == "billing_agent"
  assert [a["agent"] for a in billing["byAgent"]] == ["billing_agent"]
  assert {e["agent"] for e in billing["recentEvents"]} == {"billing_agent"}

  first, second = page1.structured_content, page2.structured_content
  assert len(first["events"]) == len(second["events"]) == 7
  assert first["totalMatching"] == second["totalMatching"]
  assert first["totalMatching"] == sum(
      1 for row in rows if row[2] == "research_agent"
  )
  both = first["events"] + second["events"]
  assert len({e["eventId"] for e in both}) == 14
  stamps = [(e["timestamp"], e["eventId"]) for e in both]
  assert stamps == sorted(stamps, reverse=True)
  assert page1.content[0].text == (
      f"7 of {first['totalMatching']} matching events. More available."
  )

  error_events = errors.structured_content["events"]
  assert error_events
  assert {e["eventType"] for e in error_events} == {"TOOL_ERROR"}
  assert all(e["status"] == "ERROR" and e["errorMessage"] for e in error_events)
  assert all(
      "2026-01-06" <= e["timestamp"] < "2026-01-10" for e in error_events
  )
  assert errors.structured_content["nextCursor"] is None

  event = detail.structured_content["event"]
  stored = _row_dict(db_path, first_id)
  assert event["eventId"] == first_id
  assert event["timestamp"] == stored["timestamp"]
  assert event["content"] == stored["content"]
  assert first_id in [s["eventId"] for s in event["invocationEvents"]]
  assert detail.content[0].text.startswith(f"{first_id} at ")

  assert missing.is_error
  assert "evt-99999" in missing.content[0].text
  assert bad_cursor.is_error


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_view_and_interactive_resources(
    transport: str, db_path: pathlib.Path
) -> None:
  async with _connect(transport, db_path) as client:
    view = await client.read_resource(VIEW_URI)
    summary = await client.read_resource("dashboard://summary")
    agent = await client.read_resource(
        "dashboard://agents/travel_planner_agent"
    )
    dashboard = await client.call_tool("show_agent_dashboard", {})

  (html,) = view.contents
  assert html.mime_type == APP_MIME_TYPE
  assert html.text == (SAMPLE_DIR / "view.html").read_text(encoding="utf-8")
  for method in (
      "ui/initialize",
      "ui/notifications/initialized",
      "ui/notifications/tool-input",
      "ui/notifications/tool-result",
      "tools/call",
      "resources/read",
      "ui/update-model-context",
      "ui/message",
      "query_agent_events",
      "get_event_detail",
      "dashboard://summary",
  ):
    assert f'"{method}' in html.text, method
  # Self-contained: no external scripts, styles, images or requests.
  assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", html.text)
  assert "fetch(" not in html.text and "XMLHttpRequest" not in html.text

  (summary_content,) = summary.contents
  assert summary_content.mime_type == "application/json"
  whole = json.loads(summary_content.text)
  expected = dashboard.structured_content
  assert whole["totals"] == expected["totals"]
  assert whole["byAgent"] == expected["byAgent"]

  per_agent = json.loads(agent.contents[0].text)
  assert [a["agent"] for a in per_agent["byAgent"]] == ["travel_planner_agent"]
  travel = next(
      a for a in expected["byAgent"] if a["agent"] == "travel_planner_agent"
  )
  assert per_agent["totals"]["events"] == travel["events"]


async def test_data_file_is_created_deterministically(
    tmp_path: pathlib.Path,
) -> None:
  first, second, other = (
      tmp_path / "a" / "events.sqlite3",
      tmp_path / "b" / "events.sqlite3",
      tmp_path / "c" / "events.sqlite3",
  )
  assert not first.exists()
  async with _connect("stdio", first, "--seed", "7") as client:
    one = await client.call_tool("show_agent_dashboard", {})
  assert first.is_file()
  digest = hashlib.sha256(first.read_bytes()).hexdigest()

  async with _connect("stdio", second, "--seed", "7") as client:
    two = await client.call_tool("show_agent_dashboard", {})
  async with _connect("stdio", other, "--seed", "8") as client:
    pass
  # A second start on an existing file leaves it untouched.
  async with _connect("stdio", first, "--seed", "999") as client:
    again = await client.call_tool("show_agent_dashboard", {})

  assert _rows(first) == _rows(second)
  assert len(_rows(first)) >= 600
  assert _rows(other) != _rows(first)
  assert one.structured_content == two.structured_content
  assert again.structured_content == one.structured_content
  assert hashlib.sha256(first.read_bytes()).hexdigest() == digest
  with contextlib.closing(sqlite3.connect(first)) as conn:
    seed = conn.execute(
        "SELECT value FROM metadata WHERE key = 'seed'"
    ).fetchone()
  assert seed == ("7",)


async def test_default_data_location_is_the_user_cache(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
  cache_home = tmp_path / "xdg-cache"
  monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home))
  monkeypatch.delenv("ADK_MCP_APPS_DASHBOARD_DB", raising=False)
  params = StdioServerParameters(
      command=sys.executable,
      args=[str(SERVER_SCRIPT)],
      env={"XDG_CACHE_HOME": str(cache_home), "PATH": "/usr/bin:/bin"},
  )
  async with Client(params) as client:
    tools = (await client.list_tools()).tools

  assert tools
  expected = cache_home / "adk-mcp-apps-dashboard" / "events.sqlite3"
  assert expected.is_file()
  assert len(_rows(expected)) >= 600


async def test_sample_agent_runs_one_turn_with_stand_in_model(
    db_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
  if not (REPO_ROOT / "src" / "google" / "adk" / "__init__.py").is_file():
    pytest.skip("ADK sources are not present under src/google/adk")
  runners = pytest.importorskip("google.adk.runners")
  types = pytest.importorskip("google.genai.types")
  monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
  monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)

  sample = pytest.importorskip("mcp_apps_dashboard.agent")
  agent = sample.make_agent(server_args=["--db", str(db_path)])
  assert isinstance(agent.model, sample.DashboardStandInLlm)
  toolset = agent.tools[0]
  runner = runners.InMemoryRunner(agent=agent, app_name="mcp_apps_dashboard")
  try:
    model_tools = [t.name for t in await toolset.get_tools()]
    session = await runner.session_service.create_session(
        app_name="mcp_apps_dashboard", user_id="tester"
    )
    events = [
        event
        async for event in runner.run_async(
            user_id="tester",
            session_id=session.id,
            new_message=types.Content(
                role="user", parts=[types.Part(text="How are my agents?")]
            ),
        )
    ]
  finally:
    await toolset.close()
    await runner.close()

  assert model_tools == ["show_agent_dashboard"]
  parts = [p for e in events if e.content for p in e.content.parts or []]
  calls = [p.function_call for p in parts if p.function_call]
  responses = [p.function_response for p in parts if p.function_response]
  texts = [p.text for p in parts if p.text]
  assert [c.name for c in calls] == ["show_agent_dashboard"]
  (response,) = responses
  tool_text = response.response["content"][0]["text"]
  assert tool_text.startswith("Agent dashboard: ")
  assert texts == [f"{sample.STAND_IN_LABEL} {tool_text}"]

  widgets = [w for e in events for w in e.actions.render_ui_widgets or []]
  assert [(w.provider, w.payload["resource_uri"]) for w in widgets] == [
      ("mcp", VIEW_URI)
  ]
  assert db_path.is_file()
