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

"""Crash safety of the sealing write boundaries, with real kills.

Proves P2-RIR-01, 03, 05..09, 11, 12, 16 and P2-SRS-08, 13, 14 (see
`docs/conformance.md`) on the whole path: the stdio conformance server, a
profile-bound registry, a Runner turn whose scripted model calls `open_view`,
the append stage, the SQL sealed-result and lifecycle stores, and a durable
Session service. Two backends: SQLite files (`SqliteSessionService` on one,
the stores on another) and a throw-away PostgreSQL 15 (`DatabaseSessionService`
and the stores sharing one database); PostgreSQL runs the three crash points
that matter most (before the store write, after it, after the append).

Crashes are real: this file is also the crash worker (`python <this file>
<json>`). The worker runs one bound Runner turn with a sealing fault hook
(`set_fault_hook`) that, at the named `SealFault` point, records the point
in a marker file and SIGKILLs its own process; one case instead kills it
from inside the envelope's INSERT, before the transaction commits. The test
waits for the worker to die, then builds fresh profile, store and service
objects on the same databases (the restart) and asserts what survived: the
sealed rows, read with plain SQL, and the Events, read through the Session
service. GC runs with `now` far in the future and the authoritative check
(does a persisted Event carry this reference?), so nothing sleeps.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator
from collections.abc import Iterator
import contextlib
import dataclasses
import json
import os
from pathlib import Path
import signal
import subprocess
import sys
from typing import Any
from typing import Optional

from google.adk.events.event import Event
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.sealed_result_store import SealedEnvelope
from google.adk.mcp_apps.contracts.sealed_result_store import SealedRecordScope
from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultReason
from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultRef
from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultStoreError
from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultStoreIncompatibleError
from google.adk.mcp_apps.contracts.sealed_result_store import validate_sealed_store
from google.adk.mcp_apps.lifecycle import SealedStoreParticipant
from google.adk.mcp_apps.lifecycle import SessionLifecycleManager
from google.adk.mcp_apps.profile import local_dev_profile
from google.adk.mcp_apps.profile.host_profile import McpAppsHostProfile
from google.adk.mcp_apps.sealing.append_stage import SealFault
from google.adk.mcp_apps.sealing.append_stage import set_fault_hook
from google.adk.mcp_apps.sealing.refresh_record import RefreshInvocationRecord
from google.adk.mcp_apps.sealing.resolver import GatedResultResolver
from google.adk.mcp_apps.sealing.resolver import ResolutionFault
from google.adk.mcp_apps.sealing.resolver import SealedResolutionError
from google.adk.mcp_apps.stores.sql_key_provider import SqlBindingKeyProvider
from google.adk.mcp_apps.stores.sql_sealed_result_store import DEFAULT_NAMESPACE
from google.adk.mcp_apps.stores.sql_sealed_result_store import FORMAT_REVISION
from google.adk.mcp_apps.stores.sql_sealed_result_store import SealedRecordState
from google.adk.mcp_apps.stores.sql_sealed_result_store import SqlSealedResultStore
from google.adk.mcp_apps.stores.sql_sealed_result_store import TABLE_NAME
from google.adk.mcp_apps.stores.sql_session_lifecycle_store import SqlSessionLifecycleStore
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.mcp_tool.mcp_session_manager import StdioConnectionParams
from mcp.client.stdio import StdioServerParameters
import pytest
from sealing_support import APP
from sealing_support import authoritative_check
from sealing_support import bound_stack
from sealing_support import BoundStack
from sealing_support import close_profile
from sealing_support import OracleResolver
from sealing_support import referenced_record_ids
from sealing_support import sql_profile
from sealing_support import USER
from sealing_support import widget_event
from sqlalchemy import event as sa_event
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

pytestmark = pytest.mark.integration

FIXTURES_DIR = Path(__file__).resolve().parents[1] / 'fixtures'
FAR_FUTURE = 4_000_000_000.0
"""A GC `now` past every pending record's expiry."""
UI_TOOL = 'open_view'
KILL_IN_INSERT = 'test.inside_envelope_insert'
"""Not a `SealFault`: the worker dies after the envelope's INSERT ran and
before its transaction committed."""
REFRESH_FIELDS = (
    'declaration_fingerprint',
    'declarationFingerprint',
    'classification_source',
    'classificationSource',
    'classification_revision',
    'classificationRevision',
    'replay_class',
    'replayClass',
    'catalog_generation',
    'catalogGeneration',
)


# -- environment ----------------------------------------------------------------


def _raises(reason: SealedResultReason) -> Any:
  """`pytest.raises` for a `SealedResultStoreError` with this reason."""
  return pytest.raises(
      SealedResultStoreError, check=lambda e: e.reason is reason
  )


@dataclasses.dataclass(frozen=True)
class Env:
  """Where one test's databases live; JSON-serializable for the worker."""

  backend: str
  session_target: str
  store_url: str

  def session_service(self) -> Any:
    if self.backend == 'sqlite':
      return SqliteSessionService(self.session_target)
    return DatabaseSessionService(self.session_target)


def stdio_connection() -> StdioConnectionParams:
  """The conformance server over stdio (as `conftest.stdio_parameters`)."""
  return StdioConnectionParams(
      server_params=StdioServerParameters(
          command=sys.executable,
          args=[
              '-m',
              'mcp_apps_conformance_server',
              '--transport',
              'stdio',
              '--port',
              '0',
          ],
          env={'PYTHONPATH': str(FIXTURES_DIR)},
      ),
      timeout=30,
  )


@dataclasses.dataclass(frozen=True)
class Row:
  """One sealed record as the database holds it."""

  scope: SealedRecordScope
  ref: SealedResultRef
  operation_instance_id: str
  sealed_result: Optional[bytes]
  refresh_record: Optional[bytes]
  state: str


def _bytes(value: Any) -> Optional[bytes]:
  return None if value is None else bytes(value)


async def sealed_rows(url: str) -> list[Row]:
  """Every sealed record, read with plain SQL on a fresh engine."""
  engine = create_async_engine(url)
  try:
    async with engine.connect() as conn:
      found = (
          await conn.execute(
              text(
                  'SELECT record_id, operation_instance_id, app_name,'
                  ' user_id, session_id, incarnation, event_id,'
                  ' function_call_id, sealed_result, refresh_record, state'
                  f' FROM {TABLE_NAME} ORDER BY created_at, record_id'
              )
          )
      ).all()
  finally:
    await engine.dispose()
  return [
      Row(
          scope=SealedRecordScope(
              SessionKey(r.app_name, r.user_id, r.session_id),
              int(r.incarnation),
              r.event_id,
              r.function_call_id,
          ),
          ref=SealedResultRef(r.record_id, 1),
          operation_instance_id=r.operation_instance_id,
          sealed_result=_bytes(r.sealed_result),
          refresh_record=_bytes(r.refresh_record),
          state=r.state,
      )
      for r in found
  ]


@dataclasses.dataclass
class Restarted:
  """Fresh objects on an `Env`'s databases: the process after a restart."""

  env: Env
  profile: McpAppsHostProfile
  service: Any

  @property
  def store(self) -> Any:
    return self.profile.sealed_result_store

  async def events(self, session_id: str) -> list[Event]:
    session = await self.service.get_session(
        app_name=APP, user_id=USER, session_id=session_id
    )
    assert session is not None
    return list(session.events)

  def stack(self) -> contextlib.AbstractAsyncContextManager[BoundStack]:
    """A bound stack over a stdio conformance server, on this life."""
    return bound_stack(
        stdio_connection(), session_service=self.service, profile=self.profile
    )

  async def gc(self) -> int:
    return await self.store.collect_garbage(
        now=FAR_FUTURE, is_referenced=authoritative_check(self.service)
    )


@contextlib.asynccontextmanager
async def restarted(env: Env) -> AsyncIterator[Restarted]:
  profile = await sql_profile(env.store_url)
  service = env.session_service()
  try:
    yield Restarted(env, profile, service)
  finally:
    await close_profile(profile)
    await service.close()


async def assert_envelopes_whole(world: Restarted) -> list[Row]:
  """P2-RIR-07: every surviving record holds both parts and verifies."""
  rows = await sealed_rows(world.env.store_url)
  for row in rows:
    assert row.sealed_result and row.refresh_record, row
    envelope = await world.store.resolve(row.scope, row.ref)
    assert envelope == SealedEnvelope(row.sealed_result, row.refresh_record)
    assert RefreshInvocationRecord.from_bytes(row.refresh_record).tool_name == (
        UI_TOOL
    )
  return rows


def no_widget_event(events: list[Event]) -> bool:
  """True when no Event reports a function response or carries a widget."""
  return not any(
      e.actions and e.actions.render_ui_widgets for e in events
  ) and not any(e.get_function_responses() for e in events)


# -- fixtures -------------------------------------------------------------------


def make_env(backend: str, tmp_path: Path, request: Any) -> Env:
  if backend == 'postgresql':
    url = request.getfixturevalue('pg_server').create_database()
    return Env('postgresql', url, url)
  return Env(
      'sqlite',
      str(tmp_path / 'sessions.db'),
      f'sqlite+aiosqlite:///{tmp_path / "stores.db"}',
  )


@pytest.fixture(params=['sqlite', 'postgresql'])
def env(request: Any, tmp_path: Path) -> Env:
  return make_env(request.param, tmp_path, request)


@pytest.fixture
def sqlite_env(request: Any, tmp_path: Path) -> Env:
  return make_env('sqlite', tmp_path, request)


@pytest.fixture(autouse=True)
def no_fault_hook() -> Iterator[None]:
  yield
  set_fault_hook(None)


# -- the crash worker -----------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Crash:
  """What a killed worker left in its marker file."""

  session_id: str
  reached: list[str]


def run_worker(
    env: Env,
    tmp_path: Path,
    kill_at: Optional[str],
    *,
    nth: int = 1,
    calls: int = 1,
) -> Crash:
  """Runs one bound turn in a subprocess that SIGKILLs itself at `kill_at`.

  Args:
    env: The databases.
    tmp_path: Where the marker and log files go.
    kill_at: A `SealFault` point, `KILL_IN_INSERT`, or None (no kill).
    nth: Die at the point's nth occurrence (one per envelope create).
    calls: How many `open_view` calls the model makes in parallel.
  """
  marker = tmp_path / f'marker-{os.urandom(4).hex()}.json'
  log = tmp_path / f'{marker.stem}.log'
  spec = json.dumps({
      'env': dataclasses.asdict(env),
      'kill_at': kill_at,
      'nth': nth,
      'calls': calls,
      'marker': str(marker),
  })
  # Output goes to a file: the worker's stdio server child inherits its
  # stderr, and a pipe would keep the parent waiting for that child.
  with log.open('wb') as out:
    process = subprocess.run(
        [sys.executable, __file__, spec],
        env={**os.environ, 'PYTHONPATH': os.pathsep.join(sys.path)},
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=out,
        timeout=120,
        check=False,
    )
  expected = 0 if kill_at is None else -signal.SIGKILL
  assert process.returncode == expected, log.read_text()
  lines = marker.read_text().splitlines()
  session_id = json.loads(lines[0])['session_id']
  reached = [json.loads(line)['point'] for line in lines[1:]]
  if kill_at is not None:
    assert reached and reached[-1] == kill_at, (reached, log.read_text())
  return Crash(session_id, reached)


def _note(marker: Path, record: dict[str, Any]) -> None:
  with marker.open('a') as f:
    f.write(json.dumps(record) + '\n')
    f.flush()
    os.fsync(f.fileno())


def _die(marker: Path, point: str) -> None:
  _note(marker, {'point': point})
  os.kill(os.getpid(), signal.SIGKILL)


async def _worker(spec: dict[str, Any]) -> None:
  env = Env(**spec['env'])
  marker = Path(spec['marker'])
  kill_at = spec['kill_at']
  seen: collections.Counter[str] = collections.Counter()

  async def hook(point: str) -> None:
    seen[point] += 1
    if point == kill_at and seen[point] == spec['nth']:
      _die(marker, point)
    _note(marker, {'point': point})

  profile = await sql_profile(env.store_url)
  if kill_at == KILL_IN_INSERT:

    def after_execute(conn, cursor, statement, *args: Any) -> None:
      del conn, cursor, args
      if statement.lstrip().startswith(f'INSERT INTO {TABLE_NAME} '):
        _die(marker, KILL_IN_INSERT)

    sa_event.listen(
        profile.sealed_result_store.engine.sync_engine,
        'after_cursor_execute',
        after_execute,
    )
  service = env.session_service()
  async with bound_stack(
      stdio_connection(), session_service=service, profile=profile
  ) as stack:
    session_id = await stack.new_session()
    _note(marker, {'session_id': session_id})
    set_fault_hook(hook)
    await stack.turn(session_id, *[(UI_TOOL, {})] * spec['calls'])
  await service.close()
  await close_profile(profile)


# -- P2-RIR-06: kill before the envelope create ---------------------------------


@pytest.mark.conformance('P2-RIR-06')
async def test_kill_before_store_write_leaves_nothing(env: Env, tmp_path: Path):
  """No sealed result, no refresh record, no Event offering a widget."""
  crash = run_worker(env, tmp_path, SealFault.BEFORE_STORE_WRITE)
  async with restarted(env) as world:
    assert await sealed_rows(env.store_url) == []
    events = await world.events(crash.session_id)
    assert events, 'the user and function-call Events were appended'
    assert no_widget_event(events)
    assert await world.gc() == 0


# -- P2-RIR-07: envelope atomicity ----------------------------------------------


@pytest.mark.conformance('P2-RIR-07')
async def test_kill_inside_envelope_insert_leaves_no_half(
    sqlite_env: Env, tmp_path: Path
):
  """Killed after the INSERT ran, before COMMIT: neither part survives."""
  crash = run_worker(sqlite_env, tmp_path, KILL_IN_INSERT)
  assert SealFault.BEFORE_STORE_WRITE in crash.reached
  assert SealFault.AFTER_STORE_WRITE not in crash.reached
  async with restarted(sqlite_env) as world:
    assert await assert_envelopes_whole(world) == []
    assert no_widget_event(await world.events(crash.session_id))


@pytest.mark.conformance('P2-RIR-07')
async def test_kill_between_two_envelope_creates(
    sqlite_env: Env, tmp_path: Path
):
  """Two parallel calls, killed before the second create: one whole record."""
  crash = run_worker(
      sqlite_env, tmp_path, SealFault.BEFORE_STORE_WRITE, nth=2, calls=2
  )
  async with restarted(sqlite_env) as world:
    rows = await assert_envelopes_whole(world)
    assert len(rows) == 1 and rows[0].state == SealedRecordState.PENDING.value
    assert no_widget_event(await world.events(crash.session_id))
    assert await world.gc() == 1
    assert await sealed_rows(sqlite_env.store_url) == []


# -- P2-RIR-08 / P2-SRS-13: kill after the create, before the append -----------


@pytest.mark.conformance('P2-SRS-13', 'P2-RIR-08')
async def test_kill_after_store_write_orphan_collected(
    env: Env, tmp_path: Path
):
  """Pending, unreferenced records; authoritative GC collects them."""
  crash = run_worker(env, tmp_path, SealFault.AFTER_STORE_WRITE, calls=2)
  assert crash.reached.count(SealFault.BEFORE_STORE_WRITE) == 2
  async with restarted(env) as world:
    rows = await assert_envelopes_whole(world)  # P2-RIR-07 at this point too
    assert len(rows) == 2
    assert {r.state for r in rows} == {SealedRecordState.PENDING.value}
    assert len({r.scope.event_id for r in rows}) == 1
    events = await world.events(crash.session_id)
    assert no_widget_event(events)
    assert rows[0].scope.event_id not in {e.id for e in events}
    assert not any(referenced_record_ids(e) for e in events)
    # Not yet expired: GC at the present keeps them.
    assert (
        await world.store.collect_garbage(
            now=1_000_000_000.0,
            is_referenced=authoritative_check(world.service),
        )
        == 0
    )
    assert await world.gc() == 2
    assert await sealed_rows(env.store_url) == []
    for row in rows:
      with _raises(SealedResultReason.NOT_FOUND):
        await world.store.resolve(row.scope, row.ref)


# -- P2-SRS-14 / P2-RIR-09: kill after the append, before mark_referenced -------


@pytest.mark.conformance('P2-SRS-14', 'P2-RIR-09')
async def test_kill_after_append_event_and_record_resolve(
    env: Env, tmp_path: Path
):
  """The Event stands with its ref; GC keeps the pending record; it resolves."""
  crash = run_worker(env, tmp_path, SealFault.AFTER_APPEND)
  async with restarted(env) as world:
    events = await world.events(crash.session_id)
    event = widget_event(events)
    call_id = event.actions.render_ui_widgets[0].id
    record_id = referenced_record_ids(event)[call_id]
    rows = await assert_envelopes_whole(world)
    assert [(r.ref.record_id, r.state) for r in rows] == [
        (record_id, SealedRecordState.PENDING.value)
    ]
    assert rows[0].scope.event_id == event.id
    assert rows[0].scope.function_call_id == call_id
    assert await world.gc() == 0
    resolved = await OracleResolver(world.profile, world.service).resolve(
        SessionKey(APP, USER, crash.session_id),
        event_id=event.id,
        function_call_id=call_id,
    )
    assert resolved.reference.record_id == record_id
    assert resolved.envelope.sealed_result == rows[0].sealed_result
    assert resolved.full_result()['content']
    record = resolved.refresh_record()
    assert record.tool_name == UI_TOOL
    assert record.correlation['functionCallId'] == call_id
    assert (await sealed_rows(env.store_url))[0].state == (
        SealedRecordState.PENDING.value
    )


# -- P2-RIR-11: restart, then GC ------------------------------------------------


@pytest.mark.conformance('P2-RIR-11')
async def test_restart_gc_removes_unreferenced_keeps_referenced(
    sqlite_env: Env, tmp_path: Path
):
  """Orphans of one crash go; a crash-pending and a committed record stay."""
  orphaned = run_worker(sqlite_env, tmp_path, SealFault.AFTER_STORE_WRITE)
  unmarked = run_worker(sqlite_env, tmp_path, SealFault.AFTER_APPEND)
  async with restarted(sqlite_env) as world:
    async with world.stack() as stack:
      clean = await stack.new_session()
      widget_event(await stack.turn(clean, (UI_TOOL, {})))
    by_session = collections.defaultdict(list)
    for row in await assert_envelopes_whole(world):
      by_session[row.scope.session.session_id].append(row.state)
    assert dict(by_session) == {
        orphaned.session_id: [SealedRecordState.PENDING.value],
        unmarked.session_id: [SealedRecordState.PENDING.value],
        clean: [SealedRecordState.COMMITTED.value],
    }
    assert await world.gc() == 1
    left = {
        r.scope.session.session_id
        for r in await sealed_rows(sqlite_env.store_url)
    }
    assert left == {unmarked.session_id, clean}
    resolver = OracleResolver(world.profile, world.service)
    for session_id in (unmarked.session_id, clean):
      event = widget_event(await world.events(session_id))
      await resolver.resolve(
          SessionKey(APP, USER, session_id),
          event_id=event.id,
          function_call_id=event.actions.render_ui_widgets[0].id,
      )
    assert await world.gc() == 0


# -- in-process cases -----------------------------------------------------------


class RecordingSqliteSessionService(SqliteSessionService):
  """Journals the store of every Event that carries a widget: the moment
  the finalizer (which seals) hands the Event to the backend's write."""

  def __init__(self, path: str, journal: list[str]) -> None:
    super().__init__(path)
    self.journal = journal

  async def _finalize_event(self, session: Any, event: Event) -> Event:
    event = await super()._finalize_event(session, event)
    if event.actions and event.actions.render_ui_widgets:
      self.journal.append('event.append')
    return event


@pytest.mark.conformance('P2-RIR-05')
async def test_envelope_written_before_append_in_order(
    sqlite_env: Env,
):
  """BEFORE_STORE_WRITE < AFTER_STORE_WRITE < append < AFTER_APPEND."""
  journal: list[str] = []
  observed: dict[str, Any] = {}
  profile = await sql_profile(sqlite_env.store_url)
  service = RecordingSqliteSessionService(sqlite_env.session_target, journal)
  session_id = ''

  async def hook(point: str) -> None:
    journal.append(point)
    rows = await sealed_rows(sqlite_env.store_url)
    session = await service.get_session(
        app_name=APP, user_id=USER, session_id=session_id
    )
    observed[point] = (rows, list(session.events))

  try:
    async with bound_stack(
        stdio_connection(), session_service=service, profile=profile
    ) as stack:
      session_id = await stack.new_session()
      set_fault_hook(hook)
      event = widget_event(await stack.turn(session_id, (UI_TOOL, {})))
      set_fault_hook(None)
  finally:
    await close_profile(profile)
    await service.close()
  assert journal == [
      SealFault.BEFORE_STORE_WRITE,
      SealFault.AFTER_STORE_WRITE,
      'event.append',
      SealFault.AFTER_APPEND,
  ]
  rows, events = observed[SealFault.BEFORE_STORE_WRITE]
  assert rows == [] and no_widget_event(events)
  rows, events = observed[SealFault.AFTER_STORE_WRITE]
  assert len(rows) == 1 and rows[0].refresh_record and rows[0].sealed_result
  assert rows[0].scope.event_id == event.id
  assert rows[0].state == SealedRecordState.PENDING.value
  assert event.id not in {e.id for e in events} and no_widget_event(events)
  rows, events = observed[SealFault.AFTER_APPEND]
  assert event.id in {e.id for e in events}
  assert rows[0].state == SealedRecordState.PENDING.value
  # Keyed by operation instance and correlation (the final Event and call).
  record = RefreshInvocationRecord.from_bytes(rows[0].refresh_record)
  assert record.correlation['functionCallId'] == rows[0].scope.function_call_id
  assert record.correlation['invocationId'] == event.invocation_id
  assert rows[0].operation_instance_id


@pytest.mark.conformance('P2-RIR-01', 'P2-RIR-03')
async def test_refresh_record_sealed_and_never_public(
    sqlite_env: Env,
):
  """The record shares the result's row and ref; no public surface has it."""
  async with restarted(sqlite_env) as world:
    profile, service = world.profile, world.service
    async with world.stack() as stack:
      session_id = await stack.new_session()
      yielded = await stack.turn(session_id, ('ui_result', {'label': 'L7'}))
      event = widget_event(yielded)
      widget = event.actions.render_ui_widgets[0]
      resolved = await OracleResolver(profile, service).resolve(
          stack.key(session_id), event_id=event.id, function_call_id=widget.id
      )
      stored = await service.get_session(
          app_name=APP, user_id=USER, session_id=session_id
      )
  rows = await sealed_rows(sqlite_env.store_url)
  assert len(rows) == 1
  assert rows[0].ref.record_id == widget.payload['sealedResultRef']['recordId']
  assert resolved.envelope.refresh_record == rows[0].refresh_record
  record = resolved.refresh_record()
  assert (record.tool_name, record.toolset_id) == ('ui_result', 'conf')
  assert dict(record.arguments) == {'label': 'L7'}
  assert resolved.full_result()['structuredContent']['label'] == 'L7'
  assert record.declaration_fingerprint
  # No second public field: the descriptor carries only the locator.
  assert set(widget.payload['sealedResultRef']) == {'recordId', 'schemaVersion'}
  public = [e.model_dump_json(by_alias=True) for e in yielded]
  public += [
      e.model_dump_json(exclude_none=True, by_alias=True) for e in yielded
  ]
  public.append(stored.model_dump_json(by_alias=True))
  public.append(stored.model_dump_json())
  secret = rows[0].refresh_record.decode()
  for dump in public:
    assert secret not in dump
    assert record.declaration_fingerprint not in dump
    for field in REFRESH_FIELDS:
      assert field not in dump, field


@pytest.mark.conformance('P2-RIR-12', 'P2-SLS-25', 'P2-SLS-26')
async def test_delete_and_recreate_removes_records(
    sqlite_env: Env,
):
  """The cascade deletes the records; the new incarnation reaches none."""
  async with restarted(sqlite_env) as world:
    profile, service = world.profile, world.service
    async with world.stack() as stack:
      session_id = await stack.new_session()
      event = widget_event(
          await stack.turn(session_id, (UI_TOOL, {}), (UI_TOOL, {}))
      )
      key = stack.key(session_id)
    rows = await sealed_rows(sqlite_env.store_url)
    assert len(rows) == 2 and {r.scope.incarnation for r in rows} == {1}
    resolver = OracleResolver(profile, service)
    call_id = event.actions.render_ui_widgets[0].id
    await resolver.resolve(key, event_id=event.id, function_call_id=call_id)
    manager = SessionLifecycleManager(
        profile.session_lifecycle_store,
        service,
        participants=[SealedStoreParticipant(profile.sealed_result_store)],
    )
    deleted = await manager.delete(key)
    assert deleted.incarnation == 1
    assert await sealed_rows(sqlite_env.store_url) == []
    with pytest.raises(SealedResolutionError) as caught:
      await resolver.resolve(key, event_id=event.id, function_call_id=call_id)
    assert caught.value.fault is ResolutionFault.SESSION_NOT_ACTIVE
    _, record = await manager.create(key)
    assert record.incarnation == 2
    for incarnation, fault in (
        (None, ResolutionFault.EVENT_MISSING),
        (1, ResolutionFault.STALE_INCARNATION),
    ):
      with pytest.raises(SealedResolutionError) as caught:
        await resolver.resolve(
            key,
            event_id=event.id,
            function_call_id=call_id,
            incarnation=incarnation,
        )
      assert caught.value.fault is fault
    for row in rows:
      for incarnation in (1, 2):
        with _raises(SealedResultReason.NOT_FOUND):
          await profile.sealed_result_store.resolve(
              dataclasses.replace(row.scope, incarnation=incarnation), row.ref
          )


@pytest.mark.conformance('P2-SRS-08')
async def test_operation_instance_unique_and_retry_reuses_it(
    sqlite_env: Env,
):
  """One instance per call; a retried create with it returns the same ref."""
  async with restarted(sqlite_env) as world:
    async with world.stack() as stack:
      session_id = await stack.new_session()
      # Identical calls, in parallel and in a second turn.
      await stack.turn(session_id, (UI_TOOL, {}), (UI_TOOL, {}))
      await stack.turn(session_id, (UI_TOOL, {}))
    rows = await sealed_rows(sqlite_env.store_url)
    assert len(rows) == 3
    instances = [r.operation_instance_id for r in rows]
    assert len(set(instances)) == 3
    assert not {r.ref.record_id for r in rows} & set(instances)
    for row in rows:
      again = await world.store.create(
          row.scope,
          operation_instance_id=row.operation_instance_id,
          envelope=SealedEnvelope(row.sealed_result, row.refresh_record),
          expires_at=FAR_FUTURE,
      )
      assert again == row.ref
    assert await sealed_rows(sqlite_env.store_url) == rows


@pytest.mark.conformance('P2-SRS-08')
async def test_internal_retry_reuses_the_instance(
    sqlite_env: Env, monkeypatch: pytest.MonkeyPatch
):
  """A create whose acknowledgement is lost is retried with its instance.

  The first try writes the row and then fails (as a commit whose reply was
  lost would); the append stage's retry presents the same operation
  instance, so the store returns the first try's record: one row, and the
  Event references it.
  """
  async with restarted(sqlite_env) as world:
    store = world.store
    create = store.create
    instances: list[str] = []

    async def lose_first_ack(*args: Any, **kwargs: Any) -> Any:
      instances.append(kwargs['operation_instance_id'])
      ref = await create(*args, **kwargs)
      if len(instances) == 1:
        raise ConnectionResetError('the commit reply was lost')
      return ref

    monkeypatch.setattr(store, 'create', lose_first_ack)
    async with world.stack() as stack:
      session_id = await stack.new_session()
      event = widget_event(await stack.turn(session_id, (UI_TOOL, {})))
  assert len(instances) == 2 and instances[0] == instances[1]
  rows = await sealed_rows(sqlite_env.store_url)
  assert len(rows) == 1
  (widget,) = event.actions.render_ui_widgets
  assert widget.payload['sealedResultRef']['recordId'] == rows[0].ref.record_id
  assert rows[0].operation_instance_id == instances[0]


@pytest.mark.conformance('P2-SRS-23', 'P2-RIR-16')
async def test_swapped_envelope_namespace_rejected(
    sqlite_env: Env, tmp_path: Path
):
  """A sidecar under another namespace is refused; old refs do not resolve."""
  profile = await sql_profile(sqlite_env.store_url)
  service = sqlite_env.session_service()
  try:
    async with bound_stack(
        stdio_connection(), session_service=service, profile=profile
    ) as stack:
      session_id = await stack.new_session()
      event = widget_event(await stack.turn(session_id, (UI_TOOL, {})))
  finally:
    await close_profile(profile)
  call_id = event.actions.render_ui_widgets[0].id
  # The envelope database is claimed for its namespace and revision.
  same_db = SqlSealedResultStore(sqlite_env.store_url, namespace='swapped')
  try:
    with pytest.raises(SealedResultStoreIncompatibleError, match='namespace'):
      await same_db.open()
  finally:
    await same_db.aclose()
  # An empty sidecar under another namespace fails validation and changes
  # the binding revision, so the old descriptor resolves nothing.
  swapped = SqlSealedResultStore(
      f'sqlite+aiosqlite:///{tmp_path / "swapped.db"}', namespace='swapped'
  )
  lifecycle = SqlSessionLifecycleStore(sqlite_env.store_url)
  keys = SqlBindingKeyProvider(sqlite_env.store_url)
  try:
    await swapped.open()
    await lifecycle.open()
    await keys.load()
    with pytest.raises(SealedResultStoreIncompatibleError, match='namespace'):
      validate_sealed_store(swapped, DEFAULT_NAMESPACE, FORMAT_REVISION)
    other = local_dev_profile(
        'sealing',
        sealed_result_store=swapped,
        session_lifecycle_store=lifecycle,
        key_provider=keys,
    )
    with pytest.raises(SealedResolutionError) as caught:
      await OracleResolver(other, service).resolve(
          SessionKey(APP, USER, session_id),
          event_id=event.id,
          function_call_id=call_id,
      )
    assert caught.value.fault is ResolutionFault.BINDING_MISMATCH
  finally:
    for store in (swapped, lifecycle, keys):
      await store.aclose()
    await service.close()


if __name__ == '__main__':
  asyncio.run(_worker(json.loads(sys.argv[1])))
