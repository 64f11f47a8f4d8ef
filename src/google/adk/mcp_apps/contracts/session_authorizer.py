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
explicitly. Each ask names the widget and, for a live View, the channel
(`view_instance_id`) it is for, so a deployment may scope its decision to
them; the host's leases bind the rest.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Optional
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


@dataclasses.dataclass(frozen=True)
class WidgetTarget:
  """The widget, and the View's channel, an authorization is asked for.

  Attributes:
    toolset_id: The toolset the widget's tool belongs to.
    event_id: The Event that reports the widget's call.
    function_call_id: The widget's call.
    view_instance_id: The View's channel, once the View exists; None for a
      bootstrap's first ask, a cold activation and an export.
  """

  toolset_id: str
  event_id: str
  function_call_id: str
  view_instance_id: Optional[str] = None


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
      *,
      widget: Optional[WidgetTarget] = None,
  ) -> bool:
    """Whether `principal` may act on `session` for `purpose`.

    Args:
      principal: The resolved calling principal.
      session: The Session the operation targets.
      purpose: What the operation does.
      widget: The widget (and View channel) the operation is for. ADK
        passes it for a bootstrap, a live View's operations and an export;
        a cold activation asks before the widget is resolved (None).

    Returns:
      True to allow. False is a terminal, audit-logged denial. An exception
      is treated as a denial too.
    """
    ...
