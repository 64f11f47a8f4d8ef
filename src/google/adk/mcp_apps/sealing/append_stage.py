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


"""The append stage: seal, reference, validate, append, mark referenced.

It runs in two halves inside every session service's `append_event` (the
core event finalizer calls them): `seal_before_append` before the backend
stores the Event, `complete_after_append` after it committed. Without a
bound profile and pending seals it only validates references. Design:
docs/design/sealing.md.

Usage:

  event = await seal_before_append(session_service, session, event)
  ...  # the backend stores the Event
  await complete_after_append(event)
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import logging
from typing import Any
from typing import Awaitable
from typing import Callable
from typing import Iterator
from typing import Optional

from . import batch_reconciliation
from ...events.event import Event
from ..contracts.scope import SessionKey
from ..contracts.sealed_result_store import ReferenceTrackingSealedResultStore
from ..contracts.sealed_result_store import SealedRecordScope
from ..contracts.sealed_result_store import SealedResultReason
from ..contracts.sealed_result_store import SealedResultRef
from ..contracts.sealed_result_store import SealedResultStoreError
from ..descriptor.reference_validation import function_response_ids
from ..descriptor.reference_validation import validate_event_references
from ..descriptor.sealed_reference import SealedResultReference
from ..errors import McpAppsError
from ..lifecycle.adoption import active_incarnation
from ..lifecycle.errors import StaleIncarnationError
from ..lifecycle.invocation_incarnation import pinned_incarnation
from ..lifecycle.invocation_incarnation import require_pinned_incarnation
from .result_authority import approved_envelope
from .result_sealer import expires_at
from .result_sealer import PENDING_SEALS
from .result_sealer import PendingSeal
from .result_sealer import PendingSeals
from .result_sealer import SealPlacement

logger = logging.getLogger('google_adk.' + __name__)

FaultHook = Callable[[str], Awaitable[None]]
"""Awaited at each `SealFault` point (tests only)."""


class SealFault:
  """The named write boundaries of the append stage."""

  BEFORE_STORE_WRITE = 'seal.before_store_write'
  AFTER_STORE_WRITE = 'seal.after_store_write'
  """After every envelope create, before the Event append."""
  AFTER_APPEND = 'seal.after_append'
  """After the Event append, before the records are marked referenced."""


_fault_hook: Optional[FaultHook] = None


def set_fault_hook(hook: Optional[FaultHook]) -> None:
  """Installs (or with None removes) the process's fault hook (tests)."""
  global _fault_hook
  _fault_hook = hook


async def _fault(point: str) -> None:
  if _fault_hook is not None:
    await _fault_hook(point)


def _session_key(session: Any) -> SessionKey:
  return SessionKey(session.app_name, session.user_id, session.id)


def _place(event: Event, seal: PendingSeal, ref: SealedResultRef) -> None:
  wire = ref.to_wire()
  if seal.placement is SealPlacement.EVENT:
    refs = dict(event.sealed_result_refs or {})
    refs[seal.function_call_id] = SealedResultReference.model_validate(wire)
    event.sealed_result_refs = refs
    return
  for widget in event.actions.render_ui_widgets or ():
    if widget.id == seal.function_call_id and widget.provider == 'mcp':
      widget.payload['sealedResultRef'] = wire
      return
  # No widget to carry it: validation reports the call's missing reference.


CREATE_ATTEMPTS = 2
"""Tries of one envelope create; a retry reuses the operation instance, so
the store's immutable create returns the first try's record if it landed."""

FALLBACK_INSTANCE_SUFFIX = ':fallback'
"""Appended to the operation instance of a fallback's own sealed record."""

_fallback_offer: contextvars.ContextVar[bool] = contextvars.ContextVar(
    'adk_mcp_apps_fallback_offer', default=False
)


@contextlib.contextmanager
def fallback_offer() -> Iterator[None]:
  """Marks the appends in its body as offers of a core-only audit fallback.

  The audit pipeline offers the fallback under the Event id of its refused
  record, which may already have sealed the call's result (the seal is
  created before the backend writes). Same bytes: the store's idempotent
  retry returns that record. Other bytes (an `on_event` plugin changed the
  result's public fields on the refused record): the store answers
  `CONFLICT`, and inside this context the fallback's result is sealed
  under a derived operation instance (`FALLBACK_INSTANCE_SUFFIX`) instead;
  the refused record's seal, referenced by no Event, is left to orphan GC.
  """
  token = _fallback_offer.set(True)
  try:
    yield
  finally:
    _fallback_offer.reset(token)


async def _create(
    seal: PendingSeal, scope: SealedRecordScope
) -> SealedResultRef:
  try:
    return await _create_as(seal, scope, seal.operation_instance_id)
  except SealedResultStoreError as e:
    if not _fallback_offer.get() or e.reason is not SealedResultReason.CONFLICT:
      raise
  logger.warning(
      'A core-only fallback seals a result other than its refused record'
      ' did; it gets its own sealed record'
  )
  return await _create_as(
      seal, scope, seal.operation_instance_id + FALLBACK_INSTANCE_SUFFIX
  )


async def _create_as(
    seal: PendingSeal, scope: SealedRecordScope, instance: str
) -> SealedResultRef:
  for attempt in range(1, CREATE_ATTEMPTS + 1):
    try:
      return await seal.store.create(
          scope,
          operation_instance_id=instance,
          envelope=seal.envelope,
          expires_at=expires_at(seal),
      )
    except McpAppsError:
      raise  # A typed refusal (conflict, incompatible store) is final.
    except Exception:  # pylint: disable=broad-except
      if attempt == CREATE_ATTEMPTS:
        raise
      logger.warning(
          'Sealed-result create failed; retrying the same operation instance',
          exc_info=True,
      )
  raise AssertionError('unreachable')


def _revoke_stale(
    event: Event, seals: list[PendingSeal], pending: PendingSeals
) -> list[PendingSeal]:
  """Drops the pending commits whose binding stopped serving.

  A revoked commit's descriptor (or Event-level entry) leaves the Event, so
  the Event still reports the call's model-facing result but offers no View
  and references nothing; a record already written is left to orphan GC.
  """
  kept: list[PendingSeal] = []
  for seal in seals:
    try:
      if seal.admission_check is not None:
        seal.admission_check()
    except Exception:  # pylint: disable=broad-except
      _unplace(event, seal)
      pending.discard(event.invocation_id, [seal.function_call_id])
      logger.warning(
          'MCP Apps: a pending sealed commit was revoked (the binding stopped'
          ' serving before its Event was appended)'
      )
      continue
    kept.append(seal)
  return kept


def _unplace(event: Event, seal: PendingSeal) -> None:
  if event.sealed_result_refs and seal.function_call_id in (
      event.sealed_result_refs
  ):
    refs = dict(event.sealed_result_refs)
    del refs[seal.function_call_id]
    event.sealed_result_refs = refs or None
  widgets = event.actions.render_ui_widgets
  if widgets:
    remaining = [
        w
        for w in widgets
        if not (w.id == seal.function_call_id and w.provider == 'mcp')
    ]
    event.actions.render_ui_widgets = remaining or None


def _pending_seals_of(event: Event, pending: PendingSeals) -> list[PendingSeal]:
  """The pending seals the Event answers, plus the candidates it should.

  A candidate is looked up by every id the Event names (FunctionResponse,
  MCP widget, Event-level reference), and under other invocations too: a
  call whose FunctionResponse was removed, renamed or moved is then still
  found, and `result_authority` refuses the Event for it.
  """
  response_ids = function_response_ids(event)
  seals = pending.peek(event.invocation_id, response_ids)
  named = set(response_ids)
  named.update(
      widget.id
      for widget in event.actions.render_ui_widgets or ()
      if widget.provider == 'mcp'
  )
  named.update(event.sealed_result_refs or ())
  found = {seal.function_call_id for seal in seals}
  extra = sorted(named - found)
  if not extra and not response_ids:
    return seals
  seals.extend(
      seal
      for seal in pending.peek(event.invocation_id, extra)
      if seal.candidate is not None
  )
  seals.extend(
      seal
      for seal in pending.peek_elsewhere(event.invocation_id, sorted(named))
      if seal.candidate is not None
  )
  return seals


def _approve(event: Event, seals: list[PendingSeal]) -> list[PendingSeal]:
  """Every seal with its envelope resealed from the approved result.

  Raises:
    SealingError: Some candidate was rejected; nothing is sealed.
  """
  approved: list[PendingSeal] = []
  for seal in seals:
    if seal.candidate is None:
      approved.append(seal)
      continue
    envelope = approved_envelope(event, seal.candidate, seal.envelope)
    approved.append(dataclasses.replace(seal, envelope=envelope))
  return approved


def _discard_all(
    event: Event, seals: list[PendingSeal], pending: PendingSeals
) -> None:
  for seal in seals:
    owner = (
        seal.candidate.correlation.invocation_id
        if seal.candidate is not None
        else event.invocation_id
    )
    pending.discard(owner, [seal.function_call_id])


async def _reconcile_refused(
    session_service: Any, session: Any, event: Event, seals: list[PendingSeal]
) -> None:
  """Stores the refused batch Event's frozen deltas on their own.

  The batch's effects stand (state written, artifacts saved) although its
  Event is refused; one response-free Event carrying exactly the frozen
  deltas records them, and it offers nothing to resolve.
  """
  reconciliation = batch_reconciliation.take(
      event, [seal.function_call_id for seal in seals]
  )
  if reconciliation is None:
    return
  try:
    await session_service.append_event(session=session, event=reconciliation)
  except Exception:  # pylint: disable=broad-except
    # The refusal is what the caller must see; this failure is secondary.
    logger.exception(
        'MCP Apps: the reconciliation Event of a refused batch Event could'
        ' not be stored'
    )


@dataclasses.dataclass
class _StagedCommit:
  """What the pre-persist half leaves for the post-persist half."""

  event: Event
  pending: PendingSeals
  seals: list[PendingSeal]
  placed: list[tuple[PendingSeal, SealedRecordScope, SealedResultRef]]


_pending_override: contextvars.ContextVar[Optional[PendingSeals]] = (
    contextvars.ContextVar('adk_mcp_apps_pending_seals', default=None)
)
_staged: contextvars.ContextVar[Optional[_StagedCommit]] = (
    contextvars.ContextVar('adk_mcp_apps_staged_commit', default=None)
)


async def seal_before_append(
    session_service: Any, session: Any, event: Event
) -> Event:
  """The pre-persist half: pin check, envelopes, placement, validation.

  Every session service's finalizer runs it before the Event is stored;
  without a pin and pending seals it only validates the references (one
  scan of the widgets).

  Raises:
    DescriptorError: The Event's references do not hold; it must not be
      stored.
    SealedResultStoreError: A store create failed; nothing may be stored.
    StaleIncarnationError: The invocation started in an incarnation that
      ended (the Session was deleted or recreated meanwhile); the Event's
      pending seals are dropped and nothing may be stored.
  """
  if _staged.get() is not None:
    _staged.set(None)
  pending = _pending_override.get() or PENDING_SEALS
  seals: list[PendingSeal] = []
  if len(pending):
    seals = _pending_seals_of(event, pending)
  pin = pinned_incarnation(session)
  if (
      pin is None
      and not seals
      and not event.sealed_result_refs
      and not event.actions.render_ui_widgets
  ):
    return event  # No reference to seal or to validate: upstream's append.
  if pin is not None:
    try:
      await require_pinned_incarnation(
          pin, purpose='late result' if seals else 'append'
      )
    except StaleIncarnationError:
      pending.discard(event.invocation_id, [s.function_call_id for s in seals])
      raise
  if not seals:
    validate_event_references(event)
    return event
  if any(seal.candidate is not None for seal in seals):
    try:
      seals = _approve(event, seals)
    except McpAppsError:
      # Whole-Event atomicity: no candidate of this Event is ever sealed.
      _discard_all(event, seals, pending)
      await _reconcile_refused(session_service, session, event, seals)
      raise
  key = _session_key(session)
  seals = _revoke_stale(event, seals, pending)
  if not seals:
    incarnation = 0
  elif pin is not None:
    incarnation = pin.incarnation
  else:
    incarnation = await active_incarnation(
        seals[0].lifecycle_store, key, session_service
    )
  placed: list[tuple[PendingSeal, SealedRecordScope, SealedResultRef]] = []
  for seal in seals:
    scope = SealedRecordScope(key, incarnation, event.id, seal.function_call_id)
    await _fault(SealFault.BEFORE_STORE_WRITE)
    if not _revoke_stale(event, [seal], pending):
      continue  # Readiness was lost before this envelope was written.
    ref = await _create(seal, scope)
    _place(event, seal, ref)
    placed.append((seal, scope, ref))
  await _fault(SealFault.AFTER_STORE_WRITE)
  # Readiness may have been lost while the envelopes were written: those
  # commits are revoked too, and their records stay unreferenced for GC.
  seals = _revoke_stale(event, [s for s, _, _ in placed], pending)
  kept = {id(seal) for seal in seals}
  placed = [entry for entry in placed if id(entry[0]) in kept]
  validate_event_references(
      event,
      sealed_interactive=frozenset(
          s.function_call_id
          for s in seals
          if s.placement is SealPlacement.EVENT
      ),
  )
  _staged.set(_StagedCommit(event, pending, seals, placed))
  return event


async def complete_after_append(event: Event) -> None:
  """The post-persist half: drops the pending seals, marks references.

  Every session service runs it once the Event is stored; it does nothing
  for an Event `seal_before_append` sealed nothing for.
  """
  batch_reconciliation.forget(event)
  staged = _staged.get()
  if staged is None or staged.event is not event:
    return
  _staged.set(None)
  staged.pending.discard(
      event.invocation_id, [s.function_call_id for s in staged.seals]
  )
  await _fault(SealFault.AFTER_APPEND)
  for seal, scope, ref in staged.placed:
    if isinstance(seal.store, ReferenceTrackingSealedResultStore):
      try:
        await seal.store.mark_referenced(scope, ref)
      except Exception:  # pylint: disable=broad-except
        # The record stays pending; GC consults the authoritative Event
        # before it deletes anything, so this costs nothing but a lookup.
        logger.warning(
            'Could not mark a sealed record referenced', exc_info=True
        )


async def append_event_with_sealed_results(
    session_service: Any,
    *,
    session: Any,
    event: Event,
    pending: PendingSeals = PENDING_SEALS,
) -> Event:
  """Appends `event` through `session_service.append_event`.

  Every session service seals inside its own `append_event` (the core
  event finalizer runs `seal_before_append` and `complete_after_append`),
  so this is a plain append that reads the pending seals from `pending`.

  Raises:
    As `seal_before_append`, and whatever the service raises.
  """
  token = _pending_override.set(pending)
  try:
    result: Event = await session_service.append_event(
        session=session, event=event
    )
  finally:
    _pending_override.reset(token)
  return result
