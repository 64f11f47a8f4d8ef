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


"""The read-only render: a host-owned error placeholder.

It makes no server request, releases no sealed result and mints no View
grant. Design: docs/design/bootstrap.md.

Usage:

  render = ReadOnlyRender(call_id, read_only_reason(error.reason))
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Optional


class ReadOnlyReason(enum.Enum):
  """Why the host shows the placeholder instead of a View."""

  LEGACY_DESCRIPTOR = 'legacy_descriptor'
  MISSING_REFERENCE = 'missing_reference'
  CORRUPT_REFERENCE = 'corrupt_reference'
  KEY_FAILURE = 'key_failure'
  MISSING_AGENT = 'missing_agent'
  COLD = 'cold'
  """The View's generation is gone (restart, eviction, invalidation)."""
  UNAVAILABLE = 'unavailable'
  """Any other refusal (authorization, scope, lifecycle)."""


@dataclasses.dataclass(frozen=True)
class ReadOnlyRender:
  """The placeholder a host renders in place of a View.

  Attributes:
    function_call_id: The widget's call.
    reason: Why.
    tool_name: The tool, when the public Event names it (for the "run tool
      again" action); None otherwise.
  """

  function_call_id: str
  reason: ReadOnlyReason
  tool_name: Optional[str] = None


_BY_FAULT = {
    'legacy_descriptor': ReadOnlyReason.LEGACY_DESCRIPTOR,
    'missing_reference': ReadOnlyReason.MISSING_REFERENCE,
    'unsupported_reference': ReadOnlyReason.CORRUPT_REFERENCE,
    'invalid_event': ReadOnlyReason.CORRUPT_REFERENCE,
    'record_not_found': ReadOnlyReason.MISSING_REFERENCE,
    'corrupt': ReadOnlyReason.CORRUPT_REFERENCE,
    'key_unavailable': ReadOnlyReason.KEY_FAILURE,
    'binding_mismatch': ReadOnlyReason.KEY_FAILURE,
    'missing_agent': ReadOnlyReason.MISSING_AGENT,
}


def read_only_reason(reason: str, *, cold: bool = False) -> ReadOnlyReason:
  """The placeholder reason for a bootstrap or resolver failure reason.

  Args:
    reason: A `BootstrapError.reason` or a `ResolutionFault` value.
    cold: Whether the failure was a cold one (the View's generation gone).
  """
  if cold:
    return ReadOnlyReason.COLD
  return _BY_FAULT.get(reason, ReadOnlyReason.UNAVAILABLE)
