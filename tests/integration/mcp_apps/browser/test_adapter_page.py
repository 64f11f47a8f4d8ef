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
from adapter_support import turn_widgets
from adapter_support import USER
from browser_support import chromium_page
from browser_support import IN_PROCESS_FRAMES
from browser_support import page_log
from browser_support import view_frame
from google.adk.mcp_apps.contracts.local_dev import LocalDevReplayClassification
from google.adk.mcp_apps.operations.message_permit import attest_every_message
from google.adk.mcp_apps.profile import local_dev_profile
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
  profile: Any = None
  prepare: Any = None
  """An async `(Served) -> widget dict` run instead of one chat widget."""
  origin: str = ''
  widget: dict[str, Any] = dataclasses.field(default_factory=dict)
  served: Any = None

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
          profile=self.profile,
          message_confirmation=attest_every_message,
      ) as s:
        self.origin = s.origin
        self.served = s
        if self.prepare is not None:
          self.widget = await self.prepare(s)
        else:
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


ACK_TEARDOWN = (
    '() => window.addEventListener("message", (event) => {'
    ' const m = event.data;'
    ' if (m && m.method === "ui/resource-teardown" && m.id !== undefined)'
    ' parent.postMessage({jsonrpc: "2.0", id: m.id, result: {}}, "*"); })'
)
"""Makes the conformance View (which never answers) acknowledge teardown."""

ASK_TEARDOWN = (
    '() => parent.postMessage({jsonrpc: "2.0",'
    ' method: "ui/notifications/request-teardown", params: {}}, "*")'
)

REUSE_LEASE = """async ([viewId, lease, uri]) => {
  const csrf = /adk_mcp_apps_csrf=([^;]*)/.exec(document.cookie)[1];
  const response = await fetch(`/mcp-apps/api/views/${viewId}/rpc`, {
    method: "POST", credentials: "same-origin",
    headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf,
      "X-MCP-Apps-Lease": lease, "X-MCP-Apps-Request-Token": "late-1"},
    body: JSON.stringify({jsonrpc: "2.0", id: 1, method: "resources/read",
      params: {uri}})});
  return [response.status, (await response.json()).reason];
}"""


def _count(page: Any, kind: str, count: int) -> None:
  _wait(
      page,
      '([kind, count]) => window.adkMcpApps.log.filter((e) =>'
      ' e.kind === kind).length >= count',
      [kind, count],
  )


def _widgets(*steps: list[tuple[str, dict[str, Any]]]) -> Any:
  """An `AdapterThread.prepare`: one turn playing `steps`."""

  async def prepare(s: Any) -> dict[str, Any]:
    widgets = await turn_widgets(s, *steps)
    # Later turns (the View's ui/message) answer with text: no new widget.
    s.llm.steps = []
    return {**widgets[0], 'widgets': widgets}

  return prepare


@pytest.mark.conformance('XR-WEB-10', 'XR-WEB-11')
def test_teardown_through_the_adapter_waits_for_ack_or_times_out_then_closes(
    mcp_apps: Any, tmp_path: Path, artifacts: Path
) -> None:
  prepare = _widgets(*[[(names.OPEN_VIEW, {})]] * 3)
  with AdapterThread(mcp_apps, tmp_path, prepare=prepare) as stage:
    events = [w['eventId'] for w in stage.widget['widgets']]
    with chromium_page(artifacts, 'adapter-teardown') as page:
      page.goto(stage.page_url())
      frames = [view_frame(page, e, LOADED) for e in events]
      _count(page, 'initialized', 3)
      ids = [
          page.evaluate(
              '(e) => document.querySelector('
              '`section[data-event-id="${e}"]`).dataset.viewId',
              e,
          )
          for e in events
      ]
      leases = page.evaluate(
          '() => Object.fromEntries([...window.adkMcpApps.views].map('
          '([id, v]) => [id, v.lease]))'
      )
      assert set(stage.served.adapter.view_hosts()) == set(ids)
      # A View that acknowledges: the page closes it once it answered.
      frames[0].evaluate(ACK_TEARDOWN)
      page.evaluate('(id) => window.adkMcpApps.teardown(id)', ids[0])
      _count(page, 'closed', 1)
      # A View that never answers: the timeout ends the wait.
      page.evaluate('(id) => window.adkMcpApps.teardown(id)', ids[1])
      _count(page, 'closed', 2)
      # A View asking to be torn down: the host decides (here: yes).
      frames[2].evaluate(ACK_TEARDOWN)
      frames[2].evaluate(ASK_TEARDOWN)
      _count(page, 'closed', 3)
      log = page_log(page)
      torn = [
          (e['viewId'], e['acknowledged'], e['requested'])
          for e in log
          if e['kind'] == 'teardown'
      ]
      assert torn == [
          (ids[0], True, False),
          (ids[1], False, False),
          (ids[2], True, True),
      ]
      # Each close followed its teardown, and the adapter closed the View:
      # it is gone from the service, and its lease is refused.
      order = [(e['kind'], e['viewId']) for e in log if 'viewId' in e]
      for view_id in ids:
        assert order.index(('teardown', view_id)) < order.index(
            ('closed', view_id)
        )
      assert stage.served.adapter.view_hosts() == {}
      for view_id in ids:
        reused = [view_id, leases[view_id], names.VIEW_URI]
        assert page.evaluate(REUSE_LEASE, reused) == [
            404,
            'not_found',
        ]
      assert page.locator('section.widget iframe').count() == 0
      assert page.locator('section.widget .placeholder').count() == 3
      assert all(frame.is_detached() for frame in frames)


@pytest.mark.conformance('XR-WEB-22', 'XR-WEB-23')
def test_a_widget_made_cold_renders_its_offer_without_a_view_and_runs_again(
    mcp_apps: Any, tmp_path: Path, artifacts: Path
) -> None:
  profile = local_dev_profile(
      replay_classification=LocalDevReplayClassification([names.MUTABLE_VIEW])
  )
  prepare = _widgets(
      [(names.MUTABLE_VIEW, {'label': 'cold'})], [(names.OPEN_VIEW, {})]
  )
  with AdapterThread(
      mcp_apps, tmp_path, profile=profile, prepare=prepare
  ) as stage:
    safe, unsafe = (w['eventId'] for w in stage.widget['widgets'])
    with chromium_page(artifacts, 'adapter-cold') as page:
      page.goto(stage.page_url())
      _count(page, 'initialized', 2)
      # Their last Views close: the widgets are cold for real.
      for view_id in page.evaluate('() => [...window.adkMcpApps.views.keys()]'):
        page.evaluate('(id) => window.adkMcpApps.teardown(id)', view_id)
      _count(page, 'closed', 2)
      assert stage.served.adapter.view_hosts() == {}

      requests: list[tuple[str, str]] = []
      page.on('request', lambda r: requests.append((r.method, r.url)))
      page.reload()
      _count(page, 'rendered', 1)
      # The host placeholders came from the page alone: no View opened, no
      # sandbox loaded, no View request reached the server.
      api = [
          (method, url.split('/mcp-apps', 1)[1])
          for method, url in requests
          if '/mcp-apps/api' in url or '/mcp-apps/sandbox' in url
      ]
      session = stage.widget['sessionId']
      assert api == [
          ('GET', f'/api/sessions/{APP}/{USER}/{session}/widgets'),
      ]
      assert page.locator('iframe').count() == 0
      assert stage.served.adapter.view_hosts() == {}
      kinds = {e['kind'] for e in page_log(page)}
      assert not kinds & {'rpc', 'sandbox-ready', 'initialized'}
      # The offer matches each tool's replay safety.
      refresh = page.locator(f'section[data-event-id="{safe}"] .placeholder')
      rerun = page.locator(f'section[data-event-id="{unsafe}"] .placeholder')
      assert refresh.locator('button').all_inner_texts() == ['Refresh']
      assert refresh.locator('.warning').count() == 0
      assert rerun.locator('button').all_inner_texts() == [
          f'Run {names.OPEN_VIEW} again'
      ]
      assert 'may repeat its effects' in rerun.locator('.warning').inner_text()

      # One click runs the tool again; the new widget renders live.
      made: list[dict[str, Any]] = []
      for placeholder, action in ((refresh, 'refresh'), (rerun, 'rerun')):
        placeholder.locator('button').click()
        _wait(
            page,
            '(action) => window.adkMcpApps.log.some((e) =>'
            ' e.kind === "rerun" && e.action === action)',
            action,
        )
        (new,) = [
            e
            for e in page_log(page)
            if e['kind'] == 'rerun' and e['action'] == action
        ]
        frame = view_frame(page, new['eventId'], LOADED)
        assert frame.evaluate('() => document.title') == 'Conformance View'
        _count(page, 'initialized', len(made) + 1)
        made.append(new)
      assert [m for m, u in requests if u.endswith('/api/rerun')] == [
          'POST',
          'POST',
      ]
      assert {safe, unsafe}.isdisjoint(m['eventId'] for m in made)
      states = dict(
          page.evaluate(
              '() => [...document.querySelectorAll("section.widget")].map('
              '(s) => [s.dataset.eventId, s.dataset.state])'
          )
      )
      assert (states[safe], states[unsafe]) == ('cold', 'cold')
      # The second click kept the first new View open: both stay live.
      assert [states[m['eventId']] for m in made] == ['live', 'live']
      assert not any(e['kind'] == 'teardown' for e in page_log(page))
      assert len(stage.served.adapter.view_hosts()) == 2


_REACH = """(probe) => {
  try {
    const value = probe();
    return value === undefined ? 'reached' : String(value);
  } catch (error) {
    return error.name;
  }
}"""


def _try(frame: Any, expression: str) -> str:
  return frame.evaluate(f'() => ({_REACH})(() => {expression})')


@pytest.mark.conformance('XR-WEB-19')
def test_page_proxy_and_view_are_partitioned_origins(
    mcp_apps: Any, tmp_path: Path, artifacts: Path
) -> None:
  with AdapterThread(mcp_apps, tmp_path) as stage:
    with chromium_page(artifacts, 'adapter-partition') as page:
      page.goto(stage.page_url())
      view = view_frame(page, stage.widget['eventId'], LOADED)
      (proxy,) = [f for f in page.frames if '/mcp-apps/sandbox' in f.url]
      # Three origins: the page's, the proxy's (a second loopback host)
      # and the View's own opaque one.
      assert page.evaluate('() => location.origin') == stage.origin
      port = stage.origin.rsplit(':', 1)[1]
      assert proxy.evaluate('() => location.origin') == (
          f'http://localhost:{port}'
      )
      assert view.evaluate('() => self.origin') == 'null'
      # The page's CSRF cookie is the main origin's; the proxy never sees it
      # and the View cannot read cookies or storage at all.
      assert 'adk_mcp_apps_csrf=' in page.evaluate('() => document.cookie')
      assert 'adk_mcp_apps_csrf' not in proxy.evaluate('() => document.cookie')
      assert _try(view, 'document.cookie') == 'SecurityError'
      assert _try(view, 'localStorage.length') == 'SecurityError'
      # Nobody reaches across: not the View into the proxy or the page, not
      # the proxy into the page, not the page into the proxy.
      assert _try(view, 'parent.document.title') == 'SecurityError'
      assert _try(view, 'top.document.title') == 'SecurityError'
      assert _try(proxy, 'parent.document.title') == 'SecurityError'
      assert (
          page.evaluate(
              '() => document.querySelector("iframe").contentDocument'
          )
          is None
      )
