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

"""Every sealed-result store under one contract suite, and the SQL store's own.

Store-level proofs of conformance cases P2-SRS-01, 02, 06, 07, 09, 11..17,
21, 23 and the persistence-compatibility family 24..28. The contract cases
(scoping, record ids, the store-private digest against tampered bytes,
immutable create, GC and the cascade) run on every implementation: the
local-development store and the SQL store on a SQLite file and on a
throw-away PostgreSQL 15 from `postgres_server`, each with a fresh store
(and database) per test. The SQL store's own cases (reference tracking,
restarts, concurrency, namespaces) run on both SQL backends. Time is
explicit (GC
takes `now`; creation stamps come from a fake clock), so nothing sleeps;
races are forced with barriers. A "crash" or "restart" is a new store
object on the same database; the PostgreSQL crash test also kills the
server with SIGKILL and restarts it.

What needs the Event, the resolver or bootstrap of a later part (the
authoritative-Event check, read-only render, reference swapping across
Events and widgets) is proven here only as far as the store goes: scope
mismatches and corruption raise the contract's typed errors and release
no bytes.

The sealed bytes are opaque here: canonical JSON is not this store's
concern.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
import dataclasses
import datetime
import logging
from typing import Any
from typing import Optional

from google.adk.mcp_apps.contracts.local_dev import LocalDevSealedResultStore
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.sealed_result_store import IsReferenced
from google.adk.mcp_apps.contracts.sealed_result_store import ReferenceTrackingSealedResultStore
from google.adk.mcp_apps.contracts.sealed_result_store import REQUIRED_SEALED_STORE_CAPABILITIES
from google.adk.mcp_apps.contracts.sealed_result_store import SealedEnvelope
from google.adk.mcp_apps.contracts.sealed_result_store import SealedRecordScope
from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultReason
from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultRef
from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultStore
from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultStoreError
from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultStoreIncompatibleError
from google.adk.mcp_apps.contracts.sealed_result_store import SealedStoreCapability
from google.adk.mcp_apps.contracts.sealed_result_store import validate_sealed_store
from google.adk.mcp_apps.errors import McpAppsError
from google.adk.mcp_apps.stores.sql_sealed_result_store import DEFAULT_NAMESPACE
from google.adk.mcp_apps.stores.sql_sealed_result_store import FORMAT_REVISION
from google.adk.mcp_apps.stores.sql_sealed_result_store import SealedRecordState
from google.adk.mcp_apps.stores.sql_sealed_result_store import SqlSealedResultStore
from google.adk.mcp_apps.stores.sql_sealed_result_store import TABLE_NAME
from postgres_server import PostgresServer
import pytest
from sqlalchemy import text

pytestmark = pytest.mark.integration

T0 = 1_788_000_000.0
"""A fixed epoch time; GC takes `now` explicitly."""
TTL = 600.0

SESSION = SessionKey('app', 'alice', 'session-1')
SCOPE = SealedRecordScope(SESSION, 1, 'event-1', 'call-1')
ENVELOPE = SealedEnvelope(b'{"content":[{"text":"42"}]}', b'{"refresh":1}')
OTHER_ENVELOPE = SealedEnvelope(
    b'{"content":[{"text":"43"}]}', b'{"refresh":1}'
)


def _raises(reason: SealedResultReason) -> Any:
  """`pytest.raises` for a `SealedResultStoreError` with this reason."""
  return pytest.raises(
      SealedResultStoreError, check=lambda e: e.reason is reason
  )


class FakeClock:
  """A settable UTC clock for the stored creation and commit stamps."""

  def __init__(self) -> None:
    self.now = datetime.datetime.fromtimestamp(T0, datetime.timezone.utc)

  def __call__(self) -> datetime.datetime:
    return self.now


@pytest.fixture(params=['sqlite', 'postgresql'])
def backend(request: pytest.FixtureRequest) -> str:
  return str(request.param)


@pytest.fixture
def new_db_url(
    backend: str, tmp_path: Any, request: pytest.FixtureRequest
) -> Iterator[Callable[[], str]]:
  """Makes fresh, empty databases on the test's backend."""
  made: list[str] = []

  def new() -> str:
    if backend == 'sqlite':
      url = f'sqlite+aiosqlite:///{tmp_path / f"sealed-{len(made)}.db"}'
    else:
      server: PostgresServer = request.getfixturevalue('pg_server')
      url = server.create_database()
    made.append(url)
    return url

  yield new
  if backend == 'postgresql':
    server = request.getfixturevalue('pg_server')
    for url in made:
      server.drop_database(url.rsplit('/', 1)[1])


@pytest.fixture
def db_url(new_db_url: Callable[[], str]) -> str:
  return new_db_url()


StoreFactory = Callable[..., SqlSealedResultStore]


@dataclasses.dataclass
class Contract:
  """One `SealedResultStore` implementation under the contract suite.

  Attributes:
    store: The store.
    count: How many records it holds.
    raw: A record's stored bytes and digest, as the implementation keeps
      them (for before/after comparisons).
    tamper: Overwrites one stored part of a record (`sealed_result`,
      `refresh_record` or `digest`) behind the store's back, as a disk or
      memory corruption would.
  """

  store: SealedResultStore
  count: Callable[[], Awaitable[int]]
  raw: Callable[[str], Awaitable[Any]]
  tamper: Callable[[str, str, Optional[bytes]], Awaitable[None]]


def _dev_contract(store: LocalDevSealedResultStore) -> Contract:
  rows = store._rows  # pylint: disable=protected-access

  async def count() -> int:
    return len(rows)

  async def raw(record_id: str) -> Any:
    row = rows[record_id]
    return (row.envelope, row.digest)

  async def tamper(record_id: str, part: str, value: Optional[bytes]) -> None:
    row = rows[record_id]
    if part == 'digest':
      assert value is not None
      row.digest = value
    else:
      row.envelope = dataclasses.replace(row.envelope, **{part: value})

  return Contract(store, count, raw, tamper)


def _sql_contract(store: SqlSealedResultStore) -> Contract:
  async def tamper(record_id: str, part: str, value: Optional[bytes]) -> None:
    async with store.engine.begin() as conn:
      await conn.execute(
          text(f'UPDATE {TABLE_NAME} SET {part} = :v WHERE record_id = :rid'),
          {'v': value, 'rid': record_id},
      )

  return Contract(
      store,
      lambda: row_count(store),
      lambda record_id: stored_bytes(store, record_id),
      tamper,
  )


@pytest.fixture(params=['dev', 'sqlite', 'postgresql'])
async def contract(
    request: pytest.FixtureRequest, tmp_path: Any
) -> AsyncIterator[Contract]:
  """A fresh store of each implementation (and a fresh database)."""
  if request.param == 'dev':
    yield _dev_contract(LocalDevSealedResultStore())
    return
  server: Optional[PostgresServer] = None
  if request.param == 'sqlite':
    url = f'sqlite+aiosqlite:///{tmp_path / "contract.db"}'
  else:
    server = request.getfixturevalue('pg_server')
    url = server.create_database()
  store = SqlSealedResultStore(url, clock=FakeClock())
  await store.open()
  try:
    yield _sql_contract(store)
  finally:
    await store.aclose()
    if server is not None:
      server.drop_database(url.rsplit('/', 1)[1])


@pytest.fixture
async def make_store(db_url: str) -> AsyncIterator[StoreFactory]:
  """Builds stores (workers, restarts) on the test's database."""
  made: list[SqlSealedResultStore] = []
  clock = FakeClock()

  def make(url: Optional[str] = None, **kwargs: Any) -> SqlSealedResultStore:
    kwargs.setdefault('clock', clock)
    store = SqlSealedResultStore(url or db_url, **kwargs)
    made.append(store)
    return store

  yield make
  for store in made:
    await store.aclose()


@pytest.fixture
async def store(make_store: StoreFactory) -> SqlSealedResultStore:
  made = make_store()
  await made.open()
  return made


def referenced_by(*refs: SealedResultRef) -> IsReferenced:
  """An `is_referenced` standing in for the persisted Events."""
  ids = {r.record_id for r in refs}

  async def is_referenced(
      scope: SealedRecordScope, ref: SealedResultRef
  ) -> bool:
    del scope
    return ref.record_id in ids

  return is_referenced


NOTHING_REFERENCED = referenced_by()


def event_check(
    by_event: SealedResultRef, raising: SealedResultRef, asked: list[str]
) -> IsReferenced:
  """An `is_referenced` for `SCOPE`: yes for `by_event`, an error for
  `raising` (the Session service is down), no otherwise; every record it
  is asked about is appended to `asked`."""

  async def is_referenced(
      scope: SealedRecordScope, ref: SealedResultRef
  ) -> bool:
    assert scope == SCOPE
    asked.append(ref.record_id)
    if ref == raising:
      raise RuntimeError('session service unavailable')
    return ref == by_event

  return is_referenced


async def create(
    store: SealedResultStore,
    instance: str,
    *,
    scope: SealedRecordScope = SCOPE,
    envelope: SealedEnvelope = ENVELOPE,
    expires_at: float = T0 + TTL,
) -> SealedResultRef:
  return await store.create(
      scope,
      operation_instance_id=instance,
      envelope=envelope,
      expires_at=expires_at,
  )


async def row_count(store: SqlSealedResultStore) -> int:
  async with store.engine.connect() as conn:
    return int(
        (await conn.execute(text(f'SELECT COUNT(*) FROM {TABLE_NAME}'))).one()[
            0
        ]
    )


async def stored_bytes(store: SqlSealedResultStore, record_id: str) -> Any:
  async with store.engine.connect() as conn:
    return (
        await conn.execute(
            text(
                'SELECT sealed_result, refresh_record, digest, state'
                f' FROM {TABLE_NAME} WHERE record_id = :rid'
            ),
            {'rid': record_id},
        )
    ).one()


# -- the contract itself -----------------------------------------------------


@pytest.mark.conformance('P5-CTR-04')
async def test_store_implements_the_contract(
    store: SqlSealedResultStore,
) -> None:
  # The reference implementation passes the persistence validation that
  # binding runs (P2-SRS-24..28).
  validate_sealed_store(store, DEFAULT_NAMESPACE, FORMAT_REVISION)
  assert isinstance(store, SealedResultStore)
  assert isinstance(store, ReferenceTrackingSealedResultStore)
  assert store.namespace == DEFAULT_NAMESPACE
  assert store.revision == FORMAT_REVISION
  assert store.persistence_capabilities == REQUIRED_SEALED_STORE_CAPABILITIES
  for error in (SealedResultStoreError, SealedResultStoreIncompatibleError):
    assert issubclass(error, SealedResultStoreError)
    assert issubclass(error, McpAppsError)


def test_in_memory_sqlite_is_refused() -> None:
  with pytest.raises(ValueError, match='in-memory'):
    SqlSealedResultStore('sqlite+aiosqlite:///:memory:')


# -- P2-SRS-01 / 02: tenant and incarnation scoping ---------------------------


@pytest.mark.conformance('P2-SRS-01')
@pytest.mark.parametrize(
    'wrong',
    [
        pytest.param(
            dataclasses.replace(
                SCOPE, session=SessionKey('other', 'alice', 's')
            ),
            id='app_name',
        ),
        pytest.param(
            dataclasses.replace(
                SCOPE, session=SessionKey('app', 'mallory', 'session-1')
            ),
            id='user_id',
        ),
        pytest.param(
            dataclasses.replace(
                SCOPE, session=SessionKey('app', 'alice', 'session-2')
            ),
            id='session_id',
        ),
    ],
)
async def test_tenant_mismatch_fails_typed(
    contract: Contract, wrong: SealedRecordScope
) -> None:
  store = contract.store
  ref = await create(store, 'op-1')

  with _raises(SealedResultReason.NOT_FOUND):
    await store.resolve(wrong, ref)
  if isinstance(store, ReferenceTrackingSealedResultStore):
    with _raises(SealedResultReason.NOT_FOUND):
      await store.mark_referenced(wrong, ref)
  # The same error as an unknown id: no oracle for other tenants' records.
  with _raises(SealedResultReason.NOT_FOUND):
    await store.resolve(SCOPE, SealedResultRef('no-such-record'))
  assert await store.resolve(SCOPE, ref) == ENVELOPE


@pytest.mark.conformance('P2-SRS-02')
async def test_incarnation_mismatch_fails_typed(
    contract: Contract,
) -> None:
  store = contract.store
  ref = await create(store, 'op-1')
  next_incarnation = dataclasses.replace(SCOPE, incarnation=2)

  with _raises(SealedResultReason.NOT_FOUND):
    await store.resolve(next_incarnation, ref)
  assert await store.resolve(SCOPE, ref) == ENVELOPE


@pytest.mark.conformance('P2-SRS-03')
@pytest.mark.parametrize(
    'wrong',
    [
        pytest.param(
            dataclasses.replace(SCOPE, event_id='event-2'), id='event_id'
        ),
        pytest.param(
            dataclasses.replace(SCOPE, function_call_id='call-2'),
            id='function_call_id',
        ),
    ],
)
async def test_store_part_event_and_call_mismatch_fails_typed(
    contract: Contract, wrong: SealedRecordScope
) -> None:
  store = contract.store
  ref = await create(store, 'op-1')

  with _raises(SealedResultReason.NOT_FOUND):
    await store.resolve(wrong, ref)
  with _raises(SealedResultReason.NOT_FOUND):
    await store.resolve(SCOPE, SealedResultRef(ref.record_id, 2))


# -- P2-SRS-06: record ids ---------------------------------------------------


@pytest.mark.conformance('P2-SRS-06')
async def test_record_id_random_opaque_unlinked(
    contract: Contract,
) -> None:
  store = contract.store
  refs = [await create(store, f'op-{i}') for i in range(20)]
  ids = [r.record_id for r in refs]

  assert len(set(ids)) == len(ids)  # same scope, every id different
  for i, record_id in enumerate(ids):
    raw = base64.urlsafe_b64decode(record_id + '=' * (-len(record_id) % 4))
    assert len(raw) * 8 >= 128
    # Neither the encoded id nor its bytes carry a scope field. (A random
    # id spells a short field by chance now and then, so each field is
    # looked for where chance cannot reach it: the long ones in the text,
    # the short ones in the raw bytes.)
    for field in ('alice', 'session-1', 'event-1', 'call-1', f'op-{i}'):
      assert field not in record_id
      assert field.encode() not in raw
    assert b'app' not in raw
  assert refs[0].to_wire() == {'recordId': ids[0], 'schemaVersion': 1}


# -- P2-SRS-07: store-private digest -----------------------------------------


@pytest.mark.conformance('P2-SRS-07')
@pytest.mark.parametrize(
    'part,value',
    [
        pytest.param(
            'sealed_result', b'{"content":[{"text":"41"}]}', id='result'
        ),
        pytest.param('refresh_record', b'{"refresh":2}', id='refresh'),
        pytest.param('refresh_record', None, id='refresh-dropped'),
        pytest.param('digest', b'\x00' * 32, id='digest'),
    ],
)
async def test_tampered_bytes_fail_typed_corrupt(
    contract: Contract, part: str, value: Optional[bytes]
) -> None:
  store = contract.store
  ref = await create(store, 'op-1')
  untouched = await create(
      store, 'op-2', scope=dataclasses.replace(SCOPE, function_call_id='c2')
  )
  await contract.tamper(ref.record_id, part, value)

  with _raises(SealedResultReason.CORRUPT):
    await store.resolve(SCOPE, ref)
  # Only the tampered record is refused; nothing is released from it.
  assert (
      await store.resolve(
          dataclasses.replace(SCOPE, function_call_id='c2'), untouched
      )
      == ENVELOPE
  )


@pytest.mark.conformance('P2-SRS-07')
async def test_digest_stays_private(store: SqlSealedResultStore) -> None:
  ref = await create(store, 'op-1')
  row = await stored_bytes(store, ref.record_id)

  assert len(bytes(row.digest)) == 32
  assert set(ref.to_wire()) == {'recordId', 'schemaVersion'}
  assert bytes(row.digest).hex() not in repr(ref)
  assert 'digest' not in {f.name for f in dataclasses.fields(ENVELOPE)}


# -- P2-SRS-09: identical calls without a key --------------------------------


@pytest.mark.conformance('P2-SRS-09')
async def test_identical_calls_get_independent_records(
    contract: Contract,
) -> None:
  store = contract.store
  first = await create(store, 'op-first')
  second = await create(store, 'op-second')  # same tool, args and bytes

  assert first != second
  assert await store.resolve(SCOPE, first) == ENVELOPE
  assert await store.resolve(SCOPE, second) == ENVELOPE
  assert await contract.count() == 2


# -- P2-SRS-11 / 12: immutable create ----------------------------------------


@pytest.mark.conformance('P2-SRS-11')
async def test_same_instance_same_bytes_is_idempotent(
    contract: Contract,
) -> None:
  store = contract.store
  ref = await create(store, 'op-1')

  again = await create(store, 'op-1', expires_at=T0 + 2 * TTL)

  assert again == ref
  assert await contract.count() == 1
  assert await store.resolve(SCOPE, ref) == ENVELOPE


@pytest.mark.conformance('P2-SRS-11')
async def test_concurrent_same_instance_creates_make_one_record(
    make_store: StoreFactory, caplog: pytest.LogCaptureFixture
) -> None:
  first, second = make_store(), make_store()
  await first.open()
  await second.open()
  both_looked = asyncio.Barrier(2)
  first._before_insert = both_looked.wait
  second._before_insert = both_looked.wait

  with caplog.at_level(logging.INFO):
    refs = await asyncio.gather(create(first, 'op-1'), create(second, 'op-1'))

  assert refs[0] == refs[1]
  assert 'A concurrent sealed-result create won' in caplog.text
  assert await row_count(first) == 1
  assert await second.resolve(SCOPE, refs[0]) == ENVELOPE


@pytest.mark.conformance('P2-SRS-12')
async def test_same_instance_different_bytes_conflicts(
    contract: Contract,
) -> None:
  store = contract.store
  ref = await create(store, 'op-1')
  before = await contract.raw(ref.record_id)

  with _raises(SealedResultReason.CONFLICT):
    await create(store, 'op-1', envelope=OTHER_ENVELOPE)
  with _raises(SealedResultReason.CONFLICT):
    await create(
        store, 'op-1', envelope=SealedEnvelope(ENVELOPE.sealed_result, None)
    )
  with _raises(SealedResultReason.CONFLICT):
    await create(store, 'op-1', scope=dataclasses.replace(SCOPE, event_id='e2'))

  assert await contract.raw(ref.record_id) == before
  assert await contract.count() == 1
  assert await store.resolve(SCOPE, ref) == ENVELOPE


@pytest.mark.conformance('P2-SRS-12')
async def test_concurrent_different_bytes_one_wins_unchanged(
    make_store: StoreFactory,
) -> None:
  first, second = make_store(), make_store()
  await first.open()
  await second.open()
  both_looked = asyncio.Barrier(2)
  first._before_insert = both_looked.wait
  second._before_insert = both_looked.wait

  outcomes = await asyncio.gather(
      create(first, 'op-1', envelope=ENVELOPE),
      create(second, 'op-1', envelope=OTHER_ENVELOPE),
      return_exceptions=True,
  )

  (winner,) = [o for o in outcomes if isinstance(o, SealedResultRef)]
  (loser,) = [o for o in outcomes if isinstance(o, BaseException)]
  assert isinstance(loser, SealedResultStoreError)
  assert loser.reason is SealedResultReason.CONFLICT
  winning_bytes = ENVELOPE if outcomes[0] is winner else OTHER_ENVELOPE
  assert await first.resolve(SCOPE, winner) == winning_bytes
  assert await row_count(first) == 1


# -- P2-SRS-13 / 14: crashes around the Event append --------------------------


@pytest.mark.conformance('P2-SRS-13')
async def test_crash_before_append_pending_collected_after_expiry(
    make_store: StoreFactory,
) -> None:
  before_crash = make_store()
  ref = await create(before_crash, 'op-1')
  await before_crash.aclose()  # the process dies before the Event append

  restarted = make_store()
  assert await restarted.state(SCOPE, ref) is SealedRecordState.PENDING
  assert (
      await restarted.collect_garbage(
          now=T0 + TTL - 1, is_referenced=NOTHING_REFERENCED
      )
      == 0
  )
  assert await restarted.resolve(SCOPE, ref) == ENVELOPE

  assert (
      await restarted.collect_garbage(
          now=T0 + TTL, is_referenced=NOTHING_REFERENCED
      )
      == 1
  )
  with _raises(SealedResultReason.NOT_FOUND):
    await restarted.resolve(SCOPE, ref)
  assert await row_count(restarted) == 0


@pytest.mark.conformance('P2-SRS-14')
async def test_committed_record_survives_restart(
    make_store: StoreFactory,
) -> None:
  before = make_store()
  ref = await create(before, 'op-1')
  await before.mark_referenced(SCOPE, ref)  # the Event was appended
  await before.aclose()

  after = make_store()
  assert await after.resolve(SCOPE, ref) == ENVELOPE
  assert await after.state(SCOPE, ref) is SealedRecordState.COMMITTED
  # Committed: GC never collects it, whatever the callback says.
  assert (
      await after.collect_garbage(
          now=T0 + 100 * TTL, is_referenced=NOTHING_REFERENCED
      )
      == 0
  )
  assert await after.resolve(SCOPE, ref) == ENVELOPE


@pytest.mark.conformance('P2-SRS-14')
async def test_crash_between_append_and_mark_keeps_record(
    make_store: StoreFactory,
) -> None:
  before = make_store()
  ref = await create(before, 'op-1')
  await before.aclose()  # appended, but died before mark_referenced

  after = make_store()
  assert (
      await after.collect_garbage(
          now=T0 + 100 * TTL, is_referenced=referenced_by(ref)
      )
      == 0
  )
  assert await after.resolve(SCOPE, ref) == ENVELOPE


@pytest.mark.conformance('P2-SRS-14')
async def test_postgres_kill9_committed_record_survives(
    private_pg_server: PostgresServer,
) -> None:
  url = private_pg_server.create_database()
  before = SqlSealedResultStore(url, clock=FakeClock())
  after = SqlSealedResultStore(url, clock=FakeClock())
  try:
    ref = await create(before, 'op-1')
    await before.mark_referenced(SCOPE, ref)

    private_pg_server.kill()
    private_pg_server.start()

    assert await after.resolve(SCOPE, ref) == ENVELOPE
    assert await after.state(SCOPE, ref) is SealedRecordState.COMMITTED
    assert await before.resolve(SCOPE, ref) == ENVELOPE  # pool reconnects
  finally:
    await before.aclose()
    await after.aclose()
    private_pg_server.drop_database(url.rsplit('/', 1)[1])


# -- P2-SRS-15 / 16: retries around GC ---------------------------------------


@pytest.mark.conformance('P2-SRS-15')
async def test_retry_before_gc_finds_pending_record(
    make_store: StoreFactory,
) -> None:
  first = make_store()
  ref = await create(first, 'op-1')
  await first.aclose()

  retrying = make_store()
  # Even past its expiry: until GC runs, the record is found, not remade.
  again = await create(retrying, 'op-1', expires_at=T0 + 5 * TTL)

  assert again == ref
  assert await retrying.state(SCOPE, ref) is SealedRecordState.PENDING
  assert await row_count(retrying) == 1


@pytest.mark.conformance('P2-SRS-16')
async def test_retry_after_gc_creates_fresh_record(
    contract: Contract,
) -> None:
  store = contract.store
  old = await create(store, 'op-1')
  assert (
      await store.collect_garbage(
          now=T0 + TTL, is_referenced=NOTHING_REFERENCED
      )
      == 1
  )

  fresh = await create(store, 'op-1', expires_at=T0 + 3 * TTL)

  assert fresh.record_id != old.record_id
  assert await store.resolve(SCOPE, fresh) == ENVELOPE
  with _raises(SealedResultReason.NOT_FOUND):
    await store.resolve(SCOPE, old)
  assert await contract.count() == 1


# -- P2-SRS-17: what GC may collect ------------------------------------------


@pytest.mark.conformance('P2-SRS-17')
async def test_gc_deletes_only_expired_records_no_event_references(
    contract: Contract,
) -> None:
  store = contract.store
  now = T0 + TTL
  eligible = await create(store, 'op-eligible')
  not_expired = await create(store, 'op-fresh', expires_at=now + 1)
  by_event = await create(store, 'op-by-event')
  check_raises = await create(store, 'op-check-raises')
  asked: list[str] = []
  is_referenced = event_check(by_event, check_raises, asked)

  assert await store.collect_garbage(now=now, is_referenced=is_referenced) == 1
  with _raises(SealedResultReason.NOT_FOUND):
    await store.resolve(SCOPE, eligible)
  for kept in (not_expired, by_event, check_raises):
    assert await store.resolve(SCOPE, kept) == ENVELOPE
  assert not_expired.record_id not in asked  # Unexpired: never even asked.
  assert await contract.count() == 3


@pytest.mark.conformance('P2-SRS-17')
async def test_gc_deletes_only_expired_unreferenced_pending(
    store: SqlSealedResultStore,
) -> None:
  now = T0 + TTL
  eligible = await create(store, 'op-eligible')
  not_expired = await create(store, 'op-fresh', expires_at=now + 1)
  committed = await create(store, 'op-committed')
  await store.mark_referenced(SCOPE, committed)
  by_event = await create(store, 'op-by-event')
  owned = await create(store, 'op-active')
  check_raises = await create(store, 'op-check-raises')
  active_raises = await create(store, 'op-active-raises')
  asked: list[str] = []
  is_referenced = event_check(by_event, check_raises, asked)

  async def is_active_operation(instance: str) -> bool:
    if instance == 'op-active-raises':
      raise RuntimeError('registry unavailable')
    return instance == 'op-active'

  deleted = await store.collect_garbage(
      now=now,
      is_referenced=is_referenced,
      is_active_operation=is_active_operation,
  )

  assert deleted == 1
  with _raises(SealedResultReason.NOT_FOUND):
    await store.resolve(SCOPE, eligible)
  for kept in (
      not_expired,
      committed,
      by_event,
      owned,
      check_raises,
      active_raises,
  ):
    assert await store.resolve(SCOPE, kept) == ENVELOPE
  # Committed and unexpired records are never even asked about; the
  # registry is consulted before the Event.
  assert committed.record_id not in asked
  assert not_expired.record_id not in asked
  assert owned.record_id not in asked


@pytest.mark.conformance('P2-SRS-17')
async def test_mark_referenced_during_gc_wins(
    store: SqlSealedResultStore,
) -> None:
  ref = await create(store, 'op-1')

  async def appended_meanwhile(
      scope: SealedRecordScope, candidate: SealedResultRef
  ) -> bool:
    await store.mark_referenced(scope, candidate)  # the append lands now
    return False  # and the check read the Session just before it

  assert (
      await store.collect_garbage(
          now=T0 + TTL, is_referenced=appended_meanwhile
      )
      == 0
  )
  assert await store.state(SCOPE, ref) is SealedRecordState.COMMITTED
  await store.mark_referenced(SCOPE, ref)  # idempotent


# -- P2-SRS-21: deletion cascade ---------------------------------------------


@pytest.mark.conformance('P2-SRS-21')
async def test_cascade_removes_every_record_of_the_incarnation(
    contract: Contract,
) -> None:
  store = contract.store
  doomed = [
      await create(store, 'op-a'),
      await create(
          store, 'op-b', scope=dataclasses.replace(SCOPE, event_id='event-2')
      ),
  ]
  if isinstance(store, ReferenceTrackingSealedResultStore):
    await store.mark_referenced(SCOPE, doomed[0])  # Committed goes too.
  next_incarnation = dataclasses.replace(SCOPE, incarnation=2)
  kept_next = await create(store, 'op-c', scope=next_incarnation)
  other_session = dataclasses.replace(
      SCOPE, session=SessionKey('app', 'alice', 'session-2')
  )
  kept_other = await create(store, 'op-d', scope=other_session)

  assert await store.delete_incarnation(SESSION, 1) == 2
  assert await store.delete_incarnation(SESSION, 1) == 0  # idempotent

  with _raises(SealedResultReason.NOT_FOUND):
    await store.resolve(SCOPE, doomed[0])
  with _raises(SealedResultReason.NOT_FOUND):
    await store.resolve(
        dataclasses.replace(SCOPE, event_id='event-2'), doomed[1]
    )
  assert await store.resolve(next_incarnation, kept_next) == ENVELOPE
  assert await store.resolve(other_session, kept_other) == ENVELOPE
  assert await contract.count() == 2


# -- P2-SRS-23: namespace mismatch -------------------------------------------


@pytest.mark.conformance('P2-SRS-23')
async def test_swapped_store_with_other_namespace_or_revision_rejected(
    make_store: StoreFactory, new_db_url: Callable[[], str]
) -> None:
  bound = make_store(namespace='prod/sealed')
  await bound.open()
  await create(bound, 'op-1')
  validate_sealed_store(bound, 'prod/sealed', FORMAT_REVISION)

  class NextFormatStore(SqlSealedResultStore):
    revision = 'sql-sealed-v2'

  swapped_namespace = make_store(new_db_url(), namespace='prod/sealed-new')
  await swapped_namespace.open()
  with pytest.raises(SealedResultStoreIncompatibleError, match='namespace'):
    validate_sealed_store(swapped_namespace, 'prod/sealed', FORMAT_REVISION)

  swapped_revision = NextFormatStore(new_db_url(), namespace='prod/sealed')
  try:
    await swapped_revision.open()
    with pytest.raises(SealedResultStoreIncompatibleError, match='revision'):
      validate_sealed_store(swapped_revision, 'prod/sealed', FORMAT_REVISION)
  finally:
    await swapped_revision.aclose()

  # The database itself is claimed: reopening it under another namespace
  # or revision fails before any record is read.
  with pytest.raises(SealedResultStoreIncompatibleError, match='namespace'):
    await make_store(namespace='prod/other').open()
  same_db_next_format = NextFormatStore(bound.engine, namespace='prod/sealed')
  with pytest.raises(SealedResultStoreIncompatibleError, match='revision'):
    await same_db_next_format.open()


@pytest.mark.conformance('P2-SRS-23')
async def test_unopened_store_never_validates(
    make_store: StoreFactory,
) -> None:
  unopened = make_store()

  with pytest.raises(SealedResultStoreIncompatibleError) as caught:
    validate_sealed_store(unopened, DEFAULT_NAMESPACE, FORMAT_REVISION)
  assert caught.value.missing == REQUIRED_SEALED_STORE_CAPABILITIES
  await unopened.open()
  validate_sealed_store(unopened, DEFAULT_NAMESPACE, FORMAT_REVISION)


# -- P2-SRS-24..28: persistence-compatibility validation ---------------------


class DeficientStore:
  """A test double of the contract declaring all but some capabilities."""

  revision = 'r1'

  def __init__(
      self,
      lacking: frozenset[SealedStoreCapability] = frozenset(),
      namespace: Any = 'ns',
  ) -> None:
    self.persistence_capabilities = REQUIRED_SEALED_STORE_CAPABILITIES - lacking
    self._namespace = namespace

  @property
  def namespace(self) -> Any:
    return self._namespace

  async def create(self, scope: Any, **kwargs: Any) -> SealedResultRef:
    raise NotImplementedError

  async def resolve(self, scope: Any, ref: Any) -> SealedEnvelope:
    raise NotImplementedError

  async def collect_garbage(self, **kwargs: Any) -> int:
    raise NotImplementedError

  async def delete_incarnation(self, session: Any, incarnation: int) -> int:
    raise NotImplementedError


class DriftingNamespaceStore(DeficientStore):
  """Declares stability but reports a new namespace on every read."""

  def __init__(self) -> None:
    super().__init__()
    self._reads = 0

  @property
  def namespace(self) -> Any:
    self._reads += 1
    return 'ns' if self._reads == 1 else f'ns-{self._reads}'


@pytest.mark.conformance('P2-SRS-24', 'P2-SRS-25', 'P2-SRS-26', 'P2-SRS-27')
def test_complete_double_validates() -> None:
  validate_sealed_store(DeficientStore(), 'ns', 'r1')


@pytest.mark.conformance(
    'P2-SRS-24', 'P2-SRS-25', 'P2-SRS-26', 'P2-SRS-27', 'P2-SRS-28'
)
@pytest.mark.parametrize(
    'capability',
    [
        pytest.param(
            SealedStoreCapability.DURABLE_IMMUTABLE_CREATE, id='P2-SRS-24'
        ),
        pytest.param(
            SealedStoreCapability.TENANT_SCOPED_LOOKUP, id='P2-SRS-25'
        ),
        pytest.param(SealedStoreCapability.DIGEST_VERIFICATION, id='P2-SRS-26'),
        pytest.param(
            SealedStoreCapability.RETENTION_AND_DELETION, id='P2-SRS-27'
        ),
        pytest.param(
            SealedStoreCapability.STABLE_NAMESPACE_REVISION, id='P2-SRS-28'
        ),
    ],
)
def test_backend_lacking_capability_rejected(
    capability: SealedStoreCapability,
) -> None:
  double = DeficientStore(lacking=frozenset({capability}))
  assert isinstance(double, SealedResultStore)

  with pytest.raises(SealedResultStoreIncompatibleError) as caught:
    validate_sealed_store(double, 'ns', 'r1')

  assert caught.value.missing == {capability}
  assert capability.value in str(caught.value)


@pytest.mark.conformance('P2-SRS-28')
@pytest.mark.parametrize(
    'double,reason',
    [
        pytest.param(
            DeficientStore(namespace=''), 'namespace is empty', id='empty'
        ),
        pytest.param(
            DeficientStore(namespace=None), 'namespace is empty', id='missing'
        ),
        pytest.param(
            DriftingNamespaceStore(), 'namespace is not stable', id='drifting'
        ),
    ],
)
def test_backend_without_stable_namespace_rejected(
    double: DeficientStore, reason: str
) -> None:
  with pytest.raises(SealedResultStoreIncompatibleError, match=reason):
    validate_sealed_store(double, 'ns', 'r1')


@pytest.mark.conformance('P2-SRS-24')
def test_in_memory_dev_store_is_not_durable() -> None:
  dev = LocalDevSealedResultStore()
  with pytest.raises(SealedResultStoreIncompatibleError) as caught:
    validate_sealed_store(dev, dev.namespace, dev.revision)
  assert caught.value.missing == REQUIRED_SEALED_STORE_CAPABILITIES


def test_validation_rejects_a_non_store() -> None:
  with pytest.raises(
      SealedResultStoreIncompatibleError, match='does not implement'
  ):
    validate_sealed_store(object(), 'ns', 'r1')
