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

"""Connection affinity on the conformance server, per transport and era.

A View nonce minted on one connection must be honoured on that connection
only (legacy eras); in the 2026-07-28 era every request is its own
connection, so only an explicit server handle carries the binding, and
behind a round-robin proxy a process-local handle fails on the other process
unless the processes share a signing secret.
"""

from __future__ import annotations

import time
from typing import Any

from mcp_apps_conformance_server import names
import pytest

pytestmark = pytest.mark.integration


async def _open(client: Any) -> dict[str, Any]:
  result = await client.call_tool(names.OPEN_VIEW, {})
  assert not result.is_error
  return result.structured_content


async def _followup(client: Any, nonce: str) -> tuple[bool, dict[str, Any]]:
  result = await client.call_tool(names.APP_FOLLOWUP, {"nonce": nonce})
  return bool(result.is_error), result.structured_content


async def test_stdio_nonce_is_bound_to_its_process(mcp_apps: Any) -> None:
  stdio = mcp_apps.stdio_parameters()
  async with mcp_apps.connect(stdio, mode="legacy") as first:
    opened = await _open(first)
    assert opened["era"] == "legacy"
    is_error, same = await _followup(first, opened["nonce"])
    assert not is_error and same["verdict"] == "ok"
    assert same["connectionId"] == opened["connectionId"]
    async with mcp_apps.connect(stdio, mode="legacy") as second:
      is_error, other = await _followup(second, opened["nonce"])
  assert is_error
  assert other["verdict"] == "unknown-nonce"
  assert other["processNonce"] != opened["processNonce"]


async def test_legacy_http_nonce_is_bound_to_its_session(
    legacy_http_server: Any, mcp_apps: Any
) -> None:
  connect = mcp_apps.connect
  url = legacy_http_server.url
  async with connect(url) as first:
    opened = await _open(first)
    assert opened["era"] == "legacy"
    async with connect(url) as second:
      is_error, other = await _followup(second, opened["nonce"])
      assert is_error and other["verdict"] == "wrong-connection"
      assert other["processNonce"] == opened["processNonce"]
      assert other["connectionId"] != opened["connectionId"]
    is_error, same = await _followup(first, opened["nonce"])
    assert not is_error and same["verdict"] == "ok"

  # The first session has been deleted; its nonce must now be reported as
  # belonging to a closed connection (reconnect invalidation). Session
  # teardown completes asynchronously after the DELETE, so wait for the
  # server's own verdict to change, bounded by a deadline.
  async with connect(url) as third:
    deadline = time.monotonic() + 10
    while True:
      is_error, later = await _followup(third, opened["nonce"])
      if later["verdict"] != "wrong-connection" or time.monotonic() > deadline:
        break
    assert is_error and later["verdict"] == "connection-closed"


async def test_sse_nonce_is_bound_to_its_stream(
    sse_server: Any, mcp_apps: Any
) -> None:
  connect = mcp_apps.connect
  async with connect(sse_server.url, mode="legacy") as first:
    opened = await _open(first)
    async with connect(sse_server.url, mode="legacy") as second:
      is_error, other = await _followup(second, opened["nonce"])
    is_error_same, same = await _followup(first, opened["nonce"])
  assert is_error and other["verdict"] == "wrong-connection"
  assert not is_error_same and same["verdict"] == "ok"


async def test_modern_era_has_no_connection_state_but_honours_handles(
    modern_http_server: Any, mcp_apps: Any
) -> None:
  async with mcp_apps.connect(modern_http_server.url) as client:
    assert client.protocol_version == "2026-07-28"
    opened = await _open(client)
    assert opened["era"] == "modern"
    is_error, followup = await _followup(client, opened["nonce"])
    assert is_error and followup["verdict"] == "connection-closed"

    handle_result = await client.call_tool(names.OPEN_VIEW_HANDLE, {})
    handle = handle_result.structured_content["handle"]
    good = await client.call_tool(names.APP_FOLLOWUP_HANDLE, {"handle": handle})
    bad = await client.call_tool(
        names.APP_FOLLOWUP_HANDLE, {"handle": "local.forged.handle"}
    )
  assert not good.is_error and good.structured_content["verdict"] == "ok"
  assert good.structured_content["issuedBy"] == opened["processNonce"]
  assert bad.is_error and bad.structured_content["verdict"] == "unknown-handle"


async def _followups_through(
    mcp_apps: Any, url: str, calls: int
) -> list[dict[str, Any]]:
  async with mcp_apps.connect(url) as client:
    assert client.protocol_version == "2026-07-28"
    opened = await client.call_tool(names.OPEN_VIEW_HANDLE, {})
    handle = opened.structured_content["handle"]
    answers = []
    for _ in range(calls):
      result = await client.call_tool(
          names.APP_FOLLOWUP_HANDLE, {"handle": handle}
      )
      answers.append({**result.structured_content, "isError": result.is_error})
  return answers


async def test_round_robin_splits_process_local_handles(
    start_server: Any, start_proxy: Any, mcp_apps: Any
) -> None:
  backends = [start_server(stateless=True).url for _ in range(2)]
  proxy = start_proxy(backends)
  answers = await _followups_through(mcp_apps, proxy.url, calls=2)
  processes = {answer["processNonce"] for answer in answers}
  assert len(processes) == 2, "rotation must reach both processes"
  verdicts = sorted(answer["verdict"] for answer in answers)
  assert verdicts == ["ok", "unknown-handle"]
  for answer in answers:
    issued_here = answer["processNonce"] == answer["issuedBy"]
    assert (answer["verdict"] == "ok") == issued_here
    assert answer["isError"] == (not issued_here)


async def test_round_robin_with_shared_secret_honours_handles_everywhere(
    start_server: Any, start_proxy: Any, mcp_apps: Any
) -> None:
  options = {"handle_secret": "conformance-shared-secret-0001"}
  backends = [
      start_server(stateless=True, options=options).url for _ in range(2)
  ]
  proxy = start_proxy(backends)
  answers = await _followups_through(mcp_apps, proxy.url, calls=2)
  assert {answer["verdict"] for answer in answers} == {"ok"}
  assert len({answer["processNonce"] for answer in answers}) == 2
