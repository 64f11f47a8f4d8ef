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

"""Every export audit store under one contract suite, and the SQL store's own.

Store-level proofs of P5-CTR-06 and P5-EAUD-01, 03, 04 and 05. The
contract cases (record keys, idempotency per operation instance and
status, oldest-first order, retention, incarnation deletion) run on the
local-development store and on `SqlExportAuditStore` over a SQLite file
and a throw-away PostgreSQL; the SQL store's own cases (schema redaction,
the status constraint, durability, a store that is down) run on both SQL
backends. The cascade case deletes Sessions through the first-party
Session API of a profile, the real lifecycle path. Time is explicit
(`recorded_at` and `now`), so nothing sleeps.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Iterator
import dataclasses
import datetime
from pathlib import Path
import sqlite3
from typing import Any
from typing import Optional

from google.adk.mcp_apps.contracts.errors import ContractError
from google.adk.mcp_apps.contracts.export_audit_store import ExportAuditRecord
from google.adk.mcp_apps.contracts.export_audit_store import ExportAuditStatus
from google.adk.mcp_apps.contracts.export_audit_store import ExportAuditStore
from google.adk.mcp_apps.contracts.local_dev import LocalDevExportAuditStore
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.errors import McpAppsError
from google.adk.mcp_apps.operations.sessions import FirstPartySessions
from google.adk.mcp_apps.stores.sql_export_audit_store import DEFAULT_NAMESPACE
from google.adk.mcp_apps.stores.sql_export_audit_store import FORMAT_REVISION
from google.adk.mcp_apps.stores.sql_export_audit_store import SqlExportAuditStore
from google.adk.mcp_apps.stores.sql_export_audit_store import TABLE_NAME
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from postgres_server import PostgresServer
import pytest
from sealing_support import close_profile
from sealing_support import sql_profile
from sqlalchemy import inspect
from sqlalchemy import text
from sqlalchemy.pool import NullPool

pytestmark = pytest.mark.integration

T0 = 1_788_000_000.0
"""A fixed epoch time; records carry it, `purge_expired` takes `now`."""
RETENTION = 600.0

SESSION = SessionKey('app', 'alice', 'session-1')
OTHER_SESSION = SessionKey('app', 'bob', 'session-1')

# What an export handled; the audit must keep none of it.
RESULT_CONTENT = '{"content":[{"text":"the sealed answer 42"}]}'
BEARER = 'Bearer sk-live-0123456789abcdef'


def record(
    instance: str = 'op-1',
    status: ExportAuditStatus = ExportAuditStatus.AUTHORIZED,
    *,
    session: SessionKey = SESSION,
    incarnation: int = 1,
    at: float = T0,
    reason: str = '',
    principal: str = 'principal:alice',
) -> ExportAuditRecord:
  return ExportAuditRecord(
      operation_instance_id=instance,
      principal_id=principal,
      session=session,
      incarnation=incarnation,
      event_id=f'event-{instance}',
      function_call_id=f'call-{instance}',
      record_id=f'sealed-{instance}',
      status=status,
      recorded_at=at,
      reason=reason,
  )


class FakeClock:
  """A fixed UTC clock for the store's claim stamp."""

  def __call__(self) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(T0, datetime.timezone.utc)


StoreFactory = Callable[..., ExportAuditStore]


@dataclasses.dataclass
class Backend:
  """One implementation under the suite: makes stores on one database.

  Attributes:
    name: `dev`, `sqlite` or `postgresql`.
    make: Builds a store (`retention_seconds=` optional); SQL stores share
      the test's database, so a second one is a restart or another worker.
  """

  name: str
  make: StoreFactory


@pytest.fixture(params=['dev', 'sqlite', 'postgresql'])
async def backend(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Backend]:
  """A fresh database (or none, for the dev store) per test."""
  name = str(request.param)
  made: list[SqlExportAuditStore] = []
  server: Optional[PostgresServer] = None
  url = f'sqlite+aiosqlite:///{tmp_path / "audit.db"}'
  if name == 'postgresql':
    server = request.getfixturevalue('pg_server')
    url = server.create_database()

  def make(**kwargs: Any) -> ExportAuditStore:
    kwargs.setdefault('retention_seconds', RETENTION)
    if name == 'dev':
      return LocalDevExportAuditStore(**kwargs)
    kwargs.setdefault('clock', FakeClock())
    store = SqlExportAuditStore(url, **kwargs)
    made.append(store)
    return store

  try:
    yield Backend(name, make)
  finally:
    for store in made:
      await store.aclose()
    if server is not None:
      server.drop_database(url.rsplit('/', 1)[1])


@pytest.fixture(params=['sqlite', 'postgresql'])
def sql_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
  """A fresh SQL database for the SQL store's own cases."""
  if request.param == 'sqlite':
    yield f'sqlite+aiosqlite:///{tmp_path / "audit.db"}'
    return
  server: PostgresServer = request.getfixturevalue('pg_server')
  url = server.create_database()
  try:
    yield url
  finally:
    server.drop_database(url.rsplit('/', 1)[1])


@pytest.fixture
async def sql_store(sql_url: str) -> AsyncIterator[SqlExportAuditStore]:
  store = SqlExportAuditStore(
      sql_url, retention_seconds=RETENTION, clock=FakeClock()
  )
  await store.open()
  try:
    yield store
  finally:
    await store.aclose()


async def raw_rows(store: SqlExportAuditStore) -> list[dict[str, Any]]:
  async with store.engine.connect() as conn:
    result = await conn.execute(text(f'SELECT * FROM {TABLE_NAME}'))
    return [dict(row._mapping) for row in result]  # pylint: disable=protected-access


# -- the contract, on every implementation -----------------------------------


@pytest.mark.conformance('P5-CTR-06')
async def test_store_satisfies_the_contract_protocol(backend: Backend) -> None:
  store = backend.make()

  assert isinstance(store, ExportAuditStore)
  assert store.namespace.strip()
  assert store.revision.strip()
  assert {s.value for s in ExportAuditStatus} == {
      'authorized',
      'released',
      'denied',
      'failed',
  }


@pytest.mark.conformance('P5-CTR-06', 'P5-EAUD-01')
async def test_records_keep_every_key_and_read_back_oldest_first(
    backend: Backend,
) -> None:
  store = backend.make()
  authorized = record('op-1', ExportAuditStatus.AUTHORIZED, at=T0)
  released = record('op-1', ExportAuditStatus.RELEASED, at=T0)
  denied = record('op-2', ExportAuditStatus.DENIED, reason='principal_revoked')

  await store.append(authorized)
  await store.append(denied)
  await store.append(released)

  # Equal stamps still read back in append order.
  assert await store.records('op-1') == (authorized, released)
  assert await store.records('op-2') == (denied,)
  assert await store.records('op-unknown') == ()


@pytest.mark.conformance('P5-CTR-06', 'P5-EAUD-01')
async def test_repeating_a_status_of_an_instance_is_a_no_op(
    backend: Backend,
) -> None:
  store = backend.make()
  first = record('op-1', ExportAuditStatus.AUTHORIZED, at=T0)
  await store.append(first)

  # A retry of the same operation instance, later, by a restarted worker.
  await store.append(dataclasses.replace(first, recorded_at=T0 + 5))
  await backend.make().append(dataclasses.replace(first, recorded_at=T0 + 9))
  await store.append(record('op-1', ExportAuditStatus.FAILED, at=T0 + 10))
  await store.append(record('op-1', ExportAuditStatus.FAILED, at=T0 + 11))

  statuses = [(r.status, r.recorded_at) for r in await store.records('op-1')]
  assert statuses == [
      (ExportAuditStatus.AUTHORIZED, T0),
      (ExportAuditStatus.FAILED, T0 + 10),
  ]


@pytest.mark.conformance('P5-CTR-06', 'P5-EAUD-04')
async def test_records_are_kept_for_the_retention_then_purged(
    backend: Backend,
) -> None:
  store = backend.make(retention_seconds=RETENTION)
  await store.append(record('old', at=T0))
  await store.append(record('new', at=T0 + 100))

  assert await store.purge_expired(now=T0 + RETENTION - 1) == 0
  assert len(await store.records('old')) == 1

  assert await store.purge_expired(now=T0 + RETENTION) == 1
  assert await store.records('old') == ()
  assert len(await store.records('new')) == 1

  assert await store.purge_expired(now=T0 + RETENTION) == 0
  assert await store.purge_expired(now=T0 + 100 + RETENTION) == 1
  assert await store.records('new') == ()


@pytest.mark.conformance('P5-CTR-06', 'P5-EAUD-05')
async def test_deleting_an_incarnation_removes_only_its_records(
    backend: Backend,
) -> None:
  store = backend.make()
  await store.append(record('op-1', incarnation=1))
  await store.append(record('op-1', ExportAuditStatus.RELEASED, incarnation=1))
  await store.append(record('op-2', incarnation=2))
  await store.append(record('op-3', session=OTHER_SESSION, incarnation=1))

  assert await store.delete_incarnation(SESSION, 1) == 2
  assert await store.delete_incarnation(SESSION, 1) == 0  # idempotent

  assert await store.records('op-1') == ()
  assert len(await store.records('op-2')) == 1
  assert len(await store.records('op-3')) == 1


# -- the SQL store's own cases -----------------------------------------------


@pytest.mark.conformance('P5-CTR-06')
async def test_sql_store_names_its_namespace_and_revision(
    sql_url: str,
) -> None:
  default = SqlExportAuditStore(sql_url)
  named = SqlExportAuditStore(sql_url, namespace='prod/export-audit')
  try:
    assert default.namespace == DEFAULT_NAMESPACE
    assert default.revision == FORMAT_REVISION
    await default.open()

    # The database is claimed for the first namespace; another is refused.
    with pytest.raises(ContractError, match='namespace'):
      await named.append(record())
  finally:
    await default.aclose()
    await named.aclose()
  assert issubclass(ContractError, McpAppsError)


def test_sql_store_refuses_in_memory_sqlite_and_bad_retention(
    tmp_path: Path,
) -> None:
  with pytest.raises(ValueError, match='in-memory'):
    SqlExportAuditStore('sqlite+aiosqlite:///:memory:')
  url = f'sqlite+aiosqlite:///{tmp_path / "a.db"}'
  for retention in (0, -1.0, float('inf'), float('nan')):
    with pytest.raises(ValueError):
      SqlExportAuditStore(url, retention_seconds=retention)


@pytest.mark.conformance('P5-CTR-06', 'P5-EAUD-03')
async def test_sql_schema_has_no_column_for_content_or_secrets(
    sql_store: SqlExportAuditStore,
) -> None:
  await sql_store.append(
      record('op-1', ExportAuditStatus.DENIED, reason='binding_key_expired')
  )

  async with sql_store.engine.connect() as conn:
    columns = await conn.run_sync(
        lambda sync: {
            c['name']: c['type'] for c in inspect(sync).get_columns(TABLE_NAME)
        }
    )
  assert set(columns) == {
      'seq',
      'operation_instance_id',
      'status',
      'principal_id',
      'app_name',
      'user_id',
      'session_id',
      'incarnation',
      'event_id',
      'function_call_id',
      'record_id',
      'reason',
      'recorded_at',
  }
  # Identifiers and short codes only: nothing binary or unbounded.
  for name, column_type in columns.items():
    python_type = column_type.python_type
    assert python_type in (str, int, float), name
    if python_type is str:
      assert column_type.length is not None and column_type.length <= 255
  assert (await raw_rows(sql_store))[0] == {
      'seq': 1,
      'operation_instance_id': 'op-1',
      'status': 'denied',
      'principal_id': 'principal:alice',
      'app_name': 'app',
      'user_id': 'alice',
      'session_id': 'session-1',
      'incarnation': 1,
      'event_id': 'event-op-1',
      'function_call_id': 'call-op-1',
      'record_id': 'sealed-op-1',
      'reason': 'binding_key_expired',
      'recorded_at': T0,
  }


@pytest.mark.conformance('P5-CTR-06', 'P5-EAUD-03')
@pytest.mark.parametrize('reason', [RESULT_CONTENT, BEARER, 'Denied: a b'])
async def test_sql_store_refuses_a_reason_that_is_not_a_code(
    sql_store: SqlExportAuditStore, reason: str
) -> None:
  with pytest.raises(ValueError, match='reason'):
    await sql_store.append(
        record(status=ExportAuditStatus.FAILED, reason=reason)
    )

  assert await raw_rows(sql_store) == []


@pytest.mark.conformance('P5-CTR-06')
async def test_sql_schema_refuses_a_status_outside_the_vocabulary(
    sql_store: SqlExportAuditStore,
) -> None:
  await sql_store.append(record())
  row = (await raw_rows(sql_store))[0]
  row.pop('seq')
  row['status'] = 'delivered'

  with pytest.raises(Exception, match='(?i)check'):
    async with sql_store.engine.begin() as conn:
      await conn.execute(
          text(
              f'INSERT INTO {TABLE_NAME} ({", ".join(row)})'
              f' VALUES ({", ".join(":" + k for k in row)})'
          ),
          row,
      )

  assert [r['status'] for r in await raw_rows(sql_store)] == ['authorized']


@pytest.mark.conformance('P5-CTR-06', 'P5-EAUD-01')
async def test_sql_records_survive_a_restart(sql_url: str) -> None:
  before = SqlExportAuditStore(sql_url, clock=FakeClock())
  after = SqlExportAuditStore(sql_url, clock=FakeClock())
  try:
    await before.append(record('op-1'))
    await before.append(record('op-1', ExportAuditStatus.RELEASED))
    await before.aclose()

    assert [r.status for r in await after.records('op-1')] == [
        ExportAuditStatus.AUTHORIZED,
        ExportAuditStatus.RELEASED,
    ]
  finally:
    await after.aclose()


# -- a store that is down: append raises ContractError (P5-EXP-28's base) ---


@pytest.mark.conformance('P5-CTR-06')
async def test_sqlite_append_raises_contract_error_while_the_file_is_locked(
    tmp_path: Path,
) -> None:
  path = tmp_path / 'audit.db'
  store = SqlExportAuditStore(
      f'sqlite+aiosqlite:///{path}',
      engine_kwargs={'connect_args': {'timeout': 0}},
  )
  await store.open()
  holder = sqlite3.connect(path, timeout=0, isolation_level=None)
  try:
    holder.execute('BEGIN EXCLUSIVE')
    with pytest.raises(ContractError, match='append'):
      await store.append(record('op-1'))
    holder.execute('ROLLBACK')

    await store.append(record('op-2'))
    assert await store.records('op-1') == ()
    assert len(await store.records('op-2')) == 1
  finally:
    holder.close()
    await store.aclose()


@pytest.mark.conformance('P5-CTR-06')
async def test_sqlite_append_raises_contract_error_when_the_file_is_gone(
    tmp_path: Path,
) -> None:
  directory = tmp_path / 'audit'
  directory.mkdir()
  store = SqlExportAuditStore(
      f'sqlite+aiosqlite:///{directory / "audit.db"}',
      engine_kwargs={'poolclass': NullPool},
  )
  try:
    await store.open()
    (directory / 'audit.db').unlink()
    directory.rmdir()

    with pytest.raises(ContractError, match='append'):
      await store.append(record('op-1'))
  finally:
    await store.aclose()


@pytest.mark.conformance('P5-CTR-06')
async def test_postgres_append_raises_contract_error_while_the_server_is_down(
    private_pg_server: PostgresServer,
) -> None:
  url = private_pg_server.create_database()
  store = SqlExportAuditStore(url)
  unopened = SqlExportAuditStore(url)
  try:
    await store.append(record('op-1'))
    private_pg_server.stop()

    with pytest.raises(ContractError, match='append'):
      await store.append(record('op-2'))
    with pytest.raises(ContractError, match='unavailable'):
      await unopened.append(record('op-2'))

    private_pg_server.start()
    assert [r.operation_instance_id for r in await store.records('op-1')] == [
        'op-1'
    ]
    assert await store.records('op-2') == ()
  finally:
    await store.aclose()
    await unopened.aclose()


# -- P5-EAUD-05 through the real Session deletion path -----------------------


@pytest.mark.conformance('P5-EAUD-05')
@pytest.mark.parametrize('audit_kind', ['dev', 'sqlite', 'postgresql'])
async def test_session_deletion_cascades_to_its_audit_records_only(
    audit_kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
  server: Optional[PostgresServer] = None
  if audit_kind == 'postgresql':
    server = request.getfixturevalue('pg_server')
    url = server.create_database()
    service: Any = DatabaseSessionService(url)
  else:
    url = f'sqlite+aiosqlite:///{tmp_path / "stores.db"}'
    service = SqliteSessionService(str(tmp_path / 'sessions.db'))
  audit: ExportAuditStore = (
      LocalDevExportAuditStore()
      if audit_kind == 'dev'
      else SqlExportAuditStore(url)
  )
  profile = await sql_profile(url, export_audit_store=audit)
  app, user, sid = SESSION.app_name, SESSION.user_id, SESSION.session_id
  try:
    if hasattr(service, 'prepare_tables'):
      await service.prepare_tables()
    api = FirstPartySessions.for_profile(profile, service)
    await api.create(app, user, session_id=sid)
    await api.create(
        OTHER_SESSION.app_name,
        OTHER_SESSION.user_id,
        session_id=OTHER_SESSION.session_id,
    )
    first = await api.manager.admit(SESSION)
    await audit.append(record('op-1', incarnation=first))
    await audit.append(
        record('op-1', ExportAuditStatus.RELEASED, incarnation=first)
    )
    await audit.append(record('op-other', session=OTHER_SESSION))

    await api.delete(app, user, sid)

    assert await audit.records('op-1') == ()
    assert len(await audit.records('op-other')) == 1

    # The recreated Session's audit goes with its own incarnation only.
    await api.create(app, user, session_id=sid)
    second = await api.manager.admit(SESSION)
    assert second > first
    await audit.append(record('op-2', incarnation=second))
    await audit.append(record('op-stale', incarnation=first))

    await api.delete(app, user, sid)

    assert await audit.records('op-2') == ()
    assert len(await audit.records('op-stale')) == 1
    assert len(await audit.records('op-other')) == 1
  finally:
    await close_profile(profile)
    if isinstance(audit, SqlExportAuditStore):
      await audit.aclose()
    await service.close()
    if server is not None:
      server.drop_database(url.rsplit('/', 1)[1])
