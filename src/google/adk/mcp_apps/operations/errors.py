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

"""The operations subpackage's error: one class, a reason enum.

Usage:

  outcome = await run_app_call(request, environment=env, cache=cache)
  if outcome.cause is not None:
    if outcome.cause.reason is OperationErrorReason.CONFIRMATION_DENIED:
      ...  # nothing ran, nothing was recorded
"""

from __future__ import annotations

import enum

from ..errors import McpAppsError


class OperationErrorReason(enum.Enum):
  """Why an app-originated operation did not end in a terminal result."""

  CONFIRMATION_DENIED = 'confirmation_denied'
  """The governed confirmation denied the call (nothing ran)."""

  CONFIRMATION_TIMEOUT = 'confirmation_timeout'
  """The governed confirmation timed out (nothing ran)."""

  ADMISSION_DENIED = 'admission_denied'
  """The app-call admission (or the toolset's filter) refused the tool:
  in preflight nothing ran; after the callbacks their effects are
  reconciled."""

  REMOTE_ERROR = 'remote_error'
  """The server answered the `tools/call` with a JSON-RPC error."""

  INPUT_REQUEST_REFUSED = 'input_request_refused'
  """The tool needed a sampling, elicitation or roots round (refused)."""

  CALL_FAILED = 'call_failed'
  """The call failed otherwise (a transport or protocol failure that did
  not end the View's generation); audited like a remote error."""

  TOOL_CALLBACK_FAILED = 'tool_callback_failed'
  """A plugin's before/after/on-error tool callback raised."""

  MCP_CALLBACK_FAILED = 'mcp_callback_failed'
  """A governed MCP callback (filter, header, progress) failed closed."""

  EVENT_PIPELINE_FAILED = 'event_pipeline_failed'
  """The audit pipeline stored the core-only fallback, or nothing."""

  CANCELLED = 'cancelled'
  """The View cancelled the call; its channel survives."""

  DISCONNECTED = 'disconnected'
  """The View's channel went away during the call."""

  TEARDOWN = 'teardown'
  """The View's hold was released or its generation invalidated."""

  RESULT_REFUSED = 'result_refused'
  """The result authority refused the call's result (over a sealing limit,
  or the approved result does not re-validate)."""

  APPEND_TIMEOUT = 'append_timeout'
  """The audit record's append outlived the call's append deadline: the
  call ended with this error (the outcome a retry with its key gets), and
  the append went on; what it stored stands."""

  EVENT_POLICY_REFUSED = 'event_policy_refused'
  """An `on_event` callback returned control actions the audit Event may
  not carry; they were stripped, the allowed deltas committed."""

  DUPLICATE_OPERATION = 'duplicate_operation'
  """An operation id already running in this process was started again."""

  ORIGINATING_AGENT_MISSING = 'missing_agent'
  """The agent the View was rendered under is gone (none given, or not in
  the Runner's agent tree): nothing ran, nothing was recorded. The value
  is the bootstrap's own `missing_agent`, so `read_only_reason` maps it to
  the read-only render."""

  SESSION_NOT_FOUND = 'session_not_found'
  """A first-party Session patch named a Session with no row."""

  SESSION_API_UNAVAILABLE = 'session_api_unavailable'
  """The first-party Session API needs a profile with a lifecycle store."""

  # The View channel (`view_channel`): structural checks before queueing.

  PARSE_ERROR = 'parse_error'
  """The message is not JSON (JSON-RPC -32700); nothing ran."""

  INVALID_REQUEST = 'invalid_request'
  """The message is not a valid JSON-RPC 2.0 request or notification
  (JSON-RPC -32600); nothing ran."""

  METHOD_NOT_FOUND = 'method_not_found'
  """The channel serves no such method (JSON-RPC -32601); nothing ran."""

  INVALID_PARAMS = 'invalid_params'
  """The method's params do not match its schema (JSON-RPC -32602)."""

  DUPLICATE_REQUEST_ID = 'duplicate_request_id'
  """A request reused the id of one still live on the same channel."""

  REQUEST_TOO_LARGE = 'request_too_large'
  """The message is over the profile's `max_request_bytes`."""

  RATE_LIMITED = 'rate_limited'
  """The View is over its per-minute operation rate."""

  QUEUE_FULL = 'queue_full'
  """The View already has its most queued operations."""

  LEASE_INVALID = 'lease_invalid'
  """The channel token is wrong, expired, revoked or replayed."""

  HOST_ONLY = 'host_only'
  """The View asked for what only the host may do (resume or cancel a
  pending confirmation)."""

  # The post-queue barrier: re-checked once the Session is owned.

  UNAUTHORIZED = 'unauthorized'
  """The `SessionAuthorizer` no longer lets the principal view the
  Session."""

  VIEW_GENERATION_INVALIDATED = 'view_generation_invalidated'
  """The View's generation (its connection generation) is gone: a
  reconnect, an eviction or a connection loss. Never retried elsewhere."""

  BINDING_CHANGED = 'binding_changed'
  """The registry's binding (its generation or revision) changed since the
  View was bound."""

  INCARNATION_CHANGED = 'incarnation_changed'
  """The Session was deleted (and perhaps recreated) since the View was
  bound."""

  MODALITY_WITHDRAWN = 'modality_withdrawn'
  """The binding no longer advertises the method's capability
  (`serverTools`, `serverResources`) or serves the app caller."""

  RESOURCE_POLICY_DENIED = 'resource_policy_denied'
  """The read's URI is outside the View's resource policy."""

  READ_RESPONSE_REJECTED = 'read_response_rejected'
  """A returned item failed response-side validation (policy, duplicate,
  per-item or aggregate size, item count); nothing was delivered."""

  LIMIT_EXCEEDED = 'limit_exceeded'
  """The operation went over a byte or time limit."""

  # `ui/message` (`message_permit`).

  MESSAGE_PERMIT_STALE = 'message_permit_stale'
  """The turn's message permit no longer matches what holds once the
  Session is owned (its lease, View, binding revision, incarnation or
  payload), or teardown invalidated it: the turn ran nothing."""
  SUPERSEDED = 'superseded'
  """A model-context update admitted before the one that last wrote the
  View's register: committing it would overwrite a newer update."""

  # Multi-round requests (MRTR).

  MRTR_ROUNDS_EXCEEDED = 'mrtr_rounds_exceeded'
  """More state-only rounds than the profile's `mrtr_max_rounds`."""

  MRTR_TIMEOUT = 'mrtr_timeout'
  """The rounds took longer than the profile's `mrtr_max_seconds`."""

  MRTR_INTERMEDIATE_REFUSED = 'mrtr_intermediate_refused'
  """A legacy-era server answered with an intermediate result (legacy
  requests are single-round)."""

  # Method-aware idempotency (`idempotency`).

  IDEMPOTENCY_KEY_INVALID = 'idempotency_key_invalid'
  """`_meta["com.google.adk/idempotency-key"]` is not 1-128 characters of
  `[A-Za-z0-9._-]`, or is not a string."""

  IDEMPOTENCY_CONFLICT = 'idempotency_conflict'
  """The key is retained for another operation identity."""


class OperationError(McpAppsError):
  """Base error of app-originated operations.

  Attributes:
    reason: Why.
  """

  def __init__(self, reason: OperationErrorReason, message: str) -> None:
    self.reason = reason
    super().__init__(f'{reason.value}: {message}')
