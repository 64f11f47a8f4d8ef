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

"""A rendered View's hold on a logged conformance server, for read tests.

`view_reads` binds a stack over the conformance server (stdio, or stateless
HTTP at 2026-07-28), renders `open_view` with a real Runner turn and takes
that View's render reservation: the hold its generation is pinned by.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
import contextlib
import dataclasses
import json
from pathlib import Path
from typing import Any
from typing import Optional

from binding_support import conformance_connection
from google.adk.mcp_apps.affinity.generations import ConnectionEra
from google.adk.mcp_apps.affinity.generations import GenerationHold
from google.adk.mcp_apps.descriptor.reference_validation import mcp_widgets
from google.adk.mcp_apps.operations.app_read import AppReadRequest
from google.adk.mcp_apps.operations.app_read import ReadLimits
from google.adk.mcp_apps.operations.app_read import ReadResponseRejectedError
from google.adk.mcp_apps.operations.app_read import run_app_read
from google.adk.mcp_apps.operations.errors import OperationErrorReason
from google.adk.mcp_apps.profile.limits import HostLimits
from google.adk.mcp_apps.profile.local_dev import local_dev_profile
from google.adk.mcp_apps.profile.policies import ResourcePolicySettings
from google.adk.mcp_apps.resources import ResourcePolicyEntry
from google.adk.mcp_apps.resources import ResourceReadPolicy
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from mcp_apps_conformance_server import names
import pytest
from sealing_support import bound_stack
from sealing_support import BoundStack
from sealing_support import TOOLSET
from sealing_support import widget_event

MODERN_FLAG = "ADK_ENABLE_MCP_MODERN_PROTOCOL"
READ = "resources/read"
TRANSPORTS = ["stdio", "modern_http"]
LIMITS = HostLimits()
POLICY_ENTRIES = (
    ResourcePolicyEntry.prefix(names.BUNDLE_PREFIX),
    ResourcePolicyEntry.prefix(names.URI_PREFIX + "interactive/"),
    ResourcePolicyEntry.prefix(names.URI_PREFIX + "asking/"),
    ResourcePolicyEntry.prefix(names.URI_PREFIX + "gated/"),
    ResourcePolicyEntry.exact(names.MULTI_URI),
    ResourcePolicyEntry.prefix(names.URI_PREFIX + "multi/"),
    ResourcePolicyEntry.exact(names.DOUBLE_URI),
    ResourcePolicyEntry.exact(names.BLOB_URI),
    ResourcePolicyEntry.exact(names.URI_PREFIX + "missing.html"),
)
"""The profile's resource policy: the View may read its own widget URI and
these (never `ui://elsewhere/...`, the CDN script or `bundle-evil/`)."""


@dataclasses.dataclass
class ViewReads:
  """A rendered View's hold on a logged conformance server."""

  transport: str
  stack: BoundStack
  log: Path
  hold: GenerationHold
  widget_uri: str
  session_id: str = ""
  event_id: str = ""
  call_id: str = ""

  @property
  def policy(self) -> ResourceReadPolicy:
    """The View's policy, as the channel derives it from the profile."""
    return self.stack.profile.resource_policy.for_widget(self.widget_uri)

  def reads(self) -> int:
    """How many `resources/read` messages reached the server so far."""
    if not self.log.exists():
      return 0
    return sum(
        json.loads(line)["method"] == READ
        for line in self.log.read_text().splitlines()
    )

  def request(
      self,
      uri: str,
      *,
      limits: Optional[ReadLimits] = None,
      max_rounds: int = LIMITS.mrtr_max_rounds,
      max_seconds: float = LIMITS.mrtr_max_seconds,
  ) -> AppReadRequest:
    return AppReadRequest(
        operation_id=f"read-{uri}",
        hold=self.hold,
        uri=uri,
        policy=self.policy,
        limits=limits or ReadLimits.of(LIMITS),
        max_rounds=max_rounds,
        max_seconds=max_seconds,
    )

  async def read(self, uri: str, **kwargs: Any) -> Any:
    return await run_app_read(self.request(uri), **kwargs)

  async def rejected(
      self, uri: str, **kwargs: Any
  ) -> ReadResponseRejectedError:
    """The typed rejection of a read the server answered."""
    before = self.reads()
    with pytest.raises(ReadResponseRejectedError) as info:
      await run_app_read(self.request(uri, **kwargs))
    assert self.reads() > before  # The server answered; ADK rejected it.
    assert info.value.reason is OperationErrorReason.READ_RESPONSE_REJECTED
    return info.value


@contextlib.asynccontextmanager
async def view_reads(
    transport: str,
    tmp_path: Path,
    mcp_apps: Any,
    start_server: Any,
    monkeypatch: pytest.MonkeyPatch,
    **options: Any,
) -> AsyncIterator[ViewReads]:
  """A bound stack, one rendered `open_view`, and that View's hold."""
  if transport == "modern_http":
    monkeypatch.setenv(MODERN_FLAG, "1")
  else:
    monkeypatch.delenv(MODERN_FLAG, raising=False)
  log = tmp_path / "requests.jsonl"
  params = conformance_connection(
      transport,
      {"request_log_file": str(log), **options},
      mcp_apps,
      start_server,
  )
  profile = local_dev_profile(
      resource_policy=ResourcePolicySettings(POLICY_ENTRIES)
  )
  async with bound_stack(
      params, session_service=InMemorySessionService(), profile=profile
  ) as stack:
    sid = await stack.new_session()
    event = widget_event(await stack.turn(sid, (names.OPEN_VIEW, {})))
    ((call_id, widget),) = mcp_widgets(event).items()
    hold = stack.registry.render_reservations.take(
        TOOLSET, stack.key(sid), call_id
    )
    assert hold is not None
    era = (
        ConnectionEra.MODERN
        if transport == "modern_http"
        else (ConnectionEra.LEGACY)
    )
    assert hold.generation.era is era
    try:
      yield ViewReads(
          transport,
          stack,
          log,
          hold,
          widget.resource_uri,
          sid,
          event.id,
          call_id,
      )
    finally:
      hold.release()
