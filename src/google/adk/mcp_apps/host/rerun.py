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


"""Refresh and "Run tool again": a cold widget's action, run as a new call.

`run_tool_again` runs what `cold_affordance` offers for a cold widget (a
refresh of a replay-safe call, or the explicit re-run of any other) as a
new Runner-owned invocation: a host-authored function call of the same
tool with the recorded arguments, executed by ADK's function-call handling
on the Session the invocation owns. The result is sealed and carries a new
widget exactly as a model-called UI tool's does. Design and decisions:
docs/decisions/issue25-rerun.md.

Usage:

  offer = await decide_cold_affordance(   # what to show; runs nothing
      runner=runner, registry=registry, principal=principal,
      session=key, event_id=event_id, function_call_id=call_id,
  )
  result = await run_tool_again(
      runner=runner, registry=registry, principal=principal,
      session=key, event_id=event_id, function_call_id=call_id,
      confirm=ask_the_user,
  )
  await bootstrap_render(..., event_id=result.event_id,
                         function_call_id=result.function_call_id)
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from collections.abc import Awaitable
from collections.abc import Callable
import dataclasses
from typing import Any
from typing import Final
from typing import Optional
import uuid

from google.genai import types as genai_types

from ...agents.invocation_context import InvocationContext
from ...agents.invocation_context import new_invocation_context_id
from ...agents.readonly_context import ReadonlyContext
from ...events.event import Event
from ...flows.llm_flows.functions import handle_function_calls_async
from ...tools.tool_confirmation import ToolConfirmation
from ...tools.tool_context import ToolContext
from ..bootstrap.cold_replay import cold_affordance
from ..bootstrap.cold_replay import ColdAffordance
from ..bootstrap.cold_replay import ColdOffer
from ..contracts.principal_resolver import Principal
from ..contracts.scope import SessionKey
from ..contracts.session_authorizer import SessionPurpose
from ..contracts.session_authorizer import WidgetTarget
from ..coordination.coordinator import session_coordinator
from ..descriptor.errors import DescriptorError
from ..descriptor.reference_validation import mcp_widgets
from ..descriptor.widget_descriptor import McpAppWidgetDescriptor
from ..event_policy.provenance import admitted
from ..event_policy.provenance import bind_invocation
from ..event_policy.provenance import Provenance
from ..event_policy.provenance import release_invocation
from ..profile.host_profile import McpAppsHostProfile
from ..sealing.result_sealer import PENDING_SEALS
from .denial_log import log_denial
from .errors import HostServiceError
from .errors import HostServiceErrorReason

__all__ = [
    'HOST_RERUN',
    'RERUN_OPERATION',
    'RerunConfirmation',
    'RerunResult',
    'decide_cold_affordance',
    'run_tool_again',
]

RERUN_OPERATION: Final = 'host.rerun'
"""The operation name a refresh or re-run owns its Session under."""

HOST_RERUN: Final = Provenance('user', immediate_caller='host')
"""A refresh or re-run: the user asked for it (ingress `user`) and the host,
not the model, calls the tool (`immediate_caller` `host`). Its Events are
ordinary conversation Events (no emitter or audience override)."""


@dataclasses.dataclass(frozen=True)
class RerunConfirmation:
  """What the host shows the user before a refresh or re-run runs.

  Attributes:
    offer: `REFRESH` or `RERUN`.
    tool_name: The tool that will run again (native name).
    warning: `RERUN_WARNING` for `RERUN`; None for a refresh.
    tool_requires_confirmation: Whether the tool's own confirmation policy
      (`require_confirmation`) asks for one.
  """

  offer: ColdOffer
  tool_name: str
  warning: Optional[str]
  tool_requires_confirmation: bool


Confirm = Callable[[RerunConfirmation], Awaitable[bool]]
"""The host's confirmation: True runs the call; False or raising runs
nothing."""


@dataclasses.dataclass(frozen=True)
class RerunResult:
  """The new invocation a refresh or re-run created.

  Attributes:
    offer: `REFRESH` or `RERUN`.
    invocation_id: The new invocation.
    event_id: The new function-response Event (the new widget's Event).
    function_call_id: The new call (the new widget's id).
    operation_id: The new sealed record's operation instance.
    rendered: Whether the new Event carries a widget for the call.
  """

  offer: ColdOffer
  invocation_id: str
  event_id: str
  function_call_id: str
  operation_id: Optional[str]
  rendered: bool


def _deny(
    detail: str, session: SessionKey, event_id: str, call_id: str
) -> HostServiceError:
  log_denial(
      'run_tool_again',
      HostServiceErrorReason.RERUN_DENIED,
      app_name=session.app_name,
      session_id=session.session_id,
      event_id=event_id,
      function_call_id=call_id,
      detail=detail,
  )
  return HostServiceError(HostServiceErrorReason.RERUN_DENIED, detail)


async def _session(runner: Any, session: SessionKey) -> Any:
  return await runner.session_service.get_session(
      app_name=session.app_name,
      user_id=session.user_id,
      session_id=session.session_id,
  )


def _descriptor(
    stored: Any, event_id: str, call_id: str
) -> Optional[McpAppWidgetDescriptor]:
  """The widget's public descriptor on its persisted Event, if any."""
  if stored is None:
    return None
  event = next((e for e in stored.events if e.id == event_id), None)
  if event is None:
    return None
  try:
    widget = mcp_widgets(event).get(call_id)
  except DescriptorError:
    return None
  return widget if isinstance(widget, McpAppWidgetDescriptor) else None


def _decision_context(
    runner: Any, stored: Any, agent: Any, invocation_id: str
) -> InvocationContext:
  """A context of `agent` on `stored` to list its tools and ask their
  confirmation policy; the call itself runs in the Runner's own context."""
  return InvocationContext(
      artifact_service=runner.artifact_service,
      session_service=runner.session_service,
      memory_service=runner.memory_service,
      credential_service=runner.credential_service,
      plugin_manager=runner.plugin_manager,
      invocation_id=invocation_id,
      agent=agent,
      session=stored,
  )


def _bound_tool(tools: list[Any], toolset_id: str, tool_name: str) -> Any:
  """The agent's tool serving `tool_name` of `toolset_id`, if listed."""
  for tool in tools:
    handle = getattr(tool, 'bound_tool_handle', None)
    routing = getattr(tool, 'routing', None)
    if (
        handle is not None
        and routing is not None
        and handle.name == tool_name
        and routing.toolset_id == toolset_id
    ):
      return tool
  return None


async def _requires_confirmation(
    tool: Any, arguments: dict[str, Any], invocation_context: Any
) -> bool:
  """The tool's own confirmation policy for these arguments."""
  check = getattr(tool, 'check_require_confirmation', None)
  if check is None:
    return False
  try:
    return bool(await check(dict(arguments), ToolContext(invocation_context)))
  except Exception:  # pylint: disable=broad-except
    return True  # A policy that cannot answer asks.


class _Refused(Exception):
  """The widget may not be acted on; `detail` says why."""

  def __init__(self, detail: str) -> None:
    super().__init__(detail)
    self.detail = detail


async def _authorized_widget(
    runner: Any,
    bound: McpAppsHostProfile,
    principal: Principal,
    session: SessionKey,
    event_id: str,
    call_id: str,
) -> tuple[McpAppWidgetDescriptor, Any]:
  """The widget's descriptor and agent, once `principal` may see both.

  Raises:
    _Refused: `unauthorized`, `widget_not_found` or `agent_missing`.
  """
  # The public descriptor names the toolset and the agent; it is read only
  # after the principal may see the Session at all.
  authorizer = bound.session_authorizer
  try:
    allowed = authorizer is not None and await authorizer.authorize(
        principal, session, SessionPurpose.VIEW
    )
  except Exception:  # pylint: disable=broad-except
    allowed = False
  if not allowed or authorizer is None:
    raise _Refused('unauthorized')
  descriptor = _descriptor(await _session(runner, session), event_id, call_id)
  if descriptor is None:
    raise _Refused('widget_not_found')
  find_agent = getattr(runner.agent, 'find_agent', None)
  agent = find_agent(descriptor.correlation.agent_path) if find_agent else None
  if agent is None or not hasattr(agent, 'canonical_tools'):
    raise _Refused('agent_missing')
  try:
    allowed = await authorizer.authorize(
        principal,
        session,
        SessionPurpose.VIEW,
        widget=WidgetTarget(descriptor.toolset_id, event_id, call_id),
    )
  except Exception:  # pylint: disable=broad-except
    allowed = False
  if not allowed:
    raise _Refused('unauthorized')
  return descriptor, agent


async def _decide(
    runner: Any,
    bound: McpAppsHostProfile,
    principal: Principal,
    session: SessionKey,
    event_id: str,
    call_id: str,
    descriptor: McpAppWidgetDescriptor,
    agent: Any,
    invocation_id: str,
) -> tuple[ColdAffordance, InvocationContext, Any]:
  """The authorized widget's affordance against the agent's tools now.

  Returns:
    The affordance (`tool_missing` when the agent no longer lists the
    bound tool), the decision's context, and the bound tool (None for the
    placeholder).

  Raises:
    _Refused: `session_missing` or `tools_unavailable`.
  """
  stored = await _session(runner, session)
  if stored is None:
    raise _Refused('session_missing')
  context = _decision_context(runner, stored, agent, invocation_id)
  try:
    tools = await agent.canonical_tools(ReadonlyContext(context))
  except Exception as e:  # pylint: disable=broad-except
    raise _Refused('tools_unavailable') from e
  listing = [
      t.raw_mcp_tool
      for t in tools
      if getattr(t, 'routing', None) is not None
      and t.routing.toolset_id == descriptor.toolset_id
  ]
  decided = await cold_affordance(
      profile=bound,
      session_service=runner.session_service,
      principal=principal,
      session=session,
      event_id=event_id,
      function_call_id=call_id,
      current_tools=listing,
  )
  if decided.offer is ColdOffer.PLACEHOLDER or decided.record is None:
    return decided, context, None
  tool = _bound_tool(tools, descriptor.toolset_id, decided.record.tool_name)
  if tool is None:
    placeholder = dataclasses.replace(
        decided,
        offer=ColdOffer.PLACEHOLDER,
        reason='tool_missing',
        warning=None,
    )
    return placeholder, context, None
  return decided, context, tool


async def decide_cold_affordance(
    *,
    runner: Any,
    registry: Any,
    principal: Principal,
    session: SessionKey,
    event_id: str,
    function_call_id: str,
    profile: Optional[McpAppsHostProfile] = None,
) -> ColdAffordance:
  """What a cold widget offers now, decided as `run_tool_again` decides it.

  Runs nothing and raises no denial: a refusal (`unauthorized`,
  `widget_not_found`, ...) is the `PLACEHOLDER` offer with that reason.

  Args:
    runner: The app-enabled `Runner` whose agent ran the original call.
    registry: The `McpAppBindingRegistry` serving the widget's toolset.
    principal: The resolved principal asking.
    session: The widget's Session.
    event_id: The widget's Event.
    function_call_id: The widget's call.
    profile: The bound profile (the registry's by default).

  Returns:
    The affordance (its `record` is host-private: never render it).
  """
  call_id = function_call_id
  bound = profile or registry.profile
  if bound is None:
    return ColdAffordance(ColdOffer.PLACEHOLDER, call_id, reason='no_profile')
  try:
    descriptor, agent = await _authorized_widget(
        runner, bound, principal, session, event_id, call_id
    )
    decided, _, _ = await _decide(
        runner,
        bound,
        principal,
        session,
        event_id,
        call_id,
        descriptor,
        agent,
        new_invocation_context_id(),
    )
  except _Refused as e:
    return ColdAffordance(ColdOffer.PLACEHOLDER, call_id, reason=e.detail)
  return decided


async def run_tool_again(
    *,
    runner: Any,
    registry: Any,
    principal: Principal,
    session: SessionKey,
    event_id: str,
    function_call_id: str,
    confirm: Optional[Confirm] = None,
    profile: Optional[McpAppsHostProfile] = None,
) -> RerunResult:
  """Runs a cold widget's refresh or "Run tool again" as a new invocation.

  Nothing runs unless the widget's cold affordance is `REFRESH` or `RERUN`
  (decided, then re-decided once the Session is owned) and the confirmation
  policy is met: a re-run always asks `confirm` (the warning that effects
  may repeat); a refresh asks it only when the tool's own confirmation
  policy does. The new call has a new function-call id, a new invocation
  admitted as `HOST_RERUN`, and a new sealed record; no idempotency outcome
  is consulted.

  Args:
    runner: The app-enabled `Runner` whose agent ran the original call.
    registry: The `McpAppBindingRegistry` serving the widget's toolset.
    principal: The resolved principal asking.
    session: The widget's Session.
    event_id: The widget's Event.
    function_call_id: The widget's call.
    confirm: The host's confirmation of the action, shown to the user.
    profile: The bound profile (the registry's by default).

  Returns:
    The new invocation.

  Raises:
    HostServiceError: `RERUN_DENIED` (logged); nothing ran.
  """
  call_id = function_call_id
  bound = profile or registry.profile
  if bound is None:
    raise _deny('no_profile', session, event_id, call_id)

  def deny(detail: str) -> HostServiceError:
    return _deny(detail, session, event_id, call_id)

  try:
    descriptor, agent = await _authorized_widget(
        runner, bound, principal, session, event_id, call_id
    )
  except _Refused as e:
    raise deny(e.detail) from None

  async def affordance(invocation_id: str) -> tuple[ColdAffordance, Any]:
    try:
      decided, context, tool = await _decide(
          runner,
          bound,
          principal,
          session,
          event_id,
          call_id,
          descriptor,
          agent,
          invocation_id,
      )
    except _Refused as e:
      raise deny(e.detail) from e.__cause__
    if (
        decided.offer is ColdOffer.PLACEHOLDER
        or decided.record is None
        or tool is None
    ):
      raise deny(decided.reason or 'placeholder')
    return decided, (context, tool)

  # (1) Decide, and confirm, before owning the Session: the user's answer
  # may take long and must hold no turn of the Session.
  decided, (context, tool) = await affordance(new_invocation_context_id())
  assert decided.record is not None and decided.tool_name is not None
  arguments = dict(decided.record.arguments)
  tool_asks = await _requires_confirmation(tool, arguments, context)
  must_confirm = decided.offer is ColdOffer.RERUN or tool_asks
  confirmed = False
  if must_confirm:
    if confirm is None:
      raise deny('confirmation_required')
    try:
      confirmed = bool(
          await confirm(
              RerunConfirmation(
                  offer=decided.offer,
                  tool_name=decided.tool_name,
                  warning=decided.warning,
                  tool_requires_confirmation=tool_asks,
              )
          )
      )
    except Exception:  # pylint: disable=broad-except
      confirmed = False
    if not confirmed:
      raise deny('confirmation_denied')

  # (2) Own the Session, re-decide against what holds now, run one call.
  async with session_coordinator().owned(session, RERUN_OPERATION):
    # The new invocation lists the tools it then calls: one catalog.
    invocation_id = new_invocation_context_id()
    again, (context, tool) = await affordance(invocation_id)
    if await _requires_confirmation(tool, arguments, context) and not confirmed:
      raise deny('confirmation_required')  # The policy changed meanwhile.
    if (
        again.offer is not decided.offer
        or again.record is None
        or dict(again.record.arguments) != arguments
    ):
      raise deny('affordance_changed')
    return await _run_call(
        runner, context, tool, arguments, again.offer, confirmed, deny
    )


async def _run_call(
    runner: Any,
    context: InvocationContext,
    tool: Any,
    arguments: dict[str, Any],
    offer: ColdOffer,
    confirmed: bool,
    deny: Callable[[str], HostServiceError],
) -> RerunResult:
  """One host-authored call of `tool`, as a Runner-owned invocation."""
  invocation_id = context.invocation_id
  call_id = f'adk-{uuid.uuid4()}'
  # The tool's own confirmation gate sees the host's confirmation as the
  # ADK `ToolConfirmation` it would get from the user.
  confirmations = (
      {call_id: ToolConfirmation(confirmed=True)} if confirmed else None
  )
  operation: list[str] = []

  async def execute(ctx: InvocationContext) -> AsyncGenerator[Event, None]:
    call_event = Event(
        invocation_id=ctx.invocation_id,
        author=ctx.agent.name if ctx.agent is not None else '',
        branch=ctx.branch,
        content=genai_types.Content(
            role='model',
            parts=[
                genai_types.Part(
                    function_call=genai_types.FunctionCall(
                        id=call_id, name=tool.name, args=dict(arguments)
                    )
                )
            ],
        ),
    )
    yield call_event
    response = await handle_function_calls_async(
        ctx, call_event, {tool.name: tool}, None, confirmations
    )
    if response is None:
      return
    pending = PENDING_SEALS.peek(invocation_id, [call_id])
    operation.extend(seal.operation_instance_id for seal in pending)
    yield response

  responses: list[Event] = []
  bind_invocation(invocation_id, HOST_RERUN)
  try:
    with admitted(HOST_RERUN):
      agen = runner.run_host_action_async(
          session=context.session,
          agent=context.agent,
          execute=execute,
          invocation_id=invocation_id,
      )
      try:
        async for event in agen:
          if event.get_function_responses():
            responses.append(event)
      finally:
        await agen.aclose()
  finally:
    release_invocation(invocation_id)
  event = next(
      (
          e
          for e in responses
          if any(r.id == call_id for r in e.get_function_responses())
      ),
      None,
  )
  if event is None:
    # The invocation ran but answered nothing (its before-run plugins
    # ended it early): no call ran and no widget exists.
    raise deny('no_function_response')
  rendered = any(
      getattr(w, 'id', None) == call_id
      for w in event.actions.render_ui_widgets or []
  )
  return RerunResult(
      offer=offer,
      invocation_id=invocation_id,
      event_id=event.id,
      function_call_id=call_id,
      operation_id=operation[0] if operation else None,
      rendered=rendered,
  )
