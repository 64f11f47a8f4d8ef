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

"""The purpose-bound export resolver: cold, audited access to a sealed result.

Export is the only way to read a sealed result without a live View. It is
authorized for the `EXPORT` purpose of the current principal, checked
against the authoritative persisted Event, linearized through the Session's
coordinator, audited durably before any byte leaves, and rechecked
immediately before release. It never returns HTML, mints a View grant or
fetches a template. Decisions: docs/decisions/issue25-export.md.

Usage:

  resolver = ExportResolver(profile=profile, session_service=service)
  result = await resolver.export(
      principal=principal, session=key, event_id=event_id,
      function_call_id=call_id, operation_instance_id=op,
  )
  result.body  # canonical JSON bytes of the projected sealed result
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
import contextlib
import dataclasses
import enum
import threading
import time
from typing import Any
from typing import NoReturn
from typing import Optional
from typing import Protocol
from typing import runtime_checkable

from ..canonical_json import canonicalize
from ..canonical_json import CanonicalJsonError
from ..canonical_json import Purpose
from ..contracts.export_audit_store import ExportAuditRecord
from ..contracts.export_audit_store import ExportAuditStatus
from ..contracts.export_audit_store import ExportAuditStore
from ..contracts.principal_resolver import Principal
from ..contracts.principal_resolver import PrincipalRequest
from ..contracts.scope import SessionKey
from ..contracts.session_authorizer import SessionPurpose
from ..contracts.session_authorizer import WidgetTarget
from ..contracts.session_lifecycle_store import LifecycleState
from ..coordination.coordinator import Ownership
from ..coordination.coordinator import session_coordinator
from ..coordination.coordinator import SessionCoordinator
from ..coordination.errors import CoordinationError
from ..event_policy.callback_scope import refuse_reentry
from ..event_policy.errors import EventPolicyError
from ..profile.host_profile import McpAppsHostProfile
from ..sealing.errors import SealingError
from ..sealing.resolver import export_permit_issuer
from ..sealing.resolver import GatedResultResolver
from ..sealing.resolver import ResolvedResult
from ..sealing.resolver import SealedResolutionError
from .denial_log import log_denial
from .errors import HostServiceError
from .errors import HostServiceErrorReason

EXPORT_OPERATION = 'host.export'
"""The coordinator operation name an export owns its Session under."""

EXPORT_MEDIA_TYPE = 'application/json'
"""The media type of every export body (never HTML)."""

_mint_permit = export_permit_issuer()


class ExportPoint(enum.Enum):
  """Points of one export, in order, for an observer or a fault hook."""

  QUEUED = 'queued'
  """Before the export waits for the Session's ownership."""
  LOADED = 'loaded'
  """The sealed record is loaded and authorized; nothing is audited."""
  AUDITED = 'audited'
  """`authorized` is durable; nothing is released."""
  RECHECKED = 'rechecked'
  """The final recheck passed; `released` is not written yet."""
  RELEASED = 'released'
  """`released` is durable; the bytes are about to be returned."""


ExportHook = Callable[[ExportPoint], Awaitable[None]]


@dataclasses.dataclass(frozen=True)
class ExportLimits:
  """Byte, rate, bulk and retention limits of the export resolver.

  Attributes:
    max_bytes: Largest export body.
    window_seconds: The rate and bulk window.
    max_per_principal: Exports one principal may receive per window.
    max_per_session: Exports of one Session one principal may receive per
      window (bulk export).
    retention_seconds: Results whose Event is older are not exportable.
  """

  max_bytes: int = 1 << 20
  window_seconds: float = 60.0
  max_per_principal: int = 60
  max_per_session: int = 20
  retention_seconds: float = 30 * 86400.0


@runtime_checkable
class ExportProjection(Protocol):
  """Maps a sealed `CallToolResult` to what an export releases."""

  @property
  def name(self) -> str:
    """A stable name of the projection, checked again before release."""
    ...

  def project(self, full_result: Mapping[str, Any]) -> Any:
    """The JSON value released for `full_result`."""
    ...


class FullResultProjection:
  """The default projection: the whole sealed `CallToolResult`."""

  name = 'full-result'

  def project(self, full_result: Mapping[str, Any]) -> Any:
    return dict(full_result)


@dataclasses.dataclass(frozen=True)
class ExportResult:
  """One released export.

  Attributes:
    body: ADK Canonical JSON v1 bytes of the projected sealed result.
    media_type: Always `application/json`.
    record_status: The audit status written (`released`).
    operation_instance_id: The export operation.
  """

  body: bytes = dataclasses.field(repr=False)
  media_type: str
  record_status: ExportAuditStatus
  operation_instance_id: str


@dataclasses.dataclass(frozen=True)
class _Target:
  principal_id: str
  session: SessionKey
  event_id: str
  function_call_id: str


@dataclasses.dataclass
class _Attempt:
  """What an export knows while it runs (never content in its repr)."""

  target: _Target
  op: str
  incarnation: int = 0
  record_id: str = ''
  authorized: bool = False


class _Denied(Exception):
  """Internal: a check refused; carries the public reason and detail."""

  def __init__(self, reason: HostServiceErrorReason, detail: str) -> None:
    super().__init__(detail)
    self.reason = reason
    self.detail = detail


class ExportResolver:
  """Releases sealed results cold, for the `EXPORT` purpose only."""

  def __init__(
      self,
      *,
      profile: McpAppsHostProfile,
      session_service: Any,
      limits: ExportLimits = ExportLimits(),
      projection: Optional[ExportProjection] = None,
      hook: Optional[ExportHook] = None,
      clock: Callable[[], float] = time.time,
      coordinator: Optional[SessionCoordinator] = None,
  ) -> None:
    """Builds the resolver.

    Args:
      profile: The bound profile: authorizer, stores, keys, audit store.
      session_service: The Session service with the authoritative Events.
      limits: The export limits; `limits` may be replaced later.
      projection: The export projection; the full result by default.
      hook: Awaited at each `ExportPoint` (observers, fault injection).
      clock: Seconds since the epoch.
      coordinator: The Session coordinator; the process's by default.

    Raises:
      ValueError: The profile lacks a store the resolver needs.
    """
    self._gated = GatedResultResolver(profile, session_service)
    self._profile = profile
    self.limits = limits
    self.projection: ExportProjection = projection or FullResultProjection()
    self._hook = hook
    self._clock = clock
    self._coordinator = coordinator or session_coordinator()
    self._lock = threading.Lock()
    self._closed = False
    self._closers: set[asyncio.Future[None]] = set()
    self._released: dict[str, collections.deque[float]] = {}
    self._outcomes: dict[str, tuple[_Target, Any]] = {}
    self._inflight: dict[str, asyncio.Future[Any]] = {}

  # Lifecycle -------------------------------------------------------------

  def close(self) -> None:
    """Shuts the resolver down: queued and running exports are denied."""
    with self._lock:
      self._closed = True
      closers, self._closers = self._closers, set()
    for closer in closers:
      loop = closer.get_loop()
      with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(_finish, closer)

  @property
  def closed(self) -> bool:
    """Whether `close` was called."""
    return self._closed

  # The public operation ---------------------------------------------------

  async def export(
      self,
      *,
      principal: Principal,
      session: SessionKey,
      event_id: str,
      function_call_id: str,
      operation_instance_id: str,
      stream: bool = False,
      request: Optional[PrincipalRequest] = None,
  ) -> ExportResult:
    """Exports one sealed result, or denies with nothing released.

    Args:
      principal: The principal resolved for the current request.
      session: The Session the locator names.
      event_id: The Event that reports the call.
      function_call_id: The call.
      operation_instance_id: The export's idempotency key: a retry with the
        same id gets the same bytes or the same denial, one record set.
      stream: Must be False; streaming export is outside v1.
      request: The current request; when given, the profile's principal
        resolver must still resolve it to `principal` (at admission and
        before release), so an old credential context is denied.

    Returns:
      The released body.

    Raises:
      HostServiceError: Denied; nothing was released.
    """
    target = _Target(
        principal.principal_id, session, event_id, function_call_id
    )
    op = operation_instance_id
    if stream:
      attempt = _Attempt(target, op)
      await self._deny(
          attempt,
          _Denied(HostServiceErrorReason.UNSUPPORTED, 'streaming_export'),
      )
    while True:
      with self._lock:
        done = self._outcomes.get(op)
        running = self._inflight.get(op)
        if done is None and running is None:
          loop = asyncio.get_running_loop()
          mine: asyncio.Future[Any] = loop.create_future()
          self._inflight[op] = mine
          break
      if done is not None:
        return self._replay(op, target, done)
      assert running is not None
      await asyncio.shield(running)
    try:
      outcome: Any = await self._run(principal, target, op, request)
    except HostServiceError as e:
      outcome = e
    except BaseException:
      # Cancelled or broken: nothing is remembered, a retry runs afresh.
      with self._lock:
        del self._inflight[op]
      mine.set_result(None)
      raise
    with self._lock:
      self._outcomes[op] = (target, outcome)
      del self._inflight[op]
    mine.set_result(None)
    if isinstance(outcome, HostServiceError):
      raise outcome
    result: ExportResult = outcome
    return result

  # Internals ----------------------------------------------------------------

  def _replay(
      self, op: str, target: _Target, done: tuple[_Target, Any]
  ) -> ExportResult:
    first, outcome = done
    if first != target:
      reason = HostServiceErrorReason.EXPORT_DENIED
      log_denial('export', reason, operation_id=op, detail='operation_reused')
      raise HostServiceError(reason, 'operation_reused')
    if isinstance(outcome, HostServiceError):
      raise outcome
    result: ExportResult = outcome
    return result

  async def _point(self, point: ExportPoint) -> None:
    if self._hook is not None:
      await self._hook(point)

  async def _run(
      self,
      principal: Principal,
      target: _Target,
      op: str,
      request: Optional[PrincipalRequest],
  ) -> ExportResult:
    attempt = _Attempt(target, op)
    store = self._profile.export_audit_store
    if store is None:
      return await self._deny(
          attempt,
          _Denied(HostServiceErrorReason.AUDIT_UNAVAILABLE, 'no_audit_store'),
      )
    key = target.session
    try:
      refuse_reentry(key.app_name, key.user_id, key.session_id, 'export')
    except EventPolicyError:
      return await self._deny(attempt, _reentry())
    await self._point(ExportPoint.QUEUED)
    try:
      ownership = await self._own(key)
    except _Denied as e:
      return await self._deny(attempt, e)
    try:
      return await self._owned_run(principal, attempt, store, request)
    finally:
      ownership.release()

  async def _own(self, key: SessionKey) -> Ownership:
    loop = asyncio.get_running_loop()
    closer: asyncio.Future[None] = loop.create_future()
    with self._lock:
      if self._closed:
        raise _Denied(HostServiceErrorReason.EXPORT_DENIED, 'shut_down')
      self._closers.add(closer)
    acquiring = asyncio.ensure_future(
        self._coordinator.acquire(key, EXPORT_OPERATION)
    )
    waits: set[asyncio.Future[Any]] = {acquiring, closer}
    try:
      await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
      acquiring.cancel()
      with contextlib.suppress(BaseException):
        (await acquiring).release()  # granted at that instant
      raise
    finally:
      with self._lock:
        self._closers.discard(closer)
    if not acquiring.done():
      acquiring.cancel()
    try:
      ownership = await acquiring
    except asyncio.CancelledError:
      raise _Denied(HostServiceErrorReason.EXPORT_DENIED, 'shut_down')
    except CoordinationError as e:
      raise _reentry() from e
    ownership.transfer_here()
    if self._closed:
      ownership.release()
      raise _Denied(HostServiceErrorReason.EXPORT_DENIED, 'shut_down')
    return ownership

  async def _owned_run(
      self,
      principal: Principal,
      attempt: _Attempt,
      store: ExportAuditStore,
      request: Optional[PrincipalRequest],
  ) -> ExportResult:
    try:
      resolved, body, state = await self._check(
          principal, attempt, request, None
      )
    except _Denied as e:
      return await self._deny(attempt, e)
    except Exception:  # pylint: disable=broad-except
      return await self._deny(
          attempt, _Denied(HostServiceErrorReason.EXPORT_DENIED, 'failed')
      )
    await self._point(ExportPoint.LOADED)
    try:
      await store.append(self._record(attempt, ExportAuditStatus.AUTHORIZED))
    except Exception:  # pylint: disable=broad-except
      return await self._deny(
          attempt,
          _Denied(HostServiceErrorReason.AUDIT_UNAVAILABLE, 'audit_write'),
          audit=False,
      )
    attempt.authorized = True
    try:
      await self._point(ExportPoint.AUDITED)
      try:
        again, rebody, _ = await self._check(principal, attempt, request, state)
      except _Denied as e:
        return await self._deny(attempt, e)
      if rebody != body or again.reference != resolved.reference:
        return await self._deny(
            attempt,
            _Denied(HostServiceErrorReason.EXPORT_DENIED, 'changed'),
        )
      await self._point(ExportPoint.RECHECKED)
      try:
        await store.append(self._record(attempt, ExportAuditStatus.RELEASED))
      except Exception:  # pylint: disable=broad-except
        return await self._deny(
            attempt,
            _Denied(HostServiceErrorReason.AUDIT_UNAVAILABLE, 'audit_write'),
            status=ExportAuditStatus.FAILED,
        )
      self._count(attempt.target)
      await self._point(ExportPoint.RELEASED)
    except HostServiceError:
      raise
    except Exception:  # pylint: disable=broad-except
      return await self._deny(
          attempt,
          _Denied(HostServiceErrorReason.EXPORT_DENIED, 'failed'),
          status=ExportAuditStatus.FAILED,
      )
    return ExportResult(
        body=body,
        media_type=EXPORT_MEDIA_TYPE,
        record_status=ExportAuditStatus.RELEASED,
        operation_instance_id=attempt.op,
    )

  async def _check(
      self,
      principal: Principal,
      attempt: _Attempt,
      request: Optional[PrincipalRequest],
      loaded: Optional[tuple[int, str, str]],
  ) -> tuple[ResolvedResult, bytes, tuple[int, str, str]]:
    """Every check; at the recheck (`loaded` given) nothing may change."""
    target = attempt.target
    if self._closed:
      raise _Denied(HostServiceErrorReason.EXPORT_DENIED, 'shut_down')
    await self._check_credential(principal, request)
    lifecycle = self._profile.session_lifecycle_store
    assert lifecycle is not None
    try:
      record = await lifecycle.read(target.session)
    except Exception as e:  # pylint: disable=broad-except
      raise _Denied(HostServiceErrorReason.EXPORT_DENIED, 'lifecycle') from e
    if record.state is not LifecycleState.ACTIVE:
      raise _Denied(
          HostServiceErrorReason.EXPORT_DENIED,
          'session_not_active',
      )
    if loaded is not None and record.incarnation != loaded[0]:
      raise _Denied(HostServiceErrorReason.EXPORT_DENIED, 'stale_incarnation')
    attempt.incarnation = record.incarnation
    active_key = self._active_key_id()
    if loaded is not None and active_key != loaded[1]:
      raise _Denied(HostServiceErrorReason.EXPORT_DENIED, 'key_rotated')
    permit = _mint_permit(
        target.session,
        record.incarnation,
        target.event_id,
        target.function_call_id,
    )
    try:
      resolved = await self._gated.resolve(
          target.session,
          event_id=target.event_id,
          function_call_id=target.function_call_id,
          permit=permit,
      )
    except SealedResolutionError as e:
      raise _Denied(HostServiceErrorReason.EXPORT_DENIED, e.fault.value) from e
    attempt.record_id = resolved.reference.record_id
    await self._authorize(principal, resolved, attempt)
    projection = self.projection
    if loaded is not None and projection.name != loaded[2]:
      raise _Denied(HostServiceErrorReason.EXPORT_DENIED, 'projection_changed')
    limits = self.limits
    timestamp = float(getattr(resolved.event, 'timestamp', 0.0) or 0.0)
    if self._clock() - timestamp > limits.retention_seconds:
      raise _Denied(HostServiceErrorReason.LIMIT_EXCEEDED, 'retention')
    try:
      body = canonicalize(
          projection.project(resolved.full_result()),
          purpose=Purpose.SEALED_RESULT,
          max_bytes=limits.max_bytes,
      )
    except CanonicalJsonError as e:
      raise _Denied(HostServiceErrorReason.LIMIT_EXCEEDED, 'bytes') from e
    except SealingError as e:
      raise _Denied(HostServiceErrorReason.EXPORT_DENIED, 'corrupt') from e
    self._check_rate(target, limits)
    return resolved, body, (record.incarnation, active_key, projection.name)

  async def _check_credential(
      self, principal: Principal, request: Optional[PrincipalRequest]
  ) -> None:
    if request is None:
      return
    resolver = self._profile.principal_resolver
    try:
      current = None if resolver is None else await resolver.resolve(request)
    except Exception as e:  # pylint: disable=broad-except
      raise _Denied(HostServiceErrorReason.UNAUTHENTICATED, 'credential') from e
    if current != principal:
      raise _Denied(HostServiceErrorReason.UNAUTHENTICATED, 'credential')

  async def _authorize(
      self,
      principal: Principal,
      resolved: ResolvedResult,
      attempt: _Attempt,
  ) -> None:
    target = attempt.target
    authorizer = self._profile.session_authorizer
    descriptor = resolved.descriptor
    if descriptor is not None:
      toolset_id = descriptor.toolset_id
    else:
      try:
        toolset_id = resolved.refresh_record().toolset_id
      except SealingError as e:
        raise _Denied(HostServiceErrorReason.EXPORT_DENIED, 'corrupt') from e
    try:
      allowed = authorizer is not None and await authorizer.authorize(
          principal,
          target.session,
          SessionPurpose.EXPORT,
          widget=WidgetTarget(
              toolset_id, target.event_id, target.function_call_id
          ),
      )
    except Exception:  # pylint: disable=broad-except
      allowed = False
    if allowed is not True:
      raise _Denied(HostServiceErrorReason.UNAUTHORIZED, 'export_purpose')

  def _active_key_id(self) -> str:
    provider = self._profile.key_provider
    try:
      return '' if provider is None else provider.active_key().key_id
    except Exception as e:  # pylint: disable=broad-except
      raise _Denied(
          HostServiceErrorReason.EXPORT_DENIED, 'key_unavailable'
      ) from e

  def _window(self, name: str, now: float, window: float) -> int:
    with self._lock:
      times = self._released.setdefault(name, collections.deque())
      while times and times[0] <= now - window:
        times.popleft()
      return len(times)

  def _check_rate(self, target: _Target, limits: ExportLimits) -> None:
    now = self._clock()
    principal_key = f'p\0{target.principal_id}'
    session_key = f's\0{target.principal_id}\0{target.session}'
    if self._window(principal_key, now, limits.window_seconds) >= (
        limits.max_per_principal
    ):
      raise _Denied(HostServiceErrorReason.LIMIT_EXCEEDED, 'rate')
    if self._window(session_key, now, limits.window_seconds) >= (
        limits.max_per_session
    ):
      raise _Denied(HostServiceErrorReason.LIMIT_EXCEEDED, 'bulk')

  def _count(self, target: _Target) -> None:
    now = self._clock()
    with self._lock:
      for name in (
          f'p\0{target.principal_id}',
          f's\0{target.principal_id}\0{target.session}',
      ):
        self._released.setdefault(name, collections.deque()).append(now)

  def _record(
      self,
      attempt: _Attempt,
      status: ExportAuditStatus,
      reason: str = '',
  ) -> ExportAuditRecord:
    target = attempt.target
    return ExportAuditRecord(
        operation_instance_id=attempt.op,
        principal_id=target.principal_id,
        session=target.session,
        incarnation=attempt.incarnation,
        event_id=target.event_id,
        function_call_id=target.function_call_id,
        record_id=attempt.record_id,
        status=status,
        recorded_at=self._clock(),
        reason=reason,
    )

  async def _deny(
      self,
      attempt: _Attempt,
      denied: _Denied,
      *,
      audit: bool = True,
      status: ExportAuditStatus = ExportAuditStatus.DENIED,
  ) -> NoReturn:
    """Audits (best effort), logs and raises one denial."""
    store = self._profile.export_audit_store
    if audit and store is not None:
      reason = f'{denied.reason.value}:{denied.detail}'
      with contextlib.suppress(Exception):
        await store.append(self._record(attempt, status, reason))
    target = attempt.target
    log_denial(
        'export',
        denied.reason,
        app_name=target.session.app_name,
        session_id=target.session.session_id,
        event_id=target.event_id,
        function_call_id=target.function_call_id,
        operation_id=attempt.op,
        detail=denied.detail,
    )
    raise HostServiceError(denied.reason, denied.detail)


def _reentry() -> _Denied:
  return _Denied(HostServiceErrorReason.EXPORT_DENIED, 'same_session_reentry')


def _finish(future: asyncio.Future[None]) -> None:
  if not future.done():
    future.set_result(None)
