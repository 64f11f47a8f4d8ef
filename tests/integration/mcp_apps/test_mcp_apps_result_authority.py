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

"""One validated result authority for model-originated UI calls (RFC §5).

Every result comes from a real `Runner` turn against the stdio conformance
server: the scripted model calls `ui_result` (content for the model,
`structuredContent` and `_meta` for the View), an `after_tool_callback`
or an `on_event` plugin approves, redacts, replaces or tampers with the
FunctionResponse, and the append stage seals what was approved, merged
with the call's own hidden fields. Sessions live in the InMemory and the
SQLite Session service; the stores are the SQL ones on a SQLite file, so
a "restart" is new store and service objects on the same files. What was
sealed is read only through `GatedResultResolver`.
"""

from __future__ import annotations

import collections.abc
import contextlib
import copy
import dataclasses
import json
from pathlib import Path
from typing import Any
from typing import Callable
from typing import Optional

from google.adk.events._internal_metadata import public_event
from google.adk.events._internal_metadata import public_session
from google.adk.events.event import Event
from google.adk.mcp_apps.contracts.local_dev import LocalDevSealedResultStore
from google.adk.mcp_apps.errors import McpAppsError
from google.adk.mcp_apps.profile import local_dev_profile
from google.adk.mcp_apps.sealing.errors import SealingError
from google.adk.mcp_apps.sealing.errors import SealingErrorReason
from google.adk.mcp_apps.sealing.resolver import GatedResultResolver
from google.adk.mcp_apps.sealing.result_sealer import PENDING_SEALS
from google.adk.mcp_apps.stores.sql_sealed_result_store import TABLE_NAME
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.genai import types as genai_types
from mcp_apps_conformance_server import names
import pytest
from sealing_support import APP
from sealing_support import bound_stack
from sealing_support import BoundStack
from sealing_support import close_profile
from sealing_support import OracleResolver
from sealing_support import sql_profile
from sealing_support import USER
from sealing_support import widget_event
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

pytestmark = pytest.mark.integration

TIMEOUT = 30.0
REDACTED = "[redacted by policy]"
HIDDEN = {"label": "secret", "forView": True}

EventChange = Callable[[Event], Optional[Event]]


class EventPolicy(BasePlugin):
  """An ordinary `on_event` plugin applying `change` to Events with a
  FunctionResponse (in place, or returning a replacement)."""

  def __init__(self, change: EventChange) -> None:
    super().__init__(name="event_policy_under_test")
    self.change = change
    self.calls = 0

  async def on_event_callback(
      self, *, invocation_context: Any, event: Event
  ) -> Optional[Event]:
    del invocation_context
    if not event.get_function_responses():
      return None
    self.calls += 1
    return self.change(event)


class CountingSealedStore(LocalDevSealedResultStore):
  """The development sealed-result store, counting the records it wrote."""

  def __init__(self) -> None:
    super().__init__()
    self.created = 0

  async def create(self, *args: Any, **kwargs: Any) -> Any:
    self.created += 1
    return await super().create(*args, **kwargs)


@dataclasses.dataclass
class Env:
  """One test's files, server and Session-service kind.

  `memory`: an InMemory Session service with the development stores (the
  SQL lifecycle store's creation fence needs a durable Session service);
  `sqlite`: a SQLite Session service with SQL stores on a SQLite file.
  """

  params: Any
  store_url: str
  session_db: Path
  kind: str
  memory: Optional[InMemorySessionService] = None
  dev_store: Optional[CountingSealedStore] = None

  async def records(self) -> int:
    """How many sealed records were ever written."""
    if self.kind == "sqlite":
      return await _row_count(self.store_url)
    return self.dev_store.created if self.dev_store is not None else 0

  def sessions(self) -> Any:
    """The Session service; for SQLite a new object over the same file."""
    if self.kind == "sqlite":
      return SqliteSessionService(str(self.session_db))
    if self.memory is None:
      self.memory = InMemorySessionService()
    return self.memory

  @contextlib.asynccontextmanager
  async def stack(
      self, **kwargs: Any
  ) -> collections.abc.AsyncIterator[BoundStack]:
    if self.kind == "sqlite":
      profile = await sql_profile(self.store_url)
    else:
      self.dev_store = self.dev_store or CountingSealedStore()
      profile = local_dev_profile(sealed_result_store=self.dev_store)
    try:
      async with bound_stack(
          self.params,
          session_service=self.sessions(),
          profile=profile,
          **kwargs,
      ) as st:
        yield st
    finally:
      await close_profile(profile)


@pytest.fixture(params=["memory", "sqlite"])
def env(request: pytest.FixtureRequest, tmp_path: Path, mcp_apps: Any) -> Env:
  return Env(
      params=StdioConnectionParams(
          server_params=mcp_apps.stdio_parameters({}), timeout=TIMEOUT
      ),
      store_url=f"sqlite+aiosqlite:///{tmp_path / 's.db'}",
      session_db=tmp_path / "sessions.db",
      kind=request.param,
  )


@pytest.fixture
def sqlite_env(tmp_path: Path, mcp_apps: Any) -> Env:
  return Env(
      params=StdioConnectionParams(
          server_params=mcp_apps.stdio_parameters({}), timeout=TIMEOUT
      ),
      store_url=f"sqlite+aiosqlite:///{tmp_path / 's.db'}",
      session_db=tmp_path / "sessions.db",
      kind="sqlite",
  )


# --- Helpers -----------------------------------------------------------------


async def _row_count(url: str) -> int:
  engine = create_async_engine(url)
  try:
    async with engine.connect() as conn:
      result = await conn.execute(text(f"SELECT COUNT(*) FROM {TABLE_NAME}"))
      return int(result.scalar_one())
  finally:
    await engine.dispose()


def _responses(event: Event) -> dict[str, dict[str, Any]]:
  return {
      part.function_response.id: part.function_response.response
      for part in event.content.parts
      if part.function_response is not None
  }


def _rewrite_responses(
    event: Event, change: Callable[[str, dict[str, Any]], dict[str, Any]]
) -> None:
  """Replaces each FunctionResponse's dict by `change(call_id, copy)`."""
  for part in event.content.parts:
    response = part.function_response
    if response is not None:
      response.response = change(response.id, copy.deepcopy(response.response))


def _redact(response: dict[str, Any]) -> dict[str, Any]:
  response["content"] = [{"type": "text", "text": REDACTED}]
  return response


async def _sealed(st: BoundStack, sid: str, event: Event) -> dict[str, Any]:
  """Every call's released full result, by function-call id."""
  resolver = OracleResolver(st.profile, st.session_service)
  out = {}
  for call_id in _responses(event):
    resolved = await resolver.resolve(
        st.key(sid), event_id=event.id, function_call_id=call_id
    )
    out[call_id] = resolved.full_result()
  return out


async def _stored(st: BoundStack, sid: str, event_id: str) -> Event:
  (stored,) = [e for e in await st.stored_events(sid) if e.id == event_id]
  return stored


def _model_saw(st: BoundStack) -> str:
  """What the model's last request carried, serialized."""
  request = st.llm.requests[-1]
  return "".join(c.model_dump_json() for c in request.contents)


async def _ui_turn(
    st: BoundStack, *labels: str
) -> tuple[str, Event, dict[str, Any]]:
  """A turn calling `ui_result` once per label; the stored widget Event
  and every call's sealed full result."""
  sid = await st.new_session()
  yielded = widget_event(
      await st.turn(
          sid, *[(names.UI_RESULT, {"label": label}) for label in labels]
      )
  )
  stored = await _stored(st, sid, yielded.id)
  return sid, stored, await _sealed(st, sid, stored)


def _public_fields(result: dict[str, Any]) -> dict[str, Any]:
  return {k: result[k] for k in ("content", "isError") if k in result}


# --- Callback approval (§5 step 1) --------------------------------------------


def _redacting_after_tool(tool, args, tool_context, tool_response):
  del tool, args, tool_context
  return _redact(copy.deepcopy(tool_response))


def _replacing_after_tool(tool, args, tool_context, tool_response):
  del tool, args, tool_context, tool_response
  return {
      "content": [{"type": "text", "text": "replaced"}],
      "isError": True,
  }


def _mutate_then_return(tool, args, tool_context, tool_response):
  del tool, args, tool_context
  tool_response["content"][0]["text"] = "mutated and returned"
  return tool_response


@pytest.mark.conformance("P3-RES-01", "P3-RES-11", "P3-RES-34", "P3-RES-35")
async def test_after_tool_redaction_is_the_single_authority(env: Env):
  async with env.stack(
      agent_fields={"after_tool_callback": _redacting_after_tool}
  ) as st:
    sid, event, sealed = await _ui_turn(st, "secret")
    model_saw = _model_saw(st)
    session = await st.session_service.get_session(
        app_name=APP, user_id=USER, session_id=sid
    )

  ((call_id, response),) = _responses(event).items()
  assert response["content"] == [{"type": "text", "text": REDACTED}]
  # The sealed record is the approved public fields over the call's own
  # hidden fields; the server's unredacted text is nowhere.
  assert sealed[call_id]["content"] == response["content"]
  assert sealed[call_id]["isError"] is False
  assert sealed[call_id]["structuredContent"] == HIDDEN
  assert "for the model" not in str(sealed[call_id])
  assert REDACTED in model_saw
  assert "for the model" not in model_saw
  # Hidden fields and the candidate reach no public surface.
  for public in (
      public_event(event).model_dump_json(by_alias=True),
      public_session(session).model_dump_json(by_alias=True),
  ):
    assert "forView" not in public and "conformance/private" not in public
    assert "for the model" not in public
  assert "forView" not in model_saw
  assert len(PENDING_SEALS) == 0


@pytest.mark.conformance("P3-RES-02")
async def test_after_tool_replacement_is_authoritative(env: Env):
  async with env.stack(
      agent_fields={"after_tool_callback": _replacing_after_tool}
  ) as st:
    _, event, sealed = await _ui_turn(st, "secret")
    model_saw = _model_saw(st)

  ((call_id, response),) = _responses(event).items()
  assert _public_fields(sealed[call_id]) == {
      "content": [{"type": "text", "text": "replaced"}],
      "isError": True,
  }
  assert _public_fields(response) == _public_fields(sealed[call_id])
  assert sealed[call_id]["structuredContent"] == HIDDEN
  assert "replaced" in model_saw


@pytest.mark.conformance("P3-RES-03")
async def test_mutate_then_return_is_the_approved_result(env: Env):
  async with env.stack(
      agent_fields={"after_tool_callback": _mutate_then_return}
  ) as st:
    _, event, sealed = await _ui_turn(st, "secret")

  ((call_id, response),) = _responses(event).items()
  assert response["content"][0]["text"] == "mutated and returned"
  assert sealed[call_id]["content"] == response["content"]


def _mutate_in_place(tool, args, tool_context, tool_response):
  del tool, args, tool_context
  tool_response["content"][0]["text"] = "mutated in place"


@pytest.mark.conformance("P3-RES-05")
async def test_in_place_mutation_without_return_is_discarded(env: Env):
  async with env.stack(
      agent_fields={"after_tool_callback": _mutate_in_place}
  ) as st:
    _, event, sealed = await _ui_turn(st, "secret")
    model_saw = _model_saw(st)

  ((call_id, response),) = _responses(event).items()
  assert response["content"][0]["text"] == "secret: for the model"
  assert sealed[call_id]["content"] == response["content"]
  assert "mutated in place" not in model_saw


class AfterToolFailure(RuntimeError):
  """What the mutate-then-raise callback raises."""


def _mutate_then_raise(tool, args, tool_context, tool_response):
  del tool, args, tool_context
  tool_response["content"][0]["text"] = "mutated then raised"
  raise AfterToolFailure("after-tool policy failed")


def _error_replacement(tool, args, tool_context, error):
  del tool, args, tool_context
  return {
      "content": [{"type": "text", "text": f"recovered: {error}"}],
      "isError": True,
  }


@pytest.mark.conformance("P3-RES-04", "P3-RES-10")
async def test_mutate_then_raise_runs_the_error_chain(env: Env):
  async with env.stack(
      agent_fields={
          "after_tool_callback": _mutate_then_raise,
          "on_tool_error_callback": _error_replacement,
      }
  ) as st:
    _, event, sealed = await _ui_turn(st, "secret")
    model_saw = _model_saw(st)

  ((call_id, response),) = _responses(event).items()
  assert response == {
      "content": [
          {"type": "text", "text": "recovered: after-tool policy failed"}
      ],
      "isError": True,
  }
  assert _public_fields(sealed[call_id]) == response
  assert sealed[call_id]["structuredContent"] == HIDDEN
  assert "mutated then raised" not in model_saw + str(sealed)


@pytest.mark.conformance("P3-RES-04")
async def test_mutate_then_raise_without_replacement_fails_the_call(env: Env):
  async with env.stack(
      agent_fields={"after_tool_callback": _mutate_then_raise}
  ) as st:
    sid = await st.new_session()
    with pytest.raises(AfterToolFailure):
      await st.turn(sid, (names.UI_RESULT, {"label": "secret"}))
    stored = await st.stored_events(sid)
    pending = len(PENDING_SEALS)

  assert not [e for e in stored if e.get_function_responses()]
  assert await env.records() == 0
  assert pending == 0


# --- on_event redaction on the model origin -----------------------------------


def _replacement_redaction(event: Event) -> Event:
  replacement = event.model_copy(deep=True)
  _rewrite_responses(replacement, lambda _, r: _redact(r))
  return replacement


def _in_place_redaction(event: Event) -> None:
  _rewrite_responses(event, lambda _, r: _redact(r))


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(
            _replacement_redaction,
            id="returned-replacement",
            marks=pytest.mark.conformance("P3-RES-12"),
        ),
        pytest.param(
            _in_place_redaction,
            id="in-place",
            marks=pytest.mark.conformance("P3-RES-14"),
        ),
    ],
)
async def test_on_event_redaction_reaches_model_view_and_seal(
    env: Env, change: EventChange
):
  policy = EventPolicy(change)
  async with env.stack(plugins=[policy]) as st:
    _, event, sealed = await _ui_turn(st, "secret")
    model_saw = _model_saw(st)

  ((call_id, response),) = _responses(event).items()
  assert response["content"] == [{"type": "text", "text": REDACTED}]
  assert sealed[call_id]["content"] == response["content"]
  assert sealed[call_id]["structuredContent"] == HIDDEN
  assert REDACTED in model_saw and "for the model" not in model_saw


# --- The nine single-result structural rejections -----------------------------


def _remove(event: Event) -> None:
  event.content.parts = [
      p for p in event.content.parts if p.function_response is None
  ] or [genai_types.Part(text="gone")]


def _duplicate(event: Event) -> None:
  event.content.parts = list(event.content.parts) + [
      p.model_copy(deep=True) for p in event.content.parts
  ]


def _change_id(event: Event) -> None:
  for part in event.content.parts:
    if part.function_response is not None:
      part.function_response.id = "adk-forged"


def _change_name(event: Event) -> None:
  for part in event.content.parts:
    if part.function_response is not None:
      part.function_response.name = "some_other_tool"


def _move_correlation(event: Event) -> None:
  # A replacement cannot move the Event itself (the Runner keeps its id and
  # invocation id), so the call's correlation is moved on its descriptor.
  for widget in event.actions.render_ui_widgets:
    widget.payload["correlation"]["invocationId"] = "e-elsewhere"


def _set(key: str, value: Any) -> EventChange:
  def change(event: Event) -> None:
    def edit(_: str, response: dict[str, Any]) -> dict[str, Any]:
      response[key] = value
      return response

    _rewrite_responses(event, edit)

  return change


REJECTIONS = [
    pytest.param(
        _remove, id="removed", marks=pytest.mark.conformance("P3-RES-16")
    ),
    pytest.param(
        _duplicate, id="duplicated", marks=pytest.mark.conformance("P3-RES-17")
    ),
    pytest.param(
        _change_id, id="id-changed", marks=pytest.mark.conformance("P3-RES-18")
    ),
    pytest.param(
        _change_name,
        id="name-changed",
        marks=pytest.mark.conformance("P3-RES-19"),
    ),
    pytest.param(
        _move_correlation,
        id="correlation-moved",
        marks=pytest.mark.conformance("P3-RES-20"),
    ),
    pytest.param(
        _set("content", []),
        id="empty-content",
        marks=pytest.mark.conformance("P3-RES-21"),
    ),
    pytest.param(
        _set("content", [{"type": "text", "text": "   "}]),
        id="blank-content",
        marks=pytest.mark.conformance("P3-RES-21"),
    ),
    pytest.param(
        _set("content", [{"type": "hologram", "text": "x"}]),
        id="invalid-block",
        marks=pytest.mark.conformance("P3-RES-22"),
    ),
    pytest.param(
        _set("isError", "yes"),
        id="non-boolean-isError",
        marks=pytest.mark.conformance("P3-RES-23"),
    ),
    pytest.param(
        _set("resultType", "input_required"),
        id="non-terminal-resultType",
        marks=pytest.mark.conformance("P3-RES-24"),
    ),
]


CORRELATION_CHANGES = (
    _remove,
    _duplicate,
    _change_id,
    _change_name,
    _move_correlation,
)


@pytest.mark.conformance("P3-RES-33")
@pytest.mark.parametrize("change", REJECTIONS)
async def test_structural_rejection_refuses_the_event_before_any_record(
    env: Env, change: EventChange
):
  async with env.stack(plugins=[EventPolicy(change)]) as st:
    sid = await st.new_session()
    with pytest.raises(McpAppsError) as raised:
      await st.turn(sid, (names.UI_RESULT, {"label": "secret"}))
    stored = await st.stored_events(sid)
    pending = len(PENDING_SEALS)

  error = raised.value
  assert isinstance(error, SealingError)
  expected = (
      SealingErrorReason.RESULT_CORRELATION
      if change in CORRELATION_CHANGES
      else SealingErrorReason.RESULT_INVALID
  )
  assert error.reason is expected
  assert error.function_call_id
  # No Event reports the call, no record was ever written (nothing can
  # resolve), and no candidate is left to seal later.
  assert not [e for e in stored if e.get_function_responses()]
  assert not [e for e in stored if e.actions.render_ui_widgets]
  assert await env.records() == 0
  assert pending == 0


# --- All-UI batches ------------------------------------------------------------


def _redact_second(event: Event) -> None:
  ids = [r.id for r in event.get_function_responses()]
  _rewrite_responses(
      event, lambda call_id, r: _redact(r) if call_id == ids[-1] else r
  )


@pytest.mark.conformance(
    "P3-RES-25", "P3-RES-26", "P3-RES-27", "P3-RES-29", "P3-RES-32"
)
async def test_batch_candidates_merge_with_their_own_hidden_fields(env: Env):
  policy = EventPolicy(_redact_second)
  async with env.stack(plugins=[policy]) as st:
    _, event, sealed = await _ui_turn(st, "first", "second")
    calls = policy.calls

  first, second = list(_responses(event))
  assert calls == 1  # one Event, the ordinary policy ran once
  assert len(event.actions.render_ui_widgets) == 2
  assert sealed[first]["structuredContent"]["label"] == "first"
  assert sealed[first]["content"][0]["text"] == "first: for the model"
  assert sealed[second]["structuredContent"]["label"] == "second"
  assert sealed[second]["content"] == [{"type": "text", "text": REDACTED}]
  for call_id, response in _responses(event).items():
    assert _public_fields(sealed[call_id]) == _public_fields(response)


def _tamper_second(event: Event) -> None:
  ids = [r.id for r in event.get_function_responses()]

  def edit(call_id: str, response: dict[str, Any]) -> dict[str, Any]:
    if call_id == ids[-1]:
      response["isError"] = "maybe"
    return response

  _rewrite_responses(event, edit)


@pytest.mark.conformance("P3-RES-28", "P3-RES-31", "P3-RES-33")
async def test_one_tampered_sibling_refuses_the_whole_batch_event(env: Env):
  async with env.stack(plugins=[EventPolicy(_tamper_second)]) as st:
    sid = await st.new_session()
    with pytest.raises(SealingError) as raised:
      await st.turn(
          sid,
          (names.UI_RESULT, {"label": "first"}),
          (names.UI_RESULT, {"label": "second"}),
      )
    stored = await st.stored_events(sid)
    pending = len(PENDING_SEALS)

  assert raised.value.reason is SealingErrorReason.RESULT_INVALID
  assert not [e for e in stored if e.get_function_responses()]
  assert await env.records() == 0
  assert pending == 0


# --- Restart -------------------------------------------------------------------


@pytest.mark.conformance("P3-RES-32", "P3-RES-34")
async def test_restart_maps_each_call_to_its_approved_record(sqlite_env: Env):
  async with sqlite_env.stack(plugins=[EventPolicy(_redact_second)]) as st:
    sid, event, before = await _ui_turn(st, "first", "second")
  async with sqlite_env.stack() as st:
    stored = await _stored(st, sid, event.id)
    after = await _sealed(st, sid, stored)

  assert after == before
  for call_id, response in _responses(stored).items():
    assert _public_fields(after[call_id]) == _public_fields(response)


# --- before_tool_callback short-circuits and the error chain -------------------


def _short_circuit(value: Any) -> Callable[..., Any]:
  def before(tool, args, tool_context):
    del tool, args, tool_context
    return copy.deepcopy(value)

  return before


async def _short_circuit_turn(
    env: Env, **agent_fields: Any
) -> tuple[list[Event], str]:
  async with env.stack(agent_fields=agent_fields) as st:
    sid = await st.new_session()
    events = await st.turn(sid, (names.UI_RESULT, {"label": "secret"}))
    stored = await st.stored_events(sid)
    return stored, _model_saw(st)


def _only_response(events: list[Event]) -> dict[str, Any]:
  (response,) = [r.response for e in events for r in e.get_function_responses()]
  return response


@pytest.mark.conformance("P3-RES-06")
async def test_complete_short_circuit_is_validated_and_projected(env: Env):
  stored, model_saw = await _short_circuit_turn(
      env,
      before_tool_callback=_short_circuit({
          "content": [{"type": "text", "text": "from the callback"}],
          "isError": False,
          "structuredContent": {"kept": "off the model path"},
      }),
  )

  assert _only_response(stored) == {
      "content": [{"type": "text", "text": "from the callback"}],
      "isError": False,
  }
  assert "off the model path" not in model_saw
  # Nothing ran on the server: no View is offered, nothing was sealed.
  assert not [e for e in stored if e.actions.render_ui_widgets]
  assert await env.records() == 0


@pytest.mark.conformance("P3-RES-07")
async def test_ordinary_short_circuit_becomes_a_json_text_block(env: Env):
  stored, _ = await _short_circuit_turn(
      env, before_tool_callback=_short_circuit({"answer": 42, "b": [1]})
  )

  response = _only_response(stored)
  (block,) = response["content"]
  assert block["type"] == "text"
  assert json.loads(block["text"]) == {"answer": 42, "b": [1]}
  assert response["isError"] is False


def _replacing_error_callback(tool, args, tool_context, error):
  del tool, args, tool_context
  assert isinstance(error, SealingError)
  return {
      "content": [{"type": "text", "text": f"refused: {error.reason.value}"}],
      "isError": True,
  }


@pytest.mark.conformance("P3-RES-09", "P3-RES-10")
async def test_invalid_short_circuit_goes_through_the_error_chain(env: Env):
  stored, model_saw = await _short_circuit_turn(
      env,
      before_tool_callback=_short_circuit({"content": []}),
      on_tool_error_callback=_replacing_error_callback,
  )

  assert _only_response(stored) == {
      "content": [{"type": "text", "text": "refused: result_invalid"}],
      "isError": True,
  }
  assert "refused: result_invalid" in model_saw


@pytest.mark.conformance("P3-RES-09")
async def test_invalid_short_circuit_without_error_callback_fails_typed(
    env: Env,
):
  async with env.stack(
      agent_fields={"before_tool_callback": _short_circuit({"content": []})}
  ) as st:
    sid = await st.new_session()
    with pytest.raises(SealingError) as raised:
      await st.turn(sid, (names.UI_RESULT, {"label": "secret"}))
    stored = await st.stored_events(sid)

  assert raised.value.reason is SealingErrorReason.RESULT_INVALID
  assert not [e for e in stored if e.get_function_responses()]
