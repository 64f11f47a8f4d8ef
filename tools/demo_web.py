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

"""`make demo` part 3: MCP App Views in the browser via `adk web --mcp_apps`.

Starts ADK's own web server the way a user would (`python -m google.adk.cli
web --mcp_apps` on a free loopback port) over the sample agent
`contributing/samples/mcp_apps_web` (the dashboard sample's server and the
published system-monitor, one registry, an offline stand-in model), runs a
short scripted conversation through the stock routes, and prints the URL of
the renderer page. Then, headless (`DEMO_HEADLESS=1`, or stdin not a TTY),
it drives that page in Debian's Chromium, saves a screenshot and exits;
otherwise it serves until Ctrl-C. Decisions: docs/decisions/issue26-demo.md.

Usage:

  python tools/demo_web.py                     # serve until Ctrl-C
  DEMO_HEADLESS=1 python tools/demo_web.py     # drive, screenshot, exit 0
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
import contextlib
import os
from pathlib import Path
import signal
import socket
import subprocess
import sys
import time
from types import FrameType
from typing import Any
from typing import Optional

import httpx

ROOT = Path(__file__).resolve().parent.parent
AGENT_DIR = ROOT / 'contributing' / 'samples' / 'mcp_apps_web'
APP = AGENT_DIR.name
USER = 'demo-user'
CHROMIUM = '/usr/bin/chromium'
CHROMIUM_ARGS = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
]
DEFAULT_SCREENSHOT = ROOT / '.cache' / 'demo' / 'demo-view.png'
SERVER_LOG = ROOT / '.cache' / 'demo' / 'adk-web.log'
TURNS = (
    'Show me the agent dashboard.',
    'How is this machine doing?',
)
START_TIMEOUT_S = 90.0
WAIT_MS = 60_000
STOP_TIMEOUT_S = 20.0

sys.path.insert(0, str(ROOT / 'tests' / 'integration' / 'third_party_mcp_apps'))

# pylint: disable-next=g-import-not-at-top,wrong-import-position
import servers as third_party


def headless() -> bool:
  """Whether to drive the page and exit rather than serve until Ctrl-C.

  `DEMO_HEADLESS=1` forces it and `DEMO_HEADLESS=0` forbids it; unset, a
  run whose stdin is not a terminal (CI, a pipe, a test) is headless, so a
  non-interactive `make demo` never waits for a Ctrl-C nobody can send.
  """
  value = os.environ.get('DEMO_HEADLESS', '').strip()
  if value:
    return value not in ('0', 'false', 'no')
  return not sys.stdin.isatty()


def _free_port() -> int:
  with socket.socket() as s:
    s.bind(('127.0.0.1', 0))
    return int(s.getsockname()[1])


def _env() -> dict[str, str]:
  env = dict(os.environ)
  env['PYTHONPATH'] = os.pathsep.join([
      str(ROOT / 'src'),
      str(ROOT / 'tests' / 'integration' / 'fixtures'),
      str(ROOT / 'contributing' / 'samples'),
  ])
  env['PYTHONUNBUFFERED'] = '1'
  return env


def command(port: int) -> list[str]:
  """The `adk web` command line the demo runs (what a user would type)."""
  return [
      sys.executable,
      '-m',
      'google.adk.cli',
      'web',
      '--mcp_apps',
      '--no-reload',
      '--host=127.0.0.1',
      f'--port={port}',
      '--session_service_uri=memory://',
      '--artifact_service_uri=memory://',
      '--log_level=WARNING',
      str(AGENT_DIR),
  ]


class _Stop(Exception):
  """SIGTERM: stop the server as Ctrl-C would."""


def _on_sigterm(signum: int, frame: Optional[FrameType]) -> None:
  del signum, frame
  raise _Stop()


@contextlib.contextmanager
def adk_web(port: int) -> Iterator[subprocess.Popen[bytes]]:
  """Runs `adk web --mcp_apps` until the block ends; leaves no process.

  The server runs in a session of its own, so the terminal's Ctrl-C
  reaches only the demo, which then stops the server (SIGINT: uvicorn's
  graceful shutdown closes the Runner and its MCP connections) and ends
  any server process that outlived it.
  """
  SERVER_LOG.parent.mkdir(parents=True, exist_ok=True)
  with open(SERVER_LOG, 'wb') as log:
    proc = subprocess.Popen(
        command(port),
        cwd=ROOT,
        env=_env(),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
  children: set[int] = set()
  try:
    yield proc
  finally:
    children = third_party.descendant_pids(proc.pid)
    if proc.poll() is None:
      proc.send_signal(signal.SIGINT)
      try:
        proc.wait(STOP_TIMEOUT_S)
      except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    left = {pid for pid in children if _alive(pid)}
    for pid in left:
      with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    print(
        '   adk web stopped by SIGINT, as Ctrl-C stops it (exit'
        f' {proc.returncode}); its MCP server processes: {len(children)},'
        f' left over and ended by the demo: {len(left)}',
        flush=True,
    )


def _alive(pid: int) -> bool:
  try:
    state = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0]
  except (OSError, IndexError):
    return False
  return state != 'Z'


def wait_ready(proc: subprocess.Popen[bytes], base: str) -> None:
  """Waits until the server answers `/list-apps` (or fails)."""
  deadline = time.monotonic() + START_TIMEOUT_S
  while time.monotonic() < deadline:
    if proc.poll() is not None:
      break
    with contextlib.suppress(httpx.HTTPError):
      if httpx.get(f'{base}/list-apps', timeout=2.0).status_code == 200:
        return
    time.sleep(0.2)
  tail = SERVER_LOG.read_text(errors='replace')[-3000:]
  sys.exit(f'adk web did not start (log {SERVER_LOG}):\n{tail}')


def converse(client: httpx.Client) -> tuple[str, list[dict[str, Any]]]:
  """The scripted conversation on the stock routes; the Session and widgets."""
  made = client.post(f'/apps/{APP}/users/{USER}/sessions')
  made.raise_for_status()
  session = str(made.json()['id'])
  print(f'   POST /apps/{APP}/users/{USER}/sessions -> Session {session}')
  for text in TURNS:
    run = client.post(
        '/run',
        json={
            'appName': APP,
            'userId': USER,
            'sessionId': session,
            'newMessage': {'role': 'user', 'parts': [{'text': text}]},
        },
    )
    run.raise_for_status()
    print(f'   POST /run  user: {text}')
    for event in run.json():
      actions = event.get('actions') or {}
      for widget in actions.get('renderUiWidgets') or ():
        uri = (widget.get('payload') or {}).get('resourceUri')
        print(f'      widget rendered: {uri}')
      for part in (event.get('content') or {}).get('parts') or ():
        if part.get('functionCall'):
          print(f'      model calls: {part["functionCall"]["name"]}')
        if part.get('text'):
          print(f'      model: {_short(part["text"], 100)}')
  listed = client.get(f'/mcp-apps/api/sessions/{APP}/{USER}/{session}/widgets')
  listed.raise_for_status()
  widgets: list[dict[str, Any]] = listed.json()['widgets']
  for widget in widgets:
    print(
        f'   /mcp-apps lists {widget["toolName"]} ({widget["state"]},'
        f' toolset {widget["toolsetId"]})'
    )
  return session, widgets


def _short(text: str, limit: int) -> str:
  text = ' '.join(text.split())
  return text if len(text) <= limit else text[: limit - 3] + '...'


def _inner_frame(page: Any, event_id: str) -> Any:
  outer = page.frame_locator(f'section[data-event-id="{event_id}"] iframe')
  inner = outer.locator('iframe')
  inner.wait_for(state='attached', timeout=WAIT_MS)
  frame = inner.element_handle().content_frame()
  assert frame is not None
  return frame


def drive(url: str, widgets: list[dict[str, Any]], screenshot: Path) -> None:
  """Drives the page in headless Chromium until both Views worked."""
  # pylint: disable-next=g-import-not-at-top
  from playwright.sync_api import sync_playwright

  if not Path(CHROMIUM).exists():
    sys.exit(f'{CHROMIUM} is missing: run `make chromium`')
  by_tool = {w['toolName']: w for w in widgets}
  screenshot.parent.mkdir(parents=True, exist_ok=True)
  with sync_playwright() as playwright:
    browser = playwright.chromium.launch(
        executable_path=CHROMIUM, args=CHROMIUM_ARGS
    )
    try:
      page = browser.new_page(viewport={'width': 1100, 'height': 900})
      try:
        _exercise(page, url, by_tool)
      finally:
        # Chromium paints a cross-origin frame only inside the viewport, so
        # the viewport grows to the whole page before the screenshot.
        height = page.evaluate('() => document.documentElement.scrollHeight')
        page.set_viewport_size({'width': 1100, 'height': min(height, 4000)})
        page.screenshot(path=str(screenshot))
      _report(page, screenshot)
    finally:
      browser.close()


def _wait(page: Any, predicate: str, arg: Any = None) -> None:
  page.wait_for_function(predicate, arg=arg, timeout=WAIT_MS)


def _ok_calls(page: Any, tool: str, at_least: int) -> None:
  """Waits for `at_least` successful `tools/call`s of `tool` by its View."""
  _wait(
      page,
      """([tool, n]) => {
        const log = window.adkMcpApps.log;
        const views = new Set(log.filter((e) => e.kind === 'rpc'
            && e.name === tool).map((e) => e.viewId));
        return log.filter((e) => e.kind === 'rpc-reply' && e.ok
            && e.method === 'tools/call' && views.has(e.viewId)).length >= n;
      }""",
      [tool, at_least],
  )


def _exercise(page: Any, url: str, by_tool: dict[str, Any]) -> None:
  page.goto(url)
  _wait(
      page,
      '(n) => window.adkMcpApps.log.filter((e) => e.kind ==='
      ' "initialized").length >= n',
      len(by_tool),
  )
  print(f'   page: {len(by_tool)} Views initialized')
  # The system-monitor View polls its app-only tool by itself.
  _ok_calls(page, 'poll-system-stats', 2)
  print('   system-monitor View: poll-system-stats answered twice')
  # In the dashboard, picking an event type makes the View query its
  # app-only tool, as a user's click would.
  dashboard = by_tool['show_agent_dashboard']
  frame = _inner_frame(page, dashboard['eventId'])
  frame.wait_for_function(
      '() => document.querySelectorAll("#f-type option").length > 1',
      timeout=WAIT_MS,
  )
  frame.locator('#f-type').select_option(index=1)
  _ok_calls(page, 'query_agent_events', 1)
  print('   dashboard View: event type picked; query_agent_events answered')


def _report(page: Any, screenshot: Path) -> None:
  log: list[dict[str, Any]] = page.evaluate('() => window.adkMcpApps.log')
  tools = page.evaluate(
      '() => Object.fromEntries([...document.querySelectorAll('
      '"section[data-view-id]")].map((s) => [s.dataset.viewId,'
      ' s.querySelector("header").textContent]))'
  )
  kinds = Counter(e['kind'] for e in log)
  print(
      '   page log (window.adkMcpApps.log): '
      + ', '.join(f'{k} x{n}' for k, n in sorted(kinds.items()))
  )
  for view_id, header in sorted(tools.items(), key=lambda kv: kv[1]):
    calls = Counter(
        f'{e["method"]} {e.get("name") or ""}'.strip()
        for e in log
        if e['kind'] == 'rpc' and e.get('viewId') == view_id
    )
    ok = sum(
        1
        for e in log
        if e['kind'] == 'rpc-reply' and e.get('viewId') == view_id and e['ok']
    )
    done = ', '.join(f'{c} x{n}' for c, n in sorted(calls.items()))
    print(
        f'   View {header}: governed calls {done or "none"}; {ok} answered ok'
    )
  print(f'   screenshot: {screenshot}')


def main() -> None:
  """Runs part 3; exits non-zero if the page does not work."""
  signal.signal(signal.SIGTERM, _on_sigterm)
  # Ctrl-C even where the shell started the demo with SIGINT ignored.
  signal.signal(signal.SIGINT, signal.default_int_handler)
  port = _free_port()
  base = f'http://127.0.0.1:{port}'
  print(f'   $ adk web --mcp_apps --no-reload --port={port} ... {APP}')
  print(f'   (server log: {SERVER_LOG})', flush=True)
  try:
    with adk_web(port) as proc:
      wait_ready(proc, base)
      with httpx.Client(base_url=base, timeout=120.0) as client:
        session, widgets = converse(client)
      url = f'{base}/mcp-apps/?app={APP}&user={USER}&session={session}'
      print(f'\n   Open the Views: {url}')
      print(f'   (ADK dev UI: {base}/dev-ui/?app={APP})\n', flush=True)
      if headless():
        shot = Path(os.environ.get('DEMO_SCREENSHOT') or DEFAULT_SCREENSHOT)
        drive(url, widgets, shot.resolve())
        return
      print('   Serving; press Ctrl-C to stop.', flush=True)
      proc.wait()
      sys.exit(f'adk web exited ({proc.returncode}); log: {SERVER_LOG}')
  except (KeyboardInterrupt, _Stop):
    print('   demo stopped.', flush=True)


if __name__ == '__main__':
  main()
