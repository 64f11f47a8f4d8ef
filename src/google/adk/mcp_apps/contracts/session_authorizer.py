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


"""The `SessionAuthorizer` deployment contract: may this principal act here.

After the principal is resolved, every View-originated operation asks
whether that principal may act on the ADK Session `(app_name, user_id,
session_id)` for a named purpose. `VIEW` covers render bootstrap and the
governed operations of a live View; `EXPORT` is the distinct purpose of the
cold, purpose-bound export resolver, which a deployment must grant
explicitly. Binding to a widget, View and channel is enforced by the host's
leases, not here.
"""

from __future__ import annotations

import enum
from typing import Protocol
from typing import runtime_checkable

from .principal_resolver import Principal
from .scope import SessionKey


class SessionPurpose(enum.Enum):
  """What the principal wants to do with the Session."""

  VIEW = 'view'
  """Bootstrap and operate a View of the Session."""

  EXPORT = 'export'
  """Read sealed results cold, through the export resolver."""


@runtime_checkable
class SessionAuthorizer(Protocol):
  """Decides whether a principal may act on a Session for a purpose.

  ADK calls `authorize` at admission, at the post-queue barrier, at
  bootstrap and cold activation, and immediately before an export releases
  bytes, always for the principal resolved for the current request, so a
  revocation takes effect at the next check.
  """

  async def authorize(
      self,
      principal: Principal,
      session: SessionKey,
      purpose: SessionPurpose,
  ) -> bool:
    """Whether `principal` may act on `session` for `purpose`.

    Args:
      principal: The resolved calling principal.
      session: The Session the operation targets.
      purpose: What the operation does.

    Returns:
      True to allow. False is a terminal, audit-logged denial. An exception
      is treated as a denial too.
    """
    ...
