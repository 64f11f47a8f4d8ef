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

"""The binding registry's table of configured toolsets and their proxies.

One lock guards the table: each toolset's spec, effective policy and
current proxy, the registry's binding generation, whether it has started
or shut down, and every proxy it ever constructed. The registry's parts
(construction, withdrawal, lease epochs) read and swap entries under it.

Example:

  table = ToolsetTable()
  table.add(ToolsetEntry('weather', spec, apps_routed=False, effective=e))
  proxy = table.lookup('weather')
"""

from __future__ import annotations

from collections.abc import Callable
import dataclasses
import threading
from typing import Optional
from typing import TYPE_CHECKING

from ..profile.readiness import Readiness
from .errors import BindingConflictError
from .errors import McpAppBindingUnavailable
from .errors import RegistryClosedError
from .overrides import EffectiveBinding
from .proxy import HostBoundMcpToolset
from .registry_toolset import RegistryToolset
from .spec import McpToolsetSpec
from .status import ReadinessReport
from .status import toolset_readiness

if TYPE_CHECKING:
  from .lease_epochs import LeaseGenerationKey


@dataclasses.dataclass(eq=False)
class ToolsetEntry:
  """One configured toolset (mutated only under the table's lock).

  Attributes:
    toolset_id: The stable toolset id.
    spec: What its runtime toolsets are constructed from.
    apps_routed: Whether it is routed to the Apps host (set at start and
      rebind, from configuration).
    effective: The narrowed policy in force.
    current: The proxy serving now (None before start).
    lease_key: The lease epoch Runners are bound to now, if any.
  """

  toolset_id: str
  spec: McpToolsetSpec
  apps_routed: bool
  effective: EffectiveBinding
  current: Optional[HostBoundMcpToolset] = None
  lease_key: Optional[LeaseGenerationKey] = None


class ToolsetTable:
  """The configured toolsets, their current proxies and the generation.

  Attributes:
    lock: Guards everything here; never held across an `await`.
    generation: The registry's current binding generation (0 before start).
    started: Whether the registry has started.
    closed: Whether the registry has shut down.
  """

  def __init__(self) -> None:
    self.lock = threading.Lock()
    self.generation = 0
    self.started = False
    self.closed = False
    self._entries: dict[str, ToolsetEntry] = {}
    self._materialized: list[HostBoundMcpToolset] = []
    self._handles: dict[str, RegistryToolset] = {}

  def add(self, entry: ToolsetEntry) -> None:
    """Adds a configured toolset before start.

    Raises:
      BindingConflictError: The id is taken, or the registry has started.
    """
    with self.lock:
      if self.started or self.closed:
        raise BindingConflictError(
            'Toolsets are registered from configuration, before start()'
        )
      if entry.toolset_id in self._entries:
        raise BindingConflictError(
            f'Toolset id {entry.toolset_id!r} is registered twice'
        )
      self._entries[entry.toolset_id] = entry

  def entry(self, toolset_id: str) -> ToolsetEntry:
    """The entry of a toolset.

    Raises:
      RegistryClosedError: The registry has shut down.
      McpAppBindingUnavailable: No such toolset.
    """
    with self.lock:
      if self.closed:
        raise RegistryClosedError(toolset_id)
      entry = self._entries.get(toolset_id)
    if entry is None:
      raise McpAppBindingUnavailable(toolset_id)
    return entry

  def entries(self) -> list[ToolsetEntry]:
    """Every entry, in registration order."""
    return list(self._entries.values())

  def bound_entries(self) -> list[ToolsetEntry]:
    """The entries whose current proxy is profile-bound."""
    return [
        entry
        for entry in self._entries.values()
        if entry.current is not None and entry.current.profile_bound
    ]

  @property
  def toolset_ids(self) -> tuple[str, ...]:
    """The configured toolset ids, in registration order."""
    return tuple(self._entries)

  def require_started(self) -> None:
    """Raises unless the registry has started and not shut down."""
    with self.lock:
      if self.closed:
        raise RegistryClosedError()
      if not self.started:
        raise McpAppBindingUnavailable('*', 'the registry is not started')

  def lookup(self, toolset_id: str) -> HostBoundMcpToolset:
    """The current proxy of a toolset.

    Raises:
      McpAppBindingUnavailable: No such toolset, not started, or shut down.
    """
    entry = self.entry(toolset_id)
    with self.lock:
      proxy = entry.current
    if proxy is None:
      raise McpAppBindingUnavailable(toolset_id, 'the registry is not started')
    return proxy

  def record(self, proxy: HostBoundMcpToolset) -> None:
    """Records a proxy the registry constructed (shutdown closes it)."""
    with self.lock:
      self._materialized.append(proxy)

  @property
  def materialized(self) -> tuple[HostBoundMcpToolset, ...]:
    """Every proxy the registry constructed, in order."""
    with self.lock:
      return tuple(self._materialized)

  def handle(
      self, toolset_id: str, make: Callable[[], RegistryToolset]
  ) -> RegistryToolset:
    """The one Agent-facing handle of a toolset, made on first use."""
    self.entry(toolset_id)
    with self.lock:
      handle = self._handles.get(toolset_id)
      if handle is None:
        handle = self._handles[toolset_id] = make()
    return handle

  def report(
      self,
      *,
      profile_name: Optional[str],
      apps_ids: Optional[frozenset[str]],
      allow_dev_providers: bool,
      last_check: Optional[Readiness],
  ) -> ReadinessReport:
    """The readiness report of every configured toolset (see the registry)."""
    with self.lock:
      started, closed = self.started, self.closed
      current = {
          toolset_id: (entry.current, entry.effective.visibility)
          for toolset_id, entry in self._entries.items()
      }
    entries = []
    for toolset_id, (proxy, visibility) in current.items():
      entries.append(
          toolset_readiness(
              toolset_id,
              started=started,
              closed=closed,
              profile_name=profile_name,
              profile_bound=proxy is not None and proxy.profile_bound,
              binding_generation=(
                  0 if proxy is None else proxy.binding_generation
              ),
              apps_listed=apps_ids is None or toolset_id in apps_ids,
              app_visible='app' in visibility,
              last_check=last_check,
          )
      )
    return ReadinessReport(
        profile_name=profile_name,
        allow_dev_providers=allow_dev_providers,
        profile_readiness=last_check,
        toolsets=tuple(entries),
    )
