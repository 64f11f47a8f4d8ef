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


"""What a profile-bound UI call leaves for its Event: pending seals.

The tool call has the full result but not the Event: ADK builds the
function-response Event (and merges parallel ones) after the tool returns,
and the sealed record's key scope includes the final Event id. So the call
canonicalizes its result under the profile's sealing limits at once (an
over-limit result fails the call through the tool-error path), emits the
descriptor without a reference, and leaves a `PendingSeal` in a bounded,
process-local table. The append stage (`append_stage`) takes it when the
Event that carries the call's FunctionResponse is appended. A crash in
between loses only process memory: no record and no Event exist.

Nothing here runs without a bound profile; profile-less calls never reach
this module.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import threading
import time
from typing import Any
from typing import Callable
from typing import Literal
from typing import Optional
import uuid

from ..canonical_json import canonicalize
from ..canonical_json import CanonicalJsonError
from ..canonical_json import Purpose
from ..contracts.replay_classification import ReplayClass
from ..contracts.replay_classification import ToolIdentity
from ..contracts.scope import SessionKey
from ..contracts.sealed_result_store import SealedEnvelope
from ..contracts.sealed_result_store import SealedResultStore
from ..contracts.session_lifecycle_store import SessionLifecycleStore
from ..descriptor.widget_descriptor import McpAppWidgetDescriptor
from ..descriptor.widget_descriptor import WidgetCorrelation
from ..profile.fingerprint import binding_revision
from ..profile.host_profile import McpAppsHostProfile
from .errors import SealingError
from .errors import SealingErrorReason
from .refresh_record import RefreshInvocationRecord
from .result_authority import candidate_of
from .result_authority import ConnectionEra
from .result_authority import ResultCandidate

DEFAULT_PENDING_TTL = 3600.0
"""Seconds an unreferenced pending record stays before GC may take it."""


class SealPlacement(enum.Enum):
  """Where the Event carries a sealed result's reference."""

  WIDGET = 'widget'
  """`sealedResultRef` on the call's own descriptor (render-producing)."""

  EVENT = 'event'
  """An entry of the Event-level `sealedResultRefs` (interactive,
  non-rendering: the nested widget was suppressed)."""


@dataclasses.dataclass(frozen=True)
class PendingSeal:
  """One call's sealed bytes, waiting for the Event that reports it.

  Attributes:
    function_call_id: The call.
    session: Its Session.
    placement: Where the reference goes.
    envelope: The canonical result and, for render-producing calls, the
      refresh-invocation record.
    operation_instance_id: Minted once per admitted outer request; every
      retry of the store create reuses it.
    store: The profile's sealed-result store.
    lifecycle_store: The profile's lifecycle store (the incarnation).
    pending_ttl: Seconds before an unreferenced record is collectable.
    admission_check: Raises once the binding that made the call stopped
      serving (readiness loss, withdrawal, rebind); the append stage then
      revokes the pending commit.
    candidate: The call's private result candidate. With one, `envelope`
      holds the server's raw result only as the early limit check: the
      append stage reseals from the approved FunctionResponse
      (`result_authority`). None seals `envelope` as it is.
  """

  function_call_id: str
  session: SessionKey
  placement: SealPlacement
  envelope: SealedEnvelope = dataclasses.field(repr=False)
  operation_instance_id: str
  store: SealedResultStore = dataclasses.field(repr=False)
  lifecycle_store: SessionLifecycleStore = dataclasses.field(repr=False)
  pending_ttl: float = DEFAULT_PENDING_TTL
  admission_check: Optional[Callable[[], None]] = dataclasses.field(
      default=None, repr=False
  )
  candidate: Optional[ResultCandidate] = dataclasses.field(
      default=None, repr=False
  )


class PendingSeals:
  """The process-local table of pending seals, by invocation and call.

  Bounded: past `capacity` the oldest entries are dropped (their calls'
  Events then fail reference validation rather than append unsealed).
  """

  def __init__(self, capacity: int = 4096) -> None:
    self._capacity = capacity
    self._lock = threading.Lock()
    self._table: collections.OrderedDict[tuple[str, str], PendingSeal] = (
        collections.OrderedDict()
    )
    self._by_call: dict[str, str] = {}

  def __len__(self) -> int:
    return len(self._table)

  def put(self, invocation_id: str, seal: PendingSeal) -> None:
    """Leaves `seal` for the Event of `invocation_id` that reports it."""
    with self._lock:
      self._table[(invocation_id, seal.function_call_id)] = seal
      self._by_call[seal.function_call_id] = invocation_id
      while len(self._table) > self._capacity:
        (_, dropped), _ = self._table.popitem(last=False)
        self._by_call.pop(dropped, None)

  def peek(self, invocation_id: str, call_ids: list[str]) -> list[PendingSeal]:
    """The pending seals of these calls, left in place."""
    if not self._table:
      return []
    with self._lock:
      return [
          self._table[(invocation_id, call_id)]
          for call_id in call_ids
          if (invocation_id, call_id) in self._table
      ]

  def peek_elsewhere(
      self, invocation_id: str, call_ids: list[str]
  ) -> list[PendingSeal]:
    """The pending seals of these calls left by another invocation."""
    if not self._by_call:
      return []
    with self._lock:
      found = []
      for call_id in call_ids:
        owner = self._by_call.get(call_id)
        if owner is not None and owner != invocation_id:
          seal = self._table.get((owner, call_id))
          if seal is not None:
            found.append(seal)
      return found

  def discard(self, invocation_id: str, call_ids: list[str]) -> None:
    """Forgets the seals of these calls (their Event was appended)."""
    with self._lock:
      for call_id in call_ids:
        if self._table.pop((invocation_id, call_id), None) is not None:
          self._by_call.pop(call_id, None)

  def clear(self) -> None:
    """Forgets everything (tests; a process restart does this too)."""
    with self._lock:
      self._table.clear()
      self._by_call.clear()


PENDING_SEALS = PendingSeals()
"""The process's pending seals."""


def seal_bytes(
    value: Any, *, function_call_id: str, profile: McpAppsHostProfile
) -> bytes:
  """ADK Canonical JSON of `value` under the profile's sealing limits.

  Raises:
    SealingError: (`LIMIT_EXCEEDED`) Over the size or depth limit, or not
      I-JSON.
  """
  try:
    return canonicalize(
        value,
        purpose=Purpose.SEALED_RESULT,
        max_bytes=profile.limits.sealing_max_bytes,
        max_depth=profile.limits.sealing_max_depth,
    )
  except CanonicalJsonError as e:
    raise SealingError(
        SealingErrorReason.LIMIT_EXCEEDED,
        f'The result of function call {function_call_id!r} cannot be sealed:'
        f' {e}',
        function_call_id=function_call_id,
    ) from e


def new_operation_instance_id() -> str:
  """A fresh operation-instance id (distinct from any replay key)."""
  return f'op-{uuid.uuid4().hex}'


@dataclasses.dataclass(frozen=True)
class SealRequest:
  """Everything sealing one UI call needs, gathered by the bound tool.

  Attributes:
    profile: The bound profile.
    server_id: The configured server id.
    toolset_id: The configured toolset id.
    tool_name: The native tool name.
    resource_uri: The tool's declared `ui://` resource.
    declaration_fingerprint: The bound handle's declaration fingerprint.
    catalog_generation: The generation the declaration was listed on.
    session: The call's Session.
    correlation: The call's correlation.
    arguments: The call's arguments.
    full_result: The unprojected `CallToolResult` in its MCP wire form.
    immediate_caller: `model` (an initial call) or `app` (a View's
      call).
    admission_check: As `PendingSeal.admission_check`.
    function_name: The function name the model called. Given, the call
      leaves a private candidate and is sealed from its approved
      FunctionResponse at the append stage (`result_authority`).
    era: The era of the connection that answered (`legacy` or `modern`).
  """

  profile: McpAppsHostProfile
  server_id: str
  toolset_id: str
  tool_name: str
  resource_uri: str
  declaration_fingerprint: str
  catalog_generation: Optional[str]
  session: SessionKey
  correlation: WidgetCorrelation
  arguments: dict[str, Any]
  full_result: dict[str, Any]
  immediate_caller: Literal['model', 'app', 'host'] = 'model'
  admission_check: Optional[Callable[[], None]] = None
  function_name: Optional[str] = None
  era: ConnectionEra = ConnectionEra.LEGACY


def prepare_seal(
    request: SealRequest,
    *,
    placement: SealPlacement = SealPlacement.WIDGET,
    pending: PendingSeals = PENDING_SEALS,
) -> Optional[McpAppWidgetDescriptor]:
  """Canonicalizes the result, leaves its pending seal, builds the descriptor.

  Args:
    request: The call.
    placement: `WIDGET` for render-producing calls (returns the descriptor
      with its reference still empty); `EVENT` for interactive results whose
      nested widget is suppressed (returns None, no refresh record).
    pending: The table to leave the seal in.

  Returns:
    The descriptor to emit, or None for the Event placement.

  Raises:
    SealingError: (`LIMIT_EXCEEDED`) The result (or the refresh record) is
      over a limit; (`UNAVAILABLE`) the profile has no stores.
    BindingKeyUnavailableError: The key provider has no active key.
  """
  profile = request.profile
  store = profile.sealed_result_store
  lifecycle = profile.session_lifecycle_store
  if store is None or lifecycle is None:
    raise SealingError(
        SealingErrorReason.UNAVAILABLE,
        f'Profile {profile.name!r} has no sealed-result or lifecycle store',
    )
  call_id = request.correlation.function_call_id
  sealed = seal_bytes(
      request.full_result, function_call_id=call_id, profile=profile
  )
  descriptor: Optional[McpAppWidgetDescriptor] = None
  refresh: Optional[bytes] = None
  if placement is SealPlacement.WIDGET:
    revision = binding_revision(profile)
    descriptor = McpAppWidgetDescriptor(
        resource_uri=request.resource_uri,
        correlation=request.correlation,
        server_id=request.server_id,
        toolset_id=request.toolset_id,
        binding_revision=revision,
    )
    refresh = _refresh_record(request, revision).to_bytes(
        max_bytes=profile.limits.sealing_max_bytes,
        max_depth=profile.limits.sealing_max_depth,
    )
  pending.put(
      request.correlation.invocation_id,
      PendingSeal(
          function_call_id=call_id,
          session=request.session,
          placement=placement,
          envelope=SealedEnvelope(sealed_result=sealed, refresh_record=refresh),
          operation_instance_id=new_operation_instance_id(),
          store=store,
          lifecycle_store=lifecycle,
          admission_check=request.admission_check,
          candidate=_candidate(request),
      ),
  )
  return descriptor


def _candidate(request: SealRequest) -> Optional[ResultCandidate]:
  if request.function_name is None:
    return None
  return candidate_of(
      request.full_result,
      correlation=request.correlation,
      function_name=request.function_name,
      era=request.era,
      max_bytes=request.profile.limits.sealing_max_bytes,
      max_depth=request.profile.limits.sealing_max_depth,
  )


def _refresh_record(
    request: SealRequest, revision: str
) -> RefreshInvocationRecord:
  authority = request.profile.replay_classification
  identity = ToolIdentity(
      server_id=request.server_id,
      toolset_id=request.toolset_id,
      tool_name=request.tool_name,
  )
  if authority is None:
    source, classification_revision = '', ''
    replay_class = ReplayClass.NOT_REPLAY_SAFE
  else:
    source, classification_revision = authority.source, authority.revision
    try:
      replay_class = authority.classify(identity)
    except Exception:  # pylint: disable=broad-except
      # An authority that cannot answer classifies nothing as replay-safe.
      replay_class = ReplayClass.NOT_REPLAY_SAFE
  return RefreshInvocationRecord(
      server_id=request.server_id,
      toolset_id=request.toolset_id,
      tool_name=request.tool_name,
      arguments=request.arguments,
      declaration_fingerprint=request.declaration_fingerprint,
      catalog_generation=request.catalog_generation,
      binding_revision=revision,
      classification_source=source,
      classification_revision=classification_revision,
      replay_class=replay_class.value,
      immediate_caller=request.immediate_caller,
      correlation=request.correlation.model_dump(mode='json', by_alias=True),
  )


def expires_at(seal: PendingSeal, now: Optional[float] = None) -> float:
  """When the seal's record, if never referenced, becomes collectable."""
  return (time.time() if now is None else now) + seal.pending_ttl
