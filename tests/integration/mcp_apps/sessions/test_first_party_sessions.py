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

"""First-party Session create/import, patch and delete on durable stores.

`FirstPartySessions` over a file-backed `SqliteSessionService` (stores on
a second SQLite file) and over `DatabaseSessionService` on PostgreSQL (the
stores in the same database). Interleavings are forced with the lifecycle
manager's fault hook and coordinator ownership held by the test; a point
is observed as reached before the test asserts what has (not) happened.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultReason
from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultStoreError
from google.adk.mcp_apps.contracts.session_lifecycle_store import LifecycleState
from google.adk.mcp_apps.coordination.errors import CoordinationError
from google.adk.mcp_apps.coordination.errors import CoordinationErrorReason
from google.adk.mcp_apps.coordination.sessions import issue_permit
from google.adk.mcp_apps.lifecycle import FaultPoint
from google.adk.mcp_apps.lifecycle import import_digest
from google.adk.mcp_apps.lifecycle import SessionNotAdmittedError
from google.adk.mcp_apps.lifecycle import StaleIncarnationError
from google.adk.mcp_apps.lifecycle.fenced_creation import FenceState
from google.adk.mcp_apps.operations.sessions import CREATE
from google.adk.mcp_apps.operations.sessions import PATCH
import pytest
from sessions_support import APP
from sessions_support import forged_event
from sessions_support import KEY
from sessions_support import make_parts
from sessions_support import Parts
from sessions_support import SESSION_API_STAMP
from sessions_support import SID
from sessions_support import stamp
from sessions_support import USER

pytestmark = pytest.mark.integration

BOUND = 30.0
"""Seconds any awaited step may take before the test fails (no deadlock)."""


@pytest.fixture(params=["sqlite", "postgresql"])
async def parts(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Parts]:
  pg_url = None
  if request.param == "postgresql":
    pg_url = request.getfixturevalue("pg_server").create_database()
  made = await make_parts(request.param, tmp_path, pg_url)
  try:
    yield made
  finally:
    await made.close()


async def bounded(awaitable: Any) -> Any:
  return await asyncio.wait_for(awaitable, BOUND)


@pytest.mark.conformance("P4-COORD-09", "P4-COORD-23")
async def test_import_runs_fenced_creation_states_under_coordinator_and_stamps(
    parts: Parts,
) -> None:
  seen: dict[str, tuple[Any, ...]] = {}

  def observe(point: str) -> None:
    async def at_point() -> None:
      record = await parts.store.read(KEY)
      owner = parts.coordinator.owner(KEY)
      try:
        await parts.manager.admit(KEY)
        admitted = True
      except SessionNotAdmittedError:
        admitted = False
      seen[point] = (
          record.state,
          record.incarnation,
          owner.operation if owner else None,
          admitted,
      )

    parts.hooks.on[point] = at_point

  for point in (
      FaultPoint.AFTER_RESERVATION,
      FaultPoint.AFTER_SESSION_COMMIT,
      FaultPoint.AFTER_ACTIVATION,
  ):
    observe(point)
  imported = [forged_event("hello", author="user"), forged_event("hi there")]

  created = await bounded(
      parts.api.create(
          APP, USER, session_id=SID, state={"v": 1}, events=imported
      )
  )

  creating = (LifecycleState.CREATING, 1, CREATE, False)
  assert seen == {
      FaultPoint.AFTER_RESERVATION: creating,
      FaultPoint.AFTER_SESSION_COMMIT: creating,
      FaultPoint.AFTER_ACTIVATION: (LifecycleState.ACTIVE, 1, CREATE, True),
  }
  assert parts.coordinator.owner(KEY) is None
  record = await parts.store.read(KEY)
  stored = await parts.stored()
  assert stored is not None and created.id == SID
  # The fenced receipt: the committed fence row is this creation's, and its
  # digest is that of the Events the service stored.
  fence = await parts.manager.fence.read(KEY)
  assert fence is not None and fence.state == FenceState.COMMITTED
  assert record.receipt is not None
  assert (fence.operation_id, fence.incarnation, fence.import_count) == (
      record.receipt.operation_id,
      1,
      2,
  )
  assert record.receipt.import_digest == import_digest(stored.events)
  # Forged protected fields stripped and stamped; declared authors kept.
  assert [stamp(e) for e in stored.events] == [SESSION_API_STAMP] * 2
  assert [e.author for e in stored.events] == ["user", "weather_agent"]
  assert [e.content.parts[0].text for e in stored.events] == [
      "hello",
      "hi there",
  ]
  assert stored.state == {"v": 1}
  # The caller's Events are not modified.
  assert [e.emitter for e in imported] == ["app", "app"]


@pytest.mark.conformance("P4-COORD-10")
async def test_patch_appends_under_coordinator_and_finalizer(
    parts: Parts,
) -> None:
  await parts.api.create(APP, USER, session_id=SID)
  owners: list[tuple[Any, int]] = []

  async def at_check() -> None:
    owner = parts.coordinator.owner(KEY)
    owners.append(
        (owner.operation if owner else None, parts.coordinator.waiting(KEY))
    )

  parts.hooks.on[FaultPoint.AFTER_APPEND_CHECK] = at_check

  await bounded(parts.api.patch(APP, USER, SID, {"cart": ["A1"]}))
  forged = forged_event("patched row")
  forged.actions = EventActions(state_delta={"note": "x"})
  await bounded(parts.api.append(KEY, forged))

  # Each append checked its incarnation while the patch owned the Session
  # (the manager reused that ownership: nobody queued behind it).
  assert owners == [(PATCH, 0), (PATCH, 0)]
  assert parts.coordinator.owner(KEY) is None
  stored = await parts.stored()
  assert stored is not None
  assert [stamp(e) for e in stored.events] == [SESSION_API_STAMP] * 2
  assert stored.events[0].author == "user"
  assert stored.state == {"cart": ["A1"], "note": "x"}


@pytest.mark.conformance("P4-COORD-11", "P2-SLS-27", "P2-SLS-28")
async def test_delete_waits_for_the_owner_then_cascades_in_order(
    parts: Parts,
) -> None:
  await parts.api.create(APP, USER, session_id=SID, state={"v": 1})
  scope, ref = await parts.seal(1)
  inside, leave = asyncio.Event(), asyncio.Event()

  async def turn_owner() -> None:
    async with parts.coordinator.owned(KEY, "Runner.run_async"):
      inside.set()
      await leave.wait()

  owner_task = asyncio.create_task(turn_owner())
  await bounded(inside.wait())
  revoked = parts.hooks.signal(FaultPoint.AFTER_REVOKE)
  deletion = asyncio.create_task(parts.api.delete(APP, USER, SID))
  await bounded(revoked.wait())

  # DELETING(1) refuses new admission at once; the deletion is queued
  # behind the owner at its coordination step and the row is untouched.
  assert (await parts.store.read(KEY)).state is LifecycleState.DELETING
  with pytest.raises(SessionNotAdmittedError):
    await parts.api.permit(APP, USER, SID, "patch")
  assert parts.coordinator.waiting(KEY) == 1
  assert FaultPoint.AFTER_COORDINATION not in parts.hooks.seen
  assert await parts.stored() is not None

  leave.set()
  await bounded(owner_task)
  await bounded(deletion)

  assert parts.hooks.seen[-6:] == [
      FaultPoint.AFTER_DELETING,
      FaultPoint.AFTER_REVOKE,
      FaultPoint.AFTER_COORDINATION,
      FaultPoint.AFTER_ROW_DELETE,
      FaultPoint.after_cascade("sealed_results"),
      FaultPoint.BEFORE_COMPLETION_MARK,
  ]
  assert parts.revoked == [(KEY, 1)]
  record = await parts.store.read(KEY)
  assert (record.state, record.incarnation) == (LifecycleState.DELETED, 1)
  assert await parts.stored() is None
  with pytest.raises(
      SealedResultStoreError,
      check=lambda e: e.reason is SealedResultReason.NOT_FOUND,
  ):
    await parts.sealed.resolve(scope, ref)


async def test_delete_from_inside_the_owner_is_refused_before_deleting(
    parts: Parts,
) -> None:
  await parts.api.create(APP, USER, session_id=SID)

  async with parts.coordinator.owned(KEY, "Runner.run_async"):
    with pytest.raises(
        CoordinationError,
        check=lambda e: e.reason
        is CoordinationErrorReason.SAME_SESSION_REENTRY,
    ):
      await bounded(parts.api.delete(APP, USER, SID))

  assert (await parts.store.read(KEY)).state is LifecycleState.ACTIVE
  assert await parts.stored() is not None


@pytest.mark.conformance("P4-COORD-13", "P2-SLS-23")
async def test_recreated_id_is_a_new_incarnation_and_old_permit_fails(
    parts: Parts,
) -> None:
  await parts.api.create(
      APP, USER, session_id=SID, state={"v": 1}, events=[forged_event("old")]
  )
  await parts.api.patch(APP, USER, SID, {"old": True})
  old_scope, old_ref = await parts.seal(1)
  old_permit = await parts.api.permit(APP, USER, SID, "patch")
  old_session = await parts.stored()
  assert old_session is not None and old_permit.incarnation == 1

  await parts.api.delete(APP, USER, SID)
  recreated = await parts.api.create(APP, USER, session_id=SID, state={"v": 2})

  record = await parts.store.read(KEY)
  assert (record.state, record.incarnation) == (LifecycleState.ACTIVE, 2)
  assert (await issue_permit(parts.manager, KEY, "patch")).incarnation == 2
  # Nothing of incarnation 1 is reachable through the reused id.
  stored = await parts.stored()
  assert stored is not None and recreated.id == SID
  assert stored.events == [] and stored.state == {"v": 2}
  with pytest.raises(
      SealedResultStoreError,
      check=lambda e: e.reason is SealedResultReason.NOT_FOUND,
  ):
    await parts.sealed.resolve(old_scope, old_ref)
  new_scope = old_scope.__class__(KEY, 2, "event-1", "call-1")
  with pytest.raises(
      SealedResultStoreError,
      check=lambda e: e.reason is SealedResultReason.NOT_FOUND,
  ):
    await parts.sealed.resolve(new_scope, old_ref)
  # The old permit fails typed on every use and appends nothing.
  with pytest.raises(StaleIncarnationError) as refused:
    await parts.api.patch(APP, USER, SID, {"late": True}, permit=old_permit)
  assert (refused.value.presented, refused.value.current) == (1, 2)
  with pytest.raises(StaleIncarnationError):
    await old_permit.require(parts.manager)
  late = Event(
      invocation_id="late",
      author="user",
      actions=EventActions(state_delta={"late": True}),
  )
  with pytest.raises(StaleIncarnationError):
    await old_permit.append(parts.manager, stored, late)
  with pytest.raises(StaleIncarnationError):
    await old_permit.append(parts.manager, old_session, late)
  after = await parts.stored()
  assert after is not None
  assert after.events == [] and after.state == {"v": 2}


@pytest.mark.conformance("P2-SLS-45", "P4-COORD-11")
async def test_delete_cannot_pass_between_append_check_and_append(
    parts: Parts,
) -> None:
  await parts.api.create(APP, USER, session_id=SID)
  session = await parts.stored()
  assert session is not None
  checked, go_on = parts.hooks.park(FaultPoint.AFTER_APPEND_CHECK)
  event = Event(
      invocation_id="racing",
      author="user",
      actions=EventActions(state_delta={"raced": True}),
  )
  append = asyncio.create_task(
      parts.manager.append_event(session, event, incarnation=1)
  )
  await bounded(checked.wait())
  revoked = parts.hooks.signal(FaultPoint.AFTER_REVOKE)
  deletion = asyncio.create_task(parts.api.delete(APP, USER, SID))
  await bounded(revoked.wait())

  # The check passed and the append is parked: the deletion is DELETING
  # and has revoked, but waits at its coordination step; the row stays.
  assert parts.coordinator.waiting(KEY) == 1
  assert FaultPoint.AFTER_COORDINATION not in parts.hooks.seen
  stored = await parts.stored()
  assert stored is not None and stored.events == []

  go_on.set()
  appended = await bounded(append)
  await bounded(deletion)

  # The append landed before the row delete; the deletion then removed it.
  assert appended.actions.state_delta == {"raced": True}
  assert parts.hooks.seen.index(
      FaultPoint.AFTER_APPEND_CHECK
  ) < parts.hooks.seen.index(FaultPoint.AFTER_COORDINATION)
  assert (await parts.store.read(KEY)).state is LifecycleState.DELETED
  assert await parts.stored() is None


@pytest.mark.conformance("P2-SLS-45")
async def test_append_after_the_coordination_step_fails_typed(
    parts: Parts,
) -> None:
  await parts.api.create(APP, USER, session_id=SID)
  session = await parts.stored()
  assert session is not None
  coordinated, go_on = parts.hooks.park(FaultPoint.AFTER_COORDINATION)
  deletion = asyncio.create_task(parts.api.delete(APP, USER, SID))
  await bounded(coordinated.wait())

  event = Event(
      invocation_id="late",
      author="user",
      actions=EventActions(state_delta={"late": True}),
  )
  with pytest.raises(StaleIncarnationError):
    await bounded(parts.manager.append_event(session, event, incarnation=1))
  # Refused before the row delete: the row is there, without the Event.
  stored = await parts.stored()
  assert stored is not None and stored.events == []
  assert FaultPoint.AFTER_APPEND_CHECK not in parts.hooks.seen

  go_on.set()
  await bounded(deletion)
  assert (await parts.store.read(KEY)).state is LifecycleState.DELETED
