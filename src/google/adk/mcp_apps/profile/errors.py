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

"""The error of an invalid host profile value.

Example:

  try:
    McpAppsHostProfile(name='')
  except HostProfileError as e:
    print(e.reason)  # ProfileErrorReason.INVALID_PROFILE
"""

from __future__ import annotations

import enum

from ..errors import McpAppsError


class ProfileErrorReason(enum.Enum):
  """Which part of a host profile is invalid."""

  INVALID_PROFILE = 'invalid_profile'
  """A field of `McpAppsHostProfile` itself."""

  INVALID_POLICY = 'invalid_policy'
  """A policy or limit value, or one v1 cannot express."""

  INVALID_EXTENSION_SETTINGS = 'invalid_extension_settings'
  """The extension settings map; nothing may be advertised."""

  UNSUPPORTED_CAPABILITIES = 'unsupported_capabilities'
  """Host capabilities the v1 host cannot provide."""

  NO_BINDING_REVISION = 'no_binding_revision'
  """The profile lacks what its binding revision is computed from."""


class HostProfileError(McpAppsError, ValueError):
  """A host profile, or a value it holds, is invalid.

  Attributes:
    reason: Which part is invalid.
  """

  def __init__(self, reason: ProfileErrorReason, message: str) -> None:
    super().__init__(message)
    self.reason = reason
