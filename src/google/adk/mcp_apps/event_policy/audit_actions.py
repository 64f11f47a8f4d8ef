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

"""What an `app_audit` Event may carry: its actions and its scope.

`AUDIT_ACTION_RULES` classifies every `EventActions` field. The operation
pipeline screens an audit Event's actions before it appends the Event and
reports the error; the finalizer enforces the same rules on every audit
Event it stamps, without raising. Events of any other audience are left
untouched. Design: docs/decisions/issue18-c.md.

Usage:

  screen = screen_audit_actions(event.actions)
  event.actions = screen.actions
  if screen.error is not None:
    ...  # the operation's outcome is this EventPolicyError
"""

from __future__ import annotations

from collections.abc import Mapping
import dataclasses
import enum
import logging
import threading
import types
from typing import Any
from typing import Final
from typing import Optional
from typing import TYPE_CHECKING

from ...events._internal_metadata import INTERNAL_METADATA_PREFIX
from ...events.event_actions import EventActions
from ...events.ui_widget import UiWidget
from .errors import EventPolicyError
from .errors import EventPolicyReason
from .protected_fields import APP_AUDIT

if TYPE_CHECKING:
  from ...events.event import Event

logger = logging.getLogger('google_adk.' + __name__)


class AuditActionRule(enum.Enum):
  """What happens to an `EventActions` field set on an audit Event."""

  ALLOWED = 'allowed'
  """Kept: the operation's state and artifact effects."""

  FORBIDDEN_CONTROL = 'forbidden_control'
  """Stripped, and the operation fails with a typed policy error."""

  CORE_OWNED = 'core_owned'
  """Only the core sets it, never on an audit Event: stripped, and the
  operation fails with a typed policy error."""

  NORMALIZED = 'normalized'
  """Meaningless on an audit Event: reset to its default, no error."""

  NESTED_WIDGET = 'nested_widget'
  """A nested View's widget: suppressed unless that View was independently
  negotiated for the call (`NEGOTIATED_NESTED_WIDGETS`), no error."""

  NEVER_PERSISTED = 'never_persisted'
  """A request to the user or the model: never stored on an audit Event."""


AUDIT_ACTION_RULES: Final[Mapping[str, AuditActionRule]] = (
    types.MappingProxyType({
        'state_delta': AuditActionRule.ALLOWED,
        'artifact_delta': AuditActionRule.ALLOWED,
        'transfer_to_agent': AuditActionRule.FORBIDDEN_CONTROL,
        'transfer_reason': AuditActionRule.FORBIDDEN_CONTROL,
        'escalate': AuditActionRule.FORBIDDEN_CONTROL,
        'route': AuditActionRule.FORBIDDEN_CONTROL,
        'agent_state': AuditActionRule.FORBIDDEN_CONTROL,
        'end_of_agent': AuditActionRule.FORBIDDEN_CONTROL,
        'rewind_before_invocation_id': AuditActionRule.FORBIDDEN_CONTROL,
        'compaction': AuditActionRule.CORE_OWNED,
        'set_model_response': AuditActionRule.CORE_OWNED,
        'skip_summarization': AuditActionRule.NORMALIZED,
        'render_ui_widgets': AuditActionRule.NESTED_WIDGET,
        'requested_auth_configs': AuditActionRule.NEVER_PERSISTED,
        'requested_tool_confirmations': AuditActionRule.NEVER_PERSISTED,
    })
)
"""The rule of every `EventActions` field on an audit Event. A field the
table does not name is stripped as a forbidden control (fail closed)."""

ORIGIN_SCOPE_METADATA_KEY: Final = (
    INTERNAL_METADATA_PREFIX + 'mcp_apps_origin_isolation_scope'
)
"""The `custom_metadata` key holding an audit Event's originating
`isolation_scope`. Only the finalizer writes it, on every audit Event."""


class NegotiatedNestedWidgets:
  """The nested-View widgets an audit Event may carry, while it is appended.

  An app call whose nested View the host negotiated registers the widget it
  emits before it appends its audit Event and withdraws it once the append
  ended. A widget passes the `NESTED_WIDGET` rule only when its id and
  payload (less the `sealedResultRef` the append stage adds) are the
  registered ones; any other widget on an audit Event is suppressed.
  Process-local and bounded: past `capacity` the oldest entry is dropped.
  """

  def __init__(self, capacity: int = 4096) -> None:
    self._capacity = capacity
    self._lock = threading.Lock()
    self._widgets: dict[str, dict[str, Any]] = {}

  def allow(self, widget: UiWidget) -> None:
    """Lets `widget` onto the audit Event that reports its call."""
    with self._lock:
      self._widgets.pop(widget.id, None)
      self._widgets[widget.id] = _comparable(widget.payload)
      while len(self._widgets) > self._capacity:
        self._widgets.pop(next(iter(self._widgets)))

  def withdraw(self, widget_id: str) -> None:
    """Forgets the widget of a call whose append ended."""
    with self._lock:
      self._widgets.pop(widget_id, None)

  def admits(self, widget: Any) -> bool:
    """Whether `widget` is a negotiated nested widget, as registered."""
    if not isinstance(widget, UiWidget) or widget.provider != 'mcp':
      return False
    with self._lock:
      registered = self._widgets.get(widget.id)
    return registered is not None and registered == _comparable(widget.payload)


def _comparable(payload: Any) -> dict[str, Any]:
  if not isinstance(payload, Mapping):
    return {}
  return {k: v for k, v in payload.items() if k != 'sealedResultRef'}


NEGOTIATED_NESTED_WIDGETS = NegotiatedNestedWidgets()
"""The process's negotiated nested widgets (`NegotiatedNestedWidgets`)."""


@dataclasses.dataclass(frozen=True)
class AuditActionsScreen:
  """The outcome of screening an audit Event's actions.

  Attributes:
    actions: The actions to store: the input's, less every stripped field.
      Kept values are shared with the input, not copied.
    stripped: Every field reset to its default, in table order.
    error: The policy error the operation reports, when a forbidden control
      or a core-owned action was stripped; else `None`.
  """

  actions: EventActions
  stripped: tuple[str, ...]
  error: Optional[EventPolicyError]


def _default(actions: EventActions, name: str) -> Any:
  field = type(actions).model_fields[name]
  return field.get_default(call_default_factory=True)


def _is_set(actions: EventActions, name: str) -> bool:
  """Whether `name` holds anything but its default (`False` counts)."""
  value = getattr(actions, name)
  default = _default(actions, name)
  if default is None:
    return value is not None
  if isinstance(default, dict):
    return bool(value)
  return bool(value != default)


def _rule(name: str) -> AuditActionRule:
  return AUDIT_ACTION_RULES.get(name, AuditActionRule.FORBIDDEN_CONTROL)


def _policy_error(stripped: tuple[str, ...]) -> Optional[EventPolicyError]:
  controls = tuple(
      name
      for name in stripped
      if _rule(name) is AuditActionRule.FORBIDDEN_CONTROL
  )
  owned = tuple(
      name for name in stripped if _rule(name) is AuditActionRule.CORE_OWNED
  )
  if not controls and not owned:
    return None
  reason = (
      EventPolicyReason.FORBIDDEN_CONTROL
      if controls
      else EventPolicyReason.CORE_OWNED_ACTION
  )
  fields = controls + owned
  return EventPolicyError(
      reason,
      'an app_audit Event may not carry ' + ', '.join(fields),
      fields=fields,
  )


def screen_audit_actions(actions: EventActions) -> AuditActionsScreen:
  """Applies `AUDIT_ACTION_RULES` to an audit Event's actions.

  Pure: `actions` is not modified. The operation pipeline calls it before
  it appends the audit Event, stores `screen.actions` and reports
  `screen.error`.

  Args:
    actions: The actions of an `app_audit` Event.

  Returns:
    The actions to store, the fields stripped and the error to report.
  """
  stripped = tuple(
      name
      for name in type(actions).model_fields
      if _rule(name) is not AuditActionRule.ALLOWED
      and _is_set(actions, name)
      and not _negotiated(actions, name)
  )
  if not stripped:
    return AuditActionsScreen(actions, (), None)
  kept = actions.model_copy()
  for name in stripped:
    value = _kept_value(actions, name)
    setattr(kept, name, value)
    if value == _default(actions, name):
      kept.__pydantic_fields_set__.discard(name)
  return AuditActionsScreen(kept, stripped, _policy_error(stripped))


def _negotiated(actions: EventActions, name: str) -> bool:
  """Whether every widget of a `NESTED_WIDGET` field was negotiated."""
  if _rule(name) is not AuditActionRule.NESTED_WIDGET:
    return False
  widgets = getattr(actions, name)
  return bool(widgets) and all(
      NEGOTIATED_NESTED_WIDGETS.admits(w) for w in widgets
  )


def _kept_value(actions: EventActions, name: str) -> Any:
  """What a stripped field keeps: its default, or its negotiated widgets."""
  if _rule(name) is AuditActionRule.NESTED_WIDGET:
    kept = [
        w for w in getattr(actions, name) if NEGOTIATED_NESTED_WIDGETS.admits(w)
    ]
    if kept:
      return kept
  return _default(actions, name)


def originating_scope(event: Event) -> Optional[str]:
  """The `isolation_scope` an audit Event's operation came from, if any.

  `None` for an Event that is not an audit record: the key means nothing
  there.
  """
  if event.audience != APP_AUDIT or not isinstance(
      event.custom_metadata, Mapping
  ):
    return None
  scope = event.custom_metadata.get(ORIGIN_SCOPE_METADATA_KEY)
  return scope if isinstance(scope, str) else None


def _record_origin_scope(event: Event) -> None:
  """Moves `isolation_scope` into the finalizer-owned metadata key."""
  scope = event.isolation_scope
  metadata = event.custom_metadata
  if scope is None and not (
      isinstance(metadata, Mapping) and ORIGIN_SCOPE_METADATA_KEY in metadata
  ):
    return
  rest = {
      key: value
      for key, value in (
          metadata if isinstance(metadata, Mapping) else {}
      ).items()
      if key != ORIGIN_SCOPE_METADATA_KEY
  }
  if scope is not None:
    rest[ORIGIN_SCOPE_METADATA_KEY] = scope
  event.custom_metadata = rest or None
  event.isolation_scope = None


def enforce_audit_event(event: Event) -> Event:
  """The finalizer's audit-Event rules, in place; never raises.

  On an `app_audit` Event: strips the actions `AUDIT_ACTION_RULES` does
  not allow (a WARNING names the fields of a policy error, never their
  values) and moves `isolation_scope` into `ORIGIN_SCOPE_METADATA_KEY`,
  overwriting whatever that key held. Any other Event is returned
  untouched.

  Args:
    event: An Event whose protected fields the finalizer just stamped.

  Returns:
    The same Event.
  """
  if event.audience != APP_AUDIT:
    return event
  if not isinstance(event.actions, EventActions):
    # Not actions a plugin may leave on an audit Event: store none.
    event.actions = EventActions()
  screen = screen_audit_actions(event.actions)
  if screen.stripped:
    event.actions = screen.actions
    if screen.error is not None:
      logger.warning(
          'Stripped %s from an app_audit Event of invocation %r (%s)',
          ', '.join(screen.error.fields),
          event.invocation_id,
          screen.error.reason.value,
      )
  _record_origin_scope(event)
  return event
