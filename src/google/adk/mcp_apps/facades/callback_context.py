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


"""The read-only context an MCP-owned callback gets on an app path.

A `tool_filter`, `header_provider` or progress factory running for a
direct app call, read or bootstrap receives a `ReadonlyCallbackContext`:
the Session's identifiers and a deep-read-only snapshot of its state,
nothing live. Design: docs/decisions/issue20-mcb.md.

Example:

  context = ReadonlyCallbackContext.from_context(readonly_context)
  context.state['cart']          # a snapshot
  context.session                # FacadeError (UNAVAILABLE), recorded
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from typing import NoReturn
from typing import Optional

from ..contracts.scope import SessionKey
from .errors import FacadeError
from .errors import FacadeErrorReason
from .snapshot import state_snapshot

__all__ = ['ReadonlyCallbackContext']


class ReadonlyCallbackContext:
  """What an MCP-owned callback sees on an app path.

  Identifiers (`app_name`, `user_id`, `session_id`, `invocation_id`,
  `agent_name`) and `state`, a deep-read-only snapshot of the Session
  state taken once. Every other attribute (`session`,
  `session_service`, `_invocation_context`, `actions`, `save_artifact`,
  `get_credential`, ...) raises `FacadeError` (`UNAVAILABLE`) and the
  attempt is recorded in `refused`; setting or deleting an attribute, or
  writing into `state`, raises `FacadeError` (`READ_ONLY`) and is recorded
  in `mutations`. The governed runner fails closed on either record even
  if the callback caught the error.
  """

  __slots__ = (
      '_app_name',
      '_user_id',
      '_session_id',
      '_invocation_id',
      '_agent_name',
      '_state',
      '_refused',
      '_mutations',
  )

  _app_name: str
  _user_id: str
  _session_id: str
  _invocation_id: Optional[str]
  _agent_name: Optional[str]
  _state: Any
  _refused: list[str]
  _mutations: list[str]

  def __init__(
      self,
      *,
      app_name: str,
      user_id: str,
      session_id: str,
      invocation_id: Optional[str],
      agent_name: Optional[str],
      state: Any,
  ) -> None:
    """Wraps a state that is already a snapshot; see `build`."""
    for name, value in (
        ('_app_name', app_name),
        ('_user_id', user_id),
        ('_session_id', session_id),
        ('_invocation_id', invocation_id),
        ('_agent_name', agent_name),
        ('_state', state),
        ('_refused', []),
        ('_mutations', []),
    ):
      object.__setattr__(self, name, value)

  @classmethod
  def build(
      cls,
      *,
      session: SessionKey,
      state: Optional[Mapping[str, Any]],
      invocation_id: Optional[str] = None,
      agent_name: Optional[str] = None,
  ) -> ReadonlyCallbackContext:
    """Snapshots `state` once into a new context.

    Raises:
      FacadeError: The state is outside the snapshot domain (the callback
        is then not run, and its operation fails closed).
    """
    return cls(
        app_name=session.app_name,
        user_id=session.user_id,
        session_id=session.session_id,
        invocation_id=invocation_id,
        agent_name=agent_name,
        state=state_snapshot(state),
    )

  @classmethod
  def from_context(cls, context: Any) -> ReadonlyCallbackContext:
    """Builds the facade from a live `ReadonlyContext` (or subclass).

    Reads the live context's Session identifiers, invocation id, agent
    name and state once; keeps nothing of it.

    Raises:
      FacadeError: `UNAVAILABLE` if the context has no Session; a snapshot
        refusal if its state is outside the domain.
    """
    session = getattr(context, 'session', None)
    if session is None:
      raise FacadeError(
          FacadeErrorReason.UNAVAILABLE,
          'an app-path callback context needs the Session it runs for',
      )
    return cls.build(
        session=SessionKey(session.app_name, session.user_id, session.id),
        state=session.state,
        invocation_id=getattr(context, 'invocation_id', None),
        agent_name=getattr(context, 'agent_name', None),
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
  def invocation_id(self) -> Optional[str]:
    return self._invocation_id

  @property
  def agent_name(self) -> Optional[str]:
    return self._agent_name

  @property
  def state(self) -> Any:
    """A deep-read-only snapshot of the Session state."""
    return self._state

  @property
  def session_key(self) -> SessionKey:
    """The Session the callback runs for."""
    return SessionKey(self._app_name, self._user_id, self._session_id)

  @property
  def refused(self) -> tuple[str, ...]:
    """The unavailable names something asked this context for."""
    return tuple(self._refused)

  @property
  def mutations(self) -> tuple[str, ...]:
    """What something tried to change on this context."""
    return tuple(self._mutations)

  def record_mutation(self, what: str) -> None:
    """Records a refused write made through this context's snapshots."""
    self._mutations.append(what)

  def __getattr__(self, name: str) -> NoReturn:
    if name.startswith('__') and name.endswith('__'):
      raise AttributeError(name)  # Keep Python's protocol probes working.
    self._refused.append(name)
    raise FacadeError(
        FacadeErrorReason.UNAVAILABLE,
        f'an app-path callback context has no {name!r}: it exposes'
        ' identifiers and a read-only state snapshot only',
    )

  def __setattr__(self, name: str, value: Any) -> NoReturn:
    del value
    self._mutations.append(name)
    raise FacadeError(
        FacadeErrorReason.READ_ONLY,
        f'an app-path callback context cannot be changed (set {name!r})',
    )

  def __delattr__(self, name: str) -> NoReturn:
    self._mutations.append(name)
    raise FacadeError(
        FacadeErrorReason.READ_ONLY,
        f'an app-path callback context cannot be changed (delete {name!r})',
    )
