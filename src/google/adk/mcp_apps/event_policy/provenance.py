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

"""Provenance: admitted once per operation, read by the event finalizer.

An operation (a Runner invocation, a rewind, a Session API write, a View's
direct call) is admitted with one immutable `Provenance`. The finalizer
stamps it on every Event the operation appends: from the innermost
`admitted` scope in the current context, else from the invocation the
Event names, else as an unscoped `system` write.

Usage:

  with admitted(SESSION_API):
    await session_service.append_event(session, event)
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import threading
from typing import Any
from typing import AsyncGenerator
from typing import Awaitable
from typing import Callable
from typing import Final
from typing import Iterator
from typing import Optional
from typing import TypeVar

from typing_extensions import ParamSpec

from .callback_scope import refuse_reentry
from .protected_fields import Audience
from .protected_fields import Emitter
from .protected_fields import ImmediateCaller
from .protected_fields import InvocationOrigin


@dataclasses.dataclass(frozen=True)
class Provenance:
  """The protected values stamped on every Event of one operation.

  Attributes:
    invocation_origin: Where the operation entered.
    immediate_caller: Who calls tools in it; `None` means the model.
    emitter: Who writes its Events when no agent flow does.
    audience: The audience the core selects for its Events.
  """

  invocation_origin: InvocationOrigin
  immediate_caller: Optional[ImmediateCaller] = None
  emitter: Optional[Emitter] = None
  audience: Optional[Audience] = None


USER_TURN: Final = Provenance('user')
"""A turn started by a user message."""

APP_MESSAGE_TURN: Final = Provenance('mcp_app')
"""A turn started by a View's accepted `ui/message`."""

APP_OPERATION: Final = Provenance(
    'mcp_app', immediate_caller='app', emitter='app', audience='app_audit'
)
"""A View's direct `tools/call` or `resources/read`."""

HOST_RENDER: Final = Provenance(
    'mcp_app', immediate_caller='host', emitter='host', audience='app_audit'
)
"""The host's own bootstrap render of a View."""

SYSTEM: Final = Provenance('system', emitter='system')
"""The core's own writes: rewind, compaction, reconciliation."""

SESSION_API: Final = Provenance('system', emitter='session-api')
"""First-party Session API create, import and patch."""

UNSCOPED: Final = Provenance('system')
"""An append outside every admitted operation (unsupported, still
stamped)."""

_current: contextvars.ContextVar[Optional[Provenance]] = contextvars.ContextVar(
    'adk_mcp_apps_provenance', default=None
)
_invocations: dict[str, Provenance] = {}
_invocations_lock = threading.Lock()


@dataclasses.dataclass
class _RunnerCall:
  """One Runner entry point call: what it admits and the ids it bound."""

  provenance: Provenance
  bound: list[str] = dataclasses.field(default_factory=list)


_runner_call: contextvars.ContextVar[Optional[_RunnerCall]] = (
    contextvars.ContextVar('adk_mcp_apps_runner_call', default=None)
)


@contextlib.contextmanager
def admitted(provenance: Provenance) -> Iterator[Provenance]:
  """Admits an operation in the current context until the block exits."""
  token = _current.set(provenance)
  try:
    yield provenance
  finally:
    _current.reset(token)


_P = ParamSpec('_P')
_R = TypeVar('_R')


def admitted_operation(
    provenance: Provenance,
) -> Callable[[Callable[_P, Awaitable[_R]]], Callable[_P, Awaitable[_R]]]:
  """Decorates a coroutine function: each call is one operation admitted
  with `provenance` (see `admitted`)."""

  def decorate(
      operation: Callable[_P, Awaitable[_R]],
  ) -> Callable[_P, Awaitable[_R]]:
    @functools.wraps(operation)
    async def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
      with admitted(provenance):
        return await operation(*args, **kwargs)

    return run

  return decorate


def current_provenance() -> Optional[Provenance]:
  """The innermost admitted operation of the current context, if any."""
  return _current.get()


def bind_invocation(invocation_id: str, provenance: Provenance) -> None:
  """Records the provenance of a live invocation (once; a rebind with
  another value raises `ValueError`)."""
  with _invocations_lock:
    bound = _invocations.setdefault(invocation_id, provenance)
  if bound != provenance:
    raise ValueError(f'invocation {invocation_id!r} is already admitted')


def release_invocation(invocation_id: str) -> None:
  """Forgets a finished invocation."""
  with _invocations_lock:
    _invocations.pop(invocation_id, None)


def invocation_provenance(invocation_id: str) -> Optional[Provenance]:
  """The provenance a live invocation was admitted with, if any."""
  with _invocations_lock:
    return _invocations.get(invocation_id)


def operation_provenance(invocation_id: str) -> Provenance:
  """The provenance an execution context reports: the one its invocation
  was admitted with, else the innermost admitted scope, else `UNSCOPED`."""
  bound = invocation_provenance(invocation_id) if invocation_id else None
  return bound or current_provenance() or UNSCOPED


def admit_invocation(invocation_id: str) -> Provenance:
  """Binds a new invocation of the current Runner call, once.

  The provenance is the innermost admitted scope, else that of an enclosing
  Runner call (a nested Runner inside a tool belongs to its caller's
  operation), else `USER_TURN`. Outside a Runner call (see
  `admits_invocations`) nothing is bound, since nothing would release it.
  """
  call = _runner_call.get()
  if call is None:
    return current_provenance() or USER_TURN
  provenance = current_provenance() or call.provenance
  bind_invocation(invocation_id, provenance)
  if invocation_id not in call.bound:
    call.bound.append(invocation_id)
  return provenance


_AsyncGenFn = Callable[..., AsyncGenerator[Any, None]]


def admits_invocations(method: _AsyncGenFn) -> _AsyncGenFn:
  """Makes a Runner entry point one admitted operation.

  Every invocation it creates is bound by `admit_invocation` and released
  when the entry point's generator ends, however it ends. Started from a
  restricted callback for the same Session, it raises `EventPolicyError`
  (`SAME_SESSION_REENTRY`) before running anything.
  """

  @functools.wraps(method)
  async def entry(*args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
    # A restricted callback may not start a turn on its own Session.
    refuse_reentry(
        getattr(args[0], 'app_name', None) if args else None,
        kwargs.get('user_id'),
        kwargs.get('session_id'),
        f'Runner.{method.__name__}',
    )
    enclosing = _runner_call.get()
    inherited = enclosing.provenance if enclosing is not None else USER_TURN
    call = _RunnerCall(current_provenance() or inherited)
    token = _runner_call.set(call)
    agen = method(*args, **kwargs)
    try:
      async for item in agen:
        yield item
    finally:
      try:
        await agen.aclose()
      finally:
        for invocation_id in call.bound:
          release_invocation(invocation_id)
        try:
          _runner_call.reset(token)
        except ValueError:
          pass  # Closed from another context (a finalizer task).

  return entry


def provenance_for(invocation_id: str) -> Provenance:
  """The provenance the finalizer stamps on an Event of `invocation_id`."""
  scoped = _current.get()
  if scoped is not None:
    return scoped
  if invocation_id:
    bound = invocation_provenance(invocation_id)
    if bound is not None:
      return bound
  return UNSCOPED
