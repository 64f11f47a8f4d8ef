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

"""Malformed View messages: the spec's JSON-RPC error, and no effect.

Hypothesis feeds the channel of a real rendered View arbitrary JSON and
near-miss JSON-RPC; an independent classifier says which error each must
get. Refusals happen before anything is queued, so each message is served
synchronously: a message that would reach the Session queue fails the test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from typing import Optional

from channel_support import open_channel
from exec_ownership_support import stage
from hypothesis import assume
from hypothesis import given
from hypothesis import HealthCheck
from hypothesis import settings
from hypothesis import strategies as st
import pytest

pytestmark = pytest.mark.integration

_METHODS = ("tools/call", "resources/read", "ui/message")


def _valid_id(value: Any) -> bool:
  return isinstance(value, str) or (
      isinstance(value, int) and not isinstance(value, bool)
  )


def expected_code(message: Any) -> Optional[int]:
  """The oracle: the JSON-RPC error code a message must get, None for a
  notification, or -1 for a well-formed request (not generated here)."""
  if not isinstance(message, dict):
    return -32600
  if (
      message.get("jsonrpc") != "2.0"
      or not isinstance(message.get("method"), str)
      or ("params" in message and not isinstance(message["params"], dict))
      or ("id" in message and not _valid_id(message["id"]))
      or set(message) - {"jsonrpc", "id", "method", "params"}
  ):
    return -32600
  if "id" not in message:
    return None
  if message["method"] not in _METHODS:
    return -32601
  params = message.get("params") or {}
  meta = params.get("_meta")
  if message["method"] == "ui/message":
    content = params.get("content")
    ok = (
        set(params) == {"role", "content"}
        and params["role"] == "user"
        and isinstance(content, list)
        and bool(content)
        and all(
            isinstance(b, dict)
            and b.get("type") == "text"
            and isinstance(b.get("text"), str)
            and set(b) <= {"type", "text", "annotations"}
            and isinstance(b.get("annotations", {}), dict)
            for b in content
        )
    )
    return -1 if ok else -32602
  if message["method"] == "tools/call":
    allowed = {"name", "arguments", "_meta"}
    ok = isinstance(params.get("name"), str) and isinstance(
        params.get("arguments", {}), (dict, type(None))
    )
  else:
    allowed = {"uri", "_meta"}
    ok = isinstance(params.get("uri"), str)
  if set(params) - allowed or not ok:
    return -32602
  if meta is not None and not isinstance(meta, dict):
    return -32602
  if isinstance(meta, dict) and any(
      k.startswith("com.google.adk/confirmation") for k in meta
  ):
    return -32602
  return -1


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_near_miss = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", 2.0, None]),
        "id": st.one_of(
            st.integers(-3, 3),
            st.text(max_size=3),
            st.none(),
            st.booleans(),
            st.floats(allow_nan=False),
            st.lists(st.integers(), max_size=1),
        ),
        "method": st.one_of(
            st.sampled_from([*_METHODS, "tools/list", ""]),
            st.integers(),
        ),
        "params": st.one_of(
            _json,
            st.fixed_dictionaries(
                {},
                optional={
                    "name": _json,
                    "uri": _json,
                    "arguments": _json,
                    "role": st.sampled_from(["user", "assistant"]),
                    "content": _json,
                    "_meta": _json,
                    "server": st.text(max_size=3),
                },
            ),
        ),
        "extra": _json,
    },
)

_enveloped = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "id": st.one_of(st.integers(), st.text(max_size=4)),
        "method": st.sampled_from(
            [*_METHODS, "tools/list", "prompts/get", "x"]
        ),
    },
    optional={"params": _near_miss.map(lambda m: m.get("params", {}))},
)

_notification = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "method": st.sampled_from(
            ["notifications/cancelled", "ui/notifications/size-changed", "x"]
        ),
    },
    optional={
        "params": st.dictionaries(st.text(max_size=9), _json, max_size=2)
    },
)


def serve_now(channel: Any, message: Any) -> Any:
  """Runs `channel.handle` to completion without an event loop wait."""
  coroutine = channel.handle(message, token=channel.token)
  try:
    coroutine.send(None)
  except StopIteration as done:
    return done.value
  coroutine.close()
  raise AssertionError(f"queued or awaited: {message!r}")


@pytest.mark.conformance("P4-BAR-01", "P5-LIM-04")
async def test_every_malformed_message_gets_its_typed_error_and_no_effect(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    channel = await open_channel(s)
    before = [e.id for e in await s.stored()]
    served_before = s.tool_calls_total()
    seen: dict[Optional[int], int] = {}

    @settings(
        max_examples=2000,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        st.one_of(
            _near_miss, _enveloped, _notification, _json, st.text(max_size=12)
        )
    )
    def fuzz(message: Any) -> None:
      sent = message
      if isinstance(message, str):
        try:
          parsed = json.loads(message)
        except ValueError:
          response = serve_now(channel, message)
          assert response["error"]["code"] == -32700
          assert response["id"] is None
          seen[-32700] = seen.get(-32700, 0) + 1
          return
        sent, message = message, parsed
      code = expected_code(message)
      assume(code != -1)
      response = serve_now(channel, sent)
      seen[code] = seen.get(code, 0) + 1
      if code is None:
        assert response is None
        return
      assert response["jsonrpc"] == "2.0"
      assert response["error"]["code"] == code, (message, response)
      assert isinstance(response["error"]["data"]["reason"], str)
      assert channel.live_ids == ()

    fuzz()
    # Every class was exercised, and nothing reached the server or Session.
    assert {-32700, -32600, -32601, -32602, None} <= set(seen)
    assert s.tool_calls_total() == served_before
    assert [e.id for e in await s.stored()] == before
