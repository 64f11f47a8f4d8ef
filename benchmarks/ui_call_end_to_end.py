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

"""One model-originated UI call end to end, at several result sizes.

Run by `run.py` once per variant, on the conformance server's
`sized_result` UI tool over stdio. `--variant raw` times the SDK's
`ClientSession.call_tool` alone; `upstream` times a whole `Runner` turn
(scripted model: the call, then a text answer; `InMemorySessionService`)
over a plain `McpToolset`; `bound` times the same turn over a
registry-bound toolset (`local_dev_profile`), where the result is sealed
and the Event appended through the append stage. Turns run on one warm
Session whose history is emptied before each; the first turn of a new
Session (which opens a bound Session's own generation) is timed apart. A
shorter pass wraps public callables with `time.perf_counter` to say where
a turn's time goes (the headline medians come from the unwrapped pass).
Prints one JSON object. Design and numbers:
docs/decisions/issue21-bench.md.

Example:

  python benchmarks/ui_call_end_to_end.py --variant bound --sizes 1024
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
from pathlib import Path
import statistics
import sys
import tempfile
import time
from typing import Any
from typing import AsyncIterator
from typing import Callable
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
# Every turn retries a failing optional import (`agents.remote_a2a_agent`,
# without the a2a extra). With PYTHONDONTWRITEBYTECODE set, a tree that has
# no bytecode cache recompiles that module from source on every turn (about
# 7 ms) while a tree that has one does not; writing it keeps the builds
# comparable, as an installed package (compiled at install) is.
sys.dont_write_bytecode = False
sys.path.insert(0, str(ROOT / 'tests' / 'integration' / 'fixtures'))
# The tests' scripted model; appended so nothing there shadows a module.
sys.path.append(str(ROOT / 'tests' / 'integration' / 'mcp_apps'))

# The same server (with its request log) and timing loop as the benchmarks
# beside it.
from batch_calls import _listings  # pylint: disable=g-import-not-at-top
from batch_calls import _server  # pylint: disable=g-import-not-at-top
from mcp_apps_conformance_server import names  # pylint: disable=g-import-not-at-top
from mcp_calls import _median_us  # pylint: disable=g-import-not-at-top

UI_TOOL = names.SIZED_RESULT
APP = 'bench'
USER = 'u'


SCOPES = ('toolset.get_tools', 'tool.run_async')
"""Parts whose callees named in `SPLIT` are reported per scope."""
SPLIT = ('hold.list_tools', 'routing.acquire')
"""Parts called both by the turn's listing and by the call itself."""


class _Parts:
  """Per-turn sums of the time spent inside wrapped callables.

  One turn runs at a time and its listing and its call never overlap, so
  the current scope is a plain attribute (the registry loop's thread sees
  it too, where a context variable would not).
  """

  def __init__(self) -> None:
    self.turn: dict[str, float] = collections.defaultdict(float)
    self.samples: dict[str, list[float]] = collections.defaultdict(list)
    self.scope = ''
    self._undo: list[Callable[[], None]] = []

  def _enter(self, label: str) -> tuple[str, str, int]:
    name = f'{label} in {self.scope or "?"}' if label in SPLIT else label
    outer = self.scope
    if label in SCOPES:
      self.scope = label
    return name, outer, time.perf_counter_ns()

  def _exit(self, entered: tuple[str, str, int]) -> None:
    name, outer, start = entered
    self.turn[name] += (time.perf_counter_ns() - start) / 1000
    self.scope = outer

  def wrap(self, owner: Any, attr: str, label: str) -> None:
    """Times `owner.attr` (a coroutine function or a plain one)."""
    had_own = attr in vars(owner)
    original = getattr(owner, attr)
    parts = self
    if asyncio.iscoroutinefunction(original):

      async def timed(*args: Any, **kwargs: Any) -> Any:
        entered = parts._enter(label)  # pylint: disable=protected-access
        try:
          return await original(*args, **kwargs)
        finally:
          parts._exit(entered)  # pylint: disable=protected-access

    else:

      def timed(*args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
        entered = parts._enter(label)  # pylint: disable=protected-access
        try:
          return original(*args, **kwargs)
        finally:
          parts._exit(entered)  # pylint: disable=protected-access

    setattr(owner, attr, timed)
    if had_own:
      self._undo.append(lambda: setattr(owner, attr, original))
    else:
      self._undo.append(lambda: delattr(owner, attr))

  def end_turn(self, turn_us: float) -> None:
    self.samples['turn'].append(turn_us)
    for label, us in self.turn.items():
      self.samples[label].append(us)
    self.turn.clear()

  def medians(self) -> dict[str, float]:
    return {k: statistics.median(v) for k, v in self.samples.items()}

  def undo(self) -> None:
    for step in reversed(self._undo):
      step()
    self._undo.clear()


@contextlib.contextmanager
def _wrapped(
    parts: _Parts, targets: list[tuple[Any, str, str]]
) -> Iterator[_Parts]:
  for owner, attr, label in targets:
    parts.wrap(owner, attr, label)
  try:
    yield parts
  finally:
    parts.undo()


async def _raw(
    log: Path, sizes: list[int], turns: int, warmup: int, first_turns: int
) -> dict[str, Any]:
  # pylint: disable=g-import-not-at-top
  from mcp import ClientSession
  from mcp.client.stdio import stdio_client

  del first_turns  # One SDK session: no per-Session connection.
  found: dict[str, Any] = {}
  async with stdio_client(_server(log)) as (read, write):
    async with ClientSession(read, write) as session:
      await session.initialize()
      for size in sizes:

        async def call(n: int = size) -> Any:
          return await session.call_tool(UI_TOOL, {'text_bytes': n})

        result = await call()
        text = result.content[0].text  # type: ignore[union-attr]
        assert len(text) == size and not result.is_error, result
        found[str(size)] = {
            'us': await _median_us(call, turns, warmup),
            'result_bytes': len(result.model_dump_json(by_alias=True)),
        }
  return found


class _Stack:
  """A Runner over one toolset and an in-memory Session service."""

  def __init__(self, toolset: Any) -> None:
    # pylint: disable=g-import-not-at-top
    from google.adk.agents.llm_agent import LlmAgent
    from google.adk.runners import Runner
    from google.adk.sessions.in_memory_session_service import InMemorySessionService
    from scripted_llm import ScriptedLlm

    self.toolset = toolset
    self.llm = ScriptedLlm()
    self.session_service = InMemorySessionService()
    self.runner = Runner(
        agent=LlmAgent(name='bench_agent', model=self.llm, tools=[toolset]),
        app_name=APP,
        session_service=self.session_service,
    )

  async def new_session(self) -> str:
    session = await self.session_service.create_session(
        app_name=APP, user_id=USER
    )
    return str(session.id)

  def reset(self, session_id: str) -> None:
    """Empties the stored Session's history, so every turn sees the same
    one-message request however many turns ran before (at 1 MB results a
    growing history would dominate the turn in both builds)."""
    self.session_service.sessions[APP][USER][session_id].events.clear()

  async def turn(self, size: int, session_id: str) -> list[Any]:
    from google.genai import types  # pylint: disable=g-import-not-at-top

    self.llm.steps = [[(UI_TOOL, {'text_bytes': size})]]
    return [
        event
        async for event in self.runner.run_async(
            user_id=USER,
            session_id=session_id,
            new_message=types.Content(
                role='user', parts=[types.Part(text='go')]
            ),
        )
    ]


def _check(events: list[Any], size: int, bound: bool) -> None:
  """The turn called the tool once, got its text, and answered."""
  responses = [r for e in events for r in e.get_function_responses()]
  assert len(responses) == 1, events
  content = (responses[0].response or {}).get('content')
  assert content and len(content[0]['text']) == size, responses[0]
  assert events[-1].content.parts[0].text == 'done', events[-1]
  if bound:
    widgets = [
        w
        for e in events
        for w in e.actions.render_ui_widgets or ()
        if w.provider == 'mcp'
    ]
    assert len(widgets) == 1 and widgets[0].payload.get(
        'sealedResultRef'
    ), 'the bound call was not sealed'


async def _timed_turns(
    stack: _Stack,
    size: int,
    turns: int,
    bound: bool,
    session_id: str | None = None,
    parts: _Parts | None = None,
) -> list[float]:
  """Times `turns` turns: on `session_id` (history reset before each), or
  each on a new Session when it is None (created before the clock starts)."""
  samples = []
  for _ in range(turns):
    if session_id is None:
      sid = await stack.new_session()
    else:
      sid = session_id
      stack.reset(sid)
    start = time.perf_counter_ns()
    events = await stack.turn(size, sid)
    us = (time.perf_counter_ns() - start) / 1000
    samples.append(us)
    _check(events, size, bound)
    if parts is not None:
      parts.end_turn(us)
  return samples


def _upstream_targets(stack: _Stack) -> list[tuple[Any, str, str]]:
  from google.adk.tools.mcp_tool.mcp_tool import McpTool  # pylint: disable=g-import-not-at-top

  return [
      (stack.toolset, 'get_tools', 'toolset.get_tools'),
      (McpTool, 'run_async', 'tool.run_async'),
      (stack.session_service, 'append_event', 'append_event (all)'),
  ]


def _bound_targets(stack: _Stack, profile: Any) -> list[tuple[Any, str, str]]:
  # pylint: disable=g-import-not-at-top
  from google.adk.mcp_apps.affinity import generations
  from google.adk.mcp_apps.affinity import routing
  from google.adk.mcp_apps.event_policy import finalizer
  from google.adk.mcp_apps.sealing import append_stage
  from google.adk.mcp_apps.sealing import result_sealer

  store = profile.sealed_result_store
  return [
      (stack.toolset, 'get_tools', 'toolset.get_tools'),
      (routing.AppSafeMcpTool, 'run_async', 'tool.run_async'),
      (routing.AppSafeToolRouting, 'acquire', 'routing.acquire'),
      (generations.GenerationHold, 'list_tools', 'hold.list_tools'),
      (generations.GenerationHold, 'call_tool', 'hold.call_tool'),
      (routing.AppSafeMcpTool, '_render_ui_widget', 'render_ui_widget'),
      (routing, 'prepare_seal', 'prepare_seal'),
      (result_sealer, 'seal_bytes', 'seal_bytes'),
      (result_sealer, 'candidate_of', 'candidate_of'),
      (stack.session_service, 'append_event', 'append_event (all)'),
      (finalizer, 'finalize_for_append', 'finalize_for_append'),
      (finalizer, 'seal_before_append', 'seal_before_append'),
      (append_stage, 'approved_envelope', 'approved_envelope'),
      (store, 'create', 'store.create'),
      (finalizer, 'event_persisted', 'event_persisted'),
  ]


async def _adk(
    log: Path,
    stack: _Stack,
    targets: list[tuple[Any, str, str]],
    sizes: list[int],
    turns: int,
    warmup: int,
    first_turns: int,
    bound: bool,
) -> dict[str, Any]:
  found: dict[str, Any] = {}
  for size in sizes:
    sid = await stack.new_session()
    await _timed_turns(stack, size, warmup, bound, sid)
    before = _listings(log)
    samples = await _timed_turns(stack, size, turns, bound, sid)
    listings = (_listings(log) - before) / turns
    with _wrapped(_Parts(), targets) as parts:
      await _timed_turns(stack, size, max(1, turns // 2), bound, sid, parts)
    before = _listings(log)
    with _wrapped(_Parts(), targets) as first:
      await _timed_turns(stack, size, first_turns, bound, None, first)
    found[str(size)] = {
        'us': statistics.median(samples),
        'listings': listings,
        'parts_us': parts.medians(),
        'first_turn_us': first.medians(),
        'first_turn_listings': (_listings(log) - before) / max(1, first_turns),
    }
  return found


@contextlib.asynccontextmanager
async def _upstream_stack(
    log: Path,
) -> AsyncIterator[tuple[_Stack, list[Any]]]:
  # pylint: disable=g-import-not-at-top
  from google.adk.tools.mcp_tool import McpToolset
  from google.adk.tools.mcp_tool import StdioConnectionParams

  toolset = McpToolset(
      connection_params=StdioConnectionParams(
          server_params=_server(log), timeout=60.0
      )
  )
  stack = _Stack(toolset)
  try:
    yield stack, _upstream_targets(stack)
  finally:
    await stack.runner.close()
    await toolset.close()


@contextlib.asynccontextmanager
async def _bound_stack(log: Path) -> AsyncIterator[tuple[_Stack, list[Any]]]:
  # pylint: disable=g-import-not-at-top
  from google.adk.mcp_apps.binding.registry import McpAppBindingRegistry
  from google.adk.mcp_apps.binding.spec import McpToolsetSpec
  from google.adk.mcp_apps.profile import local_dev_profile
  from google.adk.tools.mcp_tool import StdioConnectionParams

  profile = local_dev_profile()
  registry = McpAppBindingRegistry(
      {
          APP: McpToolsetSpec(
              connection_params=StdioConnectionParams(
                  server_params=_server(log), timeout=60.0
              )
          )
      },
      profile,
      allow_dev_providers=True,
  )
  async with registry:
    stack = _Stack(registry.toolset(APP))
    try:
      yield stack, _bound_targets(stack, profile)
    finally:
      await stack.runner.close()


async def _run(
    variant: str, sizes: list[int], turns: int, warmup: int, first_turns: int
) -> dict[str, Any]:
  with tempfile.TemporaryDirectory() as tmp:
    log = Path(tmp) / 'requests.jsonl'
    if variant == 'raw':
      return await _raw(log, sizes, turns, warmup, first_turns)
    make = _bound_stack if variant == 'bound' else _upstream_stack
    async with make(log) as (stack, targets):
      return await _adk(
          log,
          stack,
          targets,
          sizes,
          turns,
          warmup,
          first_turns,
          bound=variant == 'bound',
      )


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument(
      '--variant', choices=('raw', 'upstream', 'bound'), required=True
  )
  parser.add_argument(
      '--sizes',
      default='1024,1048576',
      help='comma-separated text sizes of the result, in bytes',
  )
  parser.add_argument('--turns', type=int, default=30)
  parser.add_argument('--warmup', type=int, default=3)
  parser.add_argument(
      '--first-turns',
      type=int,
      default=3,
      help='turns timed each in a new Session (opens its generation)',
  )
  parser.add_argument(
      '--smoke',
      action='store_true',
      help='1 KB only, one turn of each kind (`make bench-smoke`)',
  )
  args = parser.parse_args()
  if args.smoke:
    args.sizes, args.turns, args.warmup, args.first_turns = '1024', 1, 1, 1
  sizes = [int(s) for s in args.sizes.split(',')]
  result = _run(args.variant, sizes, args.turns, args.warmup, args.first_turns)
  print(json.dumps(asyncio.run(result)))


if __name__ == '__main__':
  main()
