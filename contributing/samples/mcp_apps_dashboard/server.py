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

"""An MCP App server that shows an agent-events analytics dashboard.

The sample mirrors the shape of an "agent analytics" dashboard (the kind the
BigQuery Agent Analytics plugin feeds), but reads a local SQLite file of
generated agent events so it runs offline and deterministically.

It exercises every part of the MCP Apps extension (SEP-1865,
``io.modelcontextprotocol/ui``) a host has to support:

* ``show_agent_dashboard``: a read-only tool visible to both the model and the
  View, bound to the ``ui://agent-dashboard/view.html`` resource.
* ``query_agent_events`` and ``get_event_detail``: app-only drill-down tools
  (``_meta.ui.visibility == ["app"]``) that only the View calls.
* ``dashboard://summary`` and ``dashboard://agents/{agent}``: plain JSON
  resources the View reads with ``resources/read``.

Run it as a script::

  python contributing/samples/mcp_apps_dashboard/server.py \
      [--transport stdio|streamable-http] [--port N] [--db PATH] [--seed N]

Streamable HTTP binds to 127.0.0.1 only; once the socket is listening the
server prints ``READY http://127.0.0.1:<port>/mcp`` on stdout (``--port 0``
picks a free port). SIGINT or SIGTERM stops it gracefully with exit code 0.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
import contextlib
import datetime
import json
import logging
import os
import pathlib
import random
import signal
import socket
import sqlite3
import sys
import tempfile
import types
from typing import Any

from mcp.server.apps import Apps
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from mcp_types import TextContent
from mcp_types import ToolAnnotations

logger = logging.getLogger(__name__)

VIEW_URI = "ui://agent-dashboard/view.html"
"""The ``ui://`` resource that renders the dashboard."""

SUMMARY_URI = "dashboard://summary"
"""Plain JSON resource with the whole-dataset summary."""

AGENT_SUMMARY_URI_TEMPLATE = "dashboard://agents/{agent}"
"""Plain JSON resource template with one agent's summary."""

DB_ENV_VAR = "ADK_MCP_APPS_DASHBOARD_DB"
"""Environment variable that overrides the default database location."""

SEED_ENV_VAR = "ADK_MCP_APPS_DASHBOARD_SEED"
"""Environment variable that overrides the data-generation seed."""

DEFAULT_SEED = 1865
DEFAULT_EVENT_COUNT = 600
MAX_PAGE_SIZE = 100
LOOPBACK_HOST = "127.0.0.1"

_VIEW_PATH = pathlib.Path(__file__).with_name("view.html")
_SCHEMA_VERSION = "1"

# The generated dataset covers one fixed week, so the same seed always yields
# the same rows no matter when the file is created.
_DATA_START = datetime.datetime(2026, 1, 5, tzinfo=datetime.timezone.utc)
_DATA_SPAN = datetime.timedelta(days=7)

_AGENTS: tuple[tuple[str, float], ...] = (
    ("support_triage_agent", 0.35),
    ("billing_agent", 0.25),
    ("research_agent", 0.25),
    ("travel_planner_agent", 0.15),
)
_TOOLS_BY_AGENT: dict[str, tuple[str, ...]] = {
    "support_triage_agent": ("lookup_ticket", "search_kb", "escalate"),
    "billing_agent": ("get_invoice", "refund_payment"),
    "research_agent": ("google_search", "fetch_page", "summarize"),
    "travel_planner_agent": ("search_flights", "book_hotel"),
}
_USERS = ("alice", "bob", "carol", "dan", "erin", "frank")

EVENT_TYPES: tuple[str, ...] = (
    "INVOCATION_STARTING",
    "AGENT_STARTING",
    "LLM_REQUEST",
    "LLM_RESPONSE",
    "TOOL_STARTING",
    "TOOL_COMPLETED",
    "TOOL_ERROR",
    "AGENT_COMPLETED",
    "INVOCATION_COMPLETED",
)
"""Event types in the generated data, in the order an invocation emits them."""

_READ_ONLY = ToolAnnotations(
    read_only_hint=True,
    destructive_hint=False,
    idempotent_hint=True,
    open_world_hint=False,
)


# --------------------------------------------------------------------------
# Data: a deterministic SQLite file of agent events.
# --------------------------------------------------------------------------


def default_db_path() -> pathlib.Path:
  """Returns where the events database lives unless told otherwise.

  The ``ADK_MCP_APPS_DASHBOARD_DB`` environment variable wins; otherwise the
  file goes under ``$XDG_CACHE_HOME`` (or ``~/.cache``), outside the
  repository.
  """
  override = os.environ.get(DB_ENV_VAR)
  if override:
    return pathlib.Path(override).expanduser()
  cache_home = os.environ.get("XDG_CACHE_HOME") or os.path.join(
      os.path.expanduser("~"), ".cache"
  )
  return pathlib.Path(cache_home) / "adk-mcp-apps-dashboard" / "events.sqlite3"


def _pick_weighted(
    rng: random.Random, choices: Sequence[tuple[str, float]]
) -> str:
  return rng.choices(
      [name for name, _ in choices], weights=[w for _, w in choices]
  )[0]


def generate_events(
    seed: int, count: int = DEFAULT_EVENT_COUNT
) -> list[dict[str, Any]]:
  """Generates agent events deterministically from ``seed``.

  Events come in invocations: each invocation starts, runs one or more LLM
  and tool steps, and completes, like the rows an agent analytics plugin
  writes.

  Args:
    seed: Seed for the pseudo-random generator; equal seeds give equal rows.
    count: Approximate number of events to generate (whole invocations are
      kept, so the result may be slightly longer).

  Returns:
    The events as dictionaries, in timestamp order.
  """
  rng = random.Random(seed)
  events: list[dict[str, Any]] = []
  invocation_index = 0
  while len(events) < count:
    invocation_index += 1
    agent = _pick_weighted(rng, _AGENTS)
    user = rng.choice(_USERS)
    session_id = f"sess-{user}-{rng.randrange(3)}"
    invocation_id = f"inv-{invocation_index:05d}"
    offset = rng.uniform(0, _DATA_SPAN.total_seconds() - 600)
    clock = _DATA_START + datetime.timedelta(seconds=offset)
    steps: list[tuple[str, dict[str, Any]]] = [
        ("INVOCATION_STARTING", {}),
        ("AGENT_STARTING", {}),
    ]
    for _ in range(rng.randint(1, 3)):
      prompt_tokens = rng.randint(200, 4000)
      steps.append(("LLM_REQUEST", {"prompt_tokens": prompt_tokens}))
      steps.append((
          "LLM_RESPONSE",
          {
              "prompt_tokens": prompt_tokens,
              "completion_tokens": rng.randint(20, 800),
              "latency_ms": rng.randint(250, 4500),
          },
      ))
      if rng.random() < 0.7:
        tool = rng.choice(_TOOLS_BY_AGENT[agent])
        steps.append(("TOOL_STARTING", {"tool": tool}))
        if rng.random() < 0.12:
          steps.append((
              "TOOL_ERROR",
              {
                  "tool": tool,
                  "latency_ms": rng.randint(50, 9000),
                  "error": rng.choice((
                      "DeadlineExceeded: upstream timed out",
                      "PermissionDenied: missing scope",
                      "InvalidArgument: malformed id",
                  )),
              },
          ))
        else:
          steps.append((
              "TOOL_COMPLETED",
              {"tool": tool, "latency_ms": rng.randint(20, 2500)},
          ))
    steps.append(("AGENT_COMPLETED", {}))
    steps.append(("INVOCATION_COMPLETED", {}))

    for event_type, details in steps:
      clock += datetime.timedelta(milliseconds=rng.randint(5, 1500))
      error = details.get("error")
      events.append({
          "timestamp": (
              clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")
          ),
          "agent": agent,
          "event_type": event_type,
          "user_id": user,
          "session_id": session_id,
          "invocation_id": invocation_id,
          "tool_name": details.get("tool"),
          "status": "ERROR" if error else "OK",
          "latency_ms": details.get("latency_ms"),
          "prompt_tokens": details.get("prompt_tokens"),
          "completion_tokens": details.get("completion_tokens"),
          "error_message": error,
          "content": _describe(event_type, agent, details),
      })

  events.sort(key=lambda e: (e["timestamp"], e["invocation_id"]))
  for number, event in enumerate(events, start=1):
    event["event_id"] = f"evt-{number:05d}"
  return events


def _describe(event_type: str, agent: str, details: dict[str, Any]) -> str:
  tool = details.get("tool")
  if event_type == "TOOL_ERROR":
    return f"{agent} call to {tool} failed: {details['error']}"
  if tool:
    return f"{agent} {event_type.lower().replace('_', ' ')}: {tool}"
  if event_type == "LLM_RESPONSE":
    return (
        f"{agent} got {details['completion_tokens']} completion tokens"
        f" in {details['latency_ms']} ms"
    )
  return f"{agent} {event_type.lower().replace('_', ' ')}"


_COLUMNS = (
    "event_id",
    "timestamp",
    "agent",
    "event_type",
    "user_id",
    "session_id",
    "invocation_id",
    "tool_name",
    "status",
    "latency_ms",
    "prompt_tokens",
    "completion_tokens",
    "error_message",
    "content",
)


def ensure_database(
    path: pathlib.Path, seed: int = DEFAULT_SEED
) -> pathlib.Path:
  """Creates the events database at ``path`` unless it already exists.

  The file is written to a temporary name and renamed into place, so a
  reader never sees a half-written database, and two servers starting at
  once both end up with the same complete file.

  Args:
    path: Where the SQLite file should live.
    seed: Seed used when the file has to be generated.

  Returns:
    The path of the (possibly pre-existing) database.
  """
  if path.exists():
    return path
  path.parent.mkdir(parents=True, exist_ok=True)
  fd, tmp_name = tempfile.mkstemp(
      prefix=".events-", suffix=".sqlite3", dir=path.parent
  )
  os.close(fd)
  try:
    with contextlib.closing(sqlite3.connect(tmp_name)) as conn:
      conn.execute(
          "CREATE TABLE events ("
          " event_id TEXT PRIMARY KEY, timestamp TEXT NOT NULL,"
          " agent TEXT NOT NULL, event_type TEXT NOT NULL,"
          " user_id TEXT, session_id TEXT, invocation_id TEXT,"
          " tool_name TEXT, status TEXT NOT NULL, latency_ms INTEGER,"
          " prompt_tokens INTEGER, completion_tokens INTEGER,"
          " error_message TEXT, content TEXT)"
      )
      conn.execute("CREATE INDEX events_by_time ON events(timestamp)")
      conn.execute("CREATE TABLE metadata (key TEXT PRIMARY KEY, value TEXT)")
      conn.executemany(
          "INSERT INTO metadata VALUES (?, ?)",
          [("seed", str(seed)), ("schema_version", _SCHEMA_VERSION)],
      )
      placeholders = ", ".join("?" for _ in _COLUMNS)
      conn.executemany(
          f"INSERT INTO events ({', '.join(_COLUMNS)}) VALUES ({placeholders})",
          [
              tuple(event[c] for c in _COLUMNS)
              for event in generate_events(seed)
          ],
      )
      conn.commit()
    os.replace(tmp_name, path)
  except BaseException:
    with contextlib.suppress(FileNotFoundError):
      os.unlink(tmp_name)
    raise
  logger.info("Created events database %s (seed %d)", path, seed)
  return path


class EventStore:
  """Read-only queries over the events database."""

  def __init__(self, path: pathlib.Path) -> None:
    self._path = path

  def _connect(self) -> sqlite3.Connection:
    conn = sqlite3.connect(f"{self._path.resolve().as_uri()}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    return conn

  @staticmethod
  def _where(
      agent: str | None,
      event_type: str | None,
      start_time: str | None,
      end_time: str | None,
  ) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    args: list[Any] = []
    if agent:
      clauses.append("agent = ?")
      args.append(agent)
    if event_type:
      clauses.append("event_type = ?")
      args.append(event_type)
    if start_time:
      clauses.append("timestamp >= ?")
      args.append(_normalize_time(start_time))
    if end_time:
      clauses.append("timestamp < ?")
      args.append(_normalize_time(end_time))
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), args

  def summary(
      self,
      agent: str | None = None,
      event_type: str | None = None,
      start_time: str | None = None,
      end_time: str | None = None,
  ) -> dict[str, Any]:
    """Aggregates the events that match the filters.

    Returns:
      Totals, counts by agent and by event type, and the covered time range.
    """
    where, args = self._where(agent, event_type, start_time, end_time)
    with contextlib.closing(self._connect()) as conn:
      totals = conn.execute(
          "SELECT COUNT(*) AS events,"
          " SUM(status = 'ERROR') AS errors,"
          " COUNT(DISTINCT invocation_id) AS invocations,"
          " COUNT(DISTINCT session_id) AS sessions,"
          " MIN(timestamp) AS first, MAX(timestamp) AS last,"
          " CAST(AVG(CASE WHEN event_type = 'LLM_RESPONSE'"
          "   THEN latency_ms END) AS INTEGER) AS avg_llm_latency_ms"
          f" FROM events{where}",
          args,
      ).fetchone()
      by_agent = conn.execute(
          "SELECT agent, COUNT(*) AS events,"
          " SUM(status = 'ERROR') AS errors,"
          " COUNT(DISTINCT invocation_id) AS invocations"
          f" FROM events{where} GROUP BY agent ORDER BY events DESC, agent",
          args,
      ).fetchall()
      by_type = conn.execute(
          "SELECT event_type, COUNT(*) AS events"
          f" FROM events{where} GROUP BY event_type",
          args,
      ).fetchall()
    type_counts = {row["event_type"]: row["events"] for row in by_type}
    return {
        "filters": {
            "agent": agent,
            "eventType": event_type,
            "startTime": start_time,
            "endTime": end_time,
        },
        "totals": {
            "events": totals["events"],
            "errors": totals["errors"] or 0,
            "invocations": totals["invocations"],
            "sessions": totals["sessions"],
            "avgLlmLatencyMs": totals["avg_llm_latency_ms"],
        },
        "timeRange": {"start": totals["first"], "end": totals["last"]},
        "byAgent": [
            {
                "agent": row["agent"],
                "events": row["events"],
                "errors": row["errors"] or 0,
                "invocations": row["invocations"],
            }
            for row in by_agent
        ],
        "byEventType": [
            {"eventType": name, "events": type_counts[name]}
            for name in EVENT_TYPES
            if name in type_counts
        ],
    }

  def query(
      self,
      agent: str | None = None,
      event_type: str | None = None,
      start_time: str | None = None,
      end_time: str | None = None,
      limit: int = 25,
      cursor: str | None = None,
  ) -> dict[str, Any]:
    """Returns one page of matching events, newest first.

    Args:
      agent: Only events of this agent.
      event_type: Only events of this type.
      start_time: Only events at or after this ISO 8601 time.
      end_time: Only events before this ISO 8601 time.
      limit: Page size, clamped to 1..MAX_PAGE_SIZE.
      cursor: ``nextCursor`` from the previous page, or None for the first.

    Returns:
      ``events``, ``totalMatching`` and ``nextCursor`` (None on the last page).

    Raises:
      ValueError: If ``cursor`` is not one this server handed out.
    """
    limit = max(1, min(int(limit), MAX_PAGE_SIZE))
    offset = _decode_cursor(cursor)
    where, args = self._where(agent, event_type, start_time, end_time)
    with contextlib.closing(self._connect()) as conn:
      total = conn.execute(
          f"SELECT COUNT(*) FROM events{where}", args
      ).fetchone()[0]
      rows = conn.execute(
          f"SELECT * FROM events{where}"
          " ORDER BY timestamp DESC, event_id DESC LIMIT ? OFFSET ?",
          [*args, limit, offset],
      ).fetchall()
    next_offset = offset + len(rows)
    return {
        "events": [_row_to_event(row) for row in rows],
        "totalMatching": total,
        "nextCursor": str(next_offset) if next_offset < total else None,
    }

  def get(self, event_id: str) -> dict[str, Any] | None:
    """Returns one event with its invocation's other events, or None."""
    with contextlib.closing(self._connect()) as conn:
      row = conn.execute(
          "SELECT * FROM events WHERE event_id = ?", (event_id,)
      ).fetchone()
      if row is None:
        return None
      siblings = conn.execute(
          "SELECT event_id, timestamp, event_type, status FROM events"
          " WHERE invocation_id = ? ORDER BY timestamp, event_id",
          (row["invocation_id"],),
      ).fetchall()
    event = _row_to_event(row)
    event["invocationEvents"] = [
        {
            "eventId": s["event_id"],
            "timestamp": s["timestamp"],
            "eventType": s["event_type"],
            "status": s["status"],
        }
        for s in siblings
    ]
    return event


def _row_to_event(row: sqlite3.Row) -> dict[str, Any]:
  return {
      "eventId": row["event_id"],
      "timestamp": row["timestamp"],
      "agent": row["agent"],
      "eventType": row["event_type"],
      "userId": row["user_id"],
      "sessionId": row["session_id"],
      "invocationId": row["invocation_id"],
      "toolName": row["tool_name"],
      "status": row["status"],
      "latencyMs": row["latency_ms"],
      "promptTokens": row["prompt_tokens"],
      "completionTokens": row["completion_tokens"],
      "errorMessage": row["error_message"],
      "content": row["content"],
  }


def _normalize_time(value: str) -> str:
  """Turns an ISO 8601 time into the stored UTC ``...Z`` text form."""
  parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
  if parsed.tzinfo is None:
    parsed = parsed.replace(tzinfo=datetime.timezone.utc)
  parsed = parsed.astimezone(datetime.timezone.utc)
  return parsed.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _decode_cursor(cursor: str | None) -> int:
  if not cursor:
    return 0
  if not cursor.isdigit():
    raise ValueError(f"Invalid cursor {cursor!r}")
  return int(cursor)


# --------------------------------------------------------------------------
# The MCP server.
# --------------------------------------------------------------------------


def _text_result(
    text: str, structured: dict[str, Any], is_error: bool = False
) -> CallToolResult:
  return CallToolResult(
      content=[TextContent(type="text", text=text)],
      structured_content=structured,
      is_error=is_error,
  )


def _summary_text(summary: dict[str, Any]) -> str:
  totals = summary["totals"]
  if not totals["events"]:
    return "No agent events match these filters."
  busiest = summary["byAgent"][0]
  noisiest = max(summary["byAgent"], key=lambda a: (a["errors"], a["agent"]))
  time_range = summary["timeRange"]
  agents = len(summary["byAgent"])
  return (
      f"{totals['events']} agent events ({totals['invocations']} invocations,"
      f" {agents} agent{'s' if agents != 1 else ''}) between"
      f" {time_range['start']} and"
      f" {time_range['end']}; {totals['errors']} errors. Busiest agent:"
      f" {busiest['agent']} ({busiest['events']} events). Most errors:"
      f" {noisiest['agent']} ({noisiest['errors']}). Average LLM latency:"
      f" {totals['avgLlmLatencyMs']} ms."
  )


def build_server(db_path: pathlib.Path) -> MCPServer:
  """Builds the dashboard MCP server over an existing events database.

  Args:
    db_path: Path of a database created by :func:`ensure_database`.

  Returns:
    The configured server, ready to run on any transport.
  """
  store = EventStore(db_path)
  apps = Apps()

  @apps.tool(
      resource_uri=VIEW_URI,
      visibility=["model", "app"],
      name="show_agent_dashboard",
      title="Show agent dashboard",
      description=(
          "Shows an interactive dashboard of agent events (counts by agent"
          " and event type, error totals and the latest events). Optional"
          " filters: agent name, event type, and an ISO 8601 time range."
          " Read-only; safe to call again."
      ),
      annotations=_READ_ONLY,
  )
  def show_agent_dashboard(
      agent: str | None = None,
      event_type: str | None = None,
      start_time: str | None = None,
      end_time: str | None = None,
  ) -> CallToolResult:
    summary = store.summary(agent, event_type, start_time, end_time)
    latest = store.query(agent, event_type, start_time, end_time, limit=20)
    data = {
        **summary,
        "recentEvents": latest["events"],
        "nextCursor": latest["nextCursor"],
        "eventTypes": list(EVENT_TYPES),
    }
    return _text_result("Agent dashboard: " + _summary_text(summary), data)

  @apps.tool(
      resource_uri=VIEW_URI,
      visibility=["app"],
      name="query_agent_events",
      title="Query agent events",
      description=(
          "Lists agent events newest first, filtered by agent, event type"
          " and ISO 8601 time range; paginated with nextCursor."
      ),
      annotations=_READ_ONLY,
  )
  def query_agent_events(
      agent: str | None = None,
      event_type: str | None = None,
      start_time: str | None = None,
      end_time: str | None = None,
      limit: int = 25,
      cursor: str | None = None,
  ) -> CallToolResult:
    try:
      page = store.query(agent, event_type, start_time, end_time, limit, cursor)
    except ValueError as e:
      return _text_result(str(e), {"error": str(e)}, is_error=True)
    shown = len(page["events"])
    more = " More available." if page["nextCursor"] else ""
    text = f"{shown} of {page['totalMatching']} matching events.{more}"
    return _text_result(text, page)

  @apps.tool(
      resource_uri=VIEW_URI,
      visibility=["app"],
      name="get_event_detail",
      title="Get event detail",
      description="Returns one agent event, and its invocation, by event id.",
      annotations=_READ_ONLY,
  )
  def get_event_detail(event_id: str) -> CallToolResult:
    event = store.get(event_id)
    if event is None:
      message = f"No event with id {event_id!r}."
      return _text_result(message, {"error": message}, is_error=True)
    text = (
        f"{event['eventId']} at {event['timestamp']}: {event['content']}"
        f" (status {event['status']})."
    )
    return _text_result(text, {"event": event})

  apps.add_html_resource(
      VIEW_URI,
      _VIEW_PATH.read_text(encoding="utf-8"),
      name="agent_dashboard_view",
      title="Agent events dashboard",
      description="Interactive dashboard View for show_agent_dashboard.",
      prefers_border=True,
  )

  server = MCPServer(
      "adk-mcp-apps-dashboard",
      instructions=(
          "Call show_agent_dashboard to show the agent-events dashboard;"
          " the user drills down inside the View."
      ),
      extensions=[apps],
      log_level="WARNING",
  )

  @server.resource(
      SUMMARY_URI,
      name="dashboard_summary",
      title="Agent events summary",
      description="Whole-dataset totals, by agent and by event type (JSON).",
      mime_type="application/json",
  )
  def dashboard_summary() -> str:
    return json.dumps(store.summary(), sort_keys=True)

  @server.resource(
      AGENT_SUMMARY_URI_TEMPLATE,
      name="agent_summary",
      title="One agent's events summary",
      description="Totals for one agent, by event type (JSON).",
      mime_type="application/json",
  )
  def agent_summary(agent: str) -> str:
    return json.dumps(store.summary(agent=agent), sort_keys=True)

  return server


# --------------------------------------------------------------------------
# Entry point.
# --------------------------------------------------------------------------


async def _serve_http(server: MCPServer, port: int) -> None:
  """Serves streamable HTTP on loopback and announces the bound URL."""
  import uvicorn  # pylint: disable=g-import-not-at-top

  sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
  sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
  sock.bind((LOOPBACK_HOST, port))
  url = f"http://{LOOPBACK_HOST}:{sock.getsockname()[1]}/mcp"

  class _AnnouncingServer(uvicorn.Server):
    """Prints READY once listening; exits 0 after a signalled shutdown."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
      await super().startup(sockets=sockets)
      if self.started:
        print(f"READY {url}", flush=True)

    def handle_exit(self, sig: int, frame: types.FrameType | None) -> None:
      # uvicorn re-raises a captured signal after shutting down, which turns
      # a graceful stop into death by SIGTERM; stop without recording it.
      if self.should_exit and sig == signal.SIGINT:
        self.force_exit = True
      else:
        self.should_exit = True

  config = uvicorn.Config(
      server.streamable_http_app(host=LOOPBACK_HOST),
      log_level="warning",
      timeout_graceful_shutdown=2,
  )
  with sock:
    await _AnnouncingServer(config).serve(sockets=[sock])


def main(argv: Sequence[str] | None = None) -> None:
  """Parses the command line, prepares the data and runs the server."""
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument(
      "--transport",
      choices=("stdio", "streamable-http"),
      default="stdio",
  )
  parser.add_argument(
      "--port",
      type=int,
      default=8000,
      help="Port for streamable-http on 127.0.0.1; 0 picks a free one.",
  )
  parser.add_argument(
      "--db",
      type=pathlib.Path,
      default=None,
      help=f"SQLite file (default: ${DB_ENV_VAR} or the user cache dir).",
  )
  parser.add_argument(
      "--seed",
      type=int,
      default=int(os.environ.get(SEED_ENV_VAR, DEFAULT_SEED)),
      help="Seed used when the database has to be generated.",
  )
  args = parser.parse_args(argv)
  # stdout carries the protocol on stdio, so every log line goes to stderr.
  logging.basicConfig(stream=sys.stderr, level=logging.INFO)

  db_path = ensure_database(args.db or default_db_path(), seed=args.seed)
  server = build_server(db_path)
  if args.transport == "stdio":
    server.run("stdio")
  else:
    import anyio  # pylint: disable=g-import-not-at-top

    anyio.run(_serve_http, server, args.port)


if __name__ == "__main__":
  main()
