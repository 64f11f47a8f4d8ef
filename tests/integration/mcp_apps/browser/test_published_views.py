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

"""Published MCP App servers' Views in the renderer page, in Chromium.

The Views of the npm-published ext-apps example servers (pinned in
tests/integration/third_party_mcp_apps/) run in the shipped page and its
sandbox proxy; their requests go through the page's HTTP channel to the
real server process (browser_support.ContractServer with an MCP backend).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import contextlib
from typing import Any

from browser_support import chromium_page
from browser_support import ContractServer
from browser_support import page_log
from browser_support import view_frame
from mcp import Client
import pytest
from third_party_support import needs_node
from third_party_support import servers

pytestmark = [pytest.mark.integration, needs_node]

SESSION = ('app', 'user', 'session-1')
LOADED = '() => document.readyState === "complete" && !!document.body'


def _dump(result: Any) -> dict[str, Any]:
  return result.model_dump(by_alias=True, exclude_none=True, mode='json')


def _backend(name: str):
  @contextlib.asynccontextmanager
  async def open_backend() -> AsyncIterator[Any]:
    async with Client(servers.stdio_params(name)) as client:

      async def forward(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == 'tools/call':
          return _dump(
              await client.call_tool(
                  params['name'], params.get('arguments') or {}
              )
          )
        if method == 'resources/read':
          return _dump(await client.read_resource(params['uri']))
        return {}

      yield forward

  return open_backend


async def _view_document(
    name: str, tool: str, uri: str, arguments: dict[str, Any]
) -> dict[str, Any]:
  async with Client(servers.stdio_params(name)) as client:
    result = await client.call_tool(tool, arguments)
    read = await client.read_resource(uri)
  (content,) = read.contents
  meta = content.meta or {}
  return {
      'html': content.text,
      'uiMeta': meta.get('ui') or {},
      'hostContext': {'theme': 'light', 'displayMode': 'inline'},
      'toolInput': arguments,
      'toolResult': _dump(result),
  }


def _widget(event_id: str, tool: str) -> dict[str, Any]:
  return {
      'eventId': event_id,
      'functionCallId': f'fc-{event_id}',
      'toolsetId': 'published',
      'toolName': tool,
      'state': 'live',
      'affordance': None,
  }


def _wait_calls(page: Any, name: str, count: int) -> None:
  page.wait_for_function(
      '([name, count]) => window.adkMcpApps.log.filter((e) =>'
      ' e.kind === "rpc" && e.name === name).length >= count',
      arg=[name, count],
      timeout=60_000,
  )


@pytest.fixture(scope='module', autouse=True)
def _installed() -> None:
  servers.ensure_installed()


def test_system_monitor_view_polls_its_app_only_tool_live(artifacts):
  document = asyncio.run(
      _view_document(
          'system-monitor',
          'get-system-info',
          'ui://system-monitor/mcp-app.html',
          {},
      )
  )
  server = ContractServer(
      widgets=[_widget('e1', 'get-system-info')],
      documents={'e1': document},
      backend=_backend('system-monitor'),
  )
  with server, chromium_page(artifacts, 'system-monitor') as page:
    page.goto(server.page_url(*SESSION))
    view_frame(page, 'e1', LOADED)
    _wait_calls(page, 'poll-system-stats', 2)
    polls = [
        r
        for r in server.rpc
        if r['message']['params'].get('name') == 'poll-system-stats'
    ]
    assert len(polls) >= 2
    kinds = [e['kind'] for e in page_log(page)]
    assert kinds.index('initialized') < kinds.index('rpc')


def test_basic_vanillajs_view_calls_get_time_from_its_button(artifacts):
  document = asyncio.run(
      _view_document(
          'basic-vanillajs', 'get-time', 'ui://get-time/mcp-app.html', {}
      )
  )
  server = ContractServer(
      widgets=[_widget('e1', 'get-time')],
      documents={'e1': document},
      backend=_backend('basic-vanillajs'),
  )
  with server, chromium_page(artifacts, 'basic-vanillajs') as page:
    page.goto(server.page_url(*SESSION))
    frame = view_frame(page, 'e1', LOADED)
    frame.get_by_role('button', name='Get Server Time').click()
    _wait_calls(page, 'get-time', 1)
    assert any(
        r['message']['params'].get('name') == 'get-time' for r in server.rpc
    )
