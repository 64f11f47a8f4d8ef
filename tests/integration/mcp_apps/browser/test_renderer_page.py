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
    'XR-WEB-03', 'XR-WEB-05', 'XR-WEB-06', 'XR-WEB-09', 'XR-WEB-12',
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
        'serverTools', 'serverResources', 'message', 'updateModelContext',
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
    assert frame.evaluate(
        '() => { try { return parent.document.title; }'
        ' catch (e) { return "blocked"; } }'
    ) == 'blocked'
