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


"""The audit subpackage's error: one class, a reason enum.

Usage:

  outcome = await append_audit_event(...)
  if outcome.error is not None:
    if outcome.error.reason is AuditErrorReason.APPEND_FAILED:
      ...  # nothing durable: answer the View with an error
"""

from __future__ import annotations

import enum

from ..errors import McpAppsError


class AuditErrorReason(enum.Enum):
  """Why the canonical audit append pipeline did not record normally."""

  EVENT_POLICY_FAILED = 'event_policy_failed'
  """The ordinary plugin chain failed on the audit Event (raised, reached
  for something unavailable, re-entered its Session); the core-only
  fallback was appended instead."""

  FINALIZE_FAILED = 'finalize_failed'
  """Merging or finalizing the audit Event failed; the core-only fallback
  was appended instead."""

  PIPELINE_APPEND_FAILED = 'pipeline_append_failed'
  """The session service refused the pipeline's audit Event; the
  core-only fallback was appended instead."""

  APPEND_FAILED = 'append_failed'
  """The session service refused the core-only fallback too, after the
  bounded retry: nothing durable was recorded."""

  REENTRY = 'reentry'
  """The pipeline was entered again from inside itself for the same
  Session (a plugin or observer appending an audit Event): refused."""


class AuditError(McpAppsError):
  """Base error of the canonical audit append pipeline.

  Attributes:
    reason: Why.
  """

  def __init__(self, reason: AuditErrorReason, message: str) -> None:
    self.reason = reason
    super().__init__(f'{reason.value}: {message}')
