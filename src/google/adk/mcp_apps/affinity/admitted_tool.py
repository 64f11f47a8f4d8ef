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

"""`AdmittedMcpTool`: an `McpTool` whose every call enters an admission gate.

The binding registry builds a bound toolset's tools through
`McpToolset._create_tool`, so each tool carries the gate of the binding
generation that listed it: a call of a retired generation's tool fails typed
instead of opening a connection, and a call in flight is drained for.

Example:

  tool = AdmittedMcpTool(admission=gate, mcp_tool=decl, mcp_session_manager=m)
"""

from __future__ import annotations

import contextlib
from typing import Any
from typing import Optional
from typing import Protocol
from typing import TYPE_CHECKING

from typing_extensions import override

from ...tools.mcp_tool.mcp_tool import McpTool

if TYPE_CHECKING:
  from ...agents.readonly_context import ReadonlyContext
  from ...tools.tool_context import ToolContext
  from .tool_handles import TwoClassCatalog


class Admission(Protocol):
  """What a tool enters around each call (the binding's admission gate)."""

  def operation(self) -> contextlib.AbstractAsyncContextManager[None]:
    """Admits one operation or raises the gate's refusal."""
    ...

  def check(self) -> None:
    """Raises the gate's refusal once it no longer admits new work."""
    ...


class BatchDiscovery(Protocol):
  """What lists a bound tool's server afresh when a batch calls it."""

  async def discover_for_batch(
      self, readonly_context: ReadonlyContext
  ) -> TwoClassCatalog:
    """Both connection classes, listed now (never a cached listing)."""
    ...

  def forget_catalog(self) -> None:
    """Drops the catalog cached for the current invocation.

    Called when a batch was refused because the tools changed, so the
    model's next step is listed afresh.
    """
    ...


class AdmittedMcpTool(McpTool):
  """An `McpTool` run inside an admission gate; without one, an `McpTool`."""

  def __init__(
      self,
      *,
      admission: Optional[Admission] = None,
      discovery: Optional[BatchDiscovery] = None,
      **kwargs: Any,
  ):
    """Builds the tool.

    Args:
      admission: The gate every call enters; None admits every call.
      discovery: The toolset that listed the tool under a bound profile; a
        batch that calls the tool is admitted against its fresh listing.
      **kwargs: `McpTool`'s constructor arguments.
    """
    super().__init__(**kwargs)
    self._adk_apps_gate = admission
    self._adk_apps_discovery = discovery

  @property
  def batch_discovery(self) -> Optional[BatchDiscovery]:
    """The toolset a batch admission lists afresh (None: not profile-bound)."""
    return self._adk_apps_discovery

  @property
  def admission(self) -> Optional[Admission]:
    """The gate every call enters (None: no gate)."""
    return self._adk_apps_gate

  @override
  async def run_async(
      self, *, args: dict[str, Any], tool_context: ToolContext
  ) -> Any:
    gate = self._adk_apps_gate
    if gate is None:
      return await super().run_async(args=args, tool_context=tool_context)
    async with gate.operation():
      return await super().run_async(args=args, tool_context=tool_context)
