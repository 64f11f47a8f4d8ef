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

"""Runner-scoped lease tokens: who may close a shared lease generation.

A proxy handed to an Agent is non-owning, so release goes through tokens:
the registry opens a lease generation per binding-generation epoch, each
Runner binding receives an opaque `LeaseToken`, `Runner.close()` releases
exactly its own tokens, and the last release closes the generation (with
bounded retries; see `LeaseRetryPolicy`). Design: docs/design/binding.md.

Example:

  ledger = RunnerLeaseLedger()
  ledger.open_generation(key, close_connections)
  token = ledger.acquire(key)
  await ledger.release(token)  # The last release closes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Hashable
import concurrent.futures
import dataclasses
import enum
import hmac
import logging
import secrets
import threading
from typing import Final
import weakref

from .errors import ReasonedBindingError

logger = logging.getLogger('google_adk.' + __name__)

CloseCallback = Callable[[], Awaitable[None]]
"""Closes one generation; must tolerate a retry after a failed attempt."""

_TOKEN_BYTES: Final = 32


class LeaseErrorReason(enum.Enum):
  """Why the lease ledger refused a request."""

  UNKNOWN_GENERATION = 'unknown_generation'
  """The lease generation was never opened in this ledger."""

  DUPLICATE_GENERATION = 'duplicate_generation'
  """The key was opened before; lease generations are never reopened."""

  GENERATION_CLOSED = 'generation_closed'
  """The lease generation is closing, closed or superseded."""

  LEDGER_SHUT_DOWN = 'ledger_shut_down'
  """`shutdown()` has begun."""

  FOREIGN_TOKEN = 'foreign_token'
  """The token was not issued by this ledger."""

  CLOSE_INCOMPLETE = 'close_incomplete'
  """A lease generation's close did not succeed within the retry policy."""

  SHUTDOWN_INCOMPLETE = 'shutdown_incomplete'
  """`shutdown()` could not close every lease generation."""


class LeaseError(ReasonedBindingError[LeaseErrorReason]):
  """The lease ledger refused a request."""


class GenerationCloseIncompleteError(LeaseError):
  """A generation's close did not succeed within the retry policy.

  The generation stays `CLOSE_PENDING`: `retry_pending()`, a repeated
  release of the token that triggered the close, or `shutdown()` finishes
  it. The last attempt's error is chained as `__cause__`.

  Attributes:
    generation_key: The generation whose close is pending.
    attempts: Close attempts made so far for this generation.
  """

  def __init__(self, generation_key: Hashable, attempts: int):
    self.generation_key = generation_key
    self.attempts = attempts
    super().__init__(
        LeaseErrorReason.CLOSE_INCOMPLETE,
        f'Close of generation {generation_key!r} still pending after'
        f' {attempts} attempt(s)',
    )


class LedgerShutdownIncompleteError(LeaseError):
  """`shutdown()` could not close every generation; call it again.

  Attributes:
    generation_keys: The generations still not closed.
  """

  def __init__(self, generation_keys: tuple[Hashable, ...]):
    self.generation_keys = generation_keys
    super().__init__(
        LeaseErrorReason.SHUTDOWN_INCOMPLETE,
        f'Shutdown left {len(generation_keys)} generation(s) unclosed:'
        f' {list(generation_keys)!r}',
    )


class LeaseGenerationState(enum.Enum):
  """Where one generation is in its life."""

  OPEN = 'open'
  """Accepting leases; closes at its last release or at shutdown."""

  CLOSING = 'closing'
  """One caller is running its close callback."""

  CLOSE_PENDING = 'close_pending'
  """Due to close, but the last attempt timed out, failed or was cancelled."""

  CLOSED = 'closed'
  """Its close callback succeeded; it never runs again."""


@dataclasses.dataclass(frozen=True)
class LeaseRetryPolicy:
  """How hard one caller tries to close a generation before leaving it pending.

  Attributes:
    max_attempts: Close attempts per driving call (`release`,
      `retry_pending`, `shutdown`).
    attempt_timeout: Seconds one attempt may take before it is cancelled and
      counted as failed; `None` waits indefinitely.
  """

  max_attempts: int = 3
  attempt_timeout: float | None = 10.0

  def __post_init__(self) -> None:
    if self.max_attempts < 1:
      raise ValueError('LeaseRetryPolicy.max_attempts must be at least 1')
    if self.attempt_timeout is not None and self.attempt_timeout <= 0:
      raise ValueError('LeaseRetryPolicy.attempt_timeout must be positive')


DEFAULT_RETRY_POLICY: Final = LeaseRetryPolicy()


class LeaseToken:
  """An opaque, unguessable lease on one generation, issued by a ledger.

  Only `RunnerLeaseLedger.acquire` makes tokens. The secret never appears in
  `repr()`; two tokens are equal only when their secrets are.
  """

  __slots__ = ('_secret', '_generation_key')

  def __init__(self, secret: str, generation_key: Hashable):
    self._secret = secret
    self._generation_key = generation_key

  @property
  def generation_key(self) -> Hashable:
    """The one generation this token leases."""
    return self._generation_key

  def __eq__(self, other: object) -> bool:
    if not isinstance(other, LeaseToken):
      return NotImplemented
    return hmac.compare_digest(self._secret, other._secret)

  def __hash__(self) -> int:
    return hash(self._secret)

  def __repr__(self) -> str:
    return f'LeaseToken(generation_key={self._generation_key!r})'


@dataclasses.dataclass(frozen=True)
class ReleaseResult:
  """What one `RunnerLeaseLedger.release` call did.

  Attributes:
    released: This call released the token (False for a repeat release).
    closed_generation: This call ran the generation's successful close.
  """

  released: bool
  closed_generation: bool


@dataclasses.dataclass(eq=False)
class _Lease:
  token: LeaseToken
  held: bool = True


@dataclasses.dataclass(eq=False)
class _LeaseGeneration:
  key: Hashable
  close: CloseCallback
  state: LeaseGenerationState = LeaseGenerationState.OPEN
  outstanding: int = 0
  attempts: int = 0
  sealed: bool = False
  """No new leases: the generation was superseded (tokens stay releasable)."""
  trigger: _Lease | None = None
  """The lease whose release made the close due (None: shutdown's)."""
  attempt_done: concurrent.futures.Future[None] | None = None
  """Resolved when the running attempt ends, whatever its outcome."""


class RunnerLeaseLedger:
  """Runner-scoped lease tokens on registry generations, owned by the registry.

  Thread-safe and loop-neutral: every method may be called from any thread
  and any event loop.
  """

  def __init__(
      self,
      *,
      retry_policy: LeaseRetryPolicy = DEFAULT_RETRY_POLICY,
      on_close_pending: Callable[[Hashable], None] | None = None,
  ):
    """Initializes an empty ledger.

    Args:
      retry_policy: Attempts and per-attempt timeout of every close.
      on_close_pending: Called (synchronously, on the caller's thread, with no
        lock held) with a generation's key each time its close is left
        pending, so the registry can schedule `retry_pending()` on its own
        loop. Its exceptions are logged and ignored.
    """
    self._retry_policy = retry_policy
    self._on_close_pending = on_close_pending
    self._lock = threading.Lock()
    self._generations: dict[Hashable, _LeaseGeneration] = {}
    self._leases: dict[str, _Lease] = {}
    self._shut_down = False

  @property
  def retry_policy(self) -> LeaseRetryPolicy:
    """The policy every close follows."""
    return self._retry_policy

  def open_generation(self, key: Hashable, close: CloseCallback) -> None:
    """Registers a generation and the callback that closes it.

    Args:
      key: The generation's key, unique over the ledger's life.
      close: Awaited to close the generation: at its last release, by a
        retry, or at shutdown. It may be invoked again after an attempt that
        timed out, raised or was cancelled, never after one that succeeded,
        and never concurrently with itself.

    Raises:
      LeaseError (DUPLICATE_GENERATION): The key was opened before.
      LeaseError (LEDGER_SHUT_DOWN): `shutdown()` has begun.
    """
    with self._lock:
      if self._shut_down:
        raise LeaseError(
            LeaseErrorReason.LEDGER_SHUT_DOWN, 'The lease ledger is shut down'
        )
      if key in self._generations:
        raise LeaseError(
            LeaseErrorReason.DUPLICATE_GENERATION,
            f'Generation {key!r} was already opened',
        )
      self._generations[key] = _LeaseGeneration(key=key, close=close)

  def acquire(self, generation_key: Hashable) -> LeaseToken:
    """Issues a new lease token on an open generation.

    Args:
      generation_key: A key passed to `open_generation`.

    Returns:
      A fresh token, bound to that generation alone.

    Raises:
      LeaseError (UNKNOWN_GENERATION): The generation was never opened.
      LeaseError (GENERATION_CLOSED): Its last lease was released, or it
        was closed.
      LeaseError (LEDGER_SHUT_DOWN): `shutdown()` has begun.
    """
    with self._lock:
      if self._shut_down:
        raise LeaseError(
            LeaseErrorReason.LEDGER_SHUT_DOWN, 'The lease ledger is shut down'
        )
      generation = self._generations.get(generation_key)
      if generation is None:
        raise LeaseError(
            LeaseErrorReason.UNKNOWN_GENERATION,
            f'Generation {generation_key!r} is not open in this ledger',
        )
      if generation.state is not LeaseGenerationState.OPEN:
        raise LeaseError(
            LeaseErrorReason.GENERATION_CLOSED,
            f'Generation {generation_key!r} is {generation.state.value}',
        )
      if generation.sealed:
        raise LeaseError(
            LeaseErrorReason.GENERATION_CLOSED,
            f'Generation {generation_key!r} was superseded',
        )
      secret = secrets.token_urlsafe(_TOKEN_BYTES)
      token = LeaseToken(secret, generation_key)
      self._leases[secret] = _Lease(token)
      generation.outstanding += 1
      return token

  def seal(self, generation_key: Hashable) -> None:
    """Stops issuing leases on a superseded generation.

    Withdrawal revokes the old generation's leases: no new token may bind a
    Runner to it. Tokens already issued stay releasable, and the generation
    still closes exactly once. Unknown keys are ignored (idempotent).

    Args:
      generation_key: A key passed to `open_generation`.
    """
    with self._lock:
      generation = self._generations.get(generation_key)
      if generation is not None:
        generation.sealed = True

  async def release(self, token: LeaseToken) -> ReleaseResult:
    """Releases one token; the last release closes its generation.

    Token-idempotent: a repeat release changes no count and releases no
    other token. If this token's release made the close due and that close
    is still pending (it timed out, failed or was cancelled), a repeat
    release retries it.

    Args:
      token: A token this ledger issued.

    Returns:
      What the call did.

    Raises:
      LeaseError (FOREIGN_TOKEN): This ledger did not issue the token.
      GenerationCloseIncompleteError: The close this call drove did not
        succeed within the retry policy (the token stays released).
      asyncio.CancelledError: The caller was cancelled while the close ran;
        the token stays released and the close pending.
    """
    with self._lock:
      lease = self._leases.get(_secret_of(token))
      if lease is None:
        raise LeaseError(
            LeaseErrorReason.FOREIGN_TOKEN,
            'The lease token was not issued by this ledger',
        )
      generation = self._generations[lease.token.generation_key]
      released = lease.held
      if released:
        lease.held = False
        generation.outstanding -= 1
        if (
            generation.outstanding == 0
            and generation.state is LeaseGenerationState.OPEN
        ):
          generation.state = LeaseGenerationState.CLOSE_PENDING
          generation.trigger = lease
      drive = (
          generation.state is LeaseGenerationState.CLOSE_PENDING
          and generation.trigger is lease
          and self._claim(generation)
      )
    if not drive:
      return ReleaseResult(released=released, closed_generation=False)
    closed = await self._run_close(generation)
    return ReleaseResult(released=released, closed_generation=closed)

  async def retry_pending(self) -> frozenset[Hashable]:
    """Retries every generation whose close is pending.

    The registry's retry entry point (see `on_close_pending`). Failures are
    logged and leave the generation pending.

    Returns:
      The keys of the generations this call closed.
    """
    closed: set[Hashable] = set()
    tried: set[Hashable] = set()
    while True:
      # Claim one at a time: a cancelled caller strands nothing in CLOSING.
      with self._lock:
        generation = next(
            (
                generation
                for generation in self._generations.values()
                if generation.state is LeaseGenerationState.CLOSE_PENDING
                and generation.key not in tried
            ),
            None,
        )
        if generation is None:
          break
        tried.add(generation.key)
        self._claim(generation)
      try:
        if await self._run_close(generation):
          closed.add(generation.key)
      except GenerationCloseIncompleteError as error:
        logger.warning('%s', error)
    return frozenset(closed)

  async def shutdown(self) -> None:
    """Closes every generation not yet closed, whatever tokens remain.

    Refuses new generations and leases from the moment it is called. A
    close already running elsewhere is waited for (and taken over if it
    fails), so no callback succeeds twice. Tokens still held stay valid to
    release; releasing them closes nothing. Idempotent: calling it again
    closes only what is left.

    Raises:
      LedgerShutdownIncompleteError: Some generation could not be closed
        within the retry policy; it stays pending.
    """
    with self._lock:
      self._shut_down = True
      generations = [
          generation
          for generation in self._generations.values()
          if generation.state is not LeaseGenerationState.CLOSED
      ]
    outcomes = await asyncio.gather(
        *(self._close_for_shutdown(generation) for generation in generations),
        return_exceptions=True,
    )
    failed = []
    for generation, outcome in zip(generations, outcomes):
      if isinstance(outcome, asyncio.CancelledError):
        raise outcome
      if isinstance(outcome, BaseException):
        logger.warning(
            'Shutdown could not close %r: %s', generation.key, outcome
        )
        failed.append(generation.key)
    if failed:
      raise LedgerShutdownIncompleteError(tuple(failed))

  def state(self, generation_key: Hashable) -> LeaseGenerationState:
    """Returns a generation's state.

    Raises:
      LeaseError (UNKNOWN_GENERATION): The generation was never opened.
    """
    with self._lock:
      generation = self._generations.get(generation_key)
      if generation is None:
        raise LeaseError(
            LeaseErrorReason.UNKNOWN_GENERATION,
            f'Generation {generation_key!r} unknown',
        )
      return generation.state

  def outstanding(self, generation_key: Hashable) -> int:
    """Returns how many of a generation's tokens are still held.

    Raises:
      LeaseError (UNKNOWN_GENERATION): The generation was never opened.
    """
    with self._lock:
      generation = self._generations.get(generation_key)
      if generation is None:
        raise LeaseError(
            LeaseErrorReason.UNKNOWN_GENERATION,
            f'Generation {generation_key!r} unknown',
        )
      return generation.outstanding

  def is_held(self, token: LeaseToken) -> bool:
    """Returns whether a token of this ledger is still unreleased."""
    with self._lock:
      lease = self._leases.get(_secret_of(token))
      return lease is not None and lease.held

  def _claim(self, generation: _LeaseGeneration) -> bool:
    """Makes the caller the generation's sole closer. Caller holds the lock."""
    if generation.state not in (
        LeaseGenerationState.OPEN,
        LeaseGenerationState.CLOSE_PENDING,
    ):
      return False
    generation.state = LeaseGenerationState.CLOSING
    generation.attempt_done = concurrent.futures.Future()
    return True

  async def _close_for_shutdown(self, generation: _LeaseGeneration) -> None:
    while True:
      with self._lock:
        if generation.state is LeaseGenerationState.CLOSED:
          return
        claimed = self._claim(generation)
        running = generation.attempt_done
      if claimed:
        await self._run_close(generation)
        return
      assert running is not None
      await _wait_threadsafe(running)

  async def _run_close(self, generation: _LeaseGeneration) -> bool:
    """Runs the close callback with retries; the caller has claimed it.

    Returns:
      True once the callback succeeded.
    """
    policy = self._retry_policy
    task = asyncio.current_task()
    closed = False
    last_error: BaseException | None = None
    try:
      for _ in range(policy.max_attempts):
        with self._lock:
          generation.attempts += 1
        try:
          await asyncio.wait_for(
              _invoke(generation.close), timeout=policy.attempt_timeout
          )
        except asyncio.CancelledError as error:
          if task is not None and task.cancelling():
            raise
          # The callback itself was cancelled, not its caller: a failure.
          last_error = error
          logger.warning('Close of %r was cancelled', generation.key)
        except Exception as error:  # pylint: disable=broad-exception-caught
          last_error = error
          logger.warning(
              'Close of %r failed: %s', generation.key, type(error).__name__
          )
        else:
          closed = True
          return True
      raise GenerationCloseIncompleteError(
          generation.key, generation.attempts
      ) from last_error
    finally:
      with self._lock:
        generation.state = (
            LeaseGenerationState.CLOSED
            if closed
            else LeaseGenerationState.CLOSE_PENDING
        )
        done = generation.attempt_done
        generation.attempt_done = None
      if done is not None:
        done.set_result(None)
      if not closed:
        self._notify_pending(generation.key)

  def _notify_pending(self, key: Hashable) -> None:
    if self._on_close_pending is None:
      return
    try:
      self._on_close_pending(key)
    except Exception:  # pylint: disable=broad-exception-caught
      logger.exception('on_close_pending hook failed for %r', key)


def _secret_of(token: LeaseToken) -> str:
  return token._secret  # pylint: disable=protected-access


async def _invoke(close: CloseCallback) -> None:
  await close()


async def _wait_threadsafe(future: concurrent.futures.Future[None]) -> None:
  """Waits on the current loop for a future another thread resolves.

  Cancelling the waiter leaves `future` alone (unlike `asyncio.wrap_future`).
  """
  loop = asyncio.get_running_loop()
  waiter: asyncio.Future[None] = loop.create_future()

  def wake() -> None:
    if not waiter.done():
      waiter.set_result(None)

  def on_done(_: concurrent.futures.Future[None]) -> None:
    try:
      loop.call_soon_threadsafe(wake)
    except RuntimeError:  # The waiting loop has closed; nobody is waiting.
      pass

  future.add_done_callback(on_done)
  await waiter


# --------------------------------------------------------------------------
# The Runner side table.
# --------------------------------------------------------------------------


@dataclasses.dataclass(eq=False)
class _RunnerLease:
  ledger: RunnerLeaseLedger
  token: LeaseToken


_runner_leases: weakref.WeakKeyDictionary[object, list[_RunnerLease]] = (
    weakref.WeakKeyDictionary()
)
_runner_leases_lock = threading.Lock()


def bind_runner(
    runner: object, ledger: RunnerLeaseLedger, generation_key: Hashable
) -> LeaseToken:
  """Leases a generation for a Runner and records the token in its side table.

  Idempotent per Runner and generation: while the Runner's token on that
  generation is held, binding again returns it rather than leasing twice.

  Args:
    runner: The `google.adk.runners.Runner` being bound.
    ledger: The registry's ledger.
    generation_key: The generation the Runner's Agent reaches.

  Returns:
    The Runner's token on the generation.

  Raises:
    LeaseError: The ledger refused the lease (see `RunnerLeaseLedger.acquire`).
  """
  with _runner_leases_lock:
    entries = _runner_leases.setdefault(runner, [])
    for entry in entries:
      if (
          entry.ledger is ledger
          and entry.token.generation_key == generation_key
          and ledger.is_held(entry.token)
      ):
        return entry.token
    token = ledger.acquire(generation_key)
    entries.append(_RunnerLease(ledger, token))
    return token


def runner_leases(runner: object) -> tuple[LeaseToken, ...]:
  """Returns the tokens in a Runner's side table (not yet fully released)."""
  with _runner_leases_lock:
    return tuple(entry.token for entry in _runner_leases.get(runner, ()))


async def release_runner_leases(runner: object) -> None:
  """Releases exactly the tokens a Runner holds; `Runner.close()` calls it.

  A token leaves the side table once its release has settled. If the close
  it drove is left pending (it timed out, failed or was cancelled), the
  token stays, so a repeated `Runner.close()` retries that close
  token-idempotently; the ledger retries it too. Errors are logged, as
  Runner cleanup logs a toolset's; cancellation is re-raised after every
  token was tried.

  Args:
    runner: The Runner being closed.
  """
  with _runner_leases_lock:
    entries = list(_runner_leases.get(runner, ()))
  if not entries:
    return
  cancelled: asyncio.CancelledError | None = None
  for entry in entries:
    try:
      await entry.ledger.release(entry.token)
    except asyncio.CancelledError as error:
      cancelled = error
      continue
    except LeaseError as error:
      logger.warning('Runner lease release left a close pending: %s', error)
      continue
    with _runner_leases_lock:
      remaining = _runner_leases.get(runner)
      if remaining is not None and entry in remaining:
        remaining.remove(entry)
  if cancelled is not None:
    raise cancelled
