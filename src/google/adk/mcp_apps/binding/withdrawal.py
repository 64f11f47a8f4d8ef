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

"""Withdrawal: how a binding generation ends.

A withdrawal or rebind never changes a proxy in place. `Withdrawal.swap`
installs successor proxies under the next binding generation, then runs the
old ones down in four steps: shut their gates and call the revocation
hooks; drain admitted work; terminate their connections; close them.
`revoke_session_generations` ends the app-safe connection generations of
one deleted Session. Design: docs/design/binding.md.

Example:

  report = await withdrawal.swap(targets, None, None, 'withdrawal', None)
  assert report.steps[-1] == 'proxies_closed'
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
import dataclasses
import inspect
import logging
import threading
from typing import Optional
from typing import Union

from ..affinity.errors import InvalidationReason
from ..affinity.generations import AppSafeConnectionPool
from ..affinity.generations import ConnectionGeneration
from ..affinity.security_domain import session_scope
from ..contracts.scope import SessionKey
from ..profile.host_profile import McpAppsHostProfile
from ..profile.readiness import Readiness
from .admission import DrainResult
from .client_extensions import AppsClientBinding
from .construction import ProxyConstruction
from .errors import StaleGenerationError
from .leases import RunnerLeaseLedger
from .proxy import HostBoundMcpToolset
from .toolset_table import ToolsetEntry
from .toolset_table import ToolsetTable

logger = logging.getLogger('google_adk.' + __name__)


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


class RevocationHooks:
  """The hooks called at withdrawal step 1, in registration order."""

  def __init__(self) -> None:
    self._lock = threading.Lock()
    self._hooks: dict[int, RevocationHook] = {}
    self._next = 0

  def add(self, hook: RevocationHook) -> Callable[[], None]:
    """Registers a hook; returns a function that removes it."""
    with self._lock:
      hook_id = self._next
      self._next += 1
      self._hooks[hook_id] = hook

    def remove() -> None:
      with self._lock:
        self._hooks.pop(hook_id, None)

    return remove

  async def call(self, event: RevocationEvent) -> int:
    """Calls every hook; one that raises is logged and counted.

    Returns:
      How many hooks raised.
    """
    with self._lock:
      hooks = list(self._hooks.values())
    failures = 0
    for hook in hooks:
      try:
        result = hook(event)
        if inspect.isawaitable(result):
          await result
      except Exception:  # pylint: disable=broad-exception-caught
        failures += 1
        logger.exception('Revocation hook failed; withdrawal goes on.')
    return failures


class Withdrawal:
  """Replaces toolsets' proxies and runs the old ones down."""

  def __init__(
      self,
      table: ToolsetTable,
      construction: ProxyConstruction,
      ledger: RunnerLeaseLedger,
      connections: AppSafeConnectionPool,
      hooks: RevocationHooks,
      *,
      drain_timeout: float,
  ):
    self._table = table
    self._construction = construction
    self._ledger = ledger
    self._connections = connections
    self._hooks = hooks
    self._drain_timeout = drain_timeout

  async def swap(
      self,
      targets: list[ToolsetEntry],
      binding: Optional[AppsClientBinding],
      readiness: Optional[Readiness],
      reason: str,
      profile: Optional[McpAppsHostProfile],
  ) -> SwapReport:
    """Withdrawal steps 1-4 for `targets` (the registry's admin lock held).

    Args:
      targets: The toolsets to give new proxies.
      binding: The client binding the new proxies are built with, or None
        (model-only).
      readiness: The readiness the new proxies are built under.
      reason: Why (reported to the hooks and in the report).
      profile: The registry's profile.

    Returns:
      The report, with the steps in completion order.
    """
    table = self._table
    if not targets:
      with table.lock:
        generation = table.generation
      return SwapReport(reason, generation, (), readiness, (), {}, 0)
    with table.lock:
      new_generation = table.generation + 1
    successors = {
        entry.toolset_id: await self._construction.new_proxy(
            entry, binding, new_generation, profile
        )
        for entry in targets
    }
    steps: list[str] = []
    old: dict[str, HostBoundMcpToolset] = {}
    # Step 1: install atomically, bump, shut the old gates; then the hooks.
    with table.lock:
      table.generation = new_generation
      for entry in targets:
        previous = entry.current
        assert previous is not None
        old[entry.toolset_id] = previous
        entry.current = successors[entry.toolset_id]
        if entry.lease_key is not None:
          # The old generation's leases are revoked: none may be issued.
          self._ledger.seal(entry.lease_key)
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
    failures = await self._hooks.call(event)
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


async def revoke_session_generations(
    connections: AppSafeConnectionPool,
    profile: Optional[McpAppsHostProfile],
    session: SessionKey,
    incarnation: int,
) -> tuple[str, ...]:
  """Invalidates the app-safe generations of one Session incarnation.

  See `McpAppBindingRegistry.revoke_session`.

  Returns:
    The ids of the generations invalidated.
  """
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

  return await connections.invalidate_where(
      of_session, InvalidationReason.SESSION_DELETED
  )
