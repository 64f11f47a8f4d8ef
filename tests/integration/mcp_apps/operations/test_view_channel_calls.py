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

"""A View's `tools/call` through its governed channel, over a real server.

Each test renders a View with a real Runner turn (`open_view` on the
conformance server over stdio), opens the View's channel and drives it with
the View's JSON-RPC messages; the server's request log and effect counters
say what reached it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from channel_support import call
from channel_support import cancelled
from channel_support import open_channel
from exec_ownership_support import BOUND
from exec_ownership_support import eventually
from exec_ownership_support import stage
from google.adk.mcp_apps.affinity.errors import InvalidationReason
from google.adk.mcp_apps.binding.overrides import BindingOverrides
from google.adk.mcp_apps.catalog.app_catalog import AppCallPolicy
from google.adk.mcp_apps.contracts.principal_resolver import Principal
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.session_authorizer import SessionPurpose
from google.adk.mcp_apps.coordination.coordinator import session_coordinator
from google.adk.mcp_apps.coordination.sessions import SessionCoordination
from google.adk.mcp_apps.facades.confirmation import AppCallConfirmation
from google.adk.mcp_apps.facades.confirmation import ConfirmationPermit
from google.adk.mcp_apps.lifecycle import SessionLifecycleManager
from google.adk.mcp_apps.operations.errors import OperationErrorReason
from google.adk.mcp_apps.operations.sessions import FirstPartySessions
from google.adk.mcp_apps.operations.view_channel import TOOL_CANCELLED
from google.adk.mcp_apps.profile.fingerprint import binding_revision
from mcp_apps_conformance_server import names
import pytest
from sealing_support import APP
from sealing_support import ServerGate
from sealing_support import TOOLSET
from sealing_support import USER

pytestmark = pytest.mark.integration


def reason_of(response: Any) -> str:
  """The channel refusal's reason."""
  assert response is not None and "error" in response, response
  return str(response["error"]["data"]["reason"])


async def queued(s: Any, channel: Any, message: dict[str, Any]) -> Any:
  """Sends `message` while the test owns the Session; returns the ownership
  and the pending response once the operation waits in the queue."""
  # Owned from a task of its own: the test's context owns nothing.
  ownership = await asyncio.ensure_future(
      session_coordinator().acquire(s.key, "test.queue_holder")
  )
  task = asyncio.ensure_future(channel.handle(message, token=channel.token))
  await eventually(
      lambda: session_coordinator().waiting(s.key) == 1, "the call queues"
  )
  return ownership, task


def nothing_ran(s: Any, tool: str = names.SIDE_EFFECT) -> None:
  """No callback saw `tool` and the server never received its call."""
  assert s.tool_calls(tool) == 0
  assert not [x for x in s.recorder.log if x.endswith(f":{tool}")]
  assert all(tool not in x for x in s.agent_log.log)


@pytest.mark.conformance("P4-CALL-01", "P4-CALL-07")
async def test_a_view_call_is_governed_and_gets_one_terminal_result(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    channel = await open_channel(s)
    response = await channel.handle(
        call(7, names.SIDE_EFFECT, {"key": "k"}), token=channel.token
    )
    assert response is not None and response["id"] == 7
    assert "result" in response and not response["result"].get("isError")
    assert s.tool_calls(names.SIDE_EFFECT) == 1
    # Governed: the plugins' tool phases ran, and one audit record stands.
    assert f"plugin_before_tool:{names.SIDE_EFFECT}" in s.recorder.log
    assert s.cache.get(f"{channel.operation_prefix}:1") is not None
    assert channel.live_ids == ()


@pytest.mark.conformance("P4-CALL-02")
async def test_a_view_cancel_gets_no_late_response_and_a_tool_cancelled(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  sent: list[dict[str, Any]] = []
  async with ServerGate() as gate:
    async with stage(mcp_apps, tmp_path, backend, gate=gate) as s:
      channel = await open_channel(s, sent=sent)
      pending = asyncio.ensure_future(
          channel.handle(
              call(1, names.GATED_VIEW, {"tag": "a"}), token=channel.token
          )
      )
      await asyncio.wait_for(gate.entered.wait(), BOUND)
      assert await channel.handle(cancelled(1), token=channel.token) is None
      assert await asyncio.wait_for(pending, BOUND) is None
      assert [m["method"] for m in sent] == [TOOL_CANCELLED]
      gate.open()


@pytest.mark.conformance("P4-CALL-04")
async def test_a_view_cannot_resume_or_cancel_a_confirmation(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    channel = await open_channel(s)
    for meta in (
        {"com.google.adk/confirmation": {"confirmed": True}},
        {"com.google.adk/confirmation/cancel": True},
    ):
      response = await channel.handle(
          call(1, names.SIDE_EFFECT, {"key": "k"}, _meta=meta),
          token=channel.token,
      )
      assert reason_of(response) == OperationErrorReason.HOST_ONLY.value
    nothing_ran(s)


@pytest.mark.conformance("P4-CALL-06")
async def test_a_disconnect_mid_call_is_a_cancellation_cached_once(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with ServerGate() as gate:
    async with stage(mcp_apps, tmp_path, backend, gate=gate) as s:
      channel = await open_channel(s)
      pending = asyncio.ensure_future(
          channel.handle(
              call(1, names.GATED_VIEW, {"tag": "a"}), token=channel.token
          )
      )
      await asyncio.wait_for(gate.entered.wait(), BOUND)
      # The result and the disconnect race: the gate opens as the channel
      # goes away; whichever terminal wins is the only one.
      gate.open()
      channel.disconnect()
      assert await asyncio.wait_for(pending, BOUND) is None
      outcome = s.cache.get(f"{channel.operation_prefix}:1")
      assert outcome is not None
      stored = await s.stored()
      records = [e for e in stored if e.custom_metadata]
      assert len(records) <= 1
      if outcome.cause is not None:
        assert outcome.cause.reason is OperationErrorReason.DISCONNECTED
      # Later lookups see the same outcome object.
      assert s.cache.get(f"{channel.operation_prefix}:1") is outcome


@pytest.mark.conformance("P4-CALL-08", "P4-BAR-08")
async def test_a_call_on_an_invalidated_generation_fails_typed_and_never_runs(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    channel = await open_channel(s)
    ownership, pending = await queued(
        s, channel, call(1, names.SIDE_EFFECT, {"key": "k"})
    )
    await s.st.registry.connections.invalidate(
        s.hold.generation_id, InvalidationReason.TRANSPORT_FAILURE
    )
    ownership.release()
    response = await asyncio.wait_for(pending, BOUND)
    assert reason_of(response) == (
        OperationErrorReason.VIEW_GENERATION_INVALIDATED.value
    )
    # Arriving after the invalidation: the same typed error.
    late = await channel.handle(
        call(2, names.SIDE_EFFECT, {"key": "k"}), token=channel.token
    )
    assert reason_of(late) == (
        OperationErrorReason.VIEW_GENERATION_INVALIDATED.value
    )
    nothing_ran(s)


@pytest.mark.conformance("P4-JID-01", "P4-JID-07")
async def test_a_live_id_cannot_be_reused_on_its_channel_until_it_completes(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with ServerGate() as gate:
    async with stage(mcp_apps, tmp_path, backend, gate=gate) as s:
      channel = await open_channel(s)
      first = asyncio.ensure_future(
          channel.handle(
              call(1, names.GATED_VIEW, {"tag": "a"}), token=channel.token
          )
      )
      await asyncio.wait_for(gate.entered.wait(), BOUND)
      for duplicate in (
          call(1, names.SIDE_EFFECT, {"key": "k"}),
          call(1, "no_such_tool"),
      ):
        response = await channel.handle(duplicate, token=channel.token)
        assert response is not None and response["id"] is None
        assert response["error"]["code"] == -32600
        assert response["error"]["data"] == {
            "reason": OperationErrorReason.DUPLICATE_REQUEST_ID.value,
            "requestId": 1,
        }
      # The string id "1" is another id: it is admitted (and queues behind
      # the first, which owns the Session).
      other = asyncio.ensure_future(
          channel.handle(
              call("1", names.SIDE_EFFECT, {"key": "k"}), token=channel.token
          )
      )
      await eventually(lambda: len(channel.live_ids) == 2, "both are live")
      gate.open()
      done = await asyncio.wait_for(first, BOUND)
      assert done is not None and done["id"] == 1 and "result" in done
      second = await asyncio.wait_for(other, BOUND)
      assert second is not None and second["id"] == "1" and "result" in second
      again = await channel.handle(
          call(1, names.SIDE_EFFECT, {"key": "k"}), token=channel.token
      )
      assert again is not None and again["id"] == 1 and "result" in again
      assert s.tool_calls(names.SIDE_EFFECT) == 2


@pytest.mark.conformance("P4-JID-04", "P4-JID-08")
async def test_equal_ids_on_two_views_channels_both_proceed(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with ServerGate() as gate:
    async with stage(mcp_apps, tmp_path, backend, gate=gate) as s:
      one = await open_channel(s)
      two = await open_channel(s)
      assert one.view_id != two.view_id
      first = asyncio.ensure_future(
          one.handle(call(1, names.GATED_VIEW, {"tag": "a"}), token=one.token)
      )
      await asyncio.wait_for(gate.entered.wait(), BOUND)
      second = asyncio.ensure_future(
          two.handle(call(1, names.SIDE_EFFECT, {"key": "k"}), token=two.token)
      )
      await eventually(lambda: two.live_ids == (1,), "the second is live")
      assert one.live_ids == (1,)
      gate.open()
      for pending in (first, second):
        response = await asyncio.wait_for(pending, BOUND)
        assert response is not None and response["id"] == 1
        assert "result" in response
      # A channel's token serves only its own View.
      stray = await one.handle(
          call(2, names.SIDE_EFFECT, {"key": "k"}), token=two.token
      )
      assert reason_of(stray) == OperationErrorReason.LEASE_INVALID.value


@pytest.mark.conformance("P4-BAR-01", "P4-BAR-03")
async def test_only_structure_is_checked_before_queueing_and_listing_runs_after(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    channel = await open_channel(s)
    s.st.registry.narrow(
        TOOLSET, BindingOverrides(app_call_policy=AppCallPolicy.only(["x"]))
    )
    listed_before = _listings(s)
    # Not admitted by the policy, but policy is not settled before the
    # queue: the call queues, and only the barrier refuses it.
    ownership, pending = await queued(
        s, channel, call(1, names.SIDE_EFFECT, {"key": "k"})
    )
    assert _listings(s) == listed_before  # Nothing listed while queued.
    ownership.release()
    assert reason_of(await asyncio.wait_for(pending, BOUND)) == (
        OperationErrorReason.ADMISSION_DENIED.value
    )
    nothing_ran(s)


def _listings(s: Any) -> int:
  import json  # pylint: disable=g-import-not-at-top

  if not s.requests_log.exists():
    return 0
  return sum(
      1
      for line in s.requests_log.read_text().splitlines()
      if json.loads(line).get("method") == "tools/list"
  )


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


async def _revoke_lease(s: Any, channel: Any) -> None:
  channel.revoke_lease()


async def _remove_tool(s: Any, channel: Any) -> None:
  await s.hold.call_tool(names.REMOVE_LISTED_TOOL, {"name": names.SIDE_EFFECT})


async def _narrow_policy(s: Any, channel: Any) -> None:
  s.st.registry.narrow(
      TOOLSET, BindingOverrides(app_call_policy=AppCallPolicy.only(["x"]))
  )


async def _rebind(s: Any, channel: Any) -> None:
  await s.st.registry.rebind(s.st.registry.profile)


async def _teardown(s: Any, channel: Any) -> None:
  channel.teardown()


async def _delete_session(s: Any, channel: Any) -> None:
  store = s.st.registry.profile.session_lifecycle_store
  await store.begin_deletion(s.key, incarnation=channel.grant.incarnation)


async def _revoke_principal(s: Any, channel: Any) -> None:
  s.st.registry.profile.session_authorizer.allowed = False


BARRIER_RACES = [
    pytest.param(
        _revoke_lease,
        OperationErrorReason.LEASE_INVALID,
        marks=pytest.mark.conformance("P4-BAR-04"),
        id="lease",
    ),
    pytest.param(
        _remove_tool,
        OperationErrorReason.ADMISSION_DENIED,
        marks=pytest.mark.conformance("P4-BAR-05"),
        id="visibility",
    ),
    pytest.param(
        _narrow_policy,
        OperationErrorReason.ADMISSION_DENIED,
        marks=pytest.mark.conformance("P4-BAR-06"),
        id="policy",
    ),
    pytest.param(
        _rebind,
        OperationErrorReason.BINDING_CHANGED,
        marks=pytest.mark.conformance("P4-BAR-07"),
        id="binding",
    ),
    pytest.param(
        _teardown,
        None,
        marks=pytest.mark.conformance("P4-BAR-09"),
        id="teardown",
    ),
    pytest.param(
        _delete_session,
        OperationErrorReason.INCARNATION_CHANGED,
        marks=pytest.mark.conformance("P4-BAR-16"),
        id="incarnation",
    ),
    pytest.param(
        _revoke_principal,
        OperationErrorReason.UNAUTHORIZED,
        marks=pytest.mark.conformance("P4-BAR-17"),
        id="principal",
    ),
]


@pytest.mark.conformance("P4-BAR-02")
@pytest.mark.parametrize("race, reason", BARRIER_RACES)
async def test_a_queued_call_racing_a_change_is_denied_at_the_barrier(
    mcp_apps: Any, tmp_path: Path, race: Any, reason: Any
) -> None:
  async with stage(
      mcp_apps,
      tmp_path,
      "sqlite",
      options={"removable_tools": True},
      profile_fields={"session_authorizer": Switchable()},
  ) as s:
    channel = await open_channel(s)
    ownership, pending = await queued(
        s, channel, call(1, names.SIDE_EFFECT, {"key": "k"})
    )
    await race(s, channel)
    ownership.release()
    response = await asyncio.wait_for(pending, BOUND)
    if reason is None:
      assert response is None  # Torn down: no late response.
    else:
      assert reason_of(response) == reason.value
    nothing_ran(s)
    assert [e for e in await s.stored() if e.custom_metadata] == []


@pytest.mark.conformance("P2-SLS-24")
async def test_after_recreation_the_old_incarnations_channel_fails_typed(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with stage(mcp_apps, tmp_path, "sqlite") as s:
    channel = await open_channel(s)
    store = s.st.registry.profile.session_lifecycle_store
    coordination = SessionCoordination(session_coordinator())
    sessions = FirstPartySessions(
        SessionLifecycleManager(
            store, s.st.session_service, coordinator=coordination
        ),
        coordination,
    )
    await sessions.delete(APP, USER, s.sid)
    await sessions.create(APP, USER, session_id=s.sid)
    assert (await store.read(s.key)).incarnation > channel.grant.incarnation
    response = await channel.handle(
        call(1, names.SIDE_EFFECT, {"key": "k"}), token=channel.token
    )
    assert reason_of(response) == OperationErrorReason.INCARNATION_CHANGED.value
    nothing_ran(s)


def confirming(s: Any, answer: bool, seen: list[Any]) -> AppCallConfirmation:
  """The host's confirmation of the View's calls: records the sealed
  permit it was asked about and answers `answer`."""

  async def approve(permit: ConfirmationPermit) -> bool:
    seen.append(permit)
    return answer

  return AppCallConfirmation(
      predicate=True,
      session=s.key,
      binding_revision=lambda: binding_revision(s.st.profile),
      approve=approve,
      state={"cart": {"items": ["A1"]}},
  )


@pytest.mark.conformance("P4-CALL-03")
async def test_a_denied_confirmation_runs_no_callback_and_sends_nothing(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    asked: list[Any] = []
    channel = await open_channel(s, confirmation=confirming(s, False, asked))
    response = await channel.handle(
        call(1, names.SIDE_EFFECT, {"key": "c1"}), token=channel.token
    )
    assert reason_of(response) == (
        OperationErrorReason.CONFIRMATION_DENIED.value
    )
    assert len(asked) == 1  # The host was asked, before anything ran.
    nothing_ran(s)
    assert s.recorder.log == [] and records_of(await s.stored()) == []


@pytest.mark.conformance("P4-CALL-05")
async def test_an_approved_confirmation_runs_the_call_to_one_final_result(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    asked: list[Any] = []
    channel = await open_channel(s, confirmation=confirming(s, True, asked))
    response = await channel.handle(
        call(1, names.SIDE_EFFECT, {"key": "c2"}), token=channel.token
    )
    assert response is not None and response["id"] == 1
    assert "result" in response and not response["result"].get("isError")
    assert len(asked) == 1
    assert s.counts() == {"c2": 1}
    assert len(records_of(await s.stored())) == 1


def records_of(events: list[Any]) -> list[Any]:
  return [e for e in events if e.custom_metadata]
