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

"""App-safe connection generations, owned, pinned and retired by the registry.

Every UI-associated operation runs on a connection generation: one app-safe
connection with an identity that results, Views and admission check. The
pool reference-counts each generation by its holders; invalidation (max
lifetime, credentials, revocation, transport failure) hits every holder at
once with a typed reason, and nothing moves to a replacement. Design:
docs/design/affinity.md.

Example:

  pool = AppSafeConnectionPool()
  hold = await pool.acquire(key, connect, HoldKind.OPERATION)
  try:
    result = await hold.call_tool('open_view', {})
  finally:
    hold.release()
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable
from collections.abc import Callable
import concurrent.futures
import dataclasses
import enum
import itertools
import logging
import threading
import time
from typing import Any
from typing import Optional
from typing import TypeVar
import uuid

from ...dependencies._mcp import McpError
from ...dependencies._mcp import types
from ..catalog.listing import DEFAULT_BOUNDS
from ..catalog.listing import list_all_tools
from ..catalog.listing import ToolListingBounds
from ..catalog.listing import ToolListingError
from .errors import AdmissionRefusal
from .errors import ConnectionAffinityError
from .errors import GenerationAdmissionError
from .errors import GenerationInvalidatedError
from .errors import HoldReleasedError
from .errors import InputRequestKind
from .errors import InputRequestRefusedError
from .errors import InvalidationReason

logger = logging.getLogger('google_adk.' + __name__)

_T = TypeVar('_T')

RETIRED_GENERATIONS_REMEMBERED = 1024
"""How many invalidated generations `get` still names (typed) by id."""

MODERN_PROTOCOL_VERSION = '2026-07-28'
"""The first sessionless protocol version; its HTTP generations are logical."""


class ConnectionEra(enum.Enum):
  """Which row of the era-and-lifecycle matrix a generation is on."""

  LEGACY = 'legacy'
  """stdio, SSE, stateful HTTP: the generation is the concrete connection."""

  MODERN = 'modern'
  """Stateless HTTP at 2026-07-28 or later: a host-side logical binding."""


class ConnectionGenerationState(enum.Enum):
  """The life of one generation."""

  LIVE = 'live'
  INVALIDATED = 'invalidated'


class HoldKind(enum.Enum):
  """What a holder of a generation is."""

  VIEW = 'view'
  RESERVATION = 'reservation'
  OPERATION = 'operation'


@dataclasses.dataclass(frozen=True)
class GenerationKey:
  """What selects a generation; equal keys share one live generation.

  Every part is an opaque digest or a configured id: no principal, header
  or credential value.

  Attributes:
    toolset_id: The configured toolset.
    binding_generation: The registry's binding generation of the toolset's
      proxy; a rebind never reuses its predecessor's generations.
    binding_scope: The fingerprint of the app-safe client binding (it covers
      the host profile's fingerprint).
    security_domain: The principal's security-domain digest.
    session_scope: The Session incarnation's digest; None when the profile
      opts into cross-Session sharing (or on the modern era, whose
      generations hold no connection state).
    credential_context: The digest of the effective request headers.
  """

  toolset_id: str
  binding_generation: int
  binding_scope: str
  security_domain: str
  session_scope: Optional[str]
  credential_context: str

  @property
  def lineage(self) -> tuple[str, int, str, str, Optional[str]]:
    """The key without the credential: a changed credential is a rotation."""
    return (
        self.toolset_id,
        self.binding_generation,
        self.binding_scope,
        self.security_domain,
        self.session_scope,
    )


class ManagedConnection:
  """What a generation needs from the connection it owns.

  `generations` never builds transports itself: the caller supplies a
  factory returning an object with these coroutines (the app-safe
  `MCPSessionManager` plus its pooled session, see
  `binding.app_safe_connection`), so the connection is built by exactly the
  code path model calls use.
  """

  async def open(self) -> Any:
    """Opens the connection; returns the initialized session facade."""
    raise NotImplementedError

  def protocol_version(self) -> Optional[str]:
    """The negotiated protocol version, once open."""
    raise NotImplementedError

  def is_stateless_http(self) -> bool:
    """Whether the transport is streamable HTTP (stateless-capable)."""
    raise NotImplementedError

  def is_disconnected(self) -> bool:
    """Whether the transport is known dead (legacy liveness probe)."""
    raise NotImplementedError

  async def close(self) -> None:
    """Closes the connection and its process, on the registry loop."""
    raise NotImplementedError


ConnectionFactory = Callable[[], ManagedConnection]


class ConnectionGeneration:
  """One app-safe connection generation. Built only by the pool.

  Attributes:
    generation_id: The public identity results, Views and admission check.
    key: The key it was opened under.
    era: Its row of the era-and-lifecycle matrix.
    handle_contract: The server-handle contract it may be shared across
      Sessions under; None when it serves one Session incarnation.
    created_at: The pool clock's reading when it opened.
  """

  def __init__(
      self,
      pool: AppSafeConnectionPool,
      generation_id: str,
      key: GenerationKey,
      connection: ManagedConnection,
      session: Any,
      era: ConnectionEra,
      handle_contract: Optional[str],
      created_at: float,
  ):
    self._pool = pool
    self.generation_id = generation_id
    self.key = key
    self._connection = connection
    self._session = session
    self.era = era
    self.handle_contract = handle_contract
    self.created_at = created_at
    self._idle_since: Optional[float] = created_at
    self._state = ConnectionGenerationState.LIVE
    self._reason: Optional[InvalidationReason] = None
    self._holds: set[GenerationHold] = set()

  @property
  def state(self) -> ConnectionGenerationState:
    """LIVE until invalidated."""
    return self._state

  @property
  def invalidation_reason(self) -> Optional[InvalidationReason]:
    """Why it was invalidated, or None while live."""
    return self._reason

  @property
  def holders(self) -> int:
    """How many unreleased holds pin it."""
    with self._pool._lock:  # pylint: disable=protected-access
      return len(self._holds)

  @property
  def session(self) -> Any:
    """The session facade (registry-loop routed). ADK-internal use only."""
    return self._session

  def check_live(self) -> None:
    """Raises `GenerationInvalidatedError` unless live."""
    if self._state is not ConnectionGenerationState.LIVE:
      assert self._reason is not None
      raise GenerationInvalidatedError(self.generation_id, self._reason)

  def check_admission(
      self,
      security_domain: str,
      session_scope: Optional[str],
      handle_contract: Optional[str],
  ) -> None:
    """Whether a caller of this domain and Session may use the generation.

    Args:
      security_domain: The caller's security-domain digest.
      session_scope: The caller's Session-incarnation digest.
      handle_contract: The profile's current cross-Session contract, or None
        when the profile does not opt in.

    Raises:
      GenerationInvalidatedError: The generation is not live.
      GenerationAdmissionError: Another principal's generation
        (`OTHER_DOMAIN`), or another Session's without a matching declared
        handle contract on both sides (`SHARING_NOT_DECLARED`).
    """
    self.check_live()
    if security_domain != self.key.security_domain:
      raise GenerationAdmissionError(
          self.generation_id,
          AdmissionRefusal.OTHER_DOMAIN,
          'it belongs to another security domain',
      )
    if self.key.session_scope is None:
      if self.era is ConnectionEra.MODERN:
        return
      if self.handle_contract is None or self.handle_contract != (
          handle_contract
      ):
        raise GenerationAdmissionError(
            self.generation_id,
            AdmissionRefusal.SHARING_NOT_DECLARED,
            "its cross-Session handle contract is not the profile's",
        )
      return
    if session_scope != self.key.session_scope:
      raise GenerationAdmissionError(
          self.generation_id,
          AdmissionRefusal.SHARING_NOT_DECLARED,
          'it serves another Session incarnation and was not opened for'
          ' cross-Session sharing',
      )

  def hold(self, kind: HoldKind) -> GenerationHold:
    """Pins the generation for one holder.

    Raises:
      GenerationInvalidatedError: The generation is not live.
    """
    return self._pool._hold(self, kind)  # pylint: disable=protected-access

  async def _run(
      self, operation: Callable[[Any], Awaitable[_T]], what: str
  ) -> _T:
    self.check_live()
    hold = self.hold(HoldKind.OPERATION)
    try:
      return await operation(self._session)
    except Exception as error:
      reason = _loss_reason(error)
      if reason is None:
        raise  # The server answered: the connection is fine.
      if self.era is ConnectionEra.LEGACY and self._state is (
          ConnectionGenerationState.LIVE
      ):
        # The concrete connection is gone (or in an unknown state): every
        # View on it dies with it; nothing reconnects underneath them.
        logger.warning(
            'MCP connection generation %s failed during %s; invalidating'
            ' it for every holder.',
            self.generation_id,
            what,
        )
        await self._pool.invalidate(self.generation_id, reason)
        raise GenerationInvalidatedError(
            self.generation_id, self._reason or reason
        ) from error
      if self._state is not ConnectionGenerationState.LIVE:
        assert self._reason is not None
        raise GenerationInvalidatedError(
            self.generation_id, self._reason
        ) from error
      raise
    finally:
      hold.release()

  async def execute(
      self, operation: Callable[[Any], Awaitable[_T]], what: str
  ) -> _T:
    """Runs an ADK-internal operation on this generation's session.

    Args:
      operation: An async function of the session facade (never user code).
      what: The operation's name, for logs.

    Returns:
      What `operation` returned.

    Raises:
      GenerationInvalidatedError: Not live, or the transport failed (legacy).
    """
    return await self._run(operation, what)

  async def call_tool(
      self,
      name: str,
      arguments: Optional[dict[str, Any]] = None,
      **kwargs: Any,
  ) -> types.CallToolResult:
    """`tools/call` on this generation, once; never retried elsewhere."""
    result: types.CallToolResult = await self._run(
        lambda session: session.call_tool(name, arguments, **kwargs),
        'tools/call',
    )
    return result

  async def list_tools(
      self, bounds: ToolListingBounds = DEFAULT_BOUNDS
  ) -> list[types.Tool]:
    """Every tool, every page, within bounds, on this generation.

    Each page is its own operation (a bound violation is the listing's
    failure, not the connection's); a page lost with the connection
    surfaces as the typed invalidation, not as a listing error.
    """
    try:
      return await list_all_tools(GenerationPages(self), bounds)
    except ToolListingError as error:
      raise affinity_cause(error) or error

  async def read_resource(self, uri: str, **kwargs: Any) -> Any:
    """`resources/read` on this generation (one round).

    Args:
      uri: The resource.
      **kwargs: Passed to `ClientSession.read_resource` (`request_state`,
        `allow_input_required` for a multi-round read).

    Returns:
      A `ReadResourceResult`, or an `InputRequiredResult` when
      `allow_input_required` is set and the server asks for another round.
    """
    return await self._run(
        lambda session: session.read_resource(uri=uri, **kwargs),
        'resources/read',
    )

  def __repr__(self) -> str:
    return (
        f'ConnectionGeneration({self.generation_id}, {self.era.value},'
        f' {self._state.value})'
    )


class GenerationPages:
  """`list_tools` of one generation, one checked operation per page.

  What the catalog listing and admission functions take as their session, so
  they list on exactly this generation.
  """

  def __init__(self, generation: ConnectionGeneration):
    self._generation = generation

  async def list_tools(self, *args: Any, **kwargs: Any) -> Any:
    return await self._generation._run(  # pylint: disable=protected-access
        lambda session: session.list_tools(*args, **kwargs), 'tools/list'
    )


_INPUT_METHODS = {
    'sampling/createMessage': InputRequestKind.SAMPLING,
    'elicitation/create': InputRequestKind.ELICITATION,
    'roots/list': InputRequestKind.ROOTS,
}


def input_request_refusal(
    error: BaseException, generation_id: str, operation: str
) -> Optional[InputRequestRefusedError]:
  """The typed refusal of an input round `error` reports, if it is one.

  A server that needs a sampling, elicitation or roots round from a client
  that declared none refuses the request itself (the SDK's
  `MISSING_REQUIRED_CLIENT_CAPABILITY`, naming the capability), in either
  protocol era; on an app-safe connection that is an app path's input
  round failing closed.
  """
  if not isinstance(error, McpError):
    return None
  data = getattr(error, 'error', None)
  if getattr(data, 'code', None) != types.MISSING_REQUIRED_CLIENT_CAPABILITY:
    return None
  details = getattr(data, 'data', None)
  required = (
      details.get('requiredCapabilities') if isinstance(details, dict) else None
  )
  if not isinstance(required, dict):
    return None
  kinds = frozenset(kind for kind in InputRequestKind if kind.value in required)
  if not kinds:
    return None
  return InputRequestRefusedError(generation_id, kinds, operation)


def input_requests_of(result: Any) -> Optional[frozenset[InputRequestKind]]:
  """The input rounds a 2026-07-28 `InputRequiredResult` asks for.

  None for any other result and for a state-only round (no input
  requests). A request of an unknown method adds no kind, so the set may be
  empty and still mean "asked for input".
  """
  if not isinstance(result, types.InputRequiredResult):
    return None
  requests = result.input_requests or {}
  if not requests:
    return None
  return frozenset(
      _INPUT_METHODS[method]
      for method in (getattr(r, 'method', None) for r in requests.values())
      if method in _INPUT_METHODS
  )


def affinity_cause(error: BaseException) -> Optional[ConnectionAffinityError]:
  """The affinity error an error was raised from, if any.

  The catalog listing and admission functions wrap whatever a page raised;
  a caller that must report a lost generation typed unwraps it here.
  """
  seen: set[int] = set()
  current: Optional[BaseException] = error
  while current is not None and id(current) not in seen:
    if isinstance(current, ConnectionAffinityError):
      return current
    seen.add(id(current))
    current = current.__cause__ or current.__context__
  return None


InvalidationListener = Callable[[GenerationInvalidatedError], None]


class GenerationHold:
  """One holder's pin on a generation; operations go through it.

  Release is idempotent and releases only this holder's reference.
  """

  def __init__(self, generation: ConnectionGeneration, kind: HoldKind):
    self.generation = generation
    self.kind = kind
    self._released = False
    self._listeners: list[InvalidationListener] = []

  @property
  def released(self) -> bool:
    """Whether `release` was called."""
    return self._released

  @property
  def generation_id(self) -> str:
    """The held generation's id."""
    return self.generation.generation_id

  def check(self) -> None:
    """Raises unless the hold is unreleased and its generation live."""
    if self._released:
      raise HoldReleasedError(self.generation_id, self.kind.value)
    self.generation.check_live()

  def on_invalidated(
      self, listener: InvalidationListener
  ) -> Callable[[], None]:
    """Calls `listener` once if the generation is invalidated while held.

    Returns:
      Removes the listener (idempotent): a View's hold outlives the many
      operations that listen on it.
    """
    self._listeners.append(listener)

    def remove() -> None:
      if listener in self._listeners:
        self._listeners.remove(listener)

    return remove

  def release(self) -> None:
    """Drops this holder's reference; the last one starts the idle clock."""
    pool = self.generation._pool  # pylint: disable=protected-access
    pool._release(self)  # pylint: disable=protected-access

  async def call_tool(
      self,
      name: str,
      arguments: Optional[dict[str, Any]] = None,
      **kwargs: Any,
  ) -> types.CallToolResult:
    """`tools/call` on the held generation."""
    self.check()
    return await self.generation.call_tool(name, arguments, **kwargs)

  async def execute(
      self, operation: Callable[[Any], Awaitable[_T]], what: str
  ) -> _T:
    """`ConnectionGeneration.execute` on the held generation."""
    self.check()
    return await self.generation.execute(operation, what)

  async def list_tools(
      self, bounds: ToolListingBounds = DEFAULT_BOUNDS
  ) -> list[types.Tool]:
    """`tools/list` (every page) on the held generation."""
    self.check()
    return await self.generation.list_tools(bounds)

  async def read_resource(self, uri: str, **kwargs: Any) -> Any:
    """`resources/read` on the held generation (see the generation's)."""
    self.check()
    return await self.generation.read_resource(uri, **kwargs)

  def _notify(self, error: GenerationInvalidatedError) -> None:
    for listener in self._listeners:
      try:
        listener(error)
      except Exception:  # pylint: disable=broad-exception-caught
        logger.exception('A generation invalidation listener failed.')

  def __repr__(self) -> str:
    state = 'released' if self._released else 'held'
    return f'GenerationHold({self.generation_id}, {self.kind.value}, {state})'


@dataclasses.dataclass(frozen=True)
class GenerationPolicy:
  """The profile's lifetime policy for generations (seconds).

  Attributes:
    idle_eviction_seconds: An unreferenced generation is evicted after this
      long without holders.
    max_lifetime_seconds: Every generation is invalidated this long after
      it opened.
    credential_expiry_seconds: The credential context a generation opened
      under expires this long after it opened; None: only at max lifetime.
    handle_contract: The cross-Session server-handle contract the profile
      declares, or None (generations serve one Session incarnation).
  """

  idle_eviction_seconds: float = 300.0
  max_lifetime_seconds: float = 3600.0
  credential_expiry_seconds: Optional[float] = None
  handle_contract: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class SweepReport:
  """What one sweep retired, by generation id."""

  evicted: tuple[str, ...] = ()
  expired: tuple[str, ...] = ()
  credential_expired: tuple[str, ...] = ()
  disconnected: tuple[str, ...] = ()


class AppSafeConnectionPool:
  """The registry's table of app-safe connection generations.

  Thread-safe: Runner loops, the host server's loop and the registry loop
  all use it. Holding counts and state change under one lock; connections
  open and close outside it (on the registry loop, through the
  `ManagedConnection`).
  """

  def __init__(
      self,
      policy: GenerationPolicy = GenerationPolicy(),
      *,
      clock: Callable[[], float] = time.monotonic,
  ):
    """Creates an empty pool.

    Args:
      policy: The lifetime policy (the registry sets the profile's).
      clock: Monotonic seconds; tests pass a controllable clock.
    """
    self._policy = policy
    self._clock = clock
    # Re-entrant: predicates and properties evaluated under it read holds.
    self._lock = threading.RLock()
    self._live: dict[GenerationKey, ConnectionGeneration] = {}
    self._by_id: dict[str, ConnectionGeneration] = {}
    self._opening: dict[GenerationKey, concurrent.futures.Future[None]] = {}
    self._retired: collections.deque[str] = collections.deque()
    self._counter = itertools.count(1)
    self._closed = False

  @property
  def policy(self) -> GenerationPolicy:
    """The current lifetime policy."""
    return self._policy

  def configure(self, policy: GenerationPolicy) -> None:
    """Replaces the lifetime policy (new profile binding)."""
    self._policy = policy

  def now(self) -> float:
    """The pool clock."""
    return self._clock()

  def generations(self) -> tuple[ConnectionGeneration, ...]:
    """Every generation not yet forgotten, live or invalidated."""
    with self._lock:
      return tuple(self._by_id.values())

  def live(self) -> tuple[ConnectionGeneration, ...]:
    """Every live generation."""
    with self._lock:
      return tuple(self._live.values())

  def get(self, generation_id: str) -> ConnectionGeneration:
    """The generation with this id.

    Raises:
      GenerationInvalidatedError: It was invalidated (and is remembered).
      KeyError: No such generation was ever opened here.
    """
    with self._lock:
      generation = self._by_id.get(generation_id)
    if generation is None:
      raise KeyError(generation_id)
    generation.check_live()
    return generation

  def find(self, key: GenerationKey) -> Optional[ConnectionGeneration]:
    """The live generation for `key`, if one is open."""
    with self._lock:
      return self._live.get(key)

  async def acquire(
      self,
      key: GenerationKey,
      factory: ConnectionFactory,
      kind: HoldKind = HoldKind.OPERATION,
  ) -> GenerationHold:
    """Holds the live generation for `key`, opening one if there is none.

    A live generation of the same lineage under another credential context
    is a credential rotation: it is invalidated (its Views with it) and
    never reused for the new context.

    Args:
      key: The generation key of the caller's context.
      factory: Builds the connection when a generation must be opened.
      kind: What the holder is.

    Returns:
      A hold on the generation.

    Raises:
      GenerationInvalidatedError: The pool is shut down.
      ConnectionError: The connection could not be opened.
    """
    await self.sweep()
    while True:
      with self._lock:
        if self._closed:
          raise GenerationInvalidatedError('*', InvalidationReason.SHUTDOWN)
        live = self._live.get(key)
        if live is not None:
          return self._hold_locked(live, kind)
        waiter = self._opening.get(key)
        if waiter is None:
          waiter = concurrent.futures.Future()
          self._opening[key] = waiter
          rotated = [
              g
              for k, g in self._live.items()
              if k.lineage == key.lineage and k != key
          ]
          opener = True
        else:
          opener = False
      if not opener:
        # Another caller (perhaps on another loop) is opening this key.
        await asyncio.wrap_future(waiter)
        continue
      try:
        for generation in rotated:
          await self.invalidate(
              generation.generation_id, InvalidationReason.CREDENTIAL_ROTATED
          )
        generation = await self._open(key, factory)
        with self._lock:
          if self._closed:
            closing = generation
          else:
            closing = None
            self._live[key] = generation
            self._by_id[generation.generation_id] = generation
            hold = self._hold_locked(generation, kind)
        if closing is not None:
          await self._close_quietly(closing)
          raise GenerationInvalidatedError(
              closing.generation_id, InvalidationReason.SHUTDOWN
          )
        return hold
      finally:
        with self._lock:
          self._opening.pop(key, None)
        waiter.set_result(None)

  async def _open(
      self, key: GenerationKey, factory: ConnectionFactory
  ) -> ConnectionGeneration:
    connection = factory()
    try:
      session = await connection.open()
    except BaseException:
      await _close_connection(connection)
      raise
    version = connection.protocol_version()
    modern = (
        connection.is_stateless_http()
        and version is not None
        and version >= MODERN_PROTOCOL_VERSION
    )
    era = ConnectionEra.MODERN if modern else ConnectionEra.LEGACY
    generation_id = f'g{next(self._counter)}-{uuid.uuid4().hex[:12]}'
    contract = (
        self._policy.handle_contract if key.session_scope is None else None
    )
    generation = ConnectionGeneration(
        self,
        generation_id,
        key,
        connection,
        session,
        era,
        contract,
        self._clock(),
    )
    logger.debug(
        'Opened MCP connection generation %s (%s) for toolset %r.',
        generation_id,
        era.value,
        key.toolset_id,
    )
    return generation

  def _hold(
      self, generation: ConnectionGeneration, kind: HoldKind
  ) -> GenerationHold:
    with self._lock:
      return self._hold_locked(generation, kind)

  def _hold_locked(
      self, generation: ConnectionGeneration, kind: HoldKind
  ) -> GenerationHold:
    generation.check_live()
    hold = GenerationHold(generation, kind)
    generation._holds.add(hold)  # pylint: disable=protected-access
    generation._idle_since = None  # pylint: disable=protected-access
    return hold

  def _release(self, hold: GenerationHold) -> None:
    with self._lock:
      if hold._released:  # pylint: disable=protected-access
        return
      hold._released = True  # pylint: disable=protected-access
      generation = hold.generation
      holds = generation._holds  # pylint: disable=protected-access
      holds.discard(hold)
      if not holds:
        generation._idle_since = self._clock()  # pylint: disable=protected-access

  async def invalidate(
      self,
      generation_id: str,
      reason: InvalidationReason,
      *,
      only_if_unheld: bool = False,
  ) -> bool:
    """Invalidates one generation for every holder and closes it.

    Args:
      generation_id: The generation.
      reason: Why.
      only_if_unheld: Leave it alone if anything holds it, decided under
        the same lock that grants holds (an eviction never races a new
        holder).

    Returns:
      True if this call invalidated it (False: unknown, already done, or
      held with `only_if_unheld`).
    """
    with self._lock:
      generation = self._by_id.get(generation_id)
      if (
          generation is None
          or generation.state is not ConnectionGenerationState.LIVE
      ):
        return False
      if only_if_unheld and generation._holds:  # pylint: disable=protected-access
        return False
      generation._state = ConnectionGenerationState.INVALIDATED  # pylint: disable=protected-access
      generation._reason = reason  # pylint: disable=protected-access
      if self._live.get(generation.key) is generation:
        del self._live[generation.key]
      # Remembered for a while, so a late caller gets the typed reason;
      # then forgotten, so a long-running host does not accumulate them.
      self._retired.append(generation_id)
      while len(self._retired) > RETIRED_GENERATIONS_REMEMBERED:
        self._by_id.pop(self._retired.popleft(), None)
      holds = list(generation._holds)  # pylint: disable=protected-access
    error = GenerationInvalidatedError(generation_id, reason)
    for hold in holds:
      hold._notify(error)  # pylint: disable=protected-access
    logger.info(
        'MCP connection generation %s invalidated (%s); %d holder(s).',
        generation_id,
        reason.value,
        len(holds),
    )
    await self._close_quietly(generation)
    return True

  async def invalidate_where(
      self,
      predicate: Callable[[ConnectionGeneration], bool],
      reason: InvalidationReason,
      *,
      only_if_unheld: bool = False,
  ) -> tuple[str, ...]:
    """Invalidates every live generation `predicate` selects.

    Args:
      predicate: Selects generations; must not block.
      reason: Why.
      only_if_unheld: As for `invalidate`.

    Returns:
      The ids invalidated by this call.
    """
    with self._lock:
      chosen = [g for g in self._live.values() if predicate(g)]
    done = []
    for generation in chosen:
      if await self.invalidate(
          generation.generation_id, reason, only_if_unheld=only_if_unheld
      ):
        done.append(generation.generation_id)
    return tuple(done)

  async def evict(self, generation_id: str) -> bool:
    """Forcibly evicts a generation, held or not (its Views die typed)."""
    return await self.invalidate(generation_id, InvalidationReason.EVICTED)

  async def sweep(self, now: Optional[float] = None) -> SweepReport:
    """Applies the lifetime policy once.

    Evicts unreferenced generations idle for the policy's idle time; and
    invalidates, held or not, generations past their maximum lifetime or
    credential expiry, and legacy generations whose transport is known dead.
    `acquire` sweeps first, as upstream's pool sweeps on `create_session`.

    Args:
      now: The clock reading to judge by (defaults to the pool clock).

    Returns:
      What it retired.
    """
    moment = self._clock() if now is None else now
    policy = self._policy
    idle: list[str] = []
    expired: list[str] = []
    credential: list[str] = []
    dead: list[str] = []
    with self._lock:
      for generation in self._live.values():
        age = moment - generation.created_at
        since = generation._idle_since  # pylint: disable=protected-access
        if age >= policy.max_lifetime_seconds:
          expired.append(generation.generation_id)
        elif (
            policy.credential_expiry_seconds is not None
            and age >= policy.credential_expiry_seconds
        ):
          credential.append(generation.generation_id)
        elif since is not None and (
            moment - since >= policy.idle_eviction_seconds
        ):
          idle.append(generation.generation_id)
        elif (
            generation.era is ConnectionEra.LEGACY
            and generation._connection.is_disconnected()  # pylint: disable=protected-access
        ):
          dead.append(generation.generation_id)
    for ids, reason in (
        (expired, InvalidationReason.MAX_LIFETIME),
        (credential, InvalidationReason.CREDENTIAL_EXPIRED),
        (dead, InvalidationReason.TRANSPORT_FAILURE),
    ):
      for generation_id in ids:
        await self.invalidate(generation_id, reason)
    evicted = [
        generation_id
        for generation_id in idle
        if await self.invalidate(
            generation_id, InvalidationReason.EVICTED, only_if_unheld=True
        )
    ]
    return SweepReport(
        tuple(evicted), tuple(expired), tuple(credential), tuple(dead)
    )

  async def aclose(self) -> None:
    """Shuts down: invalidates (SHUTDOWN) and closes every generation."""
    with self._lock:
      self._closed = True
    await self.invalidate_where(lambda _: True, InvalidationReason.SHUTDOWN)

  async def _close_quietly(self, generation: ConnectionGeneration) -> None:
    await _close_connection(generation._connection)  # pylint: disable=protected-access


async def _close_connection(connection: ManagedConnection) -> None:
  try:
    await connection.close()
  except Exception:  # pylint: disable=broad-exception-caught
    logger.warning(
        'Closing an MCP connection generation failed.', exc_info=True
    )


def _loss_reason(error: Exception) -> Optional[InvalidationReason]:
  """How an operation's failure ended its connection; None if it did not.

  An `McpError` is normally the server's answer over a working connection,
  except the SDK's own report of a closed connection and a stateful HTTP
  server's report that it no longer knows the session.
  """
  if not isinstance(error, McpError):
    return InvalidationReason.TRANSPORT_FAILURE
  data = getattr(error, 'error', None)
  code = getattr(data, 'code', None)
  # The SDK fails a request whose connection closed (a dead stdio process,
  # an SSE stream that ended without a response) with this code rather than
  # a transport exception.
  if code == types.CONNECTION_CLOSED:
    return InvalidationReason.TRANSPORT_FAILURE
  message = str(getattr(data, 'message', '') or '').lower()
  if code == types.INVALID_REQUEST and 'session not found' in message:
    return InvalidationReason.SESSION_TERMINATED
  return None
