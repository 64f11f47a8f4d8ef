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

"""Session incarnations from fenced creation to idempotent cascade deletion.

`SessionLifecycleManager` drives one `SessionLifecycleStore` and one Session
service's creation fence: create, recover a stalled creation, adopt a
pre-series Session, delete with a resumable cascade, and admit app work only
on an `ACTIVE` Session. Design: docs/design/lifecycle.md.

Usage:

  manager = SessionLifecycleManager(lifecycle_store, session_service)
  session, record = await manager.create(key, events=imported)
  incarnation = await manager.admit(key)
  await manager.delete(key)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
import contextlib
import dataclasses
import hashlib
import logging
from typing import Any
from typing import Optional
from typing import Protocol
from typing import runtime_checkable
import uuid

from opentelemetry import metrics

from ...events.event import Event
from ...sessions.base_session_service import GetSessionConfig
from ...sessions.session import Session
from ..contracts.scope import SessionKey
from ..contracts.session_lifecycle_store import CreationReceipt
from ..contracts.session_lifecycle_store import LifecycleRecord
from ..contracts.session_lifecycle_store import LifecycleState
from ..contracts.session_lifecycle_store import SessionLifecycleStore
from .errors import AdoptionRefusedError
from .errors import CreationFenceError
from .errors import FenceRefusal
from .errors import ReceiptMismatchError
from .errors import SessionExistsError
from .errors import SessionNotAdmittedError
from .errors import StaleIncarnationError
from .fenced_creation import FaultHook
from .fenced_creation import fence_for
from .fenced_creation import FenceRow
from .fenced_creation import FenceState
from .fenced_creation import FenceToken
from .fenced_creation import SessionCreationFence
from .imported_events import finalize_imported_events
from .imported_events import import_digest

logger = logging.getLogger('google_adk.' + __name__)

_deletions = metrics.get_meter('google_adk.mcp_apps.lifecycle').create_counter(
    'adk.mcp_apps.session_deletion',
    description=(
        'Session deletion signals: intent, completed or failed (attribute'
        ' "signal"), never as session Events.'
    ),
)


class DeletionSignal:
  """What a deletion reports besides its lifecycle record."""

  INTENT = 'intent'
  COMPLETED = 'completed'
  FAILED = 'failed'


def session_ref(session: SessionKey) -> str:
  """A redacted reference to `session` for logs and metrics: a digest of
  its key, never the key itself."""
  key = '\x00'.join((session.app_name, session.user_id, session.session_id))
  return hashlib.sha256(key.encode('utf-8')).hexdigest()[:16]


def _signal_deletion(
    signal: str,
    session: SessionKey,
    incarnation: int,
    *,
    step: Optional[str] = None,
    error: Optional[BaseException] = None,
) -> None:
  """Logs (critical) and counts a deletion signal, redacted: the key's
  digest, the incarnation, the step and the error's type, never the key or
  the error's message. Never written as a session Event."""
  _deletions.add(1, {'signal': signal})
  logger.critical(
      'Session lifecycle: deletion %s (session_ref=%s incarnation=%d%s%s)',
      signal,
      session_ref(session),
      incarnation,
      f' step={step}' if step else '',
      f' error={type(error).__name__}' if error is not None else '',
  )


class FaultPoint:
  """The named points at which `fault_hook` is awaited."""

  BEFORE_RESERVATION = 'before_reservation'
  AFTER_RESERVATION = 'after_reservation'
  AFTER_FENCE_ARM = 'after_fence_arm'
  BEFORE_IMPORT_FINALIZATION = 'before_import_finalization'
  AFTER_IMPORT_FINALIZATION = 'after_import_finalization'
  BEFORE_SESSION_COMMIT = 'before_session_commit'
  IN_SESSION_TRANSACTION = 'in_session_transaction'
  AFTER_SESSION_COMMIT = 'after_session_commit'
  AFTER_ACTIVATION = 'after_activation'
  AFTER_APPEND_CHECK = 'after_append_check'
  AFTER_FENCE_RETIRE = 'after_fence_retire'
  AFTER_DELETING = 'after_deleting'
  AFTER_REVOKE = 'after_revoke'
  AFTER_COORDINATION = 'after_coordination'
  AFTER_ROW_DELETE = 'after_row_delete'
  BEFORE_COMPLETION_MARK = 'before_completion_mark'

  @staticmethod
  def after_cascade(participant: str) -> str:
    """The point after cascade participant `participant` finished."""
    return f'after_cascade:{participant}'


class Step:
  """The deletion steps recorded in the lifecycle record."""

  REVOKE = 'revoke'
  COORDINATION = 'coordination'
  SESSION_ROW = 'session_row'

  @staticmethod
  def cascade(participant: str) -> str:
    """The step of cascade participant `participant`."""
    return f'cascade:{participant}'


RevokeHook = Callable[[SessionKey, int], Awaitable[None]]
"""Phase-1 revocation of one incarnation (Views, leases, permits, queues)."""


class DeletionCoordinator(Protocol):
  """Acquires the Session's coordination before its row is deleted."""

  async def acquire_for_deletion(
      self, session: SessionKey, incarnation: int
  ) -> None:
    """Waits until no governed operation of the incarnation is in flight."""
    ...


@runtime_checkable
class DeletionExclusion(Protocol):
  """A `DeletionCoordinator` that can also hold its step off for a block.

  `append_event` runs its incarnation check and its append inside
  `excluding_deletion`, so a deletion's coordination step (and so its row
  delete) cannot fall between the two.
  """

  async def acquire_for_deletion(
      self, session: SessionKey, incarnation: int
  ) -> None:
    """Waits until no governed operation of the incarnation is in flight."""
    ...

  def excluding_deletion(
      self, session: SessionKey, operation: str
  ) -> contextlib.AbstractAsyncContextManager[object]:
    """Holds `acquire_for_deletion` of `session` off for the block.

    A caller that already excludes it (it owns the Session) enters without
    waiting.
    """
    ...


class CascadeParticipant(Protocol):
  """Deletes everything one component keeps for an incarnation."""

  @property
  def name(self) -> str:
    """A stable step name, unique among the participants."""
    ...

  async def delete_incarnation(
      self, session: SessionKey, incarnation: int
  ) -> Any:
    """Deletes the incarnation's data; idempotent."""
    ...


@dataclasses.dataclass(frozen=True)
class SealedStoreParticipant:
  """Cascade participant for a store with `delete_incarnation` (sidecar)."""

  store: Any
  name: str = 'sealed_results'

  async def delete_incarnation(
      self, session: SessionKey, incarnation: int
  ) -> Any:
    return await self.store.delete_incarnation(session, incarnation)


@dataclasses.dataclass(frozen=True)
class RecoveryOutcome:
  """What `recover_creation` did.

  Attributes:
    record: The lifecycle record afterwards.
    activated: True if a verified receipt was activated.
    abandoned: True if the creation was abandoned (fence retired).
  """

  record: LifecycleRecord
  activated: bool = False
  abandoned: bool = False


def _key_args(session: SessionKey) -> dict[str, str]:
  return {
      'app_name': session.app_name,
      'user_id': session.user_id,
      'session_id': session.session_id,
  }


class SessionLifecycleManager:
  """Creates, recovers, adopts and deletes Session incarnations."""

  def __init__(
      self,
      store: SessionLifecycleStore,
      session_service: Any,
      *,
      revoke_hooks: Sequence[RevokeHook] = (),
      coordinator: Optional[DeletionCoordinator] = None,
      participants: Sequence[CascadeParticipant] = (),
      fault_hook: Optional[FaultHook] = None,
      fence: Optional[SessionCreationFence] = None,
  ) -> None:
    """Builds the manager.

    Args:
      store: The lifecycle store.
      session_service: A `DatabaseSessionService` or `SqliteSessionService`.
      revoke_hooks: Phase-1 revocation, in order; each idempotent.
      coordinator: Acquires coordination before the row delete (the Session
        coordinator); None acquires nothing.
      participants: The deletion cascade, in order; names must be unique.
      fault_hook: Awaited at each `FaultPoint` (tests only).
      fence: The creation fence; by default the service's own
        (`fence_for`), which refuses services that cannot host it.

    Raises:
      FenceUnsupportedError: The service cannot host the creation fence.
      ValueError: Two participants share a name.
    """
    names = [p.name for p in participants]
    if len(set(names)) != len(names):
      raise ValueError('cascade participant names must be unique')
    self.store = store
    self.session_service = session_service
    self.fence: SessionCreationFence = fence or fence_for(session_service)
    self._revoke_hooks = tuple(revoke_hooks)
    self._coordinator = coordinator
    self._participants = tuple(participants)
    self._fault_hook = fault_hook

  async def _fault(self, point: str) -> None:
    if self._fault_hook is not None:
      await self._fault_hook(point)

  # -- admission ----------------------------------------------------------------

  async def admit(self, session: SessionKey) -> int:
    """The incarnation app work may use now.

    Raises:
      SessionNotAdmittedError: `CREATING(n)`, `DELETING(n)`, `ABSENT` or
        `DELETED(n)` (its `state` says which).
    """
    record = await self.store.read(session)
    if record.state is LifecycleState.ACTIVE:
      return record.incarnation
    raise not_admitted_error(record)

  async def require_incarnation(
      self, session: SessionKey, incarnation: int, *, purpose: str
  ) -> None:
    """Refuses work tied to `incarnation` unless it is the `ACTIVE` one.

    `append_event` calls this; see `check_incarnation` for the others.

    Raises:
      StaleIncarnationError: Another incarnation, or not `ACTIVE`.
    """
    check_incarnation(
        await self.store.read(session), incarnation, purpose=purpose
    )

  async def append_event(
      self, session: Session, event: Event, *, incarnation: int
  ) -> Event:
    """Appends `event` only if `incarnation` is the Session's `ACTIVE` one.

    With a coordinator that is a `DeletionExclusion` (the Session
    coordinator's, `coordination.sessions.SessionCoordination`), the check
    and the append are one step relative to deletion: both run while the
    deletion's coordination step is held off, so a deletion either finishes
    that step before the check (which then refuses) or waits for the append.
    The caller's own ownership of the Session is reused, never re-acquired.

    Raises:
      StaleIncarnationError: The Session moved on; nothing is appended.
    """
    key = SessionKey(session.app_name, session.user_id, session.id)
    exclusion: contextlib.AbstractAsyncContextManager[object] = (
        self._coordinator.excluding_deletion(key, 'append_event')
        if isinstance(self._coordinator, DeletionExclusion)
        else contextlib.nullcontext()
    )
    async with exclusion:
      await self.require_incarnation(key, incarnation, purpose='append')
      await self._fault(FaultPoint.AFTER_APPEND_CHECK)
      result: Event = await self.session_service.append_event(session, event)
    return result

  # -- creation -----------------------------------------------------------------

  async def create(
      self,
      session: SessionKey,
      *,
      state: Optional[dict[str, Any]] = None,
      events: Sequence[Event] = (),
      operation_id: Optional[str] = None,
  ) -> tuple[Session, LifecycleRecord]:
    """Creates the next incarnation of `session`, fenced and receipted.

    Args:
      session: The Session key (client-supplied id included).
      state: The initial state.
      events: Events to import; finalized before they are digested.
      operation_id: The unique creation-operation id; random by default.

    Returns:
      The created Session and its `ACTIVE(n)` record.

    Raises:
      SessionExistsError: The key is `ACTIVE` or `CREATING`.
      SessionNotAdmittedError: The key is `DELETING` (retry once deleted).
      LifecycleConflictError: A racing creator reserved first.
      CreationFenceError: (`RETIRED`) This creator was retired (reclaimed)
        meanwhile.
      ReceiptMismatchError: The committed receipt does not match.
    """
    op = operation_id or f'create-{uuid.uuid4().hex}'
    # The record and the pre-series row check are independent reads (of
    # different databases, often): run them together. The row check only
    # matters for ABSENT, and it must precede the reservation, since a
    # reservation cannot be taken back to ABSENT.
    record, row_exists = await asyncio.gather(
        self.store.read(session), self._row_exists(session)
    )
    if record.state is LifecycleState.DELETING:
      raise SessionNotAdmittedError(session, record.state, record.incarnation)
    if record.state not in (LifecycleState.ABSENT, LifecycleState.DELETED):
      raise SessionExistsError(session, record.state, record.incarnation)
    if record.state is LifecycleState.ABSENT and row_exists:
      # A Session that predates the series: adopt it, never overwrite it.
      raise SessionExistsError(session, record.state, record.incarnation)
    await self._fault(FaultPoint.BEFORE_RESERVATION)
    reserved = await self.store.reserve_creation(
        session, expected=record, operation_id=op
    )
    await self._fault(FaultPoint.AFTER_RESERVATION)
    token = FenceToken(reserved.incarnation, op)
    await self.fence.arm(session, token)
    await self._fault(FaultPoint.AFTER_FENCE_ARM)
    await self._fault(FaultPoint.BEFORE_IMPORT_FINALIZATION)
    finalized = finalize_imported_events(events)
    digest = import_digest(finalized)
    await self._fault(FaultPoint.AFTER_IMPORT_FINALIZATION)
    await self._fault(FaultPoint.BEFORE_SESSION_COMMIT)
    created = await self.fence.create_if_fence_current(
        session,
        token,
        state=state,
        events=finalized,
        digest=digest,
        fault_hook=self._fault_hook,
    )
    await self._fault(FaultPoint.AFTER_SESSION_COMMIT)
    receipt = CreationReceipt(op, reserved.incarnation, digest)
    # The commit returned, so its transaction moved the fence row from
    # armed(n, op) to committed(n, op) with exactly this digest and count:
    # that is the receipt, and reading it back would return the same row
    # (a committed fence is never re-armed or retired).
    stored = FenceRow(
        state=FenceState.COMMITTED,
        incarnation=token.incarnation,
        operation_id=token.operation_id,
        import_digest=digest,
        import_count=len(finalized),
    )
    mismatches = _receipt_mismatches(stored, receipt)
    if mismatches:
      raise ReceiptMismatchError(session, mismatches)
    active = await self.store.activate(session, receipt=receipt)
    await self._fault(FaultPoint.AFTER_ACTIVATION)
    logger.info('Session lifecycle: created incarnation %d', active.incarnation)
    return created, active

  async def _row_exists(self, session: SessionKey) -> bool:
    found = await self.session_service.get_session(
        **_key_args(session), config=GetSessionConfig(num_recent_events=0)
    )
    return found is not None

  async def recover_creation(self, session: SessionKey) -> RecoveryOutcome:
    """Completes or abandons a `CREATING(n)` whose creator is gone.

    Call it when the creator is known dead or past its deadline. If the
    creator is merely stalled, retiring its fence makes its late commit
    fail in its own transaction, so a wrong guess loses no data.

    Returns:
      What was done; a no-op outcome when the key is not `CREATING`.

    Raises:
      ReceiptMismatchError: A committed row whose receipt does not verify
        (never adopted; the record stays `CREATING`).
    """
    record = await self.store.read(session)
    if record.state is not LifecycleState.CREATING:
      return RecoveryOutcome(record)
    assert record.operation_id is not None
    token = FenceToken(record.incarnation, record.operation_id)
    row = await self.fence.read(session)
    if _is_commit_of(row, token):
      return await self._activate_verified(session, record, row)
    try:
      await self.fence.retire(session, token)
    except CreationFenceError as e:
      if e.reason is not FenceRefusal.ALREADY_COMMITTED:
        raise
      # The creator committed between our read and the retire.
      row = await self.fence.read(session)
      return await self._activate_verified(session, record, row)
    await self._fault(FaultPoint.AFTER_FENCE_RETIRE)
    abandoned = await self.store.abandon_creation(
        session, incarnation=token.incarnation, operation_id=token.operation_id
    )
    logger.warning(
        'Session lifecycle: abandoned creation of incarnation %d',
        token.incarnation,
    )
    return RecoveryOutcome(abandoned, abandoned=True)

  async def _activate_verified(
      self,
      session: SessionKey,
      record: LifecycleRecord,
      row: Optional[FenceRow],
  ) -> RecoveryOutcome:
    assert row is not None and row.import_digest is not None
    assert record.operation_id is not None
    stored = await self.session_service.get_session(**_key_args(session))
    mismatches: list[str] = []
    if stored is None:
      mismatches.append('session_row')
    else:
      if row.import_count != len(stored.events):
        mismatches.append('import_count')
      if import_digest(stored.events) != row.import_digest:
        mismatches.append('import_digest')
    if row.operation_id != record.operation_id:
      mismatches.append('operation_id')
    if row.incarnation != record.incarnation:
      mismatches.append('incarnation')
    if mismatches:
      logger.error(
          'Session lifecycle: receipt of incarnation %d does not verify (%s)',
          record.incarnation,
          ', '.join(mismatches),
      )
      raise ReceiptMismatchError(session, tuple(mismatches))
    receipt = CreationReceipt(
        row.operation_id, row.incarnation, row.import_digest
    )
    active = await self.store.activate(session, receipt=receipt)
    logger.info(
        'Session lifecycle: recovered incarnation %d', active.incarnation
    )
    return RecoveryOutcome(active, activated=True)

  # -- migration ----------------------------------------------------------------

  async def adopt(
      self, session: SessionKey, *, adoption_id: Optional[str] = None
  ) -> LifecycleRecord:
    """Adopts a Session that predates the series as `ACTIVE(1)`.

    The first app-enabled touch of a Session with no lifecycle record calls
    this. The Session row must exist and must not carry a creation fence;
    the adoption receipt (fence state `adopted`) is written before the
    verified CAS, and a retry with the same `adoption_id` is idempotent.

    Raises:
      AdoptionRefusedError: No Session row, or it was created by the
        lifecycle (a creation receipt exists).
      LifecycleConflictError: The key is not `ABSENT`.
    """
    adoption = adoption_id or f'adopt-{uuid.uuid4().hex}'
    record = await self.store.read(session)
    if record.state is not LifecycleState.ABSENT:
      if record.adopted and record.operation_id == adoption:
        return record
      raise SessionExistsError(session, record.state, record.incarnation)
    existing = await self.session_service.get_session(**_key_args(session))
    if existing is None:
      raise AdoptionRefusedError(session, 'there is no Session row')
    row = await self.fence.read(session)
    if row is not None and not (
        row.state == FenceState.ADOPTED and row.operation_id == adoption
    ):
      raise AdoptionRefusedError(
          session, f'the Session carries a {row.state} creation fence'
      )
    adopted_row = await self.fence.record_adoption(session, adoption)
    if (
        adopted_row.state != FenceState.ADOPTED
        or adopted_row.operation_id != adoption
    ):
      raise AdoptionRefusedError(session, 'a concurrent operation won')
    active = await self.store.adopt_existing(session, adoption_id=adoption)
    logger.info('Session lifecycle: adopted a pre-series Session')
    return active

  # -- deletion -----------------------------------------------------------------

  async def delete(self, session: SessionKey) -> LifecycleRecord:
    """Deletes the `ACTIVE` incarnation through the whole cascade.

    Raises:
      SessionNotAdmittedError: The key is not `ACTIVE` (a `DELETING` key is
        resumed with `resume_deletion`).
    """
    record = await self.store.read(session)
    if record.state is not LifecycleState.ACTIVE:
      raise not_admitted_error(record)
    deleting = await self.store.begin_deletion(
        session, incarnation=record.incarnation
    )
    _signal_deletion(DeletionSignal.INTENT, session, deleting.incarnation)
    await self._fault(FaultPoint.AFTER_DELETING)
    return await self._run_deletion(session, deleting)

  async def resume_deletion(self, session: SessionKey) -> LifecycleRecord:
    """Finishes a `DELETING(n)` after a restart; a no-op otherwise."""
    record = await self.store.read(session)
    if record.state is not LifecycleState.DELETING:
      return record
    logger.warning(
        'Session lifecycle: resuming deletion of incarnation %d (done: %s)',
        record.incarnation,
        ', '.join(sorted(record.cascade_steps)) or 'nothing',
    )
    return await self._run_deletion(session, record)

  async def _run_deletion(
      self, session: SessionKey, record: LifecycleRecord
  ) -> LifecycleRecord:
    n = record.incarnation
    done = set(record.cascade_steps)

    async def step(
        name: str,
        point: str,
        action: Callable[[], Awaitable[Any]],
        *,
        empty: bool = False,
    ) -> None:
      if name in done:
        return
      try:
        await action()
      except BaseException as error:
        # The record stays DELETING(n) with the steps done so far, for
        # `resume_deletion`.
        _signal_deletion(
            DeletionSignal.FAILED, session, n, step=name, error=error
        )
        raise
      if not empty:
        # An empty step (no revoke hook, no coordinator) changes nothing a
        # resume could repeat, so it is not worth a durable write; its fault
        # point still fires in order.
        await self.store.record_cascade_step(session, incarnation=n, step=name)
      done.add(name)
      await self._fault(point)

    async def revoke() -> None:
      for hook in self._revoke_hooks:
        await hook(session, n)

    async def coordinate() -> None:
      if self._coordinator is not None:
        await self._coordinator.acquire_for_deletion(session, n)

    async def delete_row() -> None:
      await self.session_service.delete_session(**_key_args(session))

    await step(
        Step.REVOKE,
        FaultPoint.AFTER_REVOKE,
        revoke,
        empty=not self._revoke_hooks,
    )
    await step(
        Step.COORDINATION,
        FaultPoint.AFTER_COORDINATION,
        coordinate,
        empty=self._coordinator is None,
    )
    await step(Step.SESSION_ROW, FaultPoint.AFTER_ROW_DELETE, delete_row)
    for participant in self._participants:

      async def cascade(p: CascadeParticipant = participant) -> None:
        await p.delete_incarnation(session, n)

      await step(
          Step.cascade(participant.name),
          FaultPoint.after_cascade(participant.name),
          cascade,
      )
    await self._fault(FaultPoint.BEFORE_COMPLETION_MARK)
    deleted = await self.store.complete_deletion(session, incarnation=n)
    _signal_deletion(DeletionSignal.COMPLETED, session, n)
    return deleted


def check_incarnation(
    record: LifecycleRecord, incarnation: int, *, purpose: str
) -> None:
  """Refuses work tied to `incarnation` unless `record` is `ACTIVE` in it.

  Args:
    record: The Session's current lifecycle record.
    incarnation: The incarnation the work is tied to.
    purpose: What is refused (e.g. `append`), for the error.

  Raises:
    StaleIncarnationError: Another incarnation, or not `ACTIVE` (deleted or
      recreated).
  """
  if (
      record.state is not LifecycleState.ACTIVE
      or record.incarnation != incarnation
  ):
    raise StaleIncarnationError(
        record.session,
        presented=incarnation,
        current=record.incarnation,
        state=record.state,
        purpose=purpose,
    )


def not_admitted_error(record: LifecycleRecord) -> SessionNotAdmittedError:
  """The typed admission refusal for a Session not `ACTIVE`."""
  return SessionNotAdmittedError(
      record.session, record.state, record.incarnation
  )


def _is_commit_of(row: Optional[FenceRow], token: FenceToken) -> bool:
  return (
      row is not None
      and row.state == FenceState.COMMITTED
      and row.incarnation == token.incarnation
      and row.operation_id == token.operation_id
  )


def _receipt_mismatches(
    row: Optional[FenceRow], receipt: CreationReceipt
) -> tuple[str, ...]:
  if row is None or row.state != FenceState.COMMITTED:
    return ('receipt',)
  found = []
  if row.operation_id != receipt.operation_id:
    found.append('operation_id')
  if row.incarnation != receipt.incarnation:
    found.append('incarnation')
  if row.import_digest != receipt.import_digest:
    found.append('import_digest')
  return tuple(found)
