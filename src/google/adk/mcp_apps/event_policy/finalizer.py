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

"""The core event finalizer: the last step before any session stores an
Event.

Every session service runs `finalize_for_append` at the pre-persistence
seam of `append_event` and `event_persisted` once the backend committed.
The first stamps the protected fields from the operation's `Provenance`
(overwriting whatever a plugin, callback, replacement or mutation set),
then seals profile-bound UI results; the second completes the seals.
Design: docs/design/event-policy.md.

Usage:

  event = await finalize_for_append(session_service, session, event)
  ...  # the backend stores the Event
  await event_persisted(event)
"""

from __future__ import annotations

from typing import Any
from typing import Optional
from typing import TYPE_CHECKING

from ..sealing.append_stage import complete_after_append
from ..sealing.append_stage import seal_before_append
from .audit_actions import enforce_audit_event
from .callback_scope import refuse_reentry
from .protected_fields import Audience
from .protected_fields import Emitter
from .protected_fields import InvocationOrigin
from .provenance import admitted
from .provenance import Provenance
from .provenance import provenance_for
from .provenance import SESSION_API

if TYPE_CHECKING:
  from ...events.event import Event

_CoreValues = tuple[
    Optional[Audience], Optional[InvocationOrigin], Optional[Emitter]
]
"""`(audience, invocation_origin, emitter)` as the core selected them."""


def _core_values(provenance: Provenance) -> _CoreValues:
  return (provenance.audience, provenance.invocation_origin, provenance.emitter)


def _assert_core(event: Event, core: _CoreValues) -> None:
  # Writes only what differs (a model attribute write costs more than a
  # read); the values came from a `Provenance`, which the protected-field
  # types already constrain.
  audience, invocation_origin, emitter = core
  if event.audience != audience:
    event.audience = audience
  if event.invocation_origin != invocation_origin:
    event.invocation_origin = invocation_origin
  if event.emitter != emitter:
    event.emitter = emitter


def _reassert(event: Event, result: Event, core: _CoreValues) -> None:
  """Writes the core values back on the Event given and the one returned."""
  _assert_core(event, core)
  if result is not event:
    _assert_core(result, core)


def finalize_event(event: Event) -> Event:
  """Stamps `event`'s protected fields in place and returns it.

  The core values are taken once, on entry, and reasserted on every exit,
  normal or exceptional, on the Event passed in and on the one returned,
  so no stage of the finalizer can leave another value behind.
  """
  return _finalize(event, _core_values(provenance_for(event.invocation_id)))


def _finalize(event: Event, core: _CoreValues) -> Event:
  _assert_core(event, core)
  result = event
  try:
    result = enforce_audit_event(result)
    return result
  finally:
    _reassert(event, result, core)


async def finalize_for_append(
    session_service: Any, session: Any, event: Event
) -> Event:
  """The pre-persistence seam: stamp, then seal, then reassert.

  Args:
    session_service: The service appending (sealing reads the Session's
      incarnation through it).
    session: The Session the Event is appended to.
    event: The Event to store; finalized in place.

  Returns:
    The Event to store.

  Raises:
    EventPolicyError: The Event breaks the event policy, or a restricted
      callback for this Session is appending (`SAME_SESSION_REENTRY`).
    DescriptorError, SealedResultStoreError, StaleIncarnationError: From
      the sealing stage (`sealing.append_stage.seal_before_append`);
      nothing may be stored.
  """
  refuse_reentry(
      getattr(session, 'app_name', None),
      getattr(session, 'user_id', None),
      getattr(session, 'id', None),
      'append_event',
  )
  core = _core_values(provenance_for(event.invocation_id))
  result = event
  try:
    result = _finalize(event, core)
    result = await seal_before_append(session_service, session, result)
    return result
  finally:
    _reassert(event, result, core)


async def finalize_for_import(
    session_service: Any, session: Any, event: Event
) -> Event:
  """`finalize_for_append` for an Event imported at Session creation.

  An import is a first-party Session API write, so it is stamped as
  `SESSION_API` whatever operation is admitted around it;
  `lifecycle.imported_events.finalize_imported_events` stamps the same
  values before it digests, so the receipt's digest covers the stored
  Events.
  """
  with admitted(SESSION_API):
    return await finalize_for_append(session_service, session, event)


async def event_persisted(event: Event) -> None:
  """The post-persistence seam: completes what sealing began."""
  await complete_after_append(event)
