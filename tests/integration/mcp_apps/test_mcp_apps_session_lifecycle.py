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

"""Session incarnations on real SQLite files and a real PostgreSQL server.

Proofs of P2-SLS-01..48 (see `docs/conformance.md`). Three backends:
`sqlite` (`SqliteSessionService` on one file, the lifecycle and sealed
stores on another), `sqlite-db` (`DatabaseSessionService` on a SQLite file)
and `postgresql` (`DatabaseSessionService`, the lifecycle store and the
sealed store sharing one database of a throw-away PostgreSQL 15).

Stalls and races are forced with the manager's fault hook (an awaited
`asyncio.Event` at a named point) and barriers. Crashes are real: this
file is also the crash worker (`python <this file> <json>`), which runs one
lifecycle operation with a fault hook that SIGKILLs its own process at the
named point; the test then builds fresh store and service objects on the
same databases and asserts recovery, resumption, and that nothing was lost
or duplicated.

P2-SLS-44 and 45 run on the Runner's own append path: a real Runner turn
over a profile-bound registry and the stdio conformance server, whose UI
call (`gated_view`) or model answer is held at a barrier while another
manager deletes and recreates the Session.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
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
from google.adk.mcp_apps.contracts.local_dev import LocalDevSessionLifecycleStore
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.sealed_result_store import SealedEnvelope
from google.adk.mcp_apps.contracts.sealed_result_store import SealedRecordScope
from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultReason
from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultStoreError
from google.adk.mcp_apps.contracts.session_lifecycle_store import CreationReceipt
from google.adk.mcp_apps.contracts.session_lifecycle_store import LifecycleConflictError
from google.adk.mcp_apps.contracts.session_lifecycle_store import LifecycleRecord
from google.adk.mcp_apps.contracts.session_lifecycle_store import LifecycleState
from google.adk.mcp_apps.lifecycle import CreationFenceError
from google.adk.mcp_apps.lifecycle import FaultPoint
from google.adk.mcp_apps.lifecycle import FenceToken
from google.adk.mcp_apps.lifecycle import finalize_imported_events
from google.adk.mcp_apps.lifecycle import import_digest
from google.adk.mcp_apps.lifecycle import ReceiptMismatchError
from google.adk.mcp_apps.lifecycle import SealedStoreParticipant
from google.adk.mcp_apps.lifecycle import SessionExistsError
from google.adk.mcp_apps.lifecycle import SessionLifecycleManager
from google.adk.mcp_apps.lifecycle import SessionNotAdmittedError
from google.adk.mcp_apps.lifecycle import StaleIncarnationError
from google.adk.mcp_apps.lifecycle import Step
from google.adk.mcp_apps.lifecycle.fenced_creation import FENCE_TABLE
from google.adk.mcp_apps.lifecycle.fenced_creation import FenceState
from google.adk.mcp_apps.profile.host_profile import McpAppsHostProfile
from google.adk.mcp_apps.profile.readiness import persistence_compatibility_reasons
from google.adk.mcp_apps.profile.readiness import Problem
from google.adk.mcp_apps.sealing.result_sealer import PENDING_SEALS
from google.adk.mcp_apps.stores.sql_sealed_result_store import SqlSealedResultStore
from google.adk.mcp_apps.stores.sql_sealed_result_store import TABLE_NAME as SEALED_TABLE
from google.adk.mcp_apps.stores.sql_session_lifecycle_store import SessionLifecycleStoreIncompatibleError
from google.adk.mcp_apps.stores.sql_session_lifecycle_store import SqlSessionLifecycleStore
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.genai import types
from mcp_apps_conformance_server import names
import pytest
from sealing_support import bound_stack
from sealing_support import BoundStack
from sealing_support import close_profile
from sealing_support import ServerGate
from sealing_support import sql_profile
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

pytestmark = pytest.mark.integration

KEY = SessionKey('app', 'alice', 'session-1')
PARTICIPANTS = ('sealed_results', 'registers', 'idempotency', 'host_state')
TEST_TABLE = 'lifecycle_test_journal'
SEAL_SCOPE_EVENT = 'event-1'
RUNTIME_TIMEOUT = 60.0


# -- environment ----------------------------------------------------------------


def _raises(reason: SealedResultReason) -> Any:
  """`pytest.raises` for a `SealedResultStoreError` with this reason."""
  return pytest.raises(
      SealedResultStoreError, check=lambda e: e.reason is reason
  )


@dataclasses.dataclass(frozen=True)
class Env:
  """Where one test's databases live; JSON-serializable for the worker."""

  service: str
  session_url: str
  store_url: str


def _session_service(env: Env) -> Any:
  if env.service == 'sqlite':
    return SqliteSessionService(env.session_url)
  return DatabaseSessionService(env.session_url)


class TableParticipant:
  """A cascade participant keeping rows in a test table; journals calls."""

  def __init__(self, name: str, url: str) -> None:
    self.name = name
    self._url = url

  async def delete_incarnation(self, session: SessionKey, incarnation: int):
    await _journal(self._url, f'cascade:{self.name}', incarnation)
    engine = create_async_engine(self._url)
    try:
      async with engine.begin() as conn:
        await conn.execute(
            text(
                f'DELETE FROM {TEST_TABLE} WHERE kind = :kind AND'
                ' incarnation = :n'
            ),
            {'kind': f'data:{self.name}', 'n': incarnation},
        )
    finally:
      await engine.dispose()


async def _ensure_journal(url: str) -> None:
  engine = create_async_engine(url)
  try:
    async with engine.begin() as conn:
      await conn.execute(
          text(
              f'CREATE TABLE IF NOT EXISTS {TEST_TABLE} (kind VARCHAR(64)'
              ' NOT NULL, incarnation INTEGER NOT NULL)'
          )
      )
  finally:
    await engine.dispose()


async def _journal(url: str, kind: str, incarnation: int) -> None:
  engine = create_async_engine(url)
  try:
    async with engine.begin() as conn:
      await conn.execute(
          text(f'INSERT INTO {TEST_TABLE} VALUES (:kind, :n)'),
          {'kind': kind, 'n': incarnation},
      )
  finally:
    await engine.dispose()


async def _journal_counts(url: str) -> dict[str, int]:
  engine = create_async_engine(url)
  try:
    async with engine.connect() as conn:
      rows = (
          await conn.execute(
              text(
                  f'SELECT kind, incarnation, COUNT(*) FROM {TEST_TABLE}'
                  ' GROUP BY kind, incarnation'
              )
          )
      ).all()
  finally:
    await engine.dispose()
  return {f'{r[0]}@{r[1]}': int(r[2]) for r in rows}


@dataclasses.dataclass
class World:
  """Fresh objects on an `Env`'s databases (one process's view)."""

  env: Env
  store: SqlSessionLifecycleStore
  sealed: SqlSealedResultStore
  service: Any
  manager: SessionLifecycleManager

  async def close(self) -> None:
    await self.store.aclose()
    await self.sealed.aclose()
    await self.service.close()


def build(env: Env, fault_hook: Any = None, revoke_hooks=(), coordinator=None):
  """A `World` with the sealed store and three table participants."""
  store = SqlSessionLifecycleStore(env.store_url, namespace='test/lifecycle')
  sealed = SqlSealedResultStore(env.store_url, namespace='test/sealed')
  service = _session_service(env)

  async def journal_revoke(session: SessionKey, n: int) -> None:
    del session
    await _journal(env.store_url, 'revoke', n)

  class JournalCoordinator:

    async def acquire_for_deletion(self, session: SessionKey, n: int) -> None:
      del session
      await _journal(env.store_url, 'coordination', n)

  participants = [SealedStoreParticipant(sealed)] + [
      TableParticipant(name, env.store_url) for name in PARTICIPANTS[1:]
  ]
  manager = SessionLifecycleManager(
      store,
      service,
      revoke_hooks=(journal_revoke, *revoke_hooks),
      coordinator=coordinator or JournalCoordinator(),
      participants=participants,
      fault_hook=fault_hook,
  )
  return World(env, store, sealed, service, manager)


def imported_events(count: int, tag: str = 'a') -> list[Event]:
  events = []
  for i in range(count):
    events.append(
        Event(
            author='user' if i % 2 == 0 else 'model',
            invocation_id=f'inv-{tag}-{i}',
            timestamp=1_700_000_000.0 + i,
            content=types.Content(
                role='user' if i % 2 == 0 else 'model',
                parts=[types.Part(text=f'{tag} message {i}')],
            ),
            # Caller-supplied internal metadata: finalization strips it.
            custom_metadata={'__adk_internal_spoof': True, 'keep': tag},
        )
    )
  return events


async def seed_incarnation_data(world: World, incarnation: int) -> None:
  """A sealed record and one row per table participant for `incarnation`."""
  await world.sealed.create(
      SealedRecordScope(KEY, incarnation, SEAL_SCOPE_EVENT, 'call-1'),
      operation_instance_id=f'op-{incarnation}',
      envelope=SealedEnvelope(b'{"x":1}', None),
      expires_at=4_000_000_000.0,
  )
  for name in PARTICIPANTS[1:]:
    await _journal(world.env.store_url, f'data:{name}', incarnation)


async def remaining_data(world: World, incarnation: int) -> dict[str, int]:
  counts = await _journal_counts(world.env.store_url)
  out = {
      name: counts.get(f'data:{name}@{incarnation}', 0)
      for name in PARTICIPANTS[1:]
  }
  async with world.sealed.engine.connect() as conn:
    out['sealed_results'] = int(
        (
            await conn.execute(
                text(
                    'SELECT COUNT(*) FROM adk_mcp_apps_sealed_results WHERE'
                    ' incarnation = :n'
                ),
                {'n': incarnation},
            )
        ).scalar_one()
    )
  return out


async def warm(*worlds: World) -> None:
  """Creates the schemas first: upstream's first-use DDL is not race-safe."""
  for made in worlds:
    if hasattr(made.service, 'prepare_tables'):
      await made.service.prepare_tables()
    await made.manager.fence.read(KEY)
    await made.store.open()


class Pause:
  """A fault hook that parks at one named point until released."""

  def __init__(self, point: str) -> None:
    self.point = point
    self.reached = asyncio.Event()
    self.release = asyncio.Event()
    self.seen: list[str] = []

  async def __call__(self, name: str) -> None:
    self.seen.append(name)
    if name == self.point:
      self.reached.set()
      await self.release.wait()


# -- fixtures -------------------------------------------------------------------


def _make_env(backend: str, tmp_path: Path, request: Any) -> Env:
  if backend == 'postgresql':
    server = request.getfixturevalue('pg_server')
    url = server.create_database()
    return Env('database', url, url)
  store_url = f'sqlite+aiosqlite:///{tmp_path / "lifecycle.db"}'
  if backend == 'sqlite':
    return Env('sqlite', str(tmp_path / 'sessions.db'), store_url)
  return Env(
      'database', f'sqlite+aiosqlite:///{tmp_path / "sessions.db"}', store_url
  )


@pytest.fixture(params=['sqlite', 'sqlite-db', 'postgresql'])
async def env(request: Any, tmp_path: Path) -> Env:
  made = _make_env(request.param, tmp_path, request)
  await _ensure_journal(made.store_url)
  return made


@pytest.fixture(params=['sqlite', 'postgresql'])
async def crash_env(request: Any, tmp_path: Path) -> Env:
  made = _make_env(request.param, tmp_path, request)
  await _ensure_journal(made.store_url)
  return made


@pytest.fixture
async def world(env: Env) -> AsyncIterator[World]:
  made = build(env)
  yield made
  await made.close()


async def fence_row(world: World):
  return await world.manager.fence.read(KEY)


# -- the store ------------------------------------------------------------------


@pytest.mark.conformance('P2-SLS-01', 'P5-CTR-05')
async def test_record_keyed_durable_with_cascade_progress(world: World):
  """P2-SLS-01: keyed by the triple; incarnation, state, cascade durable."""
  other = SessionKey('app', 'alice', 'session-2')
  await world.manager.create(KEY)
  await world.manager.create(other)
  await world.store.begin_deletion(KEY, incarnation=1)
  await world.store.record_cascade_step(KEY, incarnation=1, step='revoke')
  restarted = build(world.env)
  try:
    record = await restarted.store.read(KEY)
    assert (record.state, record.incarnation) == (LifecycleState.DELETING, 1)
    assert record.cascade_steps == {'revoke'}
    assert (await restarted.store.read(other)).state is LifecycleState.ACTIVE
    assert (
        await restarted.store.read(SessionKey('app', 'bob', 'session-1'))
    ).state is LifecycleState.ABSENT
  finally:
    await restarted.close()


@pytest.mark.conformance('P2-SLS-02', 'P5-CTR-05')
async def test_only_the_listed_transitions_succeed(world: World):
  """P2-SLS-02: ABSENT→CREATING→ACTIVE→DELETING→DELETED→CREATING(n+1) only."""
  store = world.store
  absent = await store.read(KEY)
  receipt = CreationReceipt('op-1', 1, 'sha256:00')
  for bad in (
      store.activate(KEY, receipt=receipt),
      store.begin_deletion(KEY, incarnation=1),
      store.complete_deletion(KEY, incarnation=1),
      store.record_cascade_step(KEY, incarnation=1, step='x'),
      store.abandon_creation(KEY, incarnation=1, operation_id='op-1'),
  ):
    with pytest.raises(LifecycleConflictError):
      await bad
  creating = await store.reserve_creation(
      KEY, expected=absent, operation_id='op-1'
  )
  assert (creating.state, creating.incarnation) == (LifecycleState.CREATING, 1)
  for bad in (
      store.reserve_creation(KEY, expected=absent, operation_id='op-2'),
      store.begin_deletion(KEY, incarnation=1),
      store.complete_deletion(KEY, incarnation=1),
      store.adopt_existing(KEY, adoption_id='adopt'),
  ):
    with pytest.raises(LifecycleConflictError):
      await bad
  active = await store.activate(KEY, receipt=receipt)
  assert active.state is LifecycleState.ACTIVE and active.receipt == receipt
  for bad in (
      store.activate(KEY, receipt=receipt),
      store.complete_deletion(KEY, incarnation=1),
      store.reserve_creation(KEY, expected=active, operation_id='op-2'),
      store.abandon_creation(KEY, incarnation=1, operation_id='op-1'),
  ):
    with pytest.raises(LifecycleConflictError):
      await bad
  deleting = await store.begin_deletion(KEY, incarnation=1)
  assert deleting.state is LifecycleState.DELETING
  with pytest.raises(LifecycleConflictError):
    await store.begin_deletion(KEY, incarnation=1)
  deleted = await store.complete_deletion(KEY, incarnation=1)
  assert deleted.state is LifecycleState.DELETED
  with pytest.raises(LifecycleConflictError):
    await store.begin_deletion(KEY, incarnation=1)
  again = await store.reserve_creation(
      KEY, expected=deleted, operation_id='op-2'
  )
  assert (again.state, again.incarnation) == (LifecycleState.CREATING, 2)


@pytest.mark.conformance('P2-SLS-03')
async def test_reservation_carries_operation_and_expected_state(
    world: World,
):
  """P2-SLS-03: the CAS to CREATING carries the op id; wrong prior fails."""
  store = world.store
  wrong = LifecycleRecord(KEY, LifecycleState.DELETED, 1)
  with pytest.raises(LifecycleConflictError):
    await store.reserve_creation(KEY, expected=wrong, operation_id='op-1')
  record = await store.reserve_creation(
      KEY, expected=await store.read(KEY), operation_id='op-1'
  )
  assert record.operation_id == 'op-1'
  await store.activate(KEY, receipt=CreationReceipt('op-1', 1, 'sha256:0'))
  await store.begin_deletion(KEY, incarnation=1)
  deleted = await store.complete_deletion(KEY, incarnation=1)
  stale = LifecycleRecord(KEY, LifecycleState.ABSENT)
  with pytest.raises(LifecycleConflictError):
    await store.reserve_creation(KEY, expected=stale, operation_id='op-2')
  wrong_n = dataclasses.replace(deleted, incarnation=7)
  with pytest.raises(LifecycleConflictError):
    await store.reserve_creation(KEY, expected=wrong_n, operation_id='op-2')
  assert (await store.read(KEY)).state is LifecycleState.DELETED


@pytest.mark.conformance('P2-SLS-19')
async def test_shared_backend_needs_distinct_namespace(world: World):
  """P2-SLS-19: one database, two namespaces; a collision is refused."""
  await world.store.open()
  await world.sealed.open()
  other = SqlSessionLifecycleStore(world.env.store_url, namespace='test/other')
  with pytest.raises(SessionLifecycleStoreIncompatibleError):
    await other.open()
  await other.aclose()
  colliding = SqlSessionLifecycleStore(
      world.env.store_url, namespace='test/sealed'
  )
  profile = McpAppsHostProfile(
      name='p',
      sealed_result_store=world.sealed,
      session_lifecycle_store=colliding,
  )
  reasons = persistence_compatibility_reasons(profile)
  assert [r.problem for r in reasons] == [Problem.NAMESPACE_COLLISION]
  await colliding.aclose()
  fine = McpAppsHostProfile(
      name='p',
      sealed_result_store=world.sealed,
      session_lifecycle_store=world.store,
  )
  assert persistence_compatibility_reasons(fine) == []


# -- creation -------------------------------------------------------------------


@pytest.mark.conformance('P2-SLS-04')
async def test_row_and_receipt_commit_in_one_transaction(env: Env):
  """P2-SLS-04: Session row, events and receipt commit together or not at all."""

  async def fail_in_transaction(name: str) -> None:
    if name == FaultPoint.IN_SESSION_TRANSACTION:
      raise RuntimeError('injected failure before commit')

  failing = build(env, fault_hook=fail_in_transaction)
  try:
    with pytest.raises(RuntimeError):
      await failing.manager.create(KEY, events=imported_events(3))
    assert (
        await failing.service.get_session(
            app_name='app', user_id='alice', session_id='session-1'
        )
        is None
    )
    row = await fence_row(failing)
    assert row.state == FenceState.ARMED and row.import_digest is None
  finally:
    await failing.close()
  world = build(env)
  try:
    outcome = await world.manager.recover_creation(KEY)
    assert outcome.abandoned
    session, record = await world.manager.create(
        KEY, events=imported_events(2), operation_id='op-b'
    )
    row = await fence_row(world)
    assert (row.state, row.incarnation, row.operation_id) == (
        FenceState.COMMITTED,
        2,
        'op-b',
    )
    assert row.import_digest == record.receipt.import_digest
    assert row.import_count == 2 == len(session.events)
  finally:
    await world.close()


@pytest.mark.conformance('P2-SLS-05')
async def test_imported_events_finalized_before_digest(world: World):
  """P2-SLS-05: internal metadata stripped and restored stamped, then digest."""
  raw = imported_events(2)
  _, record = await world.manager.create(KEY, events=raw)
  finalized = finalize_imported_events(raw)
  assert record.receipt.import_digest == import_digest(finalized)
  assert record.receipt.import_digest != import_digest(raw)
  stored = await world.service.get_session(
      app_name='app', user_id='alice', session_id='session-1'
  )
  assert import_digest(stored.events) == record.receipt.import_digest
  for event in stored.events:
    assert '__adk_internal_spoof' not in event.custom_metadata
    assert event.custom_metadata['keep'] == 'a'
  assert raw[0].custom_metadata == {'__adk_internal_spoof': True, 'keep': 'a'}


@pytest.mark.conformance('P2-SLS-06')
async def test_activation_compares_the_receipt(world: World):
  """P2-SLS-06: ACTIVE needs the reserving op's receipt; no receipt, no adopt."""
  store = world.store
  await store.reserve_creation(
      KEY, expected=await store.read(KEY), operation_id='op-a'
  )
  with pytest.raises(LifecycleConflictError):
    await store.activate(KEY, receipt=CreationReceipt('op-x', 1, 'sha256:0'))
  with pytest.raises(LifecycleConflictError):
    await store.activate(KEY, receipt=CreationReceipt('op-a', 2, 'sha256:0'))
  # A row created outside the fence (no receipt) is never adopted.
  await world.service.create_session(
      app_name='app', user_id='alice', session_id='session-1'
  )
  outcome = await world.manager.recover_creation(KEY)
  assert outcome.abandoned and not outcome.activated
  record = await store.read(KEY)
  assert record.state is LifecycleState.DELETED and record.abandoned
  assert record.receipt is None


@pytest.mark.conformance('P2-SLS-07')
async def test_creating_denies_admission(world: World):
  """P2-SLS-07: CREATING refuses app admission with a typed error."""
  pause = Pause(FaultPoint.AFTER_FENCE_ARM)
  world.manager._fault_hook = pause
  task = asyncio.create_task(world.manager.create(KEY))
  await pause.reached.wait()
  with pytest.raises(
      SessionNotAdmittedError, match=r'while creating\('
  ) as caught:
    await world.manager.admit(KEY)
  assert caught.value.incarnation == 1
  pause.release.set()
  await task
  assert await world.manager.admit(KEY) == 1


@pytest.mark.conformance('P2-SLS-08')
async def test_active_only_after_durable_receipted_row(world: World):
  """P2-SLS-08: nothing sees ACTIVE before the receipted row is durable."""
  for point in (
      FaultPoint.IN_SESSION_TRANSACTION,
      FaultPoint.AFTER_SESSION_COMMIT,
  ):
    key_world = build(world.env)
    pause = Pause(point)
    key_world.manager._fault_hook = pause
    task = asyncio.create_task(
        key_world.manager.create(KEY, events=imported_events(2))
    )
    await pause.reached.wait()
    assert (await world.store.read(KEY)).state is LifecycleState.CREATING
    with pytest.raises(SessionNotAdmittedError, match=r'while creating\('):
      await world.manager.admit(KEY)
    pause.release.set()
    await task
    record = await world.store.read(KEY)
    assert record.state is LifecycleState.ACTIVE
    fresh = build(world.env)
    stored = await fresh.service.get_session(
        app_name='app', user_id='alice', session_id='session-1'
    )
    assert import_digest(stored.events) == record.receipt.import_digest
    await fresh.close()
    await key_world.manager.delete(KEY)
    await key_world.close()


async def _stalled_a_then_reclaim(world: World):
  """Creator A stalls before its commit; recovery retires it."""
  pause_a = Pause(FaultPoint.BEFORE_SESSION_COMMIT)
  a = build(world.env, fault_hook=pause_a)
  task_a = asyncio.create_task(
      a.manager.create(KEY, events=imported_events(3, 'a'), operation_id='A')
  )
  await pause_a.reached.wait()
  outcome = await world.manager.recover_creation(KEY)
  assert outcome.abandoned
  row = await fence_row(world)
  assert (row.state, row.incarnation, row.operation_id) == (
      FenceState.RETIRED,
      1,
      'A',
  )
  return a, pause_a, task_a


async def _only_b(world: World) -> None:
  stored = await world.service.get_session(
      app_name='app', user_id='alice', session_id='session-1'
  )
  assert [e.invocation_id for e in stored.events] == ['inv-b-0']
  record = await world.store.read(KEY)
  assert (record.state, record.incarnation, record.operation_id) == (
      LifecycleState.ACTIVE,
      2,
      'B',
  )


@pytest.mark.conformance('P2-SLS-09')
async def test_retired_creator_fails_in_its_transaction(world: World):
  """P2-SLS-09: A stalls, reclaim, B reserves, A commits: A fails, no A row."""
  a, pause_a, task_a = await _stalled_a_then_reclaim(world)
  pause_b = Pause(FaultPoint.BEFORE_SESSION_COMMIT)
  b = build(world.env, fault_hook=pause_b)
  task_b = asyncio.create_task(
      b.manager.create(KEY, events=imported_events(1, 'b'), operation_id='B')
  )
  await pause_b.reached.wait()
  pause_a.release.set()
  with pytest.raises(CreationFenceError, match=r'\(retired: '):
    await task_a
  assert (
      await world.service.get_session(
          app_name='app', user_id='alice', session_id='session-1'
      )
      is None
  )
  pause_b.release.set()
  await task_b
  await _only_b(world)
  # The seam itself refuses A's token too.
  with pytest.raises(CreationFenceError, match=r'\(retired: '):
    await world.manager.fence.create_if_fence_current(
        KEY, FenceToken(1, 'A'), state=None, events=(), digest='sha256:0'
    )
  await a.close()
  await b.close()


@pytest.mark.conformance('P2-SLS-10')
async def test_reverse_order_b_commits_first(world: World):
  """P2-SLS-10: B commits first; A's late commit then fails in-transaction."""
  a, pause_a, task_a = await _stalled_a_then_reclaim(world)
  await world.manager.create(
      KEY, events=imported_events(1, 'b'), operation_id='B'
  )
  pause_a.release.set()
  with pytest.raises(CreationFenceError, match=r'\(retired: '):
    await task_a
  await _only_b(world)
  await a.close()


@pytest.mark.conformance('P2-SLS-11')
async def test_reclaim_advances_fence_before_b_reserves(world: World):
  """P2-SLS-11: B's reservation sees A's fence already retired (ordered)."""
  a, pause_a, task_a = await _stalled_a_then_reclaim(world)
  observed: list[Any] = []

  async def watch(name: str) -> None:
    if name == FaultPoint.BEFORE_RESERVATION:
      observed.append(('fence', await world.manager.fence.read(KEY)))
    if name == FaultPoint.AFTER_RESERVATION:
      observed.append(('reserved', await world.store.read(KEY)))

  b = build(world.env, fault_hook=watch)
  await b.manager.create(KEY, operation_id='B')
  (tag1, fence), (tag2, reserved) = observed
  assert (tag1, tag2) == ('fence', 'reserved')
  assert (fence.state, fence.incarnation, fence.operation_id) == (
      FenceState.RETIRED,
      1,
      'A',
  )
  assert (reserved.incarnation, reserved.operation_id) == (2, 'B')
  with pytest.raises(CreationFenceError, match=r'\(retired: '):
    await a.manager.fence.arm(KEY, FenceToken(1, 'A'))
  pause_a.release.set()
  with pytest.raises(CreationFenceError, match=r'\(retired: '):
    await task_a
  await a.close()
  await b.close()


@pytest.mark.conformance('P2-SLS-15')
async def test_same_count_other_digest_not_adopted(world: World):
  """P2-SLS-15: a committed row whose events differ (same count) is refused."""
  pause = Pause(FaultPoint.AFTER_SESSION_COMMIT)
  creator = build(world.env, fault_hook=pause)
  task = asyncio.create_task(
      creator.manager.create(KEY, events=imported_events(2))
  )
  await pause.reached.wait()
  task.cancel()
  with pytest.raises(asyncio.CancelledError):
    await task
  stored = await world.service.get_session(
      app_name='app', user_id='alice', session_id='session-1'
  )
  tampered = stored.events[1].model_copy(
      update={
          'content': types.Content(
              role='model', parts=[types.Part(text='tampered')]
          )
      }
  )
  engine = create_async_engine(
      world.env.session_url
      if world.env.service == 'database'
      else f'sqlite+aiosqlite:///{world.env.session_url}'
  )
  async with engine.begin() as conn:
    if world.env.service == 'sqlite':
      await conn.execute(
          text('UPDATE events SET event_data = :d WHERE id = :id'),
          {'d': tampered.model_dump_json(exclude_none=True), 'id': tampered.id},
      )
    else:
      await conn.execute(
          text('DELETE FROM events WHERE id = :id'), {'id': tampered.id}
      )
  await engine.dispose()
  if world.env.service == 'database':
    fresh_session = await world.service.get_session(
        app_name='app', user_id='alice', session_id='session-1'
    )
    await world.service.append_event(fresh_session, tampered)
  with pytest.raises(ReceiptMismatchError) as caught:
    await world.manager.recover_creation(KEY)
  assert caught.value.mismatches == ('import_digest',)
  assert (await world.store.read(KEY)).state is LifecycleState.CREATING
  await creator.close()


@pytest.mark.conformance('P2-SLS-16')
async def test_abandoned_creating_recovery_is_idempotent(world: World):
  """P2-SLS-16: recovering twice gives one outcome (abandon, then activate)."""
  await world.store.reserve_creation(
      KEY, expected=await world.store.read(KEY), operation_id='A'
  )
  first = await world.manager.recover_creation(KEY)
  second = await world.manager.recover_creation(KEY)
  assert first.abandoned and not second.abandoned
  assert first.record == second.record
  pause = Pause(FaultPoint.AFTER_SESSION_COMMIT)
  creator = build(world.env, fault_hook=pause)
  task = asyncio.create_task(creator.manager.create(KEY))
  await pause.reached.wait()
  task.cancel()
  with pytest.raises(asyncio.CancelledError):
    await task
  one = await world.manager.recover_creation(KEY)
  two = await world.manager.recover_creation(KEY)
  assert one.activated and not two.activated
  assert one.record == two.record
  assert (one.record.state, one.record.incarnation) == (
      LifecycleState.ACTIVE,
      2,
  )
  await creator.close()


@pytest.mark.conformance('P2-SLS-35')
async def test_concurrent_duplicate_create_one_wins(world: World):
  """P2-SLS-35: two concurrent creates: exactly one wins, one typed error."""
  barrier = asyncio.Barrier(2)

  async def hook(name: str) -> None:
    if name == FaultPoint.BEFORE_RESERVATION:
      await asyncio.wait_for(barrier.wait(), 30)

  a, b = build(world.env, fault_hook=hook), build(world.env, fault_hook=hook)
  await warm(world, a, b)
  results = await asyncio.gather(
      a.manager.create(KEY, operation_id='A'),
      b.manager.create(KEY, operation_id='B'),
      return_exceptions=True,
  )
  errors = [r for r in results if isinstance(r, BaseException)]
  wins = [r for r in results if not isinstance(r, BaseException)]
  assert len(wins) == 1 and len(errors) == 1
  assert isinstance(errors[0], LifecycleConflictError)
  record = await world.store.read(KEY)
  assert (record.state, record.incarnation) == (LifecycleState.ACTIVE, 1)
  assert record.operation_id == wins[0][1].operation_id
  await a.close()
  await b.close()


@pytest.mark.conformance('P2-SLS-48')
async def test_create_racing_deleted_one_creating(world: World):
  """P2-SLS-48: two creates from DELETED(1): exactly one CREATING(2)."""
  await world.manager.create(KEY)
  await world.manager.delete(KEY)
  barrier = asyncio.Barrier(2)
  reserved: list[LifecycleRecord] = []

  async def hook(name: str) -> None:
    if name == FaultPoint.BEFORE_RESERVATION:
      await asyncio.wait_for(barrier.wait(), 30)

  a, b = build(world.env, fault_hook=hook), build(world.env, fault_hook=hook)
  await warm(world, a, b)
  results = await asyncio.gather(
      a.manager.create(KEY, operation_id='A'),
      b.manager.create(KEY, operation_id='B'),
      return_exceptions=True,
  )
  wins = [r for r in results if not isinstance(r, BaseException)]
  losses = [r for r in results if isinstance(r, BaseException)]
  assert len(wins) == 1 and isinstance(losses[0], LifecycleConflictError)
  assert losses[0].actual.incarnation == 2
  record = await world.store.read(KEY)
  assert (record.state, record.incarnation) == (LifecycleState.ACTIVE, 2)
  del reserved
  await a.close()
  await b.close()


# -- migration, deletion, recreation --------------------------------------------


@pytest.mark.conformance('P2-SLS-20')
async def test_migration_adopts_with_distinct_marker(env: Env):
  """P2-SLS-20: a pristine-ADK Session becomes ACTIVE(1) with an adoption."""
  pristine = _session_service(env)
  created = await pristine.create_session(
      app_name='app', user_id='alice', session_id='session-1', state={'k': 1}
  )
  await pristine.append_event(created, imported_events(1)[0])
  await pristine.close()
  world = build(env)
  try:
    engine = create_async_engine(
        env.session_url
        if env.service == 'database'
        else f'sqlite+aiosqlite:///{env.session_url}'
    )
    async with engine.connect() as conn:
      tables = await conn.run_sync(
          lambda c: __import__('sqlalchemy').inspect(c).get_table_names()
      )
    await engine.dispose()
    assert FENCE_TABLE not in tables  # inert until lifecycle asks
    with pytest.raises(SessionExistsError):
      await world.manager.create(KEY)
    record = await world.manager.adopt(KEY, adoption_id='adopt-1')
    assert (record.state, record.incarnation, record.adopted) == (
        LifecycleState.ACTIVE,
        1,
        True,
    )
    assert record.receipt is None
    row = await fence_row(world)
    assert (row.state, row.operation_id, row.import_digest) == (
        FenceState.ADOPTED,
        'adopt-1',
        None,
    )
    assert await world.manager.adopt(KEY, adoption_id='adopt-1') == record
    stored = await world.service.get_session(
        app_name='app', user_id='alice', session_id='session-1'
    )
    assert stored.state == {'k': 1} and len(stored.events) == 1
  finally:
    await world.close()


@pytest.mark.conformance('P2-SLS-21', 'P2-SLS-43')
async def test_recreation_is_clean_next_incarnation(world: World):
  """P2-SLS-21: DELETED(n)→CREATING(n+1) with clean state; P2-SLS-43 too."""
  session, _ = await world.manager.create(
      KEY, state={'old': True}, events=imported_events(2)
  )
  await seed_incarnation_data(world, 1)
  await world.manager.delete(KEY)
  pause = Pause(FaultPoint.AFTER_RESERVATION)
  world.manager._fault_hook = pause
  task = asyncio.create_task(world.manager.create(KEY, state={'new': True}))
  await pause.reached.wait()
  record = await world.store.read(KEY)
  assert (record.state, record.incarnation) == (LifecycleState.CREATING, 2)
  pause.release.set()
  fresh, active = await task
  assert active.incarnation == 2
  stored = await world.service.get_session(
      app_name='app', user_id='alice', session_id='session-1'
  )
  assert stored.state == {'new': True} and stored.events == []
  assert await remaining_data(world, 1) == dict.fromkeys(PARTICIPANTS, 0)
  del session, fresh


async def test_require_incarnation_refuses_an_ended_incarnation(
    world: World,
):
  """The check itself: work tied to incarnation 1 is refused once the
  Session is `DELETED(1)`, and again once it is `ACTIVE(2)`; incarnation 2
  passes. (Which runtime paths call it: `lifecycle.manager`.)"""
  await world.manager.create(KEY)
  await world.manager.require_incarnation(KEY, 1, purpose='work')
  await world.manager.delete(KEY)
  with pytest.raises(StaleIncarnationError) as caught:
    await world.manager.require_incarnation(KEY, 1, purpose='work')
  assert (caught.value.state, caught.value.current) == (
      LifecycleState.DELETED,
      1,
  )
  await world.manager.create(KEY)
  with pytest.raises(StaleIncarnationError) as caught:
    await world.manager.require_incarnation(KEY, 1, purpose='work')
  assert (caught.value.presented, caught.value.current) == (1, 2)
  assert caught.value.purpose == 'work'
  await world.manager.require_incarnation(KEY, 2, purpose='work')


@pytest.mark.conformance('P2-SLS-27')
async def test_deleting_denies_new_admission(world: World):
  """P2-SLS-27: the CAS to DELETING is durable; admission then fails typed."""
  await world.manager.create(KEY)
  pause = Pause(FaultPoint.AFTER_DELETING)
  world.manager._fault_hook = pause
  task = asyncio.create_task(world.manager.delete(KEY))
  await pause.reached.wait()
  fresh = build(world.env)
  with pytest.raises(SessionNotAdmittedError, match=r'while deleting\('):
    await fresh.manager.admit(KEY)
  await fresh.close()
  pause.release.set()
  assert (await task).state is LifecycleState.DELETED


@pytest.mark.conformance('P2-SLS-28')
async def test_deletion_order_is_observed(env: Env):
  """P2-SLS-28: DELETING → revoke → coordination → row → cascade → mark."""
  order: list[str] = []
  holder: dict[str, World] = {}

  async def revoke(session: SessionKey, n: int) -> None:
    state = (await holder['w'].store.read(session)).state
    order.append(f'revoke:{state.value}:{n}')

  class Coordinator:

    async def acquire_for_deletion(self, session: SessionKey, n: int) -> None:
      row = await holder['w'].service.get_session(
          app_name='app', user_id='alice', session_id='session-1'
      )
      order.append(f'coordination:row={row is not None}')

  async def hook(name: str) -> None:
    order.append(name)

  world = build(
      env, fault_hook=hook, revoke_hooks=(revoke,), coordinator=Coordinator()
  )
  holder['w'] = world
  try:
    await world.manager.create(KEY)
    order.clear()
    final = await world.manager.delete(KEY)
    assert order == [
        FaultPoint.AFTER_DELETING,
        'revoke:deleting:1',
        FaultPoint.AFTER_REVOKE,
        'coordination:row=True',
        FaultPoint.AFTER_COORDINATION,
        FaultPoint.AFTER_ROW_DELETE,
        *(FaultPoint.after_cascade(p) for p in PARTICIPANTS),
        FaultPoint.BEFORE_COMPLETION_MARK,
    ]
    assert final.state is LifecycleState.DELETED
    assert final.cascade_steps == {
        Step.REVOKE,
        Step.COORDINATION,
        Step.SESSION_ROW,
        *(Step.cascade(p) for p in PARTICIPANTS),
    }
  finally:
    await world.close()


@pytest.mark.conformance('P2-SLS-36')
async def test_recreate_racing_deletion_completion(world: World):
  """P2-SLS-36: a recreate proceeds only from DELETED(n), never overlapping."""
  await world.manager.create(KEY)
  pause = Pause(FaultPoint.BEFORE_COMPLETION_MARK)
  world.manager._fault_hook = pause
  deletion = asyncio.create_task(world.manager.delete(KEY))
  await pause.reached.wait()
  racer = build(world.env)
  with pytest.raises(SessionNotAdmittedError, match=r'while deleting\('):
    await racer.manager.create(KEY)
  stale = LifecycleRecord(KEY, LifecycleState.DELETED, 1)
  with pytest.raises(LifecycleConflictError):
    await racer.store.reserve_creation(KEY, expected=stale, operation_id='x')
  pause.release.set()
  await deletion
  _, record = await racer.manager.create(KEY)
  assert record.incarnation == 2
  await racer.close()


# -- P2-SLS-44 / 45 on the Runner's own append path -----------------------------


@contextlib.asynccontextmanager
async def runtime(
    env: Env, mcp_apps: Any, **server_options: Any
) -> AsyncIterator[tuple[BoundStack, SessionLifecycleManager]]:
  """A Runner over the conformance server, bound to SQL stores on `env`.

  The manager that deletes and recreates Sessions shares the databases but
  not this process's registry (as when another replica deletes): nothing
  revokes the in-flight call's connection, so its result does arrive.
  """
  profile = await sql_profile(env.store_url)
  service = _session_service(env)
  manager = SessionLifecycleManager(
      profile.session_lifecycle_store,
      service,
      participants=[SealedStoreParticipant(profile.sealed_result_store)],
  )
  params = StdioConnectionParams(
      server_params=mcp_apps.stdio_parameters(server_options),
      timeout=RUNTIME_TIMEOUT,
  )
  try:
    async with bound_stack(
        params, session_service=service, profile=profile
    ) as stack:
      yield stack, manager
  finally:
    await close_profile(profile)
    await service.close()


async def sealed_record_count(store_url: str) -> int:
  """Every sealed record in the profile's store, of any incarnation."""
  engine = create_async_engine(store_url)
  try:
    async with engine.connect() as conn:
      return int(
          (
              await conn.execute(text(f'SELECT COUNT(*) FROM {SEALED_TABLE}'))
          ).scalar_one()
      )
  finally:
    await engine.dispose()


@pytest.mark.conformance('P2-SLS-44')
@pytest.mark.parametrize(
    'recreate', [True, False], ids=['recreated', 'deleted']
)
async def test_late_result_of_an_ended_incarnation_is_never_appended(
    env: Env, mcp_apps: Any, recreate: bool
):
  """P2-SLS-44: a real UI call of incarnation 1 returns after the Session
  was deleted (and recreated as incarnation 2): the Runner's append fails
  with `StaleIncarnationError`, and nothing reaches either incarnation.

  The call is held at the conformance server's gate (`gated_view`) until
  the Session is gone; then the server answers, the tool seals the result,
  and the Runner appends the function-response Event through the append
  stage, which compares the invocation's pinned incarnation with the
  Session's record before writing anything.
  """
  async with ServerGate() as gate:
    async with runtime(env, mcp_apps, gate_socket=gate.path) as (
        stack,
        manager,
    ):
      key = stack.key('late-result')
      _, record = await manager.create(key)
      assert record.incarnation == 1
      turn = asyncio.create_task(
          stack.turn(key.session_id, (names.GATED_VIEW, {'tag': 'late'}))
      )
      await asyncio.wait_for(gate.entered.wait(), RUNTIME_TIMEOUT)
      assert gate.tags == ['late'] and not turn.done()

      await manager.delete(key)
      if recreate:
        _, again = await manager.create(key)
        assert again.incarnation == 2
      gate.open()
      with pytest.raises(StaleIncarnationError) as caught:
        await asyncio.wait_for(turn, RUNTIME_TIMEOUT)

      error = caught.value
      assert (error.presented, error.purpose) == (1, 'late result')
      expected = (
          (LifecycleState.ACTIVE, 2)
          if recreate
          else (LifecycleState.DELETED, 1)
      )
      assert (error.state, error.current) == expected
      stored = await stack.session_service.get_session(
          app_name=key.app_name,
          user_id=key.user_id,
          session_id=key.session_id,
      )
      if recreate:
        assert stored is not None and stored.events == []
      else:
        assert stored is None
      # No envelope was written for the late result, in any incarnation,
      # and its pending seal is gone.
      assert await sealed_record_count(env.store_url) == 0
      assert len(PENDING_SEALS) == 0


@pytest.mark.conformance('P2-SLS-45')
async def test_late_append_of_an_ended_incarnation_fails_typed(
    env: Env, mcp_apps: Any
):
  """P2-SLS-45: the model's answer of an invocation of incarnation 1 comes
  after the Session was recreated: the Runner's append of it fails with
  `StaleIncarnationError` and incarnation 2 stays empty.

  The UI call's Event was appended (and sealed) while incarnation 1 was
  `ACTIVE`; the model's second call waits at a barrier while the Session is
  deleted and recreated, then answers with text, which carries no seal.
  """
  reached, release = asyncio.Event(), asyncio.Event()

  async def hold_the_answer() -> None:
    reached.set()
    await release.wait()

  async with runtime(env, mcp_apps) as (stack, manager):
    key = stack.key('late-append')
    await manager.create(key)
    stack.llm.on_answer = hold_the_answer
    turn = asyncio.create_task(
        stack.turn(key.session_id, (names.UI_RESULT, {'label': 'x'}))
    )
    await asyncio.wait_for(reached.wait(), RUNTIME_TIMEOUT)
    assert await sealed_record_count(env.store_url) == 1

    await manager.delete(key)
    _, again = await manager.create(key)
    assert again.incarnation == 2
    release.set()
    with pytest.raises(StaleIncarnationError) as caught:
      await asyncio.wait_for(turn, RUNTIME_TIMEOUT)

    error = caught.value
    assert (error.presented, error.current, error.purpose) == (1, 2, 'append')
    stored = await stack.session_service.get_session(
        app_name=key.app_name, user_id=key.user_id, session_id=key.session_id
    )
    assert stored is not None and stored.events == []
    assert await sealed_record_count(env.store_url) == 0  # Cascade-deleted.


async def test_manager_append_event_refuses_an_ended_incarnation(
    world: World,
):
  """`SessionLifecycleManager.append_event` (a host's own appends) appends
  only under the `ACTIVE` incarnation it names."""
  old, _ = await world.manager.create(KEY)
  await world.manager.append_event(
      old, Event(author='user', invocation_id='i1'), incarnation=1
  )
  await world.manager.delete(KEY)
  new, _ = await world.manager.create(KEY)
  for session in (old, new):
    with pytest.raises(StaleIncarnationError) as caught:
      await world.manager.append_event(
          session, Event(author='user', invocation_id='late'), incarnation=1
      )
    assert caught.value.purpose == 'append'
  await world.manager.append_event(
      new, Event(author='user', invocation_id='ok'), incarnation=2
  )
  stored = await world.service.get_session(
      app_name='app', user_id='alice', session_id='session-1'
  )
  assert [e.invocation_id for e in stored.events] == ['ok']


@pytest.mark.conformance('P2-SLS-25', 'P2-SLS-46')
async def test_old_sealed_reference_vs_new_incarnation(world: World):
  """P2-SLS-46: a sealed ref of incarnation 1 never resolves under 2."""
  await world.manager.create(KEY)
  ref = await world.sealed.create(
      SealedRecordScope(KEY, 1, SEAL_SCOPE_EVENT, 'call-1'),
      operation_instance_id='op-1',
      envelope=SealedEnvelope(b'{"x":1}', None),
      expires_at=4_000_000_000.0,
  )
  await world.manager.delete(KEY)
  await world.manager.create(KEY)
  for incarnation in (1, 2):
    with _raises(SealedResultReason.NOT_FOUND):
      await world.sealed.resolve(
          SealedRecordScope(KEY, incarnation, SEAL_SCOPE_EVENT, 'call-1'), ref
      )


@pytest.mark.conformance('P2-SLS-47')
async def test_create_racing_deleting_fails_until_done(world: World):
  """P2-SLS-47: create during DELETING fails typed; succeeds once DELETED."""
  await world.manager.create(KEY)
  pause = Pause(FaultPoint.AFTER_REVOKE)
  world.manager._fault_hook = pause
  deletion = asyncio.create_task(world.manager.delete(KEY))
  await pause.reached.wait()
  other = build(world.env)
  for _ in range(2):
    with pytest.raises(SessionNotAdmittedError, match=r'while deleting\('):
      await other.manager.create(KEY)
  pause.release.set()
  await deletion
  _, record = await other.manager.create(KEY)
  assert record.incarnation == 2
  await other.close()


# -- real crashes ---------------------------------------------------------------


def run_worker(env: Env, op: str, kill_at: Optional[str], **extra: Any) -> int:
  """Runs one operation in a subprocess that SIGKILLs itself at `kill_at`."""
  spec = json.dumps({
      'env': dataclasses.asdict(env),
      'op': op,
      'kill_at': kill_at,
      **extra,
  })
  process = subprocess.run(
      [sys.executable, __file__, spec],
      env={**os.environ, 'PYTHONPATH': os.pathsep.join(sys.path)},
      capture_output=True,
      timeout=120,
      check=False,
  )
  if kill_at is not None:
    assert process.returncode == -signal.SIGKILL, process.stderr.decode()
  else:
    assert process.returncode == 0, process.stderr.decode()
  return process.returncode


async def _worker(spec: dict[str, Any]) -> None:
  env = Env(**spec['env'])
  kill_at = spec['kill_at']

  async def hook(name: str) -> None:
    if name == kill_at:
      os.kill(os.getpid(), signal.SIGKILL)

  world = build(env, fault_hook=hook)
  if spec['op'] == 'create':
    await world.manager.create(
        KEY,
        events=imported_events(spec.get('events', 0), spec.get('tag', 'a')),
        operation_id=spec.get('operation_id'),
    )
  elif spec['op'] == 'delete':
    await world.manager.delete(KEY)
  elif spec['op'] == 'recover':
    await world.manager.recover_creation(KEY)
  await world.close()


CREATION_CRASHES = [
    ('P2-SLS-30', FaultPoint.BEFORE_RESERVATION, 'absent'),
    ('P2-SLS-31', FaultPoint.AFTER_RESERVATION, 'abandon'),
    ('P2-SLS-31', FaultPoint.AFTER_FENCE_ARM, 'abandon'),
    ('P2-SLS-33', FaultPoint.BEFORE_IMPORT_FINALIZATION, 'abandon'),
    ('P2-SLS-33', FaultPoint.AFTER_IMPORT_FINALIZATION, 'abandon'),
    ('P2-SLS-32', FaultPoint.BEFORE_SESSION_COMMIT, 'abandon'),
    ('P2-SLS-13', FaultPoint.IN_SESSION_TRANSACTION, 'abandon'),
    ('P2-SLS-14', FaultPoint.AFTER_SESSION_COMMIT, 'activate'),
    ('P2-SLS-34', FaultPoint.AFTER_SESSION_COMMIT, 'activate'),
    ('P2-SLS-08', FaultPoint.AFTER_ACTIVATION, 'active'),
]


@pytest.mark.conformance(
    'P2-SLS-08',
    'P2-SLS-13',
    'P2-SLS-14',
    'P2-SLS-16',
    'P2-SLS-30',
    'P2-SLS-31',
    'P2-SLS-32',
    'P2-SLS-33',
    'P2-SLS-34',
)
@pytest.mark.parametrize(
    'case,point,expect',
    CREATION_CRASHES,
    ids=[f'{c}-{p}' for c, p, _ in CREATION_CRASHES],
)
async def test_creation_crash_points(
    crash_env: Env, case: str, point: str, expect: str
):
  """P2-SLS-13/14/30..34: a killed creator, then recovery on fresh objects."""
  run_worker(crash_env, 'create', point, events=3, operation_id='A')
  world = build(crash_env)
  try:
    record = await world.store.read(KEY)
    row = await world.service.get_session(
        app_name='app', user_id='alice', session_id='session-1'
    )
    if expect == 'absent':
      assert record.state is LifecycleState.ABSENT, case
      assert row is None and await fence_row(world) is None
    elif expect == 'active':
      assert record.state is LifecycleState.ACTIVE
      assert import_digest(row.events) == record.receipt.import_digest
      return
    else:
      assert record.state is LifecycleState.CREATING, case
    if expect == 'abandon':
      assert row is None  # nothing of A's transaction survived
    if expect == 'activate':
      assert len(row.events) == 3
    outcome = await world.manager.recover_creation(KEY)
    again = await world.manager.recover_creation(KEY)
    assert again.record == outcome.record
    if expect == 'activate':
      assert outcome.activated
      stored = await world.service.get_session(
          app_name='app', user_id='alice', session_id='session-1'
      )
      assert len(stored.events) == 3
      # The receipt covers the finalized (stripped and stamped) events.
      assert outcome.record.receipt.import_digest == import_digest(
          stored.events
      )
      assert all(
          '__adk_internal_spoof' not in e.custom_metadata for e in stored.events
      )
      return
    if expect == 'abandon':
      assert outcome.abandoned and outcome.record.incarnation == 1
    # B retries and gets only its own data.
    _, created = await world.manager.create(
        KEY, events=imported_events(1, 'b'), operation_id='B'
    )
    stored = await world.service.get_session(
        app_name='app', user_id='alice', session_id='session-1'
    )
    assert [e.invocation_id for e in stored.events] == ['inv-b-0']
    assert created.incarnation == (1 if expect == 'absent' else 2)
    with pytest.raises(CreationFenceError, match=r'\(retired: '):
      await world.manager.fence.create_if_fence_current(
          KEY, FenceToken(1, 'A'), state=None, events=[], digest='sha256:0'
      )
  finally:
    await world.close()


@pytest.mark.conformance('P2-SLS-12')
async def test_crash_during_orphan_cleanup_recovers(crash_env: Env):
  """P2-SLS-12: reclaim killed after retiring the fence; recovery completes."""
  run_worker(
      crash_env, 'create', FaultPoint.BEFORE_SESSION_COMMIT, operation_id='A'
  )
  run_worker(crash_env, 'recover', FaultPoint.AFTER_FENCE_RETIRE)
  world = build(crash_env)
  try:
    assert (await world.store.read(KEY)).state is LifecycleState.CREATING
    row = await fence_row(world)
    assert row.state == FenceState.RETIRED
    first = await world.manager.recover_creation(KEY)
    second = await world.manager.recover_creation(KEY)
    assert first.abandoned and first.record == second.record
    _, record = await world.manager.create(KEY)
    assert record.incarnation == 2
  finally:
    await world.close()


DELETION_CRASHES = [
    ('P2-SLS-37', FaultPoint.AFTER_DELETING),
    ('P2-SLS-38', FaultPoint.AFTER_REVOKE),
    ('P2-SLS-39', FaultPoint.AFTER_COORDINATION),
    ('P2-SLS-40', FaultPoint.AFTER_ROW_DELETE),
    *(('P2-SLS-41', FaultPoint.after_cascade(p)) for p in PARTICIPANTS),
    ('P2-SLS-42', FaultPoint.BEFORE_COMPLETION_MARK),
]


@pytest.mark.conformance(
    'P2-SLS-29',
    'P2-SLS-37',
    'P2-SLS-38',
    'P2-SLS-39',
    'P2-SLS-40',
    'P2-SLS-41',
    'P2-SLS-42',
)
@pytest.mark.parametrize(
    'case,point',
    DELETION_CRASHES,
    ids=[f'{c}-{p}' for c, p in DELETION_CRASHES],
)
async def test_deletion_crash_points_resume(
    crash_env: Env, case: str, point: str
):
  """P2-SLS-29, 37..42: deletion killed at a phase resumes idempotently."""
  setup = build(crash_env)
  await setup.manager.create(KEY, events=imported_events(2))
  await seed_incarnation_data(setup, 1)
  await setup.close()
  run_worker(crash_env, 'delete', point)
  world = build(crash_env)
  try:
    with pytest.raises(SessionNotAdmittedError, match=r'while deleting\('):
      await world.manager.admit(KEY)
    with pytest.raises(SessionNotAdmittedError, match=r'while deleting\('):
      await world.manager.create(KEY)
    before = await world.store.read(KEY)
    final = await world.manager.resume_deletion(KEY)
    assert final.state is LifecycleState.DELETED and final.incarnation == 1
    assert await world.manager.resume_deletion(KEY) == final
    assert (
        await world.service.get_session(
            app_name='app', user_id='alice', session_id='session-1'
        )
        is None
    )
    assert await remaining_data(world, 1) == dict.fromkeys(PARTICIPANTS, 0)
    counts = await _journal_counts(crash_env.store_url)
    # Steps recorded before the crash never run again.
    for step, kind in (
        (Step.REVOKE, 'revoke'),
        (Step.COORDINATION, 'coordination'),
        *((Step.cascade(p), f'cascade:{p}') for p in PARTICIPANTS[1:]),
    ):
      expected = (
          1 if step in before.cascade_steps else counts.get(f'{kind}@1', 0)
      )
      assert counts.get(f'{kind}@1', 0) == expected, case
      assert counts.get(f'{kind}@1', 0) in (1, 2)
    _, record = await world.manager.create(KEY)
    assert record.incarnation == 2
  finally:
    await world.close()


@pytest.mark.conformance('P2-SLS-14')
async def test_postgres_server_killed_after_fenced_commit(
    private_pg_server: Any, tmp_path: Path
):
  """P2-SLS-14: the PG server itself crashes after the commit; recovery works."""
  url = private_pg_server.create_database()
  env = Env('database', url, url)
  await _ensure_journal(url)
  run_worker(env, 'create', FaultPoint.AFTER_SESSION_COMMIT, events=2)
  private_pg_server.kill()
  private_pg_server.start()
  world = build(env)
  try:
    outcome = await world.manager.recover_creation(KEY)
    assert outcome.activated and outcome.record.incarnation == 1
  finally:
    await world.close()
  del tmp_path


@pytest.mark.conformance('P2-SLS-17')
def test_no_fence_backend_is_refused():
  """P2-SLS-17: services that cannot host the fence are refused."""
  from google.adk.mcp_apps.lifecycle import FenceUnsupportedError  # pylint: disable=g-import-not-at-top
  from google.adk.sessions.in_memory_session_service import InMemorySessionService  # pylint: disable=g-import-not-at-top

  for service in (InMemorySessionService(), SqliteSessionService(':memory:')):
    with pytest.raises(FenceUnsupportedError):
      SessionLifecycleManager(LocalDevSessionLifecycleStore(), service)


if __name__ == '__main__':
  asyncio.run(_worker(json.loads(sys.argv[1])))
