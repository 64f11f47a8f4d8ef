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

"""The audience predicate: which Events may feed the model or routing.

Every consumer that builds model input or picks an agent from session
history (content construction, both compaction modes, the summarizer,
memory ingestion, agent routing, task scope and workflow rehydration)
asks this one predicate, directly or through `model_context_events`.

Usage:

  history = model_context_events(session.events)
"""

from __future__ import annotations

from typing import Any
from typing import Sequence
from typing import TYPE_CHECKING
from typing import TypeVar

from .protected_fields import APP_AUDIT

if TYPE_CHECKING:
  from ...sessions.session import Session

_E = TypeVar('_E')


def is_model_context_event(event: Any) -> bool:
  """Whether `event` is conversation (not an `app_audit` record).

  An `app_audit` Event stays stored, returned and exported, but it is
  neither model context nor a control-plane signal: no request, summary,
  memory, routing or rehydration decision may read it.
  """
  return getattr(event, 'audience', None) != APP_AUDIT


def model_context_events(events: Sequence[_E]) -> list[_E]:
  """`events` without its `app_audit` records, in order.

  A list holding none is returned as is (the same object), so a history
  without audit Events is read exactly as before.
  """
  if isinstance(events, list) and all(map(is_model_context_event, events)):
    return events
  return [event for event in events if is_model_context_event(event)]


def model_context_session(session: Session) -> Session:
  """`session` as routing sees it: without its `app_audit` Events.

  The same object when it holds none; otherwise a shallow copy whose
  `events` is filtered (the stored Session is never changed).
  """
  events = model_context_events(session.events)
  if events is session.events:
    return session
  return session.model_copy(update={'events': events})
