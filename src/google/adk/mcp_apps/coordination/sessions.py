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

"""The Session lifecycle on the session coordinator, and incarnation permits.

`SessionCoordination` is the lifecycle manager's `DeletionCoordinator` (and
`DeletionExclusion`) on a `SessionCoordinator`: a deletion's coordination
step waits for the Session's owner and every queued owner, and an
incarnation-checked append holds that step off. An `IncarnationPermit`
carries the incarnation it was issued in; every use re-checks it, so a
permit of a deleted or recreated Session fails typed. Design:
docs/design/session-coordination-sessions.md.

Usage:

  coordination = SessionCoordination()
  manager = SessionLifecycleManager(store, service, coordinator=coordination)
  permit = await issue_permit(manager, key, 'patch')
  await permit.append(manager, session, event)  # StaleIncarnationError
"""

from __future__ import annotations

from collections.abc import AsyncIterator
import contextlib
import dataclasses
from typing import Optional

from ...events.event import Event
from ...sessions.session import Session
from ..contracts.scope import SessionKey
from ..lifecycle.manager import SessionLifecycleManager
from .coordinator import owned_here
from .coordinator import session_coordinator
from .coordinator import SessionCoordinator

DELETION_OPERATION = "SessionLifecycleManager.delete"
"""The operation name a deletion's coordination step owns the Session as."""


class SessionCoordination:
  """`DeletionCoordinator` and `DeletionExclusion` on a `SessionCoordinator`.

  Attributes:
    coordinator: The coordinator; the process-wide one by default.
  """

  def __init__(self, coordinator: Optional[SessionCoordinator] = None):
    self.coordinator = coordinator or session_coordinator()

  async def acquire_for_deletion(
      self, session: SessionKey, incarnation: int
  ) -> None:
    """Waits until the Session's owner and every queued owner are done.

    Ownership is taken in turn and handed on at once: the `DELETING`
    record already refuses every later admission, and every later
    incarnation-checked append re-checks under ownership.

    Raises:
      CoordinationError: `SAME_SESSION_REENTRY`, the caller owns the
        Session (it would wait for itself).
    """
    del incarnation  # Ownership is per Session; the record names the rest.
    ownership = await self.coordinator.acquire(session, DELETION_OPERATION)
    ownership.release()

  @contextlib.asynccontextmanager
  async def excluding_deletion(
      self, session: SessionKey, operation: str
  ) -> AsyncIterator[object]:
    """Owns `session` for the block, unless the caller owns it already."""
    held = owned_here(session)
    if held is not None:
      yield held
      return
    async with self.coordinator.owned(session, operation) as ownership:
      yield ownership


@dataclasses.dataclass(frozen=True)
class IncarnationPermit:
  """Authority to change one incarnation of one Session, and no other.

  Attributes:
    session: The Session.
    incarnation: The incarnation that was `ACTIVE` when it was issued.
    purpose: What it permits, such as `'patch'`, for the typed refusal.
  """

  session: SessionKey
  incarnation: int
  purpose: str

  async def require(self, manager: SessionLifecycleManager) -> None:
    """Refuses the permit unless its incarnation is still the `ACTIVE` one.

    Raises:
      StaleIncarnationError: The Session was deleted or recreated.
    """
    await manager.require_incarnation(
        self.session, self.incarnation, purpose=self.purpose
    )

  async def append(
      self, manager: SessionLifecycleManager, session: Session, event: Event
  ) -> Event:
    """Appends `event` under the permit: check and append are one step.

    Raises:
      ValueError: `session` is not the permit's Session.
      StaleIncarnationError: The Session moved on; nothing is appended.
    """
    if SessionKey(session.app_name, session.user_id, session.id) != (
        self.session
    ):
      raise ValueError("the Session is not the permit's")
    return await manager.append_event(
        session, event, incarnation=self.incarnation
    )


async def issue_permit(
    manager: SessionLifecycleManager, session: SessionKey, purpose: str
) -> IncarnationPermit:
  """A permit for the Session's `ACTIVE` incarnation.

  Raises:
    SessionNotAdmittedError: The Session is not `ACTIVE`.
  """
  incarnation = await manager.admit(session)
  return IncarnationPermit(session, incarnation, purpose)
