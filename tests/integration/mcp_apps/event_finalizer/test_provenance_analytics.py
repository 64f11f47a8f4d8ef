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

"""Provenance and audit Events as analytics and telemetry see them.

The in-repo BQAA fixture (analytics_support.py) runs the real BigQuery agent
analytics plugin over a stand-in BigQuery: before-tool rows carry the
execution context's `invocation_origin` and the tool's `immediate_caller`;
the persisted Events, read back as stored rows on every backend, carry the
Event-level provenance, first-party PATCH rows included. Audit Events are
returned by the API server's session endpoints and reach ADK's spans and
the plugin when a Runner yields them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Iterator
import contextlib
import pathlib
from typing import Any
from typing import ContextManager

from analytics_support import analytics_plugin
from analytics_support import AnalyticsTable
from analytics_support import dimensions
from analytics_support import envelope
from analytics_support import recording_node_turn
from analytics_support import tool_turn
from fastapi import FastAPI
from google.adk.events.event import Event
from google.adk.mcp_apps.event_policy.provenance import admitted
from google.adk.mcp_apps.event_policy.provenance import APP_MESSAGE_TURN
from google.adk.mcp_apps.event_policy.provenance import APP_OPERATION
from google.adk.plugins.bigquery_agent_analytics_plugin import BigQueryAgentAnalyticsPlugin
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types
import httpx
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from provenance_support import api_server_app
from provenance_support import Observed
import pytest

pytestmark = pytest.mark.integration

USER_TURN_STAMP = (None, "user", None)
SESSION_API_STAMP = (None, "system", "session-api")
AUDIT_STAMP = ("app_audit", "mcp_app", "app")
SENTINEL = "AUDIT-SENTINEL-7f3a"
ASSOCIATED_EVENT_IDS = "gcp.vertex.agent.associated_event_ids"


@pytest.fixture
def table() -> AnalyticsTable:
  return AnalyticsTable()


@pytest.fixture
async def plugin(
    table: AnalyticsTable, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[BigQueryAgentAnalyticsPlugin]:
  built = analytics_plugin(table, monkeypatch)
  try:
    yield built
  finally:
    await built.close()


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
  """ADK's spans, as a deployment's exporter receives them."""
  provider = trace.get_tracer_provider()
  if not hasattr(provider, "add_span_processor"):
    provider = TracerProvider()
    trace.set_tracer_provider(provider)
  exporter = InMemorySpanExporter()
  processor = SimpleSpanProcessor(exporter)
  provider.add_span_processor(processor)  # type: ignore[attr-defined]
  try:
    yield exporter
  finally:
    processor.shutdown()


def http(app: FastAPI) -> httpx.AsyncClient:
  """A client of `app` on the test's own event loop (the session services
  keep connections bound to it)."""
  return httpx.AsyncClient(
      transport=httpx.ASGITransport(app=app), base_url="http://adk"
  )


# -- P3-PROV-24: before-tool time ---------------------------------------------


@pytest.mark.conformance("P3-PROV-24")
@pytest.mark.parametrize(
    ("scope", "origin"),
    [
        pytest.param(contextlib.nullcontext, "user", id="user_turn"),
        pytest.param(
            lambda: admitted(APP_MESSAGE_TURN), "mcp_app", id="ui_message_turn"
        ),
    ],
)
async def test_before_tool_row_names_the_turns_origin_and_the_model(
    scope: Callable[[], ContextManager[Any]],
    origin: str,
    table: AnalyticsTable,
    plugin: BigQueryAgentAnalyticsPlugin,
    fin: Any,
) -> None:
  observed = Observed()
  with scope():
    # Arguments named like the dimensions are only arguments.
    await tool_turn(
        InMemorySessionService(),
        app_name=fin.APP,
        user_id=fin.USER,
        session_id="turn",
        plugins=[plugin],
        observed=observed,
        args={"invocation_origin": "system", "immediate_caller": "app"},
    )
  (starting,) = table.rows_of("TOOL_STARTING")
  assert dimensions(starting) == (origin, "model")
  assert observed.before_tool_callers == ["model"]
  (completed,) = table.rows_of("TOOL_COMPLETED")
  assert dimensions(completed) == (origin, "model")
  # Every row of the turn names its ingress; only tool rows name a caller.
  assert {dimensions(row) for row in table.rows} == {
      (origin, None),
      (origin, "model"),
  }


# -- P3-PROV-25: persisted Events ---------------------------------------------


@pytest.mark.conformance("P3-PROV-25")
async def test_persisted_events_of_a_user_turn_agree_with_the_rows(
    backend: Any,
    table: AnalyticsTable,
    plugin: BigQueryAgentAnalyticsPlugin,
    fin: Any,
) -> None:
  session_id = await backend.create()
  await tool_turn(
      backend.service,
      app_name=fin.APP,
      user_id=fin.USER,
      session_id=session_id,
      plugins=[plugin],
  )
  stored = await backend.raw_rows(session_id)
  # user message, function call, function response, final answer
  assert len(stored) == 4
  assert [fin.protected(row) for row in stored] == [USER_TURN_STAMP] * 4
  # The rows the plugin derived from an Event name the same ingress.
  ids = {event.id for event in await backend.reread(session_id)}
  derived = [row for row in table.rows if envelope(row).get("source_event_id")]
  assert derived
  for row in derived:
    assert envelope(row)["source_event_id"] in ids
    assert dimensions(row)[0] == "user"


@pytest.mark.conformance("P3-PROV-25")
async def test_first_party_patched_row_is_session_api_beside_user_turns(
    backend: Any,
    table: AnalyticsTable,
    plugin: BigQueryAgentAnalyticsPlugin,
    fin: Any,
    tmp_path: pathlib.Path,
) -> None:
  session_id = await backend.create()
  async with http(api_server_app(backend.service, fin.APP, tmp_path)) as client:
    response = await client.patch(
        f"/apps/{fin.APP}/users/{fin.USER}/sessions/{session_id}",
        json={"stateDelta": {"color": "blue"}},
    )
  assert response.status_code == 200, response.text
  await tool_turn(
      backend.service,
      app_name=fin.APP,
      user_id=fin.USER,
      session_id=session_id,
      plugins=[plugin],
  )
  patched, *turn = await backend.raw_rows(session_id)
  assert fin.protected(patched) == SESSION_API_STAMP
  assert [fin.protected(row) for row in turn] == [USER_TURN_STAMP] * 4
  events = await backend.reread(session_id)
  assert events[0].actions.state_delta == {"color": "blue"}
  assert (events[0].invocation_origin, events[0].emitter) == (
      "system",
      "session-api",
  )
  # The PATCH ran no Runner, so no plugin row describes it: the stored
  # Event is its only record. The turn's rows stay `user`.
  assert table.rows_for_event(events[0].id) == []
  assert table.rows
  assert {dimensions(row)[0] for row in table.rows} == {"user"}


# -- P3-AUD-08: the public Session API and telemetry --------------------------


async def _append_audit_event(
    service: BaseSessionService, app_name: str, user_id: str, session_id: str
) -> Event:
  session = await service.get_session(
      app_name=app_name, user_id=user_id, session_id=session_id
  )
  assert session is not None
  with admitted(APP_OPERATION):
    return await service.append_event(
        session,
        Event(
            invocation_id="view-call-1",
            author="app_view",
            content=types.ModelContent(SENTINEL),
        ),
    )


def _public_events(session_json: dict[str, Any]) -> list[dict[str, Any]]:
  return [
      event
      for event in session_json.get("events", [])
      if any(
          part.get("text") == SENTINEL
          for part in (event.get("content") or {}).get("parts", [])
      )
  ]


@pytest.mark.conformance("P3-AUD-08")
async def test_audit_event_is_returned_by_the_api_server_session_get(
    backend: Any, fin: Any, tmp_path: pathlib.Path
) -> None:
  session_id = await backend.create()
  audit = await _append_audit_event(
      backend.service, fin.APP, fin.USER, session_id
  )
  async with http(api_server_app(backend.service, fin.APP, tmp_path)) as client:
    got = await client.get(
        f"/apps/{fin.APP}/users/{fin.USER}/sessions/{session_id}"
    )
  assert got.status_code == 200, got.text
  (public,) = _public_events(got.json())
  assert public["id"] == audit.id
  assert (
      public["audience"],
      public["invocationOrigin"],
      public["emitter"],
  ) == (AUDIT_STAMP)
  assert public["content"]["parts"] == [{"text": SENTINEL}]
  # The GET is the API server's one endpoint that returns a Session's
  # Events (its listing returns Sessions without them).


@pytest.mark.conformance("P3-AUD-08")
async def test_audit_event_a_runner_yields_reaches_spans_and_analytics(
    backend: Any,
    table: AnalyticsTable,
    plugin: BigQueryAgentAnalyticsPlugin,
    spans: InMemorySpanExporter,
    fin: Any,
) -> None:
  session_id = await backend.create()
  with admitted(APP_OPERATION):
    yielded = await recording_node_turn(
        backend.service,
        app_name=fin.APP,
        user_id=fin.USER,
        session_id=session_id,
        plugins=[plugin],
        text=SENTINEL,
    )
  (audit,) = [
      e for e in yielded if e.content and e.content.parts[0].text == SENTINEL
  ]
  stored = {e.id: e for e in await backend.reread(session_id)}
  assert fin.protected(stored[audit.id].model_dump()) == AUDIT_STAMP
  # ADK's node span lists the Event among the ones its node produced.
  associated = [
      span
      for span in spans.get_finished_spans()
      if audit.id in (span.attributes or {}).get(ASSOCIATED_EVENT_IDS, ())
  ]
  assert associated
  # The analytics plugin saw it through its ordinary Event callback.
  rows = table.rows_for_event(audit.id)
  assert rows
  assert {dimensions(row)[0] for row in rows} == {"mcp_app"}
