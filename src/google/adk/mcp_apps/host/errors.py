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


"""The host service's error: one class, a reason enum.

Every denial of the host service is a `HostServiceError`; its reason is
machine-readable and its message never carries a credential, a lease token
or result content.

Usage:

  try:
    opened = await service.open_view(request, ...)
  except HostServiceError as e:
    if e.reason is HostServiceErrorReason.UNAUTHORIZED:
      ...  # the principal may not see this Session's View
"""

from __future__ import annotations

import enum

from ..errors import McpAppsError


class HostServiceErrorReason(enum.Enum):
  """Why the host service denied an action."""

  UNAUTHENTICATED = 'unauthenticated'
  """No principal could be resolved from the request."""

  UNAUTHORIZED = 'unauthorized'
  """The `SessionAuthorizer` denied the purpose (or raised)."""

  LEASE_INVALID = 'lease_invalid'
  """The lease is unknown, revoked, or presented for something it was not
  issued for."""

  LEASE_EXPIRED = 'lease_expired'
  """The lease outlived its lifetime."""

  REPLAYED = 'replayed'
  """A request token was presented a second time."""

  LIMIT_EXCEEDED = 'limit_exceeded'
  """A per-View, per-principal, byte or rate limit refused the action."""

  VIEW_UNAVAILABLE = 'view_unavailable'
  """The View could not be opened (bootstrap failed) or is gone."""

  EXPORT_DENIED = 'export_denied'
  """The export resolver refused; nothing was released."""

  AUDIT_UNAVAILABLE = 'audit_unavailable'
  """The export audit record could not be written; nothing was released."""

  RERUN_DENIED = 'rerun_denied'
  """"Run tool again" or refresh was refused; nothing ran."""

  UNSUPPORTED = 'unsupported'
  """The action is outside v1 (for example a streaming export)."""

  ORIGIN_DENIED = 'origin_denied'
  """The HTTP adapter refused the request's `Origin`, `Host` or fetch
  site (a cross-origin request to an Apps route)."""

  CSRF_DENIED = 'csrf_denied'
  """A state-changing Apps route lacked a matching CSRF double-submit
  token."""

  NOT_LOOPBACK = 'not_loopback'
  """The reference HTTP adapter serves loopback configurations only."""

  NOT_FOUND = 'not_found'
  """No such Apps app, Session or route target."""

  BAD_REQUEST = 'bad_request'
  """The request body is not what the route takes."""

  TOO_LARGE = 'too_large'
  """The request body exceeds the adapter's limit."""


class HostServiceError(McpAppsError):
  """The host service denied an action; nothing was released or run.

  Attributes:
    reason: Why.
    detail: A short, secret-free explanation.
  """

  def __init__(self, reason: HostServiceErrorReason, detail: str = '') -> None:
    self.reason = reason
    self.detail = detail
    message = f'Host service denied: {reason.value}'
    super().__init__(f'{message} ({detail})' if detail else message)
