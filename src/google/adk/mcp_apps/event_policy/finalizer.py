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

Every session service calls `finalize_event` at the pre-persistence seam of
`append_event`. It stamps the protected fields from the operation's
`Provenance`, overwriting whatever a plugin, callback, replacement or
mutation set. Design: docs/design/event-policy.md.

Usage:

  event = finalize_event(event)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .audit_actions import enforce_audit_event
from .provenance import provenance_for

if TYPE_CHECKING:
  from ...events.event import Event


def finalize_event(event: Event) -> Event:
  """Stamps `event`'s protected fields in place and returns it."""
  provenance = provenance_for(event.invocation_id)
  event.audience = provenance.audience
  event.invocation_origin = provenance.invocation_origin
  event.emitter = provenance.emitter
  return enforce_audit_event(event)
