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

"""A restricted callback may not re-enter its own Session.

`event_policy.callback_scope` is the rule every app-path callback family
runs under; these tests drive the three host entry points it guards (a
Runner entry point, a session service's append, an app-safe hold
acquisition is covered by the families' own integration tests) with real
ADK objects.
"""

from __future__ import annotations

import asyncio
from typing import Any
from typing import AsyncGenerator

from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events.event import Event
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.event_policy.callback_scope import CallbackFamily
from google.adk.mcp_apps.event_policy.callback_scope import current_restricted_callback
from google.adk.mcp_apps.event_policy.callback_scope import refuse_reentry
from google.adk.mcp_apps.event_policy.callback_scope import restricted_callback
from google.adk.mcp_apps.event_policy.errors import EventPolicyError
from google.adk.mcp_apps.event_policy.errors import EventPolicyReason
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types
import pytest

APP = 'scope_app'
USER = 'user'


class _Echo(BaseAgent):
  """Answers every turn with one Event, so a turn is observable."""

  async def _run_async_impl(
      self, ctx: InvocationContext
  ) -> AsyncGenerator[Event, None]:
    yield Event(
        invocation_id=ctx.invocation_id,
        author=self.name,
        content=types.Content(role='model', parts=[types.Part(text='hi')]),
    )


def _message() -> types.Content:
  return types.Content(role='user', parts=[types.Part(text='hello')])


async def _turn(runner: Runner, session_id: str) -> list[Event]:
  return [
      event
      async for event in runner.run_async(
          user_id=USER, session_id=session_id, new_message=_message()
      )
  ]


@pytest.fixture
async def runner() -> Runner:
  return Runner(
      app_name=APP,
      agent=_Echo(name='echo'),
      session_service=InMemorySessionService(),
  )


async def _session(runner: Runner) -> Any:
  return await runner.session_service.create_session(app_name=APP, user_id=USER)


def test_outside_a_restricted_callback_nothing_is_refused() -> None:
  assert current_restricted_callback() is None
  refuse_reentry(APP, USER, 's', 'append_event')


@pytest.mark.parametrize('family', list(CallbackFamily))
def test_the_same_session_is_refused_and_recorded(
    family: CallbackFamily,
) -> None:
  key = SessionKey(APP, USER, 's')
  with restricted_callback(key, family) as scope:
    with pytest.raises(EventPolicyError) as caught:
      refuse_reentry(APP, USER, 's', 'append_event')
    refuse_reentry(APP, USER, 'other', 'append_event')
    refuse_reentry('other_app', USER, 's', 'append_event')
  assert caught.value.reason is EventPolicyReason.SAME_SESSION_REENTRY
  assert family.value in str(caught.value)
  assert scope.refused == ['append_event']
  assert not scope.open


async def test_a_task_acting_after_the_callback_ended_is_not_refused() -> None:
  key = SessionKey(APP, USER, 's')
  go = asyncio.Event()
  outcome: list[str] = []

  async def later() -> None:
    await go.wait()
    refuse_reentry(APP, USER, 's', 'append_event')
    outcome.append('ran')

  with restricted_callback(key, CallbackFamily.PROGRESS) as scope:
    # The task inherits the callback's context, and outlives the callback.
    task = asyncio.get_running_loop().create_task(later())
  go.set()
  await task
  assert outcome == ['ran']
  assert scope.refused == []


async def test_a_runner_turn_on_the_same_session_is_refused_before_it_runs(
    runner: Runner,
) -> None:
  session = await _session(runner)
  other = await _session(runner)
  key = SessionKey(APP, USER, session.id)
  with restricted_callback(key, CallbackFamily.EVENT_POLICY) as scope:
    with pytest.raises(EventPolicyError) as caught:
      await _turn(runner, session.id)
    # Another Session of the same user proceeds.
    assert [e.author for e in await _turn(runner, other.id)] == ['echo']
  assert caught.value.reason is EventPolicyReason.SAME_SESSION_REENTRY
  assert scope.refused == ['Runner.run_async']
  stored = await runner.session_service.get_session(
      app_name=APP, user_id=USER, session_id=session.id
  )
  assert stored is not None and stored.events == []


async def test_an_append_to_the_same_session_is_refused_and_stores_nothing(
    runner: Runner,
) -> None:
  session = await _session(runner)
  key = SessionKey(APP, USER, session.id)
  event = Event(
      invocation_id='i',
      author='plugin',
      content=types.Content(role='model', parts=[types.Part(text='x')]),
  )
  with restricted_callback(key, CallbackFamily.TOOL_FILTER):
    with pytest.raises(EventPolicyError) as caught:
      await runner.session_service.append_event(session, event)
  assert caught.value.reason is EventPolicyReason.SAME_SESSION_REENTRY
  stored = await runner.session_service.get_session(
      app_name=APP, user_id=USER, session_id=session.id
  )
  assert stored is not None and stored.events == []
  # Once the callback is over the same append goes through.
  await runner.session_service.append_event(session, event)
  stored = await runner.session_service.get_session(
      app_name=APP, user_id=USER, session_id=session.id
  )
  assert stored is not None and [e.id for e in stored.events] == [event.id]
