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

"""The batch subpackage's error: one class, a reason enum.

Usage:

  try:
    snapshot = await admit_batch(readonly_context, calls)
  except BatchError as e:
    if e.reason is BatchErrorReason.TOOL_CHANGED:
      ...
"""

from __future__ import annotations

import enum
from typing import Optional

from ..errors import McpAppsError


class BatchErrorReason(enum.Enum):
  """Why a batch of calls, or an effect in its ledger, was refused."""

  MIXED_BATCH = 'mixed_batch'
  """Under a bound profile, the batch mixed UI-associated and other calls;
  none of them ran."""

  TOOL_CHANGED = 'tool_changed'
  """A called tool's fresh declaration (schema, UI resource, visibility,
  connection class or generation) differs from the one the model saw."""

  TOOL_REMOVED = 'tool_removed'
  """A called tool is no longer listed."""

  CLASS_DISAGREEMENT = 'class_disagreement'
  """The two connection classes disagree about a called tool (is it
  UI-associated?); neither listing is preferred."""

  DISCOVERY_FAILED = 'discovery_failed'
  """A fresh listing failed, exceeded its bounds, or lost its connection
  generation, so the batch could not be classified."""

  CREDENTIALS_CHANGED = 'credentials_changed'
  """The caller's credentials changed since the model's catalog was listed,
  or while the batch's tools were listed."""

  DUPLICATE_CALL_ID = 'duplicate_call_id'
  """Two calls of a UI-associated batch share a function-call id, so their
  results and effects could not be told apart."""

  FROZEN = 'frozen'
  """A state write or artifact record reached a ledger after its batch
  froze; it was undone where it could be and is in no frozen view."""

  ALREADY_FROZEN = 'already_frozen'
  """`freeze()` was called on a batch that had already frozen."""

  OUT_OF_API = 'out_of_api'
  """A recording map was changed other than through the `State` or
  artifact API (a direct write, a removal, a clear); nothing was
  recorded."""

  UNKNOWN_CALL = 'unknown_call'
  """No child ledger exists for the function-call id asked for."""


class BatchError(McpAppsError):
  """Base error of batch admission and the batch ledger.

  Attributes:
    reason: Why.
    tool_name: The model-facing name of the tool concerned, when one is.
    writer: The function-call id (or the event-policy marker's name) of
      the ledger concerned, when one is.
    key: The state key or artifact filename concerned, when one is.
  """

  def __init__(
      self,
      reason: BatchErrorReason,
      message: str,
      *,
      tool_name: Optional[str] = None,
      writer: Optional[str] = None,
      key: Optional[str] = None,
  ) -> None:
    self.reason = reason
    self.tool_name = tool_name
    self.writer = writer
    self.key = key
    super().__init__(message)
