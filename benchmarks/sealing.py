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


"""Sealing and bootstrap cost, against the raw operations they wrap.

* Seal + store: ADK Canonical JSON of a realistic tool result under the
  sealing limits plus `SqlSealedResultStore.create` (digest, immutable
  insert), against a raw insert of the same canonical bytes into a plain
  table on the same engine. 1 KB, 1 MB and 8 MiB (just under the default
  limit), on SQLite and, when its binaries are present, PostgreSQL.
  Target <= 2x.
* Bootstrap: `bootstrap_render` (authorize, reserve, resolve the Event and
  seal, one `resources/read`, selection) against a raw `resources/read` of
  the same resource on the same app-safe generation. Target <= 1.3x.

Prints one JSON object on its last line.

  python benchmarks/sealing.py [--n 7]
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
sys.path[:0] = [
    str(ROOT / 'src'),
    str(ROOT / 'tests/integration/fixtures'),
    str(ROOT / 'tests/integration/mcp_apps'),
]

# pylint: disable=g-import-not-at-top,wrong-import-position
from google.adk.mcp_apps.bootstrap.render import bootstrap_render
from google.adk.mcp_apps.bootstrap.render import view_hold
from google.adk.mcp_apps.canonical_json import canonicalize
from google.adk.mcp_apps.canonical_json import Purpose
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.sealed_result_store import SealedEnvelope
from google.adk.mcp_apps.contracts.sealed_result_store import SealedRecordScope
from google.adk.mcp_apps.stores.sql_sealed_result_store import SqlSealedResultStore
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.mcp_tool import StdioConnectionParams
from sqlalchemy import Column
from sqlalchemy import Integer
from sqlalchemy import LargeBinary
from sqlalchemy import MetaData
from sqlalchemy import Table

_raw = Table(
    'bench_raw_results',
    MetaData(),
    Column('id', Integer, primary_key=True),
    Column('data', LargeBinary),
)


def _result(size: int) -> dict[str, Any]:
  """A tool result shaped like a dashboard's: rows of mixed JSON values."""
  rows = []
  i = 0
  approx = 0
  while approx < size:
    row = {
        'id': i,
        'name': f'item-{i}',
        'price': i * 1.25,
        'tags': ['a', 'b'],
        'ok': i % 2 == 0,
    }
    rows.append(row)
    approx += 80
    i += 1
  return {
      'content': [{'type': 'text', 'text': f'{len(rows)} rows'}],
      'structuredContent': {'rows': rows},
      'isError': False,
  }


def _sized(size: int, limit: int) -> dict[str, Any]:
  value = _result(size)
  while len(canonicalize(value)) > limit:
    value['structuredContent']['rows'].pop()
  return value


async def _median_ms(fn: Any, n: int) -> float:
  samples = []
  for i in range(n):
    start = time.perf_counter()
    await fn(i)
    samples.append((time.perf_counter() - start) * 1000.0)
  return statistics.median(samples)


async def bench_seal(backend: str, url: str, n: int) -> list[dict[str, Any]]:
  store = SqlSealedResultStore(url, namespace='bench/sealed')
  await store.open()
  engine = store.engine
  async with engine.begin() as conn:
    await conn.run_sync(_raw.metadata.create_all)
  session = SessionKey('app', 'u', 's')
  rows = []
  limit = 8 * 1024 * 1024
  counter = iter(range(10**9))
  for label, size in (('1KB', 1024), ('1MB', 1 << 20), ('8MiB', limit)):
    value = _sized(size, limit)
    raw_bytes = canonicalize(value, purpose=Purpose.SEALED_RESULT)

    async def store_only(i: int, label: str = label) -> None:
      await store.create(
          SealedRecordScope(session, 1, f's-{label}-{i}', f'c-{i}'),
          operation_instance_id=f'ops-{label}-{i}',
          envelope=SealedEnvelope(raw_bytes, b'{}'),
          expires_at=time.time() + 600,
      )

    async def seal(i: int, value: Any = value, label: str = label) -> None:
      data = canonicalize(value, purpose=Purpose.SEALED_RESULT)
      await store.create(
          SealedRecordScope(session, 1, f'e-{label}-{i}', f'c-{i}'),
          operation_instance_id=f'op-{label}-{i}',
          envelope=SealedEnvelope(data, b'{}'),
          expires_at=time.time() + 600,
      )

    async def raw(i: int, data: bytes = raw_bytes) -> None:
      async with engine.begin() as conn:
        await conn.execute(_raw.insert().values(id=next(counter), data=data))

    raw_ms = await _median_ms(raw, n)
    store_ms = await _median_ms(store_only, n)
    seal_ms = await _median_ms(seal, n)
    rows.append({
        'backend': backend,
        'size': label,
        'bytes': len(raw_bytes),
        'raw_insert_ms': round(raw_ms, 3),
        'store_ms': round(store_ms, 3),
        'store_ratio': round(store_ms / raw_ms, 3),
        'seal_ms': round(seal_ms, 3),
        'seal_ratio': round(seal_ms / raw_ms, 3),
    })
  await store.aclose()
  return rows


async def bench_bootstrap(tmp: str, n: int) -> dict[str, Any]:
  from conftest import stdio_parameters
  from sealing_support import bound_stack
  from sealing_support import close_profile
  from sealing_support import PRINCIPAL
  from sealing_support import sql_profile
  from sealing_support import TOOLSET
  from sealing_support import widget_event

  profile = await sql_profile(f'sqlite+aiosqlite:///{tmp}/boot.db')
  service = SqliteSessionService(f'{tmp}/boot-sessions.db')
  params = StdioConnectionParams(server_params=stdio_parameters({}), timeout=30)
  try:
    async with bound_stack(
        params, session_service=service, profile=profile
    ) as stack:
      sid = await stack.new_session()
      event = widget_event(
          await stack.turn(sid, *[('open_view', {})] * (n + 1))
      )
      call_ids = [w.id for w in event.actions.render_ui_widgets]
      grants = []

      async def boot(i: int, observer: Any = None) -> None:
        document = await bootstrap_render(
            registry=stack.registry,
            profile=profile,
            session_service=service,
            principal=PRINCIPAL,
            session=stack.key(sid),
            toolset_id=TOOLSET,
            event_id=event.id,
            function_call_id=call_ids[i],
            observer=observer,
        )
        grants.append(document.grant)

      await boot(n)  # warm
      steps: dict[str, list[float]] = {}
      last: list[Any] = []

      def observe(step: Any) -> None:
        now = time.perf_counter()
        if last:
          steps.setdefault(last[0].name, []).append((now - last[1]) * 1000)
        last[:] = [step, now]

      async def boot_observed(i: int) -> None:
        last.clear()
        await boot(i, observe)
        steps.setdefault('ACTIVATE', []).append(
            (time.perf_counter() - last[1]) * 1000
        )

      boot_ms = await _median_ms(boot_observed, n)
      hold = view_hold(grants[0])

      async def read(i: int) -> None:
        del i
        await hold.read_resource('ui://conformance/view.html')

      read_ms = await _median_ms(read, n)
      for grant in grants:
        grant.revoke()
  finally:
    await close_profile(profile)
  return {
      'raw_read_ms': round(read_ms, 3),
      'bootstrap_ms': round(boot_ms, 3),
      'ratio': round(boot_ms / read_ms, 3),
      'steps_ms': {k: round(statistics.median(v), 3) for k, v in steps.items()},
  }


async def main(n: int) -> None:
  seal_rows: list[dict[str, Any]] = []
  with tempfile.TemporaryDirectory() as tmp:
    seal_rows += await bench_seal(
        'sqlite', f'sqlite+aiosqlite:///{tmp}/sealed.db', n
    )
    from postgres_server import find_postgres_bindir
    from postgres_server import postgres_server

    if find_postgres_bindir() is not None:
      with postgres_server() as server:
        seal_rows += await bench_seal('postgresql', server.create_database(), n)
    boot = await bench_bootstrap(tmp, n)
  print(json.dumps({'seal': seal_rows, 'bootstrap': boot}))


if __name__ == '__main__':
  parser = argparse.ArgumentParser()
  parser.add_argument('--n', type=int, default=7)
  asyncio.run(main(parser.parse_args().n))
