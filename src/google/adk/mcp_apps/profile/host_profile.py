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


"""`McpAppsHostProfile`: the named, immutable contract of an Apps host.

A profile gathers what a toolset needs to act as an MCP Apps host: what it
advertises, the renderer, the deployment contracts that identify,
authorize, store and sign, the replay-classification authority, and the
policies and limits it enforces. A registry binds a toolset to it only when
`check_readiness` passes; otherwise the toolset stays model-only. Invalid
values raise `HostProfileError`. Notes: docs/design/profile.md.

Example:

  profile = dataclasses.replace(local_dev_profile(), name='staging')
  assert check_readiness(profile, allow_dev_providers=True).bindable
"""

from __future__ import annotations

import dataclasses
from typing import Any
from typing import Optional

from ..contracts.export_audit_store import ExportAuditStore
from ..contracts.key_provider import BindingRevisionKeyProvider
from ..contracts.principal_resolver import PrincipalResolver
from ..contracts.renderer import RendererRegistration
from ..contracts.replay_classification import ReplayClassificationAuthority
from ..contracts.sealed_result_store import SealedResultStore
from ..contracts.session_authorizer import SessionAuthorizer
from ..contracts.session_lifecycle_store import SessionLifecycleStore
from .capabilities import EXTENSION_ID
from .capabilities import ExtensionSettings
from .capabilities import HostCapabilities
from .errors import HostProfileError
from .errors import ProfileErrorReason
from .limits import HostLimits
from .policies import CallbackPolicy
from .policies import ConnectionAffinityPolicy
from .policies import ResourcePolicySettings

_VALUE_FIELDS: dict[str, type] = {
    'extension_settings': ExtensionSettings,
    'host_capabilities': HostCapabilities,
    'callback_policy': CallbackPolicy,
    'connection_affinity': ConnectionAffinityPolicy,
    'resource_policy': ResourcePolicySettings,
    'limits': HostLimits,
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class McpAppsHostProfile:
  """The named, immutable Apps host profile.

  Field groups:

  * Extension settings: `extension_settings`, `host_capabilities`.
  * Renderer registration: `renderer`.
  * Identity and authorization: `principal_resolver`, `session_authorizer`.
  * Storage and keys: `sealed_result_store`, `session_lifecycle_store`,
    `export_audit_store`, `key_provider`.
  * Replay classification: `replay_classification` (its `source` and
    `revision` are exposed as properties).
  * Callback and connection policy: `callback_policy`,
    `connection_affinity`.
  * Resource policy: `resource_policy` (with its `revision`).
  * Limits: `limits` (with its `revision`).

  A provider may be None: the profile can still be built and inspected,
  but `check_readiness` reports it missing and the profile is not bindable.

  Attributes:
    name: The profile's name, unique within a registry. Not part of the
      fingerprint.
  """

  name: str
  extension_settings: ExtensionSettings = ExtensionSettings()
  host_capabilities: HostCapabilities = HostCapabilities()
  renderer: Optional[RendererRegistration] = None
  principal_resolver: Optional[PrincipalResolver] = None
  session_authorizer: Optional[SessionAuthorizer] = None
  sealed_result_store: Optional[SealedResultStore] = None
  session_lifecycle_store: Optional[SessionLifecycleStore] = None
  export_audit_store: Optional[ExportAuditStore] = None
  key_provider: Optional[BindingRevisionKeyProvider] = None
  replay_classification: Optional[ReplayClassificationAuthority] = None
  callback_policy: CallbackPolicy = CallbackPolicy()
  connection_affinity: ConnectionAffinityPolicy = ConnectionAffinityPolicy()
  resource_policy: ResourcePolicySettings = dataclasses.field(
      default_factory=ResourcePolicySettings
  )
  limits: HostLimits = HostLimits()

  def __post_init__(self) -> None:
    if not isinstance(self.name, str) or not self.name.strip():
      raise HostProfileError(
          ProfileErrorReason.INVALID_PROFILE,
          'McpAppsHostProfile.name must be non-empty',
      )
    for field_name, expected in _VALUE_FIELDS.items():
      value = getattr(self, field_name)
      if not isinstance(value, expected):
        raise HostProfileError(
            ProfileErrorReason.INVALID_PROFILE,
            f'McpAppsHostProfile.{field_name} must be a {expected.__name__},'
            f' not {type(value).__name__}',
        )

  @property
  def replay_classification_source(self) -> Optional[str]:
    """The classification authority's source, or None without one."""
    authority = self.replay_classification
    return None if authority is None else authority.source

  @property
  def replay_classification_revision(self) -> Optional[str]:
    """The classification authority's revision, or None without one."""
    authority = self.replay_classification
    return None if authority is None else authority.revision

  @property
  def resource_policy_revision(self) -> str:
    """The resource policy's revision."""
    return self.resource_policy.revision

  @property
  def limits_revision(self) -> str:
    """The limits' revision."""
    return self.limits.revision

  def client_extensions(self) -> dict[str, dict[str, Any]]:
    """The client-extension map to advertise to MCP servers.

    `{"io.modelcontextprotocol/ui": {"mimeTypes": [...]}}`, a fresh dict on
    every call. Only a bound (readiness-complete) profile may be advertised;
    `Readiness.client_extensions` applies that gate.
    """
    return {EXTENSION_ID: self.extension_settings.to_wire()}
