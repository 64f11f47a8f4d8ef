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


"""`ReadonlyAuditContext`: what an audit observer sees.

The audit observer phase (`on_audit_event_callback`) runs after an audit
Event was appended. Its context holds identifiers and a deep-independent,
deep-read-only snapshot of the Session state, taken once; nothing live,
nothing that changes anything. Design: docs/decisions/issue20-fac.md.

Example:

  context = ReadonlyAuditContext.build(
      session=key, state=session.state, invocation_id='e-1')
  context.state['cart']        # a snapshot: reads work
  context.session              # FacadeError (UNAVAILABLE), recorded
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

__all__ = ['ReadonlyAuditContext']


class ReadonlyAuditContext:
  """The audit observer's context: identifiers and a state snapshot.

  Every other attribute (`session`, `session_service`, `actions`,
  `state_delta`, `save_artifact`, ...) raises `FacadeError`
  (`UNAVAILABLE`) and the attempt is recorded in `refused`. Setting or
  deleting an attribute raises `FacadeError` (`READ_ONLY`), as does
  writing anywhere into `state`.
  """

  __slots__ = (
      '_app_name',
      '_user_id',
      '_session_id',
      '_invocation_id',
      '_branch',
      '_state',
      '_refused',
  )

  _app_name: str
  _user_id: str
  _session_id: str
  _invocation_id: str
  _branch: Optional[str]
  _state: Any
  _refused: list[str]

  def __init__(
      self,
      *,
      session: SessionKey,
      invocation_id: str,
      branch: Optional[str],
      state: Any,
  ) -> None:
    """Wraps a state that is already a snapshot; see `build`."""
    for name, value in (
        ('_app_name', session.app_name),
        ('_user_id', session.user_id),
        ('_session_id', session.session_id),
        ('_invocation_id', invocation_id),
        ('_branch', branch),
        ('_state', state),
        ('_refused', []),
    ):
      object.__setattr__(self, name, value)

  @classmethod
  def build(
      cls,
      *,
      session: SessionKey,
      state: Optional[Mapping[str, Any]],
      invocation_id: str,
      branch: Optional[str] = None,
  ) -> ReadonlyAuditContext:
    """Snapshots `state` once into a new context.

    Args:
      session: The Session the audit Event was appended to.
      state: Its state after the append (None is empty).
      invocation_id: The audit Event's invocation id.
      branch: The audit Event's branch.

    Raises:
      FacadeError: The state is outside the snapshot domain.
    """
    return cls(
        session=session,
        invocation_id=invocation_id,
        branch=branch,
        state=state_snapshot(state),
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
  def state(self) -> Any:
    """A deep-read-only snapshot of the Session state."""
    return self._state

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
        f'an audit observer context has no {name!r}: it exposes identifiers'
        ' and a read-only state snapshot only',
    )

  def __setattr__(self, name: str, value: Any) -> NoReturn:
    del value
    raise FacadeError(
        FacadeErrorReason.READ_ONLY,
        f'an audit observer context cannot be changed (set {name!r})',
    )

  def __delattr__(self, name: str) -> NoReturn:
    raise FacadeError(
        FacadeErrorReason.READ_ONLY,
        f'an audit observer context cannot be changed (delete {name!r})',
    )
