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


"""The gated resolver: sealed bytes leave the store only for a verified ask.

A sealed-result reference is a locator, not authority: the resolver checks
the Session's lifecycle, the persisted Event, the reference, the binding
revision and the View binding before resolving the record. Every failure is
a `SealedResolutionError` naming the check. Bytes are released only for a
View binding or an `ExportPermit` (minted only by the host's export
resolver); cold replay reads the refresh record alone. Design:
docs/design/sealing.md.

Usage:

  resolved = await GatedResultResolver(profile, session_service).resolve(
      session, event_id=event_id, function_call_id=call_id, view=binding
  )
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import json
from typing import Any
from typing import Callable
from typing import Optional
from typing import Union

from ...events.event import Event
from ..contracts.key_provider import BindingKeyUnavailableError
from ..contracts.scope import SessionKey
from ..contracts.sealed_result_store import SealedEnvelope
from ..contracts.sealed_result_store import SealedRecordScope
from ..contracts.sealed_result_store import SealedResultReason
from ..contracts.sealed_result_store import SealedResultRef
from ..contracts.sealed_result_store import SealedResultStoreError
from ..contracts.session_lifecycle_store import LifecycleState
from ..descriptor.errors import DescriptorError
from ..descriptor.reference_validation import function_response_ids
from ..descriptor.reference_validation import mcp_widgets
from ..descriptor.sealed_reference import SEALED_REFERENCE_SCHEMA_VERSION
from ..descriptor.sealed_reference import SealedResultReference
from ..descriptor.widget_descriptor import LegacyMcpWidget
from ..descriptor.widget_descriptor import McpAppWidgetDescriptor
from ..profile.errors import HostProfileError
from ..profile.fingerprint import verify_binding_revision
from ..profile.host_profile import McpAppsHostProfile
from .errors import SealingError
from .errors import SealingErrorReason
from .refresh_record import RefreshInvocationRecord


class ResolutionFault(enum.Enum):
  """Which resolver check failed."""

  SESSION_NOT_ACTIVE = 'session_not_active'
  """The Session is not `ACTIVE` (deleting, deleted, never admitted)."""
  STALE_INCARNATION = 'stale_incarnation'
  """The caller's incarnation is not the `ACTIVE` one."""
  EVENT_MISSING = 'event_missing'
  """The authoritative Session holds no such Event."""
  NO_FUNCTION_RESPONSE = 'no_function_response'
  """The Event reports no such function call."""
  INVALID_EVENT = 'invalid_event'
  """The persisted Event's widgets do not parse."""
  LEGACY_DESCRIPTOR = 'legacy_descriptor'
  """The widget is a profile-less legacy payload: nothing was sealed."""
  MISSING_REFERENCE = 'missing_reference'
  """No reference for the call in either placement."""
  UNSUPPORTED_REFERENCE = 'unsupported_reference'
  """A reference schema version this host does not read."""
  KEY_UNAVAILABLE = 'key_unavailable'
  """The descriptor's binding-revision key is missing or retired."""
  BINDING_MISMATCH = 'binding_mismatch'
  """The descriptor's binding revision does not verify."""
  VIEW_MISMATCH = 'view_mismatch'
  """The asking View is bound to another widget."""
  VIEW_NOT_LIVE = 'view_not_live'
  """Interactive replay for a View whose grant was revoked or whose
  connection generation is gone (the post-lease rule)."""
  RECORD_NOT_FOUND = 'record_not_found'
  """No record for the reference in exactly this scope (swapped, collected,
  deleted, or another tenant's)."""
  CORRUPT = 'corrupt'
  """The record fails its store-private digest."""
  NO_AUTHORITY = 'no_authority'
  """Neither a View binding nor an export permit was presented."""
  PERMIT_MISMATCH = 'permit_mismatch'
  """The export permit was minted for another target."""


class SealedResolutionError(SealingError):
  """The resolver released nothing; the host shows the read-only render.

  Attributes:
    fault: Which check failed.
    function_call_id: The call asked for.
  """

  def __init__(
      self, fault: ResolutionFault, function_call_id: str, detail: str = ''
  ) -> None:
    self.fault = fault
    message = (
        f'Sealed result of function call {function_call_id!r} not released'
        f' ({fault.value})'
    )
    super().__init__(
        SealingErrorReason.NOT_RELEASED,
        f'{message}: {detail}' if detail else message,
        function_call_id=function_call_id,
    )


@dataclasses.dataclass(frozen=True)
class ViewBinding:
  """What a View is bound to; the resolver compares it with the Event.

  Attributes:
    toolset_id: The toolset the View was rendered from.
    server_id: Its server.
    event_id: The Event whose widget the View renders.
    function_call_id: The call whose widget the View renders.
  """

  toolset_id: str
  server_id: str
  event_id: str
  function_call_id: str


@dataclasses.dataclass(frozen=True)
class ResolvedResult:
  """Released bytes, for host-private memory only.

  Attributes:
    event: The authoritative Event.
    function_call_id: The call.
    descriptor: Its descriptor (None for an Event-level reference).
    reference: The reference that was resolved.
    scope: The record's scope.
    envelope: The sealed bytes.
  """

  event: Event = dataclasses.field(repr=False)
  function_call_id: str
  descriptor: Optional[McpAppWidgetDescriptor]
  reference: SealedResultReference
  scope: SealedRecordScope
  envelope: SealedEnvelope = dataclasses.field(repr=False)

  def full_result(self) -> dict[str, Any]:
    """The sealed, unprojected tool result."""
    value: dict[str, Any] = json.loads(self.envelope.sealed_result)
    return value

  def refresh_record(self) -> RefreshInvocationRecord:
    """The call's refresh-invocation record.

    Raises:
      SealingError: (`REFRESH_RECORD_CORRUPT`) Missing or corrupt.
    """
    return RefreshInvocationRecord.from_bytes(self.envelope.refresh_record)


_ISSUER = object()
_issued = False


@dataclasses.dataclass(frozen=True)
class ExportPermit:
  """Authority for one cold export read; only the export resolver mints it.

  Attributes:
    session: The Session the export was authorized on.
    incarnation: The incarnation it was authorized in.
    event_id: The Event.
    function_call_id: The call.
  """

  issuer: dataclasses.InitVar[object]
  session: SessionKey
  incarnation: Optional[int]
  event_id: str
  function_call_id: str

  def __post_init__(self, issuer: object) -> None:
    if issuer is not _ISSUER:
      raise TypeError('An ExportPermit is minted only by the export resolver')


def export_permit_issuer() -> (
    Callable[[SessionKey, Optional[int], str, str], ExportPermit]
):
  """Hands the permit mint to its one caller, the host's export resolver.

  Raises:
    RuntimeError: The mint was handed out already.
  """
  global _issued
  if _issued:
    raise RuntimeError('The export permit issuer was handed out already')
  _issued = True

  def mint(
      session: SessionKey, incarnation: Optional[int], event_id: str, call: str
  ) -> ExportPermit:
    return ExportPermit(_ISSUER, session, incarnation, event_id, call)

  return mint


@dataclasses.dataclass(frozen=True)
class ColdRecord:
  """What cold replay may read: the refresh record, never the result.

  Attributes:
    descriptor: The call's descriptor (None for an Event-level reference).
    record: The call's refresh-invocation record.
  """

  descriptor: Optional[McpAppWidgetDescriptor]
  record: RefreshInvocationRecord


def _fail(
    fault: ResolutionFault, call_id: str, detail: str = ''
) -> SealedResolutionError:
  return SealedResolutionError(fault, call_id, detail)


class GatedResultResolver:
  """Resolves sealed results for one profile over one Session service."""

  def __init__(self, profile: McpAppsHostProfile, session_service: Any):
    """Builds the resolver.

    Args:
      profile: The bound profile (stores and keys).
      session_service: The Session service holding the authoritative Events.

    Raises:
      ValueError: The profile lacks a sealed-result or lifecycle store.
    """
    if profile.sealed_result_store is None:
      raise ValueError('The profile has no sealed-result store')
    if profile.session_lifecycle_store is None:
      raise ValueError('The profile has no Session lifecycle store')
    self._profile = profile
    self._store = profile.sealed_result_store
    self._lifecycle = profile.session_lifecycle_store
    self._sessions = session_service

  async def _active_incarnation(
      self, session: SessionKey, call_id: str, presented: Optional[int]
  ) -> int:
    record = await self._lifecycle.read(session)
    if record.state is not LifecycleState.ACTIVE:
      raise _fail(
          ResolutionFault.SESSION_NOT_ACTIVE,
          call_id,
          f'the Session is {record.state.value}',
      )
    if presented is not None and presented != record.incarnation:
      raise _fail(ResolutionFault.STALE_INCARNATION, call_id)
    return record.incarnation

  async def load_event(
      self, session: SessionKey, event_id: str, call_id: str
  ) -> Event:
    """The authoritative persisted Event, read alone by its id.

    `BaseSessionService.get_event` reads the one Event (the SQL services by
    key, not the whole Session); a duck-typed service without it is scanned
    through `get_session`.

    Raises:
      SealedResolutionError: `EVENT_MISSING`.
    """
    get_event = getattr(self._sessions, 'get_event', None)
    if get_event is not None:
      found = await get_event(
          app_name=session.app_name,
          user_id=session.user_id,
          session_id=session.session_id,
          event_id=event_id,
      )
      if isinstance(found, Event):
        return found
      raise _fail(ResolutionFault.EVENT_MISSING, call_id)
    stored = await self._sessions.get_session(
        app_name=session.app_name,
        user_id=session.user_id,
        session_id=session.session_id,
    )
    for event in stored.events if stored is not None else ():
      if event.id == event_id:
        return event  # type: ignore[no-any-return]
    raise _fail(ResolutionFault.EVENT_MISSING, call_id)

  def _check_descriptor(
      self,
      widget: Union[McpAppWidgetDescriptor, LegacyMcpWidget, None],
      call_id: str,
  ) -> Optional[McpAppWidgetDescriptor]:
    if isinstance(widget, LegacyMcpWidget):
      raise _fail(ResolutionFault.LEGACY_DESCRIPTOR, call_id)
    if widget is None:
      return None
    try:
      verified = verify_binding_revision(self._profile, widget.binding_revision)
    except BindingKeyUnavailableError as e:
      raise _fail(ResolutionFault.KEY_UNAVAILABLE, call_id) from e
    except HostProfileError as e:
      raise _fail(ResolutionFault.BINDING_MISMATCH, call_id) from e
    if not verified:
      raise _fail(ResolutionFault.BINDING_MISMATCH, call_id)
    return widget

  async def resolve(
      self,
      session: SessionKey,
      *,
      event_id: str,
      function_call_id: str,
      view: Optional[ViewBinding] = None,
      incarnation: Optional[int] = None,
      permit: Optional[ExportPermit] = None,
  ) -> ResolvedResult:
    """Releases one sealed result after every check passes.

    Args:
      session: The Session the caller acts on.
      event_id: The Event that reports the call.
      function_call_id: The call.
      view: The asking View's binding (bootstrap supplies the binding it is
        about to create).
      incarnation: The incarnation the caller's lease or grant was issued
        in, if it holds one.
      permit: The export resolver's permit, for a cold export (no View).

    Raises:
      SealedResolutionError: Nothing is released; `NO_AUTHORITY` without a
        View binding or a permit.
    """
    call_id = function_call_id
    if view is None:
      if permit is None:
        raise _fail(ResolutionFault.NO_AUTHORITY, call_id)
      if (permit.session, permit.event_id, permit.function_call_id) != (
          session,
          event_id,
          call_id,
      ):
        raise _fail(ResolutionFault.PERMIT_MISMATCH, call_id)
      if incarnation is None:
        incarnation = permit.incarnation
    return await self._resolve(session, event_id, call_id, view, incarnation)

  async def resolve_refresh_record(
      self, session: SessionKey, *, event_id: str, function_call_id: str
  ) -> ColdRecord:
    """Cold replay's read: every check, then the refresh record only.

    Raises:
      SealedResolutionError: The checks failed.
      SealingError: (`REFRESH_RECORD_CORRUPT`) Missing or corrupt.
    """
    resolved = await self._resolve(
        session, event_id, function_call_id, None, None
    )
    return ColdRecord(resolved.descriptor, resolved.refresh_record())

  async def _resolve(
      self,
      session: SessionKey,
      event_id: str,
      call_id: str,
      view: Optional[ViewBinding],
      incarnation: Optional[int],
  ) -> ResolvedResult:
    # Both reads are checks; nothing is released before both pass, so they
    # may overlap (they hit two stores).
    # The lifecycle refusal, when there is one, is the one reported.
    lifecycle, loaded = await asyncio.gather(
        self._active_incarnation(session, call_id, incarnation),
        self.load_event(session, event_id, call_id),
        return_exceptions=True,
    )
    for outcome in (lifecycle, loaded):
      if isinstance(outcome, BaseException):
        raise outcome
    assert isinstance(lifecycle, int) and isinstance(loaded, Event)
    n, event = lifecycle, loaded
    if call_id not in function_response_ids(event):
      raise _fail(ResolutionFault.NO_FUNCTION_RESPONSE, call_id)
    try:
      widget = mcp_widgets(event).get(call_id)
    except DescriptorError as e:
      raise _fail(ResolutionFault.INVALID_EVENT, call_id) from e
    descriptor = self._check_descriptor(widget, call_id)
    if descriptor is not None:
      reference = descriptor.sealed_result_ref
    else:
      reference = (event.sealed_result_refs or {}).get(call_id)
    if reference is None:
      raise _fail(ResolutionFault.MISSING_REFERENCE, call_id)
    if reference.schema_version != SEALED_REFERENCE_SCHEMA_VERSION:
      raise _fail(ResolutionFault.UNSUPPORTED_REFERENCE, call_id)
    if view is not None and (
        descriptor is None
        or view.event_id != event.id
        or view.function_call_id != call_id
        or view.toolset_id != descriptor.toolset_id
        or view.server_id != descriptor.server_id
    ):
      raise _fail(ResolutionFault.VIEW_MISMATCH, call_id)
    scope = SealedRecordScope(session, n, event.id, call_id)
    try:
      envelope = await self._store.resolve(
          scope,
          SealedResultRef(reference.record_id, reference.schema_version),
      )
    except SealedResultStoreError as e:
      if e.reason is SealedResultReason.CORRUPT:
        raise _fail(ResolutionFault.CORRUPT, call_id) from e
      if e.reason is SealedResultReason.NOT_FOUND:
        raise _fail(ResolutionFault.RECORD_NOT_FOUND, call_id) from e
      raise
    return ResolvedResult(
        event=event,
        function_call_id=call_id,
        descriptor=descriptor,
        reference=reference,
        scope=scope,
        envelope=envelope,
    )
