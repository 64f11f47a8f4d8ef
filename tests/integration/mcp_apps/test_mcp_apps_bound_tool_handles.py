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

"""Connection-bound tool handles end to end, on the real conformance server.

Cases P2-BTH-01 .. P2-BTH-14 (RFC §6, "Connection-bound tool handles
(P0.2)"), over stdio and stateful (2025-11-25) and stateless (2026-07-28)
streamable HTTP. Every model catalog comes from a registry-bound toolset
(`registry.toolset(id).get_tools(readonly_context)`), either with a
`ReadonlyContext` over a real `InvocationContext` or inside a real `Runner`
turn whose model is scripted: it calls one tool and then answers with text,
so the function response it is shown is observable.

The server changes between the listing and the call deterministically: the
agent's `before_model_callback` runs after the turn's catalog was listed and
before the model emits its call, and performs the change there (an admin
tool called through the proxy on the caller's own app-safe generation, so on
stdio it reaches the very process the call would run on; a header change; a
generation eviction; a process kill). What reached the server is read from
the fixture's request log (`request_log_file`), never from the connection
under test; the typed refusal is read from the warning `McpTool` logs with
the exception attached. Nothing sleeps to order anything.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
import dataclasses
import json
import logging
import os
from pathlib import Path
import re
import signal
from typing import Any
from typing import Optional

from binding_support import conformance_connection
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.mcp_apps.affinity import security_domain
from google.adk.mcp_apps.affinity.errors import GenerationInvalidatedError
from google.adk.mcp_apps.affinity.errors import InvalidationReason
from google.adk.mcp_apps.affinity.errors import StaleToolHandleError
from google.adk.mcp_apps.affinity.generations import ConnectionEra
from google.adk.mcp_apps.affinity.generations import ConnectionGenerationState
from google.adk.mcp_apps.affinity.routing import AppSafeMcpTool
from google.adk.mcp_apps.affinity.routing import AppSafeToolRouting
from google.adk.mcp_apps.affinity.tool_handles import BoundToolHandle
from google.adk.mcp_apps.affinity.tool_handles import comparable_projection
from google.adk.mcp_apps.affinity.tool_handles import DeclarationMismatchError
from google.adk.mcp_apps.affinity.tool_handles import Divergence
from google.adk.mcp_apps.affinity.tool_handles import ExecutionClass
from google.adk.mcp_apps.affinity.tool_handles import ToolRemovedError
from google.adk.mcp_apps.affinity.tool_handles import TwoClassCatalog
from google.adk.mcp_apps.affinity.tool_handles import UI_ON_CALLBACKED_ABSENT_APP_SAFE
from google.adk.mcp_apps.binding.registry import McpAppBindingRegistry
from google.adk.mcp_apps.binding.spec import McpToolsetSpec
from google.adk.mcp_apps.catalog.listing import ToolListingBounds
from google.adk.mcp_apps.catalog.listing import ToolListingError
from google.adk.mcp_apps.catalog.listing import ToolListingReason
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.profile import HostLimits
from google.adk.mcp_apps.profile import local_dev_profile
from google.adk.models.llm_request import LlmRequest
from google.adk.runners import InMemoryRunner
from google.adk.tools.mcp_tool import StreamableHTTPConnectionParams
from google.adk.tools.mcp_tool.mcp_tool import McpTool
from google.genai import types as genai_types
from mcp_apps_conformance_server import names
import pytest
from scripted_llm import ScriptedLlm

pytestmark = pytest.mark.integration

TIMEOUT = 30.0
MODERN_FLAG = "ADK_ENABLE_MCP_MODERN_PROTOCOL"
APP = "bth"
USER = "u"
TOOLSET = "conf"
SECRET = "bth-secret-token-0c4f"
"""A credential value: it must never appear in a handle, key or log."""
TRANSPORTS = ("stdio", "legacy_http", "modern_http")
MCP_TOOL_LOGGER = "google_adk.google.adk.tools.mcp_tool.mcp_tool"
HANDLES_LOGGER = "google_adk.google.adk.mcp_apps.affinity.tool_handles"
DIGEST = re.compile(r"^[^:]+:[0-9a-f]{64}$")


# --- Servers -----------------------------------------------------------------


@dataclasses.dataclass
class Served:
  """A conformance server (or stdio recipe) and its request log.

  Attributes:
    transport: One of `TRANSPORTS`.
    connection_params: The ADK connection parameters reaching it.
    log: The request log every process of it appends to.
  """

  transport: str
  connection_params: Any
  log: Path

  def entries(self) -> list[dict[str, Any]]:
    """Every message the server (all its processes) received, in order."""
    if not self.log.exists():
      return []
    return [json.loads(line) for line in self.log.read_text().splitlines()]

  def calls(self, name: str, since: int = 0) -> int:
    """How many `tools/call` of `name` reached the server."""
    return sum(
        1
        for entry in self.entries()[since:]
        if entry == {"method": "tools/call", "name": name}
    )

  def mark(self) -> int:
    """A position in the log, for `since`."""
    return len(self.entries())


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest, monkeypatch: Any) -> str:
  """The transport under test; the modern one needs ADK's modern client."""
  value: str = request.param
  if value == "modern_http":
    monkeypatch.setenv(MODERN_FLAG, "1")
  else:
    monkeypatch.delenv(MODERN_FLAG, raising=False)
  return value


@pytest.fixture
def serve(
    transport: str, start_server: Any, mcp_apps: Any, tmp_path: Path
) -> Callable[..., Served]:
  """Factory: a fresh conformance server on `transport`, with a request log."""

  def start(**options: Any) -> Served:
    log = tmp_path / f"requests-{len(list(tmp_path.iterdir()))}.jsonl"
    options = {"request_log_file": str(log), **options}
    params = conformance_connection(transport, options, mcp_apps, start_server)
    return Served(transport, params, log)

  return start


def _registry(
    served: Served, profile: Any = None, **spec: Any
) -> McpAppBindingRegistry:
  return McpAppBindingRegistry(
      {
          TOOLSET: McpToolsetSpec(
              connection_params=served.connection_params, **spec
          )
      },
      profile if profile is not None else local_dev_profile(),
      allow_dev_providers=True,
  )


# --- Observing the catalog ---------------------------------------------------


@pytest.fixture
def catalogs(monkeypatch: Any) -> list[TwoClassCatalog]:
  """Every two-class catalog discovery produced, in order (a spy)."""
  produced: list[TwoClassCatalog] = []
  discover = AppSafeToolRouting.discover

  async def spy(self: Any, *args: Any, **kwargs: Any) -> TwoClassCatalog:
    catalog = await discover(self, *args, **kwargs)
    produced.append(catalog)
    return catalog

  monkeypatch.setattr(AppSafeToolRouting, "discover", spy)
  return produced


def _handle(tool: Any) -> BoundToolHandle:
  assert isinstance(tool, AppSafeMcpTool), type(tool).__mro__
  return tool.bound_tool_handle


def _refusal(caplog: Any, tool: str) -> BaseException:
  """The exception a model call of `tool` failed with (McpTool logs it)."""
  refusals = [
      record.exc_info[1]
      for record in caplog.records
      if record.name == MCP_TOOL_LOGGER
      and record.exc_info
      and f"{tool!r}" in record.getMessage()
  ]
  assert len(refusals) == 1, [r.getMessage() for r in caplog.records]
  return refusals[0]


# --- Runner turns ------------------------------------------------------------

Between = Callable[[ReadonlyContext, LlmRequest], Awaitable[None]]


@dataclasses.dataclass
class Turn:
  """One Runner turn in which the model called one tool.

  Attributes:
    catalog: The tools the model was given (`LlmRequest.tools_dict`).
    declaration: The function declaration of the called tool, as sent.
    function_call_id: The call's id.
    response: The function response ADK produced.
    shown: The function response the model was shown in its next request.
  """

  catalog: dict[str, Any]
  declaration: genai_types.FunctionDeclaration
  function_call_id: str
  response: dict[str, Any]
  shown: dict[str, Any]

  @property
  def handle(self) -> BoundToolHandle:
    """The bound handle of the tool the model called."""
    return _handle(self.catalog[self.declaration.name])


class Conversation:
  """A Runner over the registry toolset, with one Session, turn by turn."""

  def __init__(self, registry: McpAppBindingRegistry):
    self.registry = registry
    self.llm = ScriptedLlm(steps=[[(names.OPEN_VIEW, {})]])
    self._between: Optional[Between] = None
    self.agent = LlmAgent(
        name="probe",
        model=self.llm,
        tools=[registry.toolset(TOOLSET)],
        before_model_callback=self._before_model,
    )
    self.runner = InMemoryRunner(agent=self.agent, app_name=APP)
    self.session: Any = None

  async def __aenter__(self) -> Conversation:
    self.session = await self.runner.session_service.create_session(
        app_name=APP, user_id=USER
    )
    return self

  async def __aexit__(self, *exc_info: object) -> None:
    await self.runner.close()

  @property
  def session_key(self) -> SessionKey:
    return SessionKey(APP, USER, self.session.id)

  def context(self) -> ReadonlyContext:
    """A readonly context over a real invocation of this Session."""
    return ReadonlyContext(
        InvocationContext(
            session_service=self.runner.session_service,
            invocation_id="inv-bth",
            agent=self.agent,
            session=self.session,
        )
    )

  async def _before_model(
      self, callback_context: Any, llm_request: LlmRequest
  ) -> None:
    between, self._between = self._between, None
    if between is not None:
      # After this turn's catalog was listed, before the model's call.
      await between(callback_context, llm_request)

  async def turn(
      self,
      tool: str,
      args: Optional[dict[str, Any]] = None,
      between: Optional[Between] = None,
  ) -> Turn:
    """One turn whose model calls `tool`; `between` runs before the call."""
    self.llm.steps = [[(tool, args or {})]]
    self._between = between
    first = len(self.llm.requests)
    responses = []
    async for event in self.runner.run_async(
        user_id=USER,
        session_id=self.session.id,
        new_message=genai_types.Content(
            role="user", parts=[genai_types.Part(text="go")]
        ),
    ):
      responses.extend(event.get_function_responses())
    assert len(responses) == 1, responses
    requests = self.llm.requests[first:]
    assert len(requests) == 2, requests
    declarations = [
        declaration
        for config_tool in requests[0].config.tools or []
        for declaration in config_tool.function_declarations or []
        if declaration.name == tool
    ]
    assert len(declarations) == 1, declarations
    shown = [
        part.function_response.response
        for part in requests[1].contents[-1].parts or []
        if part.function_response
    ]
    return Turn(
        catalog=dict(requests[0].tools_dict),
        declaration=declarations[0],
        function_call_id=responses[0].id,
        response=responses[0].response,
        shown=shown[0],
    )

  def reserved_generation(self, turn: Turn) -> str:
    """The generation reserved for the View of an accepted UI result."""
    hold = self.registry.render_reservations.take(
        TOOLSET, self.session_key, turn.function_call_id
    )
    assert hold is not None, "no render reservation"
    try:
      return hold.generation_id
    finally:
      hold.release()


def _text(response: dict[str, Any]) -> str:
  return json.dumps(response)


def _call_on_generation(
    registry: McpAppBindingRegistry, tool: str, args: dict[str, Any]
) -> Between:
  """A `between` that calls an admin tool on the caller's app-safe class.

  The proxy's host-internal call runs on the caller's app-safe generation,
  which is the one the model's catalog was listed on (checked): on stdio
  that is the very process the model's call would run on.
  """

  async def between(context: ReadonlyContext, request: LlmRequest) -> None:
    proxy = registry.lookup(TOOLSET)
    result = await proxy.call_tool(tool, args, context)
    assert not result.is_error, result
    listed = {
        _handle(t).catalog_generation
        for t in request.tools_dict.values()
        if isinstance(t, AppSafeMcpTool)
    }
    live = [g.generation_id for g in registry.connections.live()]
    assert live == list(listed) and len(live) == 1, (live, listed)

  return between


def _assert_failed_closed(
    talk: Conversation, turn: Turn, served: Served, tool: str, before: int
) -> None:
  """Asserts that a turn's call of `tool` failed closed.

  The model was shown an error, no `tools/call` of `tool` reached the server
  after `before`, and no generation was reserved for a View.
  """
  assert set(turn.response) == {"error"}, turn.response
  assert turn.shown == turn.response
  assert served.calls(tool, since=before) == 0, served.entries()[before:]
  reservation = talk.registry.render_reservations.peek(
      TOOLSET, talk.session_key, turn.function_call_id
  )
  assert reservation is None


async def _assert_stale_then_relisted(
    talk: Conversation,
    served: Served,
    caplog: Any,
    lost: Turn,
    before: int,
    reason: InvalidationReason,
) -> None:
  """Asserts a lost listing generation's `open_view` and the next turn's.

  The call listed on a generation retired for `reason` failed closed with
  `StaleToolHandleError`; the next turn listed on a new generation, and its
  call opened a View reserved on that generation.
  """
  _assert_failed_closed(talk, lost, served, names.OPEN_VIEW, before)
  error = _refusal(caplog, names.OPEN_VIEW)
  assert type(error) is StaleToolHandleError
  assert "another connection generation" in error.detail
  old = lost.handle.catalog_generation
  with pytest.raises(GenerationInvalidatedError) as info:
    talk.registry.connections.get(old)
  assert info.value.reason is reason

  fresh = await talk.turn(names.OPEN_VIEW)
  assert "View opened with nonce" in _text(fresh.response)
  assert fresh.handle.catalog_generation != old
  assert talk.reserved_generation(fresh) == fresh.handle.catalog_generation


# --- P1-DISC-03 under a bound profile: one limits revision -------------------

PAGED = {"page_size": 5, "generated_tools": 20}
"""About 40 tools in pages of 5 (the conformance server's pagination)."""


def _listing_error(error: BaseException) -> BaseException:
  """The typed listing error a failed `get_tools` was chained from."""
  cause: Optional[BaseException] = error
  while cause is not None and not (
      isinstance(cause, ToolListingError)
      and cause.reason is ToolListingReason.BOUND_EXCEEDED
  ):
    cause = cause.__cause__ or cause.__context__
  assert cause is not None, f"no typed listing error under {error!r}"
  return cause


@pytest.mark.conformance("P1-DISC-03", "P5-LIM-05")
async def test_profile_page_bound_bounds_every_listing(
    serve: Any,
) -> None:
  """P1-DISC-03 under a bound profile: the profile's page-count bound
  (`HostLimits.discovery`) denies the catalog of a registry-bound toolset,
  whatever bound its spec declares.

  The spec asks for 1000 pages; the profile allows 3. The model catalog
  fails with the typed page-bound error, and every listing that reached the
  server stopped after its third page: the app-safe listing (which runs
  first) is bounded by the profile, and so is the callbacked listing,
  whatever its spec asks.
  Control: under a profile with the default limits, a spec asking for 3
  pages gets the whole catalog.
  """
  served = serve(**PAGED)
  tight = local_dev_profile(
      limits=HostLimits(discovery=ToolListingBounds(max_pages=3))
  )
  generous_spec = ToolListingBounds(max_pages=1000)
  async with _registry(
      served, tight, tool_listing_bounds=generous_spec
  ) as registry:
    async with Conversation(registry) as talk:
      mark = served.mark()
      with pytest.raises((ConnectionError, ToolListingError)) as failed:
        await registry.toolset(TOOLSET).get_tools(talk.context())
      listings = [
          e for e in served.entries()[mark:] if e["method"] == "tools/list"
      ]
  cause = _listing_error(failed.value)
  assert (cause.bound, cause.limit) == ("pages", 3)
  # Each listing (upstream's `get_tools` retries once) starts afresh and
  # stops at the third page; none went on to a fourth.
  runs: list[list[Any]] = []
  for entry in listings:
    if entry["cursor"] is None:
      runs.append([])
    runs[-1].append(entry)
  assert runs and all(len(run) == 3 for run in runs), listings

  tight_spec = ToolListingBounds(max_pages=3)
  async with _registry(served, tool_listing_bounds=tight_spec) as registry:
    async with Conversation(registry) as talk:
      tools = await registry.toolset(TOOLSET).get_tools(talk.context())
  assert f"{names.GENERATED_PREFIX}0019" in {t.name for t in tools}
  assert isinstance({t.name: t for t in tools}[names.OPEN_VIEW], AppSafeMcpTool)


# --- P2-BTH-01, P2-BTH-03: the catalog and its handles -----------------------


@pytest.mark.conformance("P2-BTH-01")
async def test_ui_tools_list_app_safe_others_callbacked(
    serve: Any, catalogs: list[TwoClassCatalog]
) -> None:
  """P2-BTH-01: UI tools on the app-safe class, the rest on the callbacked.

  The model catalog a registry-bound toolset lists for a real invocation:
  every UI-associated tool is an `AppSafeMcpTool` whose handle names the
  app-safe class and a live generation of this toolset; every other tool
  is upstream's `McpTool` with a callbacked handle and no generation. Both
  classes run what they list: a non-UI call reaches the server without the
  Apps extension, a UI call lands on the listing generation.
  """
  served = serve()
  async with _registry(served) as registry, Conversation(registry) as talk:
    tools = await registry.toolset(TOOLSET).get_tools(talk.context())
    by_name = {tool.name: tool for tool in tools}
    (catalog,) = catalogs
    app_safe = {n for n, t in by_name.items() if isinstance(t, AppSafeMcpTool)}
    assert {names.OPEN_VIEW, names.ADAPTIVE_VIEW, names.MUTABLE_VIEW} <= (
        app_safe
    )
    assert names.WHOAMI not in app_safe and names.CLIENT_LOG not in app_safe
    generations = {_handle(by_name[n]).catalog_generation for n in app_safe}
    assert len(generations) == 1
    (generation_id,) = generations
    generation = registry.connections.get(generation_id)  # Live.
    assert generation.state is ConnectionGenerationState.LIVE
    assert generation.key.toolset_id == TOOLSET
    assert generation.key.binding_generation == registry.binding_generation
    assert generation.era is (
        ConnectionEra.MODERN
        if served.transport == "modern_http"
        else ConnectionEra.LEGACY
    )
    for name, tool in by_name.items():
      handle = catalog.handle(name)
      assert handle is not None, name
      if name in app_safe:
        assert tool.bound_tool_handle is not None
        assert handle.execution_class is ExecutionClass.APP_SAFE
        assert handle.callback_class is ExecutionClass.APP_SAFE
        assert handle.catalog_generation == generation_id
        assert handle.ui_associated and tool.mcp_app_resource_uri
      else:
        assert isinstance(tool, McpTool)  # Upstream's, on the callbacked.
        assert handle.execution_class is ExecutionClass.CALLBACKED
        assert handle.callback_class is ExecutionClass.CALLBACKED
        assert handle.catalog_generation is None
        assert not handle.ui_associated
    # App-only tools are classified but never shown to the model.
    followup = catalog.handle(names.APP_FOLLOWUP)
    assert followup is not None
    assert followup.execution_class is ExecutionClass.APP_SAFE
    assert names.APP_FOLLOWUP not in by_name
    assert not catalog.refused

    who = await talk.turn(names.WHOAMI)
    assert '"supportsApps": false' in _text(who.response)
    assert not isinstance(who.catalog[names.WHOAMI], AppSafeMcpTool)
    opened = await talk.turn(names.OPEN_VIEW)
    assert "View opened with nonce" in _text(opened.response)
    assert opened.handle.catalog_generation == generation_id
    assert talk.reserved_generation(opened) == generation_id
  assert served.calls(names.OPEN_VIEW) == 1


@pytest.mark.conformance("P2-BTH-03")
async def test_each_entry_is_a_bound_tool_handle(
    serve: Any, mcp_apps: Any, catalogs: list[TwoClassCatalog]
) -> None:
  """P2-BTH-03: declaration, generation, callback class, credentials, class.

  Each handle carries the exact raw declaration its class was served (an
  Apps client's listing for the app-safe class, a plain client's for the
  callbacked one), the listing generation, the callback-profile class, an
  opaque credential context (the HMAC of the effective headers, never a
  header value) and the execution class.
  """
  served = serve()
  headers = {"Authorization": f"Bearer {SECRET}"}
  registry = _registry(served, header_provider=lambda context: dict(headers))
  async with registry, Conversation(registry) as talk:
    tools = await registry.toolset(TOOLSET).get_tools(talk.context())
    (catalog,) = catalogs
    key = registry.readiness.profile.key_provider.active_key()
    expected_context = security_domain.credential_context(key, headers)
  target: Any = served.connection_params
  target = getattr(target, "server_params", None) or target.url
  async with mcp_apps.connect(target) as client:  # Apps advertised.
    raw = {tool.name: tool for tool in (await client.list_tools()).tools}
  async with mcp_apps.connect(target, apps=False) as client:
    plain_raw = {t.name: t for t in (await client.list_tools()).tools}
  ui_tool = next(t for t in tools if t.name == names.OPEN_VIEW)
  handle = _handle(ui_tool)
  assert isinstance(handle, BoundToolHandle)
  for bound in catalog.handles:
    assert bound.credential_context == expected_context
    assert DIGEST.match(bound.credential_context)
    assert SECRET not in repr(bound)
    if bound.execution_class is ExecutionClass.APP_SAFE:
      # The raw app-safe declaration, exactly as an Apps client lists it.
      assert bound.declaration.model_dump(by_alias=True, mode="json") == raw[
          bound.name
      ].model_dump(by_alias=True, mode="json"), bound.name
  # The model-facing tool is built from exactly the handle's declaration.
  assert handle.declaration == ui_tool.raw_mcp_tool
  assert handle.catalog_generation is not None
  (generation,) = registry.connections.generations()
  assert generation.generation_id == handle.catalog_generation
  assert generation.key.credential_context == expected_context
  assert SECRET not in repr(generation.key)
  assert handle.callback_class is ExecutionClass.APP_SAFE
  assert handle.execution_class is ExecutionClass.APP_SAFE
  assert handle.ui_associated is True
  assert handle.projection == comparable_projection(raw[names.OPEN_VIEW])
  plain = catalog.handle(names.WHOAMI)
  assert plain is not None
  assert plain.callback_class is ExecutionClass.CALLBACKED
  assert plain.execution_class is ExecutionClass.CALLBACKED
  assert plain.catalog_generation is None and plain.ui_associated is False
  assert plain.declaration.model_dump(by_alias=True, mode="json") == plain_raw[
      names.WHOAMI
  ].model_dump(by_alias=True, mode="json")


# --- P2-BTH-02, -09, -10: capability-adapted metadata ------------------------


@pytest.mark.conformance("P2-BTH-02", "P2-BTH-09", "P2-BTH-10")
async def test_capability_adapted_tool_uses_app_safe_handle(
    serve: Any, caplog: Any, catalogs: list[TwoClassCatalog]
) -> None:
  """P2-BTH-02, P2-BTH-09, P2-BTH-10: the app-safe declaration wins.

  The server adapts its listing to the client's capabilities: without the
  Apps extension (the callbacked class) `adaptive_view` has no `_meta.ui`
  and another input schema (`adaptive_schema`), and every other UI tool
  loses its `_meta.ui` (`require_apps_capability`). The model is shown the
  app-safe declaration (the `ui://` URI and the empty schema), each
  divergence is logged with the differing fields only, and the call runs on
  the app-safe handle's generation (the server answers as to an Apps client).
  """
  caplog.set_level(logging.INFO)
  served = serve(adaptive_schema=True, require_apps_capability=True)
  async with _registry(served) as registry, Conversation(registry) as talk:
    turn = await talk.turn(names.ADAPTIVE_VIEW)
    reserved = talk.reserved_generation(turn)
  catalog = catalogs[0]
  assert Divergence(names.ADAPTIVE_VIEW, ("inputSchema", "resourceUri")) in (
      catalog.divergences
  )
  assert Divergence(names.OPEN_VIEW, ("resourceUri",)) in catalog.divergences
  handle = turn.handle
  assert handle.execution_class is ExecutionClass.APP_SAFE
  assert handle.declaration.meta["ui"]["resourceUri"] == names.ADAPTIVE_URI
  assert "format" not in json.dumps(handle.declaration.input_schema)
  # What the model was sent: the app-safe tool, its schema, not the other.
  assert turn.catalog[names.ADAPTIVE_VIEW].mcp_app_resource_uri == (
      names.ADAPTIVE_URI
  )
  assert "format" not in json.dumps(turn.declaration.model_dump(mode="json"))
  logged = [
      record.getMessage()
      for record in caplog.records
      if record.name == HANDLES_LOGGER
      and f"{names.ADAPTIVE_VIEW!r}" in record.getMessage()
  ]
  assert len(logged) == 1, logged
  assert "differing: inputSchema, resourceUri" in logged[0]
  assert "app_safe declaration" in logged[0]
  assert names.ADAPTIVE_URI not in logged[0] and '"text"' not in logged[0]
  # Executed on the app-safe handle: the Apps-client answer, on its
  # generation, once.
  assert "adaptive: view" in _text(turn.response)
  assert reserved == handle.catalog_generation
  assert served.calls(names.ADAPTIVE_VIEW) == 1


# --- P2-BTH-04 .. 08, P2-BTH-11: the pre-call re-list --------------------------

DECLARATION_CHANGES = {
    "P2-BTH-04": ("rename", None),
    "P2-BTH-05": ("schema", ("inputSchema",)),
    "P2-BTH-06": ("output_schema", ("outputSchema",)),
    "P2-BTH-07": ("visibility", ("visibility",)),
    "P2-BTH-08": ("uri", ("resourceUri",)),
}


@pytest.mark.conformance(
    "P2-BTH-04", "P2-BTH-05", "P2-BTH-06", "P2-BTH-07", "P2-BTH-08"
)
@pytest.mark.parametrize(
    "case", sorted(DECLARATION_CHANGES), ids=sorted(DECLARATION_CHANGES)
)
async def test_changed_declaration_fails_closed(
    serve: Any, caplog: Any, case: str
) -> None:
  """P2-BTH-04 .. P2-BTH-08: a changed declaration is never called.

  Between the listing and the call the server changes `mutable_view` in one
  respect (name, input schema, output schema, visibility or resourceUri) on
  the very generation the call would run on. The pre-call re-list sees it:
  the call fails closed with the typed error naming the field (a renamed
  tool is gone: `ToolRemovedError`), the model is shown an error response,
  and no `tools/call` of either name reaches the server.
  """
  caplog.set_level(logging.INFO)
  change, fields = DECLARATION_CHANGES[case]
  served = serve()
  async with _registry(served) as registry, Conversation(registry) as talk:
    before = served.mark()
    turn = await talk.turn(
        names.MUTABLE_VIEW,
        {"label": "x"},
        between=_call_on_generation(
            registry, names.MUTATE_CATALOG, {"change": change}
        ),
    )
    _assert_failed_closed(talk, turn, served, names.MUTABLE_VIEW, before)
  assert served.calls(names.RENAMED_VIEW) == 0
  error = _refusal(caplog, names.MUTABLE_VIEW)
  if fields is None:
    assert type(error) is ToolRemovedError
  else:
    assert type(error) is DeclarationMismatchError
    assert error.fields == fields
    assert f"differing: {', '.join(fields)}" in turn.response["error"]
  assert error.tool_name == names.MUTABLE_VIEW
  # The re-list ran after the change, on the server, before refusing.
  after = served.entries()[before:]
  mutated = after.index({"method": "tools/call", "name": names.MUTATE_CATALOG})
  assert {"method": "tools/list", "cursor": None} in after[mutated:]


@pytest.mark.conformance("P2-BTH-11")
async def test_removed_tool_fails_closed(
    serve: Any, caplog: Any, catalogs: list[TwoClassCatalog]
) -> None:
  """P2-BTH-11: a tool removed after listing is not dispatched by name.

  `remove_listed_tool` takes `open_view` out of the app-safe generation's
  catalog silently (no `tools/list_changed`) after the model was shown it.
  The call fails closed with `ToolRemovedError`; no `tools/call open_view`
  reaches any server process. On stdio the callbacked class is another
  process, which still lists `open_view` with its UI: nothing falls back to
  it by name, and the next catalog refuses the tool (UI-associated on the
  callbacked class, absent from the app-safe one) instead of showing it.
  """
  caplog.set_level(logging.INFO)
  served = serve(removable_tools=True)
  async with _registry(served) as registry, Conversation(registry) as talk:
    before = served.mark()
    turn = await talk.turn(
        names.OPEN_VIEW,
        between=_call_on_generation(
            registry, names.REMOVE_LISTED_TOOL, {"name": names.OPEN_VIEW}
        ),
    )
    assert turn.handle.name == names.OPEN_VIEW
    _assert_failed_closed(talk, turn, served, names.OPEN_VIEW, before)
    relisted = await registry.toolset(TOOLSET).get_tools(talk.context())
    assert names.OPEN_VIEW not in {tool.name for tool in relisted}
    refused = dict(catalogs[-1].refused)
    if served.transport == "stdio":
      assert refused[names.OPEN_VIEW].detail == (
          UI_ON_CALLBACKED_ABSENT_APP_SAFE
      )
    else:
      assert catalogs[-1].handle(names.OPEN_VIEW) is None
      assert names.OPEN_VIEW not in refused
  error = _refusal(caplog, names.OPEN_VIEW)
  assert type(error) is ToolRemovedError
  assert error.tool_name == names.OPEN_VIEW
  assert served.calls(names.OPEN_VIEW) == 0


# --- P2-BTH-12: credential change --------------------------------------------


@pytest.mark.conformance("P2-BTH-12")
async def test_credential_change_fails_closed_then_relists(
    serve: Any, caplog: Any
) -> None:
  """P2-BTH-12: a credential change between listing and call.

  The header provider's credential changes after the catalog was listed.
  The call computes the new credential context, so its generation is not
  the one the handle was listed on under the old credentials: it fails with
  `StaleToolHandleError` before anything is sent, and the old generation is
  retired as rotated. The next turn lists a new catalog under the new
  credentials, and that call succeeds, once, on the new generation.
  """
  caplog.set_level(logging.INFO)
  served = serve()
  credential = {"token": "one"}
  registry = _registry(
      served,
      header_provider=lambda context: {
          "Authorization": f"Bearer {SECRET}-{credential['token']}"
      },
  )

  async def rotate(context: ReadonlyContext, request: LlmRequest) -> None:
    del context, request
    credential["token"] = "two"

  async with registry, Conversation(registry) as talk:
    before = served.mark()
    stale = await talk.turn(names.OPEN_VIEW, between=rotate)
    _assert_failed_closed(talk, stale, served, names.OPEN_VIEW, before)
    error = _refusal(caplog, names.OPEN_VIEW)
    assert type(error) is StaleToolHandleError
    assert "credentials changed" in error.detail
    old = stale.handle.catalog_generation
    retired = {g.generation_id: g for g in registry.connections.generations()}
    assert retired[old].state is ConnectionGenerationState.INVALIDATED
    assert retired[old].invalidation_reason is (
        InvalidationReason.CREDENTIAL_ROTATED
    )

    fresh = await talk.turn(names.OPEN_VIEW)
    assert "View opened with nonce" in _text(fresh.response)
    assert fresh.handle.credential_context != stale.handle.credential_context
    assert fresh.handle.catalog_generation != old
    assert talk.reserved_generation(fresh) == fresh.handle.catalog_generation
  assert served.calls(names.OPEN_VIEW, since=before) == 1
  assert SECRET not in caplog.text


# --- P2-BTH-13: connection loss ----------------------------------------------


async def _evict_listing_generation(
    registry: McpAppBindingRegistry, request: LlmRequest
) -> None:
  handle = _handle(request.tools_dict[names.OPEN_VIEW])
  assert await registry.connections.evict(handle.catalog_generation)


@pytest.mark.conformance("P2-BTH-13")
async def test_evicted_generation_forces_a_new_catalog(
    serve: Any, caplog: Any
) -> None:
  """P2-BTH-13: connection loss (eviction) never dispatches by name.

  The generation the model's catalog was listed on is evicted before the
  call. The call's own generation is then another one: the call fails with
  `StaleToolHandleError` and nothing is called on the new connection. The
  next turn's catalog is listed on the new generation and its call succeeds
  there.
  """
  caplog.set_level(logging.INFO)
  served = serve()
  async with _registry(served) as registry, Conversation(registry) as talk:

    async def evict(context: ReadonlyContext, request: LlmRequest) -> None:
      del context
      await _evict_listing_generation(registry, request)

    before = served.mark()
    lost = await talk.turn(names.OPEN_VIEW, between=evict)
    await _assert_stale_then_relisted(
        talk, served, caplog, lost, before, InvalidationReason.EVICTED
    )
  assert served.calls(names.OPEN_VIEW, since=before) == 1


@pytest.mark.conformance("P2-BTH-13")
@pytest.mark.parametrize("transport", ["stdio"], indirect=True)
async def test_killed_stdio_process_forces_a_new_catalog(
    serve: Any, caplog: Any, transport: str
) -> None:
  """P2-BTH-13: connection loss (the process dies) never reconnects.

  The stdio process of the listing generation is killed before the call,
  and the pool has noticed (its sweep retired the generation as a transport
  failure). The call's generation is then a new process: the call fails
  with `StaleToolHandleError` and no `tools/call` is sent to any process.
  The next turn lists on the new generation, and its call succeeds there.
  """
  del transport
  caplog.set_level(logging.INFO)
  served = serve()
  async with _registry(served) as registry, Conversation(registry) as talk:
    killed: list[int] = []

    async def kill(context: ReadonlyContext, request: LlmRequest) -> None:
      listed = _handle(request.tools_dict[names.OPEN_VIEW]).catalog_generation
      proxy = registry.lookup(TOOLSET)
      who = await proxy.call_tool(names.WHOAMI, {}, context)
      assert who.structured_content["supportsApps"] is True
      killed.append(who.structured_content["pid"])
      os.kill(killed[0], signal.SIGKILL)
      reason = await _retired(registry, listed)
      assert reason is InvalidationReason.TRANSPORT_FAILURE

    before = served.mark()
    lost = await talk.turn(names.OPEN_VIEW, between=kill)
    await _assert_stale_then_relisted(
        talk, served, caplog, lost, before, InvalidationReason.TRANSPORT_FAILURE
    )
    proxy = registry.lookup(TOOLSET)
    who = await proxy.call_tool(names.WHOAMI, {}, talk.context())
    assert who.structured_content["pid"] not in killed
  assert served.calls(names.OPEN_VIEW, since=before) == 1


async def _retired(
    registry: McpAppBindingRegistry, generation_id: str
) -> InvalidationReason:
  """Sweeps until a generation whose transport died is retired; why it was.

  The death already happened; what is awaited is the client noticing the
  closed pipe or stream (an event on the registry loop), so the bound is
  generous and never reached in a passing run.
  """
  loop = asyncio.get_running_loop()
  deadline = loop.time() + TIMEOUT
  while True:
    await registry.connections.sweep()
    try:
      registry.connections.get(generation_id)
    except GenerationInvalidatedError as error:
      return error.reason
    assert loop.time() < deadline, "the dead transport was never noticed"
    await asyncio.sleep(0.01)


# --- P2-BTH-14: no retry across generations ----------------------------------


@pytest.mark.conformance("P2-BTH-14")
@pytest.mark.parametrize("transport", ["stdio", "legacy_http"], indirect=True)
async def test_failed_initial_call_is_not_retried(
    serve: Any, transport: str
) -> None:
  """P2-BTH-14: a transport failure mid-call is not retried elsewhere.

  `crash_view` kills the server process after the request log recorded the
  call, so the first attempt's connection fails with the call outstanding.
  The call is not retried on a new connection: the log holds exactly one
  `tools/call crash_view` and nothing after it (on stdio a retry would spawn
  a process that logs its `initialize`), the pool opened no generation but
  the listing one, and the model is shown an error. On stdio the next turn
  lists on a new generation (a new process) and its call runs there.
  """
  served = serve(crashing_tool=True)
  async with _registry(served) as registry, Conversation(registry) as talk:
    crashed = await talk.turn(names.CRASH_VIEW)
    generations = registry.connections.generations()
    assert set(crashed.response) == {"error"}, crashed.response
    assert crashed.shown == crashed.response
    entries = served.entries()
    assert served.calls(names.CRASH_VIEW) == 1
    call = entries.index({"method": "tools/call", "name": names.CRASH_VIEW})
    assert entries[call + 1 :] == []
    listed = crashed.handle.catalog_generation
    assert [g.generation_id for g in generations] == [listed]
    if transport == "stdio":
      assert await _retired(registry, listed) is (
          InvalidationReason.TRANSPORT_FAILURE
      )
      fresh = await talk.turn(names.OPEN_VIEW)
      assert "View opened with nonce" in _text(fresh.response)
      assert fresh.handle.catalog_generation != listed
      assert talk.reserved_generation(fresh) == (
          fresh.handle.catalog_generation
      )
  assert served.calls(names.CRASH_VIEW) == 1


@pytest.mark.conformance("P2-BTH-14")
@pytest.mark.parametrize("transport", ["modern_http"], indirect=True)
async def test_modern_call_is_not_retried_on_another_backend(
    start_server: Any, start_proxy: Any, tmp_path: Path, transport: str
) -> None:
  """P2-BTH-14 (2026-07-28): no retry reaches another backend either.

  Two stateless backends share one request log behind a round-robin proxy,
  so a retried request would reach the surviving backend and be logged.
  The backend that receives `crash_view` dies mid-call; the log holds
  exactly one `tools/call crash_view`. The modern generation is a logical
  binding: one failed request does not end it, and it is still the only
  one.
  """
  del transport
  log = tmp_path / "requests.jsonl"
  options = {"crashing_tool": True, "request_log_file": str(log)}
  backends = [
      start_server("streamable-http", stateless=True, options=options).url
      for _ in range(2)
  ]
  proxy = start_proxy(backends)
  served = Served(
      "modern_http",
      StreamableHTTPConnectionParams(url=proxy.url, timeout=TIMEOUT),
      log,
  )
  async with _registry(served) as registry, Conversation(registry) as talk:
    crashed = await talk.turn(names.CRASH_VIEW)
    generations = registry.connections.generations()
  assert set(crashed.response) == {"error"}, crashed.response
  assert crashed.shown == crashed.response
  entries = served.entries()
  assert served.calls(names.CRASH_VIEW) == 1
  call = entries.index({"method": "tools/call", "name": names.CRASH_VIEW})
  assert not [e for e in entries[call + 1 :] if e["method"] == "tools/call"]
  (generation,) = generations
  assert generation.generation_id == crashed.handle.catalog_generation
  assert generation.era is ConnectionEra.MODERN


@pytest.mark.conformance("P2-BTH-14")
@pytest.mark.parametrize("transport", ["stdio", "legacy_http"], indirect=True)
async def test_transport_loss_mid_call_invalidates_generation(
    serve: Any, caplog: Any, transport: str
) -> None:
  """P2-BTH-14 (with P2-BTH-13): the failed call ends its generation at once.

  A legacy generation is the concrete connection: when its transport fails
  under the initial call, the generation must be invalidated as a transport
  failure for every holder right then (typed `GenerationInvalidatedError`),
  not left live for the next operation to find dead.
  """
  del transport
  caplog.set_level(logging.INFO)
  served = serve(crashing_tool=True)
  async with _registry(served) as registry, Conversation(registry) as talk:
    crashed = await talk.turn(names.CRASH_VIEW)
    generation = registry.connections.generations()[0]
    assert generation.generation_id == crashed.handle.catalog_generation
    assert generation.state is ConnectionGenerationState.INVALIDATED
    assert generation.invalidation_reason is (
        InvalidationReason.TRANSPORT_FAILURE
    )
    (refusal,) = [
        record.exc_info[1]
        for record in caplog.records
        if record.name == MCP_TOOL_LOGGER
        and record.exc_info
        and isinstance(record.exc_info[1], GenerationInvalidatedError)
    ]
    assert refusal.generation_id == generation.generation_id
    assert refusal.reason is InvalidationReason.TRANSPORT_FAILURE
