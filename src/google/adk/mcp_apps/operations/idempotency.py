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

"""Method-aware idempotency for app `tools/call` and `resources/read`.

A View may put `_meta["com.google.adk/idempotency-key"]` on a call or a
read. Under one `IdempotencyNamespace`, the same key with the same
`OperationIdentity` gets the one retained terminal outcome; the same key
with another identity (another method, tool, arguments digest or canonical
URI) is an `IDEMPOTENCY_CONFLICT`. The records are process-local: a
restart forgets them, and so do expiry and eviction, after which the
operation may run again; remote effects keep the server's semantics. Run
the post-queue barrier before `claim`. Decisions:
docs/decisions/issue23-idempotency.md.

Example:

  key = idempotency_key_of(params.get('_meta'))
  identity = OperationIdentity.for_call('shop', 'srv', 'buy', {'sku': 'A1'})
  got = await outcomes.claim_async(namespace, key, identity)
  if isinstance(got, Retained):
    return got.outcome
  with got:
    response = await run_the_call()
    got.settle(response)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Mapping
import dataclasses
import enum
import math
import re
import threading
import time
import types
from typing import Any
from typing import Optional
from typing import Union

from .. import canonical_json
from ..contracts.principal_resolver import Principal
from ..resources.uri import CanonicalUri
from ..resources.uri import DEFAULT_URI_CANONICALIZER
from ..resources.uri import McpAppUriError
from ..resources.uri import UriCanonicalizer
from .errors import OperationError
from .errors import OperationErrorReason

__all__ = [
    'DEFAULT_CAPACITY',
    'DEFAULT_RETENTION_SECONDS',
    'IDEMPOTENCY_META_KEY',
    'MAX_KEY_LENGTH',
    'Claim',
    'IdempotencyNamespace',
    'OperationIdentity',
    'OperationMethod',
    'ReadRetention',
    'Retained',
    'RetainedOutcomes',
    'idempotency_key_of',
    'read_retention',
]

IDEMPOTENCY_META_KEY = 'com.google.adk/idempotency-key'
"""The `params._meta` member that carries the key (calls and reads)."""

MAX_KEY_LENGTH = 128
"""The longest key, in characters."""

DEFAULT_RETENTION_SECONDS = 600.0
"""How long a settled outcome is kept when nothing shorter applies."""

DEFAULT_CAPACITY = 4096
"""How many settled outcomes are kept before the oldest is evicted."""

_KEY_RE = re.compile(r'[A-Za-z0-9._-]{1,%d}' % MAX_KEY_LENGTH)


class OperationMethod(str, enum.Enum):
  """The JSON-RPC methods that take an idempotency key."""

  TOOLS_CALL = 'tools/call'
  RESOURCES_READ = 'resources/read'


def idempotency_key_of(params_meta: Any) -> Optional[str]:
  """Returns the idempotency key of a request's `params._meta`.

  Args:
    params_meta: The request's `params._meta` (None when absent).

  Returns:
    The key, or None when the request carries none.

  Raises:
    OperationError: `IDEMPOTENCY_KEY_INVALID` if the key is not a string of
      1 to 128 characters of `[A-Za-z0-9._-]`; `INVALID_PARAMS` if
      `_meta` is present but not an object.
  """
  if params_meta is None:
    return None
  if not isinstance(params_meta, Mapping):
    raise OperationError(
        OperationErrorReason.INVALID_PARAMS, 'params._meta is not an object'
    )
  if IDEMPOTENCY_META_KEY not in params_meta:
    return None
  key = params_meta[IDEMPOTENCY_META_KEY]
  if type(key) is not str:  # pylint: disable=unidiomatic-typecheck
    raise OperationError(
        OperationErrorReason.IDEMPOTENCY_KEY_INVALID,
        f'the key is a {type(key).__name__}, not a string',
    )
  if _KEY_RE.fullmatch(key) is None:
    raise OperationError(
        OperationErrorReason.IDEMPOTENCY_KEY_INVALID,
        f'the key must be 1-{MAX_KEY_LENGTH} characters of [A-Za-z0-9._-]',
    )
  return key


def _exact_int(value: object) -> bool:
  return isinstance(value, int) and not isinstance(value, bool)


def _non_empty(name: str, value: object) -> str:
  if not isinstance(value, str) or not value:
    raise ValueError(f'{name} must be a non-empty str')
  return value


@dataclasses.dataclass(frozen=True)
class OperationIdentity:
  """What one keyed operation is; equal identities may share an outcome.

  Build one with `for_call` or `for_read`.

  Attributes:
    method: The JSON-RPC method.
    toolset_id: The configured toolset id.
    server_id: The server the View is bound to.
    target: The tool name (calls) or the canonical URI (reads).
    arguments_digest: `sha256:<hex>` of the canonical arguments (calls),
      None for reads.
  """

  method: OperationMethod
  toolset_id: str
  server_id: str
  target: str
  arguments_digest: Optional[str] = None

  @classmethod
  def for_call(
      cls,
      toolset_id: str,
      server_id: str,
      tool_name: str,
      arguments: Optional[Mapping[str, Any]],
  ) -> OperationIdentity:
    """The identity of a `tools/call`.

    Args:
      toolset_id: The configured toolset id.
      server_id: The server the View is bound to.
      tool_name: The tool.
      arguments: The call's arguments; None is the same as `{}`.

    Returns:
      The identity; the order of argument members does not change it.

    Raises:
      OperationError: `INVALID_PARAMS` if the arguments have no ADK
        Canonical JSON v1 form.
      ValueError: If an id or the tool name is empty.
    """
    try:
      digest = canonical_json.envelope_digest(
          canonical_json.Purpose.REPLAY_IDENTITY,
          {} if arguments is None else arguments,
      )
    except canonical_json.CanonicalJsonError as e:
      raise OperationError(
          OperationErrorReason.INVALID_PARAMS,
          f'the arguments have no canonical form ({e.reason.value})',
      ) from e
    return cls(
        OperationMethod.TOOLS_CALL,
        _non_empty('toolset_id', toolset_id),
        _non_empty('server_id', server_id),
        _non_empty('tool_name', tool_name),
        digest,
    )

  @classmethod
  def for_read(
      cls,
      toolset_id: str,
      server_id: str,
      uri: Union[str, CanonicalUri],
      *,
      canonicalizer: Optional[UriCanonicalizer] = None,
  ) -> OperationIdentity:
    """The identity of a `resources/read`.

    Args:
      toolset_id: The configured toolset id.
      server_id: The server the View is bound to.
      uri: The URI read.
      canonicalizer: The rules the View's resource policy uses
        (`ResourceReadPolicy.canonicalizer`); the built-in rules if None.

    Returns:
      The identity; equivalent URIs give equal identities.

    Raises:
      OperationError: `INVALID_PARAMS` if the URI has no canonical form.
      ValueError: If an id is empty.
    """
    rules = canonicalizer or DEFAULT_URI_CANONICALIZER
    try:
      canonical = rules.canonicalize(uri)
    except McpAppUriError as e:
      raise OperationError(
          OperationErrorReason.INVALID_PARAMS,
          f'the URI has no canonical form ({e.reason.value})',
      ) from e
    return cls(
        OperationMethod.RESOURCES_READ,
        _non_empty('toolset_id', toolset_id),
        _non_empty('server_id', server_id),
        str(canonical),
    )


@dataclasses.dataclass(frozen=True)
class IdempotencyNamespace:
  """Whose keys these are; records never cross namespaces.

  Calls use the first six fields. Reads use all eight: a resource-policy or
  delivery-limit revision change hides the reads retained before it. The
  conflict check spans calls and reads under the first six fields, so one
  key cannot name a call and a read at once (docs/decisions).

  Attributes:
    principal_digest: The principal's opaque digest
      (`affinity.security_domain(key, principal).digest`), never the
      principal itself.
    view_id: The View instance id.
    binding_revision: The binding revision the View was bound under.
    binding_generation: The registry's binding generation.
    incarnation: The Session incarnation.
    connection_generation_id: The View's app-safe connection generation.
    resource_policy_revision: The View's `ResourceReadPolicy.revision`
      (needed for reads).
    delivery_limit_revision: The revision of the read delivery limits
      (needed for reads).
  """

  principal_digest: str
  view_id: str
  binding_revision: str
  binding_generation: int
  incarnation: int
  connection_generation_id: str
  resource_policy_revision: Optional[str] = None
  delivery_limit_revision: Optional[str] = None

  def __post_init__(self) -> None:
    if isinstance(self.principal_digest, Principal):
      raise TypeError('pass the principal digest, never the principal')
    _non_empty('principal_digest', self.principal_digest)
    _non_empty('view_id', self.view_id)
    _non_empty('binding_revision', self.binding_revision)
    _non_empty('connection_generation_id', self.connection_generation_id)
    for name in ('binding_generation', 'incarnation'):
      if not _exact_int(getattr(self, name)):
        raise ValueError(f'{name} must be an int')
    for name in ('resource_policy_revision', 'delivery_limit_revision'):
      value = getattr(self, name)
      if value is not None:
        _non_empty(name, value)

  def __repr__(self) -> str:
    return (
        f'IdempotencyNamespace({self.principal_digest[:12]}…,'
        f' view={self.view_id!r}, connection={self.connection_generation_id!r})'
    )

  @property
  def conflict_scope(self) -> tuple[str, str, str, int, int, str]:
    """The fields a key's single identity is checked under."""
    return (
        self.principal_digest,
        self.view_id,
        self.binding_revision,
        self.binding_generation,
        self.incarnation,
        self.connection_generation_id,
    )

  def read_qualifier(
      self, identity: OperationIdentity
  ) -> Optional[tuple[str, str]]:
    """The read revisions `identity`'s records are kept under.

    Args:
      identity: The operation.

    Returns:
      None for a call; the resource-policy and delivery-limit revisions
      for a read.

    Raises:
      ValueError: If `identity` is a read and a revision is missing.
    """
    if identity.method is not OperationMethod.RESOURCES_READ:
      return None
    if (
        self.resource_policy_revision is None
        or self.delivery_limit_revision is None
    ):
      raise ValueError(
          'a read needs the resource-policy and delivery-limit revisions'
      )
    return (self.resource_policy_revision, self.delivery_limit_revision)


@dataclasses.dataclass(frozen=True)
class ReadRetention:
  """What a read result lets the host retain.

  Attributes:
    ttl_seconds: The server's `ttlMs` in seconds; None when the result
      has none (a legacy-era result), 0 when it is malformed.
    private: Whether the result is bound to its credential context
      (`cacheScope` is not `"public"`).
  """

  ttl_seconds: Optional[float]
  private: bool


def read_retention(result: Mapping[str, Any]) -> ReadRetention:
  """Reads `ttlMs` and `cacheScope` off a `resources/read` wire result.

  Both are top-level members of a 2026-07-28 `ReadResourceResult`; a
  legacy-era result has neither. A malformed `ttlMs` retains nothing; a
  missing or unknown `cacheScope` counts as private.

  Args:
    result: The JSON `result` object of the read.

  Returns:
    Its retention.
  """
  ttl: Optional[float] = None
  if 'ttlMs' in result:
    value = result['ttlMs']
    valid = _exact_int(value) and value >= 0
    ttl = min(value, canonical_json.MAX_SAFE_INTEGER) / 1000 if valid else 0.0
  return ReadRetention(ttl, result.get('cacheScope') != 'public')


@dataclasses.dataclass(frozen=True)
class Retained:
  """A retained terminal outcome, returned instead of running again.

  Attributes:
    outcome: What `Claim.settle` stored, the very object.
  """

  outcome: Any


_EntryKey = tuple[tuple[str, str, str, int, int, str], str]
_Qualifier = Optional[tuple[str, str]]
_RecordKey = tuple[_Qualifier, Optional[Hashable]]


@dataclasses.dataclass
class _Record:
  outcome: Any
  expires_at: float


class _Running:
  """One executing claim and whoever waits for it."""

  def __init__(self) -> None:
    self.done = threading.Event()
    self.futures: list[asyncio.Future[None]] = []

  def finish(self) -> None:
    self.done.set()
    for future in self.futures:
      try:
        future.get_loop().call_soon_threadsafe(_resolve, future)
      except RuntimeError:  # The waiter's loop is closed.
        pass
    self.futures.clear()


def _resolve(future: asyncio.Future[None]) -> None:
  if not future.done():
    future.set_result(None)


@dataclasses.dataclass
class _Entry:
  identity: OperationIdentity
  running: dict[_Qualifier, _Running] = dataclasses.field(default_factory=dict)
  records: dict[_RecordKey, _Record] = dataclasses.field(default_factory=dict)


class Claim:
  """The right to execute one keyed operation; settle or abandon it once.

  Used as a context manager, a claim still open when the block ends (an
  exception, a cancellation) is abandoned.
  """

  def __init__(
      self,
      ledger: Optional[RetainedOutcomes],
      entry_key: Optional[_EntryKey],
      qualifier: _Qualifier,
      running: Optional[_Running],
      identity: OperationIdentity,
  ) -> None:
    self._ledger = ledger
    self._entry_key = entry_key
    self._qualifier = qualifier
    self._running = running
    self._open = True
    self.identity = identity

  @property
  def is_open(self) -> bool:
    """Whether the claim is neither settled nor abandoned."""
    return self._open

  def settle(
      self,
      outcome: Any,
      *,
      ttl_seconds: Optional[float] = None,
      credential_context: Optional[Hashable] = None,
  ) -> bool:
    """Records the terminal outcome and wakes whoever waits for it.

    Args:
      outcome: The terminal outcome (a result or an error), kept as is.
      ttl_seconds: A shorter retention, e.g. a read's `ttlMs`; the ledger's
        retention applies when None or longer. 0 (or NaN) retains
        nothing.
      credential_context: Binds the record to this credential context (a
        `cacheScope: "private"` read); only a claim made with an equal one
        gets it. None shares it across credential contexts.

    Returns:
      Whether the outcome was retained (False for a claim without a key,
      or a retention of 0).

    Raises:
      RuntimeError: If the claim was settled or abandoned already.
    """
    self._close()
    if self._ledger is None or self._entry_key is None:
      return False
    assert self._running is not None
    return self._ledger._settle(  # pylint: disable=protected-access
        self._entry_key,
        self._qualifier,
        self._running,
        outcome,
        ttl_seconds,
        credential_context,
    )

  def abandon(self) -> None:
    """Gives the key up without an outcome; a waiter may claim it next.

    Raises:
      RuntimeError: If the claim was settled or abandoned already.
    """
    self._close()
    if self._ledger is None or self._entry_key is None:
      return
    assert self._running is not None
    self._ledger._abandon(  # pylint: disable=protected-access
        self._entry_key, self._qualifier, self._running
    )

  def _close(self) -> None:
    if not self._open:
      raise RuntimeError('the claim was settled or abandoned already')
    self._open = False

  def __enter__(self) -> Claim:
    return self

  def __exit__(
      self,
      exc_type: Optional[type[BaseException]],
      exc: Optional[BaseException],
      tb: Optional[types.TracebackType],
  ) -> None:
    if self._open:
      self.abandon()


class RetainedOutcomes:
  """The process-local ledger of keyed operations' terminal outcomes.

  Thread-safe. A settled outcome is kept for the retention (or the shorter
  `ttl_seconds` it was settled with) and at most `capacity` outcomes are
  kept, the oldest evicted first. Nothing survives the process.
  """

  def __init__(
      self,
      *,
      retention_seconds: float = DEFAULT_RETENTION_SECONDS,
      capacity: int = DEFAULT_CAPACITY,
      clock: Callable[[], float] = time.monotonic,
  ) -> None:
    """Creates an empty ledger.

    Args:
      retention_seconds: How long a settled outcome is kept at most.
      capacity: How many settled outcomes are kept at most.
      clock: Monotonic seconds; injectable for tests.

    Raises:
      ValueError: If the retention or the capacity is not positive.
    """
    if not retention_seconds > 0:
      raise ValueError('retention_seconds must be positive')
    if not _exact_int(capacity) or capacity < 1:
      raise ValueError('capacity must be a positive int')
    self._retention = float(retention_seconds)
    self._capacity = capacity
    self._clock = clock
    self._lock = threading.Lock()
    self._entries: dict[_EntryKey, _Entry] = {}
    # Settled records, oldest first: (entry key, record key) -> None.
    self._order: dict[tuple[_EntryKey, _RecordKey], None] = {}

  @property
  def retention_seconds(self) -> float:
    """The longest retention of a settled outcome."""
    return self._retention

  def __len__(self) -> int:
    """The number of settled outcomes held (expired ones included)."""
    with self._lock:
      return len(self._order)

  def try_claim(
      self,
      namespace: IdempotencyNamespace,
      key: Optional[str],
      identity: OperationIdentity,
      *,
      credential_context: Optional[Hashable] = None,
  ) -> Union[Claim, Retained, None]:
    """Claims the key without waiting.

    Args:
      namespace: Whose key it is.
      key: The request's key (`idempotency_key_of`); None gives a claim
        that records nothing, so the operation runs every time.
      identity: What the operation is.
      credential_context: The caller's credential context; it sees
        records settled under it and records shared by all.

    Returns:
      A `Claim` (execute, then settle or abandon), the `Retained` outcome,
      or None when the same operation is running under another claim.

    Raises:
      OperationError: `IDEMPOTENCY_CONFLICT` if the key is retained or
        running for another identity in the namespace.
    """
    got = self._try(namespace, key, identity, credential_context)
    return None if isinstance(got, _Running) else got

  def claim(
      self,
      namespace: IdempotencyNamespace,
      key: Optional[str],
      identity: OperationIdentity,
      *,
      credential_context: Optional[Hashable] = None,
      timeout: Optional[float] = None,
  ) -> Union[Claim, Retained]:
    """Claims the key, waiting (blocking) while the same operation runs.

    Never call this on an event loop's thread; use `claim_async`.

    Args:
      namespace: Whose key it is.
      key: The request's key; None always gives a fresh, unrecorded claim.
      identity: What the operation is.
      credential_context: As `try_claim`.
      timeout: The longest wait, in seconds; None waits until the running
        claim settles or is abandoned.

    Returns:
      A `Claim` or the `Retained` outcome.

    Raises:
      OperationError: `IDEMPOTENCY_CONFLICT` as `try_claim`;
        `LIMIT_EXCEEDED` if the wait timed out.
      RuntimeError: If it would block an event loop's thread.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
      got = self._try(namespace, key, identity, credential_context)
      if not isinstance(got, _Running):
        return got
      if _on_loop_thread():
        raise RuntimeError('claim() would block the event loop; use await')
      remaining = None
      if deadline is not None:
        remaining = deadline - time.monotonic()
      if not got.done.wait(remaining):
        raise _wait_timeout()

  async def claim_async(
      self,
      namespace: IdempotencyNamespace,
      key: Optional[str],
      identity: OperationIdentity,
      *,
      credential_context: Optional[Hashable] = None,
      timeout: Optional[float] = None,
  ) -> Union[Claim, Retained]:
    """Claims the key, awaiting while the same operation runs.

    Args:
      namespace: Whose key it is.
      key: The request's key; None always gives a fresh, unrecorded claim.
      identity: What the operation is.
      credential_context: As `try_claim`.
      timeout: The longest wait, in seconds; None waits until the running
        claim settles or is abandoned.

    Returns:
      A `Claim` or the `Retained` outcome.

    Raises:
      OperationError: `IDEMPOTENCY_CONFLICT` as `try_claim`;
        `LIMIT_EXCEEDED` if the wait timed out.
    """
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    while True:
      future: asyncio.Future[None] = loop.create_future()
      got = self._try(namespace, key, identity, credential_context, future)
      if not isinstance(got, _Running):
        return got
      remaining = None if deadline is None else deadline - loop.time()
      try:
        await asyncio.wait_for(future, remaining)
      except asyncio.TimeoutError:
        raise _wait_timeout() from None
      finally:
        with self._lock:
          if future in got.futures:
            got.futures.remove(future)

  def purge_expired(self) -> int:
    """Drops every expired outcome now; returns how many."""
    with self._lock:
      return self._purge_expired_locked(self._clock())

  # Internals; every method ending in `_locked` runs under `self._lock`.

  def _try(
      self,
      namespace: IdempotencyNamespace,
      key: Optional[str],
      identity: OperationIdentity,
      credential_context: Optional[Hashable],
      future: Optional[asyncio.Future[None]] = None,
  ) -> Union[Claim, Retained, _Running]:
    if not isinstance(namespace, IdempotencyNamespace):
      raise TypeError('namespace must be an IdempotencyNamespace')
    if not isinstance(identity, OperationIdentity):
      raise TypeError('identity must be an OperationIdentity')
    qualifier = namespace.read_qualifier(identity)
    if key is None:
      return Claim(None, None, qualifier, None, identity)
    if not isinstance(key, str) or _KEY_RE.fullmatch(key) is None:
      raise OperationError(
          OperationErrorReason.IDEMPOTENCY_KEY_INVALID, 'invalid key'
      )
    entry_key: _EntryKey = (namespace.conflict_scope, key)
    with self._lock:
      now = self._clock()
      entry = self._entries.get(entry_key)
      if entry is not None:
        self._drop_expired_locked(entry_key, entry, now)
        entry = self._entries.get(entry_key)
      if entry is None:
        entry = _Entry(identity)
        self._entries[entry_key] = entry
      elif entry.identity != identity:
        raise OperationError(
            OperationErrorReason.IDEMPOTENCY_CONFLICT,
            'the key is retained for another operation identity',
        )
      for record_key in ((qualifier, None), (qualifier, credential_context)):
        record = entry.records.get(record_key)
        if record is not None:
          return Retained(record.outcome)
      running = entry.running.get(qualifier)
      if running is not None:
        if future is not None:
          running.futures.append(future)
        return running
      running = _Running()
      entry.running[qualifier] = running
      return Claim(self, entry_key, qualifier, running, identity)

  def _settle(
      self,
      entry_key: _EntryKey,
      qualifier: _Qualifier,
      running: _Running,
      outcome: Any,
      ttl_seconds: Optional[float],
      credential_context: Optional[Hashable],
  ) -> bool:
    retention = self._retention
    if ttl_seconds is not None:
      ttl = float(ttl_seconds)
      retention = 0.0 if math.isnan(ttl) else min(retention, max(ttl, 0.0))
    with self._lock:
      entry = self._entries.get(entry_key)
      retained = False
      if entry is not None:
        if entry.running.get(qualifier) is running:
          del entry.running[qualifier]
        if retention > 0:
          record_key: _RecordKey = (qualifier, credential_context)
          now = self._clock()
          entry.records[record_key] = _Record(outcome, now + retention)
          order_key = (entry_key, record_key)
          self._order.pop(order_key, None)
          self._order[order_key] = None
          retained = True
          if len(self._order) > self._capacity:
            self._purge_expired_locked(now)
          while len(self._order) > self._capacity:
            self._evict_locked(next(iter(self._order)))
        self._forget_if_empty_locked(entry_key)
      running.finish()
      return retained

  def _abandon(
      self, entry_key: _EntryKey, qualifier: _Qualifier, running: _Running
  ) -> None:
    with self._lock:
      entry = self._entries.get(entry_key)
      if entry is not None and entry.running.get(qualifier) is running:
        del entry.running[qualifier]
        self._forget_if_empty_locked(entry_key)
      running.finish()

  def _evict_locked(self, order_key: tuple[_EntryKey, _RecordKey]) -> None:
    entry_key, record_key = order_key
    del self._order[order_key]
    entry = self._entries.get(entry_key)
    if entry is not None:
      entry.records.pop(record_key, None)
      self._forget_if_empty_locked(entry_key)

  def _drop_expired_locked(
      self, entry_key: _EntryKey, entry: _Entry, now: float
  ) -> None:
    for record_key, record in list(entry.records.items()):
      if record.expires_at <= now:
        del entry.records[record_key]
        self._order.pop((entry_key, record_key), None)
    self._forget_if_empty_locked(entry_key)

  def _purge_expired_locked(self, now: float) -> int:
    before = len(self._order)
    for entry_key, entry in list(self._entries.items()):
      self._drop_expired_locked(entry_key, entry, now)
    return before - len(self._order)

  def _forget_if_empty_locked(self, entry_key: _EntryKey) -> None:
    entry = self._entries.get(entry_key)
    if entry is not None and not entry.running and not entry.records:
      del self._entries[entry_key]


def _on_loop_thread() -> bool:
  try:
    asyncio.get_running_loop()
  except RuntimeError:
    return False
  return True


def _wait_timeout() -> OperationError:
  return OperationError(
      OperationErrorReason.LIMIT_EXCEEDED,
      'timed out waiting for the running operation with the same key',
  )
