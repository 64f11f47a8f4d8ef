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


"""`McpAppHostService.export`, `run_tool_again` and `close`.

The service resolves the caller from the request before it delegates to the
export resolver and to the re-run; both are proven in depth in their own
tests (test_export_*.py, test_host_rerun.py). These tests check what the
service adds: the principal comes from the request, denials are typed, and
`close` ends every View and every later export.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from google.adk.mcp_apps.contracts.export_audit_store import ExportAuditStatus
from google.adk.mcp_apps.facades.callback_context import ReadonlyCallbackContext
from google.adk.mcp_apps.host.errors import HostServiceError
from google.adk.mcp_apps.host.errors import HostServiceErrorReason
from google.adk.mcp_apps.host.rerun import RerunConfirmation
from host_support import ALICE
from host_support import AllowList
from host_support import BOB
from host_support import caller
from host_support import host
from host_support import read_view
from mcp_apps_conformance_server import names
import pytest

pytestmark = pytest.mark.integration


async def responses_of(h: Any, key: Any, tool: str) -> int:
  """How many function responses of `tool` the Session holds."""
  session = await h.st.session_service.get_session(
      app_name=key.app_name, user_id=key.user_id, session_id=key.session_id
  )
  return sum(
      1
      for event in session.events
      for response in event.get_function_responses()
      if response.name == tool
  )


@pytest.mark.conformance("P5-EXP-01", "P2-COLD-15")
async def test_export_releases_bytes_only_for_a_caller_granted_export(
    mcp_apps: Any, tmp_path: Path
) -> None:
  authorizer = AllowList(ALICE, BOB, export=(ALICE,))
  async with host(mcp_apps, tmp_path, authorizer=authorizer) as h:
    widget = await h.widget()
    locator = {
        "session": widget.session,
        "event_id": widget.event_id,
        "function_call_id": widget.function_call_id,
    }
    with pytest.raises(HostServiceError) as unauthenticated:
      await h.service.export(
          caller(None), operation_instance_id="op-0", **locator
      )
    assert unauthenticated.value.reason is (
        HostServiceErrorReason.UNAUTHENTICATED
    )
    with pytest.raises(HostServiceError) as view_only:
      await h.service.export(
          caller(BOB), operation_instance_id="op-1", **locator
      )
    assert view_only.value.reason is HostServiceErrorReason.UNAUTHORIZED
    exported = await h.service.export(
        caller(ALICE), operation_instance_id="op-2", **locator
    )
    body = json.loads(exported.body)
    assert body["structuredContent"]  # The sealed, unprojected result.
    assert "<html" not in exported.body.decode().lower()
    assert h.service.view_ids == ()  # Export opens no View.
    store = h.st.profile.export_audit_store
    statuses = [r.status for r in await store.records("op-2")]
    assert statuses == [
        ExportAuditStatus.AUTHORIZED,
        ExportAuditStatus.RELEASED,
    ]
    assert [r.status for r in await store.records("op-1")] == [
        ExportAuditStatus.DENIED
    ]


@pytest.mark.conformance("P2-COLD-11", "P2-COLD-12", "P2-COLD-14")
async def test_run_tool_again_is_a_confirmed_new_call_with_a_new_view(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with host(mcp_apps, tmp_path) as h:
    widget = await h.widget()
    asked: list[RerunConfirmation] = []

    async def confirm(prompt: RerunConfirmation) -> bool:
      asked.append(prompt)
      return True

    with pytest.raises(HostServiceError) as unauthenticated:
      await h.service.run_tool_again(
          caller(None),
          session=widget.session,
          event_id=widget.event_id,
          function_call_id=widget.function_call_id,
          confirm=confirm,
      )
    assert unauthenticated.value.reason is (
        HostServiceErrorReason.UNAUTHENTICATED
    )
    assert asked == []
    calls = await responses_of(h, widget.session, names.OPEN_VIEW)
    again = await h.service.run_tool_again(
        caller(ALICE),
        session=widget.session,
        event_id=widget.event_id,
        function_call_id=widget.function_call_id,
        confirm=confirm,
    )
    assert [p.tool_name for p in asked] == [names.OPEN_VIEW]
    assert await responses_of(h, widget.session, names.OPEN_VIEW) == calls + 1
    assert again.function_call_id != widget.function_call_id
    assert again.rendered
    opened = await h.service.open_view(
        caller(ALICE),
        session=widget.session,
        toolset_id=widget.target()["toolset_id"],
        event_id=again.event_id,
        function_call_id=again.function_call_id,
    )
    assert "result" in await h.send(opened, read_view())


async def test_close_ends_every_view_and_every_later_export(
    mcp_apps: Any, tmp_path: Path
) -> None:
  authorizer = AllowList(ALICE, export=(ALICE,))
  async with host(mcp_apps, tmp_path, authorizer=authorizer) as h:
    widget = await h.widget()
    opened = await h.open(widget)
    await h.service.close()
    assert h.service.view_ids == ()
    with pytest.raises(HostServiceError) as lease:
      await h.send(opened, read_view())
    assert lease.value.reason is HostServiceErrorReason.LEASE_INVALID
    with pytest.raises(HostServiceError) as export:
      await h.service.export(
          caller(ALICE),
          session=widget.session,
          event_id=widget.event_id,
          function_call_id=widget.function_call_id,
          operation_instance_id="op-late",
      )
    assert export.value.reason is HostServiceErrorReason.EXPORT_DENIED
    with pytest.raises(HostServiceError) as reopen:
      await h.open(widget)
    assert reopen.value.reason is HostServiceErrorReason.VIEW_UNAVAILABLE


async def test_the_toolsets_own_filter_runs_on_a_views_calls(
    mcp_apps: Any, tmp_path: Path
) -> None:
  """The service gives each View the toolset's MCP callbacks, over a
  read-only snapshot of the View's Session."""
  seen: list[tuple[str, Any]] = []

  def tool_filter(tool: Any, readonly_context: Any = None) -> bool:
    seen.append((tool.name, readonly_context))
    return tool.name != names.SIDE_EFFECT

  async with host(
      mcp_apps, tmp_path, spec_fields={"tool_filter": tool_filter}
  ) as h:
    widget = await h.widget()
    opened = await h.open(widget)
    seen.clear()
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": names.SIDE_EFFECT, "arguments": {"key": "k"}},
    }
    refused = await h.send(opened, call)
    assert refused["error"]["data"]["reason"] == "admission_denied"
    (name, context), *_ = [
        entry for entry in seen if entry[0] == names.SIDE_EFFECT
    ]
    assert isinstance(context, ReadonlyCallbackContext)
    assert context.session_id == widget.session.session_id
