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

"""Errors of the Session lifecycle: admission, fence, recovery.

Every refusal names the Session key's state and incarnation, never Session
content or state values.

Usage:

  try:
    await manager.admit(key)
  except SessionNotAdmittedError as e:
    print(e.state, e.incarnation)
"""

from __future__ import annotations

import enum
from typing import ClassVar
from typing import Optional

from ..contracts.scope import SessionKey
from ..contracts.session_lifecycle_store import LifecycleState
from ..errors import McpAppsError


def _describe(session: SessionKey) -> str:
  return f'{session.app_name}/{session.user_id}/{session.session_id}'


class SessionLifecycleError(McpAppsError):
  """Base class of the lifecycle orchestration's errors."""


class _RefusedInStateError(SessionLifecycleError):
  """A request refused because of the state the Session key was found in.

  Attributes:
    session: The Session key.
    state: The state found.
    incarnation: The incarnation found.
  """

  _refusal: ClassVar[str]
  """What was refused, completing "Session <key> ..."."""

  def __init__(
      self, session: SessionKey, state: LifecycleState, incarnation: int
  ) -> None:
    self.session = session
    self.state = state
    self.incarnation = incarnation
    super().__init__(
        f'Session {_describe(session)} {self._refusal} while'
        f' {state.value}({incarnation})'
    )


class SessionNotAdmittedError(_RefusedInStateError):
  """App work was refused because the Session is not `ACTIVE`.

  `state` says why: `CREATING` (not yet durable), `DELETING` (admission and
  re-creation wait), or `ABSENT`/`DELETED` (gone).
  """

  _refusal = 'admits no app work'


class StaleIncarnationError(SessionLifecycleError):
  """Work tied to an older (or unknown) incarnation reached the Session.

  Raised for a late result or late append of an invocation that started in
  incarnation `presented` while the Session is at `current` (or not
  `ACTIVE`), and by `SessionLifecycleManager.require_incarnation`.

  Attributes:
    session: The Session key.
    presented: The incarnation the work was tied to.
    current: The Session's current incarnation.
    state: The Session's current state.
    purpose: What was refused (e.g. `append`, `lease`).
  """

  def __init__(
      self,
      session: SessionKey,
      *,
      presented: int,
      current: int,
      state: LifecycleState,
      purpose: str,
  ) -> None:
    self.session = session
    self.presented = presented
    self.current = current
    self.state = state
    self.purpose = purpose
    super().__init__(
        f'{purpose} for Session {_describe(session)} is tied to incarnation'
        f' {presented}, but the Session is {state.value}({current})'
    )


class SessionExistsError(_RefusedInStateError):
  """Creation refused: the Session key is already `ACTIVE` or `CREATING`."""

  _refusal = 'cannot be created'


class FenceRefusal(enum.Enum):
  """Why the creation fence refused an operation."""

  RETIRED = 'retired'
  """The creator's fence is no longer current; nothing was committed."""

  ALREADY_COMMITTED = 'already_committed'
  """Retire found the creator's commit durable: recover, do not reclaim."""

  OTHER_OPERATION = 'other_operation'
  """The fence belongs to another creation operation."""


class CreationFenceError(SessionLifecycleError):
  """The Session backend's creation fence refused an operation.

  Attributes:
    reason: Why.
    session: The Session key.
    incarnation: The incarnation the caller held.
    operation_id: The creation operation the caller held.
    found: The fence row's state, or None without a row.
  """

  def __init__(
      self,
      reason: FenceRefusal,
      session: SessionKey,
      *,
      incarnation: int,
      operation_id: str,
      found: Optional[str],
      detail: str,
  ) -> None:
    self.reason = reason
    self.session = session
    self.incarnation = incarnation
    self.operation_id = operation_id
    self.found = found
    super().__init__(
        f'Creation fence of Session {_describe(session)} refused'
        f' incarnation {incarnation} ({reason.value}: {detail}; fence is'
        f' {found or "absent"})'
    )


class FenceUnsupportedError(SessionLifecycleError):
  """The Session service cannot host a transactional creation fence."""

  def __init__(self, service: object, detail: str) -> None:
    self.service_type = type(service).__name__
    super().__init__(
        f'{self.service_type} cannot host the transactional creation fence'
        f' ({detail})'
    )


class ReceiptMismatchError(SessionLifecycleError):
  """A Session row's creation receipt does not match; it is not adopted.

  Attributes:
    session: The Session key.
    mismatches: Which receipt fields differ (no values).
  """

  def __init__(self, session: SessionKey, mismatches: tuple[str, ...]) -> None:
    self.session = session
    self.mismatches = mismatches
    super().__init__(
        f'Session {_describe(session)} row is not adopted; its creation'
        f' receipt differs in: {", ".join(mismatches)}'
    )


class AdoptionRefusedError(SessionLifecycleError):
  """Migration refused: there is no pre-series Session row to adopt."""

  def __init__(self, session: SessionKey, detail: str) -> None:
    self.session = session
    super().__init__(f'Session {_describe(session)} not adopted: {detail}')
