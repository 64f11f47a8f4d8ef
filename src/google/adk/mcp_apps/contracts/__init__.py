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


"""The deployment contracts an MCP Apps host profile references.

A profile binds only when a deployment supplies every contract: the
renderer registration, `PrincipalResolver`, `SessionAuthorizer`,
`SealedResultStore`, `SessionLifecycleStore`, `ExportAuditStore`,
`BindingRevisionKeyProvider` and `ReplayClassificationAuthority`. Each is a
`runtime_checkable` `Protocol`, so existing infrastructure conforms without
inheriting from ADK. Errors derive from `ContractError`. `local_dev` holds
loopback-only in-memory implementations. Notes: docs/design/contracts.md.

Example:

  profile = dataclasses.replace(
      local_dev_profile(), sealed_result_store=MyDurableStore()
  )
"""

from __future__ import annotations

from .errors import ContractError
from .export_audit_store import ExportAuditRecord
from .export_audit_store import ExportAuditStatus
from .export_audit_store import ExportAuditStore
from .key_provider import BindingKey
from .key_provider import BindingKeyUnavailableError
from .key_provider import BindingRevisionKeyProvider
from .principal_resolver import Principal
from .principal_resolver import PrincipalRequest
from .principal_resolver import PrincipalResolver
from .principal_resolver import PrincipalUnresolvedError
from .renderer import RendererRegistration
from .replay_classification import ReplayClass
from .replay_classification import ReplayClassificationAuthority
from .replay_classification import ToolIdentity
from .scope import SessionKey
from .sealed_result_store import SealedEnvelope
from .sealed_result_store import SealedRecordScope
from .sealed_result_store import SealedResultReason
from .sealed_result_store import SealedResultRef
from .sealed_result_store import SealedResultStore
from .sealed_result_store import SealedResultStoreError
from .session_authorizer import SessionAuthorizer
from .session_authorizer import SessionPurpose
from .session_lifecycle_store import CreationReceipt
from .session_lifecycle_store import LifecycleConflictError
from .session_lifecycle_store import LifecycleRecord
from .session_lifecycle_store import LifecycleState
from .session_lifecycle_store import SessionLifecycleStore

__all__ = [
    'BindingKey',
    'BindingKeyUnavailableError',
    'BindingRevisionKeyProvider',
    'ContractError',
    'CreationReceipt',
    'ExportAuditRecord',
    'ExportAuditStatus',
    'ExportAuditStore',
    'LifecycleConflictError',
    'LifecycleRecord',
    'LifecycleState',
    'Principal',
    'PrincipalRequest',
    'PrincipalResolver',
    'PrincipalUnresolvedError',
    'RendererRegistration',
    'ReplayClass',
    'ReplayClassificationAuthority',
    'SealedEnvelope',
    'SealedRecordScope',
    'SealedResultReason',
    'SealedResultRef',
    'SealedResultStore',
    'SealedResultStoreError',
    'SessionAuthorizer',
    'SessionKey',
    'SessionLifecycleStore',
    'SessionPurpose',
    'ToolIdentity',
]
