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


"""The `RendererRegistration` contract: the attached View renderer.

ADK can only promise a View (and so advertise the Apps extension) if a
conforming renderer, such as `adk-web`'s sandboxed one, is attached to the
host. The registration names it; its detachment withdraws readiness, after
which the Apps-advertising connections are closed.
"""

from __future__ import annotations

from typing import Protocol
from typing import runtime_checkable


@runtime_checkable
class RendererRegistration(Protocol):
  """Identifies the attached, conforming renderer.

  ADK reads it at readiness checks. The identity is not part of the binding
  fingerprint: replacing the renderer does not invalidate descriptors.
  """

  @property
  def renderer_id(self) -> str:
    """A stable, non-empty name of the renderer."""
    ...

  @property
  def version(self) -> str:
    """The renderer's version."""
    ...

  def is_attached(self) -> bool:
    """Whether the renderer is attached and can render Views now."""
    ...
