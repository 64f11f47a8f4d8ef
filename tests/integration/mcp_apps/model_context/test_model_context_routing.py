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

"""Agent routing, task scope and rehydration never read audit Events.

Real multi-agent turns on each session backend. Which agent answers is
observed through which scripted model received the next request: the
Runner picks the agent (`_find_agent_to_run`), joins a paused task
(`_find_active_task_scope`) and rehydrates pending task delegations from
the session, and an audit Event must change none of it, whoever authored
it and whatever scope or call it names.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
from typing import Any

from differential_scenarios import RecordingLlm
from google.adk.agents.llm.task._finish_task_tool import FINISH_TASK_SUCCESS_RESULT
from google.adk.agents.llm.task._finish_task_tool import FINISH_TASK_TOOL_NAME
from google.adk.agents.llm_agent import LlmAgent
from google.adk.events.event import Event
from google.adk.events.request_input import RequestInput
from google.adk.sessions.session import Session
from google.adk.utils._function_call_names import REQUEST_INPUT_FUNCTION_CALL_NAME
from google.adk.workflow import START
from google.adk.workflow import Workflow
from google.genai import types
from model_context_support import app_call_audit_event
from model_context_support import assert_no_sentinel
from model_context_support import audit_event
from model_context_support import Backend
from model_context_support import call_part
from model_context_support import Conversation
from model_context_support import response_part
from model_context_support import SENTINEL
import pytest

pytestmark = pytest.mark.integration


# --------------------------------------------------------------------------
# P3-PRED-06: the agent that answers the next user message.
# --------------------------------------------------------------------------


def _transfer_team() -> tuple[LlmAgent, dict[str, RecordingLlm]]:
  """A coordinator that hands turn one to `helper_a`; `helper_b` idles."""
  models = {
      "coordinator": RecordingLlm(
          calls=[[["transfer_to_agent", {"agent_name": "helper_a"}]]]
      ),
      "helper_a": RecordingLlm(),
      "helper_b": RecordingLlm(),
  }
  helpers = [
      LlmAgent(name=name, model=models[name], description=f"{name} helps")
      for name in ("helper_a", "helper_b")
  ]
  root = LlmAgent(
      name="coordinator",
      model=models["coordinator"],
      instruction="Route the user.",
      sub_agents=helpers,
  )
  return root, models


async def _route_after_audit(
    backend: Backend, audits: Callable[[], list[Event]]
) -> tuple[dict[str, int], list[str], dict[str, RecordingLlm]]:
  root, models = _transfer_team()
  async with Conversation(backend, root) as chat:
    await chat.turn("I need help")
    await chat.audit(*audits())
    replies = await chat.turn("and one more thing")
  authors = [e.author for e in replies if e.content and e.author != "user"]
  return {n: len(m.requests) for n, m in models.items()}, authors, models


@pytest.mark.conformance("P3-PRED-06")
async def test_next_turn_goes_to_the_same_agent_despite_audit_events(
    backend: Backend,
) -> None:
  """P3-PRED-06: audit Events by other agents do not move the turn."""
  expected_counts, expected_authors, _ = await _route_after_audit(backend, list)
  # Without audit Events: helper_a replied last, so it keeps the user.
  assert expected_counts == {"coordinator": 1, "helper_a": 2, "helper_b": 0}
  assert expected_authors == ["helper_a"]

  counts, authors, models = await _route_after_audit(
      backend,
      lambda: [
          audit_event("helper_b"),
          audit_event("coordinator"),
          app_call_audit_event("helper_b"),
          # An audit Event claiming a transfer is not a transfer either.
          audit_event(
              "helper_a",
              content=types.Content(
                  role="model", parts=[types.Part(text="go to helper_b")]
              ),
          ),
          audit_event("helper_b"),
      ],
  )
  assert counts == expected_counts
  assert authors == expected_authors
  for model in models.values():
    if model.requests:
      assert_no_sentinel(model.requests)


# --------------------------------------------------------------------------
# P3-PRED-07: the paused task the next user message joins.
# --------------------------------------------------------------------------

TASK_AGENT = "researcher"


def _task_team(
    delegates: bool = True,
) -> tuple[LlmAgent, dict[str, RecordingLlm]]:
  """A coordinator delegating to a task agent that pauses for the user.

  Args:
    delegates: Whether the coordinator delegates on turn one (else it only
      ever answers with text).
  """
  calls = [[[TASK_AGENT, {"request": "find the numbers"}]]] if delegates else []
  models = {
      "coordinator": RecordingLlm(calls=calls),
      TASK_AGENT: RecordingLlm(),
  }
  task = LlmAgent(
      name=TASK_AGENT,
      model=models[TASK_AGENT],
      mode="task",
      description="Researches a question.",
      instruction="Research, then ask the user.",
  )
  root = LlmAgent(
      name="coordinator",
      model=models["coordinator"],
      instruction="Delegate research.",
      sub_agents=[task],
  )
  return root, models


def _user_event(session: Session, message: str) -> Event:
  (event,) = [
      e
      for e in session.events
      if e.author == "user" and e.content and e.content.parts[0].text == message
  ]
  return event


def _ghost_scope(scope: str, invocation_id: str) -> list[Event]:
  """Audit Events in a scope no task owns: none may become the active task."""
  del scope, invocation_id
  return [audit_event(TASK_AGENT, isolation_scope="ghost-scope")]


def _finished_scope(scope: str, invocation_id: str) -> list[Event]:
  """An audit Event in the task's scope answering `finish_task`."""
  del invocation_id
  return [
      audit_event(
          TASK_AGENT,
          isolation_scope=scope,
          content=types.Content(
              role="user",
              parts=[
                  response_part(
                      "app-finish",
                      FINISH_TASK_TOOL_NAME,
                      {"result": FINISH_TASK_SUCCESS_RESULT},
                  )
              ],
          ),
      )
  ]


def _aborted_invocation(scope: str, invocation_id: str) -> list[Event]:
  """An audit Event of the task's invocation shaped like an abort seal."""
  del scope
  return [
      audit_event(
          TASK_AGENT,
          invocation_id=invocation_id,
          error_code="INVOCATION_ABORTED",
      )
  ]


@pytest.mark.conformance("P3-PRED-07")
@pytest.mark.parametrize(
    "audits",
    [_ghost_scope, _finished_scope, _aborted_invocation],
)
async def test_paused_task_keeps_the_user_despite_audit_events(
    backend: Backend, audits: Callable[[str, str], list[Event]]
) -> None:
  """P3-PRED-07: an audit Event never becomes, or hides, the paused task."""
  root, models = _task_team()
  async with Conversation(backend, root) as chat:
    await chat.turn("research this")
    first = _user_event(await chat.session(), "research this")
    (delegation,) = [
        e for e in (await chat.session()).events if e.get_function_calls()
    ]
    scope = delegation.get_function_calls()[0].id
    await chat.audit(*audits(scope, first.invocation_id))
    replies = await chat.turn("here are more details")
    session = await chat.session()

  # The message joined the paused task: its scope, its invocation.
  joined = _user_event(session, "here are more details")
  assert (joined.isolation_scope, joined.invocation_id) == (
      scope,
      first.invocation_id,
  )
  # Only the task agent answered, once, in that scope; no phantom task ran.
  answers = [e for e in replies if e.content and e.author != "user"]
  assert [(e.author, e.isolation_scope) for e in answers] == [
      (TASK_AGENT, scope)
  ]
  assert len(models["coordinator"].requests) == 1
  assert len(models[TASK_AGENT].requests) == 2
  assert "here are more details" in (
      models[TASK_AGENT].requests[-1].model_dump_json()
  )
  assert_no_sentinel(models[TASK_AGENT].requests)


@pytest.mark.conformance("P3-PRED-07")
async def test_audit_task_call_is_never_rehydrated_as_a_delegation(
    backend: Backend,
) -> None:
  """P3-PRED-07: an unanswered task call in an audit Event starts no task."""
  root, models = _task_team(delegates=False)
  async with Conversation(backend, root) as chat:
    await chat.turn("hello")
    await chat.audit(
        audit_event(
            "coordinator",
            content=types.Content(
                role="model",
                parts=[
                    call_part(
                        "app-delegation", TASK_AGENT, {"request": "phantom"}
                    )
                ],
            ),
        )
    )
    replies = await chat.turn("anything new?")

  # The coordinator answered; no delegation was replayed from the audit.
  answers = [e for e in replies if e.content and e.author != "user"]
  assert [(e.author, e.isolation_scope) for e in answers] == [
      ("coordinator", None)
  ]
  assert len(models["coordinator"].requests) == 2
  assert models[TASK_AGENT].requests == []
  assert_no_sentinel(models["coordinator"].requests)


# --------------------------------------------------------------------------
# P3-PRED-07: workflow rehydration of a paused node.
# --------------------------------------------------------------------------


def _input_answer(interrupt_id: str, value: str) -> types.Content:
  """The user's answer to a workflow node's `RequestInput`."""
  answer = {"result": value}
  return types.Content(
      role="user",
      parts=[
          response_part(interrupt_id, REQUEST_INPUT_FUNCTION_CALL_NAME, answer)
      ],
  )


@pytest.mark.conformance("P3-PRED-07")
async def test_audit_event_never_answers_a_paused_workflow_node(
    backend: Backend,
) -> None:
  """P3-PRED-07: a forged input answer in an audit Event resumes nothing."""
  answers: list[tuple[str, str]] = []

  async def ask_a(node_input: Any) -> AsyncIterator[RequestInput]:
    yield RequestInput(interrupt_id="approve-a", message="Approve a?")

  async def ask_b(node_input: Any) -> AsyncIterator[RequestInput]:
    yield RequestInput(interrupt_id="approve-b", message="Approve b?")

  def record_a(node_input: Any) -> None:
    answers.append(("a", node_input))

  def record_b(node_input: Any) -> None:
    answers.append(("b", node_input))

  workflow = Workflow(
      name="approvals",
      edges=[(START, (ask_a, ask_b)), (ask_a, record_a), (ask_b, record_b)],
  )
  async with Conversation(backend, workflow) as chat:
    paused, *_ = await chat.turn("start")
    # The View's record answers b inside the paused invocation.
    await chat.audit(
        audit_event(
            "user",
            invocation_id=paused.invocation_id,
            content=_input_answer("approve-b", SENTINEL),
        )
    )
    await chat.answer(_input_answer("approve-a", "yes a"))
    assert answers == [("a", "yes a")]  # b still waits for the user.
    await chat.answer(_input_answer("approve-b", "yes b"))

  # The user's own answer resumes b; the audit Event's never did.
  assert answers[-1] == ("b", "yes b")
  assert ("b", SENTINEL) not in answers
