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

"""ADK's own FastAPI app with the `/mcp-apps` adapter, served for tests.

`served` builds `get_fast_api_app(..., mcp_apps=True)` over an agent whose
toolset comes from an `McpAppBindingRegistry` on the real conformance
server (stdio) and a scripted model, serves it with uvicorn on a free
loopback port (or, `socket=False`, through httpx's ASGI transport from a
loopback peer), and hands the test an `httpx.AsyncClient` and helpers
that act as the renderer page does: CSRF cookie, Origin, lease headers.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import contextlib
import dataclasses
import itertools
from pathlib import Path
import socket
from typing import Any
from typing import Optional

from google.adk.agents.llm_agent import LlmAgent
from google.adk.cli.fast_api import get_fast_api_app
from google.adk.cli.utils.base_agent_loader import BaseAgentLoader
from google.adk.mcp_apps.binding.registry import McpAppBindingRegistry
from google.adk.mcp_apps.binding.spec import McpToolsetSpec
from google.adk.mcp_apps.contracts.local_dev import is_loopback_host
from google.adk.mcp_apps.contracts.principal_resolver import Principal
from google.adk.mcp_apps.contracts.principal_resolver import PrincipalRequest
from google.adk.mcp_apps.contracts.principal_resolver import PrincipalUnresolvedError
from google.adk.mcp_apps.host.fastapi_adapter import CSRF_COOKIE
from google.adk.mcp_apps.host.fastapi_adapter import McpAppsAdapter
from google.adk.tools.mcp_tool import StdioConnectionParams
import httpx
from mcp_apps_conformance_server import names
from scripted_llm import ScriptedLlm
import uvicorn

APP = "apps_probe"
USER = "user-1"
TOOLSET = "conf"
GOOD_BEARER = "bearer-alice-credential"


class FixedLoader(BaseAgentLoader):
  """Loads the one test agent under `APP`."""

  def __init__(self, agent: Any) -> None:
    self._agent = agent

  def load_agent(self, agent_name: str) -> Any:
    if agent_name != APP:
      raise ValueError(f"no agent {agent_name!r}")
    return self._agent

  def list_agents(self) -> list[str]:
    return [APP]


class BearerResolver:
  """A deployment's `PrincipalResolver`: a loopback peer's bearer token.

  Marked dev/loopback-only like the dev stores it is combined with.
  """

  dev_only = True
  loopback_only = True

  def __init__(self) -> None:
    self.seen = 0

  async def resolve(self, request: PrincipalRequest) -> Principal:
    self.seen += 1
    if not is_loopback_host(request.client_host):
      raise PrincipalUnresolvedError("not_loopback")
    value = request.headers.get("authorization", "")
    if value != f"Bearer {GOOD_BEARER}":
      raise PrincipalUnresolvedError("unauthenticated")
    return Principal("alice")


def free_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return int(s.getsockname()[1])


class _Server(uvicorn.Server):
  """uvicorn that says when it accepts connections."""

  def __init__(self, config: uvicorn.Config) -> None:
    super().__init__(config)
    self.ready = asyncio.Event()

  async def startup(self, sockets: Any = None) -> None:
    await super().startup(sockets=sockets)
    self.ready.set()


@dataclasses.dataclass
class Served:
  """A served app and a client acting as the renderer page."""

  client: httpx.AsyncClient
  adapter: McpAppsAdapter
  registry: McpAppBindingRegistry
  llm: ScriptedLlm
  origin: str
  app: Any
  headers: dict[str, str] = dataclasses.field(default_factory=dict)
  nonces: Any = dataclasses.field(
      default_factory=lambda: (f"nonce-{i}" for i in itertools.count())
  )

  async def csrf(self) -> str:
    """Loads the page; returns the CSRF cookie it set."""
    page = await self.client.get("/mcp-apps/", headers=self.headers)
    assert page.status_code == 200, page.text
    return str(page.cookies[CSRF_COOKIE])

  def post_headers(self, token: str, **extra: str) -> dict[str, str]:
    return {
        **self.headers,
        "Origin": self.origin,
        "X-CSRF-Token": token,
        **extra,
    }

  async def chat_turn(self, tool: str = names.OPEN_VIEW) -> str:
    """A chat turn on the stock routes whose model calls `tool`; returns
    the new Session's id."""
    created = await self.client.post(
        f"/apps/{APP}/users/{USER}/sessions", headers=self.headers
    )
    assert created.status_code == 200, created.text
    session_id = created.json()["id"]
    self.llm.steps = [[(tool, {})]]
    run = await self.client.post(
        "/run",
        json={
            "appName": APP,
            "userId": USER,
            "sessionId": session_id,
            "newMessage": {"role": "user", "parts": [{"text": "go"}]},
        },
        headers=self.headers,
    )
    assert run.status_code == 200, run.text
    return str(session_id)

  async def chat_widget(self, tool: str = names.OPEN_VIEW) -> dict[str, Any]:
    """A chat turn on the stock routes that renders a widget; returns it
    as the widgets route lists it (plus the Session locator)."""
    session_id = await self.chat_turn(tool)
    listed = await self.client.get(
        f"/mcp-apps/api/sessions/{APP}/{USER}/{session_id}/widgets",
        headers=self.headers,
    )
    assert listed.status_code == 200, listed.text
    (widget,) = listed.json()["widgets"]
    return {
        "appName": APP,
        "userId": USER,
        "sessionId": session_id,
        **widget,
    }

  async def open_view(self, widget: dict[str, Any]) -> httpx.Response:
    token = await self.csrf()
    return await self.client.post(
        "/mcp-apps/api/views",
        json={
            k: widget[k]
            for k in (
                "appName",
                "userId",
                "sessionId",
                "toolsetId",
                "eventId",
                "functionCallId",
            )
        },
        headers=self.post_headers(token),
    )

  async def rpc(
      self, view_id: str, lease: str, message: dict[str, Any]
  ) -> httpx.Response:
    token = await self.csrf()
    return await self.client.post(
        f"/mcp-apps/api/views/{view_id}/rpc",
        json=message,
        headers=self.post_headers(
            token,
            **{
                "X-MCP-Apps-Lease": lease,
                "X-MCP-Apps-Request-Token": next(self.nonces),
            },
        ),
    )

  async def teardown(self, view_id: str, lease: str) -> httpx.Response:
    token = await self.csrf()
    return await self.client.post(
        f"/mcp-apps/api/views/{view_id}/teardown",
        json={"acknowledged": True},
        headers=self.post_headers(token, **{"X-MCP-Apps-Lease": lease}),
    )


def build_app(
    mcp_apps: Any,
    tmp_path: Path,
    *,
    port: int,
    host: str = "127.0.0.1",
    profile: Any = None,
    allow_dev_providers: bool = True,
    mcp_apps_option: bool = True,
    connection_params: Any = None,
    session_service_uri: str = "memory://",
    session_db_kwargs: Optional[dict[str, Any]] = None,
) -> tuple[Any, McpAppBindingRegistry, ScriptedLlm]:
  """ADK's FastAPI app (adapter on) over the conformance server (or
  `connection_params`' server, e.g. a published one) and the Session
  service `session_service_uri` names; the caller closes the registry."""
  params = connection_params or StdioConnectionParams(
      server_params=mcp_apps.stdio_parameters(
          {"effects_file": str(tmp_path / "effects.json")}
      ),
      timeout=30.0,
  )
  registry = McpAppBindingRegistry(
      {TOOLSET: McpToolsetSpec(connection_params=params)},
      profile,
      allow_dev_providers=allow_dev_providers,
  )
  llm = ScriptedLlm()
  agent = LlmAgent(name="probe", model=llm, tools=[registry.toolset(TOOLSET)])
  app = get_fast_api_app(
      agents_dir=str(tmp_path),
      agent_loader=FixedLoader(agent),
      session_service_uri=session_service_uri,
      session_db_kwargs=session_db_kwargs,
      artifact_service_uri="memory://",
      use_local_storage=False,
      web=False,
      host=host,
      bind_host=host,
      port=port,
      mcp_apps=mcp_apps_option,
  )
  return app, registry, llm


@contextlib.asynccontextmanager
async def served(
    mcp_apps: Any,
    tmp_path: Path,
    *,
    host: str = "127.0.0.1",
    profile: Any = None,
    allow_dev_providers: bool = True,
    socket_: bool = True,
    mcp_apps_option: bool = True,
    connection_params: Any = None,
    session_service_uri: str = "memory://",
    session_db_kwargs: Optional[dict[str, Any]] = None,
    **service_options: Any,
) -> AsyncIterator[Served]:
  """ADK's FastAPI app with the adapter over the conformance server (the
  Session service `session_service_uri` names, built with
  `session_db_kwargs`: in memory by default)."""
  port = free_port()
  app, registry, llm = build_app(
      mcp_apps,
      tmp_path,
      port=port,
      host=host,
      profile=profile,
      allow_dev_providers=allow_dev_providers,
      mcp_apps_option=mcp_apps_option,
      connection_params=connection_params,
      session_service_uri=session_service_uri,
      session_db_kwargs=session_db_kwargs,
  )
  adapter = getattr(app.state, "mcp_apps_adapter", None)
  if adapter is not None:
    adapter.service_options.update(service_options)
  origin = f"http://127.0.0.1:{port}"
  server: Optional[_Server] = None
  task: Optional[asyncio.Task[Any]] = None
  try:
    if socket_:
      server = _Server(
          uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
      )
      task = asyncio.create_task(server.serve())
      ready = asyncio.create_task(server.ready.wait())
      await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
      assert server.ready.is_set(), "uvicorn did not start"
      transport: Any = None
    else:
      transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
    async with httpx.AsyncClient(
        base_url=origin, transport=transport, timeout=60.0
    ) as client:
      yield Served(client, adapter, registry, llm, origin, app)
  finally:
    if adapter is not None:
      await adapter.aclose()
    if server is not None and task is not None:
      server.should_exit = True
      await task
    await registry.aclose()


async def list_widgets(s: Served, session_id: str) -> list[dict[str, Any]]:
  """The Session's widgets as the widgets route lists them, each with the
  Session locator."""
  answer = await s.client.get(
      f"/mcp-apps/api/sessions/{APP}/{USER}/{session_id}/widgets",
      headers=s.headers,
  )
  assert answer.status_code == 200, answer.text
  return [
      {"appName": APP, "userId": USER, "sessionId": session_id, **widget}
      for widget in answer.json()["widgets"]
  ]


async def turn_widgets(
    s: Served, *steps: list[tuple[str, dict[str, Any]]]
) -> list[dict[str, Any]]:
  """One chat turn in a new Session whose model plays `steps` (one model
  response each); returns the widgets it rendered, as listed."""
  created = await s.client.post(
      f"/apps/{APP}/users/{USER}/sessions", headers=s.headers
  )
  assert created.status_code == 200, created.text
  session_id = str(created.json()["id"])
  s.llm.steps = [list(step) for step in steps]
  run = await s.client.post(
      "/run",
      json={
          "appName": APP,
          "userId": USER,
          "sessionId": session_id,
          "newMessage": {"role": "user", "parts": [{"text": "go"}]},
      },
      headers=s.headers,
  )
  assert run.status_code == 200, run.text
  return await list_widgets(s, session_id)
