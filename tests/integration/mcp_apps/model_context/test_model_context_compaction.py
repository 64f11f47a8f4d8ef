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

"""Compaction and the summarizer never read audit Events.

Mode 1 is sliding-window compaction (every `compaction_interval`
invocations, after a turn); mode 2 is token-threshold compaction (before a
model call and after a turn, once the prompt passes `token_threshold`).
Both run for real through the `Runner`, with `LlmEventSummarizer` over a
summarizer model that records its requests and echoes its prompt, so
whatever it was given ends up in the stored summary too.
"""

from __future__ import annotations

from differential_scenarios import EchoSummarizerLlm
from differential_scenarios import RecordingLlm
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps.app import App
from google.adk.apps.app import EventsCompactionConfig
from google.adk.apps.base_events_summarizer import BaseEventsSummarizer
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
from google.adk.events.event import Event
from google.adk.sessions.session import Session
from model_context_support import app_call_audit_event
from model_context_support import assert_no_sentinel
from model_context_support import audit_event
from model_context_support import audit_events
from model_context_support import Backend
from model_context_support import Conversation
from model_context_support import SENTINEL
import pytest

pytestmark = pytest.mark.integration

AGENT = "assistant"


class InputRecordingSummarizer(BaseEventsSummarizer):
  """Records the Events compaction hands a summarizer, then delegates.

  A custom summarizer gets what compaction selects, with no filter of its
  own, so `inputs` shows what each compaction mode chose.
  """

  def __init__(self, llm: EchoSummarizerLlm) -> None:
    self.inputs: list[list[Event]] = []
    self._inner = LlmEventSummarizer(llm=llm)

  async def maybe_summarize_events(
      self, *, events: list[Event]
  ) -> Event | None:
    self.inputs.append(list(events))
    return await self._inner.maybe_summarize_events(events=events)


def _app(model: RecordingLlm, config: EventsCompactionConfig) -> App:
  agent = LlmAgent(name=AGENT, model=model, instruction="Answer briefly.")
  return App(
      name="model_context", root_agent=agent, events_compaction_config=config
  )


def _recording_config(
    **trigger: int,
) -> tuple[EventsCompactionConfig, InputRecordingSummarizer, EchoSummarizerLlm]:
  """A compaction config whose summarizer records what it is given."""
  summarizer = EchoSummarizerLlm()
  recorder = InputRecordingSummarizer(summarizer)
  config = EventsCompactionConfig(summarizer=recorder, **trigger)
  return config, recorder, summarizer


def _compactions(session: Session) -> list[Event]:
  return [e for e in session.events if e.actions.compaction]


def _assert_summaries_hold_no_audit(
    recorder: InputRecordingSummarizer,
    summarizer: EchoSummarizerLlm,
    session: Session,
) -> None:
  assert recorder.inputs, "no compaction happened"
  for given in recorder.inputs:
    assert given and all(e.audience is None for e in given)
    assert all(SENTINEL not in e.model_dump_json() for e in given)
  assert len(summarizer.requests) == len(recorder.inputs)
  assert_no_sentinel(summarizer.requests)
  for request in summarizer.requests:
    assert "user: first" in request.contents[0].parts[0].text
  for event in _compactions(session):
    summary = event.actions.compaction.compacted_content.model_dump_json()
    assert "SUMMARY OF:" in summary
    assert SENTINEL not in summary
  assert len(audit_events(session)) == 3  # The control: they are stored.


@pytest.mark.conformance("P3-PRED-01", "P3-PRED-02", "P3-PRED-04")
async def test_sliding_window_compaction_neither_counts_nor_reads_audit_events(
    backend: Backend,
) -> None:
  """P3-PRED-02: mode 1 ignores audit Events, as invocations and as input."""
  config, recorder, summarizer = _recording_config(
      compaction_interval=2, overlap_size=0
  )
  model = RecordingLlm()
  async with Conversation(backend, _app(model, config)) as chat:
    # Each audit Event has an invocation id of its own; counted, the first
    # would already make two invocations after turn one.
    await chat.audit(audit_event(AGENT), audit_event("other_agent"))
    await chat.turn("first")
    assert _compactions(await chat.session()) == []
    assert recorder.inputs == []

    await chat.audit(app_call_audit_event(AGENT))
    await chat.turn("second")
    await chat.turn("third")
    session = await chat.session()

  (compaction,) = _compactions(session)
  _assert_summaries_hold_no_audit(recorder, summarizer, session)
  assert "user: second" in summarizer.requests[0].contents[0].parts[0].text
  # The turn after compaction reads the summary; no request reads an audit.
  assert "SUMMARY OF:" in model.requests[-1].model_dump_json()
  assert_no_sentinel(model.requests)
  assert compaction.audience is None


@pytest.mark.conformance("P3-PRED-01", "P3-PRED-03", "P3-PRED-04")
async def test_token_threshold_compaction_never_reads_audit_events(
    backend: Backend,
) -> None:
  """P3-PRED-03: mode 2's candidates and summary exclude audit Events."""
  config, recorder, summarizer = _recording_config(
      token_threshold=100, event_retention_size=1
  )
  model = RecordingLlm(prompt_token_count=10_000)
  async with Conversation(backend, _app(model, config)) as chat:
    await chat.turn("first")
    await chat.audit(
        audit_event(AGENT),
        audit_event("other_agent"),
        app_call_audit_event(AGENT),
    )
    await chat.turn("second")
    await chat.turn("third")
    session = await chat.session()

  assert _compactions(session)
  assert config.compaction_interval is None  # Only mode 2 is configured.
  _assert_summaries_hold_no_audit(recorder, summarizer, session)
  assert "SUMMARY OF:" in model.requests[-1].model_dump_json()
  assert_no_sentinel(model.requests)


@pytest.mark.conformance("P3-PRED-04")
async def test_summarizer_given_a_whole_session_skips_audit_events(
    backend: Backend,
) -> None:
  """P3-PRED-04: a direct summarizer call never sees an audit Event."""
  async with Conversation(
      backend, LlmAgent(name=AGENT, model=RecordingLlm())
  ) as chat:
    await chat.audit(audit_event(AGENT))
    await chat.turn("first")
    await chat.audit(app_call_audit_event(AGENT), audit_event("user"))
    session = await chat.session()
  conversation = [e for e in session.events if e.audience is None]
  audits = audit_events(session)
  assert len(audits) == 3

  summarizer = EchoSummarizerLlm()
  compaction = await LlmEventSummarizer(llm=summarizer).maybe_summarize_events(
      events=session.events
  )

  assert_no_sentinel(summarizer.requests)
  assert "user: first" in summarizer.requests[0].contents[0].parts[0].text
  # The summary spans the conversation only: the audit Events before and
  # after it do not widen the range it replaces.
  assert compaction.actions.compaction.start_timestamp == (
      conversation[0].timestamp
  )
  assert compaction.actions.compaction.end_timestamp == (
      conversation[-1].timestamp
  )
  # Nothing but audit Events: nothing to summarize, no model call.
  only_audits = EchoSummarizerLlm()
  assert (
      await LlmEventSummarizer(llm=only_audits).maybe_summarize_events(
          events=audits
      )
      is None
  )
  assert only_audits.requests == []
