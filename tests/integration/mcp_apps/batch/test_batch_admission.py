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

"""Batch admission: one fresh two-class snapshot decides a whole batch.

A real Runner whose scripted model makes parallel calls on a registry-bound
toolset over the conformance server (stdio), on the in-memory Session
service. The server changes between the model's catalog and the batch's
admission deterministically: the agent's `before_model` hook runs after the
turn's catalog was listed and before the model emits its calls, and calls
the server's admin tools there on the process of one connection class or of
both (on stdio each class is its own process: the app-safe generation is
reached through the registry's host path, the callbacked class through the
model-facing tool itself). What reached the server is read from its request
log (`apps` tells the two classes' listings apart); the refusal from the
stored Session. Nothing sleeps to order anything: races are held at the
server's listing gate.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
import dataclasses
import os
import shutil
import signal
import tempfile
from typing import Any
from typing import Optional

from batch_support import APP
from batch_support import BatchConversation
from batch_support import calls_of
from batch_support import responses_of
from batch_support import Served
from batch_support import TOOLSET
from batch_support import USER
from google.adk.agents.callback_context import CallbackContext
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.mcp_apps.affinity.errors import GenerationInvalidatedError
from google.adk.mcp_apps.affinity.routing import AppSafeMcpTool
from google.adk.mcp_apps.batch.errors import BatchErrorReason
from google.adk.models.llm_request import LlmRequest
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.tools.base_tool import BaseTool
from mcp_apps_conformance_server import names
import pytest
from scripted_llm import Call

pytestmark = pytest.mark.integration

TIMEOUT = 30.0
SIDE: Call = (names.SIDE_EFFECT, {"key": "adm"})
OPEN: Call = (names.OPEN_VIEW, {})
MUTABLE: Call = (names.MUTABLE_VIEW, {"label": "x"})
WHO: Call = (names.WHOAMI, {})
CLIENT_LOG: Call = (names.CLIENT_LOG, {})
Hook = Callable[[CallbackContext, LlmRequest], Awaitable[None]]


# -- Reaching one connection class ---------------------------------------------


async def on_app_safe(
    talk: BatchConversation,
    context: CallbackContext,
    tool: str,
    args: dict[str, Any],
) -> Any:
  """Calls a server tool on the caller's app-safe generation (its process)."""
  result = await talk.registry.lookup(TOOLSET).call_tool(tool, args, context)
  assert not result.is_error, result
  return result


async def on_callbacked(
    context: CallbackContext,
    request: LlmRequest,
    tool: str,
    args: dict[str, Any],
) -> Any:
  """Calls a server tool on the callbacked class (its own process).

  The model-facing non-UI tool runs on the toolset's own (upstream)
  connection: the callbacked class.
  """
  model_tool = request.tools_dict[tool]
  assert not isinstance(model_tool, AppSafeMcpTool)
  result = await model_tool.run_async(args=args, tool_context=context)
  assert not (result or {}).get("isError"), result
  return result


def on_both(
    tool: str, args: dict[str, Any]
) -> Callable[[BatchConversation], Hook]:
  """A hook factory: the hook calls `tool` on both classes' processes."""

  def factory(talk: BatchConversation) -> Hook:
    async def hook(context: CallbackContext, request: LlmRequest) -> None:
      await on_app_safe(talk, context, tool, args)
      await on_callbacked(context, request, tool, args)

    return hook

  return factory


def listed_generation(request: LlmRequest, tool: str) -> str:
  """The app-safe generation a UI tool of the model's catalog was listed on."""
  model_tool = request.tools_dict[tool]
  assert isinstance(model_tool, AppSafeMcpTool), type(model_tool)
  generation = model_tool.bound_tool_handle.catalog_generation
  assert generation is not None
  return generation


# -- One turn and what it left -------------------------------------------------


@dataclasses.dataclass
class Turn:
  """What one user turn left behind.

  Attributes:
    stored: The Session's Events after the turn.
    state: The Session's state after the turn.
    log: The server's request log since the turn started.
    hook_at: The log position when the hook ran (after the catalog
      listings, before the model's calls), relative to `log`.
    requests: The model's requests, in order.
    failure: What the turn raised, if it raised.
  """

  stored: list[Event]
  state: dict[str, Any]
  log: list[dict[str, Any]]
  hook_at: int
  requests: list[LlmRequest]
  failure: Optional[BaseException]

  def ran(self) -> list[str]:
    """The tools called on the server after the hook."""
    entries = self.log[self.hook_at :]
    return [e["name"] for e in entries if e["method"] == "tools/call"]

  def admission_listings(self) -> list[Optional[bool]]:
    """The classes (`apps`) of the listings after the hook, in order."""
    return [
        e.get("apps")
        for e in self.log[self.hook_at :]
        if e["method"] == "tools/list"
    ]


async def run_turn(
    served: Served,
    *steps: list[Any],
    hook: Optional[Callable[[BatchConversation], Hook]] = None,
    **conversation: Any,
) -> Turn:
  """One user turn of a fresh conversation; `hook(talk)` runs before the
  model's first calls."""
  session_service = InMemorySessionService()
  talk = BatchConversation(
      served.connection_params, session_service, **conversation
  )
  async with talk:
    start = served.mark()
    hook_at: list[int] = []
    inner = hook(talk) if hook is not None else None

    async def before_model(
        context: CallbackContext, request: LlmRequest
    ) -> None:
      hook_at.append(served.mark() - start)
      if inner is not None:
        await inner(context, request)
      hook_at.append(served.mark() - start)

    failure: Optional[BaseException] = None
    try:
      await talk.turn(*steps, before_model=before_model)
    except Exception as raised:  # pylint: disable=broad-exception-caught
      failure = raised
    stored = await talk.stored()
    state = await talk.state()
  return Turn(
      stored=stored,
      state=state,
      log=served.entries()[start:],
      hook_at=hook_at[-1],
      requests=list(talk.llm.requests),
      failure=failure,
  )


def refusal_of(turn: Turn) -> Event:
  """The Event answering the turn's first batch."""
  calls = next(e for e in turn.stored if e.get_function_calls())
  answers = [e for e in turn.stored if e.get_function_responses()]
  assert answers, turn.stored
  refusal = answers[0]
  assert responses_of(refusal) == calls_of(calls)
  return refusal


def assert_refused(
    turn: Turn, batch: list[Any], reason: BatchErrorReason
) -> Event:
  """Nothing of `batch` ran; one refusal answers each call with `reason`."""
  assert turn.failure is None, turn.failure
  called = set(turn.ran())
  assert not called & {name for name, _ in batch}, turn.log
  refusal = refusal_of(turn)
  assert [name for _, name in responses_of(refusal)] == [n for n, _ in batch]
  for response in refusal.get_function_responses():
    body = response.response or {}
    assert body.get("reason") == reason.value, body
    assert body["error"].startswith("None of these tool calls ran")
  assert refusal.actions == EventActions()
  assert turn.state == {"before": 1}
  return refusal


def error_of(refusal: Event) -> str:
  """The text the refusal answers its first call with."""
  body = refusal.get_function_responses()[0].response or {}
  text: str = body["error"]
  return text


def assert_ran(turn: Turn, batch: list[Any]) -> None:
  """Every call of `batch` ran once, and none was answered with an error."""
  assert turn.failure is None, turn.failure
  assert sorted(turn.ran()) == sorted(name for name, _ in batch), turn.log
  (answer,) = [e for e in turn.stored if e.get_function_responses()]
  for response in answer.get_function_responses():
    assert "error" not in (response.response or {}), response


# -- P3-ADM-01, 02, 03: the two-class algorithm, observed ---------------------


@pytest.mark.conformance("P3-ADM-01")
@pytest.mark.conformance("P3-ADM-03")
async def test_app_safe_class_is_listed_first_at_catalog_and_at_admission(
    serve: Callable[..., Served],
) -> None:
  served = serve(request_log_apps=True)
  turn = await run_turn(served, [SIDE, OPEN])
  assert_ran(turn, [SIDE, OPEN])
  before_model = [
      e["apps"] for e in turn.log[: turn.hook_at] if e["method"] == "tools/list"
  ]
  # The model's catalog: the app-safe listing, then the callbacked one.
  assert before_model == [True, False]
  # The batch's admission: the same two listings in the same order, afresh,
  # before any call of the batch.
  first_call = next(
      i for i, e in enumerate(turn.log) if e["method"] == "tools/call"
  )
  admission = [
      e["apps"]
      for e in turn.log[turn.hook_at : first_call]
      if e["method"] == "tools/list"
  ]
  assert admission[:2] == [True, False]
  # Then nothing more: fan-out runs against the snapshot, so no call
  # re-lists on the generation the admission just listed.
  assert admission[2:] == []


@pytest.mark.conformance("P3-ADM-03")
async def test_refused_batch_was_admitted_by_the_same_two_listings(
    serve: Callable[..., Served],
) -> None:
  served = serve(request_log_apps=True)
  turn = await run_turn(served, [SIDE, WHO])
  assert_refused(turn, [SIDE, WHO], BatchErrorReason.MIXED_BATCH)
  assert turn.admission_listings()[:2] == [True, False]


@pytest.mark.conformance("P3-ADM-02")
async def test_fan_out_runs_on_the_snapshots_generation(
    serve: Callable[..., Served],
) -> None:
  served = serve(request_log_apps=True, request_log_connections=True)
  turn = await run_turn(served, [SIDE, OPEN])
  assert_ran(turn, [SIDE, OPEN])
  after_hook = turn.log[turn.hook_at :]
  first_call = next(
      i for i, e in enumerate(after_hook) if e["method"] == "tools/call"
  )
  listings = [e for e in after_hook[:first_call] if e["method"] == "tools/list"]
  app_safe = listings[0]["connectionId"]
  callbacked = listings[1]["connectionId"]
  assert (listings[0]["apps"], listings[1]["apps"]) == (True, False)
  assert app_safe != callbacked
  # Every call of the batch ran on the connection the snapshot's app-safe
  # listing was made on, never on the callbacked one.
  calls = [e for e in after_hook if e["method"] == "tools/call"]
  assert {e["connectionId"] for e in calls} == {app_safe}
  # Nothing of the batch ran before the snapshot was complete.
  assert not [e for e in after_hook[:first_call] if e["method"] == "tools/call"]


# -- P3-ADM-04, 05: the class flips between the model turn and execution ------


@pytest.mark.conformance("P3-ADM-04")
async def test_plain_tool_turned_ui_is_refused_as_changed(
    serve: Callable[..., Served],
) -> None:
  served = serve(mutable_view_plain=True)
  batch = [MUTABLE, CLIENT_LOG]
  turn = await run_turn(
      served,
      batch,
      hook=on_both(names.MUTATE_CATALOG, {"change": "ui_on"}),
  )
  refusal = assert_refused(turn, batch, BatchErrorReason.TOOL_CHANGED)
  assert "UI-associated now" in error_of(refusal)


@pytest.mark.conformance("P3-ADM-04")
async def test_plain_batch_runs_when_nothing_changed(
    serve: Callable[..., Served],
) -> None:
  served = serve(mutable_view_plain=True)
  turn = await run_turn(served, [MUTABLE, CLIENT_LOG])
  assert_ran(turn, [MUTABLE, CLIENT_LOG])


@pytest.mark.conformance("P3-ADM-05")
async def test_ui_tool_turned_plain_is_refused_as_changed(
    serve: Callable[..., Served],
) -> None:
  served = serve()
  batch = [MUTABLE, OPEN]
  turn = await run_turn(
      served,
      batch,
      hook=on_both(names.MUTATE_CATALOG, {"change": "ui_off"}),
  )
  refusal = assert_refused(turn, batch, BatchErrorReason.TOOL_CHANGED)
  assert "no longer UI-associated" in error_of(refusal)


# -- P3-ADM-06: a tool listed on one class only --------------------------------


def remove_on(where: str, tool: str) -> Callable[[BatchConversation], Hook]:
  """A hook factory removing `tool` from one class's process."""

  def factory(talk: BatchConversation) -> Hook:
    async def hook(context: CallbackContext, request: LlmRequest) -> None:
      args = {"name": tool}
      if where == "app_safe":
        await on_app_safe(talk, context, names.REMOVE_LISTED_TOOL, args)
      else:
        await on_callbacked(context, request, names.REMOVE_LISTED_TOOL, args)

    return hook

  return factory


@pytest.mark.conformance("P3-ADM-06")
@pytest.mark.parametrize(
    ("batch", "kept_on", "outcome"),
    [
        pytest.param([SIDE, OPEN], "app_safe", None, id="ui_on_app_safe_only"),
        pytest.param(
            [SIDE, OPEN],
            "callbacked",
            BatchErrorReason.CLASS_DISAGREEMENT,
            id="ui_on_callbacked_only",
        ),
        pytest.param(
            [CLIENT_LOG, WHO],
            "app_safe",
            BatchErrorReason.CLASS_DISAGREEMENT,
            id="plain_on_app_safe_only",
        ),
        pytest.param(
            [CLIENT_LOG, WHO], "callbacked", None, id="plain_on_callbacked_only"
        ),
    ],
)
async def test_tool_listed_on_one_class_only_is_classified_by_its_runner(
    serve: Callable[..., Served],
    batch: list[Any],
    kept_on: str,
    outcome: Optional[BatchErrorReason],
) -> None:
  """A UI tool needs its app-safe declaration, a plain tool its callbacked
  one: the class that would run the call decides (docs/decisions)."""
  served = serve(removable_tools=True)
  removed_from = "callbacked" if kept_on == "app_safe" else "app_safe"
  turn = await run_turn(
      served, batch, hook=remove_on(removed_from, batch[-1][0])
  )
  if outcome is None:
    assert_ran(turn, batch)
  else:
    assert_refused(turn, batch, outcome)


# -- P3-ADM-07 .. 10: removal and declaration changes -------------------------


@pytest.mark.conformance("P3-ADM-07")
async def test_tool_removed_after_the_model_turn_refuses_the_batch(
    serve: Callable[..., Served],
) -> None:
  served = serve(removable_tools=True)
  batch = [SIDE, OPEN]
  turn = await run_turn(
      served,
      batch,
      hook=on_both(names.REMOVE_LISTED_TOOL, {"name": names.OPEN_VIEW}),
  )
  assert_refused(turn, batch, BatchErrorReason.TOOL_REMOVED)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        pytest.param(
            "schema",
            "inputSchema",
            id="schema",
            marks=pytest.mark.conformance("P3-ADM-08"),
        ),
        pytest.param(
            "uri",
            "resourceUri",
            id="uri",
            marks=pytest.mark.conformance("P3-ADM-09"),
        ),
        pytest.param(
            "visibility",
            "visibility",
            id="visibility",
            marks=pytest.mark.conformance("P3-ADM-10"),
        ),
    ],
)
async def test_declaration_changed_after_the_model_turn_refuses_the_batch(
    serve: Callable[..., Served], change: str, field: str
) -> None:
  served = serve()
  batch = [MUTABLE, OPEN]
  turn = await run_turn(
      served,
      batch,
      hook=on_both(names.MUTATE_CATALOG, {"change": change}),
  )
  refusal = assert_refused(turn, batch, BatchErrorReason.TOOL_CHANGED)
  assert f"differs in {field}" in error_of(refusal)


# -- P3-ADM-11: the two classes disagree about a name --------------------------


def flip_app_safe_only(talk: BatchConversation) -> Hook:
  """A hook taking `mutable_view`'s UI away on the app-safe class only."""

  async def flip(context: CallbackContext, request: LlmRequest) -> None:
    del request
    await on_app_safe(talk, context, names.MUTATE_CATALOG, {"change": "ui_off"})

  return flip


@pytest.mark.conformance("P3-ADM-11")
async def test_ui_only_on_the_callbacked_class_fails_closed_and_stays_unrun(
    serve: Callable[..., Served],
) -> None:
  """The app-safe class lists `mutable_view` without UI, the callbacked
  class with it: the batch is refused, and the model's retry of the tool
  alone (next step) does not run it on either class's stale reading."""
  served = serve()
  batch = [MUTABLE, OPEN]
  turn = await run_turn(served, batch, [MUTABLE], hook=flip_app_safe_only)
  assert_refused(turn, batch, BatchErrorReason.CLASS_DISAGREEMENT)
  assert names.MUTABLE_VIEW not in turn.ran(), turn.log
  answers = [e for e in turn.stored if e.get_function_responses()]
  assert len(answers) == 2
  (retry,) = answers[1].get_function_responses()
  assert retry.name == names.MUTABLE_VIEW
  assert "error" in (retry.response or {}), retry.response


@pytest.mark.conformance("P3-ADM-11")
async def test_refusal_shows_the_model_a_fresh_catalog_next(
    serve: Callable[..., Served],
) -> None:
  served = serve()
  batch = [MUTABLE, OPEN]
  turn = await run_turn(served, batch, hook=flip_app_safe_only)
  assert_refused(turn, batch, BatchErrorReason.CLASS_DISAGREEMENT)
  first, after = turn.requests[0], turn.requests[-1]
  assert names.MUTABLE_VIEW in first.tools_dict
  assert names.MUTABLE_VIEW not in after.tools_dict


@pytest.mark.conformance("P3-ADM-11")
async def test_ui_only_on_the_app_safe_class_is_capability_adaptation(
    serve: Callable[..., Served],
) -> None:
  """A server that hides `_meta.ui` from clients without Apps (allowed by
  the spec) is no disagreement: the app-safe declaration runs the call."""
  served = serve(require_apps_capability=True)
  turn = await run_turn(served, [SIDE, OPEN])
  assert_ran(turn, [SIDE, OPEN])


# -- P3-ADM-12 .. 15: one listing fails or overflows, the other succeeds ------


def arm(where: str) -> Callable[[BatchConversation], Hook]:
  """A hook factory arming the listing faults in one class's process."""

  def factory(talk: BatchConversation) -> Hook:
    async def hook(context: CallbackContext, request: LlmRequest) -> None:
      if where == "apps":
        await on_app_safe(talk, context, names.ARM_LISTING_FAULTS, {})
      else:
        await on_callbacked(context, request, names.ARM_LISTING_FAULTS, {})

    return hook

  return factory


FAILING = {"failing_page": 0}
OVERSIZED = {"oversized_page": 0, "oversized_page_items": 4100}
"""Over the default bound of 4096 tools per listing."""


@pytest.mark.parametrize(
    ("fault", "where", "detail"),
    [
        pytest.param(
            FAILING,
            "apps",
            "fails on purpose",
            id="app_safe_fails",
            marks=pytest.mark.conformance("P3-ADM-12"),
        ),
        pytest.param(
            FAILING,
            "plain",
            "fails on purpose",
            id="callbacked_fails",
            marks=pytest.mark.conformance("P3-ADM-13"),
        ),
        pytest.param(
            OVERSIZED,
            "apps",
            "exceeded its items bound",
            id="app_safe_overflows",
            marks=pytest.mark.conformance("P3-ADM-14"),
        ),
        pytest.param(
            OVERSIZED,
            "plain",
            "exceeded its items bound",
            id="callbacked_overflows",
            marks=pytest.mark.conformance("P3-ADM-15"),
        ),
    ],
)
async def test_one_class_listing_failing_refuses_the_batch(
    serve: Callable[..., Served],
    fault: dict[str, Any],
    where: str,
    detail: str,
) -> None:
  """The fault is armed in one class's process only, after the model's
  catalog was listed; the refusal names it, whichever class failed (the
  callbacked class's arrives wrapped in upstream's `ConnectionError`)."""
  served = serve(
      request_log_apps=True,
      listing_fault_class=where,
      listing_faults_on_demand=True,
      **fault,
  )
  batch = [SIDE, OPEN]
  turn = await run_turn(served, batch, hook=arm(where))
  refusal = assert_refused(turn, batch, BatchErrorReason.DISCOVERY_FAILED)
  assert detail in error_of(refusal)
  # The faulty class's listing was really attempted at admission.
  assert (where == "apps") in turn.admission_listings()


# -- P3-ADM-16: credentials change -------------------------------------------


class FlippingHeaders:
  """A header provider whose credential changes from its `flip_at`-th call
  after `arm()` on (a user-supplied callback, as `header_provider` is).

  Attributes:
    calls: How many times it was called since armed.
  """

  def __init__(self, flip_at: int) -> None:
    self.flip_at = flip_at
    self.calls = 0
    self.armed = False

  def arm(self) -> None:
    """Starts counting."""
    self.armed = True

  def __call__(self, context: Any) -> dict[str, str]:
    del context
    if not self.armed:
      return {"Authorization": "Bearer adm-one"}
    self.calls += 1
    token = "adm-two" if self.calls >= self.flip_at else "adm-one"
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.conformance("P3-ADM-16")
@pytest.mark.parametrize(
    ("flip_at", "detail"),
    [
        # From the first call after the model's turn: the admission's
        # headers already differ from the catalog's.
        pytest.param(1, "listed for other credentials", id="after_model_turn"),
        # From the second: the admission's headers are the catalog's, and
        # change while the two classes are listed (the re-read after them).
        pytest.param(2, "changed while the tools were listed", id="in_listing"),
    ],
)
async def test_credentials_changing_refuse_the_batch(
    serve: Callable[..., Served], flip_at: int, detail: str
) -> None:
  served = serve(request_log_apps=True)
  headers = FlippingHeaders(flip_at)

  def hook(talk: BatchConversation) -> Hook:
    del talk

    async def start(context: CallbackContext, request: LlmRequest) -> None:
      del context, request
      headers.arm()

    return start

  batch = [SIDE, OPEN]
  turn = await run_turn(
      served,
      batch,
      hook=hook,
      toolset_spec={"header_provider": headers},
  )
  refusal = assert_refused(turn, batch, BatchErrorReason.CREDENTIALS_CHANGED)
  assert detail in error_of(refusal)
  # Both classes were listed before the refusal (the admission ran whole).
  assert turn.admission_listings()[:2] == [True, False]


# -- P3-ADM-17: the generation ends between the two listings -------------------


class ListingGate:
  """The test's side of the server's `gated_listing` barrier.

  Each listing at the gate awaits `on_reach` (when set, once), then is
  answered.
  """

  def __init__(self) -> None:
    # AF_UNIX paths are short: not under pytest's tmp_path.
    self._dir = tempfile.mkdtemp(prefix="adk-adm-gate-")
    self.path = os.path.join(self._dir, "gate")
    self.on_reach: Optional[Callable[[], Awaitable[None]]] = None
    self.reached = 0
    self._server: Optional[asyncio.AbstractServer] = None

  async def __aenter__(self) -> ListingGate:
    self._server = await asyncio.start_unix_server(self._serve, self.path)
    return self

  async def __aexit__(self, *exc_info: object) -> None:
    if self._server is not None:
      self._server.close()
      await self._server.wait_closed()
    shutil.rmtree(self._dir, ignore_errors=True)

  async def _serve(
      self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
  ) -> None:
    await reader.readline()
    self.reached += 1
    action, self.on_reach = self.on_reach, None
    if action is not None:
      await action()
    writer.write(b"go\n")
    await writer.drain()
    writer.close()


@pytest.mark.conformance("P3-ADM-17")
async def test_generation_ending_between_the_two_listings_refuses_the_batch(
    serve: Callable[..., Served],
) -> None:
  """The callbacked listing is held at the server's gate; while it is in
  flight the app-safe generation the first listing ran on is evicted."""
  async with ListingGate() as gate:
    served = serve(
        request_log_apps=True,
        gate_socket=gate.path,
        gated_listing=True,
        listing_fault_class="plain",
        listing_faults_on_demand=True,
    )
    evicted: list[str] = []

    def hook(talk: BatchConversation) -> Hook:
      async def prepare(context: CallbackContext, request: LlmRequest) -> None:
        generation = listed_generation(request, names.OPEN_VIEW)

        async def evict() -> None:
          assert await talk.registry.connections.evict(generation)
          evicted.append(generation)

        gate.on_reach = evict
        await on_callbacked(context, request, names.ARM_LISTING_FAULTS, {})

      return prepare

    batch = [SIDE, OPEN]
    turn = await run_turn(served, batch, hook=hook)
  assert evicted
  refusal = assert_refused(turn, batch, BatchErrorReason.DISCOVERY_FAILED)
  assert "listed afresh" in error_of(refusal)
  assert turn.admission_listings()[:2] == [True, False]


# -- P3-ADM-18: the connection is lost between snapshot and fan-out ------------


class LoseConnection(BasePlugin):
  """Before the batch's first call starts (after its admission), ends the
  app-safe generation the snapshot pinned: evicts it, or kills its stdio
  process and waits until the pool has noticed."""

  def __init__(self, how: str) -> None:
    super().__init__(name="lose_connection")
    self.talk: Optional[BatchConversation] = None
    self._how = how
    self.lost: list[str] = []
    self._gone = asyncio.Event()
    self._pid: Optional[int] = None

  async def before_model_callback(
      self, *, callback_context: Any, llm_request: Any
  ) -> None:
    del llm_request
    if self._how != "kill" or self._pid is not None:
      return
    # `whoami` on the caller's app-safe generation, the one the catalog was
    # listed on and the snapshot pins. Asked here: a bound call's own tool
    # callbacks may not acquire a hold on their Session (P3-BAT-18).
    assert self.talk is not None
    who = await self.talk.registry.lookup(TOOLSET).call_tool(
        names.WHOAMI, {}, callback_context
    )
    self._pid = who.structured_content["pid"]

  async def before_tool_callback(
      self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: Any
  ) -> Optional[dict[str, Any]]:
    del tool_args, tool_context
    if not isinstance(tool, AppSafeMcpTool):
      return None
    if self.lost:
      # Every other call of the batch starts only once the loss happened.
      await self._gone.wait()
      return None
    try:
      await self._lose(tool)
    finally:
      self._gone.set()
    return None

  async def _lose(self, tool: AppSafeMcpTool) -> None:
    generation = tool.bound_tool_handle.catalog_generation
    assert generation is not None
    self.lost.append(generation)
    assert self.talk is not None
    pool = self.talk.registry.connections
    if self._how == "evict":
      assert await pool.evict(generation)
      return
    assert self._pid is not None
    os.kill(self._pid, signal.SIGKILL)
    await _until_retired(pool, generation)


async def _until_retired(pool: Any, generation: str) -> None:
  """Sweeps until the pool retired a generation whose process died.

  The death already happened; what is awaited is the client noticing the
  closed pipe, so the bound is generous and never reached in a passing run.
  """
  loop = asyncio.get_running_loop()
  deadline = loop.time() + TIMEOUT
  while True:
    await pool.sweep()
    try:
      pool.get(generation)
    except GenerationInvalidatedError:
      return
    assert loop.time() < deadline, "the dead transport was never noticed"
    await asyncio.sleep(0.01)


@pytest.mark.conformance("P3-ADM-18")
@pytest.mark.parametrize("how", ["evict", "kill"])
async def test_connection_lost_after_admission_fans_out_nowhere_else(
    serve: Callable[..., Served], how: str
) -> None:
  served = serve(request_log_apps=True, request_log_connections=True)
  session_service = InMemorySessionService()
  batch = [SIDE, OPEN]
  plugin = LoseConnection(how)
  talk = BatchConversation(
      served.connection_params, session_service, plugins=[plugin]
  )
  plugin.talk = talk
  async with talk:
    start = served.mark()
    await talk.turn(batch)
    stored = await talk.stored()
  log = served.entries()[start:]
  assert plugin.lost
  # No call of the batch reached any process: not the lost generation, not
  # a new one opened after it, not the callbacked class.
  assert not [
      e
      for e in log
      if e["method"] == "tools/call" and e["name"] in {n for n, _ in batch}
  ], log
  (calls,) = [e for e in stored if e.get_function_calls()]
  answer = [e for e in stored if e.get_function_responses()][0]
  assert responses_of(answer) == calls_of(calls)
  for response in answer.get_function_responses():
    assert "error" in (response.response or {}), response
  assert await talk_state(session_service, talk.session_id) == {"before": 1}


async def talk_state(service: Any, session_id: str) -> dict[str, Any]:
  """A stored Session's state."""
  session = await service.get_session(
      app_name=APP, user_id=USER, session_id=session_id
  )
  assert session is not None
  return dict(session.state)


# -- P3-ADM-19: before the decision, only bounded discovery --------------------


class ToolCallbacks(BasePlugin):
  """Records every tool callback and tool error the Runner runs."""

  def __init__(self) -> None:
    super().__init__(name="tool_callbacks")
    self.seen: list[str] = []

  async def before_tool_callback(
      self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: Any
  ) -> Optional[dict[str, Any]]:
    del tool_args, tool_context
    self.seen.append(f"before:{tool.name}")
    return None

  async def after_tool_callback(self, *, tool: BaseTool, **kwargs: Any) -> Any:
    del kwargs
    self.seen.append(f"after:{tool.name}")
    return None

  async def on_tool_error_callback(
      self, *, tool: BaseTool, **kwargs: Any
  ) -> Any:
    del kwargs
    self.seen.append(f"error:{tool.name}")
    return None


@pytest.mark.conformance("P3-ADM-19")
@pytest.mark.parametrize(
    ("batch", "change", "reason"),
    [
        pytest.param(
            [SIDE, WHO], None, BatchErrorReason.MIXED_BATCH, id="mixed"
        ),
        pytest.param(
            [MUTABLE, SIDE],
            "schema",
            BatchErrorReason.TOOL_CHANGED,
            id="changed",
        ),
    ],
)
async def test_refused_batch_did_only_bounded_listing(
    serve: Callable[..., Served],
    tmp_path: Any,
    batch: list[Any],
    change: Optional[str],
    reason: BatchErrorReason,
) -> None:
  effects = tmp_path / "effects.json"
  served = serve(request_log_apps=True, effects_file=str(effects))
  callbacks = ToolCallbacks()
  hook: Optional[Callable[[BatchConversation], Hook]] = None
  if change is not None:
    hook = on_both(names.MUTATE_CATALOG, {"change": change})
  turn = await run_turn(served, batch, hook=hook, plugins=[callbacks])
  refusal = assert_refused(turn, batch, reason)
  # Between the model's calls and the refusal: listings, nothing else (the
  # app-safe generation and the callbacked connection were already open).
  refusal_at = turn.stored.index(refusal)
  assert refusal_at > 0
  methods = {e["method"] for e in turn.log[turn.hook_at :]}
  assert "tools/call" not in methods, turn.log
  assert "resources/read" not in methods
  assert methods <= {"tools/list", "notifications/initialized", "initialize"}
  # No tool callback, no confirmation, no widget, no ledger entry, no
  # effect.
  assert callbacks.seen == []
  assert not effects.exists() or '"adm"' not in effects.read_text()
  assert refusal.actions.requested_tool_confirmations == {}
  assert all(not e.actions.render_ui_widgets for e in turn.stored if e.actions)
  assert turn.state == {"before": 1}
