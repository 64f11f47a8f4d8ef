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

"""The adapter's load driver: many Views, each making governed calls.

`open_views` makes one widget per chat turn (one Session each) and opens a
View of each through the adapter; `drive` then has every View make its
app-only `tools/call`s over `POST /mcp-apps/api/views/{id}/rpc`, all Views
at once (one anyio task per View, each View's calls in sequence), and
times each answer. `audit_records` reads the operations' durable audit
Events back from the SQLite Session store with a fresh service.

`run_load` does all three on a fresh app over a SQLite Session store.

Example:

  result = await run_load(mcp_apps, tmp_path, views=100, operations=100,
                          bound_seconds=1200)
  print(result.run.summary())
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
import secrets
import statistics
import time
from typing import Any

from adapter_support import APP
from adapter_support import Served
from adapter_support import served
from adapter_support import USER
import anyio
from google.adk.mcp_apps.host.view_leases import ViewLeases
from google.adk.mcp_apps.operations.app_call import OPERATION_METADATA_KEY
from google.adk.sessions.database_session_service import DatabaseSessionService
import httpx
from mcp_apps_conformance_server import names

LOAD_TOOL = names.APP_FOLLOWUP
"""The app-only tool every load operation calls (visibility `["app"]`)."""


@dataclasses.dataclass(frozen=True)
class LoadView:
  """One open View of the load run."""

  session_id: str
  view_id: str
  lease: str
  nonce: str


@dataclasses.dataclass(frozen=True)
class Answer:
  """One operation's HTTP answer, as the View got it."""

  view_id: str
  request_id: int
  status: int
  body: Any
  seconds: float


@dataclasses.dataclass(frozen=True)
class LoadRun:
  """Every answer of a run and the run's wall time."""

  views: int
  operations: int
  answers: list[Answer]
  seconds: float

  def summary(self) -> dict[str, Any]:
    """Throughput (operations/s) and p50/p99 latency (ms)."""
    latencies = sorted(a.seconds for a in self.answers)
    return {
        "views": self.views,
        "operationsPerView": self.operations,
        "operations": len(self.answers),
        "seconds": round(self.seconds, 3),
        "throughputOpsPerSecond": round(len(self.answers) / self.seconds, 1),
        "p50Ms": round(_percentile(latencies, 50) * 1000, 2),
        "p99Ms": round(_percentile(latencies, 99) * 1000, 2),
        "meanMs": round(statistics.fmean(latencies) * 1000, 2),
        "maxMs": round(latencies[-1] * 1000, 2),
    }


def _percentile(ordered: list[float], pct: int) -> float:
  """The nearest-rank percentile of an ascending list."""
  rank = max(1, -(-pct * len(ordered) // 100))
  return ordered[rank - 1]


def load_leases(views: int, lifetime_seconds: float = 1800.0) -> ViewLeases:
  """A lease table for `views` live Views of one principal (default 32),
  whose leases outlive the run."""
  return ViewLeases(
      lifetime_seconds=lifetime_seconds, max_per_principal=max(32, views)
  )


async def open_views(
    s: Served, count: int, parallel: int = 4
) -> list[LoadView]:
  """`count` chat turns (one Session and widget each) and a View of each."""
  opened: list[LoadView] = []
  limiter = anyio.CapacityLimiter(parallel)

  async def one() -> None:
    async with limiter:
      widget = await s.chat_widget(names.OPEN_VIEW)
      answer = await s.open_view(widget)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    nonce = body["view"]["toolResult"]["structuredContent"]["nonce"]
    opened.append(
        LoadView(widget["sessionId"], body["viewId"], body["lease"], nonce)
    )

  async with anyio.create_task_group() as group:
    for _ in range(count):
      group.start_soon(one)
  return opened


def call(request_id: int, nonce: str) -> dict[str, Any]:
  """The View's JSON-RPC `tools/call` of the app-only load tool."""
  return {
      "jsonrpc": "2.0",
      "id": request_id,
      "method": "tools/call",
      "params": {"name": LOAD_TOOL, "arguments": {"nonce": nonce}},
  }


async def drive(s: Served, views: list[LoadView], operations: int) -> LoadRun:
  """Every View makes `operations` calls (ids 1..operations, in order);
  all Views run at once on one connection pool of `len(views)`."""
  token = await s.csrf()
  answers: list[Answer] = []
  limits = httpx.Limits(
      max_connections=len(views), max_keepalive_connections=len(views)
  )
  async with httpx.AsyncClient(
      base_url=s.origin,
      cookies=s.client.cookies,
      limits=limits,
      timeout=120.0,
  ) as client:

    async def view_loop(view: LoadView) -> None:
      path = f"/mcp-apps/api/views/{view.view_id}/rpc"
      for request_id in range(1, operations + 1):
        headers = s.post_headers(
            token,
            **{
                "X-MCP-Apps-Lease": view.lease,
                "X-MCP-Apps-Request-Token": secrets.token_urlsafe(16),
            },
        )
        started = time.perf_counter()
        response = await client.post(
            path, json=call(request_id, view.nonce), headers=headers
        )
        seconds = time.perf_counter() - started
        try:
          body: Any = response.json()
        except ValueError:
          body = response.text
        answers.append(
            Answer(
                view.view_id, request_id, response.status_code, body, seconds
            )
        )

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
      for view in views:
        group.start_soon(view_loop, view)
    seconds = time.perf_counter() - started
  return LoadRun(len(views), operations, answers, seconds)


def failed_answers(run: LoadRun) -> list[Answer]:
  """The answers that are not a JSON-RPC success of the tool for their
  request (a 200 whose `result` is a `CallToolResult` without `isError`)."""
  bad = []
  for a in run.answers:
    body = a.body
    ok = (
        a.status == 200
        and isinstance(body, dict)
        and body.get("jsonrpc") == "2.0"
        and body.get("id") == a.request_id
        and "error" not in body
        and isinstance(body.get("result"), dict)
        and not body["result"].get("isError")
        and body["result"].get("structuredContent", {}).get("verdict") == "ok"
    )
    if not ok:
      bad.append(a)
  return bad


async def audit_records(
    service: DatabaseSessionService, session_ids: list[str]
) -> list[dict[str, Any]]:
  """The app-call audit records stored in the given Sessions, read back
  through `service` (a fresh one over the run's database), which it
  closes.

  Each is the Event's `mcp_app_operation` summary plus `event_id`,
  `session_id` and `response_ids` (its function responses' ids).
  """
  try:
    return [r for i in session_ids for r in await _records(service, i)]
  finally:
    await service.close()


async def _records(
    service: DatabaseSessionService, session_id: str
) -> list[dict[str, Any]]:
  session = await service.get_session(
      app_name=APP, user_id=USER, session_id=session_id
  )
  assert session is not None, session_id
  records: list[dict[str, Any]] = []
  for event in session.events:
    summary = (event.custom_metadata or {}).get(OPERATION_METADATA_KEY)
    if summary is None:
      continue
    parts = (event.content.parts if event.content else None) or []
    records.append({
        **summary,
        "event_id": event.id,
        "session_id": session_id,
        "response_ids": [
            p.function_response.id
            for p in parts
            if p.function_response is not None
        ],
    })
  return records


@dataclasses.dataclass(frozen=True)
class LoadResult:
  """A load run: its Views, answers and the audit records read back."""

  views: list[LoadView]
  run: LoadRun
  records: list[dict[str, Any]]


async def run_load(
    helpers: Any,
    tmp_path: Path,
    *,
    views: int,
    operations: int,
    bound_seconds: float,
) -> LoadResult:
  """Serves ADK's app with the adapter over a SQLite Session store in
  `tmp_path`, opens `views` Views, drives `operations` calls on each, then
  reads the audit records back through a fresh Session service.

  Raised for the load (existing public options): one principal may hold
  `views` live leases (default 32), each outliving `bound_seconds`
  (default 300 s); SQLite's busy timeout (5 s by default) is
  `bound_seconds`, since concurrent appends queue on its one write lock.

  Args:
    helpers: The conformance helpers (`stdio_parameters`), as the
      `mcp_apps` fixture hands them.
    tmp_path: Where the database and the server's effects file go.
    views: Views to open (one chat turn and Session each).
    operations: `tools/call`s each View makes.
    bound_seconds: The caller's time bound.
  """
  db_url = f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}"
  async with served(
      helpers,
      tmp_path,
      session_service_uri=db_url,
      session_db_kwargs={"connect_args": {"timeout": bound_seconds}},
      leases=load_leases(views, lifetime_seconds=2 * bound_seconds),
  ) as s:
    opened = await open_views(s, views)
    run = await drive(s, opened, operations)
  records = await audit_records(
      DatabaseSessionService(db_url=db_url), [v.session_id for v in opened]
  )
  return LoadResult(opened, run, records)
