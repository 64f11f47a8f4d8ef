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

"""One UI-associated model call: upstream's path vs the app-safe generation.

Run by `run.py` once per variant. `--upstream` times `McpTool` calling the
conformance server's `open_view` on a plain `McpToolset` (upstream's path:
pooled callbacked connection, caller's loop). Without it, it also times the
same call through a registry-bound toolset, where the tool is an
`AppSafeMcpTool`: generation lookup, pre-call re-listing on the generation,
one call on the registry loop, render reservation; and the pre-call
re-listing alone. Prints one JSON object of median microseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
from pathlib import Path
import sys
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'tests' / 'integration' / 'fixtures'))

# The same server and timing loop as the non-UI call benchmark beside it.
from mcp_calls import _median_us  # pylint: disable=g-import-not-at-top
from mcp_calls import _server  # pylint: disable=g-import-not-at-top

UI_TOOL = 'open_view'


async def _invocation() -> Any:
  """A real invocation in an in-memory Session."""
  # pylint: disable=g-import-not-at-top
  from google.adk.agents.invocation_context import InvocationContext
  from google.adk.agents.llm_agent import LlmAgent
  from google.adk.sessions.in_memory_session_service import InMemorySessionService

  service = InMemorySessionService()
  session = await service.create_session(
      app_name='bench', user_id='u', session_id='s'
  )
  return InvocationContext(
      session_service=service,
      invocation_id='bench-invocation',
      agent=LlmAgent(name='bench_agent'),
      session=session,
  )


def _tool_context(invocation: Any, call_id: str) -> Any:
  """The ToolContext the flow gives one function call."""
  from google.adk.tools.tool_context import ToolContext  # pylint: disable=g-import-not-at-top

  return ToolContext(invocation, function_call_id=call_id)


def _params() -> Any:
  from google.adk.tools.mcp_tool import StdioConnectionParams  # pylint: disable=g-import-not-at-top

  return StdioConnectionParams(server_params=_server(), timeout=60.0)


async def _timed_tool(
    tool: Any, invocation: Any, calls: int, warmup: int
) -> float:
  ids = itertools.count()

  async def call() -> Any:
    context = _tool_context(invocation, f'bench-{next(ids)}')
    return await tool.run_async(args={}, tool_context=context)

  return await _median_us(call, calls, warmup)


async def _upstream(calls: int, warmup: int) -> float:
  from google.adk.tools.mcp_tool import McpToolset  # pylint: disable=g-import-not-at-top

  toolset = McpToolset(connection_params=_params())
  try:
    tools = {t.name: t for t in await toolset.get_tools()}
    return await _timed_tool(tools[UI_TOOL], await _invocation(), calls, warmup)
  finally:
    await toolset.close()


async def _app_safe(calls: int, warmup: int) -> dict[str, float]:
  # pylint: disable=g-import-not-at-top
  from google.adk.mcp_apps.binding.registry import McpAppBindingRegistry
  from google.adk.mcp_apps.binding.spec import McpToolsetSpec
  from google.adk.mcp_apps.contracts.scope import SessionKey
  from google.adk.mcp_apps.profile import local_dev_profile

  registry = McpAppBindingRegistry(
      {'bench': McpToolsetSpec(connection_params=_params())},
      local_dev_profile(),
      allow_dev_providers=True,
  )
  async with registry:
    invocation = await _invocation()
    context = _tool_context(invocation, 'bench-list')
    tools = {
        t.name: t for t in await registry.toolset('bench').get_tools(context)
    }
    tool = tools[UI_TOOL]
    call_us = await _timed_tool(tool, invocation, calls, warmup)
    # The last call's reservation, as the renderer would take it.
    hold = registry.render_reservations.take(
        'bench', SessionKey('bench', 'u', 's'), f'bench-{calls + warmup - 1}'
    )
    assert hold is not None, 'the UI call reserved no generation'
    relist_us = await _median_us(hold.list_tools, calls, warmup)
    hold.release()
  return {'app_safe_ui_call': call_us, 'relist': relist_us}


async def _run(
    upstream_only: bool, calls: int, warmup: int
) -> dict[str, float]:
  result = {'upstream_ui_call': await _upstream(calls, warmup)}
  if not upstream_only:
    result.update(await _app_safe(calls, warmup))
  return result


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument('--upstream', action='store_true')
  parser.add_argument('--calls', type=int, default=200)
  parser.add_argument('--warmup', type=int, default=20)
  args = parser.parse_args()
  print(json.dumps(asyncio.run(_run(args.upstream, args.calls, args.warmup))))


if __name__ == '__main__':
  main()
