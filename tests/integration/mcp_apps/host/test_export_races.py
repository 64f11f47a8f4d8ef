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


"""The export resolver's linearization, redaction and audit vocabulary.

Each race is forced at an `ExportPoint` hook: the change lands after the
store load and the durable `authorized` record, before the final recheck
(P5-EXP-14..22), so no sleep decides an outcome.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import datetime
import json
import logging
from pathlib import Path
from typing import Any

from export_support import export_world
from export_support import ExportWorld
from export_support import OWNER
from google.adk.mcp_apps.contracts.session_lifecycle_store import LifecycleState
from google.adk.mcp_apps.coordination.coordinator import session_coordinator
from google.adk.mcp_apps.coordination.coordinator import SessionCoordinator
from google.adk.mcp_apps.host.errors import HostServiceError
from google.adk.mcp_apps.host.errors import HostServiceErrorReason
from google.adk.mcp_apps.host.export import EXPORT_OPERATION
from google.adk.mcp_apps.host.export import ExportPoint
from google.adk.mcp_apps.operations.sessions import FirstPartySessions
import pytest

pytestmark = pytest.mark.integration

STEPS = 10_000
"""Event-loop steps a forced interleaving may take before the test fails."""


def _denied(reason: HostServiceErrorReason, detail: str) -> Any:
  return pytest.raises(
      HostServiceError,
      check=lambda e: e.reason is reason and e.detail == detail,
  )


async def _until(predicate: Any, what: str) -> None:
  """Yields to the loop until the async `predicate` holds."""
  for _ in range(STEPS):
    if await predicate():
      return
    await asyncio.sleep(0)
  raise AssertionError(f"never happened: {what}")


def _outside(coroutine: Any) -> asyncio.Task[Any]:
  """Runs `coroutine` as another caller would: in a fresh context, which
  does not own the Session the export (and its hook) owns."""
  return asyncio.get_running_loop().create_task(
      coroutine, context=contextvars.Context()
  )


def _at(point: ExportPoint, action: Any) -> Any:
  async def hook(reached: ExportPoint) -> None:
    if reached is point:
      await action()

  return hook


async def _deletion_begun(w: ExportWorld) -> bool:
  record = await w.profile.session_lifecycle_store.read(w.key)
  return record.state is not LifecycleState.ACTIVE


@pytest.mark.conformance("P5-EXP-14", "P5-EXP-15")
async def test_export_holds_an_incarnation_bound_export_permit_to_release(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with export_world(mcp_apps, tmp_path, backend) as w:
    coordinator = session_coordinator()
    competitor: list[asyncio.Task[Any]] = []

    async def compete() -> None:
      owner = coordinator.owner(w.key)
      assert owner is not None and owner.operation == EXPORT_OPERATION
      competitor.append(_outside(coordinator.acquire(w.key, "test.turn")))
      await _until(
          lambda: _true(coordinator.waiting(w.key) == 1), "competitor queued"
      )

    result = await w.export(w.resolver(hook=_at(ExportPoint.RELEASED, compete)))
    ownership = await competitor[0]  # only after the export let go
    ownership.release()
    assert result.body
    # The recheck asked the authorizer again, for the current principal.
    assert len(w.grants.asked) == 2


async def _true(value: bool) -> bool:
  return value


@pytest.mark.conformance("P5-EXP-16", "P5-EXP-15")
async def test_a_revoke_after_load_denies_and_releases_nothing(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with export_world(mcp_apps, tmp_path, backend) as w:

    async def revoke() -> None:
      w.grants.export.clear()

    with _denied(HostServiceErrorReason.UNAUTHORIZED, "export_purpose"):
      await w.export(w.resolver(hook=_at(ExportPoint.AUDITED, revoke)))
    assert w.audit.statuses("op-1") == ["authorized", "denied"]


@pytest.mark.conformance("P5-EXP-17")
async def test_a_session_delete_after_load_denies(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with export_world(mcp_apps, tmp_path, "sqlite") as w:
    sessions = FirstPartySessions.for_profile(w.profile, w.s.st.session_service)
    deleting: list[asyncio.Task[Any]] = []

    async def delete() -> None:
      deleting.append(
          _outside(sessions.delete("sealing", "alice", w.key.session_id))
      )
      await _until(lambda: _deletion_begun(w), "deletion begun")

    with _denied(HostServiceErrorReason.EXPORT_DENIED, "session_not_active"):
      await w.export(w.resolver(hook=_at(ExportPoint.AUDITED, delete)))
    assert w.audit.statuses("op-1") == ["authorized", "denied"]
    await deleting[0]  # the deletion completes once the export let go
    record = await w.profile.session_lifecycle_store.read(w.key)
    assert record.state is LifecycleState.DELETED


@pytest.mark.conformance("P5-EXP-18")
async def test_a_session_recreate_after_load_denies(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with export_world(mcp_apps, tmp_path, "sqlite") as w:
    # Another replica (its own coordinator) deletes and recreates.
    replica = FirstPartySessions.for_profile(
        w.profile, w.s.st.session_service, coordinator=SessionCoordinator()
    )

    async def recreate() -> None:
      async def run() -> None:
        await replica.delete("sealing", "alice", w.key.session_id)
        await replica.create("sealing", "alice", session_id=w.key.session_id)

      await _outside(run())

    with _denied(HostServiceErrorReason.EXPORT_DENIED, "stale_incarnation"):
      await w.export(w.resolver(hook=_at(ExportPoint.AUDITED, recreate)))
    assert w.audit.statuses("op-1") == ["authorized", "denied"]


@pytest.mark.conformance("P5-EXP-19")
async def test_a_key_rotation_after_load_denies(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with export_world(mcp_apps, tmp_path, "sqlite") as w:
    keys = w.profile.key_provider

    async def rotate() -> None:
      await keys.rotate(datetime.timedelta(hours=1))

    resolver = w.resolver(hook=_at(ExportPoint.AUDITED, rotate))
    with _denied(HostServiceErrorReason.EXPORT_DENIED, "key_rotated"):
      await w.export(resolver)
    assert w.audit.statuses("op-1") == ["authorized", "denied"]
    # The retained old key still verifies: a fresh export succeeds.
    assert (await w.export(w.resolver(), "op-2")).body


@pytest.mark.conformance("P5-EXP-20")
async def test_a_limit_shrink_after_load_denies(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with export_world(mcp_apps, tmp_path, backend) as w:
    holder: dict[str, Any] = {}

    async def shrink() -> None:
      resolver = holder["resolver"]
      resolver.limits = dataclasses.replace(resolver.limits, max_bytes=16)

    resolver = w.resolver(hook=_at(ExportPoint.AUDITED, shrink))
    holder["resolver"] = resolver
    with _denied(HostServiceErrorReason.LIMIT_EXCEEDED, "bytes"):
      await w.export(resolver)
    assert w.audit.statuses("op-1") == ["authorized", "denied"]

    async def no_more() -> None:
      resolver.limits = dataclasses.replace(
          resolver.limits, max_bytes=1 << 20, max_per_principal=0
      )

    resolver = w.resolver(hook=_at(ExportPoint.AUDITED, no_more))
    with _denied(HostServiceErrorReason.LIMIT_EXCEEDED, "rate"):
      await w.export(resolver, "op-2")


@pytest.mark.conformance("P5-EXP-21")
async def test_teardown_while_queued_denies(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with export_world(mcp_apps, tmp_path, "sqlite") as w:
    coordinator = session_coordinator()
    taken = asyncio.Event()
    let_go = asyncio.Event()

    async def own() -> None:
      async with coordinator.owned(w.key, "test.turn"):
        taken.set()
        await let_go.wait()

    holder = asyncio.ensure_future(own())
    await taken.wait()
    # Shutdown while queued.
    resolver = w.resolver()
    queued = asyncio.ensure_future(w.export(resolver, "op-1"))
    await _until(lambda: _true(coordinator.waiting(w.key) == 1), "queued")
    resolver.close()
    with _denied(HostServiceErrorReason.EXPORT_DENIED, "shut_down"):
      await queued
    assert w.audit.statuses("op-1") == ["denied"]
    assert coordinator.waiting(w.key) == 0
    # Session deletion while queued.
    queued = asyncio.ensure_future(w.export(w.resolver(), "op-2"))
    await _until(lambda: _true(coordinator.waiting(w.key) == 1), "queued")
    sessions = FirstPartySessions.for_profile(w.profile, w.s.st.session_service)
    deleting = asyncio.ensure_future(
        sessions.delete("sealing", "alice", w.key.session_id)
    )
    await _until(lambda: _deletion_begun(w), "deletion begun")
    let_go.set()
    with _denied(HostServiceErrorReason.EXPORT_DENIED, "session_not_active"):
      await queued
    assert w.audit.statuses("op-2") == ["denied"]
    await asyncio.gather(holder, deleting)


@pytest.mark.conformance("P5-EXP-22")
async def test_teardown_during_handoff_completes_no_release(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with export_world(mcp_apps, tmp_path, backend) as w:
    holder: dict[str, Any] = {}

    async def shut_down() -> None:
      holder["resolver"].close()

    resolver = w.resolver(hook=_at(ExportPoint.AUDITED, shut_down))
    holder["resolver"] = resolver
    with _denied(HostServiceErrorReason.EXPORT_DENIED, "shut_down"):
      await w.export(resolver)
    assert w.audit.statuses("op-1") == ["authorized", "denied"]
    with _denied(HostServiceErrorReason.EXPORT_DENIED, "shut_down"):
      await w.export(resolver, "op-2")


class _FailingSecondTime:
  """A projection that fails at the recheck (after authorization)."""

  name = "flaky"

  def __init__(self) -> None:
    self.calls = 0

  def project(self, full_result: Any) -> Any:
    self.calls += 1
    if self.calls > 1:
      raise RuntimeError("projection backend failed")
    return dict(full_result)


@pytest.mark.conformance("P5-EAUD-02")
@pytest.mark.parametrize("durable_audit", [False, True])
async def test_each_audit_status_is_produced_in_its_scenario(
    mcp_apps: Any, tmp_path: Path, durable_audit: bool
) -> None:
  async with export_world(
      mcp_apps, tmp_path, "in_memory", durable_audit=durable_audit
  ) as w:
    await w.export(w.resolver(), "op-released")
    with _denied(HostServiceErrorReason.EXPORT_DENIED, "failed"):
      await w.export(w.resolver(projection=_FailingSecondTime()), "op-failed")
    w.grants.export.clear()
    with _denied(HostServiceErrorReason.UNAUTHORIZED, "export_purpose"):
      await w.export(w.resolver(), "op-denied")
    assert w.audit.statuses("op-released") == ["authorized", "released"]
    assert w.audit.statuses("op-failed") == ["authorized", "failed"]
    assert w.audit.statuses("op-denied") == ["denied"]
    # `authorized` alone is the crash state (test_export_crash.py).
    vocabulary = {r.status.value for r in w.audit.appended}
    assert vocabulary == {"authorized", "released", "denied", "failed"}
    stored = await w.audit.inner.records("op-denied")
    assert [(r.status.value, r.reason) for r in stored] == [
        ("denied", "unauthorized:export_purpose")
    ]


@pytest.mark.conformance("P5-EXP-12")
async def test_observers_and_logs_see_no_exported_content(
    mcp_apps: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
  caplog.set_level(logging.DEBUG)
  async with export_world(mcp_apps, tmp_path, "in_memory") as w:
    observed: list[str] = []

    async def observe(point: ExportPoint) -> None:
      observed.append(point.value)

    result = await w.export(w.resolver(hook=observe))
    w.grants.export.clear()
    with pytest.raises(HostServiceError):
      await w.export(w.resolver(hook=observe), "op-2")
    released = json.loads(result.body)
    fragments = [result.body.decode()]
    fragments += [
        json.dumps(v) for v in released.values() if v not in (None, False)
    ]
    texts = [caplog.text, repr(w.audit.appended), repr(result), *observed]
    for text in texts:
      for fragment in fragments:
        assert fragment not in text
      assert OWNER.principal_id not in text.replace(
          "principal_id='alice-principal'", ""
      )
    assert "mcp_apps host denied export: unauthorized" in caplog.text
    for record in w.audit.appended:
      assert set(dataclasses.asdict(record)) == {
          "operation_instance_id",
          "principal_id",
          "session",
          "incarnation",
          "event_id",
          "function_call_id",
          "record_id",
          "status",
          "reason",
          "recorded_at",
      }


@pytest.mark.conformance("P5-EXP-13", "P5-EAUD-06")
async def test_the_export_record_never_enters_model_context(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with export_world(mcp_apps, tmp_path, backend) as w:
    await w.export(w.resolver(), "op-unique-7f3a")
    record, _ = w.audit.appended
    llm = w.s.st.llm
    asked = len(llm.requests)
    await w.s.turn_events()
    assert len(llm.requests) > asked
    for request in llm.requests[asked:]:
      seen = request.model_dump_json()
      assert "op-unique-7f3a" not in seen
      assert record.record_id not in seen
      assert "released" not in seen and "authorized" not in seen
