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


"""A host profile for local development only. DEV ONLY.

`local_dev_profile` installs the explicit loopback-only providers of
`contracts.local_dev`. It is bindable only when readiness is checked with
`allow_dev_providers=True`; a production binding refuses it.
"""

from __future__ import annotations

from typing import Any

from ..contracts.local_dev import LocalDevExportAuditStore
from ..contracts.local_dev import LocalDevKeyProvider
from ..contracts.local_dev import LocalDevPrincipalResolver
from ..contracts.local_dev import LocalDevRenderer
from ..contracts.local_dev import LocalDevReplayClassification
from ..contracts.local_dev import LocalDevSealedResultStore
from ..contracts.local_dev import LocalDevSessionAuthorizer
from ..contracts.local_dev import LocalDevSessionLifecycleStore
from .host_profile import McpAppsHostProfile


def local_dev_profile(
    name: str = 'local-dev', **overrides: Any
) -> McpAppsHostProfile:
  """DEV ONLY: a profile whose every provider is a loopback-only dev one.

  Args:
    name: The profile name.
    **overrides: Any other `McpAppsHostProfile` field, e.g. `limits`.

  Returns:
    The profile. Its readiness is bindable only in the development
    configuration.
  """
  fields: dict[str, Any] = {
      'renderer': LocalDevRenderer(),
      'principal_resolver': LocalDevPrincipalResolver(),
      'session_authorizer': LocalDevSessionAuthorizer(),
      'sealed_result_store': LocalDevSealedResultStore(),
      'session_lifecycle_store': LocalDevSessionLifecycleStore(),
      'export_audit_store': LocalDevExportAuditStore(),
      'key_provider': LocalDevKeyProvider(),
      'replay_classification': LocalDevReplayClassification(),
  }
  fields.update(overrides)
  return McpAppsHostProfile(name=name, **fields)
