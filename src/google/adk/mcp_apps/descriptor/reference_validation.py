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


"""Append-time cross-validation of an Event's sealed-result references.

A reference sits either on a render-producing call's widget descriptor or in
the Event-level `sealedResultRefs` map. Whoever appends an Event with either
runs `validate_event_references` first; a `DescriptorError` (its
`ReferenceFault` says which rule broke) means the Event is not appended.
The rules are in docs/design/descriptor.md.

Example:

  validate_event_references(event, sealed_interactive=frozenset({'fc-1'}))
  await session_service.append_event(session, event)
"""

from __future__ import annotations

from typing import Optional

from ...events.event import Event
from .errors import DescriptorError
from .errors import ReferenceFault
from .widget_descriptor import LegacyMcpWidget
from .widget_descriptor import MCP_WIDGET_PROVIDER
from .widget_descriptor import McpAppWidgetDescriptor
from .widget_descriptor import read_mcp_widget


def function_response_ids(event: Event) -> list[str]:
  """The ids of the Event's FunctionResponse parts, in part order."""
  if event.content is None or not event.content.parts:
    return []
  return [
      part.function_response.id
      for part in event.content.parts
      if part.function_response is not None and part.function_response.id
  ]


def mcp_widgets(
    event: Event,
) -> dict[str, McpAppWidgetDescriptor | LegacyMcpWidget]:
  """The Event's MCP widgets by function-call id, read in either form.

  Raises:
    DescriptorError: Two widgets for one call, or an invalid
      descriptor.
  """
  widgets: dict[str, McpAppWidgetDescriptor | LegacyMcpWidget] = {}
  for widget in (
      event.actions.render_ui_widgets if event.actions else None
  ) or ():
    if widget.provider != MCP_WIDGET_PROVIDER:
      continue
    if widget.id in widgets:
      raise DescriptorError(ReferenceFault.DUPLICATE, widget.id)
    widgets[widget.id] = read_mcp_widget(widget)
  return widgets


def validate_event_references(
    event: Event, *, sealed_interactive: Optional[frozenset[str]] = None
) -> None:
  """Cross-validates the Event's references; raises on the first fault.

  Args:
    event: The Event about to be appended.
    sealed_interactive: Function-call ids whose interactive results were
      sealed for this Event (the sealing stage knows); each must have an
      Event-level entry.

  Raises:
    DescriptorError: The Event must not be appended.
  """
  event_refs = getattr(event, 'sealed_result_refs', None) or {}
  widgets = mcp_widgets(event)
  if (
      not event_refs
      and not sealed_interactive
      and not any(
          isinstance(w, McpAppWidgetDescriptor) for w in widgets.values()
      )
  ):
    return
  responses = set(function_response_ids(event))
  records: set[str] = set()

  def claim(record_id: str, function_call_id: str) -> None:
    if record_id in records:
      raise DescriptorError(ReferenceFault.DUPLICATE, function_call_id)
    records.add(record_id)

  for call_id, widget in widgets.items():
    if not isinstance(widget, McpAppWidgetDescriptor):
      continue
    if call_id not in responses:
      raise DescriptorError(ReferenceFault.NO_FUNCTION_RESPONSE, call_id)
    if call_id in event_refs:
      raise DescriptorError(ReferenceFault.WRONG_PLACEMENT, call_id)
    if widget.sealed_result_ref is None:
      raise DescriptorError(ReferenceFault.MISSING_REFERENCE, call_id)
    claim(widget.sealed_result_ref.record_id, call_id)
  for call_id, ref in event_refs.items():
    if call_id in widgets:
      raise DescriptorError(ReferenceFault.WRONG_PLACEMENT, call_id)
    if call_id not in responses:
      raise DescriptorError(ReferenceFault.NO_FUNCTION_RESPONSE, call_id)
    claim(ref.record_id, call_id)
  for call_id in sorted(sealed_interactive or ()):
    if call_id not in event_refs:
      raise DescriptorError(ReferenceFault.MISSING_REFERENCE, call_id)
