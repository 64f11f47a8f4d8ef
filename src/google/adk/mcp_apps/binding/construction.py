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

"""How the binding registry constructs a proxy for one toolset.

`ProxyConstruction.binding_for(profile)` checks the profile's readiness and,
when it is bindable, builds the `AppsClientBinding` every profile-bound
toolset is constructed with (scoped by the profile's fingerprint, carrying
the registry loop). `new_proxy` builds a `HostBoundMcpToolset` from the
spec, with that binding and an app-safe routing only when the toolset is
Apps-routed, and materializes it.

Example:

  readiness, binding = construction.binding_for(profile)
  proxy = await construction.new_proxy(entry, binding, 1, profile)
"""

from __future__ import annotations

from collections.abc import Callable
import hashlib
import logging
from typing import Optional

from ..affinity.generations import AppSafeConnectionPool
from ..affinity.generations import GenerationPolicy
from ..affinity.routing import AppSafeToolRouting
from ..affinity.routing import RenderReservations
from ..profile.fingerprint import fingerprint_bytes
from ..profile.host_profile import McpAppsHostProfile
from ..profile.readiness import check_readiness
from ..profile.readiness import Readiness
from .app_safe_connection import AppSafeConnection
from .client_extensions import AppsClientBinding
from .proxy import HostBoundMcpToolset
from .registry_loop import RegistryEventLoop
from .sealed_runtime import RoutingFactory
from .toolset_table import ToolsetEntry
from .toolset_table import ToolsetTable

logger = logging.getLogger('google_adk.' + __name__)


class ProxyConstruction:
  """Builds the registry's bindings and proxies.

  Attributes:
    last_check: The last readiness check's outcome, bindable or not.
  """

  def __init__(
      self,
      table: ToolsetTable,
      loop: RegistryEventLoop,
      connections: AppSafeConnectionPool,
      reservations: RenderReservations,
      *,
      allow_dev_providers: bool,
  ):
    self._table = table
    self._loop = loop
    self._connections = connections
    self._reservations = reservations
    self._allow_dev = allow_dev_providers
    self.last_check: Optional[Readiness] = None

  def check(self, profile: McpAppsHostProfile) -> Readiness:
    """Checks a profile's readiness and records it as `last_check`."""
    readiness = check_readiness(profile, allow_dev_providers=self._allow_dev)
    self.last_check = readiness
    return readiness

  def binding_for(
      self, profile: Optional[McpAppsHostProfile]
  ) -> tuple[Optional[Readiness], Optional[AppsClientBinding]]:
    """The readiness of a profile and, when bindable, its client binding."""
    if profile is None:
      return None, None
    readiness = self.check(profile)
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
      self,
      entry: ToolsetEntry,
      generation: int,
      profile: Optional[McpAppsHostProfile],
  ) -> Optional[RoutingFactory]:
    if profile is None:
      return None
    self._connections.configure(generation_policy(profile))

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

  async def new_proxy(
      self,
      entry: ToolsetEntry,
      binding: Optional[AppsClientBinding],
      generation: int,
      profile: Optional[McpAppsHostProfile],
  ) -> HostBoundMcpToolset:
    """Constructs and materializes one proxy of a toolset.

    Args:
      entry: The toolset.
      binding: The client binding of a bindable profile, or None.
      generation: The binding generation the proxy serves.
      profile: The registry's profile (the routing's limits and policy).

    Returns:
      The proxy, recorded in the table's constructed proxies.
    """
    routed = binding is not None and entry.apps_routed
    proxy = HostBoundMcpToolset(
        entry.spec,
        toolset_id=entry.toolset_id,
        binding_generation=generation,
        _apps_client_binding=binding if routed else None,
        _apps_routing=(
            self._routing_factory(entry, generation, profile)
            if routed
            else None
        ),
    )
    self._table.record(proxy)
    await proxy.materialize()
    return proxy


def generation_policy(profile: McpAppsHostProfile) -> GenerationPolicy:
  """The connection-generation lifetime policy a profile declares."""
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
