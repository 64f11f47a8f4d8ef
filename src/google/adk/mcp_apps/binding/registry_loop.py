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

"""The binding registry's dedicated event loop, where its connections live.

MCP client sessions are bound to the loop that created them, but a View's
app-safe connection must outlive the short-lived loop of a `Runner.run()`.
`RegistryEventLoop` runs one long-lived loop on its own thread; transport
I/O is marshalled onto it, and user callbacks are marshalled back to their
own loop (`marshal_callback`). Design: docs/design/binding.md.

Example:

  loop = RegistryEventLoop()
  loop.start()
  result = await loop.run(session.list_tools)
  await loop.aclose()
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Coroutine
from collections.abc import Iterator
import concurrent.futures
import contextlib
import contextvars
import dataclasses
import enum
import functools
import inspect
import logging
import threading
import time
from typing import Any
from typing import Generic
from typing import ParamSpec
from typing import TypeVar
from typing import TypeVarTuple
from typing import Unpack

from .errors import ReasonedBindingError

logger = logging.getLogger('google_adk.' + __name__)

_T = TypeVar('_T')
_Ts = TypeVarTuple('_Ts')
_P = ParamSpec('_P')

DEFAULT_THREAD_NAME = 'adk-mcp-apps-registry-loop'
DEFAULT_CLOSE_TIMEOUT = 10.0
"""Seconds `close()` may take: cancel work, close sessions, join the thread."""

DEFAULT_CANCEL_DRAIN_TIMEOUT = 5.0
"""Seconds a cancelled caller waits for its registry-side task to unwind."""

DEFAULT_CALLBACK_TIMEOUT = 30.0
"""Seconds the registry side waits for one marshalled callback to finish."""

_SESSION_CLOSE_SHARE = 0.8
"""Share of the remaining close budget given to graceful session closes."""


class RegistryLoopErrorReason(enum.Enum):
  """Why the registry loop refused or lost a piece of work."""

  NOT_STARTED = 'not_started'
  """Work was submitted before `RegistryEventLoop.start()`."""

  CLOSED = 'closed'
  """The loop is closing or closed: work submitted after `close()` began,
  or a caller whose registry-side task the shutdown cancelled."""

  THREAD_REENTRY = 'thread_reentry'
  """A blocking call (`run_sync`, `close`) was made from the registry thread
  itself, where it would deadlock."""

  WORK_CANCELLED = 'work_cancelled'
  """The registry-side task was cancelled without the caller asking."""

  CLOSE_TIMEOUT = 'close_timeout'
  """`close()` did not finish within its timeout; calling it again waits
  again, and the shutdown already started goes on."""

  CALLBACK_OWNER = 'callback_owner'
  """A callback cannot be bound to an owning loop: no loop runs in the
  calling thread, or it is the registry thread (user code never runs
  there)."""


class RegistryLoopError(ReasonedBindingError[RegistryLoopErrorReason]):
  """The registry loop refused or lost a piece of work."""


@contextlib.contextmanager
def suppress_loop_errors(*reasons: RegistryLoopErrorReason) -> Iterator[None]:
  """Suppresses a `RegistryLoopError` of one of `reasons`; re-raises others.

  Args:
    *reasons: The reasons to suppress.

  Yields:
    Nothing.
  """
  try:
    yield
  except RegistryLoopError as error:
    if error.reason not in reasons:
      raise


class _State(enum.Enum):
  NEW = 'new'
  RUNNING = 'running'
  CLOSING = 'closing'
  CLOSED = 'closed'


@dataclasses.dataclass(eq=False)
class _Submission(Generic[_T]):
  """One unit of work travelling from a caller to the registry loop.

  `outcome` is settled only when the registry-side task is done (it mirrors
  the task's result, exception or cancellation), so a caller can wait for the
  task to unwind rather than merely for its own wait to end. Callers never
  cancel `outcome` itself; they ask for the task to be cancelled.
  """

  coro_factory: Callable[[], Coroutine[Any, Any, _T]]
  outcome: concurrent.futures.Future[_T] = dataclasses.field(
      default_factory=concurrent.futures.Future
  )
  task: asyncio.Task[_T] | None = None
  cancel_requested: bool = False


class RegistryEventLoop:
  """One long-lived event loop, on its own thread, owned by the registry.

  Lifecycle: `start()` once (idempotent), submit work with `run` (from any
  loop) or `run_sync` (from plain threads), `close()` once at registry
  shutdown (idempotent). The loop runs every registry-side coroutine in a
  fresh, empty `contextvars` context: no caller context (and so no live
  Runner state) leaks onto the registry thread; pass what the work needs as
  arguments.

  The thread is a daemon thread. `close()` is the contract and joins it;
  daemon only keeps a registry that was never closed from blocking
  interpreter exit forever, because Python joins non-daemon threads before
  it runs `atexit` hooks, where a forgotten close could otherwise happen. An
  `atexit` hook closes a still-running loop as a last resort, so stdio
  servers still get their orderly shutdown.

  Attributes:
    name: The thread's name.
  """

  def __init__(
      self,
      *,
      name: str = DEFAULT_THREAD_NAME,
      cancel_drain_timeout: float = DEFAULT_CANCEL_DRAIN_TIMEOUT,
  ):
    """Creates the loop owner; nothing runs until `start()`.

    Args:
      name: The registry thread's name.
      cancel_drain_timeout: Seconds a cancelled `run` caller waits for the
        registry-side task to unwind before giving up on it (with a warning).
    """
    self.name = name
    self._cancel_drain_timeout = cancel_drain_timeout
    self._lock = threading.Lock()
    self._state = _State.NEW
    self._thread: threading.Thread | None = None
    self._loop: asyncio.AbstractEventLoop | None = None
    self._thread_id: int | None = None
    self._work: set[asyncio.Task[Any]] = set()
    self._shutdown_hooks: dict[int, Callable[[], Awaitable[None]]] = {}
    self._next_hook_id = 0
    self._close_deadline: float | None = None
    self._atexit_hook: Callable[[], None] | None = None

  # Lifecycle.

  def start(self) -> None:
    """Starts the registry thread and its loop; returns once it is running.

    Idempotent while running.

    Raises:
      RegistryLoopError (CLOSED): `close()` has already begun.
    """
    with self._lock:
      if self._state is _State.RUNNING:
        return
      if self._state is not _State.NEW:
        raise RegistryLoopError(
            RegistryLoopErrorReason.CLOSED, 'The registry loop has been closed.'
        )
      loop = asyncio.new_event_loop()
      ready = threading.Event()
      thread = threading.Thread(
          target=self._main, args=(loop, ready), name=self.name, daemon=True
      )
      thread.start()
      ready.wait()
      self._loop = loop
      self._thread = thread
      self._state = _State.RUNNING
      self._register_atexit()

  def _main(
      self, loop: asyncio.AbstractEventLoop, ready: threading.Event
  ) -> None:
    """The registry thread: runs the loop until shutdown stops it."""
    asyncio.set_event_loop(loop)
    self._thread_id = threading.get_ident()
    loop.call_soon(ready.set)
    try:
      loop.run_forever()
    finally:
      try:
        leftovers = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in leftovers:
          task.cancel()
        if leftovers:
          loop.run_until_complete(
              asyncio.gather(*leftovers, return_exceptions=True)
          )
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
      finally:
        asyncio.set_event_loop(None)
        loop.close()

  @property
  def thread(self) -> threading.Thread | None:
    """The registry thread (None before `start()`)."""
    return self._thread

  @property
  def closed(self) -> bool:
    """Whether `close()` has begun; no work is accepted any more."""
    return self._state in (_State.CLOSING, _State.CLOSED)

  def is_registry_thread(self) -> bool:
    """Whether the calling thread is the registry thread."""
    return (
        self._thread_id is not None and threading.get_ident() == self._thread_id
    )

  def close(self, timeout: float = DEFAULT_CLOSE_TIMEOUT) -> None:
    """Stops accepting work, drains the loop, stops it and joins the thread.

    On the registry loop, in order: every outstanding `run` task is
    cancelled and awaited; the shutdown hooks (open connections)
    close gracefully, concurrently; whatever task is still pending is
    cancelled; the loop stops. All of it within `timeout`. Idempotent: a
    second call returns at once once closed, or waits again for a shutdown
    that timed out.

    Args:
      timeout: Seconds for the whole shutdown, joining the thread included.

    Raises:
      RegistryLoopError (THREAD_REENTRY): Called from the registry thread.
      RegistryLoopError (CLOSE_TIMEOUT): The thread is still alive after
        `timeout`.
    """
    if self.is_registry_thread():
      raise RegistryLoopError(
          RegistryLoopErrorReason.THREAD_REENTRY,
          'close() would join the registry thread from itself.',
      )
    deadline = time.monotonic() + timeout
    with self._lock:
      if self._state is _State.NEW:
        self._state = _State.CLOSED
        return
      if self._state is _State.CLOSED:
        return
      if self._state is _State.RUNNING:
        self._state = _State.CLOSING
        self._close_deadline = deadline
        loop = self._loop
        assert loop is not None
        with contextlib.suppress(RuntimeError):  # The loop died already.
          loop.call_soon_threadsafe(self._begin_shutdown, deadline)
      thread = self._thread
    assert thread is not None
    thread.join(max(0.0, deadline - time.monotonic()))
    if thread.is_alive():
      raise RegistryLoopError(
          RegistryLoopErrorReason.CLOSE_TIMEOUT,
          f'The registry thread {thread.name!r} did not stop within'
          f' {timeout} s.',
      )
    with self._lock:
      self._state = _State.CLOSED
      self._unregister_atexit()

  async def aclose(self, timeout: float = DEFAULT_CLOSE_TIMEOUT) -> None:
    """`close()` for async callers: blocks a worker thread, not the loop.

    Args:
      timeout: As for `close()`.
    """
    await asyncio.to_thread(self.close, timeout)

  def _begin_shutdown(self, deadline: float) -> None:
    """On the registry loop: starts the shutdown task."""
    loop = asyncio.get_running_loop()
    loop.create_task(self._shutdown(deadline), context=contextvars.Context())

  async def _shutdown(self, deadline: float) -> None:
    """On the registry loop: drains within `deadline`, then stops the loop."""
    loop = asyncio.get_running_loop()
    try:
      work = [t for t in self._work if not t.done()]
      for task in work:
        task.cancel()
      if work:
        await asyncio.wait(work, timeout=_remaining(deadline))
      with self._lock:
        hooks = list(self._shutdown_hooks.values())
        self._shutdown_hooks.clear()
      if hooks:
        hook_tasks = [
            loop.create_task(_logged(hook), context=contextvars.Context())
            for hook in hooks
        ]
        _, pending = await asyncio.wait(
            hook_tasks, timeout=_remaining(deadline) * _SESSION_CLOSE_SHARE
        )
        if pending:
          logger.warning(
              '%d registry shutdown hook(s) did not finish in time; '
              'cancelling them.',
              len(pending),
          )
      this = asyncio.current_task()
      rest = [t for t in asyncio.all_tasks(loop) if t is not this]
      for task in rest:
        task.cancel()
      if rest:
        _, pending = await asyncio.wait(rest, timeout=_remaining(deadline))
        if pending:
          logger.warning(
              '%d registry task(s) ignored cancellation at shutdown.',
              len(pending),
          )
    finally:
      loop.stop()

  def _register_atexit(self) -> None:
    import atexit  # pylint: disable=g-import-not-at-top

    def close_at_exit() -> None:
      try:
        self.close(DEFAULT_CLOSE_TIMEOUT)
      except RegistryLoopError:
        logger.warning('Registry loop %r did not close at exit.', self.name)

    self._atexit_hook = close_at_exit
    atexit.register(close_at_exit)

  def _unregister_atexit(self) -> None:
    import atexit  # pylint: disable=g-import-not-at-top

    if self._atexit_hook is not None:
      atexit.unregister(self._atexit_hook)
      self._atexit_hook = None

  def add_shutdown_hook(
      self, hook: Callable[[], Awaitable[None]]
  ) -> Callable[[], None]:
    """Registers a coroutine function `close()` runs on the registry loop.

    Hooks run after outstanding work is cancelled and before leftover tasks
    are; they are how resident resources (sessions) close gracefully.

    Args:
      hook: The coroutine function; its exceptions are logged.

    Returns:
      A function that unregisters the hook (idempotent).

    Raises:
      RegistryLoopError (CLOSED): `close()` has already begun.
    """
    with self._lock:
      if self.closed:
        raise RegistryLoopError(
            RegistryLoopErrorReason.CLOSED, 'The registry loop is closing.'
        )
      hook_id = self._next_hook_id
      self._next_hook_id += 1
      self._shutdown_hooks[hook_id] = hook

    def remove() -> None:
      with self._lock:
        self._shutdown_hooks.pop(hook_id, None)

    return remove

  # Running work.

  def _submit(
      self, coro_factory: Callable[[], Coroutine[Any, Any, _T]]
  ) -> _Submission[_T]:
    """Schedules `coro_factory()` on the registry loop, as a tracked task."""
    submission = _Submission(coro_factory)
    with self._lock:
      if self._state is _State.NEW:
        raise RegistryLoopError(
            RegistryLoopErrorReason.NOT_STARTED,
            'The registry loop has not been started.',
        )
      if self._state is not _State.RUNNING:
        raise RegistryLoopError(
            RegistryLoopErrorReason.CLOSED, 'The registry loop is closing.'
        )
      loop = self._loop
      assert loop is not None
      # Under the lock: shutdown is scheduled under it too, so this start
      # is queued ahead of it and the shutdown sees the task.
      loop.call_soon_threadsafe(self._start_on_loop, submission)
    return submission

  def _start_on_loop(self, submission: _Submission[Any]) -> None:
    """On the registry loop: creates the submission's task."""
    if submission.cancel_requested:
      submission.outcome.cancel()
      return
    try:
      task = asyncio.get_running_loop().create_task(
          submission.coro_factory(), context=contextvars.Context()
      )
    except Exception as error:  # pylint: disable=broad-exception-caught
      submission.outcome.set_exception(error)  # e.g. not a coroutine function
      return
    submission.task = task
    self._work.add(task)
    task.add_done_callback(functools.partial(self._settle, submission))

  def _settle(
      self, submission: _Submission[Any], task: asyncio.Task[Any]
  ) -> None:
    """On the registry loop: mirrors the finished task into `outcome`."""
    self._work.discard(task)
    if task.cancelled():
      submission.outcome.cancel()
    elif (error := task.exception()) is not None:
      submission.outcome.set_exception(error)
    else:
      submission.outcome.set_result(task.result())

  def _request_cancel(self, submission: _Submission[Any]) -> None:
    """Asks the registry loop, from any thread, to cancel a submission."""

    def cancel_on_loop() -> None:
      submission.cancel_requested = True
      if submission.task is not None:
        submission.task.cancel()

    loop = self._loop
    if loop is None:
      return
    with contextlib.suppress(RuntimeError):  # The loop is already closed.
      loop.call_soon_threadsafe(cancel_on_loop)

  async def run(
      self,
      fn: Callable[[Unpack[_Ts]], Coroutine[Any, Any, _T]],
      *args: Unpack[_Ts],
  ) -> _T:
    """Runs `fn(*args)` on the registry loop; awaits it on the caller's.

    Callable from any running loop (a Runner worker loop, the host server's
    loop, the registry loop itself, where it simply awaits). The result or
    exception comes back to the caller. Cancelling the caller cancels the
    registry-side task and waits (up to `cancel_drain_timeout`) for it to
    unwind, so nothing keeps using the transport after the caller has
    moved on.

    Args:
      fn: A coroutine function; it runs on the registry loop.
      *args: Its positional arguments (use `functools.partial` for more).

    Returns:
      What `fn` returned.

    Raises:
      RegistryLoopError (NOT_STARTED): `start()` was never called.
      RegistryLoopError (CLOSED): The loop is closing, or its shutdown
        cancelled this work.
      RegistryLoopError (WORK_CANCELLED): Something other than this caller
        cancelled the registry-side task.
      Exception: Whatever `fn` raised.
    """
    if self.is_registry_thread():
      if self.closed:
        raise RegistryLoopError(
            RegistryLoopErrorReason.CLOSED, 'The registry loop is closing.'
        )
      return await fn(*args)
    submission = self._submit(lambda: fn(*args))
    waiter = asyncio.wrap_future(submission.outcome)
    try:
      # Shielded: our cancellation must not cancel `outcome`, which stays
      # the registry task's own account of when it finished.
      return await asyncio.shield(waiter)
    except asyncio.CancelledError:
      caller = asyncio.current_task()
      if waiter.cancelled() and (caller is None or not caller.cancelling()):
        # The registry side was cancelled, not us: report, don't cancel us.
        raise self._cancelled_error() from None
      self._request_cancel(submission)
      await self._drain(waiter)
      raise

  async def _drain(self, waiter: asyncio.Future[Any]) -> None:
    """Waits, bounded, for a cancelled submission's task to unwind."""
    done, _ = await asyncio.wait([waiter], timeout=self._cancel_drain_timeout)
    if not done:
      logger.warning(
          'Registry-side task did not unwind within %s s of cancellation.',
          self._cancel_drain_timeout,
      )
      waiter.add_done_callback(_consume)
    elif not waiter.cancelled():
      waiter.exception()  # Retrieved: the caller is cancelled regardless.

  def _cancelled_error(self) -> RegistryLoopError:
    if self.closed:
      return RegistryLoopError(
          RegistryLoopErrorReason.CLOSED,
          'The registry loop shut down while this work was in flight.',
      )
    return RegistryLoopError(
        RegistryLoopErrorReason.WORK_CANCELLED,
        'The registry-side task was cancelled on the registry loop.',
    )

  def run_sync(
      self,
      fn: Callable[[Unpack[_Ts]], Coroutine[Any, Any, _T]],
      *args: Unpack[_Ts],
      timeout: float | None = None,
  ) -> _T:
    """Runs `fn(*args)` on the registry loop and blocks for its result.

    For synchronous callers (no running loop needed). On timeout or
    interruption the registry-side task is cancelled.

    Args:
      fn: A coroutine function; it runs on the registry loop.
      *args: Its positional arguments.
      timeout: Seconds to wait; None waits indefinitely.

    Returns:
      What `fn` returned.

    Raises:
      RegistryLoopError (THREAD_REENTRY): Called from the registry thread.
      TimeoutError: `timeout` elapsed; the task was cancelled.
      RegistryLoopError (NOT_STARTED, CLOSED, WORK_CANCELLED): As for
        `run`.
      Exception: Whatever `fn` raised.
    """
    if self.is_registry_thread():
      raise RegistryLoopError(
          RegistryLoopErrorReason.THREAD_REENTRY,
          'run_sync() on the registry thread would deadlock; await run().',
      )
    submission = self._submit(lambda: fn(*args))
    try:
      return submission.outcome.result(timeout)
    except concurrent.futures.CancelledError:
      raise self._cancelled_error() from None
    except concurrent.futures.TimeoutError:
      self._request_cancel(submission)
      raise TimeoutError(
          f'Registry-loop work did not finish within {timeout} s.'
      ) from None
    except BaseException:
      if not submission.outcome.done():
        self._request_cancel(submission)
      raise

  # User callbacks.

  def marshal_callback(
      self,
      callback: Callable[_P, Awaitable[None] | None],
      *,
      timeout: float | None = DEFAULT_CALLBACK_TIMEOUT,
  ) -> Callable[_P, Coroutine[Any, Any, None]]:
    """Binds a user callback to the calling loop, for the SDK to invoke.

    Call this on the loop that owns the callback (the Runner or host loop).
    The returned coroutine function may be invoked on any loop, normally the
    registry loop (the SDK's dispatcher runs progress handlers there): it
    runs `callback` on the owning loop, in a copy of the `contextvars`
    context captured now, awaits it there if it returns an awaitable, and
    waits for it (up to `timeout`). Exceptions are logged and never reach
    the transport. If the owning loop is gone, the invocation is dropped
    with a warning.

    Args:
      callback: A sync or async callable.
      timeout: Seconds the invoker waits for one invocation; on expiry the
        invocation is cancelled on the owning loop and logged. None waits
        indefinitely.

    Returns:
      An async callable with the callback's parameters.

    Raises:
      RegistryLoopError (CALLBACK_OWNER): No loop is running in this
        thread, or this is the registry thread.
    """
    if self.is_registry_thread():
      raise RegistryLoopError(
          RegistryLoopErrorReason.CALLBACK_OWNER,
          'User callbacks may not be bound to the registry loop.',
      )
    try:
      owner = asyncio.get_running_loop()
    except RuntimeError:
      raise RegistryLoopError(
          RegistryLoopErrorReason.CALLBACK_OWNER,
          'marshal_callback() needs a running loop to marshal back to.',
      ) from None
    captured = contextvars.copy_context()
    name = getattr(callback, '__qualname__', repr(callback))

    async def invoke_on_owner(*args: _P.args, **kwargs: _P.kwargs) -> None:
      try:
        result = callback(*args, **kwargs)
        if inspect.isawaitable(result):
          await result
      except Exception:  # pylint: disable=broad-exception-caught
        logger.exception('Callback %s raised; ignored.', name)

    async def marshalled(*args: _P.args, **kwargs: _P.kwargs) -> None:
      try:
        current: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
      except RuntimeError:
        current = None
      if current is owner:
        await invoke_on_owner(*args, **kwargs)
        return
      try:
        future = asyncio.run_coroutine_threadsafe(
            _in_context(captured.copy(), invoke_on_owner(*args, **kwargs)),
            owner,
        )
      except RuntimeError:  # The owning loop is closed.
        logger.warning('Callback %s dropped: its loop is closed.', name)
        return
      waiter = asyncio.wrap_future(future)
      try:
        await asyncio.wait_for(waiter, timeout)
      except TimeoutError:
        logger.warning(
            'Callback %s did not finish within %s s; cancelled.', name, timeout
        )

    return marshalled


def _remaining(deadline: float) -> float:
  return max(0.0, deadline - time.monotonic())


def _consume(future: asyncio.Future[Any]) -> None:
  """Marks a future's exception retrieved, to avoid a spurious log."""
  if not future.cancelled():
    future.exception()


async def _logged(hook: Callable[[], Awaitable[None]]) -> None:
  try:
    await hook()
  except Exception:  # pylint: disable=broad-exception-caught
    logger.exception('Registry shutdown hook failed.')


def _in_context(
    context: contextvars.Context, coro: Coroutine[Any, Any, _T]
) -> Coroutine[Any, Any, _T]:
  """Returns a coroutine that runs `coro` as a task in `context`."""

  async def run() -> _T:
    task = asyncio.get_running_loop().create_task(coro, context=context)
    try:
      return await asyncio.shield(task)
    except asyncio.CancelledError:
      task.cancel()
      raise

  return run()
