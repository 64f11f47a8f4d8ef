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

"""Core rewind is the pin's: the same Session after `rewind_async`.

`rewind_scenario.rewind_with_audit_events` runs on pristine google-adk
2.13.0 and on the patched tree (`differential.run_scenarios`, one
subprocess each). Audit Events are ordinary Events to rewind: their state
and artifact deltas are replayed like any other, so only the provenance
fields may differ.
"""

from __future__ import annotations

import json
from typing import Any

import differential
import pytest

pytestmark = pytest.mark.integration

SCENARIO = "rewind_with_audit_events"
AUDIT_EVENT_INDEXES = (4, 9)
"""Where the two View records sit among the stored Events."""


@pytest.fixture(scope="module")
def outputs() -> differential.Outputs:
  located = differential.trees()
  if located.pristine is None:
    pytest.skip(located.reason)
  return differential.run_scenarios([SCENARIO])[SCENARIO]


def _without_provenance(output: dict[str, Any]) -> str:
  return json.dumps({k: v for k, v in output.items() if k != "provenance"})


@pytest.mark.conformance("P3-RWD-01")
def test_rewind_over_audit_events_gives_the_pristine_session(
    outputs: differential.Outputs,
) -> None:
  """P3-RWD-01: state, artifacts and Events equal the pin's after rewind."""
  assert _without_provenance(outputs.patched) == _without_provenance(
      outputs.pristine
  )

  # On the patched tree the View records are app_audit Events; pristine
  # has no such field. Nothing else tells the trees apart.
  audiences = [p["audience"] for p in outputs.patched["provenance"]]
  assert [i for i, a in enumerate(audiences) if a] == list(AUDIT_EVENT_INDEXES)
  assert set(audiences) == {None, "app_audit"}
  assert all(
      value is None
      for fields in outputs.pristine["provenance"]
      for value in fields.values()
  ), "pristine ADK has no provenance fields"


@pytest.mark.conformance("P3-RWD-01")
def test_rewind_still_keeps_app_and_user_scope_and_user_artifacts(
    outputs: differential.Outputs,
) -> None:
  """P3-RWD-01: what the pin's rewind restores, and what it leaves."""
  state = outputs.patched["state"]
  # Session state returns to before turn two, audit deltas included: the
  # first View record (before turn two) stays, the second is undone.
  assert state["turns"] == 1 and state["view_count"] == 1
  assert state["view_1"] is True and state["view_2"] is None
  assert state["note_1"] == "note 1" and state["note_2"] is None
  # app: and user: state are not rewound, audit writes included.
  assert state["app:theme"] == "theme 2" and state["user:seen"] == 2
  assert state["app:last_turn"] == 3 and state["user:last_turn"] == 3

  artifacts = outputs.patched["artifacts"]
  # Session artifacts get a new version restoring the rewind point's.
  assert artifacts["view.txt"][-1] == artifacts["view.txt"][0]
  assert artifacts["note.txt"][-1] == artifacts["note.txt"][0]
  # User artifacts are not rewound.
  assert len(artifacts["user:avatar.txt"]) == 2
  assert len(artifacts["user:profile.txt"]) == 3
  (rewind,) = [
      json.loads(e)
      for e in outputs.patched["stored_events"]
      if "rewind_before_invocation_id" in e
  ]
  assert set(rewind["actions"]["artifact_delta"]) == {"note.txt", "view.txt"}
