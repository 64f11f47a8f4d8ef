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

"""Session ownership: one mutator of an app-enabled Session at a time.

Every entry point that can change an app-enabled Session (a Runner turn, a
rewind, and from PR 4's channel on, a View's governed operations) owns the
Session for its whole run through one `SessionCoordinator`. Waiters queue
first-in first-out on any event loop or thread. Ownership is also recorded
in the calling execution context, so an entry point started from code that
already owns the Session (a callback of the running turn, or the code
iterating it) is refused at once with `CoordinationError` instead of
waiting for itself. A task that outlives its owner is not refused: the
record dies with the ownership; so does the record of a caller that dropped
the operation, once the context closing it took the ownership over.
Design: docs/design/session-coordination.md.

Usage:

  async with session_coordinator().owned(key, 'Runner.run_async'):
    ...  # the only coordinated mutator of `key` in this process
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator
import contextlib
import contextvars
import threading
from typing import Optional

from ..contracts.scope import SessionKey
from .errors import CoordinationError
from .errors import CoordinationErrorReason


class Ownership:
  """One operation's ownership of one Session, until `release()`.

  Attributes:
    session: The owned Session.
    operation: The entry point that owns it, such as `'Runner.run_async'`.
  """

  def __init__(
      self,
      coordinator: SessionCoordinator,
      session: SessionKey,
      operation: str,
  ) -> None:
    self.session = session
    self.operation = operation
    self._coordinator = coordinator
    self._released = False
    self._records: list[_Record] = []

  @property
  def released(self) -> bool:
    """True once released; a released ownership protects nothing."""
    return self._released

  def release(self) -> None:
    """Hands the Session to the next waiter; idempotent, any thread."""
    self._coordinator._release(self)  # pylint: disable=protected-access

  def transfer_here(self) -> None:
    """Makes the calling context the only one that holds this ownership.

    For an operation finished from another context than the one that ran
    it: an async generator its caller dropped is closed by its loop in a
    task of its own. The dropping code no longer counts as the owner (it
    may queue for the Session); the closing code does, until release.
    """
    for record in self._records:
      record.abandoned = True
    _hold(self)


class _Record:
  """One execution context's hold on an ownership."""

  def __init__(self, ownership: Ownership) -> None:
    self.ownership = ownership
    self.abandoned = False

  @property
  def live(self) -> bool:
    return not (self.abandoned or self.ownership.released)


class _Waiter:
  """A queued acquisition, woken on its own loop."""

  def __init__(self, loop: asyncio.AbstractEventLoop, operation: str):
    self.loop = loop
    self.future: asyncio.Future[None] = loop.create_future()
    self.operation = operation
    self.ownership: Optional[Ownership] = None


def _wake(future: asyncio.Future[None]) -> None:
  if not future.done():
    future.set_result(None)


_held: contextvars.ContextVar[tuple[_Record, ...]] = contextvars.ContextVar(
    'adk_mcp_apps_session_ownership', default=()
)

_FINALIZER_STEPS = 3
"""Event-loop steps an acquisition that meets its own context's ownership
grants the loop before refusing: a dropped async generator is closed by a
task its loop schedules at once, whose first step transfers the ownership
(`Ownership.transfer_here`). Two steps suffice on a FIFO loop."""


def _hold(ownership: Ownership) -> None:
  record = _Record(ownership)
  ownership._records.append(record)  # pylint: disable=protected-access
  live = tuple(r for r in _held.get() if r.live)
  _held.set(live + (record,))


def owned_here(session: SessionKey) -> Optional[Ownership]:
  """The live ownership of `session` the calling context holds, if any."""
  for record in _held.get():
    if record.live and record.ownership.session == session:
      return record.ownership
  return None


def refuse_reentry(session: SessionKey, operation: str) -> None:
  """Raises if the calling context already owns `session`.

  Args:
    session: The Session the entry point would own.
    operation: The entry point, for the error.

  Raises:
    CoordinationError: `SAME_SESSION_REENTRY`; nothing waited or ran.
  """
  owner = owned_here(session)
  if owner is not None:
    raise CoordinationError(
        CoordinationErrorReason.SAME_SESSION_REENTRY,
        operation,
        f'{owner.operation} owns this Session in the calling context;'
        ' waiting for it here would never end',
    )


class SessionCoordinator:
  """Per-Session ownership shared by every loop and thread of a process."""

  def __init__(self) -> None:
    self._lock = threading.Lock()
    self._owners: dict[SessionKey, Ownership] = {}
    self._waiters: dict[SessionKey, collections.deque[_Waiter]] = {}

  def owner(self, session: SessionKey) -> Optional[Ownership]:
    """The current owner of `session`, if any."""
    with self._lock:
      return self._owners.get(session)

  def waiting(self, session: SessionKey) -> int:
    """How many acquisitions of `session` are queued."""
    with self._lock:
      return len(self._waiters.get(session, ()))

  async def acquire(self, session: SessionKey, operation: str) -> Ownership:
    """Waits for `session` and returns its ownership; release it after.

    Cancelled while queued, the waiter leaves the queue without ever
    owning the Session (or, granted at that instant, releases at once).

    Raises:
      CoordinationError: `SAME_SESSION_REENTRY`, never queued (after at
        most `_FINALIZER_STEPS` event-loop steps).
    """
    if owned_here(session) is not None:
      # The caller may have dropped an operation it was iterating (an
      # `async for` left by `break`): its loop closes it in a task queued
      # already, which hands the ownership over at its first step. Let
      # those steps run; if this context still owns the Session, waiting
      # would never end.
      for _ in range(_FINALIZER_STEPS):
        await asyncio.sleep(0)
        if owned_here(session) is None:
          break
      refuse_reentry(session, operation)
    loop = asyncio.get_running_loop()
    with self._lock:
      if session not in self._owners:
        ownership = Ownership(self, session, operation)
        self._owners[session] = ownership
        waiter = None
      else:
        waiter = _Waiter(loop, operation)
        self._waiters.setdefault(session, collections.deque()).append(waiter)
    if waiter is not None:
      try:
        await waiter.future
      except BaseException:
        with self._lock:
          granted = waiter.ownership
          if granted is None:
            self._drop_waiter(session, waiter)
        if granted is not None:
          granted.release()
        raise
      assert waiter.ownership is not None
      ownership = waiter.ownership
    _hold(ownership)
    return ownership

  @contextlib.asynccontextmanager
  async def owned(
      self, session: SessionKey, operation: str
  ) -> AsyncIterator[Ownership]:
    """`acquire` for the block; released however the block ends."""
    ownership = await self.acquire(session, operation)
    try:
      yield ownership
    finally:
      ownership.release()

  async def requeue(self, ownership: Ownership) -> None:
    """Gives the Session up and waits to own it again, as `ownership`.

    For an operation that waits on something other than the Session (an
    MRTR leg): the operations queued meanwhile run first, then the same
    `Ownership` object is live again. The caller re-checks whatever those
    operations may have changed.

    Raises:
      asyncio.CancelledError: Cancelled while queued; `ownership` stays
        released.
    """
    ownership.release()
    fresh = await self.acquire(ownership.session, ownership.operation)
    with self._lock:
      # The grant is handed to the original object, which its holders keep.
      fresh._released = True  # pylint: disable=protected-access
      ownership._released = False  # pylint: disable=protected-access
      self._owners[ownership.session] = ownership
    _hold(ownership)

  def _drop_waiter(self, session: SessionKey, waiter: _Waiter) -> None:
    queue = self._waiters.get(session)
    if queue is not None and waiter in queue:
      queue.remove(waiter)
      if not queue:
        del self._waiters[session]

  def _release(self, ownership: Ownership) -> None:
    session = ownership.session
    with self._lock:
      if ownership.released:
        return
      ownership._released = True  # pylint: disable=protected-access
      if self._owners.get(session) is ownership:
        del self._owners[session]
      queue = self._waiters.get(session)
      while queue:
        waiter = queue.popleft()
        successor = Ownership(self, session, waiter.operation)
        # Set before the wake: the waiter may resume on its own thread at
        # once and reads it without the lock.
        waiter.ownership = successor
        try:
          waiter.loop.call_soon_threadsafe(_wake, waiter.future)
        except RuntimeError:
          waiter.ownership = None
          continue  # Its loop is closed: nobody is left to own it.
        self._owners[session] = successor
        break
      if queue is not None and not queue:
        del self._waiters[session]


_process_coordinator = SessionCoordinator()


def session_coordinator() -> SessionCoordinator:
  """The coordinator every entry point of this process shares."""
  return _process_coordinator
