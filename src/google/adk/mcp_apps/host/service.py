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


"""`McpAppHostService`: the documented way to host MCP Apps Views.

One method per host action; each resolves the caller's principal from the
adapter's `PrincipalRequest` and denies typed (`HostServiceError`, logged
without secrets). Design: docs/design/host-service.md.

Usage:

  service = McpAppHostService(registry, runner)
  events = await service.run_turn(request, session=key, new_message=content)
  opened = await service.open_view(
      request, session=key, toolset_id='conf', event_id=event.id,
      function_call_id=call_id)
  response = await service.handle(
      request, view_id=opened.view_id, lease=opened.lease,
      request_token=nonce, message=json_rpc)
  await service.close_view(
      request, view_id=opened.view_id, lease=opened.lease,
      acknowledged=True)
  exported = await service.export(
      request, session=key, event_id=event.id, function_call_id=call_id,
      operation_instance_id=op_id)
  offer = await service.cold_affordance(
      request, session=key, event_id=event.id, function_call_id=call_id)
  rerun = await service.run_tool_again(
      request, session=key, event_id=event.id, function_call_id=call_id,
      confirm=ask_the_user)
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
import dataclasses
import hmac
import json
import os
from typing import Any
from typing import Final
from typing import NoReturn
from typing import Optional
from typing import Union

from ...sessions.base_session_service import GetSessionConfig
from ..affinity.security_domain import acting_principal
from ..affinity.security_domain import security_domain
from ..bootstrap.cold_replay import ColdAffordance
from ..bootstrap.cold_replay import ColdOffer
from ..bootstrap.render import bootstrap_render
from ..bootstrap.render import BootstrapError
from ..bootstrap.render import BootstrapStep
from ..bootstrap.render import RenderDocument
from ..contracts.key_provider import BindingKeyUnavailableError
from ..contracts.principal_resolver import Principal
from ..contracts.principal_resolver import PrincipalRequest
from ..contracts.principal_resolver import PrincipalUnresolvedError
from ..contracts.scope import SessionKey
from ..contracts.session_authorizer import SessionPurpose
from ..facades.callback_context import ReadonlyCallbackContext
from ..facades.mcp_callbacks import AppPathCallbacks
from ..operations.errors import OperationError
from ..operations.view_channel import ViewChannel
from ..profile.host_profile import McpAppsHostProfile
from .denial_log import log_denial
from .errors import HostServiceError
from .errors import HostServiceErrorReason
from .export import ExportLimits
from .export import ExportProjection
from .export import ExportResolver
from .export import ExportResult
from .rerun import Confirm
from .rerun import decide_cold_affordance
from .rerun import RerunResult
from .rerun import run_tool_again
from .view_leases import LeaseScope
from .view_leases import ViewLease
from .view_leases import ViewLeases

WORKERS_ENV: Final = 'ADK_MCP_APPS_HOST_WORKERS'
"""How many worker processes serve the host (default 1)."""
STICKY_ENV: Final = 'ADK_MCP_APPS_HOST_STICKY_SESSIONS'
"""`1`/`true` when the deployment routes each Session to one worker."""

TOOL_INPUT: Final = 'ui/notifications/tool-input'
TOOL_RESULT: Final = 'ui/notifications/tool-result'

ViewNotify = Callable[[str, dict[str, Any]], Awaitable[None]]
"""Delivers a channel notification to the View `view_id`."""


@dataclasses.dataclass(frozen=True)
class OpenedView:
  """A View the service opened.

  Attributes:
    view_id: The View instance's id.
    lease: The lease token: for the host page only, never the iframe.
    expires_at: The lease's expiry on the service's lease clock.
    view_data: What the View's frames may see: `html`, `uiMeta` (the
      server's `_meta.ui`: the CSP and permissions the sandbox applies),
      `hostContext`, `toolInput`, `toolResult`. No grant, lease or host
      secret.
  """

  view_id: str
  lease: str = dataclasses.field(repr=False)
  expires_at: float
  view_data: Mapping[str, Any]

  def notifications(self) -> list[dict[str, Any]]:
    """The `tool-input` and `tool-result` notifications the host page
    posts to the iframe once it is initialized."""
    return [
        {
            'jsonrpc': '2.0',
            'method': TOOL_INPUT,
            'params': {'arguments': self.view_data['toolInput'] or {}},
        },
        {
            'jsonrpc': '2.0',
            'method': TOOL_RESULT,
            'params': dict(self.view_data['toolResult']),
        },
    ]


@dataclasses.dataclass(eq=False)
class _View:
  channel: ViewChannel
  lease: ViewLease
  scope: LeaseScope


def _env_flag(value: Optional[str]) -> bool:
  return (value or '').strip().lower() in ('1', 'true', 'yes')


def _agent_names(agent: Any) -> set[str]:
  names: set[str] = set()
  stack = [agent]
  while stack:
    current = stack.pop()
    name = getattr(current, 'name', None)
    if isinstance(name, str):
      names.add(name)
    stack.extend(getattr(current, 'sub_agents', None) or ())
  return names


class McpAppHostService:
  """Hosts MCP Apps Views for one bound registry and one Runner.

  Process-local: its Views, leases, registers and idempotency records live
  in this process only, so it runs in one process or behind sticky
  sessions; it refuses to start told otherwise.
  """

  def __init__(
      self,
      registry: Any,
      runner: Any,
      *,
      leases: Optional[ViewLeases] = None,
      notify: Optional[ViewNotify] = None,
      workers: Optional[int] = None,
      sticky_sessions: Optional[bool] = None,
      export_limits: Optional[ExportLimits] = None,
      export_projection: Optional[ExportProjection] = None,
      **channel_options: Any,
  ) -> None:
    """Creates the service.

    Args:
      registry: The started `McpAppBindingRegistry`; its bound profile is
        the service's.
      runner: The Runner whose Session service and agent tree host the
        Views.
      leases: The lease table (a default one when None).
      notify: Delivers the channels' notifications to Views.
      workers: Worker processes serving the host; None reads
        `ADK_MCP_APPS_HOST_WORKERS` (default 1).
      sticky_sessions: Whether each Session reaches one worker; None reads
        `ADK_MCP_APPS_HOST_STICKY_SESSIONS`.
      export_limits: The export resolver's byte, rate, bulk and retention
        limits (its defaults when None).
      export_projection: What an export releases of a sealed result (the
        full result when None).
      **channel_options: Further `ViewChannel` options
        (`message_confirmation`; `nested_views`, the host's decision whether
        a View's call opens a nested View, never when absent;
        `on_request_teardown` is the service's).

    Raises:
      HostServiceError: (`UNSUPPORTED`) No profile is bound, or several
        workers without sticky sessions.
    """
    if workers is None:
      workers = int(os.environ.get(WORKERS_ENV, '1') or '1')
    if sticky_sessions is None:
      sticky_sessions = _env_flag(os.environ.get(STICKY_ENV))
    if workers > 1 and not sticky_sessions:
      raise HostServiceError(
          HostServiceErrorReason.UNSUPPORTED,
          'several workers need sticky sessions: leases are process-local',
      )
    if registry.profile is None:
      raise HostServiceError(
          HostServiceErrorReason.UNSUPPORTED, 'no profile is bound'
      )
    self._registry = registry
    self._runner = runner
    self._leases = leases if leases is not None else ViewLeases()
    self._notify = notify
    self._channel_options = channel_options
    self._views: dict[str, _View] = {}
    self._export_limits = export_limits or ExportLimits()
    self._export_projection = export_projection
    self._exporter: Optional[ExportResolver] = None
    self._closed = False

  @property
  def profile(self) -> McpAppsHostProfile:
    """The registry's bound profile."""
    profile: Optional[McpAppsHostProfile] = self._registry.profile
    if profile is None:
      raise HostServiceError(
          HostServiceErrorReason.UNSUPPORTED, 'no profile is bound'
      )
    return profile

  @property
  def leases(self) -> ViewLeases:
    """The process-local lease table."""
    return self._leases

  @property
  def view_ids(self) -> tuple[str, ...]:
    """The Views open now."""
    return tuple(self._views)

  # -- denials -----------------------------------------------------------------

  def _deny(
      self,
      action: str,
      reason: HostServiceErrorReason,
      detail: str = '',
      **ids: str,
  ) -> NoReturn:
    log_denial(action, reason, detail=detail, **ids)
    raise HostServiceError(reason, detail)

  def _denied(
      self, action: str, error: HostServiceError, **ids: str
  ) -> NoReturn:
    log_denial(action, error.reason, detail=error.detail, **ids)
    raise error

  async def _principal(
      self, action: str, request: PrincipalRequest, **ids: str
  ) -> Principal:
    resolver = self.profile.principal_resolver
    try:
      if resolver is None:
        raise PrincipalUnresolvedError('no_resolver')
      return await resolver.resolve(request)
    except PrincipalUnresolvedError as e:
      self._deny(
          action, HostServiceErrorReason.UNAUTHENTICATED, e.reason, **ids
      )
    except Exception:  # pylint: disable=broad-exception-caught
      self._deny(action, HostServiceErrorReason.UNAUTHENTICATED, **ids)

  async def _incarnation(self, session: SessionKey) -> int:
    store = self.profile.session_lifecycle_store
    if store is None:
      return 0
    return int((await store.read(session)).incarnation)

  def _check_domain(
      self,
      principal: Principal,
      session: SessionKey,
      toolset_id: str,
      function_call_id: str,
  ) -> None:
    """Refuses a principal other than the one whose turn the widget's
    generation was keyed for (under the key it was keyed with)."""
    generation = self._registry.render_reservations.generation_of(
        toolset_id, session, function_call_id
    )
    if generation is None:
      return  # Bootstrap fails cold on its own.
    digest: str = generation.key.security_domain
    key_id, _, _ = digest.rpartition(':')
    provider = self.profile.key_provider
    try:
      if provider is None:
        raise BindingKeyUnavailableError(key_id, 'no key provider')
      key = provider.key(key_id)
    except BindingKeyUnavailableError:
      self._deny(
          'open_view',
          HostServiceErrorReason.UNAUTHORIZED,
          'key_unavailable',
          function_call_id=function_call_id,
      )
    if not hmac.compare_digest(
        security_domain(key, principal).digest.encode(), digest.encode()
    ):
      self._deny(
          'open_view',
          HostServiceErrorReason.UNAUTHORIZED,
          'other_security_domain',
          function_call_id=function_call_id,
      )

  # -- actions -----------------------------------------------------------------

  async def run_turn(
      self,
      request: PrincipalRequest,
      *,
      session: SessionKey,
      new_message: Any,
  ) -> list[Any]:
    """Runs one Runner turn for the resolved principal.

    The turn runs under `acting_principal`, so the connection generations
    its calls open are keyed to the caller's security domain (never the
    shared unattributed one), and only that principal can open its Views.

    Returns:
      The turn's Events.

    Raises:
      HostServiceError: `UNAUTHENTICATED`, or `UNAUTHORIZED` when the
        authorizer denies the Session (or it is another app's).
    """
    principal = await self._principal(
        'run_turn', request, session_id=session.session_id
    )
    authorizer = self.profile.session_authorizer
    try:
      allowed = (
          session.app_name == self._runner.app_name
          and authorizer is not None
          and await authorizer.authorize(
              principal, session, SessionPurpose.VIEW
          )
      )
    except Exception:  # pylint: disable=broad-exception-caught
      allowed = False
    if not allowed:
      self._deny(
          'run_turn',
          HostServiceErrorReason.UNAUTHORIZED,
          session_id=session.session_id,
      )
    events: list[Any] = []
    with acting_principal(principal):
      async for event in self._runner.run_async(
          user_id=session.user_id,
          session_id=session.session_id,
          new_message=new_message,
      ):
        events.append(event)
    return events

  async def open_view(
      self,
      request: PrincipalRequest,
      *,
      session: SessionKey,
      toolset_id: str,
      event_id: str,
      function_call_id: str,
  ) -> OpenedView:
    """Opens a View of a widget: authorize, bootstrap, lease, channel.

    Returns:
      The View's id, its lease (host page only) and its iframe data.

    Raises:
      HostServiceError: `UNAUTHENTICATED`, `UNAUTHORIZED` (the authorizer,
        or another principal's widget), `LIMIT_EXCEEDED`, or
        `VIEW_UNAVAILABLE` (bootstrap failed; `cold` in the detail when the
        widget's generation is gone).
    """
    ids = {'event_id': event_id, 'function_call_id': function_call_id}
    principal = await self._principal('open_view', request, **ids)
    if self._closed:
      self._deny(
          'open_view',
          HostServiceErrorReason.VIEW_UNAVAILABLE,
          'shut_down',
          **ids,
      )
    digest = self._leases.digest(principal)
    try:
      self._leases.admit(digest)
    except HostServiceError as e:
      self._denied('open_view', e, **ids)
    self._check_domain(principal, session, toolset_id, function_call_id)
    try:
      document = await bootstrap_render(
          registry=self._registry,
          profile=self.profile,
          session_service=self._runner.session_service,
          principal=principal,
          session=session,
          toolset_id=toolset_id,
          event_id=event_id,
          function_call_id=function_call_id,
          agent_names=_agent_names(self._runner.agent),
      )
    except BootstrapError as e:
      if e.step is BootstrapStep.AUTHORIZE:
        self._deny('open_view', HostServiceErrorReason.UNAUTHORIZED, **ids)
      detail = f'cold:{e.reason}' if e.cold else e.reason
      self._deny(
          'open_view', HostServiceErrorReason.VIEW_UNAVAILABLE, detail, **ids
      )
    grant = document.grant
    scope = LeaseScope(
        principal_digest=digest,
        session=session,
        incarnation=grant.incarnation,
        toolset_id=toolset_id,
        server_id=grant.binding.server_id,
        event_id=event_id,
        function_call_id=function_call_id,
        view_instance_id=grant.view_id,
        binding_revision=int(self._registry.binding_generation),
        generation_id=grant.generation_id,
    )
    try:
      lease = self._leases.issue(scope)
    except HostServiceError as e:
      grant.revoke()
      self._denied('open_view', e, **ids)
    try:
      channel = await self._open_channel(document, principal, lease)
    except (OperationError, HostServiceError) as e:
      lease.revoke()
      grant.revoke()
      self._deny(
          'open_view',
          HostServiceErrorReason.VIEW_UNAVAILABLE,
          type(e).__name__,
          **ids,
      )
    except BaseException:
      lease.revoke()
      grant.revoke()
      raise
    # One authority: revoking the host lease revokes the channel's at once.
    lease.on_revoke(channel.revoke_lease)
    self._views[grant.view_id] = _View(channel, lease, scope)
    return OpenedView(
        view_id=grant.view_id,
        lease=lease.token,
        expires_at=lease.expires_at,
        view_data=_view_data(document),
    )

  async def _open_channel(
      self, document: RenderDocument, principal: Principal, lease: ViewLease
  ) -> ViewChannel:
    view_id = document.grant.view_id

    async def notify(message: dict[str, Any]) -> None:
      if self._notify is not None:
        await self._notify(view_id, message)

    async def on_request_teardown(channel: ViewChannel) -> bool:
      del channel
      lease.revoke()  # Phase 1: the next use of the lease is refused.
      return True

    async def forget(channel: ViewChannel) -> None:
      # Phase 2, however the teardown started: the View leaves the table.
      lease.revoke()
      self._views.pop(channel.view_id, None)

    options = dict(self._channel_options)
    if 'callbacks' not in options:
      # The toolset's own filter, header provider and progress callback
      # run on the View's calls too, over a read-only snapshot of the
      # Session as the View opens.
      options['callbacks'] = await self._view_callbacks(document)
    options.setdefault('notify', notify)
    options['on_request_teardown'] = on_request_teardown
    options['teardown_hooks'] = (*options.get('teardown_hooks', ()), forget)
    channel = await ViewChannel.open(
        document,
        principal=principal,
        registry=self._registry,
        runner=self._runner,
        lease_expires_at=lease.expires_at,
        clock=self._leases.clock,
        **options,
    )
    return channel

  async def _view_callbacks(self, document: RenderDocument) -> Any:
    grant = document.grant
    spec = self._registry.spec(grant.binding.toolset_id)
    if (
        spec.tool_filter is None
        and spec.header_provider is None
        and spec.progress_callback is None
    ):
      return None  # Nothing to run: no Session read.
    key = grant.session
    stored = await self._runner.session_service.get_session(
        app_name=key.app_name,
        user_id=key.user_id,
        session_id=key.session_id,
        config=GetSessionConfig(num_recent_events=0),
    )
    context = ReadonlyCallbackContext.build(
        session=key,
        state=None if stored is None else stored.state,
        agent_name=document.descriptor.correlation.agent_path,
    )
    return AppPathCallbacks.from_spec(spec, context)

  async def _admit(
      self,
      action: str,
      request: PrincipalRequest,
      view_id: str,
      lease: str,
      request_token: Optional[str],
  ) -> _View:
    """Resolves the caller and checks the lease against the View as it is
    now (principal, incarnation, binding revision, generation)."""
    ids = {'view_id': view_id}
    principal = await self._principal(action, request, **ids)
    view = self._views.get(view_id)
    if view is None:
      self._deny(action, HostServiceErrorReason.LEASE_INVALID, 'unknown', **ids)
    scope = view.scope
    grant = view.channel.grant
    generation_id = (
        grant.generation_id if grant.active else f'{grant.generation_id}:gone'
    )
    try:
      incarnation = await self._incarnation(scope.session)
    except Exception:  # pylint: disable=broad-exception-caught
      incarnation = -1
    presented = dataclasses.replace(
        scope,
        principal_digest=self._leases.digest(principal),
        incarnation=incarnation,
        binding_revision=int(self._registry.binding_generation),
        generation_id=generation_id,
    )
    try:
      self._leases.check(lease, presented, request_token=request_token)
    except HostServiceError as e:
      self._denied(action, e, **ids)
    return view

  async def check_view(
      self, request: PrincipalRequest, *, view_id: str, lease: str
  ) -> None:
    """Checks that `lease` serves the open View `view_id` for the caller
    (what an adapter does before it streams the View's notifications).

    Raises:
      HostServiceError: `UNAUTHENTICATED`, `LEASE_INVALID` or
        `LEASE_EXPIRED`.
    """
    await self._admit('notifications', request, view_id, lease, None)

  async def handle(
      self,
      request: PrincipalRequest,
      *,
      view_id: str,
      lease: str,
      request_token: str,
      message: Union[str, bytes, Mapping[str, Any]],
  ) -> Optional[dict[str, Any]]:
    """Serves one message of a View under its lease.

    Args:
      request: The adapter's request.
      view_id: The View the message is for.
      lease: The lease token the host page presented.
      request_token: The adapter's nonce for this request; a nonce seen
        before on the lease is refused (`REPLAYED`).
      message: The View's JSON-RPC message.

    Returns:
      The channel's JSON-RPC response, or None.

    Raises:
      HostServiceError: `UNAUTHENTICATED`, `LEASE_INVALID`,
        `LEASE_EXPIRED`, `REPLAYED` or `LIMIT_EXCEEDED`.
    """
    view = await self._admit('handle', request, view_id, lease, request_token)
    channel = view.channel
    return await channel.handle(message, token=channel.token)

  async def close_view(
      self,
      request: PrincipalRequest,
      *,
      view_id: str,
      lease: str,
      acknowledged: bool,
  ) -> None:
    """Tears a View down in two phases once the frontend's
    `ui/resource-teardown` was acknowledged or timed out.

    Phase 1 revokes the lease (and the channel's) and interrupts live
    requests at once; phase 2 runs under the Session's ownership and
    releases the View's generation. Other Views of the widget stay.

    Raises:
      HostServiceError: `UNAUTHENTICATED`, `LEASE_INVALID` or
        `LEASE_EXPIRED`.
    """
    view = await self._admit('close_view', request, view_id, lease, None)
    view.lease.revoke()
    view.channel.teardown()
    try:
      await view.channel.finish_teardown()
    finally:
      self._views.pop(view_id, None)
    del acknowledged  # Either way the backend tears down (P5-VIEW-02).

  async def export(
      self,
      request: PrincipalRequest,
      *,
      session: SessionKey,
      event_id: str,
      function_call_id: str,
      operation_instance_id: str,
      stream: bool = False,
  ) -> ExportResult:
    """Exports one sealed result cold, through the export resolver.

    The caller needs the `EXPORT` purpose; nothing here opens a View,
    mints a grant or reads a template. A retry with the same
    `operation_instance_id` gets the same bytes or the same denial.

    Raises:
      HostServiceError: `UNAUTHENTICATED`, `UNAUTHORIZED`,
        `EXPORT_DENIED`, `LIMIT_EXCEEDED`, `AUDIT_UNAVAILABLE` or
        `UNSUPPORTED`; nothing was released.
    """
    ids = {'event_id': event_id, 'function_call_id': function_call_id}
    principal = await self._principal('export', request, **ids)
    if self._closed:
      self._deny(
          'export', HostServiceErrorReason.EXPORT_DENIED, 'shut_down', **ids
      )
    if self._exporter is None:
      try:
        self._exporter = ExportResolver(
            profile=self.profile,
            session_service=self._runner.session_service,
            limits=self._export_limits,
            projection=self._export_projection,
        )
      except ValueError:
        self._deny(
            'export', HostServiceErrorReason.UNSUPPORTED, 'no_audit', **ids
        )
    return await self._exporter.export(
        principal=principal,
        session=session,
        event_id=event_id,
        function_call_id=function_call_id,
        operation_instance_id=operation_instance_id,
        stream=stream,
        request=request,
    )

  async def run_tool_again(
      self,
      request: PrincipalRequest,
      *,
      session: SessionKey,
      event_id: str,
      function_call_id: str,
      confirm: Optional[Confirm] = None,
  ) -> RerunResult:
    """Runs a widget's refresh or "Run tool again" as a new invocation.

    The new call is confirmed through `confirm` (always for a re-run), is
    attributed to the host, and renders a new widget; the old View and its
    idempotency outcomes stay as they were.

    Raises:
      HostServiceError: `UNAUTHENTICATED`, or `RERUN_DENIED`; nothing ran.
    """
    ids = {'event_id': event_id, 'function_call_id': function_call_id}
    principal = await self._principal('run_tool_again', request, **ids)
    # The new call's generation is keyed for the caller, as a turn's is.
    with acting_principal(principal):
      return await run_tool_again(
          runner=self._runner,
          registry=self._registry,
          principal=principal,
          session=session,
          event_id=event_id,
          function_call_id=function_call_id,
          confirm=confirm,
      )

  async def cold_affordance(
      self,
      request: PrincipalRequest,
      *,
      session: SessionKey,
      event_id: str,
      function_call_id: str,
  ) -> ColdAffordance:
    """What a cold widget offers the caller now; runs nothing.

    Decided as `run_tool_again` decides it (same authorization, same
    listing, same `cold_affordance`), so an offered refresh or re-run is
    the one a click then runs. A denial is never raised: it is the
    `PLACEHOLDER` offer with its reason (`unauthenticated`,
    `unauthorized`, ...), logged.

    Returns:
      The affordance, without the host-private refresh record.
    """
    ids = {'event_id': event_id, 'function_call_id': function_call_id}
    try:
      principal = await self._principal('cold_affordance', request, **ids)
    except HostServiceError as e:
      return ColdAffordance(
          ColdOffer.PLACEHOLDER, function_call_id, reason=e.reason.value
      )
    with acting_principal(principal):
      decided = await decide_cold_affordance(
          runner=self._runner,
          registry=self._registry,
          principal=principal,
          session=session,
          event_id=event_id,
          function_call_id=function_call_id,
      )
    if decided.reason == 'unauthorized':
      log_denial('cold_affordance', HostServiceErrorReason.UNAUTHORIZED, **ids)
    return dataclasses.replace(decided, record=None)

  async def close(self) -> None:
    """Shuts the service down: every View is torn down (both phases) and
    queued or later exports are denied."""
    self._closed = True
    if self._exporter is not None:
      self._exporter.close()
    views, self._views = list(self._views.values()), {}
    for view in views:
      view.lease.revoke()
      view.channel.teardown()
    for view in views:
      await view.channel.finish_teardown()


def _view_data(document: RenderDocument) -> dict[str, Any]:
  """The iframe's data: the document's View data and a host context built
  from non-secret widget facts only."""
  data = document.view_data()
  # No `toolInfo`: the spec requires its `tool` (the full Tool
  # definition), and Views built on the ext-apps App SDK reject a host
  # context without it.
  host_context = {
      'displayMode': 'inline',
      'availableDisplayModes': ['inline'],
  }
  ui_meta = data['uiMeta']
  return {
      'html': data['html'],
      'uiMeta': None if ui_meta is None else json.loads(json.dumps(ui_meta)),
      'hostContext': host_context,
      'toolInput': data['toolInput'],
      'toolResult': json.loads(json.dumps(data['toolResult'])),
  }
