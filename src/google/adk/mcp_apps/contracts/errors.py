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

"""The base error of the deployment contracts.

Contract implementations raise the specific subclasses their contract
documents (`SealedResultStoreError`, `LifecycleConflictError`,
`BindingKeyUnavailableError`, `PrincipalUnresolvedError`); an
`ExportAuditStore` that cannot write raises `ContractError` itself.

Example:

  class MyAuditStore:
    async def append(self, record: ExportAuditRecord) -> None:
      if not await self._db.write(record):
        raise ContractError('audit write failed; deny the export')
"""

from __future__ import annotations

from ..errors import McpAppsError


class ContractError(McpAppsError):
  """A deployment contract implementation could not do what was asked."""
