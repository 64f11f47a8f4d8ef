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

"""The Runner's entry points on an app-enabled Runner.

A Runner is app-enabled when its agent tree holds a registry toolset
(`McpAppBindingRegistry.toolset`) whose profile is bound. On such a Runner
`run_async` (and so `run_debug` and the worker of `run()`) owns the Session
for the new-message append and the whole turn, `rewind_async` owns it for
its read, compute and write, a reentrant `run()` is refused before its
worker thread starts, and `run_live` is refused before it reads anything.
On any other Runner every hook is a pass-through. A caller that delivers
a turn under a `TurnPermit` (`permitted_turn`) has the turn revalidate it
once the Session is owned, before the turn runs anything. Design:
docs/design/session-coordination.md.

Usage (in `runners.py`):

  @_coordination.coordinated
  async def run_async(self, *, user_id, session_id, ...): ...
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from collections.abc import Callable
from collections.abc import Iterator
import contextlib
import contextvars
import functools
import inspect
import sys
from typing import Any
from typing import Optional
from typing import Protocol
from typing import TypeVar

from ..contracts.scope import SessionKey
from .coordinator import owned_here
from .coordinator import Ownership
from .coordinator import session_coordinator
from .errors import CoordinationError
from .errors import CoordinationErrorReason

_F = TypeVar('_F', bound=Callable[..., Any])

_REGISTRY_TOOLSET_MODULE = 'google.adk.mcp_apps.binding.registry_toolset'


class TurnPermit(Protocol):
  """A protected permit a Runner turn revalidates once it owns its Session.

  The channel that accepted a View's `ui/message` mints one and delivers
  the turn under it (`permitted_turn`); `run_async` claims it for its
  Session and revalidates it after acquisition, before any callback or
  append.
  """

  @property
  def session(self) -> SessionKey:
    """The Session whose turn the permit admits."""
    ...

  def claim(self) -> bool:
    """Takes the permit for one turn; False once a turn took it."""
    ...

  async def revalidate(
      self, new_message: Any
  ) -> contextlib.AbstractContextManager[Any]:
    """Checks the permit against what holds now, for `new_message`.

    Returns:
      The scope the turn runs in (its admission).

    Raises:
      Exception: The permit is stale: the turn runs nothing.
    """
    ...


_turn_permit: contextvars.ContextVar[Optional[TurnPermit]] = (
    contextvars.ContextVar('adk_mcp_apps_turn_permit', default=None)
)


@contextlib.contextmanager
def permitted_turn(permit: TurnPermit) -> Iterator[TurnPermit]:
  """Delivers the Runner turns started in the block under `permit`.

  Only the first turn on the permit's Session claims it; a nested Runner
  on another Session runs as it would without it.
  """
  token = _turn_permit.set(permit)
  try:
    yield permit
  finally:
    try:
      _turn_permit.reset(token)
    except ValueError:
      pass  # Closed from another context.


async def _permit_scope(
    runner: Any, kwargs: dict[str, Any]
) -> Optional[contextlib.AbstractContextManager[Any]]:
  """The scope of a turn delivered under a permit (revalidated now)."""
  permit = _turn_permit.get()
  if permit is None:
    return None
  key = _session_key(runner, kwargs.get('user_id'), kwargs.get('session_id'))
  if key != permit.session or not permit.claim():
    return None  # Another Session's turn, or a later one: not the permit's.
  return await permit.revalidate(kwargs.get('new_message'))


def _agents(root: Any) -> list[Any]:
  seen: set[int] = set()
  pending, found = [root], []
  while pending:
    agent = pending.pop()
    if agent is None or id(agent) in seen:
      continue
    seen.add(id(agent))
    found.append(agent)
    pending.extend(getattr(agent, 'sub_agents', None) or ())
  return found


def app_enabled(runner: Any) -> bool:
  """Whether the Runner's agent tree reaches a profile-bound toolset."""
  # No registry toolset exists unless its module was imported, and
  # importing it here would pull the MCP SDK into core-only installs.
  module = sys.modules.get(_REGISTRY_TOOLSET_MODULE)
  if module is None:
    return False
  toolset_type = module.RegistryToolset
  for agent in _agents(getattr(runner, 'agent', None)):
    tools = getattr(agent, 'tools', None)
    if not isinstance(tools, list):
      continue
    for tool in tools:
      if not isinstance(tool, toolset_type):
        continue
      try:
        # `current()` resolves the registry's installed proxy; a handle
        # whose registry is not started or is closed resolves nothing.
        if tool.current().profile_bound:
          return True
      except Exception:  # pylint: disable=broad-except
        continue  # Not started or shut down: it serves nothing.
  return False


def _session_key(
    runner: Any, user_id: Optional[str], session_id: Optional[str]
) -> Optional[SessionKey]:
  app_name = getattr(runner, 'app_name', None)
  if not (app_name and user_id and session_id):
    return None
  if not all(isinstance(v, str) for v in (app_name, user_id, session_id)):
    return None
  return SessionKey(app_name, user_id, session_id)


def _coordinated_key(
    runner: Any, kwargs: dict[str, Any]
) -> Optional[SessionKey]:
  if not app_enabled(runner):
    return None
  return _session_key(runner, kwargs.get('user_id'), kwargs.get('session_id'))


def coordinated(method: _F) -> _F:
  """Makes a Runner entry point own its Session on an app-enabled Runner.

  Works on an async generator method (`run_async`) and on a coroutine
  method (`rewind_async`) taking `user_id` and `session_id` by keyword.
  Started by code that already owns the Session, it raises
  `CoordinationError` (`SAME_SESSION_REENTRY`) before waiting.
  """
  operation = f'Runner.{method.__name__}'
  if inspect.isasyncgenfunction(method):

    @functools.wraps(method)
    async def turn(
        self: Any, *args: Any, **kwargs: Any
    ) -> AsyncGenerator[Any, None]:
      key = _coordinated_key(self, kwargs)
      async with contextlib.AsyncExitStack() as stack:
        ownership: Optional[Ownership] = None
        if key is not None:
          ownership = await stack.enter_async_context(
              session_coordinator().owned(key, operation)
          )
        # Owned now: a permit is revalidated before the turn runs anything.
        scope = await _permit_scope(self, kwargs)
        if scope is not None:
          stack.enter_context(scope)
        agen = method(self, *args, **kwargs)
        try:
          async for item in agen:
            yield item
        finally:
          if ownership is not None:
            # Whoever closes the turn owns it until release: a caller
            # that dropped it is free to queue for the Session again.
            ownership.transfer_here()
          await agen.aclose()

    return turn  # type: ignore[return-value]

  @functools.wraps(method)
  async def call(self: Any, *args: Any, **kwargs: Any) -> Any:
    key = _coordinated_key(self, kwargs)
    if key is None:
      return await method(self, *args, **kwargs)
    async with session_coordinator().owned(key, operation):
      return await method(self, *args, **kwargs)

  return call  # type: ignore[return-value]


def refuse_reentrant_run(
    runner: Any, user_id: Optional[str], session_id: Optional[str]
) -> None:
  """Refuses `run()` on a Session the caller owns, before any thread starts.

  Raises:
    CoordinationError: `SAME_SESSION_REENTRY`.
  """
  # Gated like `run_async`: on a Runner that is not app-enabled its
  # worker's turn never waits at the coordinator, so nothing can deadlock.
  if not app_enabled(runner):
    return
  key = _session_key(runner, user_id, session_id)
  if key is not None and owned_here(key) is not None:
    raise CoordinationError(
        CoordinationErrorReason.SAME_SESSION_REENTRY,
        'Runner.run',
        'the calling context owns this Session; its worker thread would'
        ' wait for the caller forever',
    )


def refuse_live(runner: Any) -> None:
  """Refuses `run_live` on an app-enabled Runner, before it reads anything.

  Raises:
    CoordinationError: `LIVE_NOT_SUPPORTED`.
  """
  if app_enabled(runner):
    raise CoordinationError(
        CoordinationErrorReason.LIVE_NOT_SUPPORTED,
        'Runner.run_live',
        'live sessions are outside the MCP Apps host contract',
    )
