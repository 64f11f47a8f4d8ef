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


"""A `ClientSession` that lives on a `RegistryEventLoop`: a test helper.

The registry's own connections are pooled on its loop by `loop_routing`;
this lighter owner lets the registry loop's tests drive a bare session on it.
It opens a transport and a `ClientSession` inside one resident task on the
registry loop (anyio requires a task group to be exited by the task that
entered it) and exposes the session's operations as coroutines callable
from any loop.

Example:

  async with LoopBoundSession(registry, lambda: stdio_client(p)) as session:
    await session.initialize()
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
import contextlib
import contextvars
import logging
from types import TracebackType
from typing import Any
from typing import TypeVar

from google.adk.dependencies._mcp import ClientSession
from google.adk.dependencies._mcp import types
from google.adk.mcp_apps.binding.registry_loop import DEFAULT_CANCEL_DRAIN_TIMEOUT
from google.adk.mcp_apps.binding.registry_loop import RegistryEventLoop
from google.adk.mcp_apps.binding.registry_loop import RegistryLoopErrorReason
from google.adk.mcp_apps.binding.registry_loop import suppress_loop_errors

logger = logging.getLogger(__name__)

_T = TypeVar('_T')


def _consume(future: asyncio.Future[Any]) -> None:
  """Marks a future's exception retrieved, to avoid a spurious log."""
  if not future.cancelled():
    future.exception()


class LoopBoundSessionError(Exception):
  """Base class of `LoopBoundSession` errors."""


class LoopBoundSessionClosedError(LoopBoundSessionError):
  """The session is not open: never opened, closed, or its transport ended.

  Attributes:
    cause: The transport or session failure that ended it, if any.
  """

  def __init__(self, message: str, cause: BaseException | None = None):
    super().__init__(message)
    self.cause = cause


TransportStreams = tuple[Any, ...]
"""What a transport context manager yields; the first two are the streams."""

TransportFactory = Callable[
    [], contextlib.AbstractAsyncContextManager[TransportStreams]
]
"""Makes a fresh transport context manager, e.g. `lambda: stdio_client(p)`."""


class LoopBoundSession:
  """An MCP `ClientSession` that lives on the registry loop.

  Opening enters the transport and the session inside one resident task on
  the registry loop (its `AsyncExitStack` never leaves that task), so the
  connection survives the death of whichever loop opened it. Each operation
  is a coroutine usable from any loop: it runs on the registry loop through
  `RegistryEventLoop.run`, and a `progress_callback` is marshalled back to
  the caller's loop. Closing (or `RegistryEventLoop.close()`) exits the
  stack on the registry loop.

  Transport-agnostic: `transport_factory` is called on the registry loop and
  must return an async context manager yielding `(read, write, ...)`.

  Session-level callbacks given in `session_kwargs` (logging, message
  handler) run on the registry loop; only ADK-internal, loop-neutral code
  belongs there. App-safe connections pass no input-request callbacks.

  Example:
    async with LoopBoundSession(
        registry_loop, lambda: stdio_client(params)
    ) as session:
      await session.initialize()
      result = await session.call_tool('open_view', {})
  """

  def __init__(
      self,
      registry_loop: RegistryEventLoop,
      transport_factory: TransportFactory,
      *,
      session_kwargs: Mapping[str, Any] | None = None,
      session_factory: Callable[..., ClientSession] = ClientSession,
  ):
    """Creates the owner; nothing is opened until `open()`.

    Args:
      registry_loop: The started registry loop the session lives on.
      transport_factory: Makes the transport context manager.
      session_kwargs: Keyword arguments for the session (timeouts,
        `client_info`, `extensions`, ...).
      session_factory: Builds the session from `(read, write,
        **session_kwargs)`; `ClientSession` or a subclass.
    """
    self._registry_loop = registry_loop
    self._transport_factory = transport_factory
    self._session_kwargs = dict(session_kwargs or {})
    self._session_factory = session_factory
    self._session: ClientSession | None = None
    self._owner: asyncio.Task[None] | None = None
    self._close_requested: asyncio.Event | None = None
    self._failure: BaseException | None = None
    self._opened = False
    self._closed = False
    self._remove_hook: Callable[[], None] | None = None

  @property
  def is_open(self) -> bool:
    """Whether the session is open and its transport alive."""
    return self._session is not None and not self._closed

  @property
  def failure(self) -> BaseException | None:
    """The failure that ended the transport, if it ended on its own."""
    return self._failure

  async def __aenter__(self) -> LoopBoundSession:
    await self.open()
    return self

  async def __aexit__(
      self,
      exc_type: type[BaseException] | None,
      exc: BaseException | None,
      tb: TracebackType | None,
  ) -> None:
    await self.aclose()

  async def open(self) -> None:
    """Opens the transport and the session on the registry loop.

    Does not initialize: call `initialize()` (or a handshake of your own
    through `execute`).

    Raises:
      LoopBoundSessionError: Already opened once.
      RegistryLoopError: The registry loop is not running.
      Exception: Whatever opening the transport or session raised.
    """
    await self._registry_loop.run(self._open_on_loop)

  async def _open_on_loop(self) -> None:
    if self._opened:
      raise LoopBoundSessionError('A LoopBoundSession opens only once.')
    self._opened = True
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()
    self._close_requested = asyncio.Event()
    owner = loop.create_task(self._own(ready), context=contextvars.Context())
    self._owner = owner
    try:
      await asyncio.shield(ready)
    except asyncio.CancelledError:
      # The opener gave up: take the half-open connection down with it.
      self._close_requested.set()
      await asyncio.wait([owner], timeout=DEFAULT_CANCEL_DRAIN_TIMEOUT)
      raise
    self._remove_hook = self._registry_loop.add_shutdown_hook(
        self._close_on_loop
    )

  async def _own(self, ready: asyncio.Future[None]) -> None:
    """The resident task: holds the exit stack from open to close."""
    assert self._close_requested is not None
    try:
      async with contextlib.AsyncExitStack() as stack:
        streams = await stack.enter_async_context(self._transport_factory())
        session = await stack.enter_async_context(
            self._session_factory(
                streams[0], streams[1], **self._session_kwargs
            )
        )
        self._session = session
        ready.set_result(None)
        await self._close_requested.wait()
    except BaseException as error:  # pylint: disable=broad-exception-caught
      if isinstance(error, (KeyboardInterrupt, SystemExit)):
        raise
      # Ends the resident task either way; nobody awaits its exception.
      if not ready.done():
        ready.set_exception(error)
        ready.add_done_callback(_consume)
      elif not self._close_requested.is_set():
        self._failure = error
        logger.warning('MCP session transport ended: %r', error)
    finally:
      self._closed = True
      self._session = None

  async def aclose(self) -> None:
    """Closes the session and its transport on the registry loop.

    Idempotent; a no-op when the registry loop has already closed (its
    shutdown closed the session).
    """
    with suppress_loop_errors(RegistryLoopErrorReason.CLOSED):
      await self._registry_loop.run(self._close_on_loop)

  async def _close_on_loop(self) -> None:
    if self._remove_hook is not None:
      self._remove_hook()
      self._remove_hook = None
    self._opened = True  # A never-opened session stays unopenable.
    if self._close_requested is not None:
      self._close_requested.set()
    owner = self._owner
    if owner is not None and not owner.done():
      await asyncio.shield(owner)
    self._closed = True

  async def execute(
      self, operation: Callable[[ClientSession], Awaitable[_T]]
  ) -> _T:
    """Runs `operation(session)` on the registry loop, from any loop.

    The hook for operations not wrapped here (a handshake, a paginated
    listing, a bootstrap read). `operation` runs on the registry thread, so
    it must not be user code.

    Args:
      operation: An async function of the live session.

    Returns:
      What `operation` returned.

    Raises:
      LoopBoundSessionClosedError: The session is not open.
    """

    async def on_loop() -> _T:
      session = self._session
      if session is None or self._closed:
        raise LoopBoundSessionClosedError(
            'The MCP session is not open.', self._failure
        )
      return await operation(session)

    return await self._registry_loop.run(on_loop)

  async def initialize(self) -> types.InitializeResult:
    """Runs the legacy `initialize` handshake on the registry loop."""
    return await self.execute(lambda session: session.initialize())

  async def list_tools(
      self, *, params: types.PaginatedRequestParams | None = None
  ) -> types.ListToolsResult:
    """Lists one page of tools on the registry loop."""
    return await self.execute(lambda session: session.list_tools(params=params))

  async def read_resource(
      self, uri: str, **kwargs: Any
  ) -> types.ReadResourceResult | types.InputRequiredResult:
    """Reads a resource on the registry loop (see `ClientSession`)."""
    return await self.execute(
        lambda session: session.read_resource(uri, **kwargs)
    )

  async def call_tool(
      self,
      name: str,
      arguments: dict[str, Any] | None = None,
      *,
      read_timeout_seconds: float | None = None,
      progress_callback: (
          Callable[[float, float | None, str | None], Awaitable[None] | None]
          | None
      ) = None,
      **kwargs: Any,
  ) -> Any:
    """Calls a tool on the registry loop.

    Args:
      name: The tool's native name.
      arguments: Its arguments.
      read_timeout_seconds: The per-request read timeout.
      progress_callback: Sync or async `(progress, total, message)`; runs on
        the calling loop, never on the registry thread. Its exceptions are
        logged and do not affect the call.
      **kwargs: Passed to `ClientSession.call_tool`.

    Returns:
      The SDK's result (`CallToolResult` unless `allow_input_required`).
    """
    marshalled = (
        None
        if progress_callback is None
        else self._registry_loop.marshal_callback(progress_callback)
    )

    async def on_progress(
        progress: float, total: float | None, message: str | None
    ) -> None:
      assert marshalled is not None
      await marshalled(progress, total, message)

    return await self.execute(
        lambda session: session.call_tool(
            name,
            arguments,
            read_timeout_seconds=read_timeout_seconds,
            progress_callback=on_progress if marshalled else None,
            **kwargs,
        )
    )
