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


"""View leases: the short-lived authority a host page presents per message.

A lease binds one View instance to everything it was opened for; a
presentation for anything else, after expiry or revocation, or with a
request token already seen is a typed `HostServiceError`. Leases are
process-local: a restarted host knows none. Design:
docs/design/host-service.md.

Usage:

  leases = ViewLeases(lifetime_seconds=300)
  lease = leases.issue(LeaseScope(...))
  leases.check(lease.token, scope, request_token='n-1')
"""

from __future__ import annotations

import collections
from collections.abc import Callable
import dataclasses
import hashlib
import hmac
import secrets
import time
from typing import Final
from typing import Optional

from ..contracts.principal_resolver import Principal
from ..contracts.scope import SessionKey
from .errors import HostServiceError
from .errors import HostServiceErrorReason

_DIGEST_LABEL: Final = b'adk-mcp-apps/view-lease/principal/v1'


@dataclasses.dataclass(frozen=True)
class LeaseScope:
  """Everything a lease is bound to; a lease serves exactly one scope.

  Attributes:
    principal_digest: The principal's HMAC digest (`ViewLeases.digest`),
      never the raw id.
    session: The Session.
    incarnation: The Session incarnation the View was opened in.
    toolset_id: The widget's toolset.
    server_id: The toolset's server.
    event_id: The widget's Event.
    function_call_id: The widget's call.
    view_instance_id: The View instance.
    binding_revision: The registry's binding generation at open.
    generation_id: The View's connection generation.
  """

  principal_digest: str
  session: SessionKey
  incarnation: int
  toolset_id: str
  server_id: str
  event_id: str
  function_call_id: str
  view_instance_id: str
  binding_revision: int
  generation_id: str

  def __repr__(self) -> str:
    return (
        f'LeaseScope(<redacted>, view_instance_id={self.view_instance_id!r},'
        f' generation_id={self.generation_id!r})'
    )


RevokeListener = Callable[[], None]


class ViewLease:
  """One issued lease. Its token goes to the host page only.

  Attributes:
    scope: What it is bound to.
    expires_at: The `ViewLeases` clock reading it ends at.
  """

  def __init__(
      self, token: str, scope: LeaseScope, expires_at: float, max_requests: int
  ) -> None:
    self._token = token
    self.scope = scope
    self.expires_at = expires_at
    self._max_requests = max_requests
    self._seen: set[str] = set()
    self._revoked = False
    self._listeners: list[RevokeListener] = []

  @property
  def token(self) -> str:
    """The bearer token the host page presents with each message."""
    return self._token

  @property
  def revoked(self) -> bool:
    """Whether it was revoked."""
    return self._revoked

  def on_revoke(self, listener: RevokeListener) -> None:
    """Calls `listener` once when revoked (at once if it already is)."""
    if self._revoked:
      listener()
    else:
      self._listeners.append(listener)

  def revoke(self) -> None:
    """Revokes at once (phase 1 of a teardown); idempotent."""
    if self._revoked:
      return
    self._revoked = True
    listeners, self._listeners = self._listeners, []
    self._seen.clear()
    for listener in listeners:
      listener()

  def _spend(self, request_token: str) -> None:
    if not isinstance(request_token, str) or not request_token:
      raise HostServiceError(
          HostServiceErrorReason.LEASE_INVALID, 'no request token'
      )
    if request_token in self._seen:
      raise HostServiceError(
          HostServiceErrorReason.REPLAYED, 'request token seen'
      )
    if len(self._seen) >= self._max_requests:
      raise HostServiceError(
          HostServiceErrorReason.LIMIT_EXCEEDED, 'lease request budget spent'
      )
    self._seen.add(request_token)

  def __repr__(self) -> str:
    return f'ViewLease(<redacted>, {self.scope!r}, revoked={self._revoked})'


_FIELDS: Final = tuple(f.name for f in dataclasses.fields(LeaseScope))


class ViewLeases:
  """The process-local lease table of one host service.

  The one authority on a View's lease: its clock and expiry are the ones
  the View's channel is opened with, and its revocation revokes the
  channel's.
  """

  def __init__(
      self,
      *,
      lifetime_seconds: float = 300.0,
      max_per_view: int = 1,
      max_per_principal: int = 32,
      max_requests_per_lease: int = 10_000,
      clock: Callable[[], float] = time.monotonic,
  ) -> None:
    """Creates an empty table.

    Args:
      lifetime_seconds: How long a lease lasts.
      max_per_view: Live leases one View instance may have.
      max_per_principal: Live leases one principal may have.
      max_requests_per_lease: Request tokens one lease accepts; this bounds
        the replay set over the lease's lifetime.
      clock: The monotonic clock leases expire on.
    """
    self.lifetime_seconds = lifetime_seconds
    self.max_per_view = max_per_view
    self.max_per_principal = max_per_principal
    self._max_requests = max_requests_per_lease
    self.clock = clock
    self._key = secrets.token_bytes(32)
    self._leases: dict[str, ViewLease] = {}
    self._by_view: collections.Counter[str] = collections.Counter()
    self._by_principal: collections.Counter[str] = collections.Counter()

  def digest(self, principal: Principal) -> str:
    """The principal's process-local HMAC digest."""
    return hmac.new(
        self._key,
        _DIGEST_LABEL + b'\0' + principal.principal_id.encode(),
        hashlib.sha256,
    ).hexdigest()

  def _index(self, token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()

  def _sweep(self) -> None:
    now = self.clock()
    for index, lease in list(self._leases.items()):
      if lease.revoked or now >= lease.expires_at:
        self._forget(index, lease)

  def _forget(self, index: str, lease: ViewLease) -> None:
    if self._leases.pop(index, None) is None:
      return
    scope = lease.scope
    for counter, name in (
        (self._by_view, scope.view_instance_id),
        (self._by_principal, scope.principal_digest),
    ):
      counter[name] -= 1
      if counter[name] <= 0:
        del counter[name]

  def admit(self, principal_digest: str) -> None:
    """Raises `LIMIT_EXCEEDED` if the principal may hold no more leases."""
    self._sweep()
    if self._by_principal[principal_digest] >= self.max_per_principal:
      raise HostServiceError(
          HostServiceErrorReason.LIMIT_EXCEEDED, 'leases per principal'
      )

  def issue(self, scope: LeaseScope) -> ViewLease:
    """Issues a lease for `scope`.

    Raises:
      HostServiceError: (`LIMIT_EXCEEDED`) The View or the principal holds
        its limit of live leases.
    """
    self.admit(scope.principal_digest)
    if self._by_view[scope.view_instance_id] >= self.max_per_view:
      raise HostServiceError(
          HostServiceErrorReason.LIMIT_EXCEEDED, 'leases per View'
      )
    token = secrets.token_urlsafe(32)
    lease = ViewLease(
        token, scope, self.clock() + self.lifetime_seconds, self._max_requests
    )
    index = self._index(token)
    self._leases[index] = lease
    self._by_view[scope.view_instance_id] += 1
    self._by_principal[scope.principal_digest] += 1
    lease.on_revoke(lambda: self._forget(index, lease))
    return lease

  def check(
      self,
      token: str,
      presented: LeaseScope,
      *,
      request_token: Optional[str],
  ) -> ViewLease:
    """Admits one request presented with `token` for `presented`.

    Args:
      token: The lease token the host page presented.
      presented: What the request is for.
      request_token: The adapter's per-request nonce; None only for an
        idempotent action (a close), which spends none.

    Returns:
      The lease.

    Raises:
      HostServiceError: `LEASE_INVALID` (unknown, revoked, or issued for
        another scope: the detail names the field), `LEASE_EXPIRED`,
        `REPLAYED` (the request token was seen on this lease) or
        `LIMIT_EXCEEDED` (the lease's request budget is spent).
    """
    if not isinstance(token, str):
      raise HostServiceError(HostServiceErrorReason.LEASE_INVALID, 'unknown')
    index = self._index(token)
    lease = self._leases.get(index)
    if lease is None or not hmac.compare_digest(lease.token, token):
      raise HostServiceError(HostServiceErrorReason.LEASE_INVALID, 'unknown')
    if lease.revoked:
      raise HostServiceError(HostServiceErrorReason.LEASE_INVALID, 'revoked')
    if self.clock() >= lease.expires_at:
      self._forget(index, lease)
      raise HostServiceError(HostServiceErrorReason.LEASE_EXPIRED)
    for name in _FIELDS:
      if getattr(lease.scope, name) != getattr(presented, name):
        raise HostServiceError(
            HostServiceErrorReason.LEASE_INVALID, f'other {name}'
        )
    if request_token is not None:
      lease._spend(request_token)  # pylint: disable=protected-access
    return lease

  def live(self) -> int:
    """How many leases are live now."""
    self._sweep()
    return len(self._leases)
