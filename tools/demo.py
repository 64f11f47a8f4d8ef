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

"""`make demo`: hosting a published MCP App with the patched ADK.

Part 1 runs `tools/demo_scenario.py` (no host profile) on pristine
google-adk 2.13.0 (prefix 0 of the series, materialized from the pinned
sdist) and on the patched working tree, and shows side by side what changes
for a user who binds nothing. Part 2 runs `tools/demo_bound.py` on the
patched tree: the system-monitor View hosted through the public
`google.adk.mcp_apps` API, step by step (`docs/user-guide.md` explains the
same steps in code). Part 3 runs `tools/demo_web.py`: ADK's own web server
with `--mcp_apps`, the Views in the browser (headless with `DEMO_HEADLESS=1`
or when stdin is not a terminal; otherwise it serves until Ctrl-C). Each
part prints as it goes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import subprocess
import sys
import textwrap
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'tools'))

import demo_web  # pylint: disable=g-import-not-at-top
import series  # pylint: disable=g-import-not-at-top

SERVER = '@modelcontextprotocol/server-system-monitor'


def _env(src: Path) -> dict[str, str]:
  env = dict(os.environ)
  env['PYTHONPATH'] = os.pathsep.join([
      str(src),
      str(ROOT / 'tests' / 'integration' / 'fixtures'),
      str(ROOT / 'contributing' / 'samples'),
  ])
  env['PYTHONUNBUFFERED'] = '1'
  return env


def _scenario(src: Path, label: str) -> dict[str, Any]:
  print(f'   running it on {label} (starts system-monitor)...', flush=True)
  proc = subprocess.run(
      [sys.executable, str(ROOT / 'tools' / 'demo_scenario.py')],
      env=_env(src),
      capture_output=True,
      text=True,
      timeout=300,
      check=False,
  )
  if proc.returncode != 0:
    sys.exit(f'demo_scenario.py failed on {label}:\n{proc.stderr[-4000:]}')
  report: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
  return report


def _summarize(value: Any, limit: int = 120) -> Any:
  """Keeps small values; large ones become a one-line size note."""
  if not isinstance(value, dict):
    return value
  result = {}
  for key, item in value.items():
    text = json.dumps(item, sort_keys=True)
    result[key] = item if len(text) <= limit else f'<{len(text)} bytes>'
  return result


def _side_by_side(title: str, meaning: str, left: Any, right: Any) -> None:
  print(f'\n-- {title}')
  print(
      textwrap.fill(meaning, 78, initial_indent='   ', subsequent_indent='   ')
  )
  a = json.dumps(left, indent=2, sort_keys=True).splitlines()
  b = json.dumps(right, indent=2, sort_keys=True).splitlines()
  width = 38
  print(f'   {"pristine google-adk 2.13.0":<{width}}| patched (this series)')
  for i in range(max(len(a), len(b))):
    x = a[i] if i < len(a) else ''
    y = b[i] if i < len(b) else ''
    xs = textwrap.wrap(x, width - 1, drop_whitespace=False) or ['']
    ys = textwrap.wrap(y, width - 1, drop_whitespace=False) or ['']
    for j in range(max(len(xs), len(ys))):
      left_part = xs[j] if j < len(xs) else ''
      right_part = ys[j] if j < len(ys) else ''
      print(f'   {left_part:<{width}}| {right_part}')


def _unbound() -> None:
  print('\n== Part 1: no host profile (what every ADK user gets)')
  print(
      '   A plain McpToolset on system-monitor and one model turn, on'
      " pristine 2.13.0\n   and on this series. Only the RFC's declared"
      ' changes may differ.'
  )
  pristine = _scenario(series.pristine_src(ROOT), 'pristine google-adk 2.13.0')
  patched = _scenario(ROOT / 'src', 'the patched tree')
  _side_by_side(
      'model catalog',
      'The tools the model is offered. Declared change 1: a tool whose'
      ' `_meta.ui.visibility` excludes "model" is left out.',
      pristine['model_catalog'],
      patched['model_catalog'],
  )
  _side_by_side(
      'app catalog',
      'The tools a View of this server may call (pristine ADK has none).',
      pristine['app_catalog'] or '(none)',
      patched['app_catalog'],
  )
  _side_by_side(
      'persisted FunctionResponse of get-system-info',
      'What the model and the Session see of a UI tool result. Declared'
      ' change 2: only content, isError and resultType; structuredContent'
      ' and _meta are for the View.',
      _summarize(pristine['function_response']),
      _summarize(patched['function_response']),
  )
  _side_by_side(
      'persisted UI widget payload (no profile: unchanged)',
      'The widget ADK records for the View.',
      pristine['ui_widget_payload_keys'],
      patched['ui_widget_payload_keys'],
  )


def _bound() -> None:
  print('\n== Part 2: hosting the View (patched only; public API)')
  print(
      '   An McpAppBindingRegistry binds system-monitor to the local-'
      'development\n   profile, with the SQL stores on a temporary SQLite'
      ' file.'
  )
  proc = subprocess.run(
      [sys.executable, str(ROOT / 'tools' / 'demo_bound.py')],
      env=_env(ROOT / 'src'),
      timeout=300,
      check=False,
  )
  if proc.returncode != 0:
    sys.exit(f'demo_bound.py failed ({proc.returncode})')


def _web() -> None:
  print('\n== Part 3: the Views in the browser (adk web --mcp_apps)')
  print(
      "   ADK's own web server, started as a user would, over the sample"
      ' agent\n   contributing/samples/mcp_apps_web: the dashboard sample and'
      ' system-monitor,\n   one registry, the offline stand-in model.'
  )
  mode = 'headless Chromium' if demo_web.headless() else 'serving until Ctrl-C'
  print(f'   ({mode}; DEMO_HEADLESS=1 or 0 chooses)', flush=True)
  demo_web.main()


def main() -> None:
  print('MCP Apps host series: the patched ADK hosting a published MCP App')
  print(f'(server: {SERVER} 2.0.3 over stdio;')
  print(
      ' the model is a labelled stand-in that calls get-system-info once,'
      ' so no\n credentials are needed)'
  )
  print('   preparing pristine google-adk 2.13.0 from the pinned sdist...')
  _unbound()
  _bound()
  _web()
  print('\nThe same steps, as code: docs/user-guide.md')


if __name__ == '__main__':
  main()
