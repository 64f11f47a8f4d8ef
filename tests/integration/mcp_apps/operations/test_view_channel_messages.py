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

"""A View's `ui/message` through its channel: live ids and no replay key.

An accepted message becomes one Runner turn on the View's Session (the
turn owns the Session; the channel validates without owning it). The
permit the turn revalidates is test_view_channel_message_permit.py's;
these tests pin the channel-side rules.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from channel_support import message
from channel_support import open_channel
from exec_ownership_support import BOUND
from exec_ownership_support import eventually
from exec_ownership_support import stage
from google.adk.mcp_apps.coordination.coordinator import session_coordinator
from google.adk.mcp_apps.operations.errors import OperationErrorReason
import pytest

pytestmark = pytest.mark.integration


def user_texts(events: list[Any]) -> list[str]:
  return [
      part.text
      for e in events
      if e.author == "user" and e.content is not None
      for part in e.content.parts or ()
      if part.text
  ]


async def owned_elsewhere(s: Any) -> Any:
  return await asyncio.ensure_future(
      session_coordinator().acquire(s.key, "test.queue_holder")
  )


@pytest.mark.conformance("P4-JID-03")
async def test_a_live_message_id_cannot_be_reused_on_its_channel(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    channel = await open_channel(s)
    ownership = await owned_elsewhere(s)
    first = asyncio.ensure_future(
        channel.handle(message(1, "hello"), token=channel.token)
    )
    await eventually(
        lambda: session_coordinator().waiting(s.key) == 1, "the turn queues"
    )
    duplicate = await channel.handle(message(1, "again"), token=channel.token)
    assert duplicate is not None and duplicate["id"] is None
    assert duplicate["error"]["code"] == -32600
    assert duplicate["error"]["data"]["reason"] == (
        OperationErrorReason.DUPLICATE_REQUEST_ID.value
    )
    ownership.release()
    done = await asyncio.wait_for(first, BOUND)
    assert done == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert user_texts(await s.stored()) == ["hello"]


@pytest.mark.conformance("P4-JID-06")
async def test_equal_message_ids_on_two_views_channels_both_proceed(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    one = await open_channel(s)
    two = await open_channel(s)
    ownership = await owned_elsewhere(s)
    first = asyncio.ensure_future(one.handle(message(1, "a"), token=one.token))
    second = asyncio.ensure_future(two.handle(message(1, "b"), token=two.token))
    await eventually(
        lambda: session_coordinator().waiting(s.key) == 2, "both turns queue"
    )
    ownership.release()
    for pending in (first, second):
      response = await asyncio.wait_for(pending, BOUND)
      assert response == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert sorted(user_texts(await s.stored())) == ["a", "b"]


@pytest.mark.conformance("P4-IDEM-09")
async def test_a_message_takes_no_replay_key_and_is_never_deduplicated(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    channel = await open_channel(s)
    keyed = message(1, "hello", _meta={"com.google.adk/idempotency-key": "m-1"})
    refused = await channel.handle(keyed, token=channel.token)
    assert refused is not None and refused["error"]["code"] == -32602
    assert refused["error"]["data"]["reason"] == (
        OperationErrorReason.INVALID_PARAMS.value
    )
    assert user_texts(await s.stored()) == []
    # The same message twice (even under the same, completed id): two turns.
    for _ in range(2):
      response = await channel.handle(message(2, "hello"), token=channel.token)
      assert response == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert user_texts(await s.stored()) == ["hello", "hello"]
