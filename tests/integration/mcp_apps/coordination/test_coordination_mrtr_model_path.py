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

"""A model-originated input round inside a Runner turn: P4-MRTR-10, 11;
P4-REEN-06, 15.

The scripted model calls the conformance server's plain `mrtr_elicit`
tool (no `_meta.ui`: it runs on the toolset's fully-callbacked model
connection, stdio, handshake era), whose one `Resolve` elicitation round
reaches the toolset's configured `elicitation_callback` while the call is
in flight. While that callback waits, the turn still owns its Session;
the callback completing through the same Session (`run_async`,
`rewind_async`) is refused with a typed `CoordinationError` at once,
nothing is queued, and the turn completes with the elicited answer. Every
wait is bounded (`BOUND`): a deadlock fails the test.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import contextlib
from typing import Any
from typing import Optional

from coordination_support import Attempt
from coordination_support import BOUND
from coordination_support import call_entry
from coordination_support import collect
from coordination_support import key
from coordination_support import texts
from google.adk.mcp_apps.coordination.coordinator import Ownership
from google.adk.mcp_apps.coordination.coordinator import session_coordinator
from google.adk.mcp_apps.coordination.errors import CoordinationError
from google.adk.mcp_apps.coordination.errors import CoordinationErrorReason
from google.adk.tools.mcp_tool.mcp_session_manager import StdioConnectionParams
from mcp import types as mcp_types
from mcp_apps_conformance_server import names
import pytest
from sealing_support import bound_stack
from sealing_support import BoundStack

pytestmark = pytest.mark.integration

SERVER_TIMEOUT = 30.0
TOOL = names.MRTR_ELICIT


class ElicitingTurn:
  """The turn's elicitation callback and what it saw.

  Attributes:
    owner_at_tool: The Session's owner when the tool call began (the
      turn's ownership, seen by an agent before-tool callback).
    owner_in_round: The Session's owner while the elicitation waited.
    attempts: The same-Session entry points the callback tried.
    entries: Which entry points to try.
  """

  def __init__(self, entries: tuple[str, ...]) -> None:
    self.entries = entries
    self.runner: Any = None
    self.session_id = ""
    self.owner_at_tool: Optional[Ownership] = None
    self.owner_in_round: Optional[Ownership] = None
    self.attempts: list[Attempt] = []
    self.rounds = 0

  async def before_tool(self, tool: Any, args: Any, tool_context: Any) -> None:
    del tool, args
    self.owner_at_tool = session_coordinator().owner(
        key(tool_context.session.id)
    )

  async def elicitation(self, context: Any, params: Any) -> Any:
    del context, params
    self.rounds += 1
    self.owner_in_round = session_coordinator().owner(key(self.session_id))
    for entry in self.entries:
      self.attempts.append(
          await call_entry(self.runner, entry, self.session_id)
      )
    return mcp_types.ElicitResult(action="accept", content={"approve": True})


@contextlib.asynccontextmanager
async def eliciting_stack(
    session_service: Any, mcp_apps: Any, turn: ElicitingTurn
) -> AsyncIterator[BoundStack]:
  """A bound stack whose model calls `mrtr_elicit` once per turn."""
  params = StdioConnectionParams(
      server_params=mcp_apps.stdio_parameters({"single_round_tools": True}),
      timeout=SERVER_TIMEOUT,
  )
  async with bound_stack(
      params,
      session_service=session_service,
      agent_fields={"before_tool_callback": turn.before_tool},
      elicitation_callback=turn.elicitation,
  ) as st:
    turn.runner = st.runner
    st.llm.steps = [[(TOOL, {})]]
    yield st
  assert not session_coordinator()._owners  # pylint: disable=protected-access
  assert not session_coordinator()._waiters  # pylint: disable=protected-access


def tool_answer(events: list[Any]) -> dict[str, Any]:
  """The model-visible response of the turn's one `mrtr_elicit` call."""
  (response,) = [
      part.function_response.response
      for event in events
      if event.content
      for part in event.content.parts or ()
      if part.function_response is not None
  ]
  return dict(response)


@pytest.mark.conformance("P4-MRTR-10")
async def test_the_turn_keeps_its_session_while_a_model_elicitation_waits(
    session_service: Any, mcp_apps: Any
) -> None:
  """P4-MRTR-10: the elicitation round waits under the turn's ownership.

  When the elicitation callback runs, the coordinator's owner of the
  Session is the very ownership the turn held when the tool call began;
  the round completes and the turn ends with the elicited answer.
  """
  turn = ElicitingTurn(())
  async with eliciting_stack(session_service, mcp_apps, turn) as st:
    turn.session_id = await st.new_session()
    events = await asyncio.wait_for(
        collect(st.runner, turn.session_id, "go"), BOUND
    )
    assert turn.rounds == 1
    assert turn.owner_at_tool is not None
    assert turn.owner_at_tool.operation == "Runner.run_async"
    assert turn.owner_in_round is turn.owner_at_tool
    assert texts(events) == ["done"]
    assert tool_answer(events)["structuredContent"] == {
        "era": "legacy",
        "round": "elicitation",
        "elicitationAction": "accept",
        "approved": True,
    }
    assert session_coordinator().owner(key(turn.session_id)) is None


@pytest.mark.conformance("P4-MRTR-11", "P4-REEN-06", "P4-REEN-15")
async def test_same_session_completion_from_the_elicitation_is_refused(
    session_service: Any, mcp_apps: Any
) -> None:
  """P4-MRTR-11, P4-REEN-06, P4-REEN-15: refused at once, no deadlock.

  The elicitation callback, while the turn waits on it, tries to finish
  the round through the same Session (`run_async`, `rewind_async`). Each
  is refused with `CoordinationError(SAME_SESSION_REENTRY)` before it
  waits (nothing queued, within `BOUND`); nothing it would have written is
  stored; the round then answers and the turn completes.
  """
  turn = ElicitingTurn(("run_async", "rewind_async"))
  async with eliciting_stack(session_service, mcp_apps, turn) as st:
    turn.session_id = await st.new_session()
    events = await asyncio.wait_for(
        collect(st.runner, turn.session_id, "go"), BOUND
    )
    assert [a.entry for a in turn.attempts] == ["run_async", "rewind_async"]
    for attempt, operation in zip(
        turn.attempts, ("Runner.run_async", "Runner.rewind_async")
    ):
      assert isinstance(attempt.error, CoordinationError), attempt
      assert attempt.error.reason is (
          CoordinationErrorReason.SAME_SESSION_REENTRY
      )
      assert attempt.error.operation == operation
      assert attempt.waiting == 0
    assert texts(events) == ["done"]
    assert tool_answer(events)["structuredContent"]["approved"] is True
    stored = await st.stored_events(turn.session_id)
    assert texts(stored) == ["go", "done"]
    assert "nested run_async" not in texts(stored)
