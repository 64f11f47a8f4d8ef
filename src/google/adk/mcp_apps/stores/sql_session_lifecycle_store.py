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

"""A durable `SessionLifecycleStore` on SQLAlchemy's async engine.

Every app-enabled Session key carries a monotonic incarnation and a
lifecycle state; each transition is one compare-and-set statement, so two
racing transitions never both succeed. Design: docs/design/stores.md.

Usage:

  store = SqlSessionLifecycleStore('sqlite+aiosqlite:///lifecycle.db')
  record = await store.read(key)
  record = await store.reserve_creation(
      key, expected=record, operation_id='op-1'
  )
"""

from __future__ import annotations

from collections.abc import Mapping
import json
import logging
from typing import Any
from typing import ClassVar
from typing import Optional

from sqlalchemy import BigInteger
from sqlalchemy import Boolean
from sqlalchemy import Column
from sqlalchemy import exc as sa_exc
from sqlalchemy import insert
from sqlalchemy import MetaData
from sqlalchemy import select
from sqlalchemy import String
from sqlalchemy import Table
from sqlalchemy import Text
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from ..contracts.scope import SessionKey
from ..contracts.session_lifecycle_store import CreationReceipt
from ..contracts.session_lifecycle_store import LifecycleConflictError
from ..contracts.session_lifecycle_store import LifecycleRecord
from ..contracts.session_lifecycle_store import LifecycleState
from ..errors import McpAppsError
from ._sql import claim_table
from ._sql import ClaimedSqlStore
from ._sql import UtcDateTime

logger = logging.getLogger('google_adk.' + __name__)

TABLE_NAME = 'adk_mcp_apps_session_lifecycle'
"""The lifecycle records table."""
META_TABLE_NAME = 'adk_mcp_apps_session_lifecycle_meta'
"""The table that claims the database for one namespace and revision."""
DEFAULT_NAMESPACE = 'adk/session-lifecycle'
"""The namespace used when the deployment configures none."""
FORMAT_REVISION = 'sql-session-lifecycle-v1'
"""The stored format's revision; changes when the format changes."""

_CASCADE_ATTEMPTS = 16
_KEY_LENGTH = 255


class SessionLifecycleStoreIncompatibleError(McpAppsError):
  """The database is claimed by another namespace or format revision.

  Attributes:
    problems: Each mismatch found.
  """

  def __init__(self, problems: tuple[str, ...]) -> None:
    self.problems = problems
    super().__init__(
        'Session lifecycle store is incompatible with its database: '
        + '; '.join(problems)
    )


_metadata = MetaData()
_records = Table(
    TABLE_NAME,
    _metadata,
    Column('app_name', String(_KEY_LENGTH), primary_key=True),
    Column('user_id', String(_KEY_LENGTH), primary_key=True),
    Column('session_id', String(_KEY_LENGTH), primary_key=True),
    Column('state', String(16), nullable=False),
    Column('incarnation', BigInteger, nullable=False),
    Column('operation_id', String(_KEY_LENGTH), nullable=True),
    Column('receipt_operation_id', String(_KEY_LENGTH), nullable=True),
    Column('receipt_incarnation', BigInteger, nullable=True),
    Column('receipt_digest', String(128), nullable=True),
    Column('adopted', Boolean, nullable=False),
    Column('abandoned', Boolean, nullable=False),
    Column('cascade_steps', Text, nullable=False),
    Column('version', BigInteger, nullable=False),
    Column('updated_at', UtcDateTime, nullable=False),
)
_meta = claim_table(META_TABLE_NAME, _metadata)


def _key_clause(session: SessionKey) -> list[ColumnElement[bool]]:
  return [
      _records.c.app_name == session.app_name,
      _records.c.user_id == session.user_id,
      _records.c.session_id == session.session_id,
  ]


def _check_key(session: SessionKey) -> None:
  if not isinstance(session, SessionKey):
    raise TypeError('session must be a SessionKey')
  for value in (session.app_name, session.user_id, session.session_id):
    if len(value) > _KEY_LENGTH:
      raise ValueError(
          f'Session key parts must be at most {_KEY_LENGTH} characters'
      )


def _check_incarnation(incarnation: int) -> None:
  if isinstance(incarnation, bool) or not isinstance(incarnation, int):
    raise TypeError('incarnation must be an int')
  if incarnation < 1:
    raise ValueError('incarnation must be at least 1')


def _check_id(value: str, name: str) -> None:
  if not isinstance(value, str) or not 0 < len(value) <= _KEY_LENGTH:
    raise ValueError(f'{name} must be a str of 1..{_KEY_LENGTH} characters')


def _record(session: SessionKey, row: Any) -> LifecycleRecord:
  if row is None:
    return LifecycleRecord(session, LifecycleState.ABSENT)
  receipt = None
  if row.receipt_operation_id is not None:
    receipt = CreationReceipt(
        operation_id=row.receipt_operation_id,
        incarnation=int(row.receipt_incarnation),
        import_digest=row.receipt_digest,
    )
  return LifecycleRecord(
      session=session,
      state=LifecycleState(row.state),
      incarnation=int(row.incarnation),
      operation_id=row.operation_id,
      receipt=receipt,
      adopted=bool(row.adopted),
      cascade_steps=frozenset(json.loads(row.cascade_steps)),
      abandoned=bool(row.abandoned),
  )


class _Row:
  """Attribute access over inserted column values, shaped like a row."""

  def __init__(self, values: Mapping[str, Any]) -> None:
    self.__dict__.update(values)


class SqlSessionLifecycleStore(ClaimedSqlStore):
  """A durable, shared `SessionLifecycleStore`.

  See the module docstring for the tables and transitions. Typical use::

    store = SqlSessionLifecycleStore(
        'postgresql+asyncpg://.../adk', namespace='prod/session-lifecycle')
    await store.open()
    profile = McpAppsHostProfile(..., session_lifecycle_store=store)

  Attributes:
    engine: The async engine.
    revision: The stored format's revision, `FORMAT_REVISION`.
  """

  revision: ClassVar[str] = FORMAT_REVISION
  default_namespace: ClassVar[str] = DEFAULT_NAMESPACE
  _schema = _metadata
  _claim = _meta
  _lock_name = TABLE_NAME

  # -- lifecycle ---------------------------------------------------------------

  async def open(self) -> None:
    """Creates the tables if missing and claims or checks the database.

    Safe to call concurrently from several workers and repeatedly.

    Raises:
      SessionLifecycleStoreIncompatibleError: The database is claimed by
        another namespace or revision.
    """
    if self._opened:
      return
    problems = await self._create_and_claim()
    if problems:
      raise SessionLifecycleStoreIncompatibleError(problems)
    await self._use_wal()
    self._opened = True

  async def _use_wal(self) -> None:
    """Switches a SQLite file to write-ahead logging (persistent per file).

    WAL keeps `synchronous=FULL` durability (every commit is fsynced before
    it returns) and crash safety (the log is replayed by the next opener,
    in any process), but commits with one append instead of the rollback
    journal's write-and-sync of journal and database. A database another
    process holds locked keeps its mode; the store works in either.
    """
    if self.engine.dialect.name != 'sqlite':
      return
    try:
      async with self.engine.connect() as conn:
        await conn.exec_driver_sql('PRAGMA journal_mode=WAL')
    except sa_exc.OperationalError:
      logger.info('Lifecycle store: SQLite WAL mode not enabled (busy)')

  async def __aenter__(self) -> SqlSessionLifecycleStore:
    await self.open()
    return self

  async def __aexit__(self, *exc_info: object) -> None:
    await self.aclose()

  # -- the contract ------------------------------------------------------------

  async def read(self, session: SessionKey) -> LifecycleRecord:
    """The current record; an `ABSENT` record if there is none."""
    _check_key(session)
    await self.open()
    async with self.engine.connect() as conn:
      return await self._read(conn, session)

  async def reserve_creation(
      self, session: SessionKey, *, expected: LifecycleRecord, operation_id: str
  ) -> LifecycleRecord:
    """`ABSENT` or `DELETED(n)` (as `expected`) to `CREATING(n+1)`.

    Raises:
      LifecycleConflictError: `expected` is neither, or the store holds
        another state or incarnation (e.g. a racing creator won).
    """
    _check_key(session)
    _check_id(operation_id, 'operation_id')
    await self.open()
    if expected.state is LifecycleState.ABSENT and expected.incarnation == 0:
      values = self._fresh_values(
          state=LifecycleState.CREATING,
          incarnation=1,
          operation_id=operation_id,
          adopted=False,
      )
      return await self._insert(session, values, 'reserve creation')
    if expected.state is not LifecycleState.DELETED:
      async with self.engine.connect() as conn:
        current = await self._read(conn, session)
      raise LifecycleConflictError(
          current,
          'creation must expect ABSENT or DELETED(n), not'
          f' {expected.state.value}({expected.incarnation})',
      )
    _check_incarnation(expected.incarnation)
    return await self._cas(
        session,
        LifecycleState.DELETED,
        expected.incarnation,
        {
            'state': LifecycleState.CREATING.value,
            'incarnation': expected.incarnation + 1,
            'operation_id': operation_id,
            'receipt_operation_id': None,
            'receipt_incarnation': None,
            'receipt_digest': None,
            'adopted': False,
            'abandoned': False,
            'cascade_steps': '[]',
        },
        'reserve creation',
    )

  async def activate(
      self, session: SessionKey, *, receipt: CreationReceipt
  ) -> LifecycleRecord:
    """`CREATING(n)` to `ACTIVE(n)` if the receipt names the reservation.

    Raises:
      LifecycleConflictError: Not `CREATING(receipt.incarnation)` of
        `receipt.operation_id`.
    """
    _check_key(session)
    _check_incarnation(receipt.incarnation)
    _check_id(receipt.operation_id, 'receipt.operation_id')
    if not isinstance(receipt.import_digest, str) or not receipt.import_digest:
      raise ValueError('receipt.import_digest must be a non-empty str')
    await self.open()
    return await self._cas(
        session,
        LifecycleState.CREATING,
        receipt.incarnation,
        {
            'state': LifecycleState.ACTIVE.value,
            'receipt_operation_id': receipt.operation_id,
            'receipt_incarnation': receipt.incarnation,
            'receipt_digest': receipt.import_digest,
        },
        'activate: the receipt must name the reserving creator',
        operation_id=receipt.operation_id,
    )

  async def adopt_existing(
      self, session: SessionKey, *, adoption_id: str
  ) -> LifecycleRecord:
    """Migration: `ABSENT` to `ACTIVE(1)` with the adoption marker.

    A retry with the same `adoption_id` after the adoption committed
    returns the adopted record.

    Raises:
      LifecycleConflictError: The key is not `ABSENT` (and not already
        adopted by `adoption_id`).
    """
    _check_key(session)
    _check_id(adoption_id, 'adoption_id')
    await self.open()
    values = self._fresh_values(
        state=LifecycleState.ACTIVE,
        incarnation=1,
        operation_id=adoption_id,
        adopted=True,
    )
    try:
      return await self._insert(session, values, 'adopt existing Session')
    except LifecycleConflictError as e:
      current = e.actual
      if (
          current.adopted
          and current.state is LifecycleState.ACTIVE
          and current.incarnation == 1
          and current.operation_id == adoption_id
      ):
        return current
      raise

  async def begin_deletion(
      self, session: SessionKey, *, incarnation: int
  ) -> LifecycleRecord:
    """`ACTIVE(n)` to `DELETING(n)`; new admission fails from here on."""
    _check_key(session)
    _check_incarnation(incarnation)
    await self.open()
    return await self._cas(
        session,
        LifecycleState.ACTIVE,
        incarnation,
        {'state': LifecycleState.DELETING.value, 'cascade_steps': '[]'},
        'begin deletion',
    )

  async def record_cascade_step(
      self, session: SessionKey, *, incarnation: int, step: str
  ) -> LifecycleRecord:
    """Records one completed cascade step of `DELETING(n)`; idempotent."""
    _check_key(session)
    _check_incarnation(incarnation)
    _check_id(step, 'step')
    await self.open()
    for _ in range(_CASCADE_ATTEMPTS):
      async with self.engine.begin() as conn:
        row = await self._row(conn, session)
        current = _record(session, row)
        if (
            current.state is not LifecycleState.DELETING
            or current.incarnation != incarnation
        ):
          raise LifecycleConflictError(current, 'record cascade step')
        if step in current.cascade_steps:
          return current
        steps = json.dumps(sorted(current.cascade_steps | {step}))
        updated = await self._update_returning(
            conn,
            [
                *_key_clause(session),
                _records.c.version == row.version,
                _records.c.state == LifecycleState.DELETING.value,
                _records.c.incarnation == incarnation,
            ],
            {'cascade_steps': steps},
        )
        if updated is not None:
          return _record(session, updated)
    raise LifecycleConflictError(
        await self.read(session), 'record cascade step kept racing'
    )

  async def complete_deletion(
      self, session: SessionKey, *, incarnation: int
  ) -> LifecycleRecord:
    """`DELETING(n)` to `DELETED(n)`: the durable completion mark."""
    _check_key(session)
    _check_incarnation(incarnation)
    await self.open()
    return await self._cas(
        session,
        LifecycleState.DELETING,
        incarnation,
        {'state': LifecycleState.DELETED.value},
        'complete deletion',
    )

  async def abandon_creation(
      self, session: SessionKey, *, incarnation: int, operation_id: str
  ) -> LifecycleRecord:
    """Recovery: `CREATING(n)` of `operation_id` to `DELETED(n)`, abandoned.

    Call only after the creation fence of `(n, operation_id)` is retired in
    the Session backend, so the retired creator cannot commit any more.
    """
    _check_key(session)
    _check_incarnation(incarnation)
    _check_id(operation_id, 'operation_id')
    await self.open()
    return await self._cas(
        session,
        LifecycleState.CREATING,
        incarnation,
        {'state': LifecycleState.DELETED.value, 'abandoned': True},
        'abandon creation: another creator holds CREATING',
        operation_id=operation_id,
    )

  # -- internals ---------------------------------------------------------------

  def _fresh_values(
      self,
      *,
      state: LifecycleState,
      incarnation: int,
      operation_id: str,
      adopted: bool,
  ) -> dict[str, Any]:
    return {
        'state': state.value,
        'incarnation': incarnation,
        'operation_id': operation_id,
        'receipt_operation_id': None,
        'receipt_incarnation': None,
        'receipt_digest': None,
        'adopted': adopted,
        'abandoned': False,
        'cascade_steps': '[]',
        'version': 1,
        'updated_at': self._now(),
    }

  async def _insert(
      self, session: SessionKey, values: dict[str, Any], detail: str
  ) -> LifecycleRecord:
    try:
      async with self.engine.begin() as conn:
        await conn.execute(
            insert(_records).values(
                app_name=session.app_name,
                user_id=session.user_id,
                session_id=session.session_id,
                **values,
            )
        )
      # The committed row is exactly `values`: no read-back needed.
      return _record(session, _Row(values))
    except sa_exc.IntegrityError:
      pass
    async with self.engine.connect() as conn:
      current = await self._read(conn, session)
    raise LifecycleConflictError(current, detail)

  async def _cas(
      self,
      session: SessionKey,
      state: LifecycleState,
      incarnation: int,
      values: dict[str, Any],
      detail: str,
      *,
      operation_id: Optional[str] = None,
  ) -> LifecycleRecord:
    conditions = [
        *_key_clause(session),
        _records.c.state == state.value,
        _records.c.incarnation == incarnation,
    ]
    if operation_id is not None:
      conditions.append(_records.c.operation_id == operation_id)
    async with self.engine.begin() as conn:
      updated = await self._update_returning(conn, conditions, values)
      if updated is not None:
        return _record(session, updated)
      current = await self._read(conn, session)
    raise LifecycleConflictError(
        current, f'{detail}; expected {state.value}({incarnation})'
    )

  async def _update_returning(
      self,
      conn: AsyncConnection,
      conditions: list[ColumnElement[bool]],
      values: dict[str, Any],
  ) -> Any:
    """Updates the row matching `conditions`, bumping its version.

    RETURNING gives the new row from the compare-and-set statement itself
    (SQLite >= 3.35, PostgreSQL); only a loser reads the row.

    Returns:
      The updated row, or None if no row matched.
    """
    return (
        await conn.execute(
            update(_records)
            .where(*conditions)
            .values(
                **values,
                version=_records.c.version + 1,
                updated_at=self._now(),
            )
            .returning(*_records.c)
        )
    ).first()

  @staticmethod
  async def _row(conn: AsyncConnection, session: SessionKey) -> Any:
    return (
        await conn.execute(select(_records).where(*_key_clause(session)))
    ).first()

  async def _read(
      self, conn: AsyncConnection, session: SessionKey
  ) -> LifecycleRecord:
    return _record(session, await self._row(conn, session))
