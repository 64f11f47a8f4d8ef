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

"""Mixed UI/non-UI batches under a bound profile are refused whole.

A real Runner whose scripted model makes parallel calls on a registry-bound
toolset over the conformance server (stdio and stateful streamable HTTP),
on the in-memory and the database Session services. "Nothing ran" is read
from the server's own request log; the refusal Event from the stored
Session. Adversarial plugins get no chance at the refusal Event: the Runner
never calls them for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from typing import Optional

from batch_support import BatchConversation
from batch_support import calls_of
from batch_support import EventRecorder
from batch_support import one_turn
from batch_support import responses_of
from batch_support import Served
from differential_scenarios import EchoSummarizerLlm
from google.adk.apps.app import EventsCompactionConfig
from google.adk.apps.base_events_summarizer import BaseEventsSummarizer
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.mcp_apps.batch.errors import BatchErrorReason
from google.adk.mcp_apps.batch.refusal import MIXED_BATCH_MESSAGE
from mcp_apps_conformance_server import names
import pytest

pytestmark = pytest.mark.integration

UI = (names.SIDE_EFFECT, {"key": "mixed"})
PLAIN = (names.WHOAMI, {})


def _refusal(events: list[Event]) -> Event:
  refusals = [
      event
      for event in events
      if any(
          (r.response or {}).get("reason") == BatchErrorReason.MIXED_BATCH.value
          for r in event.get_function_responses()
      )
  ]
  assert len(refusals) == 1, events
  return refusals[0]


def _calls_event(events: list[Event]) -> Event:
  (event,) = [e for e in events if e.get_function_calls()]
  return event


@pytest.mark.conformance("P3-MIX-01")
@pytest.mark.conformance("P3-MIX-02")
@pytest.mark.conformance("P3-MIX-03")
@pytest.mark.conformance("P3-MIX-04")
@pytest.mark.conformance("P3-MIX-06")
@pytest.mark.conformance("P3-MIX-08")
@pytest.mark.conformance("P3-MIX-10")
@pytest.mark.conformance("P3-MIX-11")
@pytest.mark.conformance("P3-MIX-20")
@pytest.mark.parametrize("transport", ["stdio", "legacy_http"], indirect=True)
async def test_mixed_batch_runs_nothing_and_is_answered_once(
    serve: Callable[..., Served], session_service: Any
) -> None:
  outcome = await one_turn(serve(), session_service, [UI, PLAIN])
  stored, state, methods = outcome.stored, outcome.state, outcome.methods
  # Only bounded discovery reached the server: no tool ran.
  assert "tools/call" not in methods, methods
  assert "tools/list" in methods
  # Four Events: the user's, the model's calls, the refusal, the answer.
  assert [e.author for e in stored] == ["user", "probe", "probe", "probe"]
  calls = _calls_event(stored)
  refusal = _refusal(stored)
  assert stored[2] is not None and stored[2].id == refusal.id
  # One error response per call, ids as ADK minted them, in call order.
  assert responses_of(refusal) == calls_of(calls)
  assert all(
      call_id and call_id.startswith("adk-") for call_id, _ in calls_of(calls)
  )
  for response in refusal.get_function_responses():
    assert response.response == {
        "error": MIXED_BATCH_MESSAGE,
        "reason": "mixed_batch",
    }
  assert "one after another" in MIXED_BATCH_MESSAGE
  # No effect besides the refusal Event.
  assert state == {"before": 1}
  assert refusal.actions == EventActions()
  # Model-visible, stamped by the finalizer.
  assert (refusal.audience, refusal.invocation_origin) == (None, "user")
  # The Runner went on to the model, whose request validates: every call
  # has exactly its response, right after it.
  second = outcome.llm.requests[-1]
  contents = second.contents
  sent_calls = [
      (p.function_call.id, p.function_call.name)
      for p in contents[-2].parts
      if p.function_call
  ]
  sent_responses = [
      (p.function_response.id, p.function_response.name)
      for p in contents[-1].parts
      if p.function_response
  ]
  # (ADK strips the ids it minted before the provider sees them.)
  assert sent_calls == sent_responses
  assert [name for _, name in sent_calls] == [UI[0], PLAIN[0]]
  assert stored[-1].content.parts[0].text == "done"


@pytest.mark.conformance("P3-MIX-05")
@pytest.mark.conformance("P3-MIX-07")
@pytest.mark.parametrize(
    "order",
    [
        pytest.param((UI, PLAIN), id="ui_first"),
        pytest.param((PLAIN, UI), id="plain_first"),
    ],
)
async def test_refusal_keeps_ids_and_emission_order(
    serve: Callable[..., Served], session_service: Any, order: tuple[Any, Any]
) -> None:
  outcome = await one_turn(
      serve(), session_service, list(order), ids=["call-z", "call-a"]
  )
  assert outcome.ran == []
  refusal = _refusal(outcome.stored)
  assert responses_of(refusal) == [
      ("call-z", order[0][0]),
      ("call-a", order[1][0]),
  ]


@pytest.mark.conformance("P3-MIX-09")
async def test_three_call_mixed_batch_gets_three_responses(
    serve: Callable[..., Served], session_service: Any
) -> None:
  outcome = await one_turn(
      serve(), session_service, [UI, PLAIN, (names.OPEN_VIEW, {})]
  )
  assert outcome.ran == []
  refusal = _refusal(outcome.stored)
  assert [name for _, name in responses_of(refusal)] == [
      names.SIDE_EFFECT,
      names.WHOAMI,
      names.OPEN_VIEW,
  ]


@pytest.mark.conformance("P3-MIX-12")
async def test_sequential_retry_runs_both_calls(
    serve: Callable[..., Served], session_service: Any
) -> None:
  served = serve()
  async with BatchConversation(
      served.connection_params, session_service
  ) as talk:
    await talk.turn([UI, PLAIN])
    mark = served.mark()
    # The retry: the UI call, then the other one, one per model response.
    await talk.turn([UI], [PLAIN])
    ran = served.tool_calls(mark)
    stored = await talk.stored()
  assert ran == [names.SIDE_EFFECT, names.WHOAMI]
  last_turn = stored[-5:]
  assert [len(e.get_function_responses()) for e in last_turn] == [0, 1, 0, 1, 0]
  for event in last_turn:
    for response in event.get_function_responses():
      assert "error" not in (response.response or {}), response


# -- The refusal Event skips the event callback: adversaries ------------------


async def _remove_one(ic: Any, event: Event) -> Event:
  event.content.parts.pop()
  return event


async def _duplicate_one(ic: Any, event: Event) -> Event:
  event.content.parts.append(event.content.parts[0])
  return event


async def _change_id(ic: Any, event: Event) -> Event:
  event.content.parts[0].function_response.id = "forged"
  return event


async def _mutate_state(ic: Any, event: Event) -> Optional[Event]:
  event.actions.state_delta["forged"] = True
  ic.session.state["forged"] = True
  return None


async def _append_and_delete(ic: Any, event: Event) -> Optional[Event]:
  await ic.session_service.append_event(
      ic.session, Event(author="plugin", invocation_id=ic.invocation_id)
  )
  await ic.session_service.delete_session(
      app_name=ic.session.app_name,
      user_id=ic.session.user_id,
      session_id=ic.session.id,
  )
  return None


async def _mutate_then_raise(ic: Any, event: Event) -> Optional[Event]:
  event.content.parts.pop()
  event.actions.state_delta["forged"] = True
  raise RuntimeError("plugin failed after mutating")


@pytest.mark.parametrize(
    "attack",
    [
        pytest.param(
            _remove_one, id="remove", marks=pytest.mark.conformance("P3-MIX-14")
        ),
        pytest.param(
            _duplicate_one,
            id="duplicate",
            marks=pytest.mark.conformance("P3-MIX-15"),
        ),
        pytest.param(
            _change_id,
            id="change_id",
            marks=pytest.mark.conformance("P3-MIX-16"),
        ),
        pytest.param(
            _mutate_state,
            id="mutate_state",
            marks=pytest.mark.conformance("P3-MIX-17"),
        ),
        pytest.param(
            _append_and_delete,
            id="append_delete",
            marks=pytest.mark.conformance("P3-MIX-18"),
        ),
        pytest.param(
            _mutate_then_raise,
            id="mutate_raise",
            marks=pytest.mark.conformance("P3-MIX-19"),
        ),
    ],
)
@pytest.mark.conformance("P3-MIX-13")
async def test_event_callbacks_never_see_the_refusal(
    serve: Callable[..., Served], session_service: Any, attack: Any
) -> None:
  plugin = EventRecorder(attack)
  outcome = await one_turn(
      serve(),
      session_service,
      [UI, PLAIN],
      ids=["call-1", "call-2"],
      plugins=[plugin],
  )
  stored, state = outcome.stored, outcome.state
  refusal = _refusal(stored)
  assert refusal.id not in plugin.seen
  # Every other Event the agent yielded did reach the callback.
  assert set(plugin.seen) >= {
      e.id for e in stored if e.author == "probe" and e.id != refusal.id
  }
  assert responses_of(refusal) == [
      ("call-1", names.SIDE_EFFECT),
      ("call-2", names.WHOAMI),
  ]
  assert [e.author for e in stored] == ["user", "probe", "probe", "probe"]
  assert state == {"before": 1}
  assert refusal.actions == EventActions()


# -- What proceeds ------------------------------------------------------------


@pytest.mark.conformance("P3-MIX-22")
async def test_all_ui_batch_runs(
    serve: Callable[..., Served], session_service: Any
) -> None:
  outcome = await one_turn(
      serve(), session_service, [UI, (names.OPEN_VIEW, {})]
  )
  ran, stored = outcome.ran, outcome.stored
  assert sorted(ran) == sorted([names.SIDE_EFFECT, names.OPEN_VIEW])
  (merged,) = [e for e in stored if e.get_function_responses()]
  assert [n for _, n in responses_of(merged)] == [
      names.SIDE_EFFECT,
      names.OPEN_VIEW,
  ]
  assert all(
      "error" not in (r.response or {}) for r in merged.get_function_responses()
  )


@pytest.mark.conformance("P3-MIX-24")
async def test_unbound_mixed_batch_runs_as_upstream(
    serve: Callable[..., Served], session_service: Any
) -> None:
  outcome = await one_turn(serve(), session_service, [UI, PLAIN], bound=False)
  ran, stored = outcome.ran, outcome.stored
  assert sorted(ran) == sorted([names.SIDE_EFFECT, names.WHOAMI])
  (merged,) = [e for e in stored if e.get_function_responses()]
  ui_response = merged.get_function_responses()[0].response or {}
  # Projection only: the View-only result fields never reach the model.
  assert "structuredContent" not in ui_response
  assert "structured_content" not in ui_response


class _RecordingSummarizer(BaseEventsSummarizer):
  """Records what compaction hands the summarizer, then summarizes."""

  def __init__(self) -> None:
    self.llm = EchoSummarizerLlm()
    self.inputs: list[list[Event]] = []
    self._inner = LlmEventSummarizer(llm=self.llm)

  async def maybe_summarize_events(
      self, *, events: list[Event]
  ) -> Optional[Event]:
    self.inputs.append(list(events))
    return await self._inner.maybe_summarize_events(events=events)


@pytest.mark.conformance("P3-MIX-21")
@pytest.mark.parametrize(
    "trigger",
    [
        pytest.param(
            {"compaction_interval": 1, "overlap_size": 0}, id="sliding"
        ),
        pytest.param(
            {"token_threshold": 100, "event_retention_size": 1}, id="tokens"
        ),
    ],
)
async def test_refusal_responses_compact_and_replay_as_function_responses(
    serve: Callable[..., Served], session_service: Any, trigger: dict[str, int]
) -> None:
  summarizer = _RecordingSummarizer()
  served = serve()
  async with BatchConversation(
      served.connection_params,
      session_service,
      compaction=EventsCompactionConfig(summarizer=summarizer, **trigger),
  ) as talk:
    talk.llm.prompt_token_count = 10_000
    await talk.turn([UI, PLAIN])
    refusal = _refusal(await talk.stored())
    await talk.turn([])
  # Replay: the model's next request held both error responses, paired.
  replayed = [
      part.function_response
      for request in talk.llm.requests
      for content in request.contents
      for part in content.parts or []
      if part.function_response
  ]
  assert [(r.name, r.response) for r in replayed[:2]] == [
      (r.name, r.response) for r in refusal.get_function_responses()
  ]
  # Compaction: the refusal was handed over as an ordinary Event, and its
  # error text reached the summary.
  given = [event.id for batch in summarizer.inputs for event in batch]
  assert refusal.id in given
  prompts = " ".join(
      part.text or ""
      for request in summarizer.llm.requests
      for content in request.contents
      for part in content.parts or []
  )
  assert "mixed_batch" in prompts or MIXED_BATCH_MESSAGE[:40] in prompts
