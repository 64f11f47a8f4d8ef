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

"""Step 0 of the delivery stack: ADK's MCP client on SDK 2.x (S0-SDK-01..04).

The pinned ADK already admits `mcp>=1.24,<3` and dumps results with
`by_alias=True`; the Apps host requires `mcp>=2.3,<3` (the `mcpapps` extra).
These tests pin what the rest of the series stands on, against the
connection-stateful conformance server over stdio.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from typing import Any

from google.adk.dependencies import _mcp
from google.adk.tools.mcp_tool import McpToolset
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.adk.tools.mcp_tool.mcp_session_manager import MCPSessionManager
from google.adk.tools.mcp_tool.mcp_tool import _dump_mcp_model
from google.adk.tools.mcp_tool.mcp_tool import McpTool
from mcp import ClientSession
from mcp import types
from mcp.client.stdio import stdio_client
from mcp_apps_conformance_server import names
from packaging.version import Version
import pytest

pytestmark = pytest.mark.integration

ADK_MCP_CLIENT_MODULES = (
    'google.adk.tools.mcp_tool.mcp_session_manager',
    'google.adk.tools.mcp_tool.session_context',
    'google.adk.tools.mcp_tool.mcp_tool',
    'google.adk.tools.mcp_tool.mcp_toolset',
    'google.adk.mcp_apps.catalog.listing',
    'google.adk.mcp_apps.catalog.app_catalog',
    'google.adk.mcp_apps.projection',
)


@pytest.mark.conformance('S0-SDK-01')
def test_adk_mcp_client_modules_run_on_sdk_v2():
  """S0-SDK-01: the Apps host's SDK floor, and every client module on it."""
  assert Version(importlib.metadata.version('mcp')) >= Version('2.3')
  assert _mcp.IS_MCP_SDK_V2
  for module in ADK_MCP_CLIENT_MODULES:
    importlib.import_module(module)


async def _raw_ui_result(mcp_apps: Any, is_error: bool) -> Any:
  async with stdio_client(mcp_apps.stdio_parameters()) as (read, write):
    async with ClientSession(read, write) as session:
      await session.initialize()
      return await session.call_tool(
          names.UI_RESULT, {'is_error': is_error, 'label': 'dump'}
      )


@pytest.mark.conformance('S0-SDK-02')
async def test_call_tool_result_dump_is_aliased(mcp_apps):
  """S0-SDK-02: `isError`, `structuredContent` and meta, before projection.

  Upstream's dump restores the `_meta` key to `meta` (its 1.x spelling); the
  model projection removes both spellings.
  """
  dumped = _dump_mcp_model(await _raw_ui_result(mcp_apps, is_error=True))
  assert dumped['isError'] is True
  assert 'is_error' not in dumped
  assert dumped['structuredContent'] == {'label': 'dump', 'forView': True}
  assert dumped['meta'] == {names.META_PREFIX + 'private': {'label': 'dump'}}


@pytest.mark.conformance('S0-SDK-02', 'S0-SDK-03')
@pytest.mark.parametrize('is_error', [True, False])
async def test_persisted_error_flag_and_detector_agree(mcp_apps, is_error):
  """S0-SDK-02/03: the persisted dump and the telemetry detector together.

  The result is produced by ADK's own `McpTool` call path; changing only the
  dump's spelling or only the detector's key breaks this test.
  """
  toolset = McpToolset(
      connection_params=StdioConnectionParams(
          server_params=mcp_apps.stdio_parameters(), timeout=30.0
      )
  )
  try:
    tools = {t.name: t for t in await toolset.get_tools()}
    tool = tools[names.UI_RESULT]
    assert isinstance(tool, McpTool)

    class _Context:
      function_call_id = 'call-1'
      state: dict[str, Any] = {}
      widgets: list[Any] = []

      def render_ui_widget(self, widget: Any) -> None:
        self.widgets.append(widget)

    context: Any = _Context()
    result = await tool._run_async_impl(  # pylint: disable=protected-access
        args={'is_error': is_error, 'label': 'detector'},
        tool_context=context,
        credential=None,
    )
    assert result['isError'] is is_error
    assert 'is_error' not in result
    expected = 'MCP_TOOL_ERROR' if is_error else None
    assert tool._detect_error_in_response(result) == expected  # pylint: disable=protected-access
  finally:
    await toolset.close()


@pytest.mark.conformance('S0-SDK-04')
@pytest.mark.parametrize(
    ('persisted', 'expected'),
    [
        ({'content': [], 'is_error': True}, 'MCP_TOOL_ERROR'),
        ({'content': [], 'is_error': False}, None),
        (
            {'content': [], 'isError': True, 'structuredContent': {}},
            'MCP_TOOL_ERROR',
        ),
        ({'content': []}, None),
    ],
    ids=['v1-error', 'v1-success', 'v2-error', 'no-flag'],
)
def test_detector_reads_pre_migration_dumps(mcp_apps, persisted, expected):
  """S0-SDK-04: events persisted with the v1 dump shape (`is_error`).

  The detector reads a persisted dict, so no connection is opened.
  """
  tool = McpTool(
      mcp_tool=types.Tool(name='t', input_schema={'type': 'object'}),
      mcp_session_manager=MCPSessionManager(
          connection_params=StdioConnectionParams(
              server_params=mcp_apps.stdio_parameters()
          )
      ),
  )
  assert tool._detect_error_in_response(persisted) == expected  # pylint: disable=protected-access
