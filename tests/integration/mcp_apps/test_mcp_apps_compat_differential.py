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

"""Compatibility: pristine google-adk 2.13.0 against the patched tree.

Every scenario of `differential_scenarios.py` runs once on each tree, in two
subprocesses (`differential.run_scenarios`), against real MCP servers over
stdio. Without a declared behavioural change, ADK's observable output must
be byte-identical (P1-PROJ-12): non-UI function responses, standalone and in
an all-non-UI parallel batch, `structuredContent` and `_meta` included; the
model catalog of a server with no `_meta.ui`; the LLM requests of a run that
involves no UI tool. The UI-tool scenario shows the harness detecting a
difference and attributing it to the one declared change that explains it.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import differential
from differential import DeclaredChange
import pytest

pytestmark = pytest.mark.integration

BYTE_IDENTICAL = (
    "non_ui_standalone",
    "non_ui_parallel",
    "plain_parallel",
    "plain_catalog",
    "plain_llm_requests",
)
WITH_DECLARED_CHANGES = ("ui_result", "conformance_catalog")
# The UI result's keys the projection changes: View-only fields leave it,
# and on MCP SDK 2.x the `resultType` that pristine pops stays (1.x results
# carry none).
_RESULT_TYPE = {"resultType"} if differential.sdk_has_result_type() else set()
_CHANGED_BY_PROJECTION = {"meta", "structuredContent"} | _RESULT_TYPE


@pytest.fixture(scope="module")
def outputs() -> dict[str, differential.Outputs]:
  """Every scenario's output on both trees (one subprocess per tree)."""
  located = differential.trees()
  if located.pristine is None:
    pytest.skip(located.reason)
  return differential.run_scenarios(BYTE_IDENTICAL + WITH_DECLARED_CHANGES)


def _responses(output: dict[str, Any]) -> list[list[dict[str, Any]]]:
  """Per persisted event, its function responses, parsed."""
  return [
      [json.loads(r) for r in event["function_responses"]]
      for event in output["events"]
  ]


# --------------------------------------------------------------------------
# P1-PROJ-12: no declared change, byte-identical.
# --------------------------------------------------------------------------


@pytest.mark.conformance("P1-PROJ-12")
@pytest.mark.parametrize(
    ("scenario", "names"),
    [
        ("non_ui_standalone", ["progress_then_result"]),
        ("non_ui_parallel", ["progress_then_result", "slow_operation"]),
        ("plain_parallel", ["lookup", "total"]),
    ],
)
def test_non_ui_function_responses_are_byte_identical(
    outputs: dict[str, differential.Outputs], scenario: str, names: list[str]
) -> None:
  """P1-PROJ-12: non-UI results, alone or in an all-non-UI batch."""
  pair = outputs[scenario]
  comparison = differential.compare(scenario, pair)
  assert comparison.differences == ()
  assert comparison.identical
  assert pair.patched["events"] == pair.pristine["events"]

  # One event (the batch is merged), no widget, structuredContent kept.
  (event,) = pair.patched["events"]
  assert event["ui_widget_ids"] == []
  (responses,) = _responses(pair.patched)
  assert [r["name"] for r in responses] == names
  for response in responses:
    assert "structuredContent" in response["response"]
    assert "resultType" not in response["response"]  # Popped, as before.
  if scenario == "plain_parallel":
    lookup = responses[0]["response"]
    assert lookup["meta"] == {"plain/trace": {"key": "alpha", "hops": 3}}
    assert lookup["structuredContent"]["plainStructuredMarker"] == [1, 2.5]


@pytest.mark.conformance("P1-PROJ-12")
def test_catalog_of_a_server_without_ui_meta_is_identical(
    outputs: dict[str, differential.Outputs],
) -> None:
  """P1-PROJ-12: the model catalog of a server with no `_meta.ui`."""
  pair = outputs["plain_catalog"]
  comparison = differential.compare("plain_catalog", pair)
  assert comparison.identical and comparison.differences == ()
  assert [t["name"] for t in pair.patched["catalog"]] == ["lookup", "total"]
  declarations = [json.loads(t["declaration"]) for t in pair.patched["catalog"]]
  assert [d["name"] for d in declarations] == ["lookup", "total"]


@pytest.mark.conformance("P1-PROJ-12")
def test_llm_requests_without_ui_tools_are_identical(
    outputs: dict[str, differential.Outputs],
) -> None:
  """P1-PROJ-12: every LLM request of a run with no UI tool."""
  pair = outputs["plain_llm_requests"]
  comparison = differential.compare("plain_llm_requests", pair)
  assert comparison.identical and comparison.differences == ()
  requests = [json.loads(r) for r in pair.patched["llm_requests"]]
  # Call, the result, and the next turn; the whole result reaches the model.
  assert len(requests) == 3
  (result_part,) = [
      p
      for c in requests[1]["contents"]
      for p in c["parts"]
      if "function_response" in p
  ]
  response = result_part["function_response"]["response"]
  assert response["structuredContent"] == {
      "key": "beta",
      "plainStructuredMarker": [1, 2.5],
  }
  assert response["meta"] == {"plain/trace": {"key": "beta", "hops": 3}}


# --------------------------------------------------------------------------
# The harness sees differences, and tolerates only declared ones.
# --------------------------------------------------------------------------


def test_harness_attributes_the_ui_result_difference_to_projection(
    outputs: dict[str, differential.Outputs],
) -> None:
  """P1-PROJ-12 harness: a UI tool on both trees differs, as declared."""
  pair = outputs["ui_result"]
  comparison = differential.compare("ui_result", pair)
  assert not comparison.identical
  assert comparison.untolerated == ()
  explained = {d.path[-1]: c for d, c in comparison.tolerated}
  assert explained == {
      key: DeclaredChange.UI_RESULT_PROJECTION for key in _CHANGED_BY_PROJECTION
  }
  ((pristine,),) = _responses(pair.pristine)
  ((patched,),) = _responses(pair.patched)
  assert pristine["response"]["structuredContent"]["forView"] is True
  assert "conformance/private" in pristine["response"]["meta"]
  assert set(patched["response"]) == {"content", "isError"} | _RESULT_TYPE
  assert patched["response"]["content"] == pristine["response"]["content"]


def test_harness_attributes_hidden_app_only_tools_to_visibility(
    outputs: dict[str, differential.Outputs],
) -> None:
  """P1-PROJ-12 harness: only app-only tools leave the catalog."""
  pair = outputs["conformance_catalog"]
  comparison = differential.compare("conformance_catalog", pair)
  assert comparison.untolerated == ()
  assert {d.path: c for d, c in comparison.tolerated} == {
      ("catalog", "app_followup"): DeclaredChange.VISIBILITY_ENFORCEMENT,
      ("catalog", "app_followup_handle"): DeclaredChange.VISIBILITY_ENFORCEMENT,
  }
  patched = {t["name"] for t in pair.patched["catalog"]}
  assert {"ui_result", "whoami", "progress_then_result"} <= patched


@pytest.mark.conformance("P1-PROJ-12")
def test_harness_rejects_differences_no_declared_change_explains(
    outputs: dict[str, differential.Outputs],
) -> None:
  """P1-PROJ-12 harness: differences no declared change explains fail."""
  ui = outputs["ui_result"]
  for allowed in (
      frozenset(),
      frozenset({DeclaredChange.PROVENANCE_STAMPING}),
      frozenset({DeclaredChange.VISIBILITY_ENFORCEMENT}),
  ):
    comparison = differential.compare("ui_result", ui, tolerated=allowed)
    assert comparison.tolerated == ()
    assert {
        d.path[-1] for d in comparison.untolerated
    } == _CHANGED_BY_PROJECTION

  # A non-UI result losing structuredContent is never the projection, even
  # where the projection is tolerated.
  plain = outputs["plain_parallel"]
  doctored = copy.deepcopy(plain.patched)
  (event,) = doctored["events"]
  first = json.loads(event["function_responses"][0])
  del first["response"]["structuredContent"]
  event["function_responses"][0] = json.dumps(first)
  comparison = differential.compare(
      "plain_parallel",
      differential.Outputs(plain.pristine, doctored),
      tolerated=frozenset(DeclaredChange),
  )
  assert comparison.tolerated == ()
  assert [d.path for d in comparison.untolerated] == [
      ("events", 0, "function_responses", 0, "response", "structuredContent")
  ]

  # A catalog losing a model-visible tool is never visibility enforcement.
  catalog = outputs["conformance_catalog"]
  shrunk = copy.deepcopy(catalog.patched)
  shrunk["catalog"] = [t for t in shrunk["catalog"] if t["name"] != "ui_result"]
  comparison = differential.compare(
      "conformance_catalog", differential.Outputs(catalog.pristine, shrunk)
  )
  assert [d.path for d in comparison.untolerated] == [("catalog", "ui_result")]


def test_declared_changes_are_the_rfcs_three() -> None:
  """P1-PROJ-12 harness: exactly the three declared changes are named."""
  assert {c.value for c in DeclaredChange} == {
      "visibility enforcement",
      "UI-result projection",
      "provenance stamping",
  }
  # Provenance stamping (PR 3) shows only where whole Events are compared.
  assert {
      scenario
      for scenario, changes in differential.TOLERATED.items()
      if DeclaredChange.PROVENANCE_STAMPING in changes
  } == {"ui_event_serialization"}


def _stored(*events: dict[str, Any]) -> dict[str, Any]:
  """A scenario output holding `events` as serialized stored Events."""
  return {"stored_events": [json.dumps(e, sort_keys=True) for e in events]}


_USER_EVENT = {"author": "user", "invocation_id": "<invocation-0>"}


@pytest.mark.parametrize(
    "added",
    [
        {"invocation_origin": "user"},
        {"invocationOrigin": "mcp_app"},
        {"invocation_origin": "system", "emitter": "session-api"},
    ],
)
def test_harness_explains_exactly_the_added_provenance_keys(
    added: dict[str, str],
) -> None:
  """Provenance stamping explains an Event that only gained its keys."""
  comparison = differential.compare(
      "ui_event_serialization",
      differential.Outputs(
          _stored(_USER_EVENT), _stored({**_USER_EVENT, **added})
      ),
  )
  assert comparison.untolerated == ()
  assert [c for _, c in comparison.tolerated] == [
      DeclaredChange.PROVENANCE_STAMPING
  ]


@pytest.mark.parametrize(
    "patched",
    [
        # An audience is never stamped on a profile-less Event.
        {**_USER_EVENT, "invocation_origin": "user", "audience": "app_audit"},
        # Only the vocabulary: 'model' is a caller, never an origin.
        {**_USER_EVENT, "invocation_origin": "model"},
        # An emitter alone is not provenance stamping.
        {**_USER_EVENT, "emitter": "system"},
        # Anything else that changed with it is not explained.
        {
            "author": "model",
            "invocation_id": "<invocation-0>",
            "invocation_origin": "user",
        },
        # A key removed is not explained either.
        {"author": "user", "invocation_origin": "user"},
    ],
)
def test_harness_rejects_anything_beyond_the_added_provenance_keys(
    patched: dict[str, str],
) -> None:
  """Provenance stamping tolerates nothing but its own added keys."""
  comparison = differential.compare(
      "ui_event_serialization",
      differential.Outputs(_stored(_USER_EVENT), _stored(patched)),
  )
  assert comparison.tolerated == ()
  assert [d.path for d in comparison.untolerated] == [("stored_events", 0)]
