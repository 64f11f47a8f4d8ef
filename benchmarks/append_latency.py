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

"""Append latency of a plain model Event through each session backend.

Runs on whichever google-adk `PYTHONPATH` names (`run.py` runs it on the
pristine 2.13.0 tree and on the patched one, interleaved), with no profile
bound: what the core event finalizer costs every append. Backends:
in-memory, `SqliteSessionService`, `DatabaseSessionService` on a SQLite
file and (with `--pg-url`) on PostgreSQL, and `VertexAiSessionService`
over an in-process stand-in of the Agent Engine API (the service's own
work, no network). SQLite files live on tmpfs when there is one. Prints
one JSON object: median microseconds per append.

  PYTHONPATH=src python benchmarks/append_latency.py [--n 300]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import statistics
import sys
import tempfile
import time
import types
from typing import Any
import uuid

# pylint: disable=g-import-not-at-top


def _event(i: int) -> Any:
  from google.adk.events.event import Event
  from google.genai import types as genai_types

  return Event(
      invocation_id=f'inv-{i}',
      author='model',
      content=genai_types.Content(
          role='model', parts=[genai_types.Part(text=f'answer {i}')]
      ),
  )


async def _measure(service: Any, app: str, n: int, warmup: int) -> float:
  session = await service.create_session(app_name=app, user_id='u')
  for i in range(warmup):
    await service.append_event(session, _event(i))
  samples = []
  for i in range(n):
    event = _event(warmup + i)
    start = time.perf_counter()
    await service.append_event(session, event)
    samples.append((time.perf_counter() - start) * 1e6)
  return statistics.median(samples)


class _StandInEngine:
  """The Agent Engine sessions API, in process: accepts and keeps."""

  def __init__(self) -> None:
    self.rows: list[dict[str, Any]] = []

    async def create(*, name: str, user_id: str, config: Any) -> Any:
      del user_id, config
      return types.SimpleNamespace(
          response=types.SimpleNamespace(
              name=f'{name}/sessions/{uuid.uuid4().hex[:12]}',
              session_state={},
              update_time=datetime.datetime.now(datetime.timezone.utc),
          )
      )

    async def append(**kwargs: Any) -> None:
      self.rows.append(json.loads(json.dumps(kwargs['config'])))

    self.sessions = types.SimpleNamespace(
        create=create, events=types.SimpleNamespace(append=append)
    )


def _vertex_service() -> Any:
  sys.modules.setdefault('agentplatform', types.ModuleType('agentplatform'))
  from google.adk.sessions.vertex_ai_session_service import VertexAiSessionService

  engine = _StandInEngine()

  class StandIn(VertexAiSessionService):

    def _build_api_client(self) -> Any:
      return types.SimpleNamespace(sessions=engine.sessions)

  return StandIn(agent_engine_id='123')


async def main(n: int, warmup: int, pg_url: str | None) -> None:
  from google.adk.sessions.database_session_service import DatabaseSessionService
  from google.adk.sessions.in_memory_session_service import InMemorySessionService
  from google.adk.sessions.sqlite_session_service import SqliteSessionService

  app = f'bench_{uuid.uuid4().hex[:8]}'
  results: dict[str, float] = {}
  # Files on tmpfs when the machine has one: the finalizer's cost is CPU
  # work, which the disk's fsync variance would otherwise drown.
  shm = '/dev/shm' if os.path.isdir('/dev/shm') else None
  with tempfile.TemporaryDirectory(dir=shm) as tmp:
    results['in-memory'] = await _measure(
        InMemorySessionService(), app, n, warmup
    )
    sqlite = SqliteSessionService(f'{tmp}/sessions.db')
    results['sqlite'] = await _measure(sqlite, app, n, warmup)
    await sqlite.close()
    database = DatabaseSessionService(f'sqlite+aiosqlite:///{tmp}/db.db')
    results['database-sqlite'] = await _measure(database, app, n, warmup)
    await database.close()
    if pg_url:
      database = DatabaseSessionService(pg_url)
      results['database-postgresql'] = await _measure(database, app, n, warmup)
      await database.close()
    results['vertex-stand-in'] = await _measure(
        _vertex_service(), app, n, warmup
    )
  print(json.dumps({'benchmark': 'append_latency', 'median_us': results}))


if __name__ == '__main__':
  parser = argparse.ArgumentParser()
  parser.add_argument('--n', type=int, default=300)
  parser.add_argument('--warmup', type=int, default=20)
  parser.add_argument('--pg-url', default=None)
  args = parser.parse_args()
  asyncio.run(main(args.n, args.warmup, args.pg_url))
