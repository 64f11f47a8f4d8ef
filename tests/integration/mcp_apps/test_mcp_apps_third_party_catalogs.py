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

"""PR 1 catalogs and direct reads against published MCP App servers.

The ext-apps example packages pinned in `tests/integration/third_party_mcp_apps`
(`test_third_party_servers.py` pins down what they put on the wire with the
SDK alone) are driven here with ADK's own `McpToolset`:

* system-monitor `poll-system-stats` (`visibility: ["app"]`) is absent from
  the model catalog and from the LLM-facing tools, and present in the app
  catalog of the same connection (stdio and streamable HTTP);
* basic-vanillajs `get-time` (nested `_meta.ui.resourceUri` plus the
  deprecated flat `_meta["ui/resourceUri"]`) is recognized as a UI tool and
  is in both catalogs;
* map's View, read with `read_resource_by_uri`, comes back whole, with the
  `_meta.ui.csp` that only the read content carries.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
import contextlib
from typing import Any

from google.adk.mcp_apps.catalog.app_catalog import admit_app_call
from google.adk.mcp_apps.catalog.app_catalog import list_app_catalog
from google.adk.mcp_apps.catalog.app_catalog import list_toolset_app_catalog
from google.adk.tools.mcp_tool.mcp_session_manager import StdioConnectionParams
from google.adk.tools.mcp_tool.mcp_session_manager import StreamableHTTPConnectionParams
from google.adk.tools.mcp_tool.mcp_tool import McpTool
from google.adk.tools.mcp_tool.mcp_toolset import McpToolset
import pytest
from third_party_support import needs_node
from third_party_support import servers

APP_MIME_TYPE = "text/html;profile=mcp-app"
pytestmark = [
    pytest.mark.integration,
    needs_node,
    pytest.mark.usefixtures("third_party_packages", "no_leaked_descendants"),
]


@contextlib.asynccontextmanager
async def _toolset(name: str, transport: str) -> AsyncIterator[McpToolset]:
  """A directly constructed `McpToolset` on server `name`."""
  with contextlib.ExitStack() as stack:
    if transport == "stdio":
      params: Any = StdioConnectionParams(
          server_params=servers.stdio_params(name), timeout=20
      )
    else:
      running = stack.enter_context(servers.start_http(name))
      params = StreamableHTTPConnectionParams(url=running.url, timeout=20)
    toolset = McpToolset(connection_params=params)
    try:
      yield toolset
    finally:
      await toolset.close()


async def _session(toolset: McpToolset) -> Any:
  # pylint: disable-next=protected-access
  return await toolset._mcp_session_manager.create_session()


@pytest.mark.conformance("P1-VIS-03")
@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
async def test_system_monitor_poll_is_app_only_in_adk_catalogs(
    transport: str,
) -> None:
  """P1-VIS-03 on system-monitor: `poll-system-stats` is for the View only."""
  async with _toolset("system-monitor", transport) as toolset:
    model = {t.name for t in await toolset.get_tools()}
    app = {t.name for t in await list_toolset_app_catalog(toolset)}
    session = await _session(toolset)
    admitted = await admit_app_call(
        session,
        "poll-system-stats",
        view_server_id="system-monitor",
        target_server_id="system-monitor",
    )
  assert model == {"get-system-info"}
  assert app == {"get-system-info", "poll-system-stats"}
  assert admitted.meta == {"ui": {"visibility": ["app"]}}


async def test_basic_vanillajs_get_time_is_a_ui_tool_in_both_catalogs() -> None:
  """P1-VIS-01 on basic-vanillajs: `get-time` (nested + flat key) is a UI tool."""
  uri = "ui://get-time/mcp-app.html"
  async with _toolset("basic-vanillajs", "stdio") as toolset:
    (tool,) = await toolset.get_tools()
    session = await _session(toolset)
    app = [t.name for t in await list_app_catalog(session)]
    admitted = await admit_app_call(
        session,
        "get-time",
        view_server_id="basic-vanillajs",
        target_server_id="basic-vanillajs",
    )
    (view,) = await toolset.read_resource_by_uri(tool.mcp_app_resource_uri)
  assert isinstance(tool, McpTool)
  assert tool.name == "get-time"
  meta = tool.raw_mcp_tool.meta
  assert meta is not None
  assert meta["ui"]["resourceUri"] == uri
  assert meta["ui/resourceUri"] == uri
  assert tool.mcp_app_resource_uri == uri
  assert app == ["get-time"]
  assert admitted.name == "get-time"
  assert str(view.uri) == uri
  assert view.mime_type == APP_MIME_TYPE


@pytest.mark.conformance("P1-DRD-02")
async def test_map_read_by_uri_keeps_content_meta_csp() -> None:
  """P1-DRD-02 on map: the read content comes back whole, `_meta.ui.csp` kept."""
  uri = "ui://cesium-map/mcp-app.html"
  async with _toolset("map", "stdio") as toolset:
    tools = {t.name: t for t in await toolset.get_tools()}
    contents = await toolset.read_resource_by_uri(uri)
    session = await _session(toolset)
    listed = (await session.list_resources()).resources
  expected_domains = [
      "https://*.openstreetmap.org",
      "https://cesium.com",
      "https://*.cesium.com",
  ]
  assert tools["show-map"].mcp_app_resource_uri == uri
  assert tools["geocode"].mcp_app_resource_uri is None
  (content,) = contents
  assert str(content.uri) == uri
  assert content.mime_type == APP_MIME_TYPE
  assert content.text.lstrip().lower().startswith("<!doctype html")
  assert content.meta is not None
  assert content.meta["ui"]["csp"] == {
      "connectDomains": expected_domains,
      "resourceDomains": expected_domains,
  }
  # The listing carries no CSP: only the direct read can deliver it.
  assert [(str(r.uri), r.meta) for r in listed] == [(uri, None)]
