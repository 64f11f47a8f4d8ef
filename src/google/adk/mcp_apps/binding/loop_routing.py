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

"""Puts a registry-bound session manager's MCP I/O on the registry loop.

When an `AppsClientBinding` carries a `RegistryEventLoop`, the manager's
entry points (`create_session`, `_discard_session`, `close`) hand over to
this module: the pool lives on the registry loop and callers get a
`RoutedSession` facade whose calls marshal there, with progress callbacks
run back on the caller's loop. Without a registry loop every predicate here
is false and the manager behaves exactly as upstream. Design:
docs/design/binding.md.

Example:

  if loop_routing.is_routed(binding):
    pool = manager._routed_pool()
    session = await loop_routing.create_session(pool, headers)
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable
from collections.abc import Callable
import concurrent.futures
import contextlib
import contextvars
import dataclasses
import inspect
import logging
import threading
from typing import Any
from typing import TYPE_CHECKING
from typing import TypeVar
import weakref

from .registry_loop import DEFAULT_CALLBACK_TIMEOUT
from .registry_loop import RegistryEventLoop
from .registry_loop import RegistryLoopError
from .registry_loop import RegistryLoopErrorReason
from .registry_loop import suppress_loop_errors

if TYPE_CHECKING:
  from ...dependencies._mcp import ClientSession
  from .client_extensions import AppsClientBinding

logger = logging.getLogger('google_adk.' + __name__)

_T = TypeVar('_T')

ProgressFn = Callable[[float, float | None, str | None], Awaitable[None] | None]
"""A progress callback: `(progress, total, message)`, sync or async."""

PROGRESS_DRAIN_TIMEOUT = DEFAULT_CALLBACK_TIMEOUT
"""Seconds a call (or a teardown) waits for admitted progress to be delivered.

Also the bound on waiting for cancelled deliveries to unwind. Read when a
call starts.
"""

PROGRESS_QUEUE_LIMIT = 64
"""Progress notifications of one call admitted and not yet delivered.

A server may stream progress faster than a user callback consumes it; past
this many, the newest notification is dropped. Progress is advisory and
each notification carries the absolute value, so a dropped one loses no
state a later one does not restate. Read when a call starts.
"""

Headers = dict[str, str] | None


Guard = Callable[[Awaitable[Any]], Awaitable[Any]]
"""Races an operation against its session's transport task."""


@dataclasses.dataclass(frozen=True, eq=False)
class RoutedPool:
  """The pool operations of one manager that run on the registry loop.

  Built by the manager itself (`MCPSessionManager._routed_pool`), so this
  module drives its pool only through what the manager hands over.

  Attributes:
    owner: The manager (identity only: routing state is kept per owner).
    registry_loop: The loop the pool lives on.
    create_session: The manager's `create_session`.
    discard_session: The manager's discard of a dead session, `(headers, *,
      session)`.
    close: The manager's `close`.
    guard: On the registry thread: for the session pooled for `headers`,
      what races an operation against its transport task, or None (none
      pooled, or upstream's graceful MCP error handling is off).
    carry_debug_list: Caller-side: registers the caller's HTTP debug buffer
      for the session pooled for `headers`.
  """

  owner: object
  registry_loop: RegistryEventLoop
  create_session: Callable[[Headers], Awaitable[Any]]
  discard_session: Callable[..., None]
  close: Callable[[], Awaitable[None]]
  guard: Callable[[Headers], Guard | None]
  carry_debug_list: Callable[[Headers], None]


def registry_loop_of(
    binding: AppsClientBinding | None,
) -> RegistryEventLoop | None:
  """The registry loop a binding routes its I/O onto, if any."""
  return None if binding is None else binding.registry_loop


def is_routed(binding: AppsClientBinding | None) -> bool:
  """Whether a manager entry point must hand over to this module.

  True when the binding carries a registry loop and the caller is not on
  the registry thread. On the registry thread the manager's own code runs:
  that is where this module runs it.

  Args:
    binding: The manager's binding, or None.

  Returns:
    False without a binding or a loop: the upstream path.
  """
  loop = registry_loop_of(binding)
  return loop is not None and not loop.is_registry_thread()


class _LiveGates:
  """The progress gates of one manager's calls in flight (any thread)."""

  def __init__(self) -> None:
    self._lock = threading.Lock()
    self._gates: weakref.WeakSet[_ProgressGate] = weakref.WeakSet()

  def add(self, gate: _ProgressGate) -> None:
    with self._lock:
      self._gates.add(gate)
    gate.settled.add_done_callback(lambda _: self._discard(gate))

  def _discard(self, gate: _ProgressGate) -> None:
    with self._lock:
      self._gates.discard(gate)

  async def settle(self, timeout: float) -> None:
    """Waits up to `timeout` for every live gate to settle, then cancels.

    Each gate settles when its own call drains it; this only bounds how
    long a teardown waits for that, and cancels the deliveries of calls
    that outlive the bound (their owning loops unwind them).
    """
    with self._lock:
      gates = list(self._gates)
    if not gates:
      return
    waiters = {asyncio.wrap_future(gate.settled): gate for gate in gates}
    _, late = await asyncio.wait(waiters, timeout=timeout)
    if not late:
      return
    logger.warning(
        'Teardown: %d call(s) still delivering progress after %s s;'
        ' cancelling their callbacks.',
        len(late),
        timeout,
    )
    for waiter in late:
      waiters[waiter].cancel_threadsafe()
    # Bounded again: a callback that ignores cancellation is abandoned (its
    # own drain logs it) rather than holding the teardown.
    await asyncio.wait(late, timeout=timeout)


@dataclasses.dataclass(eq=False)
class _Router:
  """Per-manager routing state.

  `pending` is written from any thread under `lock` and drained on the
  registry thread; `facades` and `remove_hook` are registry-thread only.
  """

  loop: RegistryEventLoop
  lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)
  pending: list[tuple[Headers, Any]] = dataclasses.field(default_factory=list)
  facades: weakref.WeakKeyDictionary[Any, RoutedSession] = dataclasses.field(
      default_factory=weakref.WeakKeyDictionary
  )
  remove_hook: Callable[[], None] | None = None
  prompt_tasks: set[asyncio.Task[None]] = dataclasses.field(default_factory=set)
  gates: _LiveGates = dataclasses.field(default_factory=lambda: _LiveGates())

  def apply_pending(self, pool: RoutedPool) -> None:
    """On the registry thread: performs the queued discards."""
    with self.lock:
      pending, self.pending = self.pending, []
    for headers, session in pending:
      pool.discard_session(headers, session=session)

  def ensure_shutdown_hook(self, pool: RoutedPool) -> None:
    """On the registry thread: closes the pool if the registry closes."""
    if self.remove_hook is None:
      self.remove_hook = self.loop.add_shutdown_hook(pool.close)

  def drop_shutdown_hook(self) -> None:
    """On the registry thread."""
    if self.remove_hook is not None:
      self.remove_hook()
      self.remove_hook = None


_routers: weakref.WeakKeyDictionary[Any, _Router] = weakref.WeakKeyDictionary()
_routers_lock = threading.Lock()


def _router(pool: RoutedPool) -> _Router:
  loop = pool.registry_loop
  with _routers_lock:
    router = _routers.get(pool.owner)
    if router is None or router.loop is not loop:
      router = _routers[pool.owner] = _Router(loop)
    return router


async def create_session(
    pool: RoutedPool,
    headers: Headers = None,
    *,
    admission: (
        Callable[[], contextlib.AbstractContextManager[Any]] | None
    ) = None,
) -> RoutedSession:
  """`MCPSessionManager.create_session`, pooled on the registry loop.

  Args:
    pool: The registry-bound manager's pool operations.
    headers: As for `create_session`.
    admission: Entered on the registry loop, in the task that runs the pool
      access, around it. A registry proxy passes its admission gate's
      ticket here: the gate knows admitted work by its caller task, and the
      pool access runs in another one (see `proxy.AdmissionTicket`).

  Returns:
    The facade of the pooled session; the same object for as long as the
    pool hands out the same session.

  Raises:
    ConnectionError: The session could not be created.
    RegistryLoopError: The registry loop is not running.
  """
  router = _router(pool)
  # The registry loop runs in an empty context: the debug buffer `McpTool`
  # sets in its context variable is registered caller-side.
  pool.carry_debug_list(headers)

  async def on_loop() -> RoutedSession:
    router.apply_pending(pool)
    router.ensure_shutdown_hook(pool)
    if admission is None:
      session = await pool.create_session(headers)
    else:
      with admission():
        session = await pool.create_session(headers)
    facade = router.facades.get(session)
    if facade is None:
      guard = pool.guard(headers)
      facade = RoutedSession(router.loop, session, guard, gates=router.gates)
      router.facades[session] = facade
    return facade

  return await router.loop.run(on_loop)


def unwrap(session: object) -> object:
  """The pooled session behind a facade (anything else is returned as is)."""
  return session._session if isinstance(session, RoutedSession) else session


def discard_session(
    pool: RoutedPool, headers: Headers = None, *, session: object = None
) -> None:
  """`MCPSessionManager._discard_session`, applied on the registry loop.

  The discard is queued at once (the next pool access on the registry loop
  applies it first, so a retry never gets the dead session back) and, when
  a loop is running here, also submitted so the transport closes promptly.

  Args:
    pool: The registry-bound manager's pool operations.
    headers: As for `_discard_session`.
    session: The session (or its facade) the call failed on; None discards
      whatever is pooled for the headers.
  """
  router = _router(pool)
  with router.lock:
    router.pending.append((headers, unwrap(session)))
  try:
    caller = asyncio.get_running_loop()
  except RuntimeError:
    return

  async def on_loop() -> None:
    router.apply_pending(pool)

  async def submit() -> None:
    try:
      await router.loop.run(on_loop)
    except asyncio.CancelledError:
      pass  # Still queued: the next pool access or close applies it.
    except RegistryLoopError as error:
      if error.reason is not RegistryLoopErrorReason.CLOSED:
        logger.warning('Discarding an MCP session failed.', exc_info=True)
      # Else still queued: the next pool access or close applies it.
    except Exception:  # pylint: disable=broad-exception-caught
      logger.warning('Discarding an MCP session failed.', exc_info=True)

  task = caller.create_task(submit())
  router.prompt_tasks.add(task)
  task.add_done_callback(router.prompt_tasks.discard)


async def close(pool: RoutedPool) -> None:
  """`MCPSessionManager.close`, on the registry loop.

  A no-op on the registry loop when it never started (nothing was pooled)
  or has closed (its shutdown hook closed the pool). Then waits, up to
  `PROGRESS_DRAIN_TIMEOUT`, for the progress deliveries of the calls that
  were in flight, and cancels what is still running.

  Args:
    pool: The registry-bound manager's pool operations.
  """
  router = _router(pool)

  async def on_loop() -> None:
    router.drop_shutdown_hook()
    router.apply_pending(pool)
    await pool.close()

  with suppress_loop_errors(
      RegistryLoopErrorReason.CLOSED, RegistryLoopErrorReason.NOT_STARTED
  ):
    await router.loop.run(on_loop)
  # Closing the sessions ended the calls in flight; each is now draining its
  # progress on its own loop. Teardown returns only once that is over
  # (bounded, then the stragglers are cancelled), so no user callback of
  # this toolset outlives its close.
  await router.gates.settle(PROGRESS_DRAIN_TIMEOUT)


class _ProgressGate:
  """Delivers one call's progress on its owning loop, bounded, and drains it.

  The owning loop is the loop `call_tool` was awaited on (a Runner's loop,
  the worker loop of a synchronous `Runner.run()`, a host server's loop):
  the gate is built there and the user callback only ever runs there, one
  notification at a time, in arrival order. The SDK's handler tasks on the
  registry loop only enqueue (`on_progress` never waits for user code), so
  nothing on the registry thread can be held up by, or cancelled into, a
  user callback.

  Intake: the registry side closes the gate in the same loop step in which
  the operation's terminal response (or failure) becomes visible; anything
  offered afterwards is dropped unseen. The SDK spawns each handler task
  before the response that follows it is resolved, so what the server sent
  before its response has been offered by then.

  Backpressure: at most `limit` notifications may be admitted and not yet
  finished; a further one (the newest) is dropped, and the first such drop
  of the call is logged.

  Drain: `drain()` (owning loop) waits up to `timeout` for every admitted
  notification to be delivered, then cancels what is left.
  """

  def __init__(
      self,
      callback: ProgressFn,
      owner: asyncio.AbstractEventLoop,
      *,
      limit: int,
      timeout: float,
  ):
    self._callback = callback
    self._name = getattr(callback, '__qualname__', repr(callback))
    self._owner = owner
    # The caller's context at operation admission: every delivery runs in a
    # fresh copy of it, so neither later changes by the caller nor changes
    # by an earlier delivery leak into a handler.
    self._context = contextvars.copy_context()
    self._limit = limit
    self._timeout = timeout
    # Guards everything below: offered on the registry thread, consumed on
    # the owning loop.
    self._lock = threading.Lock()
    self._open = True
    self._queue: collections.deque[tuple[float, float | None, str | None]] = (
        collections.deque()
    )
    self._unfinished = 0
    self._overflowed = False
    self._kicked = False
    self._consumer: asyncio.Task[None] | None = None
    self.settled: concurrent.futures.Future[None] = concurrent.futures.Future()
    """Done once the gate is closed and nothing admitted is left running."""

  # Registry side.

  async def on_progress(
      self, progress: float, total: float | None, message: str | None
  ) -> None:
    """The SDK's progress handler: admits or drops; never runs user code."""
    with self._lock:
      if not self._open:
        logger.debug('Progress %s after the terminal result dropped.', progress)
        return
      if self._unfinished >= self._limit:
        first = not self._overflowed
        self._overflowed = True
        if first:
          logger.warning(
              'Progress delivery to %s is %d notification(s) behind; dropping'
              ' the newest until it catches up.',
              self._name,
              self._limit,
          )
        return
      self._queue.append((progress, total, message))
      self._unfinished += 1
      kick, self._kicked = not self._kicked, True
    if kick:
      try:
        self._owner.call_soon_threadsafe(self._ensure_consumer)
      except RuntimeError:  # The owning loop is closed.
        logger.warning('Progress for %s dropped: its loop is gone.', self._name)
        with self._lock:
          self._unfinished -= len(self._queue)
          self._queue.clear()
          self._kicked = False

  def close(self) -> None:
    """Closes intake (any thread); idempotent."""
    with self._lock:
      self._open = False

  # Owning loop.

  def _ensure_consumer(self) -> asyncio.Task[None] | None:
    if self._consumer is None or self._consumer.done():
      with self._lock:
        if not self._queue:
          self._kicked = False
          return None
      self._consumer = self._owner.create_task(self._consume())
    return self._consumer

  async def _consume(self) -> None:
    while True:
      with self._lock:
        if not self._queue:
          self._kicked = False
          return
        progress, total, message = self._queue.popleft()
      delivery = self._owner.create_task(
          self._deliver(progress, total, message), context=self._context.copy()
      )
      try:
        await delivery
      finally:
        with self._lock:
          self._unfinished -= 1

  async def _deliver(
      self, progress: float, total: float | None, message: str | None
  ) -> None:
    try:
      result = self._callback(progress, total, message)
      if inspect.isawaitable(result):
        await result
    except Exception:  # pylint: disable=broad-exception-caught
      logger.exception('Progress callback %s raised; ignored.', self._name)

  async def drain(self) -> None:
    """Closes intake, waits for admitted deliveries (bounded), cancels the rest.

    If the caller is cancelled while waiting, the deliveries are cancelled
    at once and the cancellation propagates once they unwind (bounded).
    """
    self.close()
    consumer = self._ensure_consumer()
    try:
      if consumer is not None:
        _, late = await asyncio.wait([consumer], timeout=self._timeout)
        if late:
          logger.warning(
              'Progress callback %s still running %s s after the result;'
              ' cancelled.',
              self._name,
              self._timeout,
          )
          await self._cancel(consumer)
    except asyncio.CancelledError:
      await self._cancel(consumer)
      raise
    finally:
      self._settle()

  async def cancel(self) -> None:
    """Closes intake and cancels what is admitted (the caller gave up)."""
    self.close()
    try:
      await self._cancel(self._consumer)
    finally:
      self._settle()

  async def _cancel(self, consumer: asyncio.Task[None] | None) -> None:
    with self._lock:
      self._unfinished -= len(self._queue)
      self._queue.clear()
    if consumer is None or consumer.done():
      return
    consumer.cancel()
    # Shielded from a second cancellation of the caller only by the bound:
    # a callback that swallows cancellation is abandoned, logged.
    _, stuck = await asyncio.wait([consumer], timeout=self._timeout)
    if stuck:
      logger.warning(
          'Progress callback %s ignored cancellation for %s s; abandoned.',
          self._name,
          self._timeout,
      )

  def _settle(self) -> None:
    if not self.settled.done():
      self.settled.set_result(None)

  def cancel_threadsafe(self) -> None:
    """From any thread: cancels the deliveries still running."""

    def on_owner() -> None:
      if self._consumer is not None:
        self._consumer.cancel()

    with contextlib.suppress(RuntimeError):  # The owning loop is closed.
      self._owner.call_soon_threadsafe(on_owner)


class RoutedSession:
  """A session pooled on the registry loop, usable from any other loop.

  Each operation runs on the registry loop through `RegistryEventLoop.run`
  (cancelling the caller cancels it there) and, when the manager tracks the
  session's `SessionContext`, races its transport task there, so a crashed
  transport fails the call at once instead of at the read timeout.

  Only the operations ADK issues are wrapped; `execute` runs any other
  (ADK-internal, never user code) on the live session.
  """

  def __init__(
      self,
      registry_loop: RegistryEventLoop,
      session: ClientSession,
      guard: Guard | None = None,
      *,
      gates: _LiveGates | None = None,
  ):
    """Wraps a pooled session.

    Args:
      registry_loop: The loop the session lives on.
      session: The pooled `ClientSession`.
      guard: Races a call against the session's transport task; None
        awaits calls directly.
      gates: Where the progress gates of calls in flight are tracked for
        the manager's teardown.
    """
    self._loop = registry_loop
    self._session = session
    self._guard = guard
    self._gates = gates

  @property
  def registry_loop(self) -> RegistryEventLoop:
    """The loop the session lives on."""
    return self._loop

  async def execute(
      self,
      operation: Callable[[ClientSession], Awaitable[_T]],
      *,
      progress: _ProgressGate | None = None,
  ) -> _T:
    """Runs `operation(session)` on the registry loop, from any loop.

    Args:
      operation: An async function of the session; runs registry-side, so
        it must not be user code.
      progress: The call's progress gate, drained before returning.

    Returns:
      What `operation` returned.
    """
    session = self._session
    guard = self._guard

    async def until_terminal() -> _T:
      try:
        return await operation(session)
      finally:
        # In the step the response (or failure) surfaces, before the guard
        # or anything else on this loop runs: intake closes atomically.
        if progress is not None:
          progress.close()

    async def on_loop() -> _T:
      if guard is not None:
        result: _T = await guard(until_terminal())
        return result
      return await until_terminal()

    if progress is None:
      return await self._loop.run(on_loop)
    try:
      result = await self._loop.run(on_loop)
    except asyncio.CancelledError:
      # The caller gave up: its deliveries go too (bounded unwinding).
      await progress.cancel()
      raise
    except BaseException:
      await progress.drain()
      raise
    await progress.drain()
    return result

  async def call_tool(
      self,
      name: str,
      arguments: dict[str, Any] | None = None,
      read_timeout_seconds: float | None = None,
      progress_callback: ProgressFn | None = None,
      **kwargs: Any,
  ) -> Any:
    """Calls a tool on the registry loop.

    Args:
      name: The tool's native name.
      arguments: Its arguments.
      read_timeout_seconds: The per-request read timeout.
      progress_callback: Runs on the calling loop, never on the registry
        thread, one notification at a time, in the context this call was
        made in. Every notification admitted before the result has been
        delivered when this returns, or cancelled after
        `PROGRESS_DRAIN_TIMEOUT`. Past `PROGRESS_QUEUE_LIMIT` undelivered
        ones the newest are dropped. Its exceptions are logged.
      **kwargs: Passed to `ClientSession.call_tool` (`meta`, ...).

    Returns:
      The SDK's result.

    Raises:
      RegistryLoopError (CALLBACK_OWNER): A progress callback given on the
        registry thread, where user code must never run.
    """
    gate = None
    if progress_callback is not None:
      gate = self._progress_gate(progress_callback)
    return await self.execute(
        lambda session: session.call_tool(
            name,
            arguments,
            read_timeout_seconds,
            None if gate is None else gate.on_progress,
            **kwargs,
        ),
        progress=gate,
    )

  def _progress_gate(self, callback: ProgressFn) -> _ProgressGate:
    """A gate owned by the calling loop, tracked for teardown."""
    if self._loop.is_registry_thread():
      raise RegistryLoopError(
          RegistryLoopErrorReason.CALLBACK_OWNER,
          'User callbacks may not be bound to the registry loop.',
      )
    gate = _ProgressGate(
        callback,
        asyncio.get_running_loop(),
        limit=PROGRESS_QUEUE_LIMIT,
        timeout=PROGRESS_DRAIN_TIMEOUT,
    )
    if self._gates is not None:
      self._gates.add(gate)
    return gate

  async def list_tools(self, *args: Any, **kwargs: Any) -> Any:
    """`ClientSession.list_tools` on the registry loop."""
    return await self.execute(lambda s: s.list_tools(*args, **kwargs))

  async def read_resource(self, *args: Any, **kwargs: Any) -> Any:
    """`ClientSession.read_resource` on the registry loop."""
    return await self.execute(lambda s: s.read_resource(*args, **kwargs))

  async def list_resources(self, *args: Any, **kwargs: Any) -> Any:
    """`ClientSession.list_resources` on the registry loop."""
    return await self.execute(lambda s: s.list_resources(*args, **kwargs))

  async def list_resource_templates(self, *args: Any, **kwargs: Any) -> Any:
    """`ClientSession.list_resource_templates` on the registry loop."""
    return await self.execute(
        lambda s: s.list_resource_templates(*args, **kwargs)
    )

  async def list_prompts(self, *args: Any, **kwargs: Any) -> Any:
    """`ClientSession.list_prompts` on the registry loop."""
    return await self.execute(lambda s: s.list_prompts(*args, **kwargs))

  async def get_prompt(self, *args: Any, **kwargs: Any) -> Any:
    """`ClientSession.get_prompt` on the registry loop."""
    return await self.execute(lambda s: s.get_prompt(*args, **kwargs))

  async def send_ping(self, *args: Any, **kwargs: Any) -> Any:
    """`ClientSession.send_ping` on the registry loop."""
    return await self.execute(lambda s: s.send_ping(*args, **kwargs))

  def __repr__(self) -> str:
    return f'RoutedSession({self._session!r}, loop={self._loop.name!r})'
