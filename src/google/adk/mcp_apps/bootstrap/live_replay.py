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

"""Interactive replay of a sealed result to a live View.

Bytes are released only to a View that still holds a live grant, in the
incarnation the grant was issued in. Design: docs/design/bootstrap.md.

Usage:

  result = await replay_to_view(
      grant, profile=profile, session_service=session_service
  )
"""

from __future__ import annotations

from typing import Any

from ..profile.host_profile import McpAppsHostProfile
from ..sealing.resolver import GatedResultResolver
from ..sealing.resolver import ResolutionFault
from ..sealing.resolver import ResolvedResult
from ..sealing.resolver import SealedResolutionError
from .render import ViewGrant


def _require_live(grant: ViewGrant) -> None:
  if not grant.active:
    raise SealedResolutionError(
        ResolutionFault.VIEW_NOT_LIVE,
        grant.binding.function_call_id,
        'the View grant was revoked or its connection generation is gone',
    )


async def replay_to_view(
    grant: ViewGrant,
    *,
    profile: McpAppsHostProfile,
    session_service: Any,
) -> ResolvedResult:
  """Resolves the sealed result of `grant`'s widget for its live View.

  Args:
    grant: The View's grant, as `bootstrap_render` returned it.
    profile: The bound profile.
    session_service: The Session service with the authoritative Events.

  Returns:
    The released result, for host-private memory.

  Raises:
    SealedResolutionError: Nothing is released; `VIEW_NOT_LIVE` for a
      revoked grant or a lost generation, `SESSION_NOT_ACTIVE` or
      `STALE_INCARNATION` once the Session was deleted or recreated, and
      the resolver's other faults.
  """
  _require_live(grant)
  binding = grant.binding
  resolved = await GatedResultResolver(profile, session_service).resolve(
      grant.session,
      event_id=binding.event_id,
      function_call_id=binding.function_call_id,
      view=binding,
      incarnation=grant.incarnation,
  )
  # The resolve awaited three stores; the grant may have ended meanwhile.
  _require_live(grant)
  return resolved
