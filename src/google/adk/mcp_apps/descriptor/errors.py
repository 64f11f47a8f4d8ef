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

"""The one error of widget descriptors and sealed-result references.

Example:

  try:
    validate_event_references(event)
  except DescriptorError as e:
    print(e.fault, e.function_call_id)  # The Event must not be appended.
"""

from __future__ import annotations

import enum

from ..errors import McpAppsError


class ReferenceFault(enum.Enum):
  """Why a widget descriptor or an Event's references were rejected."""

  INVALID_DESCRIPTOR = 'invalid_descriptor'
  """A widget payload claims the descriptor form but does not parse."""

  NO_FUNCTION_RESPONSE = 'no_function_response'
  """A reference or descriptor names no FunctionResponse of the Event."""

  MISSING_REFERENCE = 'missing_reference'
  """A descriptor widget, or a sealed interactive result, has no reference."""

  WRONG_PLACEMENT = 'wrong_placement'
  """A rendering call's reference sits in the Event-level map, or a legacy
  widget's call is named by it."""

  DUPLICATE = 'duplicate'
  """Two widgets for one call, or one record referenced twice."""


class DescriptorError(McpAppsError):
  """A widget descriptor, or an Event's sealed-result references, is invalid.

  An Event that raises it on validation must not be appended.

  Attributes:
    fault: What is wrong.
    function_call_id: The call concerned (a widget's id is its call's id).
  """

  def __init__(
      self, fault: ReferenceFault, function_call_id: str, detail: str = ''
  ) -> None:
    self.fault = fault
    self.function_call_id = function_call_id
    message = f'Function call {function_call_id!r}: {fault.value}'
    super().__init__(f'{message} ({detail})' if detail else message)
