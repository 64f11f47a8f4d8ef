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

"""What an audit Event's own fields hold once stored.

`audience` validates only `None` and `'app_audit'`; it and
`invocation_origin` are set independently; an audit Event stores no
`isolation_scope` but keeps the originating one as finalizer-owned
metadata; its agent path and branch are kept.
"""

from __future__ import annotations

import itertools

from audit_support import audit_event
from google.adk.events._internal_metadata import public_event
from google.adk.events.event import Event
from google.adk.events.event import NodeInfo
from google.adk.mcp_apps.event_policy.audit_actions import ORIGIN_SCOPE_METADATA_KEY
from google.adk.mcp_apps.event_policy.audit_actions import originating_scope
from google.adk.mcp_apps.event_policy.provenance import Provenance
from google.adk.mcp_apps.event_policy.provenance import USER_TURN
from pydantic import ValidationError
import pytest


@pytest.mark.conformance("P3-AUD-03")
@pytest.mark.parametrize("value", [None, "app_audit"])
def test_audience_accepts_none_and_app_audit(value):
  event = Event(author="app", audience=value)

  assert event.audience == value
  assert Event.model_validate_json(event.model_dump_json()).audience == value


@pytest.mark.conformance("P3-AUD-03")
@pytest.mark.parametrize(
    "value", ["model", "app", "APP_AUDIT", "app_audit ", "", 1, True, ["x"]]
)
def test_any_other_audience_fails_validation(value):
  with pytest.raises(ValidationError):
    Event(author="app", audience=value)
  with pytest.raises(ValidationError):
    Event.model_validate({"author": "app", "audience": value})


@pytest.mark.conformance("P3-AUD-04")
def test_audience_and_invocation_origin_are_set_without_each_other():
  audit_only = Event(author="app", audience="app_audit")
  origin_only = Event(author="app", invocation_origin="mcp_app")

  assert (audit_only.audience, audit_only.invocation_origin) == (
      "app_audit",
      None,
  )
  assert (origin_only.audience, origin_only.invocation_origin) == (
      None,
      "mcp_app",
  )


@pytest.mark.conformance("P3-AUD-04")
async def test_stored_audience_and_origin_are_each_the_operations_own(backend):
  combinations = list(
      itertools.product(("user", "mcp_app", "system"), (None, "app_audit"))
  )
  for index, (origin, audience) in enumerate(combinations):
    provenance = Provenance(origin, audience=audience)
    # The caller claims the opposite of both.
    event = audit_event(invocation_id=f"inv-{index}")
    event.audience = None if audience else "app_audit"
    event.invocation_origin = "system" if origin != "system" else "user"

    appended = await backend.append(event, provenance)

    stored = await backend.stored(appended.id)
    assert (stored.invocation_origin, stored.audience) == (origin, audience)


@pytest.mark.conformance("P3-AUD-06")
async def test_audit_event_stores_its_scope_only_as_provenance_metadata(
    backend,
):
  event = audit_event()
  event.isolation_scope = "fc-task-7"
  event.custom_metadata = {"trace": "t-1"}

  appended = await backend.append(event)

  stored = await backend.stored(appended.id)
  assert stored.isolation_scope is None
  assert originating_scope(stored) == "fc-task-7"
  assert stored.custom_metadata == {
      "trace": "t-1",
      ORIGIN_SCOPE_METADATA_KEY: "fc-task-7",
  }
  # Internal metadata: kept in storage, not in what callers are served.
  assert public_event(stored).custom_metadata == {"trace": "t-1"}
  raw = await backend.raw_bytes()
  assert ORIGIN_SCOPE_METADATA_KEY.encode() in raw


@pytest.mark.conformance("P3-AUD-06")
@pytest.mark.parametrize("scope", [None, "fc-real"])
async def test_forged_origin_scope_metadata_is_overwritten(backend, scope):
  event = audit_event()
  event.isolation_scope = scope
  event.custom_metadata = {ORIGIN_SCOPE_METADATA_KEY: "fc-forged"}

  appended = await backend.append(event)

  stored = await backend.stored(appended.id)
  assert stored.isolation_scope is None
  assert originating_scope(stored) == scope
  assert b"fc-forged" not in (await backend.raw_bytes())


async def test_a_conversation_event_keeps_its_scope_and_metadata(any_backend):
  event = audit_event()
  event.isolation_scope = "fc-task-7"
  event.custom_metadata = {"trace": "t-1"}

  appended = await any_backend.append(event, USER_TURN)

  stored = await any_backend.stored(appended.id)
  assert stored.isolation_scope == "fc-task-7"
  assert stored.custom_metadata == {"trace": "t-1"}
  assert originating_scope(stored) is None


@pytest.mark.conformance("P3-AUD-07")
async def test_audit_event_keeps_agent_path_and_branch(backend):
  event = audit_event()
  event.author = "coordinator"
  event.branch = "coordinator.helper"
  event.node_info = NodeInfo(path="coordinator@1/helper@2")

  appended = await backend.append(event)

  stored = await backend.stored(appended.id)
  assert stored.audience == "app_audit"
  assert stored.author == "coordinator"
  assert stored.branch == "coordinator.helper"
  assert stored.node_info.path == "coordinator@1/helper@2"
