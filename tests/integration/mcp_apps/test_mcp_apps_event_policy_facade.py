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


"""The eight event-policy facade cases, with real plugins and services.

Each test drives the event-policy step the canonical audit pipeline calls
(`run_event_policy`) with a real `BasePlugin` in a real `PluginManager`,
over a real session service (in-memory and SQLite), a real
`EventBatchEffects`, `InMemoryArtifactService` and
`InMemoryCredentialService`; the resolved Event is then appended as an MCP
App operation and read back through a fresh `get_session`. P3-FAC-03 runs a
real Runner turn instead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
import dataclasses
from pathlib import Path
from typing import Any
from typing import Optional

from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps.app import App
from google.adk.artifacts.in_memory_artifact_service import InMemoryArtifactService
from google.adk.auth.credential_service.in_memory_credential_service import InMemoryCredentialService
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.mcp_apps.batch.ledger import EVENT_POLICY
from google.adk.mcp_apps.batch.ledger import EventBatchEffects
from google.adk.mcp_apps.batch.ledger import FrozenBatch
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.event_policy.errors import EventPolicyError
from google.adk.mcp_apps.event_policy.errors import EventPolicyReason
from google.adk.mcp_apps.event_policy.provenance import admitted
from google.adk.mcp_apps.event_policy.provenance import APP_OPERATION
from google.adk.mcp_apps.facades.errors import FacadeError
from google.adk.mcp_apps.facades.errors import FacadeErrorReason
from google.adk.mcp_apps.facades.event_policy import EventPolicyContext
from google.adk.mcp_apps.facades.event_policy import EventPolicyOutcome
from google.adk.mcp_apps.facades.event_policy import run_event_policy
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.plugins.plugin_manager import PluginManager
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.session import Session
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.sessions.state import State
from google.genai import types
from mcp.types import INTERNAL_ERROR
import pytest
from scripted_llm import ScriptedLlm

pytestmark = pytest.mark.integration

APP = 'fac_app'
USER = 'user-1'
CALL = 'call-1'

Act = Callable[[Any, Event], Awaitable[Optional[Event]]]


class ActingPlugin(BasePlugin):
  """A plugin whose `on_event_callback` runs `act` and records its context.

  Attributes:
    contexts: Every `invocation_context` the callback received.
    events: Every Event it received.
    caught: Typed errors `act` caught (via `attempt`).
    events_during: The stored Events `act` read back while it ran.
    returned: What `act` got from its attempts, when it keeps that.
  """

  def __init__(self, act: Optional[Act] = None) -> None:
    super().__init__(name='acting_plugin')
    self.act = act
    self.contexts: list[Any] = []
    self.events: list[Event] = []
    self.caught: list[Exception] = []
    self.events_during: list[Event] = []
    self.returned: list[Any] = []

  async def attempt(self, call: Callable[[], Any]) -> Any:
    """Runs `call` (awaiting its result); records a typed refusal."""
    try:
      result = call()
      if isinstance(result, Awaitable):
        result = await result
      return result
    except (FacadeError, EventPolicyError) as e:
      self.caught.append(e)
      return None

  async def on_event_callback(
      self, *, invocation_context: InvocationContext, event: Event
  ) -> Optional[Event]:
    self.contexts.append(invocation_context)
    self.events.append(event)
    if self.act is None:
      return None
    return await self.act(invocation_context, event)


@dataclasses.dataclass
class Harness:
  """One real session service with one open Session, and the others."""

  service: BaseSessionService
  artifacts: InMemoryArtifactService
  credentials: InMemoryCredentialService
  session: Session

  @property
  def key(self) -> SessionKey:
    return SessionKey(APP, USER, self.session.id)

  async def reload(self, session_id: Optional[str] = None) -> Optional[Session]:
    return await self.service.get_session(
        app_name=APP, user_id=USER, session_id=session_id or self.session.id
    )

  async def stored_events(self) -> list[Event]:
    session = await self.reload()
    assert session is not None
    return list(session.events)


@pytest.fixture(params=['in_memory', 'sqlite'])
async def harness(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Harness]:
  service: BaseSessionService
  if request.param == 'in_memory':
    service = InMemorySessionService()
  else:
    service = SqliteSessionService(str(tmp_path / 'sessions.db'))
  session = await service.create_session(
      app_name=APP, user_id=USER, state={'cart': {'items': ['A1']}}
  )
  yield Harness(
      service, InMemoryArtifactService(), InMemoryCredentialService(), session
  )
  close = getattr(service, 'close', None)
  if close is not None:
    await close()


def audit_event(text: str = 'the app called buy') -> Event:
  """An audit Event as the core constructs it for a direct app call."""
  return Event(
      invocation_id='inv-app-op',
      author='app',
      audience='app_audit',
      content=types.Content(role='user', parts=[types.Part(text=text)]),
      custom_metadata={'op': 'tools/call'},
  )


@dataclasses.dataclass
class Step:
  """One run of the event-policy step and what followed it."""

  outcome: EventPolicyOutcome
  frozen: FrozenBatch
  resolved: Event
  appended: Event


async def run_step(
    harness: Harness,
    plugin: BasePlugin,
    *,
    event: Optional[Event] = None,
    before: Optional[Callable[[EventBatchEffects], None]] = None,
) -> Step:
  """The step as the audit pipeline runs it: build, run, freeze, append."""
  effects = EventBatchEffects([CALL], live_state=harness.session.state)
  if before is not None:
    before(effects)
  context = EventPolicyContext.build(
      session=harness.key,
      invocation_id='inv-app-op',
      state=harness.session.state,
      ledger=effects.event_policy,
      agent_name='app',
  )
  outcome = await run_event_policy(
      PluginManager(plugins=[plugin]), context, event or audit_event()
  )
  frozen = effects.freeze()
  resolved = outcome.resolve(frozen)
  with admitted(APP_OPERATION):
    appended = await harness.service.append_event(harness.session, resolved)
  return Step(outcome, frozen, resolved, appended)


def reasons(errors: list[Exception]) -> list[Any]:
  return [getattr(e, 'reason', None) for e in errors]


@pytest.mark.conformance('P3-FAC-01', 'P3-FAC-02')
async def test_audit_event_callback_gets_only_the_restricted_facade(harness):
  async def act(context: Any, event: Event) -> None:
    for name in (
        'session',
        'session_service',
        'artifact_service',
        'credential_service',
        'memory_service',
        'runner',
        'actions',
        'end_invocation',
    ):
      await plugin.attempt(lambda name=name: getattr(context, name))
    return None

  plugin = ActingPlugin(act)
  step = await run_step(harness, plugin)

  (context,) = plugin.contexts
  assert isinstance(context, EventPolicyContext)
  assert not isinstance(context, InvocationContext)
  assert (context.app_name, context.user_id, context.session_id) == (
      APP,
      USER,
      harness.session.id,
  )
  assert context.state == {'cart': {'items': ['A1']}}
  assert reasons(plugin.caught) == [FacadeErrorReason.UNAVAILABLE] * 8
  # Each access maps to the callback's terminal outcome: it failed.
  assert step.outcome.failed
  assert step.outcome.error.reason is FacadeErrorReason.EVENT_POLICY_FAILED
  assert step.outcome.refused[:2] == ('session', 'session_service')
  stored = await harness.stored_events()
  assert [e.id for e in stored] == [step.appended.id]
  assert stored[0].audience == 'app_audit'


@pytest.mark.conformance('P3-FAC-03')
async def test_normal_events_keep_the_full_invocation_context(harness):
  async def act(context: Any, event: Event) -> Optional[Event]:
    if event.content and event.content.role == 'model':
      return Event(author=event.author, custom_metadata={'tagged': True})
    return None

  plugin = ActingPlugin(act)
  runner = Runner(
      app=App(
          name=APP,
          root_agent=LlmAgent(name='assistant', model=ScriptedLlm()),
          plugins=[plugin],
      ),
      session_service=harness.service,
      artifact_service=harness.artifacts,
      credential_service=harness.credentials,
  )
  message = types.Content(role='user', parts=[types.Part(text='hi')])
  async for _ in runner.run_async(
      user_id=USER, session_id=harness.session.id, new_message=message
  ):
    pass
  await runner.close()

  assert plugin.contexts
  for context in plugin.contexts:
    assert isinstance(context, InvocationContext)
    assert context.session_service is harness.service
    assert context.artifact_service is harness.artifacts
    assert context.credential_service is harness.credentials
    assert context.session.id == harness.session.id
  stored = await harness.stored_events()
  answers = [e for e in stored if e.author == 'assistant']
  assert [e.content.parts[0].text for e in answers] == ['done']
  assert answers[0].custom_metadata == {'tagged': True}
  assert all(e.audience is None for e in stored)


@pytest.mark.conformance('P3-FAC-04')
async def test_a_ledgered_write_is_applied_in_the_frozen_batch_and_stored(
    harness,
):
  async def act(context: Any, event: Event) -> None:
    context.ledger.set_state('audit_seen', {'ops': ['buy']})
    context.ledger.set_state('shared', 'from-policy')
    return None

  def child_writes(effects: EventBatchEffects) -> None:
    actions = effects.child(CALL).event_actions()
    state = State(harness.session.state, actions.state_delta)
    state['shared'] = 'from-call'

  plugin = ActingPlugin(act)
  step = await run_step(harness, plugin, before=child_writes)

  assert not step.outcome.failed
  assert dict(step.frozen.state_delta) == {
      'shared': 'from-policy',
      'audit_seen': {'ops': ['buy']},
  }
  assert step.frozen.state_winners['audit_seen'] is EVENT_POLICY
  assert step.frozen.state_winners['shared'] is EVENT_POLICY
  (stored,) = await harness.stored_events()
  assert stored.actions.state_delta == {
      'shared': 'from-policy',
      'audit_seen': {'ops': ['buy']},
  }
  session = await harness.reload()
  assert session.state['audit_seen'] == {'ops': ['buy']}
  assert session.state['shared'] == 'from-policy'


@pytest.mark.conformance('P3-FAC-05')
@pytest.mark.parametrize('swallow', [False, True])
async def test_a_nested_snapshot_mutation_changes_neither_state_nor_ledger(
    harness, swallow
):
  async def act(context: Any, event: Event) -> None:
    def mutate() -> None:
      context.state['cart']['items'].append('B2')

    if swallow:
      await plugin.attempt(mutate)
    else:
      mutate()
    return None

  plugin = ActingPlugin(act)
  step = await run_step(harness, plugin)

  # Fails closed when the error escapes; has no effect when swallowed.
  assert step.outcome.failed is not swallow
  if swallow:
    assert reasons(plugin.caught) == [FacadeErrorReason.READ_ONLY]
  else:
    cause = step.outcome.error.__cause__.__cause__
    assert isinstance(cause, FacadeError)
    assert cause.reason is FacadeErrorReason.READ_ONLY
  assert dict(step.frozen.state_delta) == {}
  assert harness.session.state['cart'] == {'items': ['A1']}
  session = await harness.reload()
  assert session.state['cart'] == {'items': ['A1']}
  (stored,) = await harness.stored_events()
  assert stored.actions.state_delta == {}


@pytest.mark.conformance('P3-FAC-06')
async def test_append_and_delete_through_the_facade_raise_and_do_nothing(
    harness,
):
  async def act(context: Any, event: Event) -> None:
    await plugin.attempt(
        lambda: context.session_service.append_event(
            context.session, Event(author='evil')
        )
    )
    await plugin.attempt(
        lambda: context.session_service.delete_session(
            app_name=APP, user_id=USER, session_id=context.session_id
        )
    )
    await plugin.attempt(lambda: context.invocation_context)
    plugin.events_during.extend(await harness.stored_events())
    return None

  plugin = ActingPlugin(act)
  step = await run_step(harness, plugin)

  assert reasons(plugin.caught) == [FacadeErrorReason.UNAVAILABLE] * 3
  assert plugin.events_during == []
  assert step.outcome.failed
  assert step.outcome.refused == (
      'session_service',
      'session_service',
      'invocation_context',
  )
  assert await harness.reload() is not None
  assert [e.id for e in await harness.stored_events()] == [step.appended.id]


@pytest.mark.conformance('P3-FAC-06', 'P3-FAC-09')
async def test_an_append_through_a_closure_held_service_is_a_reentry(harness):
  service = harness.service
  session = harness.session

  async def act(context: Any, event: Event) -> None:
    await plugin.attempt(
        lambda: service.append_event(session, Event(author='evil'))
    )
    plugin.events_during.extend(await harness.stored_events())
    return None

  plugin = ActingPlugin(act)
  step = await run_step(harness, plugin)

  assert reasons(plugin.caught) == [EventPolicyReason.SAME_SESSION_REENTRY]
  assert plugin.events_during == []
  # Caught or not, the reentry fails the step.
  assert step.outcome.failed
  assert step.outcome.refused == ('append_event',)
  stored = await harness.stored_events()
  assert [e.author for e in stored] == ['app']


@pytest.mark.conformance('P3-FAC-07')
async def test_an_artifact_save_raises_and_writes_nothing(harness):
  part = types.Part(text='exfiltrated')

  async def act(context: Any, event: Event) -> None:
    await plugin.attempt(
        lambda: context.artifact_service.save_artifact(
            app_name=APP,
            user_id=USER,
            session_id=context.session_id,
            filename='leak.txt',
            artifact=part,
        )
    )
    await plugin.attempt(lambda: context.save_artifact('leak.txt', part))
    return None

  plugin = ActingPlugin(act)
  step = await run_step(harness, plugin)

  assert reasons(plugin.caught) == [FacadeErrorReason.UNAVAILABLE] * 2
  assert step.outcome.refused == ('artifact_service', 'save_artifact')
  assert step.outcome.failed
  assert (
      await harness.artifacts.list_artifact_keys(
          app_name=APP, user_id=USER, session_id=harness.session.id
      )
      == []
  )
  assert dict(step.frozen.artifact_delta) == {}
  (stored,) = await harness.stored_events()
  assert stored.actions.artifact_delta == {}


@pytest.mark.conformance('P3-FAC-08')
async def test_credential_access_raises_and_returns_nothing(harness):
  async def act(context: Any, event: Event) -> None:
    got = [
        await plugin.attempt(lambda: context.credential_service),
        await plugin.attempt(lambda: context.load_credential),
        await plugin.attempt(lambda: context.get_auth_response),
        await plugin.attempt(lambda: context.request_credential),
    ]
    plugin.returned = got
    return None

  plugin = ActingPlugin(act)
  step = await run_step(harness, plugin)

  assert plugin.returned == [None, None, None, None]
  assert reasons(plugin.caught) == [FacadeErrorReason.UNAVAILABLE] * 4
  assert step.outcome.failed
  assert step.outcome.refused == (
      'credential_service',
      'load_credential',
      'get_auth_response',
      'request_credential',
  )


def _helper_runner(harness: Harness) -> Runner:
  return Runner(
      app_name=APP,
      agent=LlmAgent(name='helper', model=ScriptedLlm()),
      session_service=harness.service,
      artifact_service=harness.artifacts,
      credential_service=harness.credentials,
  )


async def _turn(runner: Runner, session_id: str) -> None:
  message = types.Content(role='user', parts=[types.Part(text='again')])
  async for _ in runner.run_async(
      user_id=USER, session_id=session_id, new_message=message
  ):
    pass


@pytest.mark.conformance('P3-FAC-09')
async def test_a_runner_turn_on_the_same_session_is_refused(harness):
  runner = _helper_runner(harness)

  async def act(context: Any, event: Event) -> None:
    await plugin.attempt(lambda: _turn(runner, harness.session.id))
    plugin.events_during.extend(await harness.stored_events())
    return None

  plugin = ActingPlugin(act)
  step = await run_step(harness, plugin)
  await runner.close()

  assert reasons(plugin.caught) == [EventPolicyReason.SAME_SESSION_REENTRY]
  assert plugin.events_during == []
  assert step.outcome.failed
  assert step.outcome.refused == ('Runner.run_async',)
  assert [e.author for e in await harness.stored_events()] == ['app']


@pytest.mark.conformance('P3-FAC-09')
async def test_a_runner_turn_on_another_session_is_allowed(harness):
  runner = _helper_runner(harness)
  other = await harness.service.create_session(app_name=APP, user_id=USER)

  async def act(context: Any, event: Event) -> None:
    await _turn(runner, other.id)
    return None

  plugin = ActingPlugin(act)
  step = await run_step(harness, plugin)
  await runner.close()

  assert not step.outcome.failed
  reloaded = await harness.reload(other.id)
  assert [e.author for e in reloaded.events] == ['user', 'helper']
  assert [e.author for e in await harness.stored_events()] == ['app']


@pytest.mark.conformance('P3-FAC-10')
async def test_mutate_then_return_keeps_only_ledgered_and_allowed_changes(
    harness,
):
  async def act(context: Any, event: Event) -> Event:
    context.ledger.set_state('ledgered', 1)
    event.actions.state_delta['unledgered'] = 2
    event.actions.artifact_delta['forged.txt'] = 9
    event.actions.escalate = True
    event.author = 'impostor'
    event.content = types.Content(
        role='user', parts=[types.Part(text='redacted by policy')]
    )
    event.custom_metadata = {'op': 'tools/call', 'reviewed': True}
    return event

  plugin = ActingPlugin(act)
  original = audit_event()
  step = await run_step(harness, plugin, event=original)

  assert not step.outcome.failed
  assert step.outcome.policy_error.reason is (
      EventPolicyReason.FORBIDDEN_CONTROL
  )
  assert set(step.outcome.discarded) == {
      'author',
      'actions.state_delta',
      'actions.artifact_delta',
  }
  assert original.author == 'app'  # The step never touches its input.
  assert original.actions == EventActions()
  (stored,) = await harness.stored_events()
  assert stored.author == 'app'
  assert stored.content.parts[0].text == 'redacted by policy'
  assert stored.custom_metadata['reviewed'] is True
  assert stored.actions.state_delta == {'ledgered': 1}
  assert stored.actions.artifact_delta == {}
  assert not stored.actions.escalate
  session = await harness.reload()
  assert session.state['ledgered'] == 1
  assert 'unledgered' not in session.state


@pytest.mark.conformance('P3-FAC-10', 'P3-RES-15')
async def test_in_place_edits_merge_content_and_discard_actions(harness):
  async def act(context: Any, event: Event) -> None:
    event.content = types.Content(role='user', parts=[types.Part(text='x')])
    event.actions.state_delta['unledgered'] = 2
    event.actions.escalate = True
    return None

  plugin = ActingPlugin(act)
  step = await run_step(harness, plugin)

  assert not step.outcome.failed
  assert 'actions' in step.outcome.discarded
  (stored,) = await harness.stored_events()
  # The in-place redaction of the copy is an allowed change (RES-15) ...
  assert stored.content.parts[0].text == 'x'
  # ... an in-place action edit is not.
  assert stored.actions.state_delta == {}
  assert not stored.actions.escalate
  assert 'unledgered' not in (await harness.reload()).state


@pytest.mark.conformance('P3-FAC-11')
async def test_mutate_then_raise_stores_the_core_only_fallback(harness):
  async def act(context: Any, event: Event) -> None:
    context.ledger.set_state('before_raise', 'kept')
    event.content = types.Content(role='user', parts=[types.Part(text='x')])
    event.actions.state_delta['unledgered'] = 2
    event.actions.transfer_to_agent = 'elsewhere'
    raise ValueError('plugin-secret-detail')

  plugin = ActingPlugin(act)
  step = await run_step(harness, plugin)

  outcome = step.outcome
  assert outcome.failed
  assert outcome.error.reason is FacadeErrorReason.EVENT_POLICY_FAILED
  assert isinstance(outcome.error.__cause__.__cause__, ValueError)
  wire = outcome.wire_error
  assert wire.code == INTERNAL_ERROR
  assert 'plugin-secret-detail' not in wire.model_dump_json()
  assert wire.data == {'reason': 'event_policy_failed'}
  assert dict(step.frozen.state_delta) == {'before_raise': 'kept'}
  (stored,) = await harness.stored_events()
  assert stored.id == step.appended.id
  assert stored.audience == 'app_audit'
  assert stored.content.parts[0].text == 'the app called buy'
  assert stored.custom_metadata == {'op': 'tools/call'}
  assert stored.actions == EventActions(state_delta={'before_raise': 'kept'})
  session = await harness.reload()
  assert session.state['before_raise'] == 'kept'
  assert 'unledgered' not in session.state


@pytest.mark.conformance('P3-FAC-10')
async def test_a_replacement_cannot_set_internal_metadata(harness):
  async def act(context: Any, event: Event) -> Event:
    return Event(
        author='app',
        custom_metadata={'__adk_internal_forged': True, 'note': 'ok'},
    )

  step = await run_step(harness, ActingPlugin(act))

  assert not step.outcome.failed
  (stored,) = await harness.stored_events()
  assert stored.custom_metadata == {'note': 'ok'}
  assert stored.content.parts[0].text == 'the app called buy'


async def test_a_return_that_is_not_an_event_fails_the_step(harness):
  async def act(context: Any, event: Event) -> Any:
    context.ledger.set_state('kept', True)
    return {'content': 'not an Event'}

  step = await run_step(harness, ActingPlugin(act))

  assert step.outcome.failed
  (stored,) = await harness.stored_events()
  assert stored.actions == EventActions(state_delta={'kept': True})
  assert stored.content.parts[0].text == 'the app called buy'
