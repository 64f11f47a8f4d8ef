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

"""One app-originated `tools/call`, end to end, as an internal operation.

`run_app_call` runs a View's call through the host pipeline, owning the
View's Session (`session_coordinator()`) for its whole run: governed
preflight (originating agent, admission, confirmation) -> a one-call
`EventBatchEffects` -> the plugins' tool phases and the originating
agent's tool-callback chains on the restricted `AppCallToolContext` over
the call's child ledger -> `call_app_tool` (state-only rounds within the
profile's MRTR caps) -> the audit Event (or a reconciliation record) through
`append_audit_event` -> a typed `OperationOutcome` holding the wire
response, the durable record and the cached outcome. With a bound
profile the result is a private candidate sealed from the approved audit
Event (Event-level reference) and the View gets that merge. Design and the
terminal-outcome matrix: docs/decisions/issue21-terminal.md; results:
docs/decisions/issue21-app-results.md; ownership and callbacks:
docs/decisions/issue22-exec.md; rounds: docs/decisions/issue23-mrtr.md.

Example:

  cache = OperationOutcomeCache()
  outcome = await run_app_call(
      AppCallRequest(operation_id='op-1', hold=hold, tool_name='buy',
                     arguments={'sku': 'A1'}, view_server_id=sid,
                     target_server_id=sid),
      environment=OperationEnvironment(session_service=service,
                                       session=session, agent=agent,
                                       plugin_manager=runner.plugin_manager),
      cache=cache)
  outcome.wire  # a CallToolResult, an ErrorData, or None
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
import dataclasses
import enum
import json
import logging
import threading
from typing import Any
from typing import cast
from typing import Final
from typing import Optional
from typing import Protocol
from typing import Union

from google.genai import types as genai_types

from ...agents.invocation_context import InvocationContext
from ...agents.invocation_context import new_invocation_context_id
from ...dependencies._mcp import McpError
from ...dependencies._mcp import types as mcp_types
from ...events.event import Event
from ...events.event_actions import EventActions
from ...events.ui_widget import UiWidget
from ...flows.llm_flows.tools._error_handler import notify_tool_cancelled
from ...sessions.base_session_service import GetSessionConfig
from ...tools.base_tool import BaseTool
from ...tools.tool_context import ToolContext
from ...utils._callback_pipeline import _run_callbacks
from ...utils._callback_pipeline import _stop_on_non_none
from ..affinity.errors import GenerationInvalidatedError
from ..affinity.errors import HoldReleasedError
from ..affinity.errors import InputRequestRefusedError
from ..affinity.generations import ConnectionEra
from ..affinity.generations import GenerationHold
from ..affinity.generations import GenerationPages
from ..affinity.rounds import MultiRoundError
from ..affinity.rounds import MultiRoundFailure
from ..affinity.routing import AppCallCallbacks
from ..affinity.routing import AppCallGovernor
from ..affinity.routing import call_app_tool
from ..affinity.tool_handles import ui_resource_uri
from ..audit.pipeline import append_audit_event
from ..audit.pipeline import AuditAppendOutcome
from ..audit.pipeline import AuditKind
from ..audit.pipeline import AuditPath
from ..batch.ledger import EventBatchEffects
from ..catalog.app_catalog import admit_app_call
from ..catalog.app_catalog import AppCallPolicy
from ..catalog.app_catalog import DEFAULT_POLICY
from ..catalog.listing import DEFAULT_BOUNDS
from ..catalog.listing import ToolListingBounds
from ..contracts.scope import SessionKey
from ..coordination.coordinator import refuse_reentry as refuse_owned_reentry
from ..coordination.coordinator import session_coordinator
from ..descriptor.widget_descriptor import WidgetCorrelation
from ..errors import McpAppsError
from ..errors import McpAppVisibilityError
from ..event_policy.audit_actions import NEGOTIATED_NESTED_WIDGETS
from ..event_policy.callback_scope import unrestricted
from ..event_policy.errors import EventPolicyError
from ..event_policy.provenance import Provenance
from ..event_policy.tool_callbacks import guarded_tool_callbacks
from ..facades.app_call_context import AppCallToolContext
from ..facades.app_call_context import ArtifactSaver
from ..facades.errors import FacadeError
from ..facades.errors import FacadeErrorReason
from ..profile.host_profile import McpAppsHostProfile
from ..sealing.result_authority import candidate_of
from ..sealing.result_authority import ConnectionEra as SealingEra
from ..sealing.result_authority import released_result
from ..sealing.result_authority import ResultCandidate
from ..sealing.result_sealer import PENDING_SEALS
from ..sealing.result_sealer import prepare_seal
from ..sealing.result_sealer import SealPlacement
from ..sealing.result_sealer import SealRequest
from .errors import OperationError
from .errors import OperationErrorReason
from .nested_views import declaration_fingerprint
from .nested_views import negotiate_nested_view
from .nested_views import NestedViewDecision
from .nested_views import NestedViewOffer
from .nested_views import RenderReservationTable
from .nested_views import reserve_nested_view

__all__ = [
    'APP_CALL_OPERATION',
    'OPERATION_ERROR_CODE',
    'OPERATION_METADATA_KEY',
    'AppCallRequest',
    'OperationEnvironment',
    'OperationOutcome',
    'OperationOutcomeCache',
    'OperationOutcomeKind',
    'OperationSignal',
    'run_app_call',
]

logger = logging.getLogger('google_adk.' + __name__)

OPERATION_ERROR_CODE: Final = -32000
"""The JSON-RPC error code of a host-side operation failure (its `data`
carries `{'reason': OperationErrorReason value}`); a server's own JSON-RPC
error is passed through unchanged."""

APP_CALL_OPERATION: Final = 'app.tools_call'
"""The operation name an app call owns its Session under."""

OPERATION_METADATA_KEY: Final = 'mcp_app_operation'
"""The `custom_metadata` key of an operation's record: the operation id,
tool, call id and terminal path."""

RECONCILIATION: Final = Provenance(
    'mcp_app', immediate_caller='app', emitter='system', audience='app_audit'
)
"""A reconciliation record: the interrupted operation's ingress origin,
written by the core itself."""

_INTERRUPTIONS: Final = frozenset({
    OperationErrorReason.CANCELLED,
    OperationErrorReason.DISCONNECTED,
    OperationErrorReason.TEARDOWN,
})


class OperationOutcomeKind(enum.Enum):
  """The cached outcome's kind (the matrix's "Cached outcome" column)."""

  RESULT = 'result'
  """A terminal `CallToolResult` (including an `isError` one)."""

  ERROR = 'error'
  """An error; the wire got a JSON-RPC error."""

  CANCELLED = 'cancelled'
  """A cancellation; the wire got no late response."""


@dataclasses.dataclass(frozen=True)
class OperationOutcome:
  """The three surfaces of one operation's terminal outcome.

  Attributes:
    operation_id: The operation.
    kind: The cached outcome's kind.
    result: The wire's `CallToolResult` (kind `RESULT`).
    error: The wire's JSON-RPC error object (kind `ERROR`).
    tool_cancelled: Whether `ui/notifications/tool-cancelled` is owed to
      the View (a cancellation whose channel survives).
    record_id: The id of the stored Event (audit or reconciliation
      record), or None when nothing durable exists.
    record_kind: Audit or reconciliation record, when one was stored.
    record_path: Whether the pipeline's Event or the core-only fallback
      was stored (or nothing).
    cause: Why the outcome is not a result (None for a result).
    audit: The audit pipeline's own outcome, when it ran.
  """

  operation_id: str
  kind: OperationOutcomeKind
  result: Optional[mcp_types.CallToolResult] = None
  error: Optional[mcp_types.ErrorData] = None
  tool_cancelled: bool = False
  record_id: Optional[str] = None
  record_kind: Optional[AuditKind] = None
  record_path: Optional[AuditPath] = None
  cause: Optional[OperationError] = None
  audit: Optional[AuditAppendOutcome] = None

  @property
  def wire(
      self,
  ) -> Union[mcp_types.CallToolResult, mcp_types.ErrorData, None]:
    """What the View receives: a result, a JSON-RPC error, or nothing."""
    return self.result if self.result is not None else self.error


class OperationOutcomeCache:
  """The in-process outcome cache, keyed by operation id.

  The first terminal outcome of an id is kept; a later lookup returns the
  very same object. Thread-safe; unbounded beyond `capacity` only in that
  the oldest entries are dropped first.
  """

  def __init__(self, capacity: int = 4096) -> None:
    self._capacity = capacity
    self._lock = threading.Lock()
    self._outcomes: dict[str, OperationOutcome] = {}
    self._running: set[str] = set()

  def get(self, operation_id: str) -> Optional[OperationOutcome]:
    """The cached outcome of `operation_id`, or None."""
    with self._lock:
      return self._outcomes.get(operation_id)

  def _claim(self, operation_id: str) -> Optional[OperationOutcome]:
    with self._lock:
      cached = self._outcomes.get(operation_id)
      if cached is not None:
        return cached
      if operation_id in self._running:
        raise OperationError(
            OperationErrorReason.DUPLICATE_OPERATION,
            f'operation {operation_id!r} is already running',
        )
      self._running.add(operation_id)
      return None

  def _settle(self, outcome: OperationOutcome) -> OperationOutcome:
    with self._lock:
      self._running.discard(outcome.operation_id)
      held = self._outcomes.setdefault(outcome.operation_id, outcome)
      while len(self._outcomes) > self._capacity:
        self._outcomes.pop(next(iter(self._outcomes)))
      return held


class OperationSignal:
  """How the View's channel interrupts a running operation.

  `cancel()` is the View's `notifications/cancelled` (its channel
  survives), `disconnect()` the channel going away, `teardown()` the View
  being torn down. The first interruption wins; later ones are ignored.
  """

  def __init__(self) -> None:
    self._reason: Optional[OperationErrorReason] = None
    self._waiters: list[asyncio.Future[OperationErrorReason]] = []

  @property
  def reason(self) -> Optional[OperationErrorReason]:
    """The interruption, once signalled."""
    return self._reason

  def cancel(self) -> None:
    """The View cancelled the call."""
    self._fire(OperationErrorReason.CANCELLED)

  def disconnect(self) -> None:
    """The View's channel went away."""
    self._fire(OperationErrorReason.DISCONNECTED)

  def teardown(self) -> None:
    """The View was torn down (its hold released or invalidated)."""
    self._fire(OperationErrorReason.TEARDOWN)

  def _fire(self, reason: OperationErrorReason) -> None:
    if self._reason is not None:
      return
    self._reason = reason
    for waiter in self._waiters:
      loop = waiter.get_loop()
      loop.call_soon_threadsafe(_resolve, waiter, reason)

  def _wait(self) -> asyncio.Future[OperationErrorReason]:
    waiter: asyncio.Future[OperationErrorReason] = (
        asyncio.get_running_loop().create_future()
    )
    if self._reason is not None:
      waiter.set_result(self._reason)
    else:
      self._waiters.append(waiter)
    return waiter


def _resolve(
    waiter: asyncio.Future[OperationErrorReason], reason: OperationErrorReason
) -> None:
  if not waiter.done():
    waiter.set_result(reason)


class PluginChain(Protocol):
  """The Runner's plugin chain (`plugins.plugin_manager.PluginManager`)."""

  async def run_before_tool_callback(
      self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: Any
  ) -> Optional[dict[str, Any]]:
    """`before_tool_callback` of every plugin."""
    ...

  async def run_after_tool_callback(
      self,
      *,
      tool: BaseTool,
      tool_args: dict[str, Any],
      tool_context: Any,
      result: dict[str, Any],
  ) -> Optional[dict[str, Any]]:
    """`after_tool_callback` of every plugin."""
    ...

  async def run_on_tool_error_callback(
      self,
      *,
      tool: BaseTool,
      tool_args: dict[str, Any],
      tool_context: Any,
      error: Exception,
  ) -> Optional[dict[str, Any]]:
    """`on_tool_error_callback` of every plugin."""
    ...


Admission = Callable[[], Awaitable[Optional['OperationOutcome']]]
"""A post-queue admission: refuses (raises), answers, or lets the call run."""


@dataclasses.dataclass(frozen=True)
class OperationEnvironment:
  """The Runner-side parts an operation runs against.

  Attributes:
    session_service: The Session's service (records are appended here).
    session: The live Session the View belongs to.
    plugin_manager: The Runner's `PluginManager`.
    agent: The agent the View was rendered under (the callbacks' context;
      its canonical tool-callback chains run). None: the call is refused
      (`ORIGINATING_AGENT_MISSING`).
    artifact_service: The Runner's artifact service, if any.
    root_agent: The Runner's agent tree. Given, `agent` is looked up in it
      by name and the agent found there runs; not found, the call is
      refused (`ORIGINATING_AGENT_MISSING`).
  """

  session_service: Any
  session: Any
  plugin_manager: Any
  agent: Any
  artifact_service: Any = None
  root_agent: Any = None


@dataclasses.dataclass(frozen=True)
class AppCallRequest:
  """One View `tools/call`.

  Attributes:
    operation_id: The operation's id (the View's request id scoped by the
      host); also the function-call id its callbacks and ledger use.
    hold: The View's hold on its bound generation.
    tool_name: The native tool name the View asked for.
    arguments: The call's arguments.
    view_server_id: The server the View was rendered from.
    target_server_id: The server the call would go to.
    policy: The host's app-call policy.
    bounds: Admission listing bounds.
    confirmation: The governed confirmation (`AppCallConfirmation`).
    callbacks: The toolset's governed MCP callbacks (`AppPathCallbacks`).
    profile: The bound host profile. Given, the call's result is a private
      candidate sealed from the audit Event's approved public fields
      (Event-level `sealedResultRefs`), and the View gets that merge.
    toolset_id: The configured toolset id (the sealed record's scope).
    admission: The post-queue admission (the View channel's barrier),
      awaited first once the Session is owned: it raises `OperationError`
      to refuse the call (nothing runs, nothing is recorded), or returns
      an outcome to answer with instead of running (a retained one).
    append_timeout: Seconds the audit record's append may take. Past
      it the call ends with `APPEND_TIMEOUT` while the append goes on,
      still owning the Session; what it stores stands. None waits for it.
    nested_views: The host's nested-View decision, asked for a
      profile-bound successful result of a UI-associated tool. True: the
      audit Event carries a new descriptor with a widget-level
      `sealedResultRef` and the refresh record (no Event-level entry), and
      the nested widget's generation is reserved in `render_reservations`;
      the View's response is unchanged. None negotiates nothing.
    render_reservations: The registry's render reservations.
    between_legs: Awaited before each further leg of a multi-round call
      (the View channel's admission barrier). An `OperationError` it
      raises ends the operation with that reason, its callbacks' effects
      reconciled; the legs sent before stand.
  """

  operation_id: str
  hold: GenerationHold
  tool_name: str
  view_server_id: str
  target_server_id: str
  arguments: Optional[dict[str, Any]] = None
  policy: AppCallPolicy = DEFAULT_POLICY
  bounds: ToolListingBounds = DEFAULT_BOUNDS
  confirmation: Optional[AppCallGovernor] = None
  callbacks: Optional[AppCallCallbacks] = None
  profile: Optional[McpAppsHostProfile] = None
  toolset_id: str = ''
  admission: Optional[Admission] = None
  between_legs: Optional[Callable[[], Awaitable[None]]] = None
  append_timeout: Optional[float] = None
  nested_views: Optional[NestedViewDecision] = None
  render_reservations: Optional[RenderReservationTable] = None


class _AppTool(BaseTool):
  """What the plugins' tool callbacks see as `tool`: the View's tool."""

  def __init__(self, declaration: mcp_types.Tool) -> None:
    super().__init__(
        name=declaration.name, description=declaration.description or ''
    )


class _Failure(Exception):
  """A classified failure inside the call phase.

  `reconciled`: the operation ends in a reconciliation record (a refusal
  after the callbacks ran), not in an audited remote outcome.
  """

  def __init__(
      self,
      reason: OperationErrorReason,
      message: str,
      wire: Optional[mcp_types.ErrorData] = None,
      reconciled: bool = False,
  ) -> None:
    super().__init__(message)
    self.reason = reason
    self.wire = wire
    self.reconciled = reconciled


_ROUND_FAILURES: Final = {
    MultiRoundFailure.ROUNDS_EXCEEDED: (
        OperationErrorReason.MRTR_ROUNDS_EXCEEDED
    ),
    MultiRoundFailure.TIMEOUT: OperationErrorReason.MRTR_TIMEOUT,
    MultiRoundFailure.LEGACY_INTERMEDIATE: (
        OperationErrorReason.MRTR_INTERMEDIATE_REFUSED
    ),
    MultiRoundFailure.MALFORMED: OperationErrorReason.MRTR_INTERMEDIATE_REFUSED,
}
"""The operation's reason for each way a multi-round call fails closed."""


def _host_error(reason: OperationErrorReason) -> mcp_types.ErrorData:
  return mcp_types.ErrorData(
      code=OPERATION_ERROR_CODE,
      message=f'The app operation failed: {reason.value}',
      data={'reason': reason.value},
  )


def _to_result(response: dict[str, Any]) -> mcp_types.CallToolResult:
  """A callback's dict response as the `CallToolResult` the View gets."""
  try:
    return mcp_types.CallToolResult.model_validate(response)
  except Exception:  # pylint: disable=broad-exception-caught
    pass
  return mcp_types.CallToolResult(
      content=[
          mcp_types.TextContent(
              type='text', text=json.dumps(response, default=str)
          )
      ],
      structured_content=response,
  )


def _dump(result: mcp_types.CallToolResult) -> dict[str, Any]:
  dumped: dict[str, Any] = result.model_dump(
      mode='json', by_alias=True, exclude_none=True
  )
  return dumped


async def _admit(request: AppCallRequest) -> mcp_types.Tool:
  """Admission, before anything is asked of anyone."""
  declaration: mcp_types.Tool = await admit_app_call(
      GenerationPages(request.hold.generation),
      request.tool_name,
      view_server_id=request.view_server_id,
      target_server_id=request.target_server_id,
      policy=request.policy,
      bounds=request.bounds,
  )
  return declaration


class _Call:
  """The call phase: tool callbacks around `call_app_tool`.

  The callbacks run as a model call's do (`flows/llm_flows/tools/
  _caller.py`): each phase runs the plugins first and the originating
  agent's canonical chain only when no plugin answered; a returned value
  replaces, an in-place change of a callback's copy is discarded.
  """

  def __init__(
      self,
      request: AppCallRequest,
      environment: OperationEnvironment,
      tool: _AppTool,
      tool_context: AppCallToolContext,
      arguments: dict[str, Any],
      invocation_context: InvocationContext,
      host_context: ToolContext,
  ) -> None:
    self.request = request
    self.environment = environment
    self.invocation_context = invocation_context
    self.tool = tool
    # The callbacks get the restricted context; the host keeps the full one
    # (over the same child ledger) for the guard and never hands it out.
    self.tool_context = tool_context
    self.host_context = host_context
    self.arguments = arguments
    self.short_circuit = False

  async def _plugins(self, name: str, **kwargs: Any) -> Any:
    method = getattr(self.environment.plugin_manager, name)
    try:
      response = await method(
          tool=self.tool,
          tool_args=dict(self.arguments),
          tool_context=self.tool_context,
          **kwargs,
      )
    except Exception as error:
      raise _Failure(
          OperationErrorReason.TOOL_CALLBACK_FAILED,
          f'{name} raised {type(error).__name__}',
      ) from error
    self._check_refused()
    return response

  async def _agent_chain(self, name: str, **kwargs: Any) -> Any:
    chain = list(getattr(self.environment.agent, name, None) or ())
    if not chain:
      return None
    try:
      response = await _run_callbacks(
          chain,
          _stop_on_non_none,
          tool=self.tool,
          args=dict(self.arguments),
          tool_context=self.tool_context,
          **kwargs,
      )
    except Exception as error:
      raise _Failure(
          OperationErrorReason.TOOL_CALLBACK_FAILED,
          f"the agent's {name} raised {type(error).__name__}",
      ) from error
    self._check_refused()
    return response

  def _check_refused(self) -> None:
    """Fails the call when a callback reached outside its context, even if
    it caught the refusal (nothing more runs, the record reconciles)."""
    refused = self.tool_context.refused
    if not refused:
      return
    error = FacadeError(
        FacadeErrorReason.UNAVAILABLE,
        f'a tool callback reached outside its app-call context: {refused[0]}',
    )
    raise _Failure(
        OperationErrorReason.TOOL_CALLBACK_FAILED,
        'a tool callback reached outside its app-call context',
    ) from error

  async def _before(self) -> Any:
    response = await self._plugins('run_before_tool_callback')
    if response is None:
      response = await self._agent_chain('canonical_before_tool_callbacks')
    return response

  async def _after(self, result: mcp_types.CallToolResult) -> Any:
    # One copy for the plugins and the agent chain: only a returned value
    # replaces the result.
    copy = _dump(result)
    try:
      altered = await self._plugins('run_after_tool_callback', result=copy)
      if altered is None:
        altered = await self._agent_chain(
            'canonical_after_tool_callbacks', tool_response=copy
        )
    except _Failure as failure:
      # RFC §5: an after-tool callback that raises runs the tool-error
      # callbacks; one that answers gives the result.
      cause = failure.__cause__
      if not isinstance(cause, Exception):
        raise
      handled = await self._on_error(cause)
      if handled is None:
        raise
      return handled
    return altered

  async def _on_error(self, error: Exception) -> Any:
    handled = await self._plugins('run_on_tool_error_callback', error=error)
    if handled is None:
      handled = await self._agent_chain(
          'canonical_on_tool_error_callbacks', error=error
      )
    return handled

  async def run(self) -> mcp_types.CallToolResult:
    """The three phases, guarded as a profile-bound model call's are.

    The callbacks run restricted (`CallbackFamily.TOOL_CALLBACK`): a
    same-session append or Runner entry from one is refused, and a live
    Session state key a callback changed other than through `State` is
    undone. Either fails the call with `TOOL_CALLBACK_FAILED` (its cause the
    guard's `EventPolicyError`); the remote call itself runs unrestricted.
    """
    try:
      with guarded_tool_callbacks(self.host_context):
        return await self._phases()
    except EventPolicyError as error:
      raise _Failure(
          OperationErrorReason.TOOL_CALLBACK_FAILED,
          f'a tool callback broke the app path rules ({error.reason.value})',
      ) from error

  async def _phases(self) -> mcp_types.CallToolResult:
    before = await self._before()
    if before is not None:
      self.short_circuit = True
      result = _to_result(before)
    else:
      try:
        result = await self._remote()
      except asyncio.CancelledError as cancelled:
        # As for a model call: the error callbacks see the cancellation,
        # for cleanup only, and it goes on.
        agent = self.environment.agent
        await notify_tool_cancelled(
            invocation_context=self.invocation_context,
            agent=(
                agent
                if hasattr(agent, 'canonical_on_tool_error_callbacks')
                else None
            ),
            tool=self.tool,
            tool_args=dict(self.arguments),
            # The error callbacks get the restricted context too.
            tool_context=cast(ToolContext, self.tool_context),
            cancelled=cancelled,
        )
        raise
    after = await self._after(result)
    if after is not None:
      result = _to_result(after)
    return result

  async def _remote(self) -> mcp_types.CallToolResult:
    request = self.request
    limits: dict[str, Any] = {}
    if request.profile is not None:
      limits = {
          'max_rounds': request.profile.limits.mrtr_max_rounds,
          'max_seconds': request.profile.limits.mrtr_max_seconds,
      }
    try:
      # Host code: the call's own hold use is no reentry of its callbacks.
      with unrestricted():
        return await call_app_tool(
            request.hold,
            request.tool_name,
            # The confirmed arguments are sent, whatever a callback does to
            # its own copy.
            dict(self.arguments),
            view_server_id=request.view_server_id,
            target_server_id=request.target_server_id,
            policy=request.policy,
            bounds=request.bounds,
            callbacks=request.callbacks,
            between_legs=request.between_legs,
            **limits,
        )
    except McpError as error:
      handled = await self._on_error(error)
      if handled is not None:
        return _to_result(handled)
      raise _Failure(
          OperationErrorReason.REMOTE_ERROR,
          'the server answered with a JSON-RPC error',
          wire=error.error,
      ) from error
    except FacadeError as error:
      if error.reason in (
          FacadeErrorReason.CALLBACK_FAILED,
          FacadeErrorReason.CALLBACK_REENTRY,
      ):
        raise _Failure(
            OperationErrorReason.MCP_CALLBACK_FAILED,
            'a governed MCP callback failed closed',
        ) from error
      raise
    except McpAppVisibilityError as error:
      # The filter no longer selects it (or a re-admission refused it):
      # the before-tool effects stand and are reconciled.
      raise _Failure(
          OperationErrorReason.ADMISSION_DENIED,
          'the call was not admitted after its callbacks ran',
      ) from error
    except (GenerationInvalidatedError, HoldReleasedError) as error:
      raise _Failure(
          OperationErrorReason.TEARDOWN, 'the View was torn down'
      ) from error
    except InputRequestRefusedError as error:
      raise _Failure(
          OperationErrorReason.INPUT_REQUEST_REFUSED,
          'the tool asked for an input round',
      ) from error
    except MultiRoundError as error:
      raise _Failure(
          _ROUND_FAILURES[error.failure],
          f'the multi-round call failed after {error.legs} leg(s)',
      ) from error
    except OperationError as error:
      # The channel's barrier between legs refused the next leg.
      raise _Failure(
          error.reason, 'refused between legs', reconciled=True
      ) from error


def _record(
    request: AppCallRequest,
    invocation_id: str,
    agent_name: str,
    path: str,
    *,
    result: Optional[mcp_types.CallToolResult] = None,
    error: Optional[mcp_types.ErrorData] = None,
    widget: Optional[UiWidget] = None,
) -> Event:
  """The core's record of the operation (audit or reconciliation); with a
  negotiated nested View, its `widget` too."""
  summary: dict[str, Any] = {
      'operation_id': request.operation_id,
      'tool': request.tool_name,
      'server_id': request.target_server_id,
      'path': path,
  }
  parts: list[genai_types.Part] = []
  if result is not None:
    parts.append(
        genai_types.Part(
            function_response=genai_types.FunctionResponse(
                id=request.operation_id,
                name=request.tool_name,
                response=_dump(result),
            )
        )
    )
  if error is not None:
    summary['error'] = error.model_dump(mode='json', exclude_none=True)
  if not parts:
    parts.append(genai_types.Part(text=f'app operation {path}'))
  return Event(
      invocation_id=invocation_id,
      author=agent_name,
      content=genai_types.Content(role='user', parts=parts),
      custom_metadata={OPERATION_METADATA_KEY: summary},
      actions=EventActions(
          render_ui_widgets=None if widget is None else [widget]
      ),
  )


async def run_app_call(
    request: AppCallRequest,
    *,
    environment: OperationEnvironment,
    cache: OperationOutcomeCache,
    signal: Optional[OperationSignal] = None,
) -> OperationOutcome:
  """Runs one app-originated `tools/call` and caches its terminal outcome.

  Args:
    request: The View's call.
    environment: The Runner-side parts.
    cache: The outcome cache; an id already there returns its outcome
      without running anything again.
    signal: The View channel's interruptions (cancel, disconnect,
      teardown). An invalidation of the View's generation is a teardown.

  Returns:
    The outcome (also in `cache`). It never raises for a terminal path of
    the matrix.

  Raises:
    OperationError: `DUPLICATE_OPERATION`, the id is running already.
    CoordinationError: `SAME_SESSION_REENTRY`: the calling context owns
      the Session (a Runner turn's callback, an audit observer); nothing
      waited, ran or was cached.
    asyncio.CancelledError: The caller's task was cancelled; the
      operation is recorded as a disconnect first (cancelled while queued
      for the Session: cached as a disconnect, nothing recorded).
  """
  session = environment.session
  key = SessionKey(session.app_name, session.user_id, session.id)
  # Started by code that owns this Session (a callback of its turn, an
  # observer of another operation): refused before it waits or claims.
  refuse_owned_reentry(key, APP_CALL_OPERATION)
  cached = cache._claim(request.operation_id)  # pylint: disable=protected-access
  if cached is not None:
    return cached
  interrupted: list[OperationOutcome] = []
  late: list[_LateAppend] = []
  try:
    # Queued, it does nothing: every check below runs once it owns the
    # Session, and its callbacks and observers run inside the ownership.
    ownership = await session_coordinator().acquire(key, APP_CALL_OPERATION)
    try:
      outcome = await _run(
          request, environment, signal or OperationSignal(), interrupted, late
      )
    finally:
      if late:
        # The append outlived its deadline: it keeps the Session until it
        # ends, so nothing interleaves with its late commit.
        late[0].finish_in_background(ownership)
      else:
        ownership.release()
  except asyncio.CancelledError:
    if interrupted:
      cache._settle(interrupted[0])  # pylint: disable=protected-access
    else:
      cache._settle(  # pylint: disable=protected-access
          OperationOutcome(
              request.operation_id,
              OperationOutcomeKind.CANCELLED,
              cause=OperationError(
                  OperationErrorReason.DISCONNECTED, 'the caller went away'
              ),
          )
      )
    raise
  except BaseException:
    with cache._lock:  # pylint: disable=protected-access
      cache._running.discard(request.operation_id)  # pylint: disable=protected-access
    raise
  return cache._settle(outcome)  # pylint: disable=protected-access


class _LateAppend:
  """An audit append that outlived the call's deadline."""

  _running: set[asyncio.Future[Any]] = set()

  def __init__(
      self, append: asyncio.Future[Any], settle: Callable[[], None]
  ) -> None:
    self.append = append
    self.settle = settle

  def finish_in_background(self, ownership: Any) -> None:
    task = asyncio.ensure_future(self._finish(ownership))
    _LateAppend._running.add(task)
    task.add_done_callback(_LateAppend._running.discard)

  async def _finish(self, ownership: Any) -> None:
    ownership.transfer_here()
    try:
      await self.append
    except BaseException:  # pylint: disable=broad-exception-caught
      logger.warning('a late audit append failed', exc_info=True)
    finally:
      self.settle()
      ownership.release()


async def _run(
    request: AppCallRequest,
    environment: OperationEnvironment,
    signal: OperationSignal,
    interrupted_outcome: list[OperationOutcome],
    late: Optional[list[_LateAppend]] = None,
) -> OperationOutcome:
  op = request.operation_id
  # (0) The post-queue barrier, now the Session is owned: the View was
  # not interrupted while queued, the originating agent still runs, the
  # Session still exists (and is re-read when a queued-ahead owner changed
  # it). Nothing has run, nothing is recorded.
  if signal.reason is not None:
    cause = OperationError(signal.reason, 'interrupted while queued')
    return OperationOutcome(
        op,
        OperationOutcomeKind.CANCELLED,
        tool_cancelled=signal.reason is OperationErrorReason.CANCELLED,
        cause=cause,
    )
  if request.admission is not None:
    try:
      answer = await request.admission()
    except OperationError as refusal:
      return _preflight_error(op, refusal.reason, refusal)
    if answer is not None:
      return answer
  agent = _originating_agent(environment)
  if agent is None:
    missing = OperationError(
        OperationErrorReason.ORIGINATING_AGENT_MISSING,
        'the agent the View was rendered under is not running',
    )
    return _preflight_error(
        op, OperationErrorReason.ORIGINATING_AGENT_MISSING, missing
    )
  session = await _current_session(environment)
  if session is None:
    gone = OperationError(OperationErrorReason.TEARDOWN, 'the Session is gone')
    return OperationOutcome(op, OperationOutcomeKind.CANCELLED, cause=gone)
  environment = dataclasses.replace(environment, agent=agent, session=session)
  # (1) Governed preflight: nothing has run, nothing is recorded.
  try:
    request.hold.check()
    declaration = await _admit(request)
    arguments = dict(request.arguments or {})
    if request.confirmation is not None:
      arguments = await request.confirmation.arguments_to_send(
          tool_name=request.tool_name,
          server_id=request.target_server_id,
          arguments=arguments,
      )
      request.hold.check()  # The approval may have outlived the View.
  except FacadeError as error:
    reason = {
        FacadeErrorReason.CONFIRMATION_TIMEOUT: (
            OperationErrorReason.CONFIRMATION_TIMEOUT
        ),
    }.get(error.reason, OperationErrorReason.CONFIRMATION_DENIED)
    return _preflight_error(op, reason, error)
  except McpAppVisibilityError as error:
    return _preflight_error(op, OperationErrorReason.ADMISSION_DENIED, error)
  except (GenerationInvalidatedError, HoldReleasedError) as error:
    cause = OperationError(
        OperationErrorReason.TEARDOWN, 'the View was torn down'
    )
    cause.__cause__ = error
    return OperationOutcome(op, OperationOutcomeKind.CANCELLED, cause=cause)

  # (2) The one-call batch and the callbacks' context.
  effects = EventBatchEffects([op], live_state=session.state)
  invocation_id = new_invocation_context_id()
  invocation_context = InvocationContext(
      session_service=environment.session_service,
      artifact_service=environment.artifact_service,
      invocation_id=invocation_id,
      agent=environment.agent,
      session=session,
      plugin_manager=environment.plugin_manager,
  )
  host_context = ToolContext(
      invocation_context,
      function_call_id=op,
      event_actions=effects.child(op).event_actions(),
  )
  agent_name = str(getattr(agent, 'name', 'app'))
  call = _Call(
      request,
      environment,
      _AppTool(declaration),
      AppCallToolContext(
          session=SessionKey(session.app_name, session.user_id, session.id),
          invocation_id=invocation_id,
          function_call_id=op,
          agent_name=agent_name,
          live_state=session.state,
          ledger=effects.child(op),
          save_artifact=_artifact_saver(environment, session),
      ),
      arguments,
      invocation_context,
      host_context,
  )

  # (3) The call phase, raced against the View's interruptions.
  stop_listening = request.hold.on_invalidated(lambda _error: signal.teardown())
  task: asyncio.Future[mcp_types.CallToolResult] = asyncio.ensure_future(
      call.run()
  )
  interrupted = signal._wait()  # pylint: disable=protected-access
  result: Optional[mcp_types.CallToolResult] = None
  failure: Optional[_Failure] = None
  try:
    pending: set[asyncio.Future[Any]] = {task, interrupted}
    await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
  except asyncio.CancelledError:
    # The caller's own task went away: a disconnect, recorded, then the
    # cancellation goes on.
    stop_listening()
    signal.disconnect()
    await _stop(task)
    interrupted_outcome.append(
        await _reconcile(
            request,
            environment,
            effects,
            invocation_id,
            agent_name,
            OperationErrorReason.DISCONNECTED,
        )
    )
    raise
  if interrupted.done() and not task.done():
    await _stop(task)
    failure = _Failure(interrupted.result(), 'the operation was interrupted')
  else:
    interrupted.cancel()
    try:
      result = task.result()
    except _Failure as error:
      failure = error
    except Exception as error:  # pylint: disable=broad-exception-caught
      # Whatever else ended the call, the batch's effects are recorded.
      failure = _Failure(
          OperationErrorReason.CALL_FAILED,
          f'the call failed ({type(error).__name__})',
      )
      failure.__cause__ = error
  stop_listening()  # The race is decided.
  if failure is not None and failure.reason in _INTERRUPTIONS:
    return await _reconcile(
        request,
        environment,
        effects,
        invocation_id,
        agent_name,
        failure.reason,
        failure,
    )
  if failure is not None and (
      failure.reconciled
      or failure.reason
      in (
          OperationErrorReason.TOOL_CALLBACK_FAILED,
          OperationErrorReason.MCP_CALLBACK_FAILED,
          OperationErrorReason.ADMISSION_DENIED,
      )
  ):
    return await _reconcile(
        request,
        environment,
        effects,
        invocation_id,
        agent_name,
        failure.reason,
        failure,
    )

  # (4) The result authority: a profile-bound server result becomes a
  # private candidate, sealed at append from the approved audit Event.
  candidate: Optional[ResultCandidate] = None
  nested: Optional[UiWidget] = None
  if failure is None and result is not None and not call.short_circuit:
    try:
      candidate, nested = await _leave_seal(
          request,
          session,
          invocation_id,
          agent_name,
          result,
          declaration=declaration,
          arguments=call.arguments,
      )
    except McpAppsError as error:
      failure = _Failure(
          OperationErrorReason.RESULT_REFUSED,
          'the result authority refused the result',
      )
      failure.__cause__ = error
      result = None

  # (5) The audit Event: a result, a remote error, or a refused round.
  wire_error: Optional[mcp_types.ErrorData] = None
  if failure is not None:
    wire_error = failure.wire or _host_error(failure.reason)
  path = (
      'short_circuit'
      if call.short_circuit
      else ('result' if failure is None else failure.reason.value)
  )
  append = asyncio.ensure_future(
      append_audit_event(
          session_service=environment.session_service,
          session=session,
          event=_record(
              request,
              invocation_id,
              agent_name,
              path,
              result=result,
              error=wire_error,
              widget=nested,
          ),
          effects=effects,
          plugin_manager=environment.plugin_manager,
          agent_name=agent_name,
      )
  )

  def settle_seal() -> None:
    if candidate is not None:
      # Appended or refused, the Event took its pending seal (or none will).
      PENDING_SEALS.discard(invocation_id, [op])
    if nested is not None:
      NEGOTIATED_NESTED_WIDGETS.withdraw(nested.id)
      _reserve_nested(request, session, nested, append)

  try:
    done, _ = await asyncio.wait({append}, timeout=request.append_timeout)
  except asyncio.CancelledError:
    append.cancel()
    raise
  if not done and late is not None:
    late.append(_LateAppend(append, settle_seal))
    cause = OperationError(
        OperationErrorReason.APPEND_TIMEOUT,
        'the audit record was not stored within the append deadline',
    )
    return OperationOutcome(
        op,
        OperationOutcomeKind.ERROR,
        error=_host_error(OperationErrorReason.APPEND_TIMEOUT),
        cause=cause,
    )
  audit = await append
  settle_seal()
  if audit.error is not None:
    cause = OperationError(
        OperationErrorReason.EVENT_PIPELINE_FAILED,
        'the audit record was not stored through the pipeline',
    )
    cause.__cause__ = audit.error
    return _recorded(
        op,
        audit,
        OperationOutcomeKind.ERROR,
        error=_host_error(OperationErrorReason.EVENT_PIPELINE_FAILED),
        cause=cause,
    )
  if failure is not None:
    cause = OperationError(failure.reason, str(failure))
    cause.__cause__ = failure.__cause__
    return _recorded(
        op, audit, OperationOutcomeKind.ERROR, error=wire_error, cause=cause
    )
  if audit.policy_error is not None:
    cause = OperationError(
        OperationErrorReason.EVENT_POLICY_REFUSED,
        'an on_event callback returned forbidden control actions',
    )
    cause.__cause__ = audit.policy_error
    refused = _host_error(OperationErrorReason.EVENT_POLICY_REFUSED)
    assert isinstance(refused.data, dict)
    refused.data['policy_reason'] = audit.policy_error.reason.value
    return _recorded(
        op, audit, OperationOutcomeKind.ERROR, error=refused, cause=cause
    )
  if candidate is not None and audit.event is not None:
    # The View gets what was sealed: the approved public fields of the
    # stored Event over the call's own hidden fields.
    try:
      result = mcp_types.CallToolResult.model_validate(
          released_result(audit.event, candidate)
      )
    except McpAppsError as error:
      cause = OperationError(
          OperationErrorReason.RESULT_REFUSED,
          'the stored result does not re-validate',
      )
      cause.__cause__ = error
      return _recorded(
          op,
          audit,
          OperationOutcomeKind.ERROR,
          error=_host_error(OperationErrorReason.RESULT_REFUSED),
          cause=cause,
      )
  return _recorded(op, audit, OperationOutcomeKind.RESULT, result=result)


def _reserve_nested(
    request: AppCallRequest,
    session: Any,
    nested: UiWidget,
    append: asyncio.Future[AuditAppendOutcome],
) -> None:
  """Reserves the nested widget's generation once its Event is stored.

  The nested widget is the host's to render: its first View holds the
  generation the calling View is on. Only a stored Event that carries the
  widget (in time or late; not the core-only fallback) gets one.
  """
  if not append.done() or append.cancelled() or append.exception():
    return
  stored = append.result().event
  if stored is None or not any(
      w.id == nested.id for w in stored.actions.render_ui_widgets or ()
  ):
    return
  reserve_nested_view(
      request.render_reservations,
      hold=request.hold,
      toolset_id=request.toolset_id,
      session=SessionKey(session.app_name, session.user_id, session.id),
      function_call_id=nested.id,
  )


def _artifact_saver(
    environment: OperationEnvironment, session: Any
) -> ArtifactSaver:
  """Saves an artifact of `session` (the app-call context records it)."""

  async def save(
      filename: str,
      artifact: Any,
      custom_metadata: Optional[dict[str, Any]],
  ) -> int:
    service = environment.artifact_service
    if service is None:
      raise ValueError('Artifact service is not initialized.')
    version: int = await service.save_artifact(
        app_name=session.app_name,
        user_id=session.user_id,
        session_id=session.id,
        filename=filename,
        artifact=artifact,
        custom_metadata=custom_metadata,
    )
    return version

  return save


def _originating_agent(environment: OperationEnvironment) -> Any:
  """The agent whose callbacks run, or None when it is gone."""
  agent = environment.agent
  if agent is None or environment.root_agent is None:
    return agent
  name = getattr(agent, 'name', None)
  find = getattr(environment.root_agent, 'find_agent', None)
  if not isinstance(name, str) or find is None:
    return None
  return find(name)


async def _current_session(environment: OperationEnvironment) -> Any:
  """The Session to run against; None when it no longer exists.

  The given Session object is kept (its live state is the one callbacks
  change) unless the stored Session moved on while the call was queued.
  """
  session = environment.session
  locator = {
      'app_name': session.app_name,
      'user_id': session.user_id,
      'session_id': session.id,
  }
  service = environment.session_service
  # The newest Event tells whether the Session moved on; reading every
  # Event per call would make a View's calls quadratic in its Session.
  probe = await service.get_session(
      **locator, config=GetSessionConfig(num_recent_events=1)
  )
  if probe is None:
    return None
  newest = probe.events[-1].id if probe.events else None
  held = session.events[-1].id if session.events else None
  if probe.last_update_time <= session.last_update_time and newest == held:
    return session
  stored = await service.get_session(**locator)
  if stored is None:
    return None
  if stored.last_update_time > session.last_update_time or len(
      stored.events
  ) != len(session.events):
    return stored
  return session


async def _leave_seal(
    request: AppCallRequest,
    session: Any,
    invocation_id: str,
    agent_name: str,
    result: mcp_types.CallToolResult,
    *,
    declaration: mcp_types.Tool,
    arguments: dict[str, Any],
) -> tuple[Optional[ResultCandidate], Optional[UiWidget]]:
  """Leaves the call's pending seal; returns its candidate and widget.

  The seal is Event-level unless the host negotiates a nested View for the
  call: then it is widget-level, with the refresh record a model call's
  widget gets, and the nested widget (registered for the audit Event) is
  returned.

  Raises:
    SealingError: Over a sealing limit, or the profile has no stores.
  """
  profile = request.profile
  if profile is None:
    return None, None
  era = (
      SealingEra.MODERN
      if request.hold.generation.era is ConnectionEra.MODERN
      else SealingEra.LEGACY
  )
  full_result = _dump(result)
  correlation = WidgetCorrelation(
      invocation_id=invocation_id,
      function_call_id=request.operation_id,
      agent_path=agent_name,
  )
  key = SessionKey(session.app_name, session.user_id, session.id)
  resource_uri = ui_resource_uri(declaration)
  nested = (
      resource_uri is not None
      and not result.is_error
      and await negotiate_nested_view(
          request.nested_views,
          NestedViewOffer(
              session=key,
              toolset_id=request.toolset_id,
              server_id=request.target_server_id,
              tool_name=request.tool_name,
              resource_uri=resource_uri,
              operation_id=request.operation_id,
          ),
      )
  )
  seal = SealRequest(
      profile=profile,
      server_id=request.target_server_id,
      toolset_id=request.toolset_id,
      tool_name=request.tool_name,
      # The Event placement builds no descriptor and no refresh record.
      resource_uri='',
      declaration_fingerprint='',
      catalog_generation=None,
      session=key,
      correlation=correlation,
      arguments={},
      full_result=full_result,
      immediate_caller='app',
      admission_check=request.hold.check,
      function_name=request.tool_name,
      era=era,
  )
  if nested:
    # A nested View's descriptor and refresh record, as a model call's.
    seal = dataclasses.replace(
        seal,
        resource_uri=resource_uri or '',
        declaration_fingerprint=declaration_fingerprint(declaration),
        catalog_generation=request.hold.generation_id,
        arguments=dict(arguments),
    )
  descriptor = prepare_seal(
      seal,
      placement=SealPlacement.WIDGET if nested else SealPlacement.EVENT,
  )
  candidate = candidate_of(
      full_result,
      correlation=correlation,
      function_name=request.tool_name,
      era=era,
      max_bytes=profile.limits.sealing_max_bytes,
      max_depth=profile.limits.sealing_max_depth,
  )
  widget: Optional[UiWidget] = None
  if descriptor is not None:
    widget = descriptor.to_widget()
    NEGOTIATED_NESTED_WIDGETS.allow(widget)
  return candidate, widget


def _preflight_error(
    op: str, reason: OperationErrorReason, error: BaseException
) -> OperationOutcome:
  cause = OperationError(reason, 'the call was refused before it ran')
  cause.__cause__ = error
  return OperationOutcome(
      op, OperationOutcomeKind.ERROR, error=_host_error(reason), cause=cause
  )


def _recorded(
    op: str,
    audit: AuditAppendOutcome,
    kind: OperationOutcomeKind,
    **fields: Any,
) -> OperationOutcome:
  stored = audit.event
  reconciliation = fields.pop('reconciliation', False)
  record_kind: Optional[AuditKind] = None
  if stored is not None:
    record_kind = (
        AuditKind.RECONCILIATION if reconciliation else AuditKind.AUDIT
    )
  return OperationOutcome(
      op,
      kind,
      record_id=None if stored is None else stored.id,
      record_kind=record_kind,
      record_path=audit.path,
      audit=audit,
      **fields,
  )


async def _stop(task: asyncio.Future[Any]) -> None:
  """Cancels the call phase and waits for it to end (no late response)."""
  task.cancel()
  try:
    await task
  except BaseException:  # pylint: disable=broad-exception-caught
    pass


async def _reconcile(
    request: AppCallRequest,
    environment: OperationEnvironment,
    effects: EventBatchEffects,
    invocation_id: str,
    agent_name: str,
    reason: OperationErrorReason,
    failure: Optional[_Failure] = None,
) -> OperationOutcome:
  """The reconciliation record, built from the frozen batch."""
  audit = await append_audit_event(
      session_service=environment.session_service,
      session=environment.session,
      event=_record(request, invocation_id, agent_name, reason.value),
      effects=effects,
      plugin_manager=environment.plugin_manager,
      kind=AuditKind.RECONCILIATION,
      agent_name=agent_name,
      provenance=RECONCILIATION,
  )
  cause = OperationError(reason, str(failure) if failure else reason.value)
  if failure is not None:
    cause.__cause__ = failure.__cause__
  if reason in _INTERRUPTIONS:
    return _recorded(
        request.operation_id,
        audit,
        OperationOutcomeKind.CANCELLED,
        reconciliation=True,
        tool_cancelled=reason is OperationErrorReason.CANCELLED,
        cause=cause,
    )
  return _recorded(
      request.operation_id,
      audit,
      OperationOutcomeKind.ERROR,
      reconciliation=True,
      error=_host_error(reason),
      cause=cause,
  )
