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


"""The audit observer phase and BQAA's single-phase routing.

Tests drive `append_audit_event` with real session services (in-memory,
SQLite), real plugins in a real `PluginManager`, and the real BigQuery
analytics plugin over the stand-in BigQuery. The crash cases run the
pipeline in a subprocess that SIGKILLs itself at a named point (a plugin
in the observer phase), on SQLite and on PostgreSQL, then restart with fresh objects and read the
durable session Event and the stand-in's rows (a JSON-lines file synced
on every write) directly.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import json
import logging
import os
from pathlib import Path
import signal
import subprocess
import sys
from typing import Any
from typing import Optional

from audit_pipeline_support import analytics_plugin
from audit_pipeline_support import AnalyticsTable
from audit_pipeline_support import APP
from audit_pipeline_support import audit_events
from audit_pipeline_support import delta_rows
from audit_pipeline_support import Harness
from audit_pipeline_support import JsonlRows
from audit_pipeline_support import make_service
from audit_pipeline_support import open_batch
from audit_pipeline_support import open_harness
from audit_pipeline_support import operation_record
from audit_pipeline_support import ProbePlugin
from audit_pipeline_support import USER
from google.adk.apps.app import App
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.mcp_apps.audit.pipeline import append_audit_event
from google.adk.mcp_apps.audit.pipeline import AuditAppendOutcome
from google.adk.mcp_apps.audit.pipeline import AuditEventSnapshot
from google.adk.mcp_apps.audit.pipeline import AuditPath
from google.adk.mcp_apps.batch.ledger import EventBatchEffects
from google.adk.mcp_apps.event_policy.provenance import admitted
from google.adk.mcp_apps.event_policy.provenance import APP_OPERATION
from google.adk.mcp_apps.facades.audit_context import ReadonlyAuditContext
from google.adk.mcp_apps.facades.errors import FacadeError
from google.adk.mcp_apps.facades.errors import FacadeErrorReason
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.plugins.bigquery_agent_analytics_plugin import BigQueryAgentAnalyticsPlugin
from google.adk.plugins.plugin_manager import PluginManager
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.workflow import START
from google.adk.workflow import Workflow
from google.genai import types
import pydantic
import pytest

pytestmark = pytest.mark.integration


@pytest.fixture(params=['in_memory', 'sqlite', 'database_pg'])
async def harness(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Harness]:
  url = None
  if request.param == 'database_pg':
    url = request.getfixturevalue('pg_server').create_database()
  opened = await open_harness(request.param, tmp_path, url=url)
  yield opened
  await opened.close()


@pytest.fixture
def table() -> AnalyticsTable:
  return AnalyticsTable()


@pytest.fixture
async def bq(
    table: AnalyticsTable, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[BigQueryAgentAnalyticsPlugin]:
  plugin = analytics_plugin(table, monkeypatch)
  yield plugin
  await plugin.close()


async def run(
    harness: Harness,
    *plugins: BasePlugin,
    effects: Optional[EventBatchEffects] = None,
    event: Optional[Event] = None,
) -> AuditAppendOutcome:
  return await append_audit_event(
      session_service=harness.service,
      session=harness.session,
      event=event or operation_record(),
      effects=effects or open_batch(harness, {'cart': 2}),
      plugin_manager=PluginManager(plugins=list(plugins)),
  )


async def node_turn(
    service: BaseSessionService,
    session_id: str,
    plugins: list[BasePlugin],
    event: Event,
) -> None:
  """A Runner turn of a workflow whose one node yields `event`."""

  async def record(node_input: Any) -> AsyncIterator[Event]:
    del node_input
    yield event

  app = App(
      name=APP,
      root_agent=Workflow(name='recorder', edges=[(START, record)]),
      plugins=plugins,
  )
  runner = Runner(app=app, session_service=service)
  async for _ in runner.run_async(
      user_id=USER,
      session_id=session_id,
      new_message=types.UserContent(parts=[types.Part(text='go')]),
  ):
    pass


@pytest.mark.conformance('P3-OBS-01', 'P3-OBS-13')
async def test_observers_run_only_after_an_audit_append(
    harness: Harness,
) -> None:
  log: list[tuple[str, str]] = []
  probe = ProbePlugin('probe', log)
  await node_turn(
      harness.service,
      harness.session.id,
      [probe],
      Event(
          author='recorder',
          content=types.ModelContent('a normal event'),
          actions=EventActions(state_delta={'normal': 1}),
      ),
  )
  assert ('probe', 'event') in log
  assert ('probe', 'observe') not in log
  stored_normal = await harness.stored()
  assert stored_normal and audit_events(stored_normal) == []

  harness.session = await harness.reload()
  log.clear()
  outcome = await run(harness, probe)

  assert log == [('probe', 'event'), ('probe', 'observe')]
  (stored,) = audit_events(await harness.stored())
  ((context, seen),) = probe.seen
  assert seen.id == stored.id == outcome.event.id
  assert isinstance(context, ReadonlyAuditContext)


@pytest.mark.conformance('P3-OBS-02')
async def test_observer_cannot_replace_or_change_the_record(
    harness: Harness,
) -> None:
  log: list[tuple[str, str]] = []
  attempts: list[str] = []

  async def replace(context: Any, event: Event) -> Event:
    try:
      event.content = types.Content(parts=[types.Part(text='rewritten')])
    except pydantic.ValidationError:
      attempts.append('set refused')
    event.content.parts[0].text = 'nested rewrite'
    return Event(author='x', content=types.ModelContent('replacement'))

  first = ProbePlugin('first', log, on_audit=replace)
  second = ProbePlugin('second', log)
  outcome = await run(harness, first, second)

  assert attempts == ['set refused']
  assert outcome.path is AuditPath.PIPELINE and outcome.error is None
  (stored,) = audit_events(await harness.stored())
  assert stored.content.parts[0].text == 'the app called buy'
  assert outcome.event.content.parts[0].text == 'the app called buy'
  ((_, seen),) = second.seen
  assert seen.content.parts[0].text == 'the app called buy'


@pytest.mark.conformance('P3-OBS-03')
async def test_readonly_audit_context_gives_no_mutation_access(
    harness: Harness,
) -> None:
  log: list[tuple[str, str]] = []
  refused: list[Any] = []

  async def probe(context: Any, event: Event) -> None:
    for name in ('session', 'actions', 'state_delta', 'session_service'):
      try:
        getattr(context, name)
      except FacadeError as e:
        refused.append(e.reason)
    for attempt in (
        lambda: setattr(context, 'state', {}),
        lambda: context.state.__setitem__('cart', 0),
        lambda: context.state['cart'].__setitem__('items', []),
    ):
      try:
        attempt()
      except FacadeError as e:
        refused.append(e.reason)

  plugin = ProbePlugin('p', log, on_audit=probe)
  cart = {'items': ['A1', 'B2']}
  await run(harness, plugin, effects=open_batch(harness, {'cart': cart}))

  assert (
      refused
      == [FacadeErrorReason.UNAVAILABLE] * 4 + [FacadeErrorReason.READ_ONLY] * 3
  )
  ((context, _),) = plugin.seen
  assert context.state['cart'] == {'items': ['A1', 'B2']}
  assert context.refused == (
      'session',
      'actions',
      'state_delta',
      'session_service',
  )
  assert (await harness.reload()).state['cart'] == cart


@pytest.mark.conformance('P3-OBS-04', 'P3-OBS-05')
async def test_observer_input_is_an_independent_immutable_snapshot(
    harness: Harness,
) -> None:
  log: list[tuple[str, str]] = []

  async def tamper(context: Any, event: Event) -> None:
    event.actions.state_delta['cart']['items'].append('from-observer')

  first = ProbePlugin('first', log, on_audit=tamper)
  second = ProbePlugin('second', log)
  effects = open_batch(harness, {'cart': {'items': ['A1', 'B2']}})
  outcome = await run(harness, first, second, effects=effects)

  ((_, seen),) = second.seen
  live = harness.session.events[-1]
  assert isinstance(seen, AuditEventSnapshot)
  assert seen is not live and seen is not outcome.event
  with pytest.raises(pydantic.ValidationError):
    seen.author = 'someone'
  # Nested mutation after append, on the live objects, reaches no snapshot.
  live.content.parts[0].text = 'tampered'
  live.actions.state_delta['cart']['items'].append('from-session')
  outcome.event.actions.state_delta['cart']['items'].append('from-outcome')
  assert seen.content.parts[0].text == 'the app called buy'
  assert seen.actions.state_delta == {'cart': {'items': ['A1', 'B2']}}
  (stored,) = audit_events(await harness.stored())
  assert stored.actions.state_delta['cart']['items'][:2] == ['A1', 'B2']
  assert 'from-observer' not in stored.actions.state_delta['cart']['items']


@pytest.mark.conformance('P3-OBS-06')
async def test_observers_run_serially_in_registration_order(
    harness: Harness,
) -> None:
  log: list[tuple[str, str]] = []

  def observer(name: str) -> ProbePlugin:
    async def body(context: Any, event: Event) -> None:
      log.append((name, 'start'))
      for _ in range(3):
        await asyncio.sleep(0)  # yield: a concurrent peer would interleave
      log.append((name, 'end'))

    return ProbePlugin(name, log, on_audit=body)

  await run(harness, observer('c'), observer('a'), observer('b'))

  observed = [entry for entry in log if entry[1] != 'event']
  assert observed == [
      (name, phase)
      for name in ('c', 'a', 'b')
      for phase in ('observe', 'start', 'end')
  ]


@pytest.mark.conformance('P3-OBS-07')
async def test_a_raising_observer_is_isolated(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
  log: list[tuple[str, str]] = []

  async def boom(context: Any, event: Event) -> None:
    raise RuntimeError('observer failed')

  plugins = [
      ProbePlugin('one', log),
      ProbePlugin('two', log, on_audit=boom),
      ProbePlugin('three', log),
  ]
  with caplog.at_level(logging.ERROR):
    outcome = await run(harness, *plugins)

  assert [n for n, phase in log if phase == 'observe'] == [
      'one',
      'two',
      'three',
  ]
  assert outcome.path is AuditPath.PIPELINE and outcome.error is None
  assert any(
      "'two'" in r.getMessage() and 'on_audit_event_callback' in r.getMessage()
      for r in caplog.records
  )
  (stored,) = audit_events(await harness.stored())
  assert stored.id == outcome.event.id


@pytest.mark.conformance('P3-OBS-08', 'P3-OBS-13')
async def test_bqaa_state_delta_rows_come_from_the_observer_phase_only(
    harness: Harness, table: AnalyticsTable, bq: BigQueryAgentAnalyticsPlugin
) -> None:
  # A normal Event's delta: the ordinary callback logs it.
  normal = Event(
      author='recorder',
      content=types.ModelContent('normal'),
      actions=EventActions(state_delta={'normal': 1}),
  )
  await node_turn(harness.service, harness.session.id, [bq], normal)
  # An app_audit Event through the ordinary callback: no delta row there.
  audit_via_runner = Event(
      author='recorder',
      audience='app_audit',
      content=types.ModelContent('audit via runner'),
      actions=EventActions(state_delta={'runner_audit': 1}),
  )
  with admitted(APP_OPERATION):
    await node_turn(harness.service, harness.session.id, [bq], audit_via_runner)
  harness.session = await harness.reload()

  outcome = await run(harness, bq)
  await bq.flush()

  assert len(delta_rows(table.rows, normal.id)) == 1
  assert delta_rows(table.rows, audit_via_runner.id) == []
  (stored,) = audit_events(await harness.stored())
  (row,) = delta_rows(table.rows, stored.id)
  assert json.loads(row['attributes'])['state_delta'] == {'cart': 2}
  assert row['session_id'] == harness.session.id
  assert outcome.event.id == stored.id


ORDERINGS = {
    # (the policy plugin before/after BQAA) x (the raising observer
    # before/after BQAA)
    'policy_first-raiser_first': ('policy', 'raiser', 'bq'),
    'policy_first-raiser_after': ('policy', 'bq', 'raiser'),
    'bq_first-raiser_first': ('raiser', 'bq', 'policy'),
    'bq_first-raiser_after': ('bq', 'policy', 'raiser'),
}


@pytest.mark.conformance('P3-OBS-12', 'P3-OBS-13')
@pytest.mark.parametrize('order', sorted(ORDERINGS))
async def test_four_chain_orderings_give_one_record_and_one_row(
    order: str,
    harness: Harness,
    table: AnalyticsTable,
    bq: BigQueryAgentAnalyticsPlugin,
) -> None:
  log: list[tuple[str, str]] = []

  async def merge(context: Any, event: Event) -> Event:
    return Event(author=event.author, content=types.ModelContent('merged'))

  async def boom(context: Any, event: Event) -> None:
    raise RuntimeError('observer failed')

  plugins: dict[str, BasePlugin] = {
      'policy': ProbePlugin('policy', log, on_event=merge),
      'raiser': ProbePlugin('raiser', log, on_audit=boom),
      'bq': bq,
  }
  outcome = await run(harness, *(plugins[name] for name in ORDERINGS[order]))
  await bq.flush()

  assert outcome.path is AuditPath.PIPELINE and outcome.error is None
  (stored,) = audit_events(await harness.stored())
  assert stored.content.parts[0].text == 'merged'
  assert stored.actions.state_delta == {'cart': 2}
  assert len(delta_rows(table.rows, stored.id)) == 1
  probes = [n for n in ORDERINGS[order] if n != 'bq']
  assert [n for n, phase in log if phase == 'observe'] == probes


# -- crash after append (subprocess) ------------------------------------------

CRASH_MODES = ('crash_before_observer', 'emit_then_crash')


Store = tuple[str, str]
"""A backend to reopen: ('sqlite', path) or ('database', SQLAlchemy URL)."""


@pytest.fixture(params=['sqlite', 'database_pg'])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
  if request.param == 'sqlite':
    return ('sqlite', str(tmp_path / 'sessions.db'))
  return ('database', request.getfixturevalue('pg_server').create_database())


def run_child(
    tmp_path: Path, store: Store, session_id: str, mode: str, value: int
) -> str:
  """Runs the pipeline in a subprocess; the appended Event's id."""
  marker = tmp_path / f'marker-{mode}.txt'
  spec = json.dumps({
      'store': list(store),
      'rows': str(tmp_path / 'rows.jsonl'),
      'marker': str(marker),
      'session_id': session_id,
      'mode': mode,
      'value': value,
  })
  log = tmp_path / f'child-{mode}.log'
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
  expected = -signal.SIGKILL if mode in CRASH_MODES else 0
  assert process.returncode == expected, log.read_text()
  return marker.read_text().splitlines()[-1]


async def _child(spec: dict[str, Any]) -> None:
  """The subprocess: the pipeline with BQAA, dying where `mode` says."""
  table = AnalyticsTable(rows=JsonlRows(Path(spec['rows'])))
  bq = analytics_plugin(table, pytest.MonkeyPatch())
  service = make_service(*spec['store'])
  session = await service.get_session(
      app_name=APP, user_id=USER, session_id=spec['session_id']
  )
  assert session is not None
  marker = Path(spec['marker'])

  def note(event_id: str) -> None:
    with marker.open('a') as f:
      f.write(event_id + '\n')
      f.flush()
      os.fsync(f.fileno())

  class Killer(BasePlugin):
    """Dies in the observer phase (after flushing BQAA's rows, or not)."""

    def __init__(self, flush_first: bool) -> None:
      super().__init__(name='killer')
      self.flush_first = flush_first

    async def on_audit_event_callback(
        self, *, readonly_context: Any, event: Event
    ) -> None:
      if self.flush_first:
        await bq.flush()
      note(event.id)
      os.kill(os.getpid(), signal.SIGKILL)

  plugins: list[BasePlugin] = {
      'crash_before_observer': [Killer(False), bq],
      'emit_then_crash': [bq, Killer(True)],
      'restart': [bq],
  }[spec['mode']]
  harness = Harness('sqlite', service, session)
  outcome = await append_audit_event(
      session_service=service,
      session=session,
      event=operation_record(),
      effects=open_batch(harness, {'cart': spec['value']}),
      plugin_manager=PluginManager(plugins=plugins),
  )
  await bq.flush()
  assert outcome.event is not None
  note(outcome.event.id)
  await bq.close()
  await service.close()


async def _new_session(store: Store) -> str:
  service = make_service(*store)
  try:
    session = await service.create_session(
        app_name=APP, user_id=USER, state={'cart': {'items': ['A1']}}
    )
    return session.id
  finally:
    await service.close()


async def _durable(store: Store, session_id: str) -> dict[str, Event]:
  """The audit Events a fresh service reads back."""
  service = make_service(*store)
  try:
    session = await service.get_session(
        app_name=APP, user_id=USER, session_id=session_id
    )
    assert session is not None
    return {e.id: e for e in audit_events(list(session.events))}
  finally:
    await service.close()


@pytest.mark.conformance('P3-OBS-09', 'P3-OBS-11', 'P3-OBS-13')
async def test_crash_after_append_before_observer_leaves_record_no_row(
    tmp_path: Path, store: Store
) -> None:
  session_id = await _new_session(store)
  crashed = run_child(tmp_path, store, session_id, 'crash_before_observer', 2)

  durable = await _durable(store, session_id)
  assert list(durable) == [crashed]
  assert durable[crashed].actions.state_delta == {'cart': 2}
  rows = JsonlRows.read(tmp_path / 'rows.jsonl')
  assert delta_rows(rows, crashed) == []

  # Restart: fresh objects in a fresh process; nothing is re-delivered.
  later = run_child(tmp_path, store, session_id, 'restart', 3)
  durable = await _durable(store, session_id)
  assert set(durable) == {crashed, later}
  rows = JsonlRows.read(tmp_path / 'rows.jsonl')
  assert delta_rows(rows, crashed) == []
  assert len(delta_rows(rows, later)) == 1


@pytest.mark.conformance('P3-OBS-10', 'P3-OBS-11', 'P3-OBS-13')
async def test_emit_then_crash_leaves_one_row_and_no_duplicate(
    tmp_path: Path, store: Store
) -> None:
  session_id = await _new_session(store)
  crashed = run_child(tmp_path, store, session_id, 'emit_then_crash', 2)

  durable = await _durable(store, session_id)
  assert list(durable) == [crashed]
  rows = JsonlRows.read(tmp_path / 'rows.jsonl')
  assert len(delta_rows(rows, crashed)) == 1

  later = run_child(tmp_path, store, session_id, 'restart', 3)
  durable = await _durable(store, session_id)
  assert set(durable) == {crashed, later}
  assert durable[later].actions.state_delta == {'cart': 3}
  rows = JsonlRows.read(tmp_path / 'rows.jsonl')
  assert len(delta_rows(rows, crashed)) == 1
  assert len(delta_rows(rows, later)) == 1


if __name__ == '__main__':
  asyncio.run(_child(json.loads(sys.argv[1])))
