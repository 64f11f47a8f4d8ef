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


"""The `ExportAuditStore` deployment contract: durable export audit.

Cold access to a sealed result goes only through the purpose-bound export
resolver, and every export attempt leaves a redacted record here
before any byte is released; if the write fails, the export is denied. A
record names the principal, the target and the status, never content or
secrets. It is an authorization / release-attempt record, not proof that
the client received anything, and it never enters model context.

Records are idempotent per operation instance and status, kept for the
store's retention, and deleted with their Session incarnation.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Protocol
from typing import runtime_checkable

from .scope import SessionKey


class ExportAuditStatus(enum.Enum):
  """The status vocabulary of export audit records."""

  AUTHORIZED = 'authorized'
  RELEASED = 'released'
  DENIED = 'denied'
  FAILED = 'failed'


@dataclasses.dataclass(frozen=True)
class ExportAuditRecord:
  """One redacted export audit record.

  Attributes:
    operation_instance_id: The export operation's instance id.
    principal_id: The opaque principal identity that asked.
    session: The target Session.
    incarnation: The target Session incarnation.
    event_id: The target Event.
    function_call_id: The target function call.
    record_id: The target sealed record's opaque id.
    status: What happened.
    reason: A machine-readable reason code for `denied` and `failed`.
    recorded_at: When, in seconds since the epoch.
  """

  operation_instance_id: str
  principal_id: str
  session: SessionKey
  incarnation: int
  event_id: str
  function_call_id: str
  record_id: str
  status: ExportAuditStatus
  recorded_at: float
  reason: str = ''


@runtime_checkable
class ExportAuditStore(Protocol):
  """Durably records export attempts before release.

  ADK calls `append` with `authorized` before releasing bytes, then with
  `released` or `failed`; with `denied` when a check refuses. It calls
  `delete_incarnation` from the Session deletion cascade and `purge_expired`
  periodically.
  """

  @property
  def namespace(self) -> str:
    """A stable, non-empty name of the store's record space."""
    ...

  @property
  def revision(self) -> str:
    """A non-empty label of the stored format; changes when it changes."""
    ...

  async def append(self, record: ExportAuditRecord) -> None:
    """Writes `record` durably; a repeat of the same status is a no-op.

    Raises:
      ContractError: The write failed; ADK denies the export.
    """
    ...

  async def records(
      self, operation_instance_id: str
  ) -> tuple[ExportAuditRecord, ...]:
    """The records of one export operation, oldest first."""
    ...

  async def delete_incarnation(
      self, session: SessionKey, incarnation: int
  ) -> int:
    """Deletes every record of one Session incarnation; idempotent."""
    ...

  async def purge_expired(self, *, now: float) -> int:
    """Deletes records past the store's retention; returns how many."""
    ...
