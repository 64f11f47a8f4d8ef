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

"""The app catalog: which tools a View may call, decided at call time.

A View may call a tool only on the server connection it was rendered from,
only if the tool is `"app"`-visible there, only if the host's
`AppCallPolicy` admits it, and never under a framework-reserved name.
Admission lists the connection afresh, within `ToolListingBounds`, and
denies with `McpAppVisibilityError` on any listing failure. Notes:
docs/design/catalog.md.

Example:

  tool = await admit_app_call(
      session, 'refresh_chart', view_server_id='crm', target_server_id='crm'
  )
"""

from __future__ import annotations

import dataclasses
from typing import Any
from typing import Iterable

from . import reserved_names
from . import visibility
from ...dependencies._mcp import types
from ..errors import DenialReason
from ..errors import McpAppVisibilityError
from .listing import DEFAULT_BOUNDS
from .listing import list_all_tools
from .listing import ToolListingBounds
from .listing import ToolListingError


@dataclasses.dataclass(frozen=True)
class AppCallPolicy:
  """The host's narrowing of which app-visible tools a View may call.

  The default admits every app-visible tool of the View's own connection.
  Policies only narrow: `narrow` intersects, and no policy can admit a tool
  its server did not make app-visible.

  Attributes:
    allowed: Native tool names admitted, or None for "every app-visible tool".
  """

  allowed: frozenset[str] | None = None

  @classmethod
  def deny_all(cls) -> AppCallPolicy:
    """A policy that admits no View tool call."""
    return cls(frozenset())

  @classmethod
  def only(cls, names: Iterable[str]) -> AppCallPolicy:
    """A policy that admits at most the named tools."""
    return cls(frozenset(names))

  def admits(self, tool_name: str) -> bool:
    """Whether the policy itself admits a native tool name."""
    return self.allowed is None or tool_name in self.allowed

  def narrow(self, other: AppCallPolicy) -> AppCallPolicy:
    """The intersection of two policies."""
    if self.allowed is None:
      return other
    if other.allowed is None:
      return self
    return AppCallPolicy(self.allowed & other.allowed)


DEFAULT_POLICY = AppCallPolicy()


def _app_callable(tool: types.Tool, policy: AppCallPolicy) -> bool:
  if reserved_names.reserved_for_app(tool.name) or not policy.admits(tool.name):
    return False
  normalized = visibility.tool_visibility(tool)
  visibility.log_malformed(tool.name, normalized)
  return normalized.app


async def list_app_catalog(
    session: Any,
    policy: AppCallPolicy = DEFAULT_POLICY,
    bounds: ToolListingBounds = DEFAULT_BOUNDS,
) -> list[types.Tool]:
  """Lists the tools a View on this connection may call, afresh.

  Args:
    session: The View's initialized MCP `ClientSession`.
    policy: The host's app-call policy.
    bounds: Limits for the listing.

  Returns:
    The admitted tools, in the server's order.

  Raises:
    ToolListingError: The listing failed or exceeded a bound.
  """
  tools = await list_all_tools(session, bounds)
  return [tool for tool in tools if _app_callable(tool, policy)]


async def admit_app_call(
    session: Any,
    tool_name: str,
    *,
    view_server_id: str,
    target_server_id: str,
    policy: AppCallPolicy = DEFAULT_POLICY,
    bounds: ToolListingBounds = DEFAULT_BOUNDS,
) -> types.Tool:
  """Decides one View-originated `tools/call` before it is sent.

  Args:
    session: The View's own initialized MCP `ClientSession`.
    tool_name: The native tool name the View asked for.
    view_server_id: The stable id of the server the View was rendered from.
    target_server_id: The stable id of the server the call would go to.
    policy: The host's app-call policy.
    bounds: Limits for the admission listing.

  Returns:
    The tool's declaration from the fresh listing.

  Raises:
    McpAppVisibilityError: The call is denied; `reason` says why. No remote
      call was made (beyond the admission listing, when one was needed).
  """
  if target_server_id != view_server_id:
    raise McpAppVisibilityError(
        tool_name,
        DenialReason.CROSS_SERVER,
        'a View may call tools only on the server it was rendered from',
    )
  if reserved_names.reserved_for_app(tool_name):
    raise McpAppVisibilityError(tool_name, DenialReason.RESERVED_NAME)
  if not policy.admits(tool_name):
    raise McpAppVisibilityError(tool_name, DenialReason.POLICY_DENIED)
  try:
    tools = await list_all_tools(session, bounds)
  except ToolListingError as e:
    raise McpAppVisibilityError(
        tool_name, DenialReason.LISTING_FAILED, str(e)
    ) from e
  declaration = next((t for t in tools if t.name == tool_name), None)
  if declaration is None:
    raise McpAppVisibilityError(tool_name, DenialReason.NOT_LISTED)
  normalized = visibility.tool_visibility(declaration)
  if normalized.malformed is not None:
    visibility.log_malformed(tool_name, normalized)
    raise McpAppVisibilityError(
        tool_name, DenialReason.MALFORMED_VISIBILITY, normalized.malformed.value
    )
  if not normalized.app:
    raise McpAppVisibilityError(tool_name, DenialReason.NOT_APP_VISIBLE)
  return declaration


async def list_toolset_app_catalog(
    toolset: Any,
    readonly_context: Any = None,
    policy: AppCallPolicy = DEFAULT_POLICY,
    bounds: ToolListingBounds | None = None,
) -> list[types.Tool]:
  """`list_app_catalog` on an `McpToolset`'s own pooled connection.

  Without a host profile binding Views to connection generations, this is
  how a caller sees what a View of the toolset's server could call. The
  same as `toolset.list_app_tools(...)`.

  Args:
    toolset: An `McpToolset`.
    readonly_context: Context for the toolset's session headers.
    policy: The host's app-call policy.
    bounds: Limits for the listing; None means the toolset's own.

  Returns:
    The admitted tools, with native names.
  """
  result: list[types.Tool] = await toolset.list_app_tools(
      readonly_context, policy, bounds
  )
  return result
