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


"""The `SessionLifecycleStore` deployment contract: Session incarnations.

The store gives each `(app_name, user_id, session_id)` a monotonic
incarnation number and a state (`ABSENT`, `CREATING`, `ACTIVE`, `DELETING`,
`DELETED`), changed only by durable compare-and-set; a refused transition
raises `LifecycleConflictError` naming the state found. The transitions are
in docs/design/contracts.md; the protocol using them is in
`google.adk.mcp_apps.lifecycle`.

Example:

  record = await store.read(key)
  if record.state is LifecycleState.ACTIVE:
    incarnation = record.incarnation
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Optional
from typing import Protocol
from typing import runtime_checkable

from .errors import ContractError
from .scope import SessionKey


class LifecycleState(enum.Enum):
  """The lifecycle state of one Session key."""

  ABSENT = 'absent'
  CREATING = 'creating'
  ACTIVE = 'active'
  DELETING = 'deleting'
  DELETED = 'deleted'


@dataclasses.dataclass(frozen=True)
class CreationReceipt:
  """What the Session row's creation transaction recorded.

  Attributes:
    operation_id: The unique creation-operation id.
    incarnation: The incarnation being created.
    import_digest: The digest of the finalized imported events.
  """

  operation_id: str
  incarnation: int
  import_digest: str


@dataclasses.dataclass(frozen=True)
class LifecycleRecord:
  """The durable lifecycle record of one Session key.

  Attributes:
    session: The Session key.
    state: The current state.
    incarnation: The current incarnation; 0 while `ABSENT`.
    operation_id: The creation operation that reserved `CREATING`.
    receipt: The receipt the activation compared, once `ACTIVE`.
    adopted: True if the incarnation was adopted by migration.
    cascade_steps: The deletion-cascade steps completed so far.
    abandoned: True if the incarnation ended as an abandoned creation
      (`CREATING(n) -> DELETED(n)` after its fence was retired).
  """

  session: SessionKey
  state: LifecycleState
  incarnation: int = 0
  operation_id: Optional[str] = None
  receipt: Optional[CreationReceipt] = None
  adopted: bool = False
  cascade_steps: frozenset[str] = frozenset()
  abandoned: bool = False


class LifecycleConflictError(ContractError):
  """A compare-and-set found a state other than the expected one.

  Attributes:
    actual: The record the store holds.
  """

  def __init__(self, actual: LifecycleRecord, detail: str) -> None:
    self.actual = actual
    super().__init__(
        f'Lifecycle transition refused ({detail}); current state is'
        f' {actual.state.value}({actual.incarnation})'
    )


@runtime_checkable
class SessionLifecycleStore(Protocol):
  """Holds each Session key's incarnation and lifecycle state.

  Every method except `read` is one durable compare-and-set and raises
  `LifecycleConflictError` when the precondition does not hold.
  """

  @property
  def namespace(self) -> str:
    """A stable, non-empty name of the store's record space."""
    ...

  @property
  def revision(self) -> str:
    """A non-empty label of the stored format; changes when it changes."""
    ...

  async def read(self, session: SessionKey) -> LifecycleRecord:
    """The current record; an `ABSENT` record if there is none."""
    ...

  async def reserve_creation(
      self, session: SessionKey, *, expected: LifecycleRecord, operation_id: str
  ) -> LifecycleRecord:
    """`ABSENT` or `DELETED(n)` (as `expected`) to `CREATING(n+1)`."""
    ...

  async def activate(
      self, session: SessionKey, *, receipt: CreationReceipt
  ) -> LifecycleRecord:
    """`CREATING(n)` to `ACTIVE(n)` if the receipt matches the reservation."""
    ...

  async def adopt_existing(
      self, session: SessionKey, *, adoption_id: str
  ) -> LifecycleRecord:
    """Migration: `ABSENT` to `ACTIVE(1)` with the adoption marker."""
    ...

  async def begin_deletion(
      self, session: SessionKey, *, incarnation: int
  ) -> LifecycleRecord:
    """`ACTIVE(n)` to `DELETING(n)`; new admission fails from here on."""
    ...

  async def record_cascade_step(
      self, session: SessionKey, *, incarnation: int, step: str
  ) -> LifecycleRecord:
    """Records one completed cascade step of `DELETING(n)`; idempotent."""
    ...

  async def complete_deletion(
      self, session: SessionKey, *, incarnation: int
  ) -> LifecycleRecord:
    """`DELETING(n)` to `DELETED(n)`."""
    ...

  async def abandon_creation(
      self, session: SessionKey, *, incarnation: int, operation_id: str
  ) -> LifecycleRecord:
    """Recovery: `CREATING(n)` of `operation_id` to `DELETED(n)`, abandoned.

    Only after the creation fence of `(n, operation_id)` was retired in the
    Session backend, so the retired creator can no longer commit.
    """
    ...
