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

"""The classification table and the pure screen the pipeline calls."""

from __future__ import annotations

from typing import Optional

from audit_support import audit_event
from audit_support import SMUGGLED
from google.adk.events.event_actions import EventActions
from google.adk.mcp_apps.event_policy.audit_actions import AUDIT_ACTION_RULES
from google.adk.mcp_apps.event_policy.audit_actions import AuditActionRule
from google.adk.mcp_apps.event_policy.audit_actions import enforce_audit_event
from google.adk.mcp_apps.event_policy.audit_actions import screen_audit_actions
from google.adk.mcp_apps.event_policy.errors import EventPolicyError
from google.adk.mcp_apps.event_policy.errors import EventPolicyReason
from google.adk.mcp_apps.event_policy.finalizer import finalize_event
from google.adk.mcp_apps.event_policy.provenance import admitted
from google.adk.mcp_apps.event_policy.provenance import APP_OPERATION
from google.adk.mcp_apps.event_policy.provenance import HOST_RENDER


def test_every_event_actions_field_is_classified():
  # Fails when upstream adds an EventActions field: classify it in
  # AUDIT_ACTION_RULES (and give it a smuggled value in audit_support).
  assert set(AUDIT_ACTION_RULES) == set(EventActions.model_fields)
  assert set(SMUGGLED) == set(EventActions.model_fields)


def test_only_the_state_and_artifact_deltas_are_allowed():
  allowed = {
      name
      for name, rule in AUDIT_ACTION_RULES.items()
      if rule is AuditActionRule.ALLOWED
  }

  assert allowed == {"state_delta", "artifact_delta"}


def test_screen_leaves_its_input_untouched():
  actions = EventActions(**{name: make() for name, make in SMUGGLED.items()})
  before = actions.model_dump_json()

  screen = screen_audit_actions(actions)

  assert actions.model_dump_json() == before
  assert screen.actions is not actions
  assert screen.actions == EventActions(
      state_delta=actions.state_delta, artifact_delta=actions.artifact_delta
  )
  assert set(screen.stripped) == set(SMUGGLED) - {
      "state_delta",
      "artifact_delta",
  }


def test_screened_actions_serialize_like_never_set_ones():
  screen = screen_audit_actions(
      EventActions(state_delta={"k": 1}, escalate=True, route="r")
  )

  assert screen.actions.model_dump_json(exclude_unset=True) == EventActions(
      state_delta={"k": 1}
  ).model_dump_json(exclude_unset=True)


def test_screen_is_idempotent():
  first = screen_audit_actions(
      EventActions(state_delta={"k": 1}, escalate=True, compaction=None)
  )

  second = screen_audit_actions(first.actions)

  assert (second.stripped, second.error) == ((), None)
  assert second.actions is first.actions


def test_false_and_empty_controls_count_as_set():
  screen = screen_audit_actions(
      EventActions(escalate=False, agent_state={}, route=[])
  )

  assert screen.stripped == ("escalate", "agent_state", "route")
  assert screen.actions == EventActions()


def test_a_core_owned_action_alone_reports_core_owned():
  screen = screen_audit_actions(EventActions(set_model_response={"a": 1}))

  assert screen.error is not None
  assert screen.error.reason is EventPolicyReason.CORE_OWNED_ACTION
  assert screen.error.fields == ("set_model_response",)


def test_forbidden_controls_take_precedence_and_every_field_is_named():
  screen = screen_audit_actions(
      EventActions(
          set_model_response={"a": 1},
          end_of_agent=True,
          skip_summarization=True,
      )
  )

  assert isinstance(screen.error, EventPolicyError)
  assert screen.error.reason is EventPolicyReason.FORBIDDEN_CONTROL
  assert screen.error.fields == ("end_of_agent", "set_model_response")
  assert "skip_summarization" in screen.stripped


def test_an_unclassified_field_is_stripped_as_a_forbidden_control():
  class FutureActions(EventActions):
    teleport_to: Optional[str] = None

  screen = screen_audit_actions(FutureActions(teleport_to="elsewhere"))

  assert screen.stripped == ("teleport_to",)
  assert screen.error is not None
  assert screen.error.reason is EventPolicyReason.FORBIDDEN_CONTROL
  assert screen.actions.teleport_to is None


def test_the_host_render_audit_event_is_screened_too():
  event = audit_event(transfer_to_agent="other", state_delta={"k": 1})

  with admitted(HOST_RENDER):
    finalized = finalize_event(event)

  assert finalized.audience == "app_audit"
  assert finalized.actions == EventActions(state_delta={"k": 1})


def test_finalizing_twice_changes_nothing_more():
  event = audit_event(escalate=True, state_delta={"k": 1})
  with admitted(APP_OPERATION):
    once = finalize_event(event).model_dump_json()
    twice = finalize_event(event).model_dump_json()

  assert once == twice


def test_enforcement_ignores_an_event_that_is_not_an_audit_record():
  event = audit_event(escalate=True)
  event.isolation_scope = "fc-1"

  assert enforce_audit_event(event) is event
  assert event.actions.escalate is True
  assert event.isolation_scope == "fc-1"


def test_an_audit_event_whose_actions_were_replaced_stores_empty_actions():
  event = audit_event()
  event.actions = None

  with admitted(APP_OPERATION):
    finalized = finalize_event(event)

  assert finalized.actions == EventActions()
