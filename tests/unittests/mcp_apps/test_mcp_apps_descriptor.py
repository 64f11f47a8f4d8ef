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

"""The widget descriptor, its dual read and append-time reference validation.

Cases P2-DESC-01, P2-REF-07 .. P2-REF-10, P2-REF-14 and P2-COMP-06 (RFC §3),
on hand-built core `Event` objects: FunctionResponse parts, MCP widgets in
`EventActions.render_ui_widgets` (descriptor or legacy payload) and the
Event-level `sealed_result_refs` map. Each case feeds an Event to
`validate_event_references`, the check the append stage runs before any
Event is appended, and asserts the typed fault and the call it names (or
that the Event passes); three of them also go through the append stage
(`append_event_with_sealed_results`) to show a rejected Event is not
appended. The compatibility cases serialize Events with the
public `model_dump_json(by_alias=True, exclude_none=True)` and parse them
back with a parser built from the core `Event` schema minus the new field,
which is what a reader at the pinned schema is.
"""

from __future__ import annotations

import json
from typing import Any
from typing import Optional

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.events.ui_widget import UiWidget
from google.adk.mcp_apps.affinity.tool_handles import ui_resource_uri
from google.adk.mcp_apps.bootstrap.render import BootstrapError
from google.adk.mcp_apps.bootstrap.render import select_app_content
from google.adk.mcp_apps.descriptor.reference_validation import function_response_ids
from google.adk.mcp_apps.descriptor.reference_validation import mcp_widgets
from google.adk.mcp_apps.descriptor.reference_validation import ReferenceFault
from google.adk.mcp_apps.descriptor.reference_validation import validate_event_references
from google.adk.mcp_apps.descriptor.sealed_reference import SealedResultReference
from google.adk.mcp_apps.descriptor.widget_descriptor import DescriptorError
from google.adk.mcp_apps.descriptor.widget_descriptor import LegacyMcpWidget
from google.adk.mcp_apps.descriptor.widget_descriptor import McpAppWidgetDescriptor
from google.adk.mcp_apps.descriptor.widget_descriptor import read_mcp_widget
from google.adk.mcp_apps.descriptor.widget_descriptor import WidgetCorrelation
from google.adk.mcp_apps.profile.capabilities import MCP_APP_MIME_TYPE
from google.adk.mcp_apps.sealing.append_stage import append_event_with_sealed_results
from google.adk.mcp_apps.sealing.result_sealer import PendingSeals
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types as genai_types
from mcp import types as mcp_types
import pydantic
import pytest

URI = "ui://conformance/view.html"
REVISION = "v1:key-1:" + "ab" * 32


def _ref(record_id: str) -> SealedResultReference:
  return SealedResultReference(record_id=record_id)


def _descriptor(
    call_id: str, record_id: Optional[str] = None, *, uri: str = URI
) -> McpAppWidgetDescriptor:
  return McpAppWidgetDescriptor(
      resource_uri=uri,
      correlation=WidgetCorrelation(
          invocation_id="inv-1",
          function_call_id=call_id,
          agent_path="probe",
          branch=None,
      ),
      server_id="srv-1",
      toolset_id="conf",
      binding_revision=REVISION,
      sealed_result_ref=_ref(record_id) if record_id else None,
  )


def _legacy(call_id: str) -> UiWidget:
  return UiWidget(
      id=call_id,
      provider="mcp",
      payload={
          "resource_uri": URI,
          "tool": {"name": "open_view"},
          "tool_args": {},
      },
  )


def _response(call_id: str, name: str = "open_view") -> genai_types.Part:
  return genai_types.Part(
      function_response=genai_types.FunctionResponse(
          id=call_id, name=name, response={"result": f"for {call_id}"}
      )
  )


def _event(
    response_ids: list[str],
    widgets: list[UiWidget] = (),
    refs: Optional[dict[str, SealedResultReference]] = None,
) -> Event:
  return Event(
      invocation_id="inv-1",
      author="probe",
      content=genai_types.Content(
          role="user", parts=[_response(i) for i in response_ids]
      ),
      actions=EventActions(render_ui_widgets=list(widgets) or None),
      sealed_result_refs=refs,
  )


def _fault(event: Event, **kwargs: Any) -> tuple[ReferenceFault, str]:
  with pytest.raises(DescriptorError) as raised:
    validate_event_references(event, **kwargs)
  return raised.value.fault, raised.value.function_call_id


# --- P2-DESC-01 --------------------------------------------------------------


@pytest.mark.conformance("P2-DESC-01")
def test_descriptor_fields_and_wire_names():
  widget = _descriptor("fc-1", "rec-1").to_widget()

  assert widget.id == "fc-1"
  assert widget.provider == "mcp"
  assert widget.payload == {
      "schemaVersion": 1,
      "resourceUri": URI,
      "correlation": {
          "invocationId": "inv-1",
          "functionCallId": "fc-1",
          "agentPath": "probe",
      },
      "serverId": "srv-1",
      "toolsetId": "conf",
      "bindingRevision": REVISION,
      "sealedResultRef": {"recordId": "rec-1", "schemaVersion": 1},
  }
  assert set(McpAppWidgetDescriptor.model_fields) == {
      "schema_version",
      "resource_uri",
      "correlation",
      "server_id",
      "toolset_id",
      "binding_revision",
      "sealed_result_ref",
  }
  assert set(WidgetCorrelation.model_fields) == {
      "invocation_id",
      "function_call_id",
      "agent_path",
      "branch",
  }
  assert set(SealedResultReference.model_fields) == {
      "record_id",
      "schema_version",
  }


@pytest.mark.conformance("P2-DESC-01")
def test_branch_is_carried_when_set():
  descriptor = _descriptor("fc-1", "rec-1").model_copy(
      update={
          "correlation": WidgetCorrelation(
              invocation_id="inv-1",
              function_call_id="fc-1",
              agent_path="root/probe",
              branch="root.probe",
          )
      }
  )

  payload = descriptor.to_payload()

  assert payload["correlation"]["branch"] == "root.probe"
  assert read_mcp_widget(descriptor.to_widget()) == descriptor


@pytest.mark.conformance("P2-DESC-01")
def test_dual_read_tells_descriptor_from_legacy():
  descriptor = _descriptor("fc-1", "rec-1")

  assert read_mcp_widget(descriptor.to_widget()) == descriptor
  assert read_mcp_widget(_legacy("fc-2")) == LegacyMcpWidget(
      widget_id="fc-2",
      resource_uri=URI,
      tool={"name": "open_view"},
      tool_args={},
  )


@pytest.mark.conformance("P2-DESC-01")
@pytest.mark.parametrize(
    "change",
    [
        {"schemaVersion": 2},
        {"resourceUri": ""},
        {"serverId": None},
        {"grant": "g-1"},
        {"correlation": {"functionCallId": "fc-other"}},
    ],
    ids=["version", "empty_uri", "no_server", "extra_field", "other_call"],
)
def test_invalid_descriptor_is_typed(change: dict[str, Any]):
  payload = _descriptor("fc-1", "rec-1").to_payload()
  for key, value in change.items():
    if key == "correlation":
      payload[key] = {**payload[key], **value}
    elif value is None:
      del payload[key]
    else:
      payload[key] = value
  widget = UiWidget(id="fc-1", provider="mcp", payload=payload)

  with pytest.raises(DescriptorError):
    read_mcp_widget(widget)
  assert _fault(_event(["fc-1"], [widget])) == (
      ReferenceFault.INVALID_DESCRIPTOR,
      "fc-1",
  )


# --- P2-REF-07 ---------------------------------------------------------------


@pytest.mark.conformance("P2-REF-07")
def test_reordered_responses_keep_mapping():
  widgets = [
      _descriptor("fc-a", "rec-a").to_widget(),
      _descriptor("fc-b", "rec-b").to_widget(),
  ]
  refs = {"fc-c": _ref("rec-c")}
  forward = _event(["fc-a", "fc-b", "fc-c"], widgets, refs)
  reverse = _event(["fc-c", "fc-b", "fc-a"], widgets, refs)

  validate_event_references(forward, sealed_interactive=frozenset({"fc-c"}))
  validate_event_references(reverse, sealed_interactive=frozenset({"fc-c"}))

  assert function_response_ids(reverse) == ["fc-c", "fc-b", "fc-a"]

  def mapping(event: Event) -> dict[str, str]:
    by_call = {
        call_id: widget.sealed_result_ref.record_id
        for call_id, widget in mcp_widgets(event).items()
    }
    by_call.update(
        {k: v.record_id for k, v in event.sealed_result_refs.items()}
    )
    responses = {
        part.function_response.id: part.function_response.response
        for part in event.content.parts
    }
    return {by_call[k]: responses[k]["result"] for k in by_call}

  assert (
      mapping(forward)
      == mapping(reverse)
      == {
          "rec-a": "for fc-a",
          "rec-b": "for fc-b",
          "rec-c": "for fc-c",
      }
  )


# --- P2-REF-08 ---------------------------------------------------------------


@pytest.mark.conformance("P2-REF-08")
def test_two_widgets_for_one_call_rejected():
  widgets = [
      _descriptor("fc-1", "rec-1").to_widget(),
      _descriptor("fc-1", "rec-2").to_widget(),
  ]

  assert _fault(_event(["fc-1"], widgets)) == (
      ReferenceFault.DUPLICATE,
      "fc-1",
  )


@pytest.mark.conformance("P2-REF-08")
def test_duplicate_record_rejected_across_widgets():
  widgets = [
      _descriptor("fc-1", "rec-1").to_widget(),
      _descriptor("fc-2", "rec-1").to_widget(),
  ]

  assert _fault(_event(["fc-1", "fc-2"], widgets)) == (
      ReferenceFault.DUPLICATE,
      "fc-2",
  )


@pytest.mark.conformance("P2-REF-08")
def test_duplicate_record_rejected_in_event_map():
  refs = {"fc-1": _ref("rec-1"), "fc-2": _ref("rec-1")}

  fault, _ = _fault(_event(["fc-1", "fc-2"], refs=refs))

  assert fault is ReferenceFault.DUPLICATE


@pytest.mark.conformance("P2-REF-08")
def test_duplicate_record_rejected_across_placements():
  widgets = [_descriptor("fc-1", "rec-1").to_widget()]
  refs = {"fc-2": _ref("rec-1")}

  assert _fault(_event(["fc-1", "fc-2"], widgets, refs)) == (
      ReferenceFault.DUPLICATE,
      "fc-2",
  )


@pytest.mark.conformance("P2-REF-08")
def test_same_call_in_both_placements_rejected():
  widgets = [_descriptor("fc-1", "rec-1").to_widget()]
  refs = {"fc-1": _ref("rec-2")}

  assert _fault(_event(["fc-1"], widgets, refs)) == (
      ReferenceFault.WRONG_PLACEMENT,
      "fc-1",
  )


# --- P2-REF-09 ---------------------------------------------------------------


@pytest.mark.conformance("P2-REF-09")
def test_widget_reference_without_function_response():
  widgets = [_descriptor("fc-1", "rec-1").to_widget()]

  assert _fault(_event(["fc-other"], widgets)) == (
      ReferenceFault.NO_FUNCTION_RESPONSE,
      "fc-1",
  )


@pytest.mark.conformance("P2-REF-09")
def test_event_reference_without_function_response():
  refs = {"fc-ghost": _ref("rec-1")}

  assert _fault(_event(["fc-1"], refs=refs)) == (
      ReferenceFault.NO_FUNCTION_RESPONSE,
      "fc-ghost",
  )


@pytest.mark.conformance("P2-REF-09")
def test_event_without_any_response_rejected():
  event = Event(
      invocation_id="inv-1",
      author="probe",
      sealed_result_refs={"fc-1": _ref("rec-1")},
  )

  assert _fault(event) == (ReferenceFault.NO_FUNCTION_RESPONSE, "fc-1")


# --- P2-REF-10 ---------------------------------------------------------------


@pytest.mark.conformance("P2-REF-10")
def test_descriptor_without_reference_rejected():
  widgets = [_descriptor("fc-1").to_widget()]

  assert _fault(_event(["fc-1"], widgets)) == (
      ReferenceFault.MISSING_REFERENCE,
      "fc-1",
  )


@pytest.mark.conformance("P2-REF-10")
def test_sealed_interactive_without_event_entry_rejected():
  assert _fault(_event(["fc-1"]), sealed_interactive=frozenset({"fc-1"})) == (
      ReferenceFault.MISSING_REFERENCE,
      "fc-1",
  )


@pytest.mark.conformance("P2-REF-10")
def test_rendering_reference_in_event_map_rejected():
  # The render-producing call's reference sits in the Event-level map.
  widgets = [_descriptor("fc-1").to_widget()]
  refs = {"fc-1": _ref("rec-1")}

  assert _fault(_event(["fc-1"], widgets, refs)) == (
      ReferenceFault.WRONG_PLACEMENT,
      "fc-1",
  )


@pytest.mark.conformance("P2-REF-10")
def test_legacy_widget_named_by_event_map_rejected():
  refs = {"fc-1": _ref("rec-1")}

  assert _fault(_event(["fc-1"], [_legacy("fc-1")], refs)) == (
      ReferenceFault.WRONG_PLACEMENT,
      "fc-1",
  )


@pytest.mark.conformance("P2-REF-10")
def test_well_formed_event_passes():
  widgets = [_descriptor("fc-1", "rec-1").to_widget(), _legacy("fc-3")]
  refs = {"fc-2": _ref("rec-2")}

  validate_event_references(
      _event(["fc-1", "fc-2", "fc-3"], widgets, refs),
      sealed_interactive=frozenset({"fc-2"}),
  )


# --- P2-REF-14 ---------------------------------------------------------------


@pytest.mark.conformance("P2-REF-14")
def test_profile_less_event_carries_no_reference():
  event = _event(["fc-1", "fc-2"], [_legacy("fc-1"), _legacy("fc-2")])

  validate_event_references(event)
  wire = event.model_dump_json(by_alias=True, exclude_none=True)

  assert "sealedResultRef" not in wire
  assert "sealedResultRefs" not in wire
  assert "sealed_result_ref" not in wire
  payloads = json.loads(wire)["actions"]["renderUiWidgets"]
  assert [p["payload"] for p in payloads] == [
      {"resource_uri": URI, "tool": {"name": "open_view"}, "tool_args": {}}
  ] * 2


# --- P2-COMP-06 --------------------------------------------------------------


def _pinned_event_model() -> type[pydantic.BaseModel]:
  """The core Event schema minus `sealed_result_refs`: a pinned reader."""
  fields = {
      name: (info.annotation, info)
      for name, info in Event.model_fields.items()
      if name != "sealed_result_refs"
  }
  return pydantic.create_model(
      "PinnedEvent", __config__=Event.model_config, **fields
  )


@pytest.mark.conformance("P2-COMP-06")
def test_pinned_reader_parses_new_events():
  pinned = _pinned_event_model()
  assert Event.model_config["extra"] == "ignore"
  assert "sealed_result_refs" not in pinned.model_fields
  legacy = _event(["fc-1"], [_legacy("fc-1")])
  bound = _event(
      ["fc-1", "fc-2"],
      [_descriptor("fc-1", "rec-1").to_widget()],
      {"fc-2": _ref("rec-2")},
  )

  legacy_wire = legacy.model_dump_json(by_alias=True, exclude_none=True)
  bound_wire = bound.model_dump_json(by_alias=True, exclude_none=True)
  legacy_read = pinned.model_validate_json(legacy_wire)
  bound_read = pinned.model_validate_json(bound_wire)

  # A profile-less new Event reads back identically through both schemas.
  assert json.loads(
      legacy_read.model_dump_json(by_alias=True, exclude_none=True)
  ) == json.loads(legacy_wire)
  assert Event.model_validate_json(legacy_wire) == legacy
  # A bound Event parses without error; the map is dropped, the descriptor
  # stays an opaque payload dict.
  assert "sealedResultRefs" in json.loads(bound_wire)
  assert "sealedResultRefs" not in json.loads(
      bound_read.model_dump_json(by_alias=True, exclude_none=True)
  )
  assert bound_read.actions.render_ui_widgets[0].payload == (
      bound.actions.render_ui_widgets[0].payload
  )


@pytest.mark.conformance("P2-COMP-06")
def test_forbidding_event_actions_accepts_descriptor():
  assert EventActions.model_config["extra"] == "forbid"
  actions = EventActions(
      render_ui_widgets=[_descriptor("fc-1", "rec-1").to_widget()]
  )
  wire = actions.model_dump_json(by_alias=True, exclude_none=True)

  parsed = EventActions.model_validate_json(wire)

  assert parsed == actions
  assert read_mcp_widget(parsed.render_ui_widgets[0]) == _descriptor(
      "fc-1", "rec-1"
  )


# --- The append stage refuses what validation rejects -------------------------


@pytest.mark.conformance("P2-REF-08", "P2-REF-09", "P2-REF-10")
@pytest.mark.parametrize(
    ("event", "fault"),
    [
        (
            _event(
                ["fc-1", "fc-2"],
                refs={"fc-1": _ref("rec-1"), "fc-2": _ref("rec-1")},
            ),
            ReferenceFault.DUPLICATE,
        ),
        (
            _event(["fc-1"], refs={"fc-ghost": _ref("rec-1")}),
            ReferenceFault.NO_FUNCTION_RESPONSE,
        ),
        (
            _event(["fc-1"], [_descriptor("fc-1").to_widget()]),
            ReferenceFault.MISSING_REFERENCE,
        ),
    ],
    ids=["p2_ref_08", "p2_ref_09", "p2_ref_10"],
)
async def test_rejected_event_is_not_appended(
    event: Event, fault: ReferenceFault
):
  service = InMemorySessionService()
  session = await service.create_session(app_name="app", user_id="u")

  with pytest.raises(DescriptorError) as raised:
    await append_event_with_sealed_results(
        service, session=session, event=event, pending=PendingSeals()
    )
  stored = await service.get_session(
      app_name="app", user_id="u", session_id=session.id
  )

  assert raised.value.fault is fault
  assert stored.events == []


# --- P1-URI-13 / P1-URI-14: one canonicalizer for descriptor matching ---------

_EQUIVALENT_SPELLINGS = (
    "ui://conformance/view.html",
    "UI://conformance/view.html",
    "ui://Conformance/view.html",
    "ui://conformance/%76iew.html",
)


# A tool declares a UI resource only with a literal `ui://` prefix (the
# rules of `McpTool.mcp_app_resource_uri`), so the upper-case scheme is left
# to the selection case below.
@pytest.mark.conformance("P1-URI-13")
@pytest.mark.parametrize(
    "spelling", [u for u in _EQUIVALENT_SPELLINGS if u.startswith("ui://")]
)
def test_descriptor_matches_tool_uri_canonically(
    spelling: str,
) -> None:
  """A tool's `_meta.ui.resourceUri` matches the descriptor canonically."""
  descriptor = _descriptor("call-1")
  tool = mcp_types.Tool(
      name="open_view",
      input_schema={"type": "object"},
      _meta={"ui": {"resourceUri": spelling}},
  )
  assert descriptor.matches_resource(ui_resource_uri(tool))
  assert descriptor.matches_resource(spelling)
  assert not descriptor.matches_resource("ui://conformance/other.html")
  assert not descriptor.matches_resource("ui://elsewhere/view.html")
  assert not descriptor.matches_resource(None)


@pytest.mark.conformance("P1-URI-14")
@pytest.mark.parametrize("spelling", _EQUIVALENT_SPELLINGS)
def test_selection_compares_canonical_uris(spelling: str) -> None:
  """Exact-one selection takes the item whose URI is canonically equal."""
  html = "<!doctype html><p>view</p>"
  item = mcp_types.TextResourceContents(
      uri=spelling, mime_type=MCP_APP_MIME_TYPE, text=html
  )
  other = mcp_types.TextResourceContents(
      uri="ui://conformance/other.html", mime_type=MCP_APP_MIME_TYPE, text="x"
  )
  selected, text = select_app_content(
      [other, item], "ui://conformance/view.html", max_bytes=1 << 20
  )
  assert selected is item and text == html
  with pytest.raises(BootstrapError, match=r" at select: ") as info:
    select_app_content(
        [other, item, item.model_copy()],
        "ui://conformance/view.html",
        max_bytes=1 << 20,
    )
  assert info.value.reason == "several_matches"
