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

"""Tool names the framework itself puts on the wire.

A server tool answering to one of these names would be dispatched in place
of the framework's own function (credential requests, confirmations, agent
transfer), so it is excluded from both catalogs. The model catalog also
checks the name composed with the toolset's `tool_name_prefix`; the app
catalog uses native names only.

Example:

  assert reserved_for_model('agent', prefix='transfer_to')
"""

from __future__ import annotations

from ...tools.mcp_tool.mcp_tool import _RESERVED_TOOL_NAMES

RESERVED_TOOL_NAMES: frozenset[str] = frozenset(_RESERVED_TOOL_NAMES)


def composed_name(native_name: str, prefix: str | None) -> str:
  """The name the model sees, composed the way `BaseToolset` composes it."""
  return f'{prefix}_{native_name}' if prefix else native_name


def reserved_for_model(native_name: str, prefix: str | None) -> bool:
  """Whether the native or the prefixed name is a reserved framework name."""
  return (
      native_name in RESERVED_TOOL_NAMES
      or composed_name(native_name, prefix) in RESERVED_TOOL_NAMES
  )


def reserved_for_app(native_name: str) -> bool:
  """Whether a native name is reserved (the app catalog is unprefixed)."""
  return native_name in RESERVED_TOOL_NAMES
