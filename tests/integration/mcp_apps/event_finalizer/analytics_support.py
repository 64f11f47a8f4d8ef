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

"""The in-repo BQAA fixture: the real BigQuery agent analytics plugin over a
stand-in BigQuery.

`AnalyticsTable` is what the deployment's BigQuery would hold: the rows the
plugin's own batch writer sends, decoded from the Arrow record batches of
its `AppendRows` requests. Two stand-ins speak the two clients the plugin
uses: `StandInWriteClient` (the Storage Write API's async client, which
the plugin constructs itself: the test replaces the plugin module's
client class, the seam its own unit tests use) and `StandInBigQueryClient`
(the control-plane client, set through the plugin's public `client`
attribute). Everything else (row building, the `adk` envelope, the batch
processor, the Arrow serialization) is the plugin's.

`tool_turn` runs a Runner turn whose scripted model calls one tool;
`recording_node_turn` one whose workflow node yields one Event.

Example:

  table = AnalyticsTable()
  plugin = analytics_plugin(table, monkeypatch)
  await tool_turn(service, app_name=..., user_id=..., session_id=...,
                  plugins=[plugin])
  await plugin.close()
  (row,) = table.rows_of("TOOL_STARTING")
  assert dimensions(row) == ("user", "model")
"""

from __future__ import annotations

from collections.abc import AsyncIterator
import dataclasses
import json
from typing import Any
from typing import Optional

from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps.app import App
from google.adk.events.event import Event
from google.adk.plugins import bigquery_agent_analytics_plugin as bqaa
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.workflow import START
from google.adk.workflow import Workflow
from google.auth.credentials import AnonymousCredentials
from google.cloud import bigquery
from google.genai import types
from provenance_support import Observed
from provenance_support import ObservingPlugin
from provenance_support import probe_tool
import pyarrow as pa
import pytest
from scripted_llm import ScriptedLlm

PROJECT = "analytics-project"
DATASET = "agent_analytics"
TABLE = "agent_events"


@dataclasses.dataclass
class AnalyticsTable:
  """The rows BigQuery received, in arrival order."""

  rows: list[dict[str, Any]] = dataclasses.field(default_factory=list)

  def rows_of(self, event_type: str) -> list[dict[str, Any]]:
    """The rows of one `event_type` (e.g. `TOOL_STARTING`)."""
    return [row for row in self.rows if row["event_type"] == event_type]

  def rows_for_event(self, event_id: str) -> list[dict[str, Any]]:
    """The rows the plugin derived from the Event `event_id`."""
    return [
        row
        for row in self.rows
        if envelope(row).get("source_event_id") == event_id
    ]


def attributes(row: dict[str, Any]) -> dict[str, Any]:
  """A row's `attributes` JSON column, parsed."""
  value = row.get("attributes")
  return json.loads(value) if isinstance(value, str) else dict(value or {})


def envelope(row: dict[str, Any]) -> dict[str, Any]:
  """A row's `attributes.adk` envelope."""
  return dict(attributes(row).get("adk") or {})


def dimensions(row: dict[str, Any]) -> tuple[Any, Any]:
  """A row's `(invocation_origin, immediate_caller)` from its envelope."""
  adk = envelope(row)
  return adk.get("invocation_origin"), adk.get("immediate_caller")


class _AppendRowsResponse:
  """A successful `AppendRowsResponse`: no error, no row errors."""

  error = None
  row_errors: list[Any] = []


class _Transport:

  async def close(self) -> None:
    return None


class StandInWriteClient:
  """The Storage Write API's async client, as the plugin calls it."""

  def __init__(self, table: AnalyticsTable, **_: Any) -> None:
    self._table = table
    self.transport = _Transport()

  async def append_rows(
      self, requests: AsyncIterator[Any], metadata: Any = ()
  ) -> AsyncIterator[_AppendRowsResponse]:
    del metadata
    async for request in requests:
      arrow = request.arrow_rows
      schema = pa.ipc.read_schema(
          pa.py_buffer(arrow.writer_schema.serialized_schema)
      )
      batch = pa.ipc.read_record_batch(
          pa.py_buffer(arrow.rows.serialized_record_batch), schema
      )
      self._table.rows.extend(batch.to_pylist())

    async def responses() -> AsyncIterator[_AppendRowsResponse]:
      yield _AppendRowsResponse()

    return responses()


class StandInBigQueryClient:
  """The control-plane client: the table exists; views are not asked for."""

  def get_table(self, table_id: str) -> bigquery.Table:
    return bigquery.Table(table_id)

  def close(self) -> None:
    return None


def analytics_plugin(
    table: AnalyticsTable,
    monkeypatch: pytest.MonkeyPatch,
    *,
    config: Optional[bqaa.BigQueryLoggerConfig] = None,
) -> bqaa.BigQueryAgentAnalyticsPlugin:
  """The real plugin, writing into `table`, flushed at the end of each run."""
  monkeypatch.setattr(
      bqaa,
      "BigQueryWriteAsyncClient",
      lambda **kwargs: StandInWriteClient(table, **kwargs),
  )
  plugin = bqaa.BigQueryAgentAnalyticsPlugin(
      PROJECT,
      DATASET,
      TABLE,
      config=config
      or bqaa.BigQueryLoggerConfig(
          create_views=False,
          auto_schema_upgrade=False,
          use_dedicated_background_loop=False,
          flush_on_run_end=True,
      ),
      credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
  )
  plugin.client = StandInBigQueryClient()  # type: ignore[assignment]
  return plugin


async def _drain(
    runner: Runner, user_id: str, session_id: str, text: str
) -> list[Event]:
  yielded = []
  async for event in runner.run_async(
      user_id=user_id,
      session_id=session_id,
      new_message=types.UserContent(parts=[types.Part(text=text)]),
  ):
    yielded.append(event)
  return yielded


async def tool_turn(
    service: BaseSessionService,
    *,
    app_name: str,
    user_id: str,
    session_id: str,
    plugins: list[BasePlugin],
    observed: Optional[Observed] = None,
    args: Optional[dict[str, Any]] = None,
    text: str = "hello",
) -> list[Event]:
  """One Runner turn whose scripted model calls `probe` once; the yielded
  Events. `observed` records what a plugin ahead of `plugins` saw."""
  observed = observed or Observed()
  agent = LlmAgent(
      name="prober",
      model=ScriptedLlm(steps=[[("probe", dict(args or {}))]]),
      tools=[probe_tool(observed)],
  )
  app = App(
      name=app_name,
      root_agent=agent,
      plugins=[ObservingPlugin(observed), *plugins],
  )
  runner = Runner(app=app, session_service=service, auto_create_session=True)
  return await _drain(runner, user_id, session_id, text)


async def recording_node_turn(
    service: BaseSessionService,
    *,
    app_name: str,
    user_id: str,
    session_id: str,
    plugins: list[BasePlugin],
    text: str,
) -> list[Event]:
  """One Runner turn of a workflow whose one node yields an Event saying
  `text`; the yielded Events."""

  async def record(node_input: Any) -> AsyncIterator[Event]:
    del node_input
    yield Event(content=types.ModelContent(text))

  workflow = Workflow(name="recorder", edges=[(START, record)])
  app = App(name=app_name, root_agent=workflow, plugins=plugins)
  runner = Runner(app=app, session_service=service, auto_create_session=True)
  return await _drain(runner, user_id, session_id, "record")
