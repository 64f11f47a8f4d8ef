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

"""The incarnation a Runner invocation works in, pinned to its Session.

The invocation's first app-safe touch pins the `ACTIVE` incarnation to its
Session object; later appends are checked against it, so a late result of a
deleted or recreated Session fails typed. Design: docs/design/lifecycle.md.

Usage:

  pin_incarnation(invocation.session, record, lifecycle_store)
  pin = pinned_incarnation(session)  # None if never pinned
  if pin is not None:
    await require_pinned_incarnation(pin, purpose='append')
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Optional
import weakref

from ...sessions.session import Session
from ..contracts.scope import SessionKey
from ..contracts.session_lifecycle_store import LifecycleRecord
from ..contracts.session_lifecycle_store import LifecycleState
from ..contracts.session_lifecycle_store import SessionLifecycleStore
from .manager import check_incarnation


@dataclasses.dataclass(frozen=True)
class IncarnationPin:
  """The incarnation one invocation started in.

  Attributes:
    session: The Session key.
    incarnation: The `ACTIVE` incarnation at the invocation's first touch.
    store: The profile's lifecycle store, which holds the current record.
  """

  session: SessionKey
  incarnation: int
  store: SessionLifecycleStore = dataclasses.field(repr=False, compare=False)


class _Pins:
  """Pins by Session object identity; each dies with its Session object."""

  def __init__(self) -> None:
    # Reentrant: a weakref callback may run while this thread holds it.
    self._lock = threading.RLock()
    self._pins: dict[int, tuple[weakref.ref[object], IncarnationPin]] = {}

  def __len__(self) -> int:
    with self._lock:
      return len(self._pins)

  def pin(self, holder: object, pin: IncarnationPin) -> IncarnationPin:
    key = id(holder)
    with self._lock:
      found = self._pins.get(key)
      if found is not None and found[0]() is holder:
        return found[1]  # The first touch wins.

      def forget(_: object, key: int = key) -> None:
        with self._lock:
          entry = self._pins.get(key)
          if entry is not None and entry[0]() is None:
            del self._pins[key]

      self._pins[key] = (weakref.ref(holder, forget), pin)
      return pin

  def get(self, holder: object) -> Optional[IncarnationPin]:
    with self._lock:
      found = self._pins.get(id(holder))
    if found is None or found[0]() is not holder:
      return None
    return found[1]


_PINS = _Pins()


def pin_incarnation(
    invocation_session: object,
    record: LifecycleRecord,
    store: SessionLifecycleStore,
) -> Optional[IncarnationPin]:
  """Pins `record`'s incarnation to an invocation's Session object.

  Only an `ACTIVE` record pins, and only an ADK `Session` (a context built
  around anything else has no Runner appending through it); a Session
  object already pinned keeps its first pin.

  Args:
    invocation_session: The invocation's Session object (the one the Runner
      appends through).
    record: The Session's record at this touch.
    store: The lifecycle store `record` was read from.

  Returns:
    The invocation's pin, or None if there is none.
  """
  if not isinstance(invocation_session, Session):
    return None
  if record.state is not LifecycleState.ACTIVE:
    return pinned_incarnation(invocation_session)
  return _PINS.pin(
      invocation_session,
      IncarnationPin(record.session, record.incarnation, store),
  )


def pinned_incarnation(invocation_session: object) -> Optional[IncarnationPin]:
  """The pin of an invocation's Session object, or None."""
  if not isinstance(invocation_session, Session):
    return None
  return _PINS.get(invocation_session)


async def require_pinned_incarnation(
    pin: IncarnationPin, *, purpose: str
) -> None:
  """Refuses work of a pinned invocation once its incarnation ended.

  Raises:
    StaleIncarnationError: The Session was deleted or recreated since the
      invocation started (or is being deleted).
  """
  check_incarnation(
      await pin.store.read(pin.session), pin.incarnation, purpose=purpose
  )
