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

"""`McpAppHostService`: no authority survives persistence, replay, an old
incarnation or a restart; the process-local requirement is checked.

A restart is a new registry and service over the same SQLite stores.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from google.adk.mcp_apps.host.errors import HostServiceError
from google.adk.mcp_apps.host.errors import HostServiceErrorReason
from google.adk.mcp_apps.host.service import McpAppHostService
from google.adk.mcp_apps.host.service import STICKY_ENV
from google.adk.mcp_apps.host.service import WORKERS_ENV
from google.adk.mcp_apps.operations.sessions import FirstPartySessions
from google.adk.mcp_apps.sealing.resolver import GatedResultResolver
from google.adk.mcp_apps.sealing.resolver import ViewBinding
from host_support import host
from host_support import read_view
import pytest
from sealing_support import TOOLSET

pytestmark = pytest.mark.integration


@pytest.mark.conformance("P5-AUTHZ-01")
async def test_persisted_event_and_descriptor_grant_nothing(
    mcp_apps: Any, tmp_path: Path
) -> None:
  """P5-AUTHZ-01: a turn leaves no lease; the persisted Event (descriptor
  and sealed reference included) carries no lease or View id, and its
  identifiers presented as a View and lease are refused."""
  async with host(mcp_apps, tmp_path, "sqlite") as h:
    widget = await h.widget()
    assert h.service.leases.live() == 0 and h.service.view_ids == ()
    opened = await h.open(widget)
    stored = await h.st.stored_events(widget.session.session_id)
    persisted = json.dumps([e.model_dump(mode="json") for e in stored])
    assert opened.lease not in persisted and opened.view_id not in persisted
    for view_id, lease in (
        (widget.event_id, widget.function_call_id),
        (opened.view_id, widget.function_call_id),
        (opened.view_id, persisted),
    ):
      with pytest.raises(HostServiceError) as denied:
        await h.send(opened, read_view(), view_id=view_id, lease=lease)
      assert denied.value.reason is HostServiceErrorReason.LEASE_INVALID


@pytest.mark.conformance("P5-AUTHZ-03", "P5-LSE-03")
async def test_old_incarnation_lease_serves_nothing(
    mcp_apps: Any, tmp_path: Path
) -> None:
  """P5-AUTHZ-03, P5-LSE-03: after the Session is deleted and recreated
  under the same id, the old View's lease is refused and its widget
  opens no View in the new incarnation."""
  async with host(mcp_apps, tmp_path, "sqlite") as h:
    widget = await h.widget()
    opened = await h.open(widget)
    key = widget.session
    sessions = FirstPartySessions.for_profile(
        h.st.profile, h.st.session_service
    )
    await sessions.delete(key.app_name, key.user_id, key.session_id)
    await sessions.create(key.app_name, key.user_id, session_id=key.session_id)
    with pytest.raises(HostServiceError) as denied:
      await h.send(opened, read_view())
    assert denied.value.reason is HostServiceErrorReason.LEASE_INVALID
    assert denied.value.detail == "other incarnation"
    with pytest.raises(HostServiceError) as reopened:
      await h.open(widget)
    assert reopened.value.reason is HostServiceErrorReason.VIEW_UNAVAILABLE


@pytest.mark.conformance("P5-STATE-01", "P5-STATE-02", "P5-AUTHZ-02")
async def test_restart_keeps_durable_records_and_forgets_leases(
    mcp_apps: Any, tmp_path: Path
) -> None:
  """P5-STATE-01/02, P5-AUTHZ-02: a restarted host (new registry and
  service over the same SQLite stores) still has the lifecycle record and
  resolves the sealed result, but knows no View or lease: the old lease is
  refused and the old widget opens cold (no silent rebind)."""
  async with host(mcp_apps, tmp_path, "sqlite") as h:
    widget = await h.widget()
    opened = await h.open(widget)
    server_id = h.st.registry.server_id(TOOLSET)
    lifecycle = await h.st.profile.session_lifecycle_store.read(widget.session)

  async with host(mcp_apps, tmp_path, "sqlite") as restarted:
    profile = restarted.st.profile
    assert await profile.session_lifecycle_store.read(widget.session) == (
        lifecycle
    )
    resolved = await GatedResultResolver(
        profile, restarted.st.session_service
    ).resolve(
        widget.session,
        event_id=widget.event_id,
        function_call_id=widget.function_call_id,
        view=ViewBinding(
            TOOLSET, server_id, widget.event_id, widget.function_call_id
        ),
    )
    assert resolved.full_result()["content"]
    assert restarted.service.leases.live() == 0
    with pytest.raises(HostServiceError) as denied:
      await restarted.send(opened, read_view())
    assert denied.value.reason is HostServiceErrorReason.LEASE_INVALID
    with pytest.raises(HostServiceError) as cold:
      await restarted.open(widget)
    assert cold.value.reason is HostServiceErrorReason.VIEW_UNAVAILABLE
    assert cold.value.detail.startswith("cold:")


@pytest.mark.conformance("P5-STATE-03")
async def test_multi_worker_without_sticky_sessions_refuses_to_start(
    mcp_apps: Any, tmp_path: Path, monkeypatch: Any
) -> None:
  """P5-STATE-03: told it runs on several workers without sticky sessions
  (argument or environment), the service refuses to start; one worker,
  or sticky sessions, start."""
  async with host(mcp_apps, tmp_path) as h:
    registry, runner = h.st.registry, h.st.runner
    with pytest.raises(HostServiceError) as refused:
      McpAppHostService(registry, runner, workers=4)
    assert refused.value.reason is HostServiceErrorReason.UNSUPPORTED
    monkeypatch.setenv(WORKERS_ENV, "2")
    with pytest.raises(HostServiceError):
      McpAppHostService(registry, runner)
    monkeypatch.setenv(STICKY_ENV, "true")
    assert McpAppHostService(registry, runner).view_ids == ()
    assert McpAppHostService(registry, runner, workers=4, sticky_sessions=True)
    monkeypatch.delenv(STICKY_ENV)
    assert McpAppHostService(registry, runner, workers=1).view_ids == ()
