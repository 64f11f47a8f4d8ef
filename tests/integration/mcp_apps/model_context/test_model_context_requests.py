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

"""Content construction: audit Events never reach an LLM request.

Real `Runner` turns on each session backend; audit Events are appended
between turns and in the middle of one (a tool stands in for a View's
direct call that lands while the model is working). The requests the
scripted model receives are searched for the sentinel, and compared byte
for byte with the same conversation without any audit Event.
"""

from __future__ import annotations

from typing import Any

from differential_scenarios import RecordingLlm
from google.adk.agents.llm_agent import LlmAgent
from google.adk.tools.tool_context import ToolContext
from model_context_support import app_call_audit_event
from model_context_support import append_audit
from model_context_support import assert_no_sentinel
from model_context_support import audit_event
from model_context_support import audit_events
from model_context_support import Backend
from model_context_support import Conversation
from model_context_support import request_bytes
from model_context_support import SENTINEL
import pytest

pytestmark = pytest.mark.integration

AGENT = "assistant"
MESSAGES = ("hello", "refresh the dashboard", "thanks")


def _agent(
    backend: Backend, model: RecordingLlm, *, audited: bool, contents: str
) -> LlmAgent:
  """An agent whose `refresh_view` tool lands a View's audit record mid-turn."""

  async def refresh_view(tool_context: ToolContext) -> dict[str, Any]:
    """Refreshes the dashboard."""
    if audited:
      # Authored by the user and by another agent: neither may become the
      # turn's anchor (include_contents='none') or another agent's reply.
      for author in ("user", "other_agent"):
        await append_audit(backend, tool_context.session, audit_event(author))
    return {"status": "refreshed"}

  return LlmAgent(
      name=AGENT,
      model=model,
      instruction="Answer briefly.",
      tools=[refresh_view],
      include_contents=contents,
  )


async def _conversation(
    backend: Backend, *, audited: bool, contents: str
) -> tuple[RecordingLlm, Conversation]:
  model = RecordingLlm(calls=[[], [["refresh_view", {}]], []])
  async with Conversation(
      backend, _agent(backend, model, audited=audited, contents=contents)
  ) as chat:
    await chat.turn(MESSAGES[0])
    if audited:
      await chat.audit(
          audit_event(AGENT),
          audit_event("other_agent"),
          app_call_audit_event(AGENT),
      )
    for message in MESSAGES[1:]:
      await chat.turn(message)
  return model, chat


@pytest.mark.conformance("P3-PRED-01")
@pytest.mark.parametrize("contents", ["default", "none"])
async def test_audit_sentinel_never_reaches_an_llm_request(
    backend: Backend, contents: str
) -> None:
  """P3-PRED-01: no request built from the session holds the sentinel."""
  model, chat = await _conversation(backend, audited=True, contents=contents)

  # Turn 1; turn 2's call and its answer (after the mid-turn audit); turn 3.
  assert len(model.requests) == 4
  assert_no_sentinel(model.requests)
  # The control: the audit Events are stored, sentinel and all.
  stored = audit_events(await chat.session())
  assert len(stored) == 5
  assert all(SENTINEL in e.model_dump_json() for e in stored)


@pytest.mark.conformance("P3-PRED-08")
@pytest.mark.parametrize("contents", ["default", "none"])
async def test_audit_events_add_no_model_visible_context(
    backend: Backend, contents: str
) -> None:
  """P3-PRED-08: the requests equal those of the conversation without them."""
  audited, _ = await _conversation(backend, audited=True, contents=contents)
  plain, chat = await _conversation(backend, audited=False, contents=contents)

  assert audit_events(await chat.session()) == []
  assert request_bytes(audited.requests) == request_bytes(plain.requests)
  # The user's turns all reached the model, in order, in the last request
  # (with include_contents='none' only the current turn does).
  last = audited.requests[-1].model_dump_json()
  expected = MESSAGES if contents == "default" else MESSAGES[-1:]
  positions = [last.index(f'"{m}"') for m in expected]
  assert positions == sorted(positions)
