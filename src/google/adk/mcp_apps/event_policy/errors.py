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

"""The event-policy subpackage's error: one class, a reason enum.

Usage:

  try:
    finalize_event(event)
  except EventPolicyError as e:
    if e.reason is EventPolicyReason.FORBIDDEN_CONTROL:
      ...
"""

from __future__ import annotations

import enum
from typing import Optional

from ..errors import McpAppsError


class EventPolicyReason(enum.Enum):
  """Why the core refused part or all of an Event."""

  FORBIDDEN_CONTROL = 'forbidden_control'
  """An audit Event carried a control action (transfer, escalate, route,
  agent state, end of agent, rewind); it was stripped."""

  CORE_OWNED_ACTION = 'core_owned_action'
  """An audit Event carried an action only the core sets (compaction,
  `set_model_response`); it was stripped."""

  SAME_SESSION_REENTRY = 'same_session_reentry'
  """A restricted callback (`callback_scope`) tried to re-enter the Session
  it runs for: a Runner entry point, an append, a hold acquisition."""

  OUT_OF_API_STATE_WRITE = 'out_of_api_state_write'
  """A profile-bound UI call's callback wrote the live Session state
  directly (not through `State`); the write was undone."""


class EventPolicyError(McpAppsError):
  """Base error of the event policy.

  Attributes:
    reason: Why.
    fields: The `EventActions` fields concerned, when any.
  """

  def __init__(
      self,
      reason: EventPolicyReason,
      message: str,
      *,
      fields: Optional[tuple[str, ...]] = None,
  ) -> None:
    self.reason = reason
    self.fields = fields or ()
    super().__init__(message)
