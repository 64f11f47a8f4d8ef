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

"""`Runner.run_host_action_async`: a host step run as one invocation.

The upstream seam the host's refresh and "Run tool again" run through
(`host/rerun.py`). Real Runner, real PluginManager, real session services
(in memory and SQLite); the plugin records what the Runner called.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from typing import AsyncGenerator
from typing import Optional

from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.apps.app import App
from google.adk.events.event import Event
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types
import pytest

APP = 'host_action_app'
USER = 'user'


class _Echo(BaseAgent):
  """Answers a turn with one Event, so a turn that ran is observable."""

  async def _run_async_impl(
      self, ctx: InvocationContext
  ) -> AsyncGenerator[Event, None]:
    yield Event(
        invocation_id=ctx.invocation_id,
        author=self.name,
        content=types.Content(role='model', parts=[types.Part(text='turn')]),
    )


class _Recorder(BasePlugin):
  """Records the run callbacks, each with its invocation and agent."""

  def __init__(self, *, end_with: Optional[str] = None) -> None:
    super().__init__(name='recorder')
    self.calls: list[tuple[str, str, str]] = []
    self.errors: list[Exception] = []
    self._end_with = end_with

  def _record(self, name: str, ctx: InvocationContext) -> None:
    agent = ctx.agent.name if ctx.agent is not None else ''
    self.calls.append((name, ctx.invocation_id, agent))

  async def before_run_callback(
      self, *, invocation_context: InvocationContext
  ) -> Optional[types.Content]:
    self._record('before_run', invocation_context)
    if self._end_with is None:
      return None
    return types.Content(role='model', parts=[types.Part(text=self._end_with)])

  async def on_event_callback(
      self, *, invocation_context: InvocationContext, event: Event
  ) -> Optional[Event]:
    self._record('on_event', invocation_context)
    return None

  async def after_run_callback(
      self, *, invocation_context: InvocationContext
  ) -> None:
    self._record('after_run', invocation_context)

  async def on_run_error_callback(
      self, *, invocation_context: InvocationContext, error: Exception
  ) -> None:
    self._record('on_run_error', invocation_context)
    self.errors.append(error)


def _text(event: Event) -> str:
  parts = event.content.parts if event.content else None
  return ''.join(p.text or '' for p in parts or [])


def _step(*texts: str) -> Any:
  """An execute step yielding one Event per text, authored by its agent."""

  async def execute(ctx: InvocationContext) -> AsyncGenerator[Event, None]:
    for text in texts:
      yield Event(
          invocation_id=ctx.invocation_id,
          author=ctx.agent.name if ctx.agent is not None else '',
          content=types.Content(role='model', parts=[types.Part(text=text)]),
      )

  return execute


def _runner(
    backend: str, tmp_path: Path, recorder: _Recorder, runner_type: Any = Runner
) -> Any:
  service: Any = InMemorySessionService()
  if backend == 'sqlite':
    service = SqliteSessionService(str(tmp_path / 'sessions.db'))
  root = _Echo(name='root', sub_agents=[_Echo(name='helper')])
  app = App(name=APP, root_agent=root, plugins=[recorder])
  return runner_type(app=app, session_service=service)


async def _stored(runner: Runner, session_id: str) -> list[Event]:
  session = await runner.session_service.get_session(
      app_name=APP, user_id=USER, session_id=session_id
  )
  assert session is not None
  return session.events


@pytest.mark.conformance('P2-COLD-12')
@pytest.mark.parametrize('backend', ['in_memory', 'sqlite'])
async def test_host_action_runs_the_plugins_run_callbacks_and_appends_its_events(
    backend: str, tmp_path: Path
) -> None:
  recorder = _Recorder()
  runner = _runner(backend, tmp_path, recorder)
  session = await runner.session_service.create_session(
      app_name=APP, user_id=USER
  )
  helper = runner.agent.find_agent('helper')

  yielded = [
      event
      async for event in runner.run_host_action_async(
          session=session,
          agent=helper,
          execute=_step('call', 'response'),
          invocation_id='host-1',
      )
  ]

  assert recorder.calls == [
      ('before_run', 'host-1', 'helper'),
      ('on_event', 'host-1', 'helper'),
      ('on_event', 'host-1', 'helper'),
      ('after_run', 'host-1', 'helper'),
  ]
  assert [_text(e) for e in yielded] == ['call', 'response']
  stored = await _stored(runner, session.id)
  # The Events the step yielded, as appended; no turn of the agent ran.
  assert [(e.id, e.invocation_id, e.author, _text(e)) for e in stored] == [
      (e.id, 'host-1', 'helper', _text(e)) for e in yielded
  ]


@pytest.mark.conformance('P2-COLD-12')
async def test_host_action_gets_a_new_invocation_id_by_default(
    tmp_path: Path,
) -> None:
  recorder = _Recorder()
  runner = _runner('in_memory', tmp_path, recorder)
  session = await runner.session_service.create_session(
      app_name=APP, user_id=USER
  )

  ids = []
  for _ in range(2):
    async for event in runner.run_host_action_async(
        session=session, agent=runner.agent, execute=_step('x')
    ):
      ids.append(event.invocation_id)

  assert len(set(ids)) == 2 and all(ids)
  assert [c[1] for c in recorder.calls if c[0] == 'before_run'] == ids


@pytest.mark.conformance('P2-COLD-12')
async def test_a_before_run_plugin_ends_the_host_action_before_its_step(
    tmp_path: Path,
) -> None:
  recorder = _Recorder(end_with='blocked')
  runner = _runner('in_memory', tmp_path, recorder)
  session = await runner.session_service.create_session(
      app_name=APP, user_id=USER
  )
  ran: list[str] = []

  async def execute(ctx: InvocationContext) -> AsyncGenerator[Event, None]:
    ran.append(ctx.invocation_id)
    yield Event(invocation_id=ctx.invocation_id, author='root')

  yielded = [
      e
      async for e in runner.run_host_action_async(
          session=session, agent=runner.agent, execute=execute
      )
  ]

  assert ran == []
  assert [_text(e) for e in yielded] == ['blocked']
  assert [_text(e) for e in await _stored(runner, session.id)] == ['blocked']
  assert [c[0] for c in recorder.calls] == [
      'before_run',
      'on_event',
      'after_run',
  ]


@pytest.mark.conformance('P2-COLD-12')
async def test_a_failing_host_action_reports_the_error_and_skips_after_run(
    tmp_path: Path,
) -> None:
  recorder = _Recorder()
  runner = _runner('in_memory', tmp_path, recorder)
  session = await runner.session_service.create_session(
      app_name=APP, user_id=USER
  )
  failure = RuntimeError('step failed')

  async def execute(ctx: InvocationContext) -> AsyncGenerator[Event, None]:
    yield Event(invocation_id=ctx.invocation_id, author='root')
    raise failure

  with pytest.raises(RuntimeError, match='step failed'):
    async for _ in runner.run_host_action_async(
        session=session, agent=runner.agent, execute=execute
    ):
      pass

  assert [c[0] for c in recorder.calls] == [
      'before_run',
      'on_event',
      'on_run_error',
  ]
  assert recorder.errors == [failure]
  assert len(await _stored(runner, session.id)) == 1


class _NoHostActions(Runner):
  """A Runner on which the host-action method would fail if called."""

  async def run_host_action_async(
      self, **kwargs: Any
  ) -> AsyncGenerator[Event, None]:
    raise AssertionError('a turn called run_host_action_async')
    yield  # pragma: no cover  (makes this an async generator)


@pytest.mark.conformance('P2-COLD-12')
@pytest.mark.parametrize('backend', ['in_memory', 'sqlite'])
async def test_a_runner_that_never_calls_it_runs_turns_as_before(
    backend: str, tmp_path: Path
) -> None:
  recorder = _Recorder()
  runner = _runner(backend, tmp_path, recorder, runner_type=_NoHostActions)
  session = await runner.session_service.create_session(
      app_name=APP, user_id=USER
  )
  message = types.Content(role='user', parts=[types.Part(text='hello')])

  yielded = [
      e
      async for e in runner.run_async(
          user_id=USER, session_id=session.id, new_message=message
      )
  ]

  assert [(e.author, _text(e)) for e in yielded] == [('root', 'turn')]
  stored = await _stored(runner, session.id)
  assert [(e.author, _text(e)) for e in stored] == [
      ('user', 'hello'),
      ('root', 'turn'),
  ]
  invocation = yielded[0].invocation_id
  assert recorder.calls == [
      ('before_run', invocation, 'root'),
      ('on_event', invocation, 'root'),
      ('after_run', invocation, 'root'),
  ]
