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

"""Central normalization of an MCP tool's `_meta.ui.visibility`.

A server says who may call a tool: the model (`"model"`), the View
(`"app"`), or both (the default). Every consumer reads it through
`normalize_visibility`, so it cannot be malformed for one and lenient for
another; a malformed value makes the tool visible to no one, and the caller
logs it once. The shapes that count as malformed are in
docs/design/catalog.md.

Example:

  visibility = tool_visibility(tool)
  if visibility.malformed:
    log_malformed(tool.name, visibility)
"""

from __future__ import annotations

import dataclasses
import enum
import logging
from typing import Any
from typing import Mapping

logger = logging.getLogger('google_adk.' + __name__)

MODEL = 'model'
APP = 'app'
_CALLERS = frozenset({MODEL, APP})


class MalformedVisibility(enum.Enum):
  """Why a tool's visibility could not be normalized."""

  UI_NOT_OBJECT = '_meta.ui is not an object'
  NOT_A_LIST = 'visibility is not a list'
  NON_STRING_MEMBER = 'visibility has a member that is not a string'
  UNKNOWN_MEMBER = 'visibility has a member other than "model" and "app"'
  EMPTY = 'visibility is an empty list'


@dataclasses.dataclass(frozen=True)
class Visibility:
  """The normalized visibility of one tool: who may call it.

  Attributes:
    callers: The callers (`model`, `app`) that may call the tool; empty
      when malformed.
    malformed: Why the declared value was rejected, or None.
  """

  callers: frozenset[str]
  malformed: MalformedVisibility | None = None

  @property
  def model(self) -> bool:
    """Whether the model may see and call the tool."""
    return MODEL in self.callers

  @property
  def app(self) -> bool:
    """Whether a View on the tool's connection may call it."""
    return APP in self.callers


DEFAULT = Visibility(frozenset(_CALLERS))


def _malformed(reason: MalformedVisibility) -> Visibility:
  return Visibility(frozenset(), reason)


def normalize_visibility(meta: Any) -> Visibility:
  """Normalizes a tool's `_meta` to the callers that may call it.

  Args:
    meta: The tool's `_meta` as sent by the server (the SDK's `Tool.meta`).

  Returns:
    The tool's callers: the default (`model` and `app`) when nothing is
    declared, the declared callers when well formed, and none at all, with
    the reason, when malformed.
  """
  if not isinstance(meta, Mapping) or 'ui' not in meta:
    return DEFAULT
  ui = meta['ui']
  if not isinstance(ui, Mapping):
    return _malformed(MalformedVisibility.UI_NOT_OBJECT)
  if 'visibility' not in ui:
    return DEFAULT
  declared = ui['visibility']
  if not isinstance(declared, list):
    return _malformed(MalformedVisibility.NOT_A_LIST)
  if not declared:
    return _malformed(MalformedVisibility.EMPTY)
  if not all(isinstance(member, str) for member in declared):
    return _malformed(MalformedVisibility.NON_STRING_MEMBER)
  callers = frozenset(declared)
  if not callers <= _CALLERS:
    return _malformed(MalformedVisibility.UNKNOWN_MEMBER)
  return Visibility(callers)


def tool_visibility(tool: Any) -> Visibility:
  """Normalizes the visibility of an SDK `Tool` (or anything with `.meta`)."""
  return normalize_visibility(getattr(tool, 'meta', None))


def log_malformed(tool_name: str, visibility: Visibility) -> None:
  """Logs one record naming the tool and why its visibility was rejected."""
  if visibility.malformed is not None:
    logger.warning(
        'MCP tool %r has malformed _meta.ui.visibility (%s); it is visible to'
        ' neither the model nor the app.',
        tool_name,
        visibility.malformed.value,
    )
