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


"""Shared parts of the audit pipeline and observer tests.

A `Harness` is one real session service (in-memory, SQLite, or
`DatabaseSessionService` on PostgreSQL) with one
open Session; `open_batch` makes the operation's real `EventBatchEffects`
with one tool call that wrote the state through ADK's `State`;
`ProbePlugin` is a real `BasePlugin` whose two Event callbacks log what
they saw and run what a test gives them; `reject_inserts` installs a
SQLite trigger, a real backend refusal of the `events` insert.
`analytics_plugin` and `AnalyticsTable` are the real BigQuery analytics
plugin over the stand-in BigQuery of `event_finalizer/analytics_support`.

Example:

  harness = await open_harness('sqlite', tmp_path)
  effects = open_batch(harness, {'cart': 2})
  outcome = await append_audit_event(
      session_service=harness.service, session=harness.session,
      event=operation_record(), effects=effects,
      plugin_manager=PluginManager(plugins=[ProbePlugin('p', log)]))
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
import dataclasses
import json
import os
from pathlib import Path
import sqlite3
import sys
from typing import Any
from typing import Optional

from google.adk.events.event import Event
from google.adk.mcp_apps.audit.pipeline import audit_record
from google.adk.mcp_apps.batch.ledger import EventBatchEffects
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.session import Session
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.sessions.state import State
from google.genai import types

# The stand-in BigQuery lives beside the analytics tests it was written
# for; its directory is on the path only when those tests are collected.
_ANALYTICS_DIR = str(Path(__file__).resolve().parent / 'event_finalizer')
if _ANALYTICS_DIR not in sys.path:
  sys.path.append(_ANALYTICS_DIR)

from analytics_support import analytics_plugin  # pylint: disable=g-import-not-at-top,wrong-import-position
from analytics_support import AnalyticsTable  # pylint: disable=g-import-not-at-top,wrong-import-position
from analytics_support import envelope  # pylint: disable=g-import-not-at-top,wrong-import-position

__all__ = [
    'ANALYTICS_DIR',
    'APP',
    'CALL',
    'Harness',
    'JsonlRows',
    'ProbePlugin',
    'USER',
    'AnalyticsTable',
    'analytics_plugin',
    'audit_events',
    'delta_rows',
    'make_service',
    'envelope',
    'open_batch',
    'open_harness',
    'operation_record',
    'reject_inserts',
]

ANALYTICS_DIR = _ANALYTICS_DIR
APP = 'audit_app'
USER = 'user-1'
CALL = 'call-1'
INVOCATION = 'inv-app-op'
SECRET = 'secret-state-value-7f3a'
"""A state value no log record may carry."""


@dataclasses.dataclass
class Harness:
  """One real session service with one open Session."""

  kind: str
  service: BaseSessionService
  session: Session
  db_path: Optional[Path] = None

  @property
  def key(self) -> SessionKey:
    return SessionKey(APP, USER, self.session.id)

  async def reload(self) -> Session:
    """The Session as a fresh read of the service returns it."""
    session = await self.service.get_session(
        app_name=APP, user_id=USER, session_id=self.session.id
    )
    assert session is not None
    return session

  async def stored(self) -> list[Event]:
    """The stored Events, read fresh."""
    return list((await self.reload()).events)

  async def close(self) -> None:
    close = getattr(self.service, 'close', None)
    if close is not None:
      await close()


def make_service(kind: str, target: str) -> BaseSessionService:
  """A real session service: 'sqlite' over the file `target`, 'database'
  (`DatabaseSessionService`) over the SQLAlchemy URL `target`."""
  if kind == 'sqlite':
    return SqliteSessionService(target)
  assert kind == 'database'
  return DatabaseSessionService(target)


async def open_harness(
    kind: str,
    tmp_path: Path,
    state: Optional[dict[str, Any]] = None,
    *,
    url: Optional[str] = None,
) -> Harness:
  """A real service and a new Session: `kind` is 'in_memory', 'sqlite'
  or 'database_pg' (`DatabaseSessionService` over PostgreSQL at `url`)."""
  service: BaseSessionService
  db_path = None
  if kind == 'in_memory':
    service = InMemorySessionService()
  elif kind == 'sqlite':
    db_path = tmp_path / 'sessions.db'
    service = make_service('sqlite', str(db_path))
  else:
    assert kind == 'database_pg' and url is not None
    service = make_service('database', url)
  session = await service.create_session(
      app_name=APP,
      user_id=USER,
      state=state if state is not None else {'cart': {'items': ['A1']}},
  )
  return Harness(kind, service, session, db_path)


def open_batch(harness: Harness, writes: dict[str, Any]) -> EventBatchEffects:
  """The operation's open batch; its one tool call wrote `writes`."""
  effects = EventBatchEffects([CALL], live_state=harness.session.state)
  state = State(
      harness.session.state, effects.child(CALL).event_actions().state_delta
  )
  for key, value in writes.items():
    state[key] = value
  return effects


def operation_record(
    text: str = 'the app called buy', *, with_call: bool = False
) -> Event:
  """An audit record as the core constructs it for a direct app call."""
  parts = [types.Part(text=text)]
  if with_call:
    parts.append(
        types.Part(function_call=types.FunctionCall(name='buy', args={}))
    )
  return Event(
      invocation_id=INVOCATION,
      author='app',
      content=types.Content(role='user', parts=parts),
      custom_metadata={'op': 'tools/call'},
  )


def audit_events(events: list[Event]) -> list[Event]:
  """The Events the audit pipeline appended."""
  return [e for e in events if audit_record(e) is not None]


OnEvent = Callable[[Any, Event], Awaitable[Optional[Event]]]
OnAudit = Callable[[Any, Event], Awaitable[Any]]


class ProbePlugin(BasePlugin):
  """A real plugin logging each Event callback into a shared `log`.

  Attributes:
    log: Shared across plugins: `(plugin name, phase)` in call order.
    seen: Every `(context, event)` this plugin's observer received.
    events: Every Event its ordinary callback received.
  """

  def __init__(
      self,
      name: str,
      log: list[tuple[str, str]],
      *,
      on_event: Optional[OnEvent] = None,
      on_audit: Optional[OnAudit] = None,
  ) -> None:
    super().__init__(name=name)
    self.log = log
    self.on_event = on_event
    self.on_audit = on_audit
    self.seen: list[tuple[Any, Event]] = []
    self.events: list[Event] = []

  async def on_event_callback(
      self, *, invocation_context: Any, event: Event
  ) -> Optional[Event]:
    self.log.append((self.name, 'event'))
    self.events.append(event)
    if self.on_event is None:
      return None
    return await self.on_event(invocation_context, event)

  async def on_audit_event_callback(
      self, *, readonly_context: Any, event: Event
  ) -> Any:
    self.log.append((self.name, 'observe'))
    self.seen.append((readonly_context, event))
    if self.on_audit is None:
      return None
    return await self.on_audit(readonly_context, event)


def reject_inserts(db_path: Path, *, containing: Optional[str] = None) -> None:
  """Makes the SQLite backend refuse `events` inserts (all, or those
  whose stored JSON contains `containing`)."""
  condition = (
      '' if containing is None else f"WHEN NEW.event_data LIKE '%{containing}%'"
  )
  with sqlite3.connect(db_path) as db:
    db.execute(
        'CREATE TRIGGER refuse_events BEFORE INSERT ON events'
        f" {condition} BEGIN SELECT RAISE(ABORT, 'backend refuses'); END"
    )


class JsonlRows(list):  # type: ignore[type-arg]
  """The stand-in BigQuery's rows, durable: each arrival is appended to a
  JSON-lines file and synced before the write call returns."""

  def __init__(self, path: Path) -> None:
    super().__init__()
    self.path = path

  def extend(self, rows: Any) -> None:
    rows = list(rows)
    super().extend(rows)
    with self.path.open('a') as f:
      for row in rows:
        f.write(json.dumps(row, default=str) + '\n')
      f.flush()
      os.fsync(f.fileno())

  @staticmethod
  def read(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
      return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def delta_rows(rows: list[dict[str, Any]], event_id: str) -> list[Any]:
  """The STATE_DELTA rows derived from the Event `event_id`."""
  return [
      row
      for row in rows
      if row['event_type'] == 'STATE_DELTA'
      and envelope(row).get('source_event_id') == event_id
  ]
