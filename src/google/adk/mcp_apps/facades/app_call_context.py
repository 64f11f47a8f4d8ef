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

"""The restricted `ToolContext` of a direct app call (RFC §4 item 2).

A View's `tools/call` runs its tool callbacks on an `AppCallToolContext`:
read-only identifiers, state reads as deep-read-only snapshots, and the
call's child-ledger APIs (`state[key] = value`, `save_artifact`). Anything
else raises `FacadeError` (`UNAVAILABLE` or `READ_ONLY`) and is recorded in
`refused`. Readings: docs/decisions/issue25-restricted-context.md.

Example:

  context = AppCallToolContext(
      session=key, invocation_id=invocation_id, function_call_id=op,
      agent_name='shop', live_state=session.state,
      ledger=effects.child(op), save_artifact=saver)
  context.state['note'] = 'kept'  # recorded in the child ledger
  context.session  # FacadeError(UNAVAILABLE)
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import MutableMapping
from typing import Any
from typing import Final
from typing import NoReturn
from typing import Optional
from typing import Protocol

from ..contracts.scope import SessionKey
from .errors import FacadeError
from .errors import FacadeErrorReason
from .snapshot import snapshot
from .snapshot import thaw

__all__ = [
    'APP_CALL_CALLER',
    'APP_CALL_ORIGIN',
    'AppCallState',
    'AppCallToolContext',
    'ArtifactSaver',
    'CallLedger',
]

APP_CALL_CALLER: Final = 'app'
"""`immediate_caller` of every direct app call."""

APP_CALL_ORIGIN: Final = 'mcp_app'
"""`invocation_origin` of every direct app call."""

_TEMP_PREFIX: Final = 'temp:'


def _visible(key: object) -> bool:
  """Whether a state key is shown: exactly a `str`, not under `temp:`."""
  # pylint: disable-next=unidiomatic-typecheck
  return type(key) is str and not key.startswith(_TEMP_PREFIX)


class RecordingActions(Protocol):
  """The actions a child ledger hands out (`EventActions`)."""

  @property
  def state_delta(self) -> MutableMapping[str, Any]:
    """The ledger's recording state-delta map."""
    ...

  @property
  def artifact_delta(self) -> MutableMapping[str, int]:
    """The ledger's recording artifact-delta map."""
    ...


class CallLedger(Protocol):
  """A call's child ledger (`batch.ledger.EffectLedger`)."""

  def event_actions(self) -> RecordingActions:
    """The actions whose deltas record into the ledger."""
    ...


class ArtifactSaver(Protocol):
  """Saves one artifact of the call's Session; returns its version."""

  async def __call__(
      self,
      filename: str,
      artifact: Any,
      custom_metadata: Optional[dict[str, Any]],
  ) -> int:
    """Saves `artifact` under `filename`."""
    ...


class AppCallState(Mapping[str, Any]):
  """The state of a direct app call: snapshot reads, ledgered writes.

  A read returns a deep-read-only snapshot of the live value (so a nested
  change raises `FacadeError` `READ_ONLY`); `temp:` keys are not shown.
  `state[key] = value` and `update` store an independent plain copy in the
  live state and record it in the call's child ledger, as `State` does;
  after the batch froze they raise its `BatchError` (`FROZEN`). Deleting a
  key raises `FacadeError` (`READ_ONLY`).
  """

  __slots__ = ('_live', '_ledger', '_owner')

  def __init__(
      self,
      live_state: MutableMapping[str, Any],
      ledger: CallLedger,
      owner: AppCallToolContext,
  ) -> None:
    self._live = live_state
    self._ledger = ledger
    self._owner = owner

  def __getitem__(self, key: str) -> Any:
    if not _visible(key):
      raise KeyError(key)
    return snapshot(self._live[key])

  def __iter__(self) -> Iterator[str]:
    return iter([key for key in list(self._live) if _visible(key)])

  def __len__(self) -> int:
    return sum(1 for _ in self)

  def __setitem__(self, key: str, value: Any) -> None:
    """Writes `value` under `key`, ledgered.

    Raises:
      FacadeError: `NON_STRING_KEY`, or the value is outside the snapshot
        domain.
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

  def update(self, values: Mapping[str, Any]) -> None:
    """Writes every item of `values`, ledgered, in order."""
    for key, value in values.items():
      self[key] = value

  def __delitem__(self, key: str) -> NoReturn:
    self._owner._refuse(f'state.__delitem__({key!r})', read_only=True)

  def to_dict(self) -> dict[str, Any]:
    """A plain, independent copy of the visible state."""
    return {key: thaw(self[key]) for key in self}


class AppCallToolContext:
  """The `tool_context` a direct app call's tool callbacks receive.

  Exposes the read-only identifiers (`app_name`, `user_id`, `session_id`,
  `session_key`, `invocation_id`, `function_call_id`, `agent_name`,
  `branch`, `immediate_caller`, `invocation_origin`), `state` (an
  `AppCallState`) and `save_artifact`, and nothing else. Every other
  attribute (`session`, `actions`, `session_service`, `artifact_service`,
  `credential_service`, `memory_service`, `runner`, `plugin_manager`,
  `agent`, `load_artifact`, `get_auth_response`, `request_credential`,
  `request_confirmation`, `search_memory`, `_invocation_context`, ...)
  raises `FacadeError` (`UNAVAILABLE`); setting or deleting one raises
  `FacadeError` (`READ_ONLY`). Each refusal is recorded in `refused`, so
  the app path fails the call even if the callback caught the error.
  """

  __slots__ = (
      '_app_name',
      '_user_id',
      '_session_id',
      '_invocation_id',
      '_function_call_id',
      '_agent_name',
      '_state',
      '_save',
      '_ledger',
      '_refused',
  )

  _app_name: str
  _user_id: str
  _session_id: str
  _invocation_id: str
  _function_call_id: str
  _agent_name: str
  _state: AppCallState
  _save: ArtifactSaver
  _ledger: CallLedger
  _refused: list[str]

  def __init__(
      self,
      *,
      session: SessionKey,
      invocation_id: str,
      function_call_id: str,
      agent_name: str,
      live_state: MutableMapping[str, Any],
      ledger: CallLedger,
      save_artifact: ArtifactSaver,
  ) -> None:
    """Wraps the call's live state, child ledger and artifact saver.

    Args:
      session: The View's Session.
      invocation_id: The call's invocation id.
      function_call_id: The call's function-call id (the operation id).
      agent_name: The agent the View was rendered under.
      live_state: The live Session state the batch was made over.
      ledger: The call's child ledger.
      save_artifact: Saves an artifact of the Session and returns its
        version; the context records the version in `ledger`.
    """
    for name, value in (
        ('_app_name', session.app_name),
        ('_user_id', session.user_id),
        ('_session_id', session.session_id),
        ('_invocation_id', invocation_id),
        ('_function_call_id', function_call_id),
        ('_agent_name', agent_name),
        ('_save', save_artifact),
        ('_ledger', ledger),
        ('_refused', []),
    ):
      object.__setattr__(self, name, value)
    object.__setattr__(self, '_state', AppCallState(live_state, ledger, self))

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
  def session_key(self) -> SessionKey:
    """The Session's `SessionKey`."""
    return SessionKey(self._app_name, self._user_id, self._session_id)

  @property
  def invocation_id(self) -> str:
    return self._invocation_id

  @property
  def function_call_id(self) -> str:
    return self._function_call_id

  @property
  def agent_name(self) -> str:
    return self._agent_name

  @property
  def branch(self) -> None:
    """Always None: a direct app call runs outside any agent branch."""
    return None

  @property
  def immediate_caller(self) -> str:
    """Always `'app'`."""
    return APP_CALL_CALLER

  @property
  def invocation_origin(self) -> str:
    """Always `'mcp_app'`."""
    return APP_CALL_ORIGIN

  @property
  def state(self) -> AppCallState:
    """Snapshot reads, ledgered writes (see `AppCallState`)."""
    return self._state

  async def save_artifact(
      self,
      filename: str,
      artifact: Any,
      custom_metadata: Optional[dict[str, Any]] = None,
  ) -> int:
    """Saves an artifact of the Session and records it in the ledger.

    Args:
      filename: The artifact's name.
      artifact: A `google.genai.types.Part`.
      custom_metadata: Metadata stored with the artifact.

    Returns:
      The saved version.

    Raises:
      BatchError: The batch froze while the save ran (the saved version
        stands; it is not recorded).
    """
    version = await self._save(filename, artifact, custom_metadata)
    self._ledger.event_actions().artifact_delta[filename] = version
    return version

  @property
  def refused(self) -> tuple[str, ...]:
    """What a callback reached for and was refused, in order."""
    return tuple(self._refused)

  def _refuse(self, what: str, *, read_only: bool = False) -> NoReturn:
    self._refused.append(what)
    if read_only:
      raise FacadeError(
          FacadeErrorReason.READ_ONLY,
          f'an app-call tool context cannot be changed ({what})',
      )
    raise FacadeError(
        FacadeErrorReason.UNAVAILABLE,
        f'an app-call tool context has no {what!r}: it exposes identifiers,'
        ' a read-only state with ledgered writes and save_artifact only',
    )

  def __getattr__(self, name: str) -> NoReturn:
    if name.startswith('__') and name.endswith('__'):
      raise AttributeError(name)  # Keep Python's protocol probes working.
    self._refuse(name)

  def __setattr__(self, name: str, value: Any) -> NoReturn:
    del value
    self._refuse(f'set {name}', read_only=True)

  def __delattr__(self, name: str) -> NoReturn:
    self._refuse(f'delete {name}', read_only=True)
