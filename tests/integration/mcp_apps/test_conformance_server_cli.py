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

"""The command-line contract, era pinning and clean shutdown."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_apps_conformance_server import names
import pytest

pytestmark = pytest.mark.integration

_CLEAN_EXITS = (0, -signal.SIGTERM)


@pytest.mark.parametrize(
    "args",
    [
        ["--transport", "streamable-http", "--options", '{"no_such": 1}'],
        ["--transport", "streamable-http", "--options", '{"page_size": 0}'],
        ["--transport", "streamable-http", "--options", "[]"],
        ["--transport", "streamable-http", "--host", "0.0.0.0"],
        ["--transport", "sse", "--host", "192.0.2.1"],
        ["--transport", "stdio", "--stateless"],
    ],
)
def test_bad_arguments_exit_2_before_serving(
    mcp_apps: Any, args: list[str]
) -> None:
  completed = subprocess.run(
      [sys.executable, "-m", "mcp_apps_conformance_server", *args],
      capture_output=True,
      env=mcp_apps.fixture_env(),
      timeout=30,
      check=False,
  )
  assert completed.returncode == 2
  assert completed.stdout == b""
  assert b"error:" in completed.stderr


def test_stdio_stdout_carries_only_protocol(mcp_apps: Any) -> None:
  initialize = {
      "jsonrpc": "2.0",
      "id": 1,
      "method": "initialize",
      "params": {
          "protocolVersion": "2025-11-25",
          "capabilities": {},
          "clientInfo": {"name": "raw", "version": "0"},
      },
  }
  completed = subprocess.run(
      [
          sys.executable,
          "-m",
          "mcp_apps_conformance_server",
          "--transport",
          "stdio",
      ],
      input=(json.dumps(initialize) + "\n").encode(),
      capture_output=True,
      env=mcp_apps.fixture_env(),
      timeout=30,
      check=False,
  )
  lines = completed.stdout.decode().splitlines()
  assert len(lines) == 1
  response = json.loads(lines[0])
  assert response["id"] == 1
  assert response["result"]["serverInfo"]["name"] == "mcp-apps-conformance"
  # SDK 2.3 sieves results through the 2025-11-25 schema, which has no
  # ServerCapabilities.extensions: the Apps advertisement is dropped here.
  assert "extensions" not in response["result"]["capabilities"]
  assert b"READY stdio" in completed.stderr
  assert completed.returncode == 0


async def test_strict_era_gate(
    legacy_http_server: Any, modern_http_server: Any, mcp_apps: Any
) -> None:
  async with mcp_apps.connect(legacy_http_server.url, mode="auto") as client:
    assert client.protocol_version == "2025-11-25"
    assert client.server_capabilities.extensions is None
  async with mcp_apps.connect(modern_http_server.url, mode="auto") as client:
    assert client.protocol_version == "2026-07-28"
    assert client.server_capabilities.extensions == {names.EXTENSION_ID: {}}
  with pytest.raises(BaseException) as refused:
    async with mcp_apps.connect(modern_http_server.url, mode="legacy"):
      pass
  assert _contains_code(refused.value, -32022)


def _contains_code(error: BaseException, code: int) -> bool:
  if isinstance(error, MCPError):
    return error.error.code == code
  if isinstance(error, BaseExceptionGroup):
    return any(_contains_code(e, code) for e in error.exceptions)
  return False


async def test_all_transports_shut_down_without_leaks(mcp_apps: Any) -> None:
  baseline = mcp_apps.child_pids()
  statuses = []
  servers = [
      mcp_apps.conformance_server("streamable-http"),
      mcp_apps.conformance_server("streamable-http", stateless=True),
      mcp_apps.conformance_server("sse"),
  ]
  for server in servers:
    server.__enter__()
  proxy = mcp_apps.round_robin_proxy([servers[1].url])
  proxy.__enter__()
  try:
    started = {s.pid for s in (*servers, proxy)}
    assert started <= mcp_apps.child_pids() - baseline
    for url in (servers[0].url, proxy.url, servers[2].url):
      async with mcp_apps.connect(url) as client:
        # A live GET stream or SSE connection must not block shutdown.
        assert (await client.call_tool(names.WHOAMI, {})).structured_content
    async with mcp_apps.connect(mcp_apps.stdio_parameters()) as client:
      stdio_children = mcp_apps.child_pids() - baseline - started
      assert len(stdio_children) == 1
      await client.call_tool(names.WHOAMI, {})
    assert mcp_apps.child_pids() - baseline == started
  finally:
    for process in (proxy, *servers):
      statuses.append(process.stop())
      process.__exit__(None, None, None)
  assert all(status in _CLEAN_EXITS for status in statuses), statuses
  assert mcp_apps.child_pids() == baseline
