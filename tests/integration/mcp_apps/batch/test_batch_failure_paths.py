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

"""Failure paths of an admitted all-UI batch, and mutations outside the API.

Real Runner turns whose scripted model makes two parallel UI calls on a
registry-bound toolset over the conformance server, on the InMemory and
the SQLite Session services. The frozen batch is observed by wrapping
`EventBatchEffects.freeze` (the original runs; its result is kept).
Readings: docs/decisions/issue21-batch.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any
from typing import Optional

from batch_support import APP
from batch_support import BatchConversation
from batch_support import EventRecorder
from batch_support import Served
from batch_support import USER
from google.adk.artifacts.in_memory_artifact_service import InMemoryArtifactService
from google.adk.events.event import Event
from google.adk.mcp_apps.batch import ledger
from google.adk.mcp_apps.batch.errors import BatchError
from google.adk.mcp_apps.batch.errors import BatchErrorReason
from google.adk.mcp_apps.event_policy.errors import EventPolicyError
from google.adk.mcp_apps.event_policy.errors import EventPolicyReason
from google.adk.mcp_apps.sealing.errors import SealingError
from google.adk.mcp_apps.sealing.errors import SealingErrorReason
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from mcp_apps_conformance_server import names
import pytest

pytestmark = pytest.mark.integration

IDS = ["call-a", "call-b"]
BATCH = [(names.SIDE_EFFECT, {"key": "ledger"}), (names.OPEN_VIEW, {})]
REPLACED = {"content": [{"type": "text", "text": "replaced by after_tool"}]}
RECOVERED = {"content": [{"type": "text", "text": "recovered on error"}]}


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> list[ledger.FrozenBatch]:
  """Every frozen batch of the test, in freeze order."""
  kept: list[ledger.FrozenBatch] = []
  original = ledger.EventBatchEffects.freeze

  def freeze(self: ledger.EventBatchEffects) -> ledger.FrozenBatch:
    batch = original(self)
    kept.append(batch)
    return batch

  monkeypatch.setattr(ledger.EventBatchEffects, "freeze", freeze)
  return kept


def _with_deltas(stored: list[Event]) -> list[Event]:
  return [
      e for e in stored if e.actions.state_delta or e.actions.artifact_delta
  ]


def _response(event: Event, call_id: str) -> dict[str, Any]:
  (response,) = [
      r.response for r in event.get_function_responses() if r.id == call_id
  ]
  assert response is not None
  return response


def _model_saw(talk: BatchConversation) -> str:
  return "".join(c.model_dump_json() for c in talk.llm.requests[-1].contents)


class Ordered:
  """`turn(call_id)` returns once every call before it in `order` is done."""

  def __init__(self, order: list[str]) -> None:
    self.order = order
    self._done = {call_id: asyncio.Event() for call_id in order}

  async def turn(self, call_id: str) -> None:
    for earlier in self.order[: self.order.index(call_id)]:
      await self._done[earlier].wait()

  def done(self, call_id: str) -> None:
    self._done[call_id].set()


@pytest.mark.conformance("P3-BAT-09")
@pytest.mark.parametrize(
    "order", [IDS, IDS[::-1]], ids=["writer_first", "failure_first"]
)
async def test_a_failing_siblings_batch_keeps_the_writers_effects(
    serve: Callable[..., Served],
    session_service: Any,
    frozen: list[ledger.FrozenBatch],
    order: list[str],
) -> None:
  ordered = Ordered(order)

  async def after_tool(
      tool: BaseTool,
      args: dict[str, Any],
      tool_context: ToolContext,
      tool_response: Any,
  ) -> Optional[dict[str, Any]]:
    call_id = tool_context.function_call_id
    assert call_id is not None
    await ordered.turn(call_id)
    ordered.done(call_id)
    if call_id == "call-b":
      raise RuntimeError("sibling callback failed")
    tool_context.state["written_by_a"] = True
    return None

  async with BatchConversation(
      serve().connection_params, session_service, after_tool_callback=after_tool
  ) as talk:
    with pytest.raises(RuntimeError, match="sibling callback failed"):
      await talk.turn(BATCH, ids=IDS)
    stored = await talk.stored()
    state = await talk.state()
  (batch,) = frozen
  assert dict(batch.state_delta) == {"written_by_a": True}
  # The writer's effect stands, and what is stored of it is the frozen
  # batch: one Event whose deltas are the frozen deltas.
  assert state["written_by_a"] is True
  (merged,) = _with_deltas(stored)
  assert merged.actions.state_delta == dict(batch.state_delta)
  assert merged.actions.artifact_delta == dict(batch.artifact_delta)


@pytest.mark.conformance("P3-BAT-12")
@pytest.mark.parametrize(
    "order", [IDS, IDS[::-1]], ids=["a_then_b", "b_then_a"]
)
async def test_a_restarted_service_reads_the_frozen_order(
    serve: Callable[..., Served],
    tmp_path: Path,
    frozen: list[ledger.FrozenBatch],
    order: list[str],
) -> None:
  ordered = Ordered(order)
  url = f"sqlite+aiosqlite:///{tmp_path / 'restart.db'}"
  artifacts = InMemoryArtifactService()

  async def after_tool(
      tool: BaseTool,
      args: dict[str, Any],
      tool_context: ToolContext,
      tool_response: Any,
  ) -> Optional[dict[str, Any]]:
    call_id = tool_context.function_call_id
    assert call_id is not None
    await ordered.turn(call_id)
    suffix = call_id[-1]
    tool_context.state[f"z-{suffix}"] = call_id
    tool_context.state["shared"] = call_id
    tool_context.state[f"a-{suffix}"] = call_id
    await tool_context.save_artifact(f"{suffix}.txt", types.Part(text=call_id))
    ordered.done(call_id)
    return None

  first = DatabaseSessionService(db_url=url)
  try:
    async with BatchConversation(
        serve().connection_params,
        first,
        after_tool_callback=after_tool,
        artifact_service=artifacts,
    ) as talk:
      await talk.turn(BATCH, ids=IDS)
      session_id = talk.session_id
  finally:
    await first.close()
  restarted = DatabaseSessionService(db_url=url)
  try:
    session = await restarted.get_session(
        app_name=APP, user_id=USER, session_id=session_id
    )
  finally:
    await restarted.close()
  assert session is not None
  (batch,) = frozen
  (merged,) = _with_deltas(list(session.events))
  # Whatever order the calls wrote in, the restarted read lists the keys
  # as the ascending-id run writes them, which is the frozen order.
  assert list(merged.actions.state_delta.items()) == [
      ("z-a", "call-a"),
      ("shared", "call-b"),
      ("a-a", "call-a"),
      ("z-b", "call-b"),
      ("a-b", "call-b"),
  ]
  assert list(merged.actions.state_delta.items()) == list(
      batch.state_delta.items()
  )
  assert list(merged.actions.artifact_delta.items()) == list(
      batch.artifact_delta.items()
  )
  assert list(merged.actions.artifact_delta) == ["a.txt", "b.txt"]
  assert session.state["shared"] == "call-b"


@pytest.mark.conformance("P3-BAT-13")
async def test_an_effect_stands_under_an_after_tool_replacement(
    serve: Callable[..., Served],
    session_service: Any,
    frozen: list[ledger.FrozenBatch],
) -> None:

  async def after_tool(
      tool: BaseTool,
      args: dict[str, Any],
      tool_context: ToolContext,
      tool_response: Any,
  ) -> Optional[dict[str, Any]]:
    tool_context.state[f"effect-{tool_context.function_call_id}"] = 1
    if tool_context.function_call_id == "call-b":
      return dict(REPLACED)
    return None

  async with BatchConversation(
      serve().connection_params, session_service, after_tool_callback=after_tool
  ) as talk:
    await talk.turn(BATCH, [], ids=IDS)
    stored = await talk.stored()
    state = await talk.state()
    model_saw = _model_saw(talk)
  (batch,) = frozen
  (merged,) = _with_deltas(stored)
  assert state["effect-call-b"] == 1
  assert merged.actions.state_delta == dict(batch.state_delta)
  assert merged.actions.state_delta == {"effect-call-a": 1, "effect-call-b": 1}
  # The stored (approved) response of call-b is the replacement, and it
  # is what the model was sent.
  assert _response(merged, "call-b")["content"] == REPLACED["content"]
  assert "replaced by after_tool" in model_saw


@pytest.mark.conformance("P3-BAT-14")
@pytest.mark.parametrize(
    "recovered, sibling_finishes",
    [(False, True), (False, False), (True, True)],
    ids=["raised_after_sibling", "raised_alone", "recovered"],
)
async def test_an_effect_stands_when_its_callback_then_raises(
    serve: Callable[..., Served],
    session_service: Any,
    frozen: list[ledger.FrozenBatch],
    recovered: bool,
    sibling_finishes: bool,
) -> None:
  sibling_done = asyncio.Event()
  never = asyncio.Event()

  async def after_tool(
      tool: BaseTool,
      args: dict[str, Any],
      tool_context: ToolContext,
      tool_response: Any,
  ) -> Optional[dict[str, Any]]:
    call_id = tool_context.function_call_id
    if call_id == "call-b":
      if not sibling_finishes:
        # Held until the failure cancels it: it writes nothing.
        await never.wait()
      tool_context.state["effect-call-b"] = 1
      sibling_done.set()
      return None
    if sibling_finishes:
      await sibling_done.wait()
    tool_context.state["effect-call-a"] = 1
    await tool_context.save_artifact("a.txt", types.Part(text="saved"))
    raise RuntimeError("after the effect")

  async def on_tool_error(
      tool: BaseTool,
      args: dict[str, Any],
      tool_context: ToolContext,
      error: Exception,
  ) -> Optional[dict[str, Any]]:
    return dict(RECOVERED)

  artifacts = InMemoryArtifactService()
  options: dict[str, Any] = {
      "after_tool_callback": after_tool,
      "artifact_service": artifacts,
  }
  if recovered:
    options["on_tool_error_callback"] = on_tool_error
  async with BatchConversation(
      serve().connection_params, session_service, **options
  ) as talk:
    if recovered:
      await talk.turn(BATCH, [], ids=IDS)
      assert "recovered on error" in _model_saw(talk)
    else:
      with pytest.raises(RuntimeError, match="after the effect"):
        await talk.turn(BATCH, ids=IDS)
    stored = await talk.stored()
    state = await talk.state()
    saved = await artifacts.load_artifact(
        app_name=APP,
        user_id=USER,
        session_id=talk.session_id,
        filename="a.txt",
    )
  (batch,) = frozen
  written = {"effect-call-a": 1}
  if sibling_finishes:
    written["effect-call-b"] = 1
  assert dict(batch.state_delta) == written
  # The failing call's own effects stand: stored state, artifact service.
  assert {k: state[k] for k in written} == written
  assert saved is not None and saved.text == "saved"
  # One stored Event records them, and its deltas are the frozen batch.
  (merged,) = _with_deltas(stored)
  assert merged.actions.state_delta == dict(batch.state_delta)
  assert merged.actions.artifact_delta == {"a.txt": 0}
  assert merged.actions.artifact_delta == dict(batch.artifact_delta)
  if recovered:
    assert _response(merged, "call-a")["content"] == RECOVERED["content"]
  elif sibling_finishes:
    # The failure path kept the finished sibling's response only.
    assert [r.id for r in merged.get_function_responses()] == ["call-b"]
  else:
    assert merged.get_function_responses() == []


@pytest.mark.conformance("P3-BAT-18")
async def test_an_artifact_map_write_outside_the_api_fails_closed(
    serve: Callable[..., Served],
    session_service: Any,
    frozen: list[ledger.FrozenBatch],
) -> None:
  refused: list[BatchError] = []

  async def after_tool(
      tool: BaseTool,
      args: dict[str, Any],
      tool_context: ToolContext,
      tool_response: Any,
  ) -> Optional[dict[str, Any]]:
    tool_context.state[f"kept-{tool_context.function_call_id}"] = 1
    for attempt in (
        lambda: tool_context.actions.artifact_delta.update(forged="v9"),
        lambda: tool_context.actions.state_delta.pop(
            f"kept-{tool_context.function_call_id}"
        ),
    ):
      try:
        attempt()
      except BatchError as error:
        refused.append(error)
    return None

  async with BatchConversation(
      serve().connection_params, session_service, after_tool_callback=after_tool
  ) as talk:
    await talk.turn(BATCH, ids=IDS)
    stored = await talk.stored()
    state = await talk.state()
  assert [e.reason for e in refused] == [BatchErrorReason.OUT_OF_API] * 4
  (batch,) = frozen
  (merged,) = _with_deltas(stored)
  # Nothing of the refused mutations is recorded; the API writes stand.
  assert merged.actions.artifact_delta == {} == dict(batch.artifact_delta)
  assert merged.actions.state_delta == {"kept-call-a": 1, "kept-call-b": 1}
  assert state["kept-call-a"] == state["kept-call-b"] == 1


@pytest.mark.conformance("P3-BAT-15")
async def test_a_refused_batch_event_is_reconciled_by_the_frozen_deltas(
    serve: Callable[..., Served],
    session_service: Any,
    frozen: list[ledger.FrozenBatch],
    tmp_path: Path,
) -> None:

  async def after_tool(
      tool: BaseTool,
      args: dict[str, Any],
      tool_context: ToolContext,
      tool_response: Any,
  ) -> Optional[dict[str, Any]]:
    call_id = tool_context.function_call_id
    assert call_id is not None
    tool_context.state[f"effect-{call_id}"] = call_id
    await tool_context.save_artifact(f"{call_id}.txt", types.Part(text=call_id))
    return None

  async def rename_sibling(invocation_context: Any, event: Event) -> None:
    # The merge is rejected: a sibling's FunctionResponse no longer
    # correlates with its call.
    event.get_function_responses()[-1].name = "renamed"

  artifacts = InMemoryArtifactService()
  async with BatchConversation(
      serve().connection_params,
      session_service,
      after_tool_callback=after_tool,
      artifact_service=artifacts,
      plugins=[EventRecorder(rename_sibling)],
  ) as talk:
    with pytest.raises(SealingError) as raised:
      await talk.turn(BATCH, ids=IDS)
    stored = await talk.stored()
    state = await talk.state()
    saved = [
        await artifacts.load_artifact(
            app_name=APP,
            user_id=USER,
            session_id=talk.session_id,
            filename=f"{call_id}.txt",
        )
        for call_id in IDS
    ]
  assert raised.value.reason is SealingErrorReason.RESULT_CORRELATION
  (batch,) = frozen
  # The saves stand in the artifact service.
  assert [part.text if part else None for part in saved] == IDS
  # One stored Event records the batch: exactly the frozen deltas, in
  # the frozen order, and nothing of the refused Event (no response, no
  # widget, no reference: nothing resolvable).
  (reconciled,) = _with_deltas(stored)
  assert list(reconciled.actions.state_delta.items()) == list(
      batch.state_delta.items()
  )
  assert list(reconciled.actions.artifact_delta.items()) == list(
      batch.artifact_delta.items()
  )
  assert dict(batch.artifact_delta) == {"call-a.txt": 0, "call-b.txt": 0}
  assert reconciled.content is None
  assert not reconciled.actions.render_ui_widgets
  assert not reconciled.sealed_result_refs
  assert not [e for e in stored if e.get_function_responses()]
  written = {f"effect-{call_id}": call_id for call_id in IDS}
  assert {k: state[k] for k in written} == written
  if isinstance(session_service, DatabaseSessionService):
    fresh = DatabaseSessionService(
        db_url=f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}"
    )
    try:
      reread = await fresh.get_session(
          app_name=APP, user_id=USER, session_id=talk.session_id
      )
    finally:
      await fresh.close()
    assert reread is not None
    assert {k: reread.state[k] for k in written} == written
    (again,) = _with_deltas(list(reread.events))
    assert list(again.actions.state_delta.items()) == list(
        batch.state_delta.items()
    )
    assert list(again.actions.artifact_delta.items()) == list(
        batch.artifact_delta.items()
    )


@pytest.mark.conformance("P3-BAT-18")
@pytest.mark.parametrize("where", ["before_tool", "after_tool"])
async def test_a_direct_session_state_write_fails_closed(
    serve: Callable[..., Served],
    session_service: Any,
    frozen: list[ledger.FrozenBatch],
    where: str,
) -> None:

  async def callback(tool_context: ToolContext) -> None:
    call_id = tool_context.function_call_id
    tool_context.state[f"kept-{call_id}"] = 1
    if call_id == "call-a":
      tool_context.session.state["direct"] = "outside the API"
      tool_context.session.state["before"] = "overwritten"

  async def before_tool(
      tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
  ) -> None:
    await callback(tool_context)

  async def after_tool(
      tool: BaseTool,
      args: dict[str, Any],
      tool_context: ToolContext,
      tool_response: Any,
  ) -> None:
    await callback(tool_context)

  hook = {"before_tool": before_tool, "after_tool": after_tool}[where]
  async with BatchConversation(
      serve().connection_params,
      session_service,
      **{f"{where}_callback": hook},
  ) as talk:
    with pytest.raises(EventPolicyError) as raised:
      await talk.turn(BATCH, ids=IDS)
    stored = await talk.stored()
    state = await talk.state()
  assert raised.value.reason is EventPolicyReason.OUT_OF_API_STATE_WRITE
  (batch,) = frozen
  # The direct writes are undone, in no ledger and in no stored state;
  # the API write of the failing call stands and is recorded.
  assert "direct" not in state and state["before"] == 1
  assert "direct" not in batch.state_delta
  assert batch.state_delta["kept-call-a"] == 1
  (merged,) = _with_deltas(stored)
  assert merged.actions.state_delta == dict(batch.state_delta)


@pytest.mark.conformance("P3-BAT-18")
async def test_a_single_bound_calls_direct_state_write_fails_closed(
    serve: Callable[..., Served],
    session_service: Any,
) -> None:

  async def after_tool(
      tool: BaseTool,
      args: dict[str, Any],
      tool_context: ToolContext,
      tool_response: Any,
  ) -> None:
    tool_context.state["kept"] = 1
    tool_context.session.state["direct"] = 1

  async with BatchConversation(
      serve().connection_params, session_service, after_tool_callback=after_tool
  ) as talk:
    with pytest.raises(EventPolicyError) as raised:
      await talk.turn([(names.OPEN_VIEW, {})], ids=["call-a"])
    stored = await talk.stored()
    state = await talk.state()
  assert raised.value.reason is EventPolicyReason.OUT_OF_API_STATE_WRITE
  assert "direct" not in state
  # No ledger outside a batch: the failed call's Event is not stored.
  assert not [e for e in stored if e.get_function_responses()]


@pytest.mark.conformance("P3-BAT-18")
async def test_a_live_service_append_from_a_tool_callback_is_refused(
    serve: Callable[..., Served],
    session_service: Any,
) -> None:
  attempts: list[EventPolicyError] = []

  async def after_tool(
      tool: BaseTool,
      args: dict[str, Any],
      tool_context: ToolContext,
      tool_response: Any,
  ) -> None:
    if tool_context.function_call_id != "call-a":
      return
    forged = Event(
        invocation_id=tool_context.invocation_id,
        author="forger",
        content=types.Content(role="model", parts=[types.Part(text="forged")]),
    )
    try:
      await tool_context.session_service.append_event(
          session=tool_context.session, event=forged
      )
    except EventPolicyError as refused:
      # Swallowed: the call still fails closed.
      attempts.append(refused)

  async with BatchConversation(
      serve().connection_params, session_service, after_tool_callback=after_tool
  ) as talk:
    with pytest.raises(EventPolicyError) as raised:
      await talk.turn(BATCH, ids=IDS)
    stored = await talk.stored()
  assert [a.reason for a in attempts] == [
      EventPolicyReason.SAME_SESSION_REENTRY
  ]
  assert raised.value.reason is EventPolicyReason.SAME_SESSION_REENTRY
  assert not [e for e in stored if e.author == "forger"]


@pytest.mark.conformance("P3-BAT-18")
async def test_an_unbound_callbacks_direct_write_stays_upstreams(
    serve: Callable[..., Served],
    session_service: Any,
) -> None:

  async def after_tool(
      tool: BaseTool,
      args: dict[str, Any],
      tool_context: ToolContext,
      tool_response: Any,
  ) -> None:
    tool_context.session.state["direct"] = tool_context.function_call_id

  async with BatchConversation(
      serve().connection_params,
      session_service,
      bound=False,
      after_tool_callback=after_tool,
  ) as talk:
    await talk.turn(BATCH, [], ids=IDS)
    live = await talk.runner.session_service.get_session(
        app_name=APP, user_id=USER, session_id=talk.session_id
    )
  # Upstream: nothing refuses it, and no Event records it.
  assert live is not None
  assert "direct" not in live.state
