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


"""The restricted event-policy step: the ordinary event callback, audited.

On a direct-app audit Event the plugin chain's `on_event_callback` gets an
`EventPolicyContext` as its `invocation_context`: identifiers, a
read-only state snapshot and the batch's event-policy ledger API, nothing
live. `run_event_policy` runs the chain once on a deep-independent copy of
the Event, merges only the allowed changes of a returned replacement, and
on failure gives the core-only fallback built from the frozen batch.
Normal Events keep the full `InvocationContext`. Design and readings:
docs/decisions/issue20-fac.md.

Example:

  context = EventPolicyContext.build(
      session=key, invocation_id=event.invocation_id, branch=event.branch,
      agent_name=event.author, state=session.state,
      ledger=effects.event_policy)
  outcome = await run_event_policy(plugin_manager, context, event)
  event = outcome.resolve(effects.freeze())  # merged, or the fallback
  if outcome.failed:
    ...  # the wire gets outcome.wire_error
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import MutableMapping
import dataclasses
from typing import Any
from typing import NoReturn
from typing import Optional
from typing import Protocol

from ...dependencies._mcp import types as mcp_types
from ...events._internal_metadata import internal_metadata
from ...events._internal_metadata import without_internal_metadata
from ...events.event import Event
from ...events.event_actions import EventActions
from ..contracts.scope import SessionKey
from ..event_policy.audit_actions import AUDIT_ACTION_RULES
from ..event_policy.audit_actions import AuditActionRule
from ..event_policy.audit_actions import screen_audit_actions
from ..event_policy.callback_scope import CallbackFamily
from ..event_policy.callback_scope import restricted_callback
from ..event_policy.errors import EventPolicyError
from .errors import FacadeError
from .errors import FacadeErrorReason
from .snapshot import plain_dict
from .snapshot import snapshot
from .snapshot import state_snapshot
from .snapshot import thaw

__all__ = [
    'EventPolicyContext',
    'EventPolicyLedger',
    'EventPolicyOutcome',
    'MERGED_FIELDS',
    'run_event_policy',
]

MERGED_FIELDS = ('content', 'custom_metadata')
"""The `Event` fields a returned replacement may change. `custom_metadata`
merges its non-internal keys only; control actions in a replacement are
screened (stripped, reported as `policy_error`); state and artifact
changes come from the ledger alone."""


class LedgerActions(Protocol):
  """The actions a ledger hands out (`EventActions`)."""

  @property
  def state_delta(self) -> MutableMapping[str, Any]:
    """The ledger's recording state-delta map."""
    ...


class BatchLedger(Protocol):
  """The batch's event-policy ledger (`batch.ledger.EffectLedger`)."""

  def event_actions(self) -> LedgerActions:
    """The actions whose deltas record into the ledger."""
    ...


class FrozenDeltas(Protocol):
  """What a frozen batch says was applied (`batch.ledger.FrozenBatch`)."""

  @property
  def state_delta(self) -> Mapping[str, Any]:
    """Each written state key's winning value."""
    ...

  @property
  def artifact_delta(self) -> Mapping[str, int]:
    """Each saved artifact's applied version."""
    ...


class EventCallbackChain(Protocol):
  """The ordinary plugin chain (`plugins.plugin_manager.PluginManager`)."""

  async def run_on_event_callback(
      self, *, invocation_context: Any, event: Event
  ) -> Optional[Event]:
    """Runs every plugin's `on_event_callback` until one returns."""
    ...


class EventPolicyLedger:
  """The event-policy ledger API a restricted event callback may use.

  `set_state` writes the live state and records the write in the batch's
  event-policy ledger, as `State` does; the frozen batch applies it. After
  the batch froze, a write raises the batch's `BatchError` (`FROZEN`) and
  changes nothing. Nothing else of the ledger is reachable.
  """

  __slots__ = ('_live', '_ledger', '_written')

  def __init__(
      self, live_state: MutableMapping[str, Any], ledger: BatchLedger
  ) -> None:
    """Wraps the batch's live state and its event-policy ledger.

    Args:
      live_state: The live Session state the batch was made over (the
        same mapping, or the ledger refuses every write).
      ledger: The batch's `event_policy` ledger.
    """
    self._live = live_state
    self._ledger = ledger
    self._written: list[str] = []

  def set_state(self, key: str, value: Any) -> None:
    """Writes `value` under `key`, ledgered.

    Args:
      key: The state key (exactly a `str`).
      value: A value in the snapshot domain; an independent plain copy is
        stored, so later changes to `value` have no effect.

    Raises:
      FacadeError: `NON_STRING_KEY`, or the value is outside the domain.
      BatchError: The batch is frozen (from the ledger).
    """
    if type(key) is not str:  # pylint: disable=unidiomatic-typecheck
      raise FacadeError(
          FacadeErrorReason.NON_STRING_KEY,
          f'a state key is a str, not {type(key).__name__}',
      )
    stored = thaw(snapshot(value))
    # As `State.__setitem__`: the live state first, then the delta, which
    # checks that the live state holds this very object.
    self._live[key] = stored
    self._ledger.event_actions().state_delta[key] = stored
    self._written.append(key)

  @property
  def written(self) -> tuple[str, ...]:
    """The keys written through this API, in order."""
    return tuple(self._written)


class EventPolicyContext:
  """The `invocation_context` the event callback gets on an audit Event.

  Identifiers, a deep-read-only snapshot of the state taken once (it does
  not show the callback's own ledger writes), and `ledger`. Every other
  attribute (`session`, `session_service`, `artifact_service`,
  `credential_service`, `memory_service`, `runner`, `plugin_manager`,
  `agent`, `end_invocation`, `actions`, `save_artifact`, ...) raises
  `FacadeError` (`UNAVAILABLE`) and the attempt is recorded:
  `run_event_policy` fails the step on it even if the callback caught the
  error. Setting or deleting an attribute raises `FacadeError`
  (`READ_ONLY`), as does writing into `state`.
  """

  __slots__ = (
      '_app_name',
      '_user_id',
      '_session_id',
      '_invocation_id',
      '_branch',
      '_agent_name',
      '_state',
      '_ledger',
      '_refused',
  )

  _app_name: str
  _user_id: str
  _session_id: str
  _invocation_id: str
  _branch: Optional[str]
  _agent_name: Optional[str]
  _state: Any
  _ledger: EventPolicyLedger
  _refused: list[str]

  def __init__(
      self,
      *,
      session: SessionKey,
      invocation_id: str,
      branch: Optional[str],
      agent_name: Optional[str],
      state: Any,
      ledger: EventPolicyLedger,
  ) -> None:
    """Wraps a state that is already a snapshot; see `build`."""
    for name, value in (
        ('_app_name', session.app_name),
        ('_user_id', session.user_id),
        ('_session_id', session.session_id),
        ('_invocation_id', invocation_id),
        ('_branch', branch),
        ('_agent_name', agent_name),
        ('_state', state),
        ('_ledger', ledger),
        ('_refused', []),
    ):
      object.__setattr__(self, name, value)

  @classmethod
  def build(
      cls,
      *,
      session: SessionKey,
      invocation_id: str,
      state: MutableMapping[str, Any],
      ledger: BatchLedger,
      branch: Optional[str] = None,
      agent_name: Optional[str] = None,
  ) -> EventPolicyContext:
    """Snapshots the live state once into a new context.

    Args:
      session: The Session the audit Event belongs to.
      invocation_id: The audit Event's invocation id.
      state: The live Session state the batch was made over; snapshotted
        now, and written only through the ledger API.
      ledger: The batch's event-policy ledger.
      branch: The audit Event's branch.
      agent_name: The agent the operation ran under, if any.

    Raises:
      FacadeError: The state is outside the snapshot domain (the step
        cannot run; the pipeline falls back).
    """
    return cls(
        session=session,
        invocation_id=invocation_id,
        branch=branch,
        agent_name=agent_name,
        state=state_snapshot(state),
        ledger=EventPolicyLedger(state, ledger),
    )

  @property
  def app_name(self) -> str:
    return self._app_name

  @property
  def user_id(self) -> str:
    return self._user_id

  @property
  def session_id(self) -> str:
    return self._session_id

  @property
  def invocation_id(self) -> str:
    return self._invocation_id

  @property
  def branch(self) -> Optional[str]:
    return self._branch

  @property
  def agent_name(self) -> Optional[str]:
    return self._agent_name

  @property
  def state(self) -> Any:
    """A deep-read-only snapshot of the state before the callback."""
    return self._state

  @property
  def ledger(self) -> EventPolicyLedger:
    """The event-policy ledger API."""
    return self._ledger

  @property
  def session_key(self) -> SessionKey:
    """The Session's `SessionKey`."""
    return SessionKey(self._app_name, self._user_id, self._session_id)

  @property
  def refused(self) -> tuple[str, ...]:
    """The unavailable names something asked this context for."""
    return tuple(self._refused)

  def __getattr__(self, name: str) -> NoReturn:
    if name.startswith('__') and name.endswith('__'):
      raise AttributeError(name)  # Keep Python's protocol probes working.
    self._refused.append(name)
    raise FacadeError(
        FacadeErrorReason.UNAVAILABLE,
        f'an event-policy context has no {name!r}: it exposes identifiers,'
        ' a read-only state snapshot and the event-policy ledger only',
    )

  def __setattr__(self, name: str, value: Any) -> NoReturn:
    del value
    raise FacadeError(
        FacadeErrorReason.READ_ONLY,
        f'an event-policy context cannot be changed (set {name!r})',
    )

  def __delattr__(self, name: str) -> NoReturn:
    raise FacadeError(
        FacadeErrorReason.READ_ONLY,
        f'an event-policy context cannot be changed (delete {name!r})',
    )


@dataclasses.dataclass(frozen=True)
class EventPolicyOutcome:
  """What the event-policy step did.

  Attributes:
    event: On success the audit Event with the replacement's allowed
      changes merged; on failure the pre-callback audit Event, unchanged.
      Its deltas are replaced by the frozen batch's in `resolve`.
    error: `FacadeError` (`EVENT_POLICY_FAILED`) when the step failed
      (its `__cause__` is what the callback raised, if it raised); else
      None.
    policy_error: The typed policy error of control actions a replacement
      carried (they were stripped); the step still succeeded.
    refused: What the callback reached for and was refused: unavailable
      context attributes, then same-Session reentries.
    discarded: The changes of a returned replacement that were not
      merged (`author`, `actions.state_delta`, ...).
  """

  event: Event
  error: Optional[FacadeError] = None
  policy_error: Optional[EventPolicyError] = None
  refused: tuple[str, ...] = ()
  discarded: tuple[str, ...] = ()

  @property
  def failed(self) -> bool:
    """Whether the callback failed (the core-only fallback applies)."""
    return self.error is not None

  def resolve(self, frozen: FrozenDeltas) -> Event:
    """The Event to finalize and append, over the frozen batch.

    On success: `event` whose state and artifact deltas are the frozen
    batch's. On failure: the core-only fallback, the pre-callback audit
    Event whose actions carry only the frozen batch's deltas.

    Args:
      frozen: The batch, frozen after this step.

    Returns:
      A new Event; `event` is not changed.
    """
    state_delta = dict(frozen.state_delta)
    artifact_delta = dict(frozen.artifact_delta)
    deltas = {'state_delta': state_delta, 'artifact_delta': artifact_delta}
    if self.failed:
      actions = EventActions(
          state_delta=state_delta, artifact_delta=artifact_delta
      )
    else:
      actions = screen_audit_actions(self.event.actions).actions.model_copy(
          update=deltas
      )
    return self.event.model_copy(deep=True, update={'actions': actions})

  @property
  def wire_error(self) -> Optional[mcp_types.ErrorData]:
    """The JSON-RPC error a failed step answers the View with, else None.

    Code `INTERNAL_ERROR`; the message names no exception text.
    """
    if self.error is None:
      return None
    return mcp_types.ErrorData(
        code=mcp_types.INTERNAL_ERROR,
        message=(
            'the event policy failed; the operation was recorded'
            ' without the event callback'
        ),
        data={'reason': FacadeErrorReason.EVENT_POLICY_FAILED.value},
    )


def _differs(a: Any, b: Any) -> bool:
  return bool(a != b)


def _merge(
    original: Event, returned: Event
) -> tuple[Event, Optional[EventPolicyError], tuple[str, ...]]:
  """`original` with the allowed changes of `returned` (both unchanged).

  Raises:
    FacadeError: The replacement's metadata is outside the snapshot
      domain.
  """
  update: dict[str, Any] = {}
  # As upstream's merge, only fields the replacement set count; its
  # actions are always screened (a control there is reported).
  given = returned.model_fields_set
  if 'content' in given and _differs(returned.content, original.content):
    update['content'] = (
        None
        if returned.content is None
        else returned.content.model_copy(deep=True)
    )
  theirs = without_internal_metadata(returned.custom_metadata) or {}
  ours = without_internal_metadata(original.custom_metadata) or {}
  if 'custom_metadata' in given and _differs(theirs, ours):
    # ADK-internal keys belong to the core: kept from the original only.
    merged = {
        **thaw(snapshot(plain_dict(theirs))),
        **internal_metadata(original.custom_metadata),
    }
    update['custom_metadata'] = merged or None
  discarded = [
      name
      for name in type(original).model_fields
      if name not in MERGED_FIELDS
      and name != 'actions'
      and name in given
      and _differs(getattr(returned, name), getattr(original, name))
  ]
  policy_error = None
  if isinstance(returned.actions, EventActions):
    screen = screen_audit_actions(returned.actions)
    policy_error = screen.error
    discarded.extend(
        f'actions.{name}'
        for name, rule in AUDIT_ACTION_RULES.items()
        if rule is AuditActionRule.ALLOWED
        and _differs(
            getattr(returned.actions, name), getattr(original.actions, name)
        )
    )
  else:
    discarded.append('actions')
  return (
      original.model_copy(deep=True, update=update),
      policy_error,
      tuple(discarded),
  )


def _failed(
    original: Event,
    why: str,
    *,
    cause: Optional[BaseException] = None,
    refused: tuple[str, ...] = (),
) -> EventPolicyOutcome:
  error = FacadeError(
      FacadeErrorReason.EVENT_POLICY_FAILED,
      f'the event callback on an audit Event {why}; the core-only fallback'
      ' is recorded',
  )
  error.__cause__ = cause
  return EventPolicyOutcome(event=original, error=error, refused=refused)


async def run_event_policy(
    plugin_manager: EventCallbackChain,
    context: EventPolicyContext,
    event: Event,
) -> EventPolicyOutcome:
  """Runs the ordinary event callback once on an audit Event, restricted.

  The chain gets `context` and a deep-independent copy of `event`, inside
  `restricted_callback(..., CallbackFamily.EVENT_POLICY)`, so a reentry
  into the same Session (a Runner entry point, an `append_event`, a hold)
  raises `EventPolicyError` (`SAME_SESSION_REENTRY`) there. A returned
  Event merges only `MERGED_FIELDS`, its control actions screened; with
  no return, the copy's in-place edits of `MERGED_FIELDS` merge the same
  way and its in-place action edits are discarded. Ledger writes stand in
  every case: the caller freezes the batch after this step and calls
  `resolve`.

  The step fails (never raises) when the chain raised, returned something
  other than an Event, reached for an unavailable context attribute or
  re-entered its Session (even if it caught the error), or returned
  metadata outside the snapshot domain.

  Args:
    plugin_manager: The Runner's plugin chain.
    context: The audit Event's restricted context.
    event: The audit Event as the core constructed it; not changed.

  Returns:
    The outcome.
  """
  original = event.model_copy(deep=True)
  given = event.model_copy(deep=True)
  cause: Optional[Exception] = None
  returned: Any = None
  with restricted_callback(
      context.session_key, CallbackFamily.EVENT_POLICY
  ) as scope:
    try:
      returned = await plugin_manager.run_on_event_callback(
          invocation_context=context, event=given
      )
    except Exception as e:  # pylint: disable=broad-exception-caught
      cause = e
  refused = context.refused + tuple(scope.refused)
  if cause is not None:
    return _failed(
        original,
        f'raised {type(cause).__name__}',
        cause=cause,
        refused=refused,
    )
  if refused:
    return _failed(
        original, f'reached for {", ".join(refused)}', refused=refused
    )
  if returned is None:
    # An in-place edit of the copy is the callback's answer too (RFC §5):
    # its content and metadata merge as a returned Event's would; its
    # actions never do (only the ledger writes state).
    in_place = given.model_copy(update={'actions': original.actions})
    try:
      merged, _, discarded = _merge(original, in_place)
    except FacadeError as e:
      return _failed(original, 'left metadata with no snapshot', cause=e)
    if _differs(given.actions, original.actions):
      discarded = (*discarded, 'actions')
    return EventPolicyOutcome(event=merged, discarded=discarded)
  if not isinstance(returned, Event):
    return _failed(original, f'returned a {type(returned).__name__}')
  try:
    merged, policy_error, discarded = _merge(original, returned)
  except FacadeError as e:
    return _failed(original, 'returned metadata with no snapshot', cause=e)
  return EventPolicyOutcome(
      event=merged, policy_error=policy_error, discarded=discarded
  )
