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

"""The core finalizer on every backend: direct appends, Runner turns,
audit Events, imports and sealed results, read back from the stored row."""

from __future__ import annotations

from typing import Any

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.event_policy.provenance import admitted
from google.adk.mcp_apps.event_policy.provenance import APP_OPERATION
from google.adk.mcp_apps.event_policy.provenance import SESSION_API
from google.adk.mcp_apps.event_policy.provenance import USER_TURN
from google.adk.mcp_apps.lifecycle import finalize_imported_events
from google.adk.mcp_apps.lifecycle import import_digest
from google.adk.mcp_apps.sealing.result_sealer import PENDING_SEALS
from google.adk.mcp_apps.stores.sql_sealed_result_store import TABLE_NAME
from google.genai import types as genai_types
from mcp_apps_conformance_server import names
import pytest
from sealing_support import close_profile
from sealing_support import event_seal
from sealing_support import sql_profile
import sqlalchemy
from sqlalchemy.ext.asyncio import create_async_engine

APP = "finalizer_app"
USER = "user-1"

FORGED = {"audience": "app_audit", "invocation_origin": "mcp_app"}
FORGED_EMITTER = "host"


def forged_event(invocation_id: str = "inv-direct", text: str = "hi") -> Event:
  """An Event whose caller set every protected field itself."""
  return Event(
      invocation_id=invocation_id,
      author="user",
      content=genai_types.Content(
          role="user", parts=[genai_types.Part(text=text)]
      ),
      emitter=FORGED_EMITTER,
      **FORGED,
  )


@pytest.mark.conformance("P3-FIN-01", "P3-FIN-03")
async def test_direct_append_is_stamped_in_the_stored_row(
    backend: Any, fin: Any
):
  session_id = await backend.create()
  session = await backend.session(session_id)

  await backend.service.append_event(session, forged_event())
  with admitted(SESSION_API):
    await backend.service.append_event(session, forged_event("inv-api"))

  rows = await backend.raw_rows(session_id)
  reread = await backend.reread(session_id)
  # Outside every admitted operation: an unscoped `system` write.
  assert [fin.protected(row) for row in rows] == [
      (None, "system", None),
      (None, "system", "session-api"),
  ]
  assert [(e.audience, e.invocation_origin, e.emitter) for e in reread] == [
      (None, "system", None),
      (None, "system", "session-api"),
  ]


@pytest.mark.conformance("P3-FIN-01", "P3-FIN-03")
async def test_runner_turn_stamps_every_stored_event(backend: Any, fin: Any):
  session_id = await backend.create()

  with admitted(USER_TURN):
    yielded = await fin.run_turn(backend.service, session_id)

  rows = await backend.raw_rows(session_id)
  # The user message, then the answer (the one Event the turn yields).
  assert len(rows) == 2 and [e.id for e in yielded] == [rows[1]["id"]]
  assert [fin.protected(row) for row in rows] == [(None, "user", None)] * 2
  assert [e.invocation_origin for e in await backend.reread(session_id)] == [
      "user",
      "user",
  ]


@pytest.mark.conformance("P3-AUD-01", "P3-AUD-02", "P3-AUD-08")
async def test_audit_event_round_trips_fully_through_the_stored_row(
    backend: Any, fin: Any
):
  session_id = await backend.create()
  session = await backend.session(session_id)
  # A full audit record: content, state and artifact deltas, branch,
  # custom metadata.
  sent = fin.response_event(
      "inv-audit",
      "fc-audit",
      branch="root.probe",
      actions=EventActions(
          state_delta={"counter": 3}, artifact_delta={"report.txt": 1}
      ),
      custom_metadata={"note": "kept"},
  )

  with admitted(APP_OPERATION):
    await backend.service.append_event(session, sent)

  (row,) = await backend.raw_rows(session_id)
  (event,) = await backend.reread(session_id)
  assert fin.protected(row) == ("app_audit", "mcp_app", "app")
  assert (event.audience, event.invocation_origin, event.emitter) == (
      "app_audit",
      "mcp_app",
      "app",
  )
  # Fully persisted and returned by the public Session API.
  assert event.id == sent.id and event.branch == "root.probe"
  assert event.content == sent.content
  assert event.actions.state_delta == {"counter": 3}
  assert event.actions.artifact_delta == {"report.txt": 1}
  assert event.custom_metadata == {"note": "kept"}
  assert (await backend.reread(session_id))[0].model_dump(
      exclude={"timestamp"}
  ) == event.model_dump(exclude={"timestamp"})


SQL_BACKENDS = ("sqlite", "database_sqlite", "database_pg")


@pytest.mark.conformance("P3-FIN-01")
@pytest.mark.parametrize("name", SQL_BACKENDS)
async def test_imported_events_pass_the_finalizer(
    name: str, backend_named: Any, fin: Any
):
  built = await backend_named(name)
  imported = finalize_imported_events([forged_event("inv-old")])
  digest = import_digest(imported)
  session = await built.service.create_session_with_events(  # type: ignore[attr-defined]
      app_name=APP, user_id=USER, events=imported
  )
  rows = await built.raw_rows(session.id)
  reread = await built.reread(session.id)

  assert [fin.protected(row) for row in rows] == [
      (None, "system", "session-api")
  ]
  # The receipt's digest covers the Events as stored.
  assert import_digest(reread) == digest


# -- sealed results on a direct append -----------------------------------------


async def _record_states(url: str) -> list[tuple[str, str, str]]:
  engine = create_async_engine(url)
  try:
    async with engine.connect() as conn:
      rows = (
          await conn.execute(
              sqlalchemy.text(
                  f"SELECT event_id, function_call_id, state FROM {TABLE_NAME}"
              )
          )
      ).all()
  finally:
    await engine.dispose()
  return [tuple(row) for row in rows]  # type: ignore[misc]


@pytest.mark.parametrize("name", SQL_BACKENDS)
async def test_direct_append_of_a_pending_seal_is_sealed(
    name: str, tmp_path: Any, backend_named: Any, fin: Any
):
  store_url = f"sqlite+aiosqlite:///{tmp_path / 'stores.db'}"
  profile = await sql_profile(store_url)
  try:
    built = await backend_named(name)
    session_id = await built.create()
    session = await built.session(session_id)
    event_seal(
        profile,
        SessionKey(APP, USER, session_id),
        "inv-seal",
        "fc-1",
        {"structuredContent": {"n": 1}},
    )
    event = fin.response_event("inv-seal", "fc-1", names.APP_FOLLOWUP)

    await built.service.append_event(session, event)

    rows = await built.raw_rows(session_id)
    (stored,) = await built.reread(session_id)
    records = await _record_states(store_url)
    still_pending = PENDING_SEALS.peek("inv-seal", ["fc-1"])
  finally:
    await close_profile(profile)

  assert set(rows[0]["sealed_result_refs"]) == {"fc-1"}
  ref = stored.sealed_result_refs["fc-1"]
  # The envelope was created for the final Event and marked referenced once
  # the backend committed it; the pending seal is gone.
  assert records == [(event.id, "fc-1", "committed")]
  assert ref.record_id
  assert still_pending == []
