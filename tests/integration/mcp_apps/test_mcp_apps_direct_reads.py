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

"""PR 1 direct URI reads (P1-DRD-01, P1-DRD-02) through `McpToolset`.

`McpToolset.read_resource_by_uri` sends `resources/read` for a URI itself;
upstream's `read_resource(name)` first looks the name up in
`resources/list`, so it cannot reach the unlisted `ui://` resources MCP App
servers commonly serve. Both are driven against the real conformance server
over stdio, stateful streamable HTTP (2025-11-25) and the `--stateless`
endpoint (ADK's session manager speaks the handshake era there, so the
endpoint runs with `era_gate="sdk"`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from google.adk.tools.mcp_tool.mcp_session_manager import StdioConnectionParams
from google.adk.tools.mcp_tool.mcp_session_manager import StreamableHTTPConnectionParams
from google.adk.tools.mcp_tool.mcp_toolset import McpToolset
from mcp_apps_conformance_server import names
from mcp_apps_conformance_server import views
import pytest

pytestmark = pytest.mark.integration

TRANSPORTS = ("stdio", "legacy-http", "modern-http")


@pytest.fixture(params=TRANSPORTS)
async def toolset(
    request: pytest.FixtureRequest,
    mcp_apps: Any,
    start_server: Any,
) -> AsyncIterator[McpToolset]:
  """A directly constructed `McpToolset` on the conformance server."""
  if request.param == "stdio":
    params: Any = StdioConnectionParams(
        server_params=mcp_apps.stdio_parameters(), timeout=20
    )
  else:
    stateless = request.param == "modern-http"
    server = start_server(
        stateless=stateless, options={"era_gate": "sdk"} if stateless else None
    )
    params = StreamableHTTPConnectionParams(url=server.url, timeout=20)
  toolset = McpToolset(connection_params=params)
  try:
    yield toolset
  finally:
    await toolset.close()


def _text(item: Any) -> str:
  return getattr(item, "text", None) or ""


@pytest.mark.conformance("P1-DRD-01")
async def test_unlisted_ui_resource_is_read_by_uri(
    toolset: McpToolset,
) -> None:
  """P1-DRD-01: an unlisted `ui://` resource is read directly by its URI."""
  listed_names = await toolset.list_resources()
  # pylint: disable-next=protected-access
  session = await toolset._mcp_session_manager.create_session()
  listed_uris = {str(r.uri) for r in (await session.list_resources()).resources}
  contents = await toolset.read_resource_by_uri(names.UNLISTED_URI)

  assert names.VIEW_URI in listed_uris
  assert names.UNLISTED_URI not in listed_uris
  (item,) = contents
  assert str(item.uri) == names.UNLISTED_URI
  assert item.mime_type == names.APP_MIME_TYPE
  assert "Unlisted View" in _text(item)
  # Upstream's name-addressed helper cannot find it under any name it could
  # be given: the listing does not carry it.
  assert listed_names
  for candidate in (names.UNLISTED_URI, "unlisted.html", "Unlisted View"):
    assert candidate not in listed_names
    with pytest.raises(ValueError, match="not found"):
      await toolset.read_resource(candidate)


@pytest.mark.conformance("P1-DRD-02")
async def test_multi_content_read_keeps_every_item(
    toolset: McpToolset,
) -> None:
  """P1-DRD-02: the whole `contents` array, each item with its own `uri`."""
  multi = await toolset.read_resource_by_uri(names.MULTI_URI)
  double = await toolset.read_resource_by_uri(names.DOUBLE_URI)
  empty = await toolset.read_resource_by_uri(names.EMPTY_URI)

  assert [(str(i.uri), i.mime_type) for i in multi] == [
      (names.MULTI_URI, names.APP_MIME_TYPE),
      (views.MULTI_PART_URI, names.APP_MIME_TYPE),
      (names.OUTSIDE_URI, names.APP_MIME_TYPE),
      (views.MULTI_SCRIPT_URI, "text/javascript"),
  ]
  assert "Part two" in _text(multi[1])
  assert _text(multi[3]) == "void 0;"
  # Two items for the same URI stay two; zero items stay zero.
  assert [str(i.uri) for i in double] == [names.DOUBLE_URI] * 2
  assert ["first" in _text(double[0]), "second" in _text(double[1])] == [
      True,
      True,
  ]
  assert empty == []
