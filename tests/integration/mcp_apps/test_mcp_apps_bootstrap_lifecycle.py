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

"""Sealing and render bootstrap across readiness, loop and generation changes.

Cases P2-RDY-21, P2-RDY-22, P2-LOOP-03, P2-LOOP-04, P2-PROF-17, P2-PROF-18,
P2-PROF-19 and the missing-agent trigger of P2-ROR-01 (RFC §1, §3, §6).

Every widget comes from a real Runner turn over a profile-bound
`McpAppBindingRegistry` on the stdio conformance server
(`sealing_support.bound_stack`). The SQL sealed-result, lifecycle and key
stores run on a SQLite file with a `SqliteSessionService`; the two loop
cases, where the stores do not matter, use the local-development profile.
What reached the server is read from its request log (`request_log_file`
with `request_log_connections`), never from the connection under test.

Races are forced, never slept on: readiness is withdrawn
(`registry.revoke()`) from the append stage's fault hook at a named
`SealFault` point, or from a wrapper around the reservation hold's one
`resources/read`; a connection generation is invalidated through the pool;
a provider is replaced with `registry.rebind`. The loop cases drive the
synchronous `Runner.run()` on a plain thread and bootstrap on its worker
loop from inside the model's second call (the loop is provably live), or on
the test loop once the generator is exhausted (the worker loop is closed).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import contextlib
import dataclasses
from pathlib import Path
import threading
from typing import Any
from typing import Optional

from google.adk.agents.llm_agent import LlmAgent
from google.adk.events.event import Event
from google.adk.mcp_apps.affinity.errors import ConnectionAffinityError
from google.adk.mcp_apps.affinity.errors import InvalidationReason
from google.adk.mcp_apps.affinity.generations import HoldKind
from google.adk.mcp_apps.bootstrap.read_only import read_only_reason
from google.adk.mcp_apps.bootstrap.read_only import ReadOnlyReason
from google.adk.mcp_apps.bootstrap.render import BootstrapError
from google.adk.mcp_apps.bootstrap.render import BootstrapStep
from google.adk.mcp_apps.bootstrap.render import RenderDocument
from google.adk.mcp_apps.bootstrap.render import view_hold
from google.adk.mcp_apps.contracts.sealed_result_store import SealedRecordScope
from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultReason
from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultStoreError
from google.adk.mcp_apps.descriptor.widget_descriptor import McpAppWidgetDescriptor
from google.adk.mcp_apps.descriptor.widget_descriptor import read_mcp_widget
from google.adk.mcp_apps.profile.fingerprint import binding_revision
from google.adk.mcp_apps.profile.fingerprint import verify_binding_revision
from google.adk.mcp_apps.sealing.append_stage import SealFault
from google.adk.mcp_apps.sealing.append_stage import set_fault_hook
from google.adk.mcp_apps.sealing.resolver import GatedResultResolver
from google.adk.mcp_apps.stores.sql_sealed_result_store import SealedRecordState
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.genai import types as genai_types
from mcp_apps_conformance_server import names
import pytest
from scripted_llm import ScriptedLlm
from sealing_support import APP
from sealing_support import authoritative_check
from sealing_support import bound_stack
from sealing_support import close_profile
from sealing_support import LoggedStack
from sealing_support import OracleResolver
from sealing_support import referenced_record_ids
from sealing_support import sql_profile
from sealing_support import TOOLSET
from sealing_support import USER
from sealing_support import widget_event

pytestmark = pytest.mark.integration

TIMEOUT = 30.0
FAR_FUTURE = 4_000_000_000.0
READ = "resources/read"
CALL = "tools/call"


# --- The harness -------------------------------------------------------------


def _raises(reason: SealedResultReason) -> Any:
  """`pytest.raises` for a `SealedResultStoreError` with this reason."""
  return pytest.raises(
      SealedResultStoreError, check=lambda e: e.reason is reason
  )


@dataclasses.dataclass
class Harness(LoggedStack):
  """A bound stack over a logged stdio conformance server.

  Attributes:
    url: The SQLite URL of the profile's stores (None: dev profile).
  """

  url: Optional[str]

  def connection_of(self, method: str) -> list[str]:
    """The server connection ids of every `method` message, in order."""
    return [e["connectionId"] for e in self.entries() if e["method"] == method]

  async def direct_read(self, generation_id: str, uri: str) -> Any:
    """The test's own read of `uri` on a generation, through a fresh hold."""
    hold = self.st.registry.connections.get(generation_id).hold(
        HoldKind.OPERATION
    )
    try:
      return await hold.read_resource(uri)
    finally:
      hold.release()


@pytest.fixture
def harness(mcp_apps: Any, tmp_path: Path) -> Any:
  """Factory: an async context manager yielding a `Harness`.

  `sql=True` (the default) binds the SQL stores on a SQLite file over a
  `SqliteSessionService`; `sql=False` binds the local-development profile
  over an `InMemorySessionService`.
  """

  @contextlib.asynccontextmanager
  async def make(*, sql: bool = True) -> AsyncIterator[Harness]:
    n = len(list(tmp_path.iterdir()))
    log = tmp_path / f"requests-{n}.jsonl"
    options = {"request_log_file": str(log), "request_log_connections": True}
    params = StdioConnectionParams(
        server_params=mcp_apps.stdio_parameters(options), timeout=TIMEOUT
    )
    url: Optional[str] = None
    profile: Any = None
    if sql:
      url = f"sqlite+aiosqlite:///{tmp_path / f'stores-{n}.db'}"
      profile = await sql_profile(url)
      svc: Any = SqliteSessionService(str(tmp_path / f"sessions-{n}.db"))
    else:
      svc = InMemorySessionService()
    try:
      async with bound_stack(
          params, session_service=svc, profile=profile
      ) as st:
        yield Harness(st, log, url)
    finally:
      set_fault_hook(None)
      if profile is not None:
        await close_profile(profile)

  return make


def _ids(event: Event) -> list[str]:
  return [w.id for w in event.actions.render_ui_widgets]


def _descriptor(event: Event, call_id: str) -> McpAppWidgetDescriptor:
  (widget,) = [w for w in event.actions.render_ui_widgets if w.id == call_id]
  descriptor = read_mcp_widget(widget)
  assert isinstance(descriptor, McpAppWidgetDescriptor), descriptor
  return descriptor


def _record_creates(
    store: Any, monkeypatch: Any
) -> list[tuple[SealedRecordScope, Any]]:
  """Records every `(scope, ref)` the sealed store creates."""
  created: list[tuple[SealedRecordScope, Any]] = []
  create = store.create

  async def recording_create(scope: SealedRecordScope, **kwargs: Any) -> Any:
    ref = await create(scope, **kwargs)
    created.append((scope, ref))
    return ref

  monkeypatch.setattr(store, "create", recording_create)
  return created


def _function_response_ids(events: list[Event]) -> set[str]:
  return {
      fr.id for event in events for fr in event.get_function_responses() or ()
  }


async def _turn_revoked_at(
    h: Harness, point: str
) -> tuple[list[str], str, list[Event]]:
  """A turn calling `open_view`, with readiness withdrawn at `point`.

  Returns the fault points reached, the Session id and its stored Events.
  The turn itself completes: the model's closing text follows the
  FunctionResponse.
  """
  points: list[str] = []

  async def hook(reached: str) -> None:
    points.append(reached)
    if reached == point:
      await h.st.registry.revoke()

  set_fault_hook(hook)
  try:
    sid = await h.st.new_session()
    events = await h.st.turn(sid, ("open_view", {}))
  finally:
    set_fault_hook(None)
  assert events[-1].content.parts[0].text == "done"
  return points, sid, await h.st.stored_events(sid)


# --- P2-RDY-21: readiness lost after the seal, before the append -------------


@pytest.mark.conformance("P2-RDY-21")
async def test_readiness_lost_after_store_write(
    harness: Any, monkeypatch: Any
) -> None:
  """P2-RDY-21: revoked at `AFTER_STORE_WRITE`; the record is left to GC.

  The registry is revoked from the append stage's fault hook after the
  envelope create and before the Event append. The turn completes and the
  Event keeps the model-facing FunctionResponse, but carries no MCP widget
  and no reference; the created record is pending and unreferenced, and
  orphan GC (consulting the authoritative Event) deletes it. The
  reservation is dead: bootstrap fails typed and cold, with no grant.
  """
  async with harness() as h:
    store = h.profile.sealed_result_store
    created = _record_creates(store, monkeypatch)
    points, sid, stored = await _turn_revoked_at(h, SealFault.AFTER_STORE_WRITE)
    assert SealFault.AFTER_STORE_WRITE in points
    (call_id,) = _function_response_ids(stored)
    (responding,) = [
        e
        for e in stored
        if call_id in {fr.id for fr in e.get_function_responses() or ()}
    ]
    assert not responding.actions.render_ui_widgets
    assert not responding.sealed_result_refs
    assert not any(e.actions and e.actions.render_ui_widgets for e in stored)
    assert not any(referenced_record_ids(e) for e in stored)

    # The record was written, and stays pending and unreferenced.
    ((scope, ref),) = created
    assert scope.function_call_id == call_id
    assert scope.event_id == responding.id
    assert await store.state(scope, ref) is SealedRecordState.PENDING
    check = authoritative_check(h.svc)
    assert not await check(scope, ref)

    # Orphan GC deletes exactly it.
    deleted = await store.collect_garbage(now=FAR_FUTURE, is_referenced=check)
    assert deleted == 1
    with _raises(SealedResultReason.NOT_FOUND):
      await store.state(scope, ref)

    # No live reservation: bootstrap fails typed and cold, no grant.
    hold = h.reservation(sid, call_id)
    if hold is not None:
      with pytest.raises(ConnectionAffinityError):
        hold.check()
    with pytest.raises(BootstrapError) as caught:
      await h.bootstrap(sid, responding.id, call_id)
    assert caught.value.cold
    assert caught.value.step is BootstrapStep.RESERVE
    assert h.reservation(sid, call_id) is None
    if hold is not None:
      assert hold.released


@pytest.mark.conformance("P2-RDY-21")
async def test_readiness_lost_before_store_write(
    harness: Any, monkeypatch: Any
) -> None:
  """P2-RDY-21 (variant): revoked at `BEFORE_STORE_WRITE`.

  Readiness is withdrawn at the fault point just before the envelope
  create. The append stage re-checks admission right before each create,
  so nothing is written at all; the Event with the FunctionResponse is
  still appended, with no widget and no reference, and the reservation is
  cold.
  """
  async with harness() as h:
    store = h.profile.sealed_result_store
    created = _record_creates(store, monkeypatch)
    points, sid, stored = await _turn_revoked_at(
        h, SealFault.BEFORE_STORE_WRITE
    )
    assert points and points[0] == SealFault.BEFORE_STORE_WRITE
    (call_id,) = _function_response_ids(stored)
    assert not any(e.actions and e.actions.render_ui_widgets for e in stored)
    assert not any(referenced_record_ids(e) for e in stored)
    # Readiness was lost before the create: nothing was written.
    assert created == []
    deleted = await store.collect_garbage(
        now=FAR_FUTURE, is_referenced=authoritative_check(h.svc)
    )
    assert deleted == 0
    with pytest.raises(BootstrapError) as caught:
      await h.bootstrap(sid, stored[-1].id, call_id)
    assert caught.value.cold


# --- P2-RDY-22: readiness lost during bootstrap ------------------------------


@pytest.mark.conformance("P2-RDY-22")
@pytest.mark.parametrize("when", ["after_read", "before_read"])
async def test_readiness_lost_during_bootstrap(harness: Any, when: str) -> None:
  """P2-RDY-22: a revoke around the one read fails typed, cold, no grant.

  The reservation hold's `read_resource` is wrapped so the registry is
  revoked right after the read returned (ACTIVATE's re-check catches it)
  or right before it is sent (the read itself is refused). Either way the
  bootstrap raises a cold `BootstrapError`, the hold is
  released and nothing is left reserved.
  """
  async with harness() as h:
    sid, ev = await h.turn(("open_view", {}))
    (call_id,) = _ids(ev)
    hold = h.reservation(sid, call_id)
    assert hold is not None
    original = hold.read_resource
    steps: list[BootstrapStep] = []

    async def revoking_read(uri: str, **kwargs: Any) -> Any:
      if when == "before_read":
        await h.st.registry.revoke()
        return await original(uri, **kwargs)
      result = await original(uri, **kwargs)
      await h.st.registry.revoke()
      return result

    hold.read_resource = revoking_read
    reads_before = len(h.connection_of(READ))
    with pytest.raises(BootstrapError) as caught:
      await h.bootstrap(sid, ev.id, call_id, observer=steps.append)
    error = caught.value
    assert error.cold
    assert error.reason == "generation_invalidated"
    expected = (
        BootstrapStep.ACTIVATE if when == "after_read" else (BootstrapStep.READ)
    )
    assert error.step is expected
    assert steps[-1] is expected
    assert hold.released
    assert h.reservation(sid, call_id) is None
    reads = len(h.connection_of(READ)) - reads_before
    assert reads == (1 if when == "after_read" else 0)
    assert read_only_reason(error.reason, cold=error.cold) is (
        ReadOnlyReason.COLD
    )


# --- P2-BOOT-15: the generation lost while the read is in flight ------------


@pytest.mark.conformance("P2-BOOT-15")
@pytest.mark.parametrize(
    "cause",
    [
        InvalidationReason.SESSION_DELETED,
        InvalidationReason.EVICTED,
        InvalidationReason.CREDENTIAL_ROTATED,
        InvalidationReason.SESSION_TERMINATED,
    ],
    ids=lambda reason: reason.value,
)
async def test_generation_lost_during_the_read_fails_at_activate(
    harness: Any, cause: InvalidationReason
) -> None:
  """P2-BOOT-15: whatever ends the View's generation while its one read is
  in flight (the Session's deletion revoke, an eviction, a credential
  rotation, a server-forgotten session), ACTIVATE's re-check refuses the
  grant: a cold `BootstrapError` at ACTIVATE, the hold
  released, nothing left reserved, and the one read did reach the server.
  """
  async with harness() as h:
    sid, ev = await h.turn(("open_view", {}))
    (call_id,) = _ids(ev)
    hold = h.reservation(sid, call_id)
    assert hold is not None
    original = hold.read_resource
    registry = h.st.registry

    async def read_then_lose(uri: str, **kwargs: Any) -> Any:
      result = await original(uri, **kwargs)
      if cause is InvalidationReason.SESSION_DELETED:
        # The lifecycle manager's phase-1 revoke hook.
        lost = await registry.revoke_session(h.st.key(sid), 1)
        assert lost == (hold.generation_id,)
      else:
        assert await registry.connections.invalidate(hold.generation_id, cause)
      return result

    hold.read_resource = read_then_lose
    reads_before = len(h.connection_of(READ))
    steps: list[BootstrapStep] = []
    with pytest.raises(BootstrapError) as caught:
      await h.bootstrap(sid, ev.id, call_id, observer=steps.append)
    error = caught.value
    assert (error.step, error.reason, error.cold) == (
        BootstrapStep.ACTIVATE,
        "generation_invalidated",
        True,
    )
    assert steps[-1] is BootstrapStep.ACTIVATE
    assert hold.released
    assert hold.generation.invalidation_reason is cause
    assert h.reservation(sid, call_id) is None
    assert len(h.connection_of(READ)) - reads_before == 1


# --- P2-LOOP-03 / 04: bootstrap around the synchronous Runner.run() ----------


def _run_sync(runner: Runner, session_id: str) -> list[Event]:
  """`Runner.run()` to exhaustion: its worker loop is closed on return."""
  return list(
      runner.run(
          user_id=USER,
          session_id=session_id,
          new_message=genai_types.Content(
              role="user", parts=[genai_types.Part(text="go")]
          ),
      )
  )


@contextlib.asynccontextmanager
async def _sync_runner(h: Harness, llm: ScriptedLlm) -> AsyncIterator[Runner]:
  agent = LlmAgent(
      name="probe", model=llm, tools=[h.st.registry.toolset(TOOLSET)]
  )
  runner = Runner(agent=agent, app_name=APP, session_service=h.svc)
  try:
    yield runner
  finally:
    await runner.close()


@pytest.mark.conformance("P2-LOOP-03")
async def test_bootstrap_on_live_run_worker_loop(
    harness: Any,
) -> None:
  """P2-LOOP-03: bootstrap on `run()`'s live worker loop succeeds.

  The model's answering call (after the UI call's Event was appended)
  bootstraps the View on the worker loop itself, which is running; the
  document carries the server's HTML and a live grant on the call's
  generation. Once `run()` is exhausted that loop is closed, and the
  grant's generation still serves reads.
  """
  async with harness(sql=False) as h:
    sid = await h.st.new_session()
    main_thread = threading.get_ident()
    seen: dict[str, Any] = {}

    async def bootstrap_on_worker() -> None:
      seen["loop"] = asyncio.get_running_loop()
      seen["thread"] = threading.get_ident()
      session = await h.svc.get_session(
          app_name=APP, user_id=USER, session_id=sid
      )
      ev = widget_event(list(session.events))
      (call_id,) = _ids(ev)
      seen["event"] = ev
      seen["reserved"] = h.reservation(sid, call_id).generation_id
      try:
        seen["doc"] = await h.bootstrap(sid, ev.id, call_id)
      except Exception as e:  # pylint: disable=broad-except
        seen["error"] = e
      seen["live_during"] = not seen["loop"].is_closed()

    llm = ScriptedLlm(
        steps=[[("open_view", {})]], on_answer=bootstrap_on_worker
    )
    async with _sync_runner(h, llm) as runner:
      events = await asyncio.to_thread(_run_sync, runner, sid)

    assert "error" not in seen, seen.get("error")
    assert events[-1].content.parts[0].text == "done"
    assert seen["thread"] != main_thread
    assert seen["loop"] is not asyncio.get_running_loop()
    assert seen["live_during"]
    assert seen["loop"].is_closed(), "run() closed its worker loop"
    doc: RenderDocument = seen["doc"]
    assert doc.resource_uri == names.VIEW_URI
    assert doc.grant.generation_id == seen["reserved"]
    assert doc.grant.active, "the generation outlived the worker loop"
    direct = await h.direct_read(doc.grant.generation_id, names.VIEW_URI)
    assert doc.html == direct.contents[0].text
    (call_connection,) = h.connection_of(CALL)
    assert set(h.connection_of(READ)) == {call_connection}
    doc.grant.revoke()


@pytest.mark.conformance("P2-LOOP-04")
async def test_bootstrap_after_run_generator_finished(
    harness: Any,
) -> None:
  """P2-LOOP-04: bootstrap after `run()` finished; the generation survives.

  `run()` is driven to exhaustion on a plain thread (its worker loop is
  closed), then the View is bootstrapped from the test loop: the HTML and a
  live grant on the very generation the UI call ran on, with no new server
  connection.
  """
  async with harness(sql=False) as h:
    sid = await h.st.new_session()
    loops: list[asyncio.AbstractEventLoop] = []

    async def note_loop() -> None:
      loops.append(asyncio.get_running_loop())

    llm = ScriptedLlm(steps=[[("open_view", {})]], on_answer=note_loop)
    async with _sync_runner(h, llm) as runner:
      events = await asyncio.to_thread(_run_sync, runner, sid)
      (worker_loop,) = loops
      assert worker_loop.is_closed()
      ev = widget_event(events)
      (call_id,) = _ids(ev)
      reserved = h.reservation(sid, call_id)
      assert reserved is not None
      reserved.check()  # The generation survived the worker loop.
      connections = {e["connectionId"] for e in h.entries()}
      doc = await h.bootstrap(sid, ev.id, call_id)

    assert doc.resource_uri == names.VIEW_URI
    assert doc.grant.generation_id == reserved.generation_id
    assert doc.grant.active
    assert doc.tool_result["structuredContent"]["nonce"]
    direct = await h.direct_read(doc.grant.generation_id, names.VIEW_URI)
    assert doc.html == direct.contents[0].text
    (call_connection,) = h.connection_of(CALL)
    assert set(h.connection_of(READ)) == {call_connection}
    assert {e["connectionId"] for e in h.entries()} == connections
    doc.grant.revoke()


# --- P2-PROF-17 / 18 / 19: generations under an equal binding_revision -------


@pytest.mark.conformance("P2-PROF-17")
async def test_reconnect_keeps_persisted_descriptors_valid(
    harness: Any,
) -> None:
  """P2-PROF-17: a new connection generation; old descriptors still hold.

  The first call's generation is invalidated through the pool (transport
  failure) and the next call opens a new generation on a new server
  connection. The binding revision is unchanged, the old descriptor's
  revision verifies, and the gated resolver still releases its record.
  """
  async with harness() as h:
    sid, ev = await h.turn(("open_view", {}))
    (call_id,) = _ids(ev)
    old_descriptor = _descriptor(ev, call_id)
    old_generation = h.reservation(sid, call_id).generation_id
    revision = binding_revision(h.profile)
    assert old_descriptor.binding_revision == revision

    await h.st.registry.connections.invalidate(
        old_generation, InvalidationReason.TRANSPORT_FAILURE
    )
    sid2, ev2 = await h.turn(("open_view", {}))
    (call_id2,) = _ids(ev2)
    new_generation = h.reservation(sid2, call_id2).generation_id
    assert new_generation != old_generation
    call_connections = h.connection_of(CALL)
    assert len(set(call_connections)) == 2, "a new server connection"

    assert binding_revision(h.profile) == revision
    assert _descriptor(ev2, call_id2).binding_revision == revision
    assert verify_binding_revision(h.profile, old_descriptor.binding_revision)
    resolved = await OracleResolver(h.profile, h.svc).resolve(
        h.st.key(sid), event_id=ev.id, function_call_id=call_id
    )
    assert resolved.descriptor == old_descriptor
    old_result = resolved.full_result()["structuredContent"]
    new_result = (
        await OracleResolver(h.profile, h.svc).resolve(
            h.st.key(sid2), event_id=ev2.id, function_call_id=call_id2
        )
    ).full_result()["structuredContent"]
    assert old_result["nonce"] != new_result["nonce"]


@pytest.mark.conformance("P2-PROF-18")
async def test_provider_replacement_keeps_descriptors_valid(
    harness: Any,
) -> None:
  """P2-PROF-18: `rebind` to replaced providers keeps the revision.

  A second profile over the same databases (every store and the key
  provider are new objects) is bound with `registry.rebind`: the binding
  generation moves, the binding revision does not, and the descriptor
  persisted under the old profile verifies and resolves under the new one.
  """
  async with harness() as h:
    sid, ev = await h.turn(("open_view", {}))
    (call_id,) = _ids(ev)
    descriptor = _descriptor(ev, call_id)
    replacement = await sql_profile(h.url, name="replacement")
    try:
      assert (
          replacement.sealed_result_store is not h.profile.sealed_result_store
      )
      assert replacement.key_provider is not h.profile.key_provider
      generation = h.st.registry.binding_generation
      report = await h.st.registry.rebind(replacement)
      assert report.readiness is not None and report.readiness.bindable
      assert h.st.registry.binding_generation == generation + 1
      assert binding_revision(replacement) == descriptor.binding_revision
      assert verify_binding_revision(replacement, descriptor.binding_revision)
      resolved = await OracleResolver(replacement, h.svc).resolve(
          h.st.key(sid), event_id=ev.id, function_call_id=call_id
      )
      assert resolved.descriptor == descriptor
      assert resolved.refresh_record().tool_name == names.OPEN_VIEW
    finally:
      await close_profile(replacement)


async def _assert_stale_grant(h: Harness, grant: Any, uri: str) -> None:
  """Every barrier of a stale View's hold fails typed, with no request."""
  before = len(h.entries())
  assert not grant.active
  with pytest.raises(ConnectionAffinityError):
    view_hold(grant).check()
  with pytest.raises(ConnectionAffinityError):
    await view_hold(grant).read_resource(uri)
  with pytest.raises(ConnectionAffinityError):
    await view_hold(grant).call_tool(names.OPEN_VIEW, {})
  with pytest.raises(ConnectionAffinityError):
    await view_hold(grant).list_tools()
  assert len(h.entries()) == before, "nothing reached the server"


@pytest.mark.conformance("P2-PROF-19")
async def test_stale_view_after_rebind_rejected(
    harness: Any,
) -> None:
  """P2-PROF-19 (binding generation): a pre-rebind View reaches nothing.

  One turn makes two UI calls; one View is bootstrapped, the other's
  reservation is kept. After a provider-replacing rebind with an equal
  binding revision, the View's grant is inactive and its hold refuses
  check, read, call and listing without a request; the kept reservation
  cannot be bootstrapped (cold generation error). A fresh call on the new
  generation bootstraps normally.
  """
  async with harness() as h:
    sid, ev = await h.turn(("open_view", {}), ("open_view", {}))
    first, second = _ids(ev)
    doc = await h.bootstrap(sid, ev.id, first)
    assert doc.grant.active
    second_hold = h.reservation(sid, second)
    revision = binding_revision(h.profile)
    replacement = await sql_profile(h.url, name="replacement")
    try:
      await h.st.registry.rebind(replacement)
      assert binding_revision(replacement) == revision
      assert doc.descriptor.binding_revision == revision

      await _assert_stale_grant(h, doc.grant, names.VIEW_URI)

      before = len(h.entries())
      with pytest.raises(BootstrapError) as caught:
        await h.bootstrap(sid, ev.id, second, profile=replacement)
      assert caught.value.cold
      assert caught.value.step is BootstrapStep.RESERVE
      assert second_hold.released
      assert len(h.entries()) == before

      # The new generation serves a new View.
      sid2, ev2 = await h.turn(("open_view", {}))
      (call_id2,) = _ids(ev2)
      fresh = await h.bootstrap(sid2, ev2.id, call_id2, profile=replacement)
      assert fresh.grant.active
      assert fresh.grant.generation_id != doc.grant.generation_id
      fresh.grant.revoke()
    finally:
      await close_profile(replacement)


@pytest.mark.conformance("P2-PROF-19")
async def test_stale_view_after_connection_invalidation(
    harness: Any,
) -> None:
  """P2-PROF-19 (connection generation): an invalidated View reaches nothing.

  The View's connection generation is invalidated through the pool (the
  binding and its revision unchanged): the grant is inactive and every
  barrier of its hold fails typed without a request; a reservation on the
  same generation cannot be bootstrapped.
  """
  async with harness() as h:
    sid, ev = await h.turn(("open_view", {}), ("open_view", {}))
    first, second = _ids(ev)
    doc = await h.bootstrap(sid, ev.id, first)
    assert h.reservation(sid, second).generation_id == doc.grant.generation_id
    revision = binding_revision(h.profile)
    await h.st.registry.connections.invalidate(
        doc.grant.generation_id, InvalidationReason.EVICTED
    )
    assert binding_revision(h.profile) == revision
    await _assert_stale_grant(h, doc.grant, names.VIEW_URI)
    with pytest.raises(BootstrapError) as caught:
      await h.bootstrap(sid, ev.id, second)
    assert caught.value.cold


# --- P2-ROR-01: the missing-agent trigger ------------------------------------


@pytest.mark.conformance("P2-ROR-01")
async def test_missing_agent_read_only_without_requests(
    harness: Any,
) -> None:
  """P2-ROR-01 (missing originating agent): read-only, no request, no grant.

  A descriptor whose originating agent is not among the host's agents
  fails at RESOLVE with `missing_agent` before any server request; the
  reservation hold is released and the placeholder reason is
  `MISSING_AGENT`. The same call's sibling, bootstrapped with its agent
  present, renders (the trigger is the agent, not the widget).
  """
  async with harness() as h:
    sid, ev = await h.turn(("open_view", {}), ("open_view", {}))
    first, second = _ids(ev)
    hold = h.reservation(sid, first)
    assert hold is not None
    steps: list[BootstrapStep] = []
    before = len(h.entries())
    with pytest.raises(BootstrapError, match=r" at resolve: ") as caught:
      await h.bootstrap(
          sid,
          ev.id,
          first,
          agent_names={"someone-else"},
          observer=steps.append,
      )
    error = caught.value
    assert error.reason == "missing_agent"
    assert error.step is BootstrapStep.RESOLVE
    assert not error.cold
    assert BootstrapStep.READ not in steps
    assert len(h.entries()) == before, "zero server requests"
    assert hold.released
    assert h.reservation(sid, first) is None
    assert read_only_reason(error.reason) is ReadOnlyReason.MISSING_AGENT

    agent = _descriptor(ev, second).correlation.agent_path
    doc = await h.bootstrap(sid, ev.id, second, agent_names={agent})
    assert doc.grant.active
    doc.grant.revoke()
