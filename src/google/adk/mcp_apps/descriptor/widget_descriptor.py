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


"""`McpAppWidgetDescriptor`: what a profile-bound UI call persists.

Under a bound profile the MCP tool's widget payload is this descriptor
instead of the legacy `{resource_uri, tool, tool_args}`: stable references
and one opaque `sealedResultRef`, never result bytes or authority, so every
public serialization of the Event is safe. It travels inside
`UiWidget.payload`. Notes: docs/design/descriptor.md.

Example:

  widget = read_mcp_widget(ui_widget)  # Raises DescriptorError if invalid.
  if isinstance(widget, McpAppWidgetDescriptor):
    record_id = widget.sealed_result_ref.record_id
"""

from __future__ import annotations

import dataclasses
from typing import Any
from typing import Optional
from typing import Union

from pydantic import alias_generators
from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import ValidationError

from ...events.ui_widget import UiWidget
from ..resources.uri import uris_equal
from .errors import DescriptorError
from .errors import ReferenceFault
from .sealed_reference import SealedResultReference

DESCRIPTOR_SCHEMA_VERSION = 1
"""The descriptor schema this host writes."""

MCP_WIDGET_PROVIDER = 'mcp'
"""`UiWidget.provider` of MCP App widgets, legacy and descriptor alike."""

_CAMEL = ConfigDict(
    extra='forbid',
    frozen=True,
    alias_generator=alias_generators.to_camel,
    populate_by_name=True,
)


class WidgetCorrelation(BaseModel):
  """The immutable correlation of the call a widget was rendered for.

  Attributes:
    invocation_id: The ADK invocation.
    function_call_id: The model's function call; maps the widget (and its
      reference) to its FunctionResponse, after restarts too.
    agent_path: The agent that ran the tool.
    branch: The invocation branch, if any.
  """

  model_config = _CAMEL

  invocation_id: str
  function_call_id: str = Field(min_length=1)
  agent_path: str
  branch: Optional[str] = None


class McpAppWidgetDescriptor(BaseModel):
  """The persisted descriptor of one profile-bound MCP App widget.

  Attributes:
    schema_version: Always `DESCRIPTOR_SCHEMA_VERSION`.
    resource_uri: The View's `ui://` resource, as the tool declared it.
    correlation: The call the widget belongs to.
    server_id: The configured server's stable, opaque id.
    toolset_id: The configured toolset's stable, opaque id.
    binding_revision: `v1:<key id>:<digest>` under the profile's key.
    sealed_result_ref: Where the full result is sealed; None only before
      the sealing stage fills it in (an Event is never appended so).
  """

  model_config = _CAMEL

  schema_version: int = DESCRIPTOR_SCHEMA_VERSION
  resource_uri: str = Field(min_length=1)
  correlation: WidgetCorrelation
  server_id: str = Field(min_length=1)
  toolset_id: str = Field(min_length=1)
  binding_revision: str = Field(min_length=1)
  sealed_result_ref: Optional[SealedResultReference] = None

  def matches_resource(self, uri: Optional[str]) -> bool:
    """Whether `uri` (a tool's `_meta.ui.resourceUri`, a read item's URI)
    names this descriptor's resource, under the one URI canonicalizer."""
    return uri is not None and uris_equal(self.resource_uri, uri)

  def to_payload(self) -> dict[str, Any]:
    """The `UiWidget.payload` form: wire aliases, absent values left out."""
    payload: dict[str, Any] = self.model_dump(
        mode='json', by_alias=True, exclude_none=True
    )
    return payload

  def to_widget(self) -> UiWidget:
    """The widget ADK appends to the Event's `render_ui_widgets`."""
    return UiWidget(
        id=self.correlation.function_call_id,
        provider=MCP_WIDGET_PROVIDER,
        payload=self.to_payload(),
    )


@dataclasses.dataclass(frozen=True)
class LegacyMcpWidget:
  """A profile-less widget payload `{resource_uri, tool, tool_args}`.

  It has no reference: resolving a sealed result for it fails typed and the
  host shows the read-only render.
  """

  widget_id: str
  resource_uri: Optional[str]
  tool: Any
  tool_args: Any


def is_descriptor_payload(payload: Any) -> bool:
  """Whether a widget payload is in the descriptor form (not legacy)."""
  return isinstance(payload, dict) and 'schemaVersion' in payload


def read_mcp_widget(
    widget: UiWidget,
) -> Union[McpAppWidgetDescriptor, LegacyMcpWidget]:
  """Reads an MCP widget in either form (the renderer's dual read).

  Raises:
    DescriptorError: The payload is in the descriptor form but invalid, or
      its schema version is not one this host reads.
    ValueError: The widget is not an MCP widget.
  """
  if widget.provider != MCP_WIDGET_PROVIDER:
    raise ValueError(f'Widget {widget.id!r} is not an MCP widget')
  payload = widget.payload
  if not is_descriptor_payload(payload):
    return LegacyMcpWidget(
        widget_id=widget.id,
        resource_uri=payload.get('resource_uri'),
        tool=payload.get('tool'),
        tool_args=payload.get('tool_args'),
    )
  if payload.get('schemaVersion') != DESCRIPTOR_SCHEMA_VERSION:
    raise DescriptorError(
        ReferenceFault.INVALID_DESCRIPTOR,
        widget.id,
        f'unknown schemaVersion {payload.get("schemaVersion")!r}',
    )
  try:
    descriptor = McpAppWidgetDescriptor.model_validate(payload)
  except ValidationError as e:
    raise DescriptorError(
        ReferenceFault.INVALID_DESCRIPTOR,
        widget.id,
        f'{e.error_count()} field error(s)',
    ) from e
  if descriptor.correlation.function_call_id != widget.id:
    raise DescriptorError(
        ReferenceFault.INVALID_DESCRIPTOR,
        widget.id,
        'its correlation names another function call',
    )
  return descriptor
