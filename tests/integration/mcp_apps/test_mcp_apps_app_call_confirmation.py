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

"""A governed app call's confirmation: P3-CONF-01 .. P3-CONF-13.

Every governed call is a real `call_app_tool` on the render reservation of
a real Runner turn's `open_view`, over a profile-bound registry and the
conformance server (stdio). The View calls `side_effect(key)`, which counts
one execution per key in the server's effects file; what the server
received is read from that file and from its request log, never from ADK.
The deployment's confirmation UI is a recording test double.

CONF-12's "four mutation classes", as read here: through the confirmation
path, an attempt to change (a) the arguments, (b) the Session state, (c)
artifacts or event actions, (d) credentials or services. Each is refused
typed, the call is denied, and nothing reaches the server or the Session.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
import contextlib
import dataclasses
import datetime
import json
from pathlib import Path
from typing import Any
from typing import Optional

from google.adk.mcp_apps.affinity.generations import GenerationHold
from google.adk.mcp_apps.affinity.routing import call_app_tool
from google.adk.mcp_apps.facades.confirmation import AppCallConfirmation
from google.adk.mcp_apps.facades.confirmation import ConfirmationPermit
from google.adk.mcp_apps.facades.confirmation import ReadonlyConfirmationContext
from google.adk.mcp_apps.facades.errors import FacadeError
from google.adk.mcp_apps.facades.errors import FacadeErrorReason
from google.adk.mcp_apps.profile.fingerprint import binding_revision
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.adk.tools.mcp_tool.mcp_tool import McpTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types as genai_types
from mcp_apps_conformance_server import names
import pytest
from sealing_support import APP
from sealing_support import bound_stack
from sealing_support import BoundStack
from sealing_support import close_profile
from sealing_support import sql_profile
from sealing_support import TOOLSET
from sealing_support import USER
from sealing_support import widget_event

pytestmark = pytest.mark.integration

TIMEOUT = 30.0
STATE = {"cart": [{"sku": "A1", "qty": 2}], "tier": "gold"}


class Counting:
  """A `require_confirmation` predicate that counts its evaluations.

  Upstream's model path (which evaluates with a live `ToolContext`) is
  always answered False, so the harness's model turn renders its View; the
  scripted answers are given in order elsewhere (the last one repeats).
  """

  def __init__(self, *answers: bool) -> None:
    self.answers = list(answers) or [True]
    self.calls: list[dict[str, Any]] = []
    self._governed = 0

  def __call__(self, **kwargs: Any) -> bool:
    self.calls.append(kwargs)
    if isinstance(kwargs.get("tool_context"), ToolContext):
      return False
    self._governed += 1
    return self.answers[min(self._governed, len(self.answers)) - 1]


class Approver:
  """The deployment's confirmation UI: records permits, answers as told."""

  def __init__(
      self,
      answer: bool = True,
      during: Optional[Callable[[ConfirmationPermit], Awaitable[None]]] = None,
  ) -> None:
    self.answer = answer
    self.during = during
    self.permits: list[ConfirmationPermit] = []

  async def __call__(self, permit: ConfirmationPermit) -> bool:
    self.permits.append(permit)
    if self.during is not None:
      await self.during(permit)
    return self.answer


def _calls(log: Path, tool: str) -> int:
  """How many `tools/call` of `tool` a server's request log records."""
  lines = log.read_text().splitlines() if log.exists() else []
  entries = [json.loads(line) for line in lines]
  return sum(
      1
      for e in entries
      if e.get("method") == "tools/call" and e.get("name") == tool
  )


@dataclasses.dataclass
class Harness:
  """A bound stack over a logging conformance server, and one View."""

  st: BoundStack
  log: Path
  effects: Path
  sid: str = ""
  hold: Optional[GenerationHold] = None

  @property
  def server_id(self) -> str:
    server_id: str = self.st.registry.lookup(TOOLSET).spec.server_id
    return server_id

  def calls(self, tool: str = names.SIDE_EFFECT) -> int:
    """How many `tools/call` of `tool` the server received."""
    return _calls(self.log, tool)

  def counts(self) -> dict[str, int]:
    """The server's execution counters, by key."""
    if not self.effects.exists() or not self.effects.read_text().strip():
      return {}
    counts: dict[str, int] = json.loads(self.effects.read_text())["counts"]
    return counts

  async def session_state(self) -> tuple[dict[str, Any], int]:
    """The persisted Session state and number of Events."""
    session = await self.st.session_service.get_session(
        app_name=APP, user_id=USER, session_id=self.sid
    )
    assert session is not None
    return dict(session.state), len(session.events)

  def confirmation(
      self,
      predicate: Any,
      approve: Callable[[ConfirmationPermit], Awaitable[bool]],
      **kwargs: Any,
  ) -> AppCallConfirmation:
    kwargs.setdefault("state", STATE)
    return AppCallConfirmation(
        predicate=predicate,
        session=self.st.key(self.sid),
        binding_revision=lambda: binding_revision(self.st.profile),
        approve=approve,
        **kwargs,
    )

  async def call(
      self,
      arguments: dict[str, Any],
      confirmation: Optional[AppCallConfirmation],
      tool: str = names.SIDE_EFFECT,
  ) -> Any:
    """The View's governed `tools/call`, through `call_app_tool`."""
    assert self.hold is not None
    return await call_app_tool(
        self.hold,
        tool,
        arguments,
        view_server_id=self.server_id,
        target_server_id=self.server_id,
        confirmation=confirmation,
    )


@contextlib.asynccontextmanager
async def _harness(
    mcp_apps: Any, tmp_path: Path, **spec_fields: Any
) -> AsyncIterator[Harness]:
  """A Session with `STATE`, a real model turn, and the View's hold."""
  log, effects = tmp_path / "requests.jsonl", tmp_path / "effects.json"
  params = StdioConnectionParams(
      server_params=mcp_apps.stdio_parameters(
          {"request_log_file": str(log), "effects_file": str(effects)}
      ),
      timeout=TIMEOUT,
  )
  profile = await sql_profile(f"sqlite+aiosqlite:///{tmp_path / 'stores.db'}")
  service = SqliteSessionService(str(tmp_path / "sessions.db"))
  try:
    async with bound_stack(
        params, session_service=service, profile=profile, **spec_fields
    ) as st:
      h = Harness(st, log, effects)
      session = await service.create_session(
          app_name=APP, user_id=USER, state=dict(STATE)
      )
      h.sid = str(session.id)
      event = widget_event(await st.turn(h.sid, (names.OPEN_VIEW, {})))
      (call_id,) = [w.id for w in event.actions.render_ui_widgets]
      h.hold = st.registry.render_reservations.take(
          TOOLSET, st.key(h.sid), call_id
      )
      assert h.hold is not None
      try:
        yield h
      finally:
        h.hold.release()
  finally:
    await close_profile(profile)


def _spec_predicate(h: Harness) -> Any:
  """The toolset's configured `require_confirmation`."""
  return h.st.registry.lookup(TOOLSET).spec.require_confirmation


@pytest.mark.conformance("P3-CONF-01")
async def test_predicate_is_evaluated_exactly_once_per_governed_call(
    mcp_apps: Any, tmp_path: Path
) -> None:
  predicate = Counting(True)
  async with _harness(mcp_apps, tmp_path, require_confirmation=predicate) as h:
    model_turn_evaluations = len(predicate.calls)
    approver = Approver()
    result = await h.call(
        {"key": "k1"}, h.confirmation(_spec_predicate(h), approver)
    )
    assert not result.is_error, result
    assert len(predicate.calls) - model_turn_evaluations == 1
    assert predicate.calls[-1]["key"] == "k1"
    assert len(approver.permits) == 1
    assert h.counts() == {"k1": 1}


@pytest.mark.conformance("P3-CONF-02")
async def test_toggling_predicate_is_decided_by_its_first_evaluation(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with _harness(mcp_apps, tmp_path) as h:
    toggling = Counting(True, False)
    approver = Approver()
    await h.call({"key": "t"}, h.confirmation(toggling, approver))
    # Decided once (True): confirmation asked; no second evaluation that
    # would have said False.
    assert len(toggling.calls) == 1
    assert len(approver.permits) == 1
    assert approver.permits[0].consumed
    assert h.counts() == {"t": 1}


_FORBIDDEN = (
    "session",
    "invocation_context",
    "_invocation_context",
    "actions",
    "save_artifact",
    "load_artifact",
    "list_artifacts",
    "get_auth_response",
    "request_credential",
    "load_credential",
    "save_credential",
    "request_confirmation",
    "get_invocation_context",
    "session_service",
)


@pytest.mark.conformance("P3-CONF-03")
async def test_predicate_gets_a_read_only_context_without_live_objects(
    mcp_apps: Any, tmp_path: Path
) -> None:
  seen: dict[str, Any] = {}

  def inspecting(key: str, tool_context: Any) -> bool:
    seen["context"] = tool_context
    seen["ids"] = (
        tool_context.app_name,
        tool_context.user_id,
        tool_context.session_id,
        tool_context.tool_name,
        tool_context.server_id,
    )
    seen["state"] = tool_context.state
    seen["arguments"] = tool_context.arguments
    seen["key"] = key
    reasons = {}
    for name in _FORBIDDEN:
      try:
        getattr(tool_context, name)
      except FacadeError as e:
        reasons[name] = e.reason
    seen["reasons"] = reasons
    return False

  async with _harness(mcp_apps, tmp_path) as h:
    approver = Approver()
    with pytest.raises(FacadeError) as denied:
      await h.call({"key": "c3"}, h.confirmation(inspecting, approver))
    context = seen["context"]
    assert isinstance(context, ReadonlyConfirmationContext)
    assert seen["ids"] == (APP, USER, h.sid, names.SIDE_EFFECT, h.server_id)
    assert seen["state"] == STATE and seen["arguments"] == {"key": "c3"}
    assert seen["state"] is not STATE
    assert seen["reasons"] == {
        name: FacadeErrorReason.UNAVAILABLE for name in _FORBIDDEN
    }
    # Reaching for a live object fails closed even when the predicate
    # catches the error and answers "no confirmation needed".
    assert denied.value.reason is FacadeErrorReason.PREDICATE_FAILED
    assert approver.permits == []
    assert h.calls() == 0 and h.counts() == {}


@pytest.mark.conformance("P3-CONF-04")
async def test_predicate_needing_a_tool_context_denies_and_never_executes(
    mcp_apps: Any, tmp_path: Path
) -> None:
  evaluated: list[str] = []

  def needs_context(key: str, tool_context: ToolContext) -> bool:
    evaluated.append(key)
    return False

  def raising(key: str) -> bool:
    evaluated.append(key)
    raise RuntimeError("no")

  async with _harness(mcp_apps, tmp_path) as h:
    approver = Approver()
    with pytest.raises(FacadeError) as denied:
      await h.call({"key": "c4"}, h.confirmation(needs_context, approver))
    assert denied.value.reason is FacadeErrorReason.NEEDS_TOOL_CONTEXT
    assert evaluated == []
    with pytest.raises(FacadeError) as failed:
      await h.call({"key": "c4"}, h.confirmation(raising, approver))
    assert failed.value.reason is FacadeErrorReason.PREDICATE_FAILED
    assert evaluated == ["c4"]
    assert approver.permits == []
    assert h.calls() == 0 and h.counts() == {}


async def _unused_permit(h: Harness) -> ConfirmationPermit:
  """A real call's sealed permit, refused by the UI (so never used)."""
  approver = Approver(answer=False)
  with pytest.raises(FacadeError) as denied:
    await h.call({"key": "p", "n": 1}, h.confirmation(True, approver))
  assert denied.value.reason is FacadeErrorReason.CONFIRMATION_DENIED
  (permit,) = approver.permits
  assert not permit.consumed
  return permit


def _presented(permit: ConfirmationPermit, **changes: Any) -> dict[str, Any]:
  call = {
      "tool_name": permit.tool_name,
      "server_id": permit.server_id,
      "binding_revision": permit.binding_revision,
      "arguments": {"key": "p", "n": 1},
  }
  call.update(changes)
  return call


@pytest.mark.conformance("P3-CONF-05")
async def test_permit_presented_for_another_tool_is_refused(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with _harness(mcp_apps, tmp_path) as h:
    permit = await _unused_permit(h)
    assert permit.tool_name == names.SIDE_EFFECT
    with pytest.raises(FacadeError) as refused:
      permit.verify(**_presented(permit, tool_name=names.APP_FOLLOWUP))
    assert refused.value.reason is FacadeErrorReason.PERMIT_TOOL_MISMATCH
    permit.verify(**_presented(permit))  # The exact call still matches.
    assert h.calls() == 0


@pytest.mark.conformance("P3-CONF-06")
async def test_permit_presented_for_another_server_is_refused(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with _harness(mcp_apps, tmp_path) as h:
    permit = await _unused_permit(h)
    assert permit.server_id == h.server_id
    with pytest.raises(FacadeError) as refused:
      permit.redeem(**_presented(permit, server_id="another-server"))
    assert refused.value.reason is FacadeErrorReason.PERMIT_SERVER_MISMATCH
    assert not permit.consumed
    assert h.calls() == 0


@pytest.mark.conformance("P3-CONF-07")
async def test_binding_revision_change_during_approval_invalidates_permit(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with _harness(mcp_apps, tmp_path) as h:

    async def rotate(permit: ConfirmationPermit) -> None:
      del permit
      keys = h.st.profile.key_provider
      await keys.rotate(datetime.timedelta(minutes=5))

    before = binding_revision(h.st.profile)
    approver = Approver(during=rotate)
    with pytest.raises(FacadeError) as refused:
      await h.call({"key": "r"}, h.confirmation(True, approver))
    assert refused.value.reason is FacadeErrorReason.PERMIT_REVISION_MISMATCH
    (permit,) = approver.permits
    assert permit.binding_revision == before
    assert binding_revision(h.st.profile) != before
    assert h.calls() == 0 and h.counts() == {}


@pytest.mark.conformance("P3-CONF-08")
async def test_permit_presented_with_other_arguments_is_refused(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with _harness(mcp_apps, tmp_path) as h:
    permit = await _unused_permit(h)
    assert permit.arguments_digest.startswith("sha256:")
    for other in ({"key": "p", "n": 2}, {"key": "p"}, {"key": "p", "n": 1.5}):
      with pytest.raises(FacadeError) as refused:
        permit.verify(**_presented(permit, arguments=other))
      assert refused.value.reason is FacadeErrorReason.PERMIT_ARGUMENTS_MISMATCH
    # Member order is not identity: the canonical digest ignores it.
    permit.verify(**_presented(permit, arguments={"n": 1, "key": "p"}))
    assert h.calls() == 0


async def test_permit_is_consumed_by_its_call_and_refused_a_second_time(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with _harness(mcp_apps, tmp_path) as h:
    approver = Approver()
    await h.call({"key": "once"}, h.confirmation(True, approver))
    (permit,) = approver.permits
    assert permit.consumed
    with pytest.raises(FacadeError) as again:
      permit.redeem(
          tool_name=permit.tool_name,
          server_id=permit.server_id,
          binding_revision=permit.binding_revision,
          arguments={"key": "once"},
      )
    assert again.value.reason is FacadeErrorReason.PERMIT_CONSUMED
    assert h.counts() == {"once": 1}


@pytest.mark.conformance("P3-CONF-09")
async def test_mutating_arguments_after_approval_changes_nothing_sent(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with _harness(mcp_apps, tmp_path) as h:
    arguments = {"key": "approved"}

    async def caller_mutates(permit: ConfirmationPermit) -> None:
      del permit
      arguments["key"] = "swapped"  # In place, by the caller.

    def callback_mutates(copy: dict[str, Any]) -> None:
      copy["key"] = "by-callback"  # By a before-send callback.

    approver = Approver(during=caller_mutates)
    result = await h.call(
        arguments,
        h.confirmation(True, approver, callbacks=(callback_mutates,)),
    )
    assert not result.is_error, result
    assert result.structured_content["key"] == "approved"
    assert h.counts() == {"approved": 1}
    assert arguments == {"key": "swapped"}


@pytest.mark.conformance("P3-CONF-10")
async def test_callbacks_get_independent_copies_of_the_arguments(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with _harness(mcp_apps, tmp_path) as h:
    copies: list[dict[str, Any]] = []

    def first(copy: dict[str, Any]) -> None:
      copies.append(copy)
      copy["key"] = "first"

    def second(copy: dict[str, Any]) -> None:
      copies.append(copy)

    approver = Approver()
    confirmation = h.confirmation(True, approver, callbacks=(first, second))
    await h.call({"key": "sealed"}, confirmation)
    (permit,) = approver.permits
    assert copies[0] == {"key": "first"}
    assert copies[1] == {"key": "sealed"}  # Not the first one's change.
    assert copies[0] is not copies[1]
    assert permit.arguments == {"key": "sealed"}
    assert h.counts() == {"sealed": 1}


@pytest.mark.conformance("P3-CONF-10")
def test_nested_mutation_of_a_copy_reaches_neither_seal_nor_next_copy() -> None:
  # The conformance tool takes one string: the nested case is shown on a
  # permit sealed as the flow seals one, whose copies callbacks get.
  permit = ConfirmationPermit.seal(
      tool_name="t",
      server_id="s",
      binding_revision="r",
      arguments={"key": "k", "tags": {"a": [1]}},
  )
  first = permit.redeem(
      tool_name="t",
      server_id="s",
      binding_revision="r",
      arguments={"key": "k", "tags": {"a": [1]}},
  )
  first["tags"]["a"].append(2)
  assert permit.arguments == {"key": "k", "tags": {"a": [1]}}
  with pytest.raises(FacadeError) as frozen:
    permit.arguments["tags"]["a"].append(3)
  assert frozen.value.reason is FacadeErrorReason.READ_ONLY


@pytest.mark.conformance("P3-CONF-11")
async def test_mcp_tool_never_evaluates_confirmation_on_the_governed_path(
    mcp_apps: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
  predicate = Counting(True)
  async with _harness(mcp_apps, tmp_path, require_confirmation=predicate) as h:
    hook_calls: list[str] = []
    original = McpTool.check_require_confirmation

    async def counting_hook(self: McpTool, *args: Any, **kwargs: Any) -> Any:
      hook_calls.append(self.name)
      return await original(self, *args, **kwargs)

    monkeypatch.setattr(McpTool, "check_require_confirmation", counting_hook)
    before = len(predicate.calls)
    await h.call({"key": "g"}, h.confirmation(_spec_predicate(h), Approver()))
    assert hook_calls == []
    assert len(predicate.calls) - before == 1
    assert h.counts() == {"g": 1}


async def _save_artifact(context: Any) -> None:
  await context.save_artifact("a.txt", genai_types.Part(text="x"))


def _request_credential(context: Any) -> None:
  context.request_credential(None)


_MUTATIONS: dict[str, Callable[[Any], Any]] = {
    "arguments": lambda c: c.arguments.__setitem__("key", "evil"),
    "state": lambda c: c.state.__setitem__("tier", "platinum"),
    "artifacts": _save_artifact,
    "actions": lambda c: c.actions.state_delta.__setitem__("tier", "x"),
    "credentials": _request_credential,
    "services": lambda c: c._invocation_context.session_service,
}


@pytest.mark.conformance("P3-CONF-12")
@pytest.mark.parametrize("kind", sorted(_MUTATIONS))
async def test_every_mutation_class_through_confirmation_is_defeated(
    mcp_apps: Any, tmp_path: Path, kind: str
) -> None:
  mutate = _MUTATIONS[kind]

  async def mutating(key: str, confirmation_context: Any) -> bool:
    del key
    outcome = mutate(confirmation_context)
    if asyncio.iscoroutine(outcome):
      await outcome
    return False

  async with _harness(mcp_apps, tmp_path) as h:
    before = await h.session_state()
    arguments = {"key": "m"}
    with pytest.raises(FacadeError) as denied:
      await h.call(arguments, h.confirmation(mutating, Approver()))
    assert denied.value.reason is FacadeErrorReason.PREDICATE_FAILED
    cause = denied.value.__cause__
    if kind in ("arguments", "state"):
      assert isinstance(cause, FacadeError)
      assert cause.reason is FacadeErrorReason.READ_ONLY
    else:
      assert isinstance(cause, FacadeError)
      assert cause.reason is FacadeErrorReason.UNAVAILABLE
    assert arguments == {"key": "m"}
    assert await h.session_state() == before
    assert h.calls() == 0 and h.counts() == {}


@pytest.mark.conformance("P3-CONF-12")
async def test_approver_cannot_change_the_sealed_arguments(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with _harness(mcp_apps, tmp_path) as h:

    async def tamper(permit: ConfirmationPermit) -> None:
      permit.arguments["key"] = "evil"

    with pytest.raises(FacadeError) as denied:
      await h.call({"key": "m"}, h.confirmation(True, Approver(during=tamper)))
    assert denied.value.reason is FacadeErrorReason.CONFIRMATION_DENIED
    cause = denied.value.__cause__
    assert isinstance(cause, FacadeError)
    assert cause.reason is FacadeErrorReason.READ_ONLY
    assert h.calls() == 0 and h.counts() == {}


async def test_denied_or_timed_out_confirmation_sends_and_records_nothing(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with _harness(mcp_apps, tmp_path) as h:
    before = await h.session_state()
    with pytest.raises(FacadeError) as denied:
      await h.call({"key": "d"}, h.confirmation(True, Approver(answer=False)))
    assert denied.value.reason is FacadeErrorReason.CONFIRMATION_DENIED
    never = asyncio.Event()

    async def hang(permit: ConfirmationPermit) -> None:
      del permit
      await never.wait()

    with pytest.raises(FacadeError) as late:
      await h.call(
          {"key": "d"},
          h.confirmation(True, Approver(during=hang), timeout=0.05),
      )
    assert late.value.reason is FacadeErrorReason.CONFIRMATION_TIMEOUT
    assert await h.session_state() == before
    assert h.calls() == 0 and h.counts() == {}
    # Without confirmation the same call runs, as before this change.
    result = await h.call({"key": "d"}, None)
    assert not result.is_error, result
    assert h.counts() == {"d": 1}


async def _model_turn_evaluations(
    mcp_apps: Any, tmp_path: Path, *, bind: bool
) -> tuple[list[Any], list[Any], int]:
  """A model `open_view` turn whose predicate says True, bound or not.

  Returns the predicate's contexts, the turn's function responses, and how
  many `open_view` calls the server received.
  """
  contexts: list[Any] = []

  def asks(tool_context: Any) -> bool:
    contexts.append(tool_context)
    return True

  log = tmp_path / "requests.jsonl"
  params = StdioConnectionParams(
      server_params=mcp_apps.stdio_parameters({"request_log_file": str(log)}),
      timeout=TIMEOUT,
  )
  profile = await sql_profile(f"sqlite+aiosqlite:///{tmp_path / 'stores.db'}")
  service = SqliteSessionService(str(tmp_path / "sessions.db"))
  try:
    async with bound_stack(
        params,
        session_service=service,
        profile=profile,
        bind=bind,
        require_confirmation=asks,
    ) as st:
      sid = await st.new_session()
      events = await st.turn(sid, (names.OPEN_VIEW, {}))
  finally:
    await close_profile(profile)
  responses = [r for e in events for r in e.get_function_responses()]
  return contexts, responses, _calls(log, names.OPEN_VIEW)


@pytest.mark.conformance("P3-CONF-13")
async def test_model_originated_call_keeps_upstream_confirmation(
    mcp_apps: Any, tmp_path: Path
) -> None:
  (tmp_path / "bound").mkdir()
  (tmp_path / "plain").mkdir()
  bound = await _model_turn_evaluations(mcp_apps, tmp_path / "bound", bind=True)
  plain = await _model_turn_evaluations(
      mcp_apps, tmp_path / "plain", bind=False
  )
  for contexts, responses, executed in (bound, plain):
    # Evaluated by McpTool and ADK's flow, with a live ToolContext; the
    # call pauses for upstream's confirmation and is not executed.
    assert contexts and all(isinstance(c, ToolContext) for c in contexts)
    assert any(
        "requires confirmation" in str(r.response) for r in responses
    ), responses
    assert executed == 0
  # As many evaluations as the model-only (upstream) toolset makes.
  assert len(bound[0]) == len(plain[0])
