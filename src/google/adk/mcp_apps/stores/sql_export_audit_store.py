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

"""A durable `ExportAuditStore` on SQLAlchemy's async engine.

One row per export operation instance and status, holding identifiers
only; any database failure raises `ContractError`, so the export is
denied. Decisions: docs/decisions/issue25-audit-store.md.

Usage:

  store = SqlExportAuditStore(
      'postgresql+asyncpg://.../adk', retention_seconds=30 * 86400)
  await store.open()
  await store.append(record)
  await store.purge_expired(now=time.time())
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
import logging
import math
import re
from typing import Any
from typing import ClassVar
from typing import Optional
from typing import TypeVar
from typing import Union

from sqlalchemy import BigInteger
from sqlalchemy import CheckConstraint
from sqlalchemy import Column
from sqlalchemy import delete
from sqlalchemy import Double
from sqlalchemy import exc as sa_exc
from sqlalchemy import Index
from sqlalchemy import insert
from sqlalchemy import Integer
from sqlalchemy import MetaData
from sqlalchemy import select
from sqlalchemy import String
from sqlalchemy import Table
from sqlalchemy import UniqueConstraint
from sqlalchemy.ext.asyncio import AsyncEngine

from ..contracts.errors import ContractError
from ..contracts.export_audit_store import ExportAuditRecord
from ..contracts.export_audit_store import ExportAuditStatus
from ..contracts.scope import SessionKey
from ._sql import claim_table
from ._sql import ClaimedSqlStore
from ._sql import Clock

logger = logging.getLogger('google_adk.' + __name__)

TABLE_NAME = 'adk_mcp_apps_export_audit'
"""The audit records table."""
META_TABLE_NAME = 'adk_mcp_apps_export_audit_meta'
"""The table that claims the database for one namespace and revision."""
DEFAULT_NAMESPACE = 'adk/export-audit'
"""The namespace used when the deployment configures none."""
FORMAT_REVISION = 'sql-export-audit-v1'
"""The stored format's revision; changes when the format changes."""
DEFAULT_RETENTION_SECONDS = 30 * 86400.0
"""How long records are kept when the deployment configures nothing."""
REASON_PATTERN = re.compile(r'[a-z0-9][a-z0-9_.:-]{0,63}')
"""A non-empty reason must be a short code: no free text, no content."""

_KEY_LENGTH = 255
_STATUSES = tuple(s.value for s in ExportAuditStatus)
_T = TypeVar('_T')

_metadata = MetaData()
_records = Table(
    TABLE_NAME,
    _metadata,
    # Insertion order, so `records()` is oldest first even for equal stamps.
    Column(
        'seq',
        BigInteger().with_variant(Integer(), 'sqlite'),
        primary_key=True,
        autoincrement=True,
    ),
    Column('operation_instance_id', String(_KEY_LENGTH), nullable=False),
    Column('status', String(16), nullable=False),
    Column('principal_id', String(_KEY_LENGTH), nullable=False),
    Column('app_name', String(_KEY_LENGTH), nullable=False),
    Column('user_id', String(_KEY_LENGTH), nullable=False),
    Column('session_id', String(_KEY_LENGTH), nullable=False),
    Column('incarnation', BigInteger, nullable=False),
    Column('event_id', String(_KEY_LENGTH), nullable=False),
    Column('function_call_id', String(_KEY_LENGTH), nullable=False),
    Column('record_id', String(_KEY_LENGTH), nullable=False),
    Column('reason', String(64), nullable=False),
    Column('recorded_at', Double, nullable=False),
    UniqueConstraint(
        'operation_instance_id', 'status', name=f'uq_{TABLE_NAME}_instance'
    ),
    CheckConstraint(
        'status IN (' + ', '.join(f"'{s}'" for s in _STATUSES) + ')',
        name=f'ck_{TABLE_NAME}_status',
    ),
)
Index(
    f'ix_{TABLE_NAME}_incarnation',
    _records.c.app_name,
    _records.c.user_id,
    _records.c.session_id,
    _records.c.incarnation,
)
Index(f'ix_{TABLE_NAME}_recorded_at', _records.c.recorded_at)
_meta = claim_table(META_TABLE_NAME, _metadata)

_DOWN = (sa_exc.SQLAlchemyError, OSError, TimeoutError)
"""What a database that is down, unreachable or unwritable raises."""


def _check_text(value: object, name: str) -> None:
  if not isinstance(value, str) or not 0 < len(value) <= _KEY_LENGTH:
    raise ValueError(f'{name} must be a str of 1..{_KEY_LENGTH} characters')


def _check_incarnation(incarnation: object) -> None:
  if isinstance(incarnation, bool) or not isinstance(incarnation, int):
    raise TypeError('incarnation must be an int')
  if incarnation < 1:
    raise ValueError('incarnation must be at least 1')


def _check_session(session: object) -> None:
  if not isinstance(session, SessionKey):
    raise TypeError('session must be a SessionKey')
  for name in ('app_name', 'user_id', 'session_id'):
    _check_text(getattr(session, name), f'session.{name}')


def _check_record(record: object) -> None:
  if not isinstance(record, ExportAuditRecord):
    raise TypeError('record must be an ExportAuditRecord')
  if not isinstance(record.status, ExportAuditStatus):
    raise TypeError('record.status must be an ExportAuditStatus')
  for name in (
      'operation_instance_id',
      'principal_id',
      'event_id',
      'function_call_id',
      'record_id',
  ):
    _check_text(getattr(record, name), f'record.{name}')
  _check_session(record.session)
  _check_incarnation(record.incarnation)
  if not isinstance(record.reason, str) or (
      record.reason and not REASON_PATTERN.fullmatch(record.reason)
  ):
    raise ValueError(
        'record.reason must be empty or a short code matching'
        f' {REASON_PATTERN.pattern}'
    )
  _check_seconds(record.recorded_at, 'record.recorded_at')


def _check_seconds(seconds: object, name: str) -> float:
  if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
    raise TypeError(f'{name} must be seconds since the epoch')
  if not math.isfinite(seconds):
    raise ValueError(f'{name} must be finite')
  return float(seconds)


def _row_record(row: Any) -> ExportAuditRecord:
  return ExportAuditRecord(
      operation_instance_id=row.operation_instance_id,
      principal_id=row.principal_id,
      session=SessionKey(row.app_name, row.user_id, row.session_id),
      incarnation=int(row.incarnation),
      event_id=row.event_id,
      function_call_id=row.function_call_id,
      record_id=row.record_id,
      status=ExportAuditStatus(row.status),
      recorded_at=float(row.recorded_at),
      reason=row.reason,
  )


class SqlExportAuditStore(ClaimedSqlStore):
  """A durable, shared `ExportAuditStore`.

  Records are keyed by (operation instance, status): a repeat of a status
  already recorded for the instance is a no-op, whatever else it carries.
  The table has a column per identifier of `ExportAuditRecord` and none
  that could hold result content or secrets; a non-empty `reason` must be
  a short code (`REASON_PATTERN`). Every operation that fails in the
  database (unreachable, stopped, locked, unwritable) raises
  `ContractError`; `append`'s caller denies the export on it.

  Attributes:
    engine: The async engine.
    revision: The stored format's revision, `FORMAT_REVISION`.
    retention_seconds: How long a record is kept after `recorded_at`.
  """

  revision: ClassVar[str] = FORMAT_REVISION
  default_namespace: ClassVar[str] = DEFAULT_NAMESPACE
  _schema = _metadata
  _claim = _meta
  _lock_name = TABLE_NAME

  def __init__(
      self,
      url: Union[str, AsyncEngine],
      *,
      namespace: Optional[str] = None,
      retention_seconds: float = DEFAULT_RETENTION_SECONDS,
      clock: Optional[Clock] = None,
      engine_kwargs: Optional[Mapping[str, Any]] = None,
  ) -> None:
    """Constructs the store; `open()` (or the first operation) opens it.

    Args:
      url: A SQLAlchemy async URL (`sqlite+aiosqlite:///<file>` or
        `postgresql+asyncpg://...`), or an engine, which the caller keeps
        owning.
      namespace: The stable name of the record space; the database is
        claimed for it at first open and refused to any other.
      retention_seconds: How long a record is kept; `purge_expired(now=)`
        removes records with `recorded_at + retention_seconds <= now`.
      clock: Returns the current timezone-aware time (the claim stamp).
      engine_kwargs: Passed to `create_async_engine` for a URL.

    Raises:
      ValueError: For an in-memory SQLite URL, an empty namespace or a
        retention that is not a positive finite number.
    """
    retention = _check_seconds(retention_seconds, 'retention_seconds')
    if retention <= 0:
      raise ValueError('retention_seconds must be positive')
    super().__init__(
        url, namespace=namespace, clock=clock, engine_kwargs=engine_kwargs
    )
    self.retention_seconds = retention

  # -- lifecycle ---------------------------------------------------------------

  async def open(self) -> None:
    """Creates the tables if missing and claims or checks the database.

    Safe to call concurrently from several workers and repeatedly.

    Raises:
      ContractError: The database is unreachable, or claimed by another
        namespace or revision.
    """
    if self._opened:
      return
    try:
      problems = await self._create_and_claim()
    except _DOWN as e:
      raise ContractError(
          f'export audit store unavailable: {type(e).__name__}'
      ) from e
    if problems:
      raise ContractError(
          'export audit store database incompatible: ' + '; '.join(problems)
      )
    self._opened = True

  async def __aenter__(self) -> SqlExportAuditStore:
    await self.open()
    return self

  async def __aexit__(self, *exc_info: object) -> None:
    await self.aclose()

  async def _guarded(self, what: str, run: Callable[[], Awaitable[_T]]) -> _T:
    """Opens the store and runs `run`, mapping database failures."""
    await self.open()
    try:
      return await run()
    except _DOWN as e:
      # The exception text may quote statement parameters; log the type.
      logger.warning(
          'Export audit store: %s failed (%s)', what, type(e).__name__
      )
      raise ContractError(
          f'export audit {what} failed: {type(e).__name__}'
      ) from e

  # -- the contract ------------------------------------------------------------

  async def append(self, record: ExportAuditRecord) -> None:
    """Writes `record` durably; a repeat of the same status is a no-op.

    Args:
      record: The record; every identifier a str of 1..255 characters.

    Raises:
      ContractError: The write failed (the store is down, unreachable or
        unwritable); the caller denies the export.
      TypeError: `record` is malformed.
      ValueError: `record` is malformed (a reason that is not a code).
    """
    _check_record(record)

    async def run() -> None:
      try:
        async with self.engine.begin() as conn:
          await conn.execute(
              insert(_records).values(
                  operation_instance_id=record.operation_instance_id,
                  status=record.status.value,
                  principal_id=record.principal_id,
                  app_name=record.session.app_name,
                  user_id=record.session.user_id,
                  session_id=record.session.session_id,
                  incarnation=record.incarnation,
                  event_id=record.event_id,
                  function_call_id=record.function_call_id,
                  record_id=record.record_id,
                  reason=record.reason,
                  recorded_at=float(record.recorded_at),
              )
          )
      except sa_exc.IntegrityError:
        # A retry, or a concurrent append of the same status that won.
        # Confirm the row is there; anything else is a real failure.
        async with self.engine.connect() as conn:
          found = (
              await conn.execute(
                  select(_records.c.seq).where(
                      _records.c.operation_instance_id
                      == record.operation_instance_id,
                      _records.c.status == record.status.value,
                  )
              )
          ).first()
        if found is None:
          raise

    await self._guarded('append', run)

  async def records(
      self, operation_instance_id: str
  ) -> tuple[ExportAuditRecord, ...]:
    """The records of one export operation, oldest first.

    Raises:
      ContractError: The read failed.
    """
    if not isinstance(operation_instance_id, str):
      raise TypeError('operation_instance_id must be a str')

    async def run() -> tuple[ExportAuditRecord, ...]:
      async with self.engine.connect() as conn:
        rows = (
            await conn.execute(
                select(_records)
                .where(
                    _records.c.operation_instance_id == operation_instance_id
                )
                .order_by(_records.c.seq)
            )
        ).all()
      return tuple(_row_record(row) for row in rows)

    return await self._guarded('read', run)

  async def delete_incarnation(
      self, session: SessionKey, incarnation: int
  ) -> int:
    """Deletes every record of one Session incarnation; idempotent.

    Returns:
      How many records this call deleted (0 when repeated).

    Raises:
      ContractError: The delete failed.
    """
    _check_session(session)
    _check_incarnation(incarnation)

    async def run() -> int:
      async with self.engine.begin() as conn:
        result = await conn.execute(
            delete(_records).where(
                _records.c.app_name == session.app_name,
                _records.c.user_id == session.user_id,
                _records.c.session_id == session.session_id,
                _records.c.incarnation == incarnation,
            )
        )
      return int(result.rowcount)

    return await self._guarded('delete', run)

  async def purge_expired(self, *, now: float) -> int:
    """Deletes records past the retention; returns how many.

    A record expires when `recorded_at + retention_seconds <= now`.

    Raises:
      ContractError: The delete failed.
    """
    cutoff = _check_seconds(now, 'now') - self.retention_seconds

    async def run() -> int:
      async with self.engine.begin() as conn:
        result = await conn.execute(
            delete(_records).where(_records.c.recorded_at <= cutoff)
        )
      return int(result.rowcount)

    return await self._guarded('purge', run)
