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


"""The governed MCP-owned callbacks: P3-MCB-01..10, 15..19.

A profile-bound registry binds the conformance server (stdio) whose spec
carries a user `tool_filter`, `header_provider` and progress factory (or
callback). A real Runner turn renders a View (`open_view`); the View's app
calls go through `call_app_tool(callbacks=AppPathCallbacks)` on its held
generation, and the host's own calls through the proxy's `call_tool` with
a live context. What reached the server is read from its request log.
The user callbacks record what they were given, on which thread and loop,
under which OpenTelemetry span; on an app path each is scripted to behave
(select, mutate, reach for the live Session, or re-enter its Session), on
the model path it always behaves as upstream expects.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import contextlib
import dataclasses
import json
import logging
from pathlib import Path
import threading
from typing import Any
from typing import Optional

from binding_support import conformance_connection
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.mcp_apps.affinity.generations import GenerationHold
from google.adk.mcp_apps.affinity.routing import call_app_tool
from google.adk.mcp_apps.errors import DenialReason
from google.adk.mcp_apps.errors import McpAppVisibilityError
from google.adk.mcp_apps.event_policy.errors import EventPolicyError
from google.adk.mcp_apps.event_policy.errors import EventPolicyReason
from google.adk.mcp_apps.facades.callback_context import ReadonlyCallbackContext
from google.adk.mcp_apps.facades.errors import FacadeError
from google.adk.mcp_apps.facades.errors import FacadeErrorReason
from google.adk.mcp_apps.facades.mcp_callbacks import AppPathCallbacks
from google.adk.mcp_apps.facades.snapshot import thaw
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.mcp_tool.mcp_tool import McpTool
from google.genai import types as genai_types
from mcp.client.session import ClientSession
from mcp_apps_conformance_server import names
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
import pytest
from sealing_support import APP
from sealing_support import bound_stack
from sealing_support import BoundStack
from sealing_support import TOOLSET
from sealing_support import USER
from sealing_support import widget_event

pytestmark = pytest.mark.integration

TIMEOUT = 30.0
STATE = {"cart": [{"sku": "A1", "qty": 2}], "tier": "gold"}
STEPS = 3
_GATE_LOGGER = "google_adk.google.adk.mcp_apps.binding.loop_routing"
_TRACER = TracerProvider().get_tracer("mcb-test")


@dataclasses.dataclass
class Seen:
  """One run of user code: what it got, and where it ran."""

  family: str
  context: Any
  thread: int
  loop: Optional[asyncio.AbstractEventLoop]
  span_id: int
  trace_id: int
  state: Any = None
  tool: Any = None


def _span_id() -> int:
  return trace.get_current_span().get_span_context().span_id


def _loop() -> Optional[asyncio.AbstractEventLoop]:
  try:
    return asyncio.get_running_loop()
  except RuntimeError:
    return None


class UserCode:
  """The toolset's user callbacks: record every run; app paths scripted.

  `modes[family]` scripts the app-path behaviour: `ok`, `deny` (filter
  only), `mutate`, `unavailable`, `reenter`, `block` (progress only). On
  the model path (a live ADK context) every callback behaves.
  """

  def __init__(self) -> None:
    self.seen: list[Seen] = []
    self.modes: dict[str, str] = {}
    self.caught: list[BaseException] = []
    self.st: Optional[BoundStack] = None
    self.sid = ""
    self.blocked = asyncio.Event()
    self.cancelled: list[Seen] = []

  def _record(self, family: str, context: Any, **kwargs: Any) -> None:
    state = getattr(context, "state", None)
    if hasattr(state, "to_dict"):  # A live CallbackContext's `State`.
      state = state.to_dict()
    self.seen.append(
        Seen(
            family,
            context,
            threading.get_ident(),
            _loop(),
            _span_id(),
            trace.get_current_span().get_span_context().trace_id,
            state=thaw(dict(state)) if state is not None else None,
            **kwargs,
        )
    )

  def runs(self, family: str, app_path: bool = True) -> list[Seen]:
    return [
        s
        for s in self.seen
        if s.family == family
        and isinstance(s.context, ReadonlyCallbackContext) is app_path
    ]

  async def _reenter(self) -> None:
    assert self.st is not None
    try:
      async for _ in self.st.runner.run_async(
          user_id=USER,
          session_id=self.sid,
          new_message=genai_types.Content(
              role="user", parts=[genai_types.Part(text="again")]
          ),
      ):
        pass
    except EventPolicyError as e:
      self.caught.append(e)

  def _misbehave(self, mode: str, context: Any) -> Any:
    """Does what `mode` says to `context`, swallowing the refusal."""
    try:
      if mode == "mutate":
        context.state["tier"] = "platinum"
      elif mode == "unavailable":
        _ = context.session
    except FacadeError as e:
      self.caught.append(e)
    if mode == "reenter":
      return self._reenter()
    return None

  async def _block(self, context: Any) -> None:
    """Waits until cancelled; records the cancellation where it ran."""
    self.blocked.set()
    try:
      await asyncio.Event().wait()
    except asyncio.CancelledError:
      self._record("progress-cancelled", context)
      raise

  def tool_filter(
      self, tool: BaseTool, readonly_context: Optional[ReadonlyContext] = None
  ) -> Any:
    self._record("filter", readonly_context, tool=tool)
    if not isinstance(readonly_context, ReadonlyCallbackContext):
      return True
    mode = self.modes.get("filter", "ok")
    pending = self._misbehave(mode, readonly_context)
    if pending is not None:

      async def after() -> bool:
        await pending
        return True

      return after()
    return not (mode == "deny" and tool.name == names.SIDE_EFFECT)

  async def header_provider(self, readonly_context: Any) -> dict[str, str]:
    self._record("header", readonly_context)
    if isinstance(readonly_context, ReadonlyCallbackContext):
      pending = self._misbehave(
          self.modes.get("header", "ok"), readonly_context
      )
      if pending is not None:
        await pending
    return {"x-tier": str(readonly_context.state["tier"])}

  def progress_factory(
      self, tool_name: str, *, callback_context: Any = None, **kwargs: Any
  ) -> Any:
    del kwargs
    self._record("factory", callback_context, tool=tool_name)

    async def on_progress(
        progress: float, total: Optional[float], message: Optional[str]
    ) -> None:
      self._record("progress", callback_context)
      if callback_context is None:  # A plain callback gets no context.
        if self.modes.get("progress") == "block":
          await self._block(None)
        return
      if not isinstance(callback_context, ReadonlyCallbackContext):
        if self.modes.get("model_progress") == "block":
          await self._block(callback_context)
        # As at the pin: the factory's CallbackContext state is writable.
        callback_context.state["last_progress"] = progress
        return
      mode = self.modes.get("progress", "ok")
      if mode == "block":
        await self._block(callback_context)
      pending = self._misbehave(mode, callback_context)
      if pending is not None:
        await pending

    return on_progress


def _entries(log: Path) -> list[dict[str, Any]]:
  if not log.exists():
    return []
  return [json.loads(line) for line in log.read_text().splitlines()]


@dataclasses.dataclass
class Harness:
  """A bound stack over a logging conformance server, and one View."""

  st: BoundStack
  log: Path
  code: UserCode
  sid: str = ""
  hold: Optional[GenerationHold] = None

  @property
  def spec(self) -> Any:
    return self.st.registry.lookup(TOOLSET).spec

  @property
  def server_id(self) -> str:
    server_id: str = self.spec.server_id
    return server_id

  @property
  def registry_thread(self) -> int:
    thread = self.st.registry.event_loop.thread
    assert thread is not None and thread.ident is not None
    return thread.ident

  def calls(self, tool: str) -> int:
    return sum(
        1
        for e in _entries(self.log)
        if e.get("method") == "tools/call" and e.get("name") == tool
    )

  def initializes(self) -> int:
    return sum(1 for e in _entries(self.log) if e.get("method") == "initialize")

  async def session(self, sid: Optional[str] = None) -> Any:
    session = await self.st.session_service.get_session(
        app_name=APP, user_id=USER, session_id=sid or self.sid
    )
    assert session is not None
    return session

  async def callbacks(self) -> AppPathCallbacks:
    """The host's governed callbacks for one app call of the View."""
    session = await self.session()
    return AppPathCallbacks.from_spec(
        self.spec,
        ReadonlyCallbackContext.build(
            session=self.st.key(self.sid), state=session.state
        ),
    )

  async def app_call(self, tool: str, arguments: dict[str, Any]) -> Any:
    assert self.hold is not None
    return await call_app_tool(
        self.hold,
        tool,
        arguments,
        view_server_id=self.server_id,
        target_server_id=self.server_id,
        callbacks=await self.callbacks(),
    )

  async def live_context(self, sid: str) -> ReadonlyContext:
    """A live `ReadonlyContext` of a real invocation of Session `sid`."""
    return ReadonlyContext(
        InvocationContext(
            session_service=self.st.session_service,
            invocation_id="inv-host",
            agent=self.st.runner.agent,
            session=await self.session(sid),
        )
    )


@contextlib.asynccontextmanager
async def _harness(
    mcp_apps: Any,
    tmp_path: Path,
    *,
    sqlite: bool = False,
    plain_progress: bool = False,
    transport: str = "stdio",
    start_server: Any = None,
) -> AsyncIterator[Harness]:
  """A Session with `STATE`, one real model turn, and the View's hold."""
  log = tmp_path / "requests.jsonl"
  params = conformance_connection(
      transport, {"request_log_file": str(log)}, mcp_apps, start_server
  )
  service: Any = (
      SqliteSessionService(str(tmp_path / "sessions.db"))
      if sqlite
      else InMemorySessionService()
  )
  code = UserCode()
  progress: Any = code.progress_factory
  if plain_progress:
    progress = code.progress_factory("*", callback_context=None)
  async with bound_stack(
      params,
      session_service=service,
      tool_filter=code.tool_filter,
      header_provider=code.header_provider,
      progress_callback=progress,
  ) as st:
    session = await service.create_session(
        app_name=APP, user_id=USER, state=dict(STATE)
    )
    h = Harness(st, log, code, sid=str(session.id))
    code.st, code.sid = st, h.sid
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


async def _stored(h: Harness) -> tuple[dict[str, Any], int]:
  session = await h.session()
  return dict(session.state), len(session.events)


# --- tool_filter ------------------------------------------------------------


@pytest.mark.conformance("P3-MCB-01", "P3-MCB-15")
@pytest.mark.parametrize("sqlite", [False, True], ids=["memory", "sqlite"])
async def test_app_call_filter_runs_at_admission_on_a_snapshot(
    mcp_apps: Any, tmp_path: Path, sqlite: bool
) -> None:
  async with _harness(mcp_apps, tmp_path, sqlite=sqlite) as h:
    result = await h.app_call(names.SIDE_EFFECT, {"key": "k1"})
    assert not result.is_error, result
    (run,) = h.code.runs("filter")
    assert isinstance(run.context, ReadonlyCallbackContext)
    assert run.state == STATE
    assert run.context.session_id == h.sid
    # The declaration the admission listing returned, as an McpTool.
    assert isinstance(run.tool, McpTool) and run.tool.name == names.SIDE_EFFECT
    with pytest.raises(FacadeError) as caught:
      run.context.state["cart"][0]["qty"] = 9
    assert caught.value.reason is FacadeErrorReason.READ_ONLY
    # P3-MCB-15: on the owning (this test's) loop, never the registry's.
    assert run.thread == threading.get_ident() != h.registry_thread
    assert run.loop is asyncio.get_running_loop()
    assert h.calls(names.SIDE_EFFECT) == 1

    h.code.modes["filter"] = "deny"
    with pytest.raises(McpAppVisibilityError) as denied:
      await h.app_call(names.SIDE_EFFECT, {"key": "k2"})
    assert denied.value.reason is DenialReason.POLICY_DENIED
    assert h.calls(names.SIDE_EFFECT) == 1


@pytest.mark.conformance("P3-MCB-02")
@pytest.mark.parametrize("mode", ["mutate", "unavailable"])
@pytest.mark.parametrize("transport", ["stdio", "legacy_http"])
async def test_app_call_filter_that_mutates_admits_nothing(
    mcp_apps: Any,
    tmp_path: Path,
    mode: str,
    transport: str,
    start_server: Any,
) -> None:
  async with _harness(
      mcp_apps, tmp_path, transport=transport, start_server=start_server
  ) as h:
    before = await _stored(h)
    h.code.modes["filter"] = mode
    with pytest.raises(FacadeError) as caught:
      await h.app_call(names.SIDE_EFFECT, {"key": "k1"})
    assert caught.value.reason is FacadeErrorReason.CALLBACK_FAILED
    # The filter caught its own refusal; the call still failed closed.
    assert [type(e) for e in h.code.caught] == [FacadeError]
    assert h.calls(names.SIDE_EFFECT) == 0
    assert await _stored(h) == before


@pytest.mark.conformance("P3-MCB-03")
async def test_app_call_filter_reentry_is_rejected_and_admits_nothing(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with _harness(mcp_apps, tmp_path) as h:
    before = await _stored(h)
    h.code.modes["filter"] = "reenter"
    with pytest.raises(FacadeError) as caught:
      await h.app_call(names.SIDE_EFFECT, {"key": "k1"})
    assert caught.value.reason is FacadeErrorReason.CALLBACK_REENTRY
    (refusal,) = h.code.caught
    assert isinstance(refusal, EventPolicyError)
    assert refusal.reason is EventPolicyReason.SAME_SESSION_REENTRY
    assert h.calls(names.SIDE_EFFECT) == 0
    assert await _stored(h) == before


# --- header_provider --------------------------------------------------------


@pytest.mark.conformance("P3-MCB-04", "P3-MCB-16")
@pytest.mark.parametrize("transport", ["stdio", "legacy_http"])
async def test_host_path_header_provider_runs_at_derivation_on_a_snapshot(
    mcp_apps: Any, tmp_path: Path, transport: str, start_server: Any
) -> None:
  async with _harness(
      mcp_apps, tmp_path, transport=transport, start_server=start_server
  ) as h:
    proxy = h.st.registry.lookup(TOOLSET)
    result = await proxy.call_tool(
        names.SIDE_EFFECT, {"key": "h1"}, await h.live_context(h.sid)
    )
    assert not result.is_error, result
    contents = await proxy.read_resource_by_uri(
        names.VIEW_URI, await h.live_context(h.sid)
    )
    assert contents
    # Once per host-path derivation: the call, then the read.
    assert len(h.code.runs("header")) == 2
    run = h.code.runs("header")[0]
    assert run.state == STATE and run.context.session_id == h.sid
    with pytest.raises(FacadeError) as caught:
      run.context.state["tier"] = "x"
    assert caught.value.reason is FacadeErrorReason.READ_ONLY
    with pytest.raises(FacadeError) as caught:
      _ = run.context.session_service
    assert caught.value.reason is FacadeErrorReason.UNAVAILABLE
    # P3-MCB-16: on the owning loop's thread, never the registry thread.
    assert run.thread == threading.get_ident() != h.registry_thread
    assert h.calls(names.SIDE_EFFECT) == 1


@pytest.mark.conformance("P3-MCB-05", "P3-MCB-06")
@pytest.mark.parametrize("mode", ["mutate", "unavailable", "reenter"])
@pytest.mark.parametrize("transport", ["stdio", "legacy_http"])
async def test_host_path_header_provider_failing_closed_derives_no_session(
    mcp_apps: Any,
    tmp_path: Path,
    mode: str,
    transport: str,
    start_server: Any,
) -> None:
  async with _harness(
      mcp_apps, tmp_path, transport=transport, start_server=start_server
  ) as h:
    # A Session of its own: deriving one would open a new generation.
    other = await h.st.session_service.create_session(
        app_name=APP, user_id=USER, state=dict(STATE)
    )
    h.code.sid = other.id
    opened = h.initializes()
    proxy = h.st.registry.lookup(TOOLSET)
    h.code.modes["header"] = mode
    with pytest.raises(FacadeError) as caught:
      await proxy.call_tool(
          names.SIDE_EFFECT, {"key": "h1"}, await h.live_context(other.id)
      )
    if mode == "reenter":
      assert caught.value.reason is FacadeErrorReason.CALLBACK_REENTRY
      (refusal,) = h.code.caught
      assert isinstance(refusal, EventPolicyError)
      assert refusal.reason is EventPolicyReason.SAME_SESSION_REENTRY
    else:
      assert caught.value.reason is FacadeErrorReason.CALLBACK_FAILED
    assert h.initializes() == opened
    assert h.calls(names.SIDE_EFFECT) == 0
    stored = await h.session(other.id)
    assert dict(stored.state) == STATE and not stored.events


# --- progress ---------------------------------------------------------------


@pytest.mark.conformance("P3-MCB-07", "P3-MCB-17")
@pytest.mark.parametrize("plain", [False, True], ids=["factory", "callback"])
async def test_app_call_progress_is_notification_only_and_read_only(
    mcp_apps: Any, tmp_path: Path, plain: bool
) -> None:
  async with _harness(mcp_apps, tmp_path, plain_progress=plain) as h:
    before = await _stored(h)
    result = await h.app_call(names.PROGRESS_THEN_RESULT, {"steps": STEPS})
    assert not result.is_error and result.structured_content == {"steps": STEPS}
    if not plain:
      (made,) = h.code.runs("factory")
      assert isinstance(made.context, ReadonlyCallbackContext)
      assert made.tool == names.PROGRESS_THEN_RESULT and made.state == STATE
      runs = h.code.runs("progress")
    else:
      runs = [s for s in h.code.seen if s.family == "progress"]
      assert all(s.context is None for s in runs)
    # Every notification delivered before the result, on the caller's loop.
    assert len(runs) == STEPS
    for run in runs:
      assert run.thread == threading.get_ident() != h.registry_thread
      assert run.loop is asyncio.get_running_loop()
    assert await _stored(h) == before


@pytest.mark.conformance("P3-MCB-08", "P3-MCB-09")
@pytest.mark.parametrize("mode", ["mutate", "unavailable", "reenter"])
@pytest.mark.parametrize("transport", ["stdio", "legacy_http"])
async def test_app_call_progress_failing_closed_leaves_the_result(
    mcp_apps: Any,
    tmp_path: Path,
    mode: str,
    transport: str,
    start_server: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
  async with _harness(
      mcp_apps, tmp_path, transport=transport, start_server=start_server
  ) as h:
    before = await _stored(h)
    h.code.modes["progress"] = mode
    with caplog.at_level(logging.ERROR, logger=_GATE_LOGGER):
      result = await h.app_call(names.PROGRESS_THEN_RESULT, {"steps": STEPS})
    assert not result.is_error and result.structured_content == {"steps": STEPS}
    # The first notification failed closed; the handler got no more.
    assert len(h.code.runs("progress")) == 1
    (refusal,) = h.code.caught
    (logged,) = [r for r in caplog.records if "raised; ignored" in r.message]
    assert logged.exc_info is not None
    failure = logged.exc_info[1]
    assert isinstance(failure, FacadeError)
    if mode == "reenter":
      assert isinstance(refusal, EventPolicyError)
      assert refusal.reason is EventPolicyReason.SAME_SESSION_REENTRY
      assert failure.reason is FacadeErrorReason.CALLBACK_REENTRY
    else:
      assert isinstance(refusal, FacadeError)
      assert failure.reason is FacadeErrorReason.CALLBACK_FAILED
    assert await _stored(h) == before
    assert h.calls(names.PROGRESS_THEN_RESULT) == 1


# --- the model path ---------------------------------------------------------


@pytest.mark.conformance("P3-MCB-10", "P3-MCB-15", "P3-MCB-16", "P3-MCB-17")
async def test_model_path_callbacks_get_live_contexts_on_the_runner_loop(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with _harness(mcp_apps, tmp_path) as h:
    h.code.seen.clear()
    events = await h.st.turn(h.sid, (names.PROGRESS_THEN_RESULT, {"steps": 2}))
    assert events
    filters = h.code.runs("filter", app_path=False)
    headers = h.code.runs("header", app_path=False)
    (factory,) = h.code.runs("factory", app_path=False)
    progress = h.code.runs("progress", app_path=False)
    assert filters and headers and len(progress) == 2
    assert all(isinstance(s.context, ReadonlyContext) for s in filters)
    assert all(isinstance(s.context, ReadonlyContext) for s in headers)
    assert isinstance(factory.context, CallbackContext)
    assert not h.code.runs("filter") and not h.code.runs("header")
    # As at the pin: the factory's context writes the Session state.
    session = await h.session()
    assert session.state["last_progress"] == 2
    for run in filters + headers + [factory] + progress:
      assert run.thread == threading.get_ident() != h.registry_thread
      assert run.loop is asyncio.get_running_loop()


# --- trace context and cancellation ----------------------------------------


@dataclasses.dataclass
class RegistrySide:
  """The thread and current span of every real MCP request sent."""

  sent: list[tuple[int, Any]] = dataclasses.field(default_factory=list)

  def spans_on(self, thread: int) -> list[Any]:
    """The span contexts current when requests went out on `thread`."""
    return [span for ident, span in self.sent if ident == thread]


@pytest.fixture
def registry_side(monkeypatch: pytest.MonkeyPatch) -> RegistrySide:
  """Records the thread and current span of every real MCP request."""
  seen = RegistrySide()
  send = ClientSession.send_request

  async def spy_send(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
    seen.sent.append(
        (threading.get_ident(), trace.get_current_span().get_span_context())
    )
    return await send(self, request, *args, **kwargs)

  monkeypatch.setattr(ClientSession, "send_request", spy_send)
  return seen


@pytest.mark.conformance("P3-MCB-18")
async def test_trace_context_stays_with_the_caller(
    mcp_apps: Any, tmp_path: Path, registry_side: RegistrySide
) -> None:
  async with _harness(mcp_apps, tmp_path) as h:
    h.code.seen.clear()
    registry_side.sent.clear()
    with _TRACER.start_as_current_span("caller") as span:
      caller = span.get_span_context().span_id
      caller_trace = span.get_span_context().trace_id
      await h.app_call(names.PROGRESS_THEN_RESULT, {"steps": 2})
      await h.st.registry.lookup(TOOLSET).call_tool(
          names.SIDE_EFFECT, {"key": "t"}, await h.live_context(h.sid)
      )
      await h.st.turn(h.sid, (names.PROGRESS_THEN_RESULT, {"steps": 1}))
    app_path = [
        s for s in h.code.seen if isinstance(s.context, ReadonlyCallbackContext)
    ]
    assert {s.family for s in app_path} == {
        "filter",
        "factory",
        "progress",
        "header",
    }
    # Inside every app-path callback: the caller's span.
    assert all(s.span_id == caller for s in app_path)
    # The Runner's filter and header provider run in the turn's context:
    # the caller's trace (its span, or one the Runner started under it).
    model = h.code.runs("filter", False) + h.code.runs("header", False)
    assert model and all(s.trace_id == caller_trace for s in model)
    # On the registry thread: no span at all, the caller's or the Runner's.
    on_registry = registry_side.spans_on(h.registry_thread)
    assert on_registry and not any(c.is_valid for c in on_registry)


@pytest.mark.conformance("P3-MCB-19")
async def test_cancelled_app_call_cancels_progress_on_the_owning_loop(
    mcp_apps: Any, tmp_path: Path, registry_side: RegistrySide
) -> None:
  async with _harness(mcp_apps, tmp_path) as h:
    h.code.modes["progress"] = "block"
    with _TRACER.start_as_current_span("caller"):
      call = asyncio.create_task(
          h.app_call(names.SLOW_OPERATION, {"ms": 60_000, "tag": "c"})
      )
      await asyncio.wait_for(h.code.blocked.wait(), TIMEOUT)
      call.cancel()
      with pytest.raises(asyncio.CancelledError):
        await call
    (cancelled,) = [s for s in h.code.seen if s.family == "progress-cancelled"]
    assert cancelled.thread == threading.get_ident() != h.registry_thread
    assert cancelled.loop is asyncio.get_running_loop()
    assert cancelled.span_id != 0
    on_registry = registry_side.spans_on(h.registry_thread)
    assert on_registry and not any(c.is_valid for c in on_registry)


@pytest.mark.conformance("P3-MCB-19")
async def test_cancelled_model_call_cancels_progress_on_the_runner_loop(
    mcp_apps: Any, tmp_path: Path, registry_side: RegistrySide
) -> None:
  async with _harness(mcp_apps, tmp_path) as h:
    h.code.modes["model_progress"] = "block"
    with _TRACER.start_as_current_span("caller"):
      turn = asyncio.create_task(
          h.st.turn(h.sid, (names.SLOW_OPERATION, {"ms": 60_000, "tag": "m"}))
      )
      await asyncio.wait_for(h.code.blocked.wait(), TIMEOUT)
      turn.cancel()
      with pytest.raises(asyncio.CancelledError):
        await turn
    registry_thread = h.registry_thread
    on_registry = registry_side.spans_on(registry_thread)
    here = threading.get_ident()
  # Upstream's model path keeps the handler on its (callbacked) connection,
  # on the Runner's loop: it is cancelled when that connection closes, with
  # the registry's toolsets.
  (cancelled,) = [s for s in h.code.seen if s.family == "progress-cancelled"]
  assert isinstance(cancelled.context, CallbackContext)
  assert cancelled.thread == here != registry_thread
  assert cancelled.loop is asyncio.get_running_loop()
  assert on_registry and not any(c.is_valid for c in on_registry)
