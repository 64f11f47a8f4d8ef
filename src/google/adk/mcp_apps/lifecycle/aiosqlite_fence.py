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

"""The creation fence in a file-backed `SqliteSessionService`'s database.

Usage:

  fence = AiosqliteSessionFence(SqliteSessionService('sessions.db'))
  await fence.arm(key, FenceToken(1, 'op-1'))
"""

from __future__ import annotations

from typing import Any
from typing import Optional
from typing import TYPE_CHECKING

import aiosqlite

from ..contracts.scope import SessionKey
from .fenced_creation import FENCE_TABLE
from .fenced_creation import FenceRow
from .fenced_creation import FenceState
from .fenced_creation import FenceToken
from .fenced_creation import now
from .fenced_creation import SqlSessionFence

if TYPE_CHECKING:
  from ...sessions.sqlite_session_service import SqliteSessionService

_SQLITE_FENCE_DDL = f"""
CREATE TABLE IF NOT EXISTS {FENCE_TABLE} (
    app_name TEXT NOT NULL,
    user_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    state TEXT NOT NULL,
    incarnation INTEGER NOT NULL,
    operation_id TEXT NOT NULL,
    import_digest TEXT,
    import_count INTEGER,
    updated_at REAL NOT NULL,
    PRIMARY KEY (app_name, user_id, session_id)
);
"""
_SQLITE_KEY = 'app_name=? AND user_id=? AND session_id=?'


async def _write_one(
    db: aiosqlite.Connection, sql: str, params: tuple[Any, ...]
) -> bool:
  """Runs one write in its own immediate transaction.

  Returns:
    Whether it changed exactly one row.
  """
  await db.execute('BEGIN IMMEDIATE')
  try:
    cursor = await db.execute(sql, params)
    changed = cursor.rowcount == 1
    await db.commit()
  except BaseException:
    await db.rollback()
    raise
  return changed


class AiosqliteSessionFence(SqlSessionFence[aiosqlite.Connection]):
  """The fence on a `SqliteSessionService`'s database file."""

  def __init__(self, service: SqliteSessionService) -> None:
    super().__init__(service)
    self._service = service
    self._ready = False

  async def _connect_ready(self, db: aiosqlite.Connection) -> None:
    if not self._ready:
      await db.executescript(_SQLITE_FENCE_DDL)
      self._ready = True

  @staticmethod
  def _params(session: SessionKey) -> tuple[str, str, str]:
    return (session.app_name, session.user_id, session.session_id)

  async def _read(
      self, db: aiosqlite.Connection, session: SessionKey
  ) -> Optional[FenceRow]:
    async with db.execute(
        'SELECT state, incarnation, operation_id, import_digest, import_count'
        f' FROM {FENCE_TABLE} WHERE {_SQLITE_KEY}',
        self._params(session),
    ) as cursor:
      row = await cursor.fetchone()
    if row is None:
      return None
    return FenceRow(
        state=row[0],
        incarnation=int(row[1]),
        operation_id=row[2],
        import_digest=row[3],
        import_count=None if row[4] is None else int(row[4]),
    )

  async def read(self, session: SessionKey) -> Optional[FenceRow]:
    async with self._service.connect() as db:
      await self._connect_ready(db)
      return await self._read(db, session)

  async def _upsert(
      self, session: SessionKey, token: FenceToken, state: str, below: int
  ) -> bool:
    async with self._service.connect() as db:
      await self._connect_ready(db)
      return await self._upsert_on(db, session, token, state, below)

  async def _upsert_on(
      self,
      db: aiosqlite.Connection,
      session: SessionKey,
      token: FenceToken,
      state: str,
      below: int,
  ) -> bool:
    return await _write_one(
        db,
        f'INSERT INTO {FENCE_TABLE} (app_name, user_id, session_id, state,'
        ' incarnation, operation_id, import_digest, import_count,'
        ' updated_at) VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?) ON'
        ' CONFLICT(app_name, user_id, session_id) DO UPDATE SET'
        ' state=excluded.state, incarnation=excluded.incarnation,'
        ' operation_id=excluded.operation_id, import_digest=NULL,'
        ' import_count=NULL, updated_at=excluded.updated_at WHERE'
        f' {FENCE_TABLE}.incarnation < ?',
        (
            *self._params(session),
            state,
            token.incarnation,
            token.operation_id,
            now(),
            below,
        ),
    )

  async def _retire_armed(self, session: SessionKey, token: FenceToken) -> bool:
    async with self._service.connect() as db:
      await self._connect_ready(db)
      return await _write_one(
          db,
          f'UPDATE {FENCE_TABLE} SET state=?, updated_at=? WHERE'
          f' {_SQLITE_KEY} AND incarnation=? AND operation_id=? AND state=?',
          (
              FenceState.RETIRED,
              now(),
              *self._params(session),
              token.incarnation,
              token.operation_id,
              FenceState.ARMED,
          ),
      )

  async def _begin_fenced(self, connection: aiosqlite.Connection) -> None:
    await self._connect_ready(connection)
    # The write lock first, so the fence check and every row serialize with
    # a concurrent retire.
    await connection.execute('BEGIN IMMEDIATE')

  async def _commit_fence(
      self,
      connection: aiosqlite.Connection,
      session: SessionKey,
      token: FenceToken,
      digest: str,
      count: int,
  ) -> bool:
    cursor = await connection.execute(
        f'UPDATE {FENCE_TABLE} SET state=?, import_digest=?,'
        f' import_count=?, updated_at=? WHERE {_SQLITE_KEY} AND'
        ' incarnation=? AND operation_id=? AND state=?',
        (
            FenceState.COMMITTED,
            digest,
            count,
            now(),
            *self._params(session),
            token.incarnation,
            token.operation_id,
            FenceState.ARMED,
        ),
    )
    return cursor.rowcount == 1

  async def _rollback(self, connection: aiosqlite.Connection) -> None:
    await connection.rollback()
