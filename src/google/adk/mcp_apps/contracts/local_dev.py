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


"""Local-development implementations of every deployment contract. DEV ONLY.

These let `adk web` and tests bind an Apps host profile on one machine. They
are in-memory (nothing survives the process, so descriptors stop verifying
after a restart), trust every loopback caller, and grant broadly. Each one
carries the class markers `dev_only = True` and `loopback_only = True`:
`check_readiness` refuses any `dev_only` provider unless it is called with
`allow_dev_providers=True`, and even then only if every dev provider is
loopback-only and the principal resolver itself admits loopback requests
only. `LocalDevPrincipalResolver` enforces that: it resolves nothing for a
request whose peer or `Origin` is not a loopback address.

Never use them in a deployment that listens on a non-loopback interface.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import ipaddress
import secrets
import threading
from typing import Callable
from typing import ClassVar
from typing import Iterable
from typing import Optional
import urllib.parse

from .export_audit_store import ExportAuditRecord
from .key_provider import BindingKey
from .key_provider import BindingKeyUnavailableError
from .principal_resolver import Principal
from .principal_resolver import PrincipalRequest
from .principal_resolver import PrincipalUnresolvedError
from .replay_classification import ReplayClass
from .replay_classification import ToolIdentity
from .scope import SessionKey
from .sealed_result_store import envelope_digest
from .sealed_result_store import IsReferenced
from .sealed_result_store import SealedEnvelope
from .sealed_result_store import SealedRecordScope
from .sealed_result_store import SealedResultReason
from .sealed_result_store import SealedResultRef
from .sealed_result_store import SealedResultStoreError
from .session_authorizer import SessionPurpose
from .session_authorizer import WidgetTarget
from .session_lifecycle_store import CreationReceipt
from .session_lifecycle_store import LifecycleConflictError
from .session_lifecycle_store import LifecycleRecord
from .session_lifecycle_store import LifecycleState

_LOOPBACK_NAMES = frozenset({'localhost'})


def is_loopback_host(host: Optional[str]) -> bool:
  """Whether `host` is `localhost` or a loopback IP literal.

  Args:
    host: A host name or IP literal, optionally in IPv6 brackets.

  Returns:
    True for `localhost`, 127.0.0.0/8 and ::1 (IPv4-mapped included).
  """
  if not host:
    return False
  text = host.strip().lower()
  if text.startswith('[') and text.endswith(']'):
    text = text[1:-1]
  if text in _LOOPBACK_NAMES:
    return True
  try:
    address = ipaddress.ip_address(text)
  except ValueError:
    return False
  if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
    return address.ipv4_mapped.is_loopback
  return address.is_loopback


def _origin_is_loopback(origin: str) -> bool:
  parsed = urllib.parse.urlsplit(origin)
  if parsed.scheme not in ('http', 'https'):
    return False
  return is_loopback_host(parsed.hostname)


class _DevOnly:
  dev_only: ClassVar[bool] = True
  """Marks a provider that production readiness refuses."""

  loopback_only: ClassVar[bool] = True
  """Marks a dev provider as safe only behind a loopback-only resolver."""


class _DevStore(_DevOnly):
  """A dev store's stable identity: the `namespace` and `revision` pair."""

  def __init__(self, namespace: str, revision: str) -> None:
    self._namespace = namespace
    self._revision = revision
    self._lock = threading.Lock()

  @property
  def namespace(self) -> str:
    return self._namespace

  @property
  def revision(self) -> str:
    return self._revision


class LocalDevPrincipalResolver(_DevOnly):
  """DEV ONLY: every loopback caller is one fixed local principal.

  A request is resolved only if its peer address is loopback and its
  `Origin` header, if any, is an http(s) origin on a loopback host.
  """

  def __init__(self, principal_id: str = 'local-dev') -> None:
    self._principal = Principal(principal_id)

  async def resolve(self, request: PrincipalRequest) -> Principal:
    if not is_loopback_host(request.client_host):
      raise PrincipalUnresolvedError(
          'not_loopback', 'local development accepts loopback peers only'
      )
    if request.origin is not None and not _origin_is_loopback(request.origin):
      raise PrincipalUnresolvedError(
          'not_loopback', 'local development accepts loopback origins only'
      )
    return self._principal


class LocalDevSessionAuthorizer(_DevOnly):
  """DEV ONLY: grants `VIEW` on every Session; `EXPORT` only if enabled."""

  def __init__(self, *, allow_export: bool = False) -> None:
    self._allow_export = allow_export

  async def authorize(
      self,
      principal: Principal,
      session: SessionKey,
      purpose: SessionPurpose,
      *,
      widget: Optional[WidgetTarget] = None,
  ) -> bool:
    del principal, session, widget
    return purpose is SessionPurpose.VIEW or self._allow_export


@dataclasses.dataclass
class _SealedRow:
  scope: SealedRecordScope
  operation_instance_id: str
  envelope: SealedEnvelope
  digest: bytes
  expires_at: float


class LocalDevSealedResultStore(_DevStore):
  """DEV ONLY: an in-memory `SealedResultStore`; lost on restart."""

  def __init__(
      self,
      *,
      namespace: str = 'local-dev/sealed-results',
      revision: str = '1',
  ) -> None:
    super().__init__(namespace, revision)
    self._rows: dict[str, _SealedRow] = {}
    self._by_instance: dict[str, str] = {}

  async def create(
      self,
      scope: SealedRecordScope,
      *,
      operation_instance_id: str,
      envelope: SealedEnvelope,
      expires_at: float,
  ) -> SealedResultRef:
    digest = envelope_digest(envelope)
    with self._lock:
      existing = self._by_instance.get(operation_instance_id)
      if existing is not None:
        row = self._rows[existing]
        if row.scope != scope or not hmac.compare_digest(row.digest, digest):
          raise SealedResultStoreError(
              SealedResultReason.CONFLICT,
              'operation instance already sealed different content',
          )
        return SealedResultRef(existing)
      record_id = secrets.token_urlsafe(24)
      self._rows[record_id] = _SealedRow(
          scope, operation_instance_id, envelope, digest, expires_at
      )
      self._by_instance[operation_instance_id] = record_id
      return SealedResultRef(record_id)

  async def resolve(
      self, scope: SealedRecordScope, ref: SealedResultRef
  ) -> SealedEnvelope:
    with self._lock:
      row = self._rows.get(ref.record_id)
    if row is None or row.scope != scope or ref.schema_version != 1:
      raise SealedResultStoreError(
          SealedResultReason.NOT_FOUND, 'no sealed record in this scope'
      )
    if not hmac.compare_digest(row.digest, envelope_digest(row.envelope)):
      raise SealedResultStoreError(
          SealedResultReason.CORRUPT, 'sealed record failed its digest'
      )
    return row.envelope

  async def collect_garbage(
      self, *, now: float, is_referenced: IsReferenced
  ) -> int:
    with self._lock:
      candidates = [
          (record_id, row)
          for record_id, row in self._rows.items()
          if row.expires_at <= now
      ]
    deleted = 0
    for record_id, row in candidates:
      try:
        keep = await is_referenced(row.scope, SealedResultRef(record_id))
      except Exception:  # pylint: disable=broad-exception-caught
        keep = True
      if not keep:
        with self._lock:
          if self._rows.pop(record_id, None) is not None:
            self._by_instance.pop(row.operation_instance_id, None)
            deleted += 1
    return deleted

  async def delete_incarnation(
      self, session: SessionKey, incarnation: int
  ) -> int:
    with self._lock:
      doomed = [
          record_id
          for record_id, row in self._rows.items()
          if row.scope.session == session
          and row.scope.incarnation == incarnation
      ]
      for record_id in doomed:
        row = self._rows.pop(record_id)
        self._by_instance.pop(row.operation_instance_id, None)
    return len(doomed)


class LocalDevSessionLifecycleStore(_DevStore):
  """DEV ONLY: an in-memory `SessionLifecycleStore`; lost on restart."""

  def __init__(
      self,
      *,
      namespace: str = 'local-dev/session-lifecycle',
      revision: str = '1',
  ) -> None:
    super().__init__(namespace, revision)
    self._records: dict[SessionKey, LifecycleRecord] = {}

  def _current(self, session: SessionKey) -> LifecycleRecord:
    return self._records.get(
        session, LifecycleRecord(session, LifecycleState.ABSENT)
    )

  def _transition(
      self,
      session: SessionKey,
      allowed: Iterable[LifecycleState],
      incarnation: Optional[int],
      new: dict[str, object],
      detail: str,
  ) -> LifecycleRecord:
    with self._lock:
      current = self._current(session)
      if current.state not in tuple(allowed) or (
          incarnation is not None and current.incarnation != incarnation
      ):
        raise LifecycleConflictError(current, detail)
      updated = dataclasses.replace(current, **new)  # type: ignore[arg-type]
      self._records[session] = updated
      return updated

  async def read(self, session: SessionKey) -> LifecycleRecord:
    with self._lock:
      return self._current(session)

  async def reserve_creation(
      self, session: SessionKey, *, expected: LifecycleRecord, operation_id: str
  ) -> LifecycleRecord:
    if expected.state not in (LifecycleState.ABSENT, LifecycleState.DELETED):
      raise LifecycleConflictError(
          expected, 'creation must expect ABSENT or DELETED'
      )
    return self._transition(
        session,
        (expected.state,),
        expected.incarnation,
        {
            'state': LifecycleState.CREATING,
            'incarnation': expected.incarnation + 1,
            'operation_id': operation_id,
            'receipt': None,
            'adopted': False,
            'abandoned': False,
            'cascade_steps': frozenset(),
        },
        'reserve creation',
    )

  async def activate(
      self, session: SessionKey, *, receipt: CreationReceipt
  ) -> LifecycleRecord:
    with self._lock:
      current = self._current(session)
      if current.operation_id != receipt.operation_id:
        raise LifecycleConflictError(current, 'receipt names another creator')
    return self._transition(
        session,
        (LifecycleState.CREATING,),
        receipt.incarnation,
        {'state': LifecycleState.ACTIVE, 'receipt': receipt},
        'activate',
    )

  async def adopt_existing(
      self, session: SessionKey, *, adoption_id: str
  ) -> LifecycleRecord:
    return self._transition(
        session,
        (LifecycleState.ABSENT,),
        0,
        {
            'state': LifecycleState.ACTIVE,
            'incarnation': 1,
            'operation_id': adoption_id,
            'adopted': True,
        },
        'adopt existing Session',
    )

  async def begin_deletion(
      self, session: SessionKey, *, incarnation: int
  ) -> LifecycleRecord:
    return self._transition(
        session,
        (LifecycleState.ACTIVE,),
        incarnation,
        {'state': LifecycleState.DELETING},
        'begin deletion',
    )

  async def record_cascade_step(
      self, session: SessionKey, *, incarnation: int, step: str
  ) -> LifecycleRecord:
    with self._lock:
      steps = self._current(session).cascade_steps
    return self._transition(
        session,
        (LifecycleState.DELETING,),
        incarnation,
        {'cascade_steps': steps | {step}},
        'record cascade step',
    )

  async def complete_deletion(
      self, session: SessionKey, *, incarnation: int
  ) -> LifecycleRecord:
    return self._transition(
        session,
        (LifecycleState.DELETING,),
        incarnation,
        {'state': LifecycleState.DELETED},
        'complete deletion',
    )

  async def abandon_creation(
      self, session: SessionKey, *, incarnation: int, operation_id: str
  ) -> LifecycleRecord:
    with self._lock:
      current = self._current(session)
      if current.operation_id != operation_id:
        raise LifecycleConflictError(current, 'another creator holds CREATING')
    return self._transition(
        session,
        (LifecycleState.CREATING,),
        incarnation,
        {'state': LifecycleState.DELETED, 'abandoned': True},
        'abandon creation',
    )


class LocalDevExportAuditStore(_DevStore):
  """DEV ONLY: an in-memory `ExportAuditStore`; lost on restart."""

  def __init__(
      self,
      *,
      namespace: str = 'local-dev/export-audit',
      revision: str = '1',
      retention_seconds: float = 86400.0,
  ) -> None:
    super().__init__(namespace, revision)
    self._retention = retention_seconds
    self._records: list[ExportAuditRecord] = []

  async def append(self, record: ExportAuditRecord) -> None:
    with self._lock:
      for existing in self._records:
        if (
            existing.operation_instance_id == record.operation_instance_id
            and existing.status is record.status
        ):
          return
      self._records.append(record)

  async def records(
      self, operation_instance_id: str
  ) -> tuple[ExportAuditRecord, ...]:
    with self._lock:
      return tuple(
          r
          for r in self._records
          if r.operation_instance_id == operation_instance_id
      )

  async def delete_incarnation(
      self, session: SessionKey, incarnation: int
  ) -> int:
    return self._remove(
        lambda r: r.session == session and r.incarnation == incarnation
    )

  async def purge_expired(self, *, now: float) -> int:
    return self._remove(lambda r: r.recorded_at + self._retention <= now)

  def _remove(self, doomed: Callable[[ExportAuditRecord], bool]) -> int:
    with self._lock:
      kept = [r for r in self._records if not doomed(r)]
      removed = len(self._records) - len(kept)
      self._records = kept
    return removed


class LocalDevKeyProvider(_DevOnly):
  """DEV ONLY: one in-memory binding key, random unless given.

  A random key is lost on restart, so descriptors written before it fail
  closed afterwards; pass `secret` to keep them verifying across restarts.
  """

  def __init__(
      self, *, key_id: str = 'local-dev-1', secret: Optional[bytes] = None
  ) -> None:
    self._key = BindingKey(key_id, secret or secrets.token_bytes(32))

  def active_key(self) -> BindingKey:
    return self._key

  def key(self, key_id: str) -> BindingKey:
    if key_id != self._key.key_id:
      raise BindingKeyUnavailableError(key_id, 'unknown to the dev provider')
    return self._key


class LocalDevReplayClassification(_DevOnly):
  """DEV ONLY: a fixed set of replay-safe native tool names.

  The revision is derived from the set, so changing the set changes it.
  """

  def __init__(self, replay_safe_tools: Iterable[str] = ()) -> None:
    self._safe = frozenset(replay_safe_tools)
    digest = hashlib.sha256('\n'.join(sorted(self._safe)).encode('utf-8'))
    self._revision = 'sha256:' + digest.hexdigest()[:32]

  @property
  def source(self) -> str:
    return 'local-dev'

  @property
  def revision(self) -> str:
    return self._revision

  def classify(self, tool: ToolIdentity) -> ReplayClass:
    if tool.tool_name in self._safe:
      return ReplayClass.REPLAY_SAFE
    return ReplayClass.NOT_REPLAY_SAFE


class LocalDevRenderer(_DevOnly):
  """DEV ONLY: the local `adk web` renderer, attached until `detach()`."""

  def __init__(
      self, renderer_id: str = 'adk-web-local-dev', version: str = '0'
  ) -> None:
    self._renderer_id = renderer_id
    self._version = version
    self._attached = True

  @property
  def renderer_id(self) -> str:
    return self._renderer_id

  @property
  def version(self) -> str:
    return self._version

  def is_attached(self) -> bool:
    return self._attached

  def detach(self) -> None:
    """Marks the renderer detached (readiness is then withdrawn)."""
    self._attached = False
