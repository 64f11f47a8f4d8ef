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


"""The purpose-bound export resolver: authorization, checks, output, limits.

Every test exports a sealed result a real Runner turn produced over the
conformance server (P5-EXP, RFC §7).
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

from export_support import export_world
from export_support import OWNER
from export_support import request_with
from export_support import TOKEN
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.session_authorizer import SessionPurpose
from google.adk.mcp_apps.contracts.session_authorizer import WidgetTarget
from google.adk.mcp_apps.event_policy.errors import EventPolicyError
from google.adk.mcp_apps.event_policy.errors import EventPolicyReason
from google.adk.mcp_apps.host.errors import HostServiceError
from google.adk.mcp_apps.host.errors import HostServiceErrorReason
from google.adk.mcp_apps.host.export import ExportLimits
from google.adk.mcp_apps.host.export import ExportPoint
from google.adk.mcp_apps.operations.sessions import FirstPartySessions
from google.adk.mcp_apps.sealing.resolver import export_permit_issuer
from google.adk.mcp_apps.sealing.resolver import ExportPermit
from google.adk.mcp_apps.sealing.resolver import GatedResultResolver
from google.adk.mcp_apps.sealing.resolver import ResolutionFault
from google.adk.mcp_apps.sealing.resolver import SealedResolutionError
import pytest

pytestmark = pytest.mark.integration


def _denied(reason: HostServiceErrorReason, detail: str = "") -> Any:
  def check(e: HostServiceError) -> bool:
    return e.reason is reason and (not detail or e.detail == detail)

  return pytest.raises(HostServiceError, check=check)


@pytest.mark.conformance("P5-EXP-09", "P5-EXP-10", "P2-COLD-15", "P5-EXP-26")
async def test_export_releases_the_canonical_sealed_result_and_nothing_else(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with export_world(mcp_apps, tmp_path, backend) as w:
    expected = await w.sealed_body()
    seen: list[tuple[ExportPoint, list[str]]] = []
    reservations = w.s.st.registry.render_reservations

    async def observe(point: ExportPoint) -> None:
      seen.append((point, w.audit.statuses("op-1")))

    reads_before = len(w.reads())
    result = await w.export(w.resolver(hook=observe))

    assert result.body == expected
    assert result.media_type == "application/json"
    assert b"<html" not in result.body.lower()
    assert result.record_status.value == "released"
    # No template fetch, no render reservation, no View grant.
    assert len(w.reads()) == reads_before == 0
    assert reservations.peek("conf", w.key, w.call_id) is None
    assert not hasattr(result, "grant") and not hasattr(result, "document")
    # `authorized` was durable before the recheck, `released` before return.
    assert seen == [
        (ExportPoint.QUEUED, []),
        (ExportPoint.LOADED, []),
        (ExportPoint.AUDITED, ["authorized"]),
        (ExportPoint.RECHECKED, ["authorized"]),
        (ExportPoint.RELEASED, ["authorized", "released"]),
    ]
    stored = await w.profile.export_audit_store.records("op-1")
    assert [r.status.value for r in stored] == ["authorized", "released"]
    assert {r.record_id for r in stored} != {""}
    assert w.grants.asked[-1] == (
        SessionPurpose.EXPORT,
        WidgetTarget("conf", w.event_id, w.call_id),
    )


@pytest.mark.conformance("P2-COLD-15")
async def test_gated_resolver_releases_nothing_without_a_view_or_permit(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with export_world(mcp_apps, tmp_path, "in_memory") as w:
    gated = GatedResultResolver(w.profile, w.s.st.session_service)
    with pytest.raises(SealedResolutionError) as info:
      await gated.resolve(
          w.key, event_id=w.event_id, function_call_id=w.call_id
      )
    assert info.value.fault is ResolutionFault.NO_AUTHORITY
    with pytest.raises(TypeError):
      ExportPermit(object(), w.key, 0, w.event_id, w.call_id)
    # The mint went to the export resolver when it was imported.
    with pytest.raises(RuntimeError):
      export_permit_issuer()
    cold = await gated.resolve_refresh_record(
        w.key, event_id=w.event_id, function_call_id=w.call_id
    )
    assert cold.record.tool_name and not hasattr(cold, "envelope")


@pytest.mark.conformance("P5-EXP-01", "P5-CTR-02")
async def test_a_view_only_principal_is_denied_export(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with export_world(mcp_apps, tmp_path, backend) as w:
    w.grants.export.clear()
    with _denied(HostServiceErrorReason.UNAUTHORIZED):
      await w.export(w.resolver())
    assert w.audit.statuses("op-1") == ["denied"]
    assert w.grants.asked[-1][0] is SessionPurpose.EXPORT


@pytest.mark.conformance("P5-EXP-02")
async def test_a_revoked_principal_is_denied_at_call_time(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with export_world(mcp_apps, tmp_path, "in_memory") as w:
    resolver = w.resolver()
    await w.export(resolver, "op-1")
    w.grants.export.discard(OWNER.principal_id)
    with _denied(HostServiceErrorReason.UNAUTHORIZED):
      await w.export(resolver, "op-2")
    assert w.audit.statuses("op-2") == ["denied"]


@pytest.mark.conformance("P5-EXP-03")
async def test_an_old_credential_context_is_denied(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with export_world(mcp_apps, tmp_path, "in_memory") as w:
    resolver = w.resolver()
    await w.export(resolver, "op-1", request=request_with(TOKEN))
    del w.principals.tokens[TOKEN]  # the credential was rotated away
    w.principals.tokens["bearer-alice-2"] = OWNER.principal_id
    with _denied(HostServiceErrorReason.UNAUTHENTICATED, "credential"):
      await w.export(resolver, "op-2", request=request_with(TOKEN))
    # A context that now resolves to someone else is old too.
    w.principals.tokens[TOKEN] = "mallory"
    with _denied(HostServiceErrorReason.UNAUTHENTICATED, "credential"):
      await w.export(resolver, "op-3", request=request_with(TOKEN))
    assert w.audit.statuses("op-2") == w.audit.statuses("op-3") == ["denied"]


@pytest.mark.conformance("P5-EXP-04")
async def test_a_locator_swapped_across_tenants_fails_typed(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with export_world(mcp_apps, tmp_path, backend) as w:
    service = w.s.st.session_service
    other = await service.create_session(app_name="sealing", user_id="bob")
    own = await service.create_session(app_name="sealing", user_id="alice")
    resolver = w.resolver()
    for n, key in enumerate((
        SessionKey("sealing", "bob", w.key.session_id),
        SessionKey("other-app", "alice", w.key.session_id),
        SessionKey("sealing", "bob", other.id),
        SessionKey("sealing", "alice", own.id),
    )):
      with pytest.raises(HostServiceError) as info:
        await w.export(resolver, f"op-{n}", session=key)
      assert info.value.reason is HostServiceErrorReason.EXPORT_DENIED
      assert info.value.detail in ("session_not_active", "event_missing")
      assert w.audit.statuses(f"op-{n}") == ["denied"]


@pytest.mark.conformance("P5-EXP-08")
async def test_a_mismatched_event_or_call_correlation_fails_typed(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with export_world(mcp_apps, tmp_path, backend) as w:
    events = (
        await w.s.st.session_service.get_session(
            app_name="sealing", user_id="alice", session_id=w.key.session_id
        )
    ).events
    user_event = next(e for e in events if e.author == "user")
    resolver = w.resolver()
    with _denied(HostServiceErrorReason.EXPORT_DENIED, "no_function_response"):
      await w.export(resolver, "op-1", event_id=user_event.id)
    with _denied(HostServiceErrorReason.EXPORT_DENIED, "no_function_response"):
      await w.export(resolver, "op-2", function_call_id="call-of-another")
    with _denied(HostServiceErrorReason.EXPORT_DENIED, "event_missing"):
      await w.export(resolver, "op-3", event_id="no-such-event")


@pytest.mark.conformance("P5-EXP-05", "P5-EXP-06")
async def test_deleted_and_recreated_sessions_fail_typed(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with export_world(mcp_apps, tmp_path, "sqlite") as w:
    sessions = FirstPartySessions.for_profile(w.profile, w.s.st.session_service)
    await sessions.delete("sealing", "alice", w.key.session_id)
    resolver = w.resolver()
    with _denied(HostServiceErrorReason.EXPORT_DENIED, "session_not_active"):
      await w.export(resolver, "op-1")
    await sessions.create("sealing", "alice", session_id=w.key.session_id)
    with _denied(HostServiceErrorReason.EXPORT_DENIED, "event_missing"):
      await w.export(resolver, "op-2")
    assert w.audit.statuses("op-2") == ["denied"]


@pytest.mark.conformance("P5-EXP-07")
async def test_an_expired_binding_key_fails_typed(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with export_world(mcp_apps, tmp_path, "sqlite") as w:
    keys = w.profile.key_provider
    await keys.invalidate(keys.active_key().key_id)
    with _denied(HostServiceErrorReason.EXPORT_DENIED, "key_unavailable"):
      await w.export(w.resolver())
    assert w.audit.statuses("op-1") == ["denied"]


@pytest.mark.conformance("P5-EXP-11")
async def test_byte_rate_bulk_and_retention_limits_deny(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with export_world(mcp_apps, tmp_path, "in_memory") as w:
    size = len(await w.sealed_body())
    small = w.resolver(limits=ExportLimits(max_bytes=size - 1))
    with _denied(HostServiceErrorReason.LIMIT_EXCEEDED, "bytes"):
      await w.export(small, "op-bytes")
    now = [w.s.session.last_update_time + 1.0]
    limits = ExportLimits(
        max_bytes=size, max_per_principal=2, max_per_session=1
    )
    resolver = w.resolver(limits=limits, clock=lambda: now[0])
    await w.export(resolver, "op-1")
    with _denied(HostServiceErrorReason.LIMIT_EXCEEDED, "bulk"):
      await w.export(resolver, "op-2")
    resolver.limits = dataclasses.replace(limits, max_per_session=5)
    await w.export(resolver, "op-3")
    with _denied(HostServiceErrorReason.LIMIT_EXCEEDED, "rate"):
      await w.export(resolver, "op-4")
    now[0] += limits.window_seconds  # a new window
    await w.export(resolver, "op-5")
    now[0] += limits.retention_seconds
    with _denied(HostServiceErrorReason.LIMIT_EXCEEDED, "retention"):
      await w.export(resolver, "op-6")
    for op in ("op-bytes", "op-2", "op-4", "op-6"):
      assert w.audit.statuses(op) == ["denied"]


@pytest.mark.conformance("P5-EXP-23")
async def test_a_streaming_export_is_rejected(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with export_world(mcp_apps, tmp_path, "in_memory") as w:
    with _denied(HostServiceErrorReason.UNSUPPORTED, "streaming_export"):
      await w.export(w.resolver(), stream=True)
    assert w.audit.statuses("op-1") == ["denied"]
    result = await w.export(w.resolver(), "op-2")
    assert isinstance(result.body, bytes)


@pytest.mark.conformance("P5-EXP-24")
async def test_duplicate_retries_are_idempotent_by_operation_instance(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with export_world(mcp_apps, tmp_path, "in_memory") as w:
    resolver = w.resolver()
    first, second = await asyncio.gather(
        w.export(resolver, "op-1"), w.export(resolver, "op-1")
    )
    third = await w.export(resolver, "op-1")
    assert first.body == second.body == third.body
    assert w.audit.statuses("op-1") == ["authorized", "released"]
    w.grants.export.clear()
    errors = []
    for _ in range(2):
      with pytest.raises(HostServiceError) as info:
        await w.export(resolver, "op-2")
      errors.append(info.value)
    assert errors[0] is errors[1]
    assert w.audit.statuses("op-2") == ["denied"]
    # The same instance id for another target is refused, not replayed.
    with _denied(HostServiceErrorReason.EXPORT_DENIED, "operation_reused"):
      await w.export(resolver, "op-1", function_call_id="other")


@pytest.mark.conformance("P5-EXP-27", "P5-EXP-28", "P5-EAUD-06")
async def test_audit_write_failure_or_outage_denies_with_nothing_released(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with export_world(mcp_apps, tmp_path, "in_memory") as w:
    w.audit.fail_writes = True
    with _denied(HostServiceErrorReason.AUDIT_UNAVAILABLE, "audit_write"):
      await w.export(w.resolver(), "op-1")
    w.audit.fail_writes = False
    w.audit.down = True
    with _denied(HostServiceErrorReason.AUDIT_UNAVAILABLE, "audit_write"):
      await w.export(w.resolver(), "op-2")
    w.audit.down = False
    assert w.audit.statuses("op-1") == w.audit.statuses("op-2") == []


@pytest.mark.conformance("P5-EXP-29")
async def test_transport_failure_after_release_leaves_a_released_record(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with export_world(mcp_apps, tmp_path, "in_memory") as w:

    async def send(body: bytes) -> None:
      raise ConnectionResetError("client went away")

    result = await w.export(w.resolver())
    with pytest.raises(ConnectionResetError):
      await send(result.body)
    stored = await w.profile.export_audit_store.records("op-1")
    assert [r.status.value for r in stored] == ["authorized", "released"]
    assert all("deliver" not in r.reason for r in stored)


@pytest.mark.conformance("P5-EXP-25")
async def test_export_from_a_same_session_callback_is_refused(
    mcp_apps: Any, tmp_path: Path
) -> None:
  refused: list[HostServiceError] = []
  holder: dict[str, Any] = {}

  async def after_tool(tool: Any, args: Any, tool_context: Any, **_: Any):
    w = holder.get("world")
    if w is not None:
      try:
        await w.export(w.resolver(), "op-cb")
      except HostServiceError as e:
        refused.append(e)
    return None

  async with export_world(
      mcp_apps,
      tmp_path,
      "in_memory",
      agent_fields={"after_tool_callback": after_tool},
  ) as w:
    holder["world"] = w
    w.s.st.llm.steps = [[("open_view", {})]]
    # The callback guard also fails the call whose callback tried it.
    with pytest.raises(Exception) as info:
      await w.s.turn_events()
    chain: list[BaseException] = []
    error: Any = info.value
    while error is not None and error not in chain:
      chain.append(error)
      error = error.__cause__ or error.__context__
    assert any(
        isinstance(e, EventPolicyError)
        and e.reason is EventPolicyReason.SAME_SESSION_REENTRY
        for e in chain
    )
    assert [e.detail for e in refused] == ["same_session_reentry"]
    assert w.audit.statuses("op-cb") == ["denied"]
