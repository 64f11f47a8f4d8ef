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

"""A 10-call parallel batch of UI calls: raw SDK, upstream, bound profile.

Run by `run.py` once per variant. `--variant raw` times ten concurrent
`call_tool('open_view')` on one SDK `ClientSession`; `upstream` times ADK's
batch path (`handle_function_call_list_async`) over a plain `McpToolset`;
`bound` times the same batch over a registry-bound toolset, where the batch
is admitted whole (one fresh two-class listing) before its calls fan out.
Each variant also reports the `tools/list` requests the server received
per batch, from its request log. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
import sys
import tempfile
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'tests' / 'integration' / 'fixtures'))

from mcp_calls import _median_us  # pylint: disable=g-import-not-at-top
from ui_calls import _invocation  # pylint: disable=g-import-not-at-top

UI_TOOL = 'open_view'
BATCH = 10


def _server(log: Path) -> Any:
  from mcp import StdioServerParameters  # pylint: disable=g-import-not-at-top

  return StdioServerParameters(
      command=sys.executable,
      args=[
          '-m',
          'mcp_apps_conformance_server',
          '--transport',
          'stdio',
          '--options',
          json.dumps({'request_log_file': str(log)}),
      ],
      env={'PYTHONPATH': str(ROOT / 'tests' / 'integration' / 'fixtures')},
  )


def _listings(log: Path) -> int:
  if not log.exists():
    return 0
  return sum(
      json.loads(line)['method'] == 'tools/list'
      for line in log.read_text().splitlines()
  )


async def _raw(log: Path, batches: int, warmup: int) -> dict[str, float]:
  # pylint: disable=g-import-not-at-top
  from mcp import ClientSession
  from mcp.client.stdio import stdio_client

  async with stdio_client(_server(log)) as (read, write):
    async with ClientSession(read, write) as session:
      await session.initialize()

      async def batch() -> Any:
        return await asyncio.gather(
            *(session.call_tool(UI_TOOL, {}) for _ in range(BATCH))
        )

      before = _listings(log)
      us = await _median_us(batch, batches, warmup)
      return {
          'us': us,
          'listings': (_listings(log) - before) / (batches + warmup),
      }


async def _adk(
    toolset: Any, context: Any, log: Path, batches: int, warmup: int
) -> dict[str, float]:
  # pylint: disable=g-import-not-at-top
  from google.adk.flows.llm_flows.functions import handle_function_call_list_async
  from google.genai import types

  invocation = await _invocation()
  tools = {t.name: t for t in await toolset.get_tools(context(invocation))}
  counter = iter(range(10**9))

  async def batch() -> Any:
    n = next(counter)
    calls = [
        types.FunctionCall(id=f'b{n}-{i:02d}', name=UI_TOOL, args={})
        for i in range(BATCH)
    ]
    event = await handle_function_call_list_async(invocation, calls, tools)
    assert event is not None and len(event.get_function_responses()) == BATCH
    assert 'error' not in (event.get_function_responses()[0].response or {})
    return event

  before = _listings(log)
  us = await _median_us(batch, batches, warmup)
  return {'us': us, 'listings': (_listings(log) - before) / (batches + warmup)}


async def _upstream(log: Path, batches: int, warmup: int) -> dict[str, float]:
  # pylint: disable=g-import-not-at-top
  from google.adk.agents.readonly_context import ReadonlyContext
  from google.adk.tools.mcp_tool import McpToolset
  from google.adk.tools.mcp_tool import StdioConnectionParams

  toolset = McpToolset(
      connection_params=StdioConnectionParams(
          server_params=_server(log), timeout=60.0
      )
  )
  try:
    return await _adk(toolset, ReadonlyContext, log, batches, warmup)
  finally:
    await toolset.close()


async def _bound(log: Path, batches: int, warmup: int) -> dict[str, float]:
  # pylint: disable=g-import-not-at-top
  from google.adk.agents.readonly_context import ReadonlyContext
  from google.adk.mcp_apps.binding.registry import McpAppBindingRegistry
  from google.adk.mcp_apps.binding.spec import McpToolsetSpec
  from google.adk.mcp_apps.profile import local_dev_profile
  from google.adk.tools.mcp_tool import StdioConnectionParams

  registry = McpAppBindingRegistry(
      {
          'bench': McpToolsetSpec(
              connection_params=StdioConnectionParams(
                  server_params=_server(log), timeout=60.0
              )
          )
      },
      local_dev_profile(),
      allow_dev_providers=True,
  )
  async with registry:
    return await _adk(
        registry.toolset('bench'), ReadonlyContext, log, batches, warmup
    )


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument(
      '--variant', choices=('raw', 'upstream', 'bound'), required=True
  )
  parser.add_argument('--batches', type=int, default=30)
  parser.add_argument('--warmup', type=int, default=3)
  args = parser.parse_args()
  run = {'raw': _raw, 'upstream': _upstream, 'bound': _bound}[args.variant]
  with tempfile.TemporaryDirectory() as tmp:
    log = Path(tmp) / 'requests.jsonl'
    print(json.dumps(asyncio.run(run(log, args.batches, args.warmup))))


if __name__ == '__main__':
  main()
