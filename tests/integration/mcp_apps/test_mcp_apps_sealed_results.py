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

"""Sealed results, references and the gated resolver, end to end.

Cases P2-DESC-01/02, P2-REF-01 .. P2-REF-04, P2-REF-06, P2-REF-11 ..
P2-REF-17, P2-SRS-03/04/05/07/20/22, P2-CJ-11/12 and P2-COMP-01/02/03/05
(RFC §3, compatibility matrix). Every result comes from a real `Runner`
turn against the stdio conformance server (`sealing_support.bound_stack`):
the scripted model calls the named UI tools in parallel, the profile-bound
toolset seals each full result and the Runner's append stage writes the
record and its reference. The stores are the SQL ones on a SQLite file
(the key cases also on the loopback PostgreSQL server), Sessions live in a
`SqliteSessionService` file, so a "restart" is new store and service
objects on the same files.

What is released is read only through `GatedResultResolver`, and compared
with what the server said: `open_view` mints a fresh nonce per call and
returns it both in the model-visible text and in the sealed
`structuredContent`. Tampering is done on the persisted data itself (a SQL
`UPDATE` of the sealed-result table, a rewrite of the stored Event row),
never on objects the code under test holds. Public serializations are the
ones ADK's API server emits (`public_session`/`public_event` dumped with
wire aliases and without None) and `Event.model_dump_json`.
"""

from __future__ import annotations

import base64
import collections.abc
import contextlib
import dataclasses
import json
from pathlib import Path
import sqlite3
from typing import Any
from typing import Callable

from google.adk.events._internal_metadata import public_event
from google.adk.events._internal_metadata import public_session
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.sealed_result_store import SealedRecordScope
from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultRef
from google.adk.mcp_apps.descriptor.widget_descriptor import LegacyMcpWidget
from google.adk.mcp_apps.descriptor.widget_descriptor import McpAppWidgetDescriptor
from google.adk.mcp_apps.descriptor.widget_descriptor import read_mcp_widget
from google.adk.mcp_apps.descriptor.widget_descriptor import WidgetCorrelation
from google.adk.mcp_apps.lifecycle.manager import SealedStoreParticipant
from google.adk.mcp_apps.lifecycle.manager import SessionLifecycleManager
from google.adk.mcp_apps.profile.fingerprint import verify_binding_revision
from google.adk.mcp_apps.profile.host_profile import McpAppsHostProfile
from google.adk.mcp_apps.profile.limits import HostLimits
from google.adk.mcp_apps.sealing.append_stage import append_event_with_sealed_results
from google.adk.mcp_apps.sealing.errors import SealingError
from google.adk.mcp_apps.sealing.errors import SealingErrorReason
from google.adk.mcp_apps.sealing.resolver import GatedResultResolver
from google.adk.mcp_apps.sealing.resolver import ResolutionFault
from google.adk.mcp_apps.sealing.resolver import SealedResolutionError
from google.adk.mcp_apps.sealing.resolver import ViewBinding
from google.adk.mcp_apps.sealing.result_sealer import PENDING_SEALS
from google.adk.mcp_apps.stores.sql_sealed_result_store import SealedRecordState
from google.adk.mcp_apps.stores.sql_sealed_result_store import TABLE_NAME
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.genai import types as genai_types
from mcp_apps_conformance_server import names
from postgres_server import PostgresServer
import pytest
from sealing_support import APP
from sealing_support import bound_stack
from sealing_support import BoundStack
from sealing_support import close_profile
from sealing_support import event_seal
from sealing_support import OracleResolver
from sealing_support import sql_profile
from sealing_support import TOOLSET
from sealing_support import USER
from sealing_support import widget_event
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

pytestmark = pytest.mark.integration

TIMEOUT = 30.0
NONCE_PREFIX = "View opened with nonce "


# --- Fixtures ----------------------------------------------------------------


@dataclasses.dataclass
class Env:
  """Where one test's stores and Sessions live, and how to reach the server.

  Attributes:
    params: ADK connection parameters of the stdio conformance server.
    store_url: The SQL URL of the sealed, lifecycle and key stores.
    session_db: The SQLite file of the Session service.
  """

  params: Any
  store_url: str
  session_db: Path

  def sessions(self) -> SqliteSessionService:
    """A new Session service object over the same file (a restart)."""
    return SqliteSessionService(str(self.session_db))

  @contextlib.asynccontextmanager
  async def stack(
      self, *, bind: bool = True, **overrides: Any
  ) -> collections.abc.AsyncIterator[BoundStack]:
    """A bound stack over fresh SQL store objects on `store_url`."""
    profile = await sql_profile(self.store_url, **overrides)
    try:
      async with bound_stack(
          self.params,
          session_service=self.sessions(),
          profile=profile,
          bind=bind,
      ) as st:
        yield st
    finally:
      await close_profile(profile)


def _env(tmp_path: Path, mcp_apps: Any, store_url: str) -> Env:
  return Env(
      params=StdioConnectionParams(
          server_params=mcp_apps.stdio_parameters({}), timeout=TIMEOUT
      ),
      store_url=store_url,
      session_db=tmp_path / "sessions.db",
  )


@pytest.fixture
def env(tmp_path: Path, mcp_apps: Any) -> Env:
  """SQL stores on a SQLite file."""
  return _env(tmp_path, mcp_apps, f"sqlite+aiosqlite:///{tmp_path / 's.db'}")


@pytest.fixture(params=["sqlite", "postgresql"])
def any_env(
    request: pytest.FixtureRequest, tmp_path: Path, mcp_apps: Any
) -> collections.abc.Iterator[Env]:
  """SQL stores on SQLite, then on the loopback PostgreSQL server."""
  if request.param == "sqlite":
    yield _env(tmp_path, mcp_apps, f"sqlite+aiosqlite:///{tmp_path / 's.db'}")
    return
  server: PostgresServer = request.getfixturevalue("pg_server")
  url = server.create_database()
  yield _env(tmp_path, mcp_apps, url)
  server.drop_database(url.rsplit("/", 1)[1])


# --- Helpers -----------------------------------------------------------------


def _responses(event: Event) -> dict[str, dict[str, Any]]:
  """The Event's FunctionResponses by call id."""
  return {
      part.function_response.id: part.function_response.response
      for part in event.content.parts
      if part.function_response is not None
  }


def _descriptors(event: Event) -> dict[str, McpAppWidgetDescriptor]:
  found = {}
  for widget in event.actions.render_ui_widgets or ():
    descriptor = read_mcp_widget(widget)
    assert isinstance(descriptor, McpAppWidgetDescriptor), descriptor
    found[widget.id] = descriptor
  return found


def _nonce(response: dict[str, Any]) -> str:
  """The nonce `open_view` told the model about."""
  (item,) = response["content"]
  assert item["text"].startswith(NONCE_PREFIX), item
  return str(item["text"][len(NONCE_PREFIX) :])


async def _rows(url: str) -> list[dict[str, Any]]:
  """Every row of the sealed-result table."""
  engine = create_async_engine(url)
  try:
    async with engine.connect() as conn:
      result = await conn.execute(
          text(
              "SELECT record_id, event_id, function_call_id, state, digest,"
              f" incarnation FROM {TABLE_NAME}"
          )
      )
      return [dict(row._mapping) for row in result]
  finally:
    await engine.dispose()


async def _tamper(url: str, record_id: str, sealed: bytes) -> None:
  """Overwrites a record's sealed bytes in the database."""
  engine = create_async_engine(url)
  try:
    async with engine.begin() as conn:
      result = await conn.execute(
          text(
              f"UPDATE {TABLE_NAME} SET sealed_result = :sealed"
              " WHERE record_id = :record_id"
          ),
          {"sealed": sealed, "record_id": record_id},
      )
      assert result.rowcount == 1
  finally:
    await engine.dispose()


def _rewrite_event(
    db: Path, event_id: str, change: Callable[[Event], None]
) -> None:
  """Rewrites a persisted Event row of the SQLite Session service."""
  with contextlib.closing(sqlite3.connect(db)) as conn:
    (data,) = conn.execute(
        "SELECT event_data FROM events WHERE id = ?", (event_id,)
    ).fetchone()
    event = Event.model_validate_json(data)
    change(event)
    conn.execute(
        "UPDATE events SET event_data = ? WHERE id = ?",
        (event.model_dump_json(exclude_none=True), event_id),
    )
    conn.commit()


async def _fault(
    resolver: GatedResultResolver, key: SessionKey, **kwargs: Any
) -> ResolutionFault:
  with pytest.raises(SealedResolutionError) as raised:
    await resolver.resolve(key, **kwargs)
  return raised.value.fault


async def _two_views(st: BoundStack) -> tuple[str, Event]:
  """A new Session and the stored Event of two parallel `open_view` calls."""
  sid = await st.new_session()
  yielded = widget_event(
      await st.turn(sid, (names.OPEN_VIEW, {}), (names.OPEN_VIEW, {}))
  )
  (stored,) = [e for e in await st.stored_events(sid) if e.id == yielded.id]
  return sid, stored


# --- Descriptor and widget placement -----------------------------------------


@pytest.mark.conformance("P2-DESC-01", "P2-REF-01", "P2-COMP-05")
async def test_descriptor_of_real_call(
    any_env: Env,
):
  async with any_env.stack() as st:
    sid = await st.new_session()
    yielded = widget_event(await st.turn(sid, (names.OPEN_VIEW, {})))
    (event,) = [e for e in await st.stored_events(sid) if e.id == yielded.id]
    (widget,) = event.actions.render_ui_widgets
    descriptor = read_mcp_widget(widget)
    profile = st.profile
    key = st.key(sid)
    rows = await _rows(any_env.store_url)
    state = await profile.sealed_result_store.state(
        SealedRecordScope(key, 1, event.id, widget.id),
        SealedResultRef(descriptor.sealed_result_ref.record_id, 1),
    )
    resolved = await OracleResolver(profile, st.session_service).resolve(
        key, event_id=event.id, function_call_id=widget.id
    )

  assert isinstance(descriptor, McpAppWidgetDescriptor)
  assert widget.provider == "mcp"
  assert descriptor.schema_version == 1
  assert descriptor.resource_uri == names.VIEW_URI
  assert descriptor.correlation == WidgetCorrelation(
      invocation_id=event.invocation_id,
      function_call_id=widget.id,
      agent_path="probe",
      branch=event.branch,
  )
  assert list(_responses(event)) == [widget.id]
  assert descriptor.toolset_id == TOOLSET
  assert descriptor.server_id
  assert "conformance" not in descriptor.server_id
  assert verify_binding_revision(profile, descriptor.binding_revision)
  key_id = descriptor.binding_revision.split(":")[1]
  assert descriptor.binding_revision.startswith(f"v1:{key_id}:")
  # P2-REF-01: exactly one reference, on the widget, none at Event level.
  assert set(widget.payload["sealedResultRef"]) == {"recordId", "schemaVersion"}
  assert event.sealed_result_refs is None
  # P2-COMP-05: one committed sidecar row in exactly this scope.
  assert [
      (r["record_id"], r["event_id"], r["function_call_id"]) for r in rows
  ] == [(descriptor.sealed_result_ref.record_id, event.id, widget.id)]
  assert state is SealedRecordState.COMMITTED
  assert resolved.descriptor == descriptor
  assert resolved.full_result()["structuredContent"]["nonce"] == _nonce(
      _responses(event)[widget.id]
  )
  assert resolved.refresh_record().tool_name == names.OPEN_VIEW


@pytest.mark.conformance("P2-REF-02", "P2-REF-11")
async def test_parallel_views_get_own_records(
    any_env: Env,
):
  async with any_env.stack() as st:
    sid, event = await _two_views(st)
    resolver = OracleResolver(st.profile, st.session_service)
    descriptors = _descriptors(event)
    released = {
        call_id: await resolver.resolve(
            st.key(sid), event_id=event.id, function_call_id=call_id
        )
        for call_id in descriptors
    }
    rows = await _rows(any_env.store_url)

  responses = _responses(event)
  assert len(descriptors) == 2
  assert set(descriptors) == set(responses)
  assert {d.resource_uri for d in descriptors.values()} == {names.VIEW_URI}
  record_ids = {d.sealed_result_ref.record_id for d in descriptors.values()}
  assert len(record_ids) == 2
  assert {(r["record_id"], r["function_call_id"]) for r in rows} == {
      (d.sealed_result_ref.record_id, call_id)
      for call_id, d in descriptors.items()
  }
  nonces = {call_id: _nonce(responses[call_id]) for call_id in responses}
  assert len(set(nonces.values())) == 2
  for call_id, result in released.items():
    assert descriptors[call_id].correlation.function_call_id == call_id
    assert result.full_result()["structuredContent"]["nonce"] == nonces[call_id]


@pytest.mark.conformance("P2-REF-06")
async def test_repeated_calls_get_distinct_records(env: Env):
  async with env.stack() as st:
    sid = await st.new_session()
    first = widget_event(await st.turn(sid, (names.UI_RESULT, {"label": "x"})))
    second = widget_event(
        await st.turn(
            sid,
            (names.UI_RESULT, {"label": "x"}),
            (names.UI_RESULT, {"label": "x"}),
        )
    )
    resolver = OracleResolver(st.profile, st.session_service)
    calls = [(first.id, w.id) for w in first.actions.render_ui_widgets] + [
        (second.id, w.id) for w in second.actions.render_ui_widgets
    ]
    released = [
        await resolver.resolve(
            st.key(sid), event_id=event_id, function_call_id=call_id
        )
        for event_id, call_id in calls
    ]
    rows = await _rows(env.store_url)

  assert len({call_id for _, call_id in calls}) == 3
  assert len({r.reference.record_id for r in released}) == 3
  assert len(rows) == 3
  # Identical results, independent records each keyed by its own call.
  assert {r.envelope.sealed_result for r in released} == {
      released[0].envelope.sealed_result
  }
  assert [r.scope.function_call_id for r in released] == [c for _, c in calls]


@pytest.mark.conformance("P2-REF-16")
async def test_restart_maps_references_by_call_id(any_env: Env):
  async with any_env.stack() as st:
    sid, _ = await _two_views(st)
    key = st.key(sid)
  assert not len(PENDING_SEALS)

  # A restart: new profile stores and a new Session service object.
  profile = await sql_profile(any_env.store_url)
  try:
    sessions = any_env.sessions()
    stored = await sessions.get_session(
        app_name=APP, user_id=USER, session_id=sid
    )
    (event,) = [e for e in stored.events if e.actions.render_ui_widgets]
    resolver = OracleResolver(profile, sessions)
    mapped = {}
    for widget in reversed(event.actions.render_ui_widgets):
      descriptor = read_mcp_widget(widget)
      call_id = descriptor.correlation.function_call_id
      result = await resolver.resolve(
          key, event_id=event.id, function_call_id=call_id
      )
      mapped[call_id] = result.full_result()["structuredContent"]["nonce"]
  finally:
    await close_profile(profile)

  assert mapped == {
      call_id: _nonce(response)
      for call_id, response in _responses(event).items()
  }


# --- Event-level placement ---------------------------------------------------


def _audit_event(invocation_id: str, call_ids: list[str]) -> Event:
  return Event(
      invocation_id=invocation_id,
      author="probe",
      content=genai_types.Content(
          role="user",
          parts=[
              genai_types.Part(
                  function_response=genai_types.FunctionResponse(
                      id=call_id,
                      name=names.APP_FOLLOWUP,
                      response={"content": []},
                  )
              )
              for call_id in call_ids
          ],
      ),
  )


@pytest.mark.conformance("P2-REF-03", "P2-REF-04")
async def test_event_level_references(env: Env):
  async with env.stack() as st:
    sid = await st.new_session()
    key = st.key(sid)
    results = {
        "fc-one": {"structuredContent": {"n": 1}},
        "fc-two": {"structuredContent": {"n": 2}},
        "fc-three": {"structuredContent": {"n": 3}},
    }
    appended = []
    for invocation_id, call_ids in (
        ("inv-single", ["fc-one"]),
        ("inv-several", ["fc-two", "fc-three"]),
    ):
      for call_id in call_ids:
        event_seal(st.profile, key, invocation_id, call_id, results[call_id])
      session = await st.session_service.get_session(
          app_name=APP, user_id=USER, session_id=sid
      )
      appended.append(
          await append_event_with_sealed_results(
              st.session_service,
              session=session,
              event=_audit_event(invocation_id, call_ids),
          )
      )
    stored = {e.id: e for e in await st.stored_events(sid)}
    resolver = OracleResolver(st.profile, st.session_service)
    released = {}
    for event in appended:
      for call_id in event.sealed_result_refs:
        released[call_id] = await resolver.resolve(
            key, event_id=event.id, function_call_id=call_id
        )
    view_fault = await _fault(
        resolver,
        key,
        event_id=appended[0].id,
        function_call_id="fc-one",
        view=ViewBinding(TOOLSET, "srv", appended[0].id, "fc-one"),
    )

  single, several = (stored[e.id] for e in appended)
  assert set(single.sealed_result_refs) == {"fc-one"}
  assert set(several.sealed_result_refs) == {"fc-two", "fc-three"}
  for event in (single, several):
    assert not event.actions.render_ui_widgets
    wire = json.loads(event.model_dump_json(by_alias=True, exclude_none=True))
    for ref in wire["sealedResultRefs"].values():
      assert set(ref) == {"recordId", "schemaVersion"}
  assert {
      call_id: r.full_result() for call_id, r in released.items()
  } == results
  assert all(r.descriptor is None for r in released.values())
  assert all(r.envelope.refresh_record is None for r in released.values())
  # An Event-level result belongs to no View.
  assert view_fault is ResolutionFault.VIEW_MISMATCH


# --- Public serializations ---------------------------------------------------


@pytest.mark.conformance("P2-DESC-02", "P2-REF-15", "P2-SRS-22")
async def test_public_serializations(
    env: Env,
):
  async with env.stack() as st:
    sid = await st.new_session()
    yielded = widget_event(
        await st.turn(
            sid,
            (names.OPEN_VIEW, {}),
            (names.OPEN_VIEW, {}),
            (names.UI_RESULT, {"label": "lbl"}),
        )
    )
    session = await st.session_service.get_session(
        app_name=APP, user_id=USER, session_id=sid
    )
    resolver = OracleResolver(st.profile, st.session_service)
    released = [
        await resolver.resolve(
            st.key(sid), event_id=yielded.id, function_call_id=w.id
        )
        for w in yielded.actions.render_ui_widgets
    ]
    rows = await _rows(env.store_url)

  (stored,) = [e for e in session.events if e.id == yielded.id]
  surfaces = {
      "runner_event": yielded.model_dump_json(by_alias=True, exclude_none=True),
      "stored_event": stored.model_dump_json(by_alias=True, exclude_none=True),
      "api_event": (
          public_event(stored).model_dump_json(by_alias=True, exclude_none=True)
      ),
      "api_session": json.dumps(
          public_session(session).model_dump(
              exclude_none=True, by_alias=True, mode="json"
          )
      ),
  }
  secrets = {"structuredContent", "forView", "conformance/private"}
  for result in released:
    sealed = result.envelope.sealed_result
    secrets.add(sealed.decode())
    structured = result.full_result()["structuredContent"]
    if "connectionId" in structured:
      secrets.update({structured["connectionId"], structured["processNonce"]})
  for row in rows:
    digest = bytes(row["digest"])
    secrets.update({
        digest.hex(),
        base64.b64encode(digest).decode(),
        base64.urlsafe_b64encode(digest).decode().rstrip("="),
    })
  for name, wire in surfaces.items():
    for secret in secrets:
      assert secret not in wire, (name, secret)
    parsed = json.loads(wire)
    events = parsed["events"] if "events" in parsed else [parsed]
    (widgets,) = [
        e["actions"]["renderUiWidgets"]
        for e in events
        if e["actions"].get("renderUiWidgets")
    ]
    for widget in widgets:
      assert set(widget["payload"]["sealedResultRef"]) == {
          "recordId",
          "schemaVersion",
      }, name
  # P2-SRS-22: two results whose sealed bytes differ give descriptors that
  # differ only in the call and the record id.
  responses = _responses(stored)
  views = [
      w.payload
      for w in stored.actions.render_ui_widgets
      if "text" in responses[w.id]["content"][0]
      and responses[w.id]["content"][0]["text"].startswith(NONCE_PREFIX)
  ]
  assert len(views) == 2
  assert (
      released[0].envelope.sealed_result != released[1].envelope.sealed_result
  )

  def blank(payload: dict[str, Any]) -> dict[str, Any]:
    copy = json.loads(json.dumps(payload))
    del copy["correlation"]["functionCallId"]
    del copy["sealedResultRef"]["recordId"]
    return copy

  assert blank(views[0]) == blank(views[1])


# --- Resolver faults ---------------------------------------------------------


@pytest.mark.conformance("P2-REF-12")
async def test_legacy_descriptor_fails_typed(env: Env):
  async with env.stack(bind=False) as st:
    sid = await st.new_session()
    event = widget_event(await st.turn(sid, (names.OPEN_VIEW, {})))
    key = st.key(sid)
    await st.profile.session_lifecycle_store.adopt_existing(
        key, adoption_id="adopt-legacy"
    )
    (widget,) = event.actions.render_ui_widgets
    fault = await _fault(
        OracleResolver(st.profile, st.session_service),
        key,
        event_id=event.id,
        function_call_id=widget.id,
    )
    rows = await _rows(env.store_url)

  assert isinstance(read_mcp_widget(widget), LegacyMcpWidget)
  assert fault is ResolutionFault.LEGACY_DESCRIPTOR
  assert rows == []


@pytest.mark.conformance("P2-REF-13")
async def test_missing_or_unknown_reference_fails_typed(env: Env):
  async with env.stack() as st:
    sid, event = await _two_views(st)
    first, second = (w.id for w in event.actions.render_ui_widgets)

    def change(stored: Event) -> None:
      for widget in stored.actions.render_ui_widgets:
        if widget.id == first:
          del widget.payload["sealedResultRef"]
        else:
          widget.payload["sealedResultRef"]["recordId"] = "A" * 43

    _rewrite_event(env.session_db, event.id, change)
    resolver = OracleResolver(st.profile, st.session_service)
    missing = await _fault(
        resolver, st.key(sid), event_id=event.id, function_call_id=first
    )
    unknown = await _fault(
        resolver, st.key(sid), event_id=event.id, function_call_id=second
    )

  assert missing is ResolutionFault.MISSING_REFERENCE
  assert unknown is ResolutionFault.RECORD_NOT_FOUND


@pytest.mark.conformance("P2-REF-13", "P2-SRS-07")
async def test_tampered_bytes_are_corrupt(any_env: Env):
  async with any_env.stack() as st:
    sid, event = await _two_views(st)
    descriptors = _descriptors(event)
    first, second = descriptors
    resolver = OracleResolver(st.profile, st.session_service)
    original = await resolver.resolve(
        st.key(sid), event_id=event.id, function_call_id=first
    )
    forged = original.envelope.sealed_result.replace(
        b'"isError":false', b'"isError":true '
    )
    assert forged != original.envelope.sealed_result
    await _tamper(
        any_env.store_url,
        descriptors[first].sealed_result_ref.record_id,
        forged,
    )
    fault = await _fault(
        resolver, st.key(sid), event_id=event.id, function_call_id=first
    )
    untouched = await resolver.resolve(
        st.key(sid), event_id=event.id, function_call_id=second
    )

  assert fault is ResolutionFault.CORRUPT
  assert untouched.full_result()["structuredContent"]["nonce"] == _nonce(
      _responses(event)[second]
  )


@pytest.mark.conformance("P2-REF-17")
async def test_deleted_session_releases_nothing(env: Env):
  async with env.stack() as st:
    sid, event = await _two_views(st)
    key = st.key(sid)
    call_id = event.actions.render_ui_widgets[0].id
    resolver = OracleResolver(st.profile, st.session_service)
    await resolver.resolve(key, event_id=event.id, function_call_id=call_id)
    manager = SessionLifecycleManager(
        st.profile.session_lifecycle_store,
        st.session_service,
        participants=[SealedStoreParticipant(st.profile.sealed_result_store)],
    )
    await manager.delete(key)
    fault = await _fault(
        resolver, key, event_id=event.id, function_call_id=call_id
    )
    rows = await _rows(env.store_url)

  assert fault is ResolutionFault.SESSION_NOT_ACTIVE
  assert rows == []


@pytest.mark.conformance("P2-SRS-03")
async def test_swapped_reference_releases_nothing(env: Env):
  async with env.stack() as st:
    sid, event = await _two_views(st)
    key = st.key(sid)
    descriptors = _descriptors(event)
    first, second = descriptors

    # Onto another call of the same Event: the two references trade places.
    def swap(stored: Event) -> None:
      a, b = stored.actions.render_ui_widgets
      a.payload["sealedResultRef"], b.payload["sealedResultRef"] = (
          b.payload["sealedResultRef"],
          a.payload["sealedResultRef"],
      )

    _rewrite_event(env.session_db, event.id, swap)
    resolver = OracleResolver(st.profile, st.session_service)
    swapped = [
        await _fault(resolver, key, event_id=event.id, function_call_id=c)
        for c in (first, second)
    ]

    # Onto another Event: a well-formed copy of the first widget, for a new
    # call, appended through the append stage.
    moved = descriptors[first].model_copy(
        update={
            "correlation": (
                descriptors[first].correlation.model_copy(
                    update={"function_call_id": "fc-moved"}
                )
            )
        }
    )
    other = _audit_event("inv-moved", ["fc-moved"])
    other.actions = EventActions(render_ui_widgets=[moved.to_widget()])
    session = await st.session_service.get_session(
        app_name=APP, user_id=USER, session_id=sid
    )
    other = await append_event_with_sealed_results(
        st.session_service, session=session, event=other
    )
    elsewhere = await _fault(
        resolver, key, event_id=other.id, function_call_id="fc-moved"
    )

  assert swapped == [ResolutionFault.RECORD_NOT_FOUND] * 2
  assert elsewhere is ResolutionFault.RECORD_NOT_FOUND


@pytest.mark.conformance("P2-SRS-04")
async def test_view_binding_mismatch(env: Env):
  async with env.stack() as st:
    sid, event = await _two_views(st)
    key = st.key(sid)
    descriptors = _descriptors(event)
    first, second = descriptors
    server = descriptors[first].server_id
    resolver = OracleResolver(st.profile, st.session_service)
    wrong_views = [
        ViewBinding(TOOLSET, server, event.id, second),
        ViewBinding("other", server, event.id, first),
        ViewBinding(TOOLSET, "mcp-server:other", event.id, first),
        ViewBinding(TOOLSET, server, "other-event", first),
    ]
    faults = [
        await _fault(
            resolver, key, event_id=event.id, function_call_id=first, view=view
        )
        for view in wrong_views
    ]
    bound = await resolver.resolve(
        key,
        event_id=event.id,
        function_call_id=first,
        view=ViewBinding(TOOLSET, server, event.id, first),
    )

  assert faults == [ResolutionFault.VIEW_MISMATCH] * len(wrong_views)
  assert bound.function_call_id == first


@pytest.mark.conformance("P2-SRS-05")
async def test_event_missing_releases_nothing(env: Env):
  async with env.stack() as st:
    sid, event = await _two_views(st)
    call_id = event.actions.render_ui_widgets[0].id
    with contextlib.closing(sqlite3.connect(env.session_db)) as conn:
      conn.execute("DELETE FROM events WHERE id = ?", (event.id,))
      conn.commit()
    fault = await _fault(
        OracleResolver(st.profile, st.session_service),
        st.key(sid),
        event_id=event.id,
        function_call_id=call_id,
    )
    rows = await _rows(env.store_url)

  assert fault is ResolutionFault.EVENT_MISSING
  assert call_id in {r["function_call_id"] for r in rows}


# --- Sealing limits and the compatibility matrix -----------------------------

SMALL = HostLimits(sealing_max_bytes=1024)
BIG_TEXT = 4096


@pytest.mark.conformance("P2-CJ-11", "P2-COMP-07")
async def test_over_limit_result_is_an_error_result(env: Env):
  async with env.stack(limits=SMALL) as st:
    sid = await st.new_session()
    events = await st.turn(
        sid,
        (names.SIZED_RESULT, {"text_bytes": BIG_TEXT}),
        (names.OPEN_VIEW, {}),
    )
    event = widget_event(events)
    key = st.key(sid)
    responses = _responses(event)
    # The failed call is the one whose response is an error.
    (sized,) = [c for c, r in responses.items() if "content" not in r]
    (view,) = [c for c in responses if c != sized]
    reserved = {
        c: st.registry.render_reservations.peek(TOOLSET, key, c)
        for c in (sized, view)
    }
    pending = len(PENDING_SEALS)
    rows = await _rows(env.store_url)

  assert "cannot be sealed" in responses[sized]["error"]
  assert [w.id for w in event.actions.render_ui_widgets] == [view]
  assert events[-1].content.parts[0].text == "done"
  assert pending == 0
  assert [r["function_call_id"] for r in rows] == [view]
  assert reserved[sized] is None
  assert reserved[view] is not None


@pytest.mark.conformance("P2-CJ-11")
async def test_on_tool_error_callback_sees_sealing_limit_error(
    env: Env, monkeypatch: pytest.MonkeyPatch
):
  # With ADK's graceful MCP error handling off, the exception leaves the
  # tool and takes the `on_tool_error_callback` chain.
  monkeypatch.setenv("ADK_DISABLE_MCP_GRACEFUL_ERROR_HANDLING", "1")
  seen: list[Exception] = []

  def on_error(tool, args, tool_context, error):
    del tool, args, tool_context
    seen.append(error)
    return {"error": "over the sealing limit"}

  async with env.stack(limits=SMALL) as st:
    st.runner.agent.on_tool_error_callback = on_error
    sid = await st.new_session()
    events = await st.turn(sid, (names.SIZED_RESULT, {"text_bytes": BIG_TEXT}))
    pending = len(PENDING_SEALS)
    rows = await _rows(env.store_url)

  (error,) = seen
  assert isinstance(error, SealingError)
  assert error.reason is SealingErrorReason.LIMIT_EXCEEDED
  responses = [r for e in events if e.content for r in _responses(e).values()]
  assert responses == [{"error": "over the sealing limit"}]
  assert not any(e.actions.render_ui_widgets for e in events)
  assert error.function_call_id
  assert pending == 0
  assert rows == []


@pytest.mark.conformance("P2-CJ-12", "P2-COMP-03")
async def test_unbound_over_limit_result_succeeds(
    env: Env,
):
  async with env.stack(bind=False, limits=SMALL) as st:
    sid = await st.new_session()
    event = widget_event(
        await st.turn(sid, (names.SIZED_RESULT, {"text_bytes": BIG_TEXT}))
    )
    rows = await _rows(env.store_url)

  (response,) = _responses(event).values()
  assert "error" not in response
  assert response["content"][0]["text"] == "x" * BIG_TEXT
  (widget,) = event.actions.render_ui_widgets
  assert isinstance(read_mcp_widget(widget), LegacyMcpWidget)
  assert rows == []


@pytest.mark.conformance("P2-COMP-01")
async def test_unbound_emits_legacy_payload(env: Env):
  async with env.stack(bind=False) as st:
    sid = await st.new_session()
    yielded = widget_event(await st.turn(sid, (names.OPEN_VIEW, {})))
    (stored,) = [e for e in await st.stored_events(sid) if e.id == yielded.id]

  for event in (yielded, stored):
    (widget,) = event.actions.render_ui_widgets
    assert widget.provider == "mcp"
    assert set(widget.payload) == {"resource_uri", "tool", "tool_args"}
    assert widget.payload["resource_uri"] == names.VIEW_URI
    assert widget.payload["tool"]["name"] == names.OPEN_VIEW
    assert widget.payload["tool_args"] == {}
    assert event.sealed_result_refs is None
    wire = event.model_dump_json(by_alias=True, exclude_none=True)
    assert "sealedResultRef" not in wire


class _Recording:
  """Forwards to a store and records every attribute it is asked for."""

  def __init__(self, inner: Any, calls: list[str], name: str) -> None:
    self._inner = inner
    self._calls = calls
    self._name = name

  def __getattr__(self, attr: str) -> Any:
    self._calls.append(f"{self._name}.{attr}")
    return getattr(self._inner, attr)


@pytest.mark.conformance("P2-COMP-02")
@pytest.mark.parametrize("bind", [False, True], ids=["unbound", "control"])
async def test_unbound_never_invokes_stores(env: Env, bind: bool):
  base = await sql_profile(env.store_url)
  calls: list[str] = []
  profile = dataclasses.replace(
      base,
      sealed_result_store=_Recording(base.sealed_result_store, calls, "sealed"),
      session_lifecycle_store=_Recording(
          base.session_lifecycle_store, calls, "lifecycle"
      ),
      key_provider=_Recording(base.key_provider, calls, "keys"),
  )
  calls.clear()
  try:
    async with bound_stack(
        env.params, session_service=env.sessions(), profile=profile, bind=bind
    ) as st:
      sid = await st.new_session()
      event = widget_event(
          await st.turn(sid, (names.OPEN_VIEW, {}), (names.UI_RESULT, {}))
      )
      pending = len(PENDING_SEALS)
  finally:
    await close_profile(base)

  widgets = [read_mcp_widget(w) for w in event.actions.render_ui_widgets]
  assert len(widgets) == 2
  assert pending == 0
  if bind:
    # The control: the same wrapped stores do record a bound run.
    assert {"sealed.create", "lifecycle.read", "keys.active_key"} <= set(calls)
    assert all(isinstance(w, McpAppWidgetDescriptor) for w in widgets)
    assert len(await _rows(env.store_url)) == 2
    return
  assert calls == []
  assert all(isinstance(w, LegacyMcpWidget) for w in widgets)
  assert await _rows(env.store_url) == []


READ_LOG_CALL = "tools/call"


def _log_entries(log: Path) -> list[dict[str, Any]]:
  """Every message the server received, in order."""
  if not log.exists():
    return []
  return [json.loads(line) for line in log.read_text().splitlines()]


# --- P2-SRS-20: restart without a replay key ---------------------------------


def _sole_reference(event: Event) -> tuple[str, str]:
  """The one widget's call id and its sealed record id."""
  (widget,) = event.actions.render_ui_widgets
  descriptor = read_mcp_widget(widget)
  assert isinstance(descriptor, McpAppWidgetDescriptor)
  assert descriptor.sealed_result_ref is not None
  return widget.id, descriptor.sealed_result_ref.record_id


@pytest.mark.conformance("P2-SRS-20")
async def test_restart_without_replay_key_reruns_and_keeps_seal(
    mcp_apps: Any, tmp_path: Path
) -> None:
  """P2-SRS-20: after a restart the retried call runs again; old seal stays.

  A bound `ui_result` call is made and resolved; the registry, Runner,
  stores and Session service are closed. New ones are opened on the same
  SQLite files and the same call (same tool and arguments) is made in a new
  turn of the same Session. Nothing replays it: the server logs a second
  `tools/call`, the new Event carries a new record id, and the earlier
  Event and its seal still resolve, to the same full result and the same
  refresh record, through a resolver of the restarted stack.
  """
  log = tmp_path / "requests.jsonl"
  params = StdioConnectionParams(
      server_params=mcp_apps.stdio_parameters({"request_log_file": str(log)}),
      timeout=TIMEOUT,
  )
  url = f"sqlite+aiosqlite:///{tmp_path / 'stores.db'}"
  sessions = str(tmp_path / "sessions.db")
  call = (names.UI_RESULT, {"label": "retry"})

  profile = await sql_profile(url)
  svc = SqliteSessionService(sessions)
  try:
    async with bound_stack(params, session_service=svc, profile=profile) as st:
      sid = await st.new_session()
      key = st.key(sid)
      first = widget_event(await st.turn(sid, call))
      first_call, first_record = _sole_reference(first)
      before = await OracleResolver(profile, svc).resolve(
          key, event_id=first.id, function_call_id=first_call
      )
      full, record = before.full_result(), before.refresh_record()
  finally:
    await close_profile(profile)
  calls = [e for e in _log_entries(log) if e["method"] == READ_LOG_CALL]
  assert [e["name"] for e in calls] == [names.UI_RESULT]

  profile = await sql_profile(url)
  svc = SqliteSessionService(sessions)
  try:
    async with bound_stack(params, session_service=svc, profile=profile) as st:
      second = widget_event(await st.turn(sid, call))
      second_call, second_record = _sole_reference(second)
      stored = await st.stored_events(sid)
      resolver = OracleResolver(profile, svc)
      old = await resolver.resolve(
          key, event_id=first.id, function_call_id=first_call
      )
      new = await resolver.resolve(
          key, event_id=second.id, function_call_id=second_call
      )
  finally:
    await close_profile(profile)

  calls = [e for e in _log_entries(log) if e["method"] == READ_LOG_CALL]
  assert [e["name"] for e in calls] == [names.UI_RESULT] * 2
  assert second.id != first.id and second_call != first_call
  assert second_record != first_record
  assert [e.id for e in stored].count(first.id) == 1
  assert old.reference.record_id == first_record
  assert old.full_result() == full
  assert old.refresh_record() == record
  assert old.scope.incarnation == new.scope.incarnation
  assert new.reference.record_id == second_record
  assert new.refresh_record().arguments == record.arguments
  assert new.full_result()["structuredContent"] == full["structuredContent"]
