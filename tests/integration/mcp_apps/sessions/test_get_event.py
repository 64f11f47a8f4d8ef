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

"""`BaseSessionService.get_event`: one Event by id, scoped to its Session.

The gated resolver reads the authoritative Event through it (issue 25) so
opening a View does not load the whole Session. On every backend (the
in-memory service, the base default over `get_session`, `SqliteSessionService`,
`DatabaseSessionService` on a SQLite file and on the loopback PostgreSQL
server) the Event it returns equals the one `get_session` lists, and it
returns None for a missing id, a missing or deleted Session, and for the same
ids asked under another app, user or Session, even where that Session holds
an Event with the very same id.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from typing import Callable

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types
import pytest

pytestmark = pytest.mark.integration

APP = "get_event_app"
USER = "alice"
OTHER_USER = "mallory"
OTHER_APP = "other_app"
SESSION = "s-1"


class _BaseDefault(InMemorySessionService):
  """The in-memory service with the base class's `get_event` (a scan of
  `get_session`), as a service without an override has it."""

  get_event = BaseSessionService.get_event


def _in_memory(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
  del request, tmp_path
  return InMemorySessionService()


def _base_default(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
  del request, tmp_path
  return _BaseDefault()


def _sqlite(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
  del request
  return SqliteSessionService(str(tmp_path / "sessions.db"))


def _database(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
  del request
  return DatabaseSessionService(
      f"sqlite+aiosqlite:///{tmp_path / 'database.db'}"
  )


def _postgres(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
  del tmp_path
  return DatabaseSessionService(
      request.getfixturevalue("pg_server").create_database()
  )


_BACKENDS: dict[str, Callable[[pytest.FixtureRequest, Path], Any]] = {
    "in_memory": _in_memory,
    "base_default": _base_default,
    "sqlite": _sqlite,
    "database": _database,
    "postgres": _postgres,
}


@pytest.fixture(params=list(_BACKENDS))
async def service(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Any]:
  made = _BACKENDS[request.param](request, tmp_path)
  try:
    yield made
  finally:
    close = getattr(made, "close", None)
    if close is not None:
      await close()


def _events(tag: str, event_id: str = "") -> list[Event]:
  """Events of several shapes; the first takes `event_id` when given."""
  text = Event(
      author="user",
      invocation_id=f"{tag}-1",
      content=types.Content(role="user", parts=[types.Part(text=tag)]),
  )
  if event_id:
    text.id = event_id
  call = Event(
      author="agent",
      invocation_id=f"{tag}-2",
      content=types.Content(
          role="model",
          parts=[
              types.Part(
                  function_call=types.FunctionCall(
                      id=f"{tag}-call", name="lookup", args={"q": tag}
                  )
              )
          ],
      ),
  )
  response = Event(
      author="agent",
      invocation_id=f"{tag}-2",
      content=types.Content(
          role="user",
          parts=[
              types.Part(
                  function_response=types.FunctionResponse(
                      id=f"{tag}-call",
                      name="lookup",
                      response={"answer": [tag, 1, 2.5, None]},
                  )
              )
          ],
      ),
  )
  state = Event(
      author="agent",
      invocation_id=f"{tag}-3",
      actions=EventActions(state_delta={"seen": tag}),
      content=types.Content(role="model", parts=[types.Part(text="ok")]),
  )
  return [text, call, response, state]


async def _fill(
    service: Any, app: str, user: str, session_id: str, events: list[Event]
) -> None:
  session = await service.create_session(
      app_name=app, user_id=user, session_id=session_id
  )
  for event in events:
    await service.append_event(session, event)


async def _get(service: Any, app: str, user: str, sid: str, eid: str) -> Any:
  return await service.get_event(
      app_name=app, user_id=user, session_id=sid, event_id=eid
  )


@pytest.mark.conformance("P5-EXP-08")
async def test_get_event_equals_the_event_get_session_lists(service: Any):
  await _fill(service, APP, USER, SESSION, _events("mine"))
  await _fill(service, APP, USER, "s-2", _events("next door"))

  stored = await service.get_session(
      app_name=APP, user_id=USER, session_id=SESSION
  )
  assert stored is not None and len(stored.events) == 4
  for listed in stored.events:
    found = await _get(service, APP, USER, SESSION, listed.id)
    assert found == listed
    assert found.model_dump_json() == listed.model_dump_json()
  # A copy, as `get_session` hands out: changing it changes nothing stored.
  first = await _get(service, APP, USER, SESSION, stored.events[0].id)
  first.content.parts[0].text = "changed"
  again = await _get(service, APP, USER, SESSION, stored.events[0].id)
  assert again.content.parts[0].text == "mine"


@pytest.mark.conformance("P5-EXP-08")
async def test_get_event_of_a_missing_id_or_session_is_none(service: Any):
  events = _events("mine")
  await _fill(service, APP, USER, SESSION, events)

  assert await _get(service, APP, USER, SESSION, "no-such-event") is None
  assert await _get(service, APP, USER, "no-such-session", events[0].id) is None

  await service.delete_session(app_name=APP, user_id=USER, session_id=SESSION)
  for event in events:
    assert await _get(service, APP, USER, SESSION, event.id) is None


@pytest.mark.conformance("P5-EXP-04")
async def test_get_event_never_crosses_app_user_or_session(service: Any):
  mine = _events("mine", event_id="shared-id")
  await _fill(service, APP, USER, SESSION, mine)
  # Other tenants' Sessions under the same Session id, and another Session
  # of the same user, each holding an Event with the very same id.
  await _fill(service, APP, OTHER_USER, SESSION, _events("theirs", "shared-id"))
  await _fill(service, OTHER_APP, USER, SESSION, _events("app", "shared-id"))
  await _fill(service, APP, USER, "s-2", _events("sibling", "shared-id"))

  found = await _get(service, APP, USER, SESSION, "shared-id")
  assert found is not None and found.content.parts[0].text == "mine"
  for app, user, sid, text in (
      (APP, OTHER_USER, SESSION, "theirs"),
      (OTHER_APP, USER, SESSION, "app"),
      (APP, USER, "s-2", "sibling"),
  ):
    other = await _get(service, app, user, sid, "shared-id")
    assert other is not None and other.content.parts[0].text == text

  # Ids of this Session's other Events, asked under every other scope.
  for event in mine[1:]:
    for app, user, sid in (
        (APP, OTHER_USER, SESSION),
        (OTHER_APP, USER, SESSION),
        (APP, USER, "s-2"),
        (APP, "nobody", SESSION),
    ):
      assert await _get(service, app, user, sid, event.id) is None
