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

"""A direct app call's tool callbacks run guarded, as a bound model call's.

`run_app_call` against the real conformance server (stdio), on the hold of
a View a real Runner turn rendered, over the in-memory and the SQLite
Session service. A callback that writes a live `session.state` it holds
directly, or appends to its Session through the live service, fails the call closed
with `TOOL_CALLBACK_FAILED`; its direct write is undone and is in neither
the stored state nor the reconciliation record. A `State` write and the
call's own hold use stay allowed. Readings: docs/decisions/issue22-rest.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from exec_ownership_support import stage
from exec_ownership_support import Stage
from google.adk.events.event import Event
from google.adk.mcp_apps.audit.pipeline import AuditKind
from google.adk.mcp_apps.event_policy.errors import EventPolicyError
from google.adk.mcp_apps.event_policy.errors import EventPolicyReason
from google.adk.mcp_apps.operations.app_call import OperationOutcome
from google.adk.mcp_apps.operations.app_call import OperationOutcomeKind
from google.adk.mcp_apps.operations.errors import OperationErrorReason
from mcp import types as mcp_types
from mcp_apps_conformance_server import names
import pytest

pytestmark = pytest.mark.integration


def assert_failed_closed(
    outcome: OperationOutcome, reason: EventPolicyReason
) -> EventPolicyError:
  """A typed TOOL_CALLBACK_FAILED outcome with a reconciliation record,
  caused by the guard's refusal; returns that refusal."""
  assert outcome.kind is OperationOutcomeKind.ERROR
  assert outcome.cause is not None
  assert outcome.cause.reason is OperationErrorReason.TOOL_CALLBACK_FAILED
  # The guard's refusal, or a callback's own (which `PluginManager`
  # re-raises as a `RuntimeError` from it).
  refusal = outcome.cause.__cause__
  if isinstance(refusal, RuntimeError):
    refusal = refusal.__cause__
  assert isinstance(refusal, EventPolicyError), refusal
  assert refusal.reason is reason
  assert isinstance(outcome.wire, mcp_types.ErrorData)
  assert outcome.record_kind is AuditKind.RECONCILIATION
  return refusal


async def assert_only_record(s: Stage, outcome: OperationOutcome) -> Event:
  """The call's record is the only Event stored after the View."""
  stored = await s.stored()
  assert [e.id for e in stored] == [outcome.record_id]
  return stored[0]


@pytest.mark.conformance("P3-BAT-18", "P4-EXEC-01")
@pytest.mark.parametrize("where", ["plugin_before", "agent_after"])
async def test_a_direct_state_write_fails_the_app_call_closed_and_is_undone(
    mcp_apps: Any, tmp_path: Path, backend: str, where: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:

    def write(tool_context: Any) -> None:
      tool_context.state["via_state"] = "kept in the batch"
      # The restricted context has no `session` (P3-BAT-19): the callback
      # reaches the live Session it holds from elsewhere.
      s.session.state["direct"] = "bypass"
      s.session.state["cart"] = {"items": []}

    async def plugin_before(**kwargs: Any) -> None:
      write(kwargs["tool_context"])

    def agent_after(**kwargs: Any) -> None:
      write(kwargs["tool_context"])

    if where == "plugin_before":
      s.recorder.before = plugin_before
    else:
      s.agent_log.after_tool[:] = [("direct", agent_after)]
    outcome = await s.call(names.SIDE_EFFECT, {"key": "g1"}, op="op-direct")
    refusal = assert_failed_closed(
        outcome, EventPolicyReason.OUT_OF_API_STATE_WRITE
    )
    assert "direct" in str(refusal) and "cart" in str(refusal)
    # The check runs when the callbacks are done, as on the model path:
    # the server was called once; its result is not released.
    assert s.counts() == {"g1": 1}
    record = await assert_only_record(s, outcome)
    assert "direct" not in record.actions.state_delta
    assert "cart" not in record.actions.state_delta
    stored = await s.stored_state()
    assert "direct" not in stored
    assert stored["cart"] == {"items": ["A1"]}
    # The live Session the callbacks saw is restored too.
    assert "direct" not in s.session.state
    assert s.session.state["cart"] == {"items": ["A1"]}


@pytest.mark.conformance("P3-BAT-18", "P4-EXEC-01")
async def test_state_writes_and_the_calls_own_hold_use_stay_allowed(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:

    async def through_state(**kwargs: Any) -> None:
      kwargs["tool_context"].state["note"] = "through State"

    s.recorder.before = through_state
    outcome = await s.call(names.SIDE_EFFECT, {"key": "g2"}, op="op-state")
    assert outcome.kind is OperationOutcomeKind.RESULT
    assert isinstance(outcome.wire, mcp_types.CallToolResult)
    assert s.counts() == {"g2": 1}
    record = await assert_only_record(s, outcome)
    assert record.actions.state_delta == {"note": "through State"}
    assert (await s.stored_state())["note"] == "through State"


@pytest.mark.conformance("P3-BAT-18", "P4-REEN-05")
@pytest.mark.parametrize("swallowed", [True, False])
async def test_a_live_service_append_from_an_app_call_callback_is_refused(
    mcp_apps: Any, tmp_path: Path, backend: str, swallowed: bool
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    raised: list[BaseException] = []

    async def append(**kwargs: Any) -> None:
      del kwargs  # The live Session comes from outside its context.
      session = s.session
      try:
        await s.st.session_service.append_event(
            session, Event(author="intruder", invocation_id="e-intruder")
        )
      except EventPolicyError as error:
        raised.append(error)
        if not swallowed:
          raise

    s.recorder.after = append
    outcome = await s.call(names.SIDE_EFFECT, {"key": "g3"}, op="op-append")
    assert len(raised) == 1
    assert isinstance(raised[0], EventPolicyError)
    assert raised[0].reason is EventPolicyReason.SAME_SESSION_REENTRY
    # Raised on, or swallowed (the guard saw it): the call fails closed.
    assert_failed_closed(outcome, EventPolicyReason.SAME_SESSION_REENTRY)
    record = await assert_only_record(s, outcome)
    assert record.author != "intruder"
    assert s.counts() == {"g3": 1}
