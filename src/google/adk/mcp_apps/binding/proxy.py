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

An Agent is handed the proxy before anything is known about readiness. It
builds the runtime `McpToolset` from its `McpToolsetSpec` at most once
(profile-bound with the registry's client binding, model-only without),
and walks a one-way state machine (`ALLOWED_TRANSITIONS`). Every listing,
read and call enters the generation's `AdmissionGate`; the registry retires
a generation by shutting the gate, draining, and closing the runtime once.
The Agent-facing `close()` releases nothing: release goes through Runner
lease tokens. Design: docs/design/binding.md.

Example:

  proxy = HostBoundMcpToolset(spec, toolset_id='weather')
  tools = await proxy.get_tools()
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
import concurrent.futures
import dataclasses
import enum
import functools
import logging
import threading
from typing import Any
from typing import Final
from typing import Optional
from typing import TYPE_CHECKING

from typing_extensions import override

from ...agents.readonly_context import ReadonlyContext
from ...tools.base_tool import BaseTool
from ...tools.base_toolset import BaseToolset
from .admission import AdmissionGate
from .admission import DrainResult
from .admission import ErrorFactory
from .errors import BindingConflictError
from .errors import IllegalTransitionError
from .errors import ToolsetClosedError
from .errors import UnboundToolsetError
from .sealed_runtime import AdmittedMcpToolset
from .sealed_runtime import BASE_TOOLSET_STATE
from .sealed_runtime import on_host_path
from .sealed_runtime import RoutingFactory
from .sealed_runtime import Sealable
from .spec import McpToolsetSpec

if TYPE_CHECKING:
  from ...auth.auth_tool import AuthConfig
  from ...models.llm_request import LlmRequest
  from ...tools.tool_context import ToolContext
  from .client_extensions import AppsClientBinding

__all__ = [
    'ALLOWED_TRANSITIONS',
    'DEFAULT_DRAIN_TIMEOUT',
    'DrainResult',
    'HostBoundMcpToolset',
    'ProxyState',
    'RoutingFactory',
]

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


@dataclasses.dataclass
class _Lifecycle:
  """A proxy's mutable lifecycle state, guarded by the proxy's mutex."""

  planned_binding: Optional[AppsClientBinding]
  state: ProxyState = ProxyState.UNMATERIALIZED
  history: list[ProxyState] = dataclasses.field(
      default_factory=lambda: [ProxyState.UNMATERIALIZED]
  )
  latch: Optional[concurrent.futures.Future[None]] = None
  close_latch: Optional[concurrent.futures.Future[None]] = None
  runtime: Optional[AdmittedMcpToolset] = None
  constructions: int = 0
  closes: int = 0
  failure: Optional[BaseException] = None


class HostBoundMcpToolset(Sealable, BaseToolset):
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

  _writable = BASE_TOOLSET_STATE

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
    self._use_invocation_cache = False
    self._spec = spec
    self._toolset_id = toolset_id
    self._binding_generation = binding_generation
    self._planned_routing = _apps_routing
    self._materialize_hook = _materialize_hook
    self._mutex = threading.Lock()
    self._gate = AdmissionGate()
    self._life = _Lifecycle(planned_binding=_apps_client_binding)
    # Configuration is frozen from here on; `_life` changes under `_mutex`.
    self._seal()

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
      state: ProxyState = self._life.state
    return state

  @property
  def history(self) -> tuple[ProxyState, ...]:
    """Every state this proxy has been in, in order."""
    with self._mutex:
      return tuple(self._life.history)

  @property
  def profile_bound(self) -> bool:
    """Whether the proxy is (or will materialize) profile-bound."""
    return self._life.planned_binding is not None

  @property
  def construction_count(self) -> int:
    """How many runtime toolsets this proxy constructed (0 or 1)."""
    return int(self._life.constructions)

  @property
  def close_count(self) -> int:
    """How many runtime toolsets this proxy closed (0 or 1)."""
    return int(self._life.closes)

  @property
  def inflight(self) -> int:
    """Admitted operations not yet finished."""
    return self._gate.inflight

  @property
  def runtime(self) -> Optional[AdmittedMcpToolset]:
    """The sealed runtime toolset, once constructed (diagnostics only)."""
    runtime: Optional[AdmittedMcpToolset] = self._life.runtime
    return runtime

  # State machine.

  def _transition_locked(self, target: ProxyState) -> None:
    current: ProxyState = self._life.state
    if target not in ALLOWED_TRANSITIONS[current]:
      raise IllegalTransitionError(self.toolset_id, current.value, target.value)
    self._life.state = target
    self._life.history.append(target)

  def _transition(self, target: ProxyState) -> None:
    """Moves to `target` if the state machine allows it, else raises."""
    with self._mutex:
      self._transition_locked(target)

  def _closed_error(self) -> ToolsetClosedError:
    return ToolsetClosedError(
        self.toolset_id, self.binding_generation, cause=self._life.failure
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
      state: ProxyState = self._life.state
      if state in (ProxyState.REVOKING, ProxyState.CLOSED):
        raise self._closed_error()
      if self._life.planned_binding is not None:
        raise BindingConflictError(
            f'Toolset {self.toolset_id!r} is already bound to a profile'
        )
      if state is not ProxyState.UNMATERIALIZED:
        raise IllegalTransitionError(
            self.toolset_id, state.value, ProxyState.PROFILE_BOUND.value
        )
      self._life.planned_binding = binding

  async def materialize(self) -> AdmittedMcpToolset:
    """Constructs the runtime toolset once; concurrent callers share it.

    Returns:
      The sealed runtime toolset.

    Raises:
      ToolsetClosedError: The proxy is revoking or closed (typed
        `StaleGenerationError` if superseded).
    """
    while True:
      with self._mutex:
        state: ProxyState = self._life.state
        if state in _SERVING:
          assert self._life.runtime is not None
          return self._life.runtime
        if state in (ProxyState.REVOKING, ProxyState.CLOSED):
          self._gate.check()
          raise self._closed_error()
        if state is ProxyState.MATERIALIZING:
          assert self._life.latch is not None
          latch: concurrent.futures.Future[None] = self._life.latch
          owner = False
        else:
          self._transition_locked(ProxyState.MATERIALIZING)
          latch = concurrent.futures.Future()
          self._life.latch = latch
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
        built = self.spec.build(
            _apps_client_binding=self._life.planned_binding,
            _toolset_class=functools.partial(  # type: ignore[arg-type]
                AdmittedMcpToolset,
                admission=self._gate,
                routing_factory=self._planned_routing,
            ),
        )
        assert isinstance(built, AdmittedMcpToolset)
        runtime = built
      except BaseException as error:
        with self._mutex:
          self._life.failure = error
          self._transition_locked(ProxyState.UNMATERIALIZED)
        latch.set_result(None)
        raise
      with self._mutex:
        self._life.runtime = runtime
        self._life.constructions = self._life.constructions + 1
        self._transition_locked(
            ProxyState.PROFILE_BOUND
            if self._life.planned_binding is not None
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
      if self._life.state not in _SERVING:
        return False
      self._transition_locked(ProxyState.REVOKING)
      self._life.close_latch = concurrent.futures.Future()
      self._gate.shut(refusal or self._closed_error)
      return True

  async def _drain(self, timeout: float = DEFAULT_DRAIN_TIMEOUT) -> DrainResult:
    """Registry-only: drains (then cancels) admitted work, with a bound."""
    return await self._gate.drain(timeout)

  async def _close_runtime(self) -> None:
    """Registry-only: closes the runtime toolset's connections, once."""
    with self._mutex:
      if self._life.state is not ProxyState.REVOKING or self._life.closes:
        return
      runtime: Optional[AdmittedMcpToolset] = self._life.runtime
      self._life.closes = self._life.closes + 1
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
      state: ProxyState = self._life.state
      runtime: Optional[AdmittedMcpToolset] = self._life.runtime
    if state not in _SERVING or runtime is None:
      return False
    await runtime.close()
    return True

  def _finish_close(self) -> None:
    """Registry-only: `REVOKING -> CLOSED`; releases waiting closers."""
    with self._mutex:
      if self._life.state is ProxyState.CLOSED:
        return
      self._transition_locked(ProxyState.CLOSED)
      latch: Optional[concurrent.futures.Future[None]] = self._life.close_latch
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
        state: ProxyState = self._life.state
        if state is ProxyState.CLOSED:
          return False
        if state is ProxyState.UNMATERIALIZED:
          self._gate.shut(refusal or self._closed_error)
          self._transition_locked(ProxyState.CLOSED)
          return True
        if state is ProxyState.MATERIALIZING:
          waiter: Optional[concurrent.futures.Future[None]] = self._life.latch
        elif state is ProxyState.REVOKING:
          waiter = self._life.close_latch
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

  async def _serving(self) -> AdmittedMcpToolset:
    runtime = await self.materialize()
    self._gate.check()
    return runtime

  @override
  async def get_tools(
      self, readonly_context: Optional[ReadonlyContext] = None
  ) -> list[BaseTool]:
    """The runtime toolset's filtered, prefixed tools (they enter this gate)."""
    runtime = await self._serving()
    async with self._gate.operation():
      tools = await runtime.get_tools_with_prefix(readonly_context)
    return tools

  async def read_resource(
      self, name: str, readonly_context: Optional[ReadonlyContext] = None
  ) -> Any:
    """`McpToolset.read_resource` on this generation's connection."""
    runtime = await self._serving()
    async with self._gate.operation():
      with on_host_path():
        return await runtime.read_resource(name, readonly_context)

  async def read_resource_by_uri(
      self, uri: str, readonly_context: Optional[ReadonlyContext] = None
  ) -> list[Any]:
    """`McpToolset.read_resource_by_uri` on this generation's connection."""
    runtime = await self._serving()
    async with self._gate.operation():
      with on_host_path():
        return await runtime.read_resource_by_uri(uri, readonly_context)

  async def list_resources(
      self, readonly_context: Optional[ReadonlyContext] = None
  ) -> list[str]:
    """`McpToolset.list_resources` on this generation's connection."""
    runtime = await self._serving()
    async with self._gate.operation():
      with on_host_path():
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
      return await runtime.call_tool(name, arguments, readonly_context)

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
