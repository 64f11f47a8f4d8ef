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

"""The core's own writes: rewind and compaction are `system` Events.

A rewind creates no InvocationContext and compaction summarizes after (or,
by token threshold, inside) a turn; both are admitted as the system's own
operation, even when the turn around them is an app's.
"""

from __future__ import annotations

from google.adk.apps._configs import EventsCompactionConfig
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
from google.adk.mcp_apps.event_policy import provenance
from provenance_support import Observed
from provenance_support import protected
import provenance_support as support
import pytest
from scripted_llm import ScriptedLlm

pytestmark = pytest.mark.integration

SYSTEM_STAMP = (None, "system", "system")


@pytest.mark.conformance("P3-PROV-08")
@pytest.mark.conformance("P3-FIN-08")
async def test_rewind_event_is_stamped_system() -> None:
  runner = support.probe_runner(Observed())
  first = await support.turn(runner, "one")
  await support.turn(runner, "two")
  second_invocation = (await support.stored_events(runner.session_service))[
      len(first)
  ].invocation_id
  with provenance.admitted(provenance.APP_MESSAGE_TURN):
    # Even inside an app's operation, the rewind is the core's own write.
    await runner.rewind_async(
        user_id=support.USER_ID,
        session_id="s1",
        rewind_before_invocation_id=second_invocation,
    )
  stored = await support.stored_events(runner.session_service)
  rewind = stored[-1]
  assert rewind.actions.rewind_before_invocation_id == second_invocation
  assert protected(rewind) == SYSTEM_STAMP
  assert {e.invocation_origin for e in stored[:-1]} == {"user"}


@pytest.mark.conformance("P3-PROV-09")
@pytest.mark.conformance("P3-FIN-08")
@pytest.mark.parametrize(
    "admission", [None, provenance.APP_MESSAGE_TURN], ids=["user", "mcp_app"]
)
async def test_sliding_window_compaction_event_is_stamped_system(
    admission: provenance.Provenance | None,
) -> None:
  summarizer = LlmEventSummarizer(llm=ScriptedLlm())
  runner = support.probe_runner(
      Observed(),
      events_compaction_config=EventsCompactionConfig(
          summarizer=summarizer, compaction_interval=1, overlap_size=0
      ),
  )
  if admission is None:
    stored = await support.turn(runner, "one")
  else:
    with provenance.admitted(admission):
      stored = await support.turn(runner, "one")
  compactions = [e for e in stored if e.actions and e.actions.compaction]
  assert len(compactions) == 1
  assert protected(compactions[0]) == SYSTEM_STAMP
  turn_origin = "user" if admission is None else "mcp_app"
  assert {e.invocation_origin for e in stored if not e.actions.compaction} == {
      turn_origin
  }


@pytest.mark.conformance("P3-PROV-09")
@pytest.mark.conformance("P3-FIN-08")
async def test_token_threshold_compaction_inside_a_turn_is_stamped_system() -> (
    None
):
  """Token-threshold compaction runs inside the next turn's request
  building; its Event is still the system's, the turn's Events the user's."""
  summarizer = LlmEventSummarizer(llm=ScriptedLlm())
  runner = support.probe_runner(
      Observed(),
      events_compaction_config=EventsCompactionConfig(
          summarizer=summarizer, token_threshold=10, event_retention_size=1
      ),
  )
  runner.agent.model.prompt_token_count = 1000  # type: ignore[union-attr]
  await support.turn(runner, "one")
  stored = await support.turn(runner, "two")
  compactions = [e for e in stored if e.actions and e.actions.compaction]
  assert compactions
  assert {protected(e) for e in compactions} == {SYSTEM_STAMP}
  assert {e.invocation_origin for e in stored if not e.actions.compaction} == {
      "user"
  }
