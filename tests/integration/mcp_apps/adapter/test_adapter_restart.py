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

"""A real process restart of `adk api_server --mcp_apps`.

The test runs ADK's CLI server as a subprocess over an agents dir whose
agent (`mcp_apps_restart_agent`) keeps its sealed results and Session
lifecycle in SQLite and its Sessions in `sqlite:///`, acts as the renderer
page over HTTP, SIGKILLs the server's process group and starts a new server
on the same files and port.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
import contextlib
import dataclasses
import itertools
import json
import os
from pathlib import Path
import secrets
import signal
import socket
import subprocess
import sys
import time
from typing import Any

from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.host.fastapi_adapter import CSRF_COOKIE
from google.adk.mcp_apps.operations.idempotency import IDEMPOTENCY_META_KEY
from google.adk.mcp_apps.stores.sql_session_lifecycle_store import SqlSessionLifecycleStore
import httpx
from mcp_apps_conformance_server import names
import mcp_apps_restart_agent
import pytest
import scripted_llm

pytestmark = pytest.mark.integration

APP = "restart_probe"
USER = "user-1"
READY_SECONDS = 30.0
CONTEXT = "restart-probe context 7f3a"
"""The View's model context; unique so the model log can be searched."""
CONTEXT_MARKER = "[MCP App context"


def free_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return int(s.getsockname()[1])


def server_env(state: Path) -> dict[str, str]:
  """The server's environment: the fixtures and the stand-in model
  importable, the agent's state directory named."""
  env = dict(os.environ)
  paths = [
      str(Path(mcp_apps_restart_agent.__file__).parent),
      str(Path(scripted_llm.__file__).parent),
  ]
  if env.get("PYTHONPATH"):
    paths.append(env["PYTHONPATH"])
  env["PYTHONPATH"] = os.pathsep.join(paths)
  env[mcp_apps_restart_agent.STATE_ENV] = str(state)
  env["PYTHONUNBUFFERED"] = "1"
  return env


@dataclasses.dataclass
class Server:
  """One `adk api_server --mcp_apps` process (its own process group)."""

  process: subprocess.Popen[bytes]
  log: Path

  def output(self) -> str:
    return self.log.read_text(errors="replace")[-4000:]

  def kill(self) -> None:
    """SIGKILLs the server's group and every descendant (the MCP SDK starts
    the stdio server in its own group): no graceful shutdown; reaps it."""
    doomed = descendants(self.process.pid)
    with contextlib.suppress(ProcessLookupError):
      os.killpg(self.process.pid, signal.SIGKILL)
    for pid in doomed:
      with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    self.process.wait(timeout=10)


def descendants(root: int) -> list[int]:
  """The live descendants of `root`, read from /proc."""
  children: dict[int, list[int]] = {}
  for entry in Path("/proc").iterdir():
    if not entry.name.isdigit():
      continue
    try:
      stat = (entry / "stat").read_text()
    except OSError:
      continue
    fields = stat[stat.rfind(")") + 2 :].split()
    children.setdefault(int(fields[1]), []).append(int(entry.name))
  found, stack = [], [root]
  while stack:
    for child in children.get(stack.pop(), ()):
      found.append(child)
      stack.append(child)
  return found


def start_server(tmp_path: Path, port: int, name: str) -> Server:
  log = tmp_path / f"{name}.log"
  with log.open("wb") as out:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "google.adk.cli",
            "api_server",
            "--mcp_apps",
            "--no-reload",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--session_service_uri",
            f"sqlite:///{tmp_path / 'sessions.db'}",
            "--artifact_service_uri",
            "memory://",
            str(tmp_path / "agents"),
        ],
        cwd=tmp_path,
        env=server_env(tmp_path / "state"),
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
  return Server(process, log)


@contextlib.contextmanager
def running(tmp_path: Path, port: int, name: str) -> Iterator[Server]:
  server = start_server(tmp_path, port, name)
  try:
    yield server
  finally:
    server.kill()


async def wait_ready(client: httpx.AsyncClient, server: Server) -> None:
  """Polls `GET /list-apps` until it answers; between attempts it waits on
  the process itself (an exit fails at once), bounded by `READY_SECONDS`."""
  deadline = time.monotonic() + READY_SECONDS
  while True:
    try:
      listed = await client.get("/list-apps")
      assert listed.status_code == 200, listed.text
      assert APP in listed.json()
      return
    except httpx.TransportError:
      pass
    assert time.monotonic() < deadline, "server not ready:\n" + server.output()
    with contextlib.suppress(subprocess.TimeoutExpired):
      code = await asyncio.to_thread(server.process.wait, 0.05)
      pytest.fail(f"server exited with {code}:\n{server.output()}")


class Page:
  """The renderer page's side of the HTTP contract."""

  def __init__(self, client: httpx.AsyncClient, origin: str) -> None:
    self.client = client
    self.origin = origin
    self._nonces = (f"nonce-{i}" for i in itertools.count())

  async def csrf(self) -> str:
    page = await self.client.get("/mcp-apps/")
    assert page.status_code == 200, page.text
    return str(page.cookies[CSRF_COOKIE])

  async def post(
      self, path: str, body: dict[str, Any], **headers: str
  ) -> httpx.Response:
    token = await self.csrf()
    return await self.client.post(
        path,
        json=body,
        headers={"Origin": self.origin, "X-CSRF-Token": token, **headers},
    )

  async def new_session(self) -> str:
    created = await self.client.post(f"/apps/{APP}/users/{USER}/sessions")
    assert created.status_code == 200, created.text
    return str(created.json()["id"])

  async def turn(self, session_id: str, text: str) -> None:
    run = await self.client.post(
        "/run",
        json={
            "appName": APP,
            "userId": USER,
            "sessionId": session_id,
            "newMessage": {"role": "user", "parts": [{"text": text}]},
        },
    )
    assert run.status_code == 200, run.text

  async def widgets(self, session_id: str) -> list[dict[str, Any]]:
    listed = await self.client.get(
        f"/mcp-apps/api/sessions/{APP}/{USER}/{session_id}/widgets"
    )
    assert listed.status_code == 200, listed.text
    return [
        {"appName": APP, "userId": USER, "sessionId": session_id, **w}
        for w in listed.json()["widgets"]
    ]

  async def open_view(self, widget: dict[str, Any]) -> httpx.Response:
    keys = (
        "appName",
        "userId",
        "sessionId",
        "toolsetId",
        "eventId",
        "functionCallId",
    )
    return await self.post("/mcp-apps/api/views", {k: widget[k] for k in keys})

  async def rpc(
      self, view_id: str, lease: str, message: dict[str, Any]
  ) -> httpx.Response:
    return await self.post(
        f"/mcp-apps/api/views/{view_id}/rpc",
        message,
        **{
            "X-MCP-Apps-Lease": lease,
            "X-MCP-Apps-Request-Token": next(self._nonces),
        },
    )


def side_effect_call(request_id: int, key: str) -> dict[str, Any]:
  """A governed `tools/call` with a JSON-RPC id and an idempotency key."""
  return {
      "jsonrpc": "2.0",
      "id": request_id,
      "method": "tools/call",
      "params": {
          "name": names.SIDE_EFFECT,
          "arguments": {"key": key},
          "_meta": {IDEMPOTENCY_META_KEY: "restart-op-1"},
      },
  }


def update_context(request_id: int) -> dict[str, Any]:
  return {
      "jsonrpc": "2.0",
      "id": request_id,
      "method": "ui/update-model-context",
      "params": {"content": [{"type": "text", "text": CONTEXT}]},
  }


def executions(state: Path, key: str) -> int:
  """How often the conformance server ran `side_effect(key)` (its ledger)."""
  ledger = json.loads((state / "effects.json").read_text())
  return int(ledger["counts"].get(key, 0))


def model_requests(state: Path) -> list[dict[str, Any]]:
  """Every request the stand-in model received, in order."""
  lines = (state / "requests.jsonl").read_text().splitlines()
  return [json.loads(line) for line in lines]


def write_agents_dir(tmp_path: Path) -> Path:
  package = tmp_path / "agents" / APP
  package.mkdir(parents=True)
  (package / "__init__.py").write_text(
      "from mcp_apps_restart_agent import root_agent\n"
  )
  state = tmp_path / "state"
  state.mkdir()
  (state / "binding.key").write_bytes(secrets.token_bytes(32))
  return state


async def read_lifecycle(state: Path, key: SessionKey) -> Any:
  store = SqlSessionLifecycleStore(f"sqlite+aiosqlite:///{state / 'stores.db'}")
  try:
    return await store.read(key)
  finally:
    await store.aclose()


@pytest.mark.conformance("P5-STATE-01", "P5-STATE-02")
async def test_a_killed_server_keeps_durable_records_and_forgets_the_rest(
    tmp_path: Path,
) -> None:
  """P5-STATE-01: after SIGKILL and a new `adk api_server` on the same
  files, the lifecycle record is unchanged, the widget is listed `cold`
  with its Event, and export resolves its sealed result. P5-STATE-02: the
  old View id is unknown, the old lease is refused, the old JSON-RPC id and
  idempotency key run afresh on a new View, and the next model turn
  carries none of the old View's model context."""
  state = write_agents_dir(tmp_path)
  port = free_port()
  origin = f"http://127.0.0.1:{port}"
  async with httpx.AsyncClient(base_url=origin, timeout=30.0) as client:
    page = Page(client, origin)

    with running(tmp_path, port, "first") as first:
      await wait_ready(client, first)
      session_id = await page.new_session()
      await page.turn(session_id, "render a view")
      (widget,) = await page.widgets(session_id)
      assert widget["state"] == "live"
      opened = await page.open_view(widget)
      assert opened.status_code == 200, opened.text
      view_id, lease = opened.json()["viewId"], opened.json()["lease"]

      called = await page.rpc(view_id, lease, side_effect_call(1, "k"))
      assert called.status_code == 200, called.text
      assert called.json()["result"]["structuredContent"]["count"] == 1
      # The idempotency record is live: the same id and key on the same
      # View returns the retained outcome without running again.
      again = await page.rpc(view_id, lease, side_effect_call(1, "k"))
      assert again.status_code == 200, again.text
      assert again.json()["result"] == called.json()["result"]
      assert executions(state, "k") == 1

      updated = await page.rpc(view_id, lease, update_context(2))
      assert updated.status_code == 200, updated.text
      assert "result" in updated.json(), updated.json()
      # The register is live: the next model turn sees the View's context.
      await page.turn(session_id, "what does the view say?")
      seen = json.dumps(model_requests(state)[-1]["contents"])
      assert CONTEXT in seen and CONTEXT_MARKER in seen
      key = SessionKey(APP, USER, session_id)
      lifecycle = await read_lifecycle(state, key)
      assert lifecycle.incarnation >= 1
      first.kill()
      assert first.process.returncode == -signal.SIGKILL

    with running(tmp_path, port, "second") as second:
      await wait_ready(client, second)
      # P5-STATE-01: the durable records survived the kill.
      assert await read_lifecycle(state, key) == lifecycle
      listed, *later = await page.widgets(session_id)
      assert later == []
      assert listed["state"] == "cold"
      assert {k: listed[k] for k in ("eventId", "functionCallId")} == {
          k: widget[k] for k in ("eventId", "functionCallId")
      }
      exported = await page.post(
          "/mcp-apps/api/exports",
          {
              **{
                  k: widget[k]
                  for k in (
                      "appName",
                      "userId",
                      "sessionId",
                      "eventId",
                      "functionCallId",
                  )
              },
              "operationInstanceId": "export-after-restart",
          },
      )
      assert exported.status_code == 200, exported.text
      assert exported.json()["content"], exported.json()
      cold = await page.open_view(widget)
      assert cold.status_code == 409
      assert cold.json() == {"reason": "view_unavailable"}

      # P5-STATE-02: no View, lease, idempotency record or register left.
      old = await page.rpc(view_id, lease, side_effect_call(1, "k"))
      assert old.status_code == 404
      assert old.json() == {"reason": "not_found"}
      stream = await client.get(
          f"/mcp-apps/api/views/{view_id}/notifications",
          headers={"X-MCP-Apps-Lease": lease},
      )
      assert stream.status_code == 404
      gone = await page.post(
          f"/mcp-apps/api/views/{view_id}/teardown",
          {"acknowledged": True},
          **{"X-MCP-Apps-Lease": lease},
      )
      assert gone.status_code == 404
      assert gone.json() == {"reason": "not_found"}
      await page.turn(session_id, "render another view")
      old_widget, fresh_widget = await page.widgets(session_id)
      assert old_widget["state"] == "cold"
      assert fresh_widget["state"] == "live"
      reopened = await page.open_view(fresh_widget)
      assert reopened.status_code == 200, reopened.text
      new_view, new_lease = reopened.json()["viewId"], reopened.json()["lease"]
      assert new_view != view_id
      refused = await page.rpc(new_view, lease, side_effect_call(1, "k"))
      assert refused.status_code == 409
      assert refused.json() == {"reason": "lease_invalid"}
      rerun = await page.rpc(new_view, new_lease, side_effect_call(1, "k"))
      assert rerun.status_code == 200, rerun.text
      assert rerun.json()["result"]["structuredContent"]["count"] == 2
      assert executions(state, "k") == 2

      await page.turn(session_id, "what does the view say now?")
      after = [
          r for r in model_requests(state) if r["pid"] == second.process.pid
      ]
      assert len(after) >= 3, "the restarted server's model was not called"
      for request in after:
        seen = json.dumps(request["contents"])
        assert CONTEXT_MARKER not in seen
        # The old context is in the Session's history only as the earlier
        # user prompt, never as a register block.
        assert CONTEXT not in seen
