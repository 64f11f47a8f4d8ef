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

"""The model-facing projection of UI tool results.

MCP Apps splits a tool result between model and View: `content` (and the
error flag) is for the model, `structuredContent` and `_meta` for the View. For every
result of a UI-associated tool the persisted FunctionResponse is an
allow-list projection (`content`, the error flag, the result-type
discriminator); events persisted unprojected are projected when replayed
into model context. Non-UI results are never touched. Notes:
docs/design/catalog.md.

Example:

  projected = project_ui_result({'content': [], 'structuredContent': {}})
  assert 'structuredContent' not in projected
"""

from __future__ import annotations

from typing import Any
from typing import Iterable
from typing import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
  from ..events.event import Event

MODEL_RESULT_KEYS: tuple[str, ...] = (
    'content',
    'isError',
    'is_error',
    'resultType',
    'result_type',
)
"""The only top-level keys of a UI tool result the model sees."""

MCP_WIDGET_PROVIDER = 'mcp'


def project_ui_result(result: Mapping[str, Any]) -> dict[str, Any]:
  """Returns the model-facing projection of a UI tool's dumped result.

  Args:
    result: The dumped `CallToolResult` (either key spelling).

  Returns:
    A new dict holding only the allowed keys that were present, in the
    result's own order; values are shared, not copied.
  """
  return {
      key: value for key, value in result.items() if key in MODEL_RESULT_KEYS
  }


def ui_function_call_ids(event: Event) -> frozenset[str]:
  """The function-call ids an event's MCP UI widgets were rendered for."""
  widgets = event.actions.render_ui_widgets if event.actions else None
  return frozenset(
      widget.id
      for widget in widgets or ()
      if widget.provider == MCP_WIDGET_PROVIDER
  )


def project_event_for_model(event: Event) -> Event:
  """Returns `event` with its UI tool results projected for the model.

  The event is returned unchanged (the same object) when it holds no
  function response of a UI tool, so non-UI history is byte-identical.
  Otherwise a copy is returned; the stored event is never mutated.

  Args:
    event: A persisted event about to be fed to a model or a summarizer.
  """
  ui_ids = ui_function_call_ids(event)
  if not ui_ids or not event.content or not event.content.parts:
    return event
  parts = event.content.parts
  if not any(
      part.function_response and part.function_response.id in ui_ids
      for part in parts
  ):
    return event
  new_parts = []
  for part in parts:
    response = part.function_response
    if response and response.id in ui_ids and response.response is not None:
      part = part.model_copy(
          update={
              'function_response': response.model_copy(
                  update={'response': project_ui_result(response.response)}
              )
          }
      )
    new_parts.append(part)
  content = event.content.model_copy(update={'parts': new_parts})
  return event.model_copy(update={'content': content})


def project_events_for_model(events: Iterable[Event]) -> list[Event]:
  """`project_event_for_model` over a sequence of events."""
  return [project_event_for_model(event) for event in events]
