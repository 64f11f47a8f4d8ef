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

"""Shared SQLAlchemy plumbing for the durable MCP Apps stores.

Every store runs on SQLAlchemy's async engine against a SQLite file
(`sqlite+aiosqlite:///path`) or PostgreSQL (`postgresql+asyncpg://...`).
This module holds what they share: engine construction (refusing in-memory
SQLite, which is not durable and is private to one connection), a UTC
timestamp column type that reads back timezone-aware on SQLite too, and
race-safe idempotent schema creation for several workers starting at once.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
import datetime
from typing import Any
from typing import ClassVar
from typing import Optional
from typing import Union
import zlib

from sqlalchemy import Column
from sqlalchemy import exc as sa_exc
from sqlalchemy import insert
from sqlalchemy import Integer
from sqlalchemy import MetaData
from sqlalchemy import select
from sqlalchemy import String
from sqlalchemy import Table
from sqlalchemy import text
from sqlalchemy import types
from sqlalchemy.engine import Dialect
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.ext.asyncio import create_async_engine

_SCHEMA_ATTEMPTS = 3
Clock = Callable[[], datetime.datetime]
"""Returns the current timezone-aware time."""


def utc_now() -> datetime.datetime:
  """The default `Clock`: the current time in UTC."""
  return datetime.datetime.now(datetime.timezone.utc)


class UtcDateTime(types.TypeDecorator[datetime.datetime]):
  """A timezone-aware UTC timestamp on every backend.

  Values must be aware; they are stored in UTC. SQLite keeps no offset, so
  values read back naive are UTC by construction and made aware again.
  """

  impl = types.DateTime(timezone=True)
  cache_ok = True

  def process_bind_param(
      self, value: Optional[datetime.datetime], dialect: Dialect
  ) -> Optional[datetime.datetime]:
    if value is None:
      return None
    if value.tzinfo is None or value.utcoffset() is None:
      raise ValueError('UtcDateTime needs a timezone-aware datetime')
    value = value.astimezone(datetime.timezone.utc)
    if dialect.name == 'sqlite':
      return value.replace(tzinfo=None)
    return value

  def process_result_value(
      self, value: Optional[datetime.datetime], dialect: Dialect
  ) -> Optional[datetime.datetime]:
    if value is None:
      return None
    if value.tzinfo is None:
      return value.replace(tzinfo=datetime.timezone.utc)
    return value.astimezone(datetime.timezone.utc)


def make_engine(url: Union[str, AsyncEngine], **kwargs: Any) -> AsyncEngine:
  """An async engine for a durable store.

  Args:
    url: A SQLAlchemy async URL, or an engine to use as is.
    **kwargs: Passed to `create_async_engine` when `url` is a string.

  Returns:
    The engine.

  Raises:
    ValueError: For an in-memory SQLite URL.
  """
  if isinstance(url, AsyncEngine):
    engine = url
  else:
    parsed = make_url(url)
    if parsed.get_backend_name() == 'sqlite' and parsed.database in (
        None,
        '',
        ':memory:',
    ):
      raise ValueError(
          'A durable store needs a SQLite file, not an in-memory database'
      )
    if parsed.get_backend_name() == 'postgresql':
      kwargs.setdefault('pool_pre_ping', True)
    engine = create_async_engine(parsed, **kwargs)
  database = engine.url.database
  if engine.dialect.name == 'sqlite' and database in (None, '', ':memory:'):
    raise ValueError(
        'A durable store needs a SQLite file, not an in-memory database'
    )
  return engine


def advisory_lock_id(name: str) -> int:
  """A stable 32-bit id for a PostgreSQL advisory lock named `name`."""
  return zlib.crc32(name.encode('utf-8'))


async def ensure_schema(
    engine: AsyncEngine, metadata: MetaData, lock_name: str
) -> None:
  """Creates `metadata`'s tables and indexes if missing, race-safely.

  Several workers may start at once. On PostgreSQL the creation runs under
  a transaction-scoped advisory lock named `lock_name`; on any backend a
  creation that loses a race (duplicate table or index) is retried, and the
  retry finds the objects present.

  Args:
    engine: The engine.
    metadata: The tables to create.
    lock_name: The advisory lock's name (PostgreSQL only).

  Raises:
    sqlalchemy.exc.DBAPIError: If creation keeps failing.
  """
  for attempt in range(_SCHEMA_ATTEMPTS):
    try:
      async with engine.begin() as conn:
        if conn.dialect.name == 'postgresql':
          await conn.execute(
              select(text('pg_advisory_xact_lock(:lock_id)')),
              {'lock_id': advisory_lock_id(lock_name)},
          )
        await conn.run_sync(metadata.create_all, checkfirst=True)
      return
    except (
        sa_exc.IntegrityError,
        sa_exc.OperationalError,
        sa_exc.ProgrammingError,
    ):
      if attempt + 1 == _SCHEMA_ATTEMPTS:
        raise


def claim_table(name: str, metadata: MetaData) -> Table:
  """The one-row table a store claims its database with."""
  return Table(
      name,
      metadata,
      Column('meta_key', Integer, primary_key=True, autoincrement=False),
      Column('namespace', String(255), nullable=False),
      Column('revision', String(64), nullable=False),
      Column('created_at', UtcDateTime, nullable=False),
  )


_CLAIM_KEY = 1


async def _read_claim(
    engine: AsyncEngine, table: Table
) -> Optional[tuple[str, str]]:
  async with engine.connect() as conn:
    row = (
        await conn.execute(
            select(table.c.namespace, table.c.revision).where(
                table.c.meta_key == _CLAIM_KEY
            )
        )
    ).first()
  return None if row is None else (row.namespace, row.revision)


async def claim_database(
    engine: AsyncEngine,
    table: Table,
    *,
    namespace: str,
    revision: str,
    now: datetime.datetime,
) -> tuple[str, ...]:
  """Claims the database for a store, or checks who claimed it.

  The first worker to insert the claim row wins; every other worker (and
  every later start) reads it back. A database claimed under another
  namespace or revision is incompatible: the store must refuse it rather
  than read or write rows it cannot interpret.

  Args:
    engine: The store's engine.
    table: The store's `claim_table`.
    namespace: The store's stable namespace.
    revision: The store's format revision.
    now: The claim time to record.

  Returns:
    Why the database is incompatible; empty if the claim is this store's.
  """
  claim = await _read_claim(engine, table)
  if claim is None:
    try:
      async with engine.begin() as conn:
        await conn.execute(
            insert(table).values(
                meta_key=_CLAIM_KEY,
                namespace=namespace,
                revision=revision,
                created_at=now,
            )
        )
    except sa_exc.IntegrityError:
      pass  # Another worker claimed it first; read what it wrote.
    claim = await _read_claim(engine, table)
  if claim is None:
    return ('the store has no claim row',)
  problems = []
  if claim[0] != namespace:
    problems.append(f'database holds namespace {claim[0]!r}, not {namespace!r}')
  if claim[1] != revision:
    problems.append(f'database holds revision {claim[1]!r}, not {revision!r}')
  return tuple(problems)


class SqlStoreBase:
  """What every durable store shares: its engine and its clock.

  Attributes:
    engine: The async engine.
  """

  def __init__(
      self,
      url: Union[str, AsyncEngine],
      *,
      clock: Optional[Clock] = None,
      engine_kwargs: Optional[Mapping[str, Any]] = None,
  ) -> None:
    self._owns_engine = not isinstance(url, AsyncEngine)
    self.engine = make_engine(url, **dict(engine_kwargs or {}))
    self._clock: Clock = clock or utc_now

  async def aclose(self) -> None:
    """Disposes the engine if the store created it."""
    if self._owns_engine:
      await self.engine.dispose()

  def _now(self) -> datetime.datetime:
    now = self._clock()
    if now.tzinfo is None or now.utcoffset() is None:
      raise ValueError('the clock must return timezone-aware datetimes')
    return now


class ClaimedSqlStore(SqlStoreBase):
  """A store that claims its database for one namespace and revision.

  A subclass names its schema (`_schema`, `_claim`, `_lock_name`) and its
  `revision`, and raises its own incompatibility error from `open()` when
  `_create_and_claim()` returns problems.
  """

  revision: ClassVar[str]
  default_namespace: ClassVar[str]
  _schema: ClassVar[MetaData]
  _claim: ClassVar[Table]
  _lock_name: ClassVar[str]

  def __init__(
      self,
      url: Union[str, AsyncEngine],
      *,
      namespace: Optional[str] = None,
      clock: Optional[Clock] = None,
      engine_kwargs: Optional[Mapping[str, Any]] = None,
  ) -> None:
    """Constructs the store; `open()` (or the first operation) opens it.

    Args:
      url: A SQLAlchemy async URL (`sqlite+aiosqlite:///<file>` or
        `postgresql+asyncpg://...`), or an engine, which the caller keeps
        owning (`aclose` does not dispose it).
      namespace: The stable name of the record space; the database is
        claimed for it at first open and refused to any other. Defaults to
        the store's `default_namespace`.
      clock: Returns the current timezone-aware time, for the timestamps
        the store records.
      engine_kwargs: Passed to `create_async_engine` for a URL.

    Raises:
      ValueError: For an in-memory SQLite URL or an empty namespace.
    """
    if namespace is None:
      namespace = self.default_namespace
    if not isinstance(namespace, str) or not namespace.strip():
      raise ValueError('namespace must be a non-empty str')
    if len(namespace) > 255:
      raise ValueError('namespace must be at most 255 characters')
    self._namespace = namespace
    super().__init__(url, clock=clock, engine_kwargs=engine_kwargs)
    self._opened = False

  @property
  def namespace(self) -> str:
    """The configured namespace, claimed in the database at `open()`."""
    return self._namespace

  async def _create_and_claim(self) -> tuple[str, ...]:
    """Creates the schema if missing and claims or checks the database.

    Returns:
      Why the database is incompatible; empty if the claim is this store's.
    """
    await ensure_schema(self.engine, self._schema, self._lock_name)
    return await claim_database(
        self.engine,
        self._claim,
        namespace=self._namespace,
        revision=self.revision,
        now=self._now(),
    )

  async def aclose(self) -> None:
    """Disposes the engine if the store created it."""
    self._opened = False
    await super().aclose()
