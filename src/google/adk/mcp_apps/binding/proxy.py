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

"""`HostBoundMcpToolset`: the registry's proxy for one toolset generation.

An Agent is handed a toolset before anything is known about readiness, and
readiness can be withdrawn while the Agent keeps running. The proxy is the
`BaseToolset` that stands for one binding generation of one configured
toolset (RFC section 1). It constructs the runtime `McpToolset` from its
`McpToolsetSpec` at most once, with the registry's client binding when it is
`PROFILE_BOUND` and without one when it is `MODEL_ONLY`, and it walks a
one-way state machine:

    UNMATERIALIZED -> MATERIALIZING -> PROFILE_BOUND | MODEL_ONLY
                   -> REVOKING -> CLOSED

plus `UNMATERIALIZED -> CLOSED` (closed before anything was constructed)
and `MATERIALIZING -> UNMATERIALIZED` (the constructing caller was cancelled
before it constructed anything). Transitions are linearized by a
thread-safe mutex and a latch (a `concurrent.futures.Future`), not an
`asyncio.Lock`, because one proxy serves several event loops (a synchronous
`Runner.run()` has its own). Concurrent materializations wait on the latch
and share the one construction; a close that meets `MATERIALIZING` waits for
it and then closes exactly once; a close that meets `REVOKING` waits for the
closer.

Filter and prefix are the runtime toolset's alone: the proxy gives none to
`BaseToolset.__init__` and returns the runtime's prefixed listing, so a
prefix is applied once and a filter runs once per listing.

The Agent-facing `close()` releases nothing: the proxy is non-owning, and a
shared, argument-free `close()` cannot tell which Runner is calling. Release
goes through Runner lease tokens; the registry closes a generation through
its internal close.

Admission gate: every listing, read and tool call the proxy or its tools
make enters the proxy's gate. Once the registry starts revoking, the gate
refuses new work with a typed error (`StaleGenerationError` after a
withdrawal or rebind, `ToolsetClosedError` after shutdown), tracks the work
already admitted so it can be drained or cancelled with a bound, and keeps
the runtime's session manager from ever opening another connection. The
runtime toolset and its session manager are sealed: once the client exists,
setting any configuration attribute raises `ConfigurationFrozenError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
import concurrent.futures
import contextlib
import contextvars
import dataclasses
import enum
import functools
import logging
import threading
from typing import Any
from typing import Final
from typing import Optional
from typing import TYPE_CHECKING
from typing import TypeVar

from typing_extensions import override

from . import loop_routing
from ...agents.readonly_context import ReadonlyContext
from ...tools.base_tool import BaseTool
from ...tools.base_toolset import BaseToolset
from ...tools.mcp_tool.mcp_session_manager import MCPSessionManager
from ...tools.mcp_tool.mcp_toolset import McpToolset
from .errors import BindingConflictError
from .errors import ConfigurationFrozenError
from .errors import IllegalTransitionError
from .errors import ToolsetClosedError
from .errors import UnboundToolsetError
from .spec import McpToolsetSpec

if TYPE_CHECKING:
  from ...auth.auth_tool import AuthConfig
  from ...models.llm_request import LlmRequest
  from ...tools.tool_context import ToolContext
  from .client_extensions import AppsClientBinding

logger = logging.getLogger('google_adk.' + __name__)

DEFAULT_DRAIN_TIMEOUT: Final = 10.0
"""Seconds revocation waits for admitted work before cancelling it."""


class ProxyState(enum.Enum):
  """The lifecycle state of a `HostBoundMcpToolset`."""

  UNMATERIALIZED = 'unmaterialized'
  MATERIALIZING = 'materializing'
  PROFILE_BOUND = 'profile_bound'
  MODEL_ONLY = 'model_only'
  REVOKING = 'revoking'
  CLOSED = 'closed'


ALLOWED_TRANSITIONS: Final[dict[ProxyState, frozenset[ProxyState]]] = {
    ProxyState.UNMATERIALIZED: frozenset(
        {ProxyState.MATERIALIZING, ProxyState.CLOSED}
    ),
    ProxyState.MATERIALIZING: frozenset({
        ProxyState.PROFILE_BOUND,
        ProxyState.MODEL_ONLY,
        ProxyState.UNMATERIALIZED,
    }),
    ProxyState.PROFILE_BOUND: frozenset({ProxyState.REVOKING}),
    ProxyState.MODEL_ONLY: frozenset({ProxyState.REVOKING}),
    ProxyState.REVOKING: frozenset({ProxyState.CLOSED}),
    ProxyState.CLOSED: frozenset(),
}
"""Every legal transition; anything else raises `IllegalTransitionError`."""

_SERVING = (ProxyState.PROFILE_BOUND, ProxyState.MODEL_ONLY)

ErrorFactory = Callable[[], Exception]

_T = TypeVar('_T')

RoutingFactory = Callable[
    [McpToolset, 'AppsClientBinding', Callable[[], None]], Any
]
"""Builds a bound runtime's app-safe class from the runtime, the binding and
its admission check (the registry passes `affinity.routing`'s)."""


@dataclasses.dataclass(frozen=True)
class DrainResult:
  """What draining admitted work achieved within its bound.

  Attributes:
    admitted: Operations in flight when draining began.
    cancelled: Operations still in flight at the bound, then cancelled.
  """

  admitted: int
  cancelled: int


def _current_task() -> Optional[asyncio.Task[Any]]:
  try:
    return asyncio.current_task()
  except RuntimeError:  # No running loop.
    return None


@dataclasses.dataclass(frozen=True, eq=False)
class AdmissionTicket:
  """A caller task's admission, carried to the task that does its I/O.

  The gate identifies admitted work by its asyncio task, but a routed
  session manager opens connections in another task, on the registry loop
  (`loop_routing`). The caller checks admission in its own task and hands
  this ticket over; `_Gate.adopt` re-validates it on the other side.

  Attributes:
    gate: The gate that issued it.
    task: The caller's task (None outside a task).
  """

  gate: _Gate
  task: Optional[asyncio.Task[Any]]


class _Gate:
  """Admission and in-flight tracking for one proxy generation.

  Loop-neutral: state is guarded by a `threading.Lock`, and each admitted
  operation is recorded with its task and loop so it can be cancelled from
  whichever loop revokes.
  """

  def __init__(self) -> None:
    self._lock = threading.Lock()
    self._refusal: Optional[ErrorFactory] = None
    self._inflight: dict[asyncio.Task[Any], tuple[int, Any]] = {}
    # Registry-side tasks acting for an admitted caller (`adopt`): `check`
    # lets them through, but the drain neither waits for nor cancels them;
    # cancelling their caller cancels them.
    self._adopted: dict[asyncio.Task[Any], int] = {}
    self._idle = threading.Event()
    self._idle.set()

  def check(self) -> None:
    """Raises the refusal error once the gate is shut.

    Work admitted before the gate shut (the calling task is in flight, or
    acts for one through `adopt`) is let through: draining means letting it
    finish.
    """
    task = _current_task()
    with self._lock:
      refusal = self._refusal
      admitted = task is not None and (
          task in self._inflight or task in self._adopted
      )
    if refusal is not None and not admitted:
      raise refusal()

  def ticket(self) -> AdmissionTicket:
    """Caller side: `check()`, then a ticket to carry to another task.

    Returns:
      The calling task's admission, for `adopt` on the registry loop.

    Raises:
      Exception: The refusal, if the gate is shut and the calling task was
        not admitted before it shut.
    """
    self.check()
    return AdmissionTicket(self, _current_task())

  @contextlib.contextmanager
  def adopt(self, ticket: AdmissionTicket) -> Iterator[None]:
    """Registry side: admits the current task on behalf of `ticket`.

    The admission is re-decided here, under the gate's lock, so a handover
    that races the gate shutting cannot open a connection for work the
    drain never saw: it passes while the gate is open, or while the
    ticket's task is still admitted (and so still drained for).

    Args:
      ticket: A ticket this gate issued.

    Yields:
      Nothing; `check()` in the current task passes until exit.

    Raises:
      Exception: The refusal, if the gate has shut and the ticket's task is
        no longer admitted.
    """
    if ticket.gate is not self:
      raise ValueError('The admission ticket belongs to another gate')
    task = _current_task()
    with self._lock:
      refusal = self._refusal
      if refusal is not None and ticket.task not in self._inflight:
        admitted = False
      else:
        admitted = True
        if task is not None:
          self._adopted[task] = self._adopted.get(task, 0) + 1
    if not admitted:
      assert refusal is not None
      raise refusal()
    try:
      yield
    finally:
      if task is not None:
        with self._lock:
          depth = self._adopted.pop(task) - 1
          if depth:
            self._adopted[task] = depth

  @property
  def inflight(self) -> int:
    """Operations admitted and not yet finished."""
    with self._lock:
      return len(self._inflight)

  @contextlib.asynccontextmanager
  async def operation(self) -> AsyncIterator[None]:
    """Admits one operation (re-entrant per task) or raises the refusal."""
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    with self._lock:
      if self._refusal is not None:
        refusal = self._refusal
      else:
        refusal = None
        if task is not None:
          depth, _ = self._inflight.get(task, (0, loop))
          self._inflight[task] = (depth + 1, loop)
          self._idle.clear()
    if refusal is not None:
      raise refusal()
    try:
      yield
    finally:
      if task is not None:
        with self._lock:
          depth, _ = self._inflight[task]
          if depth > 1:
            self._inflight[task] = (depth - 1, loop)
          else:
            del self._inflight[task]
          if not self._inflight:
            self._idle.set()

  def shut(self, refusal: ErrorFactory) -> None:
    """Refuses all new work from now on (idempotent; first refusal wins)."""
    with self._lock:
      if self._refusal is None:
        self._refusal = refusal

  async def drain(self, timeout: float) -> DrainResult:
    """Waits for admitted work, then cancels what is left at the bound."""
    admitted = self.inflight
    if admitted and not await asyncio.to_thread(self._idle.wait, timeout):
      with self._lock:
        left = list(self._inflight.items())
      for task, (_, loop) in left:
        with contextlib.suppress(RuntimeError):  # Its loop is closed.
          loop.call_soon_threadsafe(task.cancel)
      await asyncio.to_thread(self._idle.wait, timeout)
      return DrainResult(admitted, len(left))
    return DrainResult(admitted, 0)


# --- The sealed runtime ------------------------------------------------------

_FROZEN_TOOLSET_ATTRIBUTES: Final = frozenset({
    'tool_filter',
    'tool_name_prefix',
    '_connection_params',
    '_header_provider',
    '_progress_callback',
    '_sampling_callback',
    '_sampling_capabilities',
    '_elicitation_callback',
    '_auth_scheme',
    '_auth_credential',
    '_auth_config',
    '_require_confirmation',
    '_use_mcp_resources',
    '_tool_listing_bounds',
    '_tool_list_cache_ttl_seconds',
    '_mcp_session_manager',
    '_propagate_grounding_metadata',
    '_adk_apps_gate',
})

_FROZEN_MANAGER_ATTRIBUTES: Final = frozenset({
    '_connection_params',
    '_sampling_callback',
    '_sampling_capabilities',
    '_elicitation_callback',
    '_apps_client_binding',
    '_adk_apps_gate',
})


class _SealedSessionManager(MCPSessionManager):
  """The runtime's session manager: frozen callbacks, gated connections."""

  _adk_apps_gate: _Gate

  def __setattr__(self, name: str, value: Any) -> None:
    if name in _FROZEN_MANAGER_ATTRIBUTES:
      raise ConfigurationFrozenError(type(self).__name__, name)
    super().__setattr__(name, value)

  def __delattr__(self, name: str) -> None:
    if name in _FROZEN_MANAGER_ATTRIBUTES:
      raise ConfigurationFrozenError(type(self).__name__, name)
    super().__delattr__(name)

  async def create_session(
      self, headers: Optional[dict[str, str]] = None
  ) -> Any:
    # A revoked generation never opens (or reopens) a connection, whoever
    # holds a reference to this manager.
    gate = self._adk_apps_gate
    if loop_routing.is_routed(self._apps_client_binding):
      # Admission is decided in the calling task (the one the drain tracks)
      # and re-validated, through the ticket, in the registry-loop task that
      # runs the pool access (which lands back here, unrouted).
      ticket = gate.ticket()
      return await loop_routing.create_session(
          self, headers, admission=functools.partial(gate.adopt, ticket)
      )
    gate.check()
    return await super().create_session(headers)


_host_path: contextvars.ContextVar[bool] = contextvars.ContextVar(
    'adk_mcp_apps_host_path', default=False
)
"""Set while a proxy's host-internal method (not a model tool) runs."""


@contextlib.contextmanager
def _on_host_path() -> Iterator[None]:
  token = _host_path.set(True)
  try:
    yield
  finally:
    _host_path.reset(token)


class _SealedMcpToolset(McpToolset):
  """The runtime toolset a proxy constructs; sealed once its client exists."""

  _adk_apps_gate: _Gate

  def __init__(
      self,
      *,
      _adk_apps_gate: _Gate,
      _adk_apps_routing: Optional[RoutingFactory] = None,
      **kwargs: Any,
  ) -> None:
    binding = kwargs.get('_apps_client_binding')
    if _adk_apps_routing is not None and binding is not None:
      # Two classes: upstream's fully-callbacked connections, unchanged, for
      # non-UI tools; app-safe generations for UI-associated ones.
      kwargs['_apps_client_binding'] = None
    super().__init__(**kwargs)
    if _adk_apps_routing is not None and binding is not None:
      affinity = _adk_apps_routing(self, binding, _adk_apps_gate.check)
      self.__dict__['_apps_affinity'] = affinity
      # Both classes list under the same (the profile's) bounds.
      self.__dict__['_tool_listing_bounds'] = affinity.bounds
    manager = self._mcp_session_manager
    manager.__dict__['_adk_apps_gate'] = _adk_apps_gate
    manager.__class__ = _SealedSessionManager
    self.__dict__['_adk_apps_gate'] = _adk_apps_gate
    self.__dict__['_adk_sealed'] = True

  async def _execute_with_session(
      self,
      coroutine_func: Callable[[Any], Awaitable[_T]],
      error_message: str,
      readonly_context: Optional[ReadonlyContext] = None,
      headers: Optional[dict[str, str]] = None,
  ) -> _T:
    affinity = self._apps_affinity
    if affinity is None or not _host_path.get():
      return await super()._execute_with_session(
          coroutine_func, error_message, readonly_context, headers
      )
    # The host's own calls and reads (bootstrap, app paths) of a bound
    # toolset run on the caller's app-safe generation, like UI tools.
    if headers is None:
      headers = await self._build_headers(readonly_context)
    result: _T = await affinity.execute(
        readonly_context, headers, coroutine_func, error_message
    )
    return result

  def __setattr__(self, name: str, value: Any) -> None:
    if self.__dict__.get('_adk_sealed') and name in _FROZEN_TOOLSET_ATTRIBUTES:
      raise ConfigurationFrozenError('McpToolset', name)
    super().__setattr__(name, value)

  def __delattr__(self, name: str) -> None:
    if self.__dict__.get('_adk_sealed') and name in _FROZEN_TOOLSET_ATTRIBUTES:
      raise ConfigurationFrozenError('McpToolset', name)
    super().__delattr__(name)


@functools.cache
def _guarded_class(cls: type[BaseTool]) -> type[BaseTool]:
  """A subclass of a tool class whose `run_async` enters the proxy's gate."""

  async def run_async(
      self: BaseTool, *, args: dict[str, Any], tool_context: ToolContext
  ) -> Any:
    gate: _Gate = self.__dict__['_adk_apps_gate']
    async with gate.operation():
      return await cls.run_async(self, args=args, tool_context=tool_context)

  return type(
      cls.__name__,
      (cls,),
      {
          'run_async': run_async,
          '__module__': cls.__module__,
          '__qualname__': cls.__qualname__,
          '_adk_apps_guarded': True,
      },
  )


def _guard(tool: BaseTool, gate: _Gate) -> BaseTool:
  """Binds a listed tool to its generation's gate (in place, idempotent).

  The tool keeps its class identity for `isinstance` (a subclass is swapped
  in), so an old declaration of a revoked generation fails typed instead of
  reopening a connection.
  """
  if not getattr(type(tool), '_adk_apps_guarded', False):
    tool.__class__ = _guarded_class(type(tool))
  tool.__dict__['_adk_apps_gate'] = gate
  return tool


# --- The proxy ---------------------------------------------------------------

_FROZEN_PROXY_ATTRIBUTES: Final = frozenset({
    'tool_filter',
    'tool_name_prefix',
    '_use_invocation_cache',
    '_spec',
    '_toolset_id',
    '_binding_generation',
})


class HostBoundMcpToolset(BaseToolset):
  """One binding generation of one configured MCP toolset.

  Built by `McpAppBindingRegistry`; tests may build one directly. The
  runtime `McpToolset` is constructed from the spec at most once, on the
  first `materialize()` (the registry materializes at startup) or first use.

  Attributes:
    toolset_id: The stable, configured toolset id.
    binding_generation: The registry generation this proxy belongs to.
    spec: The spec it constructs from.
    state: Its lifecycle state.
    construction_count: Runtime toolsets constructed (0 or 1).
    close_count: Runtime toolsets closed (0 or 1).
  """

  _spec: McpToolsetSpec
  _toolset_id: str
  _binding_generation: int
  _planned_binding: Optional[AppsClientBinding]
  _planned_routing: Optional[RoutingFactory]
  _materialize_hook: Optional[Callable[[], Awaitable[None]]]
  _mutex: threading.Lock
  _state: ProxyState
  _history: list[ProxyState]
  _latch: Optional[concurrent.futures.Future[None]]
  _close_latch: Optional[concurrent.futures.Future[None]]
  _runtime: Optional[McpToolset]
  _gate: _Gate
  _constructions: int
  _closes: int
  _failure: Optional[BaseException]

  def __init__(
      self,
      spec: McpToolsetSpec,
      *,
      toolset_id: str,
      binding_generation: int = 0,
      _apps_client_binding: Optional[AppsClientBinding] = None,
      _apps_routing: Optional[RoutingFactory] = None,
      _materialize_hook: Optional[Callable[[], Awaitable[None]]] = None,
  ):
    """Creates the proxy; nothing is constructed or connected yet.

    Args:
      spec: The toolset's spec. A constructed `McpToolset` is refused.
      toolset_id: The stable toolset id.
      binding_generation: The generation the registry assigns.
      _apps_client_binding: Registry-only: the client binding that makes
        this proxy `PROFILE_BOUND`; None makes it `MODEL_ONLY`.
      _apps_routing: Registry-only: builds the runtime's app-safe class
        (`affinity.routing`). Without it a bound runtime runs every call on
        its one app-safe, Apps-advertising connection pool.
      _materialize_hook: Test seam awaited inside `MATERIALIZING`, before
        construction, to force races without sleeping.

    Raises:
      UnboundToolsetError: `spec` is not an `McpToolsetSpec`.
    """
    if not isinstance(spec, McpToolsetSpec):
      raise UnboundToolsetError(
          'HostBoundMcpToolset takes an McpToolsetSpec; a constructed'
          f' {type(spec).__name__} cannot be bound (it stays model-only)'
      )
    # No filter and no prefix: the runtime toolset applies both, once.
    super().__init__(tool_filter=None, tool_name_prefix=None)
    d = self.__dict__
    d['_use_invocation_cache'] = False
    d['_spec'] = spec
    d['_toolset_id'] = toolset_id
    d['_binding_generation'] = binding_generation
    d['_planned_binding'] = _apps_client_binding
    d['_planned_routing'] = _apps_routing
    d['_materialize_hook'] = _materialize_hook
    d['_mutex'] = threading.Lock()
    d['_state'] = ProxyState.UNMATERIALIZED
    d['_history'] = [ProxyState.UNMATERIALIZED]
    d['_latch'] = None
    d['_close_latch'] = None
    d['_runtime'] = None
    d['_gate'] = _Gate()
    d['_constructions'] = 0
    d['_closes'] = 0
    d['_failure'] = None

  # Frozen configuration (P2-REG-09).

  def __setattr__(self, name: str, value: Any) -> None:
    if name in _FROZEN_PROXY_ATTRIBUTES and name in self.__dict__:
      raise ConfigurationFrozenError(type(self).__name__, name)
    super().__setattr__(name, value)

  def __delattr__(self, name: str) -> None:
    if name in _FROZEN_PROXY_ATTRIBUTES:
      raise ConfigurationFrozenError(type(self).__name__, name)
    super().__delattr__(name)

  # Introspection.

  @property
  def toolset_id(self) -> str:
    """The stable toolset id."""
    return str(self._toolset_id)

  @property
  def binding_generation(self) -> int:
    """The registry generation this proxy belongs to."""
    return int(self._binding_generation)

  @property
  def spec(self) -> McpToolsetSpec:
    """The spec the runtime toolset is constructed from."""
    spec: McpToolsetSpec = self._spec
    return spec

  @property
  def state(self) -> ProxyState:
    """The current lifecycle state."""
    with self._mutex:
      state: ProxyState = self._state
    return state

  @property
  def history(self) -> tuple[ProxyState, ...]:
    """Every state this proxy has been in, in order."""
    with self._mutex:
      return tuple(self._history)

  @property
  def profile_bound(self) -> bool:
    """Whether the proxy is (or will materialize) profile-bound."""
    return self._planned_binding is not None

  @property
  def construction_count(self) -> int:
    """How many runtime toolsets this proxy constructed (0 or 1)."""
    return int(self._constructions)

  @property
  def close_count(self) -> int:
    """How many runtime toolsets this proxy closed (0 or 1)."""
    return int(self._closes)

  @property
  def inflight(self) -> int:
    """Admitted operations not yet finished."""
    return self._gate.inflight

  @property
  def runtime(self) -> Optional[McpToolset]:
    """The sealed runtime toolset, once constructed (diagnostics only)."""
    runtime: Optional[McpToolset] = self._runtime
    return runtime

  # State machine.

  def _transition_locked(self, target: ProxyState) -> None:
    current: ProxyState = self._state
    if target not in ALLOWED_TRANSITIONS[current]:
      raise IllegalTransitionError(self.toolset_id, current.value, target.value)
    self.__dict__['_state'] = target
    self._history.append(target)

  def _transition(self, target: ProxyState) -> None:
    """Moves to `target` if the state machine allows it, else raises."""
    with self._mutex:
      self._transition_locked(target)

  def _closed_error(self) -> ToolsetClosedError:
    return ToolsetClosedError(
        self.toolset_id, self.binding_generation, cause=self._failure
    )

  def _bind_apps(self, binding: AppsClientBinding) -> None:
    """Registry-only: plans a profile binding before materialization.

    Raises:
      BindingConflictError: The proxy is (planned to be) profile-bound.
      IllegalTransitionError: The proxy is materializing or `MODEL_ONLY`
        (terminal for this object: the registry rebinds with a new proxy).
      ToolsetClosedError: The proxy is revoking or closed.
    """
    with self._mutex:
      state: ProxyState = self._state
      if state in (ProxyState.REVOKING, ProxyState.CLOSED):
        raise self._closed_error()
      if self._planned_binding is not None:
        raise BindingConflictError(
            f'Toolset {self.toolset_id!r} is already bound to a profile'
        )
      if state is not ProxyState.UNMATERIALIZED:
        raise IllegalTransitionError(
            self.toolset_id, state.value, ProxyState.PROFILE_BOUND.value
        )
      self.__dict__['_planned_binding'] = binding

  async def materialize(self) -> McpToolset:
    """Constructs the runtime toolset once; concurrent callers share it.

    Returns:
      The sealed runtime toolset.

    Raises:
      ToolsetClosedError: The proxy is revoking or closed (typed
        `StaleGenerationError` if superseded).
    """
    while True:
      with self._mutex:
        state: ProxyState = self._state
        if state in _SERVING:
          assert self._runtime is not None
          return self._runtime
        if state in (ProxyState.REVOKING, ProxyState.CLOSED):
          self._gate.check()
          raise self._closed_error()
        if state is ProxyState.MATERIALIZING:
          assert self._latch is not None
          latch: concurrent.futures.Future[None] = self._latch
          owner = False
        else:
          self._transition_locked(ProxyState.MATERIALIZING)
          latch = concurrent.futures.Future()
          self.__dict__['_latch'] = latch
          owner = True
      if not owner:
        await asyncio.wrap_future(latch)
        continue
      try:
        hook = self._materialize_hook
        if hook is not None:
          await hook()
      except BaseException:
        with self._mutex:
          self._transition_locked(ProxyState.UNMATERIALIZED)
        latch.set_result(None)
        raise
      # From here on construction is synchronous: no cancellation point.
      try:
        runtime = self.spec.build(
            _apps_client_binding=self._planned_binding,
            _toolset_class=functools.partial(  # type: ignore[arg-type]
                _SealedMcpToolset,
                _adk_apps_gate=self._gate,
                _adk_apps_routing=self._planned_routing,
            ),
        )
      except BaseException as error:
        with self._mutex:
          self.__dict__['_failure'] = error
          self._transition_locked(ProxyState.UNMATERIALIZED)
        latch.set_result(None)
        raise
      with self._mutex:
        self.__dict__['_runtime'] = runtime
        self.__dict__['_constructions'] = self._constructions + 1
        self._transition_locked(
            ProxyState.PROFILE_BOUND
            if self._planned_binding is not None
            else ProxyState.MODEL_ONLY
        )
      latch.set_result(None)
      return runtime

  def _begin_revoke(self, refusal: Optional[ErrorFactory] = None) -> bool:
    """Registry-only: `PROFILE_BOUND | MODEL_ONLY -> REVOKING`, gate shut.

    Returns:
      True if this call began revoking; False if the proxy was not serving
      (the caller then uses `_aclose`, which waits or closes directly).
    """
    with self._mutex:
      if self._state not in _SERVING:
        return False
      self._transition_locked(ProxyState.REVOKING)
      self.__dict__['_close_latch'] = concurrent.futures.Future()
      self._gate.shut(refusal or self._closed_error)
      return True

  async def _drain(self, timeout: float = DEFAULT_DRAIN_TIMEOUT) -> DrainResult:
    """Registry-only: drains (then cancels) admitted work, with a bound."""
    return await self._gate.drain(timeout)

  async def _close_runtime(self) -> None:
    """Registry-only: closes the runtime toolset's connections, once."""
    with self._mutex:
      if self._state is not ProxyState.REVOKING or self._closes:
        return
      runtime: Optional[McpToolset] = self._runtime
      self.__dict__['_closes'] = self._closes + 1
    if runtime is not None:
      await runtime.close()

  async def _close_connections(self) -> bool:
    """Registry-only: closes the serving runtime's pooled connections.

    A lease epoch's last release (or registry shutdown) calls it. The proxy
    keeps serving; its next use reconnects. Once the proxy is revoking or
    closed it does nothing: withdrawal closes the runtime exactly once,
    after the drain (`_close_runtime`). A routed runtime's sessions are
    closed on the registry loop (`loop_routing.close`).

    Returns:
      True if it closed the pool.
    """
    with self._mutex:
      state: ProxyState = self._state
      runtime: Optional[McpToolset] = self._runtime
    if state not in _SERVING or runtime is None:
      return False
    await runtime.close()
    return True

  def _finish_close(self) -> None:
    """Registry-only: `REVOKING -> CLOSED`; releases waiting closers."""
    with self._mutex:
      if self._state is ProxyState.CLOSED:
        return
      self._transition_locked(ProxyState.CLOSED)
      latch: Optional[concurrent.futures.Future[None]] = self._close_latch
    if latch is not None and not latch.done():
      latch.set_result(None)

  async def _aclose(
      self,
      refusal: Optional[ErrorFactory] = None,
      drain_timeout: float = DEFAULT_DRAIN_TIMEOUT,
  ) -> bool:
    """The registry's close: idempotent, waits out materialization.

    Returns:
      True if this call closed the proxy; False if it was already closed
      or another caller was closing it (this call then waited for it).
    """
    while True:
      with self._mutex:
        state: ProxyState = self._state
        if state is ProxyState.CLOSED:
          return False
        if state is ProxyState.UNMATERIALIZED:
          self._gate.shut(refusal or self._closed_error)
          self._transition_locked(ProxyState.CLOSED)
          return True
        if state is ProxyState.MATERIALIZING:
          waiter: Optional[concurrent.futures.Future[None]] = self._latch
        elif state is ProxyState.REVOKING:
          waiter = self._close_latch
        else:
          waiter = None
      if waiter is not None:
        await asyncio.wrap_future(waiter)
        if state is ProxyState.REVOKING:
          return False
        continue
      if self._begin_revoke(refusal):
        break
    await self._drain(drain_timeout)
    await self._close_runtime()
    self._finish_close()
    return True

  # BaseToolset.

  async def _serving(self) -> McpToolset:
    runtime = await self.materialize()
    self._gate.check()
    return runtime

  @override
  async def get_tools(
      self, readonly_context: Optional[ReadonlyContext] = None
  ) -> list[BaseTool]:
    """The runtime toolset's filtered, prefixed tools, bound to this gate."""
    runtime = await self._serving()
    async with self._gate.operation():
      tools = await runtime.get_tools_with_prefix(readonly_context)
    return [_guard(tool, self._gate) for tool in tools]

  async def read_resource(
      self, name: str, readonly_context: Optional[ReadonlyContext] = None
  ) -> Any:
    """`McpToolset.read_resource` on this generation's connection."""
    runtime = await self._serving()
    async with self._gate.operation():
      with _on_host_path():
        return await runtime.read_resource(name, readonly_context)

  async def read_resource_by_uri(
      self, uri: str, readonly_context: Optional[ReadonlyContext] = None
  ) -> list[Any]:
    """`McpToolset.read_resource_by_uri` on this generation's connection."""
    runtime = await self._serving()
    async with self._gate.operation():
      with _on_host_path():
        return await runtime.read_resource_by_uri(uri, readonly_context)

  async def list_resources(
      self, readonly_context: Optional[ReadonlyContext] = None
  ) -> list[str]:
    """`McpToolset.list_resources` on this generation's connection."""
    runtime = await self._serving()
    async with self._gate.operation():
      with _on_host_path():
        return await runtime.list_resources(readonly_context)

  async def call_tool(
      self,
      name: str,
      arguments: Optional[dict[str, Any]] = None,
      readonly_context: Optional[ReadonlyContext] = None,
  ) -> Any:
    """Calls a tool by native name on this generation's pooled session.

    Host-internal (bootstrap and app paths of later parts use it); model
    calls go through the listed tools.
    """
    runtime = await self._serving()
    async with self._gate.operation():
      with _on_host_path():
        return await runtime._execute_with_session(  # pylint: disable=protected-access
            lambda session: session.call_tool(name, arguments or {}),
            f'Failed to call {name}',
            readonly_context,
        )

  @override
  def get_auth_config(self) -> Optional[AuthConfig]:
    """The runtime toolset's auth config (None before materialization)."""
    runtime = self.runtime
    return None if runtime is None else runtime.get_auth_config()

  @override
  async def process_llm_request(
      self, *, tool_context: ToolContext, llm_request: LlmRequest
  ) -> None:
    runtime = await self._serving()
    await runtime.process_llm_request(
        tool_context=tool_context, llm_request=llm_request
    )

  @override
  async def close(self) -> None:
    """Releases nothing: the proxy handed to an Agent is non-owning.

    `Runner.close()` reaches this through `BaseToolset`; it cannot tell
    which Runner calls, so it neither closes the generation nor releases a
    lease. Release goes through the Runner's lease token; the registry
    closes the generation at last release or at shutdown.
    """

  def __repr__(self) -> str:
    return (
        f'HostBoundMcpToolset({self.toolset_id!r},'
        f' generation={self.binding_generation}, state={self.state.value})'
    )
