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

"""The result authority on app-originated calls (`run_app_call`).

A profile-bound View `tools/call` leaves a private candidate; its audit
Event's approved public fields (after the restricted `on_event` merge) are
sealed over the candidate's hidden fields at append, under an Event-level
`sealedResultRefs` entry, and the View's wire result and cached outcome are
that same merge. Real conformance server (stdio; a modern 2026-07-28
stateless HTTP connection for the era check), real Runner turn rendering
the View, real PluginManager, InMemory and SQLite Session services.
Readings: docs/decisions/issue21-app-results.md.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
import contextlib
import copy
import dataclasses
from pathlib import Path
from typing import Any
from typing import Callable
from typing import Optional

from binding_support import conformance_connection
from google.adk.events.event import Event
from google.adk.mcp_apps.affinity.generations import ConnectionEra
from google.adk.mcp_apps.affinity.generations import GenerationHold
from google.adk.mcp_apps.audit.pipeline import audit_record
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.operations.app_call import AppCallRequest
from google.adk.mcp_apps.operations.app_call import OperationEnvironment
from google.adk.mcp_apps.operations.app_call import OperationOutcome
from google.adk.mcp_apps.operations.app_call import OperationOutcomeCache
from google.adk.mcp_apps.operations.app_call import OperationOutcomeKind
from google.adk.mcp_apps.operations.app_call import run_app_call
from google.adk.mcp_apps.sealing.resolver import GatedResultResolver
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.plugins.plugin_manager import PluginManager
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from mcp import types as mcp_types
from mcp_apps_conformance_server import names
import pytest
from sealing_support import APP
from sealing_support import bound_stack
from sealing_support import BoundStack
from sealing_support import close_profile
from sealing_support import OracleResolver
from sealing_support import sql_profile
from sealing_support import TOOLSET
from sealing_support import USER
from sealing_support import widget_event

pytestmark = pytest.mark.integration

OP = "op-app-1"
REDACTED = "[redacted by on_event]"
MODERN_FLAG = "ADK_ENABLE_MCP_MODERN_PROTOCOL"

EventChange = Callable[[Event], Optional[Event]]


def _redact_responses(event: Event) -> None:
  assert event.content is not None
  for part in event.content.parts or ():
    response = part.function_response
    if response is not None:
      redacted = copy.deepcopy(dict(response.response or {}))
      redacted["content"] = [{"type": "text", "text": REDACTED}]
      response.response = redacted


def _replacement_redaction(event: Event) -> Event:
  replacement = event.model_copy(deep=True)
  _redact_responses(replacement)
  return replacement


def _in_place_redaction(event: Event) -> None:
  _redact_responses(event)


def _escalate_and_redact(event: Event) -> Event:
  replacement = _replacement_redaction(event)
  replacement.actions.escalate = True
  replacement.actions.transfer_to_agent = "elsewhere"
  return replacement


class Policy(BasePlugin):
  """A real plugin: a scripted before-tool step and `on_event` change."""

  def __init__(
      self,
      change: Optional[EventChange] = None,
      before: Optional[str] = None,
  ) -> None:
    super().__init__(name="policy_under_test")
    self.change = change
    self.before = before

  async def before_tool_callback(
      self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any
  ) -> Optional[dict[str, Any]]:
    del tool, tool_args
    if self.before == "state":
      tool_context.state["cart"] = {"items": ["A1", "B2"]}
    elif self.before == "raise":
      raise RuntimeError("before_tool failed")
    return None

  async def on_event_callback(
      self, *, invocation_context: Any, event: Event
  ) -> Optional[Event]:
    del invocation_context
    if self.change is None or not event.get_function_responses():
      return None
    return self.change(event)


@dataclasses.dataclass
class Harness:
  """One rendered View over a profile-bound stack."""

  st: BoundStack
  sid: str
  hold: GenerationHold
  session: Any
  cache: OperationOutcomeCache
  events_before: int

  async def run(
      self, plugin: Policy, tool: str, arguments: dict[str, Any]
  ) -> OperationOutcome:
    server_id = self.st.registry.lookup(TOOLSET).spec.server_id
    return await run_app_call(
        AppCallRequest(
            operation_id=OP,
            hold=self.hold,
            tool_name=tool,
            arguments=arguments,
            view_server_id=server_id,
            target_server_id=server_id,
            profile=self.st.profile,
            toolset_id=TOOLSET,
        ),
        environment=OperationEnvironment(
            session_service=self.st.session_service,
            session=self.session,
            plugin_manager=PluginManager(plugins=[plugin]),
            agent=self.st.runner.agent,
        ),
        cache=self.cache,
    )

  async def only_record(self, outcome: OperationOutcome) -> Event:
    session = await self.st.session_service.get_session(
        app_name=APP, user_id=USER, session_id=self.sid
    )
    assert session is not None
    stored: list[Event] = list(session.events)[self.events_before :]
    assert [e.id for e in stored] == [outcome.record_id]
    return stored[0]

  async def sealed(self, record: Event) -> dict[str, Any]:
    """The full result the record's Event-level reference releases."""
    resolver = OracleResolver(self.st.profile, self.st.session_service)
    resolved = await resolver.resolve(
        SessionKey(APP, USER, self.sid),
        event_id=record.id,
        function_call_id=OP,
    )
    full: dict[str, Any] = resolved.full_result()
    return full


@pytest.fixture(params=["in_memory", "sqlite"])
def backend(request: pytest.FixtureRequest) -> str:
  return str(request.param)


@contextlib.asynccontextmanager
async def _harness(
    params: Any, tmp_path: Path, backend: str
) -> AsyncIterator[Harness]:
  profile: Any = None
  service: Any = InMemorySessionService()
  if backend == "sqlite":
    profile = await sql_profile(f"sqlite+aiosqlite:///{tmp_path / 'stores.db'}")
    service = SqliteSessionService(str(tmp_path / "sessions.db"))
  try:
    async with bound_stack(
        params, session_service=service, profile=profile
    ) as st:
      created = await service.create_session(
          app_name=APP, user_id=USER, state={"cart": {"items": ["A1"]}}
      )
      sid = str(created.id)
      event = widget_event(await st.turn(sid, (names.OPEN_VIEW, {})))
      (call_id,) = [w.id for w in event.actions.render_ui_widgets]
      hold = st.registry.render_reservations.take(
          TOOLSET, SessionKey(APP, USER, sid), call_id
      )
      assert hold is not None
      session = await service.get_session(
          app_name=APP, user_id=USER, session_id=sid
      )
      assert session is not None
      try:
        yield Harness(
            st, sid, hold, session, OperationOutcomeCache(), len(session.events)
        )
      finally:
        hold.release()
  finally:
    if profile is not None:
      await close_profile(profile)


def _stdio(mcp_apps: Any, tmp_path: Path) -> Any:
  options = {"effects_file": str(tmp_path / "effects.json")}
  return conformance_connection("stdio", options, mcp_apps, None)


def _response(record: Event) -> dict[str, Any]:
  assert record.content is not None and record.content.parts
  (part,) = record.content.parts
  assert part.function_response is not None
  assert part.function_response.id == OP
  response = part.function_response.response
  assert isinstance(response, dict)
  return response


def _public(result: dict[str, Any]) -> dict[str, Any]:
  return {k: v for k, v in result.items() if k in ("content", "isError")}


def _wire(outcome: OperationOutcome) -> dict[str, Any]:
  assert isinstance(outcome.wire, mcp_types.CallToolResult), outcome.wire
  dumped: dict[str, Any] = outcome.wire.model_dump(
      mode="json", by_alias=True, exclude_none=True
  )
  return dumped


@pytest.mark.conformance("P3-TERM-01", "P3-RES-36")
async def test_profile_bound_app_call_seals_its_result_under_an_event_ref(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with _harness(_stdio(mcp_apps, tmp_path), tmp_path, backend) as h:
    outcome = await h.run(Policy(), names.SIDE_EFFECT, {"key": "k1"})
    record = await h.only_record(outcome)
    sealed = await h.sealed(record)

  assert outcome.kind is OperationOutcomeKind.RESULT
  assert audit_record(record) == {"kind": "audit", "path": "pipeline"}
  # Event-level placement: an interactive app call renders nothing.
  assert set(record.sealed_result_refs or {}) == {OP}
  assert not record.actions.render_ui_widgets
  # The seal is the server's full result: wire, record and seal agree.
  wire = _wire(outcome)
  assert wire["structuredContent"]["key"] == "k1"
  assert sealed == wire
  assert _public(_response(record)) == _public(sealed)
  assert h.cache.get(OP) is outcome


@pytest.mark.conformance("P3-RES-13", "P3-RES-36")
async def test_returned_on_event_redaction_reaches_record_wire_and_seal(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with _harness(_stdio(mcp_apps, tmp_path), tmp_path, backend) as h:
    outcome = await h.run(
        Policy(_replacement_redaction), names.SIDE_EFFECT, {"key": "k2"}
    )
    record = await h.only_record(outcome)
    sealed = await h.sealed(record)

  redacted = [{"type": "text", "text": REDACTED}]
  # Model-facing record, View (wire and cache) and seal: one result.
  assert _response(record)["content"] == redacted
  assert sealed["content"] == redacted
  wire = _wire(outcome)
  assert wire["content"] == redacted
  assert wire == sealed
  # Hidden fields come only from the call's own candidate.
  assert sealed["structuredContent"]["key"] == "k2"
  assert outcome.kind is OperationOutcomeKind.RESULT
  assert h.cache.get(OP) is outcome


@pytest.mark.conformance("P3-RES-15", "P3-RES-36")
async def test_in_place_on_event_redaction_reaches_record_wire_and_seal(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with _harness(_stdio(mcp_apps, tmp_path), tmp_path, backend) as h:
    outcome = await h.run(
        Policy(_in_place_redaction), names.SIDE_EFFECT, {"key": "k4"}
    )
    record = await h.only_record(outcome)
    sealed = await h.sealed(record)

  redacted = [{"type": "text", "text": REDACTED}]
  # The redaction of the copy, returned or not, is the one result.
  assert _response(record)["content"] == redacted
  assert sealed["content"] == redacted
  assert _wire(outcome) == sealed
  assert sealed["structuredContent"]["key"] == "k4"
  assert outcome.kind is OperationOutcomeKind.RESULT


@pytest.mark.conformance("P3-RES-30", "P3-RES-36")
async def test_modern_connection_result_is_revalidated_and_sealed(
    mcp_apps: Any,
    tmp_path: Path,
    start_server: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
  monkeypatch.setenv(MODERN_FLAG, "1")
  params = conformance_connection(
      "modern_http",
      {"effects_file": str(tmp_path / "effects.json")},
      mcp_apps,
      start_server,
  )
  async with _harness(params, tmp_path, "in_memory") as h:
    assert h.hold.generation.era is ConnectionEra.MODERN
    outcome = await h.run(
        Policy(_replacement_redaction), names.SIDE_EFFECT, {"key": "k3"}
    )
    record = await h.only_record(outcome)
    sealed = await h.sealed(record)

  assert outcome.kind is OperationOutcomeKind.RESULT
  assert set(record.sealed_result_refs or {}) == {OP}
  assert sealed["content"] == [{"type": "text", "text": REDACTED}]
  assert sealed["structuredContent"]["key"] == "k3"
  assert _wire(outcome) == sealed


@pytest.mark.conformance("P3-ACT-15")
async def test_forbidden_controls_beside_deltas_fail_the_wire_typed(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with _harness(_stdio(mcp_apps, tmp_path), tmp_path, backend) as h:
    outcome = await h.run(
        Policy(_escalate_and_redact, before="state"),
        names.SIDE_EFFECT,
        {"key": "k4"},
    )
    record = await h.only_record(outcome)

  # Wire: a typed policy error.
  error = outcome.wire
  assert isinstance(error, mcp_types.ErrorData), error
  assert error.data["reason"] == "event_policy_refused"
  assert error.data["policy_reason"]
  # Durable: the deltas committed, the controls stripped.
  assert record.actions.state_delta == {"cart": {"items": ["A1", "B2"]}}
  assert not record.actions.escalate
  assert record.actions.transfer_to_agent is None
  # Cached: an error.
  assert outcome.kind is OperationOutcomeKind.ERROR
  assert h.cache.get(OP) is outcome


@pytest.mark.conformance("P3-PROV-10")
async def test_reconciliation_record_keeps_ingress_origin_and_system_emitter(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with _harness(_stdio(mcp_apps, tmp_path), tmp_path, backend) as h:
    outcome = await h.run(
        Policy(before="raise"), names.SIDE_EFFECT, {"key": "k5"}
    )
    record = await h.only_record(outcome)

  assert audit_record(record) == {"kind": "reconciliation", "path": "pipeline"}
  assert record.invocation_origin == "mcp_app"
  assert record.emitter == "system"
  assert not record.sealed_result_refs
  assert outcome.kind is OperationOutcomeKind.ERROR


def _non_terminal(event: Event) -> Event:
  replacement = event.model_copy(deep=True)
  assert replacement.content is not None
  for part in replacement.content.parts or ():
    response = part.function_response
    if response is not None and response.response is not None:
      response.response = {**response.response, "resultType": "input_required"}
  return replacement


@pytest.mark.conformance("P3-RES-30")
async def test_modern_merge_with_a_non_terminal_result_type_is_refused(
    mcp_apps: Any,
    tmp_path: Path,
    start_server: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
  monkeypatch.setenv(MODERN_FLAG, "1")
  params = conformance_connection(
      "modern_http",
      {"effects_file": str(tmp_path / "effects.json")},
      mcp_apps,
      start_server,
  )
  async with _harness(params, tmp_path, "in_memory") as h:
    assert h.hold.generation.era is ConnectionEra.MODERN
    outcome = await h.run(
        Policy(_non_terminal), names.SIDE_EFFECT, {"key": "k6"}
    )
    record = await h.only_record(outcome)

  # The merge did not re-validate: nothing sealed, the View gets an error.
  assert outcome.kind is OperationOutcomeKind.ERROR
  assert isinstance(outcome.wire, mcp_types.ErrorData)
  assert audit_record(record) == {"kind": "audit", "path": "fallback"}
  assert not record.sealed_result_refs
  assert h.cache.get(OP) is outcome
