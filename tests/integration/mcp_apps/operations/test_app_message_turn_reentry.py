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

"""P4-REEN-03: the callbacks of a `ui/message` turn may not re-enter.

PR 4 part 3 delivers an accepted `ui/message` as `Runner.run_async`
admitted with the `APP_MESSAGE_TURN` provenance; here the turn is started
that way on a real bound Runner (a View rendered first, so an app call on
the Session is possible), and one callback family per test tries every
same-session mutator: `run_async`, `rewind_async` and `run_app_call`.
Readings: docs/decisions/issue22-rest.md.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any
from typing import Optional

from exec_ownership_support import BOUND
from exec_ownership_support import stage
from exec_ownership_support import Stage
from google.adk.mcp_apps.coordination.coordinator import session_coordinator
from google.adk.mcp_apps.coordination.errors import CoordinationError
from google.adk.mcp_apps.coordination.errors import CoordinationErrorReason
from google.adk.mcp_apps.event_policy.provenance import admitted
from google.adk.mcp_apps.event_policy.provenance import APP_MESSAGE_TURN
from google.adk.mcp_apps.operations.app_call import APP_CALL_OPERATION
from google.adk.plugins.base_plugin import BasePlugin
from mcp_apps_conformance_server import names
import pytest
from sealing_support import USER

pytestmark = pytest.mark.integration

MUTATORS = {
    "run_async": "Runner.run_async",
    "rewind_async": "Runner.rewind_async",
    "run_app_call": APP_CALL_OPERATION,
}
"""Each same-session mutator a callback tries, and the operation its
refusal names."""


@dataclasses.dataclass
class Tried:
  """One mutator call made from a callback: what it raised, what queued."""

  mutator: str
  error: Optional[BaseException]
  waiting: int


class Reentry:
  """Once armed, the first call of the acting family tries every mutator."""

  def __init__(self, family: str) -> None:
    self.family = family
    self.stage: Optional[Stage] = None
    self.tried: list[Tried] = []
    self.calls: list[str] = []
    self._done = False

  async def _mutate(self, s: Stage, mutator: str) -> None:
    if mutator == "run_async":
      await s.turn_events()
    elif mutator == "rewind_async":
      await s.st.runner.rewind_async(
          user_id=USER,
          session_id=s.sid,
          rewind_before_invocation_id="e-nowhere",
      )
    else:
      await s.call(names.SIDE_EFFECT, {"key": "nested"}, op="nested")

  async def maybe(self, family: str) -> None:
    if self.stage is None:
      return  # Not armed: the stage's own View turn.
    self.calls.append(family)
    if family != self.family or self._done:
      return
    self._done = True
    for mutator in MUTATORS:
      error: Optional[BaseException] = None
      try:
        await asyncio.wait_for(self._mutate(self.stage, mutator), BOUND)
      except Exception as e:  # pylint: disable=broad-except
        error = e
      self.tried.append(
          Tried(mutator, error, session_coordinator().waiting(self.stage.key))
      )

  def agent_fields(self) -> dict[str, Any]:
    """The agent's callbacks: each family calls `maybe` with its name."""

    def callback(family: str) -> Any:
      async def run(*args: Any, **kwargs: Any) -> None:
        del args, kwargs
        await self.maybe(family)

      return run

    return {
        field: callback(field.removesuffix("_callback"))
        for field in (
            "before_agent_callback",
            "before_model_callback",
            "after_model_callback",
            "after_agent_callback",
            "before_tool_callback",
            "after_tool_callback",
        )
    }


class BeforeRun(BasePlugin):
  """A plugin whose before-run callback calls `Reentry.maybe`."""

  def __init__(self, reentry: Reentry) -> None:
    super().__init__(name="before_run_reentry")
    self.reentry = reentry

  async def before_run_callback(self, *, invocation_context: Any) -> None:
    await self.reentry.maybe("plugin_before_run")


@pytest.mark.conformance("P4-REEN-03", "P4-REEN-13")
@pytest.mark.parametrize(
    "family",
    [
        "plugin_before_run",
        "before_agent",
        "before_model",
        "after_model",
        "before_tool",
        "after_tool",
        "after_agent",
    ],
)
async def test_ui_message_turn_callbacks_are_refused_every_same_session_mutator(
    mcp_apps: Any, tmp_path: Path, backend: str, family: str
) -> None:
  reentry = Reentry(family)
  async with stage(
      mcp_apps,
      tmp_path,
      backend,
      plugins=[BeforeRun(reentry)],
      agent_fields=reentry.agent_fields(),
  ) as s:
    s.st.llm.steps = [[(names.WHOAMI, {})]]
    reentry.stage = s
    # What PR 4 part 3 runs for an accepted `ui/message`.
    with admitted(APP_MESSAGE_TURN):
      events = await asyncio.wait_for(s.turn_events(), BOUND)
    assert family in reentry.calls
    assert [t.mutator for t in reentry.tried] == list(MUTATORS)
    for tried in reentry.tried:
      assert isinstance(tried.error, CoordinationError), tried
      assert tried.error.reason is CoordinationErrorReason.SAME_SESSION_REENTRY
      assert tried.error.operation == MUTATORS[tried.mutator]
      assert tried.waiting == 0, tried  # Refused before any wait.
    # The turn ran to its end, alone: one invocation, all of it the app's
    # turn; the refused app call ran nothing and was never cached.
    stored = await s.stored()
    assert {e.invocation_id for e in stored} == {events[-1].invocation_id}
    assert {e.invocation_origin for e in stored} == {"mcp_app"}
    assert stored[-1].is_final_response()
    assert s.counts() == {}
    assert s.cache.get("nested") is None
    assert session_coordinator().owner(s.key) is None
