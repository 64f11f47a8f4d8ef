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

"""The coordination subpackage's error: one class, a reason enum.

Usage:

  try:
    async with session_coordinator().owned(key, 'Runner.run_async'):
      ...
  except CoordinationError as e:
    if e.reason is CoordinationErrorReason.SAME_SESSION_REENTRY:
      ...  # nothing waited, nothing was written
"""

from __future__ import annotations

import enum

from ..errors import McpAppsError


class CoordinationErrorReason(enum.Enum):
  """Why the session coordinator refused an entry point."""

  SAME_SESSION_REENTRY = 'same_session_reentry'
  """The caller already owns this Session (it runs inside the owner's
  callbacks, or iterates the owner's turn); waiting would deadlock."""

  LIVE_NOT_SUPPORTED = 'live_not_supported'
  """`run_live` on an app-enabled Runner: outside the v1 contract."""


class CoordinationError(McpAppsError):
  """An entry point that would change a Session was refused; nothing ran.

  Attributes:
    reason: Why.
    operation: The entry point refused, such as `'Runner.run_async'`.
  """

  def __init__(
      self, reason: CoordinationErrorReason, operation: str, message: str
  ) -> None:
    self.reason = reason
    self.operation = operation
    super().__init__(f'{reason.value}: {operation}: {message}')
