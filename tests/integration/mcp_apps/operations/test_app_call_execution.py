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


"""Execution ownership of a direct app call: P4-EXEC-01..05.

Every test drives `run_app_call` against the real conformance server
(stdio) on the hold of a View a real Runner turn rendered, with the
Runner's own `PluginManager` (a real recording plugin) and the Runner's
agent, whose tool, model and agent-lifecycle callbacks all log, over the
in-memory and the SQLite Session service. Readings:
docs/decisions/issue22-exec.md.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any
from typing import Optional

from exec_ownership_support import stage
from google.adk.agents.llm_agent import LlmAgent
from google.adk.mcp_apps.audit.pipeline import audit_record
from google.adk.mcp_apps.bootstrap.read_only import read_only_reason
from google.adk.mcp_apps.bootstrap.read_only import ReadOnlyReason
from google.adk.mcp_apps.bootstrap.read_only import ReadOnlyRender
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.facades.confirmation import AppCallConfirmation
from google.adk.mcp_apps.facades.confirmation import ConfirmationPermit
from google.adk.mcp_apps.operations.app_call import OPERATION_ERROR_CODE
from google.adk.mcp_apps.operations.app_call import OperationOutcomeKind
from google.adk.mcp_apps.operations.app_call import OperationSignal
from google.adk.mcp_apps.operations.errors import OperationErrorReason
from google.adk.mcp_apps.profile.fingerprint import binding_revision
from mcp import types as mcp_types
from mcp_apps_conformance_server import names
import pytest
from sealing_support import APP
from sealing_support import ServerGate
from sealing_support import TOOLSET
from sealing_support import USER

pytestmark = pytest.mark.integration

MODEL_OR_LIFECYCLE = {
    "plugin_before_run",
    "plugin_after_run",
    "plugin_before_agent",
    "plugin_after_agent",
    "plugin_before_model",
    "plugin_after_model",
    "agent_before_model",
    "agent_after_model",
    "agent_before_agent",
    "agent_after_agent",
}


def _none(**kwargs: Any) -> None:
  del kwargs


@pytest.mark.conformance("P4-EXEC-01", "P4-EXEC-02")
async def test_direct_call_runs_plugin_then_agent_tool_chains_and_no_model_or_agent_callbacks(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:

    def note(**kwargs: Any) -> None:
      kwargs["tool_context"].state["agent_note"] = kwargs["tool"].name

    def mutate(**kwargs: Any) -> None:
      # An in-place change without a return is discarded.
      kwargs["tool_response"]["structuredContent"]["key"] = "mutated"

    def replace(**kwargs: Any) -> dict[str, Any]:
      seen = kwargs["tool_response"]["structuredContent"]["key"]
      return {"replaced_by": "agent", "seen": seen}

    s.agent_log.before_tool[:] = [("first", note), ("second", _none)]
    s.agent_log.after_tool[:] = [("mutate", mutate), ("replace", replace)]
    outcome = await s.call(names.SIDE_EFFECT, {"key": "e1"})

    # Plugins first, then the agent's chain, for each phase, in order.
    assert s.recorder.log == [
        "plugin_before_tool:side_effect",
        "plugin_after_tool:side_effect",
        "plugin_on_event",
        "plugin_observe",
    ]
    assert s.agent_log.log == [
        "agent_before_tool:first:side_effect",
        "agent_before_tool:second:side_effect",
        "agent_after_tool:mutate:side_effect",
        "agent_after_tool:replace:side_effect",
    ]
    # EXEC-02: no model, agent-lifecycle or run callback ran.
    assert not MODEL_OR_LIFECYCLE & set(s.recorder.log + s.agent_log.log)
    assert s.counts() == {"e1": 1}
    # The returned value replaced the result; the mutation was discarded
    # (the next callback in the chain saw the shared copy, the wire not).
    result = outcome.wire
    assert isinstance(result, mcp_types.CallToolResult)
    assert result.structured_content == {
        "replaced_by": "agent",
        "seen": "mutated",
    }
    # The agent callback's state write is the call's batch, recorded.
    (record,) = await s.stored()
    assert record.id == outcome.record_id
    assert record.actions.state_delta == {"agent_note": names.SIDE_EFFECT}
    assert (await s.stored_state())["agent_note"] == names.SIDE_EFFECT


@pytest.mark.conformance("P4-EXEC-01")
async def test_a_plugin_answer_skips_the_agent_chain_of_that_phase(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:

    async def plugin_answers(**kwargs: Any) -> dict[str, Any]:
      return {"from": "plugin"}

    s.recorder.before = plugin_answers
    s.agent_log.before_tool[:] = [("skipped", lambda **kw: {"from": "agent"})]
    s.agent_log.after_tool[:] = [("after", _none)]
    outcome = await s.call(names.SIDE_EFFECT, {"key": "e2"})
    assert s.agent_log.log == ["agent_after_tool:after:side_effect"]
    assert s.counts() == {}  # The short-circuit sent nothing.
    assert isinstance(outcome.wire, mcp_types.CallToolResult)
    assert outcome.wire.structured_content == {"from": "plugin"}
    (record,) = await s.stored()
    assert record.custom_metadata["mcp_app_operation"]["path"] == (
        "short_circuit"
    )


@pytest.mark.conformance("P4-EXEC-01")
async def test_the_agent_before_chain_short_circuits_and_its_error_chain_answers(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    s.agent_log.before_tool[:] = [("answer", lambda **kw: {"from": "agent"})]
    short = await s.call(names.SIDE_EFFECT, {"key": "e3"}, op="op-short")
    assert s.counts() == {}
    assert isinstance(short.wire, mcp_types.CallToolResult)
    assert short.wire.structured_content == {"from": "agent"}

    # A remote JSON-RPC error: the plugins' error phase (no answer), then
    # the agent's error chain, whose answer is the result.
    s.clear_logs()
    s.agent_log.before_tool[:] = []
    s.agent_log.on_tool_error[:] = [
        ("silent", _none),
        ("recover", lambda **kw: {"recovered": True}),
    ]
    recovered = await s.call(
        names.RPC_ERROR_VIEW, {"label": "x"}, op="op-error"
    )
    assert s.recorder.log[:3] == [
        "plugin_before_tool:rpc_error_view",
        "plugin_on_tool_error:rpc_error_view",
        "plugin_after_tool:rpc_error_view",
    ]
    assert s.agent_log.log[:2] == [
        "agent_on_tool_error:silent:rpc_error_view",
        "agent_on_tool_error:recover:rpc_error_view",
    ]
    assert isinstance(recovered.wire, mcp_types.CallToolResult)
    assert recovered.wire.structured_content == {"recovered": True}
    assert recovered.kind is OperationOutcomeKind.RESULT

    # An after-tool callback that raises runs the error chains (RFC §5);
    # an answer there is the result.
    s.clear_logs()

    def boom(**kwargs: Any) -> None:
      raise RuntimeError("after failed")

    s.agent_log.after_tool[:] = [("boom", boom)]
    raised = await s.call(names.SIDE_EFFECT, {"key": "e4"}, op="op-raise")
    assert s.counts() == {"e4": 1}
    assert isinstance(raised.wire, mcp_types.CallToolResult)
    assert raised.wire.structured_content == {"recovered": True}
    assert isinstance(s.agent_log.errors[-1], RuntimeError)


def _confirmation(s: Any, answer: bool) -> AppCallConfirmation:
  async def approve(permit: ConfirmationPermit) -> bool:
    del permit
    return answer

  return AppCallConfirmation(
      predicate=True,
      session=SessionKey(APP, USER, s.sid),
      binding_revision=lambda: binding_revision(s.st.profile),
      approve=approve,
      state={"cart": {"items": ["A1"]}},
  )


@pytest.mark.conformance("P4-EXEC-03")
async def test_confirmation_preflight_gates_every_callback_chain(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    s.agent_log.before_tool[:] = [("before", _none)]
    denied = await s.call(
        names.SIDE_EFFECT,
        {"key": "c1"},
        op="op-denied",
        confirmation=_confirmation(s, False),
    )
    error = denied.wire
    assert isinstance(error, mcp_types.ErrorData)
    assert error.data == {"reason": "confirmation_denied"}
    # Denied in the sealed preflight: no plugin or agent callback, no
    # server call, no record.
    assert s.recorder.log == [] and s.agent_log.log == []
    assert s.counts() == {} and await s.stored() == []

    approved = await s.call(
        names.SIDE_EFFECT,
        {"key": "c2"},
        op="op-approved",
        confirmation=_confirmation(s, True),
    )
    assert isinstance(approved.wire, mcp_types.CallToolResult)
    assert s.counts() == {"c2": 1}
    assert s.agent_log.log == ["agent_before_tool:before:side_effect"]


@pytest.mark.conformance("P4-EXEC-03")
async def test_cancellation_reaches_both_error_chains_for_cleanup_and_stays_cancelled(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with ServerGate() as gate:
    async with stage(mcp_apps, tmp_path, backend, gate=gate) as s:
      s.agent_log.on_tool_error[:] = [("cleanup", lambda **kw: {"no": 1})]
      signal = OperationSignal()
      running = asyncio.ensure_future(
          s.call(names.GATED_VIEW, {"tag": "x"}, signal=signal)
      )
      await gate.entered.wait()  # In flight at the server.
      signal.cancel()
      outcome = await asyncio.wait_for(running, 10)
      gate.open()
      # As for a model call: the plugins' and the agent's error callbacks
      # got the cancellation, their answers ignored; no after-tool phase.
      assert isinstance(s.recorder.errors[-1], asyncio.CancelledError)
      assert isinstance(s.agent_log.errors[-1], asyncio.CancelledError)
      assert "plugin_after_tool:gated_view" not in s.recorder.log
      assert outcome.wire is None and outcome.tool_cancelled
      assert outcome.kind is OperationOutcomeKind.CANCELLED
      (record,) = await s.stored()
      assert audit_record(record)["kind"] == "reconciliation"


@pytest.mark.conformance("P4-EXEC-03")
async def test_a_failed_call_is_not_retried_silently(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(
      mcp_apps, tmp_path, backend, options={"crashing_tool": True}
  ) as s:
    outcome = await s.call(names.CRASH_VIEW, {})
    # The server got the call once; the failure is the outcome, never a
    # second attempt on a fresh connection.
    assert s.tool_calls(names.CRASH_VIEW) == 1
    assert outcome.kind is not OperationOutcomeKind.RESULT
    assert outcome.cause is not None
    assert outcome.cause.reason in (
        OperationErrorReason.TEARDOWN,
        OperationErrorReason.CALL_FAILED,
    )
    again = await s.call(names.CRASH_VIEW, {})
    assert again is outcome and s.tool_calls(names.CRASH_VIEW) == 1


@pytest.mark.conformance("P4-EXEC-04", "P2-REF-03")
async def test_a_direct_call_of_a_ui_tool_emits_no_nested_widget(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    outcome = await s.call(names.OPEN_VIEW, {}, profile=s.st.profile)
    assert isinstance(outcome.wire, mcp_types.CallToolResult)
    (record,) = await s.stored()
    # No nested View: no widget on the record, no render reservation for
    # the call; the result is sealed under an Event-level reference.
    assert not record.actions.render_ui_widgets
    assert (
        s.st.registry.render_reservations.peek(TOOLSET, s.key, "op-1") is None
    )
    assert set(record.sealed_result_refs or {}) == {"op-1"}


@pytest.mark.parametrize("gone", ["none", "not_in_tree"])
@pytest.mark.conformance("P4-EXEC-05")
async def test_a_missing_originating_agent_is_refused_typed_with_read_only_render(
    mcp_apps: Any, tmp_path: Path, backend: str, gone: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    agent: Optional[Any] = None
    if gone == "not_in_tree":
      agent = LlmAgent(name="retired")
    s.agent_log.before_tool[:] = [("before", _none)]
    outcome = await s.call(
        names.SIDE_EFFECT, {"key": "m1"}, environment=s.environment(agent=agent)
    )
    error = outcome.wire
    assert isinstance(error, mcp_types.ErrorData)
    assert error.code == OPERATION_ERROR_CODE
    assert error.data == {"reason": "missing_agent"}
    assert outcome.cause is not None
    reason = outcome.cause.reason
    assert reason is OperationErrorReason.ORIGINATING_AGENT_MISSING
    # Nothing ran and nothing was recorded.
    assert s.recorder.log == [] and s.agent_log.log == []
    assert s.counts() == {} and await s.stored() == []
    # The host shows the read-only render for the View.
    render = ReadOnlyRender("view", read_only_reason(reason.value))
    assert render.reason is ReadOnlyReason.MISSING_AGENT
