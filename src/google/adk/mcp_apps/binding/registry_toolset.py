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

"""`RegistryToolset`: the stable toolset an Agent holds for one toolset id.

Example:

  agent = LlmAgent(..., tools=[registry.toolset('weather')])
"""

from __future__ import annotations

from typing import Optional
from typing import Protocol

from typing_extensions import override

from ...agents.readonly_context import ReadonlyContext
from ...tools.base_tool import BaseTool
from ...tools.base_toolset import BaseToolset
from .errors import StaleGenerationError
from .proxy import HostBoundMcpToolset


class ProxyLookup(Protocol):
  """What a `RegistryToolset` resolves its current proxy through."""

  def lookup(self, toolset_id: str) -> HostBoundMcpToolset:
    """The current proxy of a toolset."""
    ...


class RegistryToolset(BaseToolset):
  """The stable, non-owning toolset an Agent holds for one toolset id.

  Each listing resolves the registry's current proxy and delegates to it,
  so model traffic follows a withdrawal or rebind without the Agent
  noticing; the tools it returns are bound to the generation that listed
  them. A listing that meets a proxy superseded between lookup and
  admission is retried once on the successor. `close()` releases nothing.
  """

  def __init__(self, registry: ProxyLookup, toolset_id: str):
    super().__init__(tool_filter=None, tool_name_prefix=None)
    self._use_invocation_cache = False
    self._registry = registry
    self._toolset_id = toolset_id

  @property
  def toolset_id(self) -> str:
    """The toolset id this handle resolves."""
    return self._toolset_id

  @property
  def registry(self) -> ProxyLookup:
    """The registry this handle resolves through (what an HTTP adapter
    reads to find an agent's Apps host)."""
    return self._registry

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
