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


"""The MCP Apps host profile, its fingerprint and readiness.

`McpAppsHostProfile` is the immutable contract a toolset is bound to;
`capabilities` defines what it advertises, `policies` and `limits` what it
enforces, `fingerprint` its `binding_revision`, and `readiness` whether it
may be bound at all. `errors` holds `HostProfileError`.
"""

from __future__ import annotations

from .capabilities import ContextModality
from .capabilities import EXTENSION_ID
from .capabilities import ExtensionSettings
from .capabilities import HostCapabilities
from .capabilities import MCP_APP_MIME_TYPE
from .capabilities import MessageModality
from .errors import HostProfileError
from .errors import ProfileErrorReason
from .fingerprint import binding_revision
from .fingerprint import fingerprint_subset
from .fingerprint import verify_binding_revision
from .host_profile import McpAppsHostProfile
from .limits import DeliveryLimits
from .limits import HostLimits
from .local_dev import local_dev_profile
from .policies import AppPathProgress
from .policies import AppSafeInputCallbacks
from .policies import CallbackPolicy
from .policies import ConnectionAffinityPolicy
from .policies import CrossSessionSharing
from .policies import ResourcePolicySettings
from .readiness import check_readiness
from .readiness import Prerequisite
from .readiness import Problem
from .readiness import ProfileNotReadyError
from .readiness import Readiness
from .readiness import ReadinessReason

__all__ = [
    'AppPathProgress',
    'AppSafeInputCallbacks',
    'CallbackPolicy',
    'ConnectionAffinityPolicy',
    'ContextModality',
    'CrossSessionSharing',
    'DeliveryLimits',
    'EXTENSION_ID',
    'ExtensionSettings',
    'HostCapabilities',
    'HostLimits',
    'HostProfileError',
    'MCP_APP_MIME_TYPE',
    'McpAppsHostProfile',
    'MessageModality',
    'Prerequisite',
    'Problem',
    'ProfileErrorReason',
    'ProfileNotReadyError',
    'Readiness',
    'ReadinessReason',
    'ResourcePolicySettings',
    'binding_revision',
    'check_readiness',
    'fingerprint_subset',
    'local_dev_profile',
    'verify_binding_revision',
]
