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

"""`make demo`: the patched ADK next to pristine 2.13.0, on real servers.

Runs `tools/demo_scenario.py` on pristine google-adk 2.13.0 (prefix 0 of the
series, materialized from the pinned sdist) and on the patched working tree,
and prints what each persisted and showed the model, side by side; then
`tools/demo_bound.py` on the patched tree alone: one profile-bound UI call,
its persisted descriptor, its render bootstrap, a refused resolver request
and the cold affordance after a restart. Until the host service lands this
is the series' end-to-end view in a terminal.
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

import series  # pylint: disable=g-import-not-at-top


def _run(src: Path, script: str = 'demo_scenario.py') -> dict[str, Any]:
  env = dict(os.environ)
  env['PYTHONPATH'] = os.pathsep.join([
      str(src),
      str(ROOT / 'tests' / 'integration' / 'fixtures'),
      str(ROOT / 'contributing' / 'samples'),
  ])
  proc = subprocess.run(
      [sys.executable, str(ROOT / 'tools' / script)],
      env=env,
      capture_output=True,
      text=True,
      timeout=300,
  )
  if proc.returncode != 0:
    sys.exit(f'{script} failed on {src}:\n{proc.stderr[-4000:]}')
  return json.loads(proc.stdout.strip().splitlines()[-1])


def _summarize(value: Any, limit: int = 160) -> Any:
  """Keeps small values; large ones become a one-line size note."""
  if not isinstance(value, dict):
    return value
  result = {}
  for key, item in value.items():
    text = json.dumps(item, sort_keys=True)
    if len(text) <= limit:
      result[key] = item
    else:
      keys = sorted(item)[:6] if isinstance(item, dict) else None
      result[key] = f'<{len(text)} bytes of JSON' + (
          f'; keys {keys}>' if keys else '>'
      )
  return result


def _show(title: str, pristine: Any, patched: Any) -> None:
  print(f'\n== {title}')
  left = json.dumps(pristine, indent=2, sort_keys=True).splitlines()
  right = json.dumps(patched, indent=2, sort_keys=True).splitlines()
  width = max(36, max((len(line) for line in left), default=0))
  width = min(width, 60)
  print(f'{"pristine google-adk 2.13.0":<{width}} | patched (this series)')
  print(f'{"-" * width}-+-{"-" * width}')
  for i in range(max(len(left), len(right))):
    a = left[i] if i < len(left) else ''
    b = right[i] if i < len(right) else ''
    for j, (x, y) in enumerate(_wrap_pair(a, b, width)):
      print(f'{x:<{width}} | {y}')


def _wrap_pair(a: str, b: str, width: int) -> list[tuple[str, str]]:
  xs = textwrap.wrap(a, width, drop_whitespace=False) or ['']
  ys = textwrap.wrap(b, width, drop_whitespace=False) or ['']
  n = max(len(xs), len(ys))
  return [
      (xs[i] if i < len(xs) else '', ys[i] if i < len(ys) else '')
      for i in range(n)
  ]


def main() -> None:
  pristine_src = series.pristine_src(ROOT)
  pristine = _run(pristine_src)
  patched = _run(ROOT / 'src')
  print('MCP Apps host series: the patched ADK against real MCP App servers')
  print(
      '(stdio: @modelcontextprotocol/server-system-monitor 2.0.3 and the'
      " dashboard sample; the model is the sample's labelled stand-in)"
  )
  for server in ('system_monitor', 'dashboard'):
    for key in ('model_catalog', 'app_catalog'):
      before = pristine[server][key]
      _show(
          f'{server}: {key.replace("_", " ")}',
          '(none: pristine ADK has no app catalog)'
          if before is None
          else before,
          patched[server][key],
      )
  _show(
      'dashboard: persisted FunctionResponse of show_agent_dashboard',
      _summarize(pristine['dashboard'].get('function_response')),
      _summarize(patched['dashboard'].get('function_response')),
  )
  for key in ('ui_widget_payload_keys', 'same_event', 'final_text'):
    _show(
        f'dashboard: {key.replace("_", " ")}',
        pristine['dashboard'].get(key),
        patched['dashboard'].get(key),
    )
  _bound(_run(ROOT / 'src', 'demo_bound.py'))


def _bound(report: dict[str, Any]) -> None:
  """The profile-bound call: what persists, what renders, what is refused."""
  print(
      '\n== dashboard, profile-bound (patched only: local-development'
      ' profile, SQL stores on SQLite)'
  )
  for title, key in (
      ('persisted widget payload (the descriptor)', 'persisted_widget_payload'),
      (
          'persisted FunctionResponse keys',
          'persisted_function_response_keys',
      ),
      ('bootstrap_render: the RenderDocument', 'bootstrap'),
      (
          'live replay to the View, then after its grant is revoked',
          'live_replay',
      ),
      (
          'gated resolver, asked for another View',
          'resolver_refuses_another_view',
      ),
      ('bootstrap after a restart', 'bootstrap_after_restart'),
      ('cold affordance after a restart', 'cold_affordance'),
  ):
    print(f'-- {title}')
    print(textwrap.indent(json.dumps(report.get(key), indent=2), '   '))


if __name__ == '__main__':
  main()
