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

"""The advertisement seam: `AppsClientBinding` and the hunks that carry it.

The value object's validation and immutability; the private parameter on
`McpToolset`, `MCPSessionManager` and `SessionContext`; pool and `tools/list`
cache keys; the SDK 1.x refusal; and inertness without a binding. Sessions
here are real `ClientSession`s against an in-process `MCPServer` that reports
the capabilities it received; the wire-level cases against the conformance
server are in `tests/integration/mcp_apps/test_mcp_apps_advertisement.py`.
"""

from __future__ import annotations

import inspect
import pickle
from typing import Any

from google.adk.dependencies import _mcp
from google.adk.mcp_apps.binding import client_extensions
from google.adk.mcp_apps.binding.client_extensions import AppsClientBinding
from google.adk.mcp_apps.binding.client_extensions import ClientExtensionsError
from google.adk.mcp_apps.binding.client_extensions import ClientExtensionsUnsupportedError
from google.adk.mcp_apps.errors import McpAppsError
from google.adk.mcp_apps.profile.capabilities import EXTENSION_ID
from google.adk.mcp_apps.profile.capabilities import MCP_APP_MIME_TYPE
from google.adk.tools.mcp_tool import McpToolset
from google.adk.tools.mcp_tool import session_context as session_context_module
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.adk.tools.mcp_tool import StreamableHTTPConnectionParams
from google.adk.tools.mcp_tool.mcp_session_manager import MCPSessionManager
from google.adk.tools.mcp_tool.session_context import SessionContext
from mcp import ClientSession
from mcp import StdioServerParameters
from mcp.client import advertise
from mcp.client._memory import InMemoryTransport
from mcp.client.extension import ClientExtension
from mcp.client.extension import NotificationBinding
from mcp.server import apps as sdk_apps
from mcp.server.mcpserver import Context
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel
import pytest

# pylint: disable=protected-access


APPS_SETTINGS = {'mimeTypes': [MCP_APP_MIME_TYPE]}
HTTP = StreamableHTTPConnectionParams(url='http://127.0.0.1:9/mcp')
STDIO = StdioConnectionParams(
    server_params=StdioServerParameters(command='true'), timeout=5.0
)


async def _sampling(*args: Any, **kwargs: Any) -> Any:
  raise AssertionError('never called')


async def _elicitation(*args: Any, **kwargs: Any) -> Any:
  raise AssertionError('never called')


def _reporting_server() -> MCPServer:
  """An in-process server whose `caps` tool reports the client's ad."""
  server = MCPServer('caps')

  @server.tool()
  def caps(ctx: Context) -> dict[str, Any]:
    seen = ctx.client_capabilities
    return {
        'capabilities': (
            seen.model_dump(by_alias=True, mode='json', exclude_none=True)
            if seen is not None
            else None
        ),
        'protocolVersion': ctx.request_context.protocol_version,
    }

  del caps
  return server


async def _advertised(
    binding: AppsClientBinding | None, **callbacks: Any
) -> dict[str, Any]:
  """What a real server sees from a `SessionContext` built with these."""
  context = SessionContext(
      InMemoryTransport(_reporting_server()),
      timeout=10.0,
      sse_read_timeout=None,
      is_stdio=True,
      _apps_client_binding=binding,
      **callbacks,
  )
  try:
    session = await context.start()
    result = await session.call_tool('caps', {})
    assert not result.is_error, result
    assert result.structured_content is not None
    return result.structured_content
  finally:
    await context.close()


# --- The value object --------------------------------------------------------


def test_constants_are_the_sdk_spellings():
  assert EXTENSION_ID == sdk_apps.EXTENSION_ID
  assert MCP_APP_MIME_TYPE == sdk_apps.APP_MIME_TYPE


def test_for_mcp_apps_is_the_exact_settings_map():
  binding = AppsClientBinding.for_mcp_apps()
  assert binding.extensions == {EXTENSION_ID: APPS_SETTINGS}
  assert binding.app_safe is True
  assert binding.advertises_apps


def test_folding_sdk_advertise_matches_for_mcp_apps():
  folded = AppsClientBinding.from_client_extensions(
      [advertise(EXTENSION_ID, APPS_SETTINGS)]
  )
  assert folded == AppsClientBinding.for_mcp_apps()
  assert hash(folded) == hash(AppsClientBinding.for_mcp_apps())


def test_extensions_are_copied_in_and_out():
  settings = {'mimeTypes': [MCP_APP_MIME_TYPE]}
  binding = AppsClientBinding({EXTENSION_ID: settings})
  settings['mimeTypes'].append('text/plain')
  handed_out = binding.extensions
  handed_out[EXTENSION_ID]['mimeTypes'].clear()
  assert binding.extensions == {EXTENSION_ID: APPS_SETTINGS}


def test_binding_is_immutable():
  binding = AppsClientBinding.for_mcp_apps()
  with pytest.raises(AttributeError):
    binding.app_safe = False  # type: ignore[misc]
  with pytest.raises(AttributeError):
    binding._app_safe = False  # type: ignore[misc]
  with pytest.raises(AttributeError):
    del binding._extensions_json
  assert binding.app_safe is True


def test_binding_pickles_to_an_equal_binding():
  binding = AppsClientBinding.for_mcp_apps(app_safe=False)
  restored = pickle.loads(pickle.dumps(binding))
  assert restored == binding and restored.app_safe is False


def test_fingerprint_covers_settings_and_app_safe():
  base = AppsClientBinding.for_mcp_apps()
  assert base.fingerprint == AppsClientBinding.for_mcp_apps().fingerprint
  others = [
      AppsClientBinding.for_mcp_apps(app_safe=False),
      AppsClientBinding.for_mcp_apps([MCP_APP_MIME_TYPE, 'text/html']),
      AppsClientBinding({}),
  ]
  assert len({base.fingerprint, *(o.fingerprint for o in others)}) == 4


@pytest.mark.parametrize(
    'settings',
    [
        {},
        {'mimeTypes': []},
        {'mimeTypes': MCP_APP_MIME_TYPE},
        {'mimeTypes': [MCP_APP_MIME_TYPE, 7]},
        {'mimeTypes': ['']},
    ],
    ids=['missing', 'empty', 'not-a-list', 'non-string', 'empty-string'],
)
def test_apps_settings_need_mime_types(settings):
  """P2-ADV-03's shape at this layer: no `mimeTypes`, no binding."""
  with pytest.raises(ClientExtensionsError, match='mimeTypes'):
    AppsClientBinding({EXTENSION_ID: settings})


@pytest.mark.parametrize(
    'extensions',
    [
        {'no-prefix': {}},
        {'io.example/': {}},
        {7: {}},
        {'io.example/x': ['not', 'an', 'object']},
        {'io.example/x': {'n': float('nan')}},
        {'io.example/x': {'n': object()}},
        [('io.example/x', {})],
    ],
    ids=[
        'no-prefix',
        'empty-name',
        'non-string-id',
        'settings-not-object',
        'nan',
        'not-json',
        'not-a-mapping',
    ],
)
def test_malformed_maps_are_refused(extensions):
  with pytest.raises(ClientExtensionsError) as raised:
    AppsClientBinding(extensions)
  assert isinstance(raised.value, McpAppsError)


def test_other_extensions_ride_along():
  binding = AppsClientBinding(
      {EXTENSION_ID: APPS_SETTINGS, 'com.example/trace': {'v': 1}}
  )
  assert set(binding.extensions) == {EXTENSION_ID, 'com.example/trace'}


def test_fold_refuses_duplicates_and_behavioural_extensions():
  with pytest.raises(ClientExtensionsError, match='more than once'):
    AppsClientBinding.from_client_extensions([
        advertise(EXTENSION_ID, APPS_SETTINGS),
        advertise(EXTENSION_ID, APPS_SETTINGS),
    ])

  class _Params(BaseModel):
    pass

  async def _handler(params: _Params) -> None:
    del params

  class _Observing(ClientExtension):
    identifier = 'com.example/observing'

    def notifications(self) -> list[NotificationBinding[Any]]:
      return [
          NotificationBinding(
              method='com.example/tick', params_type=_Params, handler=_handler
          )
      ]

  with pytest.raises(ClientExtensionsError, match='do not wire'):
    AppsClientBinding.from_client_extensions([_Observing()])


# --- The private parameter ---------------------------------------------------


@pytest.mark.parametrize(
    'owner', [McpToolset, MCPSessionManager, SessionContext]
)
def test_parameter_is_private_and_keyword_only(owner):
  parameter = inspect.signature(owner.__init__).parameters[
      '_apps_client_binding'
  ]
  assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
  assert parameter.default is None
  assert 'binding registry only' in ' '.join(
      inspect.getdoc(owner.__init__).split()
  )


def test_mcp_toolset_public_signature_gains_nothing_else():
  public = [
      name
      for name in inspect.signature(McpToolset.__init__).parameters
      if not name.startswith('_') and name != 'self'
  ]
  # PR 1 adds `tool_listing_bounds`; this seam adds no public parameter.
  assert public[-1] == 'tool_listing_bounds'
  assert 'extensions' not in ' '.join(public)


def test_session_manager_refuses_other_values():
  with pytest.raises(TypeError, match='AppsClientBinding'):
    MCPSessionManager(HTTP, _apps_client_binding={EXTENSION_ID: {}})


def test_from_config_never_binds():
  toolset = McpToolset.from_config(
      _tool_args_config(), config_abs_path='/dev/null'
  )
  assert toolset._mcp_session_manager._apps_client_binding is None


def _tool_args_config() -> Any:
  from google.adk.tools.tool_configs import ToolArgsConfig

  return ToolArgsConfig.model_validate(
      {'streamable_http_connection_params': {'url': HTTP.url}}
  )


# --- MCP SDK 1.x -------------------------------------------------------------


def test_sdk_v1_refuses_a_binding_at_construction(monkeypatch):
  binding = AppsClientBinding.for_mcp_apps()
  monkeypatch.setattr(_mcp, 'IS_MCP_SDK_V2', False)
  with pytest.raises(ClientExtensionsUnsupportedError, match='mcp>=2.3'):
    AppsClientBinding.for_mcp_apps()
  with pytest.raises(ClientExtensionsUnsupportedError):
    McpToolset(connection_params=HTTP, _apps_client_binding=binding)
  with pytest.raises(ClientExtensionsUnsupportedError):
    MCPSessionManager(STDIO, _apps_client_binding=binding)
  with pytest.raises(ClientExtensionsUnsupportedError):
    SessionContext(
        InMemoryTransport(_reporting_server()),
        timeout=1.0,
        sse_read_timeout=None,
        _apps_client_binding=binding,
    )
  assert isinstance(ClientExtensionsUnsupportedError(), McpAppsError)


def test_sdk_v1_model_only_toolset_is_unaffected(monkeypatch):
  monkeypatch.setattr(_mcp, 'IS_MCP_SDK_V2', False)
  toolset = McpToolset(connection_params=HTTP, sampling_callback=_sampling)
  manager = toolset._mcp_session_manager
  assert manager._apps_client_binding is None
  assert manager._generate_session_key(None) == 'session_no_headers'


# --- Pool and tools/list cache keys ------------------------------------------


@pytest.mark.parametrize('params', [HTTP, STDIO], ids=['http', 'stdio'])
def test_unbound_keys_are_upstreams(params):
  manager = MCPSessionManager(params)
  if params is STDIO:
    assert manager._generate_session_key(None) == 'stdio_session'
    return
  assert manager._generate_session_key(None) == 'session_no_headers'
  assert manager._generate_session_key({'a': 'b'}).startswith('session_')
  assert len(manager._generate_session_key({'a': 'b'})) == len('session_') + 32


@pytest.mark.parametrize('params', [HTTP, STDIO], ids=['http', 'stdio'])
def test_bound_pool_keys_never_match_unbound_ones(params):
  plain = MCPSessionManager(params)
  apps = MCPSessionManager(
      params, _apps_client_binding=AppsClientBinding.for_mcp_apps()
  )
  apps_unsafe = MCPSessionManager(
      params,
      _apps_client_binding=AppsClientBinding.for_mcp_apps(app_safe=False),
  )
  for headers in (None, {'Authorization': 'Bearer x'}):
    keys = {m._session_key_for(headers) for m in (plain, apps, apps_unsafe)}
    assert len(keys) == 3
    bound = apps._session_key_for(headers)
    unbound = plain._session_key_for(headers)
    scope = client_extensions.pool_key_scope(apps._apps_client_binding)
    assert bound == scope + unbound and scope.startswith('apps_')


def test_tool_list_cache_keys_differ_with_the_binding():
  plain = McpToolset(connection_params=HTTP, tool_list_cache_ttl_seconds=60)
  apps = McpToolset(
      connection_params=HTTP,
      tool_list_cache_ttl_seconds=60,
      _apps_client_binding=AppsClientBinding.for_mcp_apps(),
  )
  for headers in ({}, {'x-tenant': 't1'}):
    assert plain._tool_list_cache_key(headers) != apps._tool_list_cache_key(
        headers
    )
  assert plain._mcp_session_manager is not apps._mcp_session_manager
  assert plain._tool_list_cache is not apps._tool_list_cache


def test_pickled_manager_keeps_its_binding():
  binding = AppsClientBinding.for_mcp_apps()
  manager = MCPSessionManager(HTTP, _apps_client_binding=binding)
  restored = pickle.loads(pickle.dumps(manager))
  assert restored._apps_client_binding == binding
  assert restored._session_key_for(None) == manager._session_key_for(None)


# --- What the ClientSession is built with ------------------------------------


class _RecordingClientSession(ClientSession):
  """The real session, recording the keyword arguments it was built with."""

  built: list[dict[str, Any]] = []

  def __init__(self, *args: Any, **kwargs: Any) -> None:
    type(self).built.append(dict(kwargs))
    super().__init__(*args, **kwargs)


@pytest.fixture
def recorded(monkeypatch) -> list[dict[str, Any]]:
  built: list[dict[str, Any]] = []
  monkeypatch.setattr(_RecordingClientSession, 'built', built)
  monkeypatch.setattr(
      session_context_module, 'ClientSession', _RecordingClientSession
  )
  return built


async def test_without_a_binding_the_session_is_built_as_upstream(recorded):
  seen = await _advertised(
      None, sampling_callback=_sampling, elicitation_callback=_elicitation
  )
  assert set(recorded[0]) == {
      'read_timeout_seconds',
      'sampling_callback',
      'sampling_capabilities',
      'elicitation_callback',
      'client_info',
  }
  assert recorded[0]['sampling_callback'] is _sampling
  assert recorded[0]['elicitation_callback'] is _elicitation
  assert 'extensions' not in seen['capabilities']
  assert set(seen['capabilities']) == {'sampling', 'elicitation'}


async def test_app_safe_binding_drops_callbacks_and_advertises(recorded):
  seen = await _advertised(
      AppsClientBinding.for_mcp_apps(),
      sampling_callback=_sampling,
      elicitation_callback=_elicitation,
  )
  assert recorded[0]['sampling_callback'] is None
  assert recorded[0]['sampling_capabilities'] is None
  assert recorded[0]['elicitation_callback'] is None
  assert 'list_roots_callback' not in recorded[0]
  assert seen['capabilities'] == {'extensions': {EXTENSION_ID: APPS_SETTINGS}}


async def test_non_app_safe_binding_keeps_callbacks():
  seen = await _advertised(
      AppsClientBinding.for_mcp_apps(app_safe=False),
      sampling_callback=_sampling,
      elicitation_callback=_elicitation,
  )
  assert set(seen['capabilities']) == {'sampling', 'elicitation', 'extensions'}


async def test_empty_map_is_app_safe_without_an_extensions_key(recorded):
  seen = await _advertised(AppsClientBinding({}), sampling_callback=_sampling)
  assert 'extensions' not in recorded[0]
  assert seen['capabilities'] == {}


async def test_modern_era_stamps_the_same_map(monkeypatch):
  monkeypatch.setenv('ADK_ENABLE_MCP_MODERN_PROTOCOL', '1')
  seen = await _advertised(
      AppsClientBinding.for_mcp_apps(), sampling_callback=_sampling
  )
  assert seen['protocolVersion'] == '2026-07-28'
  assert seen['capabilities'] == {'extensions': {EXTENSION_ID: APPS_SETTINGS}}
