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

"""A direct app call's tool callbacks get the restricted app-call context.

Against the real conformance server (stdio), on a View a real Runner turn
rendered, over the in-memory and the SQLite Session service: a View's
`tools/call` (through its `ViewChannel`, or `run_app_call`) hands its
plugins and its agent's tool callbacks an `AppCallToolContext`: read-only
identifiers, snapshot state reads, ledgered state writes and
`save_artifact`. Every other access raises a typed `FacadeError` and fails
the call closed with `TOOL_CALLBACK_FAILED` (a reconciliation record), even
when the callback caught it. A model call of the same tool still gets
ADK's full `ToolContext`. Readings:
docs/decisions/issue25-restricted-context.md.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from channel_support import call
from channel_support import open_channel
from exec_ownership_support import stage
from google.adk.artifacts.in_memory_artifact_service import InMemoryArtifactService
from google.adk.events.event_actions import EventActions
from google.adk.mcp_apps.audit.pipeline import AuditKind
from google.adk.mcp_apps.facades.app_call_context import AppCallToolContext
from google.adk.mcp_apps.facades.errors import FacadeError
from google.adk.mcp_apps.facades.errors import FacadeErrorReason
from google.adk.mcp_apps.operations.app_call import OperationOutcomeKind
from google.adk.mcp_apps.operations.errors import OperationErrorReason
from google.adk.tools.tool_context import ToolContext
from google.genai import types as genai_types
from mcp import types as mcp_types
from mcp_apps_conformance_server import names
import pytest

pytestmark = pytest.mark.integration


def _forbidden() -> dict[str, tuple[Callable[[Any], Any], FacadeErrorReason]]:
  """Each access outside the app-call surface, with its typed refusal."""

  def assign(context: Any) -> None:
    context.function_call_id = "forged"

  def delete_state(context: Any) -> None:
    del context.state["cart"]

  unavailable = FacadeErrorReason.UNAVAILABLE
  return {
      name: (lambda c, n=name: getattr(c, n), unavailable)
      for name in (
          "session",
          "actions",
          "_invocation_context",
          "session_service",
          "artifact_service",
          "credential_service",
          "memory_service",
          "runner",
          "plugin_manager",
          "agent",
          "load_artifact",
          "get_auth_response",
          "request_credential",
          "request_confirmation",
          "search_memory",
      )
  } | {
      "set function_call_id": (assign, FacadeErrorReason.READ_ONLY),
      "del state key": (delete_state, FacadeErrorReason.READ_ONLY),
  }


@pytest.mark.conformance("P3-BAT-19")
async def test_a_view_call_callback_sees_only_ids_state_and_ledger_apis(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    seen: dict[str, Any] = {}
    agent_seen: list[Any] = []

    async def before(*, tool: Any, tool_args: Any, tool_context: Any) -> None:
      seen["context"] = tool_context
      seen["ids"] = (
          tool_context.app_name,
          tool_context.user_id,
          tool_context.session_id,
          tool_context.function_call_id,
          tool_context.agent_name,
          tool_context.immediate_caller,
          tool_context.invocation_origin,
          tool_context.branch,
      )
      seen["invocation_id"] = tool_context.invocation_id
      seen["cart"] = tool_context.state["cart"]
      try:
        tool_context.state["cart"]["items"].append("forged")
      except FacadeError as error:
        seen["nested"] = error.reason
      tool_context.state["note"] = {"by": tool.name}

    def agent_after(**kwargs: Any) -> None:
      agent_seen.append(kwargs["tool_context"])

    s.recorder.before = before
    s.agent_log.after_tool[:] = [("seen", agent_after)]
    channel = await open_channel(s)
    response = await channel.handle(
        call(1, names.SIDE_EFFECT, {"key": "r1"}), token=channel.token
    )
    assert response is not None and "result" in response
    assert not response["result"].get("isError")
    context = seen["context"]
    # Neither a ToolContext nor anything live; the agent chain gets it too.
    assert isinstance(context, AppCallToolContext)
    assert not isinstance(context, ToolContext)
    assert agent_seen == [context]
    op = f"{channel.operation_prefix}:1"
    agent_name = s.st.runner.agent.name
    assert seen["ids"] == (
        s.key.app_name,
        s.key.user_id,
        s.sid,
        op,
        agent_name,
        "app",
        "mcp_app",
        None,
    )
    # A read is a deep-read-only snapshot; a nested change is refused.
    assert seen["cart"] == {"items": ["A1"]}
    assert seen["nested"] is FacadeErrorReason.READ_ONLY
    # The ledgered write lands in the audit Event's state_delta, and in the
    # stored state; the refused nested change in neither.
    (record,) = await s.stored()
    assert record.id == s.cache.get(op).record_id
    assert record.invocation_id == seen["invocation_id"]
    assert record.actions.state_delta == {"note": {"by": names.SIDE_EFFECT}}
    stored = await s.stored_state()
    assert stored["note"] == {"by": names.SIDE_EFFECT}
    assert stored["cart"] == {"items": ["A1"]}
    assert s.counts() == {"r1": 1}


@pytest.mark.conformance("P3-BAT-19")
async def test_every_access_outside_the_context_fails_the_call_closed(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    raised: list[BaseException] = []
    current: dict[str, Any] = {}

    async def before(*, tool: Any, tool_args: Any, tool_context: Any) -> None:
      tool_context.state["effect"] = current["name"]
      try:
        current["access"](tool_context)
      except FacadeError as error:
        raised.append(error)
        if not current["swallow"]:
          raise

    s.recorder.before = before
    records: list[str] = []
    for index, (name, (access, reason)) in enumerate(_forbidden().items()):
      swallow = index % 2 == 0
      current.update(name=name, access=access, swallow=swallow)
      raised.clear()
      outcome = await s.call(names.SIDE_EFFECT, {"key": name}, op=f"op-{index}")
      # The typed refusal, whether the callback caught it or not.
      assert len(raised) == 1, name
      assert isinstance(raised[0], FacadeError)
      assert raised[0].reason is reason, name
      assert outcome.kind is OperationOutcomeKind.ERROR, name
      assert outcome.cause is not None
      assert outcome.cause.reason is OperationErrorReason.TOOL_CALLBACK_FAILED
      cause = outcome.cause.__cause__
      if isinstance(cause, RuntimeError):  # `PluginManager` re-raises.
        cause = cause.__cause__
      assert isinstance(cause, FacadeError), name
      assert isinstance(outcome.wire, mcp_types.ErrorData)
      assert outcome.wire.data == {
          "reason": OperationErrorReason.TOOL_CALLBACK_FAILED.value
      }
      assert outcome.record_kind is AuditKind.RECONCILIATION
      records.append(outcome.record_id)
      # The effect made before the refusal stands, reconciled.
      (record,) = [e for e in await s.stored() if e.id == outcome.record_id]
      assert record.actions.state_delta == {"effect": name}
    # Nothing ran remotely, and nothing but the pipeline's records was
    # appended.
    assert s.counts() == {}
    assert [e.id for e in await s.stored()] == records
    assert (await s.stored_state())["cart"] == {"items": ["A1"]}


@pytest.mark.conformance("P3-BAT-19")
async def test_save_artifact_is_ledgered_into_the_audit_event(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    artifacts = InMemoryArtifactService()
    versions: list[int] = []

    async def before(*, tool: Any, tool_args: Any, tool_context: Any) -> None:
      versions.append(
          await tool_context.save_artifact(
              "receipt.txt", genai_types.Part(text="paid")
          )
      )

    s.recorder.before = before
    outcome = await s.call(
        names.SIDE_EFFECT,
        {"key": "a1"},
        op="op-artifact",
        environment=s.environment(artifact_service=artifacts),
    )
    assert outcome.kind is OperationOutcomeKind.RESULT
    (record,) = await s.stored()
    assert record.id == outcome.record_id
    assert record.actions.artifact_delta == {"receipt.txt": versions[0]}
    saved = await artifacts.load_artifact(
        app_name=s.key.app_name,
        user_id=s.key.user_id,
        session_id=s.sid,
        filename="receipt.txt",
    )
    assert saved is not None and saved.text == "paid"


@pytest.mark.conformance("P3-BAT-19")
async def test_a_model_call_of_the_same_tool_keeps_the_full_tool_context(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    seen: list[tuple[Any, str, Any]] = []

    async def before(*, tool: Any, tool_args: Any, tool_context: Any) -> None:
      # Upstream's live surface is there on the model path.
      seen.append((tool_context, tool_context.session.id, tool_context.actions))
      tool_context.state["model_note"] = "through State"

    s.recorder.before = before
    await s.st.turn(s.sid, (names.SIDE_EFFECT, {"key": "m1"}))
    ((context, session_id, actions),) = seen
    assert session_id == s.sid
    assert isinstance(actions, EventActions)
    assert isinstance(context, ToolContext)
    assert not isinstance(context, AppCallToolContext)
    assert context.immediate_caller == "model"
    assert s.counts() == {"m1": 1}
    assert (await s.stored_state())["model_note"] == "through State"
