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

"""A capability-gated View, in Chromium, against ADK's host capabilities.

P2-ADV-07: the fixture View in `fixtures/mcp_apps_capability_view/` turns a
feature on only when the `hostCapabilities` of its `ui/initialize` result
declares it. A minimal test host page (not the product renderer) embeds the
View in a sandboxed iframe, answers `ui/initialize` with the JSON of ADK's
`HostCapabilities(...).to_wire()`, serves the View's requests only for what
it advertised, and writes the View's report into `<pre id="result">` when
the report arrives.

The pages are served by a loopback `http.server` thread and loaded in
headless `/usr/bin/chromium`, driven over the DevTools protocol with
`websockets`: `--dump-dom --virtual-time-budget` dumps before the View's
postMessage exchange has finished in most runs of Chromium 156, so the test
instead awaits the result element's `data-status` leaving `pending`, seen
by a MutationObserver in the page. Nothing is ordered by sleeping.

The full v1 object turns on all four features; a narrowed object turns off
exactly what it drops (a member, or a modality); an empty object turns on
none. In every case the host also records the methods the View sent, so a
feature that stays off is proven to send nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
import functools
import http.server
import itertools
import json
import os
from pathlib import Path
import re
import subprocess
import tempfile
import threading
from typing import Any
import urllib.parse

from google.adk.mcp_apps.profile.capabilities import ContextModality
from google.adk.mcp_apps.profile.capabilities import HostCapabilities
import pytest
from websockets.asyncio.client import connect

CHROMIUM = '/usr/bin/chromium'
FIXTURE_DIR = (
    Path(__file__).resolve().parents[1]
    / 'fixtures'
    / 'mcp_apps_capability_view'
)
LAUNCH_TIMEOUT_SECONDS = 30.0
CASE_TIMEOUT_SECONDS = 30.0
STOP_TIMEOUT_SECONDS = 10.0
REPORT_METHOD = 'x-capability-view/report'
FEATURE_METHODS = {
    'serverTools': 'tools/call',
    'serverResources': 'resources/read',
    'message': 'ui/message',
    'updateModelContext': 'ui/update-model-context',
}
ALL_FEATURES = tuple(FEATURE_METHODS)

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM),
        reason=(
            f'{CHROMIUM} is absent; install Debian Chromium with'
            ' `apt-get install -y chromium`'
        ),
    ),
]

# Resolves with the result element once the host has written the View's
# report (data-status leaves "pending"); a MutationObserver, not a timer.
_AWAIT_RESULT = """
new Promise((resolve) => {
  const el = document.getElementById('result');
  const check = () => {
    if (el.getAttribute('data-status') === 'pending') return false;
    resolve({status: el.getAttribute('data-status'), text: el.textContent});
    return true;
  };
  if (check()) return;
  new MutationObserver((_, observer) => {
    if (check()) observer.disconnect();
  }).observe(el, {attributes: true, attributeFilter: ['data-status']});
})
"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
  """Serves the fixture folder without logging every request."""

  def log_message(self, format: str, *args: Any) -> None:  # pylint: disable=redefined-builtin
    del format, args


@pytest.fixture(scope='module')
def base_url() -> Iterator[str]:
  """Serves the fixture pages on a loopback port for the module."""
  handler = functools.partial(_QuietHandler, directory=str(FIXTURE_DIR))
  server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
  thread = threading.Thread(target=server.serve_forever, daemon=True)
  thread.start()
  try:
    yield f'http://127.0.0.1:{server.server_address[1]}'
  finally:
    server.shutdown()
    server.server_close()
    thread.join(STOP_TIMEOUT_SECONDS)


def _read_devtools_url(
    process: subprocess.Popen[str], stderr_lines: list[str]
) -> str:
  """Reads Chromium's stderr until it announces its DevTools endpoint."""
  found: list[str] = []
  announced = threading.Event()

  def drain() -> None:
    assert process.stderr is not None
    for line in process.stderr:
      stderr_lines.append(line)
      match = re.search(r'DevTools listening on (ws://\S+)', line)
      if match and not found:
        found.append(match.group(1))
        announced.set()
    announced.set()

  # The thread keeps draining after the announcement, so the pipe never
  # fills and blocks Chromium.
  threading.Thread(target=drain, daemon=True).start()
  if not announced.wait(LAUNCH_TIMEOUT_SECONDS) or not found:
    raise AssertionError(
        'Chromium announced no DevTools endpoint:\n' + ''.join(stderr_lines)
    )
  return found[0]


@pytest.fixture(scope='module')
def devtools_url() -> Iterator[str]:
  """Starts headless Chromium for the module; yields its browser endpoint."""
  with tempfile.TemporaryDirectory(prefix='capability-view-') as profile:
    process = subprocess.Popen(
        [
            CHROMIUM,
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--disable-quic',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            f'--user-data-dir={profile}',
            '--remote-debugging-address=127.0.0.1',
            '--remote-debugging-port=0',
            'about:blank',
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    stderr_lines: list[str] = []
    try:
      yield _read_devtools_url(process, stderr_lines)
    finally:
      process.terminate()
      try:
        process.wait(STOP_TIMEOUT_SECONDS)
      except subprocess.TimeoutExpired:
        process.kill()
        process.wait(STOP_TIMEOUT_SECONDS)


class _DevTools:
  """A minimal DevTools protocol client over one browser websocket."""

  def __init__(self, socket: Any) -> None:
    self._socket = socket
    self._ids = itertools.count(1)
    self._events: list[dict[str, Any]] = []

  async def call(
      self, method: str, params: dict[str, Any] | None = None, **kw: Any
  ) -> dict[str, Any]:
    """Sends a command and returns its result, keeping events for later."""
    message_id = next(self._ids)
    await self._socket.send(
        json.dumps(
            {'id': message_id, 'method': method, 'params': params or {}} | kw
        )
    )
    while True:
      message = json.loads(await self._socket.recv())
      if message.get('id') == message_id:
        if 'error' in message:
          raise AssertionError(f'{method} failed: {message["error"]}')
        return message['result']
      if 'method' in message:
        self._events.append(message)

  async def event(self, method: str, session_id: str) -> dict[str, Any]:
    """Returns the first `method` event of a session, waiting if needed."""
    while True:
      if self._events:
        message = self._events.pop(0)
      else:
        message = json.loads(await self._socket.recv())
      if (
          message.get('method') == method
          and message.get('sessionId') == session_id
      ):
        return message['params']


async def _load_host(devtools: str, url: str) -> dict[str, Any]:
  async with connect(devtools, max_size=None) as socket:
    cdp = _DevTools(socket)
    context = (await cdp.call('Target.createBrowserContext'))[
        'browserContextId'
    ]
    try:
      target = (
          await cdp.call(
              'Target.createTarget',
              {'url': 'about:blank', 'browserContextId': context},
          )
      )['targetId']
      session = (
          await cdp.call(
              'Target.attachToTarget', {'targetId': target, 'flatten': True}
          )
      )['sessionId']
      await cdp.call('Page.enable', sessionId=session)
      navigated = await cdp.call(
          'Page.navigate', {'url': url}, sessionId=session
      )
      assert 'errorText' not in navigated, navigated
      await cdp.event('Page.loadEventFired', session)
      evaluated = await cdp.call(
          'Runtime.evaluate',
          {
              'expression': _AWAIT_RESULT,
              'awaitPromise': True,
              'returnByValue': True,
          },
          sessionId=session,
      )
      assert 'exceptionDetails' not in evaluated, evaluated
      return evaluated['result']['value']
    finally:
      await cdp.call(
          'Target.disposeBrowserContext', {'browserContextId': context}
      )


def _run_view(
    devtools: str, base: str, capabilities: HostCapabilities
) -> tuple[dict[str, Any], dict[str, Any]]:
  """Loads the host with ADK's capabilities; returns (wire, host result)."""
  wire = capabilities.to_wire()
  query = urllib.parse.urlencode({'hostCapabilities': json.dumps(wire)})
  try:
    value = asyncio.run(
        asyncio.wait_for(
            _load_host(devtools, f'{base}/host.html?{query}'),
            CASE_TIMEOUT_SECONDS,
        )
    )
  except TimeoutError:
    raise AssertionError(
        f'The host wrote no result within {CASE_TIMEOUT_SECONDS}s: the View'
        ' never sent its report'
    ) from None
  outcome = json.loads(value['text'])
  assert value['status'] == 'ok', outcome
  return wire, outcome


def _assert_gated(
    wire: dict[str, Any],
    outcome: dict[str, Any],
    enabled: list[str],
    modalities: dict[str, list[str]],
) -> None:
  """Checks the View turned on exactly `enabled`, and used only those."""
  report = outcome['report']
  assert outcome['hostCapabilities'] == wire
  assert outcome['violations'] == []
  assert outcome['viewInitialize']['protocolVersion'] == '2026-01-26'
  assert report['protocolVersion'] == '2026-01-26'
  assert report['enabled'] == enabled
  assert report['modalities'] == modalities
  assert report['buttons'] == {f: f in enabled for f in ALL_FEATURES}
  assert report['used'] == {f: 'ok' for f in enabled}
  assert outcome['observed'] == [
      'ui/initialize',
      'ui/notifications/initialized',
      *(FEATURE_METHODS[f] for f in enabled),
      REPORT_METHOD,
  ]


@pytest.mark.conformance('P2-ADV-07')
def test_full_v1_host_capabilities_turn_on_all_four_features(
    devtools_url: str, base_url: str
) -> None:
  wire, outcome = _run_view(devtools_url, base_url, HostCapabilities())

  assert wire == {
      'serverTools': {},
      'serverResources': {},
      'message': {'text': {}},
      'updateModelContext': {'text': {}, 'structuredContent': {}},
  }
  _assert_gated(
      wire,
      outcome,
      enabled=list(ALL_FEATURES),
      modalities={
          'message': ['text'],
          'updateModelContext': ['text', 'structuredContent'],
      },
  )


@pytest.mark.conformance('P2-ADV-07')
@pytest.mark.parametrize(
    ('capabilities', 'enabled', 'modalities'),
    [
        pytest.param(
            HostCapabilities(message=None, update_model_context=None),
            ['serverTools', 'serverResources'],
            {},
            id='no_message_no_update_model_context',
        ),
        pytest.param(
            HostCapabilities(
                server_resources=False,
                update_model_context=frozenset({ContextModality.TEXT}),
            ),
            ['serverTools', 'message', 'updateModelContext'],
            {'message': ['text'], 'updateModelContext': ['text']},
            id='no_server_resources_context_text_only',
        ),
    ],
)
def test_narrowed_host_capabilities_turn_off_exactly_what_they_drop(
    devtools_url: str,
    base_url: str,
    capabilities: HostCapabilities,
    enabled: list[str],
    modalities: dict[str, list[str]],
) -> None:
  wire, outcome = _run_view(devtools_url, base_url, capabilities)

  _assert_gated(wire, outcome, enabled=enabled, modalities=modalities)


@pytest.mark.conformance('P2-ADV-07')
def test_empty_host_capabilities_turn_on_no_feature(
    devtools_url: str, base_url: str
) -> None:
  capabilities = HostCapabilities(
      server_tools=False,
      server_resources=False,
      message=None,
      update_model_context=None,
  )

  wire, outcome = _run_view(devtools_url, base_url, capabilities)

  assert wire == {}
  _assert_gated(wire, outcome, enabled=[], modalities={})
