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


"""The canonical audit append pipeline, driven with real parts.

Each test runs `append_audit_event` over a real session service
(in-memory and SQLite), a real `EventBatchEffects`, a real `PluginManager`
with real plugins, and reads the durable record back through a fresh
`get_session`. Backend refusals are real: a SQLite trigger refuses the
`events` insert.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
import logging
from pathlib import Path
from typing import Any
from typing import Optional

from audit_pipeline_support import audit_events
from audit_pipeline_support import CALL
from audit_pipeline_support import Harness
from audit_pipeline_support import open_batch
from audit_pipeline_support import open_harness
from audit_pipeline_support import operation_record
from audit_pipeline_support import ProbePlugin
from audit_pipeline_support import reject_inserts
from audit_pipeline_support import SECRET
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.mcp_apps.audit.errors import AuditError
from google.adk.mcp_apps.audit.errors import AuditErrorReason
from google.adk.mcp_apps.audit.pipeline import APPEND_ATTEMPTS
from google.adk.mcp_apps.audit.pipeline import append_audit_event
from google.adk.mcp_apps.audit.pipeline import append_failures
from google.adk.mcp_apps.audit.pipeline import audit_record
from google.adk.mcp_apps.audit.pipeline import AuditAppendOutcome
from google.adk.mcp_apps.audit.pipeline import AuditPath
from google.adk.mcp_apps.batch.ledger import EventBatchEffects
from google.adk.mcp_apps.batch.ledger import LedgerState
from google.adk.mcp_apps.event_policy.errors import EventPolicyReason
from google.adk.plugins.plugin_manager import PluginManager
from google.genai import types
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
async def sqlite_harness(tmp_path: Path) -> AsyncIterator[Harness]:
  opened = await open_harness('sqlite', tmp_path)
  yield opened
  await opened.close()


async def run(
    harness: Harness,
    *plugins: ProbePlugin,
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


@pytest.mark.conformance('P3-PIPE-01', 'P3-PIPE-02')
async def test_pipeline_runs_its_six_steps_in_order_and_the_chain_once(
    harness: Harness,
) -> None:
  log: list[tuple[str, str]] = []
  effects = open_batch(harness, {'cart': 2})
  during: dict[str, Any] = {}

  async def on_event(context: Any, event: Event) -> Optional[Event]:
    # (2) sees the pre-sanitized record, the batch still open, nothing
    # stored yet.
    during['batch'] = effects.state
    during['parts'] = [p.function_call for p in event.content.parts]
    during['stored'] = [e.id for e in await harness.stored()]
    context.ledger.set_state('policy_note', 'seen')
    return Event(
        author=event.author,
        content=types.Content(role='user', parts=[types.Part(text='merged')]),
    )

  async def on_audit(context: Any, event: Event) -> None:
    # (6) runs once the record is durable.
    during['observed_stored'] = [e.id for e in await harness.stored()]

  plugin = ProbePlugin('probe', log, on_event=on_event, on_audit=on_audit)
  outcome = await run(
      harness,
      plugin,
      effects=effects,
      event=operation_record(with_call=True),
  )

  assert log == [('probe', 'event'), ('probe', 'observe')]
  assert during['batch'] is LedgerState.OPEN
  assert during['parts'] == [None]  # (1) removed the function call
  assert during['stored'] == []
  assert outcome.path is AuditPath.PIPELINE and outcome.error is None
  (stored,) = audit_events(await harness.stored())
  assert during['observed_stored'] == [stored.id]
  # (3) merged, (4) finalized over the frozen batch, (5) appended.
  assert stored.content.parts[0].text == 'merged'
  assert stored.actions.state_delta == {'cart': 2, 'policy_note': 'seen'}
  assert (stored.audience, stored.emitter, stored.invocation_origin) == (
      'app_audit',
      'app',
      'mcp_app',
  )
  assert audit_record(stored) == {'kind': 'audit', 'path': 'pipeline'}
  assert (await harness.reload()).state['policy_note'] == 'seen'


@pytest.mark.conformance('P3-PIPE-03')
async def test_sanitizer_reruns_after_the_merge(harness: Harness) -> None:
  log: list[tuple[str, str]] = []

  async def on_event(context: Any, event: Event) -> Optional[Event]:
    return Event(
        author=event.author,
        long_running_tool_ids={'call-x'},
        content=types.Content(
            role='user',
            parts=[
                types.Part(text='kept'),
                types.Part(
                    function_call=types.FunctionCall(
                        name='transfer_to_agent', args={'agent_name': 'x'}
                    )
                ),
            ],
        ),
        custom_metadata={
            'tag': 'v1',
            '__adk_internal_mcp_apps_audit_record': {'path': 'forged'},
            '__adk_internal_forged': True,
        },
        actions=EventActions(escalate=True),
    )

  outcome = await run(harness, ProbePlugin('p', log, on_event=on_event))

  (stored,) = audit_events(await harness.stored())
  assert [p.text for p in stored.content.parts] == ['kept']
  assert stored.long_running_tool_ids is None
  assert stored.custom_metadata['tag'] == 'v1'
  assert '__adk_internal_forged' not in stored.custom_metadata
  assert audit_record(stored) == {'kind': 'audit', 'path': 'pipeline'}
  assert stored.actions.escalate is None
  assert outcome.policy_error is not None
  assert outcome.policy_error.reason is EventPolicyReason.FORBIDDEN_CONTROL


@pytest.mark.conformance('P3-PIPE-04', 'P3-ACT-01', 'P3-ACT-02')
async def test_frozen_batch_replaces_a_plugins_delta_edits(
    harness: Harness,
) -> None:
  log: list[tuple[str, str]] = []

  async def on_event(context: Any, event: Event) -> Optional[Event]:
    event.actions.state_delta['cart'] = 99  # in place, on the copy
    return Event(
        author=event.author,
        content=event.content,
        actions=EventActions(
            state_delta={'cart': 100, 'forged': 1},
            artifact_delta={'report.pdf': 7},
        ),
    )

  outcome = await run(harness, ProbePlugin('p', log, on_event=on_event))

  (stored,) = audit_events(await harness.stored())
  assert stored.actions.state_delta == {'cart': 2}
  assert stored.actions.artifact_delta == {}
  assert dict(outcome.frozen.state_delta) == {'cart': 2}
  state = (await harness.reload()).state
  assert state['cart'] == 2 and 'forged' not in state


@pytest.mark.conformance('P3-PIPE-05')
async def test_throwing_plugin_yields_one_fallback_and_no_loop(
    harness: Harness,
) -> None:
  log: list[tuple[str, str]] = []
  reentries: list[Any] = []

  async def on_event(context: Any, event: Event) -> Optional[Event]:
    raise RuntimeError('always')

  async def on_audit(context: Any, event: Event) -> None:
    # An observer trying to record again for the same Session.
    try:
      await run(harness)
    except AuditError as e:
      reentries.append(e.reason)

  plugin = ProbePlugin('thrower', log, on_event=on_event, on_audit=on_audit)
  outcome = await run(harness, plugin)

  assert log == [('thrower', 'event'), ('thrower', 'observe')]
  assert reentries == [AuditErrorReason.REENTRY]
  assert outcome.path is AuditPath.FALLBACK
  assert outcome.error.reason is AuditErrorReason.EVENT_POLICY_FAILED
  assert outcome.attempts == 1
  (stored,) = audit_events(await harness.stored())
  assert stored.id == outcome.event.id
  assert audit_record(stored) == {'kind': 'audit', 'path': 'fallback'}
  assert stored.actions.state_delta == {'cart': 2}
  assert stored.audience == 'app_audit'


@pytest.mark.conformance('P3-PIPE-06')
async def test_append_failure_falls_back_to_the_frozen_batch_once(
    sqlite_harness: Harness,
) -> None:
  harness = sqlite_harness
  reject_inserts(harness.db_path, containing='poisoned')
  log: list[tuple[str, str]] = []

  async def on_event(context: Any, event: Event) -> Optional[Event]:
    return Event(
        author=event.author,
        content=types.Content(role='user', parts=[types.Part(text='poisoned')]),
    )

  outcome = await run(harness, ProbePlugin('p', log, on_event=on_event))

  assert outcome.path is AuditPath.FALLBACK
  assert outcome.error.reason is AuditErrorReason.PIPELINE_APPEND_FAILED
  assert outcome.attempts == 2
  (stored,) = audit_events(await harness.stored())
  assert stored.id == outcome.event.id
  assert audit_record(stored) == {'kind': 'audit', 'path': 'fallback'}
  assert stored.actions.state_delta == {'cart': 2}
  assert stored.content.parts[0].text == 'the app called buy'
  assert log == [('p', 'event'), ('p', 'observe')]


@pytest.mark.conformance('P3-PIPE-07', 'P3-PIPE-08')
async def test_backend_refusal_escalates_and_claims_nothing_durable(
    sqlite_harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
  harness = sqlite_harness
  reject_inserts(harness.db_path)
  log: list[tuple[str, str]] = []
  before = append_failures().get(harness.key.app_name, 0)
  effects = open_batch(harness, {'cart': 2, 'secret': SECRET})

  with caplog.at_level(logging.WARNING):
    outcome = await run(harness, ProbePlugin('p', log), effects=effects)

  assert outcome.event is None and not outcome.durable
  assert outcome.path is AuditPath.NOT_RECORDED
  assert outcome.error.reason is AuditErrorReason.APPEND_FAILED
  assert outcome.attempts == 1 + APPEND_ATTEMPTS
  assert append_failures()[harness.key.app_name] == before + 1
  critical = [r for r in caplog.records if r.levelno == logging.CRITICAL]
  assert len(critical) == 1
  text = critical[0].getMessage()
  assert harness.session.id in text
  assert SECRET not in text and 'the app called buy' not in text
  assert audit_events(await harness.stored()) == []
  # Observers never ran: nothing was appended.
  assert log == [('p', 'event')]


def store_then_raise_once(harness: Harness, path: str) -> list[str]:
  """Makes the real service raise once after it stored the first record on
  `path`; returns the ids of the records it raised for.

  The fault is a subclass of the harness's own service class: the backend
  really stores the Event, then the post-store step raises (as a lost
  commit acknowledgement would).
  """
  raised: list[str] = []

  class StoredThenRaised(type(harness.service)):  # type: ignore[misc]

    async def _event_persisted(self, session: Any, event: Event) -> None:
      stamp = audit_record(event)
      if not raised and stamp is not None and stamp['path'] == path:
        raised.append(event.id)
        raise OSError('the commit acknowledgement was lost (injected)')
      await super()._event_persisted(session, event)

  harness.service.__class__ = StoredThenRaised
  return raised


@pytest.mark.conformance('P3-PIPE-06', 'P3-PIPE-08')
async def test_a_raised_append_that_was_stored_stands_once_as_the_pipeline_record(
    harness: Harness,
) -> None:
  raised = store_then_raise_once(harness, 'pipeline')
  log: list[tuple[str, str]] = []

  outcome = await run(harness, ProbePlugin('p', log))

  assert len(raised) == 1
  # The stored record is the outcome: no fallback, no duplicate, no error.
  assert outcome.path is AuditPath.PIPELINE and outcome.error is None
  assert outcome.durable and outcome.attempts == 1
  (stored,) = audit_events(await harness.stored())
  assert stored.id == outcome.event.id == raised[0]
  assert audit_record(stored) == {'kind': 'audit', 'path': 'pipeline'}
  assert stored.actions.state_delta == {'cart': 2}
  assert log == [('p', 'event'), ('p', 'observe')]


@pytest.mark.conformance('P3-PIPE-06', 'P3-PIPE-08')
async def test_fallback_reuses_the_refused_offers_id_and_a_stored_offer_stands(
    sqlite_harness: Harness,
) -> None:
  harness = sqlite_harness
  reject_inserts(harness.db_path, containing='poisoned')
  raised = store_then_raise_once(harness, 'fallback')
  offered: list[str] = []
  log: list[tuple[str, str]] = []

  async def on_event(context: Any, event: Event) -> Optional[Event]:
    offered.append(event.id)
    return event.model_copy(
        update={
            'content': types.Content(
                role='user', parts=[types.Part(text='poisoned')]
            )
        }
    )

  outcome = await run(harness, ProbePlugin('p', log, on_event=on_event))

  # The pipeline record was refused; the fallback's first offer was stored
  # although the service raised, so it stands and is not offered again.
  assert outcome.path is AuditPath.FALLBACK
  assert outcome.error.reason is AuditErrorReason.PIPELINE_APPEND_FAILED
  assert outcome.attempts == 2
  (stored,) = audit_events(await harness.stored())
  assert stored.id == outcome.event.id == raised[0] == offered[0]
  assert audit_record(stored) == {'kind': 'audit', 'path': 'fallback'}
  assert stored.content.parts[0].text == 'the app called buy'
  assert log == [('p', 'event'), ('p', 'observe')]
