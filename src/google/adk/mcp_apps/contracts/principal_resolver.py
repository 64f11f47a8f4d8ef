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


"""The `PrincipalResolver` deployment contract: who is calling.

Every View-originated operation (bootstrap, app `tools/call` and
`resources/read`, context updates, messages, export) starts by resolving the
calling principal from the request that carried it. ADK has no identity
source of its own (the stock API server is unauthenticated), so a deployment
supplies one; without it the host profile is not bindable and no toolset
advertises the Apps extension.

The principal is an opaque, stable identity. ADK never interprets it, and
never logs it or places it in a pool key: where it needs a key it derives one
(an HMAC under a host key), so `Principal` redacts itself in `repr`.
"""

from __future__ import annotations

import dataclasses
import types
from typing import Mapping
from typing import Optional
from typing import Protocol
from typing import runtime_checkable

from .errors import ContractError


@dataclasses.dataclass(frozen=True)
class Principal:
  """An opaque, stable identity of a caller.

  Two requests from the same caller must resolve to equal principals, and
  requests from different callers to different ones; nothing else about the
  value is assumed.

  Attributes:
    principal_id: The opaque identity. Never logged by ADK.
  """

  principal_id: str

  def __post_init__(self) -> None:
    if not isinstance(self.principal_id, str) or not self.principal_id:
      raise ValueError('Principal.principal_id must be a non-empty str')

  def __repr__(self) -> str:
    return 'Principal(<redacted>)'


@dataclasses.dataclass(frozen=True)
class PrincipalRequest:
  """What the host's HTTP adapter knows about one incoming request.

  Attributes:
    client_host: The network peer's address as the server saw it (an IP
      literal or a host name), before any forwarding header is trusted.
    origin: The request's `Origin` header, if it had one.
    headers: The request headers, lowercase names, read-only. The resolver
      reads credentials (cookie, bearer) from here.
  """

  client_host: str
  origin: Optional[str] = None
  headers: Mapping[str, str] = dataclasses.field(
      default_factory=dict, hash=False, repr=False
  )

  def __post_init__(self) -> None:
    object.__setattr__(
        self,
        'headers',
        types.MappingProxyType(
            {str(k).lower(): str(v) for k, v in self.headers.items()}
        ),
    )


class PrincipalUnresolvedError(ContractError):
  """No principal could be resolved; the operation is denied.

  Attributes:
    reason: A short machine-readable reason, e.g. `unauthenticated` or
      `not_loopback`. Never contains credentials.
  """

  def __init__(self, reason: str, detail: str = '') -> None:
    self.reason = reason
    message = f'Principal could not be resolved: {reason}'
    super().__init__(f'{message} ({detail})' if detail else message)


@runtime_checkable
class PrincipalResolver(Protocol):
  """Resolves the calling principal of a request.

  ADK calls `resolve` once per admitted View-originated operation, before
  any session access, and again at the post-queue barrier and before an
  export's release. An implementation must not consult Session state.
  """

  async def resolve(self, request: PrincipalRequest) -> Principal:
    """Returns the principal that made `request`.

    Args:
      request: The request as the HTTP adapter received it.

    Returns:
      The caller's opaque, stable identity.

    Raises:
      PrincipalUnresolvedError: If the request carries no acceptable
        identity. ADK treats this as a terminal denial.
    """
    ...
