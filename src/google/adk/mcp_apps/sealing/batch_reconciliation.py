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

"""The frozen deltas of a model batch, kept for the Event that reports it.

The batch seam leaves them here when it hands the batch's Event on; if the
append stage refuses that Event as a whole, it stores a response-free
reconciliation Event carrying exactly these deltas before the refusal
propagates. Design: docs/decisions/issue21-bat.md.

Usage:

  expect(event, frozen, call_ids)          # the seam
  ...
  reconciliation = take(event, call_ids)   # the append stage, on refusal
"""

from __future__ import annotations

import collections
from collections.abc import Iterable
from collections.abc import Mapping
import dataclasses
import threading
from typing import Any
from typing import Optional
from typing import Protocol

from ...events.event import Event
from ...events.event_actions import EventActions

_CAPACITY = 1024
"""Batches kept at most; an older one whose Event never reached an append
(an abandoned run) is dropped first."""


class FrozenDeltas(Protocol):
  """What the append stage reads of a frozen batch."""

  @property
  def state_delta(self) -> Mapping[str, Any]:
    """Each written key's winning value, in the frozen order."""
    ...

  @property
  def artifact_delta(self) -> Mapping[str, int]:
    """Each saved filename's applied version, in the frozen order."""
    ...


@dataclasses.dataclass(frozen=True)
class _Expected:
  invocation_id: str
  author: str
  branch: Optional[str]
  call_ids: frozenset[str]
  state_delta: dict[str, Any]
  artifact_delta: dict[str, int]


_expected: collections.OrderedDict[str, _Expected] = collections.OrderedDict()
_lock = threading.Lock()


def expect(event: Event, frozen: FrozenDeltas, call_ids: Iterable[str]) -> None:
  """Keeps `frozen`'s deltas for `event` (nothing when both are empty).

  Args:
    event: The Event that reports the batch (its id is final).
    frozen: The batch's frozen deltas; copied now, order kept.
    call_ids: The batch's function-call ids (found again by them when the
      Event's id was changed).
  """
  if not frozen.state_delta and not frozen.artifact_delta:
    return
  expected = _Expected(
      invocation_id=event.invocation_id,
      author=event.author,
      branch=event.branch,
      call_ids=frozenset(call_ids),
      state_delta=dict(frozen.state_delta),
      artifact_delta=dict(frozen.artifact_delta),
  )
  with _lock:
    _expected[event.id] = expected
    _expected.move_to_end(event.id)
    while len(_expected) > _CAPACITY:
      _expected.popitem(last=False)


def forget(event: Event) -> None:
  """Drops what was kept for `event` (it is being stored)."""
  if not _expected:
    return
  with _lock:
    _expected.pop(event.id, None)


def take(event: Event, call_ids: Iterable[str]) -> Optional[Event]:
  """The reconciliation Event for the refused `event`, if one is due.

  The kept deltas are found by the Event's id, else by any of `call_ids`
  (the refused calls); they are taken once.

  Returns:
    A new Event with the batch's invocation, author and branch, no content
    and exactly the frozen `state_delta` and `artifact_delta`; None when
    nothing was kept for the batch.
  """
  if not _expected:
    return None
  wanted = set(call_ids)
  with _lock:
    expected = _expected.pop(event.id, None)
    if expected is None:
      found = next(
          (k for k, e in _expected.items() if e.call_ids & wanted), None
      )
      if found is not None:
        expected = _expected.pop(found)
  if expected is None:
    return None
  return Event(
      invocation_id=expected.invocation_id,
      author=expected.author,
      branch=expected.branch,
      actions=EventActions(
          state_delta=dict(expected.state_delta),
          artifact_delta=dict(expected.artifact_delta),
      ),
  )


def clear() -> None:
  """Forgets everything (tests; a process restart does this too)."""
  with _lock:
    _expected.clear()
