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


"""The `SealedResultStore` deployment contract: the confidential sidecar.

Under a bound profile a UI call's complete result is sealed here before its
Event is appended; the Event keeps only an opaque `{recordId,
schemaVersion}`, and bytes leave only through ADK's gated resolver. A store
fails with `SealedResultStoreError` (`CONFLICT`, `NOT_FOUND`, `CORRUPT`)
and is checked by `validate_sealed_store` before binding. The state machine
ADK relies on is in docs/design/contracts.md.

Example:

  ref = await store.create(
      scope, operation_instance_id='op-1', envelope=sealed, expires_at=ttl
  )
  assert await store.resolve(scope, ref) == sealed
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
from typing import AbstractSet
from typing import Awaitable
from typing import Callable
from typing import Iterable
from typing import Optional
from typing import Protocol
from typing import runtime_checkable

from .errors import ContractError
from .scope import SessionKey


@dataclasses.dataclass(frozen=True)
class SealedRecordScope:
  """The key scope of one sealed record, minus the record id.

  Attributes:
    session: The Session the record belongs to.
    incarnation: The Session incarnation (from the lifecycle store).
    event_id: The id of the Event that will reference the record.
    function_call_id: The function call whose result is sealed.
  """

  session: SessionKey
  incarnation: int
  event_id: str
  function_call_id: str


@dataclasses.dataclass(frozen=True)
class SealedResultRef:
  """The public, opaque reference to a sealed record.

  It is not authority and not result bytes: resolving it requires the
  matching scope and passes ADK's gated resolver.

  Attributes:
    record_id: Random and opaque, at least 128 bits of entropy.
    schema_version: The reference schema version.
  """

  record_id: str
  schema_version: int = 1

  def to_wire(self) -> dict[str, object]:
    """The reference under its wire aliases."""
    return {'recordId': self.record_id, 'schemaVersion': self.schema_version}


@dataclasses.dataclass(frozen=True)
class SealedEnvelope:
  """The confidential content of one record.

  Attributes:
    sealed_result: The canonical bytes of the merged tool result.
    refresh_record: The canonical bytes of the refresh-invocation record,
      for render-producing calls; None otherwise.
  """

  sealed_result: bytes
  refresh_record: Optional[bytes] = None

  def __repr__(self) -> str:
    refresh = (
        'None' if self.refresh_record is None else len(self.refresh_record)
    )
    return (
        f'SealedEnvelope(<{len(self.sealed_result)} bytes>,'
        f' refresh_record=<{refresh}>)'
    )


_DIGEST_DOMAIN = b'adk-mcp-apps/sealed-envelope/v1\x00'


def envelope_digest(envelope: SealedEnvelope) -> bytes:
  """A content digest a store keeps with a record and verifies at resolve.

  SHA-256 over both parts, domain-separated and length-framed so no byte
  can shift from one part to the other.
  """
  digest = hashlib.sha256(_DIGEST_DOMAIN)
  for part in (envelope.sealed_result, envelope.refresh_record):
    if part is None:
      digest.update(b'\x00')
    else:
      digest.update(b'\x01' + len(part).to_bytes(8, 'big') + part)
  return digest.digest()


class SealedResultReason(enum.Enum):
  """Why a sealed-result store operation failed."""

  CONFLICT = 'conflict'
  """A create reused an operation instance with different bytes or scope."""

  NOT_FOUND = 'not_found'
  """No record matches the reference within the given scope."""

  CORRUPT = 'corrupt'
  """The stored bytes fail the store-private digest."""

  INCOMPATIBLE = 'incompatible'
  """The store fails persistence-compatibility validation."""


class SealedResultStoreError(ContractError):
  """A sealed-result store operation failed; its `reason` says how.

  A store raises it with `CONFLICT` from `create` and `NOT_FOUND` or
  `CORRUPT` from `resolve`.

  Attributes:
    reason: Why.
  """

  def __init__(self, reason: SealedResultReason, detail: str) -> None:
    self.reason = reason
    super().__init__(detail)


class SealedResultStoreIncompatibleError(SealedResultStoreError):
  """A store fails persistence-compatibility validation.

  Attributes:
    missing: The required capabilities the store does not declare.
    problems: Every reason the store was rejected, human-readable.
  """

  def __init__(
      self,
      problems: tuple[str, ...],
      missing: AbstractSet[SealedStoreCapability] = frozenset(),
  ) -> None:
    self.problems = problems
    self.missing = frozenset(missing)
    super().__init__(
        SealedResultReason.INCOMPATIBLE,
        'Sealed-result store is not persistence-compatible: '
        + '; '.join(problems),
    )


class SealedStoreCapability(str, enum.Enum):
  """A property of a sealed-result backend that binding validates."""

  DURABLE_IMMUTABLE_CREATE = 'durable_immutable_create'
  """Records survive restart; create is immutable per operation instance."""
  TENANT_SCOPED_LOOKUP = 'tenant_scoped_lookup'
  """Resolve matches the full key scope, incarnation included."""
  DIGEST_VERIFICATION = 'digest_verification'
  """A store-private content digest is verified at every resolve."""
  RETENTION_AND_DELETION = 'retention_and_deletion'
  """GC of expired unreferenced pending records and incarnation cascade."""
  STABLE_NAMESPACE_REVISION = 'stable_namespace_revision'
  """`namespace` and `revision` do not change while records exist."""


REQUIRED_SEALED_STORE_CAPABILITIES: frozenset[SealedStoreCapability] = (
    frozenset(SealedStoreCapability)
)
"""What binding requires of a production sealed-result store."""


IsReferenced = Callable[[SealedRecordScope, SealedResultRef], Awaitable[bool]]
"""Asks ADK whether a record is referenced by a persisted Event or owned by
an operation in the active-operation registry."""

IsActiveOperation = Callable[[str], Awaitable[bool]]
"""Asks ADK whether an operation instance is in the active-operation
registry."""


@runtime_checkable
class SealedResultStore(Protocol):
  """Stores sealed results, tenant- and incarnation-scoped.

  ADK calls `create` after result approval and before the Event append,
  `resolve` from the gated resolver (bootstrap, interactive replay, export),
  `collect_garbage` periodically, and `delete_incarnation` from the Session
  deletion cascade.
  """

  @property
  def namespace(self) -> str:
    """A stable, non-empty name of the store's record space."""
    ...

  @property
  def revision(self) -> str:
    """A non-empty label of the stored format; changes when it changes."""
    ...

  async def create(
      self,
      scope: SealedRecordScope,
      *,
      operation_instance_id: str,
      envelope: SealedEnvelope,
      expires_at: float,
  ) -> SealedResultRef:
    """Creates a pending record immutably, once per operation instance.

    Args:
      scope: Where the record belongs.
      operation_instance_id: The admitted outer request's instance id.
        Retries of that request reuse it.
      envelope: The bytes to seal, both parts created atomically.
      expires_at: When an unreferenced pending record becomes collectable,
        in seconds since the epoch.

    Returns:
      The new reference, or the existing one for a retry with the same
      instance and the same bytes.

    Raises:
      SealedResultStoreError: `CONFLICT`: same instance, different bytes;
        the stored record is unchanged.
    """
    ...

  async def resolve(
      self, scope: SealedRecordScope, ref: SealedResultRef
  ) -> SealedEnvelope:
    """Returns a record's envelope after verifying scope and digest.

    Raises:
      SealedResultStoreError: `NOT_FOUND`: no such record in exactly this
        scope; `CORRUPT`: the digest does not match.
    """
    ...

  async def collect_garbage(
      self, *, now: float, is_referenced: IsReferenced
  ) -> int:
    """Deletes expired pending records that nothing references.

    Args:
      now: The current time, in seconds since the epoch.
      is_referenced: Consulted for every expired candidate; a record for
        which it returns True (or raises) is kept.

    Returns:
      How many records were deleted.
    """
    ...

  async def delete_incarnation(
      self, session: SessionKey, incarnation: int
  ) -> int:
    """Deletes every record of one Session incarnation; idempotent.

    Returns:
      How many records were deleted by this call.
    """
    ...


@runtime_checkable
class ReferenceTrackingSealedResultStore(SealedResultStore, Protocol):
  """A store that records when a record becomes referenced.

  A record is created `pending`. ADK calls `mark_referenced` once the Event
  carrying the record's reference is appended; from then on the record is
  `committed` and only the deletion cascade removes it. A crash between the
  append and the mark leaves it pending, so GC still asks `is_referenced`
  (the authoritative Event) before deleting anything.
  """

  async def mark_referenced(
      self, scope: SealedRecordScope, ref: SealedResultRef
  ) -> None:
    """Marks a record committed; idempotent.

    Raises:
      SealedResultStoreError: `NOT_FOUND`: no such record in exactly this
        scope.
    """
    ...

  async def collect_garbage(
      self,
      *,
      now: float,
      is_referenced: IsReferenced,
      is_active_operation: Optional[IsActiveOperation] = None,
  ) -> int:
    """Deletes expired pending records that nothing references or owns.

    Args:
      now: The current time, in seconds since the epoch.
      is_referenced: As in `SealedResultStore.collect_garbage`.
      is_active_operation: Consulted with the record's operation-instance
        id; a record whose operation is active (or for which it raises) is
        kept.

    Returns:
      How many records were deleted.
    """
    ...


def read_label(provider: object, attribute: str) -> tuple[Optional[str], str]:
  """A provider's non-empty str attribute (e.g. `namespace`), read safely.

  Returns:
    The value and an empty string, or None and why it is unusable.
  """
  try:
    value = getattr(provider, attribute)
  except Exception as e:  # pylint: disable=broad-exception-caught
    return None, f'{attribute} raised {type(e).__name__}'
  if not isinstance(value, str) or not value.strip():
    return None, f'{attribute} is empty or not a str'
  return value, ''


def validate_sealed_store(
    store: object, expected_namespace: str, expected_revision: str
) -> None:
  """Persistence-compatibility validation of a sealed-result store.

  Checks that `store` implements the contract, declares every required
  capability, and reports a non-empty, stable namespace and revision equal
  to the expected ones (those the binding's descriptors were issued
  against), so a swapped-in store, empty or not, is rejected.

  Args:
    store: The candidate store.
    expected_namespace: The namespace the binding expects.
    expected_revision: The revision the binding expects.

  Raises:
    SealedResultStoreIncompatibleError: Listing every problem found.
  """
  problems: list[str] = []
  try:
    conforms = isinstance(store, SealedResultStore)
  except Exception:  # pylint: disable=broad-exception-caught
    conforms = False
  if not conforms:
    problems.append(
        f'{type(store).__name__} does not implement SealedResultStore'
    )
  try:
    declared: Iterable[object] = getattr(
        store, 'persistence_capabilities', frozenset()
    )
    capabilities = {c for c in declared if isinstance(c, SealedStoreCapability)}
  except Exception:  # pylint: disable=broad-exception-caught
    capabilities = set()
  missing = REQUIRED_SEALED_STORE_CAPABILITIES - capabilities
  for capability in sorted(missing, key=lambda c: c.value):
    problems.append(f'does not declare {capability.value}')
  for attribute, expected in (
      ('namespace', expected_namespace),
      ('revision', expected_revision),
  ):
    first, why = read_label(store, attribute)
    if first is None:
      problems.append(why)
      continue
    again, _ = read_label(store, attribute)
    if again != first:
      problems.append(f'{attribute} is not stable')
    elif first != expected:
      problems.append(
          f'{attribute} {first!r} differs from the expected {expected!r}'
      )
  if problems:
    raise SealedResultStoreIncompatibleError(tuple(problems), missing)
