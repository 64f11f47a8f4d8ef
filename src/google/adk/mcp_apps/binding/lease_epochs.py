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

"""Lease epochs: how the registry leases its binding generations to Runners.

A binding generation is leased in epochs. `LeaseEpochs.bind_runner` issues
a Runner's token on the current generation's open epoch (opening a new one
after the last was closed by its last release); the epoch's close callback
closes the generation's pooled connections and the app-safe generations
nothing holds any more.

Example:

  epochs = LeaseEpochs(table, ledger, connections)
  token = epochs.bind_runner(runner, 'weather')
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Hashable
import dataclasses
import functools
from typing import Optional

from . import leases as _leases
from ..affinity.errors import InvalidationReason
from ..affinity.generations import AppSafeConnectionPool
from .errors import McpAppBindingUnavailable
from .errors import RegistryClosedError
from .leases import LeaseError
from .leases import LeaseErrorReason
from .leases import LeaseGenerationState
from .leases import LeaseToken
from .leases import RunnerLeaseLedger
from .proxy import HostBoundMcpToolset
from .toolset_table import ToolsetTable


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


class LeaseEpochs:
  """Opens, binds and closes the lease epochs of the registry's toolsets."""

  def __init__(
      self,
      table: ToolsetTable,
      ledger: RunnerLeaseLedger,
      connections: AppSafeConnectionPool,
      close_hook: Optional[
          Callable[[LeaseGenerationKey], Awaitable[None]]
      ] = None,
  ):
    """Builds the epochs over a table and a ledger.

    Args:
      table: The registry's toolset table.
      ledger: The registry's Runner lease ledger.
      connections: The registry's app-safe connection generations.
      close_hook: Awaited at the start of every close attempt (a test seam
        for slow or failing closes).
    """
    self._table = table
    self._ledger = ledger
    self._connections = connections
    self._close_hook = close_hook

  def bind_runner(self, runner: object, toolset_id: str) -> LeaseToken:
    """Leases a toolset's current generation for a Runner.

    See `McpAppBindingRegistry.bind_runner`.
    """
    table = self._table
    entry = table.entry(toolset_id)
    while True:
      with table.lock:
        if table.closed:
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
            or self._ledger.state(key) is not LeaseGenerationState.OPEN
        ):
          epoch = (
              key.epoch + 1
              if key is not None
              and key.binding_generation == proxy.binding_generation
              else 1
          )
          key = LeaseGenerationKey(toolset_id, proxy.binding_generation, epoch)
          self._ledger.open_generation(
              key, functools.partial(self._close_epoch, key, proxy)
          )
          entry.lease_key = key
      try:
        return _leases.bind_runner(runner, self._ledger, key)
      except LeaseError as error:
        if error.reason is not LeaseErrorReason.GENERATION_CLOSED:
          raise
        continue  # Its last token was released meanwhile: a new epoch.

  async def _close_epoch(
      self, key: LeaseGenerationKey, proxy: HostBoundMcpToolset
  ) -> None:
    """The ledger's close callback for one lease epoch."""
    if self._close_hook is not None:
      await self._close_hook(key)
    await proxy._close_connections()  # pylint: disable=protected-access
    # App-safe generations no View, reservation or call still holds close
    # with the epoch; held ones stay pinned for their holders.
    await self._connections.invalidate_where(
        lambda g: g.key.toolset_id == key.toolset_id
        and g.key.binding_generation == key.binding_generation,
        InvalidationReason.EVICTED,
        only_if_unheld=True,
    )

  async def retry_pending(self) -> frozenset[Hashable]:
    """Retries every lease-driven close left pending; returns their keys."""
    return await self._ledger.retry_pending()
