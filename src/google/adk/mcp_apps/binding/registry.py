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
import functools
import hashlib
import inspect
import logging
import threading
import time
from typing import Any
from typing import Optional
from typing import Union

from typing_extensions import override

from . import leases as _leases
from ...agents.readonly_context import ReadonlyContext
from ...tools.base_tool import BaseTool
from ...tools.base_toolset import BaseToolset
from ..affinity.errors import InvalidationReason
from ..affinity.generations import AppSafeConnectionPool
from ..affinity.generations import ConnectionGeneration
from ..affinity.generations import GenerationPolicy
from ..affinity.routing import AppSafeToolRouting
from ..affinity.routing import RenderReservations
from ..affinity.security_domain import session_scope
from ..catalog.app_catalog import AppCallPolicy
from ..catalog.app_catalog import DEFAULT_POLICY
from ..contracts.scope import SessionKey
from ..profile.capabilities import HostCapabilities
from ..profile.fingerprint import fingerprint_bytes
from ..profile.host_profile import McpAppsHostProfile
from ..profile.readiness import check_readiness
from ..profile.readiness import Readiness
from .app_safe_connection import AppSafeConnection
from .client_extensions import AppsClientBinding
from .errors import BindingConflictError
from .errors import IllegalTransitionError
from .errors import McpAppBindingUnavailable
from .errors import RegistryClosedError
from .errors import StaleGenerationError
from .errors import UnboundToolsetError
from .errors import WideningOverrideError
from .leases import DEFAULT_RETRY_POLICY
from .leases import LeaseError
from .leases import LeaseErrorReason
from .leases import LeaseGenerationState
from .leases import LeaseRetryPolicy
from .leases import LeaseToken
from .leases import RunnerLeaseLedger
from .proxy import DEFAULT_DRAIN_TIMEOUT
from .proxy import DrainResult
from .proxy import HostBoundMcpToolset
from .proxy import ProxyState
from .registry_loop import RegistryEventLoop
from .sealed_runtime import RoutingFactory
from .spec import McpToolsetSpec
from .status import ReadinessReport
from .status import toolset_readiness

logger = logging.getLogger('google_adk.' + __name__)

AUDIENCES = frozenset({'model', 'app'})
"""The tool audiences a binding can serve."""


@dataclasses.dataclass(frozen=True)
class BindingOverrides:
  """Per-toolset narrowing of what the profile and registry allow.

  Every field may only narrow: None keeps the base, a value must be a
  subset of it.

  Attributes:
    app_call_policy: Narrows the registry's `AppCallPolicy`.
    host_capabilities: Narrows the profile's `HostCapabilities`.
    audiences: Narrows `{"model", "app"}`, the audiences this toolset's
      tools may be exposed to.
  """

  app_call_policy: Optional[AppCallPolicy] = None
  host_capabilities: Optional[HostCapabilities] = None
  audiences: Optional[frozenset[str]] = None


@dataclasses.dataclass(frozen=True)
class EffectiveBinding:
  """The narrowed policy in force for one toolset.

  Attributes:
    app_call_policy: The app-call policy.
    host_capabilities: The host capabilities (None without a profile).
    audiences: The audiences served.
  """

  app_call_policy: AppCallPolicy
  host_capabilities: Optional[HostCapabilities]
  audiences: frozenset[str]


def _policy_within(narrow: AppCallPolicy, base: AppCallPolicy) -> bool:
  if base.allowed is None:
    return True
  return narrow.allowed is not None and narrow.allowed <= base.allowed


def _modalities_within(narrow: Any, base: Any) -> bool:
  if narrow is None:
    return True
  return base is not None and narrow <= base


def _capabilities_within(
    narrow: HostCapabilities, base: Optional[HostCapabilities]
) -> bool:
  if base is None:
    return False
  return (
      (base.server_tools or not narrow.server_tools)
      and (base.server_resources or not narrow.server_resources)
      and _modalities_within(narrow.message, base.message)
      and _modalities_within(
          narrow.update_model_context, base.update_model_context
      )
  )


def _narrowed(
    toolset_id: str, base: EffectiveBinding, overrides: BindingOverrides
) -> EffectiveBinding:
  """Applies overrides to a base, refusing any widening."""
  policy = base.app_call_policy
  if overrides.app_call_policy is not None:
    if not _policy_within(overrides.app_call_policy, policy):
      raise WideningOverrideError(
          f'Toolset {toolset_id!r}: the app-call policy override widens'
          ' the policy in force'
      )
    policy = overrides.app_call_policy
  capabilities = base.host_capabilities
  if overrides.host_capabilities is not None:
    if not _capabilities_within(overrides.host_capabilities, capabilities):
      raise WideningOverrideError(
          f'Toolset {toolset_id!r}: the host-capabilities override widens'
          ' the capabilities in force'
      )
    capabilities = overrides.host_capabilities
  audiences = base.audiences
  if overrides.audiences is not None:
    requested = frozenset(overrides.audiences)
    if not requested <= audiences:
      raise WideningOverrideError(
          f'Toolset {toolset_id!r}: the audience override'
          f' {sorted(requested)} widens {sorted(audiences)}'
      )
    audiences = requested
  if 'app' not in audiences:
    policy = AppCallPolicy.deny_all()
  return EffectiveBinding(policy, capabilities, audiences)


@dataclasses.dataclass(frozen=True)
class RevocationEvent:
  """What a revocation hook is told (withdrawal step 1).

  Attributes:
    toolset_ids: The toolsets whose generation was superseded.
    old_generations: Each toolset's superseded generation.
    new_generation: The registry generation now in force.
    reason: `"withdrawal"`, `"rebind"` or `"readiness_lost"`.
  """

  toolset_ids: tuple[str, ...]
  old_generations: Mapping[str, int]
  new_generation: int
  reason: str


RevocationHook = Callable[[RevocationEvent], Union[Awaitable[None], None]]


@dataclasses.dataclass(frozen=True)
class SwapReport:
  """The outcome of one withdrawal or rebind.

  Attributes:
    reason: Why the swap happened.
    generation: The registry generation after it.
    swapped: The toolset ids given new proxies.
    readiness: The readiness the new proxies were built under, if any.
    steps: The withdrawal steps in the order they completed:
      `generation_bumped`, `hooks_called`, `drained`, `pools_closed`,
      `proxies_closed`.
    drains: Each old proxy's drain result.
    hook_failures: Hooks that raised (logged; withdrawal went on).
  """

  reason: str
  generation: int
  swapped: tuple[str, ...]
  readiness: Optional[Readiness]
  steps: tuple[str, ...]
  drains: Mapping[str, DrainResult]
  hook_failures: int


@dataclasses.dataclass(frozen=True)
class LeaseGenerationKey:
  """The ledger key of one lease epoch of one binding generation.

  A binding generation is leased in epochs: the last release of an epoch
  closes the generation's pooled connections, and the next `bind_runner`
  opens a new epoch (the next use reconnects).

  Attributes:
    toolset_id: The toolset id.
    binding_generation: The binding generation the tokens are bound to.
    epoch: The lease epoch within that generation, from 1.
  """

  toolset_id: str
  binding_generation: int
  epoch: int


@dataclasses.dataclass(eq=False)
class _Entry:
  toolset_id: str
  spec: McpToolsetSpec
  apps_routed: bool
  effective: EffectiveBinding
  current: Optional[HostBoundMcpToolset] = None
  lease_key: Optional[LeaseGenerationKey] = None


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
    self._drain_timeout = drain_timeout
    self._entries: dict[str, _Entry] = {}
    self._table_lock = threading.Lock()
    self._admin_lock: Optional[asyncio.Lock] = None
    self._generation = 0
    self._readiness: Optional[Readiness] = None
    self._last_check: Optional[Readiness] = None
    self._materialized: list[HostBoundMcpToolset] = []
    self._hooks: dict[int, RevocationHook] = {}
    self._next_hook = 0
    self._started = False
    self._closed = False
    self._loop = RegistryEventLoop(name='adk-mcp-apps-binding-registry')
    self._handles: dict[str, RegistryToolset] = {}
    self._leases = RunnerLeaseLedger(
        retry_policy=lease_retry_policy,
        on_close_pending=on_lease_close_pending,
    )
    self._lease_close_hook = _lease_close_hook
    # App-safe connection generations: owned and pinned here, not by any
    # toolset, so Views outlive the Runners and proxies that made them.
    self._connections = AppSafeConnectionPool(clock=_connection_clock)
    self._reservations = RenderReservations()
    pairs = specs.items() if isinstance(specs, Mapping) else specs
    for toolset_id, spec in pairs:
      self.register(toolset_id, spec)
    for toolset_id, override in (overrides or {}).items():
      self.narrow(toolset_id, override)
    for toolset_id in self._apps_ids or ():
      self._entry(toolset_id)

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
    with self._table_lock:
      if self._started or self._closed:
        raise BindingConflictError(
            'Toolsets are registered from configuration, before start()'
        )
      if toolset_id in self._entries:
        raise BindingConflictError(
            f'Toolset id {toolset_id!r} is registered twice'
        )
      self._entries[toolset_id] = _Entry(
          toolset_id,
          spec,
          apps_routed=False,
          effective=EffectiveBinding(
              self._base_policy,
              None
              if self._profile is None
              else self._profile.host_capabilities,
              AUDIENCES,
          ),
      )

  def _entry(self, toolset_id: str) -> _Entry:
    with self._table_lock:
      if self._closed:
        raise RegistryClosedError(toolset_id)
      entry = self._entries.get(toolset_id)
    if entry is None:
      raise McpAppBindingUnavailable(toolset_id)
    return entry

  def narrow(self, toolset_id: str, overrides: BindingOverrides) -> None:
    """Narrows one toolset's policy further; widening raises.

    Raises:
      WideningOverrideError: The override widens what is in force.
      McpAppBindingUnavailable: No such toolset.
    """
    entry = self._entry(toolset_id)
    with self._table_lock:
      entry.effective = _narrowed(toolset_id, entry.effective, overrides)

  def effective(self, toolset_id: str) -> EffectiveBinding:
    """The narrowed policy in force for a toolset."""
    return self._entry(toolset_id).effective

  def routes_apps(self, toolset_id: str) -> bool:
    """Whether a toolset is Apps-routed, from configuration alone.

    Reads no session (one need not exist yet): a configured profile, the
    toolset among the Apps ids, and the app audience not narrowed away.
    """
    entry = self._entry(toolset_id)
    return (
        self._profile is not None
        and (self._apps_ids is None or toolset_id in self._apps_ids)
        and 'app' in entry.effective.audiences
    )

  def add_revocation_hook(self, hook: RevocationHook) -> Callable[[], None]:
    """Registers a hook called at withdrawal step 1, after the bump.

    Later parts register View, lease, permit and pending-commit revocation
    here. Hooks run in registration order; one that raises is logged and
    counted, and withdrawal goes on.

    Returns:
      A function that removes the hook.
    """
    with self._table_lock:
      hook_id = self._next_hook
      self._next_hook += 1
      self._hooks[hook_id] = hook

    def remove() -> None:
      with self._table_lock:
        self._hooks.pop(hook_id, None)

    return remove

  # Introspection.

  @property
  def binding_generation(self) -> int:
    """The registry's current binding generation."""
    with self._table_lock:
      return self._generation

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
    with self._table_lock:
      started, closed = self._started, self._closed
      current = {
          toolset_id: entry.current
          for toolset_id, entry in self._entries.items()
      }
      audiences = {
          toolset_id: entry.effective.audiences
          for toolset_id, entry in self._entries.items()
      }
    profile = self._profile
    entries = []
    for toolset_id, proxy in current.items():
      entries.append(
          toolset_readiness(
              toolset_id,
              started=started,
              closed=closed,
              profile_name=None if profile is None else profile.name,
              profile_bound=proxy is not None and proxy.profile_bound,
              binding_generation=(
                  0 if proxy is None else proxy.binding_generation
              ),
              apps_listed=self._apps_ids is None
              or toolset_id in self._apps_ids,
              app_audience='app' in audiences[toolset_id],
              last_check=self._last_check,
          )
      )
    return ReadinessReport(
        profile_name=None if profile is None else profile.name,
        allow_dev_providers=self._allow_dev,
        profile_readiness=self._last_check,
        toolsets=tuple(entries),
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
    profile = self._profile
    if profile is None or profile.key_provider is None:
      return ()
    provider = profile.key_provider

    def of_session(generation: ConnectionGeneration) -> bool:
      scope = generation.key.session_scope
      if scope is None:
        return False
      try:
        key = provider.key(scope.split(':', 1)[0])
      except Exception:  # pylint: disable=broad-exception-caught
        return False  # A retired key: not this incarnation's (new) scope.
      return session_scope(key, session, incarnation).digest == scope

    return await self._connections.invalidate_where(
        of_session, InvalidationReason.SESSION_DELETED
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
    return tuple(self._entries)

  @property
  def materialized(self) -> tuple[HostBoundMcpToolset, ...]:
    """Every proxy this registry constructed, in order."""
    with self._table_lock:
      return tuple(self._materialized)

  def lookup(self, toolset_id: str) -> HostBoundMcpToolset:
    """The current proxy of a toolset.

    Raises:
      McpAppBindingUnavailable: No such toolset, not started, or shut down.
    """
    entry = self._entry(toolset_id)
    with self._table_lock:
      proxy = entry.current
    if proxy is None:
      raise McpAppBindingUnavailable(toolset_id, 'the registry is not started')
    return proxy

  def resolve(self, toolset_id: str, server_id: str) -> HostBoundMcpToolset:
    """Resolves a persisted descriptor's `toolset_id`/`server_id`.

    Raises:
      McpAppBindingUnavailable: No such toolset, or it names another server.
    """
    entry = self._entry(toolset_id)
    if entry.spec.server_id != server_id:
      raise McpAppBindingUnavailable(
          toolset_id, 'the descriptor names another server'
      )
    return self.lookup(toolset_id)

  def server_id(self, toolset_id: str) -> str:
    """The configured server id of a toolset."""
    return self._entry(toolset_id).spec.server_id

  def toolset(self, toolset_id: str) -> RegistryToolset:
    """The stable, non-owning `BaseToolset` to hand to an Agent."""
    self._entry(toolset_id)
    with self._table_lock:
      handle = self._handles.get(toolset_id)
      if handle is None:
        handle = RegistryToolset(self, toolset_id)
        self._handles[toolset_id] = handle
    return handle

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
    entry = self._entry(toolset_id)
    while True:
      with self._table_lock:
        if self._closed:
          raise RegistryClosedError(toolset_id)
        proxy = entry.current
        if proxy is None:
          raise McpAppBindingUnavailable(
              toolset_id, 'the registry is not started'
          )
        key = entry.lease_key
        if (
            key is None
            or key.binding_generation != proxy.binding_generation
            or self._leases.state(key) is not LeaseGenerationState.OPEN
        ):
          epoch = (
              key.epoch + 1
              if key is not None
              and key.binding_generation == proxy.binding_generation
              else 1
          )
          key = LeaseGenerationKey(toolset_id, proxy.binding_generation, epoch)
          self._leases.open_generation(
              key, functools.partial(self._close_lease_epoch, key, proxy)
          )
          entry.lease_key = key
      try:
        return _leases.bind_runner(runner, self._leases, key)
      except LeaseError as error:
        if error.reason is not LeaseErrorReason.GENERATION_CLOSED:
          raise
        continue  # Its last token was released meanwhile: a new epoch.

  async def _close_lease_epoch(
      self, key: LeaseGenerationKey, proxy: HostBoundMcpToolset
  ) -> None:
    """The ledger's close callback for one lease epoch."""
    if self._lease_close_hook is not None:
      await self._lease_close_hook(key)
    await proxy._close_connections()  # pylint: disable=protected-access
    # App-safe generations no View, reservation or call still holds close
    # with the epoch; held ones stay pinned for their holders.
    await self._connections.invalidate_where(
        lambda g: g.key.toolset_id == key.toolset_id
        and g.key.binding_generation == key.binding_generation,
        InvalidationReason.EVICTED,
        only_if_unheld=True,
    )

  async def retry_lease_closes(self) -> frozenset[Hashable]:
    """Retries every lease-driven close left pending.

    Returns:
      The `LeaseGenerationKey`s this call closed.
    """
    return await self._leases.retry_pending()

  # Lifecycle.

  def _lock(self) -> asyncio.Lock:
    if self._admin_lock is None:
      self._admin_lock = asyncio.Lock()
    return self._admin_lock

  def _binding_for(
      self, profile: Optional[McpAppsHostProfile]
  ) -> tuple[Optional[Readiness], Optional[AppsClientBinding]]:
    if profile is None:
      return None, None
    readiness = check_readiness(profile, allow_dev_providers=self._allow_dev)
    self._last_check = readiness
    if not readiness.bindable:
      logger.warning(
          'MCP Apps host profile %r is not bindable; toolsets stay'
          ' model-only: %s',
          profile.name,
          '; '.join(str(r) for r in readiness.reasons),
      )
      return readiness, None
    # The profile's fingerprint scopes pool and tools/list cache keys, so a
    # fingerprint change can never be served by a key of the old one.
    scope = hashlib.sha256(fingerprint_bytes(profile)).hexdigest()
    return readiness, AppsClientBinding(
        readiness.client_extensions(), registry_loop=self._loop, scope=scope
    )

  def _routing_factory(
      self, entry: _Entry, generation: int
  ) -> Optional[RoutingFactory]:
    profile = self._profile
    if profile is None:
      return None
    self._connections.configure(_generation_policy(profile))

    def build(
        binding: AppsClientBinding,
        admission_check: Callable[[], None],
    ) -> AppSafeToolRouting:
      if not binding.app_safe:
        raise ValueError('The app-safe class needs an app-safe binding')
      params, errlog = entry.spec.connection_params, entry.spec.errlog

      def connect(headers: Optional[dict[str, str]]) -> AppSafeConnection:
        return AppSafeConnection(params, errlog, binding, headers)

      return AppSafeToolRouting(
          pool=self._connections,
          reservations=self._reservations,
          toolset_id=entry.toolset_id,
          binding_generation=generation,
          server_id=entry.spec.server_id,
          binding_scope=binding.fingerprint,
          connect=connect,
          profile=profile,
          admission_check=admission_check,
          # One limits revision: every listing of a bound toolset is bounded
          # by the profile, whatever the spec's own `tool_listing_bounds`.
          bounds=profile.limits.discovery,
      )

    return build

  async def _new_proxy(
      self,
      entry: _Entry,
      binding: Optional[AppsClientBinding],
      generation: int,
  ) -> HostBoundMcpToolset:
    routed = binding is not None and entry.apps_routed
    proxy = HostBoundMcpToolset(
        entry.spec,
        toolset_id=entry.toolset_id,
        binding_generation=generation,
        _apps_client_binding=binding if routed else None,
        _apps_routing=(
            self._routing_factory(entry, generation) if routed else None
        ),
    )
    with self._table_lock:
      self._materialized.append(proxy)
    await proxy.materialize()
    return proxy

  async def start(self) -> None:
    """Materializes every configured toolset and starts the event loop.

    Idempotent. Each toolset is `PROFILE_BOUND` if the profile is bindable
    and the toolset Apps-routed, else `MODEL_ONLY`.

    Raises:
      RegistryClosedError: The registry has shut down.
    """
    async with self._lock():
      with self._table_lock:
        if self._closed:
          raise RegistryClosedError()
        if self._started:
          return
      self._loop.start()
      readiness, binding = self._binding_for(self._profile)
      self._readiness = readiness if binding is not None else None
      self._generation = 1
      for entry in self._entries.values():
        entry.apps_routed = self.routes_apps(entry.toolset_id)
        proxy = await self._new_proxy(entry, binding, 1)
        with self._table_lock:
          entry.current = proxy
      with self._table_lock:
        self._started = True

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

  async def _swap(
      self,
      targets: list[_Entry],
      binding: Optional[AppsClientBinding],
      readiness: Optional[Readiness],
      reason: str,
  ) -> SwapReport:
    """Withdrawal steps 1-4 for `targets` (admin lock held)."""
    if not targets:
      return SwapReport(
          reason, self.binding_generation, (), readiness, (), {}, 0
      )
    new_generation = self.binding_generation + 1
    successors = {
        entry.toolset_id: await self._new_proxy(entry, binding, new_generation)
        for entry in targets
    }
    steps: list[str] = []
    old: dict[str, HostBoundMcpToolset] = {}
    # Step 1: install atomically, bump, shut the old gates; then the hooks.
    with self._table_lock:
      self._generation = new_generation
      for entry in targets:
        previous = entry.current
        assert previous is not None
        old[entry.toolset_id] = previous
        entry.current = successors[entry.toolset_id]
        if entry.lease_key is not None:
          # The old generation's leases are revoked: none may be issued.
          self._leases.seal(entry.lease_key)
    for toolset_id, proxy in old.items():

      def refusal(
          toolset_id: str = toolset_id, proxy: HostBoundMcpToolset = proxy
      ) -> Exception:
        return StaleGenerationError(
            toolset_id, proxy.binding_generation, new_generation
        )

      if not proxy._begin_revoke(refusal):  # pylint: disable=protected-access
        logger.warning('Toolset %r was not serving at revocation.', toolset_id)
    steps.append('generation_bumped')
    event = RevocationEvent(
        tuple(old),
        {toolset_id: p.binding_generation for toolset_id, p in old.items()},
        new_generation,
        reason,
    )
    failures = 0
    with self._table_lock:
      hooks = list(self._hooks.values())
    for hook in hooks:
      try:
        result = hook(event)
        if inspect.isawaitable(result):
          await result
      except Exception:  # pylint: disable=broad-exception-caught
        failures += 1
        logger.exception('Revocation hook failed; withdrawal goes on.')
    steps.append('hooks_called')
    # Step 2: drain or cancel admitted work, with a bound.
    drains = {
        toolset_id: await proxy._drain(self._drain_timeout)  # pylint: disable=protected-access
        for toolset_id, proxy in old.items()
    }
    steps.append('drained')
    # Step 3: terminate every old (advertising) connection: the app-safe
    # generations first (each holder learns why), then the runtimes' pools.
    await self._connections.invalidate_where(
        lambda g: g.key.toolset_id in old
        and g.key.binding_generation < new_generation,
        InvalidationReason.READINESS_REVOKED,
    )
    for proxy in old.values():
      await proxy._close_runtime()  # pylint: disable=protected-access
    steps.append('pools_closed')
    # Step 4: REVOKING -> CLOSED.
    for proxy in old.values():
      proxy._finish_close()  # pylint: disable=protected-access
    steps.append('proxies_closed')
    return SwapReport(
        reason,
        new_generation,
        tuple(old),
        readiness,
        tuple(steps),
        drains,
        failures,
    )

  def _require_started(self) -> None:
    with self._table_lock:
      if self._closed:
        raise RegistryClosedError()
      if not self._started:
        raise McpAppBindingUnavailable('*', 'the registry is not started')

  def _bound_entries(self) -> list[_Entry]:
    return [
        entry
        for entry in self._entries.values()
        if entry.current is not None and entry.current.profile_bound
    ]

  async def revoke(self, reason: str = 'withdrawal') -> SwapReport:
    """Withdraws readiness: every profile-bound toolset goes model-only.

    Model-only toolsets are untouched. Steps 1-4 of the module docstring;
    each bound toolset gets a new `MODEL_ONLY` proxy under a new generation.

    Returns:
      The report, with the steps in completion order.
    """
    async with self._lock():
      self._require_started()
      self._readiness = None
      return await self._swap(self._bound_entries(), None, None, reason)

  async def recheck(self) -> SwapReport:
    """Re-checks the bound profile's readiness; withdraws if it was lost."""
    async with self._lock():
      self._require_started()
      if self._readiness is None or self._profile is None:
        return await self._swap([], None, None, 'readiness_lost')
      readiness = check_readiness(
          self._profile, allow_dev_providers=self._allow_dev
      )
      self._last_check = readiness
      if readiness.bindable:
        return await self._swap([], None, readiness, 'readiness_lost')
      self._readiness = None
      return await self._swap(
          self._bound_entries(), None, readiness, 'readiness_lost'
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
      self._require_started()
      self._profile = profile
      readiness, binding = self._binding_for(profile)
      if binding is None:
        self._readiness = None
        return await self._swap(
            self._bound_entries(), None, readiness, 'rebind'
        )
      for entry in self._entries.values():
        entry.apps_routed = self.routes_apps(entry.toolset_id)
      self._readiness = readiness
      targets = [e for e in self._entries.values() if e.apps_routed]
      return await self._swap(targets, binding, readiness, 'rebind')

  async def aclose(self) -> None:
    """Shuts down: closes every proxy it constructed, once, then its loop.

    Idempotent. Toolsets the registry did not construct are not touched.
    """
    async with self._lock():
      with self._table_lock:
        if self._closed:
          return
        self._closed = True
        proxies = list(self._materialized)
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


class RegistryToolset(BaseToolset):
  """The stable, non-owning toolset an Agent holds for one toolset id.

  Each listing resolves the registry's current proxy and delegates to it,
  so model traffic follows a withdrawal or rebind without the Agent
  noticing; the tools it returns are bound to the generation that listed
  them. A listing that meets a proxy superseded between lookup and
  admission is retried once on the successor. `close()` releases nothing.
  """

  def __init__(self, registry: McpAppBindingRegistry, toolset_id: str):
    super().__init__(tool_filter=None, tool_name_prefix=None)
    self._use_invocation_cache = False
    self._registry = registry
    self._toolset_id = toolset_id

  @property
  def toolset_id(self) -> str:
    """The toolset id this handle resolves."""
    return self._toolset_id

  def current(self) -> HostBoundMcpToolset:
    """The proxy currently installed for this id."""
    return self._registry.lookup(self._toolset_id)

  @override
  async def get_tools(
      self, readonly_context: Optional[ReadonlyContext] = None
  ) -> list[BaseTool]:
    proxy = self.current()
    try:
      return await proxy.get_tools(readonly_context)
    except StaleGenerationError:
      successor = self.current()
      if successor is proxy:
        raise
      return await successor.get_tools(readonly_context)

  @override
  async def close(self) -> None:
    """Releases nothing (see `HostBoundMcpToolset.close`)."""


def _connection_clock() -> float:
  return time.monotonic()


def _generation_policy(profile: McpAppsHostProfile) -> GenerationPolicy:
  """The generation lifetime policy a profile declares."""
  affinity = profile.connection_affinity
  sharing = affinity.cross_session_sharing
  return GenerationPolicy(
      idle_eviction_seconds=affinity.idle_eviction_seconds,
      max_lifetime_seconds=affinity.max_lifetime_seconds,
      credential_expiry_seconds=affinity.credential_expiry_seconds,
      handle_contract=(
          None if sharing is None else sharing.server_handle_contract
      ),
  )
