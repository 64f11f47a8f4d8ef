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

"""First-party Session create/import, patch and delete under a profile.

`FirstPartySessions` is what ADK's own Session routes call when an Apps
profile with a lifecycle store is bound: create and import run the fenced
`CREATING`->`ACTIVE` creation (imported Events finalized, protected fields
stamped as the Session API's), patch appends under the Session coordinator
and the finalizer with an incarnation check that deletion cannot pass, and
delete runs the incarnation-safe cascade with the coordinator as its
coordination step. Design: docs/design/session-coordination-sessions.md.

Usage:

  sessions = FirstPartySessions.for_profile(profile, session_service)
  session = await sessions.create('app', 'alice', session_id='s1')
  await sessions.patch('app', 'alice', 's1', {'cart': []})
  await sessions.delete('app', 'alice', 's1')
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from typing import Any
from typing import Optional
import uuid

from ...events.event import Event
from ...events.event_actions import EventActions
from ...sessions.session import Session
from ..contracts.scope import SessionKey
from ..contracts.session_lifecycle_store import LifecycleConflictError
from ..contracts.session_lifecycle_store import LifecycleState
from ..coordination.coordinator import refuse_reentry
from ..coordination.coordinator import session_coordinator
from ..coordination.coordinator import SessionCoordinator
from ..coordination.errors import CoordinationError
from ..coordination.sessions import IncarnationPermit
from ..coordination.sessions import SessionCoordination
from ..event_policy.provenance import admitted
from ..event_policy.provenance import SESSION_API
from ..lifecycle.adoption import adopt_on_first_touch
from ..lifecycle.errors import AdoptionRefusedError
from ..lifecycle.errors import CreationFenceError
from ..lifecycle.errors import SessionExistsError
from ..lifecycle.errors import SessionLifecycleError
from ..lifecycle.errors import SessionNotAdmittedError
from ..lifecycle.errors import StaleIncarnationError
from ..lifecycle.manager import CascadeParticipant
from ..lifecycle.manager import not_admitted_error
from ..lifecycle.manager import RevokeHook
from ..lifecycle.manager import SealedStoreParticipant
from ..lifecycle.manager import SessionLifecycleManager
from .errors import OperationError
from .errors import OperationErrorReason

CREATE = 'SessionApi.create'
PATCH = 'SessionApi.patch'
DELETE = 'SessionApi.delete'


class FirstPartySessions:
  """The first-party Session API of an app-enabled deployment.

  Write an app-enabled Session through this API, a Runner or an app
  operation: each waits for the Session's current owner. A direct external
  `SessionService.append_event` is outside the coordinated contract and
  unsupported: it does not wait for the owner, so its Event may land in
  the middle of a turn or an app call.

  Attributes:
    manager: The lifecycle manager; its coordinator is `coordination`.
    coordination: The Session coordinator's lifecycle side.
  """

  def __init__(
      self,
      manager: SessionLifecycleManager,
      coordination: SessionCoordination,
  ) -> None:
    """Wraps a manager built with `coordination` as its coordinator.

    Raises:
      ValueError: The manager's coordinator is not `coordination`.
    """
    if manager._coordinator is not coordination:  # pylint: disable=protected-access
      raise ValueError(
          'the manager must use the same SessionCoordination as its coordinator'
      )
    self.manager = manager
    self.coordination = coordination

  @classmethod
  def for_profile(
      cls,
      profile: Any,
      session_service: Any,
      *,
      revoke_hooks: Sequence[RevokeHook] = (),
      participants: Sequence[CascadeParticipant] = (),
      coordinator: Optional[SessionCoordinator] = None,
  ) -> FirstPartySessions:
    """The API for a bound profile and its Session service.

    Args:
      profile: An `McpAppsHostProfile` with a `session_lifecycle_store`.
      session_service: The fenced Session service (SQL or SQLite file).
      revoke_hooks: Phase-1 revocation of the deletion.
      participants: Cascade participants after the profile's sealed-result
        and export audit stores (which come first, in that order, when the
        profile has them).
      coordinator: The Session coordinator; the process-wide one by
        default.

    Raises:
      OperationError: `SESSION_API_UNAVAILABLE`, no lifecycle store.
      FenceUnsupportedError: The service cannot host the creation fence.
    """
    store = getattr(profile, 'session_lifecycle_store', None)
    if store is None:
      raise OperationError(
          OperationErrorReason.SESSION_API_UNAVAILABLE,
          'the profile has no session lifecycle store',
      )
    cascade: list[CascadeParticipant] = []
    sealed = getattr(profile, 'sealed_result_store', None)
    if sealed is not None:
      cascade.append(SealedStoreParticipant(sealed))
    audit = getattr(profile, 'export_audit_store', None)
    if audit is not None:
      cascade.append(SealedStoreParticipant(audit, name='export_audit'))
    cascade.extend(participants)
    coordination = SessionCoordination(coordinator or session_coordinator())
    manager = SessionLifecycleManager(
        store,
        session_service,
        revoke_hooks=revoke_hooks,
        coordinator=coordination,
        participants=cascade,
    )
    return cls(manager, coordination)

  @staticmethod
  def status_for(error: BaseException) -> Optional[int]:
    """The HTTP status of a typed refusal (see the module's `status_for`)."""
    return status_for(error)

  @property
  def session_service(self) -> Any:
    """The Session service the API writes through."""
    return self.manager.session_service

  # -- create / import -------------------------------------------------------

  async def create(
      self,
      app_name: str,
      user_id: str,
      *,
      session_id: Optional[str] = None,
      state: Optional[dict[str, Any]] = None,
      events: Sequence[Event] = (),
  ) -> Session:
    """Creates (and imports `events` into) the Session's next incarnation.

    The creation owns the Session in the coordinator, reserves
    `CREATING(n)`, commits the row with the finalized imported Events and
    the fenced receipt, and activates `ACTIVE(n)`; a client-supplied id of
    a deleted Session gets a new incarnation with none of the old data.

    Raises:
      SessionExistsError: The Session exists (`ACTIVE`, `CREATING`, or a
        row that predates the lifecycle).
      SessionNotAdmittedError: It is being deleted.
      ValueError: An imported Event is partial or carries a state delta.
      CoordinationError: The caller owns the Session.
    """
    key = SessionKey(app_name, user_id, session_id or str(uuid.uuid4()))
    async with self.coordination.coordinator.owned(key, CREATE):
      with admitted(SESSION_API):
        created, _ = await self.manager.create(key, state=state, events=events)
    return created

  # -- patch -----------------------------------------------------------------

  async def permit(
      self, app_name: str, user_id: str, session_id: str, purpose: str
  ) -> IncarnationPermit:
    """A permit for the Session's `ACTIVE` incarnation (adopting a Session
    that predates the lifecycle on this first touch).

    Raises:
      SessionNotAdmittedError: The Session is not `ACTIVE`.
    """
    key = SessionKey(app_name, user_id, session_id)
    incarnation = await self._active_incarnation(key)
    return IncarnationPermit(key, incarnation, purpose)

  async def patch(
      self,
      app_name: str,
      user_id: str,
      session_id: str,
      state_delta: Optional[dict[str, Any]],
      *,
      permit: Optional[IncarnationPermit] = None,
  ) -> Session:
    """Appends a state-change Event, as ADK's `PATCH` route does.

    The Event is made once the patch owns the Session, so its timestamp
    (which orders a Session's stored Events) follows everything the
    previous owner appended.

    Returns:
      The Session, with the Event appended.
    """

    def state_change() -> Event:
      return Event(
          invocation_id='p-' + str(uuid.uuid4()),
          author='user',
          actions=EventActions(state_delta=state_delta or {}),
      )

    return await self._append(
        SessionKey(app_name, user_id, session_id), state_change, permit
    )

  async def append(
      self,
      key: SessionKey,
      event: Event,
      *,
      permit: Optional[IncarnationPermit] = None,
  ) -> Session:
    """Appends `event` under the coordinator, the finalizer (stamped as the
    Session API's) and an incarnation check deletion cannot pass.

    Args:
      key: The Session.
      event: The Event; its protected fields are stamped.
      permit: Ties the append to the permit's incarnation; by default the
        current `ACTIVE` one.

    Raises:
      StaleIncarnationError: The permit's incarnation is no longer the
        `ACTIVE` one; nothing is appended.
      SessionNotAdmittedError: The Session is not `ACTIVE`.
      OperationError: `SESSION_NOT_FOUND`.
      CoordinationError: The caller owns the Session.
    """
    return await self._append(key, lambda: event, permit)

  async def _append(
      self,
      key: SessionKey,
      make_event: Callable[[], Event],
      permit: Optional[IncarnationPermit],
  ) -> Session:
    if permit is not None and permit.session != key:
      raise ValueError("the permit is not this Session's")
    async with self.coordination.coordinator.owned(key, PATCH):
      if permit is not None:
        incarnation = permit.incarnation
      else:
        incarnation = await self._active_incarnation(key)
      session = await self._row(key)
      if session is None:
        # The row of a stale incarnation is gone: report the stale permit.
        await self.manager.require_incarnation(
            key, incarnation, purpose='append'
        )
        raise _not_found()
      with admitted(SESSION_API):
        await self.manager.append_event(
            session, make_event(), incarnation=incarnation
        )
    return session

  # -- delete ----------------------------------------------------------------

  async def delete(self, app_name: str, user_id: str, session_id: str) -> None:
    """Deletes the Session through the incarnation-safe cascade.

    `DELETING(n)` first (new admission refused), then phase-1 revocation,
    the coordinator (the current and queued owners finish), the row, the
    cascade and `DELETED(n)`. A Session that predates the lifecycle is
    adopted first; an absent or deleted one is a no-op; an interrupted
    deletion is resumed.

    Raises:
      SessionNotAdmittedError: The Session is still being created.
      CoordinationError: The caller owns the Session (refused before the
        deletion begins).
    """
    key = SessionKey(app_name, user_id, session_id)
    refuse_reentry(key, DELETE)
    try:
      record = await adopt_on_first_touch(
          self.manager.store, key, self.session_service
      )
    except AdoptionRefusedError:
      if await self._row(key) is None:
        return  # Nothing to delete, as for ADK's own route.
      raise
    if record.state is LifecycleState.ACTIVE:
      await self.manager.delete(key)
    elif record.state is LifecycleState.DELETING:
      await self.manager.resume_deletion(key)
    elif record.state is LifecycleState.CREATING:
      raise not_admitted_error(record)

  async def _row(self, key: SessionKey) -> Optional[Session]:
    found: Optional[Session] = await self.session_service.get_session(
        app_name=key.app_name, user_id=key.user_id, session_id=key.session_id
    )
    return found

  async def _active_incarnation(self, key: SessionKey) -> int:
    try:
      record = await adopt_on_first_touch(
          self.manager.store, key, self.session_service
      )
    except AdoptionRefusedError:
      if await self._row(key) is None:
        raise _not_found() from None
      raise
    if record.state in (LifecycleState.ABSENT, LifecycleState.DELETED):
      raise _not_found()
    if record.state is not LifecycleState.ACTIVE:
      raise not_admitted_error(record)
    return record.incarnation


def _not_found() -> OperationError:
  return OperationError(
      OperationErrorReason.SESSION_NOT_FOUND, 'no such Session'
  )


def status_for(error: BaseException) -> Optional[int]:
  """The HTTP status ADK's Session routes answer `error` with, if typed.

  Returns:
    404 for a missing Session, 409 for a lifecycle or coordination
    refusal, 400 for a malformed request, None for anything else.
  """
  if isinstance(error, OperationError):
    if error.reason is OperationErrorReason.SESSION_NOT_FOUND:
      return 404
    return None
  if isinstance(
      error,
      (
          SessionExistsError,
          SessionNotAdmittedError,
          StaleIncarnationError,
          CreationFenceError,
          LifecycleConflictError,
          CoordinationError,
      ),
  ):
    return 409
  if isinstance(error, SessionLifecycleError):
    return 409
  if isinstance(error, (ValueError, TypeError)):
    return 400
  return None
