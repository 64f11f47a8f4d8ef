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

"""Routing a bound toolset's UI-associated tools onto app-safe generations.

Non-UI model calls keep upstream's fully-callbacked connection. Every
UI-associated call runs on an app-safe generation: `AppSafeToolRouting`
derives the caller's generation key and builds `AppSafeMcpTool`s, which
re-list, verify and call once; `call_app_tool` runs a View's own call on
the View's generation. A model-originated UI call cannot use sampling,
elicitation or roots; on an app path such a round fails closed with
`InputRequestRefusedError`. Design: docs/design/affinity.md.

Example:

  toolset = McpToolset(connection_params=params, _apps_routing=routing)
  tools = await toolset.get_tools(readonly_context)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
import contextlib
import contextvars
import dataclasses
import logging
from typing import Any
from typing import Optional
from typing import Protocol
from typing import Sequence
from typing import TYPE_CHECKING
from typing import TypeVar

from . import security_domain as domains
from ...dependencies._mcp import types
from ...tools.mcp_tool.mcp_tool import McpTool
from ..catalog.app_catalog import admit_app_call
from ..catalog.app_catalog import AppCallPolicy
from ..catalog.app_catalog import DEFAULT_POLICY
from ..catalog.listing import DEFAULT_BOUNDS
from ..catalog.listing import ToolListingBounds
from ..contracts.principal_resolver import Principal
from ..contracts.scope import SessionKey
from ..descriptor.widget_descriptor import WidgetCorrelation
from ..errors import McpAppVisibilityError
from ..event_policy.callback_scope import refuse_reentry
from ..event_policy.callback_scope import unrestricted
from ..event_policy.provenance import admitted_operation
from ..event_policy.provenance import APP_OPERATION
from ..event_policy.tool_callbacks import guarded_tool_callbacks
from ..lifecycle.adoption import touch_record
from ..lifecycle.invocation_incarnation import pin_incarnation
from ..lifecycle.invocation_incarnation import pinned_incarnation
from ..sealing.errors import SealingError
from ..sealing.errors import SealingErrorReason
from ..sealing.result_authority import ConnectionEra as SealingEra
from ..sealing.result_authority import short_circuit_result
from ..sealing.result_sealer import PENDING_SEALS
from ..sealing.result_sealer import prepare_seal
from ..sealing.result_sealer import SealRequest
from .admitted_tool import Admission
from .admitted_tool import AdmittedMcpTool
from .errors import InputRequestRefusedError
from .errors import InvalidationReason
from .errors import StaleToolHandleError
from .generations import affinity_cause
from .generations import AppSafeConnectionPool
from .generations import ConnectionEra
from .generations import ConnectionGeneration
from .generations import GenerationHold
from .generations import GenerationKey
from .generations import GenerationPages
from .generations import HoldKind
from .generations import input_request_refusal
from .generations import input_requests_of
from .generations import ManagedConnection
from .rounds import drive_state_rounds
from .rounds import state_kwargs
from .tool_handles import BoundToolHandle
from .tool_handles import classify_two_class
from .tool_handles import ExecutionClass
from .tool_handles import TwoClassCatalog
from .tool_handles import verify_declaration

if TYPE_CHECKING:
  from ...agents.readonly_context import ReadonlyContext
  from ...auth.auth_credential import AuthCredential
  from ...tools.tool_context import ToolContext
  from ..profile.host_profile import McpAppsHostProfile

logger = logging.getLogger('google_adk.' + __name__)

_T = TypeVar('_T')

_UNATTRIBUTED = Principal('adk-mcp-apps:unattributed')


@dataclasses.dataclass(frozen=True)
class _ReservationKey:
  toolset_id: str
  session: Optional[SessionKey]
  function_call_id: str


class RenderReservations:
  """Generations reserved for the Views that accepted results will render.

  A successful UI-associated initial call reserves its generation under
  the call's function-call id; the host takes the reservation when it
  creates the widget's first View, and later Views of the widget get
  their own holds on that generation while one of its Views still holds
  it (`hold_view`).
  Bounded: past `capacity`,
  the oldest reservation is released (its View, if ever created, fails
  typed on a released hold rather than bind elsewhere).
  """

  def __init__(self, capacity: int = 1024):
    self._capacity = capacity
    self._table: dict[_ReservationKey, GenerationHold] = {}
    self._viewed: dict[_ReservationKey, list[GenerationHold]] = {}

  def put(
      self,
      toolset_id: str,
      session: Optional[SessionKey],
      function_call_id: str,
      hold: GenerationHold,
  ) -> None:
    key = _ReservationKey(toolset_id, session, function_call_id)
    previous = self._table.pop(key, None)
    if previous is not None:
      previous.release()
    self._table[key] = hold
    while len(self._table) > self._capacity:
      oldest = next(iter(self._table))
      self._table.pop(oldest).release()

  def take(
      self,
      toolset_id: str,
      session: Optional[SessionKey],
      function_call_id: str,
  ) -> Optional[GenerationHold]:
    """Transfers a reservation's hold to the caller (None if absent)."""
    return self._table.pop(
        _ReservationKey(toolset_id, session, function_call_id), None
    )

  def hold_view(
      self,
      toolset_id: str,
      session: Optional[SessionKey],
      function_call_id: str,
  ) -> Optional[GenerationHold]:
    """A hold for one new View of a widget (None if it has none to give).

    The widget's first View takes the reservation's own hold; while a View
    of the widget still holds the generation, each further View (a reload,
    a second tab) gets a new View hold on it, so every View ends on its own
    (P5-VIEW-01). Once the widget's last View let go, or its generation is
    gone, the widget is cold: a View is never resurrected.

    Raises:
      GenerationInvalidatedError: The reserved generation is gone.
    """
    key = _ReservationKey(toolset_id, session, function_call_id)
    if key in self._table:
      hold = self.take(toolset_id, session, function_call_id)
      if hold is not None:
        self._viewed[key] = [hold]
        while len(self._viewed) > self._capacity:
          self._viewed.pop(next(iter(self._viewed)))
      return hold
    holds = [h for h in self._viewed.get(key, ()) if not h.released]
    if not holds:
      self._viewed.pop(key, None)
      return None
    try:
      hold = holds[0].generation.hold(HoldKind.VIEW)
    except BaseException:
      self._viewed.pop(key, None)
      raise
    self._viewed[key] = [*holds, hold]
    return hold

  def generation_of(
      self,
      toolset_id: str,
      session: Optional[SessionKey],
      function_call_id: str,
  ) -> Optional[ConnectionGeneration]:
    """The generation a widget's Views would hold, or None."""
    key = _ReservationKey(toolset_id, session, function_call_id)
    reserved = self._table.get(key)
    if reserved is not None:
      return reserved.generation
    for hold in self._viewed.get(key, ()):
      if not hold.released:
        return hold.generation
    return None

  def discard(
      self,
      toolset_id: str,
      session: Optional[SessionKey],
      function_call_id: str,
  ) -> None:
    """Removes and releases a reservation; its widget opens no more Views."""
    key = _ReservationKey(toolset_id, session, function_call_id)
    self._viewed.pop(key, None)
    hold = self._table.pop(key, None)
    if hold is not None:
      hold.release()

  def peek(
      self,
      toolset_id: str,
      session: Optional[SessionKey],
      function_call_id: str,
  ) -> Optional[GenerationHold]:
    """The reservation's hold, left in place."""
    return self._table.get(
        _ReservationKey(toolset_id, session, function_call_id)
    )

  def release_all(self) -> None:
    """Releases every reservation (registry shutdown)."""
    for hold in self._table.values():
      hold.release()
    self._table.clear()
    self._viewed.clear()


def session_key_of(context: Any) -> Optional[SessionKey]:
  """The Session key of an ADK context (`ReadonlyContext`, `ToolContext`)."""
  session = invocation_session_of(context)
  if session is None:
    return None
  return SessionKey(session.app_name, session.user_id, session.id)


def invocation_session_of(context: Any) -> Optional[Any]:
  """The Session object of an ADK context's invocation, or None."""
  return getattr(context, 'session', None)


def session_service_of(context: Any) -> Optional[Any]:
  """The Session service of an ADK context, or None outside an invocation."""
  return getattr(context, 'session_service', None)


class AppSafeToolRouting:
  """The app-safe class of one profile-bound runtime toolset."""

  def __init__(
      self,
      *,
      pool: AppSafeConnectionPool,
      reservations: RenderReservations,
      toolset_id: str,
      binding_generation: int,
      server_id: str,
      binding_scope: str,
      connect: Callable[[Optional[dict[str, str]]], ManagedConnection],
      profile: McpAppsHostProfile,
      admission_check: Callable[[], None],
      bounds: ToolListingBounds = DEFAULT_BOUNDS,
  ):
    """Creates the routing; nothing connects until a call needs it.

    Args:
      pool: The registry's generation pool.
      reservations: The registry's render reservations.
      toolset_id: The configured toolset id.
      binding_generation: The registry's binding generation of the proxy.
      server_id: The stable configured server id.
      binding_scope: The fingerprint of the registry's app-safe client
        binding; part of every generation key.
      connect: Builds a generation's connection for a header set (an
        app-safe, registry-loop-routed `MCPSessionManager`); nothing is
        opened until the pool opens the connection.
      profile: The bound host profile (keys, lifecycle store, policy).
      admission_check: Raises when the proxy's binding generation is no
        longer serving (a revoked generation opens nothing).
      bounds: Listing bounds for discovery and pre-call re-listing.
    """
    self.pool = pool
    self.reservations = reservations
    self.toolset_id = toolset_id
    self.binding_generation = binding_generation
    self.server_id = server_id
    self._binding_scope = binding_scope
    self._connect = connect
    self._profile = profile
    self._admission_check = admission_check
    self.bounds = bounds

  @property
  def profile(self) -> McpAppsHostProfile:
    """The bound host profile."""
    return self._profile

  def check_admission(self) -> None:
    """Raises unless the proxy's binding generation is still serving."""
    self._admission_check()

  async def generation_key(
      self,
      session: Optional[SessionKey],
      headers: Optional[dict[str, str]],
      session_service: Optional[Any] = None,
      invocation_session: Optional[Any] = None,
  ) -> GenerationKey:
    """The generation key of a caller's context.

    Args:
      session: The caller's Session, or None outside one.
      headers: The call's merged auth and provider headers.
      session_service: The Session's service, for the lazy adoption of a
        Session without a lifecycle record (its first app-enabled touch).
      invocation_session: The caller's invocation's Session object; its
        first touch pins the incarnation the invocation works in
        (`lifecycle.invocation_incarnation`).

    Returns:
      The key: configured ids and opaque digests only.
    """
    provider = self._profile.key_provider
    assert provider is not None  # A bound profile has one (readiness).
    key = provider.active_key()
    principal = (
        _UNATTRIBUTED
        if session is None
        else domains.principal_for_turn(session)
    )
    domain = domains.security_domain(key, principal).digest
    if session is None:
      scope: Optional[str] = domains.unattributed_scope(key)
    elif self._profile.connection_affinity.session_incarnation_keying:
      incarnation = await self._touch(
          session, session_service, invocation_session
      )
      scope = domains.session_scope(key, session, incarnation).digest
    else:
      if invocation_session is not None and (
          pinned_incarnation(invocation_session) is None
      ):
        await self._touch(session, session_service, invocation_session)
      scope = None
    return GenerationKey(
        toolset_id=self.toolset_id,
        binding_generation=self.binding_generation,
        binding_scope=self._binding_scope,
        security_domain=domain,
        session_scope=scope,
        credential_context=domains.credential_context(key, headers),
    )

  async def _touch(
      self,
      session: SessionKey,
      session_service: Optional[Any],
      invocation_session: Optional[Any],
  ) -> int:
    """Adopts on first touch, pins the invocation; the incarnation."""
    store = self._profile.session_lifecycle_store
    assert store is not None  # A bound profile has one (readiness).
    record = await touch_record(store, session, session_service)
    if invocation_session is not None:
      pin_incarnation(invocation_session, record, store)
    return record.incarnation

  def _connection(
      self, headers: Optional[dict[str, str]]
  ) -> Callable[[], ManagedConnection]:
    def build() -> ManagedConnection:
      return self._connect(headers)

    return build

  async def acquire(
      self,
      session: Optional[SessionKey],
      headers: Optional[dict[str, str]],
      kind: HoldKind = HoldKind.OPERATION,
      session_service: Optional[Any] = None,
      invocation_session: Optional[Any] = None,
  ) -> tuple[GenerationKey, GenerationHold]:
    """Holds the caller's app-safe generation, opening it if needed.

    Raises:
      EventPolicyError: `SAME_SESSION_REENTRY`, a restricted callback for
        this Session asked (before anything opens or waits).
    """
    if session is not None:
      refuse_reentry(
          session.app_name,
          session.user_id,
          session.session_id,
          'app-safe hold acquisition',
      )
    self._admission_check()
    key = await self.generation_key(
        session, headers, session_service, invocation_session
    )
    hold = await self.pool.acquire(key, self._connection(headers), kind)
    return key, hold

  async def discover(
      self,
      readonly_context: Optional[ReadonlyContext],
      headers: Optional[dict[str, str]],
      list_callbacked: Callable[[], Awaitable[list[types.Tool]]],
  ) -> TwoClassCatalog:
    """Two-class discovery: the app-safe listing first, then the rest.

    The same algorithm builds the model's catalog and admits a batch: the
    app-safe class is listed first (it decides which names are
    UI-associated), then the callbacked class; both must come from one
    live generation, or the catalog is refused.

    Args:
      readonly_context: The caller's context (its Session selects the
        generation the app-safe listing runs on).
      headers: The merged headers both listings use.
      list_callbacked: Lists the callbacked class (awaited once, after the
        app-safe listing).

    Returns:
      The classified catalog, pinned to the listing generation.

    Raises:
      GenerationInvalidatedError: The app-safe generation ended between
        the two listings.
    """
    key, hold = await self.acquire(
        session_key_of(readonly_context),
        headers,
        session_service=session_service_of(readonly_context),
        invocation_session=invocation_session_of(readonly_context),
    )
    try:
      app_safe_tools = await hold.list_tools(self.bounds)
      callbacked_tools = await list_callbacked()
      # A catalog mixing two generations' listings would pin handles to a
      # generation that no longer lists them.
      hold.generation.check_live()
    finally:
      hold.release()
    return classify_two_class(
        app_safe_tools,
        callbacked_tools,
        catalog_generation=hold.generation_id,
        credential_context=key.credential_context,
    )

  async def execute(
      self,
      readonly_context: Optional[ReadonlyContext],
      headers: Optional[dict[str, str]],
      operation: Callable[[Any], Awaitable[_T]],
      what: str,
  ) -> _T:
    """Runs a host-internal operation on the caller's app-safe generation.

    The generation is selected exactly as a model call's would be: the
    context's Session and principal, and the headers its header provider
    and credentials produce (never a privileged shared client).

    Raises:
      InputRequestRefusedError: The server needed a sampling, elicitation
        or roots round (app paths fail it closed), refused on the wire or
        asked in a 2026-07-28 `InputRequiredResult` (an operation that
        allows one).
    """
    _, hold = await self.acquire(
        session_key_of(readonly_context),
        headers,
        session_service=session_service_of(readonly_context),
        invocation_session=invocation_session_of(readonly_context),
    )
    try:
      result = await hold.execute(operation, what)
    except Exception as error:
      # A host call or read is an app path: its input rounds fail closed.
      refusal = input_request_refusal(error, hold.generation_id, what)
      if refusal is not None:
        raise refusal from error
      raise
    finally:
      hold.release()
    kinds = input_requests_of(result)
    if kinds is not None:
      raise InputRequestRefusedError(hold.generation_id, kinds, what)
    return result

  def create_tool(
      self,
      catalog: TwoClassCatalog,
      *,
      admission: Optional[Admission] = None,
      **kwargs: Any,
  ) -> McpTool:
    """Builds a listed tool; UI-associated ones run on app-safe generations.

    `McpToolset._create_tool` calls it for a toolset built with this
    routing.

    Args:
      catalog: The listing's two-class catalog.
      admission: The binding generation's admission gate, if any.
      **kwargs: `McpTool`'s constructor arguments.

    Returns:
      An `AppSafeMcpTool` for an app-safe catalog entry, else an
      `AdmittedMcpTool`.
    """
    handle = catalog.handle(kwargs['mcp_tool'].name)
    if handle is None or handle.execution_class is not ExecutionClass.APP_SAFE:
      return AdmittedMcpTool(admission=admission, **kwargs)
    return AppSafeMcpTool(
        handle=handle, routing=self, admission=admission, **kwargs
    )


_current_call: contextvars.ContextVar[Optional[_InitialCall]] = (
    contextvars.ContextVar('adk_mcp_apps_initial_call', default=None)
)

_batch_admitted: contextvars.ContextVar[frozenset[tuple[str, str]]] = (
    contextvars.ContextVar('adk_mcp_apps_batch_admitted', default=frozenset())
)
"""`(generation id, native name)` of the handles the current call's batch
admission verified on that generation."""


def admit_for_fan_out(
    context: contextvars.Context, handles: Sequence[BoundToolHandle]
) -> None:
  """Records, in a prepared call's context, what its batch admission checked.

  A batch admission has just listed the app-safe generation and found each
  handle's declaration unchanged on it, so a call of that handle running on
  that same generation skips its own pre-call re-list; on any other
  generation it re-lists (and fails closed) as usual.

  Args:
    context: The context the call's task will run in (a copy of it).
    handles: The app-safe handles the admission verified.
  """
  admitted = frozenset(
      (handle.catalog_generation, handle.name)
      for handle in handles
      if handle.catalog_generation is not None
  )
  context.run(_batch_admitted.set, admitted)


class _InitialCall:
  """One UI-associated initial call: its generation hold and outcome."""

  def __init__(self, tool: AppSafeMcpTool, tool_context: ToolContext):
    self.tool = tool
    self.tool_context = tool_context
    self.session = session_key_of(tool_context)
    self.hold: Optional[GenerationHold] = None

  async def prepare(self, headers: Optional[dict[str, str]]) -> Any:
    """Selects the target generation and checks the declaration on it."""
    tool = self.tool
    routing = tool.routing
    handle = tool.bound_tool_handle
    key, hold = await routing.acquire(
        self.session,
        headers,
        session_service=session_service_of(self.tool_context),
        invocation_session=invocation_session_of(self.tool_context),
    )
    self.hold = hold
    if handle.credential_context != key.credential_context:
      raise StaleToolHandleError(
          handle.name, 'the credentials changed since the tools were listed'
      )
    if handle.catalog_generation != hold.generation_id:
      raise StaleToolHandleError(
          handle.name,
          'it was listed on another connection generation than the one the'
          ' call would run on',
      )
    # The declaration the model was shown must still be the one this
    # generation executes: re-list here (unless this call's batch admission
    # just did, on this generation), never dispatch by name alone.
    if (hold.generation_id, handle.name) not in _batch_admitted.get():
      verify_declaration(handle, await hold.list_tools(routing.bounds))
    return _InitialCallSession(self, hold)

  def accept(self, hold: GenerationHold) -> None:
    """Reserves the generation that returned the accepted result."""
    routing = self.tool.routing
    function_call_id = getattr(self.tool_context, 'function_call_id', None)
    if not function_call_id:
      return
    reservation = hold.generation.hold(HoldKind.RESERVATION)
    routing.reservations.put(
        routing.toolset_id, self.session, function_call_id, reservation
    )

  def finish(self) -> None:
    if self.hold is not None:
      self.hold.release()


class _InitialCallSession:
  """What `McpTool._run_async_impl` calls: the target generation, once."""

  def __init__(self, call: _InitialCall, hold: GenerationHold):
    self._call = call
    self._hold = hold

  async def call_tool(
      self, name: str, arguments: Optional[dict[str, Any]] = None, **kwargs: Any
  ) -> types.CallToolResult:
    result = await self._hold.call_tool(name, arguments, **kwargs)
    self._call.accept(self._hold)
    return result


def _era_of_call() -> SealingEra:
  """The era of the generation that answered the current initial call."""
  call = _current_call.get()
  hold = call.hold if call is not None else None
  if hold is not None and hold.generation.era is ConnectionEra.MODERN:
    return SealingEra.MODERN
  return SealingEra.LEGACY


class _GenerationUse:
  """The session manager an `AppSafeMcpTool` is constructed with.

  `McpTool` brackets each call with its session manager's use tracking. The
  generation hold already pins the connection for the call, and the routed
  session races its own transport task, so the bracketing is empty. A
  session the server forgot ends the generation for every holder.
  """

  def _begin_session_use(self, headers: Any = None) -> None:
    del headers

  def _end_session_use(self, headers: Any = None) -> None:
    del headers

  def _get_session_context(self, headers: Any = None) -> None:
    del headers
    return None

  def _discard_session(
      self, headers: Any = None, *, session: Any = None
  ) -> None:
    del headers
    if isinstance(session, _InitialCallSession):
      hold = session._hold  # pylint: disable=protected-access
      pool = hold.generation._pool  # pylint: disable=protected-access
      task = asyncio.get_running_loop().create_task(
          pool.invalidate(
              hold.generation_id, InvalidationReason.SESSION_TERMINATED
          )
      )
      _background.add(task)
      task.add_done_callback(_background.discard)


_background: set[asyncio.Task[bool]] = set()


class AppSafeMcpTool(AdmittedMcpTool):
  """A UI-associated MCP tool, executed on an app-safe generation.

  Built by `AppSafeToolRouting.create_tool` with everything the toolset
  configures (auth, header provider, progress callback, confirmation); it
  changes only where and how often it calls.
  """

  def __init__(
      self,
      *,
      handle: BoundToolHandle,
      routing: AppSafeToolRouting,
      **kwargs: Any,
  ):
    """Builds the tool.

    Args:
      handle: The catalog entry the model is shown.
      routing: The toolset's app-safe routing.
      **kwargs: `AdmittedMcpTool`'s constructor arguments; the session
        manager is replaced: the generation hold owns the connection.
    """
    kwargs['mcp_session_manager'] = _GenerationUse()
    super().__init__(**kwargs)
    self._adk_apps_handle = handle
    self._adk_apps_routing = routing
    # The tool caller gives the after-tool callbacks a deep copy of the
    # result: only a returned value is approved (RFC §5 step 1).
    self._adk_isolates_callback_results = True

  @property
  def bound_tool_handle(self) -> BoundToolHandle:
    """The catalog entry the model was shown."""
    return self._adk_apps_handle

  @property
  def routing(self) -> AppSafeToolRouting:
    """The app-safe routing of the toolset that listed it."""
    return self._adk_apps_routing

  async def _run_async_impl(
      self,
      *,
      args: Any,
      tool_context: ToolContext,
      credential: AuthCredential,
  ) -> dict[str, Any]:
    call = _InitialCall(self, tool_context)
    token = _current_call.set(call)
    try:
      # Host code: the call's generation hold is no reentry of its callbacks.
      with unrestricted():
        result: dict[str, Any] = await super()._run_async_impl(
            args=args, tool_context=tool_context, credential=credential
        )
      return result
    finally:
      _current_call.reset(token)
      call.finish()

  def _adk_guard_callbacks(
      self, tool_context: ToolContext
  ) -> contextlib.AbstractContextManager[None]:
    """What the tool caller runs this call in: its callbacks restricted,
    a direct Session state write failing the call (RFC §4)."""
    return guarded_tool_callbacks(
        tool_context,
        on_failure=lambda: self._adk_discard_result(tool_context),
    )

  def _adk_short_circuit(
      self, value: Any, tool_context: ToolContext
  ) -> dict[str, Any]:
    """A `before_tool_callback` short-circuit of this call, converted.

    RFC §5 step 1: a complete `CallToolResult` is validated; an ordinary
    value becomes a JSON text block (plus validated `structuredContent`
    under an `outputSchema`). Nothing ran on the server, so no View is
    offered and nothing is sealed; the model gets the projection.

    Raises:
      SealingError: (`RESULT_INVALID`) The short-circuit does not validate.
    """
    schema = getattr(self._mcp_tool, 'outputSchema', None) or getattr(
        self._mcp_tool, 'output_schema', None
    )
    result = short_circuit_result(
        value,
        function_call_id=tool_context.function_call_id or '',
        output_schema=schema if isinstance(schema, dict) else None,
    )
    return {
        key: result[key]
        for key in ('content', 'isError', 'resultType')
        if key in result
    }

  def _adk_discard_result(self, tool_context: ToolContext) -> None:
    """Forgets this call's pending candidate and render reservation (the
    call failed after its result arrived)."""
    call_id = tool_context.function_call_id or ''
    PENDING_SEALS.discard(tool_context.invocation_id, [call_id])
    routing = self._adk_apps_routing
    session = session_key_of(tool_context)
    if session is None:
      return
    hold = routing.reservations.take(routing.toolset_id, session, call_id)
    if hold is not None:
      hold.release()

  def _render_ui_widget(
      self,
      *,
      args: dict[str, Any],
      response: Any,
      tool_context: ToolContext,
  ) -> None:
    # Under the bound profile the widget is a descriptor whose reference the
    # append stage fills in. The full result stays a private candidate keyed
    # by the call's correlation: the append stage seals the public fields as
    # callbacks and on_event approved them in the Event's FunctionResponse,
    # merged with this call's hidden fields (`sealing.result_authority`), in
    # their MCP wire form (`_meta`, `structuredContent`): what the View gets.
    routing = self._adk_apps_routing
    handle = self._adk_apps_handle
    session = session_key_of(tool_context)
    call_id = tool_context.function_call_id or ''
    try:
      if session is None or not call_id:
        raise SealingError(
            SealingErrorReason.UNAVAILABLE,
            'A profile-bound UI call needs a Session and a function-call id',
        )
      descriptor = prepare_seal(
          SealRequest(
              profile=routing.profile,
              server_id=routing.server_id,
              toolset_id=routing.toolset_id,
              tool_name=handle.name,
              resource_uri=str(self.mcp_app_resource_uri),
              declaration_fingerprint=handle.fingerprint,
              catalog_generation=handle.catalog_generation,
              session=session,
              correlation=WidgetCorrelation(
                  invocation_id=tool_context.invocation_id,
                  function_call_id=call_id,
                  agent_path=tool_context.agent_name,
                  branch=tool_context.branch,
              ),
              arguments=dict(args),
              admission_check=routing.check_admission,
              full_result=response.model_dump(
                  mode='json', by_alias=True, exclude_none=True
              ),
              immediate_caller=tool_context.immediate_caller,
              function_name=self.name,
              era=_era_of_call(),
          )
      )
    except BaseException:
      # No View will render a result that was not sealed.
      hold = routing.reservations.take(routing.toolset_id, session, call_id)
      if hold is not None:
        hold.release()
      raise
    assert descriptor is not None
    tool_context.render_ui_widget(descriptor.to_widget())

  async def _create_session(self, *, headers: dict[str, str] | None) -> Any:
    # Not `retry_on_errors`: one attempt, on one generation.
    call = _current_call.get()
    if call is None:
      raise RuntimeError('AppSafeMcpTool sessions exist only inside a call')
    return await call.prepare(headers)


class AppCallGovernor(Protocol):
  """What `call_app_tool(confirmation=...)` takes: decides what is sent.

  `facades.confirmation.AppCallConfirmation` is the implementation (the
  facades layer sits above this one, so it is named here structurally).
  """

  async def arguments_to_send(
      self,
      *,
      tool_name: str,
      server_id: str,
      arguments: Optional[dict[str, Any]],
  ) -> dict[str, Any]:
    """The arguments to send, or raises to deny the call (nothing sent)."""
    ...


class AppCallCallbacks(Protocol):
  """What `call_app_tool(callbacks=...)` takes: the governed MCP callbacks.

  `facades.mcp_callbacks.AppPathCallbacks` is the implementation (named
  here structurally, as `AppCallGovernor`).
  """

  async def admit_tool(self, declaration: types.Tool) -> None:
    """Applies the toolset's `tool_filter`; raises to admit nothing."""
    ...

  async def progress_for(self, tool_name: str) -> Optional[Callable[..., Any]]:
    """The call's notification-only progress handler, or None."""
    ...


@admitted_operation(APP_OPERATION)
async def call_app_tool(
    hold: GenerationHold,
    tool_name: str,
    arguments: Optional[dict[str, Any]] = None,
    *,
    view_server_id: str,
    target_server_id: str,
    policy: AppCallPolicy = DEFAULT_POLICY,
    bounds: ToolListingBounds = DEFAULT_BOUNDS,
    confirmation: Optional[AppCallGovernor] = None,
    callbacks: Optional[AppCallCallbacks] = None,
    max_rounds: int = 8,
    max_seconds: float = 120.0,
    between_legs: Optional[Callable[[], Awaitable[None]]] = None,
) -> types.CallToolResult:
  """A View's app `tools/call`, admitted and run on the View's generation.

  The admission listing and the call both run on the held generation; an
  invalidated generation fails typed before anything is sent. The call is
  the View's own operation: an Event appended while it runs is stamped
  `mcp_app`, emitted by the app, for the app_audit audience.

  With `confirmation`, after admission the toolset's `require_confirmation`
  is decided once on a read-only context, a required confirmation seals a
  one-shot permit the deployment approves, and the sealed arguments are
  sent (`facades.confirmation.AppCallConfirmation`); a denial sends nothing.

  With `callbacks`, the toolset's `tool_filter` is part of the catalog
  this call composes (after the admission listing, before confirmation; a
  filter that does not select the tool, or fails closed, admits nothing),
  and its progress callback or factory is notification-only on this call
  (`facades.mcp_callbacks.AppPathCallbacks`).

  A 2026-07-28 server may answer in state-only rounds: each is re-sent on
  the held generation as a fresh request echoing its `requestState`, within
  the round and time caps, and only the terminal result is returned
  (`affinity.rounds.drive_state_rounds`).

  Args:
    hold: The View's hold on its bound generation.
    tool_name: The native tool name the View asked for.
    arguments: The call's arguments.
    view_server_id: The server the View was rendered from.
    target_server_id: The server the call would go to.
    policy: The host's app-call policy.
    bounds: Admission listing bounds.
    confirmation: The governed confirmation (an `AppCallConfirmation`);
      None applies none, as before.
    callbacks: The toolset's governed filter and progress (an
      `AppPathCallbacks`); None applies neither, as before.
    max_rounds: Most legs of one multi-round call (the first included).
    max_seconds: Longest all its legs together may take.
    between_legs: Awaited before each further leg (the caller's admission
      re-check); what it raises ends the call.

  Returns:
    The server's terminal result.

  Raises:
    GenerationInvalidatedError: The View's generation is gone.
    HoldReleasedError: The hold was released.
    McpAppVisibilityError: Admission denied the call.
    FacadeError: The confirmation denied the call, or the filter failed
      closed (nothing was sent).
    InputRequestRefusedError: The tool needed a sampling, elicitation or
      roots round; app paths fail it closed (RFC §4 item 4).
    MultiRoundError: Over the round or time cap, an intermediate result
      on a legacy-era generation, or a malformed one.
  """
  hold.check()
  try:
    declaration = await admit_app_call(
        GenerationPages(hold.generation),
        tool_name,
        view_server_id=view_server_id,
        target_server_id=target_server_id,
        policy=policy,
        bounds=bounds,
    )
  except McpAppVisibilityError as denial:
    # A listing lost with the generation is the generation's failure.
    lost = affinity_cause(denial)
    if lost is not None:
      raise lost from denial
    raise
  if callbacks is not None:
    await callbacks.admit_tool(declaration)
  if confirmation is not None:
    arguments = await confirmation.arguments_to_send(
        tool_name=tool_name,
        server_id=target_server_id,
        arguments=arguments,
    )
    hold.check()  # The approval may have outlived the View's generation.
  kwargs: dict[str, Any] = {}
  if callbacks is not None:
    progress = await callbacks.progress_for(tool_name)
    if progress is not None:
      hold.check()
      kwargs['progress_callback'] = progress
  try:
    # A 2026-07-28 round is received, never answered: an input round is
    # refused typed, a state-only one is driven on this generation.
    result: Any = await drive_state_rounds(
        lambda state: hold.call_tool(
            tool_name, arguments, **state_kwargs(state), **kwargs
        ),
        era=hold.generation.era,
        generation_id=hold.generation_id,
        method='tools/call',
        max_rounds=max_rounds,
        max_seconds=max_seconds,
        between_legs=between_legs,
    )
  except Exception as error:
    refusal = input_request_refusal(error, hold.generation_id, 'tools/call')
    if refusal is not None:
      raise refusal from error
    raise
  if not isinstance(result, types.CallToolResult):
    raise RuntimeError(
        f'The app call of {tool_name} returned no CallToolResult'
    )
  return result
