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
pristine and patched scenarios and the bound story as subprocesses) against
the npm-installed system-monitor server; the test reads what it printed and
the View it wrote.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
import re
import shutil
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


@pytest.mark.skipif(
    not (shutil.which('node') and shutil.which('npm')),
    reason='node and npm are needed for the published MCP App server',
)
def test_demo_tells_the_hosting_story_and_exits_zero() -> None:
  env = dict(os.environ)
  env['PYTHONPATH'] = os.pathsep.join(
      str(ROOT / p)
      for p in ('src', 'tests/integration/fixtures', 'contributing/samples')
  )
  proc = subprocess.run(
      [sys.executable, str(TOOLS / 'demo.py')],
      cwd=ROOT,
      env=env,
      capture_output=True,
      text=True,
      timeout=300,
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
