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

"""The write fence for Session creation, co-located in the Session backend.

A creation receipt alone only *detects* a stale creator: creator A stalls in
`CREATING(n)`, recovery retires A and creator B reserves, and A's own
Session transaction could still land afterwards. RFC §3 therefore puts a
fence row next to the Session rows and makes the Session service commit
the Session row, its imported events and the creation receipt **in one
transaction** that first moves the fence row from `armed(n, A)` to
`committed(n, A)` with a conditional `UPDATE`. Retiring A is the same kind
of `UPDATE` to `retired(n, A)`; the database serializes the two, so either
A's commit lands first (and recovery activates it) or the fence is retired
first and A's commit fails **inside its own transaction**, leaving nothing.

One table, `adk_mcp_apps_session_fences`, keyed by `(app_name, user_id,
session_id)`, holds both the fence and the receipt:

* `state`: `armed`, `committed`, `retired` or `adopted`;
* `incarnation`, `operation_id`: whose fence it is;
* `import_digest`, `import_count`: the receipt of the finalized imported
  events, written by the committing transaction.

The incarnation of a fence only grows: `arm` refuses to re-arm an
incarnation already retired or committed, so a retired creator cannot arm
its way back. The table is created only when a lifecycle-enabled
configuration first uses the fence; a service nobody asks for it keeps the
pristine 2.13.0 schema and behaviour.

Backends: `DatabaseSessionService` (SQLAlchemy async; SQLite, PostgreSQL
and the other dialects it supports) and `SqliteSessionService`
(`aiosqlite`, `BEGIN IMMEDIATE`). Anything else (the in-memory and Vertex
services) cannot host the fence: `fence_for` raises `FenceUnsupportedError`
and a production lifecycle configuration refuses it.

Imported events are finalized (`finalize_imported_events`: internal
metadata stripped, the restored marker stamped, as the API server does for
`POST .../sessions` with events) before `import_digest` is computed over
them, so the digest describes exactly the bytes the Session stores.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
import contextlib
import copy
import dataclasses
from datetime import datetime
from datetime import timezone
import hashlib
import json
import time
from typing import Any
from typing import Optional
from typing import Protocol
from typing import TYPE_CHECKING

from ...errors.already_exists_error import AlreadyExistsError
from ...events._internal_metadata import mark_restored
from ...events.event import Event
from ...sessions import _session_util
from ...sessions.session import Session
from ..contracts.scope import SessionKey
from .errors import CreationFenceError
from .errors import FenceAlreadyCommittedError
from .errors import FenceRetiredError
from .errors import FenceUnsupportedError

if TYPE_CHECKING:
  import aiosqlite

  from ...sessions.database_session_service import DatabaseSessionService
  from ...sessions.sqlite_session_service import SqliteSessionService

FENCE_TABLE = 'adk_mcp_apps_session_fences'
"""The fence-and-receipt table, co-located with the Session rows."""
DIGEST_PREFIX = 'sha256:'
"""The prefix of every import digest (the algorithm's name)."""

_DIGEST_DOMAIN = b'adk-mcp-apps/session-import/v1\x00'
_KEY_LENGTH = 255

FaultHook = Callable[[str], Awaitable[None]]
"""Awaited at named points (tests kill the process there); None in use."""


class FenceState:
  """The values of the fence row's `state` column."""

  ARMED = 'armed'
  COMMITTED = 'committed'
  RETIRED = 'retired'
  ADOPTED = 'adopted'


@dataclasses.dataclass(frozen=True)
class FenceToken:
  """What a creator holds: the reserved incarnation and its operation id."""

  incarnation: int
  operation_id: str


@dataclasses.dataclass(frozen=True)
class FenceRow:
  """The fence row and the creation receipt it carries.

  Attributes:
    state: One of `FenceState`'s values.
    incarnation: The incarnation the fence is for.
    operation_id: The creation (or adoption) operation it is for.
    import_digest: The committed receipt's import digest, once committed.
    import_count: How many imported events the receipt covers.
  """

  state: str
  incarnation: int
  operation_id: str
  import_digest: Optional[str]
  import_count: Optional[int]


# -- imported events ----------------------------------------------------------


def finalize_imported_events(events: Sequence[Event]) -> list[Event]:
  """Finalizes events imported at creation, before any digest is taken.

  Each event is deep-copied, stripped of caller-supplied internal metadata
  and stamped restored (the API server's `mark_restored`). Partial events
  and events that carry a state delta are refused: an import restores a
  conversation, it does not change state.

  Args:
    events: The events to import, in order.

  Returns:
    The finalized copies; the inputs are not modified.

  Raises:
    ValueError: For a partial event or one with a state delta.
  """
  finalized = []
  for index, event in enumerate(events):
    if not isinstance(event, Event):
      raise TypeError(f'imported event {index} is not an Event')
    if event.partial:
      raise ValueError(f'imported event {index} is partial')
    if event.actions.state_delta:
      raise ValueError(f'imported event {index} carries a state delta')
    finalized.append(mark_restored(copy.deepcopy(event)))
  return finalized


def import_digest(events: Sequence[Event]) -> str:
  """The receipt digest of finalized imported events.

  SHA-256 over a domain tag and the sorted-key JSON of each event's stored
  form (`model_dump(mode='json', exclude_none=True)`), length-framed, so two
  imports with the same number of events but any differing byte differ.
  """
  digest = hashlib.sha256(_DIGEST_DOMAIN)
  digest.update(len(events).to_bytes(8, 'big'))
  for event in events:
    body = json.dumps(
        event.model_dump(mode='json', exclude_none=True),
        sort_keys=True,
        separators=(',', ':'),
        ensure_ascii=False,
    ).encode('utf-8')
    digest.update(len(body).to_bytes(8, 'big') + body)
  return DIGEST_PREFIX + digest.hexdigest()


# -- the backend interface ----------------------------------------------------


class SessionCreationFence(Protocol):
  """The fence operations a lifecycle-enabled Session backend provides."""

  async def arm(self, session: SessionKey, token: FenceToken) -> None:
    """Arms the fence for `token`; idempotent for the same token."""
    ...

  async def retire(self, session: SessionKey, token: FenceToken) -> FenceRow:
    """Retires `token`'s fence so its creator can no longer commit."""
    ...

  async def read(self, session: SessionKey) -> Optional[FenceRow]:
    """The fence row, or None."""
    ...

  async def create_if_fence_current(
      self,
      session: SessionKey,
      token: FenceToken,
      *,
      state: Optional[dict[str, Any]],
      events: Sequence[Event],
      digest: str,
      fault_hook: Optional[FaultHook] = None,
  ) -> Session:
    """Commits the Session row, events and receipt iff the fence is armed."""
    ...

  async def record_adoption(
      self, session: SessionKey, adoption_id: str
  ) -> FenceRow:
    """Marks a pre-series Session as adopted (the adoption receipt)."""
    ...


def _check_token(session: SessionKey, token: FenceToken) -> None:
  if not isinstance(session, SessionKey):
    raise TypeError('session must be a SessionKey')
  if isinstance(token.incarnation, bool) or not isinstance(
      token.incarnation, int
  ):
    raise TypeError('token.incarnation must be an int')
  if token.incarnation < 1:
    raise ValueError('token.incarnation must be at least 1')
  if not isinstance(token.operation_id, str) or not (
      0 < len(token.operation_id) <= _KEY_LENGTH
  ):
    raise ValueError(
        f'token.operation_id must be a str of 1..{_KEY_LENGTH} characters'
    )


def _arm_refusal(
    session: SessionKey, token: FenceToken, row: Optional[FenceRow]
) -> Optional[CreationFenceError]:
  """None if `row` (after a failed conditional arm) means already armed."""
  if row is None:
    return None
  if row.incarnation == token.incarnation and (
      row.operation_id == token.operation_id
      and row.state in (FenceState.ARMED, FenceState.COMMITTED)
  ):
    return None
  return FenceRetiredError(
      session,
      incarnation=token.incarnation,
      operation_id=token.operation_id,
      found=f'{row.state}({row.incarnation})',
      detail='the fence has moved past this creator',
  )


def _retire_outcome(
    session: SessionKey, token: FenceToken, row: FenceRow
) -> FenceRow:
  """Decides a retire whose conditional `UPDATE` matched nothing."""
  if row.incarnation > token.incarnation or (
      row.incarnation == token.incarnation and row.state == FenceState.RETIRED
  ):
    return row
  if (
      row.incarnation == token.incarnation
      and row.operation_id == token.operation_id
      and row.state == FenceState.COMMITTED
  ):
    raise FenceAlreadyCommittedError(
        session,
        incarnation=token.incarnation,
        operation_id=token.operation_id,
        found=f'{row.state}({row.incarnation})',
        detail='the creator committed; verify its receipt instead',
    )
  raise CreationFenceError(
      session,
      incarnation=token.incarnation,
      operation_id=token.operation_id,
      found=f'{row.state}({row.incarnation})',
      detail='the fence belongs to another operation',
  )


def _refused(
    session: SessionKey, token: FenceToken, row: Optional[FenceRow]
) -> FenceRetiredError:
  return FenceRetiredError(
      session,
      incarnation=token.incarnation,
      operation_id=token.operation_id,
      found=None if row is None else f'{row.state}({row.incarnation})',
      detail='the creation fence is not armed for this creator',
  )


def fence_for(service: object) -> SessionCreationFence:
  """The creation fence of a Session service.

  Args:
    service: A `DatabaseSessionService` or `SqliteSessionService`.

  Returns:
    Its fence backend (cached on the service).

  Raises:
    FenceUnsupportedError: For any other service.
  """
  cached = getattr(service, '_mcp_apps_creation_fence', None)
  if cached is not None:
    return cached  # type: ignore[no-any-return]
  fence: SessionCreationFence
  # Imported here: the session services import this module lazily.
  from ...sessions.database_session_service import DatabaseSessionService  # pylint: disable=g-import-not-at-top
  from ...sessions.sqlite_session_service import SqliteSessionService  # pylint: disable=g-import-not-at-top

  if isinstance(service, DatabaseSessionService):
    fence = SqlAlchemySessionFence(service)
  elif isinstance(service, SqliteSessionService):
    if service._db_path in ('', ':memory:'):  # pylint: disable=protected-access
      raise FenceUnsupportedError(
          service, 'an in-memory SQLite database is not durable'
      )
    fence = AiosqliteSessionFence(service)
  else:
    raise FenceUnsupportedError(
        service,
        'only DatabaseSessionService and SqliteSessionService commit the'
        ' Session row and the fence in one transaction',
    )
  setattr(service, '_mcp_apps_creation_fence', fence)
  return fence


async def create_if_fence_current(
    service: object,
    *,
    app_name: str,
    user_id: str,
    session_id: str,
    fence: FenceToken,
    import_digest_value: str,
    state: Optional[dict[str, Any]] = None,
    events: Sequence[Event] = (),
    fault_hook: Optional[FaultHook] = None,
) -> Session:
  """The session services' `create_if_fence_current`, for their seam."""
  return await fence_for(service).create_if_fence_current(
      SessionKey(app_name, user_id, session_id),
      fence,
      state=state,
      events=events,
      digest=import_digest_value,
      fault_hook=fault_hook,
  )


def _now() -> float:
  return time.time()


# -- DatabaseSessionService ---------------------------------------------------


class SqlAlchemySessionFence:
  """The fence on a `DatabaseSessionService`'s own engine and schema."""

  def __init__(self, service: DatabaseSessionService) -> None:
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
        Column('app_name', String(_KEY_LENGTH), primary_key=True),
        Column('user_id', String(_KEY_LENGTH), primary_key=True),
        Column('session_id', String(_KEY_LENGTH), primary_key=True),
        Column('state', String(16), nullable=False),
        Column('incarnation', BigInteger, nullable=False),
        Column('operation_id', String(_KEY_LENGTH), nullable=False),
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

  async def session_row_exists(self, session: SessionKey) -> bool:
    """Whether the Session row exists (one primary-key SELECT)."""
    from sqlalchemy import select  # pylint: disable=g-import-not-at-top

    await self._service.prepare_tables()
    model = self._service._get_schema_classes().StorageSession  # pylint: disable=protected-access
    table = model.__table__
    async with self._service.db_engine.connect() as conn:
      found = (
          await conn.execute(
              select(table.c.id)
              .where(
                  table.c.app_name == session.app_name,
                  table.c.user_id == session.user_id,
                  table.c.id == session.session_id,
              )
              .limit(1)
          )
      ).first()
    return found is not None

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
    values = {
        'state': state,
        'incarnation': token.incarnation,
        'operation_id': token.operation_id,
        'import_digest': None,
        'import_count': None,
        'updated_at': _now(),
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

  async def arm(self, session: SessionKey, token: FenceToken) -> None:
    _check_token(session, token)
    await self._ensure()
    if await self._upsert(session, token, FenceState.ARMED, token.incarnation):
      return
    refusal = _arm_refusal(session, token, await self.read(session))
    if refusal is not None:
      raise refusal

  async def retire(self, session: SessionKey, token: FenceToken) -> FenceRow:
    from sqlalchemy import update  # pylint: disable=g-import-not-at-top

    _check_token(session, token)
    await self._ensure()
    async with self._service.db_engine.begin() as conn:
      result = await conn.execute(
          update(self._table)
          .where(
              *self._key(session),
              self._table.c.incarnation == token.incarnation,
              self._table.c.operation_id == token.operation_id,
              self._table.c.state == FenceState.ARMED,
          )
          .values(state=FenceState.RETIRED, updated_at=_now())
      )
    if result.rowcount != 1:
      # Never armed (the creator died first): retire the incarnation anyway,
      # so the creator cannot arm it later.
      await self._upsert(
          session, token, FenceState.RETIRED, token.incarnation + 1
      )
    row = await self.read(session)
    assert row is not None
    if row.state == FenceState.RETIRED and (
        row.incarnation == token.incarnation
        and row.operation_id == token.operation_id
    ):
      return row
    return _retire_outcome(session, token, row)

  async def record_adoption(
      self, session: SessionKey, adoption_id: str
  ) -> FenceRow:
    token = FenceToken(1, adoption_id)
    _check_token(session, token)
    await self._ensure()
    await self._upsert(session, token, FenceState.ADOPTED, 1)
    row = await self.read(session)
    assert row is not None
    return row

  async def create_if_fence_current(
      self,
      session: SessionKey,
      token: FenceToken,
      *,
      state: Optional[dict[str, Any]],
      events: Sequence[Event],
      digest: str,
      fault_hook: Optional[FaultHook] = None,
  ) -> Session:
    # pylint: disable=g-import-not-at-top
    from sqlalchemy import update
    from sqlalchemy.exc import IntegrityError

    from ...sessions.database_session_service import _get_or_create_state
    from ...sessions.database_session_service import _merge_state

    # pylint: enable=g-import-not-at-top
    _check_token(session, token)
    await self._ensure()
    service = self._service
    schema = service._get_schema_classes()  # pylint: disable=protected-access
    app_name, user_id = session.app_name, session.user_id
    session_id = session.session_id
    async with service._rollback_on_exception_session() as sql_session:  # pylint: disable=protected-access
      # The fence check is the transaction's first write: it takes the fence
      # row's lock, so a concurrent retire waits for this commit or rollback.
      result = await sql_session.execute(
          update(self._table)
          .where(
              *self._key(session),
              self._table.c.incarnation == token.incarnation,
              self._table.c.operation_id == token.operation_id,
              self._table.c.state == FenceState.ARMED,
          )
          .values(
              state=FenceState.COMMITTED,
              import_digest=digest,
              import_count=len(events),
              updated_at=_now(),
          )
      )
      if result.rowcount != 1:  # type: ignore[attr-defined]
        await sql_session.rollback()
        raise _refused(session, token, await self.read(session))
      # No separate existence SELECT: the Session row's primary key refuses
      # a duplicate at flush (below), raising the same AlreadyExistsError,
      # and the rollback takes the fence update with it.
      storage_app_state = await _get_or_create_state(
          sql_session=sql_session,
          state_model=schema.StorageAppState,
          primary_key=app_name,
          defaults={'app_name': app_name, 'state': {}},
      )
      storage_user_state = await _get_or_create_state(
          sql_session=sql_session,
          state_model=schema.StorageUserState,
          primary_key=(app_name, user_id),
          defaults={'app_name': app_name, 'user_id': user_id, 'state': {}},
      )
      deltas = _session_util.extract_json_safe_state_delta(state or {})
      if deltas['app']:
        storage_app_state.state.update(deltas['app'])
      if deltas['user']:
        storage_user_state.state.update(deltas['user'])
      stamp = max([_now(), *(e.timestamp for e in events)])
      now = datetime.fromtimestamp(stamp, tz=timezone.utc)
      if service._uses_naive_datetime():  # pylint: disable=protected-access
        now = now.replace(tzinfo=None)
      storage_session = schema.StorageSession(
          app_name=app_name,
          user_id=user_id,
          id=session_id,
          state=deltas['session'],
          create_time=now,
          update_time=now,
      )
      sql_session.add(storage_session)
      placeholder = Session(app_name=app_name, user_id=user_id, id=session_id)
      try:
        await sql_session.flush()
        for event in events:
          sql_session.add(schema.StorageEvent.from_event(placeholder, event))
          await sql_session.flush()
      except IntegrityError as e:
        raise AlreadyExistsError(
            f'Session with id {session_id} already exists.'
        ) from e
      if fault_hook is not None:
        await fault_hook('in_session_transaction')
      merged = _merge_state(
          storage_app_state.state, storage_user_state.state, deltas['session']
      )
      created = storage_session.to_session(state=merged, events=list(events))
      await sql_session.commit()
    return created


# -- SqliteSessionService -----------------------------------------------------

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
_IDLE_CONNECTIONS = 4


class AiosqliteSessionFence:
  """The fence on a `SqliteSessionService`'s database file."""

  def __init__(self, service: SqliteSessionService) -> None:
    self._service = service
    self._ready = False
    self._idle: list[aiosqlite.Connection] = []

  @contextlib.asynccontextmanager
  async def _connection(self) -> AsyncIterator[aiosqlite.Connection]:
    """A connection to the Session database, reused across operations.

    The service opens a new connection (and its thread) per call; the fence
    keeps up to `_IDLE_CONNECTIONS` idle ones instead. A connection goes back
    only when its use ended cleanly outside a transaction; after an error it
    is rolled back and closed. Durability and locking are SQLite's own and
    the same for a reused connection: every fence write is a `BEGIN
    IMMEDIATE` transaction committed before the call returns, and a killed
    process leaves at most a hot journal the next opener rolls back.
    """
    import aiosqlite  # pylint: disable=g-import-not-at-top

    service = self._service
    db = self._idle.pop() if self._idle else None
    if db is None:
      if not service._schema_ready:  # pylint: disable=protected-access
        async with service._get_db_connection():  # pylint: disable=protected-access
          pass  # creates the service's schema, as its own calls would
      db = aiosqlite.connect(
          service._db_connect_path,  # pylint: disable=protected-access
          uri=service._db_connect_uri,  # pylint: disable=protected-access
      )
      # Like the service's in-memory connection: never block interpreter exit.
      setattr(getattr(db, '_thread', db), 'daemon', True)
      await db
      db.row_factory = aiosqlite.Row
      await db.execute('PRAGMA foreign_keys = ON')
    try:
      yield db
    except BaseException:
      try:
        if db.in_transaction:
          await db.rollback()
      finally:
        await db.close()
      raise
    if db.in_transaction or len(self._idle) >= _IDLE_CONNECTIONS:
      await db.close()
    else:
      self._idle.append(db)

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
    async with self._connection() as db:
      await self._connect_ready(db)
      return await self._read(db, session)

  async def session_row_exists(self, session: SessionKey) -> bool:
    """Whether the Session row exists, as `get_session` would find it."""
    ids = [session.session_id]
    if session.session_id != session.session_id.strip():
      # `get_session` falls back to the stripped id of a padded one.
      ids.append(session.session_id.strip())
    async with self._connection() as db:
      async with db.execute(
          'SELECT 1 FROM sessions WHERE app_name=? AND user_id=? AND id IN'
          f' ({", ".join("?" * len(ids))}) LIMIT 1',
          (session.app_name, session.user_id, *ids),
      ) as cursor:
        return await cursor.fetchone() is not None

  async def _upsert(
      self,
      db: aiosqlite.Connection,
      session: SessionKey,
      token: FenceToken,
      state: str,
      below: int,
  ) -> bool:
    await db.execute('BEGIN IMMEDIATE')
    try:
      cursor = await db.execute(
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
              _now(),
              below,
          ),
      )
      changed = cursor.rowcount == 1
      await db.commit()
    except BaseException:
      await db.rollback()
      raise
    return changed

  async def arm(self, session: SessionKey, token: FenceToken) -> None:
    _check_token(session, token)
    async with self._connection() as db:
      await self._connect_ready(db)
      if await self._upsert(
          db, session, token, FenceState.ARMED, token.incarnation
      ):
        return
      refusal = _arm_refusal(session, token, await self._read(db, session))
    if refusal is not None:
      raise refusal

  async def retire(self, session: SessionKey, token: FenceToken) -> FenceRow:
    _check_token(session, token)
    async with self._connection() as db:
      await self._connect_ready(db)
      await db.execute('BEGIN IMMEDIATE')
      try:
        cursor = await db.execute(
            f'UPDATE {FENCE_TABLE} SET state=?, updated_at=? WHERE'
            f' {_SQLITE_KEY} AND incarnation=? AND operation_id=? AND state=?',
            (
                FenceState.RETIRED,
                _now(),
                *self._params(session),
                token.incarnation,
                token.operation_id,
                FenceState.ARMED,
            ),
        )
        retired = cursor.rowcount == 1
        await db.commit()
      except BaseException:
        await db.rollback()
        raise
      if not retired:
        await self._upsert(
            db, session, token, FenceState.RETIRED, token.incarnation + 1
        )
      row = await self._read(db, session)
    assert row is not None
    if row.state == FenceState.RETIRED and (
        row.incarnation == token.incarnation
        and row.operation_id == token.operation_id
    ):
      return row
    return _retire_outcome(session, token, row)

  async def record_adoption(
      self, session: SessionKey, adoption_id: str
  ) -> FenceRow:
    token = FenceToken(1, adoption_id)
    _check_token(session, token)
    async with self._connection() as db:
      await self._connect_ready(db)
      await self._upsert(db, session, token, FenceState.ADOPTED, 1)
      row = await self._read(db, session)
    assert row is not None
    return row

  async def create_if_fence_current(
      self,
      session: SessionKey,
      token: FenceToken,
      *,
      state: Optional[dict[str, Any]],
      events: Sequence[Event],
      digest: str,
      fault_hook: Optional[FaultHook] = None,
  ) -> Session:
    # pylint: disable=g-import-not-at-top
    import sqlite3

    import aiosqlite

    from ...sessions.sqlite_session_service import _merge_state

    # pylint: enable=g-import-not-at-top
    _check_token(session, token)
    service = self._service
    app_name, user_id = session.app_name, session.user_id
    session_id = session.session_id
    deltas = _session_util.extract_json_safe_state_delta(state or {})
    now = _now()
    update_time = max([now, *(e.timestamp for e in events)])
    async with self._connection() as db:
      await self._connect_ready(db)
      await db.execute('BEGIN IMMEDIATE')
      try:
        cursor = await db.execute(
            f'UPDATE {FENCE_TABLE} SET state=?, import_digest=?,'
            f' import_count=?, updated_at=? WHERE {_SQLITE_KEY} AND'
            ' incarnation=? AND operation_id=? AND state=?',
            (
                FenceState.COMMITTED,
                digest,
                len(events),
                now,
                *self._params(session),
                token.incarnation,
                token.operation_id,
                FenceState.ARMED,
            ),
        )
        if cursor.rowcount != 1:
          await db.rollback()
          raise _refused(session, token, await self._read(db, session))
        # No separate existence SELECT: the INSERT below refuses a duplicate
        # (primary key) with the same AlreadyExistsError, and the rollback
        # takes the fence update with it.
        # pylint: disable=protected-access
        if deltas['app']:
          await service._upsert_app_state(db, app_name, deltas['app'], now)
        if deltas['user']:
          await service._upsert_user_state(
              db, app_name, user_id, deltas['user'], now
          )
        app_state = await service._get_app_state(db, app_name)
        user_state = await service._get_user_state(db, app_name, user_id)
        # pylint: enable=protected-access
        try:
          await db.execute(
              'INSERT INTO sessions (app_name, user_id, id, state,'
              ' create_time, update_time) VALUES (?, ?, ?, ?, ?, ?)',
              (
                  app_name,
                  user_id,
                  session_id,
                  json.dumps(deltas['session']),
                  now,
                  update_time,
              ),
          )
          for event in events:
            await db.execute(
                'INSERT INTO events (id, app_name, user_id, session_id,'
                ' invocation_id, timestamp, event_data) VALUES (?, ?, ?, ?,'
                ' ?, ?, ?)',
                (
                    event.id,
                    app_name,
                    user_id,
                    session_id,
                    event.invocation_id,
                    event.timestamp,
                    event.model_dump_json(exclude_none=True),
                ),
            )
        except (sqlite3.IntegrityError, aiosqlite.IntegrityError) as e:
          raise AlreadyExistsError(
              f'Session with id {session_id} already exists.'
          ) from e
        if fault_hook is not None:
          await fault_hook('in_session_transaction')
        await db.commit()
      except BaseException:
        await db.rollback()
        raise
    return Session(
        app_name=app_name,
        user_id=user_id,
        id=session_id,
        state=_merge_state(app_state, user_state, deltas['session']),
        events=list(events),
        last_update_time=update_time,
    )
