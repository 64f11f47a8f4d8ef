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

"""Errors shared by the MCP Apps host's layers.

Every refusal the host makes is a typed error with a machine-readable reason,
so a caller (a View bridge, a test, an operator reading logs) can tell a
visibility denial from a listing failure without parsing messages. Messages
never carry credentials or raw server payloads. Each subpackage has one
error deriving from `McpAppsError`.

Example:

  try:
    await call_app_tool(...)
  except McpAppVisibilityError as e:
    if e.reason is DenialReason.LISTING_FAILED:
      ...
"""

from __future__ import annotations

import enum


class McpAppsError(Exception):
  """Base class of every error the MCP Apps host raises."""


class DenialReason(enum.Enum):
  """Why a View-originated tool call was refused."""

  NOT_LISTED = 'not_listed'
  """The tool is absent from a fresh listing of the View's connection."""

  NOT_APP_VISIBLE = 'not_app_visible'
  """The tool's visibility does not include `"app"`."""

  MALFORMED_VISIBILITY = 'malformed_visibility'
  """The tool's visibility could not be normalized; it is visible to no one."""

  RESERVED_NAME = 'reserved_name'
  """The tool's native name is one the framework itself puts on the wire."""

  POLICY_DENIED = 'policy_denied'
  """The host's app-call policy does not admit the tool."""

  CROSS_SERVER = 'cross_server'
  """The call targets another configured server than the View's own."""

  LISTING_FAILED = 'listing_failed'
  """The admission listing failed or exceeded a bound."""


class McpAppVisibilityError(McpAppsError):
  """A View-originated tool call was denied before any remote call was made.

  Attributes:
    tool_name: The native tool name the View asked for.
    reason: Why it was denied.
  """

  def __init__(self, tool_name: str, reason: DenialReason, detail: str = ''):
    self.tool_name = tool_name
    self.reason = reason
    message = f'App call to tool {tool_name!r} denied: {reason.value}'
    super().__init__(f'{message} ({detail})' if detail else message)
