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


"""What the host advertises: extension settings and View host capabilities.

`ExtensionSettings` is the settings map of the `io.modelcontextprotocol/ui`
client extension sent to MCP servers (its `mimeTypes` must include
`MCP_APP_MIME_TYPE`); `HostCapabilities` is what the host tells a View in
`ui/initialize`. Both can only express what the v1 host implements, and a
deployment may narrow them, never widen them. Notes: docs/design/profile.md.

Example:

  caps = HostCapabilities(update_model_context=None)  # Narrowed.
  settings = ExtensionSettings.from_wire({'mimeTypes': [MCP_APP_MIME_TYPE]})
"""

from __future__ import annotations

import dataclasses
import enum
import re
from typing import Any
from typing import Iterable
from typing import Mapping
from typing import Optional

from .errors import HostProfileError
from .errors import ProfileErrorReason

# The series' one definition of both constants. They mirror the MCP SDK's
# `mcp.server.apps.EXTENSION_ID` and `APP_MIME_TYPE` (a test asserts the
# equality); they are spelled here rather than imported because this module
# is imported where the `mcp` package may be absent or 1.x, which lacks them.
EXTENSION_ID = 'io.modelcontextprotocol/ui'
"""The MCP Apps client extension identifier (SEP-1724 extension key)."""

MCP_APP_MIME_TYPE = 'text/html;profile=mcp-app'
"""The MIME type of MCP App HTML resources; always advertised."""

# type "/" subtype, then optional ";name=value" parameters, no whitespace.
_MIME = re.compile(
    r'[a-z0-9!#$&^_.+-]+/[a-z0-9!#$&^_.+-]+'
    r'(;[a-z0-9!#$&^_.+-]+=[a-z0-9!#$&^_.+-]+)*'
)


def _settings_error(message: str) -> HostProfileError:
  return HostProfileError(
      ProfileErrorReason.INVALID_EXTENSION_SETTINGS, message
  )


def _capabilities_error(message: str) -> HostProfileError:
  return HostProfileError(ProfileErrorReason.UNSUPPORTED_CAPABILITIES, message)


@dataclasses.dataclass(frozen=True)
class ExtensionSettings:
  """The complete settings map of the `io.modelcontextprotocol/ui` extension.

  Attributes:
    mime_types: The advertised MIME types, in advertisement order. Must be
      non-empty, contain `text/html;profile=mcp-app`, and hold no duplicate.
      Each is written in lowercase without whitespace, because servers
      compare the strings exactly. Other types are allowed for a renderer
      that supports them; the spec reserves them for future extensions.
  """

  mime_types: tuple[str, ...] = (MCP_APP_MIME_TYPE,)

  def __post_init__(self) -> None:
    value: Any = self.mime_types
    if isinstance(value, str) or not isinstance(value, Iterable):
      raise _settings_error('mimeTypes must be a list of strings')
    types = tuple(value)
    if not types:
      raise _settings_error('mimeTypes is REQUIRED and must not be empty')
    seen: set[str] = set()
    for mime in types:
      if not isinstance(mime, str) or not _MIME.fullmatch(mime):
        raise _settings_error(
            f'Invalid MIME type in mimeTypes: {mime!r} (lowercase'
            ' type/subtype[;name=value], no whitespace)'
        )
      if mime in seen:
        raise _settings_error(f'Duplicate MIME type in mimeTypes: {mime!r}')
      seen.add(mime)
    if MCP_APP_MIME_TYPE not in seen:
      raise _settings_error(f'mimeTypes must include {MCP_APP_MIME_TYPE!r}')
    object.__setattr__(self, 'mime_types', types)

  @classmethod
  def from_wire(cls, settings: Mapping[str, Any]) -> ExtensionSettings:
    """Parses a settings map in its wire form.

    Args:
      settings: The map, e.g. `{"mimeTypes": ["text/html;profile=mcp-app"]}`.

    Returns:
      The validated settings.

    Raises:
      HostProfileError: If `mimeTypes` is missing or invalid, or the map
        has a member the extension does not define.
    """
    if not isinstance(settings, Mapping):
      raise _settings_error('The settings map must be a mapping')
    unknown = sorted(set(settings) - {'mimeTypes'})
    if unknown:
      raise _settings_error(f'Unknown extension settings: {unknown}')
    if 'mimeTypes' not in settings:
      raise _settings_error('mimeTypes is REQUIRED')
    mime_types = settings['mimeTypes']
    if isinstance(mime_types, (str, bytes)) or not isinstance(
        mime_types, (list, tuple)
    ):
      raise _settings_error('mimeTypes must be a list of strings')
    return cls(tuple(mime_types))

  def to_wire(self) -> dict[str, Any]:
    """The settings map as advertised; a fresh dict on every call."""
    return {'mimeTypes': list(self.mime_types)}


class MessageModality(enum.Enum):
  """Content modalities the host accepts in `ui/message` (v1: text)."""

  TEXT = 'text'


class ContextModality(enum.Enum):
  """Modalities the host accepts in `ui/update-model-context`."""

  TEXT = 'text'
  STRUCTURED_CONTENT = 'structuredContent'


def _modalities(
    value: Any, kind: type[enum.Enum], member: str
) -> Optional[frozenset[Any]]:
  if value is None:
    return None
  if isinstance(value, (str, enum.Enum)) or not isinstance(value, Iterable):
    raise _capabilities_error(f'{member} must be a set of {kind.__name__}')
  items = frozenset(value)
  for item in items:
    if not isinstance(item, kind):
      raise _capabilities_error(
          f'{member} does not support the modality {item!r} in v1'
      )
  if not items:
    raise _capabilities_error(
        f'{member} has no modality; use None to omit the member'
    )
  return items


@dataclasses.dataclass(frozen=True)
class HostCapabilities:
  """The host capabilities a View is told in the `ui/initialize` result.

  The defaults are the full v1 set. A member set to False or None is not
  advertised. A modality set may be narrowed but not emptied.

  Attributes:
    server_tools: Whether `serverTools` is advertised (the View may call
      its server's app-visible tools through the host).
    server_resources: Whether `serverResources` is advertised (the View may
      read resources through the host).
    message: The `ui/message` modalities, or None to omit `message`.
    update_model_context: The `ui/update-model-context` modalities, or None
      to omit `updateModelContext`.
  """

  server_tools: bool = True
  server_resources: bool = True
  message: Optional[frozenset[MessageModality]] = frozenset(
      {MessageModality.TEXT}
  )
  update_model_context: Optional[frozenset[ContextModality]] = frozenset(
      {ContextModality.TEXT, ContextModality.STRUCTURED_CONTENT}
  )

  def __post_init__(self) -> None:
    for name in ('server_tools', 'server_resources'):
      if not isinstance(getattr(self, name), bool):
        raise _capabilities_error(f'{name} must be a bool')
    object.__setattr__(
        self, 'message', _modalities(self.message, MessageModality, 'message')
    )
    object.__setattr__(
        self,
        'update_model_context',
        _modalities(
            self.update_model_context, ContextModality, 'updateModelContext'
        ),
    )

  def to_wire(self) -> dict[str, Any]:
    """The `McpUiHostCapabilities` object; a fresh dict on every call.

    Modalities are written in a fixed order (the enum's), so equal values
    give equal JSON.
    """
    wire: dict[str, Any] = {}
    if self.server_tools:
      wire['serverTools'] = {}
    if self.server_resources:
      wire['serverResources'] = {}
    if self.message is not None:
      wire['message'] = {
          m.value: {} for m in MessageModality if m in self.message
      }
    if self.update_model_context is not None:
      wire['updateModelContext'] = {
          m.value: {} for m in ContextModality if m in self.update_model_context
      }
    return wire
