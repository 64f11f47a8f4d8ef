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

"""The MCP Apps host (SEP-1865, `io.modelcontextprotocol/ui`) for ADK.

This module is the documented surface (see docs/user-guide.md); names load
lazily, so the core install pays nothing until one is used. Example:

  registry = McpAppBindingRegistry(
      {'monitor': McpToolsetSpec(connection_params=params)},
      local_dev_profile(),
      allow_dev_providers=True,
  )
  await registry.start()
  agent = LlmAgent(..., tools=[registry.toolset('monitor')])

Subpackages are layered; each imports only from the layers before it:
`errors`; `resources`, `catalog`, `contracts`, `canonical_json`; `descriptor`,
`stores`, `profile`; `lifecycle`; `coordination`; `sealing`;
`event_policy`; `facades`; `affinity`; `binding`, `bootstrap`, `batch`;
`audit`; `operations`; `host`.
Without a bound profile nothing here is active except visibility
enforcement, the model projection of UI results and provenance stamping.
"""

from __future__ import annotations

import importlib
from typing import Any
from typing import TYPE_CHECKING

if TYPE_CHECKING:
  # Type checkers and IDEs see the names here; `X as X` re-exports them.
  from .affinity.errors import ConnectionAffinityError as ConnectionAffinityError
  from .binding.errors import McpAppBindingError as McpAppBindingError
  from .binding.registry import BindingOverrides as BindingOverrides
  from .binding.registry import McpAppBindingRegistry as McpAppBindingRegistry
  from .binding.spec import McpToolsetSpec as McpToolsetSpec
  from .binding.status import ModelOnlyReason as ModelOnlyReason
  from .binding.status import ReadinessReport as ReadinessReport
  from .binding.status import ToolsetReadiness as ToolsetReadiness
  from .bootstrap.cold_replay import cold_affordance as cold_affordance
  from .bootstrap.cold_replay import ColdAffordance as ColdAffordance
  from .bootstrap.cold_replay import ColdOffer as ColdOffer
  from .bootstrap.live_replay import replay_to_view as replay_to_view
  from .bootstrap.read_only import read_only_reason as read_only_reason
  from .bootstrap.read_only import ReadOnlyReason as ReadOnlyReason
  from .bootstrap.read_only import ReadOnlyRender as ReadOnlyRender
  from .bootstrap.render import bootstrap_render as bootstrap_render
  from .bootstrap.render import BootstrapError as BootstrapError
  from .bootstrap.render import BootstrapStep as BootstrapStep
  from .bootstrap.render import RenderDocument as RenderDocument
  from .bootstrap.render import ViewGrant as ViewGrant
  from .catalog.app_catalog import AppCallPolicy as AppCallPolicy
  from .catalog.app_catalog import list_toolset_app_catalog as list_toolset_app_catalog
  from .contracts.export_audit_store import ExportAuditStore as ExportAuditStore
  from .contracts.key_provider import BindingRevisionKeyProvider as BindingRevisionKeyProvider
  from .contracts.local_dev import LocalDevExportAuditStore as LocalDevExportAuditStore
  from .contracts.local_dev import LocalDevKeyProvider as LocalDevKeyProvider
  from .contracts.local_dev import LocalDevPrincipalResolver as LocalDevPrincipalResolver
  from .contracts.local_dev import LocalDevRenderer as LocalDevRenderer
  from .contracts.local_dev import LocalDevReplayClassification as LocalDevReplayClassification
  from .contracts.local_dev import LocalDevSealedResultStore as LocalDevSealedResultStore
  from .contracts.local_dev import LocalDevSessionAuthorizer as LocalDevSessionAuthorizer
  from .contracts.local_dev import LocalDevSessionLifecycleStore as LocalDevSessionLifecycleStore
  from .contracts.principal_resolver import Principal as Principal
  from .contracts.principal_resolver import PrincipalRequest as PrincipalRequest
  from .contracts.principal_resolver import PrincipalResolver as PrincipalResolver
  from .contracts.principal_resolver import PrincipalUnresolvedError as PrincipalUnresolvedError
  from .contracts.renderer import RendererRegistration as RendererRegistration
  from .contracts.replay_classification import ReplayClass as ReplayClass
  from .contracts.replay_classification import ReplayClassificationAuthority as ReplayClassificationAuthority
  from .contracts.replay_classification import ToolIdentity as ToolIdentity
  from .contracts.scope import SessionKey as SessionKey
  from .contracts.sealed_result_store import SealedResultStore as SealedResultStore
  from .contracts.session_authorizer import SessionAuthorizer as SessionAuthorizer
  from .contracts.session_authorizer import SessionPurpose as SessionPurpose
  from .contracts.session_lifecycle_store import SessionLifecycleStore as SessionLifecycleStore
  from .coordination.errors import CoordinationError as CoordinationError
  from .coordination.errors import CoordinationErrorReason as CoordinationErrorReason
  from .errors import DenialReason as DenialReason
  from .errors import McpAppsError as McpAppsError
  from .errors import McpAppVisibilityError as McpAppVisibilityError
  from .host.errors import HostServiceError as HostServiceError
  from .host.errors import HostServiceErrorReason as HostServiceErrorReason
  from .host.export import ExportLimits as ExportLimits
  from .host.export import ExportProjection as ExportProjection
  from .host.export import ExportResult as ExportResult
  from .host.rerun import RerunConfirmation as RerunConfirmation
  from .host.rerun import RerunResult as RerunResult
  from .host.service import McpAppHostService as McpAppHostService
  from .host.service import OpenedView as OpenedView
  from .host.view_leases import ViewLeases as ViewLeases
  from .operations.errors import OperationError as OperationError
  from .operations.errors import OperationErrorReason as OperationErrorReason
  from .operations.idempotency import RetainedOutcomes as RetainedOutcomes
  from .operations.message_permit import attest_every_message as attest_every_message
  from .operations.view_channel import ViewChannel as ViewChannel
  from .profile.capabilities import EXTENSION_ID as EXTENSION_ID
  from .profile.capabilities import HostCapabilities as HostCapabilities
  from .profile.host_profile import McpAppsHostProfile as McpAppsHostProfile
  from .profile.limits import HostLimits as HostLimits
  from .profile.local_dev import local_dev_profile as local_dev_profile
  from .profile.readiness import check_readiness as check_readiness
  from .profile.readiness import Prerequisite as Prerequisite
  from .profile.readiness import Problem as Problem
  from .profile.readiness import ProfileNotReadyError as ProfileNotReadyError
  from .profile.readiness import Readiness as Readiness
  from .profile.readiness import ReadinessReason as ReadinessReason
  from .sealing.resolver import ResolutionFault as ResolutionFault
  from .sealing.resolver import SealedResolutionError as SealedResolutionError
  from .stores.sql_export_audit_store import SqlExportAuditStore as SqlExportAuditStore
  from .stores.sql_key_provider import SqlBindingKeyProvider as SqlBindingKeyProvider
  from .stores.sql_sealed_result_store import SqlSealedResultStore as SqlSealedResultStore
  from .stores.sql_session_lifecycle_store import SqlSessionLifecycleStore as SqlSessionLifecycleStore

_LAZY: dict[str, str] = {
    # Profiles and readiness.
    'McpAppsHostProfile': '.profile.host_profile',
    'local_dev_profile': '.profile.local_dev',
    'HostCapabilities': '.profile.capabilities',
    'HostLimits': '.profile.limits',
    'EXTENSION_ID': '.profile.capabilities',
    'check_readiness': '.profile.readiness',
    'Readiness': '.profile.readiness',
    'ReadinessReason': '.profile.readiness',
    'Prerequisite': '.profile.readiness',
    'Problem': '.profile.readiness',
    'ProfileNotReadyError': '.profile.readiness',
    # The registry, its specs and its readiness report.
    'McpAppBindingRegistry': '.binding.registry',
    'BindingOverrides': '.binding.registry',
    'McpToolsetSpec': '.binding.spec',
    'ReadinessReport': '.binding.status',
    'ToolsetReadiness': '.binding.status',
    'ModelOnlyReason': '.binding.status',
    'McpAppBindingError': '.binding.errors',
    'AppCallPolicy': '.catalog.app_catalog',
    'list_toolset_app_catalog': '.catalog.app_catalog',
    # Rendering a View, its app-only calls, replay and cold open.
    'bootstrap_render': '.bootstrap.render',
    'RenderDocument': '.bootstrap.render',
    'ViewGrant': '.bootstrap.render',
    'BootstrapError': '.bootstrap.render',
    'BootstrapStep': '.bootstrap.render',
    'ViewChannel': '.operations.view_channel',
    'RetainedOutcomes': '.operations.idempotency',
    'attest_every_message': '.operations.message_permit',
    'OperationError': '.operations.errors',
    'OperationErrorReason': '.operations.errors',
    'replay_to_view': '.bootstrap.live_replay',
    'cold_affordance': '.bootstrap.cold_replay',
    'ColdAffordance': '.bootstrap.cold_replay',
    'ColdOffer': '.bootstrap.cold_replay',
    'ReadOnlyRender': '.bootstrap.read_only',
    'ReadOnlyReason': '.bootstrap.read_only',
    'read_only_reason': '.bootstrap.read_only',
    'SealedResolutionError': '.sealing.resolver',
    'ResolutionFault': '.sealing.resolver',
    'ConnectionAffinityError': '.affinity.errors',
    'McpAppVisibilityError': '.errors',
    'DenialReason': '.errors',
    'McpAppsError': '.errors',
    # The host service: the documented way to host Views.
    'McpAppHostService': '.host.service',
    'OpenedView': '.host.service',
    'ViewLeases': '.host.view_leases',
    'ExportLimits': '.host.export',
    'ExportProjection': '.host.export',
    'ExportResult': '.host.export',
    'RerunConfirmation': '.host.rerun',
    'RerunResult': '.host.rerun',
    'HostServiceError': '.host.errors',
    'HostServiceErrorReason': '.host.errors',
    # One writer at a time on an app-enabled Session.
    'CoordinationError': '.coordination.errors',
    'CoordinationErrorReason': '.coordination.errors',
    # The deployment contracts.
    'RendererRegistration': '.contracts.renderer',
    'Principal': '.contracts.principal_resolver',
    'PrincipalRequest': '.contracts.principal_resolver',
    'PrincipalResolver': '.contracts.principal_resolver',
    'PrincipalUnresolvedError': '.contracts.principal_resolver',
    'SessionAuthorizer': '.contracts.session_authorizer',
    'SessionPurpose': '.contracts.session_authorizer',
    'SessionKey': '.contracts.scope',
    'SealedResultStore': '.contracts.sealed_result_store',
    'SessionLifecycleStore': '.contracts.session_lifecycle_store',
    'ExportAuditStore': '.contracts.export_audit_store',
    'BindingRevisionKeyProvider': '.contracts.key_provider',
    'ReplayClassificationAuthority': '.contracts.replay_classification',
    'ReplayClass': '.contracts.replay_classification',
    'ToolIdentity': '.contracts.replay_classification',
    # Their local-development implementations (loopback only).
    'LocalDevRenderer': '.contracts.local_dev',
    'LocalDevPrincipalResolver': '.contracts.local_dev',
    'LocalDevSessionAuthorizer': '.contracts.local_dev',
    'LocalDevSealedResultStore': '.contracts.local_dev',
    'LocalDevSessionLifecycleStore': '.contracts.local_dev',
    'LocalDevExportAuditStore': '.contracts.local_dev',
    'LocalDevKeyProvider': '.contracts.local_dev',
    'LocalDevReplayClassification': '.contracts.local_dev',
    # Durable stores (SQLite or PostgreSQL through SQLAlchemy).
    'SqlSealedResultStore': '.stores.sql_sealed_result_store',
    'SqlSessionLifecycleStore': '.stores.sql_session_lifecycle_store',
    'SqlExportAuditStore': '.stores.sql_export_audit_store',
    'SqlBindingKeyProvider': '.stores.sql_key_provider',
}
"""Each public name and the module that defines it."""

__all__ = list(_LAZY)

_EXTRA_MODULES = frozenset({'anyio', 'mcp', 'sqlalchemy'})
"""Top-level packages the `mcpapps` extra installs."""


def __getattr__(name: str) -> Any:
  """Imports a public name's module on first use."""
  module_path = _LAZY.get(name)
  if module_path is None:
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
  try:
    module = importlib.import_module(module_path, __name__)
  except ModuleNotFoundError as e:
    if (e.name or '').split('.')[0] not in _EXTRA_MODULES:
      raise
    raise ImportError(
        f'{__name__}.{name} needs the mcpapps extra (missing {e.name!r}):'
        ' pip install "google-adk[mcpapps]"',
        name=e.name,
    ) from e
  value = getattr(module, name)
  globals()[name] = value
  return value


def __dir__() -> list[str]:
  return sorted(set(globals()) | set(__all__))
