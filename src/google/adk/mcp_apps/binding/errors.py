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

"""Typed errors of the binding registry, its proxies and toolset specs.

Every error of this package derives from `McpAppBindingError`. Messages name
toolset ids, states and generations only; never credentials, headers or
connection parameters.

Example:

  try:
    tools = await proxy.get_tools()
  except StaleGenerationError:
    tools = await registry.toolset('weather').get_tools()
"""

from __future__ import annotations

import enum
from typing import Generic
from typing import Optional
from typing import TypeVar

from ..errors import McpAppsError


class McpAppBindingError(McpAppsError):
  """Base class of the binding layer's errors."""


_ReasonT = TypeVar('_ReasonT', bound=enum.Enum)


class ReasonedBindingError(McpAppBindingError, Generic[_ReasonT]):
  """A binding error told apart by its `reason`, whose value leads the message.

  Attributes:
    reason: Why it was raised.
  """

  def __init__(self, reason: _ReasonT, detail: str):
    self.reason = reason
    super().__init__(f'{reason.value}: {detail}')


class McpAppBindingUnavailable(McpAppBindingError, LookupError):
  """No binding exists for a toolset id (or the registry is shut down).

  Attributes:
    toolset_id: The id asked for.
  """

  def __init__(self, toolset_id: str, detail: str = 'no such binding'):
    self.toolset_id = toolset_id
    super().__init__(f'MCP App binding {toolset_id!r} unavailable: {detail}')


class RegistryClosedError(McpAppBindingUnavailable):
  """The registry has shut down; no binding is available any more."""

  def __init__(self, toolset_id: str = '*'):
    super().__init__(toolset_id, 'the registry is shut down')


class BindingConflictError(McpAppBindingError):
  """A registration or binding collides with an existing one.

  Raised for a second registration of one toolset id, and for a second
  profile binding of a toolset that is already profile-bound.
  """


class WideningOverrideError(McpAppBindingError, ValueError):
  """An override would widen policy, visibility or capabilities."""


class UnboundToolsetError(McpAppBindingError, TypeError):
  """Something other than an `McpToolsetSpec` was offered for binding.

  A directly constructed `McpToolset` stays model-only for good: only a
  spec, from which the registry constructs the toolset itself, can be
  registered or bound.
  """


class McpToolsetSpecError(McpAppBindingError, ValueError):
  """An `McpToolsetSpec` was built from an invalid value."""


class IllegalTransitionError(McpAppBindingError):
  """A lifecycle transition the proxy state machine does not allow.

  Attributes:
    toolset_id: The proxy's toolset id.
    current: The state the proxy is in (its enum value).
    requested: The state or operation that was asked for.
  """

  def __init__(self, toolset_id: str, current: str, requested: str):
    self.toolset_id = toolset_id
    self.current = current
    self.requested = requested
    super().__init__(
        f'Toolset {toolset_id!r}: illegal transition {current} -> {requested}'
    )


class ToolsetClosedError(McpAppBindingError):
  """The proxy is revoking or closed; it serves nothing any more.

  Attributes:
    toolset_id: The proxy's toolset id.
    binding_generation: The proxy's binding generation.
    cause: Why it closed, when it closed on a failure.
  """

  def __init__(
      self,
      toolset_id: str,
      binding_generation: int,
      detail: str = 'the toolset proxy is closed',
      cause: Optional[BaseException] = None,
  ):
    self.toolset_id = toolset_id
    self.binding_generation = binding_generation
    self.cause = cause
    super().__init__(
        f'Toolset {toolset_id!r} (generation {binding_generation}): {detail}'
    )


class StaleGenerationError(ToolsetClosedError):
  """Work bound to a superseded binding generation.

  Raised to a declaration, tool handle or operation of a proxy the registry
  has replaced (withdrawal or rebind). It never reaches the replacement.

  Attributes:
    current_generation: The registry's generation when the proxy was
      superseded.
  """

  def __init__(
      self, toolset_id: str, binding_generation: int, current_generation: int
  ):
    self.current_generation = current_generation
    super().__init__(
        toolset_id,
        binding_generation,
        f'binding generation {binding_generation} was superseded by'
        f' {current_generation}',
    )


class ConfigurationFrozenError(McpAppBindingError, AttributeError):
  """An attempt to change a toolset's configuration after its client exists.

  Attributes:
    attribute: The attribute that was to be set or deleted.
  """

  def __init__(self, owner: str, attribute: str):
    self.attribute = attribute
    super().__init__(
        f'{owner}.{attribute} is frozen: the toolset configuration cannot'
        ' change once its MCP client exists'
    )
