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

"""`tools/list` pagination and its attacks, each switched on alone."""

from __future__ import annotations

import time
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_apps_conformance_server import names
from mcp_apps_conformance_server.listing import encode_cursor
import pytest

pytestmark = pytest.mark.integration


async def _walk(client: Any, limit: int = 50) -> list[Any]:
  pages, cursor = [], None
  for _ in range(limit):
    page = await client.list_tools(cursor=cursor)
    pages.append(page)
    cursor = page.next_cursor
    if cursor is None:
      return pages
  raise AssertionError("pagination did not terminate")


@pytest.mark.parametrize("stateless", [False, True])
async def test_pages_cover_the_catalog_exactly_once(
    start_server: Any, mcp_apps: Any, stateless: bool
) -> None:
  options = {"page_size": 7, "generated_tools": 30}
  server = start_server(stateless=stateless, options=options)
  async with mcp_apps.connect(server.url) as client:
    pages = await _walk(client)
  names_seen = [tool.name for page in pages for tool in page.tools]
  assert len(names_seen) == len(set(names_seen))
  assert all(len(page.tools) == 7 for page in pages[:-1])
  assert 1 <= len(pages[-1].tools) <= 7
  generated = [n for n in names_seen if n.startswith(names.GENERATED_PREFIX)]
  assert len(generated) == 30
  assert names.OPEN_VIEW in names_seen


async def test_attacks_over_stdio(mcp_apps: Any) -> None:
  options = {
      "page_size": 5,
      "generated_tools": 20,
      "repeat_cursor_page": 2,
      "oversized_page": 1,
      "oversized_page_items": 40,
      "oversized_page_bytes": 300_000,
      "slow_page": 0,
      "slow_page_ms": 300,
      "failing_page": 3,
      "failing_page_code": -32050,
  }
  async with mcp_apps.connect(mcp_apps.stdio_parameters(options)) as client:
    started = time.monotonic()
    first = await client.list_tools()
    slow_elapsed = time.monotonic() - started
    second = await client.list_tools(cursor=first.next_cursor)
    third = await client.list_tools(cursor=second.next_cursor)
    again = await client.list_tools(cursor=third.next_cursor)
    with pytest.raises(MCPError) as failing:
      await client.list_tools(cursor=encode_cursor(3))
    with pytest.raises(MCPError) as invalid:
      await client.list_tools(cursor="not-a-cursor")
  assert slow_elapsed >= 0.3
  assert len(first.tools) == 5
  # Oversized page: 5 regular tools + 40 padding tools, first one padded.
  assert len(second.tools) == 45
  assert len(second.tools[0].description) >= 300_000
  # Repeated cursor: page 2 hands back the cursor that requested it.
  assert third.next_cursor == second.next_cursor
  assert [t.name for t in again.tools] == [t.name for t in third.tools]
  assert failing.value.error.code == -32050
  assert invalid.value.error.code == -32602
