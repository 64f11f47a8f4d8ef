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

"""A profile-less golden run against pristine google-adk 2.13.0 (P2-COMP-04).

The `ui_event_serialization` differential scenario runs a profile-less
Runner turn with a UI tool on pristine google-adk 2.13.0 and on the patched
tree, in subprocesses, and compares every stored and yielded Event's
`exclude_none` serialization (snake case and by alias, with run-dependent
ids and timestamps masked), the legacy widget payloads and the function
responses. The only differences are those the declared UI-result projection
and provenance stamping (PR 3) explain; the new optional Event field
`sealedResultRefs` appears nowhere.
"""

from __future__ import annotations

import json

import differential
from differential import DeclaredChange
from google.adk.events.event import Event
from mcp_apps_conformance_server import names
import pytest

pytestmark = pytest.mark.integration

COMP_04 = "ui_event_serialization"


# --- P2-COMP-04: profile-less golden run -------------------------------------


@pytest.fixture(scope="module")
def golden() -> differential.Outputs:
  """The COMP-04 scenario's output on both trees (one subprocess each)."""
  located = differential.trees()
  if located.pristine is None:
    pytest.skip(located.reason)
  return differential.run_scenarios([COMP_04])[COMP_04]


@pytest.mark.conformance("P2-COMP-04")
def test_profile_less_golden_run_differs_only_as_declared(
    golden: differential.Outputs,
) -> None:
  """P2-COMP-04: no profile bound, only the declared changes differ.

  Every stored and yielded Event, serialized with `exclude_none` (snake case
  and by alias), equals pristine 2.13.0 but for the `invocation_origin` key
  provenance stamping adds (declared exception #3); every legacy widget
  payload is byte-identical; the function responses differ only where the
  declared UI-result projection explains it. Nothing else is explained.
  """
  comparison = differential.compare(COMP_04, golden)
  assert comparison.untolerated == ()
  by_change: dict[DeclaredChange, set[object]] = {}
  for difference, change in comparison.tolerated:
    by_change.setdefault(change, set()).add(difference.path[-1])
  assert by_change[DeclaredChange.UI_RESULT_PROJECTION] == {
      "meta",
      "structuredContent",
      "resultType",
  }
  assert set(by_change) == {
      DeclaredChange.UI_RESULT_PROJECTION,
      DeclaredChange.PROVENANCE_STAMPING,
  }
  assert golden.patched["widgets"] == golden.pristine["widgets"]
  for key in ("stored_events", "stored_events_by_alias", "yielded_events"):
    origin = (
        "invocationOrigin"
        if key.endswith("by_alias")
        else ("invocation_origin")
    )
    patched = [json.loads(text) for text in golden.patched[key]]
    pristine = [json.loads(text) for text in golden.pristine[key]]
    # A user turn: every Event says so, and nothing else was added.
    assert [event[origin] for event in patched] == ["user"] * len(patched)
    assert [differential.without_provenance(e) for e in patched] == pristine
  (widget,) = golden.patched["widgets"]
  assert widget["provider"] == "mcp"
  assert set(widget["payload"]) == {"resource_uri", "tool", "tool_args"}
  assert widget["payload"]["resource_uri"] == names.VIEW_URI
  assert widget["payload"]["tool_args"] == {"label": "golden"}
  # Four stored Events: user, call, response (with the widget), answer.
  assert len(golden.patched["stored_events"]) == 4
  strict = differential.compare(COMP_04, golden, tolerated=frozenset())
  assert {d.path[-1] for d in strict.untolerated} == {
      "meta",
      "structuredContent",
      "resultType",
  } | {index for index in range(len(golden.patched["stored_events"]))}


@pytest.mark.conformance("P2-COMP-04")
def test_no_sealed_result_refs_in_profile_less_events(
    golden: differential.Outputs,
) -> None:
  """P2-COMP-04: the new optional Event field never serializes when unset.

  The patched `Event` has `sealed_result_refs` (alias `sealedResultRefs`);
  in the profile-less run it appears in no `exclude_none` dump and no
  widget payload, and no widget carries a descriptor's `schemaVersion` or
  `sealedResultRef`.
  """
  field = Event.model_fields["sealed_result_refs"]
  assert field.alias == "sealedResultRefs" and field.default is None
  dumps = (
      golden.patched["stored_events"]
      + golden.patched["stored_events_by_alias"]
      + golden.patched["yielded_events"]
      + [json.dumps(w) for w in golden.patched["widgets"]]
  )
  for text in dumps:
    for needle in ("sealed_result_refs", "sealedResultRefs", "sealedResultRef"):
      assert needle not in text
    assert "schemaVersion" not in text
