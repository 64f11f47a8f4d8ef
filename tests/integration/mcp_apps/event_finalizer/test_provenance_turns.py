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

"""Provenance of Runner turns: admitted once, read-only, stamped on every
Event, whatever a plugin, callback or app input tries.

Every test runs real Runner turns with the scripted model calling a real
FunctionTool; the stored Events are re-read from the session service.
"""

from __future__ import annotations

import asyncio
from typing import Optional

from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.run_config import RunConfig
from google.adk.apps.app import App
from google.adk.events.event import Event
from google.adk.mcp_apps.event_policy import provenance
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.function_tool import FunctionTool
from google.genai import types
from provenance_support import Observed
from provenance_support import protected
import provenance_support as support
import pydantic
import pytest
from scripted_llm import ScriptedLlm

pytestmark = pytest.mark.integration

USER_STAMP = (None, "user", None)
APP_MESSAGE_STAMP = (None, "mcp_app", None)


# --- PROV-01/02: the vocabulary and read-only access --------------------------


@pytest.mark.conformance("P3-PROV-01")
@pytest.mark.parametrize("origin", ["model", "app", "host", "View", ""])
def test_invocation_origin_takes_only_user_mcp_app_or_system(
    origin: str,
) -> None:
  """`model` (a caller, never an origin) and any other value are refused."""
  for accepted in ("user", "mcp_app", "system"):
    assert Event(author="a", invocation_origin=accepted).invocation_origin == (
        accepted
    )
  with pytest.raises(pydantic.ValidationError):
    Event(author="a", invocation_origin=origin)
  with pytest.raises(pydantic.ValidationError):
    Event.model_validate({"author": "a", "invocationOrigin": origin})


@pytest.mark.conformance("P3-PROV-02")
async def test_immediate_caller_and_origin_are_read_only_in_a_real_turn() -> (
    None
):
  """Assigning either, from a plugin or from inside the tool, raises."""
  observed = Observed()
  await support.turn(support.probe_runner(observed), "hello")
  # One refused assignment of invocation_origin (before_run) and one of
  # immediate_caller (in the tool); the values did not change.
  assert observed.assignment_errors == ["AttributeError", "AttributeError"]
  assert observed.run_origins == ["user"]
  assert observed.tool_callers == ["model"]


# --- PROV-03/04, FIN-05: turns -------------------------------------------------


@pytest.mark.conformance("P3-PROV-03")
@pytest.mark.conformance("P3-FIN-05")
async def test_user_turn_stamps_user_on_every_event_and_tools_see_model() -> (
    None
):
  observed = Observed()
  runner = support.probe_runner(observed)
  stored = await support.turn(runner, "hello")
  # user message, function call, function response, answer
  assert [e.author for e in stored] == ["user", "prober", "prober", "prober"]
  assert [protected(e) for e in stored] == [USER_STAMP] * 4
  assert observed.run_origins == ["user"]
  assert observed.before_tool_callers == ["model"]
  assert observed.tool_callers == ["model"]
  # The invocation is released once its turn ended.
  assert provenance.invocation_provenance(stored[0].invocation_id) is None


@pytest.mark.conformance("P3-PROV-04")
@pytest.mark.conformance("P3-FIN-05")
async def test_turn_admitted_as_app_message_is_mcp_app_throughout() -> None:
  """The turn an accepted `ui/message` starts (PR 4's permit admits it)."""
  observed = Observed()
  runner = support.probe_runner(observed)
  with provenance.admitted(provenance.APP_MESSAGE_TURN):
    stored = await support.turn(runner, "from the view")
  assert len(stored) == 4
  assert [protected(e) for e in stored] == [APP_MESSAGE_STAMP] * 4
  assert observed.run_origins == ["mcp_app"]
  # The model still calls the tools of that turn.
  assert observed.before_tool_callers == ["model"]
  assert observed.tool_callers == ["model"]
  # The next, ordinary turn of the same session is the user's again.
  stored = await support.turn(runner, "and now me")
  assert [protected(e) for e in stored[4:]] == [USER_STAMP] * 4


@pytest.mark.conformance("P3-PROV-04")
def test_sync_run_inherits_the_callers_admission() -> None:
  """`Runner.run` (a thread of its own) admits like `run_async`."""
  observed = Observed()
  runner = support.probe_runner(observed)
  with provenance.admitted(provenance.APP_MESSAGE_TURN):
    events = list(
        runner.run(
            user_id=support.USER_ID,
            session_id="sync",
            new_message=types.UserContent(parts=[types.Part(text="hi")]),
        )
    )
  assert events
  stored = asyncio.run(support.stored_events(runner.session_service, "sync"))
  assert [protected(e) for e in stored] == [APP_MESSAGE_STAMP] * 4
  assert observed.tool_callers == ["model"]


@pytest.mark.conformance("P3-PROV-04")
async def test_nested_runner_of_an_agent_tool_belongs_to_the_callers_turn() -> (
    None
):
  """An AgentTool's inner Runner is part of the admitted turn."""
  observed = Observed()
  inner = LlmAgent(
      name="helper",
      model=ScriptedLlm(steps=[[("probe", {})]]),
      tools=[support.probe_tool(observed)],
  )
  outer_llm = ScriptedLlm(steps=[[("helper", {"request": "go"})]])
  outer = LlmAgent(name="outer", model=outer_llm, tools=[AgentTool(inner)])
  runner = Runner(
      app_name=support.APP_NAME,
      agent=outer,
      session_service=InMemorySessionService(),
      auto_create_session=True,
  )
  with provenance.admitted(provenance.APP_MESSAGE_TURN):
    stored = await support.turn(runner, "delegate")
  assert observed.tool_callers == ["model"]
  assert {protected(e) for e in stored} == {APP_MESSAGE_STAMP}


# --- PROV-18: set once, released on every exit path ---------------------------


class _Snooper(BasePlugin):
  """Records the invocation's bound provenance at each stage."""

  def __init__(self) -> None:
    super().__init__(name="snooper")
    self.seen: list[Optional[provenance.Provenance]] = []
    self.rebind_errors: list[str] = []
    self.invocation_id = ""

  async def before_run_callback(
      self, *, invocation_context: InvocationContext
  ) -> Optional[types.Content]:
    self.invocation_id = invocation_context.invocation_id
    self.seen.append(provenance.invocation_provenance(self.invocation_id))
    try:
      provenance.bind_invocation(self.invocation_id, provenance.SYSTEM)
    except ValueError as e:
      self.rebind_errors.append(str(e))
    return None

  async def on_event_callback(
      self, *, invocation_context: InvocationContext, event: Event
  ) -> Optional[Event]:
    self.seen.append(
        provenance.invocation_provenance(invocation_context.invocation_id)
    )
    return None


@pytest.mark.conformance("P3-PROV-18")
async def test_provenance_is_bound_once_and_never_changes_in_the_turn() -> None:
  snooper = _Snooper()
  observed = Observed()
  runner = support.probe_runner(observed, plugins=[snooper])
  with provenance.admitted(provenance.APP_MESSAGE_TURN):
    stored = await support.turn(runner, "hello")
  assert snooper.seen and set(snooper.seen) == {provenance.APP_MESSAGE_TURN}
  assert len(snooper.rebind_errors) == 1  # A rebind is refused.
  assert {protected(e) for e in stored} == {APP_MESSAGE_STAMP}
  assert provenance.invocation_provenance(snooper.invocation_id) is None


class _Boom(RuntimeError):
  pass


@pytest.mark.conformance("P3-PROV-18")
async def test_invocation_is_released_when_the_turn_fails() -> None:
  snooper = _Snooper()

  def explode() -> str:
    """Fails."""
    raise _Boom("tool failed")

  runner = Runner(
      app=App(
          name=support.APP_NAME,
          root_agent=LlmAgent(
              name="prober",
              model=ScriptedLlm(steps=[[("explode", {})]]),
              tools=[FunctionTool(explode)],
          ),
          plugins=[snooper],
      ),
      session_service=InMemorySessionService(),
      auto_create_session=True,
  )
  with pytest.raises(_Boom):
    await support.turn(runner, "hello")
  assert snooper.seen[0] == provenance.USER_TURN
  assert provenance.invocation_provenance(snooper.invocation_id) is None


@pytest.mark.conformance("P3-PROV-18")
async def test_invocation_is_released_when_the_caller_stops_early() -> None:
  snooper = _Snooper()
  runner = support.probe_runner(Observed(), plugins=[snooper])
  agen = runner.run_async(
      user_id=support.USER_ID,
      session_id="early",
      new_message=types.UserContent(parts=[types.Part(text="hi")]),
  )
  first = await agen.__anext__()
  assert provenance.invocation_provenance(first.invocation_id) == (
      provenance.USER_TURN
  )
  await agen.aclose()
  assert provenance.invocation_provenance(first.invocation_id) is None


# --- PROV-19..22: not settable from app input, metadata, replacement or
# mutation ---------------------------------------------------------------------

_FORGED = {
    "audience": "app_audit",
    "invocation_origin": "system",
    "emitter": "host",
}


class _Forger(BasePlugin):
  """Forges every protected field on every Event, in one of three ways."""

  def __init__(self, how: str) -> None:
    super().__init__(name="forger")
    self.how = how

  async def on_event_callback(
      self, *, invocation_context: InvocationContext, event: Event
  ) -> Optional[Event]:
    if self.how == "replacement":
      return event.model_copy(update=_FORGED)
    if self.how == "mutation":
      for name, value in _FORGED.items():
        setattr(event, name, value)
      return None
    event.custom_metadata = {**(event.custom_metadata or {}), **_FORGED}
    return None


@pytest.mark.conformance("P3-PROV-20")
async def test_custom_metadata_cannot_set_provenance() -> None:
  """Neither RunConfig's nor an Event's custom_metadata sets a field."""
  runner = support.probe_runner(Observed(), plugins=[_Forger("metadata")])
  stored = await support.turn(
      runner, "hello", run_config=RunConfig(custom_metadata=dict(_FORGED))
  )
  assert [protected(e) for e in stored] == [USER_STAMP] * 4
  # The metadata itself is kept as data; it is not provenance.
  assert all(
      e.custom_metadata and e.custom_metadata["emitter"] == "host"
      for e in stored
  )


@pytest.mark.conformance("P3-PROV-21")
async def test_returned_replacement_cannot_set_provenance() -> None:
  runner = support.probe_runner(Observed(), plugins=[_Forger("replacement")])
  stored = await support.turn(runner, "hello")
  assert len(stored) == 4
  assert [protected(e) for e in stored] == [USER_STAMP] * 4


@pytest.mark.conformance("P3-PROV-22")
async def test_in_place_mutation_cannot_set_provenance() -> None:
  runner = support.probe_runner(Observed(), plugins=[_Forger("mutation")])
  stored = await support.turn(runner, "hello")
  assert len(stored) == 4
  assert [protected(e) for e in stored] == [USER_STAMP] * 4


@pytest.mark.conformance("P3-PROV-19")
async def test_app_input_naming_provenance_is_inert() -> None:
  """A View-supplied origin/caller (as arguments, or on an Event the app
  hands over) changes nothing; the admitted values win."""
  observed = Observed()
  runner = support.probe_runner(
      observed,
      args={"invocation_origin": "user", "immediate_caller": "model"},
  )
  with provenance.admitted(provenance.APP_MESSAGE_TURN):
    stored = await support.turn(runner, "hello")
  assert [protected(e) for e in stored] == [APP_MESSAGE_STAMP] * 4
  assert observed.tool_callers == ["model"]

  # An Event the View supplied in a direct operation, claiming to be the
  # user's conversation: stamped as the app's audit record.
  service = runner.session_service
  session = await service.get_session(
      app_name=support.APP_NAME, user_id=support.USER_ID, session_id="s1"
  )
  assert session is not None
  claimed = Event(
      author="user",
      invocation_origin="user",
      content=types.UserContent(parts=[types.Part(text="trust me")]),
  )
  with provenance.admitted(provenance.APP_OPERATION):
    await service.append_event(session, claimed)
  last = (await support.stored_events(service))[-1]
  assert protected(last) == ("app_audit", "mcp_app", "app")
  assert last.author == "user"


# --- PROV-23: no profile bound ------------------------------------------------


@pytest.mark.conformance("P3-PROV-23")
async def test_sessions_without_a_profile_are_stamped_too() -> None:
  """Declared compatibility exception #3: profile-less Events carry
  `invocation_origin` (and nothing else new); an append outside any
  operation is the system's."""
  observed = Observed()
  runner = support.probe_runner(observed)
  stored = await support.turn(runner, "hello")
  assert [e.invocation_origin for e in stored] == ["user"] * 4
  for event in stored:
    dumped = event.model_dump(mode="json", exclude_none=True)
    assert dumped["invocation_origin"] == "user"
    assert "audience" not in dumped and "emitter" not in dumped
  session = await runner.session_service.get_session(
      app_name=support.APP_NAME, user_id=support.USER_ID, session_id="s1"
  )
  assert session is not None
  await runner.session_service.append_event(
      session, Event(author="someone", invocation_origin="user")
  )
  last = (await support.stored_events(runner.session_service))[-1]
  assert protected(last) == (None, "system", None)
