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


"""Queue-depth, rate and byte limits hold for every View-originated operation.

Each test sends all four kinds of View request (`tools/call`,
`resources/read`, `ui/message`, `ui/update-model-context`) on one real
channel, after narrowing the toolset's delivery limits live, and asserts
each gets the same typed refusal and that nothing ran.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any
from typing import Callable

from channel_support import call
from channel_support import message
from channel_support import open_channel
from channel_support import read
from channel_support import widget_uri_of
from exec_ownership_support import BOUND
from exec_ownership_support import eventually
from exec_ownership_support import Stage
from exec_ownership_support import stage
from google.adk.mcp_apps.binding.overrides import BindingOverrides
from google.adk.mcp_apps.coordination.coordinator import session_coordinator
from google.adk.mcp_apps.operations.errors import OperationErrorReason
from google.adk.mcp_apps.operations.view_channel import ViewChannel
from google.adk.mcp_apps.profile.limits import DeliveryLimits
from mcp_apps_conformance_server import names
import pytest
from sealing_support import TOOLSET

pytestmark = pytest.mark.integration

Request = Callable[[int, str, str], dict[str, Any]]


def update(request_id: int, text: str) -> dict[str, Any]:
  """A View `ui/update-model-context` request of one text block."""
  return {
      "jsonrpc": "2.0",
      "id": request_id,
      "method": "ui/update-model-context",
      "params": {"content": [{"type": "text", "text": text}]},
  }


# Each kind of View request, built from an id, the View's URI and a padding
# string that sizes the request.
KINDS: dict[str, Request] = {
    "tools/call": lambda i, uri, pad: call(
        i, names.SIDE_EFFECT, {"key": "k" + pad}
    ),
    "resources/read": lambda i, uri, pad: read(
        i, uri, _meta={"example.com/pad": pad}
    ),
    "ui/message": lambda i, uri, pad: message(i, "hello" + pad),
    "ui/update-model-context": lambda i, uri, pad: update(i, "note" + pad),
}


def reason_of(response: Any) -> str:
  assert response is not None and "error" in response, response
  return str(response["error"]["data"]["reason"])


def view_uri(s: Stage) -> str:
  (event,) = [
      e
      for e in s.session.events
      if e.actions is not None and e.actions.render_ui_widgets
  ][-1:]
  (widget,) = event.actions.render_ui_widgets
  return widget_uri_of(widget.payload)


def narrow(s: Stage, **limits: int) -> None:
  s.st.registry.narrow(
      TOOLSET, BindingOverrides(delivery=DeliveryLimits(**limits))
  )


async def every_kind(
    channel: ViewChannel, uri: str, first_id: int, pad: str = ""
) -> dict[str, str]:
  """Each kind of request's refusal reason, sent one after another."""
  reasons = {}
  for n, (kind, build) in enumerate(KINDS.items()):
    response = await asyncio.wait_for(
        channel.handle(build(first_id + n, uri, pad), token=channel.token),
        BOUND,
    )
    reasons[kind] = reason_of(response)
  return reasons


@pytest.mark.conformance("P5-LIM-01")
async def test_every_kind_of_view_request_meets_the_queue_depth_limit(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    channel = await open_channel(s)
    narrow(s, max_queued_operations=1)
    # Owned from a task of its own: the test's context owns nothing.
    ownership = await asyncio.ensure_future(
        session_coordinator().acquire(s.key, "test.queue_holder")
    )
    queued = asyncio.ensure_future(
        channel.handle(
            call(1, names.SIDE_EFFECT, {"key": "q"}), token=channel.token
        )
    )
    await eventually(
        lambda: session_coordinator().waiting(s.key) == 1, "the call queues"
    )
    reasons = await every_kind(channel, view_uri(s), 10)
    assert reasons == dict.fromkeys(
        KINDS, OperationErrorReason.QUEUE_FULL.value
    )
    ownership.release()
    done = await asyncio.wait_for(queued, BOUND)
    assert done is not None and "result" in done
    assert s.tool_calls(names.SIDE_EFFECT) == 1  # Only the queued call ran.


@pytest.mark.conformance("P5-LIM-02")
async def test_every_kind_of_view_request_meets_the_rate_limit(
    mcp_apps: Any, tmp_path: Path
) -> None:
  now = [0.0]
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    channel = await open_channel(s, clock=lambda: now[0])
    narrow(s, max_operations_per_minute=1)
    uri = view_uri(s)
    first = await channel.handle(read(1, uri), token=channel.token)
    assert first is not None and "result" in first
    reasons = await every_kind(channel, uri, 10)
    assert reasons == dict.fromkeys(
        KINDS, OperationErrorReason.RATE_LIMITED.value
    )
    assert s.tool_calls(names.SIDE_EFFECT) == 0
    now[0] += 60.0  # The window moves on: the View may act again.
    again = await channel.handle(
        call(20, names.SIDE_EFFECT, {"key": "k"}), token=channel.token
    )
    assert again is not None and "result" in again


@pytest.mark.conformance("P5-LIM-03")
async def test_every_kind_of_view_request_meets_the_request_byte_limit(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    channel = await open_channel(s)
    narrow(s, max_request_bytes=1024)
    uri = view_uri(s)
    reasons = await every_kind(channel, uri, 10, pad="x" * 2048)
    assert reasons == dict.fromkeys(
        KINDS, OperationErrorReason.REQUEST_TOO_LARGE.value
    )
    # The same requests under the limit are served.
    for n, build in enumerate(KINDS.values()):
      response = await channel.handle(
          build(30 + n, uri, "x" * 16), token=channel.token
      )
      assert response is not None and "result" in response, response
    assert s.tool_calls(names.SIDE_EFFECT) == 1


@pytest.mark.conformance("P5-LIM-03")
async def test_a_call_result_over_the_response_byte_limit_never_reaches_the_view(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    channel = await open_channel(s)
    narrow(s, max_response_bytes=4096)
    big = await channel.handle(
        call(1, names.SIZED_RESULT, {"text_bytes": 8192}), token=channel.token
    )
    assert reason_of(big) == OperationErrorReason.LIMIT_EXCEEDED.value
    assert big["error"]["data"]["detail"] == "bytes"
    assert "x" * 64 not in str(big)
    # The call ran and stands; only its delivery was refused.
    assert s.tool_calls(names.SIZED_RESULT) == 1
    small = await channel.handle(
        call(2, names.SIZED_RESULT, {"text_bytes": 512}), token=channel.token
    )
    assert small is not None and "result" in small
