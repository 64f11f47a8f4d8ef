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
from collections.abc import Awaitable
from collections.abc import Callable
import contextlib
import dataclasses
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
"""Seconds a call waits for its admitted progress callbacks to finish."""

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
      facade = RoutedSession(router.loop, session, guard)
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

  A no-op when the registry loop never started (nothing was pooled) or has
  closed (its shutdown hook closed the pool).

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


class _ProgressGate:
  """Delivers one call's progress to its caller and drains it at the end.

  Lives on the registry loop (single-threaded, so closing is atomic). A
  notification is admitted when its handler starts; the SDK starts each
  handler as a task queued before the response that follows it is delivered,
  so everything the server sent before its response is admitted by then.
  """

  def __init__(
      self,
      deliver: Callable[[float, float | None, str | None], Awaitable[None]],
      timeout: float,
  ):
    self._deliver = deliver
    self._timeout = timeout
    self._open = True
    self._admitted: set[asyncio.Future[None]] = set()

  async def on_progress(
      self, progress: float, total: float | None, message: str | None
  ) -> None:
    if not self._open:
      logger.debug('Progress %s after the terminal result dropped.', progress)
      return
    done = asyncio.get_running_loop().create_future()
    self._admitted.add(done)
    try:
      await self._deliver(progress, total, message)
    finally:
      done.set_result(None)
      self._admitted.discard(done)

  def close(self) -> None:
    self._open = False

  async def drain(self) -> None:
    self._open = False
    pending = [f for f in self._admitted if not f.done()]
    if not pending:
      return
    _, late = await asyncio.wait(pending, timeout=self._timeout)
    if late:
      logger.warning(
          '%d progress callback(s) still running %s s after the result.',
          len(late),
          self._timeout,
      )


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
  ):
    """Wraps a pooled session.

    Args:
      registry_loop: The loop the session lives on.
      session: The pooled `ClientSession`.
      guard: Races a call against the session's transport task; None
        awaits calls directly.
    """
    self._loop = registry_loop
    self._session = session
    self._guard = guard

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

    async def on_loop() -> _T:
      coro = operation(session)
      try:
        if guard is not None:
          result: _T = await guard(coro)
        else:
          result = await coro
      except Exception:
        if progress is not None:
          await progress.drain()
        raise
      except BaseException:
        if progress is not None:
          progress.close()
        raise
      if progress is not None:
        await progress.drain()
      return result

    return await self._loop.run(on_loop)

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
        thread; every invocation admitted before the result has finished
        when this returns. Its exceptions are logged.
      **kwargs: Passed to `ClientSession.call_tool` (`meta`, ...).

    Returns:
      The SDK's result.

    Raises:
      RegistryLoopError (CALLBACK_OWNER): A progress callback given on the
        registry thread, where user code must never run.
    """
    gate = (
        None
        if progress_callback is None
        else _ProgressGate(
            self._loop.marshal_callback(progress_callback),
            PROGRESS_DRAIN_TIMEOUT,
        )
    )
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
