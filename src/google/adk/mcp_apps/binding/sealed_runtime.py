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

"""The runtime `McpToolset` a registry proxy builds, sealed and admitted.

`AdmittedMcpToolset` extends `McpToolset` through its protected hooks only:
`_create_session_manager` builds an `AdmittedSessionManager` (no connection
opens once the binding generation is retired), `_create_tool` builds tools
that enter the generation's admission gate, and the toolset's Apps routing
is a constructor argument. Once constructed, neither the toolset nor its
session manager lets an attribute be rebound (`ConfigurationFrozenError`).

Example:

  runtime = spec.build(
      _toolset_class=functools.partial(AdmittedMcpToolset, admission=gate)
  )
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
import contextlib
import contextvars
import functools
from typing import Any
from typing import ClassVar
from typing import Optional
from typing import TYPE_CHECKING
from typing import TypeVar

from . import loop_routing
from ...agents.readonly_context import ReadonlyContext
from ...tools.base_tool import BaseTool
from ...tools.base_toolset import BaseToolset
from ...tools.mcp_tool.mcp_session_manager import MCPSessionManager
from ...tools.mcp_tool.mcp_tool import _merge_auth_and_provider_headers
from ...tools.mcp_tool.mcp_tool import McpTool
from ...tools.mcp_tool.mcp_toolset import McpToolset
from ..affinity.admitted_tool import AdmittedMcpTool
from ..affinity.errors import StaleToolHandleError
from ..affinity.routing import AppSafeToolRouting
from ..facades.callback_context import ReadonlyCallbackContext
from ..facades.mcp_callbacks import governed_headers
from .admission import AdmissionGate
from .errors import ConfigurationFrozenError

if TYPE_CHECKING:
  from ..affinity.tool_handles import TwoClassCatalog
  from .client_extensions import AppsClientBinding

_T = TypeVar('_T')

RoutingFactory = Callable[
    ['AppsClientBinding', Callable[[], None]], AppSafeToolRouting
]
"""Builds a bound runtime's app-safe routing from the client binding and the
generation's admission check (the registry builds it from `affinity`)."""

_SEALED = '_adk_apps_sealed'


def _header_set(headers: Optional[dict[str, str]]) -> set[tuple[str, str]]:
  """Headers as HTTP compares them: names case-insensitively."""
  return {(str(name).lower(), str(v)) for name, v in (headers or {}).items()}


class _ListingCacheProbe(BaseToolset):
  """A bare `BaseToolset`: which private state it keeps for itself."""

  async def get_tools(
      self, readonly_context: Optional[ReadonlyContext] = None
  ) -> list[BaseTool]:
    del readonly_context
    return []


BASE_TOOLSET_STATE: frozenset[str] = frozenset(
    name for name in vars(_ListingCacheProbe()) if name.startswith('_')
)
"""`BaseToolset`'s own private state (its per-invocation listing cache),
which it rewrites while serving and a seal therefore leaves writable."""


class Sealable:
  """Refuses, once sealed, to rebind or delete any attribute set before.

  Sealing freezes whatever construction set, without naming it: the
  subclass seals at the end of its `__init__`. `_writable` names state the
  class itself keeps rewriting.
  """

  _writable: ClassVar[frozenset[str]] = frozenset()

  def _seal(self) -> None:
    object.__setattr__(self, _SEALED, frozenset())
    object.__setattr__(self, _SEALED, frozenset(vars(self)) - self._writable)

  def _refuse(self, name: str) -> None:
    frozen: frozenset[str] = vars(self).get(_SEALED, frozenset())
    if name in frozen:
      raise ConfigurationFrozenError(type(self).__name__, name)

  def __setattr__(self, name: str, value: Any) -> None:
    self._refuse(name)
    super().__setattr__(name, value)

  def __delattr__(self, name: str) -> None:
    self._refuse(name)
    super().__delattr__(name)

  def __setstate__(self, state: dict[str, Any]) -> None:
    # Unpickling or copying restores the seal after the class's own restore.
    state = dict(state)
    frozen = state.pop(_SEALED, None)
    restore = getattr(super(), '__setstate__', None)
    if restore is not None:
      restore(state)
    else:
      vars(self).update(state)
    if frozen is not None:
      object.__setattr__(self, _SEALED, frozen)


class AdmittedSessionManager(Sealable, MCPSessionManager):
  """The runtime's session manager: sealed, and connecting only if admitted."""

  def __init__(self, *, admission: AdmissionGate, **kwargs: Any):
    """Builds the manager.

    Args:
      admission: The binding generation's gate; a retired generation never
        opens (or reopens) a connection, whoever holds this manager.
      **kwargs: `MCPSessionManager`'s constructor arguments.
    """
    super().__init__(**kwargs)
    self._adk_apps_gate = admission
    self._adk_apps_binding: Optional[AppsClientBinding] = kwargs.get(
        '_apps_client_binding'
    )
    self._seal()

  async def create_session(
      self, headers: Optional[dict[str, str]] = None
  ) -> Any:
    gate = self._adk_apps_gate
    if loop_routing.is_routed(self._adk_apps_binding):
      # Admission is decided in the calling task (the one the drain tracks)
      # and re-validated, through the ticket, in the registry-loop task that
      # runs the pool access (which lands back here, unrouted).
      ticket = gate.ticket()
      return await loop_routing.create_session(
          self._routed_pool(),
          headers,
          admission=functools.partial(gate.adopt, ticket),
      )
    gate.check()
    return await super().create_session(headers)


_host_path: contextvars.ContextVar[bool] = contextvars.ContextVar(
    'adk_mcp_apps_host_path', default=False
)
"""Set while a proxy's host-internal method (not a model tool) runs."""


@contextlib.contextmanager
def on_host_path() -> Iterator[None]:
  """Marks the host's own calls and reads (not a model tool's)."""
  token = _host_path.set(True)
  try:
    yield
  finally:
    _host_path.reset(token)


class AdmittedMcpToolset(Sealable, McpToolset):
  """The runtime toolset a proxy constructs; sealed once constructed."""

  _writable = BASE_TOOLSET_STATE

  def __init__(
      self,
      *,
      admission: AdmissionGate,
      routing_factory: Optional[RoutingFactory] = None,
      **kwargs: Any,
  ) -> None:
    """Builds the runtime toolset.

    Args:
      admission: The binding generation's gate.
      routing_factory: Builds the app-safe routing of a bound runtime; then
        non-UI tools keep upstream's fully-callbacked connections and the
        UI-associated ones run on app-safe generations.
      **kwargs: `McpToolset`'s constructor arguments.
    """
    self._adk_apps_gate = admission
    binding = kwargs.get('_apps_client_binding')
    routing: Optional[AppSafeToolRouting] = None
    if routing_factory is not None and binding is not None:
      routing = routing_factory(binding, admission.check)
      kwargs['_apps_client_binding'] = None
      # Both classes list under the same (the profile's) bounds.
      kwargs['tool_listing_bounds'] = routing.bounds
    super().__init__(_apps_routing=routing, **kwargs)
    self._adk_apps_routing = routing
    self._seal()

  def _create_session_manager(self, **kwargs: Any) -> MCPSessionManager:
    return AdmittedSessionManager(admission=self._adk_apps_gate, **kwargs)

  def _create_tool(
      self, catalog: Optional[TwoClassCatalog], **kwargs: Any
  ) -> McpTool:
    routing = self._adk_apps_routing
    if catalog is not None and routing is not None:
      return routing.create_tool(
          catalog, admission=self._adk_apps_gate, discovery=self, **kwargs
      )
    return AdmittedMcpTool(admission=self._adk_apps_gate, **kwargs)

  async def discover_for_batch(
      self, readonly_context: ReadonlyContext
  ) -> TwoClassCatalog:
    """Both connection classes listed afresh, to admit one batch of calls.

    The app-safe class first, then this toolset's own class, both on the
    wire (the tool-list cache answers model catalogs, never an admission)
    and with the headers built once for the caller.

    Raises:
      StaleToolHandleError: The caller's headers (its credentials) changed
        while the two classes were listed.
      ToolListingError, GenerationInvalidatedError: A listing failed, was
        out of bounds, or its generation ended.
    """
    routing = self._adk_apps_routing
    assert routing is not None  # Only routed toolsets hand themselves out.
    headers = await self._build_headers(readonly_context)
    catalog = await routing.discover(
        readonly_context,
        headers,
        lambda: self._list_mcp_tools(
            readonly_context, headers, use_cache=False
        ),
    )
    if _header_set(await self._build_headers(readonly_context)) != (
        _header_set(headers)
    ):
      # '*': every tool the toolset listed.
      raise StaleToolHandleError(
          '*', 'the credentials changed while the tools were listed'
      )
    return catalog

  def forget_catalog(self) -> None:
    """Drops `BaseToolset`'s per-invocation catalog (a refused batch)."""
    self._cached_invocation_id = None
    self._cached_prefixed_tools = None

  async def _execute_with_session(
      self,
      coroutine_func: Callable[[Any], Awaitable[_T]],
      error_message: str,
      readonly_context: Optional[ReadonlyContext] = None,
      headers: Optional[dict[str, str]] = None,
  ) -> _T:
    routing = self._adk_apps_routing
    if routing is None or not _host_path.get():
      return await super()._execute_with_session(
          coroutine_func, error_message, readonly_context, headers
      )
    # The host's own calls and reads (bootstrap, app paths) of a bound
    # toolset run on the caller's app-safe generation, like UI tools.
    if headers is None:
      headers = await self._host_path_headers(readonly_context)
    result: _T = await routing.execute(
        readonly_context, headers, coroutine_func, error_message
    )
    return result

  async def read_resource_by_uri(
      self, uri: str, readonly_context: Optional[ReadonlyContext] = None
  ) -> list[Any]:
    """`McpToolset.read_resource_by_uri`; typed refusal on the host path.

    On the host path the read runs on the caller's app-safe generation and
    may receive a 2026-07-28 `InputRequiredResult`: one asking for input
    fails closed with `InputRequestRefusedError` (raised by the routing);
    a state-only round is not driven here (bootstrap drives those).
    """
    if self._adk_apps_routing is None or not _host_path.get():
      return await super().read_resource_by_uri(uri, readonly_context)
    result: Any = await self._execute_with_session(
        lambda session: session.read_resource(
            uri=uri, allow_input_required=True
        ),
        f'Failed to read resource {uri} from MCP server',
        readonly_context,
    )
    if not hasattr(result, 'contents'):
      raise RuntimeError(
          f'The read of {uri} needs further state-only rounds; only'
          ' bootstrap drives multi-round reads'
      )
    return list(result.contents)

  async def _host_path_headers(
      self, readonly_context: Optional[ReadonlyContext]
  ) -> dict[str, str]:
    """`_build_headers` of an app path: the provider runs governed.

    The header provider gets a `ReadonlyCallbackContext` of the caller's
    Session, restricted, and fails closed (`FacadeError`) before any
    generation is selected or opened; the auth headers keep the live
    context (core code: the existing auth-config path).
    """
    provider_headers: Optional[dict[str, str]] = None
    if self._header_provider and readonly_context:
      facade = ReadonlyCallbackContext.from_context(readonly_context)
      provider_headers = await governed_headers(self._header_provider, facade)
    return _merge_auth_and_provider_headers(
        auth_headers=self._get_auth_headers(readonly_context),
        provider_headers=provider_headers,
    )

  async def call_tool(
      self,
      name: str,
      arguments: Optional[dict[str, Any]] = None,
      readonly_context: Optional[ReadonlyContext] = None,
  ) -> Any:
    """Calls a tool by native name for the host (not the model)."""
    with on_host_path():
      return await self._execute_with_session(
          lambda session: session.call_tool(name, arguments or {}),
          f'Failed to call {name}',
          readonly_context,
      )
