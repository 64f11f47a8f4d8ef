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


"""The `ReplayClassificationAuthority` contract: which calls may refresh.

After a restart or eviction a View cannot be replayed; its cold state is an
explicit refresh or re-execution. A one-click refresh re-runs the
initial tool, so it is offered only when the authority classifies that tool
as replay-safe (read-only); otherwise the user gets the "Run tool again"
flow with its warning and confirmation. The authority's `source` and
`revision` are recorded in every refresh-invocation record and take part in
the binding fingerprint, so a cold activation can tell that classification
changed since the call.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Protocol
from typing import runtime_checkable


class ReplayClass(enum.Enum):
  """Whether re-running a tool call may repeat an effect."""

  REPLAY_SAFE = 'replay_safe'
  """Read-only: re-running it has no effect beyond its result."""

  NOT_REPLAY_SAFE = 'not_replay_safe'
  """May have effects, or is unknown: never refreshed in one click."""


@dataclasses.dataclass(frozen=True)
class ToolIdentity:
  """The stable identity of one tool of one configured server.

  Attributes:
    server_id: The configured server's stable id.
    toolset_id: The configured toolset's stable id.
    tool_name: The tool's native (unprefixed) name.
  """

  server_id: str
  toolset_id: str
  tool_name: str


@runtime_checkable
class ReplayClassificationAuthority(Protocol):
  """Classifies tools as replay-safe or not, under a named revision.

  ADK calls `classify` when it writes a refresh-invocation record and again
  at cold activation; an unknown tool must classify as `NOT_REPLAY_SAFE`.
  """

  @property
  def source(self) -> str:
    """A stable, non-empty name of where the classification comes from."""
    ...

  @property
  def revision(self) -> str:
    """A non-empty label that changes whenever any classification does."""
    ...

  def classify(self, tool: ToolIdentity) -> ReplayClass:
    """The classification of `tool` under the current revision."""
    ...
