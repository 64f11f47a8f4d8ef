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

"""Pins down what published MCP App servers put on the wire.

The servers are the ext-apps example packages at 2.0.3, installed from the
committed lockfile in ``tests/integration/third_party_mcp_apps``. They are
driven with the MCP Python SDK's own ``Client`` (not google-adk), over stdio
and over streamable HTTP on loopback, so the facts the ADK host code relies
on are established independently of it:

* basic-vanillajs ``get-time`` carries ``_meta.ui.resourceUri`` and the flat
  legacy key ``_meta["ui/resourceUri"]``;
* system-monitor ``poll-system-stats`` is app-only (``visibility == ["app"]``)
  and names no resource;
* map declares its CSP only on the ``resources/read`` content, not in
  ``resources/list``.

Every test also checks that the server processes it started are gone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
import contextlib
import datetime
import json
from typing import Any

from mcp import Client
import pytest
from third_party_support import FIXTURE_DIR
from third_party_support import needs_node
from third_party_support import servers

APP_MIME_TYPE = "text/html;profile=mcp-app"
PINNED_VERSION = "2.0.3"

pytestmark = [
    pytest.mark.integration,
    needs_node,
    pytest.mark.usefixtures("third_party_packages", "no_leaked_descendants"),
]

TRANSPORTS = ("stdio", "streamable-http")


@contextlib.asynccontextmanager
async def _connect(name: str, transport: str) -> AsyncIterator[Client]:
  """Starts server ``name`` on ``transport`` and yields a connected client.

  For streamable HTTP it also checks the socket is bound to loopback only
  and that SIGTERM ends the process cleanly (exit code 0).
  """
  if transport == "stdio":
    async with Client(servers.stdio_params(name)) as client:
      yield client
    return

  with servers.start_http(name) as running:
    assert running.url.startswith("http://127.0.0.1:"), running.output
    port = int(running.url.rsplit(":", 1)[1].split("/", 1)[0])
    assert servers.listening_addresses(running.pid) == {("127.0.0.1", port)}
    async with Client(running.url) as client:
      yield client
    exit_code = servers.stop_process(running.process)
  assert exit_code == 0, f"{name} exited with {exit_code} on SIGTERM"


def _tools_by_name(tools: list[Any]) -> dict[str, Any]:
  return {tool.name: tool for tool in tools}


def test_lockfile_pins_exact_versions_with_integrity() -> None:
  manifest = json.loads((FIXTURE_DIR / "package.json").read_text())
  lock = json.loads((FIXTURE_DIR / "package-lock.json").read_text())

  assert manifest["private"] is True
  pins = {
      package: PINNED_VERSION for package in servers.SERVER_PACKAGES.values()
  }
  # CesiumJS, which the map server's View loads from a CDN.
  pins["cesium"] = f"{servers.CESIUM_VERSION}.0"
  assert manifest["dependencies"] == pins
  for package, version in pins.items():
    locked = lock["packages"][f"node_modules/{package}"]
    assert locked["version"] == version
    assert locked["integrity"].startswith("sha512-")
  assert servers.is_installed()
  assert servers.STAMP_FILE.read_text().strip() == servers.lockfile_hash()
  for name in servers.SERVER_PACKAGES:
    assert servers.package_version(name) == PINNED_VERSION
    assert servers.entry_point(name) == (
        servers.package_dir(name) / "dist" / "index.js"
    )


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_basic_vanillajs_get_time(transport: str) -> None:
  async with _connect("basic-vanillajs", transport) as client:
    tools = _tools_by_name((await client.list_tools()).tools)
    resources = (await client.list_resources()).resources
    result = await client.call_tool("get-time", {})
    view = await client.read_resource("ui://get-time/mcp-app.html")

  uri = "ui://get-time/mcp-app.html"
  assert set(tools) == {"get-time"}
  meta = tools["get-time"].meta
  assert meta["ui"]["resourceUri"] == uri
  assert meta["ui/resourceUri"] == uri
  assert "visibility" not in meta["ui"]

  assert [(r.uri, r.mime_type) for r in resources] == [(uri, APP_MIME_TYPE)]

  assert not result.is_error
  time_text = result.content[0].text
  assert result.structured_content == {"time": time_text}
  assert datetime.datetime.fromisoformat(time_text.replace("Z", "+00:00"))

  (content,) = view.contents
  assert content.mime_type == APP_MIME_TYPE
  assert content.text.lstrip().lower().startswith("<!doctype html")
  assert content.meta is None


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_system_monitor_poll_is_app_only(transport: str) -> None:
  async with _connect("system-monitor", transport) as client:
    tools = _tools_by_name((await client.list_tools()).tools)
    stats = await client.call_tool("poll-system-stats", {})

  uri = "ui://system-monitor/mcp-app.html"
  assert set(tools) == {"get-system-info", "poll-system-stats"}
  poll_meta = tools["poll-system-stats"].meta
  assert poll_meta == {"ui": {"visibility": ["app"]}}
  assert "resourceUri" not in poll_meta["ui"]
  assert "ui/resourceUri" not in poll_meta

  info_meta = tools["get-system-info"].meta
  assert info_meta["ui"] == {"resourceUri": uri}
  assert info_meta["ui/resourceUri"] == uri

  # App-only restricts who may call it, not whether the server serves it.
  assert not stats.is_error
  assert set(stats.structured_content) >= {"cpu", "memory", "uptime"}
  assert json.loads(stats.content[0].text) == stats.structured_content


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_map_csp_only_on_read(transport: str) -> None:
  uri = "ui://cesium-map/mcp-app.html"
  async with _connect("map", transport) as client:
    tools = _tools_by_name((await client.list_tools()).tools)
    resources = (await client.list_resources()).resources
    view = await client.read_resource(uri)
    shown = await client.call_tool(
        "show-map", {"west": 2.2, "south": 48.8, "east": 2.5, "north": 48.9}
    )

  assert set(tools) == {"show-map", "geocode"}
  assert tools["show-map"].meta["ui"]["resourceUri"] == uri
  assert tools["show-map"].meta["ui/resourceUri"] == uri
  assert tools["geocode"].meta is None

  (listed,) = resources
  assert listed.uri == uri
  assert listed.mime_type == APP_MIME_TYPE
  assert listed.meta is None  # No CSP (or any _meta) in the listing.

  (content,) = view.contents
  assert content.mime_type == APP_MIME_TYPE
  csp = content.meta["ui"]["csp"]
  expected_domains = [
      "https://*.openstreetmap.org",
      "https://cesium.com",
      "https://*.cesium.com",
  ]
  assert csp == {
      "connectDomains": expected_domains,
      "resourceDomains": expected_domains,
  }

  # show-map runs offline: text for the model, a per-view id in _meta.
  assert not shown.is_error
  assert shown.content[0].text.startswith("Displaying globe at: W:2.2000")
  assert shown.structured_content is None
  assert set(shown.meta) >= {"viewUUID"}
