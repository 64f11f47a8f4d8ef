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


"""A transient audit-append failure after the seal keeps the sealed record.

A governed View `tools/call` on a bound profile seals its result inside
the Session service's `append_event` (the finalizer's append stage), before
the backend writes the audit Event. These tests make the real Session
service fail once right after that stage: either before its write (nothing
stored) or after its commit (the Event stored, the call still raising).
Either way exactly one durable audit record stands for the call, its
sealed result resolves, and the View's answer agrees with the record's
path (the fallback is an error; a landed pipeline record is the result).
When an `on_event` policy changed the result on the refused record, the
fallback (the core's record) gets a sealed record of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from typing import Optional

from channel_support import call
from channel_support import incarnation_of
from channel_support import open_channel
from exec_ownership_support import stage
from google.adk.events.event import Event
from google.adk.mcp_apps.audit.pipeline import audit_record
from google.adk.mcp_apps.contracts.sealed_result_store import SealedEnvelope
from google.adk.mcp_apps.contracts.sealed_result_store import SealedRecordScope
from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultRef
from google.adk.mcp_apps.operations.errors import OperationErrorReason
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.session import Session
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from mcp_apps_conformance_server import names
import pytest
from sealing_support import OracleResolver

pytestmark = pytest.mark.integration

BEFORE_WRITE = 'before_write'
"""Raise after the append stage sealed, before the backend writes."""
AFTER_COMMIT = 'after_commit'
"""Raise after the backend committed the Event (it is stored)."""


class TransientFault:
  """The one fault: the first sealed audit Event's append raises once.

  Attributes:
    mode: `BEFORE_WRITE` or `AFTER_COMMIT`.
    sealed_at_fault: The sealed references the Event carried when the fault
      fired (proof the seal was created before the Session write failed).
    first_seal: That first sealed record, read from the store afterwards.
  """

  def __init__(self, mode: str) -> None:
    self.mode = mode
    self.fired = False
    self.sealed_at_fault: Optional[dict[str, Any]] = None
    self.first_seal: Optional[SealedEnvelope] = None

  def due(self, event: Event, mode: str) -> bool:
    return (
        mode == self.mode
        and not self.fired
        and event.audience == 'app_audit'
        and bool(event.sealed_result_refs)
    )

  def fire(self, event: Event) -> None:
    self.fired = True
    self.sealed_at_fault = dict(event.sealed_result_refs or {})
    raise OSError('database is locked (injected, once)')


class FlakySqlite(SqliteSessionService):
  """The real SQLite service; one write step fails once (see TransientFault)."""

  def __init__(self, path: str, fault: TransientFault) -> None:
    super().__init__(path)
    self.fault = fault

  def _trim_temp_delta_state(self, event: Event) -> Event:
    # Runs right after the finalizer (and its append stage), before the
    # backend's transaction.
    if self.fault.due(event, BEFORE_WRITE):
      self.fault.fire(event)
    return super()._trim_temp_delta_state(event)

  def _commit_event_to_session(self, session: Session, event: Event) -> Event:
    # Runs after `db.commit()`: the Event row is stored.
    if self.fault.due(event, AFTER_COMMIT):
      self.fault.fire(event)
    return super()._commit_event_to_session(session, event)


class FlakyInMemory(InMemorySessionService):
  """The real in-memory service; fails once before it stores the Event."""

  def __init__(self, fault: TransientFault) -> None:
    super().__init__()
    self.fault = fault

  def _trim_temp_delta_state(self, event: Event) -> Event:
    if self.fault.due(event, BEFORE_WRITE):
      self.fault.fire(event)
    return super()._trim_temp_delta_state(event)


REDACTED = [{'type': 'text', 'text': 'redacted by policy'}]


class RedactResults(BasePlugin):
  """A real `on_event` policy: it replaces the public `content` of every
  function response on an audit record (the result authority seals it)."""

  def __init__(self) -> None:
    super().__init__(name='redact_results')

  async def on_event_callback(
      self, *, invocation_context: Any, event: Event
  ) -> Optional[Event]:
    if event.audience != 'app_audit' or event.content is None:
      return None
    edited = event.model_copy(deep=True)
    for part in edited.content.parts or ():
      if part.function_response is not None:
        response = dict(part.function_response.response or {})
        response['content'] = REDACTED
        part.function_response.response = response
    return edited


def audit_records(events: list[Event]) -> list[Event]:
  return [e for e in events if audit_record(e) is not None]


async def run_faulted_call(
    mcp_apps: Any,
    tmp_path: Path,
    backend: str,
    mode: str,
    plugins: tuple[BasePlugin, ...] = (),
) -> tuple[Any, Any, list[Event], TransientFault, str]:
  """One governed `tools/call` whose first audit append fails once."""
  fault = TransientFault(mode)

  def service(path: Path) -> Any:
    if backend == 'sqlite':
      return FlakySqlite(str(path / 'sessions.db'), fault)
    return FlakyInMemory(fault)

  async with stage(
      mcp_apps, tmp_path, backend, session_service=service, plugins=plugins
  ) as s:
    channel = await open_channel(s)
    response = await channel.handle(
        call(1, names.SIDE_EFFECT, {'key': 'k'}), token=channel.token
    )
    stored = audit_records(await s.stored())
    call_id = f'{channel.operation_prefix}:1'
    if fault.sealed_at_fault and len(stored) == 1:
      # The refused offer's Event id is the stored record's (kept).
      scope = SealedRecordScope(
          s.key, await incarnation_of(s), stored[0].id, call_id
      )
      store = s.st.profile.sealed_result_store
      fault.first_seal = await store.resolve(
          scope, SealedResultRef(fault.sealed_at_fault[call_id].record_id)
      )
    resolved = None
    if len(stored) == 1:
      resolved = await OracleResolver(
          s.st.profile, s.st.session_service
      ).resolve(s.key, event_id=stored[0].id, function_call_id=call_id)
    assert s.tool_calls(names.SIDE_EFFECT) == 1
    return response, resolved, stored, fault, call_id


@pytest.mark.conformance('P3-PIPE-06', 'P3-PIPE-08', 'P2-SRS-15', 'P2-SRS-11')
@pytest.mark.parametrize('backend', ['in_memory', 'sqlite'])
async def test_fallback_after_a_failed_sealed_append_keeps_one_resolvable_record(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  response, resolved, stored, fault, call_id = await run_faulted_call(
      mcp_apps, tmp_path, backend, BEFORE_WRITE
  )

  # The seal existed before the Session write failed.
  assert fault.fired and set(fault.sealed_at_fault or {}) == {call_id}
  # Exactly one durable record: the core-only fallback, under the failed
  # offer's id, carrying the same sealed record.
  (record,) = stored
  assert audit_record(record) == {'kind': 'audit', 'path': 'fallback'}
  assert record.sealed_result_refs is not None
  assert (
      record.sealed_result_refs[call_id].record_id
      == fault.sealed_at_fault[call_id].record_id
  )
  assert resolved is not None
  assert resolved.full_result()['structuredContent']
  # The fallback's cached outcome is an error, as the design says.
  assert response is not None and 'error' in response, response
  assert (
      response['error']['data']['reason']
      == OperationErrorReason.EVENT_PIPELINE_FAILED.value
  )


@pytest.mark.conformance('P3-PIPE-06', 'P3-PIPE-08', 'P2-SRS-14')
async def test_a_failed_append_that_landed_stands_once_as_the_pipeline_record(
    mcp_apps: Any, tmp_path: Path
) -> None:
  response, resolved, stored, fault, call_id = await run_faulted_call(
      mcp_apps, tmp_path, 'sqlite', AFTER_COMMIT
  )

  assert fault.fired
  # No duplicate and no fallback: the landed pipeline record is the record.
  (record,) = stored
  assert audit_record(record) == {'kind': 'audit', 'path': 'pipeline'}
  assert (
      record.sealed_result_refs[call_id].record_id
      == fault.sealed_at_fault[call_id].record_id
  )
  assert resolved is not None
  # The View gets the result the stored record holds.
  assert response is not None and 'result' in response, response
  assert (
      response['result']['structuredContent']
      == resolved.full_result()['structuredContent']
  )


@pytest.mark.conformance('P3-PIPE-06', 'P3-PIPE-08', 'P2-SRS-12')
@pytest.mark.parametrize('backend', ['in_memory', 'sqlite'])
async def test_fallback_seals_its_own_record_when_a_plugin_changed_the_refused_one(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  response, resolved, stored, fault, call_id = await run_faulted_call(
      mcp_apps, tmp_path, backend, BEFORE_WRITE, plugins=(RedactResults(),)
  )

  # The refused record sealed the redacted result; the fallback is the
  # core's record (unredacted), so it cannot reuse that seal: it has its
  # own, and the stored record resolves to what it says.
  assert fault.fired and set(fault.sealed_at_fault or {}) == {call_id}
  (record,) = stored
  assert audit_record(record) == {'kind': 'audit', 'path': 'fallback'}
  assert (
      record.sealed_result_refs[call_id].record_id
      != fault.sealed_at_fault[call_id].record_id
  )
  assert resolved is not None
  (part,) = [p for p in record.content.parts if p.function_response]
  assert resolved.full_result()['content'] != REDACTED
  # The store refused to overwrite the first record (CONFLICT): it still
  # holds the redacted result the refused offer sealed.
  assert fault.first_seal is not None
  assert b'redacted by policy' in fault.first_seal.sealed_result
  assert (
      resolved.full_result()['content']
      == part.function_response.response['content']
  )
  assert response is not None and 'error' in response, response
  assert (
      response['error']['data']['reason']
      == OperationErrorReason.EVENT_PIPELINE_FAILED.value
  )
