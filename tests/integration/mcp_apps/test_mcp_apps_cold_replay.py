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

"""Cold replay over real calls, across a real restart (RFC §6, ⚑7(i)).

Cases P2-COLD-01..10, 16..18 and P2-RIR-02, 09, 13..15. Every test first
runs a real profile-bound UI call: a scripted model calls the conformance
server's UI tools over stdio through a bound registry and a `Runner`; the
profile's sealed-result, lifecycle and key stores are the SQL ones on a
SQLite file and the Session service is `SqliteSessionService` on another.
Then the host "restarts": the registry, Runner and stores are closed and
new store and Session-service objects are opened on the same files (the
pending-seal table is cleared; no process memory survives).

After the restart, the widget's cold state is what `cold_affordance`
decides from the sealed refresh record and a fresh native listing of the
server: the restarted registry's own listing, or an MCP client session to
the same server configuration, on which the `mutate_catalog` and
`remove_listed_tool` admin tools change the catalog before listing it.
Visibility shapes the server cannot be driven into are `model_copy`
variants of the real declaration. The replay-classification authority is a
small test-owned one whose source, revision and answers each test picks;
the stores are damaged, where a case needs it, with plain SQL on the
closed database file. Nothing sleeps; the crash after the Event append is
forced with the append stage's fault hook.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
from pathlib import Path
import sqlite3
from typing import Any
from typing import AsyncIterator
from typing import Awaitable
from typing import Callable
from typing import Optional

from google.adk.events.event import Event
from google.adk.mcp_apps.affinity.errors import ConnectionAffinityError
from google.adk.mcp_apps.affinity.tool_handles import comparable_projection
from google.adk.mcp_apps.bootstrap.cold_replay import cold_affordance
from google.adk.mcp_apps.bootstrap.cold_replay import ColdAffordance
from google.adk.mcp_apps.bootstrap.cold_replay import ColdOffer
from google.adk.mcp_apps.bootstrap.cold_replay import RERUN_WARNING
from google.adk.mcp_apps.bootstrap.render import bootstrap_render
from google.adk.mcp_apps.bootstrap.render import BootstrapError
from google.adk.mcp_apps.bootstrap.render import BootstrapStep
from google.adk.mcp_apps.bootstrap.render import RenderDocument
from google.adk.mcp_apps.bootstrap.render import view_hold
from google.adk.mcp_apps.canonical_json import canonicalize
from google.adk.mcp_apps.canonical_json import Purpose
from google.adk.mcp_apps.contracts.principal_resolver import Principal
from google.adk.mcp_apps.contracts.replay_classification import ReplayClass
from google.adk.mcp_apps.contracts.replay_classification import ReplayClassificationAuthority
from google.adk.mcp_apps.contracts.replay_classification import ToolIdentity
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.sealed_result_store import SealedEnvelope
from google.adk.mcp_apps.contracts.session_authorizer import SessionPurpose
from google.adk.mcp_apps.descriptor.widget_descriptor import read_mcp_widget
from google.adk.mcp_apps.profile.fingerprint import binding_revision
from google.adk.mcp_apps.profile.host_profile import McpAppsHostProfile
from google.adk.mcp_apps.sealing import append_stage
from google.adk.mcp_apps.sealing.append_stage import SealFault
from google.adk.mcp_apps.sealing.refresh_record import RefreshInvocationRecord
from google.adk.mcp_apps.sealing.resolver import GatedResultResolver
from google.adk.mcp_apps.stores import sql_sealed_result_store
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.mcp_tool import StdioConnectionParams
from mcp_apps_conformance_server import names
import pytest
from sealing_support import bound_stack
from sealing_support import BoundStack
from sealing_support import close_profile
from sealing_support import OracleResolver
from sealing_support import PRINCIPAL
from sealing_support import sql_profile
from sealing_support import TOOLSET
from sealing_support import widget_event

pytestmark = pytest.mark.integration

TIMEOUT = 30.0
SOURCE = "cold-test-authority"
SAFE = frozenset({names.MUTABLE_VIEW})
"""`mutable_view` (a pure echo) is replay-safe; `open_view` is not."""
LABEL = {"label": "cold"}
TABLE = sql_sealed_result_store.TABLE_NAME
# The store-private digest, to forge records that pass it.
_digest = sql_sealed_result_store._envelope_digest  # pylint: disable=protected-access


# --- Test-owned collaborators ------------------------------------------------


class Authority:
  """A test-owned `ReplayClassificationAuthority`.

  Attributes:
    calls: Every tool it was asked to classify, in order.
  """

  def __init__(
      self,
      *,
      source: str = SOURCE,
      revision: str = "r1",
      safe: frozenset[str] = SAFE,
      fail: bool = False,
  ) -> None:
    self._source = source
    self._revision = revision
    self._safe = safe
    self._fail = fail
    self.calls: list[ToolIdentity] = []

  @property
  def source(self) -> str:
    return self._source

  @property
  def revision(self) -> str:
    return self._revision

  def classify(self, tool: ToolIdentity) -> ReplayClass:
    self.calls.append(tool)
    if self._fail:
      raise RuntimeError("classification source unavailable")
    if tool.tool_name in self._safe:
      return ReplayClass.REPLAY_SAFE
    return ReplayClass.NOT_REPLAY_SAFE


class DenyingAuthorizer:
  """A `SessionAuthorizer` that denies (or, with `fail`, raises)."""

  def __init__(self, *, fail: bool = False) -> None:
    self._fail = fail
    self.asked: list[tuple[Principal, SessionKey, SessionPurpose]] = []

  async def authorize(
      self,
      principal: Principal,
      session: SessionKey,
      purpose: SessionPurpose,
      *,
      widget: object = None,
  ) -> bool:
    self.asked.append((principal, session, purpose))
    if self._fail:
      raise RuntimeError("authorizer unavailable")
    return False


class _Crash(Exception):
  """The forced crash of the append stage's fault hook."""


@dataclasses.dataclass(frozen=True)
class Call:
  """One persisted render-producing call.

  Attributes:
    tool: Its native tool name.
    args: Its arguments.
    session: Its Session.
    event_id: The Event reporting it.
    call_id: Its function-call id (the widget id).
  """

  tool: str
  args: dict[str, Any]
  session: SessionKey
  event_id: str
  call_id: str


@dataclasses.dataclass
class Host:
  """The durable files of one host and the server configuration it binds.

  Attributes:
    root: The directory holding the two SQLite files.
    helpers: The `mcp_apps` conftest helpers.
    options: The conformance server's options.
  """

  root: Path
  helpers: Any
  options: dict[str, Any] = dataclasses.field(default_factory=dict)

  @property
  def store_path(self) -> Path:
    return self.root / "sealed.db"

  @property
  def store_url(self) -> str:
    return f"sqlite+aiosqlite:///{self.store_path}"

  @property
  def session_path(self) -> Path:
    return self.root / "sessions.db"

  def connection(self) -> StdioConnectionParams:
    return StdioConnectionParams(
        server_params=self.helpers.stdio_parameters(self.options),
        timeout=TIMEOUT,
    )

  @contextlib.asynccontextmanager
  async def life(
      self, authority: Any = None, **overrides: Any
  ) -> AsyncIterator[tuple[McpAppsHostProfile, SqliteSessionService]]:
    """One process lifetime: new store and Session-service objects."""
    profile = await sql_profile(
        self.store_url,
        replay_classification=authority or Authority(),
        **overrides,
    )
    try:
      yield profile, SqliteSessionService(str(self.session_path))
    finally:
      await close_profile(profile)

  async def first_life(
      self,
      *calls: tuple[str, dict[str, Any]],
      authority: Any = None,
      inside: Optional[
          Callable[[BoundStack, list[Call]], Awaitable[None]]
      ] = None,
  ) -> list[Call]:
    """Runs one turn making `calls` in parallel, then shuts the host down.

    Args:
      *calls: `(tool, args)` pairs; each must render a widget.
      authority: The classification authority (a default `Authority`).
      inside: Awaited with the stack and the calls before shutdown.

    Returns:
      The persisted calls, in the order given.
    """
    async with self.life(authority) as (profile, svc):
      async with bound_stack(
          self.connection(), session_service=svc, profile=profile
      ) as stack:
        sid = await stack.new_session()
        event = widget_event(await stack.turn(sid, *calls))
        persisted = _calls(event, stack.key(sid), calls)
        if inside is not None:
          await inside(stack, persisted)
    return persisted

  async def fresh_listing(
      self, *admin: tuple[str, dict[str, Any]]
  ) -> list[Any]:
    """A fresh native `tools/list` of the server, after `admin` calls."""
    async with self.helpers.connect(
        self.helpers.stdio_parameters(self.options)
    ) as client:
      for name, args in admin:
        result = await client.call_tool(name, args)
        assert not result.is_error, result
      return list((await client.list_tools()).tools)

  def execute(self, sql: str, *params: Any) -> int:
    """Runs one statement on the (closed) sealed-store file."""
    with contextlib.closing(sqlite3.connect(self.store_path)) as db:
      changed = db.execute(sql, params).rowcount
      db.commit()
    return changed


def _calls(
    event: Event, session: SessionKey, calls: tuple[tuple[str, Any], ...]
) -> list[Call]:
  responses = [
      part.function_response
      for part in event.content.parts
      if part.function_response
  ]
  widget_ids = {w.id for w in event.actions.render_ui_widgets}
  assert [r.name for r in responses] == [name for name, _ in calls]
  assert {r.id for r in responses} == widget_ids
  return [
      Call(name, dict(args), session, event.id, response.id)
      for (name, args), response in zip(calls, responses)
  ]


async def _affordance(
    profile: McpAppsHostProfile,
    svc: Any,
    call: Call,
    tools: list[Any],
    **kwargs: Any,
) -> ColdAffordance:
  return await cold_affordance(
      profile=profile,
      session_service=svc,
      principal=PRINCIPAL,
      session=call.session,
      event_id=call.event_id,
      function_call_id=call.call_id,
      current_tools=tools,
      **kwargs,
  )


async def _record(
    profile: McpAppsHostProfile, svc: Any, call: Call
) -> RefreshInvocationRecord:
  resolved = await OracleResolver(profile, svc).resolve(
      call.session, event_id=call.event_id, function_call_id=call.call_id
  )
  return resolved.refresh_record()


def _replace(tools: list[Any], name: str, **update: Any) -> list[Any]:
  """`tools` with the declaration `name` copied with `update`."""
  assert any(t.name == name for t in tools)
  return [t.model_copy(update=update) if t.name == name else t for t in tools]


def _assert_placeholder(
    affordance: ColdAffordance, reason: str, tool: Optional[str] = None
) -> None:
  assert affordance.offer is ColdOffer.PLACEHOLDER
  assert affordance.reason == reason
  assert affordance.tool_name == tool
  assert affordance.warning is None


def _assert_refresh(affordance: ColdAffordance, call: Call) -> None:
  assert affordance.offer is ColdOffer.REFRESH
  assert affordance.reason is None
  assert affordance.warning is None
  assert affordance.tool_name == call.tool
  assert affordance.record is not None
  assert dict(affordance.record.arguments) == call.args


def _assert_rerun(affordance: ColdAffordance, call: Call) -> None:
  assert affordance.offer is ColdOffer.RERUN
  assert affordance.reason == "not_replay_safe"
  assert affordance.tool_name == call.tool
  assert affordance.warning == RERUN_WARNING
  assert "again" in RERUN_WARNING and "repeat" in RERUN_WARNING


@pytest.fixture
def host(tmp_path: Path, mcp_apps: Any) -> Host:
  return Host(tmp_path, mcp_apps)


@pytest.fixture(autouse=True)
def _no_fault_hook() -> Any:
  yield
  append_stage.set_fault_hook(None)


async def _bootstrap(stack: BoundStack, call: Call) -> RenderDocument:
  """Bootstraps `call`'s View on `stack`, as the host would."""
  return await bootstrap_render(
      registry=stack.registry,
      profile=stack.profile,
      session_service=stack.session_service,
      principal=PRINCIPAL,
      session=call.session,
      toolset_id=TOOLSET,
      event_id=call.event_id,
      function_call_id=call.call_id,
  )


# --- Restart: never resurrected, explicit refresh or re-run only -------------


@pytest.mark.conformance("P2-COLD-01")
async def test_old_view_never_resurrected_after_restart(
    host: Host,
) -> None:
  rendered: list[Any] = []

  async def render(stack: BoundStack, calls: list[Call]) -> None:
    (call,) = calls
    rendered.append(await _bootstrap(stack, call))
    assert rendered[0].grant.active

  (call,) = await host.first_life((names.MUTABLE_VIEW, LABEL), inside=render)
  (document,) = rendered
  assert "Conformance View" in document.html
  # The old View's generation died with the process: its hold is unusable.
  with pytest.raises(ConnectionAffinityError):
    view_hold(document.grant).check()
  with pytest.raises(ConnectionAffinityError):
    await view_hold(document.grant).read_resource(names.VIEW_URI)

  async with host.life() as (profile, svc):
    async with bound_stack(
        host.connection(), session_service=svc, profile=profile
    ) as stack:
      for _ in range(2):
        with pytest.raises(BootstrapError) as raised:
          await _bootstrap(stack, call)
        assert raised.value.cold
        assert raised.value.step is BootstrapStep.RESERVE
        assert raised.value.reason == "no_reservation"
      tools = [
          t.raw_mcp_tool
          for t in await stack.registry.toolset(TOOLSET).get_tools(None)
      ]
      affordance = await _affordance(profile, svc, call, tools)
  # The only way back is an explicit refresh (a new call, new View).
  _assert_refresh(affordance, call)


@pytest.mark.conformance("P2-ROR-01", "P2-COLD-18")
async def test_restart_before_bootstrap_never_rebinds(
    host: Host,
) -> None:
  safe, unsafe = await host.first_life(
      (names.MUTABLE_VIEW, LABEL), (names.OPEN_VIEW, {})
  )

  async with host.life() as (profile, svc):
    async with bound_stack(
        host.connection(), session_service=svc, profile=profile
    ) as stack:
      for call in (safe, unsafe):
        with pytest.raises(BootstrapError) as raised:
          await _bootstrap(stack, call)
        assert raised.value.cold
        assert raised.value.step is BootstrapStep.RESERVE
        assert (
            stack.registry.render_reservations.peek(
                TOOLSET, call.session, call.call_id
            )
            is None
        )
      tools = [
          t.raw_mcp_tool
          for t in await stack.registry.toolset(TOOLSET).get_tools(None)
      ]
      safe_cold = await _affordance(profile, svc, safe, tools)
      unsafe_cold = await _affordance(profile, svc, unsafe, tools)
  _assert_refresh(safe_cold, safe)
  _assert_rerun(unsafe_cold, unsafe)


@pytest.mark.conformance("P2-COLD-17")
async def test_restart_after_result_affordance_per_classification(
    host: Host,
) -> None:
  safe, unsafe = await host.first_life(
      (names.MUTABLE_VIEW, LABEL), (names.OPEN_VIEW, {})
  )
  tools = await host.fresh_listing()

  async with host.life() as (profile, svc):
    for call in (safe, unsafe):
      # The result itself survived the restart, sealed.
      resolved = await OracleResolver(profile, svc).resolve(
          call.session, event_id=call.event_id, function_call_id=call.call_id
      )
      assert resolved.full_result()["isError"] is False
    safe_cold = await _affordance(profile, svc, safe, tools)
    unsafe_cold = await _affordance(profile, svc, unsafe, tools)
  _assert_refresh(safe_cold, safe)
  _assert_rerun(unsafe_cold, unsafe)


@pytest.mark.conformance("P2-COLD-09")
async def test_replay_safe_call_with_valid_arguments_refreshes(
    host: Host,
) -> None:
  authority = Authority()
  (call,) = await host.first_life(
      (names.MUTABLE_VIEW, LABEL), authority=authority
  )
  tools = await host.fresh_listing()

  authority = Authority()
  async with host.life(authority) as (profile, svc):
    affordance = await _affordance(profile, svc, call, tools)
  _assert_refresh(affordance, call)
  # The fresh classification was asked about exactly the recorded tool.
  assert [t.tool_name for t in authority.calls] == [names.MUTABLE_VIEW]
  assert authority.calls[0].toolset_id == TOOLSET


@pytest.mark.conformance("P2-COLD-10")
async def test_not_replay_safe_call_offers_named_rerun(
    host: Host,
) -> None:
  (call,) = await host.first_life((names.OPEN_VIEW, {}))
  tools = await host.fresh_listing()

  async with host.life() as (profile, svc):
    affordance = await _affordance(profile, svc, call, tools)
    # The rerun goes through the live confirmation policy; requiring one
    # does not turn it into a one-click refresh.
    confirmed = await _affordance(
        profile, svc, call, tools, confirmation_required=True
    )
  _assert_rerun(affordance, call)
  _assert_rerun(confirmed, call)
  assert affordance.record is not None
  assert affordance.record.replay_class == ReplayClass.NOT_REPLAY_SAFE.value


# --- Cold activation re-checks the world -------------------------------------


@pytest.mark.conformance("P2-COLD-02")
async def test_denying_authorizer_gives_placeholder(
    host: Host,
) -> None:
  (call,) = await host.first_life((names.MUTABLE_VIEW, LABEL))
  tools = await host.fresh_listing()

  for authorizer in (DenyingAuthorizer(), DenyingAuthorizer(fail=True)):
    async with host.life(session_authorizer=authorizer) as (profile, svc):
      affordance = await _affordance(profile, svc, call, tools)
    _assert_placeholder(affordance, "unauthorized")
    assert affordance.record is None
    assert authorizer.asked == [(PRINCIPAL, call.session, SessionPurpose.VIEW)]
  async with host.life() as (profile, svc):
    _assert_refresh(await _affordance(profile, svc, call, tools), call)


@pytest.mark.conformance("P2-COLD-03")
async def test_missing_tool_gives_placeholder(host: Host) -> None:
  host.options = {"removable_tools": True}
  (call,) = await host.first_life((names.MUTABLE_VIEW, LABEL))
  removed = await host.fresh_listing(
      (names.REMOVE_LISTED_TOOL, {"name": names.MUTABLE_VIEW})
  )
  renamed = await host.fresh_listing(
      (names.MUTATE_CATALOG, {"change": "rename"})
  )
  assert names.MUTABLE_VIEW not in {t.name for t in removed + renamed}
  assert names.RENAMED_VIEW in {t.name for t in renamed}

  async with host.life() as (profile, svc):
    gone = await _affordance(profile, svc, call, removed)
    moved = await _affordance(profile, svc, call, renamed)
    empty = await _affordance(profile, svc, call, [])
  for affordance in (gone, moved, empty):
    _assert_placeholder(affordance, "tool_missing", names.MUTABLE_VIEW)


@pytest.mark.conformance("P2-COLD-04")
async def test_no_longer_eligible_gives_placeholder(
    host: Host,
) -> None:
  (call,) = await host.first_life((names.MUTABLE_VIEW, LABEL))
  tools = await host.fresh_listing()
  (current,) = [t for t in tools if t.name == names.MUTABLE_VIEW]
  shapes = [
      {**current.meta["ui"], **override}
      for override in names.MALFORMED_TOOLS.values()
  ] + [names.VIEW_URI]

  async with host.life() as (profile, svc):
    for ui in shapes:
      ineligible = _replace(tools, names.MUTABLE_VIEW, meta={"ui": ui})
      affordance = await _affordance(profile, svc, call, ineligible)
      _assert_placeholder(affordance, "not_eligible", names.MUTABLE_VIEW)
    control = await _affordance(profile, svc, call, tools)
  _assert_refresh(control, call)


@pytest.mark.conformance("P1-URI-13", "P2-COLD-05")
async def test_changed_declaration_gives_placeholder(
    host: Host,
) -> None:
  (call,) = await host.first_life((names.MUTABLE_VIEW, LABEL))
  changes = ("schema", "output_schema", "uri", "visibility")
  listings = [
      await host.fresh_listing((names.MUTATE_CATALOG, {"change": change}))
      for change in changes
  ]
  (current,) = [
      t for t in await host.fresh_listing() if t.name == names.MUTABLE_VIEW
  ]
  described = _replace(
      listings[0], names.MUTABLE_VIEW, input_schema=current.input_schema
  )

  async with host.life() as (profile, svc):
    changed = [
        await _affordance(profile, svc, call, tools) for tools in listings
    ]
    # Control: the `schema` listing with the original input schema put
    # back matches the record again (only the description differs).
    control = await _affordance(profile, svc, call, described)
  for change, affordance in zip(changes, changed):
    # A moved View resource is caught by the canonical URI match with the
    # descriptor (P1-URI-13), before the declaration fingerprint.
    reason = "resource_changed" if change == "uri" else "schema_changed"
    assert affordance.reason == reason, change
    _assert_placeholder(affordance, reason, names.MUTABLE_VIEW)
  _assert_refresh(control, call)


@pytest.mark.conformance("P2-COLD-06")
async def test_stored_arguments_invalid_gives_placeholder(
    host: Host,
) -> None:
  # The server refused the argument (an error result), yet the UI call
  # rendered and sealed it; its record holds exactly what was sent.
  bad = {"label": 5}
  invalid, valid = await host.first_life(
      (names.MUTABLE_VIEW, bad), (names.MUTABLE_VIEW, LABEL)
  )
  tools = await host.fresh_listing()

  async with host.life() as (profile, svc):
    assert dict((await _record(profile, svc, invalid)).arguments) == bad
    affordance = await _affordance(profile, svc, invalid, tools)
    control = await _affordance(profile, svc, valid, tools)
  _assert_placeholder(affordance, "arguments_invalid", names.MUTABLE_VIEW)
  _assert_refresh(control, valid)


@pytest.mark.conformance("P2-COLD-07")
async def test_changed_classification_gives_placeholder(
    host: Host,
) -> None:
  (call,) = await host.first_life((names.MUTABLE_VIEW, LABEL))
  tools = await host.fresh_listing()
  changed = {
      # The authority's source and revision take part in the binding
      # revision, so the descriptor itself stops verifying.
      "revision": (Authority(revision="r2"), "binding_mismatch"),
      "source": (Authority(source="another-authority"), "binding_mismatch"),
      # Same source and revision, yet another class.
      "class": (Authority(safe=frozenset()), "classification_changed"),
  }

  for name, (authority, reason) in changed.items():
    async with host.life(authority) as (profile, svc):
      affordance = await _affordance(profile, svc, call, tools)
    assert affordance.offer is ColdOffer.PLACEHOLDER, name
    assert affordance.reason == reason, name
    assert affordance.warning is None


@pytest.mark.conformance("P2-COLD-08")
async def test_unsatisfied_confirmation_gives_placeholder(
    host: Host,
) -> None:
  (call,) = await host.first_life((names.MUTABLE_VIEW, LABEL))
  tools = await host.fresh_listing()

  async with host.life() as (profile, svc):
    required = await _affordance(
        profile, svc, call, tools, confirmation_required=True
    )
    satisfied = await _affordance(
        profile,
        svc,
        call,
        tools,
        confirmation_required=True,
        confirmation_satisfied=True,
    )
  _assert_placeholder(required, "confirmation_required", names.MUTABLE_VIEW)
  _assert_refresh(satisfied, call)


# --- What is persisted -------------------------------------------------------


@pytest.mark.conformance("P2-COLD-16")
async def test_html_is_never_persisted(host: Host) -> None:
  rendered: list[Any] = []

  async def render(stack: BoundStack, calls: list[Call]) -> None:
    for call in calls:
      rendered.append(await _bootstrap(stack, call))

  calls = await host.first_life(
      (names.OPEN_VIEW, {}), (names.MUTABLE_VIEW, LABEL), inside=render
  )
  async with host.helpers.connect(
      host.helpers.stdio_parameters(host.options)
  ) as client:
    read = await client.read_resource(names.VIEW_URI)
  html = read.contents[0].text
  assert [doc.html for doc in rendered] == [html, html]

  async with host.life() as (profile, svc):
    sealed = [
        await OracleResolver(profile, svc).resolve(
            c.session, event_id=c.event_id, function_call_id=c.call_id
        )
        for c in calls
    ]
  stored = {
      path.name: path.read_bytes()
      for path in host.root.iterdir()
      if path.name.startswith(("sealed.db", "sessions.db"))
  }
  assert {"sealed.db", "sessions.db"} <= set(stored)
  title = "<title>Conformance View</title>"
  for name, data in stored.items():
    for needle in (html, title, "<!doctype html>"):
      assert needle.encode() not in data, name
  # Positive control: the search does see what was persisted.
  nonce = sealed[0].full_result()["structuredContent"]["nonce"]
  assert nonce.encode() in stored["sealed.db"]
  assert calls[0].call_id.encode() in stored["sessions.db"]
  for resolved in sealed:
    assert html.encode() not in resolved.envelope.sealed_result
    assert html.encode() not in (resolved.envelope.refresh_record or b"")


# --- The refresh-invocation record -------------------------------------------


@pytest.mark.conformance("P2-RIR-02")
async def test_record_binds_every_field(host: Host) -> None:
  authority = Authority()
  seen: dict[str, Any] = {}

  async def observe(stack: BoundStack, calls: list[Call]) -> None:
    (call,) = calls
    tools = await stack.registry.toolset(TOOLSET).get_tools(None)
    (tool,) = [t for t in tools if t.name == names.MUTABLE_VIEW]
    events = await stack.stored_events(call.session.session_id)
    (event,) = [e for e in events if e.id == call.event_id]
    (widget,) = event.actions.render_ui_widgets
    reservation = stack.registry.render_reservations.peek(
        TOOLSET, call.session, call.call_id
    )
    seen.update(
        generation=reservation.generation_id,
        server_id=stack.registry.server_id(TOOLSET),
        handle=tool.bound_tool_handle,
        revision=binding_revision(stack.profile),
        descriptor=read_mcp_widget(widget),
        invocation_id=event.invocation_id,
        record=await _record(stack.profile, stack.session_service, call),
    )

  (call,) = await host.first_life(
      (names.MUTABLE_VIEW, LABEL), authority=authority, inside=observe
  )
  tools = await host.fresh_listing()
  (listed,) = [t for t in tools if t.name == names.MUTABLE_VIEW]

  async with host.life(Authority()) as (profile, svc):
    record = await _record(profile, svc, call)
  descriptor = seen["descriptor"]
  handle = seen["handle"]
  assert record == seen["record"]  # Survives the restart unchanged.
  assert record.server_id == seen["server_id"] == descriptor.server_id
  assert record.toolset_id == TOOLSET == descriptor.toolset_id
  assert record.tool_name == names.MUTABLE_VIEW
  assert dict(record.arguments) == LABEL
  assert (
      record.arguments_digest()
      == hashlib.sha256(
          canonicalize(LABEL, purpose=Purpose.REPLAY_IDENTITY)
      ).hexdigest()
  )
  assert record.declaration_fingerprint == handle.fingerprint
  assert (
      record.declaration_fingerprint
      == hashlib.sha256(canonicalize(comparable_projection(listed))).hexdigest()
  )
  # The generation the declaration was listed on, which the call ran on.
  assert record.catalog_generation == seen["generation"]
  assert record.binding_revision == seen["revision"]
  assert record.binding_revision == descriptor.binding_revision
  assert record.classification_source == SOURCE
  assert record.classification_revision == "r1"
  assert record.replay_class == ReplayClass.REPLAY_SAFE.value
  assert record.immediate_caller == "model"
  assert record.correlation == descriptor.correlation.model_dump(
      mode="json", by_alias=True
  )
  assert record.correlation["functionCallId"] == call.call_id
  assert record.correlation["invocationId"] == seen["invocation_id"]
  assert set(json.loads(record.to_bytes(max_bytes=1 << 20, max_depth=64))) == {
      *RefreshInvocationRecord.model_fields
  } | {"version"}


@pytest.mark.conformance("P2-RIR-09")
async def test_crash_after_append_then_cold_affordance_works(
    host: Host,
) -> None:
  points: list[str] = []

  async def crash(point: str) -> None:
    points.append(point)
    if point == SealFault.AFTER_APPEND:
      raise _Crash(point)

  append_stage.set_fault_hook(crash)
  holder: list[tuple[SessionKey, str]] = []
  async with host.life() as (profile, svc):
    async with bound_stack(
        host.connection(), session_service=svc, profile=profile
    ) as stack:
      sid = await stack.new_session()
      holder.append((stack.key(sid), sid))
      with pytest.raises(_Crash):
        await stack.turn(sid, (names.MUTABLE_VIEW, LABEL))
  append_stage.set_fault_hook(None)
  assert SealFault.AFTER_APPEND in points
  key, sid = holder[0]
  tools = await host.fresh_listing()

  async with host.life() as (profile, svc):
    session = await svc.get_session(
        app_name=key.app_name, user_id=key.user_id, session_id=sid
    )
    event = widget_event(list(session.events))
    (widget,) = event.actions.render_ui_widgets
    call = Call(names.MUTABLE_VIEW, LABEL, key, event.id, widget.id)
    affordance = await _affordance(profile, svc, call, tools)
  _assert_refresh(affordance, call)


@pytest.mark.conformance("P2-RIR-13")
async def test_swapped_record_gives_placeholder(host: Host) -> None:
  victim, donor = await host.first_life(
      (names.MUTABLE_VIEW, {"label": "victim"}),
      (names.MUTABLE_VIEW, {"label": "donor"}),
  )
  tools = await host.fresh_listing()
  changed = host.execute(
      f"UPDATE {TABLE} SET"
      " (sealed_result, refresh_record, digest) = (SELECT sealed_result,"
      f" refresh_record, digest FROM {TABLE} WHERE function_call_id = ?)"
      " WHERE function_call_id = ?",
      donor.call_id,
      victim.call_id,
  )
  assert changed == 1

  async with host.life() as (profile, svc):
    # The store's digest covers the envelope only: the swap resolves, and
    # the record then names the donor's call, not the victim's.
    record = await _record(profile, svc, victim)
    assert record.correlation["functionCallId"] == donor.call_id
    swapped = await _affordance(profile, svc, victim, tools)
    untouched = await _affordance(profile, svc, donor, tools)
  _assert_placeholder(swapped, "refresh_record_mismatch")
  assert swapped.record is None
  _assert_refresh(untouched, donor)


@pytest.mark.conformance("P2-RIR-14")
async def test_classification_source_lost_gives_placeholder(
    host: Host,
) -> None:
  (call,) = await host.first_life((names.MUTABLE_VIEW, LABEL))
  second = Host(host.root / "second", host.helpers)
  second.root.mkdir()
  (broken_then,) = await second.first_life(
      (names.MUTABLE_VIEW, LABEL), authority=Authority(fail=True)
  )
  tools = await host.fresh_listing()

  # The authority cannot answer now (same source and revision).
  async with host.life(Authority(fail=True)) as (profile, svc):
    unavailable = await _affordance(profile, svc, call, tools)
  # The revision is gone: no authority at all.
  async with host.life(Authority(revision="")) as (profile, svc):
    no_revision = await _affordance(profile, svc, call, tools)
  # It could not answer when the call ran: the record says not replay-safe,
  # so a healthy authority now disagrees and nothing is offered.
  async with second.life() as (profile, svc):
    record = await _record(profile, svc, broken_then)
    disagreed = await _affordance(profile, svc, broken_then, tools)
  _assert_placeholder(
      unavailable, "classification_unavailable", names.MUTABLE_VIEW
  )
  assert no_revision.offer is ColdOffer.PLACEHOLDER
  assert no_revision.reason == "binding_mismatch"
  assert record.replay_class == ReplayClass.NOT_REPLAY_SAFE.value
  _assert_placeholder(disagreed, "classification_changed", names.MUTABLE_VIEW)


@pytest.mark.conformance("P2-RIR-15")
async def test_corrupt_or_lost_record_gives_placeholder_only(
    host: Host,
) -> None:
  flipped, deleted, unparsable, missing, intact = await host.first_life(
      *[(names.MUTABLE_VIEW, {"label": f"l{i}"}) for i in range(5)]
  )
  tools = await host.fresh_listing()
  with contextlib.closing(sqlite3.connect(host.store_path)) as db:
    (sealed,) = db.execute(
        f"SELECT sealed_result FROM {TABLE} WHERE function_call_id = ?",
        (unparsable.call_id,),
    ).fetchone()
  # A byte of the record changes under its digest.
  host.execute(
      f"UPDATE {TABLE} SET refresh_record = CAST(REPLACE(CAST(refresh_record"
      " AS TEXT), 'l0', 'lX') AS BLOB) WHERE function_call_id = ?",
      flipped.call_id,
  )
  # The record is lost.
  host.execute(
      f"DELETE FROM {TABLE} WHERE function_call_id = ?", deleted.call_id
  )
  # A record that passes the store's digest but not the record format.
  garbage = b'{"version":1}'
  host.execute(
      f"UPDATE {TABLE} SET refresh_record = ?, digest = ? WHERE"
      " function_call_id = ?",
      garbage,
      _digest(SealedEnvelope(bytes(sealed), garbage)),
      unparsable.call_id,
  )
  with contextlib.closing(sqlite3.connect(host.store_path)) as db:
    (sealed,) = db.execute(
        f"SELECT sealed_result FROM {TABLE} WHERE function_call_id = ?",
        (missing.call_id,),
    ).fetchone()
  host.execute(
      f"UPDATE {TABLE} SET refresh_record = NULL, digest = ? WHERE"
      " function_call_id = ?",
      _digest(SealedEnvelope(bytes(sealed), None)),
      missing.call_id,
  )

  async with host.life() as (profile, svc):
    results = {
        call.call_id: await _affordance(profile, svc, call, tools)
        for call in (flipped, deleted, unparsable, missing, intact)
    }
  _assert_placeholder(results[flipped.call_id], "corrupt")
  _assert_placeholder(results[deleted.call_id], "record_not_found")
  _assert_placeholder(results[unparsable.call_id], "refresh_record_unavailable")
  _assert_placeholder(results[missing.call_id], "refresh_record_unavailable")
  for call in (flipped, deleted, unparsable, missing):
    assert results[call.call_id].record is None
  _assert_refresh(results[intact.call_id], intact)


def test_authority_satisfies_the_contract() -> None:
  assert isinstance(Authority(), ReplayClassificationAuthority)
