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

"""`make demo` tells its story and exits 0, using only the public API.

The demo runs as `make demo` runs it (`tools/demo.py`, which starts the
pristine and patched scenarios and the bound story as subprocesses, then
part 3: `adk web --mcp_apps` over the `mcp_apps_web` sample, driven in
headless Chromium) against the npm-installed system-monitor server; the test
reads what it printed, the View it wrote and the screenshot it saved.
"""

from __future__ import annotations

import ast
import asyncio
import os
from pathlib import Path
import re
import shutil
import struct
import subprocess
import sys

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / 'tools'


def _imported_modules(path: Path) -> set[str]:
  tree = ast.parse(path.read_text())
  found: set[str] = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.ImportFrom) and node.module:
      found.add(node.module)
    elif isinstance(node, ast.Import):
      found.update(alias.name for alias in node.names)
  return found


def test_bound_demo_uses_only_the_public_mcp_apps_api() -> None:
  modules = _imported_modules(TOOLS / 'demo_bound.py')
  apps = {m for m in modules if m.startswith('google.adk.mcp_apps')}
  assert apps == {'google.adk.mcp_apps'}
  assert not {'sealing_support', 'conftest'} & modules


def test_web_sample_uses_only_the_public_mcp_apps_api() -> None:
  sample = ROOT / 'contributing' / 'samples' / 'mcp_apps_web' / 'agent.py'
  modules = _imported_modules(sample)
  apps = {m for m in modules if m.startswith('google.adk.mcp_apps')}
  assert apps == {'google.adk.mcp_apps'}
  # Part 3 drives ADK through its CLI and HTTP routes only.
  assert not any(
      m.startswith('google.adk')
      for m in _imported_modules(TOOLS / 'demo_web.py')
  )


def test_web_sample_without_system_monitor_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
  # pylint: disable=g-import-not-at-top
  from google.adk.models.llm_request import LlmRequest
  from google.genai import types
  from mcp_apps_web import agent

  monkeypatch.setattr(agent, 'SYSTEM_MONITOR', tmp_path / 'missing.js')
  assert agent.make_registry().toolset_ids == ('dashboard',)
  request = LlmRequest(
      contents=[
          types.Content(role='user', parts=[types.Part(text='CPU load?')])
      ]
  )

  async def answer() -> str:
    async for response in agent.WebDemoStandInLlm().generate_content_async(
        request
    ):
      assert response.content and response.content.parts
      return str(response.content.parts[0].text)
    raise AssertionError('no answer')

  text = asyncio.run(answer())
  assert text.startswith(agent.STAND_IN_LABEL)
  assert 'make npm-servers' in text


@pytest.mark.parametrize(
    ('setting', 'expected'),
    [(None, True), ('1', True), ('0', False)],
)
def test_web_demo_is_headless_without_a_terminal_unless_told(
    setting: str | None, expected: bool
) -> None:
  env = {k: v for k, v in os.environ.items() if k != 'DEMO_HEADLESS'}
  if setting is not None:
    env['DEMO_HEADLESS'] = setting
  proc = subprocess.run(
      [sys.executable, '-c', 'import demo_web; print(demo_web.headless())'],
      cwd=TOOLS,
      env=env,
      stdin=subprocess.DEVNULL,
      capture_output=True,
      text=True,
      check=True,
  )
  assert proc.stdout.strip() == str(expected)


def _png_size(path: Path) -> tuple[int, int]:
  """The width and height of a PNG file (its IHDR chunk)."""
  data = path.read_bytes()
  assert data[:8] == b'\x89PNG\r\n\x1a\n', path
  assert data[12:16] == b'IHDR'
  width, height = struct.unpack('>II', data[16:24])
  return width, height


def _assert_browser_part(out: str, screenshot: Path) -> None:
  """Part 3: adk web --mcp_apps, the scripted chat and the page's Views."""
  assert 'widget rendered: ui://agent-dashboard/view.html' in out
  assert 'widget rendered: ui://system-monitor/mcp-app.html' in out
  assert '/mcp-apps lists show_agent_dashboard (live, toolset dashboard)' in out
  assert '/mcp-apps lists get-system-info (live, toolset monitor)' in out
  url = re.search(
      r'Open the Views: (http://127\.0\.0\.1:(\d+)/mcp-apps/'
      r'\?app=mcp_apps_web&user=demo-user&session=[\w-]+)$',
      out,
      re.M,
  )
  assert url, out
  assert 'page: 2 Views initialized' in out
  log = re.search(r'page log \(window\.adkMcpApps\.log\): (.*)$', out, re.M)
  assert log, out
  kinds = dict(
      (kind, int(n)) for kind, n in re.findall(r'([\w-]+) x(\d+)', log[1])
  )
  assert kinds['initialized'] == 2 and kinds['tool-result'] == 2, kinds
  assert kinds['rendered'] == 1, kinds
  monitor = re.search(
      r'View get-system-info \(live\): governed calls tools/call'
      r' poll-system-stats x(\d+); (\d+) answered ok',
      out,
  )
  assert monitor and int(monitor[1]) >= 2 and int(monitor[2]) >= 2, out
  dashboard = re.search(
      r'View show_agent_dashboard \(live\): governed calls tools/call'
      r' query_agent_events x\d+',
      out,
  )
  assert dashboard, out
  assert f'screenshot: {screenshot}' in out
  width, height = _png_size(screenshot)
  # The viewport grows to the whole page, which holds both Views.
  assert width == 1100 and height > 900, (width, height)
  assert re.search(
      r'adk web stopped by SIGINT.*its MCP server processes: [1-9]\d*,'
      r' left over and ended by the demo: 0$',
      out,
      re.M,
  ), out
  # Nothing the demo started is still running (the server had this port).
  port_flag = f'--port={url[2]}'
  for cmdline in Path('/proc').glob('[0-9]*/cmdline'):
    try:
      assert port_flag.encode() not in cmdline.read_bytes(), cmdline
    except OSError:
      continue


@pytest.mark.skipif(
    not (shutil.which('node') and shutil.which('npm')),
    reason='node and npm are needed for the published MCP App server',
)
def test_demo_tells_the_hosting_story_and_exits_zero(tmp_path: Path) -> None:
  env = dict(os.environ)
  env['PYTHONPATH'] = os.pathsep.join(
      str(ROOT / p)
      for p in ('src', 'tests/integration/fixtures', 'contributing/samples')
  )
  screenshot = tmp_path / 'demo-view.png'
  env['DEMO_HEADLESS'] = '1'
  env['DEMO_SCREENSHOT'] = str(screenshot)
  env['ADK_MCP_APPS_DASHBOARD_DB'] = str(tmp_path / 'events.sqlite3')
  # The renderer page's AppBridge bundle (`make page`; quick when built).
  subprocess.run(
      [sys.executable, str(TOOLS / 'build_page.py')],
      check=True,
      capture_output=True,
  )
  proc = subprocess.run(
      [sys.executable, str(TOOLS / 'demo.py')],
      cwd=ROOT,
      env=env,
      stdin=subprocess.DEVNULL,
      capture_output=True,
      text=True,
      timeout=420,
      check=False,
  )
  out = proc.stdout
  assert proc.returncode == 0, out[-3000:] + proc.stderr[-3000:]
  # Unbound: pristine lists the app-only tool for the model; the series not.
  assert re.search(r'"poll-system-stats"\s+\| \]', out), out
  # The advertisement as the server received it: one connection with it.
  assert re.search(
      r'advertises io\.modelcontextprotocol/ui \{"mimeTypes":\s+'
      r'\["text/html;profile=mcp-app"\]\}',
      out,
  ), out
  assert 'advertises no MCP Apps extension' in out
  assert 'model catalog: ["get-system-info"]' in out
  assert 'app catalog: ["get-system-info", "poll-system-stats"]' in out
  written = re.search(r'^\s+(/\S+system-monitor-view\.html)$', out, re.M)
  assert written, out
  view = Path(written[1])
  assert view.read_text().lstrip().lower().startswith('<!doctype html')
  assert re.search(r'result: \d+ CPU cores, memory \d+% used', out), out
  assert 'refused: invalid_params' in out
  assert 'get-system-info: mixed_batch' in out
  assert 'local_time: mixed_batch' in out
  # The View is hosted through McpAppHostService: its lease is its own,
  # a request token counts once, and a closed View leaves a cold widget.
  assert 'lease of another View: lease_invalid' in out
  assert 'request token again: replayed' in out
  assert 'poll-system-stats: refused: lease_invalid' in out
  assert 'open again: refused: view_unavailable (cold:' in out
  # After the restart: refreshed as a new call, exported and audited.
  assert 'open_view: refused: view_unavailable (cold:' in out
  assert 'cold widget: refresh ran get-system-info as a new call' in out
  assert re.search(
      r'export: \d+ bytes of application/json; audited: authorized,'
      r' released',
      out,
  ), out
  _assert_browser_part(out, screenshot)
