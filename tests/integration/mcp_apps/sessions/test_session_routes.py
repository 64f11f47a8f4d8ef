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

"""ADK's own Session routes over HTTP with a first-party Session API bound.

`ApiServer(first_party_sessions=...)`'s FastAPI app, driven over HTTP by an
`httpx` client on the ASGI transport (on the test's event loop, so the
durable stores' connections stay on one loop), with a file-backed
`SqliteSessionService` or `DatabaseSessionService` on PostgreSQL. Without
the option the routes write the session service directly, as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import contextlib
from pathlib import Path
from typing import Any
from typing import Optional

from google.adk.agents.llm_agent import LlmAgent
from google.adk.artifacts.in_memory_artifact_service import InMemoryArtifactService
from google.adk.auth.credential_service.in_memory_credential_service import InMemoryCredentialService
from google.adk.cli.api_server import ApiServer
from google.adk.cli.utils.base_agent_loader import BaseAgentLoader
from google.adk.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager
from google.adk.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager
from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultReason
from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultStoreError
from google.adk.mcp_apps.contracts.session_lifecycle_store import LifecycleState
from google.adk.mcp_apps.lifecycle import FaultPoint
from google.adk.memory.in_memory_memory_service import InMemoryMemoryService
import httpx
import pytest
from sessions_support import APP
from sessions_support import KEY
from sessions_support import make_parts
from sessions_support import Parts
from sessions_support import SESSION_API_STAMP
from sessions_support import SID
from sessions_support import stamp
from sessions_support import USER

pytestmark = pytest.mark.integration

BOUND = 30.0
ROUTE = f"/apps/{APP}/users/{USER}/sessions"
FORGED_WIRE = {
    "audience": "app_audit",
    "invocationOrigin": "mcp_app",
    "emitter": "app",
}


class _OneAppLoader(BaseAgentLoader):

  def load_agent(self, agent_name: str) -> LlmAgent:
    return LlmAgent(name=agent_name)

  def list_agents(self) -> list[str]:
    return [APP]


@contextlib.asynccontextmanager
async def http(
    parts: Parts, tmp_path: Path, *, bound: bool = True
) -> AsyncIterator[httpx.AsyncClient]:
  server = ApiServer(
      agent_loader=_OneAppLoader(),
      session_service=parts.service,
      memory_service=InMemoryMemoryService(),
      artifact_service=InMemoryArtifactService(),
      credential_service=InMemoryCredentialService(),
      eval_sets_manager=InMemoryEvalSetsManager(),
      eval_set_results_manager=LocalEvalSetResultsManager(str(tmp_path)),
      agents_dir=str(tmp_path),
      first_party_sessions=parts.api if bound else None,
  )
  transport = httpx.ASGITransport(app=server.get_fast_api_app())
  async with httpx.AsyncClient(
      transport=transport, base_url="http://127.0.0.1", timeout=BOUND
  ) as client:
    yield client


@pytest.fixture(params=["sqlite", "postgresql"])
async def parts(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Parts]:
  pg_url: Optional[str] = None
  if request.param == "postgresql":
    pg_url = request.getfixturevalue("pg_server").create_database()
  made = await make_parts(request.param, tmp_path, pg_url)
  try:
    yield made
  finally:
    await made.close()


def imported(author: str, text: str) -> dict[str, Any]:
  return {
      "author": author,
      "invocationId": f"inv-{text}",
      "content": {
          "role": "user" if author == "user" else "model",
          "parts": [{"text": text}],
      },
      **FORGED_WIRE,
  }


@pytest.mark.conformance("P4-COORD-09", "P4-COORD-23")
async def test_post_with_events_is_a_fenced_import_with_stamped_events(
    parts: Parts, tmp_path: Path
) -> None:
  async with http(parts, tmp_path) as client:
    response = await client.post(
        ROUTE,
        json={
            "sessionId": SID,
            "state": {"v": 1},
            "events": [imported("user", "hello"), imported("agent", "hi")],
        },
    )

  assert response.status_code == 200, response.text
  body = response.json()
  assert [e["emitter"] for e in body["events"]] == ["session-api"] * 2
  assert all("audience" not in e for e in body["events"])
  record = await parts.store.read(KEY)
  assert (record.state, record.incarnation) == (LifecycleState.ACTIVE, 1)
  assert record.receipt is not None
  fence = await parts.manager.fence.read(KEY)
  assert fence is not None and fence.import_count == 2
  assert fence.operation_id == record.receipt.operation_id
  stored = await parts.stored()
  assert stored is not None and stored.state == {"v": 1}
  assert [stamp(e) for e in stored.events] == [SESSION_API_STAMP] * 2
  assert [e.author for e in stored.events] == ["user", "agent"]
  assert FaultPoint.AFTER_ACTIVATION in parts.hooks.seen


@pytest.mark.conformance("P4-COORD-10")
async def test_patch_route_appends_through_the_session_api(
    parts: Parts, tmp_path: Path
) -> None:
  owners: list[Optional[str]] = []

  async def at_check() -> None:
    owner = parts.coordinator.owner(KEY)
    owners.append(owner.operation if owner else None)

  parts.hooks.on[FaultPoint.AFTER_APPEND_CHECK] = at_check
  async with http(parts, tmp_path) as client:
    created = await client.post(ROUTE, json={"sessionId": SID})
    patched = await client.patch(
        f"{ROUTE}/{SID}", json={"stateDelta": {"color": "blue"}}
    )
    missing = await client.patch(
        f"{ROUTE}/nobody", json={"stateDelta": {"color": "red"}}
    )

  assert created.status_code == 200, created.text
  assert patched.status_code == 200, patched.text
  assert patched.json()["state"] == {"color": "blue"}
  assert missing.status_code == 404
  assert owners == ["SessionApi.patch"]
  stored = await parts.stored()
  assert stored is not None
  (event,) = stored.events
  assert event.actions.state_delta == {"color": "blue"}
  assert stamp(event) == SESSION_API_STAMP


@pytest.mark.conformance("P4-COORD-11", "P4-COORD-13")
async def test_delete_route_cascades_and_a_reused_id_is_a_new_incarnation(
    parts: Parts, tmp_path: Path
) -> None:
  scope, ref = await parts.seal(1)  # Incarnation 1's sealed record.
  async with http(parts, tmp_path) as client:
    first = await client.post(
        ROUTE,
        json={
            "sessionId": SID,
            "state": {"v": 1},
            "events": [imported("user", "old")],
        },
    )
    deleted = await client.delete(f"{ROUTE}/{SID}")
    again = await client.delete(f"{ROUTE}/{SID}")
    second = await client.post(
        ROUTE, json={"sessionId": SID, "state": {"v": 2}}
    )
    fetched = await client.get(f"{ROUTE}/{SID}")

  assert [r.status_code for r in (first, deleted, again, second)] == [200] * 4
  assert parts.hooks.seen.count(FaultPoint.AFTER_COORDINATION) == 1
  assert parts.revoked == [(KEY, 1)]
  record = await parts.store.read(KEY)
  assert (record.state, record.incarnation) == (LifecycleState.ACTIVE, 2)
  assert fetched.status_code == 200
  assert fetched.json()["events"] == [] and fetched.json()["state"] == {"v": 2}
  with pytest.raises(
      SealedResultStoreError,
      check=lambda e: e.reason is SealedResultReason.NOT_FOUND,
  ):
    await parts.sealed.state(scope, ref)


@pytest.mark.conformance("P2-SLS-47")
async def test_create_route_during_deletion_is_refused_with_409(
    parts: Parts, tmp_path: Path
) -> None:
  async with http(parts, tmp_path) as client:
    assert (
        await client.post(ROUTE, json={"sessionId": SID})
    ).status_code == 200
    coordinated, go_on = parts.hooks.park(FaultPoint.AFTER_COORDINATION)
    deletion = asyncio.create_task(client.delete(f"{ROUTE}/{SID}"))
    await asyncio.wait_for(coordinated.wait(), BOUND)
    during = await client.post(ROUTE, json={"sessionId": SID})
    go_on.set()
    deleted = await asyncio.wait_for(deletion, BOUND)
    after = await client.post(ROUTE, json={"sessionId": SID})

  assert during.status_code == 409, during.text
  assert deleted.status_code == 200
  assert after.status_code == 200
  assert (await parts.store.read(KEY)).incarnation == 2


async def test_routes_without_the_option_write_the_service_directly(
    parts: Parts, tmp_path: Path
) -> None:
  async with http(parts, tmp_path, bound=False) as client:
    created = await client.post(ROUTE, json={"sessionId": SID})
    patched = await client.patch(
        f"{ROUTE}/{SID}", json={"stateDelta": {"color": "blue"}}
    )
    deleted = await client.delete(f"{ROUTE}/{SID}")

  assert [r.status_code for r in (created, patched, deleted)] == [200] * 3
  # No lifecycle record, no hook point, no fence: the pristine path.
  assert (await parts.store.read(KEY)).state is LifecycleState.ABSENT
  assert parts.hooks.seen == []
  assert await parts.manager.fence.read(KEY) is None
