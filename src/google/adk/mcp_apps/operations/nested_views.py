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

"""The host's negotiation of a nested View for one View-originated call.

A View's call to an app-visible UI-associated tool emits no widget unless
the host independently negotiates a nested View for it: the host's
`NestedViewDecision` is asked, once the call returned a result, whether
this call opens one. Never asked (no decision given, a profile-less call,
a tool without a `ui://` resource, an error result) means no. Design:
docs/decisions/issue25-nested-views.md.

Example:

  def nested_views(offer: NestedViewOffer) -> bool:
    return offer.tool_name == 'show_chart'

  channel = await ViewChannel.open(document, principal=principal,
                                   registry=registry, runner=runner,
                                   nested_views=nested_views)
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
import dataclasses
import hashlib
import inspect
import logging
from typing import Optional
from typing import Protocol
from typing import Union

from ...dependencies._mcp import types as mcp_types
from ..affinity.generations import GenerationHold
from ..affinity.generations import HoldKind
from ..affinity.tool_handles import comparable_projection
from ..canonical_json import canonicalize
from ..contracts.scope import SessionKey

__all__ = [
    'NestedViewDecision',
    'NestedViewOffer',
    'RenderReservationTable',
    'declaration_fingerprint',
    'negotiate_nested_view',
    'reserve_nested_view',
]

logger = logging.getLogger('google_adk.' + __name__)


@dataclasses.dataclass(frozen=True)
class NestedViewOffer:
  """What the host decides a nested View on.

  Attributes:
    session: The calling View's Session.
    toolset_id: The configured toolset.
    server_id: The server the call went to.
    tool_name: The native tool the View called.
    resource_uri: The tool's `ui://` resource (the nested View's).
    operation_id: The call's operation id (the nested widget's
      function-call id).
  """

  session: SessionKey
  toolset_id: str
  server_id: str
  tool_name: str
  resource_uri: str
  operation_id: str


NestedViewDecision = Callable[[NestedViewOffer], Union[bool, Awaitable[bool]]]
"""The host's decision: True opens a nested View for the call."""


class RenderReservationTable(Protocol):
  """Where a nested widget's generation is reserved
  (`affinity.routing.RenderReservations`)."""

  def put(
      self,
      toolset_id: str,
      session: Optional[SessionKey],
      function_call_id: str,
      hold: GenerationHold,
  ) -> None:
    """Reserves `hold` for the widget's first View."""
    ...


async def negotiate_nested_view(
    decision: Optional[NestedViewDecision], offer: NestedViewOffer
) -> bool:
  """Asks the host's decision; a failing decision negotiates nothing."""
  if decision is None:
    return False
  try:
    answer = decision(offer)
    if inspect.isawaitable(answer):
      answer = await answer
  except Exception:  # pylint: disable=broad-except
    logger.warning(
        'the nested-View decision failed; no nested View is opened',
        exc_info=True,
    )
    return False
  return answer is True


def declaration_fingerprint(declaration: mcp_types.Tool) -> str:
  """Hex SHA-256 of the declaration's comparable projection, as a bound
  tool handle's `fingerprint` (what cold activation compares)."""
  return hashlib.sha256(
      canonicalize(comparable_projection(declaration))
  ).hexdigest()


def reserve_nested_view(
    reservations: Optional[RenderReservationTable],
    *,
    hold: GenerationHold,
    toolset_id: str,
    session: SessionKey,
    function_call_id: str,
) -> bool:
  """Reserves the View's generation for the nested widget's first View.

  Returns:
    Whether a reservation was made (not when there is no table or the
    generation is gone: the nested widget is then cold at once).
  """
  if reservations is None:
    return False
  try:
    reservation = hold.generation.hold(HoldKind.RESERVATION)
  except Exception:  # pylint: disable=broad-except
    return False
  reservations.put(toolset_id, session, function_call_id, reservation)
  return True
