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

"""The adapter's cold-widget offers and the sandbox proxy's CSP header.

The widget list fills `affordance` for cold widgets (decided by
`McpAppHostService.cold_affordance`, as a click on it is then run); the
sandbox route sends the proxy CSP framed by the adapter's own main origin.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from typing import Optional
import urllib.parse

from adapter_support import list_widgets
from adapter_support import served
from adapter_support import Served
from adapter_support import turn_widgets
from google.adk.mcp_apps.bootstrap.cold_replay import RERUN_WARNING
from google.adk.mcp_apps.contracts.local_dev import LocalDevReplayClassification
from google.adk.mcp_apps.contracts.principal_resolver import Principal
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.session_authorizer import SessionPurpose
from google.adk.mcp_apps.contracts.session_authorizer import WidgetTarget
from google.adk.mcp_apps.host import web
from google.adk.mcp_apps.profile import local_dev_profile
from mcp_apps_conformance_server import names
import pytest

pytestmark = pytest.mark.integration

LABEL = {"label": "stored-argument-7f3a"}
OTHER = {"label": "stored-argument-9c1e"}


class WidgetDenier:
  """A deployment's `SessionAuthorizer`: VIEW on the Session, but not on
  the widgets whose calls `denied` lists."""

  dev_only = True
  loopback_only = True

  def __init__(self) -> None:
    self.denied: set[str] = set()

  async def authorize(
      self,
      principal: Principal,
      session: SessionKey,
      purpose: SessionPurpose,
      *,
      widget: Optional[WidgetTarget] = None,
  ) -> bool:
    del principal, session
    if widget is not None and widget.function_call_id in self.denied:
      return False
    return purpose is SessionPurpose.VIEW


async def make_cold(s: Served, widget: dict[str, Any]) -> None:
  """Opens the widget's View and closes it: its last View is gone."""
  opened = await s.open_view(widget)
  assert opened.status_code == 200, opened.text
  body = opened.json()
  closed = await s.teardown(body["viewId"], body["lease"])
  assert closed.status_code == 204, closed.text


@pytest.mark.conformance("P2-COLD-02", "P2-COLD-09", "P2-COLD-10")
async def test_cold_widgets_list_the_offer_a_click_runs(
    mcp_apps: Any, tmp_path: Path
) -> None:
  authorizer = WidgetDenier()
  profile = local_dev_profile(
      session_authorizer=authorizer,
      replay_classification=LocalDevReplayClassification([names.MUTABLE_VIEW]),
  )
  async with served(mcp_apps, tmp_path, socket_=False, profile=profile) as s:
    live = await turn_widgets(
        s,
        [(names.MUTABLE_VIEW, LABEL)],
        [(names.OPEN_VIEW, {})],
        [(names.MUTABLE_VIEW, OTHER)],
    )
    session_id = live[0]["sessionId"]
    safe, unsafe, denied = live
    for widget in live:
      await make_cold(s, widget)
    authorizer.denied.add(denied["functionCallId"])
    cold = await list_widgets(s, session_id)
    raw = json.dumps(cold)

  assert [w["state"] for w in live] == ["live"] * 3
  assert [w["affordance"] for w in live] == [None] * 3
  assert [w["state"] for w in cold] == ["cold"] * 3
  assert [w["affordance"] for w in cold] == [
      {
          "offer": "refresh",
          "replaySafe": True,
          "toolName": names.MUTABLE_VIEW,
          "warning": None,
          "reason": None,
      },
      {
          "offer": "rerun",
          "replaySafe": False,
          "toolName": names.OPEN_VIEW,
          "warning": RERUN_WARNING,
          "reason": "not_replay_safe",
      },
      {
          "offer": "placeholder",
          "replaySafe": False,
          "toolName": None,
          "warning": None,
          "reason": "unauthorized",
      },
  ]
  # Nothing host-private reaches the page: no stored argument, no record.
  assert "stored-argument" not in raw
  assert [w["functionCallId"] for w in cold] == [
      w["functionCallId"] for w in (safe, unsafe, denied)
  ]


async def test_the_sandbox_page_may_be_framed_by_the_main_origin_only(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with served(mcp_apps, tmp_path, socket_=False) as s:
    port = urllib.parse.urlsplit(s.origin).port
    proxy = await s.client.get(
        "/mcp-apps/sandbox", headers={"Host": f"localhost:{port}"}
    )
  assert proxy.status_code == 200, proxy.text
  policy = proxy.headers["content-security-policy"]
  assert policy == web.sandbox_proxy_csp(s.origin)
  assert f"frame-ancestors http://127.0.0.1:{port}" in policy
  assert "*" not in policy
  assert "object-src 'none'" in policy
