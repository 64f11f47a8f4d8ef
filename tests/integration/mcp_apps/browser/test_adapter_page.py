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

"""The renderer page against the reference adapter, in Chromium.

ADK's own FastAPI app with the MCP Apps adapter (adapter_support.served:
the conformance server, a scripted model, loopback dev providers) runs in a
background thread; a chat turn on the stock routes renders a widget, and
the shipped page opens and drives the conformance View through the
adapter's governed routes.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
import sys
import threading
from typing import Any

from adapter_support import APP
from adapter_support import served
from adapter_support import USER
from browser_support import chromium_page
from browser_support import IN_PROCESS_FRAMES
from browser_support import page_log
from browser_support import view_frame
from google.adk.mcp_apps.operations.message_permit import attest_every_message
from google.adk.tools.mcp_tool import StdioConnectionParams
from mcp import StdioServerParameters
from mcp_apps_conformance_server import names
import pytest
from third_party_support import needs_node
from third_party_support import servers

pytestmark = pytest.mark.integration

LOADED = '() => document.readyState === "complete" && !!document.body'


@dataclasses.dataclass
class AdapterThread:
  """Runs `served(...)` and one chat turn in a thread of its own."""

  mcp_apps: Any
  tmp_path: Path
  tool: str = names.OPEN_VIEW
  connection_params: Any = None
  origin: str = ''
  widget: dict[str, Any] = dataclasses.field(default_factory=dict)

  def __post_init__(self) -> None:
    self._ready = threading.Event()
    self._error: BaseException | None = None
    self._loop: asyncio.AbstractEventLoop | None = None
    self._stop: asyncio.Event | None = None
    self._thread = threading.Thread(target=self._run, daemon=True)

  def _run(self) -> None:
    async def main() -> None:
      self._stop = asyncio.Event()
      self._loop = asyncio.get_running_loop()
      async with served(
          self.mcp_apps,
          self.tmp_path,
          connection_params=self.connection_params,
          message_confirmation=attest_every_message,
      ) as s:
        self.origin = s.origin
        self.widget = await s.chat_widget(self.tool)
        self._ready.set()
        await self._stop.wait()

    try:
      asyncio.run(main())
    except BaseException as error:  # pylint: disable=broad-exception-caught
      self._error = error
    finally:
      self._ready.set()

  def __enter__(self) -> AdapterThread:
    self._thread.start()
    self._ready.wait(120)
    if self._error is not None or not self.widget:
      raise RuntimeError('the adapter did not start') from self._error
    return self

  def __exit__(self, *exc_info: object) -> None:
    if self._loop is not None and self._stop is not None:
      self._loop.call_soon_threadsafe(self._stop.set)
    self._thread.join(60)

  def page_url(self) -> str:
    session = self.widget['sessionId']
    return (
        f'{self.origin}/mcp-apps/?app={APP}&user={USER}&session={session}'
        '&teardownTimeoutMs=500'
    )


def _wait(page: Any, predicate: str, arg: Any = None) -> None:
  page.wait_for_function(predicate, arg=arg, timeout=60_000)


def _replied(page: Any, method: str) -> None:
  _wait(
      page,
      '(method) => window.adkMcpApps.log.some((e) =>'
      ' e.kind === "rpc-reply" && e.method === method)',
      method,
  )


@pytest.mark.conformance('P5-ADP-02', 'XR-WEB-12', 'XR-WEB-16')
def test_conformance_view_works_through_the_adapter_in_chromium(
    mcp_apps: Any, tmp_path: Path, artifacts: Path
) -> None:
  with AdapterThread(mcp_apps, tmp_path) as stage:
    with chromium_page(artifacts, 'adapter-conformance') as page:
      page.goto(stage.page_url())
      frame = view_frame(page, stage.widget['eventId'], LOADED)
      assert frame.evaluate('() => document.title') == 'Conformance View'
      # On its tool-result the View sends ui/message and
      # ui/update-model-context, then calls its app-only follow-up tool.
      for method in ('ui/message', 'ui/update-model-context', 'tools/call'):
        _replied(page, method)
      # resources/read from the View, through the same channel.
      frame.evaluate(
          '(uri) => parent.postMessage({jsonrpc: "2.0", id: 9001, method:'
          ' "resources/read", params: {uri}}, "*")',
          names.VIEW_URI,
      )
      _replied(page, 'resources/read')
      replies = [e for e in page_log(page) if e['kind'] == 'rpc-reply']
      assert replies and all(e['ok'] for e in replies), replies
      # Teardown: the conformance View never answers ui/resource-teardown,
      # so the page's timeout ends the wait and the server closes the View.
      view_id = page.evaluate('() => [...window.adkMcpApps.views.keys()][0]')
      page.evaluate('(id) => window.adkMcpApps.teardown(id)', view_id)
      _wait(
          page,
          '() => window.adkMcpApps.log.some((e) => e.kind === "closed")',
      )
      (teardown,) = [e for e in page_log(page) if e['kind'] == 'teardown']
      assert teardown['acknowledged'] is False
      kinds = [e['kind'] for e in page_log(page)]
      assert kinds.index('sandbox-ready') < kinds.index('initialized')
      assert frame.is_detached()


@needs_node
def test_system_monitor_view_polls_live_through_the_adapter(
    mcp_apps: Any, tmp_path: Path, artifacts: Path
) -> None:
  servers.ensure_installed()
  params = StdioConnectionParams(
      server_params=servers.stdio_params('system-monitor'), timeout=30.0
  )
  with AdapterThread(
      mcp_apps, tmp_path, tool='get-system-info', connection_params=params
  ) as stage:
    assert stage.widget['state'] == 'live'
    with chromium_page(artifacts, 'adapter-system-monitor') as page:
      page.goto(stage.page_url())
      view_frame(page, stage.widget['eventId'], LOADED)
      # The View polls its app-only tool; each poll is a governed call
      # through the adapter that succeeds.
      _wait(
          page,
          '() => window.adkMcpApps.log.filter((e) => e.kind === "rpc-reply"'
          ' && e.method === "tools/call" && e.ok).length >= 2',
      )
      polls = [
          e
          for e in page_log(page)
          if e['kind'] == 'rpc' and e['method'] == 'tools/call'
      ]
      assert {e['name'] for e in polls} == {'poll-system-stats'}


DASHBOARD_SERVER = (
    Path(__file__).resolve().parents[4]
    / 'contributing'
    / 'samples'
    / 'mcp_apps_dashboard'
    / 'server.py'
)


def test_dashboard_sample_view_queries_its_app_only_tool_through_the_adapter(
    mcp_apps: Any, tmp_path: Path, artifacts: Path
) -> None:
  params = StdioConnectionParams(
      server_params=StdioServerParameters(
          command=sys.executable,
          args=[str(DASHBOARD_SERVER)],
          env={
              'XDG_CACHE_HOME': str(tmp_path / 'cache'),
              'PATH': '/usr/bin:/bin',
          },
      ),
      timeout=30.0,
  )
  with AdapterThread(
      mcp_apps, tmp_path, tool='show_agent_dashboard', connection_params=params
  ) as stage:
    assert stage.widget['state'] == 'live'
    with chromium_page(artifacts, 'adapter-dashboard') as page:
      page.goto(stage.page_url())
      frame = view_frame(page, stage.widget['eventId'], LOADED)
      # Filtering by event type makes the View query its app-only tool.
      frame.wait_for_function(
          '() => document.querySelectorAll("#f-type option").length > 1'
      )
      frame.locator('#f-type').select_option(index=1)
      _wait(
          page,
          '() => window.adkMcpApps.log.some((e) => e.kind === "rpc-reply"'
          ' && e.method === "tools/call" && e.ok)',
      )
      calls = [
          e
          for e in page_log(page)
          if e['kind'] == 'rpc' and e['method'] == 'tools/call'
      ]
      assert calls[0]['name'] == 'query_agent_events'


@needs_node
def test_basic_vanillajs_view_calls_get_time_through_the_adapter(
    mcp_apps: Any, tmp_path: Path, artifacts: Path
) -> None:
  servers.ensure_installed()
  params = StdioConnectionParams(
      server_params=servers.stdio_params('basic-vanillajs'), timeout=30.0
  )
  with AdapterThread(
      mcp_apps, tmp_path, tool='get-time', connection_params=params
  ) as stage:
    with chromium_page(artifacts, 'adapter-vanillajs') as page:
      page.goto(stage.page_url())
      frame = view_frame(page, stage.widget['eventId'], LOADED)
      frame.get_by_role('button', name='Get Server Time').click()
      _wait(
          page,
          '() => window.adkMcpApps.log.some((e) => e.kind === "rpc-reply"'
          ' && e.method === "tools/call" && e.ok)',
      )
      calls = [
          e
          for e in page_log(page)
          if e['kind'] == 'rpc' and e['method'] == 'tools/call'
      ]
      assert calls[0]['name'] == 'get-time'


def _cesium_cdn(route: Any) -> None:
  """Answers the View's CesiumJS CDN requests from the pinned npm build;
  any other outside request (map tiles) fails as it would offline."""
  url = route.request.url
  prefix = (
      'https://cesium.com/downloads/cesiumjs/releases/'
      f'{servers.CESIUM_VERSION}/Build/Cesium/'
  )
  if not url.startswith(prefix):
    route.abort()
    return
  relative = url[len(prefix) :].split('?')[0]
  path = (servers.CESIUM_BUILD / relative).resolve()
  if servers.CESIUM_BUILD.resolve() in path.parents and path.is_file():
    route.fulfill(path=str(path))
  else:
    route.fulfill(status=404)


@needs_node
def test_map_view_renders_its_globe_and_updates_model_context(
    mcp_apps: Any, tmp_path: Path, artifacts: Path
) -> None:
  servers.ensure_installed()
  params = StdioConnectionParams(
      server_params=servers.stdio_params('map'), timeout=30.0
  )
  with AdapterThread(
      mcp_apps, tmp_path, tool='show-map', connection_params=params
  ) as stage:
    # The View's frames are in-process here so the test can answer the
    # View's CDN requests (see docs/decisions/issue26-map.md).
    with chromium_page(
        artifacts, 'adapter-map', extra_args=IN_PROCESS_FRAMES
    ) as page:
      page.context.route(lambda url: not url.startswith('http://'), _cesium_cdn)
      page.goto(stage.page_url())
      frame = view_frame(page, stage.widget['eventId'], LOADED)
      # CesiumJS came from the declared CDN origin, built a WebGL globe,
      # and the View, once initialized, sent a screenshot of it as model
      # context through the adapter.
      _replied(page, 'ui/update-model-context')
      assert frame.locator('canvas').count() >= 1
      policy = frame.evaluate(
          '() => document.querySelector('
          '"meta[http-equiv=Content-Security-Policy]").content'
      )
      assert 'https://*.cesium.com' in policy
      (reply,) = [
          e
          for e in page_log(page)
          if e['kind'] == 'rpc-reply'
          and e['method'] == 'ui/update-model-context'
      ]
      assert reply['ok'] is True
