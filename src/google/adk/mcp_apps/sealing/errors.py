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

"""The sealing subpackage's error: one class, a reason enum.

Usage:

  try:
    record = resolved.refresh_record()
  except SealingError as e:
    if e.reason is not SealingErrorReason.REFRESH_RECORD_CORRUPT:
      raise
"""

from __future__ import annotations

import enum
from typing import Optional

from ..errors import McpAppsError


class SealingErrorReason(enum.Enum):
  """Why sealing or releasing a result failed."""

  UNAVAILABLE = 'unavailable'
  """The profile lacks a sealed-result or lifecycle store, or the call has
  no Session or function-call id."""

  LIMIT_EXCEEDED = 'limit_exceeded'
  """A result exceeds the profile's sealing limits (or is not I-JSON)."""

  REFRESH_RECORD_CORRUPT = 'refresh_record_corrupt'
  """The sealed refresh record is missing or does not parse."""

  NOT_RELEASED = 'not_released'
  """The gated resolver released nothing (`SealedResolutionError`)."""

  RESULT_CORRELATION = 'result_correlation'
  """The Event no longer reports a UI call's result exactly once under its
  own correlation (removed, duplicated, or its id, name or correlation
  changed); the whole Event is refused."""

  RESULT_INVALID = 'result_invalid'
  """A UI call's approved result, merged with its hidden fields, is not a
  valid terminal `CallToolResult` of its era; the whole Event is refused."""


class SealingError(McpAppsError):
  """Base error of sealing: a result was not sealed or not released.

  Attributes:
    reason: Why.
    function_call_id: The call concerned, when known.
  """

  def __init__(
      self,
      reason: SealingErrorReason,
      message: str,
      *,
      function_call_id: Optional[str] = None,
  ) -> None:
    self.reason = reason
    self.function_call_id = function_call_id
    super().__init__(message)
