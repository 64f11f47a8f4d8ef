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

"""The write fence a Session service commits Session creation against.

A fence row sits next to the Session rows; the Session row, its imported
events and the creation receipt commit in the transaction that moves the
fence from `armed` to `committed`, so a creator whose fence was retired
fails inside its own transaction. Design: docs/design/lifecycle.md.

Usage:

  fence = fence_for(session_service)  # SQL session services only
  token = FenceToken(incarnation=1, operation_id='op-1')
  await fence.arm(key, token)
  session = await fence.create_if_fence_current(
      key, token, state=None, events=events, digest=import_digest(events)
  )
"""

from __future__ import annotations

import abc
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
import dataclasses
import time
from typing import Any
from typing import Generic
from typing import Optional
from typing import Protocol
from typing import TypeVar
import weakref

from ...events.event import Event
from ...sessions.session import Session
from ..contracts.scope import SessionKey
from .errors import CreationFenceError
from .errors import FenceRefusal
from .errors import FenceUnsupportedError

FENCE_TABLE = 'adk_mcp_apps_session_fences'
"""The fence-and-receipt table, co-located with the Session rows."""

KEY_LENGTH = 255
"""The longest key column (app name, user id, Session id, operation id)."""

FaultHook = Callable[[str], Awaitable[None]]
"""Awaited at named points (tests kill the process there); None in use."""

ConnectionT = TypeVar('ConnectionT')
_ConnectionT_co = TypeVar('_ConnectionT_co', covariant=True)


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
  """Refuses a malformed Session key or token before any I/O."""
  if not isinstance(session, SessionKey):
    raise TypeError('session must be a SessionKey')
  if isinstance(token.incarnation, bool) or not isinstance(
      token.incarnation, int
  ):
    raise TypeError('token.incarnation must be an int')
  if token.incarnation < 1:
    raise ValueError('token.incarnation must be at least 1')
  if not isinstance(token.operation_id, str) or not (
      0 < len(token.operation_id) <= KEY_LENGTH
  ):
    raise ValueError(
        f'token.operation_id must be a str of 1..{KEY_LENGTH} characters'
    )


def _refused(
    reason: FenceRefusal,
    session: SessionKey,
    token: FenceToken,
    row: Optional[FenceRow],
    detail: str,
) -> CreationFenceError:
  """The refusal of `token`'s operation, naming the fence row found."""
  return CreationFenceError(
      reason,
      session,
      incarnation=token.incarnation,
      operation_id=token.operation_id,
      found=None if row is None else f'{row.state}({row.incarnation})',
      detail=detail,
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
  return _refused(
      FenceRefusal.RETIRED,
      session,
      token,
      row,
      'the fence has moved past this creator',
  )


def _retire_outcome(
    session: SessionKey, token: FenceToken, row: FenceRow
) -> FenceRow:
  """Decides a retire from the fence row it left behind."""
  if row.state == FenceState.RETIRED and (
      row.incarnation == token.incarnation
      and row.operation_id == token.operation_id
  ):
    return row
  if row.incarnation > token.incarnation or (
      row.incarnation == token.incarnation and row.state == FenceState.RETIRED
  ):
    return row
  if (
      row.incarnation == token.incarnation
      and row.operation_id == token.operation_id
      and row.state == FenceState.COMMITTED
  ):
    raise _refused(
        FenceRefusal.ALREADY_COMMITTED,
        session,
        token,
        row,
        'the creator committed; verify its receipt instead',
    )
  raise _refused(
      FenceRefusal.OTHER_OPERATION,
      session,
      token,
      row,
      'the fence belongs to another operation',
  )


def now() -> float:
  """The wall-clock time stamped on fence rows."""
  return time.time()


class _SessionCreator(Protocol[_ConnectionT_co]):
  """A Session service that creates a Session with transaction hooks."""

  async def create_session_with_events(
      self,
      *,
      app_name: str,
      user_id: str,
      state: Optional[dict[str, Any]] = None,
      session_id: Optional[str] = None,
      events: Sequence[Event] = (),
      on_begin: Optional[Callable[[_ConnectionT_co], Awaitable[None]]] = None,
      before_commit: Optional[
          Callable[[_ConnectionT_co], Awaitable[None]]
      ] = None,
  ) -> Session:
    ...


class SqlSessionFence(abc.ABC, Generic[ConnectionT]):
  """A fence in a SQL Session service's own database.

  The one fenced create: the service's `create_session_with_events` commits
  the Session, its events and the fence move in one transaction; backends
  supply the conditional fence `UPDATE` on the transaction's connection.
  """

  def __init__(self, service: _SessionCreator[ConnectionT]) -> None:
    self._creator = service

  @abc.abstractmethod
  async def read(self, session: SessionKey) -> Optional[FenceRow]:
    """The fence row, or None."""

  @abc.abstractmethod
  async def _upsert(
      self, session: SessionKey, token: FenceToken, state: str, below: int
  ) -> bool:
    """Moves the fence to `(state, token)` if absent or below `below`."""

  @abc.abstractmethod
  async def _retire_armed(self, session: SessionKey, token: FenceToken) -> bool:
    """Moves `token`'s armed fence to retired; False if it is not armed."""

  async def arm(self, session: SessionKey, token: FenceToken) -> None:
    """Arms the fence for `token`; idempotent for the same token."""
    _check_token(session, token)
    if await self._upsert(session, token, FenceState.ARMED, token.incarnation):
      return
    refusal = _arm_refusal(session, token, await self.read(session))
    if refusal is not None:
      raise refusal

  async def retire(self, session: SessionKey, token: FenceToken) -> FenceRow:
    """Retires `token`'s fence so its creator can no longer commit."""
    _check_token(session, token)
    if not await self._retire_armed(session, token):
      # Never armed (the creator died first): retire the incarnation anyway,
      # so the creator cannot arm it later.
      await self._upsert(
          session, token, FenceState.RETIRED, token.incarnation + 1
      )
    row = await self.read(session)
    assert row is not None
    return _retire_outcome(session, token, row)

  async def record_adoption(
      self, session: SessionKey, adoption_id: str
  ) -> FenceRow:
    """Marks a pre-series Session as adopted (the adoption receipt)."""
    token = FenceToken(1, adoption_id)
    _check_token(session, token)
    await self._upsert(session, token, FenceState.ADOPTED, 1)
    row = await self.read(session)
    assert row is not None
    return row

  @abc.abstractmethod
  async def _begin_fenced(self, connection: ConnectionT) -> None:
    """Opens the creating transaction (if needed) with the fence in place."""

  @abc.abstractmethod
  async def _commit_fence(
      self,
      connection: ConnectionT,
      session: SessionKey,
      token: FenceToken,
      digest: str,
      count: int,
  ) -> bool:
    """Moves `token`'s armed fence to committed; False if it is not armed."""

  @abc.abstractmethod
  async def _rollback(self, connection: ConnectionT) -> None:
    """Rolls the creating transaction back."""

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
    """Commits the Session row, events and receipt iff the fence is armed.

    Raises:
      CreationFenceError: (`RETIRED`) The fence is not armed for `token`; nothing
        was written.
      AlreadyExistsError: The Session row exists; nothing was written.
    """
    _check_token(session, token)

    async def on_begin(connection: ConnectionT) -> None:
      # The fence check is the transaction's first write: it takes the fence
      # row's lock, so a concurrent retire waits for this commit or rollback.
      await self._begin_fenced(connection)
      if not await self._commit_fence(
          connection, session, token, digest, len(events)
      ):
        await self._rollback(connection)
        row = await self.read(session)
        raise _refused(
            FenceRefusal.RETIRED,
            session,
            token,
            row,
            'the creation fence is not armed for this creator',
        )

    async def before_commit(connection: ConnectionT) -> None:
      del connection
      if fault_hook is not None:
        await fault_hook('in_session_transaction')

    return await self._creator.create_session_with_events(
        app_name=session.app_name,
        user_id=session.user_id,
        session_id=session.session_id,
        state=state,
        events=events,
        on_begin=on_begin,
        before_commit=before_commit,
    )


_FENCES: weakref.WeakKeyDictionary[object, SessionCreationFence] = (
    weakref.WeakKeyDictionary()
)


def fence_for(service: object) -> SessionCreationFence:
  """The creation fence of a Session service.

  Args:
    service: A `DatabaseSessionService` or a file-backed
      `SqliteSessionService`.

  Returns:
    Its fence backend (one per service).

  Raises:
    FenceUnsupportedError: For any other service.
  """
  cached = _FENCES.get(service)
  if cached is not None:
    return cached
  fence: SessionCreationFence
  # pylint: disable=g-import-not-at-top
  from ...sessions.database_session_service import DatabaseSessionService
  from ...sessions.sqlite_session_service import SqliteSessionService
  from .aiosqlite_fence import AiosqliteSessionFence
  from .sqlalchemy_fence import SqlAlchemySessionFence

  # pylint: enable=g-import-not-at-top
  if isinstance(service, DatabaseSessionService):
    fence = SqlAlchemySessionFence(service)
  elif isinstance(service, SqliteSessionService):
    if service.db_path in ('', ':memory:'):
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
  _FENCES[service] = fence
  return fence
