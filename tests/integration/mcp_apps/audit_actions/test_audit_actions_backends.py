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

"""Smuggled actions on audit Events, against real session services.

Each `EventActions` field is set on an `app_audit` Event three ways: by the
caller of `append_event`, by a plugin's `on_event_callback` mutating the
Event in place, and by one returning a replacement. The test reads the
stored Event back (and, on the SQL services, the database file's bytes)
and checks the typed error the operation pipeline reports. A conversation
Event carrying every action keeps them all, byte for byte.
"""

from __future__ import annotations

import copy
import logging
from typing import Any
from typing import Optional

from audit_support import audit_event
from audit_support import carries_text
from audit_support import default_of
from audit_support import SENTINEL
from audit_support import SMUGGLED
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.mcp_apps.event_policy.audit_actions import screen_audit_actions
from google.adk.mcp_apps.event_policy.errors import EventPolicyReason
from google.adk.mcp_apps.event_policy.finalizer import finalize_event
from google.adk.mcp_apps.event_policy.provenance import admitted
from google.adk.mcp_apps.event_policy.provenance import APP_MESSAGE_TURN
from google.adk.mcp_apps.event_policy.provenance import SESSION_API
from google.adk.mcp_apps.event_policy.provenance import SYSTEM
from google.adk.mcp_apps.event_policy.provenance import UNSCOPED
from google.adk.mcp_apps.event_policy.provenance import USER_TURN
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.plugins.plugin_manager import PluginManager
import pytest

FORBIDDEN = EventPolicyReason.FORBIDDEN_CONTROL
CORE_OWNED = EventPolicyReason.CORE_OWNED_ACTION


class SmugglingPlugin(BasePlugin):
  """Sets one action on every Event it sees, in place or on a copy."""

  def __init__(self, field: str, *, replace: bool) -> None:
    super().__init__(name="smuggler")
    self.field = field
    self.replace = replace

  async def on_event_callback(
      self, *, invocation_context: InvocationContext, event: Event
  ) -> Optional[Event]:
    target = event.model_copy(deep=True) if self.replace else event
    setattr(target.actions, self.field, SMUGGLED[self.field]())
    return target if self.replace else None


async def _through_plugin(
    backend: Any, event: Event, field: str, *, replace: bool
) -> Event:
  """Runs `event` through a real PluginManager holding the smuggler."""
  manager = PluginManager(plugins=[SmugglingPlugin(field, replace=replace)])
  context = InvocationContext(
      session_service=backend.service,
      invocation_id=event.invocation_id,
      session=backend.session,
      plugin_manager=manager,
  )
  replaced = await manager.run_on_event_callback(
      invocation_context=context, event=event
  )
  return replaced if replaced is not None else event


async def _smuggle(backend, field, reason, attack, caplog) -> None:
  """Smuggles `field` onto an audit Event by `attack` and checks the row."""
  if attack == "caller":
    # Nothing screens the Event: the finalizer is the only guard.
    event = audit_event(**{field: SMUGGLED[field]()})
    screen = screen_audit_actions(event.actions)
  else:
    event = await _through_plugin(
        backend, audit_event(), field, replace=attack == "plugin_replaces"
    )
    # The operation pipeline screens what the plugins handed back...
    screen = screen_audit_actions(event.actions)
    event.actions = screen.actions
    if attack == "plugin_mutates":
      # ...and a plugin that kept the Event sets the field again.
      setattr(event.actions, field, SMUGGLED[field]())

  assert screen.stripped == (field,)
  if reason is None:
    assert screen.error is None
  else:
    assert screen.error is not None
    assert screen.error.reason is reason
    assert screen.error.fields == (field,)

  with caplog.at_level(logging.WARNING):
    appended = await backend.append(event)

  stored = await backend.stored(appended.id)
  assert stored.audience == "app_audit"
  assert getattr(stored.actions, field) == default_of(field)
  assert stored.actions == EventActions()
  if carries_text(field):
    assert SENTINEL.encode() not in (await backend.raw_bytes())
  assert SENTINEL not in caplog.text
  if reason is not None and attack != "plugin_replaces":
    assert field in caplog.text


def _smuggling_test(field: str, reason: Optional[EventPolicyReason], *cases):
  """A test that smuggles `field` onto audit Events every way."""

  @pytest.mark.parametrize("attack", ATTACKS)
  async def test(backend, attack, caplog):
    await _smuggle(backend, field, reason, attack, caplog)

  return pytest.mark.conformance(*cases)(test) if cases else test


ATTACKS = ["caller", "plugin_mutates", "plugin_replaces"]

test_transfer_to_agent_is_stripped_with_a_policy_error = _smuggling_test(
    "transfer_to_agent", FORBIDDEN, "P3-ACT-03"
)
test_escalate_is_stripped_with_a_policy_error = _smuggling_test(
    "escalate", FORBIDDEN, "P3-ACT-04"
)
test_route_is_stripped_with_a_policy_error = _smuggling_test(
    "route", FORBIDDEN, "P3-ACT-05"
)
test_agent_state_is_stripped_with_a_policy_error = _smuggling_test(
    "agent_state", FORBIDDEN, "P3-ACT-06"
)
test_end_of_agent_is_stripped_with_a_policy_error = _smuggling_test(
    "end_of_agent", FORBIDDEN, "P3-ACT-07"
)
test_rewind_before_invocation_id_is_stripped_with_a_policy_error = (
    _smuggling_test("rewind_before_invocation_id", FORBIDDEN, "P3-ACT-08")
)
test_compaction_is_core_owned_and_stripped_with_a_policy_error = (
    _smuggling_test("compaction", CORE_OWNED, "P3-ACT-09")
)
test_set_model_response_is_core_owned_and_stripped_with_a_policy_error = (
    _smuggling_test("set_model_response", CORE_OWNED, "P3-ACT-10")
)
test_skip_summarization_is_normalized_away = _smuggling_test(
    "skip_summarization", None, "P3-ACT-11"
)
test_render_ui_widgets_is_suppressed_without_a_negotiated_nested_view = (
    _smuggling_test("render_ui_widgets", None, "P3-ACT-12")
)
test_requested_auth_configs_are_never_persisted = _smuggling_test(
    "requested_auth_configs", None, "P3-ACT-13"
)
test_requested_tool_confirmations_are_never_persisted = _smuggling_test(
    "requested_tool_confirmations", None, "P3-ACT-14"
)
# Not in the RFC's list of fourteen: the annotation of a transfer.
test_transfer_reason_is_stripped_with_a_policy_error = _smuggling_test(
    "transfer_reason", FORBIDDEN
)


@pytest.mark.parametrize(
    "provenance",
    [USER_TURN, APP_MESSAGE_TURN, SYSTEM, SESSION_API, UNSCOPED],
    ids=lambda p: f"{p.invocation_origin}-{p.emitter}",
)
def test_the_finalizer_leaves_a_conversation_events_actions_byte_identical(
    provenance,
):
  actions = EventActions(**{name: make() for name, make in SMUGGLED.items()})
  event = audit_event(invocation_id="inv-turn")
  event.actions = copy.deepcopy(actions)

  with admitted(provenance):
    finalized = finalize_event(event)

  assert finalized.audience is None
  assert finalized.actions.model_dump_json() == actions.model_dump_json()


async def test_every_action_on_a_stored_conversation_event_is_kept(
    any_backend,
):
  actions = EventActions(**{name: make() for name, make in SMUGGLED.items()})
  # The SQL services store `exclude_none` JSON: a nested None is not stored.
  expected = actions.model_dump_json(exclude_none=True)
  for provenance in (USER_TURN, None):
    event = audit_event(invocation_id="inv-turn")
    event.actions = copy.deepcopy(actions)
    appended = await any_backend.append(event, provenance)

    stored = await any_backend.stored(appended.id)
    assert stored.audience is None
    assert stored.actions.model_dump_json(exclude_none=True) == expected
  assert SENTINEL.encode() in (await any_backend.raw_bytes())


async def test_allowed_deltas_are_stored_and_applied(backend):
  event = audit_event(
      state_delta={"audit_counter": 3, "app:theme": "dark"},
      artifact_delta={"report.txt": 2},
  )
  screen = screen_audit_actions(event.actions)
  assert (screen.stripped, screen.error) == ((), None)

  appended = await backend.append(event)

  stored = await backend.stored(appended.id)
  assert stored.audience == "app_audit"
  assert stored.actions.state_delta == {"audit_counter": 3, "app:theme": "dark"}
  assert stored.actions.artifact_delta == {"report.txt": 2}
  session = await backend.reload()
  assert session.state["audit_counter"] == 3
  assert session.state["app:theme"] == "dark"


async def test_mixed_deltas_and_controls_commit_deltas_and_report_an_error(
    backend,
):
  event = audit_event(
      state_delta={"audit_counter": 7},
      artifact_delta={"report.txt": 1},
      transfer_to_agent=SENTINEL + "-agent",
      escalate=True,
      compaction=SMUGGLED["compaction"](),
      requested_tool_confirmations=SMUGGLED["requested_tool_confirmations"](),
  )

  screen = screen_audit_actions(event.actions)
  event.actions = screen.actions
  appended = await backend.append(event)

  assert screen.error is not None
  assert screen.error.reason is EventPolicyReason.FORBIDDEN_CONTROL
  assert screen.error.fields == ("transfer_to_agent", "escalate", "compaction")
  stored = await backend.stored(appended.id)
  assert stored.audience == "app_audit"
  assert stored.actions == EventActions(
      state_delta={"audit_counter": 7}, artifact_delta={"report.txt": 1}
  )
  assert (await backend.reload()).state["audit_counter"] == 7
  assert SENTINEL.encode() not in (await backend.raw_bytes())
