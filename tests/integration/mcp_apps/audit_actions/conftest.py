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

"""Session backends and helpers for the audit-Event tests.

`backend` is one real session service: in-memory, `SqliteSessionService` on
a SQLite file, or `DatabaseSessionService` on a SQLite file or on the run's
loopback PostgreSQL (`pg_server`). `Backend`
appends an Event the way an MCP App operation does (inside
`admitted(APP_OPERATION)`), reads the stored Event back through a fresh
`get_session`, and reads every value a SQL service stored straight from its
database.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
import contextlib
import dataclasses
from pathlib import Path

from google.adk.events.event import Event
from google.adk.mcp_apps.event_policy.provenance import admitted
from google.adk.mcp_apps.event_policy.provenance import APP_OPERATION
from google.adk.mcp_apps.event_policy.provenance import Provenance
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.session import Session
from google.adk.sessions.sqlite_session_service import SqliteSessionService
import pytest
import sqlalchemy
from sqlalchemy.ext.asyncio import create_async_engine

APP_NAME = "audit_app"
USER_ID = "user-1"


@dataclasses.dataclass
class Backend:
  """One session service under test and the file it stores into."""

  name: str
  service: BaseSessionService
  db_url: str | None
  session: Session | None = None

  async def open_session(self) -> Session:
    self.session = await self.service.create_session(
        app_name=APP_NAME, user_id=USER_ID
    )
    return self.session

  async def append(
      self, event: Event, provenance: Provenance | None = APP_OPERATION
  ) -> Event:
    """Appends `event` as the operation `provenance` does (`None`: none)."""
    assert self.session is not None
    with (
        admitted(provenance)
        if provenance is not None
        else contextlib.nullcontext()
    ):
      return await self.service.append_event(self.session, event)

  async def reload(self) -> Session:
    """The session as stored, through a fresh `get_session`."""
    assert self.session is not None
    session = await self.service.get_session(
        app_name=APP_NAME, user_id=USER_ID, session_id=self.session.id
    )
    assert session is not None
    return session

  async def stored(self, event_id: str) -> Event:
    """The stored Event `event_id`, read back."""
    session = await self.reload()
    matches = [e for e in session.events if e.id == event_id]
    assert len(matches) == 1
    return matches[0]

  async def raw_bytes(self) -> bytes:
    """Every value the service stored, read from its database directly.

    For the in-memory service: every stored Event's JSON.
    """
    if self.db_url is None:
      assert isinstance(self.service, InMemorySessionService)
      assert self.session is not None
      stored = self.service.sessions[APP_NAME][USER_ID][self.session.id]
      return b"".join(e.model_dump_json().encode() for e in stored.events)
    chunks = []
    engine = create_async_engine(self.db_url)
    try:
      async with engine.connect() as db:
        tables = await db.run_sync(
            lambda sync: sqlalchemy.inspect(sync).get_table_names()
        )
        for table in tables:
          rows = await db.execute(sqlalchemy.text(f'SELECT * FROM "{table}"'))
          for row in rows:
            for value in row:
              if isinstance(value, (bytes, memoryview)):
                chunks.append(bytes(value))
              elif value is not None:
                chunks.append(str(value).encode())
    finally:
      await engine.dispose()
    return b"\x00".join(chunks)


def _in_memory(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
  del request, tmp_path
  return Backend("in_memory", InMemorySessionService(), None)


def _sqlite(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
  del request
  path = tmp_path / "sessions.db"
  return Backend(
      "sqlite", SqliteSessionService(str(path)), f"sqlite+aiosqlite:///{path}"
  )


def _database(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
  del request
  url = f"sqlite+aiosqlite:///{tmp_path / 'database.db'}"
  return Backend("database", DatabaseSessionService(url), url)


def _postgres(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
  del tmp_path
  url = request.getfixturevalue("pg_server").create_database()
  return Backend("postgres", DatabaseSessionService(url), url)


BACKENDS: dict[str, Callable[[pytest.FixtureRequest, Path], Backend]] = {
    "in_memory": _in_memory,
    "sqlite": _sqlite,
    "database": _database,
    "postgres": _postgres,
}


async def _open(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Backend]:
  made = BACKENDS[request.param](request, tmp_path)
  await made.open_session()
  try:
    yield made
  finally:
    close = getattr(made.service, "close", None)
    if close is not None:
      await close()


@pytest.fixture(
    params=[
        pytest.param("in_memory"),
        pytest.param("sqlite"),
        pytest.param("database"),
        pytest.param("postgres"),
    ]
)
async def backend(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Backend]:
  """A finalizing session service with one open session."""
  async for made in _open(request, tmp_path):
    yield made


@pytest.fixture(params=list(BACKENDS))
async def any_backend(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Backend]:
  """Any session service with one open session, finalizing or not."""
  async for made in _open(request, tmp_path):
    yield made
