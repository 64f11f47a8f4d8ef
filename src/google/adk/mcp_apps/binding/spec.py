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

"""`McpToolsetSpec`: what the registry needs to construct an `McpToolset`.

The registry never adopts a toolset somebody else built (an initialized
connection cannot change what it advertised); it builds each one from a
spec. A spec is lossless (every constructor argument but the registry's
own), connection-only and immutable; a spec from agent configuration passes
upstream's config-stdio gate. Design: docs/design/binding.md.

Example:

  spec = McpToolsetSpec(connection_params=params, tool_filter=('search',))
  toolset = spec.build()
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
import dataclasses
import hashlib
import inspect
import json
import sys
from typing import Any
from typing import Final
from typing import Literal
from typing import Optional
from typing import TextIO
from typing import TYPE_CHECKING
from typing import Union

from ...agents.readonly_context import ReadonlyContext
from ...auth.auth_credential import AuthCredential
from ...auth.auth_schemes import AuthScheme
from ...dependencies._mcp import ElicitationFnT
from ...dependencies._mcp import SamplingCapability
from ...dependencies._mcp import SamplingFnT
from ...dependencies._mcp import StdioServerParameters
from ...tools.base_toolset import ToolPredicate
from ...tools.mcp_tool import mcp_toolset as _mcp_toolset
from ...tools.mcp_tool.mcp_session_manager import SseConnectionParams
from ...tools.mcp_tool.mcp_session_manager import StdioConnectionParams
from ...tools.mcp_tool.mcp_session_manager import StreamableHTTPConnectionParams
from ...tools.mcp_tool.mcp_tool import ProgressCallbackFactory
from ...tools.mcp_tool.mcp_tool import ProgressFnT
from ..catalog.listing import ToolListingBounds
from .errors import McpToolsetSpecError

if TYPE_CHECKING:
  from ...tools.tool_configs import ToolArgsConfig
  from .client_extensions import AppsClientBinding

ConnectionParams = Union[
    StdioServerParameters,
    StdioConnectionParams,
    SseConnectionParams,
    StreamableHTTPConnectionParams,
]
"""Every connection-parameter type `McpToolset` accepts."""

HeaderProvider = Callable[
    [ReadonlyContext], Union[dict[str, str], Awaitable[dict[str, str]]]
]

ROOTS_SUPPORTED: Final = 'list_roots_callback' in (
    inspect.signature(_mcp_toolset.McpToolset.__init__).parameters
)
"""Whether the installed `McpToolset` accepts a roots callback (2.13: no)."""

_CONNECTION_TYPES = (
    StdioServerParameters,
    StdioConnectionParams,
    SseConnectionParams,
    StreamableHTTPConnectionParams,
)


def _frozen_copy(value: Any) -> Any:
  """A private deep copy of a pydantic model (or None)."""
  if value is None:
    return None
  return value.model_copy(deep=True)


@dataclasses.dataclass(frozen=True, kw_only=True)
class McpToolsetSpec:
  """A lossless, connection-only, immutable description of an `McpToolset`.

  Each attribute is the `McpToolset` constructor argument of the same name
  (see its docstring); `build()` passes them through unchanged.

  Attributes:
    connection_params: How to reach the server.
    tool_filter: Tool names (a tuple) or a `ToolPredicate`.
    tool_name_prefix: The model-facing name prefix.
    tool_list_cache_ttl_seconds: The `tools/list` cache TTL.
    errlog: The stdio server's stderr sink.
    auth_scheme: The auth scheme reference.
    auth_credential: The raw auth credential reference.
    credential_key: The credential-service key.
    require_confirmation: The confirmation setting (bool or predicate).
    header_provider: The dynamic-header provider.
    progress_callback: The progress callback or factory.
    use_mcp_resources: Whether to expose MCP resources to the agent.
    sampling_callback: The sampling callback.
    sampling_capabilities: The sampling capabilities.
    elicitation_callback: The elicitation callback.
    propagate_grounding_metadata: Grounding-metadata propagation.
    tool_listing_bounds: Bounds on one complete `tools/list` while the
      toolset is model-only; a profile-bound toolset lists, on both
      connection classes, under the profile's `limits.discovery` instead.
    origin: `"code"` (trusted) or `"config"` (gated by `from_config`).
  """

  connection_params: ConnectionParams
  tool_filter: Union[ToolPredicate, tuple[str, ...], None] = None
  tool_name_prefix: Optional[str] = None
  tool_list_cache_ttl_seconds: Optional[float] = None
  errlog: TextIO = dataclasses.field(default=sys.stderr, compare=False)
  auth_scheme: Optional[AuthScheme] = None
  auth_credential: Optional[AuthCredential] = None
  credential_key: Optional[str] = None
  require_confirmation: Union[bool, Callable[..., bool]] = False
  header_provider: Optional[HeaderProvider] = None
  progress_callback: Union[ProgressFnT, ProgressCallbackFactory, None] = None
  use_mcp_resources: Optional[bool] = False
  sampling_callback: Optional[SamplingFnT] = None
  sampling_capabilities: Optional[SamplingCapability] = None
  elicitation_callback: Optional[ElicitationFnT] = None
  propagate_grounding_metadata: bool = False
  tool_listing_bounds: Optional[ToolListingBounds] = None
  origin: Literal['code', 'config'] = 'code'

  def __post_init__(self) -> None:
    if not isinstance(self.connection_params, _CONNECTION_TYPES):
      raise McpToolsetSpecError(
          'connection_params must be one of'
          f' {", ".join(t.__name__ for t in _CONNECTION_TYPES)}, not'
          f' {type(self.connection_params).__name__}'
      )
    if self.origin not in ('code', 'config'):
      raise McpToolsetSpecError(f'unknown spec origin {self.origin!r}')
    ttl = self.tool_list_cache_ttl_seconds
    if ttl is not None and ttl <= 0:
      raise McpToolsetSpecError(
          f'tool_list_cache_ttl_seconds must be positive, got {ttl}'
      )
    tool_filter: Any = self.tool_filter
    if isinstance(tool_filter, (list, tuple)):
      if not all(isinstance(name, str) for name in tool_filter):
        raise McpToolsetSpecError('tool_filter names must be strings')
      tool_filter = tuple(tool_filter)
    elif tool_filter is not None and not isinstance(tool_filter, ToolPredicate):
      raise McpToolsetSpecError(
          'tool_filter must be a list of names or a ToolPredicate'
      )
    object.__setattr__(self, 'tool_filter', tool_filter)
    for name in ('connection_params', 'auth_scheme', 'auth_credential'):
      object.__setattr__(self, name, _frozen_copy(getattr(self, name)))
    if self.sampling_capabilities is not None:
      object.__setattr__(
          self,
          'sampling_capabilities',
          _frozen_copy(self.sampling_capabilities),
      )

  @property
  def is_stdio(self) -> bool:
    """Whether the spec launches a local stdio server process."""
    return isinstance(
        self.connection_params, (StdioServerParameters, StdioConnectionParams)
    )

  @property
  def server_id(self) -> str:
    """A stable, opaque id of the configured server.

    A digest over the transport and its address (URL, or command and
    arguments); headers, environment and credentials stay out of it, so it
    may be persisted in descriptors. Equal specs have equal ids in every
    process.
    """
    params: Any = self.connection_params
    if isinstance(params, StdioConnectionParams):
      params = params.server_params
    if isinstance(params, StdioServerParameters):
      identity: dict[str, Any] = {
          'transport': 'stdio',
          'command': params.command,
          'args': list(params.args),
      }
    else:
      identity = {'transport': type(params).__name__, 'url': params.url}
    material = json.dumps(identity, sort_keys=True, separators=(',', ':'))
    return 'mcp-server:' + hashlib.sha256(material.encode()).hexdigest()[:32]

  def to_kwargs(self) -> dict[str, Any]:
    """The `McpToolset` keyword arguments, as fresh copies.

    `McpToolsetSpec(**spec.to_kwargs()) == spec` and
    `McpToolset(**spec.to_kwargs())` builds the described toolset.
    """
    kwargs: dict[str, Any] = {}
    for field in dataclasses.fields(self):
      if field.name == 'origin':
        continue
      value = getattr(self, field.name)
      if field.name == 'tool_filter' and isinstance(value, tuple):
        value = list(value)
      elif field.name in (
          'connection_params',
          'auth_scheme',
          'auth_credential',
          'sampling_capabilities',
      ):
        value = _frozen_copy(value)
      kwargs[field.name] = value
    return kwargs

  def build(
      self,
      *,
      _apps_client_binding: Optional[AppsClientBinding] = None,
      _toolset_class: type[_mcp_toolset.McpToolset] = _mcp_toolset.McpToolset,
  ) -> _mcp_toolset.McpToolset:
    """Constructs the described toolset. Registry-internal.

    Args:
      _apps_client_binding: The registry's client binding (advertisement and
        app-safe callbacks), or None for a model-only toolset.
      _toolset_class: `McpToolset` or the registry's sealed subclass.

    Returns:
      A new toolset; nothing is connected until it is used.
    """
    return _toolset_class(
        **self.to_kwargs(), _apps_client_binding=_apps_client_binding
    )

  @classmethod
  def from_config(
      cls, config: ToolArgsConfig, config_abs_path: str
  ) -> McpToolsetSpec:
    """A spec from an agent-config `McpToolset` entry, behind the stdio gate.

    Mirrors `McpToolset.from_config`: a config naming a stdio server is
    refused unless the application allowed config stdio servers
    (`ADK_ALLOW_CONFIG_STDIO_MCP_SERVERS`, or
    `_set_allow_config_stdio_servers(True)`).

    Args:
      config: The tool's `args`.
      config_abs_path: The config file's path (unused, as upstream).

    Returns:
      The spec, with `origin="config"`.

    Raises:
      ValueError: A stdio server without the opt-in (upstream's gate), or
        no connection parameters.
    """
    del config_abs_path
    parsed = _mcp_toolset.McpToolsetConfig.model_validate(config.model_dump())
    if (
        parsed.stdio_server_params or parsed.stdio_connection_params
    ) and not _mcp_toolset.config_stdio_servers_allowed():
      raise McpToolsetSpecError(
          'Stdio MCP servers are not allowed in agent configs: the'
          " config-supplied 'command' is launched as a local process. Build"
          ' the McpToolsetSpec in Python code instead, use a remote'
          ' transport, or set'
          f' {_mcp_toolset.ALLOW_CONFIG_STDIO_SERVERS_ENV_VAR}=1 if this'
          ' application only loads agent configs it trusts.'
      )
    params: Optional[ConnectionParams] = (
        parsed.stdio_server_params
        or parsed.stdio_connection_params
        or parsed.sse_connection_params
        or parsed.streamable_http_connection_params
    )
    if params is None:
      raise McpToolsetSpecError('No connection params found in the config.')
    return cls(
        connection_params=params,
        tool_filter=(tuple(parsed.tool_filter) if parsed.tool_filter else None),
        tool_name_prefix=parsed.tool_name_prefix,
        tool_list_cache_ttl_seconds=parsed.tool_list_cache_ttl_seconds,
        auth_scheme=parsed.auth_scheme,
        auth_credential=parsed.auth_credential,
        credential_key=parsed.credential_key,
        use_mcp_resources=parsed.use_mcp_resources,
        origin='config',
    )

  def __deepcopy__(self, memo: dict[int, Any]) -> McpToolsetSpec:
    # Immutable; the copies it hands out are already private.
    return self

  def __copy__(self) -> McpToolsetSpec:
    return self
