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

"""One View's governed JSON-RPC channel: `tools/call` and `resources/read`.

A `ViewChannel` serves one bootstrapped View (one `ViewGrant`, one View
generation). It takes the View's JSON-RPC messages already parsed (or as
text) and gives back the one terminal response of each request, or None
for a notification or a cancelled request. Before queueing it checks only
structure, its lease, live ids and rate; once the Session is owned it runs
the post-queue barrier and then the operation, on the View's own
connection generation. The transport (PR 5's HTTP adapter, a test) owns
delivery. Design: docs/design/view-channel.md.

Example:

  channel = ViewChannel(grant=document.grant, widget_uri=uri,
                        principal=principal, registry=registry,
                        environment=environment)
  response = await channel.handle(
      {'jsonrpc': '2.0', 'id': 1, 'method': 'tools/call',
       'params': {'name': 'refresh', 'arguments': {}}},
      token=channel.token)
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
import dataclasses
import functools
import hashlib
import hmac
import json
import logging
import secrets
import time
from typing import Any
from typing import Final
from typing import Optional
from typing import Protocol
from typing import Union

from google.genai import types as genai_types

from ...agents.invocation_context import new_invocation_context_id
from ...dependencies._mcp import McpError
from ...dependencies._mcp import types as mcp_types
from ...events.event import Event
from ...sessions.base_session_service import GetSessionConfig
from ..affinity.errors import ConnectionAffinityError
from ..affinity.generations import GenerationPages
from ..affinity.routing import AppCallCallbacks
from ..affinity.routing import AppCallGovernor
from ..affinity.security_domain import acting_principal
from ..audit.pipeline import append_audit_event
from ..batch.ledger import EventBatchEffects
from ..binding.overrides import EffectiveBinding
from ..bootstrap.render import RenderDocument
from ..bootstrap.render import view_hold
from ..bootstrap.render import ViewGrant
from ..catalog.app_catalog import admit_app_call
from ..contracts.principal_resolver import Principal
from ..contracts.session_authorizer import SessionPurpose
from ..contracts.session_authorizer import WidgetTarget
from ..coordination.coordinator import owned_here
from ..coordination.coordinator import refuse_reentry
from ..coordination.coordinator import session_coordinator
from ..coordination.runner_entry import permitted_turn
from ..errors import McpAppVisibilityError
from ..lifecycle.errors import SessionLifecycleError
from ..lifecycle.manager import check_incarnation
from ..profile.capabilities import MessageModality
from ..profile.fingerprint import binding_revision
from ..profile.host_profile import McpAppsHostProfile
from ..profile.limits import DeliveryLimits
from ..profile.policies import ResourcePolicySettings
from ..resources.policy import ResourceReadDeniedError
from .app_call import AppCallRequest
from .app_call import OPERATION_ERROR_CODE
from .app_call import OPERATION_METADATA_KEY
from .app_call import OperationEnvironment
from .app_call import OperationOutcome
from .app_call import OperationOutcomeCache
from .app_call import OperationOutcomeKind
from .app_call import OperationSignal
from .app_call import run_app_call
from .app_read import AppReadRequest
from .app_read import ReadLimits
from .app_read import run_app_read
from .app_read import validate_read_response
from .context_registers import context_registers
from .context_updates import parse_update
from .context_updates import UPDATE_MODEL_CONTEXT
from .context_updates import update_model_context
from .errors import OperationError
from .errors import OperationErrorReason
from .idempotency import Claim
from .idempotency import idempotency_key_of
from .idempotency import IdempotencyNamespace
from .idempotency import OperationIdentity
from .idempotency import read_retention
from .idempotency import Retained
from .idempotency import RetainedOutcomes
from .message_permit import CONFIRMED
from .message_permit import lease_digest
from .message_permit import MessageConfirmation
from .message_permit import MessageConfirmationRequest
from .message_permit import MessagePermit
from .message_permit import payload_digest
from .nested_views import NestedViewDecision
from .nested_views import RenderReservationTable

__all__ = [
    'READ_OPERATION',
    'TOOL_CANCELLED',
    'ChannelRegistry',
    'ViewChannel',
    'jsonrpc_error',
]

logger = logging.getLogger('google_adk.' + __name__)

READ_OPERATION: Final = 'app.resources_read'
"""The operation name a View's read owns its Session under."""

TOOL_CANCELLED: Final = 'ui/notifications/tool-cancelled'

REQUEST_TEARDOWN: Final = 'ui/notifications/request-teardown'
"""The View's request to be torn down; the host decides."""

TEARDOWN_OPERATION: Final = 'app.teardown'
"""The operation name teardown phase 2 owns the Session under."""
"""The notification a surviving channel gets for a cancelled call."""

CONFIRMATION_META_PREFIX: Final = 'com.google.adk/confirmation'
"""`_meta` keys a View may not send: confirmation is host-only."""

_PROTOCOL_CODES: Final = {
    OperationErrorReason.PARSE_ERROR: -32700,
    OperationErrorReason.INVALID_REQUEST: -32600,
    OperationErrorReason.DUPLICATE_REQUEST_ID: -32600,
    OperationErrorReason.METHOD_NOT_FOUND: -32601,
    OperationErrorReason.INVALID_PARAMS: -32602,
    OperationErrorReason.IDEMPOTENCY_KEY_INVALID: -32602,
    OperationErrorReason.HOST_ONLY: -32602,
}

_REQUESTS: Final = frozenset(
    {'tools/call', 'resources/read', 'ui/message', UPDATE_MODEL_CONTEXT}
)

_INTERRUPTIONS: Final = frozenset({
    OperationErrorReason.CANCELLED,
    OperationErrorReason.DISCONNECTED,
    OperationErrorReason.TEARDOWN,
})

_PRINCIPAL_DIGEST_KEY: Final = secrets.token_bytes(32)
"""Keys the principal digests of idempotency namespaces (process-local,
like the records themselves)."""
_CANCELLED: Final = 'notifications/cancelled'

RequestId = Union[str, int]
Notify = Callable[[dict[str, Any]], Awaitable[None]]
TeardownDecision = Callable[['ViewChannel'], Awaitable[bool]]
"""The host's answer to a View's request to be torn down."""
TeardownHook = Callable[['ViewChannel'], Awaitable[None]]
"""Removes a host's per-View state in teardown phase 2."""


class ChannelRegistry(Protocol):
  """What the channel reads of the binding registry at its barrier."""

  @property
  def profile(self) -> Optional[McpAppsHostProfile]:
    """The profile bound now."""
    ...

  @property
  def binding_generation(self) -> int:
    """The registry's binding generation."""
    ...

  def effective(self, toolset_id: str) -> EffectiveBinding:
    """The narrowed policy in force for a toolset."""
    ...


def jsonrpc_error(
    reply_id: Optional[RequestId],
    reason: OperationErrorReason,
    message: Optional[str] = None,
    **data: Any,
) -> dict[str, Any]:
  """The JSON-RPC error response of a channel refusal."""
  return {
      'jsonrpc': '2.0',
      'id': reply_id,
      'error': {
          'code': _PROTOCOL_CODES.get(reason, OPERATION_ERROR_CODE),
          'message': message or f'The View request failed: {reason.value}',
          'data': {'reason': reason.value, **data},
      },
  }


def _result(request_id: RequestId, result: Any) -> dict[str, Any]:
  return {'jsonrpc': '2.0', 'id': request_id, 'result': result}


def _wire_error(request_id: RequestId, error: Any) -> dict[str, Any]:
  dumped = error.model_dump(mode='json', by_alias=True, exclude_none=True)
  return {'jsonrpc': '2.0', 'id': request_id, 'error': dumped}


def _id_key(request_id: RequestId) -> tuple[bool, RequestId]:
  # `1` and `"1"` are different JSON-RPC ids.
  return (isinstance(request_id, str), request_id)


def _valid_id(value: Any) -> bool:
  return (isinstance(value, str)) or (
      isinstance(value, int) and not isinstance(value, bool)
  )


@dataclasses.dataclass
class _Live:
  """One live request of the channel."""

  method: str
  signal: OperationSignal
  size: int
  cancelled: bool = False


@dataclasses.dataclass(frozen=True)
class _Refusal(Exception):
  reason: OperationErrorReason
  detail: str = ''


def _check_message(params: Mapping[str, Any]) -> None:
  """`ui/message`'s strict params: a user message of text blocks (v1's one
  modality), and nothing else: no `_meta`, so no replay key."""
  if set(params) != {'role', 'content'} or params['role'] != 'user':
    raise _Refusal(OperationErrorReason.INVALID_PARAMS, 'role and content')
  content = params['content']
  if not isinstance(content, list) or not content:
    raise _Refusal(OperationErrorReason.INVALID_PARAMS, 'content')
  for block in content:
    if (
        not isinstance(block, Mapping)
        or block.get('type') != 'text'
        or not isinstance(block.get('text'), str)
        or not set(block) <= {'type', 'text', 'annotations'}
        or not isinstance(block.get('annotations', {}), Mapping)
    ):
      raise _Refusal(OperationErrorReason.INVALID_PARAMS, 'a text block')


def _replayed(retained: Retained, operation_id: str) -> OperationOutcome:
  """A retained call outcome as the answer of a new request."""
  outcome = retained.outcome
  assert isinstance(outcome, OperationOutcome)
  if outcome.kind is not OperationOutcomeKind.CANCELLED:
    return dataclasses.replace(outcome, operation_id=operation_id)
  # The first execution was cancelled; its retry gets that outcome as an
  # error, not silence.
  reason = (
      outcome.cause.reason
      if outcome.cause is not None
      else OperationErrorReason.CANCELLED
  )
  return OperationOutcome(
      operation_id,
      OperationOutcomeKind.ERROR,
      error=mcp_types.ErrorData(
          code=OPERATION_ERROR_CODE,
          message=f'The app operation failed: {reason.value}',
          data={'reason': reason.value},
      ),
      cause=outcome.cause,
  )


class ViewChannel:
  """The governed channel of one View instance and generation.

  Attributes:
    grant: The View's host-held grant.
    view_id: The View's id (the grant's).
    operation_prefix: Prefixes the operation id of each request
      (`<prefix>:<n>` for the channel's n-th admitted request), unique per
      channel.
  """

  def __init__(
      self,
      *,
      grant: ViewGrant,
      widget_uri: str,
      principal: Principal,
      registry: ChannelRegistry,
      environment: OperationEnvironment,
      call_cache: Optional[OperationOutcomeCache] = None,
      outcomes: Optional[RetainedOutcomes] = None,
      confirmation: Optional[AppCallGovernor] = None,
      callbacks: Optional[AppCallCallbacks] = None,
      notify: Optional[Notify] = None,
      runner: Any = None,
      on_request_teardown: Optional[TeardownDecision] = None,
      teardown_hooks: Sequence[TeardownHook] = (),
      message_confirmation: Optional[MessageConfirmation] = None,
      read_item_bytes: Optional[int] = None,
      append_timeout: Optional[float] = None,
      nested_views: Optional[NestedViewDecision] = None,
      render_reservations: Optional[RenderReservationTable] = None,
      lease_seconds: float = 900.0,
      lease_expires_at: Optional[float] = None,
      clock: Callable[[], float] = time.monotonic,
  ) -> None:
    """Opens the channel and mints its lease.

    Args:
      grant: The View's grant (`bootstrap_render`'s `RenderDocument.grant`).
      widget_uri: The View's `ui://` resource (its resource policy's root).
      principal: The principal the View was bootstrapped for.
      registry: The binding registry serving the View's toolset.
      environment: The Runner-side parts app calls run against.
      call_cache: The app calls' outcome cache (one per host).
      outcomes: The idempotency ledger (process-local; one per host, or
        the channel's own when None).
      confirmation: The toolset's governed confirmation of app calls
        (`facades.confirmation.AppCallConfirmation`); its `approve` is the
        host's, never the View's.
      callbacks: The toolset's governed MCP callbacks on app calls
        (`facades.mcp_callbacks.AppPathCallbacks`).
      notify: Delivers the channel's own notifications to the View.
      runner: The Runner a `ui/message` is delivered to as a turn; without
        one the channel serves no `ui/message`.
      on_request_teardown: The host's decision on the View's
        `ui/notifications/request-teardown` (True tears the View down);
        None declines every request.
      teardown_hooks: Awaited by teardown phase 2, under the Session's
        ownership, to remove the host's per-View state.
      message_confirmation: The host's confirmation of each `ui/message`
        (its attestation or its own ask); None confirms nothing, so every
        message is refused (`CONFIRMATION_DENIED`).
      read_item_bytes: A per-item byte bound on read responses below the
        profile's `max_response_bytes`.
      append_timeout: Seconds a call's audit append may take before the
        call ends with `APPEND_TIMEOUT` (the append goes on); None waits.
      nested_views: The host's decision whether a call of a UI-associated
        tool opens a nested View (`operations.nested_views`); None (the
        default) never does, so the call's result is sealed Event-level.
      render_reservations: Where a nested widget's generation is reserved
        for its first View; None uses the registry's
        `render_reservations`, if it has them.
      lease_seconds: How long the channel's lease lasts.
      lease_expires_at: The `clock` reading the lease ends at, when the
        host's own View lease is the authority (`lease_seconds` is then
        unused): one clock, one deadline.
      clock: The monotonic clock (leases, rate).
    """
    profile = registry.profile
    if profile is None:
      raise OperationError(
          OperationErrorReason.BINDING_CHANGED, 'no profile is bound'
      )
    self.grant = grant
    self.view_id = grant.view_id
    self._hold = view_hold(grant)
    self.operation_prefix = f'{grant.view_id}.{secrets.token_hex(4)}'
    self._widget_uri = widget_uri
    binding = grant.binding
    self._widget = WidgetTarget(
        binding.toolset_id,
        binding.event_id,
        binding.function_call_id,
        view_instance_id=grant.view_id,
    )
    self._principal = principal
    self._registry = registry
    self._environment = environment
    self._call_cache = (
        call_cache if call_cache is not None else OperationOutcomeCache()
    )
    self._outcomes = outcomes if outcomes is not None else RetainedOutcomes()
    self._read_item_bytes = read_item_bytes
    self._confirmation = confirmation
    self._runner = runner
    self._on_request_teardown = on_request_teardown
    self._teardown_hooks = tuple(teardown_hooks)
    self._teardown_asked = False
    self._phase2: Optional[asyncio.Future[None]] = None
    self._torn_down = False
    self._message_confirmation = message_confirmation
    self._permits: set[MessagePermit] = set()
    self._append_timeout = append_timeout
    self._nested_views = nested_views
    self._render_reservations = (
        render_reservations
        if render_reservations is not None
        else getattr(registry, 'render_reservations', None)
    )
    self._callbacks = callbacks
    self._notify = notify
    self._clock = clock
    self._binding_generation = registry.binding_generation
    self._token = f'{grant.incarnation}.{secrets.token_urlsafe(32)}'
    self._expires_at = (
        clock() + lease_seconds
        if lease_expires_at is None
        else lease_expires_at
    )
    self._revoked = False
    self._closed: Optional[OperationErrorReason] = None
    self._live: dict[tuple[bool, RequestId], _Live] = {}
    self._admitted: collections.deque[float] = collections.deque()
    self._sequence = 0

  @classmethod
  async def open(
      cls,
      document: RenderDocument,
      *,
      principal: Principal,
      registry: ChannelRegistry,
      runner: Any,
      **options: Any,
  ) -> ViewChannel:
    """Opens the channel of a bootstrapped View.

    Args:
      document: What `bootstrap_render` returned for the View.
      principal: The principal the View was bootstrapped for.
      registry: The binding registry serving the View's toolset.
      runner: The Runner the View's Session runs under: its Session
        service, plugins and agent tree are the app calls' (the View's
        originating agent is looked up in it by name).
      **options: The constructor's other keyword arguments.

    Returns:
      The channel, its lease live.
    """
    grant = document.grant
    # The channel needs the Session object (its key, state and revision), not
    # its history: each app call re-reads the stored Session when it runs.
    session = await runner.session_service.get_session(
        app_name=grant.session.app_name,
        user_id=grant.session.user_id,
        session_id=grant.session.session_id,
        config=GetSessionConfig(num_recent_events=0),
    )
    if session is None:
      raise OperationError(
          OperationErrorReason.INCARNATION_CHANGED, 'the Session is gone'
      )
    root = runner.agent
    return cls(
        grant=grant,
        widget_uri=document.descriptor.resource_uri,
        principal=principal,
        registry=registry,
        environment=OperationEnvironment(
            session_service=runner.session_service,
            session=session,
            plugin_manager=runner.plugin_manager,
            agent=root.find_agent(document.descriptor.correlation.agent_path),
            artifact_service=runner.artifact_service,
            root_agent=root,
        ),
        runner=runner,
        **options,
    )

  async def _audit_read(
      self, operation_id: str, uri: str, response: dict[str, Any]
  ) -> bool:
    """Records the read's audit Event through the audit pipeline; False
    when nothing was stored through it."""
    environment = self._environment
    key = self.grant.session
    session = await environment.session_service.get_session(
        app_name=key.app_name, user_id=key.user_id, session_id=key.session_id
    )
    if session is None:
      return False
    author = str(getattr(environment.agent, 'name', None) or 'app')
    audit = await append_audit_event(
        session_service=environment.session_service,
        session=session,
        event=_read_record(operation_id, uri, response, author),
        effects=EventBatchEffects([operation_id], live_state=session.state),
        plugin_manager=environment.plugin_manager,
        agent_name=author,
    )
    return audit.error is None

  # -- lease -------------------------------------------------------------------

  @property
  def token(self) -> str:
    """The channel token the transport presents with every message."""
    return self._token

  @property
  def live_ids(self) -> tuple[RequestId, ...]:
    """The ids of the requests live now."""
    return tuple(key[1] for key in self._live)

  def revoke_lease(self) -> None:
    """Revokes the lease: queued and later requests are refused."""
    self._revoked = True

  def disconnect(self) -> None:
    """The View's transport went away: every live call is a disconnect."""
    self._close(OperationErrorReason.DISCONNECTED)

  def teardown(self) -> None:
    """Phase 1 of the View's teardown: no lock, no Session change.

    Revokes the lease and interrupts every live and queued request; they
    answer nothing more.
    """
    self._close(OperationErrorReason.TEARDOWN)
    self.invalidate_message_permits(OperationErrorReason.TEARDOWN)

  async def finish_teardown(self) -> None:
    """Phase 2 of the View's teardown, under the Session's ownership.

    Queues behind whatever owns the Session (the interrupted operations
    record their reconciliation first), then runs the host's teardown
    hooks (its registers and other per-View state) and revokes the grant,
    releasing the View's connection generation. Runs once; a second call
    waits for the first. Runs phase 1 first if it has not run.
    """
    self.teardown()
    if self._phase2 is not None:
      await asyncio.shield(self._phase2)
      return
    refuse_reentry(self.grant.session, TEARDOWN_OPERATION)
    self._phase2 = asyncio.get_running_loop().create_future()
    try:
      async with session_coordinator().owned(
          self.grant.session, TEARDOWN_OPERATION
      ):
        # The View's model-context register goes; a lower one of its widget
        # is promoted.
        context_registers().clear_view(self.grant.session, self.view_id)
        for hook in self._teardown_hooks:
          try:
            await hook(self)
          except Exception:  # pylint: disable=broad-exception-caught
            logger.warning('a View teardown hook failed', exc_info=True)
        self.grant.revoke()
        self._torn_down = True
    finally:
      self._phase2.set_result(None)

  async def tear_down(self) -> None:
    """Both phases: what a host runs to end the View."""
    self.teardown()
    await self.finish_teardown()

  @property
  def torn_down(self) -> bool:
    """Whether phase 2 has completed."""
    return self._torn_down

  def _close(self, reason: OperationErrorReason) -> None:
    if self._closed is None:
      self._closed = reason
    self._revoked = True
    for live in self._live.values():
      if reason is OperationErrorReason.TEARDOWN:
        live.signal.teardown()
      else:
        live.signal.disconnect()

  def _check_lease(self, token: str) -> None:
    if not hmac.compare_digest(token.encode(), self._token.encode()):
      raise _Refusal(OperationErrorReason.LEASE_INVALID, 'wrong token')
    if self._revoked or self._clock() >= self._expires_at:
      raise _Refusal(OperationErrorReason.LEASE_INVALID, 'lease ended')
    incarnation, _, _ = token.partition('.')
    if incarnation != str(self.grant.incarnation):
      raise _Refusal(OperationErrorReason.LEASE_INVALID, 'other incarnation')

  # -- intake ------------------------------------------------------------------

  async def handle(
      self,
      message: Union[str, bytes, Mapping[str, Any]],
      *,
      token: str,
  ) -> Optional[dict[str, Any]]:
    """Serves one message from the View.

    Args:
      message: A JSON-RPC request or notification, as text or parsed.
      token: The channel token the transport received with it.

    Returns:
      The request's one terminal JSON-RPC response; None for a
      notification and for a cancelled request (no late response).
    """
    limits = self._delivery()
    if isinstance(message, (str, bytes)):
      raw = message.encode() if isinstance(message, str) else message
      size = len(raw)
      if size > limits.max_request_bytes:
        return jsonrpc_error(None, OperationErrorReason.REQUEST_TOO_LARGE)
      try:
        parsed: Any = json.loads(raw)
      except (ValueError, UnicodeDecodeError):
        return jsonrpc_error(None, OperationErrorReason.PARSE_ERROR)
    else:
      parsed = message
      try:
        size = len(json.dumps(parsed, separators=(',', ':')).encode())
      except (TypeError, ValueError):
        return jsonrpc_error(None, OperationErrorReason.INVALID_REQUEST)
      if size > limits.max_request_bytes:
        return jsonrpc_error(None, OperationErrorReason.REQUEST_TOO_LARGE)
    request_id = parsed.get('id') if isinstance(parsed, Mapping) else None
    reply_id = request_id if _valid_id(request_id) else None
    if not isinstance(token, str):
      return jsonrpc_error(reply_id, OperationErrorReason.LEASE_INVALID)
    try:
      self._check_lease(token)
    except _Refusal as refusal:
      return jsonrpc_error(reply_id, refusal.reason)
    if (
        not isinstance(parsed, Mapping)
        or parsed.get('jsonrpc') != '2.0'
        or not isinstance(parsed.get('method'), str)
        or ('params' in parsed and not isinstance(parsed['params'], Mapping))
        or ('id' in parsed and not _valid_id(request_id))
        or not set(parsed) <= {'jsonrpc', 'id', 'method', 'params'}
    ):
      return jsonrpc_error(reply_id, OperationErrorReason.INVALID_REQUEST)
    method: str = parsed['method']
    params: Mapping[str, Any] = parsed.get('params') or {}
    if 'id' not in parsed:
      await self._notification(method, params)
      return None
    assert request_id is not None
    if method not in _REQUESTS or (
        method == 'ui/message' and self._runner is None
    ):
      return jsonrpc_error(request_id, OperationErrorReason.METHOD_NOT_FOUND)
    key = _id_key(request_id)
    if key in self._live:
      # Answering on the live id would answer the first request.
      return jsonrpc_error(
          None,
          OperationErrorReason.DUPLICATE_REQUEST_ID,
          requestId=request_id,
      )
    try:
      self._check_params(method, params)
      keyed = self._keyed(method, params)
      self._check_rate(limits)
    except _Refusal as refusal:
      return jsonrpc_error(request_id, refusal.reason, detail=refusal.detail)
    except OperationError as refusal:
      return jsonrpc_error(request_id, refusal.reason)
    live = _Live(method, OperationSignal(), size)
    self._live[key] = live
    self._sequence += 1
    operation_id = f'{self.operation_prefix}:{self._sequence}'
    try:
      if method == 'tools/call':
        response = await self._tools_call(
            request_id, operation_id, params, live, keyed
        )
      elif method == 'ui/message':
        response = await self._ui_message(request_id, params, live)
      elif method == UPDATE_MODEL_CONTEXT:
        try:
          await update_model_context(
              self, self._registry, params, live.size, live
          )
          response = _result(request_id, {})
        except OperationError as refusal:
          response = jsonrpc_error(request_id, refusal.reason)
      else:
        response = await self._resources_read(
            request_id, operation_id, params, live, keyed
        )
    finally:
      self._live.pop(key, None)
    if self._closed is not None or live.cancelled:
      return None  # No late response to a View that went away or cancelled.
    return response

  async def _notification(self, method: str, params: Mapping[str, Any]) -> None:
    if method == REQUEST_TEARDOWN:
      await self._teardown_requested(params)
      return
    if method != _CANCELLED:
      logger.debug('View notification %s ignored', method)
      return
    request_id = params.get('requestId')
    if not isinstance(request_id, (str, int)) or not _valid_id(request_id):
      logger.debug('notifications/cancelled without a valid requestId')
      return
    live = self._live.get(_id_key(request_id))
    if live is None:
      return  # Finished already, or never live: nothing to cancel.
    live.cancelled = True
    live.signal.cancel()

  async def _teardown_requested(self, params: Mapping[str, Any]) -> None:
    """`ui/notifications/request-teardown`: the host decides."""
    if params:
      logger.info('a malformed request-teardown was ignored')
      return
    if self._teardown_asked or self._closed is not None:
      logger.info('a duplicate request-teardown was ignored')
      return
    self._teardown_asked = True
    decide = self._on_request_teardown
    try:
      approved = decide is not None and bool(await decide(self))
    except Exception:  # pylint: disable=broad-exception-caught
      logger.warning('the host teardown decision failed', exc_info=True)
      approved = False
    if not approved:
      logger.info('the host declined a request-teardown; the View stays')
      self._teardown_asked = False
      return
    await self.tear_down()

  def _check_params(self, method: str, params: Mapping[str, Any]) -> None:
    if method == 'ui/message':
      _check_message(params)
      return
    if method == UPDATE_MODEL_CONTEXT:
      parse_update(params)
      return
    if not set(params) <= {'name', 'arguments', 'uri', '_meta'}:
      raise _Refusal(OperationErrorReason.INVALID_PARAMS, 'unknown params')
    meta = params.get('_meta')
    if meta is not None and not isinstance(meta, Mapping):
      raise _Refusal(OperationErrorReason.INVALID_PARAMS, '_meta')
    if meta is not None and any(
        str(name).startswith(CONFIRMATION_META_PREFIX) for name in meta
    ):
      raise _Refusal(OperationErrorReason.HOST_ONLY, 'confirmation')
    if method == 'tools/call':
      if 'uri' in params or not isinstance(params.get('name'), str):
        raise _Refusal(OperationErrorReason.INVALID_PARAMS, 'name')
      arguments = params.get('arguments')
      if arguments is not None and not isinstance(arguments, Mapping):
        raise _Refusal(OperationErrorReason.INVALID_PARAMS, 'arguments')
    else:
      if set(params) - {'uri', '_meta'} or not isinstance(
          params.get('uri'), str
      ):
        raise _Refusal(OperationErrorReason.INVALID_PARAMS, 'uri')

  def _keyed(
      self, method: str, params: Mapping[str, Any]
  ) -> Optional[tuple[str, OperationIdentity]]:
    """The request's idempotency key and operation identity, if keyed."""
    if method == 'ui/message':
      return None  # No replay key in v1: every accepted message is a turn.
    key = idempotency_key_of(params.get('_meta'))
    if key is None:
      return None
    binding = self.grant.binding
    if method == 'tools/call':
      identity = OperationIdentity.for_call(
          binding.toolset_id,
          binding.server_id,
          params['name'],
          params.get('arguments'),
      )
    else:
      identity = OperationIdentity.for_read(
          binding.toolset_id,
          binding.server_id,
          params['uri'],
          canonicalizer=self._resource_policy().canonicalizer,
      )
    return key, identity

  def _namespace(self, **read_revisions: str) -> IdempotencyNamespace:
    principal = hmac.new(
        _PRINCIPAL_DIGEST_KEY,
        self._principal.principal_id.encode(),
        hashlib.sha256,
    ).hexdigest()
    return IdempotencyNamespace(
        principal_digest=principal,
        view_id=self.view_id,
        binding_revision=binding_revision(self._profile()),
        binding_generation=self._binding_generation,
        incarnation=self.grant.incarnation,
        connection_generation_id=self.grant.generation_id,
        **read_revisions,
    )

  def _check_rate(self, limits: DeliveryLimits) -> None:
    if len(self._live) >= limits.max_queued_operations:
      raise _Refusal(OperationErrorReason.QUEUE_FULL)
    now = self._clock()
    while self._admitted and self._admitted[0] <= now - 60.0:
      self._admitted.popleft()
    if len(self._admitted) >= limits.max_operations_per_minute:
      raise _Refusal(OperationErrorReason.RATE_LIMITED)
    self._admitted.append(now)

  # -- the post-queue barrier --------------------------------------------------

  def _resource_policy(self) -> ResourcePolicySettings:
    """The resource-read entries in force: narrowed, else the profile's."""
    effective = self._registry.effective(self.grant.binding.toolset_id)
    return effective.resource_policy or self._profile().resource_policy

  def _delivery(self) -> DeliveryLimits:
    """The delivery limits in force: narrowed, else the profile's."""
    effective = self._registry.effective(self.grant.binding.toolset_id)
    return effective.delivery or self._profile().limits.delivery

  def _read_limits(self) -> ReadLimits:
    delivery = self._delivery()
    total = delivery.max_response_bytes
    return ReadLimits(
        max_item_bytes=min(self._read_item_bytes or total, total),
        max_total_bytes=total,
        max_items=delivery.max_content_items,
    )

  def _profile(self) -> McpAppsHostProfile:
    profile = self._registry.profile
    if profile is None:
      raise _Refusal(OperationErrorReason.BINDING_CHANGED, 'unbound')
    return profile

  async def barrier(
      self,
      method: str,
      uri: Optional[str] = None,
      size: Optional[int] = None,
  ) -> None:
    """Re-checks everything the View's operation depends on, in order.

    Runs once the Session is owned, before any callback, remote call or
    retained-outcome lookup (and before every further MRTR leg).

    Raises:
      OperationError: The first check that fails, by its reason.
    """
    try:
      await self._barrier(method, uri, size)
    except _Refusal as refusal:
      raise OperationError(refusal.reason, refusal.detail) from None

  async def _barrier(
      self, method: str, uri: Optional[str], size: Optional[int]
  ) -> None:
    if self._closed is not None:
      raise _Refusal(self._closed, 'the channel closed while queued')
    if self._revoked or self._clock() >= self._expires_at:
      raise _Refusal(OperationErrorReason.LEASE_INVALID, 'lease ended')
    profile = self._profile()
    authorizer = profile.session_authorizer
    try:
      allowed = authorizer is not None and await authorizer.authorize(
          self._principal,
          self.grant.session,
          SessionPurpose.VIEW,
          widget=self._widget,
      )
    except Exception:  # pylint: disable=broad-exception-caught
      allowed = False  # An authorizer that raises denies.
    if not allowed:
      raise _Refusal(OperationErrorReason.UNAUTHORIZED, 'principal')
    store = profile.session_lifecycle_store
    if store is not None:
      try:
        check_incarnation(
            await store.read(self.grant.session),
            self.grant.incarnation,
            purpose=method,
        )
      except SessionLifecycleError:
        raise _Refusal(
            OperationErrorReason.INCARNATION_CHANGED, 'incarnation'
        ) from None
    if size is not None and size > self._delivery().max_request_bytes:
      raise _Refusal(OperationErrorReason.LIMIT_EXCEEDED, 'request bytes')
    if uri is not None:
      try:
        self._resource_policy().for_widget(self._widget_uri).check(uri)
      except ResourceReadDeniedError:
        raise _Refusal(
            OperationErrorReason.RESOURCE_POLICY_DENIED, 'resource policy'
        ) from None
    effective = self._registry.effective(self.grant.binding.toolset_id)
    capabilities = effective.host_capabilities
    if capabilities is None:
      advertised = False
    elif method == 'tools/call':
      advertised = capabilities.server_tools
    elif method == 'ui/message':
      advertised = MessageModality.TEXT in (capabilities.message or ())
    elif method == UPDATE_MODEL_CONTEXT:
      advertised = capabilities.update_model_context is not None
    else:
      advertised = capabilities.server_resources
    if 'app' not in effective.visibility or not advertised:
      raise _Refusal(OperationErrorReason.MODALITY_WITHDRAWN, method)
    if self._registry.binding_generation != self._binding_generation:
      # A rebind also retires the View's connection generation; the
      # binding is named as the cause.
      raise _Refusal(OperationErrorReason.BINDING_CHANGED, 'generation')
    try:
      self._hold.check()
    except ConnectionAffinityError:
      raise _Refusal(
          OperationErrorReason.VIEW_GENERATION_INVALIDATED, 'generation'
      ) from None

  # -- tools/call --------------------------------------------------------------

  async def _tools_call(
      self,
      request_id: RequestId,
      operation_id: str,
      params: Mapping[str, Any],
      live: _Live,
      keyed: Optional[tuple[str, OperationIdentity]],
  ) -> Optional[dict[str, Any]]:
    tool_name: str = params['name']
    effective = self._registry.effective(self.grant.binding.toolset_id)
    server_id = self.grant.binding.server_id
    claims: list[Claim] = []

    async def admission() -> Optional[OperationOutcome]:
      await self.barrier('tools/call', size=live.size)
      policy = self._registry.effective(
          self.grant.binding.toolset_id
      ).app_call_policy
      if not policy.admits(tool_name):
        raise OperationError(
            OperationErrorReason.ADMISSION_DENIED, 'app-call policy'
        )
      if keyed is None:
        return None
      # Fresh admission precedes the lookup; a retained outcome is only
      # replayed for a call that would be admitted now.
      got = await self._outcomes.claim_async(
          self._namespace(), keyed[0], keyed[1]
      )
      if isinstance(got, Claim):
        claims.append(got)
        return None
      try:
        await admit_app_call(
            GenerationPages(self._hold.generation),
            tool_name,
            view_server_id=server_id,
            target_server_id=server_id,
            policy=policy,
        )
      except McpAppVisibilityError as denial:
        raise OperationError(
            OperationErrorReason.ADMISSION_DENIED, 'not listed now'
        ) from denial
      return _replayed(got, operation_id)

    async def between_legs() -> None:
      # An MRTR leg gives the Session up and comes back through the whole
      # barrier: a revocation meanwhile denies the resumption.
      ownership = owned_here(self.grant.session)
      if ownership is not None:
        await session_coordinator().requeue(ownership)
      await self.barrier('tools/call', size=live.size)

    request = AppCallRequest(
        operation_id=operation_id,
        hold=self._hold,
        tool_name=tool_name,
        arguments=dict(params.get('arguments') or {}),
        # The target is the grant's server, never the caller's say.
        view_server_id=server_id,
        target_server_id=server_id,
        policy=effective.app_call_policy,
        profile=self._registry.profile,
        toolset_id=self.grant.binding.toolset_id,
        confirmation=self._confirmation,
        callbacks=self._callbacks,
        admission=admission,
        between_legs=between_legs,
        append_timeout=self._append_timeout,
        nested_views=self._nested_views,
        render_reservations=self._render_reservations,
    )
    try:
      outcome = await run_app_call(
          request,
          environment=self._environment,
          cache=self._call_cache,
          signal=live.signal,
      )
    except OperationError as error:
      for claim in claims:
        claim.abandon()
      return jsonrpc_error(request_id, error.reason)
    except BaseException:
      for claim in claims:
        claim.abandon()
      raise
    for claim in claims:
      # The first terminal outcome is the retained one, cancellations
      # included.
      claim.settle(outcome)
    return await self._answer(request_id, outcome)

  async def _answer(
      self, request_id: RequestId, outcome: OperationOutcome
  ) -> Optional[dict[str, Any]]:
    if outcome.kind is OperationOutcomeKind.CANCELLED:
      if outcome.tool_cancelled and self._closed is None:
        await self._send({
            'jsonrpc': '2.0',
            'method': TOOL_CANCELLED,
            'params': {'reason': 'cancelled'},
        })
      if self._closed is None and not outcome.tool_cancelled:
        # Not the View's cancel (a teardown noticed while queued, a Session
        # gone): the live channel still gets its one terminal answer.
        reason = (
            outcome.cause.reason
            if outcome.cause is not None
            else OperationErrorReason.TEARDOWN
        )
        return jsonrpc_error(request_id, reason)
      return None
    if outcome.result is not None:
      body = outcome.result.model_dump(
          mode='json', by_alias=True, exclude_none=True
      )
      # The call ran and its record stands; a result over the delivery
      # limits is still never handed to the View.
      size = len(json.dumps(body, separators=(',', ':')).encode())
      if size > self._delivery().max_response_bytes:
        return jsonrpc_error(
            request_id, OperationErrorReason.LIMIT_EXCEEDED, detail='bytes'
        )
      return _result(request_id, body)
    assert outcome.error is not None
    return _wire_error(request_id, outcome.error)

  async def _send(self, notification: dict[str, Any]) -> None:
    if self._notify is None:
      return
    try:
      await self._notify(notification)
    except Exception:  # pylint: disable=broad-exception-caught
      logger.warning(
          'the View notification %s was not delivered',
          notification.get('method'),
      )

  # -- ui/message --------------------------------------------------------------

  @property
  def message_permits(self) -> tuple[MessagePermit, ...]:
    """The permits of the channel's messages not yet admitted as turns."""
    return tuple(p for p in self._permits if not p.admitted)

  def invalidate_message_permits(self, reason: OperationErrorReason) -> None:
    """Invalidates every queued message permit at once (no await): none
    of their turns runs anything."""
    for permit in tuple(self._permits):
      permit.invalidate(reason)

  async def _ui_message(
      self, request_id: RequestId, params: Mapping[str, Any], live: _Live
  ) -> Optional[dict[str, Any]]:
    """Delivers an accepted message as one Runner turn under its permit.

    The channel validates, authorizes and confirms it without owning the
    Session, then mints the permit; the turn (`Runner.run_async`) claims
    it, owns the Session and revalidates it before any callback or append.
    """
    try:
      await self.barrier('ui/message', size=live.size)
    except OperationError as refusal:
      return jsonrpc_error(request_id, refusal.reason)
    texts = tuple(block['text'] for block in params['content'])
    if not await self._confirm_message(texts, live):
      return jsonrpc_error(request_id, OperationErrorReason.CONFIRMATION_DENIED)
    session = self.grant.session
    try:
      revision = binding_revision(self._profile())
    except _Refusal as refusal:
      return jsonrpc_error(request_id, refusal.reason)
    permit = MessagePermit(
        session=session,
        view_id=self.view_id,
        lease=lease_digest(self._token),
        binding_revision=revision,
        binding_generation=self._binding_generation,
        incarnation=self.grant.incarnation,
        confirmation=CONFIRMED,
        texts=texts,
        recheck=functools.partial(self._recheck_message, live=live),
    )
    self._permits.add(permit)
    if self._closed is not None:
      permit.invalidate(self._closed)
    message = genai_types.Content(
        role='user', parts=[genai_types.Part(text=text) for text in texts]
    )
    try:
      # The turn acts for the View's principal, so a widget it renders is
      # keyed for the user who sent the message and opens for them.
      with permitted_turn(permit), acting_principal(self._principal):
        async for _ in self._runner.run_async(
            user_id=session.user_id,
            session_id=session.session_id,
            new_message=message,
        ):
          pass
    except OperationError as error:
      if permit.refusal is not error:
        raise
      return jsonrpc_error(request_id, error.reason)
    finally:
      self._permits.discard(permit)
    if not permit.admitted:
      # The Runner ran no permit check (not the grant's app): say so.
      logger.error(
          'the ui/message turn of %s never claimed its permit', self.view_id
      )
      return jsonrpc_error(
          request_id, OperationErrorReason.MESSAGE_PERMIT_STALE
      )
    return _result(request_id, {})

  async def _confirm_message(self, texts: tuple[str, ...], live: _Live) -> bool:
    """The host's confirmation of a message; False unless it said True.

    Waits without owning the Session; an interruption (cancel, disconnect,
    teardown) ends the wait unconfirmed.
    """
    confirm = self._message_confirmation
    if confirm is None:
      return False  # Confirmation by default: nothing confirms.
    request = MessageConfirmationRequest(
        session=self.grant.session,
        view_id=self.view_id,
        principal_id=self._principal.principal_id,
        texts=texts,
        payload_digest=payload_digest(texts),
    )
    asked: asyncio.Future[Any] = asyncio.ensure_future(confirm(request))
    interrupted = live.signal._wait()  # pylint: disable=protected-access
    pending: set[asyncio.Future[Any]] = {asked, interrupted}
    try:
      await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
      interrupted.cancel()
      await _stopped(asked)
      raise
    interrupted.cancel()
    if not asked.done():
      await _stopped(asked)
      return False
    try:
      return asked.result() is True
    except Exception:  # pylint: disable=broad-exception-caught
      logger.warning('the ui/message confirmation of %s failed', self.view_id)
      return False

  async def _recheck_message(
      self, permit: MessagePermit, *, live: _Live
  ) -> None:
    """The permit's revalidation once its turn owns the Session."""
    if live.cancelled:
      raise OperationError(OperationErrorReason.CANCELLED, 'cancelled')
    await self.barrier('ui/message', size=live.size)
    profile = self._registry.profile
    stale = (
        profile is None
        or permit.view_id != self.view_id
        or permit.lease != lease_digest(self._token)
        or permit.binding_revision != binding_revision(profile)
        or permit.binding_generation != self._registry.binding_generation
        or permit.incarnation != self.grant.incarnation
        or permit.confirmation != CONFIRMED
    )
    if stale:
      raise OperationError(
          OperationErrorReason.MESSAGE_PERMIT_STALE, 'the permit is stale'
      )

  # -- resources/read ----------------------------------------------------------

  async def _resources_read(
      self,
      request_id: RequestId,
      operation_id: str,
      params: Mapping[str, Any],
      live: _Live,
      keyed: Optional[tuple[str, OperationIdentity]],
  ) -> Optional[dict[str, Any]]:
    # Started by code that owns this Session: refused before it waits.
    refuse_reentry(self.grant.session, READ_OPERATION)
    read = asyncio.ensure_future(
        self._owned_read(request_id, operation_id, params['uri'], keyed, live)
    )
    interrupted = live.signal._wait()  # pylint: disable=protected-access
    pending: set[asyncio.Future[Any]] = {read, interrupted}
    try:
      await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
      live.signal.disconnect()
      await _stopped(read)
      raise
    if not read.done():
      # Cancelled, disconnected or torn down: no late response; the read's
      # claim keeps the cancellation as its outcome.
      await _stopped(read)
      return None
    interrupted.cancel()
    return read.result()

  async def _owned_read(
      self,
      request_id: RequestId,
      operation_id: str,
      uri: str,
      keyed: Optional[tuple[str, OperationIdentity]],
      live: _Live,
  ) -> dict[str, Any]:
    coordinator = session_coordinator()
    ownership = await coordinator.acquire(self.grant.session, READ_OPERATION)
    claim: Optional[Claim] = None
    denied: list[OperationError] = []
    try:
      try:
        await self.barrier('resources/read', uri, live.size)
      except OperationError as refusal:
        return jsonrpc_error(request_id, refusal.reason)
      profile = self._profile()
      policy = self._resource_policy().for_widget(self._widget_uri)
      limits = self._read_limits()
      credential = self._hold.generation.key.credential_context
      if keyed is not None:
        try:
          got = await self._outcomes.claim_async(
              self._namespace(
                  resource_policy_revision=policy.revision,
                  delivery_limit_revision=limits.revision,
              ),
              keyed[0],
              keyed[1],
              credential_context=credential,
          )
        except OperationError as conflict:
          return jsonrpc_error(request_id, conflict.reason)
        if isinstance(got, Retained):
          return _replayed_read(request_id, got, policy, limits)
        claim = got

      async def between_legs() -> None:
        # An MRTR leg gives the Session up and comes back through the
        # whole barrier: a revocation meanwhile denies the resumption.
        await coordinator.requeue(ownership)
        try:
          await self.barrier('resources/read', uri, live.size)
        except OperationError as refusal:
          denied.append(refusal)
          raise

      retained: Any
      ttl: Optional[float] = None
      private = True
      try:
        result, _ = await run_app_read(
            AppReadRequest(
                operation_id=operation_id,
                hold=self._hold,
                uri=uri,
                policy=policy,
                limits=limits,
                max_rounds=profile.limits.mrtr_max_rounds,
                max_seconds=profile.limits.mrtr_max_seconds,
            ),
            between_legs=between_legs,
        )
      except OperationError as error:
        response = jsonrpc_error(request_id, error.reason)
        retained = ('error', response['error'])
      except McpError as error:
        response = _wire_error(request_id, error.error)
        retained = ('error', response['error'])
      else:
        wire = _read_wire(result)
        response = _result(request_id, wire)
        retained = ('result', result)
        retention = read_retention(wire)
        ttl, private = retention.ttl_seconds, retention.private
      if denied:
        if denied[0].reason in _INTERRUPTIONS:
          _interrupted(operation_id, denied[0].reason)
        if claim is not None:
          if denied[0].reason in _INTERRUPTIONS:
            # Torn down or gone while suspended: the cancellation is the
            # outcome the key keeps.
            claim.settle(
                ('cancelled', denied[0].reason),
                credential_context=credential,
            )
          else:
            claim.abandon()  # A barrier denial is no outcome of the read.
        return response
      if not await self._audit_read(operation_id, uri, response):
        response = jsonrpc_error(
            request_id, OperationErrorReason.EVENT_PIPELINE_FAILED
        )
        retained = ('error', response['error'])
      if claim is not None:
        claim.settle(
            retained,
            ttl_seconds=ttl,
            credential_context=credential if private else None,
        )
      return response
    except asyncio.CancelledError:
      reason = live.signal.reason or OperationErrorReason.DISCONNECTED
      _interrupted(operation_id, reason)
      if claim is not None and claim.is_open:
        claim.settle(('cancelled', reason), credential_context=credential)
      raise
    except BaseException:
      if claim is not None and claim.is_open:
        claim.abandon()
      raise
    finally:
      ownership.release()


def _read_record(
    operation_id: str, uri: str, response: dict[str, Any], author: str
) -> Event:
  """The audit record of one read: what was asked and how it ended, never
  the bytes."""
  summary: dict[str, Any] = {
      'operation_id': operation_id,
      'method': 'resources/read',
      'uri': uri,
  }
  if 'result' in response:
    summary['path'] = 'result'
    summary['items'] = len(response['result'].get('contents') or ())
  else:
    summary['path'] = 'error'
    summary['error'] = response['error']
  return Event(
      invocation_id=new_invocation_context_id(),
      author=author,
      content=genai_types.Content(
          role='user', parts=[genai_types.Part(text='app operation read')]
      ),
      custom_metadata={OPERATION_METADATA_KEY: summary},
  )


def _interrupted(operation_id: str, reason: OperationErrorReason) -> None:
  # A read has no effect to reconcile: its interruption's record is this
  # line (the View got no response).
  logger.info(
      'View read %s interrupted (%s); nothing was delivered',
      operation_id,
      reason.value,
  )


def _replayed_read(
    request_id: RequestId,
    retained: Retained,
    policy: Any,
    limits: ReadLimits,
) -> dict[str, Any]:
  """A retained read as the answer of a new request, re-validated now."""
  kind, value = retained.outcome
  if kind == 'cancelled':
    return jsonrpc_error(request_id, value)
  if kind == 'error':
    return {'jsonrpc': '2.0', 'id': request_id, 'error': value}
  try:
    # The item-level matcher and the delivery limits run again on the
    # retained items: a narrowed policy or shrunk limit denies the replay.
    validate_read_response(list(value.contents), policy, limits)
  except OperationError as error:
    return jsonrpc_error(request_id, error.reason)
  return _result(
      request_id,
      _read_wire(value),
  )


def _read_wire(result: Any) -> dict[str, Any]:
  """A read result as the server sent it: fields a later protocol version
  defaults (`ttlMs`, `cacheScope`, `resultType`) only when they were sent."""
  wire: dict[str, Any] = result.model_dump(
      mode='json', by_alias=True, exclude_unset=True, exclude_none=True
  )
  return wire


async def _stopped(task: asyncio.Future[Any]) -> None:
  """Cancels `task` and waits for it to end (no late response)."""
  task.cancel()
  try:
    await task
  except BaseException:  # pylint: disable=broad-exception-caught
    pass
