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

"""The terminal-outcome matrix of an app-originated call: P3-TERM-01..23.

Every test drives `run_app_call` (the internal operation API) against
the real conformance server (stdio), on the render reservation of a real
Runner turn's `open_view`, over a real Session service (in-memory and
SQLite), a real `PluginManager` with a real plugin, and a real
`InMemoryArtifactService`. Each asserts the three surfaces together: the
wire (`outcome.wire`), the durable record (read back through a fresh
`get_session`) and the cached outcome (a second cache lookup). The
five-surface cases (TERM-14..23) also assert the live state and artifact
store and the audit observer output; the reading of the five surfaces is
in docs/decisions/issue21-terminal.md.

Only physically possible histories are built (TERM-13): interruptions are
forced while the server holds the call at its gate (`gated_view`),
failures come from real plugins and a real server error, and the denial
and timeout paths assert that no callback ran and no Event exists.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import contextlib
import dataclasses
import json
from pathlib import Path
from typing import Any
from typing import Optional

from google.adk.artifacts.in_memory_artifact_service import InMemoryArtifactService
from google.adk.events.event import Event
from google.adk.mcp_apps.affinity.errors import InvalidationReason
from google.adk.mcp_apps.affinity.generations import GenerationHold
from google.adk.mcp_apps.audit.pipeline import audit_record
from google.adk.mcp_apps.audit.pipeline import AuditKind
from google.adk.mcp_apps.audit.pipeline import AuditPath
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.facades.callback_context import ReadonlyCallbackContext
from google.adk.mcp_apps.facades.confirmation import AppCallConfirmation
from google.adk.mcp_apps.facades.confirmation import ConfirmationPermit
from google.adk.mcp_apps.facades.mcp_callbacks import AppPathCallbacks
from google.adk.mcp_apps.operations.app_call import AppCallRequest
from google.adk.mcp_apps.operations.app_call import OPERATION_ERROR_CODE
from google.adk.mcp_apps.operations.app_call import OPERATION_METADATA_KEY
from google.adk.mcp_apps.operations.app_call import OperationEnvironment
from google.adk.mcp_apps.operations.app_call import OperationOutcome
from google.adk.mcp_apps.operations.app_call import OperationOutcomeCache
from google.adk.mcp_apps.operations.app_call import OperationOutcomeKind
from google.adk.mcp_apps.operations.app_call import OperationSignal
from google.adk.mcp_apps.operations.app_call import run_app_call
from google.adk.mcp_apps.operations.errors import OperationErrorReason
from google.adk.mcp_apps.profile.fingerprint import binding_revision
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.plugins.plugin_manager import PluginManager
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.genai import types as genai_types
from mcp import types as mcp_types
from mcp_apps_conformance_server import names
import pytest
from sealing_support import APP
from sealing_support import bound_stack
from sealing_support import BoundStack
from sealing_support import close_profile
from sealing_support import ServerGate
from sealing_support import sql_profile
from sealing_support import TOOLSET
from sealing_support import USER
from sealing_support import widget_event

pytestmark = pytest.mark.integration

TIMEOUT = 30.0
OP = "op-1"
ARTIFACT = "receipt.txt"


class Probe(BasePlugin):
  """A real plugin: tool callbacks and both Event phases, scripted.

  Attributes:
    log: Every callback phase that ran, in order.
    observed: The Events the audit observer phase received.
    before: What `before_tool_callback` does: None, "state" (writes the
      state through its context), "artifact" (saves an artifact),
      "short" (returns a response), "raise".
    after: What `after_tool_callback` does: None or "raise".
    on_event: What `on_event_callback` does: None or "raise".
  """

  def __init__(
      self,
      before: Optional[str] = None,
      after: Optional[str] = None,
      on_event: Optional[str] = None,
  ) -> None:
    super().__init__(name="probe")
    self.before = before
    self.after = after
    self.on_event = on_event
    self.log: list[str] = []
    self.observed: list[Event] = []
    self.saved_version: Optional[int] = None
    # Teardown races (P4-TD): the before-tool callback may wait at
    # `hold_before` after its effect (`in_before` says it got there), and
    # the observer phase may tear the View down (`teardown_on_observe`).
    self.hold_before: Optional[asyncio.Event] = None
    self.in_before = asyncio.Event()
    self.teardown_on_observe: Optional[OperationSignal] = None

  async def before_tool_callback(
      self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any
  ) -> Optional[dict[str, Any]]:
    self.log.append(f"before:{tool.name}")
    if self.before == "state":
      tool_context.state["cart"] = {"items": ["A1", "B2"]}
    elif self.before == "artifact":
      self.saved_version = await tool_context.save_artifact(
          ARTIFACT, genai_types.Part(text="paid")
      )
    elif self.before == "short":
      return {"shorted": True, "tool": tool.name}
    elif self.before == "raise":
      raise RuntimeError("before_tool failed")
    self.in_before.set()
    if self.hold_before is not None:
      await self.hold_before.wait()
    return None

  async def after_tool_callback(
      self,
      *,
      tool: Any,
      tool_args: dict[str, Any],
      tool_context: Any,
      result: dict[str, Any],
  ) -> Optional[dict[str, Any]]:
    self.log.append(f"after:{tool.name}")
    if self.after == "raise":
      raise RuntimeError("after_tool failed")
    return None

  async def on_tool_error_callback(
      self,
      *,
      tool: Any,
      tool_args: dict[str, Any],
      tool_context: Any,
      error: Exception,
  ) -> Optional[dict[str, Any]]:
    self.log.append(f"error:{tool.name}")
    return None

  async def on_event_callback(
      self, *, invocation_context: Any, event: Event
  ) -> Optional[Event]:
    self.log.append("event")
    if self.on_event == "raise":
      raise RuntimeError("on_event failed")
    return None

  async def on_audit_event_callback(
      self, *, readonly_context: Any, event: Event
  ) -> None:
    self.log.append("observe")
    self.observed.append(event)
    if self.teardown_on_observe is not None:
      self.teardown_on_observe.teardown()


@dataclasses.dataclass
class Harness:
  """A bound stack over the conformance server, one View, one Session."""

  st: BoundStack
  effects: Path
  sid: str
  hold: GenerationHold
  session: Any
  artifacts: InMemoryArtifactService
  cache: OperationOutcomeCache
  events_before: int

  @property
  def server_id(self) -> str:
    server_id: str = self.st.registry.lookup(TOOLSET).spec.server_id
    return server_id

  def counts(self) -> dict[str, int]:
    """The server's execution counters, by key."""
    if not self.effects.exists() or not self.effects.read_text().strip():
      return {}
    counts: dict[str, int] = json.loads(self.effects.read_text())["counts"]
    return counts

  def environment(self, probe: Probe) -> OperationEnvironment:
    return OperationEnvironment(
        session_service=self.st.session_service,
        session=self.session,
        plugin_manager=PluginManager(plugins=[probe]),
        agent=self.st.runner.agent,
        artifact_service=self.artifacts,
    )

  def request(
      self, tool: str, arguments: dict[str, Any], **fields: Any
  ) -> AppCallRequest:
    return AppCallRequest(
        operation_id=OP,
        hold=self.hold,
        tool_name=tool,
        arguments=arguments,
        view_server_id=self.server_id,
        target_server_id=self.server_id,
        **fields,
    )

  async def run(
      self,
      probe: Probe,
      tool: str,
      arguments: dict[str, Any],
      signal: Optional[OperationSignal] = None,
      **fields: Any,
  ) -> OperationOutcome:
    return await run_app_call(
        self.request(tool, arguments, **fields),
        environment=self.environment(probe),
        cache=self.cache,
        signal=signal,
    )

  async def stored(self) -> list[Event]:
    """The Session's Events after the View rendered, read fresh."""
    session = await self.st.session_service.get_session(
        app_name=APP, user_id=USER, session_id=self.sid
    )
    assert session is not None
    return list(session.events)[self.events_before :]

  async def stored_state(self) -> dict[str, Any]:
    session = await self.st.session_service.get_session(
        app_name=APP, user_id=USER, session_id=self.sid
    )
    assert session is not None
    return dict(session.state)

  async def only_record(self, outcome: OperationOutcome) -> Event:
    """The one stored Event, which must be the outcome's record."""
    stored = await self.stored()
    assert [e.id for e in stored] == [outcome.record_id]
    return stored[0]

  async def artifact_versions(self) -> list[int]:
    return await self.artifacts.list_versions(
        app_name=APP, user_id=USER, session_id=self.sid, filename=ARTIFACT
    )


@pytest.fixture(params=["in_memory", "sqlite"])
def backend(request: pytest.FixtureRequest) -> str:
  return str(request.param)


@contextlib.asynccontextmanager
async def _harness(
    mcp_apps: Any,
    tmp_path: Path,
    backend: str,
    gate: Optional[ServerGate] = None,
) -> AsyncIterator[Harness]:
  """A Session, a real model turn rendering the View, and its hold."""
  effects = tmp_path / "effects.json"
  options: dict[str, Any] = {"effects_file": str(effects)}
  if gate is not None:
    options["gate_socket"] = gate.path
  params = StdioConnectionParams(
      server_params=mcp_apps.stdio_parameters(options), timeout=TIMEOUT
  )
  # The in-memory service cannot host the durable lifecycle fence: it runs
  # under the local-development profile; SQLite under the SQL profile.
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
      h = Harness(
          st,
          effects,
          sid,
          hold,
          session,
          InMemoryArtifactService(),
          OperationOutcomeCache(),
          len(session.events),
      )
      try:
        yield h
      finally:
        hold.release()
  finally:
    if profile is not None:
      await close_profile(profile)


def _operation(event: Event) -> dict[str, Any]:
  assert event.custom_metadata is not None
  summary: dict[str, Any] = event.custom_metadata[OPERATION_METADATA_KEY]
  return summary


def _assert_cached(h: Harness, outcome: OperationOutcome) -> None:
  """The cached outcome: a second lookup returns the very same outcome."""
  assert h.cache.get(OP) is outcome
  assert h.cache.get(OP) is h.cache.get(OP)


def _host_error_reason(outcome: OperationOutcome) -> str:
  error = outcome.wire
  assert isinstance(error, mcp_types.ErrorData), error
  assert error.code == OPERATION_ERROR_CODE
  reason: str = error.data["reason"]
  return reason


def _confirmation(
    h: Harness, answer: Optional[bool], timeout: Optional[float] = None
) -> AppCallConfirmation:
  never = asyncio.Event()

  async def approve(permit: ConfirmationPermit) -> bool:
    del permit
    if answer is None:
      await never.wait()  # The user never answers.
    return bool(answer)

  return AppCallConfirmation(
      predicate=True,
      session=SessionKey(APP, USER, h.sid),
      binding_revision=lambda: binding_revision(h.st.profile),
      approve=approve,
      state={"cart": {"items": ["A1"]}},
      timeout=timeout,
  )


# --- TERM-01..13: the matrix rows ------------------------------------------


@pytest.mark.conformance("P3-TERM-01")
async def test_success_returns_the_result_records_the_audit_event_and_caches_it(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with _harness(mcp_apps, tmp_path, backend) as h:
    probe = Probe(before="state")
    outcome = await h.run(probe, names.SIDE_EFFECT, {"key": "k1"})
    # Wire: the terminal result, from the server that executed once.
    assert isinstance(outcome.wire, mcp_types.CallToolResult)
    assert not outcome.wire.is_error
    assert outcome.wire.structured_content["key"] == "k1"
    assert h.counts() == {"k1": 1}
    # Durable: the full audit Event with the frozen-batch deltas.
    record = await h.only_record(outcome)
    assert audit_record(record) == {"kind": "audit", "path": "pipeline"}
    assert record.actions.state_delta == {"cart": {"items": ["A1", "B2"]}}
    assert _operation(record)["path"] == "result"
    (part,) = record.content.parts
    assert part.function_response.response["structuredContent"]["key"] == "k1"
    assert outcome.record_kind is AuditKind.AUDIT
    assert outcome.record_path is AuditPath.PIPELINE
    # Cached: the terminal result.
    assert outcome.kind is OperationOutcomeKind.RESULT
    _assert_cached(h, outcome)
    assert probe.log == [
        "before:side_effect",
        "after:side_effect",
        "event",
        "observe",
    ]
    # A second run of the same operation id answers from the cache.
    again = await h.run(Probe(), names.SIDE_EFFECT, {"key": "k1"})
    assert again is outcome and h.counts() == {"k1": 1}


@pytest.mark.conformance("P3-TERM-02", "P3-TERM-13")
async def test_confirmation_denial_errors_with_no_record_and_no_callback(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with _harness(mcp_apps, tmp_path, backend) as h:
    probe = Probe(before="state")
    outcome = await h.run(
        probe,
        names.SIDE_EFFECT,
        {"key": "k2"},
        confirmation=_confirmation(h, False),
    )
    assert _host_error_reason(outcome) == "confirmation_denied"
    assert outcome.record_id is None and await h.stored() == []
    assert outcome.kind is OperationOutcomeKind.ERROR
    assert outcome.cause is not None
    assert outcome.cause.reason is OperationErrorReason.CONFIRMATION_DENIED
    _assert_cached(h, outcome)
    # No callback ran and no effect exists.
    assert probe.log == [] and h.counts() == {}
    assert await h.stored_state() == {"cart": {"items": ["A1"]}}


@pytest.mark.conformance("P3-TERM-03", "P3-TERM-13")
async def test_confirmation_timeout_errors_with_no_record_and_no_callback(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with _harness(mcp_apps, tmp_path, backend) as h:
    probe = Probe(before="artifact")
    outcome = await h.run(
        probe,
        names.SIDE_EFFECT,
        {"key": "k3"},
        confirmation=_confirmation(h, None, timeout=0.05),
    )
    assert _host_error_reason(outcome) == "confirmation_timeout"
    assert outcome.record_id is None and await h.stored() == []
    assert outcome.kind is OperationOutcomeKind.ERROR
    _assert_cached(h, outcome)
    assert probe.log == [] and h.counts() == {}
    assert await h.artifact_versions() == []


@pytest.mark.conformance("P3-TERM-04")
async def test_remote_json_rpc_error_is_passed_through_and_audited(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with _harness(mcp_apps, tmp_path, backend) as h:
    probe = Probe(before="state")
    outcome = await h.run(probe, names.RPC_ERROR_VIEW, {"label": "boom"})
    error = outcome.wire
    assert isinstance(error, mcp_types.ErrorData)
    assert error.code == names.RPC_ERROR_CODE
    assert error.data == {"label": "boom"}
    record = await h.only_record(outcome)
    assert audit_record(record) == {"kind": "audit", "path": "pipeline"}
    assert record.actions.state_delta == {"cart": {"items": ["A1", "B2"]}}
    assert _operation(record)["error"]["code"] == names.RPC_ERROR_CODE
    assert outcome.kind is OperationOutcomeKind.ERROR
    assert outcome.cause.reason is OperationErrorReason.REMOTE_ERROR
    _assert_cached(h, outcome)
    assert probe.log[:2] == ["before:rpc_error_view", "error:rpc_error_view"]


@pytest.mark.conformance("P3-TERM-05")
async def test_is_error_result_follows_the_matrix_as_a_result(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with _harness(mcp_apps, tmp_path, backend) as h:
    probe = Probe(before="state")
    outcome = await h.run(
        probe, names.UI_RESULT, {"is_error": True, "label": "bad"}
    )
    result = outcome.wire
    assert isinstance(result, mcp_types.CallToolResult) and result.is_error
    record = await h.only_record(outcome)
    assert audit_record(record) == {"kind": "audit", "path": "pipeline"}
    assert record.actions.state_delta == {"cart": {"items": ["A1", "B2"]}}
    (part,) = record.content.parts
    assert part.function_response.response["isError"] is True
    assert outcome.kind is OperationOutcomeKind.RESULT
    _assert_cached(h, outcome)
    assert h.cache.get(OP).result is result


@pytest.mark.conformance("P3-TERM-06")
async def test_cancellation_sends_no_late_response_and_reconciles(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with ServerGate() as gate:
    async with _harness(mcp_apps, tmp_path, backend, gate) as h:
      signal = OperationSignal()
      probe = Probe(before="state")
      running = asyncio.ensure_future(
          h.run(probe, names.GATED_VIEW, {"tag": "c"}, signal)
      )
      await gate.entered.wait()  # The call is at the server, in flight.
      signal.cancel()
      outcome = await running
      gate.open()
      assert outcome.wire is None and outcome.tool_cancelled
      record = await h.only_record(outcome)
      assert audit_record(record) == {
          "kind": "reconciliation",
          "path": "pipeline",
      }
      assert _operation(record)["path"] == "cancelled"
      assert record.actions.state_delta == {"cart": {"items": ["A1", "B2"]}}
      assert outcome.kind is OperationOutcomeKind.CANCELLED
      assert outcome.cause.reason is OperationErrorReason.CANCELLED
      _assert_cached(h, outcome)
      assert "after:gated_view" not in probe.log


@pytest.mark.conformance("P3-TERM-07")
async def test_disconnect_sends_nothing_and_reconciles(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with ServerGate() as gate:
    async with _harness(mcp_apps, tmp_path, backend, gate) as h:
      probe = Probe(before="state")
      # The View's channel handler task goes away with its channel.
      handler = asyncio.ensure_future(
          h.run(probe, names.GATED_VIEW, {"tag": "d"})
      )
      await gate.entered.wait()
      handler.cancel()
      with pytest.raises(asyncio.CancelledError):
        await handler
      gate.open()
      outcome = h.cache.get(OP)
      assert outcome is not None
      assert outcome.wire is None and not outcome.tool_cancelled
      record = await h.only_record(outcome)
      assert audit_record(record)["kind"] == "reconciliation"
      assert _operation(record)["path"] == "disconnected"
      assert record.actions.state_delta == {"cart": {"items": ["A1", "B2"]}}
      assert outcome.kind is OperationOutcomeKind.CANCELLED
      assert outcome.cause.reason is OperationErrorReason.DISCONNECTED
      _assert_cached(h, outcome)


@pytest.mark.conformance("P3-TERM-08")
async def test_teardown_sends_nothing_and_reconciles(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with ServerGate() as gate:
    async with _harness(mcp_apps, tmp_path, backend, gate) as h:
      probe = Probe(before="state")
      running = asyncio.ensure_future(
          h.run(probe, names.GATED_VIEW, {"tag": "t"})
      )
      await gate.entered.wait()
      # The View's generation is torn down under the in-flight call.
      assert await h.st.registry.connections.invalidate(
          h.hold.generation_id, InvalidationReason.SESSION_DELETED
      )
      outcome = await running
      gate.open()
      assert outcome.wire is None and not outcome.tool_cancelled
      record = await h.only_record(outcome)
      assert audit_record(record)["kind"] == "reconciliation"
      assert _operation(record)["path"] == "teardown"
      assert record.actions.state_delta == {"cart": {"items": ["A1", "B2"]}}
      assert outcome.kind is OperationOutcomeKind.CANCELLED
      assert outcome.cause.reason is OperationErrorReason.TEARDOWN
      _assert_cached(h, outcome)


@pytest.mark.conformance("P3-TERM-09")
async def test_tool_callback_failure_errors_and_reconciles(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with _harness(mcp_apps, tmp_path, backend) as h:
    probe = Probe(before="raise")
    outcome = await h.run(probe, names.SIDE_EFFECT, {"key": "k9"})
    assert _host_error_reason(outcome) == "tool_callback_failed"
    record = await h.only_record(outcome)
    assert audit_record(record) == {
        "kind": "reconciliation",
        "path": "pipeline",
    }
    assert outcome.record_kind is AuditKind.RECONCILIATION
    assert outcome.kind is OperationOutcomeKind.ERROR
    _assert_cached(h, outcome)
    assert h.counts() == {}  # The call was never sent.


@pytest.mark.conformance("P3-TERM-10")
async def test_mcp_callback_failure_errors_and_reconciles(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with _harness(mcp_apps, tmp_path, backend) as h:

    def tool_filter(tool: Any, readonly_context: Any = None) -> bool:
      raise RuntimeError("the filter failed")

    callbacks = AppPathCallbacks(
        tool_filter=tool_filter,
        header_provider=None,
        progress_callback=None,
        context=ReadonlyCallbackContext.build(
            session=SessionKey(APP, USER, h.sid), state=h.session.state
        ),
    )
    probe = Probe(before="state")
    outcome = await h.run(
        probe, names.SIDE_EFFECT, {"key": "k10"}, callbacks=callbacks
    )
    assert _host_error_reason(outcome) == "mcp_callback_failed"
    record = await h.only_record(outcome)
    assert audit_record(record)["kind"] == "reconciliation"
    assert record.actions.state_delta == {"cart": {"items": ["A1", "B2"]}}
    assert outcome.kind is OperationOutcomeKind.ERROR
    _assert_cached(h, outcome)
    assert h.counts() == {}


@pytest.mark.conformance("P3-TERM-11")
async def test_on_event_failure_errors_with_the_core_only_fallback(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with _harness(mcp_apps, tmp_path, backend) as h:
    probe = Probe(before="state", on_event="raise")
    outcome = await h.run(probe, names.SIDE_EFFECT, {"key": "k11"})
    assert _host_error_reason(outcome) == "event_pipeline_failed"
    record = await h.only_record(outcome)
    assert audit_record(record) == {"kind": "audit", "path": "fallback"}
    assert record.actions.state_delta == {"cart": {"items": ["A1", "B2"]}}
    assert outcome.record_path is AuditPath.FALLBACK
    assert outcome.kind is OperationOutcomeKind.ERROR
    _assert_cached(h, outcome)
    assert h.counts() == {"k11": 1}  # The server did run it.


@pytest.mark.conformance("P3-TERM-12")
async def test_valid_short_circuit_returns_the_converted_result_and_audits(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with _harness(mcp_apps, tmp_path, backend) as h:
    probe = Probe(before="short")
    outcome = await h.run(probe, names.SIDE_EFFECT, {"key": "k12"})
    result = outcome.wire
    assert isinstance(result, mcp_types.CallToolResult)
    assert result.structured_content == {
        "shorted": True,
        "tool": names.SIDE_EFFECT,
    }
    assert not result.is_error
    record = await h.only_record(outcome)
    assert audit_record(record) == {"kind": "audit", "path": "pipeline"}
    assert _operation(record)["path"] == "short_circuit"
    assert outcome.kind is OperationOutcomeKind.RESULT
    _assert_cached(h, outcome)
    assert h.counts() == {}  # Short-circuited: never sent.


# --- TERM-14..23: the five-surface grid ------------------------------------

_GRID = {
    ("state", "cancel"): "P3-TERM-14",
    ("state", "disconnect"): "P3-TERM-15",
    ("state", "remote_error"): "P3-TERM-16",
    ("state", "after_failure"): "P3-TERM-17",
    ("state", "pipeline_failure"): "P3-TERM-18",
    ("artifact", "cancel"): "P3-TERM-19",
    ("artifact", "disconnect"): "P3-TERM-20",
    ("artifact", "remote_error"): "P3-TERM-21",
    ("artifact", "after_failure"): "P3-TERM-22",
    ("artifact", "pipeline_failure"): "P3-TERM-23",
}


async def _drive(h: Harness, gate: ServerGate, probe: Probe, path: str) -> Any:
  """Runs the operation down `path`; its outcome."""
  if path in ("cancel", "disconnect"):
    signal = OperationSignal()
    running = asyncio.ensure_future(
        h.run(probe, names.GATED_VIEW, {"tag": path}, signal)
    )
    await gate.entered.wait()  # In flight at the server.
    if path == "cancel":
      signal.cancel()
    else:
      signal.disconnect()
    outcome = await running
    gate.open()  # The server may answer now; nobody is listening.
    return outcome
  if path == "remote_error":
    return await h.run(probe, names.RPC_ERROR_VIEW, {"label": "grid"})
  return await h.run(probe, names.SIDE_EFFECT, {"key": "grid"})


@pytest.mark.parametrize(
    ("effect", "path"),
    [
        pytest.param(effect, path, marks=pytest.mark.conformance(case), id=case)
        for (effect, path), case in _GRID.items()
    ],
)
async def test_before_tool_effect_then_failure_holds_on_all_five_surfaces(
    mcp_apps: Any, tmp_path: Path, backend: str, effect: str, path: str
) -> None:
  async with ServerGate() as gate:
    async with _harness(mcp_apps, tmp_path, backend, gate) as h:
      probe = Probe(
          before=effect,
          after="raise" if path == "after_failure" else None,
          on_event="raise" if path == "pipeline_failure" else None,
      )
      outcome = await _drive(h, gate, probe, path)
      record = await h.only_record(outcome)
      stamp = audit_record(record)

      # (1) Wire and (3) cached outcome, per the matrix row.
      _assert_cached(h, outcome)
      if path in ("cancel", "disconnect"):
        assert outcome.wire is None
        assert outcome.tool_cancelled is (path == "cancel")
        assert outcome.kind is OperationOutcomeKind.CANCELLED
        assert stamp == {"kind": "reconciliation", "path": "pipeline"}
      elif path == "remote_error":
        assert isinstance(outcome.wire, mcp_types.ErrorData)
        assert outcome.wire.code == names.RPC_ERROR_CODE
        assert outcome.kind is OperationOutcomeKind.ERROR
        assert stamp == {"kind": "audit", "path": "pipeline"}
      elif path == "after_failure":
        assert _host_error_reason(outcome) == "tool_callback_failed"
        assert outcome.kind is OperationOutcomeKind.ERROR
        assert stamp == {"kind": "reconciliation", "path": "pipeline"}
        assert h.counts() == {"grid": 1}  # It ran; the after-tool failed.
      else:
        assert _host_error_reason(outcome) == "event_pipeline_failed"
        assert outcome.kind is OperationOutcomeKind.ERROR
        assert stamp == {"kind": "audit", "path": "fallback"}

      # (2) Durable record: exactly the frozen batch's delta of the effect;
      # (4) live state / artifact store: the effect stands, matching it.
      if effect == "state":
        expected = {"cart": {"items": ["A1", "B2"]}}
        assert record.actions.state_delta == expected
        assert record.actions.artifact_delta == {}
        assert h.session.state["cart"] == expected["cart"]
        assert (await h.stored_state())["cart"] == expected["cart"]
      else:
        assert probe.saved_version == 0
        assert record.actions.artifact_delta == {ARTIFACT: 0}
        assert record.actions.state_delta == {}
        assert await h.artifact_versions() == [0]
        saved = await h.artifacts.load_artifact(
            app_name=APP, user_id=USER, session_id=h.sid, filename=ARTIFACT
        )
        assert saved is not None and saved.text == "paid"
        assert await h.stored_state() == {"cart": {"items": ["A1"]}}

      # (5) Observer output: the record, once, as stored.
      assert [e.id for e in probe.observed] == [outcome.record_id]
      (seen,) = probe.observed
      assert seen.actions.state_delta == record.actions.state_delta
      assert seen.actions.artifact_delta == record.actions.artifact_delta


# --- P4-TD-05..10: teardown in the five-surface grid ------------------------

_TEARDOWN_GRID = {
    ("state", "in_callback"): ("P4-TD-05",),
    ("state", "at_server"): ("P4-TD-06", "P4-TD-03"),
    ("artifact", "in_callback"): ("P4-TD-07",),
    ("artifact", "at_server"): ("P4-TD-08",),
    ("state", "teardown_then_on_event_failure"): ("P4-TD-09",),
    ("state", "on_event_failure_then_teardown"): ("P4-TD-10",),
}


async def _drive_teardown(
    h: Harness, gate: ServerGate, probe: Probe, path: str
) -> OperationOutcome:
  """Runs the operation while teardown phase 1 (the View's
  `OperationSignal.teardown()`, what `ViewChannel.teardown` sends each live
  request) arrives at `path`'s moment; its outcome."""
  signal = OperationSignal()
  if path == "in_callback":
    probe.hold_before = asyncio.Event()
    running = asyncio.ensure_future(
        h.run(probe, names.SIDE_EFFECT, {"key": "td"}, signal)
    )
    await probe.in_before.wait()  # The effect is made; the callback waits.
    signal.teardown()
    return await running
  if path == "on_event_failure_then_teardown":
    probe.teardown_on_observe = signal  # After the failure's record.
    return await h.run(probe, names.SIDE_EFFECT, {"key": "td"}, signal)
  running = asyncio.ensure_future(
      h.run(probe, names.GATED_VIEW, {"tag": path}, signal)
  )
  await gate.entered.wait()  # In flight at the server.
  signal.teardown()
  outcome = await running
  gate.open()
  return outcome


@pytest.mark.parametrize(
    ("effect", "path"),
    [
        pytest.param(
            effect, path, marks=pytest.mark.conformance(*cases), id=cases[0]
        )
        for (effect, path), cases in _TEARDOWN_GRID.items()
    ],
)
async def test_teardown_after_a_before_tool_effect_holds_on_all_five_surfaces(
    mcp_apps: Any, tmp_path: Path, backend: str, effect: str, path: str
) -> None:
  async with ServerGate() as gate:
    async with _harness(mcp_apps, tmp_path, backend, gate) as h:
      probe = Probe(
          before=effect,
          on_event="raise" if "on_event_failure" in path else None,
      )
      outcome = await _drive_teardown(h, gate, probe, path)
      record = await h.only_record(outcome)
      stamp = audit_record(record)

      # (1) Wire and (3) cached outcome.
      _assert_cached(h, outcome)
      if path == "on_event_failure_then_teardown":
        # The failure decided the outcome; the later teardown suppresses
        # only what the View would get (its channel is closed).
        assert _host_error_reason(outcome) == "event_pipeline_failed"
        assert stamp == {"kind": "audit", "path": "fallback"}
        assert h.counts() == {"td": 1}
      else:
        assert outcome.wire is None and not outcome.tool_cancelled
        assert outcome.kind is OperationOutcomeKind.CANCELLED
        assert outcome.cause is not None
        assert outcome.cause.reason is OperationErrorReason.TEARDOWN
        expected_path = "fallback" if "on_event" in path else "pipeline"
        assert stamp == {"kind": "reconciliation", "path": expected_path}
        if path == "in_callback":
          assert h.counts() == {}  # Torn down before anything was sent.

      # (2) Durable record and (4) live state / artifact store: the effect
      # stands, reconciled from the frozen batch, never rolled back.
      if effect == "state":
        expected = {"cart": {"items": ["A1", "B2"]}}
        assert record.actions.state_delta == expected
        assert h.session.state["cart"] == expected["cart"]
        assert (await h.stored_state())["cart"] == expected["cart"]
      else:
        assert record.actions.artifact_delta == {ARTIFACT: 0}
        assert await h.artifact_versions() == [0]

      # (5) Observer output: the record, once, as stored.
      assert [e.id for e in probe.observed] == [outcome.record_id]
