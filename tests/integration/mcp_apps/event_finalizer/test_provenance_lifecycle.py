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

"""Session lifecycle provenance: imports are the Session API's; deletion
signals are lifecycle records and critical redacted logs, never Events.

Real parts: the file-backed SQLite session service (the fenced create needs
it) and the local-dev lifecycle store.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
import dataclasses
import logging
import pathlib
from typing import Optional

from google.adk.events.event import Event
from google.adk.mcp_apps.contracts.local_dev import LocalDevSessionLifecycleStore
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.session_lifecycle_store import LifecycleState
from google.adk.mcp_apps.event_policy import provenance
from google.adk.mcp_apps.lifecycle.imported_events import finalize_imported_events
from google.adk.mcp_apps.lifecycle.imported_events import import_digest
from google.adk.mcp_apps.lifecycle.manager import FaultPoint
from google.adk.mcp_apps.lifecycle.manager import session_ref
from google.adk.mcp_apps.lifecycle.manager import SessionLifecycleManager
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types
from provenance_support import protected
import pytest

pytestmark = pytest.mark.integration

APP = "lifecycle_app"
USER = "bob"
SESSION_API_STAMP = (None, "system", "session-api")
LOGGER = "google_adk.google.adk.mcp_apps.lifecycle.manager"


@dataclasses.dataclass
class _World:
  service: SqliteSessionService
  store: LocalDevSessionLifecycleStore
  manager: SessionLifecycleManager
  key: SessionKey
  events_at_intent: Optional[list[Event]] = None


class _FailingParticipant:
  """A cascade participant whose deletion fails (its store is down)."""

  name = "analytics"

  def __init__(self) -> None:
    self.fail = True

  async def delete_incarnation(self, session: SessionKey, n: int) -> None:
    del session, n
    if self.fail:
      raise ConnectionError("analytics store unreachable at 10.0.0.7")


@pytest.fixture
async def world(tmp_path: pathlib.Path) -> AsyncIterator[_World]:
  service = SqliteSessionService(str(tmp_path / "sessions.db"))
  store = LocalDevSessionLifecycleStore()
  key = SessionKey(APP, USER, "s-secret-42")
  world = _World(service, store, None, key)  # type: ignore[arg-type]

  async def at(point: str) -> None:
    # Right after the deletion intent is durable, before the cascade: the
    # session (still there) shows no Event about it.
    if point == FaultPoint.AFTER_DELETING:
      world.events_at_intent = await _stored(world)

  world.manager = SessionLifecycleManager(store, service, fault_hook=at)
  yield world


async def _stored(world: _World) -> list[Event]:
  session = await world.service.get_session(
      app_name=APP, user_id=USER, session_id=world.key.session_id
  )
  assert session is not None
  return list(session.events)


@pytest.mark.conformance("P3-PROV-12")
@pytest.mark.conformance("P3-PROV-14")
@pytest.mark.conformance("P3-FIN-04")
async def test_fenced_create_imports_are_session_api_with_author_kept(
    world: _World,
) -> None:
  """Forged protected fields are re-stamped before the receipt's digest,
  so the digest covers exactly what the service stored."""
  forged = Event(
      author="weather_agent",
      invocation_id="e-1",
      audience="app_audit",
      invocation_origin="mcp_app",
      emitter="app",
      content=types.ModelContent(parts=[types.Part(text="sunny")]),
  )
  _, record = await world.manager.create(world.key, events=[forged])
  (event,) = await _stored(world)
  assert event.author == "weather_agent"
  assert protected(event) == SESSION_API_STAMP
  # The caller's Event is untouched; the finalized copy is what is stored.
  assert protected(forged) == ("app_audit", "mcp_app", "app")
  assert record.receipt is not None
  assert record.receipt.import_digest == import_digest([event])
  assert record.receipt.import_digest == import_digest(
      finalize_imported_events([forged])
  )


def test_imported_events_restate_the_session_api_provenance() -> None:
  """The lifecycle layer restates SESSION_API (it sits below the policy)."""
  (event,) = finalize_imported_events([Event(author="user")])
  expected = provenance.SESSION_API
  assert protected(event) == (
      expected.audience,
      expected.invocation_origin,
      expected.emitter,
  )


def _deletion_records(caplog: pytest.LogCaptureFixture) -> list[str]:
  return [
      r.getMessage()
      for r in caplog.records
      if r.name == LOGGER and r.levelno == logging.CRITICAL
  ]


def _assert_redacted(messages: list[str], key: SessionKey) -> None:
  for message in messages:
    for secret in (key.session_id, key.user_id, key.app_name, "10.0.0.7"):
      assert secret not in message
    assert f"session_ref={session_ref(key)}" in message


@pytest.mark.conformance("P3-PROV-15")
@pytest.mark.conformance("P3-PROV-16")
async def test_deletion_intent_and_completion_are_records_and_logs(
    world: _World, caplog: pytest.LogCaptureFixture
) -> None:
  await world.manager.create(world.key)
  session = await world.service.get_session(
      app_name=APP, user_id=USER, session_id=world.key.session_id
  )
  assert session is not None
  with provenance.admitted(provenance.SESSION_API):
    await world.service.append_event(session, Event(author="user"))
  before = await _stored(world)
  assert len(before) == 1
  caplog.set_level(logging.CRITICAL, logger=LOGGER)
  deleted = await world.manager.delete(world.key)
  assert deleted.state is LifecycleState.DELETED
  messages = _deletion_records(caplog)
  assert [m.split(" (")[0] for m in messages] == [
      "Session lifecycle: deletion intent",
      "Session lifecycle: deletion completed",
  ]
  _assert_redacted(messages, world.key)
  # Never as a session Event: at the intent the session still held only
  # the one Event it had before; then its row is gone.
  assert world.events_at_intent is not None
  assert [e.id for e in world.events_at_intent] == [e.id for e in before]
  assert (
      await world.service.get_session(
          app_name=APP, user_id=USER, session_id=world.key.session_id
      )
      is None
  )


@pytest.mark.conformance("P3-PROV-15")
@pytest.mark.conformance("P3-PROV-17")
async def test_cascade_failure_is_a_record_and_a_critical_redacted_log(
    tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
  service = SqliteSessionService(str(tmp_path / "sessions.db"))
  store = LocalDevSessionLifecycleStore()
  participant = _FailingParticipant()
  manager = SessionLifecycleManager(store, service, participants=[participant])
  key = SessionKey(APP, USER, "s-secret-43")
  await manager.create(key)
  before = await service.get_session(
      app_name=APP, user_id=USER, session_id=key.session_id
  )
  assert before is not None and before.events == []
  caplog.set_level(logging.CRITICAL, logger=LOGGER)
  with pytest.raises(ConnectionError):
    await manager.delete(key)
  # The lifecycle record keeps the failure: DELETING, the analytics step
  # not done, for resume_deletion.
  record = await store.read(key)
  assert record.state is LifecycleState.DELETING
  assert "cascade:analytics" not in record.cascade_steps
  messages = _deletion_records(caplog)
  assert [m.split(" (")[0] for m in messages] == [
      "Session lifecycle: deletion intent",
      "Session lifecycle: deletion failed",
  ]
  assert "step=cascade:analytics" in messages[1]
  assert "error=ConnectionError" in messages[1]
  _assert_redacted(messages, key)
  # The session row was deleted before the failing step: no Event about
  # the deletion was written to it (or anywhere a session could show it).
  assert (
      await service.get_session(
          app_name=APP, user_id=USER, session_id=key.session_id
      )
      is None
  )
  # Resumed once the participant recovers, it completes.
  participant.fail = False
  caplog.clear()
  done = await manager.resume_deletion(key)
  assert done.state is LifecycleState.DELETED
  assert [m.split(" (")[0] for m in _deletion_records(caplog)] == [
      "Session lifecycle: deletion completed"
  ]
