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

"""The reference adapter under load: many Views' governed calls over HTTP.

Run by `run.py` on the patched tree. It reuses the load test's driver
(tests/integration/mcp_apps/adapter/load_support.py `run_load`): ADK's
app with the adapter on a uvicorn socket, the conformance server over
stdio, a SQLite Session store; `--views` chat turns make as many widgets,
a View of each is opened and every View makes `--operations` app-only
`tools/call`s, all Views at once. Prints one JSON object: throughput,
p50/p99 latency, and the audit records counted back. Design and numbers:
docs/decisions/issue26-load.md.

Example:

  python benchmarks/adapter_load.py --views 100 --operations 20
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
from pathlib import Path
import sys
import tempfile
from typing import Any
from typing import Mapping

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / 'tests' / 'integration' / 'fixtures'
sys.path.insert(0, str(FIXTURES))
# The tests' stage; appended so nothing there shadows a module.
sys.path.append(str(ROOT / 'tests' / 'integration' / 'mcp_apps'))
sys.path.append(str(ROOT / 'tests' / 'integration' / 'mcp_apps' / 'adapter'))

# pylint: disable=g-import-not-at-top
from load_support import run_load
from mcp import StdioServerParameters


class _Helpers:
  """What `served` needs of the tests' `mcp_apps` fixture."""

  @staticmethod
  def stdio_parameters(
      options: Mapping[str, Any] | None = None,
  ) -> StdioServerParameters:
    args = ['-m', 'mcp_apps_conformance_server', '--transport', 'stdio']
    if options:
      args += ['--options', json.dumps(dict(options))]
    return StdioServerParameters(
        command=sys.executable, args=args, env={'PYTHONPATH': str(FIXTURES)}
    )


async def _run(views: int, operations: int, bound: float) -> dict[str, Any]:
  with tempfile.TemporaryDirectory() as tmp:
    result = await asyncio.wait_for(
        run_load(
            _Helpers(),
            Path(tmp),
            views=views,
            operations=operations,
            bound_seconds=bound,
        ),
        bound,
    )
  summary = result.run.summary()
  summary['auditRecords'] = len(result.records)
  summary['failedAnswers'] = sum(
      1
      for a in result.run.answers
      if a.status != 200 or 'result' not in (a.body or {})
  )
  return summary


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument('--views', type=int, default=100)
  parser.add_argument('--operations', type=int, default=20)
  parser.add_argument('--bound', type=float, default=540.0)
  parser.add_argument(
      '--smoke', action='store_true', help='two Views, three calls each'
  )
  args = parser.parse_args()
  if args.smoke:
    args.views, args.operations = 2, 3
  logging.disable(logging.WARNING)
  print(json.dumps(asyncio.run(_run(args.views, args.operations, args.bound))))


if __name__ == '__main__':
  main()
