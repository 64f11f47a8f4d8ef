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

"""A durable `SealedResultStore` on SQLAlchemy's async engine.

Sealed envelopes are immutable per operation instance, resolved only in
their exact scope with a digest check, committed once their Event is
appended and garbage-collected when orphaned. Design:
docs/design/stores.md.

Usage:

  store = SqlSealedResultStore('postgresql+asyncpg://.../adk')
  await store.open()
  envelope = await store.resolve(scope, ref)
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
import datetime
import enum
import hmac
import logging
import math
import secrets
from typing import Any
from typing import ClassVar
from typing import Optional

from sqlalchemy import BigInteger
from sqlalchemy import Column
from sqlalchemy import delete
from sqlalchemy import exc as sa_exc
from sqlalchemy import Index
from sqlalchemy import insert
from sqlalchemy import LargeBinary
from sqlalchemy import MetaData
from sqlalchemy import select
from sqlalchemy import String
from sqlalchemy import Table
from sqlalchemy import update
from sqlalchemy.sql.elements import ColumnElement

from ..contracts.scope import SessionKey
from ..contracts.sealed_result_store import envelope_digest
from ..contracts.sealed_result_store import IsActiveOperation
from ..contracts.sealed_result_store import IsReferenced
from ..contracts.sealed_result_store import SealedEnvelope
from ..contracts.sealed_result_store import SealedRecordScope
from ..contracts.sealed_result_store import SealedResultReason
from ..contracts.sealed_result_store import SealedResultRef
from ..contracts.sealed_result_store import SealedResultStoreError
from ..contracts.sealed_result_store import SealedResultStoreIncompatibleError
from ..contracts.sealed_result_store import SealedStoreCapability
from ._sql import claim_table
from ._sql import ClaimedSqlStore
from ._sql import UtcDateTime

logger = logging.getLogger('google_adk.' + __name__)

TABLE_NAME = 'adk_mcp_apps_sealed_results'
"""The records table."""
META_TABLE_NAME = 'adk_mcp_apps_sealed_results_meta'
"""The table that claims the database for one namespace and revision."""
DEFAULT_NAMESPACE = 'adk/sealed-results'
"""The namespace used when the deployment configures none."""
FORMAT_REVISION = 'sql-sealed-v1'
"""The stored format's revision; changes when the format changes."""
SCHEMA_VERSION = 1
"""The reference schema version this store issues and resolves."""
RECORD_ID_BYTES = 32
"""Random bytes per record id (256 bits; at least 128 are required)."""

_CREATE_ATTEMPTS = 3


class SealedRecordState(str, enum.Enum):
  """The lifecycle state of a stored record."""

  PENDING = 'pending'
  """Created; no appended Event is known to reference it yet."""
  COMMITTED = 'committed'
  """Its Event was appended; only the deletion cascade removes it."""


_metadata = MetaData()
_records = Table(
    TABLE_NAME,
    _metadata,
    Column('record_id', String(64), primary_key=True),
    Column('operation_instance_id', String(255), nullable=False, unique=True),
    Column('app_name', String, nullable=False),
    Column('user_id', String, nullable=False),
    Column('session_id', String, nullable=False),
    Column('incarnation', BigInteger, nullable=False),
    Column('event_id', String, nullable=False),
    Column('function_call_id', String, nullable=False),
    Column('sealed_result', LargeBinary, nullable=False),
    Column('refresh_record', LargeBinary, nullable=True),
    Column('digest', LargeBinary(32), nullable=False),
    Column('state', String(16), nullable=False),
    Column('created_at', UtcDateTime, nullable=False),
    Column('expires_at', UtcDateTime, nullable=False),
    Column('committed_at', UtcDateTime, nullable=True),
)
Index(
    f'ix_{TABLE_NAME}_incarnation',
    _records.c.app_name,
    _records.c.user_id,
    _records.c.session_id,
    _records.c.incarnation,
)
Index(f'ix_{TABLE_NAME}_gc', _records.c.state, _records.c.expires_at)
_meta = claim_table(META_TABLE_NAME, _metadata)


_envelope_digest = envelope_digest
"""The digest stored with each record (its format is part of the revision)."""


def _timestamp(seconds: float, name: str) -> datetime.datetime:
  if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
    raise TypeError(f'{name} must be seconds since the epoch')
  if not math.isfinite(seconds):
    raise ValueError(f'{name} must be finite')
  return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)


def _scope_clause(scope: SealedRecordScope) -> list[ColumnElement[bool]]:
  session = scope.session
  return [
      _records.c.app_name == session.app_name,
      _records.c.user_id == session.user_id,
      _records.c.session_id == session.session_id,
      _records.c.incarnation == scope.incarnation,
      _records.c.event_id == scope.event_id,
      _records.c.function_call_id == scope.function_call_id,
  ]


def _record_clause(
    scope: SealedRecordScope, ref: SealedResultRef
) -> list[ColumnElement[bool]]:
  return [_records.c.record_id == ref.record_id, *_scope_clause(scope)]


def _not_found() -> SealedResultStoreError:
  return SealedResultStoreError(
      SealedResultReason.NOT_FOUND, 'no sealed record in this scope'
  )


def _row_scope(row: Any) -> SealedRecordScope:
  return SealedRecordScope(
      session=SessionKey(row.app_name, row.user_id, row.session_id),
      incarnation=int(row.incarnation),
      event_id=row.event_id,
      function_call_id=row.function_call_id,
  )


def _check_scope(scope: SealedRecordScope) -> None:
  if not isinstance(scope, SealedRecordScope):
    raise TypeError('scope must be a SealedRecordScope')
  if isinstance(scope.incarnation, bool) or not isinstance(
      scope.incarnation, int
  ):
    raise TypeError('scope.incarnation must be an int')
  for name in ('event_id', 'function_call_id'):
    value = getattr(scope, name)
    if not isinstance(value, str) or not value:
      raise ValueError(f'scope.{name} must be a non-empty str')


class SqlSealedResultStore(ClaimedSqlStore):
  """A durable, shared `ReferenceTrackingSealedResultStore`.

  See the module docstring for the state machine. Typical use::

    store = SqlSealedResultStore(
        'postgresql+asyncpg://.../adk', namespace='prod/sealed-results')
    await store.open()
    validate_sealed_store(store, 'prod/sealed-results', FORMAT_REVISION)
    profile = McpAppsHostProfile(..., sealed_result_store=store)

  `persistence_capabilities` is empty until `open()` has created the
  schema and claimed the database, so an unopened store never validates.

  Attributes:
    engine: The async engine.
    revision: The stored format's revision, `FORMAT_REVISION`.
  """

  revision: ClassVar[str] = FORMAT_REVISION
  default_namespace: ClassVar[str] = DEFAULT_NAMESPACE
  _schema = _metadata
  _claim = _meta
  _lock_name = TABLE_NAME
  _before_insert: Optional[Callable[[], Awaitable[Any]]] = None
  """Test seam: awaited between finding no record and inserting one."""

  @property
  def persistence_capabilities(self) -> frozenset[SealedStoreCapability]:
    """Every capability once opened; none before (fails closed)."""
    return frozenset(SealedStoreCapability) if self._opened else frozenset()

  # -- lifecycle ---------------------------------------------------------------

  async def open(self) -> None:
    """Creates the tables if missing and claims or checks the database.

    Safe to call concurrently from several workers and repeatedly.

    Raises:
      SealedResultStoreIncompatibleError: The database is claimed by
        another namespace or revision.
      sqlalchemy.exc.SQLAlchemyError: If the database is unreachable.
    """
    if self._opened:
      return
    problems = await self._create_and_claim()
    if problems:
      raise SealedResultStoreIncompatibleError(problems)
    self._opened = True

  async def __aenter__(self) -> SqlSealedResultStore:
    await self.open()
    return self

  async def __aexit__(self, *exc_info: object) -> None:
    await self.aclose()

  # -- the contract ------------------------------------------------------------

  async def create(
      self,
      scope: SealedRecordScope,
      *,
      operation_instance_id: str,
      envelope: SealedEnvelope,
      expires_at: float,
  ) -> SealedResultRef:
    """Creates a pending record immutably, once per operation instance.

    Args:
      scope: Where the record belongs.
      operation_instance_id: The admitted outer request's instance id.
      envelope: The opaque bytes to seal.
      expires_at: When the record becomes collectable while pending, in
        seconds since the epoch. A retry does not change it.

    Returns:
      The new reference, or the existing one for a retry with the same
      instance, scope and bytes.

    Raises:
      SealedResultStoreError: `CONFLICT`: the instance already sealed other
        bytes, or sealed them in another scope; the record is unchanged.
    """
    _check_scope(scope)
    if not isinstance(operation_instance_id, str) or not (
        0 < len(operation_instance_id) <= 255
    ):
      raise ValueError('operation_instance_id must be a str of 1..255 chars')
    if not isinstance(envelope.sealed_result, bytes) or not isinstance(
        envelope.refresh_record, (bytes, type(None))
    ):
      raise TypeError('envelope parts must be bytes')
    expiry = _timestamp(expires_at, 'expires_at')
    await self.open()
    digest = _envelope_digest(envelope)
    # Insert first: a first create (the common case) is one transaction.
    # A unique-key conflict means the instance already sealed (a retry, or a
    # concurrent create that won), or, with odds of 2**-256, the record id
    # collided: read the instance's row and decide.
    for _ in range(_CREATE_ATTEMPTS):
      if self._before_insert is not None:
        await self._before_insert()
      record_id = secrets.token_urlsafe(RECORD_ID_BYTES)
      try:
        async with self.engine.begin() as conn:
          await conn.execute(
              insert(_records).values(
                  record_id=record_id,
                  operation_instance_id=operation_instance_id,
                  app_name=scope.session.app_name,
                  user_id=scope.session.user_id,
                  session_id=scope.session.session_id,
                  incarnation=scope.incarnation,
                  event_id=scope.event_id,
                  function_call_id=scope.function_call_id,
                  sealed_result=envelope.sealed_result,
                  refresh_record=envelope.refresh_record,
                  digest=digest,
                  state=SealedRecordState.PENDING.value,
                  created_at=self._now(),
                  expires_at=expiry,
                  committed_at=None,
              )
          )
      except sa_exc.IntegrityError:
        logger.info(
            'A concurrent sealed-result create won (or this is a retry);'
            ' re-reading'
        )
        existing = await self._by_instance(operation_instance_id)
        if existing is not None:
          return self._adopt(existing, scope, digest)
        logger.info('A sealed-result record id collided; retrying')
        continue
      return SealedResultRef(record_id, SCHEMA_VERSION)
    raise SealedResultStoreError(
        SealedResultReason.CONFLICT,
        'the sealed record could not be created after repeated collisions',
    )

  async def _by_instance(self, operation_instance_id: str) -> Any:
    async with self.engine.connect() as conn:
      return (
          await conn.execute(
              select(
                  _records.c.record_id,
                  _records.c.app_name,
                  _records.c.user_id,
                  _records.c.session_id,
                  _records.c.incarnation,
                  _records.c.event_id,
                  _records.c.function_call_id,
                  _records.c.digest,
              ).where(_records.c.operation_instance_id == operation_instance_id)
          )
      ).first()

  @staticmethod
  def _adopt(
      row: Any, scope: SealedRecordScope, digest: bytes
  ) -> SealedResultRef:
    if _row_scope(row) != scope:
      raise SealedResultStoreError(
          SealedResultReason.CONFLICT,
          'the operation instance already sealed a record in another scope',
      )
    if not hmac.compare_digest(bytes(row.digest), digest):
      raise SealedResultStoreError(
          SealedResultReason.CONFLICT,
          'the operation instance already sealed different content',
      )
    return SealedResultRef(row.record_id, SCHEMA_VERSION)

  async def resolve(
      self, scope: SealedRecordScope, ref: SealedResultRef
  ) -> SealedEnvelope:
    """Returns a record's envelope after verifying scope and digest.

    Raises:
      SealedResultStoreError: `NOT_FOUND`: no such record in exactly this
        scope (tenant, incarnation, Event and function call), or an unknown
        schema version; `CORRUPT`: the stored bytes fail the digest.
    """
    _check_scope(scope)
    if ref.schema_version != SCHEMA_VERSION or not isinstance(
        ref.record_id, str
    ):
      raise _not_found()
    await self.open()
    async with self.engine.connect() as conn:
      row = (
          await conn.execute(
              select(
                  _records.c.sealed_result,
                  _records.c.refresh_record,
                  _records.c.digest,
              ).where(*_record_clause(scope, ref))
          )
      ).first()
    if row is None:
      raise _not_found()
    envelope = SealedEnvelope(
        bytes(row.sealed_result),
        None if row.refresh_record is None else bytes(row.refresh_record),
    )
    if not hmac.compare_digest(bytes(row.digest), _envelope_digest(envelope)):
      logger.error('Sealed record failed its digest; releasing nothing')
      raise SealedResultStoreError(
          SealedResultReason.CORRUPT, 'sealed record failed its digest'
      )
    return envelope

  async def mark_referenced(
      self, scope: SealedRecordScope, ref: SealedResultRef
  ) -> None:
    """Marks a record committed (its Event is appended); idempotent.

    Raises:
      SealedResultStoreError: `NOT_FOUND`: no such record in exactly this
        scope.
    """
    _check_scope(scope)
    if ref.schema_version != SCHEMA_VERSION:
      raise _not_found()
    await self.open()
    async with self.engine.begin() as conn:
      await conn.execute(
          update(_records)
          .where(
              _records.c.record_id == ref.record_id,
              _records.c.state == SealedRecordState.PENDING.value,
              *_scope_clause(scope),
          )
          .values(
              state=SealedRecordState.COMMITTED.value, committed_at=self._now()
          )
      )
      found = (
          await conn.execute(
              select(_records.c.record_id).where(*_record_clause(scope, ref))
          )
      ).first()
    if found is None:
      raise _not_found()

  async def state(
      self, scope: SealedRecordScope, ref: SealedResultRef
  ) -> SealedRecordState:
    """A record's state (diagnostics and tests).

    Raises:
      SealedResultStoreError: `NOT_FOUND`: no such record in exactly this
        scope.
    """
    _check_scope(scope)
    await self.open()
    async with self.engine.connect() as conn:
      row = (
          await conn.execute(
              select(_records.c.state).where(*_record_clause(scope, ref))
          )
      ).first()
    if row is None or ref.schema_version != SCHEMA_VERSION:
      raise _not_found()
    return SealedRecordState(row.state)

  async def collect_garbage(
      self,
      *,
      now: float,
      is_referenced: IsReferenced,
      is_active_operation: Optional[IsActiveOperation] = None,
  ) -> int:
    """Deletes expired pending records that nothing references or owns.

    A candidate is kept when `is_active_operation` (given its operation
    instance id) or `is_referenced` returns True or raises. The delete
    re-checks that the row is still pending and expired, so a record
    marked referenced meanwhile survives.

    Args:
      now: The current time, in seconds since the epoch.
      is_referenced: Asks whether a persisted Event references the record.
      is_active_operation: Asks whether the record's operation instance is
        in the active-operation registry.

    Returns:
      How many records were deleted.
    """
    cutoff = _timestamp(now, 'now')
    await self.open()
    async with self.engine.connect() as conn:
      candidates = (
          await conn.execute(
              select(
                  _records.c.record_id,
                  _records.c.operation_instance_id,
                  _records.c.app_name,
                  _records.c.user_id,
                  _records.c.session_id,
                  _records.c.incarnation,
                  _records.c.event_id,
                  _records.c.function_call_id,
              )
              .where(
                  _records.c.state == SealedRecordState.PENDING.value,
                  _records.c.expires_at <= cutoff,
              )
              .order_by(_records.c.expires_at, _records.c.record_id)
          )
      ).all()
    deleted = 0
    for row in candidates:
      ref = SealedResultRef(row.record_id, SCHEMA_VERSION)
      try:
        if is_active_operation is not None and await is_active_operation(
            row.operation_instance_id
        ):
          continue
        if await is_referenced(_row_scope(row), ref):
          continue
      except Exception:  # pylint: disable=broad-exception-caught
        logger.warning(
            'A sealed-record GC check raised; keeping the record',
            exc_info=True,
        )
        continue
      async with self.engine.begin() as conn:
        result = await conn.execute(
            delete(_records).where(
                _records.c.record_id == row.record_id,
                _records.c.state == SealedRecordState.PENDING.value,
                _records.c.expires_at <= cutoff,
            )
        )
      deleted += result.rowcount
    return deleted

  async def delete_incarnation(
      self, session: SessionKey, incarnation: int
  ) -> int:
    """Deletes every record of one Session incarnation; idempotent.

    Returns:
      How many records this call deleted (0 when repeated).
    """
    await self.open()
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
