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

"""Per-call latency of MCP tool calls and listings, for `benchmarks/run.py`.

Runs against whichever ADK is on PYTHONPATH (pristine or patched), or with
`--raw` against the MCP SDK's `ClientSession` alone, on the conformance
server over stdio, and prints one JSON line of medians in microseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
import statistics
import sys
import time
from typing import Any
from typing import Awaitable
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'tests' / 'integration' / 'fixtures'))

from mcp import ClientSession  # pylint: disable=g-import-not-at-top
from mcp import StdioServerParameters  # pylint: disable=g-import-not-at-top
from mcp.client.stdio import stdio_client  # pylint: disable=g-import-not-at-top

NON_UI_TOOL = 'whoami'


def _server() -> StdioServerParameters:
  return StdioServerParameters(
      command=sys.executable,
      args=['-m', 'mcp_apps_conformance_server', '--transport', 'stdio'],
      env={'PYTHONPATH': str(ROOT / 'tests' / 'integration' / 'fixtures')},
  )


async def _median_us(
    step: Callable[[], Awaitable[Any]], calls: int, warmup: int
) -> float:
  for _ in range(warmup):
    await step()
  samples = []
  for _ in range(calls):
    start = time.perf_counter_ns()
    await step()
    samples.append((time.perf_counter_ns() - start) / 1000)
  return statistics.median(samples)


async def _raw(calls: int, warmup: int) -> dict[str, float]:
  async with stdio_client(_server()) as (read, write):
    async with ClientSession(read, write) as session:
      await session.initialize()
      return {
          'call_tool': await _median_us(
              lambda: session.call_tool(NON_UI_TOOL, {}), calls, warmup
          ),
          'list_tools': await _median_us(session.list_tools, calls, warmup),
      }


class _ToolContext:
  """What `McpTool._run_async_impl` reads of a ToolContext on this path."""

  function_call_id = 'bench'
  state: dict[str, Any] = {}

  def __init__(self) -> None:
    self._invocation_context = None

  def render_ui_widget(self, widget: Any) -> None:
    raise AssertionError('the benchmarked tool has no UI')


async def _adk(calls: int, warmup: int) -> dict[str, float]:
  from google.adk.tools.mcp_tool import McpToolset  # pylint: disable=g-import-not-at-top
  from google.adk.tools.mcp_tool import StdioConnectionParams  # pylint: disable=g-import-not-at-top

  toolset = McpToolset(
      connection_params=StdioConnectionParams(
          server_params=_server(), timeout=60.0
      )
  )
  try:
    tools = {t.name: t for t in await toolset.get_tools()}
    tool = tools[NON_UI_TOOL]
    context: Any = _ToolContext()

    async def call() -> Any:
      return await tool._run_async_impl(  # pylint: disable=protected-access
          args={}, tool_context=context, credential=None
      )

    return {
        'call_tool': await _median_us(call, calls, warmup),
        'list_tools': await _median_us(toolset.get_tools, calls, warmup),
    }
  finally:
    await toolset.close()


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument('--raw', action='store_true')
  parser.add_argument('--calls', type=int, default=300)
  parser.add_argument('--warmup', type=int, default=30)
  args = parser.parse_args()
  run = _raw if args.raw else _adk
  print(json.dumps(asyncio.run(run(args.calls, args.warmup))))


if __name__ == '__main__':
  main()
