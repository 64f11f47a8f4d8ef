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

"""Session lifecycle cost: fenced create+activate and delete+cascade.

Compares, per backend, the lifecycle manager's `create` (reserve, arm,
fenced commit, receipt check, activate) with a plain `create_session`, and
its `delete` (DELETING, revoke, coordination, row delete, sealed-store
cascade, completion mark) with a plain `delete_session`. Prints one JSON
object: median milliseconds per operation and the ratios (issue 8 targets
<= 1.5x for creation). SQLite always; PostgreSQL when the test server's
binaries are present (started on loopback by `postgres_server`).

  python benchmarks/session_lifecycle.py [--n 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
import statistics
import sys
import tempfile
import time
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / 'src'), str(ROOT / 'tests/integration/fixtures')]

# pylint: disable=g-import-not-at-top,wrong-import-position
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.lifecycle import SealedStoreParticipant
from google.adk.mcp_apps.lifecycle import SessionLifecycleManager
from google.adk.mcp_apps.stores.sql_sealed_result_store import SqlSealedResultStore
from google.adk.mcp_apps.stores.sql_session_lifecycle_store import SqlSessionLifecycleStore
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService


async def _time(fn: Any, n: int) -> list[float]:
  out = []
  for i in range(n):
    start = time.perf_counter()
    await fn(i)
    out.append((time.perf_counter() - start) * 1000.0)
  return out


async def bench(name: str, service: Any, store_url: str, n: int) -> dict:
  store = SqlSessionLifecycleStore(store_url, namespace='bench/lifecycle')
  sealed = SqlSealedResultStore(store_url, namespace='bench/sealed')
  manager = SessionLifecycleManager(
      store, service, participants=[SealedStoreParticipant(sealed)]
  )
  await manager.create(SessionKey('app', 'u', 'warm'))
  await service.create_session(app_name='app', user_id='u', session_id='w2')

  async def plain_create(i: int) -> None:
    await service.create_session(
        app_name='app', user_id='u', session_id=f'p{i}'
    )

  async def plain_delete(i: int) -> None:
    await service.delete_session(
        app_name='app', user_id='u', session_id=f'p{i}'
    )

  async def lc_create(i: int) -> None:
    await manager.create(SessionKey('app', 'u', f'l{i}'))

  async def lc_delete(i: int) -> None:
    await manager.delete(SessionKey('app', 'u', f'l{i}'))

  result = {}
  for label, fn in (
      ('plain_create', plain_create),
      ('lifecycle_create', lc_create),
      ('plain_delete', plain_delete),
      ('lifecycle_delete', lc_delete),
  ):
    result[f'{label}_ms'] = round(statistics.median(await _time(fn, n)), 3)
  result['create_ratio'] = round(
      result['lifecycle_create_ms'] / result['plain_create_ms'], 3
  )
  result['delete_ratio'] = round(
      result['lifecycle_delete_ms'] / result['plain_delete_ms'], 3
  )
  await store.aclose()
  await sealed.aclose()
  await service.close()
  return {'backend': name, 'n': n, **result}


async def main(n: int) -> None:
  results = []
  with tempfile.TemporaryDirectory() as tmp:
    store_url = f'sqlite+aiosqlite:///{tmp}/lifecycle.db'
    results.append(
        await bench(
            'sqlite', SqliteSessionService(f'{tmp}/sessions.db'), store_url, n
        )
    )
    results.append(
        await bench(
            'sqlite-database',
            DatabaseSessionService(f'sqlite+aiosqlite:///{tmp}/db.db'),
            store_url.replace('lifecycle.db', 'lifecycle2.db'),
            n,
        )
    )
  from postgres_server import find_postgres_bindir
  from postgres_server import postgres_server

  if find_postgres_bindir() is not None:
    with postgres_server() as server:
      url = server.create_database()
      results.append(
          await bench('postgresql', DatabaseSessionService(url), url, n)
      )
  print(json.dumps({'benchmark': 'session_lifecycle', 'results': results}))


if __name__ == '__main__':
  parser = argparse.ArgumentParser()
  parser.add_argument('--n', type=int, default=50)
  asyncio.run(main(parser.parse_args().n))
