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

"""The ordered render bootstrap end to end, on the real conformance server.

Cases P2-BOOT-01 .. 05, 07 .. 15, P2-ROR-01 and P2-KEY-03 (RFC §3, "Render
bootstrap" and "read-only render"). Every widget comes from a real Runner
turn over a profile-bound registry (`sealing_support.bound_stack`), with
the SQL sealed-result, lifecycle and key stores on a SQLite file and a
`SqliteSessionService`; the View is then bootstrapped with
`bootstrap_render` from the persisted Event and the render reservation the
accepted call left.

What reached the server is read from the fixture's request log
(`request_log_file`, with `request_log_connections` so each line names the
server connection it arrived on), never from the connection under test.
Step order is observed three ways at once: the `observer` hook, a recording
`SessionAuthorizer`, recording wrappers around the reservation table, the
Session service and the sealed store, and the request log snapshotted as
each step begins. Faults are forced deterministically: a generation is
invalidated through the pool, the stdio process is killed from the
`observer` just before the read, the reservation hold's read is redirected
to one of the server's shaped resources, or a persisted Event is forged by
appending a copy of the real one with a mutated descriptor. Nothing sleeps.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
import contextlib
import dataclasses
import functools
import json
import os
from pathlib import Path
import shutil
import signal
import sqlite3
import sys
from typing import Any
from typing import Optional

from binding_support import conformance_connection
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.events.ui_widget import UiWidget
from google.adk.mcp_apps.affinity.errors import GenerationInvalidatedError
from google.adk.mcp_apps.affinity.errors import InvalidationReason
from google.adk.mcp_apps.affinity.generations import HoldKind
from google.adk.mcp_apps.bootstrap.live_replay import replay_to_view
from google.adk.mcp_apps.bootstrap.render import bootstrap_render
from google.adk.mcp_apps.bootstrap.render import BootstrapError
from google.adk.mcp_apps.bootstrap.render import BootstrapStep
from google.adk.mcp_apps.bootstrap.render import select_app_content
from google.adk.mcp_apps.bootstrap.render import view_hold
from google.adk.mcp_apps.contracts.local_dev import LocalDevKeyProvider
from google.adk.mcp_apps.contracts.principal_resolver import Principal
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.session_authorizer import SessionPurpose
from google.adk.mcp_apps.lifecycle.manager import SealedStoreParticipant
from google.adk.mcp_apps.lifecycle.manager import SessionLifecycleManager
from google.adk.mcp_apps.profile.limits import DeliveryLimits
from google.adk.mcp_apps.profile.limits import HostLimits
from google.adk.mcp_apps.sealing.resolver import GatedResultResolver
from google.adk.mcp_apps.sealing.resolver import ResolutionFault
from google.adk.mcp_apps.sealing.resolver import SealedResolutionError
from google.adk.mcp_apps.sealing.resolver import ViewBinding
from google.adk.mcp_apps.stores import sql_sealed_result_store
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.genai import types as genai_types
from mcp import StdioServerParameters
from mcp import types as mcp_types
from mcp_apps_conformance_server import names
from mcp_apps_conformance_server import views
import pytest
from sealing_support import bound_stack
from sealing_support import close_profile
from sealing_support import LoggedStack
from sealing_support import OracleResolver
from sealing_support import PRINCIPAL
from sealing_support import sql_profile
from sealing_support import TOOLSET
from sealing_support import widget_event
import third_party_support

pytestmark = pytest.mark.integration

TIMEOUT = 30.0
MODERN_FLAG = "ADK_ENABLE_MCP_MODERN_PROTOCOL"
TRANSPORTS = ("stdio", "legacy_http", "modern_http")
READ = "resources/read"
REPO_ROOT = Path(__file__).resolve().parents[3]
DASHBOARD_SERVER = (
    REPO_ROOT / "contributing" / "samples" / "mcp_apps_dashboard" / "server.py"
)


# --- Recorders ---------------------------------------------------------------


class RecordingAuthorizer:
  """A `SessionAuthorizer` that records each ask and answers `allow`."""

  def __init__(self, trail: list[str]) -> None:
    self.trail = trail
    self.allow = True
    self.asked: list[tuple[Principal, SessionKey, SessionPurpose]] = []

  async def authorize(
      self,
      principal: Principal,
      session: SessionKey,
      purpose: SessionPurpose,
      *,
      widget: object = None,
  ) -> bool:
    self.trail.append("authorize")
    self.asked.append((principal, session, purpose))
    return self.allow


class RecordingSessionService(SqliteSessionService):
  """A `SqliteSessionService` that records each Session and Event load."""

  def __init__(self, path: str, trail: list[str]) -> None:
    super().__init__(path)
    self.trail = trail
    self.path = path

  def plant(self, session: Any, event: Event) -> None:
    """Writes `event` into the database as a hostile store would.

    A real `append_event` seals the Event first and refuses a forged
    descriptor, so a forgery reaches the store only behind the service's
    back, as a row.
    """
    with contextlib.closing(sqlite3.connect(self.path)) as db, db:
      db.execute(
          "INSERT INTO events (id, app_name, user_id, session_id,"
          " invocation_id, timestamp, event_data) VALUES (?, ?, ?, ?, ?, ?,"
          " ?)",
          (
              event.id,
              session.app_name,
              session.user_id,
              session.id,
              event.invocation_id,
              event.timestamp,
              event.model_dump_json(exclude_none=True),
          ),
      )

  async def get_session(self, **kwargs: Any) -> Any:
    self.trail.append("load_session")
    return await super().get_session(**kwargs)

  async def get_event(self, **kwargs: Any) -> Any:
    self.trail.append("load_event")
    return await super().get_event(**kwargs)


# --- The harness -------------------------------------------------------------


@dataclasses.dataclass
class Harness(LoggedStack):
  """A bound stack over a logged conformance server, with its recorders.

  Attributes:
    trail: What the recorders saw, in order.
    authorizer: The profile's recording authorizer.
    url: The SQLite URL of the profile's stores.
  """

  trail: list[str]
  authorizer: RecordingAuthorizer
  url: str

  def reads(self, since: int = 0) -> list[dict[str, Any]]:
    """The `resources/read` entries from position `since` on."""
    return [e for e in self.entries()[since:] if e["method"] == READ]

  def call_connection(self, name: str) -> Optional[str]:
    """The server connection the last `tools/call` of `name` arrived on."""
    calls = [
        e
        for e in self.entries()
        if e["method"] == "tools/call" and e["name"] == name
    ]
    assert calls, name
    return calls[-1]["connectionId"]

  def operation_hold(self, generation_id: str) -> Any:
    """A fresh hold on a generation, for the test's own direct requests."""
    return self.st.registry.connections.get(generation_id).hold(
        HoldKind.OPERATION
    )


def _ids(event: Event) -> list[str]:
  return [w.id for w in event.actions.render_ui_widgets]


@pytest.fixture
def transport(request: pytest.FixtureRequest, monkeypatch: Any) -> str:
  """The transport under test (stdio unless parametrized)."""
  value: str = getattr(request, "param", "stdio")
  if value == "modern_http":
    monkeypatch.setenv(MODERN_FLAG, "1")
  else:
    monkeypatch.delenv(MODERN_FLAG, raising=False)
  return value


@pytest.fixture
def harness(
    transport: str, start_server: Any, mcp_apps: Any, tmp_path: Path
) -> Any:
  """Factory: an async context manager yielding a `Harness`."""

  @contextlib.asynccontextmanager
  async def make(**overrides: Any) -> AsyncIterator[Harness]:
    server_options = overrides.pop("server_options", {})
    n = len(list(tmp_path.iterdir()))
    log = tmp_path / f"requests-{n}.jsonl"
    options = {
        "request_log_file": str(log),
        "request_log_connections": True,
        **server_options,
    }
    params = conformance_connection(transport, options, mcp_apps, start_server)
    trail: list[str] = []
    authorizer = RecordingAuthorizer(trail)
    url = f"sqlite+aiosqlite:///{tmp_path / f'stores-{n}.db'}"
    profile = await sql_profile(url, session_authorizer=authorizer, **overrides)
    svc = RecordingSessionService(str(tmp_path / f"sessions-{n}.db"), trail)
    try:
      async with bound_stack(
          params, session_service=svc, profile=profile
      ) as st:
        yield Harness(st, log, trail, authorizer, url)
    finally:
      await close_profile(profile)

  return make


def _record_internals(h: Harness, monkeypatch: Any) -> None:
  """Appends the reservation take and sealed-store resolve to `h.trail`."""
  table = h.st.registry.render_reservations
  take = table.take

  def recording_take(*args: Any) -> Any:
    h.trail.append("take_reservation")
    return take(*args)

  monkeypatch.setattr(table, "take", recording_take)
  store = h.profile.sealed_result_store
  resolve = store.resolve

  async def recording_resolve(*args: Any, **kwargs: Any) -> Any:
    h.trail.append("store_resolve")
    return await resolve(*args, **kwargs)

  monkeypatch.setattr(store, "resolve", recording_resolve)


def _redirect_read(hold: Any, read: Any) -> None:
  """Makes the reservation hold's one read go through `read(original)`."""
  original = hold.read_resource

  async def redirected(uri: str, **kwargs: Any) -> Any:
    return await read(functools.partial(original, **kwargs), uri)

  hold.read_resource = redirected


# --- P2-BOOT-01/03/05: order, generation, one read ---------------------------


@pytest.mark.conformance("P2-BOOT-01", "P2-BOOT-03", "P2-BOOT-05")
@pytest.mark.parametrize("transport", TRANSPORTS, indirect=True)
async def test_ordered_bootstrap_on_the_call_generation(
    harness: Any, monkeypatch: Any, transport: str
) -> None:
  """P2-BOOT-01, 03, 05: authorize, reserve, resolve, read, select, activate.

  The observer, the recording authorizer, reservation table, Session
  service and sealed store, and the server's request log (snapshotted at
  each step) agree on the RFC order. The grant holds the very hold the
  accepted call reserved, on the generation that served the call, and
  exactly one `resources/read` reached the server, on the connection the
  `tools/call` arrived on (stdio and stateful HTTP; stateless HTTP has no
  connection, so there the host-side generation identity is checked).
  """
  async with harness() as h:
    sid, ev = await h.turn((names.OPEN_VIEW, {}))
    (call_id,) = _ids(ev)
    reserved = h.reservation(sid, call_id)
    assert reserved is not None and not reserved.released
    call_connection = h.call_connection(names.OPEN_VIEW)
    before = len(h.entries())
    _record_internals(h, monkeypatch)
    h.trail.clear()

    def observe(step: BootstrapStep) -> None:
      h.trail.append(f"{step.name}(reads={len(h.reads(before))})")

    doc = await h.bootstrap(sid, ev.id, call_id, observer=observe)

    assert h.trail == [
        "AUTHORIZE(reads=0)",
        "authorize",
        "RESERVE(reads=0)",
        "take_reservation",
        "RESOLVE(reads=0)",
        "load_event",
        "store_resolve",
        "READ(reads=0)",
        "SELECT(reads=1)",
        "ACTIVATE(reads=1)",
    ]
    assert h.authorizer.asked == [
        (PRINCIPAL, h.st.key(sid), SessionPurpose.VIEW)
    ]
    # P2-BOOT-03: the reservation moved into the grant, on its generation.
    assert view_hold(doc.grant) is reserved
    assert doc.grant.generation_id == reserved.generation_id
    assert doc.grant.active
    assert h.reservation(sid, call_id) is None
    generation = h.st.registry.connections.get(doc.grant.generation_id)
    assert generation.holders >= 1
    # P2-BOOT-05: one logical read, and nothing else, on that generation.
    after = h.entries()[before:]
    assert [e["method"] for e in after] == [READ]
    if transport == "modern_http":
      assert after[0]["connectionId"] is None
    else:
      assert call_connection is not None
      assert after[0]["connectionId"] == call_connection
    doc.grant.revoke()
    assert not doc.grant.active


# --- P2-BOOT-02: denial stops before anything --------------------------------


@pytest.mark.conformance("P2-BOOT-02")
async def test_denial_reserves_loads_and_reads_nothing(
    harness: Any, monkeypatch: Any
) -> None:
  """P2-BOOT-02: a denying `SessionAuthorizer` stops bootstrap at step 1.

  The reservation stays where the call left it (not taken, not released),
  neither the Session service nor the sealed store is asked, and no
  request of any kind reaches the server. An authorizer that raises denies
  the same way. Once allowed again, the untouched reservation bootstraps.
  """
  async with harness() as h:
    sid, ev = await h.turn((names.OPEN_VIEW, {}))
    (call_id,) = _ids(ev)
    reserved = h.reservation(sid, call_id)
    before = len(h.entries())
    _record_internals(h, monkeypatch)
    h.trail.clear()
    h.authorizer.allow = False
    steps: list[BootstrapStep] = []

    with pytest.raises(BootstrapError, match=r" at authorize: ") as info:
      await h.bootstrap(sid, ev.id, call_id, observer=steps.append)

    assert info.value.step is BootstrapStep.AUTHORIZE
    assert info.value.reason == "denied"
    assert not info.value.cold
    assert steps == [BootstrapStep.AUTHORIZE]
    assert h.trail == ["authorize"]
    assert h.reservation(sid, call_id) is reserved
    assert not reserved.released
    assert h.entries()[before:] == []

    async def raising(*args: Any, **kwargs: Any) -> bool:
      del args, kwargs
      h.trail.append("authorize_raised")
      raise RuntimeError("authorizer backend down")

    monkeypatch.setattr(h.authorizer, "authorize", raising)
    h.trail.clear()
    with pytest.raises(BootstrapError, match=r" at authorize: "):
      await h.bootstrap(sid, ev.id, call_id)
    assert h.trail == ["authorize_raised"]
    assert h.reservation(sid, call_id) is reserved
    assert h.entries()[before:] == []

    monkeypatch.undo()
    h.authorizer.allow = True
    doc = await h.bootstrap(sid, ev.id, call_id)
    assert view_hold(doc.grant) is reserved
    assert len(h.reads(before)) == 1


# --- P2-BOOT-04: the pre-lease rule ------------------------------------------


@pytest.mark.conformance("P2-BOOT-04")
async def test_resolves_without_a_lease_and_checks_the_view(
    harness: Any,
) -> None:
  """P2-BOOT-04: bootstrap needs no live lease; another View gets nothing.

  Two widgets of one Event are bootstrapped with no View lease of any kind
  existing. The resolver, asked with the binding of the first View for
  the second widget (or of a View of another toolset or server), fails
  with `VIEW_MISMATCH` and releases nothing.
  """
  async with harness() as h:
    sid, ev = await h.turn((names.OPEN_VIEW, {}), (names.OPEN_VIEW, {}))
    first, second = _ids(ev)
    doc = await h.bootstrap(sid, ev.id, first)
    assert doc.grant.binding == ViewBinding(
        toolset_id=TOOLSET,
        server_id=h.st.registry.server_id(TOOLSET),
        event_id=ev.id,
        function_call_id=first,
    )
    resolver = OracleResolver(h.profile, h.svc)
    key = h.st.key(sid)
    own = dataclasses.replace(doc.grant.binding, function_call_id=second)
    for view in (
        doc.grant.binding,
        dataclasses.replace(own, toolset_id="other"),
        dataclasses.replace(own, server_id="mcp-server:other"),
        dataclasses.replace(own, event_id="other-event"),
    ):
      with pytest.raises(SealedResolutionError) as info:
        await resolver.resolve(
            key, event_id=ev.id, function_call_id=second, view=view
        )
      assert info.value.fault is ResolutionFault.VIEW_MISMATCH
    resolved = await resolver.resolve(
        key, event_id=ev.id, function_call_id=second, view=own
    )
    assert resolved.function_call_id == second
    second_doc = await h.bootstrap(sid, ev.id, second)
    assert second_doc.grant.binding == own


# --- P2-BOOT-04 (post-lease), P2-COMP-07, P2-SLS-22: live replay ------------


async def _replay_fault(h: Harness, grant: Any) -> ResolutionFault:
  with pytest.raises(SealedResolutionError) as info:
    await replay_to_view(grant, profile=h.profile, session_service=h.svc)
  return info.value.fault


@pytest.mark.conformance("P2-BOOT-04", "P2-COMP-07")
async def test_interactive_replay_needs_a_live_grant(
    harness: Any, monkeypatch: Any
) -> None:
  """P2-BOOT-04 (post-lease rule): replay to a View needs its live grant.

  Three Views of one Event are bootstrapped. A live grant gets its full
  sealed result again. A revoked grant gets `VIEW_NOT_LIVE` without the
  Session or the store being read; a grant revoked while the resolve is
  in flight gets `VIEW_NOT_LIVE` though the store answered; once the
  connection generation is invalidated, the third View gets nothing.
  """
  async with harness() as h:
    sid, ev = await h.turn(
        (names.UI_RESULT, {"label": "a"}),
        (names.UI_RESULT, {"label": "b"}),
        (names.UI_RESULT, {"label": "c"}),
    )
    docs = [await h.bootstrap(sid, ev.id, c) for c in _ids(ev)]
    first, second, third = docs
    _record_internals(h, monkeypatch)

    h.trail.clear()
    replayed = await replay_to_view(
        first.grant, profile=h.profile, session_service=h.svc
    )
    assert replayed.full_result() == first.tool_result
    assert h.trail == ["load_event", "store_resolve"]

    first.grant.revoke()
    h.trail.clear()
    assert await _replay_fault(h, first.grant) is ResolutionFault.VIEW_NOT_LIVE
    assert h.trail == []

    store = h.profile.sealed_result_store
    resolve = store.resolve

    async def revoking_resolve(*args: Any, **kwargs: Any) -> Any:
      envelope = await resolve(*args, **kwargs)
      second.grant.revoke()
      return envelope

    monkeypatch.setattr(store, "resolve", revoking_resolve)
    h.trail.clear()
    assert await _replay_fault(h, second.grant) is (
        ResolutionFault.VIEW_NOT_LIVE
    )
    assert h.trail == ["load_event", "store_resolve"]

    assert await h.st.registry.connections.invalidate(
        third.grant.generation_id, InvalidationReason.EVICTED
    )
    assert await _replay_fault(h, third.grant) is ResolutionFault.VIEW_NOT_LIVE


@pytest.mark.conformance("P2-COMP-07")
async def test_view_data_comes_from_the_sealed_record(
    harness: Any, monkeypatch: Any
) -> None:
  """P2-COMP-07: bootstrap and live replay read the sealed record.

  Under a bound profile, the result a View receives at bootstrap and on a
  live replay is the full sealed result (with `structuredContent`, which
  the persisted FunctionResponse lacks), each fetched once through the
  gated resolver with the View's binding. Corrupting the sealed row after
  bootstrap makes the live replay fail `CORRUPT`: nothing is served from
  the Event or from the earlier document.
  """
  asks: list[Optional[ViewBinding]] = []
  resolve = GatedResultResolver.resolve

  async def recording(self: Any, *args: Any, **kwargs: Any) -> Any:
    asks.append(kwargs.get("view"))
    return await resolve(self, *args, **kwargs)

  monkeypatch.setattr(GatedResultResolver, "resolve", recording)
  async with harness() as h:
    sid, ev = await h.turn((names.UI_RESULT, {"label": "comp-07"}))
    (call_id,) = _ids(ev)
    doc = await h.bootstrap(sid, ev.id, call_id)
    replayed = await replay_to_view(
        doc.grant, profile=h.profile, session_service=h.svc
    )
    assert asks == [doc.grant.binding, doc.grant.binding]
    sealed = {"label": "comp-07", "forView": True}
    assert doc.tool_result["structuredContent"] == sealed
    assert replayed.full_result()["structuredContent"] == sealed
    (stored,) = [e for e in await h.st.stored_events(sid) if e.id == ev.id]
    (response,) = [
        p.function_response
        for p in stored.content.parts
        if p.function_response and p.function_response.id == call_id
    ]
    assert "structuredContent" not in response.response

    table = sql_sealed_result_store.TABLE_NAME
    path = h.url.split(":///", 1)[1]
    with contextlib.closing(sqlite3.connect(path)) as db:
      db.execute(
          f"UPDATE {table} SET sealed_result = CAST(REPLACE(CAST("
          "sealed_result AS TEXT), 'comp-07', 'comp-99') AS BLOB)"
          " WHERE function_call_id = ?",
          (call_id,),
      )
      db.commit()
    assert await _replay_fault(h, doc.grant) is ResolutionFault.CORRUPT
    assert doc.grant.active


@pytest.mark.conformance("P2-SLS-22", "P2-SLS-26")
async def test_old_incarnation_grant_serves_nothing(
    harness: Any,
) -> None:
  """P2-SLS-22: a View grant from before a recreation fails typed.

  The grant of a bootstrapped View records the Session's incarnation.
  Once the Session is deleted its replay fails `SESSION_NOT_ACTIVE`; once
  the same id is recreated (incarnation 2) it fails `STALE_INCARNATION`,
  although the grant itself was never revoked.
  """
  async with harness() as h:
    sid, ev = await h.turn((names.OPEN_VIEW, {}))
    (call_id,) = _ids(ev)
    doc = await h.bootstrap(sid, ev.id, call_id)
    assert doc.grant.incarnation == 1
    key = h.st.key(sid)
    manager = SessionLifecycleManager(
        h.profile.session_lifecycle_store,
        h.svc,
        participants=[SealedStoreParticipant(h.profile.sealed_result_store)],
    )
    await manager.delete(key)
    assert await _replay_fault(h, doc.grant) is (
        ResolutionFault.SESSION_NOT_ACTIVE
    )
    _, record = await manager.create(key)
    assert record.incarnation == 2
    assert doc.grant.active
    assert await _replay_fault(h, doc.grant) is (
        ResolutionFault.STALE_INCARNATION
    )


# --- P2-BOOT-07..10: exact-one selection -------------------------------------


@pytest.mark.conformance(
    "P1-URI-14", "P2-BOOT-07", "P2-BOOT-08", "P2-BOOT-09", "P2-BOOT-10"
)
async def test_selection_of_real_read_results(
    harness: Any,
) -> None:
  """P2-BOOT-07, 08, 09, 10: `select_app_content` on the server's reads.

  Real `resources/read` results of the shaped resources: the multi-content
  read yields exactly the item whose URI is the asked one (not the other
  Apps-MIME items, not the script); the zero-item read and the two-item
  read fail typed; the blob is decoded; the size limit is exact to the
  byte; a corrupt blob (not base64, or not UTF-8) fails typed.
  """
  async with harness() as h:
    sid, ev = await h.turn((names.OPEN_VIEW, {}))
    reserved = h.reservation(sid, _ids(ev)[0])
    hold = h.operation_hold(reserved.generation_id)
    reads = {
        uri: list((await hold.read_resource(uri)).contents)
        for uri in (
            names.MULTI_URI,
            names.EMPTY_URI,
            names.DOUBLE_URI,
            names.BLOB_URI,
            names.VIEW_URI,
        )
    }
    hold.release()
    big = 8 * 1024 * 1024

    multi = reads[names.MULTI_URI]
    assert len(multi) == 4
    item, html = select_app_content(multi, names.MULTI_URI, max_bytes=big)
    assert item is multi[0]
    assert html == multi[0].text
    item, _ = select_app_content(multi, views.MULTI_PART_URI, max_bytes=big)
    assert item is multi[1]

    with pytest.raises(BootstrapError, match=r" at select: ") as info:
      select_app_content(reads[names.EMPTY_URI], names.EMPTY_URI, max_bytes=big)
    assert (info.value.step, info.value.reason) == (
        BootstrapStep.SELECT,
        "no_match",
    )
    with pytest.raises(BootstrapError, match=r" at select: ") as info:
      select_app_content(reads[names.MULTI_URI], names.VIEW_URI, max_bytes=big)
    assert info.value.reason == "no_match"
    with pytest.raises(BootstrapError, match=r" at select: ") as info:
      select_app_content(
          reads[names.DOUBLE_URI], names.DOUBLE_URI, max_bytes=big
      )
    assert info.value.reason == "several_matches"

    (blob,) = reads[names.BLOB_URI]
    assert getattr(blob, "text", None) is None
    item, html = select_app_content([blob], names.BLOB_URI, max_bytes=big)
    assert item is blob
    assert html == base64.b64decode(blob.blob).decode("utf-8")
    assert html.startswith("<!doctype html>") and "Blob View" in html

    (view,) = reads[names.VIEW_URI]
    size = len(view.text.encode("utf-8"))
    assert select_app_content([view], names.VIEW_URI, max_bytes=size)[1] == (
        view.text
    )
    with pytest.raises(BootstrapError, match=r" at select: ") as info:
      select_app_content([view], names.VIEW_URI, max_bytes=size - 1)
    assert info.value.reason == "too_large"

    for corrupt in (
        "%%% not base64 %%%",
        base64.b64encode(b"\xff\xfe<html>").decode("ascii"),
    ):
      bad = blob.model_copy(update={"blob": corrupt})
      with pytest.raises(BootstrapError, match=r" at select: ") as info:
        select_app_content([bad], names.BLOB_URI, max_bytes=big)
      assert info.value.reason == "bad_encoding"


def _corrupt_blob(result: Any) -> Any:
  (item,) = result.contents
  bad = mcp_types.BlobResourceContents(
      uri=item.uri, mime_type=item.mime_type, blob="%%% not base64 %%%"
  )
  return result.model_copy(update={"contents": [bad]})


def _relabelled(result: Any, uri: str) -> Any:
  """The read with every item's URI set to `uri` (as if served for it)."""
  return result.model_copy(
      update={
          "contents": [
              item.model_copy(update={"uri": uri}) for item in result.contents
          ]
      }
  )


async def _selection_fault(fault: str, original: Any, uri: str) -> Any:
  if fault == "no_match":
    return await original(names.EMPTY_URI)
  if fault == "several_matches":
    return _relabelled(await original(names.DOUBLE_URI), uri)
  if fault == "other_uri_only":
    return await original(names.BLOB_URI)
  assert fault == "bad_encoding"
  return _corrupt_blob(await original(uri))


@pytest.mark.conformance("P2-BOOT-08", "P2-BOOT-09", "P2-BOOT-10")
@pytest.mark.parametrize(
    "fault", ["no_match", "several_matches", "other_uri_only", "bad_encoding"]
)
async def test_selection_failure_revokes_the_reservation(
    harness: Any, fault: str
) -> None:
  """P2-BOOT-08, 09, 10: a failed selection in bootstrap revokes the hold.

  The reservation hold's one read is redirected to a real shaped read:
  zero items; the two Apps-MIME items of the double read, relabelled with
  the descriptor's URI; only another URI's item; or the View's own item
  replaced by an undecodable blob. Bootstrap fails at SELECT
  with the typed reason, returns no grant, and the reserved hold is
  released; exactly one `resources/read` reached the server.
  """
  async with harness() as h:
    sid, ev = await h.turn((names.OPEN_VIEW, {}))
    (call_id,) = _ids(ev)
    reserved = h.reservation(sid, call_id)

    async def read(original: Any, uri: str) -> Any:
      return await _selection_fault(fault, original, uri)

    _redirect_read(reserved, read)
    before = len(h.entries())
    steps: list[BootstrapStep] = []
    with pytest.raises(BootstrapError, match=r" at select: ") as info:
      await h.bootstrap(sid, ev.id, call_id, observer=steps.append)
    expected = "no_match" if fault == "other_uri_only" else fault
    assert (info.value.step, info.value.reason) == (
        BootstrapStep.SELECT,
        expected,
    )
    assert BootstrapStep.ACTIVATE not in steps
    assert reserved.released
    assert h.reservation(sid, call_id) is None
    assert [e["method"] for e in h.entries()[before:]] == [READ]


@pytest.mark.conformance("P2-BOOT-10")
async def test_over_the_delivery_limit_revokes_the_reservation(
    harness: Any,
) -> None:
  """P2-BOOT-10: HTML over `limits.delivery.max_response_bytes` fails typed.

  The profile's delivery limit is below the View's size: the real read is
  made once, selection fails `too_large`, and the reservation is released.
  """
  limits = HostLimits(delivery=DeliveryLimits(max_response_bytes=1024))
  async with harness(limits=limits) as h:
    sid, ev = await h.turn((names.OPEN_VIEW, {}))
    (call_id,) = _ids(ev)
    reserved = h.reservation(sid, call_id)
    before = len(h.entries())
    with pytest.raises(BootstrapError, match=r" at select: ") as info:
      await h.bootstrap(sid, ev.id, call_id)
    assert info.value.reason == "too_large"
    assert reserved.released
    assert len(h.reads(before)) == 1


# --- P2-BOOT-11: failures in steps 3-5 ---------------------------------------


@pytest.mark.conformance("P2-BOOT-11")
async def test_remote_read_error_revokes_the_reservation(
    harness: Any,
) -> None:
  """P2-BOOT-11: a remote read error fails typed and releases the hold.

  The one read is redirected to a URI the server does not serve; the
  server answers with an error, bootstrap fails at READ (`read_failed`,
  not cold: the generation is alive), no grant is returned, the
  reservation is released and no second read is attempted.
  """
  async with harness() as h:
    sid, ev = await h.turn((names.OPEN_VIEW, {}))
    (call_id,) = _ids(ev)
    reserved = h.reservation(sid, call_id)

    async def read(original: Any, uri: str) -> Any:
      del uri
      return await original(names.URI_PREFIX + "does-not-exist.html")

    _redirect_read(reserved, read)
    before = len(h.entries())
    with pytest.raises(BootstrapError, match=r" at read: ") as info:
      await h.bootstrap(sid, ev.id, call_id)
    assert (info.value.step, info.value.reason) == (
        BootstrapStep.READ,
        "read_failed",
    )
    assert not info.value.cold
    assert reserved.released
    assert h.reservation(sid, call_id) is None
    assert [e["method"] for e in h.entries()[before:]] == [READ]
    h.st.registry.connections.get(reserved.generation_id).check_live()


@pytest.mark.conformance("P2-BOOT-11", "P2-BOOT-15")
async def test_process_killed_before_the_read(
    harness: Any,
) -> None:
  """P2-BOOT-11, 15: the stdio process dies between RESOLVE and READ.

  The observer kills the server process (SIGKILL) as READ begins. The read
  fails on the dead transport, the pool retires the generation
  (`transport_failure`), and bootstrap raises the cold
  a cold `BootstrapError` at READ, returns no grant and releases the
  reservation; no `resources/read` reached any server process
  and no new connection was opened (no silent rebind).
  """
  async with harness() as h:
    sid, ev = await h.turn((names.OPEN_VIEW, {}))
    (call_id,) = _ids(ev)
    reserved = h.reservation(sid, call_id)
    probe = h.operation_hold(reserved.generation_id)
    pid = (await probe.call_tool(names.WHOAMI, {})).structured_content["pid"]
    probe.release()
    before = len(h.entries())

    def kill_at_read(step: BootstrapStep) -> None:
      if step is BootstrapStep.READ:
        os.kill(pid, signal.SIGKILL)

    with pytest.raises(BootstrapError) as info:
      await h.bootstrap(sid, ev.id, call_id, observer=kill_at_read)
    assert info.value.step is BootstrapStep.READ
    assert type(info.value) is BootstrapError
    assert (info.value.reason, info.value.cold) == (
        "generation_invalidated",
        True,
    )
    with pytest.raises(GenerationInvalidatedError) as gone:
      h.st.registry.connections.get(reserved.generation_id)
    assert gone.value.reason is InvalidationReason.TRANSPORT_FAILURE
    assert reserved.released
    assert h.entries()[before:] == []


# --- P2-BOOT-12/13/14: the document ------------------------------------------


@pytest.mark.conformance("P2-BOOT-12", "P2-BOOT-13", "P2-COMP-07")
async def test_document_is_exact_and_verbatim(
    harness: Any,
) -> None:
  """P2-BOOT-12, 13: exact HTML and `_meta.ui`, input, full result, grant.

  The document's HTML and `_meta.ui` equal a direct read's item on the same
  generation (so `csp` and `permissions` are the server's, verbatim); the
  input is the call's arguments; the result is the full unprojected
  result (with `structuredContent` and `_meta`, which the persisted
  FunctionResponse does not carry), equal to a direct call with the same
  arguments on the same generation. The grant is host-held: not in the
  HTML, not in `view_data`.
  """
  async with harness() as h:
    args = {"label": "bootstrap-12"}
    sid, ev = await h.turn((names.UI_RESULT, args))
    (call_id,) = _ids(ev)
    doc = await h.bootstrap(sid, ev.id, call_id)

    direct = h.operation_hold(doc.grant.generation_id)
    (item,) = (await direct.read_resource(names.VIEW_URI)).contents
    called = (await direct.call_tool(names.UI_RESULT, args)).model_dump(
        mode="json", by_alias=True, exclude_none=True
    )
    direct.release()

    assert doc.html == item.text
    assert doc.resource_uri == str(item.uri) == names.VIEW_URI
    assert doc.mime_type == names.APP_MIME_TYPE
    assert doc.ui_meta == item.meta["ui"]
    assert doc.ui_meta["csp"] == {
        "connectDomains": list(views.VIEW_CSP.connect_domains),
        "resourceDomains": list(views.VIEW_CSP.resource_domains),
    }
    assert doc.ui_meta["permissions"] == {"clipboardWrite": {}}
    assert doc.tool_input == args
    for field in ("content", "structuredContent", "isError"):
      assert doc.tool_result[field] == called[field], field
    # ADK keys a result's `_meta` as `meta` (its 1.x spelling).
    assert doc.tool_result.get("_meta", doc.tool_result.get("meta")) == (
        called["_meta"]
    )
    assert doc.tool_result["structuredContent"] == {
        "label": "bootstrap-12",
        "forView": True,
    }
    (response,) = [
        p.function_response
        for p in ev.content.parts
        if p.function_response and p.function_response.id == call_id
    ]
    assert "structuredContent" not in response.response
    assert doc.descriptor.resource_uri == names.VIEW_URI
    assert doc.descriptor.correlation.function_call_id == call_id
    data = doc.view_data()
    assert set(data) == {"html", "uiMeta", "toolInput", "toolResult"}
    assert doc.grant.view_id not in json.dumps(data)
    assert doc.grant.view_id not in doc.html
    assert "grant" not in repr(doc)


@pytest.mark.conformance("P2-BOOT-13", "P2-BOOT-14")
async def test_absent_meta_stays_absent_listing_fallback(
    harness: Any,
) -> None:
  """P2-BOOT-13, 14: no synthesized `_meta.ui`; listing fallback; item wins.

  The adaptive View's read item carries no `_meta.ui`: without a listing
  value the document has none (no `csp`/`permissions` made up); with one,
  the listing value is used as is. For the main View, whose item carries
  `_meta.ui`, the server's own listing value (`resource_meta_on_listing`)
  loses to the item's.
  """
  async with harness(server_options={"resource_meta_on_listing": True}) as h:
    sid, ev = await h.turn(
        (names.ADAPTIVE_VIEW, {}),
        (names.ADAPTIVE_VIEW, {}),
        (names.OPEN_VIEW, {}),
    )
    bare, fallback, main = _ids(ev)
    reserved = h.reservation(sid, bare)
    direct = h.operation_hold(reserved.generation_id)
    (adaptive_item,) = (await direct.read_resource(names.ADAPTIVE_URI)).contents
    listing = await direct.execute(
        lambda session: session.list_resources(), "resources/list"
    )
    direct.release()
    assert not (adaptive_item.meta or {}).get("ui")
    (view_entry,) = [
        r for r in listing.resources if str(r.uri) == names.VIEW_URI
    ]
    listing_ui = view_entry.meta["ui"]
    assert listing_ui == views.LISTING_UI_META

    doc = await h.bootstrap(sid, ev.id, bare)
    assert doc.ui_meta is None
    assert doc.html == adaptive_item.text

    doc = await h.bootstrap(sid, ev.id, fallback, listing_ui_meta=listing_ui)
    assert doc.ui_meta == listing_ui
    assert "csp" not in doc.ui_meta and "permissions" not in doc.ui_meta

    doc = await h.bootstrap(sid, ev.id, main, listing_ui_meta=listing_ui)
    assert doc.ui_meta != listing_ui
    assert doc.ui_meta["prefersBorder"] is True
    assert "csp" in doc.ui_meta


# --- P2-BOOT-15: cold ---------------------------------------------------------


@pytest.mark.conformance("P2-ROR-01", "P2-BOOT-15")
async def test_invalidated_generation_is_cold(
    harness: Any, monkeypatch: Any
) -> None:
  """P2-BOOT-15: an invalidated generation fails typed and cold.

  The call's generation is evicted through the pool. Bootstrap fails at
  RESERVE with a cold `BootstrapError`; it resolves nothing,
  reads nothing and opens no new connection (no silent rebind), and the
  reservation is released. A second bootstrap of the same widget finds no
  reservation: cold too. A widget that never had one is cold as well.
  """
  async with harness() as h:
    sid, ev = await h.turn((names.OPEN_VIEW, {}))
    (call_id,) = _ids(ev)
    reserved = h.reservation(sid, call_id)
    _record_internals(h, monkeypatch)
    assert await h.st.registry.connections.invalidate(
        reserved.generation_id, InvalidationReason.EVICTED
    )
    before = len(h.entries())
    h.trail.clear()
    with pytest.raises(BootstrapError) as info:
      await h.bootstrap(sid, ev.id, call_id)
    assert (info.value.step, info.value.reason, info.value.cold) == (
        BootstrapStep.RESERVE,
        "generation_invalidated",
        True,
    )
    assert h.trail == ["authorize", "take_reservation"]
    assert reserved.released
    assert h.entries()[before:] == []
    with pytest.raises(GenerationInvalidatedError):
      h.st.registry.connections.get(reserved.generation_id)

    for target in (call_id, "adk-never-called"):
      with pytest.raises(BootstrapError) as info:
        await h.bootstrap(sid, ev.id, target)
      assert (info.value.step, info.value.reason, info.value.cold) == (
          BootstrapStep.RESERVE,
          "no_reservation",
          True,
      )
    assert "load_session" not in h.trail and "load_event" not in h.trail
    assert h.entries()[before:] == []


@pytest.mark.conformance("P2-BOOT-15", "P5-VIEW-01")
async def test_second_view_of_a_widget_holds_its_own_until_the_generation_goes(
    harness: Any,
) -> None:
  """P5-VIEW-01, P2-BOOT-15: a widget's second View is independent; cold
  once its generation is gone.

  (Issue 25 replaced the one-shot reservation: a reload or a second tab
  bootstraps a second View.) The second View holds the same generation
  under its own grant; revoking the first leaves it active. Once the
  generation is invalidated, a third bootstrap is cold at RESERVE without
  any server request.
  """
  async with harness() as h:
    sid, ev = await h.turn((names.OPEN_VIEW, {}))
    (call_id,) = _ids(ev)
    first = await h.bootstrap(sid, ev.id, call_id)
    second = await h.bootstrap(sid, ev.id, call_id)
    assert first.grant.view_id != second.grant.view_id
    assert view_hold(first.grant) is not view_hold(second.grant)
    assert first.grant.generation_id == second.grant.generation_id
    first.grant.revoke()
    assert not first.grant.active and second.grant.active
    assert await h.st.registry.connections.invalidate(
        second.grant.generation_id, InvalidationReason.EVICTED
    )
    before = len(h.entries())
    with pytest.raises(BootstrapError) as info:
      await h.bootstrap(sid, ev.id, call_id)
    assert info.value.cold and info.value.step is BootstrapStep.RESERVE
    assert h.entries()[before:] == []


# --- P2-ROR-01, P2-KEY-03: read-only triggers --------------------------------


def _forged(event: Event, call_id: str, payload: Any) -> Event:
  """A copy of `event` reduced to `call_id`, its widget payload replaced."""
  parts = [
      p
      for p in event.content.parts
      if p.function_response and p.function_response.id == call_id
  ]
  assert len(parts) == 1
  return Event(
      invocation_id=event.invocation_id,
      author=event.author,
      branch=event.branch,
      content=genai_types.Content(role=event.content.role, parts=parts),
      actions=EventActions(
          render_ui_widgets=[
              UiWidget(id=call_id, provider="mcp", payload=payload)
          ]
      ),
  )


def _payload(event: Event, call_id: str) -> dict[str, Any]:
  (widget,) = [w for w in event.actions.render_ui_widgets if w.id == call_id]
  return json.loads(json.dumps(widget.payload))


FORGERIES = {
    "legacy_descriptor": (
        lambda p: {
            "resource_uri": p["resourceUri"],
            "tool": names.OPEN_VIEW,
            "tool_args": {},
        },
        ResolutionFault.LEGACY_DESCRIPTOR,
    ),
    "missing_reference": (
        lambda p: {k: v for k, v in p.items() if k != "sealedResultRef"},
        ResolutionFault.MISSING_REFERENCE,
    ),
    "unsupported_reference": (
        lambda p: {
            **p,
            "sealedResultRef": {**p["sealedResultRef"], "schemaVersion": 9},
        },
        ResolutionFault.UNSUPPORTED_REFERENCE,
    ),
    "corrupt_reference": (
        lambda p: {
            **p,
            "sealedResultRef": {
                **p["sealedResultRef"],
                "recordId": "A" * 43,
            },
        },
        ResolutionFault.RECORD_NOT_FOUND,
    ),
    "invalid_descriptor": (
        lambda p: {**p, "toolsetId": 17},
        ResolutionFault.INVALID_EVENT,
    ),
    "tampered_binding_revision": (
        lambda p: {**p, "bindingRevision": p["bindingRevision"][:-4] + "0000"},
        ResolutionFault.BINDING_MISMATCH,
    ),
}


@pytest.mark.conformance("P2-ROR-01", "P2-BOOT-11")
async def test_read_only_triggers_touch_no_server(
    harness: Any, monkeypatch: Any
) -> None:
  """P2-ROR-01, P2-BOOT-11: each read-only trigger makes no MCP request.

  One turn makes one UI call per trigger, so each has its real render
  reservation. For each, the persisted Event the bootstrap loads is a
  forged copy of the real one (appended through the Session service) whose
  descriptor is legacy, lacks its reference, names an unsupported or
  unknown record, does not parse, or carries a tampered binding revision.
  Bootstrap fails at RESOLVE with the matching fault; the server's log is
  unchanged, no grant is returned, the reservation is released, and the
  sealed store is never asked for a record before the reference checks
  pass.
  """
  async with harness() as h:
    sid, ev = await h.turn(*[(names.OPEN_VIEW, {})] * len(FORGERIES))
    key = h.st.key(sid)
    _record_internals(h, monkeypatch)
    before = len(h.entries())
    for (label, (mutate, fault)), call_id in zip(FORGERIES.items(), _ids(ev)):
      forged = _forged(ev, call_id, mutate(_payload(ev, call_id)))
      session = await h.svc.get_session(
          app_name=key.app_name,
          user_id=key.user_id,
          session_id=key.session_id,
      )
      h.svc.plant(session, forged)
      reserved = h.reservation(sid, call_id)
      assert reserved is not None, label
      h.trail.clear()
      steps: list[BootstrapStep] = []
      with pytest.raises(BootstrapError, match=r" at resolve: ") as info:
        await h.bootstrap(sid, forged.id, call_id, observer=steps.append)
      assert info.value.step is BootstrapStep.RESOLVE, label
      assert info.value.reason == fault.value, label
      assert BootstrapStep.READ not in steps, label
      assert reserved.released, label
      if fault is not ResolutionFault.RECORD_NOT_FOUND:
        assert "store_resolve" not in h.trail, label
      assert h.entries()[before:] == [], label
    # The forgeries touched no record: the original Event still resolves.
    resolved = await OracleResolver(h.profile, h.svc).resolve(
        key, event_id=ev.id, function_call_id=_ids(ev)[0]
    )
    assert resolved.full_result()["content"]


@pytest.mark.conformance("P2-KEY-03", "P2-ROR-01")
async def test_restart_with_the_key_missing(
    harness: Any, monkeypatch: Any
) -> None:
  """P2-KEY-03, P2-ROR-01, P2-BOOT-11: a missing key releases nothing.

  The binding key the descriptor was signed with is invalidated in the SQL
  key store, and the host restarts its key provider from that store. The
  bootstrap with the restarted profile fails at RESOLVE with
  `key_unavailable`: no sealed record is read from the store, no request
  reaches the server, no grant, and the reservation is released. A dev
  provider that never had the key fails the same way.
  """
  async with harness() as h:
    sid, ev = await h.turn((names.OPEN_VIEW, {}), (names.OPEN_VIEW, {}))
    first, second = _ids(ev)
    key_id = _payload(ev, first)["bindingRevision"].split(":")[1]
    await h.profile.key_provider.invalidate(key_id)
    restarted = await sql_profile(h.url, session_authorizer=h.authorizer)
    try:
      _record_internals(h, monkeypatch)
      store = restarted.sealed_result_store
      store_resolve = store.resolve

      async def recording(*args: Any, **kwargs: Any) -> Any:
        h.trail.append("restarted_store_resolve")
        return await store_resolve(*args, **kwargs)

      monkeypatch.setattr(store, "resolve", recording)
      before = len(h.entries())
      for call_id, profile in (
          (first, restarted),
          (
              second,
              dataclasses.replace(
                  h.profile,
                  key_provider=LocalDevKeyProvider(key_id="fresh"),
              ),
          ),
      ):
        reserved = h.reservation(sid, call_id)
        h.trail.clear()
        with pytest.raises(BootstrapError, match=r" at resolve: ") as info:
          await h.bootstrap(sid, ev.id, call_id, profile=profile)
        assert (info.value.step, info.value.reason) == (
            BootstrapStep.RESOLVE,
            ResolutionFault.KEY_UNAVAILABLE.value,
        )
        assert reserved.released
        assert not any("store_resolve" in t for t in h.trail), h.trail
        assert h.entries()[before:] == []
    finally:
      await close_profile(restarted)


# --- Published servers and the dashboard sample ------------------------------


def _published_params(server: str, tmp_path: Path) -> Any:
  if server == "dashboard":
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            str(DASHBOARD_SERVER),
            "--transport",
            "stdio",
            "--db",
            str(tmp_path / "dashboard.sqlite3"),
        ],
    )
  else:
    if not (shutil.which("node") and shutil.which("npm")):
      pytest.skip("node and npm are needed for the third-party servers")
    third_party_support.servers.ensure_installed()
    params = third_party_support.servers.stdio_params(server)
  return StdioConnectionParams(server_params=params, timeout=TIMEOUT)


PUBLISHED = {
    "basic-vanillajs": ("get-time", {}, "ui://get-time/mcp-app.html"),
    "map": (
        "show-map",
        {"west": 2.2, "south": 48.8, "east": 2.5, "north": 48.9},
        "ui://cesium-map/mcp-app.html",
    ),
    "dashboard": (
        "show_agent_dashboard",
        {"agent": "billing_agent"},
        "ui://agent-dashboard/view.html",
    ),
}


@pytest.mark.conformance("P2-BOOT-05", "P2-BOOT-12", "P2-BOOT-13")
@pytest.mark.parametrize("server", list(PUBLISHED))
async def test_published_servers(server: str, tmp_path: Path) -> None:
  """P2-BOOT-05, 12, 13 on published servers and the dashboard sample.

  The ext-apps example servers (basic-vanillajs, whose View is about
  218 KB; map, which declares its CSP only on the read content) and the
  `mcp_apps_dashboard` sample, each behind a bound registry over stdio.
  A real turn calls the UI tool; bootstrap returns the HTML and `_meta.ui`
  byte-for-byte equal to a direct read of the same generation, the call's
  arguments, and the sealed full result. For map, the listing carries no
  CSP, and the document's CSP is the read item's, verbatim.
  """
  tool, args, uri = PUBLISHED[server]
  profile = await sql_profile(f"sqlite+aiosqlite:///{tmp_path / 's.db'}")
  svc = SqliteSessionService(str(tmp_path / "sessions.db"))
  try:
    async with bound_stack(
        _published_params(server, tmp_path),
        session_service=svc,
        profile=profile,
    ) as st:
      sid = await st.new_session()
      ev = widget_event(await st.turn(sid, (tool, args)))
      (call_id,) = _ids(ev)
      doc = await bootstrap_render(
          registry=st.registry,
          profile=profile,
          session_service=svc,
          principal=PRINCIPAL,
          session=st.key(sid),
          toolset_id=TOOLSET,
          event_id=ev.id,
          function_call_id=call_id,
      )
      direct = st.registry.connections.get(doc.grant.generation_id).hold(
          HoldKind.OPERATION
      )
      (item,) = [
          c
          for c in (await direct.read_resource(uri)).contents
          if c.mime_type == names.APP_MIME_TYPE
      ]
      listing = await direct.execute(
          lambda session: session.list_resources(), "resources/list"
      )
      direct.release()
      doc.grant.revoke()
  finally:
    await close_profile(profile)

  assert doc.descriptor.resource_uri == uri
  assert doc.html == item.text
  assert doc.ui_meta == (item.meta or {}).get("ui")
  assert doc.tool_input == args
  assert doc.tool_result["content"]
  if server == "basic-vanillajs":
    assert len(doc.html.encode("utf-8")) > 200_000
  if server == "map":
    (entry,) = [r for r in listing.resources if str(r.uri) == uri]
    assert "csp" not in ((entry.meta or {}).get("ui") or {})
    assert doc.ui_meta["csp"] == item.meta["ui"]["csp"]
    assert doc.ui_meta["csp"]["connectDomains"]
  if server == "dashboard":
    assert doc.tool_result["structuredContent"]
