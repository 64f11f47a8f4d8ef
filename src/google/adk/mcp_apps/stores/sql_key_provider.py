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

"""A durable `BindingRevisionKeyProvider` on SQLAlchemy's async engine.

Keys live in one table (SQLite file or PostgreSQL); the synchronous contract
answers from a snapshot that `load()`, `refresh()`, `rotate()` and
`invalidate()` maintain, failing closed when unloaded or stale. Design:
docs/design/stores.md.

Usage:

  provider = SqlBindingKeyProvider('sqlite+aiosqlite:///keys.db')
  await provider.load()
  key = provider.active_key()
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
import dataclasses
import datetime
import enum
import logging
import secrets
import threading
from typing import Any
from typing import Optional
from typing import Union

from sqlalchemy import Column
from sqlalchemy import exc as sa_exc
from sqlalchemy import Index
from sqlalchemy import insert
from sqlalchemy import LargeBinary
from sqlalchemy import MetaData
from sqlalchemy import select
from sqlalchemy import String
from sqlalchemy import Table
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.ext.asyncio import AsyncEngine

from ..contracts.key_provider import BindingKey
from ..contracts.key_provider import BindingKeyUnavailableError
from ..contracts.key_provider import MIN_KEY_BYTES
from ._sql import Clock
from ._sql import ensure_schema
from ._sql import SqlStoreBase
from ._sql import UtcDateTime

logger = logging.getLogger('google_adk.' + __name__)

TABLE_NAME = 'adk_mcp_apps_binding_keys'
"""The provider's table: a stable namespace no other store uses."""

_WRITE_ATTEMPTS = 3


class KeyState(str, enum.Enum):
  """The lifecycle state of a stored binding key."""

  ACTIVE = 'active'
  """Signs new binding revisions and verifies."""
  VERIFY_ONLY = 'verify_only'
  """Verifies until its retire-after time; signs nothing."""
  RETIRED = 'retired'
  """Never signs or verifies again; its secret is erased."""


@dataclasses.dataclass(frozen=True)
class BindingKeyInfo:
  """A stored key's metadata, without its secret.

  Attributes:
    key_id: The key id.
    state: The stored state (a verify-only key past `retire_after` is
      treated as retired even before a rotation sweeps it).
    created_at: When the key was created (UTC).
    activated_at: When it became active (UTC).
    retire_after: When it stops verifying, or None while active.
  """

  key_id: str
  state: KeyState
  created_at: datetime.datetime
  activated_at: Optional[datetime.datetime]
  retire_after: Optional[datetime.datetime]


@dataclasses.dataclass(frozen=True)
class _Snapshot:
  loaded_at: datetime.datetime
  infos: Mapping[str, BindingKeyInfo]
  keys: Mapping[str, BindingKey]
  active_id: Optional[str]


_metadata = MetaData()
_keys = Table(
    TABLE_NAME,
    _metadata,
    Column('key_id', String(128), primary_key=True),
    Column('secret', LargeBinary, nullable=True),
    Column('state', String(16), nullable=False),
    Column('created_at', UtcDateTime, nullable=False),
    Column('activated_at', UtcDateTime, nullable=True),
    Column('retire_after', UtcDateTime, nullable=True),
)
_one_active = Index(
    f'uq_{TABLE_NAME}_one_active',
    _keys.c.state,
    unique=True,
    sqlite_where=_keys.c.state == KeyState.ACTIVE.value,
    postgresql_where=_keys.c.state == KeyState.ACTIVE.value,
)


def _new_key_id(now: datetime.datetime) -> str:
  return f'bk-{now:%Y%m%dT%H%M%SZ}-{secrets.token_hex(6)}'


class SqlBindingKeyProvider(SqlStoreBase):
  """A durable, shared `BindingRevisionKeyProvider`; see the module docstring.

  Typical use::

    provider = SqlBindingKeyProvider('sqlite+aiosqlite:///var/adk/keys.db')
    await provider.load()
    profile = McpAppsHostProfile(..., key_provider=provider)
    refresher = asyncio.create_task(
        provider.refresh_periodically(datetime.timedelta(seconds=30)))

  Attributes:
    namespace: The table name, `adk_mcp_apps_binding_keys`.
    engine: The async engine.
  """

  namespace = TABLE_NAME

  def __init__(
      self,
      url: Union[str, AsyncEngine],
      *,
      clock: Optional[Clock] = None,
      create_if_missing: bool = True,
      max_staleness: Optional[datetime.timedelta] = None,
      secret_bytes: int = MIN_KEY_BYTES,
      engine_kwargs: Optional[Mapping[str, Any]] = None,
  ) -> None:
    """Constructs the provider; `load()` must run before it answers.

    Args:
      url: A SQLAlchemy async URL (`sqlite+aiosqlite:///<file>` or
        `postgresql+asyncpg://...`), or an engine, which the caller keeps
        owning (`aclose` does not dispose it).
      clock: Returns the current timezone-aware time; windows, staleness
        and the stored timestamps all use it.
      create_if_missing: Whether `load()` creates an active key when the
        table has none.
      max_staleness: When set, the sync methods fail closed once the
        snapshot is older than this.
      secret_bytes: The length of new secrets, at least 32.
      engine_kwargs: Passed to `create_async_engine` for a URL.

    Raises:
      ValueError: For an in-memory SQLite URL, a short secret length or a
        non-positive `max_staleness`.
    """
    if secret_bytes < MIN_KEY_BYTES:
      raise ValueError(f'secret_bytes must be at least {MIN_KEY_BYTES}')
    if max_staleness is not None and max_staleness <= datetime.timedelta(0):
      raise ValueError('max_staleness must be positive')
    super().__init__(url, clock=clock, engine_kwargs=engine_kwargs)
    self._create_if_missing = create_if_missing
    self._max_staleness = max_staleness
    self._secret_bytes = secret_bytes
    self._snapshot: Optional[_Snapshot] = None
    self._snapshot_lock = threading.Lock()
    self._before_first_insert: Optional[Callable[[], Awaitable[Any]]] = None
    """Test seam: awaited between seeing no active key and inserting one."""

  # -- the contract (synchronous, from the snapshot) -------------------------

  def active_key(self) -> BindingKey:
    """The key new binding revisions are signed with.

    Raises:
      BindingKeyUnavailableError: Not loaded, the snapshot is stale, or the
        store has no active key (e.g. it was invalidated).
    """
    snapshot = self._current(None)
    if snapshot.active_id is None:
      raise BindingKeyUnavailableError(None, 'the store has no active key')
    return snapshot.keys[snapshot.active_id]

  def key(self, key_id: str) -> BindingKey:
    """The active key or a verify-only key whose window is still open.

    Raises:
      BindingKeyUnavailableError: Not loaded, the snapshot is stale, or the
        key is unknown, retired or past its retire-after time.
    """
    snapshot = self._current(key_id)
    info = snapshot.infos.get(key_id)
    if info is None:
      raise BindingKeyUnavailableError(key_id, 'unknown to the key store')
    if info.state is KeyState.RETIRED or key_id not in snapshot.keys:
      raise BindingKeyUnavailableError(key_id, 'retired')
    if info.retire_after is not None and self._now() >= info.retire_after:
      raise BindingKeyUnavailableError(key_id, 'its verify window has closed')
    return snapshot.keys[key_id]

  # -- snapshot management (async) ---------------------------------------------

  async def load(self) -> bool:
    """Creates the table if missing, reads the keys, ensures an active key.

    Safe to call concurrently from several workers: at most one of them
    creates the first active key and the others adopt it.

    Returns:
      Whether this call created the active key.

    Raises:
      sqlalchemy.exc.SQLAlchemyError: If the database is unreachable.
    """
    await ensure_schema(self.engine, _metadata, TABLE_NAME)
    snapshot = await self._reload()
    if snapshot.active_id is not None or not self._create_if_missing:
      return False
    if self._before_first_insert is not None:
      await self._before_first_insert()
    now = self._now()
    created = False
    try:
      async with self.engine.begin() as conn:
        await self._insert_active(conn, now)
      created = True
    except sa_exc.IntegrityError:
      logger.info('Another worker created the active binding key; adopting it')
    snapshot = await self._reload()
    if snapshot.active_id is None:
      raise BindingKeyUnavailableError(None, 'no active key after creation')
    return created

  async def refresh(self) -> None:
    """Re-reads every key into the in-memory snapshot.

    On failure the previous snapshot stays (and ages toward
    `max_staleness`).

    Raises:
      sqlalchemy.exc.SQLAlchemyError: If the database is unreachable.
    """
    await self._reload()

  async def _reload(self) -> _Snapshot:
    async with self.engine.connect() as conn:
      rows = (
          await conn.execute(select(_keys).order_by(_keys.c.created_at))
      ).all()
    loaded_at = self._now()
    infos: dict[str, BindingKeyInfo] = {}
    keys: dict[str, BindingKey] = {}
    active_id: Optional[str] = None
    for row in rows:
      state = KeyState(row.state)
      infos[row.key_id] = BindingKeyInfo(
          key_id=row.key_id,
          state=state,
          created_at=row.created_at,
          activated_at=row.activated_at,
          retire_after=row.retire_after,
      )
      if state is not KeyState.RETIRED and row.secret is not None:
        keys[row.key_id] = BindingKey(row.key_id, bytes(row.secret))
        if state is KeyState.ACTIVE:
          active_id = row.key_id
    snapshot = _Snapshot(loaded_at, infos, keys, active_id)
    with self._snapshot_lock:
      self._snapshot = snapshot
    return snapshot

  async def refresh_periodically(self, interval: datetime.timedelta) -> None:
    """Refreshes every `interval` until cancelled; failures are logged.

    Args:
      interval: The pause between refreshes; keep it shorter than the
        shortest rotation window and than `max_staleness`.
    """
    while True:
      try:
        await self.refresh()
      except Exception:  # pylint: disable=broad-exception-caught
        logger.exception('Refreshing the binding keys failed')
      await asyncio.sleep(interval.total_seconds())

  def keys(self) -> tuple[BindingKeyInfo, ...]:
    """The snapshot's keys, oldest first, without secrets."""
    snapshot = self._snapshot
    return tuple(snapshot.infos.values()) if snapshot else ()

  @property
  def loaded_at(self) -> Optional[datetime.datetime]:
    """When the snapshot was read, or None before `load()`."""
    snapshot = self._snapshot
    return snapshot.loaded_at if snapshot else None

  # -- administration (async, write-through) ---------------------------------

  async def rotate(self, verify_window: datetime.timedelta) -> BindingKey:
    """Makes a new active key; the old one verifies for `verify_window`.

    Verify-only keys whose window has closed are retired (secrets erased)
    in the same transaction. With a zero window the old key is retired at
    once. Concurrent rotations serialize; each one that loses the race
    retries on top of the winner's key.

    Args:
      verify_window: How long the previous active key keeps verifying.

    Returns:
      The new active key.

    Raises:
      ValueError: If `verify_window` is negative.
    """
    if verify_window < datetime.timedelta(0):
      raise ValueError('verify_window must not be negative')
    for attempt in range(_WRITE_ATTEMPTS):
      now = self._now()
      try:
        async with self.engine.begin() as conn:
          await self._sweep(conn, now)
          demoted: dict[str, Any] = {'retire_after': now + verify_window}
          if verify_window:
            demoted['state'] = KeyState.VERIFY_ONLY.value
          else:
            demoted.update(state=KeyState.RETIRED.value, secret=None)
          await conn.execute(
              update(_keys)
              .where(_keys.c.state == KeyState.ACTIVE.value)
              .values(**demoted)
          )
          key = await self._insert_active(conn, now)
      except sa_exc.IntegrityError:
        if attempt + 1 == _WRITE_ATTEMPTS:
          raise
        logger.info('A concurrent binding key rotation won; retrying')
        continue
      await self._reload()
      return key
    raise AssertionError('unreachable')

  async def invalidate(self, key_id: str) -> None:
    """Retires `key_id` at once and erases its secret.

    Invalidating the active key leaves the store without one until
    `rotate()` (or a `load()` with `create_if_missing`). Invalidating a
    retired key does nothing.

    Raises:
      BindingKeyUnavailableError: If the key is unknown.
    """
    now = self._now()
    async with self.engine.begin() as conn:
      await conn.execute(
          update(_keys)
          .where(
              _keys.c.key_id == key_id,
              _keys.c.state != KeyState.RETIRED.value,
          )
          .values(state=KeyState.RETIRED.value, secret=None, retire_after=now)
      )
      known = (
          await conn.execute(
              select(_keys.c.key_id).where(_keys.c.key_id == key_id)
          )
      ).first()
    await self.refresh()
    if known is None:
      raise BindingKeyUnavailableError(key_id, 'unknown to the key store')

  async def __aenter__(self) -> SqlBindingKeyProvider:
    await self.load()
    return self

  async def __aexit__(self, *exc_info: object) -> None:
    await self.aclose()

  # -- internals ---------------------------------------------------------------

  def _current(self, key_id: Optional[str]) -> _Snapshot:
    snapshot = self._snapshot
    if snapshot is None:
      raise BindingKeyUnavailableError(key_id, 'the key store is not loaded')
    if (
        self._max_staleness is not None
        and self._now() - snapshot.loaded_at > self._max_staleness
    ):
      raise BindingKeyUnavailableError(key_id, 'the key snapshot is stale')
    return snapshot

  async def _insert_active(
      self, conn: AsyncConnection, now: datetime.datetime
  ) -> BindingKey:
    key = BindingKey(_new_key_id(now), secrets.token_bytes(self._secret_bytes))
    await conn.execute(
        insert(_keys).values(
            key_id=key.key_id,
            secret=key.secret,
            state=KeyState.ACTIVE.value,
            created_at=now,
            activated_at=now,
            retire_after=None,
        )
    )
    return key

  async def _sweep(self, conn: AsyncConnection, now: datetime.datetime) -> None:
    await conn.execute(
        update(_keys)
        .where(
            _keys.c.state == KeyState.VERIFY_ONLY.value,
            _keys.c.retire_after <= now,
        )
        .values(state=KeyState.RETIRED.value, secret=None)
    )
