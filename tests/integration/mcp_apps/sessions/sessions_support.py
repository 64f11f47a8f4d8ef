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

"""Helpers of the first-party Session API tests: real stores, fault hooks.

`Parts` is one test's durable Session service (SQLite file or PostgreSQL),
SQL lifecycle and sealed-result stores, and a `FirstPartySessions` whose
manager awaits a `Hooks` at every named lifecycle point.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
import dataclasses
from pathlib import Path
from typing import Any
from typing import Optional

from google.adk.events.event import Event
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.sealed_result_store import SealedEnvelope
from google.adk.mcp_apps.contracts.sealed_result_store import SealedRecordScope
from google.adk.mcp_apps.coordination.coordinator import SessionCoordinator
from google.adk.mcp_apps.coordination.sessions import SessionCoordination
from google.adk.mcp_apps.lifecycle import SealedStoreParticipant
from google.adk.mcp_apps.lifecycle import SessionLifecycleManager
from google.adk.mcp_apps.operations.sessions import FirstPartySessions
from google.adk.mcp_apps.stores.sql_sealed_result_store import SqlSealedResultStore
from google.adk.mcp_apps.stores.sql_session_lifecycle_store import SqlSessionLifecycleStore
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

APP = "sessions-app"
USER = "alice"
SID = "client-chosen-id"
KEY = SessionKey(APP, USER, SID)

FORGED = {
    "audience": "app_audit",
    "invocation_origin": "mcp_app",
    "emitter": "app",
}
"""Protected fields a client forges on an Event it imports or patches."""

SESSION_API_STAMP = (None, "system", "session-api")
"""`(audience, invocation_origin, emitter)` of every first-party write."""


def stamp(event: Event) -> tuple[Any, Any, Any]:
  return (event.audience, event.invocation_origin, event.emitter)


def forged_event(text: str, author: str = "weather_agent") -> Event:
  """A conversation Event whose protected fields a client forged."""
  return Event(
      author=author,
      invocation_id=f"inv-{text}",
      content=types.Content(role="model", parts=[types.Part(text=text)]),
      **FORGED,
  )


class Hooks:
  """The manager's fault hook: records every point, runs what a test set.

  Attributes:
    seen: The points reached, in order.
    on: Per point, an async callback run when the point is reached.
  """

  def __init__(self) -> None:
    self.seen: list[str] = []
    self.on: dict[str, Callable[[], Awaitable[None]]] = {}

  async def __call__(self, point: str) -> None:
    self.seen.append(point)
    action = self.on.get(point)
    if action is not None:
      await action()

  def park(self, point: str) -> tuple[asyncio.Event, asyncio.Event]:
    """Parks the first arrival at `point`; returns (reached, release)."""
    reached, release = asyncio.Event(), asyncio.Event()

    async def wait() -> None:
      del self.on[point]
      reached.set()
      await release.wait()

    self.on[point] = wait
    return reached, release

  def signal(self, point: str) -> asyncio.Event:
    """An Event set (without parking) when `point` is first reached."""
    reached = asyncio.Event()

    async def note() -> None:
      reached.set()

    self.on[point] = note
    return reached


@dataclasses.dataclass
class Parts:
  """One test's real stores, service and first-party Session API."""

  backend: str
  service: Any
  store: SqlSessionLifecycleStore
  sealed: SqlSealedResultStore
  coordinator: SessionCoordinator
  hooks: Hooks
  revoked: list[tuple[SessionKey, int]]
  api: FirstPartySessions

  @property
  def manager(self) -> SessionLifecycleManager:
    return self.api.manager

  async def stored(self, session_id: str = SID) -> Optional[Any]:
    return await self.service.get_session(
        app_name=APP, user_id=USER, session_id=session_id
    )

  async def seal(self, incarnation: int) -> tuple[SealedRecordScope, Any]:
    """A sealed record of `incarnation`; its scope and reference."""
    scope = SealedRecordScope(KEY, incarnation, "event-1", "call-1")
    ref = await self.sealed.create(
        scope,
        operation_instance_id=f"op-{incarnation}",
        envelope=SealedEnvelope(b'{"secret":1}', None),
        expires_at=4_000_000_000.0,
    )
    return scope, ref

  async def close(self) -> None:
    await self.store.aclose()
    await self.sealed.aclose()
    await self.service.close()


async def make_parts(
    backend: str, tmp_path: Path, pg_url: Optional[str] = None
) -> Parts:
  """Real parts on a fresh SQLite file pair or PostgreSQL database."""
  if backend == "sqlite":
    service: Any = SqliteSessionService(str(tmp_path / "sessions.db"))
    store_url = f"sqlite+aiosqlite:///{tmp_path / 'stores.db'}"
  else:
    assert pg_url is not None
    service = DatabaseSessionService(pg_url)
    store_url = pg_url
  store = SqlSessionLifecycleStore(store_url, namespace="test/sessions")
  sealed = SqlSealedResultStore(store_url, namespace="test/sealed")
  coordinator = SessionCoordinator()
  coordination = SessionCoordination(coordinator)
  hooks = Hooks()
  revoked: list[tuple[SessionKey, int]] = []

  async def revoke(session: SessionKey, incarnation: int) -> None:
    revoked.append((session, incarnation))

  manager = SessionLifecycleManager(
      store,
      service,
      revoke_hooks=(revoke,),
      coordinator=coordination,
      participants=[SealedStoreParticipant(sealed)],
      fault_hook=hooks,
  )
  # Upstream's first-use DDL is not race-safe: create every schema first.
  if hasattr(service, "prepare_tables"):
    await service.prepare_tables()
  await manager.fence.read(KEY)
  await store.open()
  await sealed.open()
  return Parts(
      backend,
      service,
      store,
      sealed,
      coordinator,
      hooks,
      revoked,
      FirstPartySessions(manager, coordination),
  )
