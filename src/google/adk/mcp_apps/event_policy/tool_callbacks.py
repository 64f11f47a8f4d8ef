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

"""The tool callbacks of a profile-bound UI call: restricted, state-checked.

ADK's tool caller runs such a call inside `guarded_tool_callbacks`: its
callbacks are restricted callbacks (a reentry into their own Session is
refused), the tool itself runs unrestricted (`callback_scope.unrestricted`),
and a live Session state key changed other than through `State` is undone
and fails the call. Design: docs/decisions/issue21-bat.md.

Usage:

  with guarded_tool_callbacks(tool_context, on_failure=discard):
    ...  # before-tool callbacks, the tool, after-tool callbacks
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import MutableMapping
import contextlib
from typing import Any
from typing import Optional

from ..contracts.scope import SessionKey
from .callback_scope import CallbackFamily
from .callback_scope import restricted_callback
from .errors import EventPolicyError
from .errors import EventPolicyReason

_ABSENT = object()


def _out_of_api(
    before: Mapping[str, Any],
    live: Mapping[str, Any],
    delta: Mapping[str, Any],
) -> list[str]:
  """The live keys changed other than through `State`, in key order.

  `State` puts the very object it records into the live state, so a
  changed key is explained when this call's delta (or, in a ledgered batch,
  some sibling's record) holds that object. A removed key never is.
  """
  recorded_in_batch: Optional[Callable[[str, Any], bool]] = getattr(
      delta, 'recorded_in_batch', None
  )
  changed = [
      key
      for key in {**before, **live}
      if live.get(key, _ABSENT) is not before.get(key, _ABSENT)
  ]
  out: list[str] = []
  for key in changed:
    value = live.get(key, _ABSENT)
    if value is _ABSENT:
      out.append(key)
    elif delta.get(key, _ABSENT) is value:
      continue
    elif recorded_in_batch is not None and recorded_in_batch(key, value):
      continue
    else:
      out.append(key)
  return out


def _undo(
    keys: list[str],
    before: Mapping[str, Any],
    live: MutableMapping[str, Any],
    delta: Mapping[str, Any],
) -> None:
  for key in keys:
    restored = delta.get(key, before.get(key, _ABSENT))
    if restored is _ABSENT:
      live.pop(key, None)
    else:
      live[key] = restored


@contextlib.contextmanager
def guarded_tool_callbacks(
    tool_context: Any, on_failure: Optional[Callable[[], None]] = None
) -> Iterator[None]:
  """Runs one profile-bound UI call's callbacks restricted and checked.

  Args:
    tool_context: The call's `ToolContext` (its Session, its actions).
    on_failure: Called before a refusal is raised (the call's UI result is
      then never sealed).

  Raises:
    EventPolicyError: On a normal exit: `SAME_SESSION_REENTRY` when a
      callback tried to re-enter the Session (even if it swallowed the
      refusal), else `OUT_OF_API_STATE_WRITE` when a callback changed the
      live state other than through `State` (undone first). An exception
      leaving the block propagates as it is (direct writes still undone).
  """
  session = tool_context.session
  live: MutableMapping[str, Any] = session.state
  delta: Mapping[str, Any] = tool_context.actions.state_delta
  before = dict(live)
  key = SessionKey(session.app_name, session.user_id, session.id)
  with restricted_callback(key, CallbackFamily.TOOL_CALLBACK) as scope:
    try:
      yield
    finally:
      out = _out_of_api(before, live, delta)
      _undo(out, before, live, delta)
  refusal: Optional[EventPolicyError] = None
  if scope.refused:
    refusal = EventPolicyError(
        EventPolicyReason.SAME_SESSION_REENTRY,
        f'A tool callback of UI call {tool_context.function_call_id!r} tried'
        f' {", ".join(scope.refused)} on its own Session',
    )
  elif out:
    refusal = EventPolicyError(
        EventPolicyReason.OUT_OF_API_STATE_WRITE,
        f'A tool callback of UI call {tool_context.function_call_id!r} wrote'
        f' Session state {out!r} directly; only `State` writes it',
        fields=('state_delta',),
    )
  if refusal is not None:
    if on_failure is not None:
      on_failure()
    raise refusal
