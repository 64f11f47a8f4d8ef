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

"""A governed app call's MCP callbacks vs a model-originated call's.

One operation runs a toolset's three MCP-owned callbacks once each: the
`header_provider`, a callable `tool_filter` on the called tool, and a
progress factory's handler for one notification. Measured interleaved,
the median of several runs each, in microseconds per operation:

* `model`: upstream's model path, the callbacks called with the live
  `ReadonlyContext` / `CallbackContext`;
* `governed`: an app path's `AppPathCallbacks` (one state snapshot per
  operation, each callback restricted and checked).

The callbacks themselves do what a typical one does (read a state value).
Without a bound profile nothing of this runs; this is the price of an app
path only. Prints one JSON line per state size.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any
from typing import Awaitable
from typing import Callable

from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.mcp_apps.facades.mcp_callbacks import AppPathCallbacks
from google.adk.mcp_apps.facades.mcp_callbacks import CatalogEntryTool
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from mcp import types
from snapshot import state as benchmark_state

TOOL = types.Tool(
    name='refresh_board',
    inputSchema={'type': 'object'},
    _meta={'ui': {'resourceUri': 'ui://board/view', 'visibility': ['app']}},
)


class _Spec:
  """The three callbacks, as a toolset spec carries them."""

  def __init__(self) -> None:
    self.tool_filter = lambda tool, ctx=None: ctx.state.get('user:prefs')
    self.header_provider = lambda ctx: {'x-user': ctx.user_id}

    def factory(tool_name: str, callback_context: Any = None) -> Any:
      async def progress(
          value: float, total: float | None, message: str | None
      ) -> None:
        del value, total, message
        callback_context.state.get('cart')

      return progress

    self.progress_callback = factory


async def _context(size: int) -> InvocationContext:
  service = InMemorySessionService()
  session = await service.create_session(
      app_name='bench', user_id='u', state=benchmark_state(size)
  )
  return InvocationContext(
      session_service=service,
      invocation_id='e-1',
      agent=LlmAgent(name='bench_agent'),
      session=session,
  )


async def _median_us(
    variants: dict[str, Callable[[], Awaitable[None]]], runs: int
) -> dict[str, float]:
  samples: dict[str, list[float]] = {name: [] for name in variants}
  for _ in range(runs):
    for name, fn in variants.items():
      start = time.perf_counter()
      await fn()
      samples[name].append((time.perf_counter() - start) * 1e6)
  return {name: statistics.median(s) for name, s in samples.items()}


async def _measure(size: int, runs: int) -> dict[str, Any]:
  invocation = await _context(size)
  spec = _Spec()
  tool = CatalogEntryTool(TOOL)

  async def model() -> None:
    readonly = ReadonlyContext(invocation)
    spec.header_provider(readonly)
    spec.tool_filter(tool, readonly)
    handler = spec.progress_callback(
        TOOL.name, callback_context=CallbackContext(invocation)
    )
    await handler(1.0, 2.0, 'half')

  async def governed() -> None:
    callbacks = AppPathCallbacks.from_spec(spec, ReadonlyContext(invocation))
    await callbacks.headers()
    await callbacks.admit_tool(TOOL)
    handler = await callbacks.progress_for(TOOL.name)
    assert handler is not None
    await handler(1.0, 2.0, 'half')

  us = await _median_us({'model': model, 'governed': governed}, runs)
  return {
      'state_bytes': len(json.dumps(invocation.session.state)),
      'median_us': us,
      'governed_vs_model': us['governed'] / us['model'],
  }


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument('--runs', type=int, default=200)
  parser.add_argument('--sizes', type=int, nargs='+', default=[2_000, 100_000])
  args = parser.parse_args()
  results = [asyncio.run(_measure(s, args.runs)) for s in args.sizes]
  print(json.dumps({'results': results}))


if __name__ == '__main__':
  main()
