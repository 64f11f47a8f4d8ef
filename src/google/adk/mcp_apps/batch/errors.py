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
    effects.freeze()
  except BatchError as e:
    if e.reason is BatchErrorReason.ALREADY_FROZEN:
      ...
"""

from __future__ import annotations

import enum
from typing import Optional

from ..errors import McpAppsError


class BatchErrorReason(enum.Enum):
  """Why the batch refused an effect or an operation."""

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
  """Base error of the batch ledger.

  Attributes:
    reason: Why.
    writer: The function-call id (or the event-policy marker's name) of
      the ledger concerned, when one is.
    key: The state key or artifact filename concerned, when one is.
  """

  def __init__(
      self,
      reason: BatchErrorReason,
      message: str,
      *,
      writer: Optional[str] = None,
      key: Optional[str] = None,
  ) -> None:
    self.reason = reason
    self.writer = writer
    self.key = key
    super().__init__(message)
