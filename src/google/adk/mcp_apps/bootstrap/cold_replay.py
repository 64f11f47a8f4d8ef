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


"""Cold replay: what a widget offers once its View is gone for good.

A View is never resurrected; the host may offer a one-click refresh of a
replay-safe call, an explicit re-run, or the read-only placeholder. Nothing
here contacts a server. Design: docs/design/bootstrap.md.

Usage:

  affordance = await cold_affordance(
      profile=profile, session_service=service, principal=principal,
      session=key, event_id=event_id, function_call_id=call_id,
      current_tools=tools,
  )
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
from typing import Any
from typing import Optional
from typing import Sequence

import jsonschema

from ..affinity.tool_handles import comparable_projection
from ..affinity.tool_handles import ui_resource_uri
from ..canonical_json import canonicalize
from ..canonical_json import CanonicalJsonError
from ..catalog.visibility import tool_visibility
from ..contracts.principal_resolver import Principal
from ..contracts.replay_classification import ReplayClass
from ..contracts.replay_classification import ToolIdentity
from ..contracts.scope import SessionKey
from ..contracts.session_authorizer import SessionPurpose
from ..profile.host_profile import McpAppsHostProfile
from ..sealing.errors import SealingError
from ..sealing.errors import SealingErrorReason
from ..sealing.refresh_record import RefreshInvocationRecord
from ..sealing.resolver import GatedResultResolver
from ..sealing.resolver import SealedResolutionError

RERUN_WARNING = 'Running this tool again may repeat its effects.'
"""What the "Run tool again" action says before it runs."""


class ColdOffer(enum.Enum):
  """What a cold widget offers."""

  REFRESH = 'refresh'
  RERUN = 'rerun'
  PLACEHOLDER = 'placeholder'


@dataclasses.dataclass(frozen=True)
class ColdAffordance:
  """The cold state of one widget.

  Attributes:
    offer: What the host may show.
    function_call_id: The widget's call.
    reason: Why the offer is not `REFRESH` (None when it is).
    tool_name: The tool the "Run tool again" action names.
    warning: `RERUN_WARNING` for `RERUN`.
    record: The sealed refresh record (host-private; never rendered).
  """

  offer: ColdOffer
  function_call_id: str
  reason: Optional[str] = None
  tool_name: Optional[str] = None
  warning: Optional[str] = None
  record: Optional[RefreshInvocationRecord] = dataclasses.field(
      default=None, repr=False
  )


def _placeholder(call_id: str, reason: str) -> ColdAffordance:
  return ColdAffordance(ColdOffer.PLACEHOLDER, call_id, reason=reason)


def _fingerprint(tool: Any) -> str:
  return hashlib.sha256(canonicalize(comparable_projection(tool))).hexdigest()


async def cold_affordance(
    *,
    profile: McpAppsHostProfile,
    session_service: Any,
    principal: Principal,
    session: SessionKey,
    event_id: str,
    function_call_id: str,
    current_tools: Sequence[Any],
    confirmation_required: bool = False,
    confirmation_satisfied: bool = False,
) -> ColdAffordance:
  """Decides a cold widget's affordance; see the module docstring.

  Args:
    profile: The bound profile.
    session_service: The Session service with the authoritative Events.
    principal: The resolved principal asking.
    session: The Session.
    event_id: The widget's Event.
    function_call_id: The widget's call.
    current_tools: A fresh native listing (`types.Tool`) of the toolset's
      server.
    confirmation_required: Whether the live confirmation policy requires a
      confirmation before the tool runs.
    confirmation_satisfied: Whether that confirmation is already given.

  Returns:
    The affordance.
  """
  call_id = function_call_id
  authorizer = profile.session_authorizer
  try:
    allowed = authorizer is not None and await authorizer.authorize(
        principal, session, SessionPurpose.VIEW
    )
  except Exception:  # pylint: disable=broad-except
    allowed = False
  if not allowed:
    return _placeholder(call_id, 'unauthorized')
  try:
    resolved = await GatedResultResolver(
        profile, session_service
    ).resolve_refresh_record(
        session, event_id=event_id, function_call_id=call_id
    )
    record = resolved.record
  except SealedResolutionError as e:
    return _placeholder(call_id, e.fault.value)
  except SealingError as e:
    if e.reason is not SealingErrorReason.REFRESH_RECORD_CORRUPT:
      raise
    return _placeholder(call_id, 'refresh_record_unavailable')
  descriptor = resolved.descriptor
  if (
      descriptor is None
      or record.correlation.get('functionCallId') != call_id
      or record.server_id != descriptor.server_id
      or record.toolset_id != descriptor.toolset_id
      or record.binding_revision != descriptor.binding_revision
  ):
    # A record moved from another call (a swapped argument locator).
    return _placeholder(call_id, 'refresh_record_mismatch')
  named = ColdAffordance(
      ColdOffer.PLACEHOLDER, call_id, tool_name=record.tool_name, record=record
  )
  tool = next((t for t in current_tools if t.name == record.tool_name), None)
  if tool is None:
    return dataclasses.replace(named, reason='tool_missing')
  visibility = tool_visibility(tool)
  if not (visibility.model or visibility.app):
    return dataclasses.replace(named, reason='not_eligible')
  if not descriptor.matches_resource(ui_resource_uri(tool)):
    return dataclasses.replace(named, reason='resource_changed')
  try:
    if _fingerprint(tool) != record.declaration_fingerprint:
      return dataclasses.replace(named, reason='schema_changed')
  except CanonicalJsonError:
    return dataclasses.replace(named, reason='schema_changed')
  try:
    jsonschema.validate(dict(record.arguments), tool.input_schema or {})
  except jsonschema.exceptions.ValidationError:
    return dataclasses.replace(named, reason='arguments_invalid')
  except jsonschema.exceptions.SchemaError:
    return dataclasses.replace(named, reason='schema_invalid')
  authority = profile.replay_classification
  if (
      authority is None
      or not record.classification_source
      or authority.source != record.classification_source
      or authority.revision != record.classification_revision
  ):
    return dataclasses.replace(named, reason='classification_changed')
  try:
    current = authority.classify(
        ToolIdentity(record.server_id, record.toolset_id, record.tool_name)
    )
  except Exception:  # pylint: disable=broad-except
    return dataclasses.replace(named, reason='classification_unavailable')
  if current.value != record.replay_class:
    return dataclasses.replace(named, reason='classification_changed')
  if current is not ReplayClass.REPLAY_SAFE:
    return dataclasses.replace(
        named,
        offer=ColdOffer.RERUN,
        reason='not_replay_safe',
        warning=RERUN_WARNING,
    )
  if confirmation_required and not confirmation_satisfied:
    return dataclasses.replace(named, reason='confirmation_required')
  return dataclasses.replace(named, offer=ColdOffer.REFRESH)
