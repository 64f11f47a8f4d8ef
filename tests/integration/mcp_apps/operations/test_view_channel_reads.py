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

"""A View's `resources/read` through its governed channel.

The View is rendered by a real Runner turn on the conformance server, over
stdio (2025-11-25) or stateless HTTP (2026-07-28); the server's request log
says which reads reached it. Races are forced by owning the View's Session
from the test while the read waits in its queue.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from channel_support import cancelled
from channel_support import open_read_channel
from channel_support import read
from exec_ownership_support import BOUND
from exec_ownership_support import eventually
from google.adk.mcp_apps.affinity.errors import InvalidationReason
from google.adk.mcp_apps.binding.overrides import BindingOverrides
from google.adk.mcp_apps.coordination.coordinator import session_coordinator
from google.adk.mcp_apps.operations.errors import OperationErrorReason
from google.adk.mcp_apps.operations.idempotency import RetainedOutcomes
from google.adk.mcp_apps.profile.limits import DeliveryLimits
from google.adk.mcp_apps.profile.policies import ResourcePolicySettings
from google.adk.mcp_apps.resources import ResourcePolicyEntry
from mcp_apps_conformance_server import names
import pytest
from read_support import view_reads
from read_support import ViewReads
from sealing_support import TOOLSET

pytestmark = pytest.mark.integration

KEY_META = "com.google.adk/idempotency-key"


def reason_of(response: Any) -> str:
  assert response is not None and "error" in response, response
  return str(response["error"]["data"]["reason"])


def key(value: str) -> dict[str, Any]:
  return {"_meta": {KEY_META: value}}


@pytest.fixture(params=["stdio", "modern_http"])
async def view(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    mcp_apps: Any,
    start_server: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> Any:
  async with view_reads(
      request.param, tmp_path, mcp_apps, start_server, monkeypatch
  ) as reads:
    yield reads


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


def session_key(view: ViewReads) -> Any:
  return view.stack.key(view.session_id)


async def queued(view: ViewReads, channel: Any, message: Any) -> Any:
  """Sends `message` while a task of the test owns the View's Session."""
  ownership = await asyncio.ensure_future(
      session_coordinator().acquire(session_key(view), "test.queue_holder")
  )
  task = asyncio.ensure_future(channel.handle(message, token=channel.token))
  await eventually(
      lambda: session_coordinator().waiting(session_key(view)) == 1,
      "the read queues",
  )
  return ownership, task


@pytest.mark.conformance("P4-READ-14", "P4-READ-01")
async def test_a_view_read_is_served_through_its_channel(
    view: ViewReads,
) -> None:
  channel = await open_read_channel(view)
  before = view.reads()
  response = await channel.handle(read(3, view.widget_uri), token=channel.token)
  assert response is not None and response["id"] == 3
  (item,) = response["result"]["contents"]
  assert item["uri"] == view.widget_uri and "<html" in item["text"].lower()
  assert view.reads() == before + 1
  bundle = await channel.handle(read(4, names.BUNDLE_URI), token=channel.token)
  assert bundle is not None and len(bundle["result"]["contents"]) == 4


@pytest.mark.conformance("P4-READ-04", "P4-BAR-10")
async def test_a_read_whose_lease_was_revoked_is_denied_without_a_remote_read(
    view: ViewReads,
) -> None:
  channel = await open_read_channel(view)
  before = view.reads()
  ownership, pending = await queued(view, channel, read(1, view.widget_uri))
  channel.revoke_lease()
  ownership.release()
  response = await asyncio.wait_for(pending, BOUND)
  assert reason_of(response) == OperationErrorReason.LEASE_INVALID.value
  # Revoked before it arrives: refused at intake, the same way.
  late = await channel.handle(read(2, view.widget_uri), token=channel.token)
  assert reason_of(late) == OperationErrorReason.LEASE_INVALID.value
  assert view.reads() == before


async def _narrow_visibility(view: ViewReads, channel: Any) -> None:
  view.stack.registry.narrow(
      TOOLSET, BindingOverrides(visibility=frozenset({"model"}))
  )


async def _narrow_policy(view: ViewReads, channel: Any) -> None:
  view.stack.registry.narrow(
      TOOLSET,
      BindingOverrides(
          resource_policy=ResourcePolicySettings(
              [ResourcePolicyEntry.exact(names.MULTI_URI)]
          )
      ),
  )


async def _rebind(view: ViewReads, channel: Any) -> None:
  await view.stack.registry.rebind(view.stack.registry.profile)


async def _lose_connection(view: ViewReads, channel: Any) -> None:
  await view.stack.registry.connections.invalidate(
      view.hold.generation_id, InvalidationReason.TRANSPORT_FAILURE
  )


async def _teardown(view: ViewReads, channel: Any) -> None:
  channel.teardown()


async def _delete_session(view: ViewReads, channel: Any) -> None:
  store = view.stack.profile.session_lifecycle_store
  await store.begin_deletion(
      session_key(view), incarnation=channel.grant.incarnation
  )


READ_RACES = [
    pytest.param(
        _narrow_visibility,
        OperationErrorReason.MODALITY_WITHDRAWN,
        marks=pytest.mark.conformance("P4-BAR-11"),
        id="visibility",
    ),
    pytest.param(
        _narrow_policy,
        OperationErrorReason.RESOURCE_POLICY_DENIED,
        marks=pytest.mark.conformance("P4-BAR-12"),
        id="policy",
    ),
    pytest.param(
        _rebind,
        OperationErrorReason.BINDING_CHANGED,
        marks=pytest.mark.conformance("P4-BAR-13"),
        id="binding",
    ),
    pytest.param(
        _lose_connection,
        OperationErrorReason.VIEW_GENERATION_INVALIDATED,
        marks=pytest.mark.conformance("P4-BAR-14"),
        id="connection",
    ),
    pytest.param(
        _teardown,
        None,
        marks=pytest.mark.conformance("P4-BAR-15"),
        id="teardown",
    ),
    pytest.param(
        _delete_session,
        OperationErrorReason.INCARNATION_CHANGED,
        marks=pytest.mark.conformance("P4-BAR-16"),
        id="incarnation",
    ),
]


@pytest.mark.conformance("P4-READ-16", "P4-BAR-02")
@pytest.mark.parametrize("race, reason", READ_RACES)
async def test_a_queued_read_racing_a_change_is_denied_at_the_barrier(
    stdio_view: ViewReads, race: Any, reason: Any
) -> None:
  view = stdio_view
  channel = await open_read_channel(view)
  before = view.reads()
  ownership, pending = await queued(view, channel, read(1, names.BUNDLE_URI))
  await race(view, channel)
  ownership.release()
  response = await asyncio.wait_for(pending, BOUND)
  if reason is None:
    assert response is None  # Torn down: no late response.
  else:
    assert reason_of(response) == reason.value
  assert view.reads() == before


async def _probe_between_legs(
    view: ViewReads, channel: Any, action: Any
) -> tuple[asyncio.Future[Any], list[int]]:
  """Starts a 3-leg read behind the test's ownership and queues a probe
  after it; the probe runs `action` when the read gives the Session up."""
  coordinator = session_coordinator()
  key_ = session_key(view)
  ownership, pending = await queued(
      view, channel, read(1, names.INTERACTIVE_URI)
  )
  seen: list[int] = []

  async def probe() -> None:
    async with coordinator.owned(key_, "test.probe"):
      seen.append(view.reads())
      action()

  probing = asyncio.ensure_future(probe())
  await eventually(lambda: coordinator.waiting(key_) == 2, "the probe queues")
  ownership.release()
  await asyncio.wait_for(probing, BOUND)
  return pending, seen


@pytest.mark.conformance("P4-MRTR-09", "P4-READ-02")
async def test_an_mrtr_read_gives_the_session_up_between_legs(
    modern_view: ViewReads,
) -> None:
  view = modern_view
  channel = await open_read_channel(view)
  before = view.reads()
  pending, seen = await _probe_between_legs(view, channel, lambda: None)
  response = await asyncio.wait_for(pending, BOUND)
  # The probe owned the Session after the first leg and before the second.
  assert seen == [before + 1]
  (item,) = response["result"]["contents"]
  assert "served after 3 round(s)" in item["text"]
  assert view.reads() == before + 3


@pytest.mark.conformance("P4-MRTR-09")
async def test_a_revocation_while_an_mrtr_read_waits_denies_its_resumption(
    modern_view: ViewReads,
) -> None:
  view = modern_view
  channel = await open_read_channel(view)
  before = view.reads()
  pending, seen = await _probe_between_legs(view, channel, channel.revoke_lease)
  response = await asyncio.wait_for(pending, BOUND)
  assert reason_of(response) == OperationErrorReason.LEASE_INVALID.value
  assert seen == [before + 1] and view.reads() == before + 1


@pytest.mark.conformance("P4-READ-13")
async def test_a_teardown_while_an_mrtr_read_waits_cancels_it(
    modern_view: ViewReads, caplog: pytest.LogCaptureFixture
) -> None:
  view = modern_view
  outcomes = RetainedOutcomes()
  channel = await open_read_channel(view, outcomes=outcomes)
  before = view.reads()
  caplog.set_level(logging.INFO)
  coordinator = session_coordinator()
  ownership, pending = await queued(
      view,
      channel,
      {
          **read(1, names.INTERACTIVE_URI),
          "params": {"uri": names.INTERACTIVE_URI, **key("read-1")},
      },
  )
  teardown_done = asyncio.Event()

  async def probe() -> None:
    async with coordinator.owned(session_key(view), "test.probe"):
      channel.teardown()
      teardown_done.set()

  probing = asyncio.ensure_future(probe())
  await eventually(
      lambda: coordinator.waiting(session_key(view)) == 2, "the probe queues"
  )
  ownership.release()
  await asyncio.wait_for(probing, BOUND)
  assert await asyncio.wait_for(pending, BOUND) is None  # No late response.
  assert view.reads() == before + 1
  # The cancellation is the key's retained outcome, and it is recorded.
  assert len(outcomes) == 1
  assert any(
      "interrupted" in r.getMessage() and "teardown" in r.getMessage()
      for r in caplog.records
  )
  assert coordinator.owner(session_key(view)) is None


@pytest.mark.conformance("P4-READ-12")
async def test_reads_over_the_rate_or_queue_limit_get_typed_errors(
    stdio_view: ViewReads,
) -> None:
  view = stdio_view
  now = [0.0]
  channel = await open_read_channel(view, clock=lambda: now[0])
  view.stack.registry.narrow(
      TOOLSET,
      BindingOverrides(
          delivery=DeliveryLimits(
              max_operations_per_minute=2, max_queued_operations=1
          )
      ),
  )
  for request_id in (1, 2):
    ok = await channel.handle(
        read(request_id, view.widget_uri), token=channel.token
    )
    assert ok is not None and "result" in ok
  limited = await channel.handle(read(3, view.widget_uri), token=channel.token)
  assert reason_of(limited) == OperationErrorReason.RATE_LIMITED.value
  now[0] += 60.0  # A minute later the window is open again.
  ownership, pending = await queued(view, channel, read(4, view.widget_uri))
  full = await channel.handle(read(5, view.widget_uri), token=channel.token)
  assert reason_of(full) == OperationErrorReason.QUEUE_FULL.value
  ownership.release()
  done = await asyncio.wait_for(pending, BOUND)
  assert done is not None and "result" in done
  # A cancelled read gets no response and frees its place.
  assert await channel.handle(cancelled(99), token=channel.token) is None


@pytest.mark.conformance("P3-PROV-06")
async def test_a_served_read_leaves_one_app_audit_record_without_its_bytes(
    view: ViewReads,
) -> None:
  channel = await open_read_channel(view)
  key_ = session_key(view)

  async def stored() -> list[Any]:
    session = await view.stack.session_service.get_session(
        app_name=key_.app_name, user_id=key_.user_id, session_id=key_.session_id
    )
    return list(session.events)

  before = len(await stored())
  response = await channel.handle(
      read(1, names.BUNDLE_URI), token=channel.token
  )
  assert response is not None and "result" in response
  (record,) = (await stored())[before:]
  assert (record.audience, record.invocation_origin, record.emitter) == (
      "app_audit",
      "mcp_app",
      "app",
  )
  summary = record.custom_metadata["mcp_app_operation"]
  assert summary["method"] == "resources/read" and summary["items"] == 4
  text = record.model_dump_json()
  assert all(
      item.get("text", "")[:24] not in text
      for item in response["result"]["contents"]
      if item.get("text")
  )


@pytest.mark.conformance("P4-JID-02")
async def test_a_live_read_id_cannot_be_reused_on_its_channel(
    stdio_view: ViewReads,
) -> None:
  view = stdio_view
  channel = await open_read_channel(view)
  ownership, pending = await queued(view, channel, read(1, view.widget_uri))
  duplicate = await channel.handle(
      read(1, names.BUNDLE_URI), token=channel.token
  )
  assert duplicate is not None and duplicate["id"] is None
  assert duplicate["error"]["code"] == -32600
  assert reason_of(duplicate) == OperationErrorReason.DUPLICATE_REQUEST_ID.value
  ownership.release()
  first = await asyncio.wait_for(pending, BOUND)
  assert first is not None and first["id"] == 1 and "result" in first


@pytest.mark.conformance("P4-JID-05")
async def test_equal_read_ids_on_two_views_channels_both_proceed(
    stdio_view: ViewReads,
) -> None:
  view = stdio_view
  one = await open_read_channel(view)
  two = await open_read_channel(view)
  ownership, first = await queued(view, one, read(1, view.widget_uri))
  second = asyncio.ensure_future(
      two.handle(read(1, names.BUNDLE_URI), token=two.token)
  )
  await eventually(lambda: two.live_ids == (1,), "the second is live")
  ownership.release()
  for pending in (first, second):
    response = await asyncio.wait_for(pending, BOUND)
    assert response is not None and response["id"] == 1 and "result" in response
