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


"""The canonical audit append pipeline of an MCP App operation.

`append_audit_event` records one audit (or reconciliation) Event: it
pre-sanitizes the constructed Event, runs the ordinary plugin chain once
on the restricted event-policy facade, merges the allowed changes,
finalizes over the frozen batch, appends, then runs the observer phase.
Any failure before the append completes records the core-only fallback
built from the frozen batch instead, at most once per operation, with a
bounded retry; if that is refused too, nothing durable is claimed. Design:
docs/design/audit-pipeline.md.

Example:

  effects = EventBatchEffects([call_id], live_state=session.state)
  ...  # the operation's tool callbacks write through their child ledgers
  outcome = await append_audit_event(
      session_service=service, session=session, event=record,
      effects=effects, plugin_manager=runner.plugin_manager)
  if outcome.error is not None:
    ...  # the View gets an error; outcome.durable says what was stored
"""

from __future__ import annotations

import collections
from collections.abc import Mapping
import contextvars
import dataclasses
import enum
import logging
from typing import Any
from typing import Final
from typing import Optional
from typing import Protocol

from pydantic import ConfigDict

from ...events._internal_metadata import INTERNAL_METADATA_PREFIX
from ...events._internal_metadata import without_internal_metadata
from ...events.event import Event
from ...events.event_actions import EventActions
from ...sessions.base_session_service import GetSessionConfig
from ...sessions.session import Session
from ...telemetry._metrics import meter
from ..batch.ledger import EventBatchEffects
from ..batch.ledger import FrozenBatch
from ..contracts.scope import SessionKey
from ..event_policy.audit_actions import screen_audit_actions
from ..event_policy.errors import EventPolicyError
from ..event_policy.protected_fields import APP_AUDIT
from ..event_policy.provenance import admitted
from ..event_policy.provenance import APP_OPERATION
from ..event_policy.provenance import Provenance
from ..facades.audit_context import ReadonlyAuditContext
from ..facades.errors import FacadeError
from ..facades.event_policy import EventPolicyContext
from ..facades.event_policy import EventPolicyOutcome
from ..facades.event_policy import run_event_policy
from ..sealing.append_stage import fallback_offer
from .errors import AuditError
from .errors import AuditErrorReason

__all__ = [
    'APPEND_ATTEMPTS',
    'AUDIT_RECORD_METADATA_KEY',
    'AuditAppendOutcome',
    'AuditEventSnapshot',
    'AuditKind',
    'AuditPath',
    'append_audit_event',
    'append_failures',
    'audit_record',
    'sanitize_audit_event',
]

logger = logging.getLogger('google_adk.' + __name__)

APPEND_ATTEMPTS: Final = 3
"""How many times the core-only fallback is offered to the session
service before the pipeline gives up (the pipeline's own Event is offered
once: its refusal is what the fallback answers)."""

AUDIT_RECORD_METADATA_KEY: Final = (
    INTERNAL_METADATA_PREFIX + 'mcp_apps_audit_record'
)
"""The `custom_metadata` key the pipeline stamps on every Event it
appends: `{'kind': 'audit' | 'reconciliation', 'path': 'pipeline' |
'fallback'}`. Only the pipeline writes it."""

APPEND_FAILURE_METRIC: Final = 'adk.mcp_apps.audit.append_failures'
"""The counter (on ADK's `gcp.vertex.agent` meter) of operations whose
audit record could not be appended at all."""

_append_failure_counter = meter.create_counter(
    APPEND_FAILURE_METRIC,
    unit='1',
    description=(
        'MCP App operations whose audit record the session service refused'
        ' after the bounded retry (nothing durable was recorded).'
    ),
)
_append_failures: collections.Counter[str] = collections.Counter()


def append_failures() -> Mapping[str, int]:
  """This process's append failures by app name (what the metric counts)."""
  return dict(_append_failures)


class AuditKind(enum.Enum):
  """What an appended record is; observers see both kinds."""

  AUDIT = 'audit'
  """An operation's audit Event."""

  RECONCILIATION = 'reconciliation'
  """A reconciliation record (cancellation, callback failure)."""


class AuditPath(enum.Enum):
  """Which record the pipeline appended."""

  PIPELINE = 'pipeline'
  """The audit Event, after the plugin chain and the finalize step."""

  FALLBACK = 'fallback'
  """The core-only fallback built from the frozen batch."""

  NOT_RECORDED = 'not_recorded'
  """Nothing: the session service refused the fallback too."""


class AuditEventSnapshot(Event):
  """An appended audit Event as an observer receives it.

  A deep-independent copy (rebuilt from the stored Event's dump, so it
  shares nothing with `session.events`) whose fields cannot be set.
  """

  model_config = ConfigDict(frozen=True)


class AuditPluginChain(Protocol):
  """The plugin chain (`plugins.plugin_manager.PluginManager`)."""

  async def run_on_event_callback(
      self, *, invocation_context: Any, event: Event
  ) -> Optional[Event]:
    """The ordinary event callback chain."""
    ...

  async def run_on_audit_event_callback(
      self, *, readonly_context: ReadonlyAuditContext, event: Event
  ) -> None:
    """The observer phase: every plugin, serially, failures isolated."""
    ...


class AuditSessionService(Protocol):
  """The session service the record is appended through."""

  async def append_event(self, session: Session, event: Event) -> Event:
    """Finalizes and stores `event`."""
    ...

  async def get_session(
      self,
      *,
      app_name: str,
      user_id: str,
      session_id: str,
      config: Optional[GetSessionConfig] = None,
  ) -> Optional[Session]:
    """The stored Session (read after a refused append)."""
    ...


@dataclasses.dataclass(frozen=True)
class AuditAppendOutcome:
  """What the pipeline recorded, and the operation's cached outcome.

  Attributes:
    event: The Event the session service stored (and returned), or None
      when nothing was stored.
    path: Which record that is.
    error: None on the normal path; else why the pipeline fell back or
      recorded nothing. The operation's cached outcome is then an error.
    policy_error: The typed policy error of control actions stripped from
      the record (the record still stands).
    frozen: The frozen batch every record derives from.
    attempts: How many times a record was offered to the session service.
  """

  event: Optional[Event]
  path: AuditPath
  frozen: FrozenBatch
  error: Optional[AuditError] = None
  policy_error: Optional[EventPolicyError] = None
  attempts: int = 0

  @property
  def durable(self) -> bool:
    """Whether a record was stored (the only durability there is)."""
    return self.event is not None


def audit_record(event: Event) -> Optional[Mapping[str, str]]:
  """The pipeline's stamp on an Event it appended, if any."""
  metadata = event.custom_metadata
  if not isinstance(metadata, Mapping):
    return None
  record = metadata.get(AUDIT_RECORD_METADATA_KEY)
  return record if isinstance(record, Mapping) else None


def _without_function_calls(event: Event) -> None:
  content = event.content
  if content is None or not content.parts:
    return
  parts = [part for part in content.parts if part.function_call is None]
  if len(parts) != len(content.parts):
    content.parts = parts


def sanitize_audit_event(
    event: Event, *, kind: AuditKind, path: AuditPath
) -> tuple[Event, Optional[EventPolicyError]]:
  """What an audit record may carry, applied to a copy of `event`.

  Control, core-owned and never-persisted actions are stripped
  (`screen_audit_actions`; the error is returned), the state and artifact
  deltas are emptied (only the frozen batch supplies them), the protected
  fields are reset (`audience` to `app_audit`, the rest for the finalizer
  to stamp), `function_call` parts and `long_running_tool_ids` are removed
  (a record asks nothing of anyone), `partial` is cleared, and ADK-internal
  metadata keys are replaced by the pipeline's own stamp.

  Args:
    event: The record as constructed or merged; not changed.
    kind: The record's kind, stamped.
    path: The path it is appended on, stamped.

  Returns:
    The sanitized copy and the policy error of what was stripped.
  """
  clean = event.model_copy(deep=True)
  actions = (
      clean.actions
      if isinstance(clean.actions, EventActions)
      else EventActions()
  )
  screen = screen_audit_actions(actions)
  clean.actions = screen.actions.model_copy(
      update={'state_delta': {}, 'artifact_delta': {}}
  )
  clean.audience = APP_AUDIT
  clean.invocation_origin = None
  clean.emitter = None
  clean.long_running_tool_ids = None
  clean.partial = None
  _without_function_calls(clean)
  public = without_internal_metadata(clean.custom_metadata) or {}
  clean.custom_metadata = {
      **public,
      AUDIT_RECORD_METADATA_KEY: {'kind': kind.value, 'path': path.value},
  }
  return clean, screen.error


def _restore(event: Event, frozen: FrozenBatch) -> Event:
  """`event` whose deltas are exactly the frozen batch's (in place)."""
  event.actions = event.actions.model_copy(
      update={
          'state_delta': dict(frozen.state_delta),
          'artifact_delta': dict(frozen.artifact_delta),
      }
  )
  return event


def _fallback(
    constructed: Event, frozen: FrozenBatch, kind: AuditKind, event_id: str
) -> Event:
  """The core-only fallback: the core's record, the frozen deltas only.

  It takes `event_id`, the id of the record offered before it (if any):
  a sealed result created by that offer is scoped to that id, so the
  fallback's re-seal of the same operation instance is the store's
  idempotent retry, not a conflict.
  """
  record, _ = sanitize_audit_event(
      constructed, kind=kind, path=AuditPath.FALLBACK
  )
  record.actions = EventActions()
  record.id = event_id
  return _restore(record, frozen)


async def _landed(
    service: AuditSessionService, key: SessionKey, event_id: str
) -> Optional[Event]:
  """The stored Event `event_id`, if a refused append stored it anyway.

  A backend may store an Event and still raise (the commit landed, a later
  step failed). None when it is not stored or the read fails (then the next
  offer decides: a backend refuses a second Event of the same id).
  """
  try:
    stored = await service.get_session(
        app_name=key.app_name, user_id=key.user_id, session_id=key.session_id
    )
  except Exception as e:  # pylint: disable=broad-exception-caught
    logger.warning(
        'Could not read the Session back after a refused audit append (%s)',
        type(e).__name__,
    )
    return None
  if stored is None:
    return None
  for event in reversed(stored.events):
    if event.id == event_id and audit_record(event) is not None:
      return event
  return None


_active: contextvars.ContextVar[frozenset[SessionKey]] = contextvars.ContextVar(
    'adk_mcp_apps_audit_pipeline', default=frozenset()
)


async def _append(
    service: AuditSessionService,
    session: Session,
    event: Event,
    provenance: Provenance,
) -> Event:
  with admitted(provenance):
    return await service.append_event(session, event)


async def _observe(
    plugin_manager: AuditPluginChain,
    key: SessionKey,
    session: Session,
    appended: Event,
) -> None:
  """The observer phase: after a successful append, audit records only."""
  if appended.audience != APP_AUDIT or audit_record(appended) is None:
    return
  try:
    context = ReadonlyAuditContext.build(
        session=key,
        state=session.state,
        invocation_id=appended.invocation_id,
        branch=appended.branch,
    )
  except FacadeError as e:
    logger.warning(
        'Audit observers skipped for Event %s: the state has no snapshot (%s)',
        appended.id,
        e.reason.value,
    )
    return
  try:
    snapshot = AuditEventSnapshot.model_validate(appended.model_dump())
    await plugin_manager.run_on_audit_event_callback(
        readonly_context=context, event=snapshot
    )
  except Exception as e:  # pylint: disable=broad-exception-caught
    # Delivery is best effort; the stored record is the authority.
    logger.error(
        'Audit observer phase failed for Event %s (%s)',
        appended.id,
        type(e).__name__,
    )


def _critical(
    key: SessionKey, invocation_id: str, cause: BaseException
) -> None:
  """The redacted escalation: identifiers and error types, no values."""
  _append_failures[key.app_name] += 1
  _append_failure_counter.add(1, {'app_name': key.app_name})
  logger.critical(
      'MCP App audit record NOT stored: the session service refused the'
      ' core-only fallback %d times (app %r, session %r, invocation %r,'
      ' last error %s); no durable record exists',
      APPEND_ATTEMPTS,
      key.app_name,
      key.session_id,
      invocation_id,
      type(cause).__name__,
  )


async def _adopt_landed(
    plugin_manager: AuditPluginChain,
    key: SessionKey,
    session: Session,
    stored: Event,
    *,
    frozen: FrozenBatch,
    failure: AuditError,
    policy_error: Optional[EventPolicyError],
    attempts: int,
) -> AuditAppendOutcome:
  """The outcome of a refused offer whose Event was stored all the same.

  The stored record is what stands: a landed pipeline record is the
  normal path (no error; the append did happen), a landed fallback is the
  fallback path with the first failure.
  """
  stamp = audit_record(stored) or {}
  path = (
      AuditPath.FALLBACK
      if stamp.get('path') == AuditPath.FALLBACK.value
      else AuditPath.PIPELINE
  )
  logger.warning(
      'MCP App audit record of invocation %r was stored although the'
      ' session service raised; it stands as the %s record',
      stored.invocation_id,
      path.value,
  )
  await _observe(plugin_manager, key, session, stored)
  return AuditAppendOutcome(
      event=stored,
      path=path,
      frozen=frozen,
      error=failure if path is AuditPath.FALLBACK else None,
      policy_error=policy_error,
      attempts=attempts,
  )


async def append_audit_event(
    *,
    session_service: AuditSessionService,
    session: Session,
    event: Event,
    effects: EventBatchEffects,
    plugin_manager: AuditPluginChain,
    kind: AuditKind = AuditKind.AUDIT,
    agent_name: Optional[str] = None,
    provenance: Provenance = APP_OPERATION,
) -> AuditAppendOutcome:
  """Records one operation's audit Event through the canonical pipeline.

  Steps: (1) construct and pre-sanitize (`sanitize_audit_event`); (2) the
  ordinary plugin chain once, on `EventPolicyContext` and a
  deep-independent copy (`run_event_policy`); then `effects` is frozen;
  (3) merge the allowed changes; (4) finalize: sanitize again, restore the
  frozen batch's deltas; (5) `append_event` under `provenance`; (6) the
  observer phase. A failure of (2)-(5) appends the core-only fallback
  instead (under the refused record's Event id, offered up to
  `APPEND_ATTEMPTS` times; an offer the service stored although it raised
  stands as the record and is not offered again); if it is refused, a
  critical redacted log record and the append-failure metric are emitted
  and nothing durable is claimed. Observers run after whichever record was
  stored; their failures never change the outcome.

  Args:
    session_service: The Session's service.
    session: The live Session; `effects` was made over its state.
    event: The record as the core constructed it; not changed.
    effects: The operation's open batch; frozen here, exactly once.
    plugin_manager: The Runner's plugin chain.
    kind: Audit or reconciliation record.
    agent_name: The agent the operation ran under, if any.
    provenance: The admitted operation the record is stamped with.

  Returns:
    The outcome; it never raises for a plugin or backend failure.

  Raises:
    AuditError: `REENTRY`, the pipeline is already running for this
      Session in this context (a plugin or observer appending).
    BatchError: `effects` was already frozen.
  """
  key = SessionKey(session.app_name, session.user_id, session.id)
  active = _active.get()
  if key in active:
    raise AuditError(
        AuditErrorReason.REENTRY,
        'an audit record is being appended to this Session already',
    )
  token = _active.set(active | {key})
  try:
    return await _run(
        session_service,
        session,
        key,
        event,
        effects,
        plugin_manager,
        kind,
        agent_name,
        provenance,
    )
  finally:
    _active.reset(token)


async def _run(
    service: AuditSessionService,
    session: Session,
    key: SessionKey,
    event: Event,
    effects: EventBatchEffects,
    plugin_manager: AuditPluginChain,
    kind: AuditKind,
    agent_name: Optional[str],
    provenance: Provenance,
) -> AuditAppendOutcome:
  # (1) Construct and pre-sanitize.
  constructed, policy_error = sanitize_audit_event(
      event, kind=kind, path=AuditPath.PIPELINE
  )
  # (2) The plugin chain, once, restricted.
  outcome: Optional[EventPolicyOutcome] = None
  failure: Optional[AuditError] = None
  cause: Optional[BaseException] = None
  try:
    context = EventPolicyContext.build(
        session=key,
        invocation_id=constructed.invocation_id,
        state=session.state,
        ledger=effects.event_policy,
        branch=constructed.branch,
        agent_name=agent_name,
    )
  except FacadeError as e:
    failure = AuditError(
        AuditErrorReason.EVENT_POLICY_FAILED,
        'the state has no snapshot for the event callback',
    )
    cause = e
  else:
    outcome = await run_event_policy(plugin_manager, context, constructed)
    if outcome.failed:
      failure = AuditError(
          AuditErrorReason.EVENT_POLICY_FAILED,
          'the event callback failed on the audit record',
      )
      cause = outcome.error
  frozen = effects.freeze()
  attempts = 0
  record_id = constructed.id
  if outcome is not None and not outcome.failed:
    policy_error = policy_error or outcome.policy_error
    try:
      # (3) Merge (done by the step) and (4) finalize.
      merged = outcome.resolve(frozen)
      final, post_error = sanitize_audit_event(
          merged, kind=kind, path=AuditPath.PIPELINE
      )
      final = _restore(final, frozen)
      policy_error = policy_error or post_error
    except Exception as e:  # pylint: disable=broad-exception-caught
      failure = AuditError(
          AuditErrorReason.FINALIZE_FAILED, 'the audit record did not finalize'
      )
      cause = e
    else:
      # (5) Append, once.
      attempts += 1
      record_id = final.id
      try:
        appended = await _append(service, session, final, provenance)
      except Exception as e:  # pylint: disable=broad-exception-caught
        failure = AuditError(
            AuditErrorReason.PIPELINE_APPEND_FAILED,
            'the session service refused the audit record',
        )
        cause = e
      else:
        # (6) Observers.
        await _observe(plugin_manager, key, session, appended)
        return AuditAppendOutcome(
            event=appended,
            path=AuditPath.PIPELINE,
            frozen=frozen,
            policy_error=policy_error,
            attempts=attempts,
        )
  assert failure is not None
  failure.__cause__ = cause
  # The core-only fallback, built once, offered a bounded number of times,
  # under the id of the record offered before it. Before each offer after
  # a refused one, a Session read tells whether that offer landed anyway:
  # then it is the record, and nothing is appended twice.
  fallback = _fallback(constructed, frozen, kind, record_id)
  last: BaseException = cause or failure
  for _ in range(APPEND_ATTEMPTS):
    if attempts:
      stored = await _landed(service, key, record_id)
      if stored is not None:
        return await _adopt_landed(
            plugin_manager,
            key,
            session,
            stored,
            frozen=frozen,
            failure=failure,
            policy_error=policy_error,
            attempts=attempts,
        )
    attempts += 1
    try:
      with fallback_offer():
        appended = await _append(
            service, session, fallback.model_copy(deep=True), provenance
        )
    except Exception as e:  # pylint: disable=broad-exception-caught
      last = e
      continue
    logger.warning(
        'MCP App audit record of invocation %r stored as the core-only'
        ' fallback (%s)',
        fallback.invocation_id,
        failure.reason.value,
    )
    await _observe(plugin_manager, key, session, appended)
    return AuditAppendOutcome(
        event=appended,
        path=AuditPath.FALLBACK,
        frozen=frozen,
        error=failure,
        policy_error=policy_error,
        attempts=attempts,
    )
  _critical(key, fallback.invocation_id, last)
  error = AuditError(
      AuditErrorReason.APPEND_FAILED,
      'the session service refused the core-only fallback; nothing durable'
      ' was recorded',
  )
  error.__cause__ = last
  return AuditAppendOutcome(
      event=None,
      path=AuditPath.NOT_RECORDED,
      frozen=frozen,
      error=error,
      policy_error=policy_error,
      attempts=attempts,
  )
