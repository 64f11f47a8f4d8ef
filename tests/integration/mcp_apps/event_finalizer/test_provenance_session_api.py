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

"""First-party Session API writes are `system`, emitted by `session-api`.

ADK's own API server over HTTP: create with events (an import) and PATCH.
The declared author is kept; forged protected fields are stripped and
re-stamped. The lifecycle manager's fenced create is in
test_provenance_lifecycle.py.
"""

from __future__ import annotations

from collections.abc import Iterator
import pathlib
from typing import Any

from fastapi.testclient import TestClient
from google.adk.mcp_apps.event_policy import provenance
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from provenance_support import api_server_app
from provenance_support import protected
import pytest

pytestmark = pytest.mark.integration

APP = "session_api_app"
USER = "alice"
SESSION_API_STAMP = (None, "system", "session-api")
_FORGED = {
    "audience": "app_audit",
    "invocationOrigin": "user",
    "emitter": "host",
}


@pytest.fixture
def service() -> InMemorySessionService:
  return InMemorySessionService()


@pytest.fixture
def client(
    service: InMemorySessionService, tmp_path: pathlib.Path
) -> Iterator[TestClient]:
  with TestClient(api_server_app(service, APP, tmp_path)) as http:
    yield http


def _imported(author: str, text: str, **forged: Any) -> dict[str, Any]:
  return {
      "author": author,
      "invocationId": "e-imported",
      "content": {
          "role": "user" if author == "user" else "model",
          "parts": [{"text": text}],
      },
      **forged,
  }


async def _stored(service: InMemorySessionService, session_id: str):
  session = await service.get_session(
      app_name=APP, user_id=USER, session_id=session_id
  )
  assert session is not None
  return session.events


@pytest.mark.conformance("P3-PROV-11")
@pytest.mark.conformance("P3-PROV-12")
@pytest.mark.conformance("P3-FIN-04")
@pytest.mark.conformance("P3-FIN-09")
async def test_api_server_create_with_events_is_a_session_api_import(
    client: TestClient, service: InMemorySessionService
) -> None:
  response = client.post(
      f"/apps/{APP}/users/{USER}/sessions",
      json={
          "sessionId": "imported",
          "events": [
              _imported("user", "hello"),
              _imported("assistant_agent", "hi there"),
          ],
      },
  )
  assert response.status_code == 200, response.text
  stored = await _stored(service, "imported")
  # The declared authors are kept; the protected fields are the API's.
  assert [e.author for e in stored] == ["user", "assistant_agent"]
  assert [protected(e) for e in stored] == [SESSION_API_STAMP] * 2
  body = response.json()
  assert [e["invocationOrigin"] for e in body["events"]] == ["system"] * 2
  assert [e["emitter"] for e in body["events"]] == ["session-api"] * 2


@pytest.mark.conformance("P3-PROV-14")
async def test_api_server_import_strips_forged_protected_fields(
    client: TestClient, service: InMemorySessionService
) -> None:
  response = client.post(
      f"/apps/{APP}/users/{USER}/sessions",
      json={
          "sessionId": "forged",
          "events": [_imported("user", "sneaky", **_FORGED)],
      },
  )
  assert response.status_code == 200, response.text
  (event,) = await _stored(service, "forged")
  assert event.author == "user"
  assert protected(event) == SESSION_API_STAMP


@pytest.mark.conformance("P3-PROV-13")
@pytest.mark.conformance("P3-FIN-04")
@pytest.mark.conformance("P3-FIN-09")
async def test_api_server_patch_row_is_session_api(
    client: TestClient, service: InMemorySessionService
) -> None:
  await service.create_session(app_name=APP, user_id=USER, session_id="p")
  response = client.patch(
      f"/apps/{APP}/users/{USER}/sessions/p",
      json={"stateDelta": {"color": "blue"}},
  )
  assert response.status_code == 200, response.text
  (event,) = await _stored(service, "p")
  assert event.actions.state_delta == {"color": "blue"}
  assert protected(event) == SESSION_API_STAMP
  # Nothing outside that request was admitted as the Session API.
  assert provenance.current_provenance() is None
