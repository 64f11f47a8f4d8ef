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

"""Shared parts of the event-finalizer backend tests.

`backend` is ONE parametrized fixture over every shipped session backend:
in-memory, `SqliteSessionService`, `DatabaseSessionService` on a SQLite
file and on the loopback PostgreSQL, and `VertexAiSessionService` over a
stand-in transport (`FakeAgentEngine`, a test double of the Agent Engine
sessions API: the deployment contract the service speaks). Each `Backend`
writes through one service object and reads the stored rows back through a
fresh one, or raw (SQL, or the transport's request bodies).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
import dataclasses
import datetime
import itertools
import json
import sqlite3
import sys
import types
from typing import Any
from typing import Optional

from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps.app import App
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types as genai_types
import pytest
from scripted_llm import ScriptedLlm
import sqlalchemy

APP = "finalizer_app"
USER = "user-1"

PROTECTED = ("audience", "invocation_origin", "emitter")


def _camel(name: str) -> str:
  head, *rest = name.split("_")
  return head + "".join(part.title() for part in rest)


def protected(row: dict[str, Any]) -> tuple[Any, Any, Any]:
  """A stored row's (audience, invocation_origin, emitter), whether the
  backend stored field names or their aliases (Vertex's `raw_event`)."""
  return tuple(  # type: ignore[return-value]
      row.get(name, row.get(_camel(name))) for name in PROTECTED
  )


# -- the Vertex stand-in transport ----------------------------------------------


class FakeAgentEngine:
  """The Agent Engine sessions API, in memory: what a deployment serves.

  Keeps every `events.append` request body as the stored row, and answers
  `get`/`events.list` from them the way the service reads them back
  (`raw_event`).
  """

  def __init__(self) -> None:
    self.sessions: dict[str, dict[str, Any]] = {}
    self.events: dict[str, list[dict[str, Any]]] = {}
    self._ids = itertools.count(1)
    self.sessions_api = types.SimpleNamespace(
        create=self._create,
        get=self._get,
        delete=self._delete,
        events=types.SimpleNamespace(append=self._append, list=self._list),
    )

  async def _create(
      self, *, name: str, user_id: str, config: dict[str, Any]
  ) -> Any:
    session_id = config.get("session_id") or str(next(self._ids))
    resource = f"{name}/sessions/{session_id}"
    self.sessions[resource] = {
        "user_id": user_id,
        "state": dict(config.get("session_state") or {}),
        "update_time": datetime.datetime.now(datetime.timezone.utc),
    }
    self.events[resource] = []
    return types.SimpleNamespace(response=self._session(resource))

  def _session(self, resource: str) -> Any:
    stored = self.sessions[resource]
    return types.SimpleNamespace(
        name=resource,
        user_id=stored["user_id"],
        session_state=stored["state"],
        update_time=stored["update_time"],
    )

  async def _get(self, *, name: str) -> Any:
    return self._session(name)

  async def _delete(self, *, name: str) -> None:
    self.sessions.pop(name, None)
    self.events.pop(name, None)

  async def _append(
      self,
      *,
      name: str,
      author: str,
      invocation_id: str,
      timestamp: datetime.datetime,
      config: dict[str, Any],
  ) -> None:
    body = json.loads(json.dumps(config))  # What crosses the wire.
    self.events[name].append({
        "name": f"{name}/events/{next(self._ids)}",
        "author": author,
        "invocation_id": invocation_id,
        "timestamp": timestamp,
        "config": body,
    })
    self.sessions[name]["update_time"] = timestamp

  async def _list(self, *, name: str, **kwargs: Any) -> AsyncIterator[Any]:
    del kwargs

    async def rows() -> AsyncIterator[Any]:
      for row in self.events.get(name, []):
        yield types.SimpleNamespace(
            name=row["name"],
            author=row["author"],
            invocation_id=row["invocation_id"],
            timestamp=row["timestamp"],
            raw_event=row["config"].get("raw_event"),
            actions=None,
            event_metadata=None,
            content=None,
        )

    return rows()

  def stored_rows(self, session_id: str) -> list[dict[str, Any]]:
    """The `raw_event` body of every stored event of `session_id`."""
    for resource, rows in self.events.items():
      if resource.endswith(f"/sessions/{session_id}"):
        return [row["config"]["raw_event"] for row in rows]
    return []


def vertex_service_class() -> type[BaseSessionService]:
  from google.adk.sessions.vertex_ai_session_service import VertexAiSessionService  # pylint: disable=g-import-not-at-top

  class StandInVertexSessionService(VertexAiSessionService):
    """The Vertex service over `FakeAgentEngine` (its documented client
    seam, `_build_api_client`)."""

    def __init__(self, engine: FakeAgentEngine) -> None:
      super().__init__(agent_engine_id="123")
      self.engine = engine

    def _build_api_client(self) -> Any:
      return types.SimpleNamespace(sessions=self.engine.sessions_api)

  return StandInVertexSessionService


# -- the backend fixture ------------------------------------------------------------


@dataclasses.dataclass
class Backend:
  """One session backend under test.

  Attributes:
    name: The parameter id.
    service: The service the test writes through.
    fresh: Builds a new service object over the same storage.
    raw_rows: The stored rows of a Session as JSON-like dicts, read below
      the service (SQL, the transport's bodies, the in-memory storage).
  """

  name: str
  service: BaseSessionService
  fresh: Callable[[], BaseSessionService]
  raw_rows: Callable[[str], Awaitable[list[dict[str, Any]]]]
  closers: list[Callable[[], Awaitable[None]]] = dataclasses.field(
      default_factory=list
  )

  async def create(self) -> str:
    session = await self.service.create_session(app_name=APP, user_id=USER)
    return session.id

  async def session(self, session_id: str) -> Any:
    return await self.service.get_session(
        app_name=APP, user_id=USER, session_id=session_id
    )

  async def reread(self, session_id: str) -> list[Event]:
    """The Session's events through a fresh service object."""
    fresh = self.fresh()
    try:
      session = await fresh.get_session(
          app_name=APP, user_id=USER, session_id=session_id
      )
    finally:
      if fresh is not self.service and hasattr(fresh, "close"):
        await fresh.close()  # type: ignore[attr-defined]
    assert session is not None
    return session.events

  async def close(self) -> None:
    for closer in reversed(self.closers):
      await closer()


def _sqlite_rows(path: str, session_id: str) -> list[dict[str, Any]]:
  with sqlite3.connect(path) as db:
    rows = db.execute(
        "SELECT event_data FROM events WHERE session_id=? ORDER BY timestamp",
        (session_id,),
    ).fetchall()
  return [json.loads(row[0]) for row in rows]


async def _database_rows(url: str, session_id: str) -> list[dict[str, Any]]:
  engine = sqlalchemy.ext.asyncio.create_async_engine(url)
  try:
    async with engine.connect() as conn:
      result = await conn.execute(
          sqlalchemy.text(
              "SELECT event_data FROM events WHERE session_id=:sid"
              " ORDER BY timestamp"
          ),
          {"sid": session_id},
      )
      rows = result.fetchall()
  finally:
    await engine.dispose()
  return [
      row[0] if isinstance(row[0], dict) else json.loads(row[0]) for row in rows
  ]


BACKENDS = ("in_memory", "sqlite", "database_sqlite", "database_pg", "vertex")


async def make_backend(
    name: str, tmp_path: Any, request: pytest.FixtureRequest
) -> Backend:
  """Builds the backend `name` over fresh storage."""
  tmp_path.mkdir(parents=True, exist_ok=True)
  if name == "in_memory":
    memory = InMemorySessionService()

    async def memory_rows(session_id: str) -> list[dict[str, Any]]:
      stored = memory.sessions[APP][USER][session_id]
      return [
          e.model_dump(mode="json", exclude_none=True) for e in stored.events
      ]

    return Backend(name, memory, lambda: memory, memory_rows)
  if name == "sqlite":
    path = str(tmp_path / "sessions.db")
    sqlite_service = SqliteSessionService(path)

    async def sqlite_rows(session_id: str) -> list[dict[str, Any]]:
      return _sqlite_rows(path, session_id)

    backend = Backend(
        name, sqlite_service, lambda: SqliteSessionService(path), sqlite_rows
    )
    backend.closers.append(sqlite_service.close)
    return backend
  if name in ("database_sqlite", "database_pg"):
    if name == "database_sqlite":
      url = f"sqlite+aiosqlite:///{tmp_path / 'database.db'}"
    else:
      url = request.getfixturevalue("pg_server").create_database()
    database = DatabaseSessionService(url)

    async def database_rows(session_id: str) -> list[dict[str, Any]]:
      return await _database_rows(url, session_id)

    backend = Backend(
        name, database, lambda: DatabaseSessionService(url), database_rows
    )
    backend.closers.append(database.close)
    return backend
  assert name == "vertex"
  monkeypatch = request.getfixturevalue("monkeypatch")
  # The service imports the Agent Engine SDK only to check it is installed;
  # the stand-in transport replaces the client, so an empty module will do.
  # It stands in for ADK's import shim, for this test only.
  shim = types.ModuleType("google.adk.dependencies._agentplatform")
  shim.agentplatform = types.ModuleType("agentplatform")  # type: ignore[attr-defined]
  monkeypatch.setitem(
      sys.modules, "google.adk.dependencies._agentplatform", shim
  )
  engine = FakeAgentEngine()
  service_class = vertex_service_class()
  vertex = service_class(engine)  # type: ignore[call-arg]

  async def vertex_rows(session_id: str) -> list[dict[str, Any]]:
    return engine.stored_rows(session_id)

  return Backend(
      name,
      vertex,
      lambda: service_class(engine),  # type: ignore[call-arg]
      vertex_rows,
  )


@pytest.fixture(params=BACKENDS)
async def backend(
    request: pytest.FixtureRequest, tmp_path: Any
) -> AsyncIterator[Backend]:
  """Every shipped session backend, over fresh storage."""
  built = await make_backend(request.param, tmp_path, request)
  try:
    yield built
  finally:
    await built.close()


# -- Runner turns -------------------------------------------------------------------


def user_message(text: str = "hello") -> genai_types.Content:
  return genai_types.Content(role="user", parts=[genai_types.Part(text=text)])


async def run_turn(
    service: BaseSessionService,
    session_id: str,
    *,
    plugins: Optional[list[Any]] = None,
    llm: Optional[ScriptedLlm] = None,
    text: str = "hello",
) -> list[Event]:
  """One real Runner turn with the scripted model; the yielded Events."""
  agent = LlmAgent(name="probe", model=llm or ScriptedLlm())
  runner = Runner(
      app=App(name=APP, root_agent=agent, plugins=plugins or []),
      session_service=service,
  )
  events = []
  async for event in runner.run_async(
      user_id=USER, session_id=session_id, new_message=user_message(text)
  ):
    events.append(event)
  return events


def response_event(
    invocation_id: str, call_id: str, name: str = "app_tool", **fields: Any
) -> Event:
  """An Event carrying one FunctionResponse (plus any other `fields`)."""
  return Event(
      invocation_id=invocation_id,
      author="probe",
      content=genai_types.Content(
          role="user",
          parts=[
              genai_types.Part(
                  function_response=genai_types.FunctionResponse(
                      id=call_id, name=name, response={"content": []}
                  )
              )
          ],
      ),
      **fields,
  )


class Helpers:
  """The helpers of this conftest, for the tests (a fixture, `fin`)."""

  APP = APP
  USER = USER
  BACKENDS = BACKENDS
  protected = staticmethod(protected)
  run_turn = staticmethod(run_turn)
  response_event = staticmethod(response_event)
  user_message = staticmethod(user_message)


@pytest.fixture
def fin() -> Helpers:
  """The helper functions of this conftest (see `Helpers`)."""
  return Helpers()


@pytest.fixture
async def backend_named(
    request: pytest.FixtureRequest, tmp_path: Any
) -> AsyncIterator[Callable[[str], Awaitable[Backend]]]:
  """Builds the named backend over fresh storage (closed at teardown)."""
  built: list[Backend] = []

  async def build(name: str) -> Backend:
    backend = await make_backend(name, tmp_path / name, request)
    built.append(backend)
    return backend

  try:
    yield build
  finally:
    for backend in reversed(built):
      await backend.close()
