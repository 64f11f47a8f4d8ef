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

"""The creation fence on a `DatabaseSessionService`'s engine.

Usage:

  fence = SqlAlchemySessionFence(DatabaseSessionService(db_url))
  await fence.arm(key, FenceToken(1, 'op-1'))
"""

from __future__ import annotations

from typing import Any
from typing import Optional
from typing import TYPE_CHECKING

from ..contracts.scope import SessionKey
from .fenced_creation import FENCE_TABLE
from .fenced_creation import FenceRow
from .fenced_creation import FenceState
from .fenced_creation import FenceToken
from .fenced_creation import KEY_LENGTH
from .fenced_creation import now
from .fenced_creation import SqlSessionFence

if TYPE_CHECKING:
  from sqlalchemy.ext.asyncio import AsyncSession

  from ...sessions.database_session_service import DatabaseSessionService


class SqlAlchemySessionFence(SqlSessionFence['AsyncSession']):
  """The fence on a `DatabaseSessionService`'s own engine."""

  def __init__(self, service: DatabaseSessionService) -> None:
    super().__init__(service)
    # pylint: disable=g-import-not-at-top
    from sqlalchemy import BigInteger
    from sqlalchemy import Column
    from sqlalchemy import Float
    from sqlalchemy import Integer
    from sqlalchemy import MetaData
    from sqlalchemy import String
    from sqlalchemy import Table

    # pylint: enable=g-import-not-at-top
    self._service = service
    self._metadata = MetaData()
    self._table = Table(
        FENCE_TABLE,
        self._metadata,
        Column('app_name', String(KEY_LENGTH), primary_key=True),
        Column('user_id', String(KEY_LENGTH), primary_key=True),
        Column('session_id', String(KEY_LENGTH), primary_key=True),
        Column('state', String(16), nullable=False),
        Column('incarnation', BigInteger, nullable=False),
        Column('operation_id', String(KEY_LENGTH), nullable=False),
        Column('import_digest', String(128), nullable=True),
        Column('import_count', Integer, nullable=True),
        Column('updated_at', Float, nullable=False),
    )
    self._ready = False

  async def _ensure(self) -> None:
    if self._ready:
      return
    from ..stores._sql import ensure_schema  # pylint: disable=g-import-not-at-top

    await self._service.prepare_tables()
    await ensure_schema(self._service.db_engine, self._metadata, FENCE_TABLE)
    self._ready = True

  def _key(self, session: SessionKey) -> list[Any]:
    table = self._table
    return [
        table.c.app_name == session.app_name,
        table.c.user_id == session.user_id,
        table.c.session_id == session.session_id,
    ]

  def _armed(self, session: SessionKey, token: FenceToken) -> list[Any]:
    """Matches the fence row while it is armed for `token`."""
    table = self._table
    return [
        *self._key(session),
        table.c.incarnation == token.incarnation,
        table.c.operation_id == token.operation_id,
        table.c.state == FenceState.ARMED,
    ]

  @staticmethod
  def _row(row: Any) -> Optional[FenceRow]:
    if row is None:
      return None
    return FenceRow(
        state=row.state,
        incarnation=int(row.incarnation),
        operation_id=row.operation_id,
        import_digest=row.import_digest,
        import_count=None
        if row.import_count is None
        else int(row.import_count),
    )

  async def read(self, session: SessionKey) -> Optional[FenceRow]:
    from sqlalchemy import select  # pylint: disable=g-import-not-at-top

    await self._ensure()
    async with self._service.db_engine.connect() as conn:
      row = (
          await conn.execute(select(self._table).where(*self._key(session)))
      ).first()
    return self._row(row)

  async def _upsert(
      self,
      session: SessionKey,
      token: FenceToken,
      state: str,
      below: int,
  ) -> bool:
    """Moves the fence to `(state, token)` if absent or below `below`."""
    # pylint: disable=g-import-not-at-top
    from sqlalchemy import exc as sa_exc
    from sqlalchemy import insert
    from sqlalchemy import update

    # pylint: enable=g-import-not-at-top
    await self._ensure()
    values = {
        'state': state,
        'incarnation': token.incarnation,
        'operation_id': token.operation_id,
        'import_digest': None,
        'import_count': None,
        'updated_at': now(),
    }
    engine = self._service.db_engine
    if engine.dialect.name in ('postgresql', 'sqlite'):
      # One statement, one transaction: insert, or move a fence below
      # `below`; the primary key serializes racers as before.
      # pylint: disable=g-import-not-at-top
      from sqlalchemy.dialects import postgresql
      from sqlalchemy.dialects import sqlite

      # pylint: enable=g-import-not-at-top
      dialect_insert: Any = (
          postgresql.insert
          if engine.dialect.name == 'postgresql'
          else sqlite.insert
      )
      stmt = dialect_insert(self._table).values(
          app_name=session.app_name,
          user_id=session.user_id,
          session_id=session.session_id,
          **values,
      )
      stmt = stmt.on_conflict_do_update(
          index_elements=['app_name', 'user_id', 'session_id'],
          set_=values,
          where=self._table.c.incarnation < below,
      )
      async with engine.begin() as conn:
        result = await conn.execute(stmt)
      return bool(result.rowcount == 1)
    async with engine.begin() as conn:
      result = await conn.execute(
          update(self._table)
          .where(*self._key(session), self._table.c.incarnation < below)
          .values(**values)
      )
      if result.rowcount == 1:
        return True
    try:
      async with engine.begin() as conn:
        await conn.execute(
            insert(self._table).values(
                app_name=session.app_name,
                user_id=session.user_id,
                session_id=session.session_id,
                **values,
            )
        )
      return True
    except sa_exc.IntegrityError:
      return False

  async def _retire_armed(self, session: SessionKey, token: FenceToken) -> bool:
    from sqlalchemy import update  # pylint: disable=g-import-not-at-top

    await self._ensure()
    async with self._service.db_engine.begin() as conn:
      result = await conn.execute(
          update(self._table)
          .where(*self._armed(session, token))
          .values(state=FenceState.RETIRED, updated_at=now())
      )
    return bool(result.rowcount == 1)

  async def _begin_fenced(self, connection: AsyncSession) -> None:
    del connection  # the ORM session opens its transaction on first use
    await self._ensure()

  async def _commit_fence(
      self,
      connection: AsyncSession,
      session: SessionKey,
      token: FenceToken,
      digest: str,
      count: int,
  ) -> bool:
    from sqlalchemy import update  # pylint: disable=g-import-not-at-top

    result = await connection.execute(
        update(self._table)
        .where(*self._armed(session, token))
        .values(
            state=FenceState.COMMITTED,
            import_digest=digest,
            import_count=count,
            updated_at=now(),
        )
    )
    return bool(result.rowcount == 1)  # type: ignore[attr-defined]

  async def _rollback(self, connection: AsyncSession) -> None:
    await connection.rollback()
