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

"""A host service over a real bound stack, and the test's own contracts.

`host` yields a `Host`: an `McpAppHostService` on a started registry over
the real conformance server (stdio) and a real Runner, with a header-based
`PrincipalResolver` (the deployment contract a test supplies) and an
allow-list `SessionAuthorizer`. `Host.widget` runs a real turn through the
service and returns the widget it rendered.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
import contextlib
import dataclasses
import itertools
from pathlib import Path
from typing import Any
from typing import Optional

from google.adk.mcp_apps.contracts.local_dev import is_loopback_host
from google.adk.mcp_apps.contracts.principal_resolver import Principal
from google.adk.mcp_apps.contracts.principal_resolver import PrincipalRequest
from google.adk.mcp_apps.contracts.principal_resolver import PrincipalUnresolvedError
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.session_authorizer import SessionPurpose
from google.adk.mcp_apps.contracts.session_authorizer import WidgetTarget
from google.adk.mcp_apps.host.service import McpAppHostService
from google.adk.mcp_apps.host.service import OpenedView
from google.adk.mcp_apps.host.view_leases import ViewLeases
from google.adk.mcp_apps.operations.message_permit import attest_every_message
from google.adk.mcp_apps.profile import local_dev_profile
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.genai import types as genai_types
from mcp_apps_conformance_server import names
from sealing_support import APP
from sealing_support import bound_stack
from sealing_support import BoundStack
from sealing_support import close_profile
from sealing_support import sql_profile
from sealing_support import TOOLSET
from sealing_support import USER
from sealing_support import widget_event

ALICE = "alice-principal"
BOB = "bob-principal"


def caller(principal_id: Optional[str] = ALICE) -> PrincipalRequest:
  """A request as the adapter saw it; None carries no credential."""
  headers = {} if principal_id is None else {"X-Test-User": principal_id}
  return PrincipalRequest(client_host="127.0.0.1", headers=headers)


class HeaderResolver:
  """The test deployment's `PrincipalResolver`: the `x-test-user` header of
  a loopback peer (loopback-only, as the dev stores beside it require)."""

  dev_only = True
  loopback_only = True

  async def resolve(self, request: PrincipalRequest) -> Principal:
    if not is_loopback_host(request.client_host):
      raise PrincipalUnresolvedError("not_loopback")
    value = request.headers.get("x-test-user")
    if not value:
      raise PrincipalUnresolvedError("unauthenticated")
    return Principal(value)


class AllowList:
  """The test deployment's `SessionAuthorizer`: VIEW for listed principals;
  EXPORT only when `export` lists the principal. Records what it was asked.
  """

  def __init__(self, *allowed: str, export: tuple[str, ...] = ()) -> None:
    self.allowed = set(allowed)
    self.export = set(export)
    self.asked: list[tuple[str, SessionPurpose, Optional[WidgetTarget]]] = []

  async def authorize(
      self,
      principal: Principal,
      session: SessionKey,
      purpose: SessionPurpose,
      *,
      widget: Optional[WidgetTarget] = None,
  ) -> bool:
    del session
    self.asked.append((principal.principal_id, purpose, widget))
    if purpose is SessionPurpose.EXPORT:
      return principal.principal_id in self.export
    return principal.principal_id in self.allowed


@dataclasses.dataclass(frozen=True)
class Widget:
  """A widget a turn rendered."""

  session: SessionKey
  event_id: str
  function_call_id: str

  def target(self) -> dict[str, Any]:
    return {
        "session": self.session,
        "toolset_id": TOOLSET,
        "event_id": self.event_id,
        "function_call_id": self.function_call_id,
    }


@dataclasses.dataclass
class Host:
  """A service, its stack and what the View was sent."""

  service: McpAppHostService
  st: BoundStack
  authorizer: AllowList
  sent: list[tuple[str, dict[str, Any]]]
  nonces: Any = dataclasses.field(
      default_factory=lambda: (f"n-{i}" for i in itertools.count())
  )

  async def new_session(self) -> SessionKey:
    created = await self.st.session_service.create_session(
        app_name=APP, user_id=USER
    )
    return SessionKey(APP, USER, str(created.id))

  async def widget(
      self,
      principal_id: str = ALICE,
      session: Optional[SessionKey] = None,
      tool: str = names.OPEN_VIEW,
  ) -> Widget:
    """A real turn, through the service, that renders one widget."""
    key = session or await self.new_session()
    self.st.llm.steps = [[(tool, {})]]
    events = await self.service.run_turn(
        caller(principal_id),
        session=key,
        new_message=genai_types.Content(
            role="user", parts=[genai_types.Part(text="go")]
        ),
    )
    event = widget_event(events)
    (widget,) = event.actions.render_ui_widgets
    return Widget(key, event.id, widget.id)

  async def open(self, widget: Widget, principal_id: str = ALICE) -> OpenedView:
    return await self.service.open_view(caller(principal_id), **widget.target())

  async def send(
      self,
      opened: OpenedView,
      message: dict[str, Any],
      *,
      principal_id: str = ALICE,
      lease: Optional[str] = None,
      view_id: Optional[str] = None,
      request_token: Optional[str] = None,
  ) -> Any:
    return await self.service.handle(
        caller(principal_id),
        view_id=view_id or opened.view_id,
        lease=lease or opened.lease,
        request_token=request_token or next(self.nonces),
        message=message,
    )


def read_view(request_id: int = 1) -> dict[str, Any]:
  """The View's `resources/read` of its own resource."""
  return {
      "jsonrpc": "2.0",
      "id": request_id,
      "method": "resources/read",
      "params": {"uri": names.VIEW_URI},
  }


@contextlib.asynccontextmanager
async def host(
    mcp_apps: Any,
    tmp_path: Path,
    backend: str = "in_memory",
    *,
    authorizer: Optional[AllowList] = None,
    leases: Optional[ViewLeases] = None,
    profile: Any = None,
    session_service: Any = None,
    spec_fields: Optional[dict[str, Any]] = None,
    **service_options: Any,
) -> AsyncIterator[Host]:
  """A host service over the conformance server, on `backend`;
  `spec_fields` are further `McpToolsetSpec` fields (callbacks)."""
  authorizer = authorizer or AllowList(ALICE, BOB)
  contracts = {
      "principal_resolver": HeaderResolver(),
      "session_authorizer": authorizer,
  }
  opened_here = profile is None
  if profile is None:
    if backend == "sqlite":
      profile = await sql_profile(
          f"sqlite+aiosqlite:///{tmp_path / 'stores.db'}", **contracts
      )
    else:
      profile = local_dev_profile(**contracts)
  if session_service is None:
    session_service = (
        SqliteSessionService(str(tmp_path / "sessions.db"))
        if backend == "sqlite"
        else InMemorySessionService()
    )
  params = StdioConnectionParams(
      server_params=mcp_apps.stdio_parameters(
          {"effects_file": str(tmp_path / "effects.json")}
      ),
      timeout=30.0,
  )
  sent: list[tuple[str, dict[str, Any]]] = []

  async def notify(view_id: str, message: dict[str, Any]) -> None:
    sent.append((view_id, message))

  service_options.setdefault("message_confirmation", attest_every_message)
  try:
    async with bound_stack(
        params,
        session_service=session_service,
        profile=profile,
        **(spec_fields or {}),
    ) as st:
      service = McpAppHostService(
          st.registry,
          st.runner,
          leases=leases,
          notify=notify,
          **service_options,
      )
      yield Host(service, st, authorizer, sent)
  finally:
    if opened_here:
      await close_profile(profile)
