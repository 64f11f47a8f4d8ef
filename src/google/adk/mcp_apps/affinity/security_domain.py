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

"""Opaque keys that keep app-safe connections apart.

A generation key carries a security domain (HMAC of the principal), a
Session scope (HMAC of the Session key and incarnation) and a credential
context (HMAC of the effective headers), all derived from the key
provider's active key through purpose-separated subkeys, so no identity
appears in a key or a log line. Design: docs/design/affinity.md.

Example:

  domain = security_domain(key, principal_for_turn(session)).digest
  scope = session_scope(key, session, incarnation).digest
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Mapping
import contextlib
import contextvars
import dataclasses
import hashlib
import hmac
import json
from typing import Optional

from .. import canonical_json
from ..contracts.key_provider import BindingKey
from ..contracts.principal_resolver import Principal
from ..contracts.scope import SessionKey

_SECURITY_DOMAIN_LABEL = b'adk-mcp-apps/security-domain/v1'
_SESSION_SCOPE_LABEL = b'adk-mcp-apps/session-scope/v1'
_CREDENTIAL_LABEL = b'adk-mcp-apps/credential-context/v1'

_acting_principal: contextvars.ContextVar[Optional[Principal]] = (
    contextvars.ContextVar('adk_mcp_apps_acting_principal', default=None)
)


def _subkey(key: BindingKey, label: bytes) -> bytes:
  return hmac.new(key.secret, label, hashlib.sha256).digest()


def _mac(key: BindingKey, label: bytes, value: object) -> str:
  message = canonical_json.canonicalize(value)
  return hmac.new(_subkey(key, label), message, hashlib.sha256).hexdigest()


@dataclasses.dataclass(frozen=True)
class SecurityDomain:
  """The opaque key of one resolved principal.

  Attributes:
    digest: `<key id>:<hex HMAC>`; safe to log, never reversible.
  """

  digest: str

  def __repr__(self) -> str:
    return f'SecurityDomain({self.digest[:24]}…)'


@dataclasses.dataclass(frozen=True)
class SessionScope:
  """The opaque key of one Session incarnation.

  Attributes:
    digest: `<key id>:<hex HMAC>` of the Session key and incarnation.
    incarnation: The incarnation it was derived from.
  """

  digest: str
  incarnation: int

  def __repr__(self) -> str:
    return f'SessionScope({self.digest[:24]}…, {self.incarnation})'


def security_domain(key: BindingKey, principal: Principal) -> SecurityDomain:
  """The security domain of `principal` under the host key.

  Args:
    key: The key provider's active binding key.
    principal: The resolved principal.

  Returns:
    Its opaque domain; equal principals give equal domains under one key.
  """
  digest = _mac(
      key, _SECURITY_DOMAIN_LABEL, ['principal', principal.principal_id]
  )
  return SecurityDomain(f'{key.key_id}:{digest}')


def session_scope(
    key: BindingKey, session: SessionKey, incarnation: int
) -> SessionScope:
  """The scope of one Session incarnation under the host key.

  Args:
    key: The key provider's active binding key.
    session: The Session key.
    incarnation: Its current incarnation (0 for a Session the lifecycle
      store has no record of).

  Returns:
    The opaque scope.
  """
  digest = _mac(
      key,
      _SESSION_SCOPE_LABEL,
      [session.app_name, session.user_id, session.session_id, incarnation],
  )
  return SessionScope(f'{key.key_id}:{digest}', incarnation)


def credential_context(
    key: BindingKey, headers: Optional[Mapping[str, str]]
) -> str:
  """An opaque digest of the effective request headers.

  Header names compare case-insensitively, as HTTP does.

  Args:
    key: The key provider's active binding key.
    headers: The merged auth and provider headers of the call, or None.

  Returns:
    `<key id>:<hex HMAC>`; equal for equal header sets.
  """
  value = sorted(
      [str(name).lower(), str(v)] for name, v in (headers or {}).items()
  )
  return f'{key.key_id}:{_mac(key, _CREDENTIAL_LABEL, value)}'


@contextlib.contextmanager
def acting_principal(principal: Principal) -> Iterator[Principal]:
  """Declares who model-originated calls in this context act for.

  The serving host wraps a Runner turn in it, with the principal its
  `PrincipalResolver` resolved from the request that started the turn.

  Args:
    principal: The resolved principal.

  Yields:
    The principal.
  """
  if not isinstance(principal, Principal):
    raise TypeError('acting_principal takes a Principal')
  token = _acting_principal.set(principal)
  try:
    yield principal
  finally:
    _acting_principal.reset(token)


def principal_for_turn(session: SessionKey) -> Principal:
  """The principal model-originated calls of a turn act for.

  Args:
    session: The Session the turn runs in.

  Returns:
    The declared acting principal, or else one naming the Session's owner.
  """
  declared = _acting_principal.get()
  if declared is not None:
    return declared
  owner = json.dumps([session.app_name, session.user_id])
  return Principal(f'adk-session-owner:{owner}')


def unattributed_scope(key: BindingKey) -> str:
  """The scope of listings made outside any Session (no caller to key by)."""
  return f'{key.key_id}:{_mac(key, _SESSION_SCOPE_LABEL, ["unattributed"])}'
