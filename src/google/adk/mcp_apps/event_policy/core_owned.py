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

"""Core-owned Events: built by the core, stored exactly as built.

A core-owned Event (the refusal of a whole batch of function calls) exists
to answer every call of the batch with exact correlation and no effect, so
the Runner skips the ordinary event callback for it: no plugin sees it
before it is stored. The core claims the Event when it builds it; the
Runner takes it back by id, as built, whatever happened to the object in
between.

Usage:

  return claim(refusal_event)          # where the core builds it
  ...
  owned = take(event)                  # in the Runner, before callbacks
  if owned is not None:
    event = owned                      # stored as built, no callbacks
"""

from __future__ import annotations

import collections
import threading
from typing import Optional
from typing import TYPE_CHECKING

if TYPE_CHECKING:
  from ...events.event import Event

_CAPACITY = 1024
"""Claims kept at most; an older claim whose Event never reached a Runner
(an abandoned run) is dropped first."""

_claims: collections.OrderedDict[str, Event] = collections.OrderedDict()
_lock = threading.Lock()


def claim(event: Event) -> Event:
  """Marks `event` core-owned and keeps a copy of it as built.

  Args:
    event: A complete Event the core built (its id is set).

  Returns:
    `event` itself.
  """
  copy = event.model_copy(deep=True)
  with _lock:
    _claims[event.id] = copy
    _claims.move_to_end(event.id)
    while len(_claims) > _CAPACITY:
      _claims.popitem(last=False)
  return event


def take(event: Event) -> Optional[Event]:
  """The core-owned Event with `event`'s id, as built; None if not one.

  A claim is taken once: the Event it names is stored once.
  """
  if not _claims:
    return None
  with _lock:
    owned = _claims.pop(event.id, None)
  if owned is None:
    return None
  return owned.model_copy(deep=True)
