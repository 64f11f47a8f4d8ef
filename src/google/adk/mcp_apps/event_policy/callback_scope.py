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

"""Restricted callbacks and the same-session reentry they may not make.

User code that runs on an app path (a confirmation predicate, the event
callback on an audit Event, a `tool_filter`, `header_provider` or progress
callback, a profile-bound UI call's tool callbacks) runs inside
`restricted_callback`. While that block is open, the
host's own entry points for the same Session (a Runner entry point, a
session service's `append_event`, an app-safe hold acquisition) call
`refuse_reentry`, which raises before anything waits or is written. Other
Sessions proceed. A task the callback spawned that acts after the block
closed is not refused. Design: docs/design/restricted-callbacks.md.

Usage:

  with restricted_callback(key, CallbackFamily.HEADER_PROVIDER) as scope:
    headers = provider(context)
  if scope.refused:
    ...  # the callback tried a reentry (and perhaps swallowed the error)
"""

from __future__ import annotations

from collections.abc import Iterator
import contextlib
import contextvars
import enum
from typing import Optional
from typing import TYPE_CHECKING

from .errors import EventPolicyError
from .errors import EventPolicyReason

if TYPE_CHECKING:
  from ..contracts.scope import SessionKey


class CallbackFamily(enum.Enum):
  """The kinds of user code that run restricted on an app path."""

  CONFIRMATION = 'confirmation'
  EVENT_POLICY = 'event_policy'
  TOOL_FILTER = 'tool_filter'
  HEADER_PROVIDER = 'header_provider'
  PROGRESS = 'progress'
  TOOL_CALLBACK = 'tool_callback'
  """A profile-bound UI call's before-tool, after-tool or tool-error
  callback (`tool_callbacks.guarded_tool_callbacks`)."""


class RestrictedCallback:
  """One open restricted-callback block: whose Session, and what it tried.

  Attributes:
    session: The Session the callback runs for.
    family: Which kind of callback.
    refused: What the callback tried and was refused, in order.
    open: True until the block exits.
  """

  def __init__(self, session: SessionKey, family: CallbackFamily) -> None:
    self.session = session
    self.family = family
    self.refused: list[str] = []
    self.open = True


_current: contextvars.ContextVar[Optional[RestrictedCallback]] = (
    contextvars.ContextVar('adk_mcp_apps_restricted_callback', default=None)
)


@contextlib.contextmanager
def restricted_callback(
    session: SessionKey, family: CallbackFamily
) -> Iterator[RestrictedCallback]:
  """Runs the block as a restricted callback for `session`."""
  scope = RestrictedCallback(session, family)
  token = _current.set(scope)
  try:
    yield scope
  finally:
    scope.open = False
    _current.reset(token)


@contextlib.contextmanager
def unrestricted() -> Iterator[None]:
  """Runs the block as host code, outside any restricted callback.

  For the host's own work inside a restricted span: a profile-bound UI
  tool runs between its restricted callbacks and holds its generation.
  """
  token = _current.set(None)
  try:
    yield
  finally:
    _current.reset(token)


def current_restricted_callback() -> Optional[RestrictedCallback]:
  """The open restricted callback of the current context, if any."""
  scope = _current.get()
  return scope if scope is not None and scope.open else None


def refuse_reentry(
    app_name: Optional[str],
    user_id: Optional[str],
    session_id: Optional[str],
    what: str,
) -> None:
  """Raises if a restricted callback for this Session is running here.

  Args:
    app_name: The Session's app name.
    user_id: The Session's user id.
    session_id: The Session id.
    what: The entry point, for the error and the scope's record.

  Raises:
    EventPolicyError: `SAME_SESSION_REENTRY`; nothing was done.
  """
  scope = current_restricted_callback()
  if scope is None:
    return
  key = scope.session
  if (key.app_name, key.user_id, key.session_id) != (
      app_name,
      user_id,
      session_id,
  ):
    return
  scope.refused.append(what)
  raise EventPolicyError(
      EventPolicyReason.SAME_SESSION_REENTRY,
      f'{what} on the Session a {scope.family.value} callback is running'
      ' for; a restricted callback may not re-enter its own Session',
  )
