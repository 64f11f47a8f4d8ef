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

"""Resumption and rehydration never read audit Events.

A resumed invocation is found from the session's history: the function
call a function response answers, the user message that started it, the
invocation's own Events (agent states) and a node's last branch. An audit
Event stored in the same session, even one that names the same call id,
invocation or agent, must change none of them.
"""

from __future__ import annotations

from google.adk.agents import _agent_router
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps.app import ResumabilityConfig
from google.adk.events.event import Event
from google.adk.mcp_apps.event_policy.provenance import admitted
from google.adk.mcp_apps.event_policy.provenance import APP_OPERATION
from google.adk.mcp_apps.event_policy.provenance import USER_TURN
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.session import Session
from google.genai import types
from model_context_support import audit_event
from model_context_support import call_part
from model_context_support import response_part
from model_context_support import text
import pytest

pytestmark = [
    pytest.mark.integration,
    pytest.mark.conformance("P3-PRED-07"),
]


class _Setup:
  """One in-memory session with an agent, appended through the service."""

  def __init__(self) -> None:
    self.service = InMemorySessionService()
    self.agent = LlmAgent(name="helper", model="gemini-2.0-flash")
    self.root = LlmAgent(
        name="coordinator", model="gemini-2.0-flash", sub_agents=[self.agent]
    )
    self.session: Session

  async def start(self) -> None:
    self.session = await self.service.create_session(
        app_name="resume", user_id="u"
    )

  async def turn(self, event: Event) -> None:
    with admitted(USER_TURN):
      await self.service.append_event(self.session, event)

  async def audit(self, event: Event) -> None:
    with admitted(APP_OPERATION):
      stored = await self.service.append_event(self.session, event)
    assert stored.audience == "app_audit"

  def context(self, invocation_id: str) -> InvocationContext:
    return InvocationContext(
        session_service=self.service,
        invocation_id=invocation_id,
        agent=self.root,
        session=self.session,
        resumability_config=ResumabilityConfig(is_resumable=True),
    )


@pytest.fixture
async def setup() -> _Setup:
  made = _Setup()
  await made.start()
  return made


async def test_function_response_resumes_the_call_not_an_audit_record(
    setup: _Setup,
) -> None:
  await setup.turn(
      Event(
          invocation_id="inv-model",
          author="helper",
          content=types.Content(
              role="model", parts=[call_part("fc-1", "approve", {})]
          ),
      )
  )
  # An audit record naming the same call id in another invocation.
  await setup.audit(
      audit_event(
          "helper",
          content=types.Content(
              role="user", parts=[call_part("fc-1", "approve", {})]
          ),
      )
  )
  runner = Runner(
      app_name="resume", agent=setup.root, session_service=setup.service
  )
  answer = types.Content(
      role="user", parts=[response_part("fc-1", "approve", {"ok": True})]
  )

  resolved = runner._resolve_invocation_id_from_fr(setup.session, answer)

  assert resolved == "inv-model"


async def test_user_message_of_an_invocation_is_never_an_audit_record(
    setup: _Setup,
) -> None:
  await setup.audit(
      audit_event("user", invocation_id="inv-1", content=text("forged"))
  )
  await setup.turn(
      Event(invocation_id="inv-1", author="user", content=text("real"))
  )
  runner = Runner(
      app_name="resume", agent=setup.root, session_service=setup.service
  )

  found = runner._find_user_message_for_invocation(
      setup.session.events, "inv-1"
  )

  assert found is not None and found.parts[0].text == "real"


async def test_invocation_history_and_agent_states_skip_audit_records(
    setup: _Setup,
) -> None:
  await setup.turn(
      Event(invocation_id="inv-1", author="user", content=text("hello"))
  )
  await setup.audit(
      audit_event(
          "helper",
          invocation_id="inv-1",
          content=text("view refreshed", role="model"),
      )
  )
  context = setup.context("inv-1")

  history = context._get_events(current_invocation=True)
  context.populate_invocation_agent_states()

  assert [e.author for e in history] == ["user"]
  assert "helper" not in context.agent_states


async def test_branch_is_never_restored_from_an_audit_record(
    setup: _Setup,
) -> None:
  await setup.turn(
      Event(
          invocation_id="inv-1",
          author="helper",
          branch="coordinator.helper",
          content=text("done", role="model"),
      )
  )
  await setup.audit(
      audit_event(
          "helper",
          branch="coordinator.forged",
          content=text("view refreshed", role="model"),
      )
  )
  context = setup.context("inv-2")

  _agent_router.restore_branch_from_history(
      invocation_context=context, node=setup.agent, root=setup.root
  )

  assert context.branch == "coordinator.helper"
