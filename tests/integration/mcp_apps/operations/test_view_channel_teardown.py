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

"""Two-phase View teardown and `ui/notifications/request-teardown`.

Phase 1 (`ViewChannel.teardown`) is a lock-free signal; phase 2
(`finish_teardown`) owns the Session. The View is rendered by a real
Runner turn on the conformance server; races are forced by owning the
Session from a test task, and a gated tool holds a call at the server.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

from channel_support import call
from channel_support import open_channel
from exec_ownership_support import BOUND
from exec_ownership_support import eventually
from exec_ownership_support import stage
from google.adk.mcp_apps.bootstrap.render import view_hold
from google.adk.mcp_apps.coordination.coordinator import session_coordinator
from google.adk.mcp_apps.operations.app_call import OperationOutcomeKind
from google.adk.mcp_apps.operations.errors import OperationErrorReason
from google.adk.mcp_apps.operations.view_channel import REQUEST_TEARDOWN
from google.adk.mcp_apps.operations.view_channel import TEARDOWN_OPERATION
from mcp_apps_conformance_server import names
import pytest
from sealing_support import ServerGate

pytestmark = pytest.mark.integration


def request_teardown(**params: Any) -> dict[str, Any]:
  return {"jsonrpc": "2.0", "method": REQUEST_TEARDOWN, "params": params}


def reason_of(response: Any) -> str:
  assert response is not None and "error" in response, response
  return str(response["error"]["data"]["reason"])


async def owned_elsewhere(s: Any) -> Any:
  return await asyncio.ensure_future(
      session_coordinator().acquire(s.key, "test.queue_holder")
  )


def logged(s: Any, method: str) -> int:
  if not s.requests_log.exists():
    return 0
  return sum(
      json.loads(line).get("method") == method
      for line in s.requests_log.read_text().splitlines()
  )


class Hooks:
  """The host's per-View state: removed by phase 2."""

  def __init__(self) -> None:
    self.ran: list[tuple[Any, bool]] = []

  async def __call__(self, channel: Any) -> None:
    owner = session_coordinator().owner(channel.grant.session)
    self.ran.append((owner.operation if owner else None, channel.grant.active))


@pytest.mark.conformance("P4-TD-01", "P4-COORD-06")
async def test_phase_one_takes_no_lock_changes_no_session_and_cancels_tokens(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    channel = await open_channel(s)
    holder = await owned_elsewhere(s)
    queued = asyncio.ensure_future(
        channel.handle(
            call(1, names.SIDE_EFFECT, {"key": "q"}), token=channel.token
        )
    )
    await eventually(
        lambda: session_coordinator().waiting(s.key) == 1, "the call queues"
    )
    before = [e.id for e in await s.stored()]
    # The Session is owned by someone else: phase 1 still runs at once.
    channel.teardown()
    assert session_coordinator().owner(s.key) is holder
    late = await channel.handle(
        call(2, names.SIDE_EFFECT, {"key": "l"}), token=channel.token
    )
    assert reason_of(late) == OperationErrorReason.LEASE_INVALID.value
    assert [e.id for e in await s.stored()] == before
    holder.release()
    assert await asyncio.wait_for(queued, BOUND) is None
    assert s.tool_calls(names.SIDE_EFFECT) == 0
    assert channel.live_ids == ()


@pytest.mark.conformance("P4-TD-02", "P4-COORD-06", "P4-TD-11")
async def test_phase_two_owns_the_session_removes_host_state_and_revokes(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with ServerGate() as gate:
    async with stage(mcp_apps, tmp_path, "in_memory", gate=gate) as s:
      hooks = Hooks()
      channel = await open_channel(s, teardown_hooks=[hooks])
      hold = view_hold(channel.grant)
      running = asyncio.ensure_future(
          channel.handle(
              call(1, names.GATED_VIEW, {"tag": "t"}), token=channel.token
          )
      )
      await asyncio.wait_for(gate.entered.wait(), BOUND)
      channel.teardown()
      assert await asyncio.wait_for(running, BOUND) is None
      holder = await owned_elsewhere(s)
      phase2 = asyncio.ensure_future(channel.finish_teardown())
      await eventually(
          lambda: session_coordinator().waiting(s.key) == 1, "phase 2 queues"
      )
      assert hooks.ran == [] and channel.grant.active
      holder.release()
      await asyncio.wait_for(phase2, BOUND)
      gate.open()
      # Under the Session's ownership, before the grant went.
      assert hooks.ran == [(TEARDOWN_OPERATION, True)]
      # The interrupted call was reconciled before phase 2 ran.
      outcome = s.cache.get(f"{channel.operation_prefix}:1")
      assert outcome is not None
      assert outcome.kind is OperationOutcomeKind.CANCELLED
      assert outcome.record_id is not None
      # Nothing of the View stays live.
      assert channel.torn_down and not channel.grant.active and hold.released
      again = await channel.handle(
          call(2, names.SIDE_EFFECT, {"key": "k"}), token=channel.token
      )
      assert reason_of(again) == OperationErrorReason.LEASE_INVALID.value
      assert channel.live_ids == ()
      await channel.finish_teardown()  # Once only.
      assert len(hooks.ran) == 1


@pytest.mark.conformance("P4-TD-04")
async def test_an_interrupted_call_is_cancelled_at_the_server_best_effort(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with ServerGate() as gate:
    async with stage(mcp_apps, tmp_path, "in_memory", gate=gate) as s:
      channel = await open_channel(s)
      running = asyncio.ensure_future(
          channel.handle(
              call(1, names.GATED_VIEW, {"tag": "t"}), token=channel.token
          )
      )
      await asyncio.wait_for(gate.entered.wait(), BOUND)
      await channel.tear_down()
      assert await asyncio.wait_for(running, BOUND) is None
      await eventually(
          lambda: logged(s, "notifications/cancelled") == 1,
          "the server is told",
      )
      gate.open()
      outcome = s.cache.get(f"{channel.operation_prefix}:1")
      # The remote effect's completion is not claimed: a cancellation.
      assert outcome is not None and outcome.result is None
      assert outcome.cause is not None
      assert outcome.cause.reason is OperationErrorReason.TEARDOWN


async def approve(channel: Any) -> bool:
  return True


async def decline(channel: Any) -> bool:
  return False


@pytest.mark.conformance("P4-RQTD-02")
async def test_request_teardown_goes_to_the_hosts_decision(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    asked: list[bool] = []

    async def deciding(channel: Any) -> bool:
      # Phase 1 has not run: the request is only a request.
      asked.append(channel.grant.active and channel.live_ids == ())
      return len(asked) > 1

    channel = await open_channel(s, on_request_teardown=deciding)
    assert await channel.handle(request_teardown(), token=channel.token) is None
    # Declined: the View stays live and serves calls.
    ok = await channel.handle(
        call(1, names.SIDE_EFFECT, {"key": "k"}), token=channel.token
    )
    assert ok is not None and "result" in ok
    assert await channel.handle(request_teardown(), token=channel.token) is None
    assert asked == [True, True]
    assert channel.torn_down and not channel.grant.active


@pytest.mark.conformance("P4-RQTD-01", "P4-RQTD-03")
async def test_request_teardown_from_elsewhere_or_malformed_has_no_effect(
    mcp_apps: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    caplog.set_level(logging.INFO)
    asked: list[Any] = []

    async def deciding(channel: Any) -> bool:
      asked.append(channel)
      return True

    channel = await open_channel(s, on_request_teardown=deciding)
    other = await open_channel(s, on_request_teardown=deciding)
    # Another View's channel token: refused, nothing decided.
    stray = await channel.handle(request_teardown(), token=other.token)
    assert reason_of(stray) == OperationErrorReason.LEASE_INVALID.value
    # Naming another View (or anything else): malformed, ignored, logged.
    for params in ({"viewId": other.view_id}, {"reason": "x"}):
      ignored = await channel.handle(
          request_teardown(**params), token=channel.token
      )
      assert ignored is None
    assert asked == [] and channel.grant.active and other.grant.active
    assert (
        sum(
            "malformed request-teardown" in r.getMessage()
            for r in caplog.records
        )
        == 2
    )


@pytest.mark.conformance("P4-RQTD-04", "P4-RQTD-05")
async def test_duplicate_and_racing_teardowns_run_each_phase_once(
    mcp_apps: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    caplog.set_level(logging.INFO)
    hooks = Hooks()
    deciding = asyncio.Event()
    go = asyncio.Event()
    asked: list[Any] = []

    async def slow_yes(channel: Any) -> bool:
      asked.append(channel)
      deciding.set()
      await go.wait()
      return True

    channel = await open_channel(
        s, on_request_teardown=slow_yes, teardown_hooks=[hooks]
    )
    first = asyncio.ensure_future(
        channel.handle(request_teardown(), token=channel.token)
    )
    await asyncio.wait_for(deciding.wait(), BOUND)
    # A duplicate while the host decides: ignored, logged.
    assert await channel.handle(request_teardown(), token=channel.token) is None
    assert any("duplicate" in r.getMessage() for r in caplog.records)
    # The host tears the View down itself meanwhile; then approves.
    host = asyncio.ensure_future(channel.tear_down())
    await asyncio.wait_for(host, BOUND)
    go.set()
    assert await asyncio.wait_for(first, BOUND) is None
    assert len(asked) == 1
    assert hooks.ran == [(TEARDOWN_OPERATION, True)]
    assert channel.torn_down


@pytest.mark.conformance("P4-COORD-20")
async def test_a_message_turn_admitted_before_teardown_keeps_its_effects(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    hooks = Hooks()
    channel = await open_channel(s, teardown_hooks=[hooks])
    in_model = asyncio.Event()
    release = asyncio.Event()

    async def held() -> None:
      in_model.set()
      await release.wait()

    s.st.llm.on_answer = held
    s.st.llm.steps = [[(names.SIDE_EFFECT, {"key": "turn"})]]
    message = asyncio.ensure_future(
        channel.handle(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "ui/message",
                "params": {
                    "role": "user",
                    "content": [{"type": "text", "text": "go"}],
                },
            },
            token=channel.token,
        )
    )
    await asyncio.wait_for(in_model.wait(), BOUND)
    teardown = asyncio.ensure_future(channel.tear_down())
    await eventually(
        lambda: session_coordinator().waiting(s.key) == 1, "phase 2 queues"
    )
    assert hooks.ran == []  # Phase 2 waits for the turn.
    release.set()
    # The turn ran to its end; the View gets no terminal response.
    assert await asyncio.wait_for(message, BOUND) is None
    await asyncio.wait_for(teardown, BOUND)
    assert hooks.ran == [(TEARDOWN_OPERATION, True)]
    assert s.counts() == {"turn": 1}
    stored = await s.stored()
    assert [
        p.text for e in stored if e.author == "user" for p in e.content.parts
    ] == ["go"]
    assert any(e.get_function_responses() for e in stored)
    assert stored[-1].content.parts[0].text  # The model's final answer.
