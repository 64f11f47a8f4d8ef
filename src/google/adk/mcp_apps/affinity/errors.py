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

"""Typed errors of connection affinity.

Every way an operation can lose its connection generation has its own
reason, so a caller (and a View, through the host) can tell an evicted
generation from a revoked binding or a rotated credential, and none of them
is ever answered by silently moving the operation to another connection.
Messages name generations by their public ids only: never a principal,
header or credential value.
"""

from __future__ import annotations

import enum

from ..errors import McpAppsError


class InvalidationReason(enum.Enum):
  """Why a connection generation stopped serving its dependants."""

  EVICTED = 'evicted'
  """The pool evicted it (idle, or an operator's forced eviction)."""

  TRANSPORT_FAILURE = 'transport_failure'
  """The concrete client, session or process died (legacy transports)."""

  SESSION_TERMINATED = 'session_terminated'
  """The server forgot the session (legacy stateful HTTP)."""

  MAX_LIFETIME = 'max_lifetime'
  """The profile's maximum generation lifetime was reached."""

  CREDENTIAL_EXPIRED = 'credential_expired'
  """The profile's credential-expiry policy fired."""

  CREDENTIAL_ROTATED = 'credential_rotated'
  """Its principal's credentials changed; the old context is not reused."""

  READINESS_REVOKED = 'readiness_revoked'
  """The host profile's binding was withdrawn or replaced."""

  SESSION_DELETED = 'session_deleted'
  """Its Session incarnation is being deleted (lifecycle phase-1 revoke)."""

  SHUTDOWN = 'shutdown'
  """The binding registry shut down."""


class ConnectionAffinityError(McpAppsError):
  """Base class of connection-affinity errors."""


class InputRequestKind(enum.Enum):
  """An input-request round a server may ask of a client (RFC §4 item 4)."""

  SAMPLING = 'sampling'
  ELICITATION = 'elicitation'
  ROOTS = 'roots'


class InputRequestRefusedError(ConnectionAffinityError):
  """A server asked an app path (direct app call, host read) for input.

  App-safe connections advertise no sampling, elicitation or roots
  capability and run no input callback: such a round fails closed. The
  generation stays live; only this operation failed.

  Attributes:
    generation_id: The generation the operation ran on.
    kinds: The input rounds the server asked for.
    operation: The refused operation (`tools/call`, `resources/read`).
  """

  def __init__(
      self,
      generation_id: str,
      kinds: frozenset[InputRequestKind],
      operation: str,
  ) -> None:
    self.generation_id = generation_id
    self.kinds = kinds
    self.operation = operation
    asked = ', '.join(sorted(kind.value for kind in kinds)) or 'input'
    super().__init__(
        f'{operation}: the server needed a {asked} round on app-safe MCP'
        f' connection generation {generation_id}; app paths gather no input'
    )


class GenerationInvalidatedError(ConnectionAffinityError):
  """An operation's connection generation no longer serves it.

  The operation was not sent. A View bound to the generation is dead: a new
  render (which binds a new generation) is the way forward, never a retry on
  another connection.

  Attributes:
    generation_id: The public id of the invalidated generation.
    reason: Why it was invalidated.
  """

  def __init__(self, generation_id: str, reason: InvalidationReason) -> None:
    self.generation_id = generation_id
    self.reason = reason
    super().__init__(
        f'MCP connection generation {generation_id} was invalidated'
        f' ({reason.value}); re-render to bind a new one'
    )


class HoldReleasedError(ConnectionAffinityError):
  """An operation used a generation hold after releasing it."""

  def __init__(self, generation_id: str, kind: str) -> None:
    self.generation_id = generation_id
    self.kind = kind
    super().__init__(
        f'The {kind} hold on MCP connection generation {generation_id} was'
        ' released'
    )


class AdmissionRefusal(enum.Enum):
  """Why a caller may not use a connection generation."""

  OTHER_DOMAIN = 'other_domain'
  """The generation belongs to another security domain (principal)."""

  SHARING_NOT_DECLARED = 'sharing_not_declared'
  """Another Session's generation, used without a matching declared
  cross-Session handle contract on both sides."""


class GenerationAdmissionError(ConnectionAffinityError):
  """A caller may not use a generation.

  Attributes:
    generation_id: The generation asked for.
    reason: Which admission rule refused it.
    detail: More about the refusal (no identities).
  """

  def __init__(
      self, generation_id: str, reason: AdmissionRefusal, detail: str
  ) -> None:
    self.generation_id = generation_id
    self.reason = reason
    self.detail = detail
    super().__init__(
        f'MCP connection generation {generation_id} refused admission'
        f' ({reason.value}): {detail}'
    )


class StaleToolHandleError(ConnectionAffinityError):
  """A model-facing tool handle no longer matches where it would execute.

  The handle was listed on another connection generation, or under other
  credentials, than the one the call would run on. Nothing was sent; the
  next model turn lists the tools again.

  Attributes:
    tool_name: The tool's native name.
    detail: What changed (no identities, no credentials).
  """

  def __init__(self, tool_name: str, detail: str) -> None:
    self.tool_name = tool_name
    self.detail = detail
    super().__init__(
        f'The model declaration of MCP tool {tool_name!r} is stale ({detail});'
        ' a new model turn lists the tools again'
    )
