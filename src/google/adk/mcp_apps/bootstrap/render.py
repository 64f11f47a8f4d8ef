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


"""`bootstrap_render`: a View from a persisted descriptor.

Authorize, hold the reserved View generation, resolve the sealed result,
read the resource, select exactly one Apps content item, activate; any
failure after the hold releases it. Design: docs/design/bootstrap.md.

Usage:

  document = await bootstrap_render(
      registry=registry, profile=profile, session_service=service,
      principal=principal, session=key, toolset_id=toolset_id,
      event_id=event_id, function_call_id=call_id,
  )
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import enum
import secrets
from typing import Any
from typing import Callable
from typing import Collection
from typing import Mapping
from typing import Optional

from ..affinity.errors import ConnectionAffinityError
from ..affinity.errors import InputRequestRefusedError
from ..affinity.generations import GenerationHold
from ..affinity.rounds import drive_state_rounds
from ..affinity.rounds import MultiRoundError
from ..affinity.rounds import MultiRoundFailure
from ..affinity.rounds import state_kwargs
from ..contracts.principal_resolver import Principal
from ..contracts.scope import SessionKey
from ..contracts.session_authorizer import SessionPurpose
from ..contracts.session_authorizer import WidgetTarget
from ..descriptor.widget_descriptor import McpAppWidgetDescriptor
from ..errors import McpAppsError
from ..event_policy.provenance import admitted_operation
from ..event_policy.provenance import HOST_RENDER
from ..profile.capabilities import MCP_APP_MIME_TYPE
from ..profile.host_profile import McpAppsHostProfile
from ..resources.uri import uris_equal
from ..sealing.errors import SealingError
from ..sealing.errors import SealingErrorReason
from ..sealing.resolver import GatedResultResolver
from ..sealing.resolver import ResolvedResult
from ..sealing.resolver import SealedResolutionError
from ..sealing.resolver import ViewBinding


class BootstrapStep(enum.Enum):
  """The steps of `bootstrap_render`, in order."""

  AUTHORIZE = 1
  RESERVE = 2
  RESOLVE = 3
  READ = 4
  SELECT = 5
  ACTIVATE = 6


class BootstrapError(McpAppsError):
  """Bootstrap failed; no grant exists and the reservation is released.

  `step` is the reason: `AUTHORIZE` (the `SessionAuthorizer` denied the
  View), `RESOLVE` (the gated resolver released nothing), `READ` (the
  `resources/read` failed or asked for input), `SELECT` (not exactly one
  valid Apps content item for the descriptor's URI). `cold` marks a View
  whose generation is gone, at any step: the host offers the cold
  affordance, never a silent rebind.

  Attributes:
    step: Where it failed.
    reason: A short machine-readable reason.
    function_call_id: The widget's call.
    cold: True when the View's generation is gone: the host offers the cold
      affordance instead of a retry.
  """

  def __init__(
      self,
      step: BootstrapStep,
      reason: str,
      function_call_id: str,
      *,
      cold: bool = False,
  ) -> None:
    self.step = step
    self.reason = reason
    self.function_call_id = function_call_id
    self.cold = cold
    super().__init__(
        f'Bootstrap of function call {function_call_id!r} failed at'
        f' {step.name.lower()}: {reason}'
    )


def _gone(step: BootstrapStep, function_call_id: str) -> BootstrapError:
  """The cold failure of a step whose generation is gone."""
  return BootstrapError(
      step, 'generation_invalidated', function_call_id, cold=True
  )


@dataclasses.dataclass(eq=False)
class ViewGrant:
  """The host-held grant of one bootstrapped View.

  Never serialized into the HTML or the View's data. Holds the View's
  generation until `revoke`.

  Attributes:
    view_id: A random id the host keys its View table by.
    session: The Session.
    binding: What the View is bound to.
    generation_id: The connection generation the View runs on.
    incarnation: The Session incarnation the grant was issued in; after a
      deletion and recreation the grant serves nothing.
  """

  view_id: str
  session: SessionKey
  binding: ViewBinding
  generation_id: str
  incarnation: int
  _hold: GenerationHold = dataclasses.field(repr=False)

  @property
  def active(self) -> bool:
    """False once revoked, or once the View's generation is gone."""
    try:
      self._hold.check()
    except ConnectionAffinityError:
      return False
    return True

  def revoke(self) -> None:
    """Ends the grant and releases the View's generation hold; idempotent."""
    self._hold.release()

  def __repr__(self) -> str:
    return (
        f'ViewGrant(<redacted>, generation_id={self.generation_id!r},'
        f' incarnation={self.incarnation})'
    )


def view_hold(grant: ViewGrant) -> GenerationHold:
  """The hold a grant keeps on its View's generation.

  For the View's governed channel (`operations.view_channel`) only: what
  runs on it bypasses the channel's admission, so it is not part of the
  public API and a grant does not expose it.
  """
  return grant._hold  # pylint: disable=protected-access


@dataclasses.dataclass(frozen=True)
class RenderDocument:
  """What the renderer needs for one View.

  Attributes:
    html: The exact HTML of the selected content item.
    ui_meta: `_meta.ui` from the same response (the item's, else the
      listing's), verbatim; None when the server sent none.
    resource_uri: The item's URI, as the server sent it.
    mime_type: The item's MIME type.
    tool_input: The call's arguments, from the sealed refresh record.
    tool_result: The full, unprojected tool result.
    descriptor: The persisted descriptor.
    grant: The host-held grant; never part of `view_data`.
  """

  html: str
  ui_meta: Optional[Mapping[str, Any]]
  resource_uri: str
  mime_type: str
  tool_input: Optional[Mapping[str, Any]]
  tool_result: Mapping[str, Any]
  descriptor: McpAppWidgetDescriptor
  grant: ViewGrant = dataclasses.field(repr=False)

  def view_data(self) -> dict[str, Any]:
    """What may be handed to the View: no grant, no host state."""
    return {
        'html': self.html,
        'uiMeta': self.ui_meta,
        'toolInput': self.tool_input,
        'toolResult': self.tool_result,
    }


Observer = Callable[[BootstrapStep], None]
"""Called as each step begins (ordering tests, tracing)."""


def select_app_content(
    contents: list[Any],
    resource_uri: str,
    *,
    max_bytes: int,
    function_call_id: str = '',
) -> tuple[Any, str]:
  """Exact-one selection and validation of a `resources/read` result.

  Args:
    contents: The response's `contents`.
    resource_uri: The descriptor's resource URI.
    max_bytes: Largest accepted HTML, in UTF-8 bytes.
    function_call_id: For errors.

  Returns:
    The selected item and its decoded HTML.

  Raises:
    BootstrapError: (`SELECT`) Zero or several matches, an undecodable item, or
      one over `max_bytes`.
  """
  matches = [
      item
      for item in contents
      if getattr(item, 'mime_type', None) == MCP_APP_MIME_TYPE
      and uris_equal(str(getattr(item, 'uri', '')), resource_uri)
  ]
  if len(matches) != 1:
    raise BootstrapError(
        BootstrapStep.SELECT,
        'no_match' if not matches else 'several_matches',
        function_call_id,
    )
  item = matches[0]
  text = getattr(item, 'text', None)
  if text is None:
    try:
      raw = base64.b64decode(getattr(item, 'blob', None) or '', validate=True)
      text = raw.decode('utf-8')
    except (binascii.Error, UnicodeDecodeError, ValueError) as e:
      raise BootstrapError(
          BootstrapStep.SELECT, 'bad_encoding', function_call_id
      ) from e
  if not isinstance(text, str):
    raise BootstrapError(BootstrapStep.SELECT, 'bad_encoding', function_call_id)
  if len(text.encode('utf-8', 'surrogatepass')) > max_bytes:
    raise BootstrapError(BootstrapStep.SELECT, 'too_large', function_call_id)
  return item, text


async def read_app_resource(
    hold: GenerationHold,
    uri: str,
    *,
    max_rounds: int,
    max_seconds: float,
    function_call_id: str = '',
) -> Any:
  """One logical `resources/read` on `hold`'s generation.

  A 2026-07-28 server may answer in state-only rounds (an
  `InputRequiredResult` carrying only `requestState`); each is re-issued
  with its state on the same generation, within the profile's MRTR limits
  (`affinity.rounds.drive_state_rounds`). A round that asks for input fails
  closed: v1 bootstrap gathers none. A legacy-era generation is
  single-round: an intermediate result there fails the read.

  Returns:
    The complete `ReadResourceResult`.

  Raises:
    BootstrapError: (`cold`) The generation is gone; (`READ`) the read
      failed, asked for input, or exceeded the round or time limit.
  """
  call_id = function_call_id
  try:
    return await drive_state_rounds(
        lambda state: hold.read_resource(uri, **state_kwargs(state)),
        era=hold.generation.era,
        generation_id=hold.generation_id,
        method='resources/read',
        max_rounds=max_rounds,
        max_seconds=max_seconds,
    )
  except ConnectionAffinityError as e:
    if isinstance(e, InputRequestRefusedError):
      raise BootstrapError(BootstrapStep.READ, 'input_required', call_id) from e
    raise _gone(BootstrapStep.READ, call_id) from e
  except MultiRoundError as e:
    reason = _ROUND_FAILURES.get(e.failure, 'input_required')
    raise BootstrapError(BootstrapStep.READ, reason, call_id) from e
  except Exception as e:  # pylint: disable=broad-except
    raise BootstrapError(BootstrapStep.READ, 'read_failed', call_id) from e


_ROUND_FAILURES: Mapping[MultiRoundFailure, str] = {
    MultiRoundFailure.ROUNDS_EXCEEDED: 'mrtr_rounds_exceeded',
    MultiRoundFailure.TIMEOUT: 'mrtr_timeout',
    MultiRoundFailure.LEGACY_INTERMEDIATE: 'read_failed',
}
"""`BootstrapError` reasons of the multi-round failures; a malformed round
(neither input requests nor state) stays `input_required`, as before."""


def _ui_meta(item: Any, listing_ui_meta: Optional[Mapping[str, Any]]) -> Any:
  meta = getattr(item, 'meta', None)
  if isinstance(meta, Mapping) and 'ui' in meta:
    return meta['ui']
  return listing_ui_meta


@admitted_operation(HOST_RENDER)
async def bootstrap_render(
    *,
    registry: Any,
    profile: McpAppsHostProfile,
    session_service: Any,
    principal: Principal,
    session: SessionKey,
    toolset_id: str,
    event_id: str,
    function_call_id: str,
    listing_ui_meta: Optional[Mapping[str, Any]] = None,
    agent_names: Optional[Collection[str]] = None,
    observer: Optional[Observer] = None,
) -> RenderDocument:
  """Bootstraps one View, in order; see docs/design/bootstrap.md.

  The render is the host's own operation: an Event appended while it runs
  is stamped `mcp_app`, emitted by the host, for the app_audit audience.

  Args:
    registry: The `McpAppBindingRegistry` serving the toolset.
    profile: The bound profile.
    session_service: The Session service with the authoritative Events.
    principal: The resolved calling principal.
    session: The Session.
    toolset_id: The toolset the descriptor names.
    event_id: The Event whose widget is rendered.
    function_call_id: The widget's call.
    listing_ui_meta: The `resources/list` entry's `_meta.ui`, used only when
      the content item carries none.
    agent_names: The agents the host still runs; a descriptor whose
      originating agent is not among them fails (`missing_agent`) before
      any server request. None skips the check.
    observer: Called as each step begins.

  Returns:
    The document, with an active grant.

  Raises:
    BootstrapError: A subclass per step; nothing stays reserved.
  """
  call_id = function_call_id

  def begin(step: BootstrapStep) -> None:
    if observer is not None:
      observer(step)

  begin(BootstrapStep.AUTHORIZE)
  authorizer = profile.session_authorizer
  try:
    allowed = authorizer is not None and await authorizer.authorize(
        principal,
        session,
        SessionPurpose.VIEW,
        widget=WidgetTarget(toolset_id, event_id, call_id),
    )
  except Exception:  # pylint: disable=broad-except
    allowed = False  # An authorizer that raises denies.
  if not allowed:
    raise BootstrapError(BootstrapStep.AUTHORIZE, 'denied', call_id)

  begin(BootstrapStep.RESERVE)
  reservations = registry.render_reservations
  try:
    # Each View holds the reserved generation on its own (P5-VIEW-01).
    hold = reservations.hold_view(toolset_id, session, call_id)
  except ConnectionAffinityError as e:
    raise _gone(BootstrapStep.RESERVE, call_id) from e
  if hold is None:
    raise BootstrapError(
        BootstrapStep.RESERVE, 'no_reservation', call_id, cold=True
    )
  try:
    try:
      hold.check()
    except ConnectionAffinityError as e:
      raise _gone(BootstrapStep.RESERVE, call_id) from e
    binding = ViewBinding(
        toolset_id=toolset_id,
        server_id=registry.server_id(toolset_id),
        event_id=event_id,
        function_call_id=call_id,
    )

    begin(BootstrapStep.RESOLVE)
    try:
      resolved: ResolvedResult = await GatedResultResolver(
          profile, session_service
      ).resolve(
          session, event_id=event_id, function_call_id=call_id, view=binding
      )
    except SealedResolutionError as e:
      raise BootstrapError(BootstrapStep.RESOLVE, e.fault.value, call_id) from e
    descriptor = resolved.descriptor
    assert descriptor is not None  # `view` is only satisfied by one.
    if (
        agent_names is not None
        and descriptor.correlation.agent_path not in agent_names
    ):
      raise BootstrapError(BootstrapStep.RESOLVE, 'missing_agent', call_id)
    try:
      tool_input: Optional[Mapping[str, Any]] = dict(
          resolved.refresh_record().arguments
      )
    except SealingError as e:
      if e.reason is not SealingErrorReason.REFRESH_RECORD_CORRUPT:
        raise
      tool_input = None

    begin(BootstrapStep.READ)
    result = await read_app_resource(
        hold,
        descriptor.resource_uri,
        max_rounds=profile.limits.mrtr_max_rounds,
        max_seconds=profile.limits.mrtr_max_seconds,
        function_call_id=call_id,
    )

    begin(BootstrapStep.SELECT)
    item, html = select_app_content(
        list(result.contents),
        descriptor.resource_uri,
        max_bytes=profile.limits.delivery.max_response_bytes,
        function_call_id=call_id,
    )
    begin(BootstrapStep.ACTIVATE)
    try:
      # Readiness may have been lost (or the generation invalidated) while
      # the read was in flight: no grant for a generation that is gone.
      hold.check()
    except ConnectionAffinityError as e:
      raise _gone(BootstrapStep.ACTIVATE, call_id) from e
  except BaseException:
    hold.release()
    # A failed bootstrap leaves the widget cold for later Views too; Views
    # already open keep their own holds.
    reservations.discard(toolset_id, session, call_id)
    raise

  grant = ViewGrant(
      view_id=secrets.token_urlsafe(24),
      session=session,
      binding=binding,
      generation_id=hold.generation_id,
      incarnation=resolved.scope.incarnation,
      _hold=hold,
  )
  return RenderDocument(
      html=html,
      ui_meta=_ui_meta(item, listing_ui_meta),
      resource_uri=str(item.uri),
      mime_type=str(item.mime_type),
      tool_input=tool_input,
      tool_result=resolved.full_result(),
      descriptor=descriptor,
      grant=grant,
  )
