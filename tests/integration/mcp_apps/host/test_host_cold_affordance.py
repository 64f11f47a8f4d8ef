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

"""`McpAppHostService.cold_affordance`: a cold widget's offer, running nothing.

A service over the conformance server whose replay classification (the
dev provider, given the test's list) calls `mutable_view` replay-safe and
every other tool not. The offer is the one `run_tool_again` then runs; a
denial is the placeholder with its reason, never an exception.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from google.adk.mcp_apps.bootstrap.cold_replay import ColdAffordance
from google.adk.mcp_apps.bootstrap.cold_replay import ColdOffer
from google.adk.mcp_apps.bootstrap.cold_replay import RERUN_WARNING
from google.adk.mcp_apps.contracts.local_dev import LocalDevReplayClassification
from google.adk.mcp_apps.profile import local_dev_profile
from google.genai import types as genai_types
from host_support import ALICE
from host_support import AllowList
from host_support import BOB
from host_support import caller
from host_support import HeaderResolver
from host_support import host
from host_support import Widget
from mcp_apps_conformance_server import names
import pytest
from sealing_support import widget_event

pytestmark = pytest.mark.integration


async def _safe_widget(h: Any) -> Widget:
  """A turn whose model calls the replay-safe `mutable_view`."""
  key = await h.new_session()
  h.st.llm.steps = [[(names.MUTABLE_VIEW, {"label": "cold"})]]
  events = await h.service.run_turn(
      caller(ALICE),
      session=key,
      new_message=genai_types.Content(
          role="user", parts=[genai_types.Part(text="go")]
      ),
  )
  (widget,) = widget_event(events).actions.render_ui_widgets
  return Widget(key, widget_event(events).id, widget.id)


async def _offer(h: Any, widget: Widget, who: Any = ALICE) -> ColdAffordance:
  affordance: ColdAffordance = await h.service.cold_affordance(
      caller(who),
      session=widget.session,
      event_id=widget.event_id,
      function_call_id=widget.function_call_id,
  )
  return affordance


async def _responses(h: Any, widget: Widget) -> int:
  stored = await h.st.session_service.get_session(
      app_name=widget.session.app_name,
      user_id=widget.session.user_id,
      session_id=widget.session.session_id,
  )
  return sum(len(e.get_function_responses()) for e in stored.events)


@pytest.mark.conformance("P2-COLD-02", "P2-COLD-03", "P2-COLD-09", "P2-COLD-10")
async def test_cold_affordance_matches_replay_safety_and_denies_as_placeholder(
    mcp_apps: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
  hidden: set[str] = set()

  def tool_filter(tool: Any, readonly_context: Any = None) -> bool:
    del readonly_context
    return tool.name not in hidden

  authorizer = AllowList(ALICE)
  profile = local_dev_profile(
      principal_resolver=HeaderResolver(),
      session_authorizer=authorizer,
      replay_classification=LocalDevReplayClassification([names.MUTABLE_VIEW]),
  )
  caplog.set_level(logging.WARNING, logger="google_adk.mcp_apps.host")
  async with host(
      mcp_apps,
      tmp_path,
      profile=profile,
      authorizer=authorizer,
      spec_fields={"tool_filter": tool_filter},
  ) as h:
    safe = await _safe_widget(h)
    unsafe = await h.widget()
    before = [await _responses(h, w) for w in (safe, unsafe)]

    refresh = await _offer(h, safe)
    rerun = await _offer(h, unsafe)
    stranger = await _offer(h, safe, BOB)
    nobody = await _offer(h, safe, None)
    hidden.add(names.MUTABLE_VIEW)  # The toolset no longer lists it.
    vanished = await _offer(h, safe)
    hidden.clear()

    # Deciding ran nothing: no new function response in either Session.
    assert [await _responses(h, w) for w in (safe, unsafe)] == before
    # The offered refresh is the one a click runs: one click, no dialog.
    ran = await h.service.run_tool_again(
        caller(ALICE),
        session=safe.session,
        event_id=safe.event_id,
        function_call_id=safe.function_call_id,
    )

  assert refresh == ColdAffordance(
      ColdOffer.REFRESH, safe.function_call_id, tool_name=names.MUTABLE_VIEW
  )
  assert rerun == ColdAffordance(
      ColdOffer.RERUN,
      unsafe.function_call_id,
      reason="not_replay_safe",
      tool_name=names.OPEN_VIEW,
      warning=RERUN_WARNING,
  )
  assert stranger.offer is nobody.offer is ColdOffer.PLACEHOLDER
  assert (stranger.reason, nobody.reason) == ("unauthorized", "unauthenticated")
  assert stranger.tool_name is None and nobody.tool_name is None
  assert vanished.offer is ColdOffer.PLACEHOLDER
  assert (vanished.reason, vanished.tool_name) == (
      "tool_missing",
      names.MUTABLE_VIEW,
  )
  # The host-private refresh record never leaves the service.
  for offer in (refresh, rerun, stranger, nobody, vanished):
    assert offer.record is None
  assert ran.offer is ColdOffer.REFRESH and ran.rendered
  # Both denials were logged, without the principal.
  denials = [r.getMessage() for r in caplog.records]
  assert any(
      "cold_affordance" in m and "unauthorized" in m for m in denials
  ), denials
  assert any(
      "cold_affordance" in m and "unauthenticated" in m for m in denials
  ), denials
  assert not any(BOB in m for m in denials)
