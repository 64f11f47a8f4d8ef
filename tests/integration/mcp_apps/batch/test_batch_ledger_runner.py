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

"""An admitted all-UI batch runs over one `EventBatchEffects` ledger.

Real Runner turns whose scripted model makes two parallel UI calls on a
registry-bound toolset over the conformance server; the effects are
written by the agent's own tool callbacks, ordered with barriers so each
case runs in both commit orders. What is asserted is what the stored
Session holds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any
from typing import Optional

from batch_support import BatchConversation
from batch_support import one_turn
from batch_support import Served
from google.adk.artifacts.in_memory_artifact_service import InMemoryArtifactService
from google.adk.events.event import Event
from google.adk.mcp_apps.batch.errors import BatchError
from google.adk.mcp_apps.batch.errors import BatchErrorReason
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from mcp_apps_conformance_server import names
import pytest

pytestmark = pytest.mark.integration

IDS = ["call-a", "call-b"]
BATCH = [(names.SIDE_EFFECT, {"key": "ledger"}), (names.OPEN_VIEW, {})]


class Ordered:
  """Lets the callbacks of two calls act in a chosen order.

  `turn(call_id)` returns once every call before `call_id` in `order` has
  called `done`.
  """

  def __init__(self, order: list[str]) -> None:
    self.order = order
    self._done = {call_id: asyncio.Event() for call_id in order}

  async def turn(self, call_id: str) -> None:
    for earlier in self.order[: self.order.index(call_id)]:
      await self._done[earlier].wait()

  def done(self, call_id: str) -> None:
    self._done[call_id].set()


def _merged(stored: list[Event]) -> Event:
  (merged,) = [e for e in stored if e.get_function_responses()]
  return merged


@pytest.mark.conformance("P3-BAT-01")
@pytest.mark.conformance("P3-BAT-02")
@pytest.mark.conformance("P3-BAT-03")
@pytest.mark.conformance("P3-BAT-05")
@pytest.mark.conformance("P3-BAT-07")
@pytest.mark.parametrize(
    "order", [IDS, IDS[::-1]], ids=["a_then_b", "b_then_a"]
)
async def test_sibling_writes_to_one_key_resolve_by_call_id_order(
    serve: Callable[..., Served], session_service: Any, order: list[str]
) -> None:
  ordered = Ordered(order)
  seen_live: dict[str, Any] = {}

  async def after_tool(
      tool: BaseTool,
      args: dict[str, Any],
      tool_context: ToolContext,
      tool_response: Any,
  ) -> Optional[dict[str, Any]]:
    call_id = tool_context.function_call_id
    assert call_id is not None
    await ordered.turn(call_id)
    tool_context.state["winner"] = call_id
    tool_context.state[f"only-{call_id}"] = True
    # Applied live at once: the Session's own state shows it.
    seen_live[call_id] = tool_context.session.state["winner"]
    ordered.done(call_id)
    return None

  outcome = await one_turn(
      serve(),
      session_service,
      BATCH,
      ids=IDS,
      after_tool_callback=after_tool,
  )
  assert seen_live == {call_id: call_id for call_id in order}
  merged = _merged(outcome.stored)
  # The greatest id wins whichever call wrote last; both calls' own keys
  # are in the one merged Event.
  assert merged.actions.state_delta == {
      "winner": "call-b",
      "only-call-a": True,
      "only-call-b": True,
  }
  assert outcome.state["winner"] == "call-b"


@pytest.mark.conformance("P3-BAT-08")
@pytest.mark.parametrize(
    "order", [IDS, IDS[::-1]], ids=["a_then_b", "b_then_a"]
)
async def test_artifact_collision_records_the_applied_winner(
    serve: Callable[..., Served], session_service: Any, order: list[str]
) -> None:
  ordered = Ordered(order)
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
    await tool_context.save_artifact(
        "report.txt", types.Part(text=f"written by {call_id}")
    )
    ordered.done(call_id)
    return None

  outcome = await one_turn(
      serve(),
      session_service,
      BATCH,
      ids=IDS,
      after_tool_callback=after_tool,
      artifact_service=artifacts,
  )
  merged = _merged(outcome.stored)
  # The last save is the stored latest version, and the one recorded.
  assert merged.actions.artifact_delta == {"report.txt": 1}
  latest = await artifacts.load_artifact(
      app_name="batch",
      user_id="u",
      session_id=outcome.session_id,
      filename="report.txt",
  )
  assert latest is not None and latest.text == f"written by {order[-1]}"


@pytest.mark.conformance("P3-BAT-06")
async def test_write_after_freeze_fails_typed_and_is_not_stored(
    serve: Callable[..., Served], session_service: Any
) -> None:
  kept: list[ToolContext] = []

  async def after_tool(
      tool: BaseTool,
      args: dict[str, Any],
      tool_context: ToolContext,
      tool_response: Any,
  ) -> Optional[dict[str, Any]]:
    kept.append(tool_context)
    return None

  served = serve()
  async with BatchConversation(
      served.connection_params,
      session_service,
      after_tool_callback=after_tool,
  ) as talk:
    await talk.turn(BATCH, ids=IDS)
    with pytest.raises(BatchError) as late:
      kept[0].state["late"] = 1
    await talk.turn([])
    state = await talk.state()
    stored = await talk.stored()
  assert late.value.reason is BatchErrorReason.FROZEN
  assert "late" not in state
  assert all("late" not in e.actions.state_delta for e in stored)


@pytest.mark.conformance("P3-BAT-17")
async def test_direct_delta_map_write_fails_closed(
    serve: Callable[..., Served], session_service: Any
) -> None:
  refused: list[BatchError] = []

  async def after_tool(
      tool: BaseTool,
      args: dict[str, Any],
      tool_context: ToolContext,
      tool_response: Any,
  ) -> Optional[dict[str, Any]]:
    try:
      tool_context.actions.state_delta["smuggled"] = True
    except BatchError as error:
      refused.append(error)
    # Replacing the map is discarded: the ledger is the record.
    tool_context.actions.state_delta = {"replaced": True}
    return None

  outcome = await one_turn(
      serve(),
      session_service,
      BATCH,
      ids=IDS,
      after_tool_callback=after_tool,
  )
  assert [e.reason for e in refused] == [BatchErrorReason.OUT_OF_API] * 2
  merged = _merged(outcome.stored)
  assert merged.actions.state_delta == {}
  assert "smuggled" not in outcome.state
  assert "replaced" not in outcome.state


@pytest.mark.conformance("P3-MIX-23")
async def test_all_non_ui_bound_batch_stores_what_an_unbound_one_does(
    serve: Callable[..., Served], session_service: Any
) -> None:
  served = serve()
  batch = [(names.WHOAMI, {}), (names.READ_EFFECTS, {})]

  async def after_tool(
      tool: BaseTool,
      args: dict[str, Any],
      tool_context: ToolContext,
      tool_response: Any,
  ) -> Optional[dict[str, Any]]:
    tool_context.state["last"] = tool_context.function_call_id
    return None

  bound = await one_turn(
      served, session_service, batch, ids=IDS, after_tool_callback=after_tool
  )
  unbound = await one_turn(
      served,
      session_service,
      batch,
      ids=IDS,
      after_tool_callback=after_tool,
      bound=False,
  )
  assert sorted(bound.ran) == sorted(unbound.ran)
  assert sorted(bound.ran) == sorted([names.WHOAMI, names.READ_EFFECTS])

  def shape(events: list[Event]) -> list[dict[str, Any]]:
    return [
        e.model_dump(
            mode="json",
            exclude={"id", "timestamp", "invocation_id", "content"},
        )
        | {
            "responses": [
                (r.id, r.name, sorted((r.response or {}).keys()))
                for r in e.get_function_responses()
            ]
        }
        for e in events
    ]

  assert shape(bound.stored) == shape(unbound.stored)
  assert bound.state == unbound.state
