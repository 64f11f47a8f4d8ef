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

"""The renderer page in Chromium: the host side of MCP Apps, end to end.

Each test loads the shipped page (``google.adk.mcp_apps.host.web``) with
its published-AppBridge bundle, from a loopback server speaking the issue-26
HTTP contract (browser_support.ContractServer), and checks what the View,
the page and the server observed.
"""

from __future__ import annotations

import json
from typing import Any

from browser_support import chromium_page
from browser_support import ContractServer
from browser_support import page_log
from browser_support import view_frame
from browser_support import view_html
import pytest

pytestmark = pytest.mark.integration

SESSION = ('app', 'user', 'session-1')
TOOL_INPUT = {'city': 'Paris', 'days': 3}
TOOL_RESULT = {
    'content': [{'type': 'text', 'text': 'forecast ready'}],
    'structuredContent': {'temperature': 21},
}


def widget(event_id: str, state: str = 'live', **extra: Any) -> dict[str, Any]:
  return {
      'eventId': event_id,
      'functionCallId': f'fc-{event_id}',
      'toolsetId': 'conformance',
      'toolName': 'show_forecast',
      'state': state,
      'affordance': None,
      **extra,
  }


def document(
    html: str | None = None,
    ui_meta: dict[str, Any] | None = None,
    tool_result: dict[str, Any] | None = TOOL_RESULT,
) -> dict[str, Any]:
  return {
      'html': html or view_html(),
      'uiMeta': ui_meta or {},
      'hostContext': {'theme': 'light', 'displayMode': 'inline'},
      'toolInput': TOOL_INPUT,
      'toolResult': tool_result,
  }


def wait_view_ready(frame: Any) -> None:
  frame.wait_for_function('() => window.rec && window.rec.ready === true')


def view_rec(frame: Any) -> dict[str, Any]:
  return frame.evaluate('() => JSON.parse(JSON.stringify(window.rec))')


def wait_log(page: Any, kind: str, count: int = 1) -> None:
  page.wait_for_function(
      '([kind, count]) => window.adkMcpApps &&'
      ' window.adkMcpApps.log.filter((e) => e.kind === kind).length >= count',
      arg=[kind, count],
  )


@pytest.mark.conformance(
    'XR-WEB-03',
    'XR-WEB-05',
    'XR-WEB-06',
    'XR-WEB-09',
    'XR-WEB-12',
    'XR-WEB-16',
)
def test_view_loads_through_separate_origin_proxy_and_gets_input_then_result(
    artifacts,
):
  server = ContractServer(widgets=[widget('e1')], documents={'e1': document()})
  with server, chromium_page(artifacts, 'handshake') as page:
    page.goto(server.page_url(*SESSION))
    frame = view_frame(page, 'e1')
    wait_view_ready(frame)
    frame.wait_for_function(
        '() => window.rec.received.includes("ui/notifications/tool-result")'
    )
    rec = view_rec(frame)
    # The handshake: the AppBridge answered ui/initialize with host
    # capabilities and context before anything else reached the View.
    init = rec['initResult']['result']
    assert init['protocolVersion'] == '2026-01-26'
    assert set(init['hostCapabilities']) >= {
        'serverTools',
        'serverResources',
        'message',
        'updateModelContext',
    }
    assert init['hostContext']['theme'] == 'light'
    # tool-input once, complete, then the terminal tool-result.
    received = rec['received']
    assert received.count('ui/notifications/tool-input') == 1
    assert received.index('ui/notifications/tool-input') < received.index(
        'ui/notifications/tool-result'
    )
    assert rec['params']['ui/notifications/tool-input'] == {
        'arguments': TOOL_INPUT
    }
    assert rec['params']['ui/notifications/tool-result'] == TOOL_RESULT
    kinds = [e['kind'] for e in page_log(page)]
    assert kinds.index('sandbox-ready') < kinds.index('initialized')
    # size-changed resized the proxy frame.
    wait_log(page, 'size-changed')
    height = page.locator('section[data-event-id="e1"] iframe').evaluate(
        '(el) => el.style.height'
    )
    assert height == '222px'
    # Separate origins: page on 127.0.0.1, proxy on localhost, the View
    # opaque (no allow-same-origin) and unable to read the proxy.
    proxy = frame.parent_frame
    assert proxy.url.startswith(f'http://localhost:{server.port}/')
    assert page.url.startswith(f'http://127.0.0.1:{server.port}/')
    assert frame.evaluate('() => self.origin') == 'null'
    assert (
        frame.evaluate(
            '() => { try { return parent.document.title; }'
            ' catch (e) { return "blocked"; } }'
        )
        == 'blocked'
    )


INIT_NEGATIVES = (
    'window.neg = {};'
    'const appInfo = {name: "t", version: "1"};'
    'window.request("tools/call", {name: "before_init"})'
    '.then((r) => { window.neg.early = r; });'
    'window.request("ui/initialize", {protocolVersion: "2026-01-26", appInfo})'
    '.then((r) => { window.neg.missing = r; });'
    'window.request("ui/initialize", {protocolVersion: "2026-01-26", appInfo,'
    ' appCapabilities: "camera"}).then((r) => { window.neg.malformed = r; });'
    'window.request("ui/initialize", {protocolVersion: "1999-01-01", appInfo,'
    ' appCapabilities: {}}).then((r) => { window.neg.version = r; });'
    'window.request("ping", {}).then((r) => { window.neg.ping = r; });'
)


@pytest.mark.conformance(
    'XR-WEB-04', 'XR-WEB-13', 'XR-WEB-14', 'XR-WEB-15', 'XR-WEB-18'
)
def test_bad_initialization_is_rejected_and_nothing_runs_before_it(artifacts):
  html = view_html(INIT_NEGATIVES)
  server = ContractServer(
      widgets=[widget('e1')], documents={'e1': document(html=html)}
  )
  with server, chromium_page(artifacts, 'init-negatives') as page:
    page.goto(server.page_url(*SESSION))
    frame = view_frame(page, 'e1')
    frame.wait_for_function('() => window.neg.ping && window.rec.ready')
    neg = frame.evaluate('() => window.neg')
    # A tools/call before initialization is refused and never reaches the
    # server.
    assert 'error' in neg['early']
    # Missing and malformed appCapabilities: JSON-RPC invalid params.
    assert neg['missing']['error']['code'] == -32602
    assert 'appCapabilities' in neg['missing']['error']['message']
    assert neg['malformed']['error']['code'] == -32602
    # An unsupported View version is not accepted: the host answers with
    # the version it speaks (MCP version negotiation).
    assert neg['version']['result']['protocolVersion'] == '2026-01-26'
    # ping is answered.
    assert neg['ping']['result'] == {}
    # After the real handshake the same channel works, and only that call
    # reached the server.
    reply = frame.evaluate(
        '() => window.request("tools/call", {name: "after_init",'
        ' arguments: {}})'
    )
    assert reply['result']['content'][0]['text'] == 'called after_init'
    names = [r['message']['params']['name'] for r in server.rpc]
    assert names == ['after_init']


FORGED_POST = (
    'window.forge = () => { top.postMessage({jsonrpc: "2.0", id: 900,'
    ' method: "tools/call", params: {name: "forged", arguments: {}}}, "*");'
    ' };'
)


WRONG_ORIGIN_SRCDOC = (
    '<script>parent.postMessage({jsonrpc: "2.0", id: 902, method:'
    ' "tools/call", params: {name: "wrong_origin"}}, "*")</script>'
)


@pytest.mark.conformance('XR-WEB-17')
def test_messages_from_the_wrong_frame_or_origin_are_dropped(artifacts):
  html = view_html(FORGED_POST)
  server = ContractServer(
      widgets=[widget('e1')], documents={'e1': document(html=html)}
  )
  with server, chromium_page(artifacts, 'origins') as page:
    page.goto(server.page_url(*SESSION))
    frame = view_frame(page, 'e1')
    wait_view_ready(frame)
    # The View posts straight to the host page (wrong source: not its proxy)
    # and the host page's own window posts a request as if from the proxy
    # (wrong origin: the main origin), then the View makes a real call.
    frame.evaluate('() => window.forge()')
    page.evaluate(
        '() => window.postMessage({jsonrpc: "2.0", id: 901,'
        ' method: "tools/call", params: {name: "self_posted"}}, "*")'
    )
    reply = frame.evaluate(
        '() => window.request("tools/call", {name: "real", arguments: {}})'
    )
    assert reply['result']['content'][0]['text'] == 'called real'
    names = [r['message']['params']['name'] for r in server.rpc]
    assert names == ['real']
    # Every forwarded request carried the lease and a fresh request token,
    # and the lease never reached the View.
    tokens = [r['token'] for r in server.rpc]
    assert all(tokens) and len(set(tokens)) == len(tokens)
    lease = page.evaluate(
        '() => [...window.adkMcpApps.views.values()][0].lease'
    )
    assert lease not in frame.content()
    # The proxy frame's window now holds a document of the main origin (a
    # srcdoc): its request has the right source but the wrong origin, and
    # the page drops it before the AppBridge sees it.
    page.locator('section[data-event-id="e1"] iframe').evaluate(
        '(el, html) => { el.srcdoc = html; }', WRONG_ORIGIN_SRCDOC
    )
    wait_log(page, 'dropped')
    dropped = [e for e in page_log(page) if e['kind'] == 'dropped']
    assert dropped[0]['origin'] == f'http://127.0.0.1:{server.port}'
    assert [r['message']['params']['name'] for r in server.rpc] == ['real']


@pytest.mark.conformance('XR-WEB-07', 'XR-WEB-08')
def test_interactive_result_is_terminal_and_cancellation_is_delivered(
    artifacts,
):
  server = ContractServer(
      widgets=[widget('e1'), widget('e2')],
      documents={
          'e1': document(tool_result=None),
          'e2': document(tool_result=None),
      },
  )
  with server, chromium_page(artifacts, 'interactive') as page:
    page.goto(server.page_url(*SESSION))
    first = view_frame(page, 'e1')
    second = view_frame(page, 'e2')
    wait_view_ready(first)
    wait_view_ready(second)
    wait_log(page, 'initialized', 2)
    assert 'ui/notifications/tool-result' not in view_rec(first)['received']
    server.notify(
        'view-1',
        {
            'jsonrpc': '2.0',
            'method': 'ui/notifications/tool-result',
            'params': TOOL_RESULT,
        },
    )
    server.notify(
        'view-1',
        {
            'jsonrpc': '2.0',
            'method': 'ui/notifications/tool-result',
            'params': {'content': [{'type': 'text', 'text': 'second'}]},
        },
    )
    server.notify(
        'view-2',
        {
            'jsonrpc': '2.0',
            'method': 'ui/notifications/tool-cancelled',
            'params': {'reason': 'user cancelled'},
        },
    )
    wait_log(page, 'notification', 3)
    first.wait_for_function(
        '() => window.rec.received.includes("ui/notifications/tool-result")'
    )
    second.wait_for_function(
        '() => window.rec.received.includes("ui/notifications/tool-cancelled")'
    )
    # The second tool-result came after the terminal one: not delivered.
    # (A ping round trip after it proves the View saw all it was sent.)
    first.evaluate('() => window.request("ping", {})')
    rec = view_rec(first)
    assert rec['received'].count('ui/notifications/tool-result') == 1
    assert rec['params']['ui/notifications/tool-result'] == TOOL_RESULT
    assert view_rec(second)['params']['ui/notifications/tool-cancelled'] == {
        'reason': 'user cancelled'
    }


@pytest.mark.conformance('XR-WEB-10', 'XR-WEB-11')
def test_teardown_waits_for_ack_or_times_out_then_closes_the_view(artifacts):
  hanging = view_html('window.hangTeardown = true;')
  requesting = view_html(
      'window.askTeardown = () => parent.postMessage({jsonrpc: "2.0",'
      ' method: "ui/notifications/request-teardown", params: {}}, "*");'
  )
  server = ContractServer(
      widgets=[widget('e1'), widget('e2'), widget('e3')],
      documents={
          'e1': document(),
          'e2': document(html=hanging),
          'e3': document(html=requesting),
      },
  )
  with server, chromium_page(artifacts, 'teardown') as page:
    page.goto(server.page_url(*SESSION, teardownTimeoutMs='500'))
    frames = [view_frame(page, e) for e in ('e1', 'e2', 'e3')]
    for frame in frames:
      wait_view_ready(frame)
    wait_log(page, 'initialized', 3)
    # A View that acknowledges: the page posts teardown acknowledged.
    page.evaluate('() => window.adkMcpApps.teardown("view-1")')
    wait_log(page, 'teardown', 1)
    # A View that never answers: the timeout ends the wait, not acknowledged.
    page.evaluate('() => window.adkMcpApps.teardown("view-2")')
    wait_log(page, 'teardown', 2)
    # A View asking to be torn down: the host decides (here: yes).
    frames[2].evaluate('() => window.askTeardown()')
    wait_log(page, 'teardown', 3)
    page.wait_for_function('() => window.adkMcpApps.views.size === 0')
    log = [e for e in page_log(page) if e['kind'] == 'teardown']
    assert [(e['viewId'], e['acknowledged'], e['requested']) for e in log] == [
        ('view-1', True, False),
        ('view-2', False, False),
        ('view-3', True, True),
    ]
    assert server.teardowns == [
        {'viewId': 'view-1', 'acknowledged': True},
        {'viewId': 'view-2', 'acknowledged': False},
        {'viewId': 'view-3', 'acknowledged': True},
    ]
    # The frames are gone and host-owned placeholders took their place.
    assert page.locator('section.widget iframe').count() == 0
    assert page.locator('section.widget .placeholder').count() == 3


CSP_PROBE = (
    'window.probe = async (url) => { try { await fetch(url, {mode: "no-cors"});'
    ' return "ok"; }'
    ' catch (e) { return "blocked"; } };'
    'window.policy = () => document.querySelector('
    '"meta[http-equiv=Content-Security-Policy]").content;'
    'window.allows = (f) => document.featurePolicy.allowsFeature(f);'
)


@pytest.mark.conformance('XR-WEB-20')
def test_csp_and_permissions_come_from_ui_meta_and_are_never_widened(
    artifacts,
):
  html = view_html(CSP_PROBE)
  server = ContractServer(widgets=[widget('e1'), widget('e2')], documents={})
  with server:
    allowed = f'http://127.0.0.1:{server.port}'
    server.documents['e1'] = document(
        html=html,
        ui_meta={
            'csp': {
                'connectDomains': [
                    allowed,
                    '*',
                    "'unsafe-eval'",
                    'https://a.example; script-src *',
                ],
                'resourceDomains': ['https://cdn.example'],
            },
            'permissions': {'camera': {}},
        },
    )
    server.documents['e2'] = document(html=html)
    with chromium_page(artifacts, 'csp') as page:
      page.goto(server.page_url(*SESSION))
      declared = view_frame(page, 'e1')
      default = view_frame(page, 'e2')
      wait_view_ready(declared)
      wait_view_ready(default)
      policy = declared.evaluate('() => window.policy()')
      directives = dict(
          d.strip().split(' ', 1) for d in policy.split(';') if d.strip()
      )
      # Only the declared origins; the injected keyword, wildcard and
      # directive never reach the policy.
      assert directives['connect-src'] == f"'self' {allowed}"
      assert ' * ' not in policy and 'a.example' not in policy
      assert directives['frame-src'] == "'none'"
      assert directives['object-src'] == "'none'"
      assert directives['script-src'] == (
          "'self' 'unsafe-inline' 'unsafe-eval' https://cdn.example"
      )
      assert directives['worker-src'] == "'self' blob: https://cdn.example"
      probe = f'{allowed}/mcp-apps/static/page.css'
      assert declared.evaluate('(u) => window.probe(u)', probe) == 'ok'
      # No csp metadata: the restrictive default blocks the same request.
      assert default.evaluate('(u) => window.probe(u)', probe) == 'blocked'
      assert "connect-src 'self'" in default.evaluate('() => window.policy()')
      # Permissions-Policy: only what was declared, and only where declared.
      assert declared.evaluate('() => window.allows("camera")') is True
      assert declared.evaluate('() => window.allows("microphone")') is False
      assert default.evaluate('() => window.allows("camera")') is False


@pytest.mark.conformance('XR-WEB-22', 'XR-WEB-23')
def test_cold_widgets_render_placeholders_without_server_access(artifacts):
  server = ContractServer(
      widgets=[
          widget('e1', state='cold', affordance={'replaySafe': True}),
          widget('e2', state='cold', toolName='book_flight'),
          widget(
              'e3',
              state='cold',
              affordance={
                  'offer': 'placeholder',
                  'replaySafe': False,
                  'toolName': 'show_forecast',
                  'warning': None,
                  'reason': 'tool_missing',
              },
          ),
      ],
      documents={},
  )
  with server, chromium_page(artifacts, 'cold') as page:
    page.goto(server.page_url(*SESSION))
    wait_log(page, 'rendered')
    # The placeholders came from the page alone: the widget list was the
    # only request after the page and its assets, no View was opened.
    assert [r for r in server.requests if r[1].startswith('/mcp-apps/api')] == [
        ('GET', '/mcp-apps/api/sessions/app/user/session-1/widgets')
    ]
    assert page.locator('iframe').count() == 0
    safe = page.locator('section[data-event-id="e1"] .placeholder')
    unsafe = page.locator('section[data-event-id="e2"] .placeholder')
    assert safe.locator('button').all_inner_texts() == ['Refresh']
    assert safe.locator('.warning').count() == 0
    assert unsafe.locator('button').all_inner_texts() == [
        'Run book_flight again'
    ]
    assert 'may repeat its effects' in unsafe.locator('.warning').inner_text()
    # The server's placeholder offer: its reason, and no action.
    gone = page.locator('section[data-event-id="e3"] .placeholder')
    assert gone.locator('button').count() == 0
    assert 'tool_missing' in gone.locator('.reason').inner_text()
    # One click runs it again (confirmed) and the page re-renders.
    unsafe.locator('button').click()
    wait_log(page, 'rendered', 2)
    assert server.reruns == [{
        'appName': 'app',
        'userId': 'user',
        'sessionId': 'session-1',
        'eventId': 'e2',
        'functionCallId': 'fc-e2',
        'confirmed': True,
    }]


@pytest.mark.conformance('XR-WEB-21', 'XR-WEB-23')
def test_legacy_payload_replays_and_a_refused_view_gets_read_only_placeholder(
    artifacts,
):
  server = ContractServer(
      widgets=[widget('e1', state='legacy'), widget('e2')],
      documents={'e1': document()},
      denied_views={'e2': 'read_only_render'},
  )
  with server, chromium_page(artifacts, 'legacy') as page:
    page.goto(server.page_url(*SESSION))
    frame = view_frame(page, 'e1')
    frame.wait_for_function(
        '() => window.rec.received.includes("ui/notifications/tool-result")'
    )
    assert view_rec(frame)['params']['ui/notifications/tool-input'] == {
        'arguments': TOOL_INPUT
    }
    wait_log(page, 'read-only')
    refused = page.locator('section[data-event-id="e2"]')
    assert refused.locator('iframe').count() == 0
    assert 'read_only_render' in refused.locator('.placeholder').inner_text()
    # Only the refused open reached the server for e2: no rpc, no teardown.
    assert all(r['viewId'] == 'view-1' for r in server.rpc)
    assert [e for e in page_log(page) if e['kind'] == 'read-only'] == [
        {'kind': 'read-only', 'eventId': 'e2', 'reason': 'read_only_render'}
    ]
