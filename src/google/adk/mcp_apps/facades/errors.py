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


"""The facades subpackage's error: one class, a reason enum.

Usage:

  try:
    view = snapshot(value)
  except FacadeError as e:
    if e.reason is FacadeErrorReason.CYCLE:
      ...
"""

from __future__ import annotations

import enum
from typing import Optional

from ..errors import McpAppsError


class FacadeErrorReason(enum.Enum):
  """Why a facade refused a value or an access."""

  UNSUPPORTED_TYPE = 'unsupported_type'
  """A value's type is outside the snapshot domain (a set, bytes, an
  arbitrary object, a `str` subclass...)."""

  TUPLE = 'tuple'
  """A value is a tuple; only lists are sequences in the domain."""

  NUMERIC_SUBCLASS = 'numeric_subclass'
  """A number is not exactly an `int` or a `float` (a `bool` is a value of
  its own): an `IntEnum`, a `Decimal`, a `Fraction`, a subclass."""

  NON_FINITE = 'non_finite'
  """A float is NaN or infinite."""

  OUT_OF_RANGE = 'out_of_range'
  """An integer's magnitude is above 2**53 - 1 (the I-JSON range)."""

  CYCLE = 'cycle'
  """A container contains itself."""

  NON_STRING_KEY = 'non_string_key'
  """A dict has a member name that is not exactly a `str`; names are never
  coerced."""

  KEY_COLLISION = 'key_collision'
  """Two member names would coincide after coercion. Never raised today:
  no name is coerced, so the first name that would need it is refused as
  `NON_STRING_KEY` (see docs/design/snapshot.md)."""

  TOO_LARGE = 'too_large'
  """The value holds more values than the size limit."""

  TOO_DEEP = 'too_deep'
  """Containers nest deeper than the depth limit."""

  READ_ONLY = 'read_only'
  """Something tried to change a snapshot (or a read-only facade)."""

  UNAVAILABLE = 'unavailable'
  """A facade was asked for something it does not expose: a live Session,
  InvocationContext, actions, credentials or a service."""

  NEEDS_TOOL_CONTEXT = 'needs_tool_context'
  """A confirmation predicate's signature demands a `ToolContext` (or
  another live ADK context), which the governed path never hands out."""

  PREDICATE_FAILED = 'predicate_failed'
  """A confirmation predicate raised, or touched something unavailable."""

  CONFIRMATION_DENIED = 'confirmation_denied'
  """The deployment's confirmation step refused (or failed)."""

  CONFIRMATION_TIMEOUT = 'confirmation_timeout'
  """The deployment's confirmation step did not answer in time."""

  PERMIT_TOOL_MISMATCH = 'permit_tool_mismatch'
  """A confirmation permit was presented for another tool."""

  PERMIT_SERVER_MISMATCH = 'permit_server_mismatch'
  """A confirmation permit was presented for another server."""

  PERMIT_REVISION_MISMATCH = 'permit_revision_mismatch'
  """The binding revision changed since the permit was sealed."""

  PERMIT_ARGUMENTS_MISMATCH = 'permit_arguments_mismatch'
  """A confirmation permit was presented with other arguments."""

  PERMIT_CONSUMED = 'permit_consumed'
  """A one-shot confirmation permit was presented a second time."""

  EVENT_POLICY_FAILED = 'event_policy_failed'
  """The ordinary event callback on an audit Event raised, or reached for
  something its restricted context does not expose or re-entered its own
  Session (even if it caught the error); the core-only fallback Event is
  stored instead."""

  CALLBACK_FAILED = 'callback_failed'
  """An MCP-owned callback on an app path (`tool_filter`, `header_provider`,
  progress) raised, returned something unusable, asked its context for
  something unavailable or tried to change it: its operation fails closed."""

  CALLBACK_REENTRY = 'callback_reentry'
  """An MCP-owned callback on an app path tried to re-enter its own Session
  (even if it caught the refusal): its operation fails closed."""


class FacadeError(McpAppsError):
  """Base error of the restricted facades and their snapshots.

  Attributes:
    reason: Why.
    path: A JSON Pointer to the offending value inside the snapshotted
      value (`''` is the whole value), when one is known.
    limit: The size or depth limit broken (`TOO_LARGE`, `TOO_DEEP`).
  """

  def __init__(
      self,
      reason: FacadeErrorReason,
      message: str,
      *,
      path: Optional[str] = None,
      limit: Optional[int] = None,
  ) -> None:
    self.reason = reason
    self.path = path
    self.limit = limit
    super().__init__(message)
