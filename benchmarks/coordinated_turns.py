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

"""Plain Runner turns: pristine vs patched, and the session coordinator.

Run by `run.py` once per tree. Every variant runs turns of an `LlmAgent`
whose stand-in model answers with text at once (no tools), on an
in-memory Session service, so what is timed is ADK's own turn: the
new-message append, the request, the answer's append.

* `turn`: the median microseconds of one turn, run one at a time.
* `concurrent`: turns per second with `--sessions` Sessions (default 100)
  each running `--turns` turns, all Sessions at once.

On the patched tree (`--coordinated`), both are measured twice more with
the Runner treated as app-enabled (`runner_entry.app_enabled` answers True
in this process only), so every turn owns its Session through the
coordinator: the ratio is the coordinator's own cost, and the concurrent
ratio shows whether Sessions serialize each other. Prints one JSON object.

  python benchmarks/coordinated_turns.py [--turns 200] [--sessions 100]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import logging
import time
from typing import Any
from typing import AsyncGenerator

# pylint: disable=g-import-not-at-top
from google.adk.agents.llm_agent import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types

APP = 'bench'
USER = 'u'


class _Answer(BaseLlm):
  """Answers every request with the same text."""

  model: str = 'answer'

  async def generate_content_async(
      self, llm_request: Any, stream: bool = False
  ) -> AsyncGenerator[LlmResponse, None]:
    del llm_request, stream
    yield LlmResponse(
        content=types.Content(role='model', parts=[types.Part(text='ok')]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=1, candidates_token_count=1
        ),
    )


def _runner() -> Runner:
  agent = LlmAgent(name='bench_agent', model=_Answer())
  return Runner(
      app_name=APP, agent=agent, session_service=InMemorySessionService()
  )


_MESSAGE = types.Content(role='user', parts=[types.Part(text='hi')])


async def _turn(runner: Runner, session_id: str) -> None:
  async for _ in runner.run_async(
      user_id=USER, session_id=session_id, new_message=_MESSAGE
  ):
    pass


async def _sessions(runner: Runner, count: int) -> list[str]:
  ids = []
  for _ in range(count):
    session = await runner.session_service.create_session(
        app_name=APP, user_id=USER
    )
    ids.append(session.id)
  return ids


async def _turn_us(turns: int, warmup: int) -> float:
  runner = _runner()
  # A fresh Session per block of turns keeps the history short and equal.
  session_ids = itertools.cycle(await _sessions(runner, 10))
  for _ in range(warmup):
    await _turn(runner, next(session_ids))
  samples = []
  for _ in range(turns):
    session_id = next(session_ids)
    start = time.perf_counter()
    await _turn(runner, session_id)
    samples.append((time.perf_counter() - start) * 1e6)
  await runner.close()
  samples.sort()
  return samples[len(samples) // 2]


async def _concurrent_per_second(sessions: int, turns: int) -> float:
  runner = _runner()
  ids = await _sessions(runner, sessions)

  async def session_turns(session_id: str) -> None:
    for _ in range(turns):
      await _turn(runner, session_id)

  start = time.perf_counter()
  await asyncio.gather(*(session_turns(i) for i in ids))
  elapsed = time.perf_counter() - start
  await runner.close()
  return sessions * turns / elapsed


async def _measure(args: argparse.Namespace) -> dict[str, float]:
  return {
      'turn_us': await _turn_us(args.turns, args.warmup),
      'concurrent_per_s': await _concurrent_per_second(
          args.sessions, args.session_turns
      ),
  }


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument('--turns', type=int, default=200)
  parser.add_argument('--warmup', type=int, default=20)
  parser.add_argument('--sessions', type=int, default=100)
  parser.add_argument('--session-turns', type=int, default=5)
  parser.add_argument('--coordinated', action='store_true')
  args = parser.parse_args()
  logging.disable(logging.WARNING)
  result = {'plain': asyncio.run(_measure(args))}
  if args.coordinated:
    from google.adk.mcp_apps.coordination import runner_entry

    runner_entry.app_enabled = lambda runner: True  # type: ignore[assignment]
    result['coordinated'] = asyncio.run(_measure(args))
  print(json.dumps(result))


if __name__ == '__main__':
  main()
