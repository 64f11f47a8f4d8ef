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

"""Method-aware idempotency through the View channel, over a real server.

A View puts `_meta["com.google.adk/idempotency-key"]` on a call or a read.
The server's request log and effect counters say whether a replay reached
it; fresh admission (the post-queue barrier, and for a call the listing)
runs before any retained outcome is looked up.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any
from typing import Optional

from channel_support import call
from channel_support import open_channel
from channel_support import open_read_channel
from channel_support import read
from exec_ownership_support import eventually
from exec_ownership_support import stage
from google.adk.mcp_apps.affinity.errors import InvalidationReason
from google.adk.mcp_apps.binding.overrides import BindingOverrides
from google.adk.mcp_apps.contracts.principal_resolver import Principal
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.session_authorizer import SessionPurpose
from google.adk.mcp_apps.coordination.coordinator import session_coordinator
from google.adk.mcp_apps.operations import idempotency
from google.adk.mcp_apps.operations.app_call import APP_CALL_OPERATION
from google.adk.mcp_apps.operations.errors import OperationErrorReason
from google.adk.mcp_apps.operations.idempotency import RetainedOutcomes
from google.adk.mcp_apps.profile.limits import DeliveryLimits
from google.adk.mcp_apps.profile.policies import ResourcePolicySettings
from google.adk.mcp_apps.resources import ResourcePolicyEntry
from google.adk.mcp_apps.sealing.resolver import GatedResultResolver
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from mcp_apps_conformance_server import names
import pytest
from read_support import view_reads
from read_support import ViewReads
from sealing_support import OracleResolver
from sealing_support import TOOLSET
from sealing_support import widget_event

pytestmark = pytest.mark.integration

KEY = "com.google.adk/idempotency-key"


def keyed(message: dict[str, Any], key: Any) -> dict[str, Any]:
  """`message` with `key` as its idempotency key."""
  params = dict(message["params"])
  params["_meta"] = {KEY: key}
  return {**message, "params": params}


def buy(request_id: Any, key: Optional[str], sku: str = "k") -> dict[str, Any]:
  message = call(request_id, names.SIDE_EFFECT, {"key": sku})
  return message if key is None else keyed(message, key)


def reason_of(response: Any) -> str:
  assert response is not None and "error" in response, response
  return str(response["error"]["data"]["reason"])


def records(events: list[Any]) -> list[Any]:
  return [e for e in events if e.custom_metadata]


class Switchable:
  """A deployment's `SessionAuthorizer` whose grant the test revokes."""

  def __init__(self) -> None:
    self.allowed = True

  async def authorize(
      self,
      principal: Principal,
      session: SessionKey,
      purpose: SessionPurpose,
      *,
      widget: object = None,
  ) -> bool:
    return self.allowed and purpose is SessionPurpose.VIEW


@pytest.mark.conformance(
    "P4-IDEM-01", "P4-IDEM-07", "P4-IDEM-10", "P4-IDEM-23", "P2-SRS-10"
)
async def test_the_same_key_and_call_get_the_one_retained_outcome(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    channel = await open_channel(s)
    first = await channel.handle(buy(1, "order-1"), token=channel.token)
    again = await channel.handle(buy(2, "order-1"), token=channel.token)
    assert first is not None and again is not None
    assert (first["id"], again["id"]) == (1, 2)
    assert again["result"] == first["result"]
    # The server ran it once; ADK's own effects (callbacks, the audit
    # record and its seal) exist once.
    assert s.tool_calls(names.SIDE_EFFECT) == 1
    assert s.recorder.log.count(f"plugin_before_tool:{names.SIDE_EFFECT}") == 1
    (record,) = records(await s.stored())
    if backend == "sqlite":
      assert record.sealed_result_refs


@pytest.mark.conformance("P4-IDEM-11")
async def test_the_same_key_with_other_arguments_is_a_conflict(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    channel = await open_channel(s)
    await channel.handle(buy(1, "order-1", "a"), token=channel.token)
    other = await channel.handle(buy(2, "order-1", "b"), token=channel.token)
    assert reason_of(other) == OperationErrorReason.IDEMPOTENCY_CONFLICT.value
    assert s.tool_calls(names.SIDE_EFFECT) == 1


@pytest.mark.conformance("P4-IDEM-12")
async def test_one_key_on_a_call_and_on_a_read_conflicts(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    channel = await open_channel(s)
    done = await channel.handle(buy(1, "shared"), token=channel.token)
    assert done is not None and "result" in done
    uri = "ui://conformance/view.html"
    response = await channel.handle(
        keyed(read(2, uri), "shared"), token=channel.token
    )
    assert (
        reason_of(response) == OperationErrorReason.IDEMPOTENCY_CONFLICT.value
    )


@pytest.mark.conformance("P4-IDEM-03", "P4-IDEM-04", "P4-IDEM-05", "P4-IDEM-06")
async def test_malformed_keys_are_refused_typed_before_anything_runs(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    channel = await open_channel(s)
    for bad in ("", "k" * 129, "two words", "ключ", 7, None, ["k"]):
      response = await channel.handle(
          keyed(call(1, names.SIDE_EFFECT, {"key": "k"}), bad),
          token=channel.token,
      )
      assert response is not None and response["error"]["code"] == -32602
      assert reason_of(response) == (
          OperationErrorReason.IDEMPOTENCY_KEY_INVALID.value
      )
    assert s.tool_calls(names.SIDE_EFFECT) == 0
    for good in ("k", "K" * 128, "a.b_c-9"):
      response = await channel.handle(buy(2, good, good), token=channel.token)
      assert response is not None and "result" in response


@pytest.mark.conformance("P4-IDEM-17")
async def test_without_a_key_identical_calls_both_run(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    channel = await open_channel(s)
    for request_id in (1, 2):
      response = await channel.handle(
          buy(request_id, None), token=channel.token
      )
      assert response is not None and "result" in response
    assert s.tool_calls(names.SIDE_EFFECT) == 2


async def _deny_principal(s: Any, channel: Any) -> None:
  s.st.registry.profile.session_authorizer.allowed = False


async def _revoke_lease(s: Any, channel: Any) -> None:
  channel.revoke_lease()


async def _remove_tool(s: Any, channel: Any) -> None:
  await s.hold.call_tool(names.REMOVE_LISTED_TOOL, {"name": names.SIDE_EFFECT})


async def _rebind(s: Any, channel: Any) -> None:
  await s.st.registry.rebind(s.st.registry.profile)


async def _teardown(s: Any, channel: Any) -> None:
  channel.teardown()


async def _reconnect(s: Any, channel: Any) -> None:
  await s.st.registry.connections.invalidate(
      s.hold.generation_id, InvalidationReason.TRANSPORT_FAILURE
  )


REPLAY_DENIALS = [
    pytest.param(
        _deny_principal,
        OperationErrorReason.UNAUTHORIZED,
        marks=pytest.mark.conformance("P4-IDEM-24"),
        id="authorizer",
    ),
    pytest.param(
        _revoke_lease,
        OperationErrorReason.LEASE_INVALID,
        marks=pytest.mark.conformance("P4-IDEM-25"),
        id="lease",
    ),
    pytest.param(
        _remove_tool,
        OperationErrorReason.ADMISSION_DENIED,
        marks=pytest.mark.conformance("P4-IDEM-26"),
        id="visibility",
    ),
    pytest.param(
        _rebind,
        OperationErrorReason.BINDING_CHANGED,
        marks=pytest.mark.conformance("P4-IDEM-27"),
        id="binding",
    ),
    pytest.param(
        _teardown,
        OperationErrorReason.LEASE_INVALID,
        marks=pytest.mark.conformance("P4-IDEM-28"),
        id="teardown",
    ),
    pytest.param(
        _reconnect,
        OperationErrorReason.VIEW_GENERATION_INVALIDATED,
        marks=pytest.mark.conformance("P4-IDEM-35"),
        id="connection",
    ),
]


@pytest.mark.parametrize("change, reason", REPLAY_DENIALS)
async def test_fresh_admission_denies_a_retained_call_before_its_replay(
    mcp_apps: Any, tmp_path: Path, change: Any, reason: Any
) -> None:
  async with stage(
      mcp_apps,
      tmp_path,
      "sqlite",
      options={"removable_tools": True},
      profile_fields={"session_authorizer": Switchable()},
  ) as s:
    channel = await open_channel(s)
    first = await channel.handle(buy(1, "order-1"), token=channel.token)
    assert first is not None and "result" in first
    await change(s, channel)
    replay = await channel.handle(buy(2, "order-1"), token=channel.token)
    # (A torn-down View's channel is closed: its lease refuses the replay.)
    assert reason_of(replay) == reason.value
    assert s.tool_calls(names.SIDE_EFFECT) == 1


@pytest.mark.conformance("P4-IDEM-19")
async def test_after_a_reconnect_the_old_outcome_is_never_replayed(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with stage(mcp_apps, tmp_path, "sqlite") as s:
    ledger = RetainedOutcomes()
    old = await open_channel(s, outcomes=ledger)
    await old.handle(buy(1, "order-1"), token=old.token)
    await _reconnect(s, old)
    # The View is rendered again on a new generation; even under the same
    # View id and ledger, the key runs again there.
    event = widget_event(await s.st.turn(s.sid, (names.OPEN_VIEW, {})))
    (widget,) = event.actions.render_ui_widgets
    hold = s.st.registry.render_reservations.take(TOOLSET, s.key, widget.id)
    assert hold is not None and hold.generation_id != s.hold.generation_id
    try:
      new = await open_channel(
          s, view=(event, hold), view_id=old.view_id, outcomes=ledger
      )
      again = await new.handle(buy(2, "order-1"), token=new.token)
      assert again is not None and "result" in again
      assert s.tool_calls(names.SIDE_EFFECT) == 2
    finally:
      hold.release()


@pytest.mark.conformance("P4-IDEM-20", "P2-SRS-19")
async def test_after_a_restart_the_key_runs_again_and_the_first_record_stands(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with stage(mcp_apps, tmp_path, "sqlite") as s:
    before = await open_channel(s, outcomes=RetainedOutcomes())
    await before.handle(buy(1, "order-1"), token=before.token)
    # A restarted process has an empty ledger (records are process-local).
    after = await open_channel(
        s, view_id=before.view_id, outcomes=RetainedOutcomes()
    )
    again = await after.handle(buy(2, "order-1"), token=after.token)
    assert again is not None and "result" in again
    assert s.tool_calls(names.SIDE_EFFECT) == 2
    first, second = records(await s.stored())
    assert first.sealed_result_refs and second.sealed_result_refs
    # And the documentation says so.
    assert "restart forgets them" in " ".join(idempotency.__doc__.split())


# -- reads -------------------------------------------------------------------


@pytest.fixture
async def stdio_view(
    tmp_path: Path,
    mcp_apps: Any,
    start_server: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> Any:
  async with view_reads(
      "stdio", tmp_path, mcp_apps, start_server, monkeypatch
  ) as reads:
    yield reads


@pytest.fixture
async def modern_view(
    tmp_path: Path,
    mcp_apps: Any,
    start_server: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> Any:
  async with view_reads(
      "modern_http", tmp_path, mcp_apps, start_server, monkeypatch
  ) as reads:
    yield reads


@pytest.mark.conformance("P4-IDEM-02", "P4-IDEM-13", "P4-IDEM-15")
async def test_keyed_reads_replay_by_canonical_uri_and_conflict_across_uris(
    stdio_view: ViewReads,
) -> None:
  view = stdio_view
  channel = await open_read_channel(view)
  before = view.reads()
  first = await channel.handle(
      keyed(read(1, names.BUNDLE_URI), "r-1"), token=channel.token
  )
  respelled = names.BUNDLE_URI.replace("ui://conformance", "UI://Conformance")
  again = await channel.handle(
      keyed(read(2, respelled), "r-1"), token=channel.token
  )
  assert first is not None and again is not None
  assert again["result"] == first["result"]
  assert view.reads() == before + 1
  other = await channel.handle(
      keyed(read(3, names.MULTI_URI), "r-1"), token=channel.token
  )
  assert reason_of(other) == OperationErrorReason.IDEMPOTENCY_CONFLICT.value
  assert view.reads() == before + 1


@pytest.mark.conformance("P4-IDEM-08", "P4-IDEM-21")
async def test_on_the_modern_wire_keys_are_honoured_within_the_servers_ttl(
    modern_view: ViewReads,
) -> None:
  view = modern_view
  channel = await open_read_channel(view)
  calls_before = _logged(view, "tools/call")
  for request_id in (1, 2):
    response = await channel.handle(
        keyed(call(request_id, names.SIDE_EFFECT, {"key": "m"}), "c-1"),
        token=channel.token,
    )
    assert response is not None and "result" in response
  assert _logged(view, "tools/call") == calls_before + 1
  # The SDK's server marks reads `ttlMs: 0`: nothing may be retained, so
  # the keyed read runs again.
  reads_before = view.reads()
  for request_id in (3, 4):
    response = await channel.handle(
        keyed(read(request_id, names.BUNDLE_URI), "r-1"), token=channel.token
    )
    assert response is not None and response["result"]["ttlMs"] == 0
  assert view.reads() == reads_before + 2


def _logged(view: ViewReads, method: str) -> int:
  import json  # pylint: disable=g-import-not-at-top

  if not view.log.exists():
    return 0
  return sum(
      json.loads(line)["method"] == method
      for line in view.log.read_text().splitlines()
  )


def _narrow(view: ViewReads, **overrides: Any) -> None:
  view.stack.registry.narrow(TOOLSET, BindingOverrides(**overrides))


@pytest.mark.conformance("P4-IDEM-29")
async def test_a_retained_read_is_denied_once_its_policy_entry_is_removed(
    stdio_view: ViewReads,
) -> None:
  view = stdio_view
  channel = await open_read_channel(view)
  await channel.handle(
      keyed(read(1, names.BUNDLE_URI), "r"), token=channel.token
  )
  before = view.reads()
  _narrow(
      view,
      resource_policy=ResourcePolicySettings(
          [ResourcePolicyEntry.exact(names.MULTI_URI)]
      ),
  )
  replay = await channel.handle(
      keyed(read(2, names.BUNDLE_URI), "r"), token=channel.token
  )
  assert reason_of(replay) == OperationErrorReason.RESOURCE_POLICY_DENIED.value
  assert view.reads() == before


@pytest.mark.conformance("P4-IDEM-30")
async def test_after_a_policy_change_a_retained_read_is_not_replayed(
    stdio_view: ViewReads,
) -> None:
  view = stdio_view
  channel = await open_read_channel(view)
  await channel.handle(
      keyed(read(1, names.BUNDLE_URI), "r"), token=channel.token
  )
  before = view.reads()
  _narrow(
      view,
      resource_policy=ResourcePolicySettings(
          [ResourcePolicyEntry.prefix(names.BUNDLE_PREFIX)]
      ),
  )
  again = await channel.handle(
      keyed(read(2, names.BUNDLE_URI), "r"), token=channel.token
  )
  # Still admitted, under a new policy revision: read again, not replayed.
  assert again is not None and "result" in again
  assert view.reads() == before + 1


@pytest.mark.conformance("P4-IDEM-31")
async def test_a_change_affecting_only_a_returned_item_denies_the_replay(
    stdio_view: ViewReads,
) -> None:
  view = stdio_view
  channel = await open_read_channel(view)
  first = await channel.handle(
      keyed(read(1, names.BUNDLE_URI), "r"), token=channel.token
  )
  assert first is not None and len(first["result"]["contents"]) == 4
  # The request URI stays admitted; its sibling items no longer are.
  _narrow(
      view,
      resource_policy=ResourcePolicySettings(
          [ResourcePolicyEntry.exact(names.BUNDLE_URI)]
      ),
  )
  replay = await channel.handle(
      keyed(read(2, names.BUNDLE_URI), "r"), token=channel.token
  )
  assert reason_of(replay) == OperationErrorReason.READ_RESPONSE_REJECTED.value


@pytest.mark.conformance("P4-IDEM-32")
async def test_after_the_limits_shrink_a_retained_read_is_denied(
    stdio_view: ViewReads,
) -> None:
  view = stdio_view
  channel = await open_read_channel(view)
  first = await channel.handle(
      keyed(read(1, names.BUNDLE_URI), "r"), token=channel.token
  )
  assert first is not None and "result" in first
  _narrow(view, delivery=DeliveryLimits(max_content_items=2))
  replay = await channel.handle(
      keyed(read(2, names.BUNDLE_URI), "r"), token=channel.token
  )
  assert reason_of(replay) == OperationErrorReason.READ_RESPONSE_REJECTED.value


@pytest.mark.conformance("P4-IDEM-33")
async def test_after_its_retention_a_keyed_read_runs_again(
    stdio_view: ViewReads,
) -> None:
  view = stdio_view
  now = [0.0]
  ledger = RetainedOutcomes(retention_seconds=30.0, clock=lambda: now[0])
  channel = await open_read_channel(view, outcomes=ledger)
  before = view.reads()
  await channel.handle(
      keyed(read(1, names.BUNDLE_URI), "r"), token=channel.token
  )
  await channel.handle(
      keyed(read(2, names.BUNDLE_URI), "r"), token=channel.token
  )
  assert view.reads() == before + 1
  now[0] += 31.0
  again = await channel.handle(
      keyed(read(3, names.BUNDLE_URI), "r"), token=channel.token
  )
  assert again is not None and "result" in again
  assert view.reads() == before + 2


class HeldAudits(SqliteSessionService):
  """The deployment's SQLite Session service; the test holds the append of
  app-operation records until it opens `release`."""

  def __init__(self, path: str) -> None:
    super().__init__(path)
    self.release = asyncio.Event()
    self.held = asyncio.Event()

  async def append_event(self, session: Any, event: Any) -> Any:
    if (event.custom_metadata or {}).get("mcp_app_operation"):
      self.held.set()
      await self.release.wait()
    return await super().append_event(session, event)


@pytest.mark.conformance("P2-SRS-18")
async def test_a_late_append_stands_and_the_key_keeps_the_timeout_error(
    mcp_apps: Any, tmp_path: Path
) -> None:
  services: list[HeldAudits] = []

  def held_service(path: Path) -> HeldAudits:
    services.append(HeldAudits(str(path / "sessions.db")))
    return services[0]

  async with stage(
      mcp_apps, tmp_path, "sqlite", session_service=held_service
  ) as s:
    (service,) = services
    channel = await open_channel(s, append_timeout=0.05)
    # The append is held at the service, so the deadline passes first.
    first = await channel.handle(buy(1, "order-1"), token=channel.token)
    assert service.held.is_set()
    assert reason_of(first) == OperationErrorReason.APPEND_TIMEOUT.value
    # The late append still owns the Session: nothing interleaves with it.
    owner = session_coordinator().owner(s.key)
    assert owner is not None and owner.operation == APP_CALL_OPERATION
    service.release.set()
    await eventually(
        lambda: session_coordinator().owner(s.key) is None, "the late commit"
    )
    (record,) = records(await s.stored())
    resolved = await OracleResolver(s.st.profile, s.st.session_service).resolve(
        s.key,
        event_id=record.id,
        function_call_id=f"{channel.operation_prefix}:1",
    )
    assert resolved.full_result()["structuredContent"]
    # Inside the retained boundary nothing runs again: the key keeps the
    # timeout error.
    again = await channel.handle(buy(2, "order-1"), token=channel.token)
    assert again is not None and again["error"] == first["error"]
    assert s.tool_calls(names.SIDE_EFFECT) == 1
    assert len(records(await s.stored())) == 1
