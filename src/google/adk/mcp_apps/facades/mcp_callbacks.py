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


"""The governed MCP-owned callbacks of an app path.

On a direct app call, read or bootstrap, a toolset's callable
`tool_filter`, its `header_provider` and its progress callback or factory
run here: with a `ReadonlyCallbackContext` (never a live ADK context),
inside `restricted_callback`, and failing closed when the callback raises,
reaches for anything the facade does not expose, tries to change it, or
tries to re-enter its own Session (even if it caught the refusal). The
model path keeps upstream's behaviour and never comes here. Design:
docs/decisions/issue20-mcb.md.

Example:

  callbacks = AppPathCallbacks.from_spec(spec, readonly_context)
  await call_app_tool(hold, 'refresh', {}, view_server_id='crm',
                      target_server_id='crm', callbacks=callbacks)
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
import dataclasses
import inspect
import logging
from typing import Any
from typing import NoReturn
from typing import Optional
from typing import Protocol
from typing import Union

from ...dependencies._mcp import types
from ...tools.mcp_tool.mcp_tool import McpTool
from ...utils._sync_runner import _is_async_callable
from ..errors import DenialReason
from ..errors import McpAppVisibilityError
from ..event_policy.callback_scope import CallbackFamily
from ..event_policy.callback_scope import restricted_callback
from .callback_context import ReadonlyCallbackContext
from .errors import FacadeError
from .errors import FacadeErrorReason
from .snapshot import watch_writes

__all__ = [
    'AppPathCallbacks',
    'CatalogEntryTool',
    'GovernedProgress',
    'McpCallbackSpec',
    'governed_filter',
    'governed_headers',
    'governed_progress',
    'run_governed',
]

logger = logging.getLogger('google_adk.' + __name__)

ProgressFn = Callable[[float, Optional[float], Optional[str]], Any]
"""A progress callback: `(progress, total, message)`, sync or async."""


class McpCallbackSpec(Protocol):
  """The MCP-owned callbacks of a toolset (`binding.spec.McpToolsetSpec`)."""

  @property
  def tool_filter(self) -> Any:
    ...

  @property
  def header_provider(self) -> Any:
    ...

  @property
  def progress_callback(self) -> Any:
    ...


async def run_governed(
    family: CallbackFamily,
    context: ReadonlyCallbackContext,
    call: Callable[[], Any],
) -> Any:
  """Runs one user callback restricted, failing closed; what it returned.

  Args:
    family: Which MCP-owned callback it is.
    context: The facade the callback was given (its Session is the one a
      reentry is refused for).
    call: Calls the user code (its result is awaited if awaitable).

  Returns:
    The callback's result.

  Raises:
    FacadeError: `CALLBACK_REENTRY` if it tried a same-session reentry,
      else `CALLBACK_FAILED` if it raised, reached for anything unavailable
      or tried a write; caught refusals count.
  """
  what = family.value
  failure: Optional[Exception] = None
  outcome: Any = None
  with restricted_callback(context.session_key, family) as scope:
    with watch_writes() as writes:
      try:
        outcome = call()
        if inspect.isawaitable(outcome):
          outcome = await outcome
      except Exception as e:  # pylint: disable=broad-exception-caught
        failure = e
  if scope.refused:
    raise FacadeError(
        FacadeErrorReason.CALLBACK_REENTRY,
        f'the {what} callback tried to re-enter its own Session'
        f' ({", ".join(scope.refused)}); it fails closed',
    ) from failure
  if failure is not None:
    raise FacadeError(
        FacadeErrorReason.CALLBACK_FAILED,
        f'the {what} callback failed ({type(failure).__name__}); it fails'
        ' closed',
    ) from failure
  tried = context.mutations + tuple(writes)
  if tried:
    raise FacadeError(
        FacadeErrorReason.CALLBACK_FAILED,
        f'the {what} callback tried to change its read-only context'
        f' ({", ".join(tried)}); it fails closed',
    )
  if context.refused:
    raise FacadeError(
        FacadeErrorReason.CALLBACK_FAILED,
        f'the {what} callback reached for {", ".join(context.refused)};'
        ' it fails closed',
    )
  return outcome


async def governed_headers(
    provider: Callable[..., Any], context: ReadonlyCallbackContext
) -> dict[str, str]:
  """Runs a `header_provider` on an app path; the headers it gave.

  Raises:
    FacadeError: As `run_governed`, or `CALLBACK_FAILED` when the result is
      not a mapping of strings to strings. No session is derived then.
  """
  outcome = await run_governed(
      CallbackFamily.HEADER_PROVIDER, context, lambda: provider(context)
  )
  if outcome is None:
    return {}
  if not isinstance(outcome, Mapping) or not all(
      isinstance(name, str) and isinstance(value, str)
      for name, value in outcome.items()
  ):
    raise FacadeError(
        FacadeErrorReason.CALLBACK_FAILED,
        'the header_provider callback returned something other than a'
        ' mapping of strings; it fails closed',
    )
  return dict(outcome)


class _NoSession:
  """The session manager of a catalog entry a filter inspects: none."""

  def __getattr__(self, name: str) -> NoReturn:
    if name.startswith('__') and name.endswith('__'):
      raise AttributeError(name)
    raise FacadeError(
        FacadeErrorReason.UNAVAILABLE,
        'a tool handed to a tool_filter on an app path has no connection',
    )


class CatalogEntryTool(McpTool):
  """What a `tool_filter` receives on an app path: the declaration's tool.

  An `McpTool` over an independent copy of the fresh admission listing's
  declaration (so `name`, `description`, `_get_declaration()`,
  `raw_mcp_tool`, `_meta` read as upstream's filter expects); it has no
  connection, and running it raises `FacadeError` (`UNAVAILABLE`).
  """

  def __init__(self, declaration: types.Tool) -> None:
    super().__init__(
        mcp_tool=declaration.model_copy(deep=True),
        mcp_session_manager=_NoSession(),  # type: ignore[arg-type]
    )

  async def run_async(self, *, args: Any, tool_context: Any) -> Any:
    del args, tool_context
    raise FacadeError(
        FacadeErrorReason.UNAVAILABLE,
        'a tool handed to a tool_filter on an app path cannot be run',
    )


async def governed_filter(
    predicate: Callable[..., Any],
    tool: McpTool,
    context: ReadonlyCallbackContext,
) -> bool:
  """Runs a callable `tool_filter` on an app path; whether it selects `tool`.

  Raises:
    FacadeError: As `run_governed`; the tool is then not admitted.
  """
  outcome = await run_governed(
      CallbackFamily.TOOL_FILTER, context, lambda: predicate(tool, context)
  )
  return bool(outcome)


class GovernedProgress:
  """A progress callback run notification-only on an app path.

  Each notification runs the user callback restricted (`run_governed`);
  the first failure (a raise, an unavailable access, a write, a reentry)
  is raised to the deliverer, which logs it, and closes this handler: later
  notifications are dropped. The call's result is never affected.

  Attributes:
    failures: The failures, in order (at most one).
    delivered: How many notifications the user callback completed.
  """

  def __init__(
      self, callback: ProgressFn, context: ReadonlyCallbackContext
  ) -> None:
    self._callback = callback
    self._context = context
    self.failures: list[FacadeError] = []
    self.delivered = 0
    self.__qualname__ = getattr(callback, '__qualname__', repr(callback))

  @property
  def closed(self) -> bool:
    """Whether a failure closed the handler."""
    return bool(self.failures)

  async def __call__(
      self, progress: float, total: Optional[float], message: Optional[str]
  ) -> None:
    if self.failures:
      return
    try:
      await run_governed(
          CallbackFamily.PROGRESS,
          self._context,
          lambda: self._callback(progress, total, message),
      )
    except FacadeError as e:
      self.failures.append(e)
      raise
    self.delivered += 1


async def governed_progress(
    callback: Union[ProgressFn, Callable[..., Any], None],
    *,
    tool_name: str,
    context: ReadonlyCallbackContext,
) -> Optional[GovernedProgress]:
  """The app-path progress handler of a toolset's callback or factory.

  A callback is wrapped as is; a factory (a callable that is not async) is
  called once, restricted, as `factory(tool_name,
  callback_context=context)` with the read-only facade instead of a
  `CallbackContext`, and what it returns is wrapped. A factory that fails
  closed (or returns None) leaves the call without progress; the call
  itself goes on (progress is notification-only).
  """
  if callback is None:
    return None
  if _is_async_callable(callback):
    return GovernedProgress(callback, context)
  factory: Callable[..., Any] = callback
  try:
    made = await run_governed(
        CallbackFamily.PROGRESS,
        context,
        lambda: factory(tool_name, callback_context=context),
    )
  except FacadeError as e:
    logger.warning(
        'Progress factory for %r failed closed on an app path: %s',
        tool_name,
        e,
    )
    return None
  if made is None:
    return None
  if not callable(made):
    logger.warning('Progress factory for %r returned no callable.', tool_name)
    return None
  return GovernedProgress(made, context)


@dataclasses.dataclass(frozen=True)
class AppPathCallbacks:
  """A toolset's MCP-owned callbacks, governed, for one app-path operation.

  What `call_app_tool(callbacks=...)` takes (and what a host path's header
  derivation uses). Built per operation with the read-only context of the
  Session it runs for.

  Attributes:
    tool_filter: The toolset's filter: a callable, names, or None.
    header_provider: The toolset's header provider, or None.
    progress_callback: The toolset's progress callback or factory, or None.
    context: The read-only context every callback receives.
  """

  tool_filter: Any
  header_provider: Optional[Callable[..., Any]]
  progress_callback: Any
  context: ReadonlyCallbackContext

  @classmethod
  def from_spec(
      cls,
      spec: McpCallbackSpec,
      context: Union[ReadonlyCallbackContext, Any],
  ) -> AppPathCallbacks:
    """From a toolset spec and the host's live (or read-only) context.

    Raises:
      FacadeError: The context has no Session, or its state is outside the
        snapshot domain.
    """
    if not isinstance(context, ReadonlyCallbackContext):
      context = ReadonlyCallbackContext.from_context(context)
    return cls(
        tool_filter=spec.tool_filter,
        header_provider=spec.header_provider,
        progress_callback=spec.progress_callback,
        context=context,
    )

  async def admit_tool(self, declaration: types.Tool) -> None:
    """Applies the toolset's filter to one admitted declaration.

    Raises:
      McpAppVisibilityError: `POLICY_DENIED`: the filter does not select
        the tool.
      FacadeError: The filter failed closed.
    """
    name = declaration.name
    selected = True
    flt = self.tool_filter
    if isinstance(flt, (list, tuple)):
      selected = name in flt
    elif callable(flt):
      try:
        tool = CatalogEntryTool(declaration)
      except ValueError as e:  # A name ADK reserves for itself.
        raise McpAppVisibilityError(
            name, DenialReason.RESERVED_NAME, str(e)
        ) from e
      selected = await governed_filter(flt, tool, self.context)
    if not selected:
      raise McpAppVisibilityError(
          name,
          DenialReason.POLICY_DENIED,
          "the toolset's tool_filter does not select it",
      )

  async def headers(self) -> dict[str, str]:
    """The governed provider's headers (empty without a provider)."""
    if self.header_provider is None:
      return {}
    return await governed_headers(self.header_provider, self.context)

  async def progress_for(self, tool_name: str) -> Optional[GovernedProgress]:
    """The governed progress handler for one call, or None."""
    return await governed_progress(
        self.progress_callback, tool_name=tool_name, context=self.context
    )
