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

"""`McpAppBindingRegistry`: who decides that a toolset serves MCP Apps.

Built once from configuration (toolset ids to `McpToolsetSpec`s and one
host profile, or none), the registry materializes one `HostBoundMcpToolset`
per toolset: profile-bound when the profile is bindable, model-only
otherwise. Withdrawal and rebind never change a proxy in place: a new
binding generation replaces it, and the old one is drained and closed. It
also owns the registry event loop and the Runner lease ledger. Design:
docs/design/binding.md.

Example:

  registry = McpAppBindingRegistry({'weather': spec}, profile=profile)
  await registry.start()
  report = registry.readiness_report()
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Hashable
from collections.abc import Iterable
from collections.abc import Mapping
import dataclasses
import logging
import time
from typing import Optional
from typing import Union

from ..affinity.generations import AppSafeConnectionPool
from ..affinity.routing import RenderReservations
from ..catalog.app_catalog import AppCallPolicy
from ..catalog.app_catalog import DEFAULT_POLICY
from ..contracts.scope import SessionKey
from ..profile.host_profile import McpAppsHostProfile
from ..profile.readiness import Readiness
from .construction import ProxyConstruction
from .errors import BindingConflictError
from .errors import IllegalTransitionError
from .errors import McpAppBindingUnavailable
from .errors import RegistryClosedError
from .errors import UnboundToolsetError
from .lease_epochs import LeaseEpochs
from .lease_epochs import LeaseGenerationKey
from .leases import DEFAULT_RETRY_POLICY
from .leases import LeaseError
from .leases import LeaseRetryPolicy
from .leases import LeaseToken
from .leases import RunnerLeaseLedger
from .overrides import BindingOverrides
from .overrides import CALLERS
from .overrides import EffectiveBinding
from .overrides import narrowed
from .proxy import DEFAULT_DRAIN_TIMEOUT
from .proxy import HostBoundMcpToolset
from .proxy import ProxyState
from .registry_loop import RegistryEventLoop
from .registry_toolset import RegistryToolset
from .spec import McpToolsetSpec
from .status import ReadinessReport
from .toolset_table import ToolsetEntry
from .toolset_table import ToolsetTable
from .withdrawal import RevocationEvent
from .withdrawal import RevocationHook
from .withdrawal import RevocationHooks
from .withdrawal import revoke_session_generations
from .withdrawal import SwapReport
from .withdrawal import Withdrawal

__all__ = [
    'CALLERS',
    'BindingOverrides',
    'EffectiveBinding',
    'LeaseGenerationKey',
    'McpAppBindingRegistry',
    'RegistryToolset',
    'RevocationEvent',
    'RevocationHook',
    'SwapReport',
]

logger = logging.getLogger('google_adk.' + __name__)


class McpAppBindingRegistry:
  """The registry of configured MCP toolsets and their Apps binding.

  Example (local development; a deployment passes its own profile and
  leaves `allow_dev_providers` False):
    registry = McpAppBindingRegistry(
        {'dashboard': McpToolsetSpec(connection_params=params)},
        local_dev_profile(),
        allow_dev_providers=True,
    )
    await registry.start()
    print(registry.readiness_report())  # why a toolset stayed model-only
    agent = LlmAgent(..., tools=[registry.toolset('dashboard')])
    ...
    await registry.aclose()
  """

  def __init__(
      self,
      specs: Union[
          Mapping[str, McpToolsetSpec], Iterable[tuple[str, McpToolsetSpec]]
      ] = (),
      profile: Optional[McpAppsHostProfile] = None,
      *,
      allow_dev_providers: bool = False,
      app_call_policy: AppCallPolicy = DEFAULT_POLICY,
      overrides: Optional[Mapping[str, BindingOverrides]] = None,
      apps_toolsets: Optional[Collection[str]] = None,
      drain_timeout: float = DEFAULT_DRAIN_TIMEOUT,
      lease_retry_policy: LeaseRetryPolicy = DEFAULT_RETRY_POLICY,
      on_lease_close_pending: Optional[Callable[[Hashable], None]] = None,
      _lease_close_hook: Optional[
          Callable[[LeaseGenerationKey], Awaitable[None]]
      ] = None,
  ):
    """Builds the registry from configuration; nothing is constructed yet.

    Args:
      specs: Toolset id to spec (a mapping, or pairs: a repeated id is a
        collision).
      profile: The host profile, or None for a model-only registry.
      allow_dev_providers: The explicit local-development configuration.
      app_call_policy: The base app-call policy overrides narrow.
      overrides: Per-toolset narrowing overrides.
      apps_toolsets: The ids routed to the Apps host (default: all).
      drain_timeout: Seconds a withdrawal waits for admitted work.
      lease_retry_policy: Attempts and per-attempt timeout of every
        lease-driven close (see `bind_runner`).
      on_lease_close_pending: Told (synchronously, with the
        `LeaseGenerationKey`) each time a lease-driven close is left
        pending; `retry_lease_closes()` finishes it, and so does shutdown.
      _lease_close_hook: Test seam awaited at the start of every
        lease-driven close attempt, inside the attempt's timeout, to inject
        slow or failing closes.

    Raises:
      BindingConflictError: A toolset id is registered twice.
      UnboundToolsetError: A value is not an `McpToolsetSpec`.
      WideningOverrideError: An override widens.
      McpAppBindingUnavailable: An override or Apps id names no toolset.
    """
    self._profile = profile
    self._allow_dev = allow_dev_providers
    self._base_policy = app_call_policy
    self._apps_ids = None if apps_toolsets is None else frozenset(apps_toolsets)
    self._admin_lock: Optional[asyncio.Lock] = None
    self._readiness: Optional[Readiness] = None
    self._table = ToolsetTable()
    self._loop = RegistryEventLoop(name='adk-mcp-apps-binding-registry')
    self._leases = RunnerLeaseLedger(
        retry_policy=lease_retry_policy,
        on_close_pending=on_lease_close_pending,
    )
    # App-safe connection generations: owned and pinned here, not by any
    # toolset, so Views outlive the Runners and proxies that made them.
    self._connections = AppSafeConnectionPool(clock=_connection_clock)
    self._reservations = RenderReservations()
    self._construction = ProxyConstruction(
        self._table,
        self._loop,
        self._connections,
        self._reservations,
        allow_dev_providers=allow_dev_providers,
    )
    self._hooks = RevocationHooks()
    self._withdrawal = Withdrawal(
        self._table,
        self._construction,
        self._leases,
        self._connections,
        self._hooks,
        drain_timeout=drain_timeout,
    )
    self._epochs = LeaseEpochs(
        self._table, self._leases, self._connections, _lease_close_hook
    )
    self._drain_timeout = drain_timeout
    pairs = specs.items() if isinstance(specs, Mapping) else specs
    for toolset_id, spec in pairs:
      self.register(toolset_id, spec)
    for toolset_id, override in (overrides or {}).items():
      self.narrow(toolset_id, override)
    for toolset_id in self._apps_ids or ():
      self._table.entry(toolset_id)

  # Configuration.

  def register(self, toolset_id: str, spec: McpToolsetSpec) -> None:
    """Registers one toolset before `start()`.

    Raises:
      BindingConflictError: The id is taken, or the registry has started.
      UnboundToolsetError: `spec` is not a spec (e.g. an `McpToolset`).
    """
    if not isinstance(spec, McpToolsetSpec):
      raise UnboundToolsetError(
          f'Toolset {toolset_id!r}: only an McpToolsetSpec can be'
          f' registered, not a {type(spec).__name__}; a directly constructed'
          ' toolset stays model-only'
      )
    if not isinstance(toolset_id, str) or not toolset_id:
      raise BindingConflictError('toolset ids must be non-empty strings')
    self._table.add(
        ToolsetEntry(
            toolset_id,
            spec,
            apps_routed=False,
            effective=EffectiveBinding(
                self._base_policy,
                None
                if self._profile is None
                else self._profile.host_capabilities,
                CALLERS,
            ),
        )
    )

  def narrow(self, toolset_id: str, overrides: BindingOverrides) -> None:
    """Narrows one toolset's policy further; widening raises.

    Raises:
      WideningOverrideError: The override widens what is in force.
      McpAppBindingUnavailable: No such toolset.
    """
    entry = self._table.entry(toolset_id)
    with self._table.lock:
      entry.effective = narrowed(
          toolset_id, entry.effective, overrides, profile=self._profile
      )

  def effective(self, toolset_id: str) -> EffectiveBinding:
    """The narrowed policy in force for a toolset."""
    return self._table.entry(toolset_id).effective

  def routes_apps(self, toolset_id: str) -> bool:
    """Whether a toolset is Apps-routed, from configuration alone.

    Reads no session (one need not exist yet): a configured profile, the
    toolset among the Apps ids, and the app caller not narrowed away.
    """
    entry = self._table.entry(toolset_id)
    return (
        self._profile is not None
        and (self._apps_ids is None or toolset_id in self._apps_ids)
        and 'app' in entry.effective.visibility
    )

  def add_revocation_hook(self, hook: RevocationHook) -> Callable[[], None]:
    """Registers a hook called at withdrawal step 1, after the bump.

    Later parts register View, lease, permit and pending-commit revocation
    here. Hooks run in registration order; one that raises is logged and
    counted, and withdrawal goes on.

    Returns:
      A function that removes the hook.
    """
    return self._hooks.add(hook)

  # Introspection.

  @property
  def binding_generation(self) -> int:
    """The registry's current binding generation."""
    with self._table.lock:
      return self._table.generation

  @property
  def profile(self) -> Optional[McpAppsHostProfile]:
    """The profile bound now (after a `rebind`, the new one), or None."""
    return self._profile

  @property
  def readiness(self) -> Optional[Readiness]:
    """The readiness the bound proxies were built under (None if none)."""
    return self._readiness

  def readiness_report(self) -> ReadinessReport:
    """Which toolsets serve MCP Apps and, for the others, why not.

    A toolset that cannot be bound stays model-only and keeps serving the
    model, so a misconfigured profile shows up here, not as a failure: each
    entry says whether the toolset is profile-bound and, if not, a
    `ModelOnlyReason`, a message, and the profile's `ReadinessReason`s when
    those are the cause.

    Returns:
      The report, one entry per configured toolset in registration order.
    """
    profile = self._profile
    return self._table.report(
        profile_name=None if profile is None else profile.name,
        apps_ids=self._apps_ids,
        allow_dev_providers=self._allow_dev,
        last_check=self._construction.last_check,
    )

  @property
  def event_loop(self) -> RegistryEventLoop:
    """The registry's dedicated event loop."""
    return self._loop

  @property
  def connections(self) -> AppSafeConnectionPool:
    """The app-safe connection generations the registry owns."""
    return self._connections

  async def revoke_session(
      self, session: SessionKey, incarnation: int
  ) -> tuple[str, ...]:
    """Invalidates the app-safe generations of one Session incarnation.

    A `SessionLifecycleManager` phase-1 revoke hook: when a Session is
    deleted, the connections its Views were bound to end with it (typed
    `SESSION_DELETED`), and so does every reservation on them. Idempotent.
    Generations shared across Sessions under the profile's opt-in carry no
    Session scope and are left to their other holders.

    Args:
      session: The Session key.
      incarnation: The incarnation being deleted.

    Returns:
      The ids of the generations invalidated.
    """
    return await revoke_session_generations(
        self._connections, self._profile, session, incarnation
    )

  @property
  def render_reservations(self) -> RenderReservations:
    """Generations reserved for the Views of accepted UI results."""
    return self._reservations

  @property
  def leases(self) -> RunnerLeaseLedger:
    """The registry's Runner lease ledger (see `bind_runner`)."""
    return self._leases

  @property
  def toolset_ids(self) -> tuple[str, ...]:
    """The configured toolset ids, in registration order."""
    return self._table.toolset_ids

  @property
  def materialized(self) -> tuple[HostBoundMcpToolset, ...]:
    """Every proxy this registry constructed, in order."""
    return self._table.materialized

  def lookup(self, toolset_id: str) -> HostBoundMcpToolset:
    """The current proxy of a toolset.

    Raises:
      McpAppBindingUnavailable: No such toolset, not started, or shut down.
    """
    return self._table.lookup(toolset_id)

  def resolve(self, toolset_id: str, server_id: str) -> HostBoundMcpToolset:
    """Resolves a persisted descriptor's `toolset_id`/`server_id`.

    Raises:
      McpAppBindingUnavailable: No such toolset, or it names another server.
    """
    entry = self._table.entry(toolset_id)
    if entry.spec.server_id != server_id:
      raise McpAppBindingUnavailable(
          toolset_id, 'the descriptor names another server'
      )
    return self.lookup(toolset_id)

  def server_id(self, toolset_id: str) -> str:
    """The configured server id of a toolset."""
    return self._table.entry(toolset_id).spec.server_id

  def spec(self, toolset_id: str) -> McpToolsetSpec:
    """The spec a toolset was registered with (its callbacks, its server)."""
    return self._table.entry(toolset_id).spec

  def toolset(self, toolset_id: str) -> RegistryToolset:
    """The stable, non-owning `BaseToolset` to hand to an Agent."""
    return self._table.handle(
        toolset_id, lambda: RegistryToolset(self, toolset_id)
    )

  # Runner leases.

  def bind_runner(self, runner: object, toolset_id: str) -> LeaseToken:
    """Leases a toolset's current generation for a Runner.

    Call it for each registry toolset a Runner's Agent uses; the token goes
    into the Runner's side table and `Runner.close()` releases it. The
    token is bound to the binding generation current now, in its open
    lease epoch (a new epoch is opened if the last one was closed by its
    last release). Idempotent per Runner and epoch.

    The last release of an epoch closes the generation's pooled connections
    (`HostBoundMcpToolset._close_connections`, exactly once per epoch; the
    proxy keeps serving and its next use reconnects). Registry shutdown
    closes every epoch still open, whatever tokens remain; releasing them
    afterwards closes nothing.

    Rebind and withdrawal: tokens stay bound to the generation they were
    issued for; they do not follow the swap. The superseded generation's
    connections are closed exactly once, by withdrawal step 3 (after its
    drain), or earlier by the last release while it still served; a release
    that comes after the proxy started revoking closes nothing. A Runner
    that goes on using the toolset after a swap is bound again to lease the
    successor.

    Args:
      runner: The `google.adk.runners.Runner`.
      toolset_id: A configured toolset id.

    Returns:
      The Runner's token on the current generation's epoch.

    Raises:
      McpAppBindingUnavailable: No such toolset, or the registry is not
        started (`RegistryClosedError` after shutdown).
    """
    return self._epochs.bind_runner(runner, toolset_id)

  async def retry_lease_closes(self) -> frozenset[Hashable]:
    """Retries every lease-driven close left pending.

    Returns:
      The `LeaseGenerationKey`s this call closed.
    """
    return await self._epochs.retry_pending()

  # Lifecycle.

  def _lock(self) -> asyncio.Lock:
    if self._admin_lock is None:
      self._admin_lock = asyncio.Lock()
    return self._admin_lock

  async def start(self) -> None:
    """Materializes every configured toolset and starts the event loop.

    Idempotent. Each toolset is `PROFILE_BOUND` if the profile is bindable
    and the toolset Apps-routed, else `MODEL_ONLY`.

    Raises:
      RegistryClosedError: The registry has shut down.
    """
    table = self._table
    async with self._lock():
      with table.lock:
        if table.closed:
          raise RegistryClosedError()
        if table.started:
          return
      self._loop.start()
      readiness, binding = self._construction.binding_for(self._profile)
      self._readiness = readiness if binding is not None else None
      with table.lock:
        table.generation = 1
      for entry in table.entries():
        entry.apps_routed = self.routes_apps(entry.toolset_id)
        proxy = await self._construction.new_proxy(
            entry, binding, 1, self._profile
        )
        with table.lock:
          entry.current = proxy
      with table.lock:
        table.started = True

  async def __aenter__(self) -> McpAppBindingRegistry:
    await self.start()
    return self

  async def __aexit__(self, *exc_info: object) -> None:
    await self.aclose()

  def bind_profile(self, toolset_id: str, profile: McpAppsHostProfile) -> None:
    """Refuses a second profile binding; profiles change only by rebind.

    Raises:
      BindingConflictError: The toolset is already profile-bound.
      IllegalTransitionError: It is `MODEL_ONLY`, terminal for its proxy
        (`rebind(profile)` installs a new one).
    """
    proxy = self.lookup(toolset_id)
    if proxy.profile_bound:
      raise BindingConflictError(
          f'Toolset {toolset_id!r} is already bound to profile'
          f' {self._profile.name if self._profile else None!r}; a second'
          f' binding ({profile.name!r}) is refused'
      )
    raise IllegalTransitionError(
        toolset_id,
        proxy.state.value,
        f'{ProxyState.PROFILE_BOUND.value} (late binding; use rebind())',
    )

  async def revoke(self, reason: str = 'withdrawal') -> SwapReport:
    """Withdraws readiness: every profile-bound toolset goes model-only.

    Model-only toolsets are untouched. Steps 1-4 of the module docstring;
    each bound toolset gets a new `MODEL_ONLY` proxy under a new generation.

    Returns:
      The report, with the steps in completion order.
    """
    async with self._lock():
      self._table.require_started()
      self._readiness = None
      return await self._withdrawal.swap(
          self._table.bound_entries(), None, None, reason, self._profile
      )

  async def recheck(self) -> SwapReport:
    """Re-checks the bound profile's readiness; withdraws if it was lost."""
    async with self._lock():
      self._table.require_started()
      profile = self._profile
      if self._readiness is None or profile is None:
        return await self._withdrawal.swap(
            [], None, None, 'readiness_lost', profile
        )
      readiness = self._construction.check(profile)
      if readiness.bindable:
        return await self._withdrawal.swap(
            [], None, readiness, 'readiness_lost', profile
        )
      self._readiness = None
      return await self._withdrawal.swap(
          self._table.bound_entries(),
          None,
          readiness,
          'readiness_lost',
          profile,
      )

  async def rebind(self, profile: McpAppsHostProfile) -> SwapReport:
    """Binds a (new or replaced) profile under a new generation.

    Bindable: every Apps-routed toolset gets a newly constructed
    `PROFILE_BOUND` proxy (bound ones too: provider replacement). Not
    bindable: what is bound is withdrawn to model-only, and model-only
    proxies keep serving.

    Returns:
      The report; `readiness` says whether the profile was bindable.
    """
    async with self._lock():
      self._table.require_started()
      self._profile = profile
      readiness, binding = self._construction.binding_for(profile)
      if binding is None:
        self._readiness = None
        return await self._withdrawal.swap(
            self._table.bound_entries(), None, readiness, 'rebind', profile
        )
      entries = self._table.entries()
      for entry in entries:
        if entry.effective.host_capabilities is None:
          # Registered without a profile: the first one bound supplies
          # the capabilities (overrides narrow them only with a profile).
          with self._table.lock:
            entry.effective = dataclasses.replace(
                entry.effective, host_capabilities=profile.host_capabilities
            )
        entry.apps_routed = self.routes_apps(entry.toolset_id)
      self._readiness = readiness
      targets = [e for e in entries if e.apps_routed]
      return await self._withdrawal.swap(
          targets, binding, readiness, 'rebind', profile
      )

  async def aclose(self) -> None:
    """Shuts down: closes every proxy it constructed, once, then its loop.

    Idempotent. Toolsets the registry did not construct are not touched.
    """
    async with self._lock():
      with self._table.lock:
        if self._table.closed:
          return
        self._table.closed = True
      proxies = self._table.materialized
      try:
        await self._leases.shutdown()
      except LeaseError as error:
        # The proxies' own close below still closes every connection.
        logger.warning('Lease shutdown incomplete: %s', error)
      self._reservations.release_all()
      await self._connections.aclose()
      for proxy in proxies:
        await proxy._aclose(drain_timeout=self._drain_timeout)  # pylint: disable=protected-access
      await self._loop.aclose()


def _connection_clock() -> float:
  return time.monotonic()
