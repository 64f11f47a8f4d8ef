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

"""App paths: the host's render and a View's own call are admitted.

A real Runner turn over a profile-bound registry calls the conformance
server's `open_view`; `bootstrap_render` then renders the View (admitted as
`HOST_RENDER`) and the View calls its app-only `app_followup` through
`call_app_tool` (admitted as `APP_OPERATION`). The audit append pipeline is
a later part: here an Event appended to a real session service from inside
each operation (while its real server request is in flight) shows what it
will be stamped, and a real FunctionTool run there shows the immediate
caller its tools see.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
import contextlib
from pathlib import Path
import re
from typing import Any
from typing import Optional

from binding_support import conformance_connection
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.events.event import Event
from google.adk.mcp_apps.affinity.routing import call_app_tool
from google.adk.mcp_apps.bootstrap.render import view_hold
from google.adk.mcp_apps.event_policy import provenance
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext
from mcp_apps_conformance_server import names
from provenance_support import protected
import pytest
from sealing_support import bound_stack
from sealing_support import close_profile
from sealing_support import LoggedStack
from sealing_support import sql_profile
from sealing_support import TOOLSET

pytestmark = pytest.mark.integration

HOST_RENDER_STAMP = ("app_audit", "mcp_app", "host")
APP_OPERATION_STAMP = ("app_audit", "mcp_app", "app")


class _AuditProbe:
  """Appends an Event and runs a real tool from inside an operation."""

  def __init__(self) -> None:
    self.sink = InMemorySessionService()
    self.admitted: list[Optional[provenance.Provenance]] = []
    self.callers: list[str] = []

  async def probe(self, what: str) -> None:
    self.admitted.append(provenance.current_provenance())
    session = await self.sink.create_session(app_name="audit", user_id="u")
    # A later audit pipeline's append, with a forged claim to be the user's.
    await self.sink.append_event(
        session,
        Event(author=what, invocation_origin="user", invocation_id="e-op"),
    )

    def nested(tool_context: ToolContext) -> str:
      """Reports its immediate caller."""
      self.callers.append(tool_context.immediate_caller)
      return tool_context.immediate_caller

    context = InvocationContext(
        session_service=self.sink,
        invocation_id="e-op",
        session=session,
        agent=LlmAgent(name="host_side"),
    )
    await FunctionTool(nested).run_async(
        args={}, tool_context=ToolContext(context)
    )

  async def stored(self) -> list[Event]:
    (session,) = (
        await self.sink.list_sessions(app_name="audit", user_id="u")
    ).sessions
    full = await self.sink.get_session(
        app_name="audit", user_id="u", session_id=session.id
    )
    assert full is not None
    return list(full.events)


@contextlib.asynccontextmanager
async def _stack(
    mcp_apps: Any, start_server: Any, tmp_path: Path
) -> AsyncIterator[LoggedStack]:
  log = tmp_path / "requests.jsonl"
  params = conformance_connection(
      "stdio", {"request_log_file": str(log)}, mcp_apps, start_server
  )
  profile = await sql_profile(f"sqlite+aiosqlite:///{tmp_path / 'stores.db'}")
  service = SqliteSessionService(str(tmp_path / "sessions.db"))
  try:
    async with bound_stack(
        params, session_service=service, profile=profile
    ) as st:
      yield LoggedStack(st, log)
  finally:
    await close_profile(profile)


def _nonce(event: Event) -> str:
  (response,) = event.get_function_responses()
  text = " ".join(
      block.get("text", "") for block in response.response["content"]
  )
  match = re.search(r"nonce (\S+)", text)
  assert match, response.response
  return match.group(1)


@pytest.mark.conformance("P3-PROV-07")
@pytest.mark.conformance("P3-FIN-07")
@pytest.mark.conformance("P3-PROV-05")
async def test_render_is_the_hosts_and_the_views_call_is_the_apps(
    mcp_apps: Any, start_server: Any, tmp_path: Path
) -> None:
  render_probe, call_probe = _AuditProbe(), _AuditProbe()
  async with _stack(mcp_apps, start_server, tmp_path) as h:
    sid, ev = await h.turn((names.OPEN_VIEW, {}))
    (call_id,) = [w.id for w in ev.actions.render_ui_widgets]
    hold = h.reservation(sid, call_id)
    assert hold is not None
    read = hold.read_resource

    async def read_and_audit(uri: str, **kwargs: Any) -> Any:
      result = await read(uri, **kwargs)  # The real server read.
      await render_probe.probe("render")
      return result

    hold.read_resource = read_and_audit
    doc = await h.bootstrap(sid, ev.id, call_id)
    assert provenance.current_provenance() is None

    # PROV-07 / FIN-07: the host's render, mcp_app with the host as caller.
    assert render_probe.admitted == [provenance.HOST_RENDER]
    assert [protected(e) for e in await render_probe.stored()] == [
        HOST_RENDER_STAMP
    ]
    assert render_probe.callers == ["host"]

    # PROV-05: the View's own tools/call, on its grant's generation.
    grant_hold = view_hold(doc.grant)
    call = grant_hold.call_tool

    async def call_and_audit(name: str, arguments: Any, **kwargs: Any) -> Any:
      await call_probe.probe("view_call")
      return await call(name, arguments, **kwargs)

    grant_hold.call_tool = call_and_audit
    server_id = h.st.registry.lookup(TOOLSET).spec.server_id
    result = await call_app_tool(
        grant_hold,
        names.APP_FOLLOWUP,
        {"nonce": _nonce(ev)},
        view_server_id=server_id,
        target_server_id=server_id,
    )
    assert not result.is_error, result
    assert call_probe.admitted == [provenance.APP_OPERATION]
    assert [protected(e) for e in await call_probe.stored()] == [
        APP_OPERATION_STAMP
    ]
    assert call_probe.callers == ["app"]
    assert provenance.current_provenance() is None
    doc.grant.revoke()
