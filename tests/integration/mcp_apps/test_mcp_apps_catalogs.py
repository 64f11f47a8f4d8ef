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

"""PR 1 visibility, model-catalog, app-catalog and reserved-name cases.

Conformance cases P1-VIS-01..08, P1-MCAT-01..03, P1-ACAT-01..04 and 06 and
P1-RSV-01..05 (the RFC's conformance case list), proven against the
real conformance server (`tests/integration/fixtures/
mcp_apps_conformance_server`) over three transports:

* `stdio`: each `McpToolset` spawns its own server process;
* `legacy-http`: stateful streamable HTTP, 2025-11-25 (`Mcp-Session-Id`);
* `modern-http`: the `--stateless` endpoint. ADK's `McpSessionManager`
  always opens with `initialize`, so the model catalog is listed over the
  stateless handshake-era transport (`era_gate="sdk"` lets the endpoint
  answer it); the app catalog and admission run on an MCP SDK `Client` that
  negotiates the 2026-07-28 era on the same endpoint.

The model catalog is read through ADK's own `McpToolset.get_tools()` /
`get_tools_with_prefix()` and, where a case names LLM declarations, through
an `LlmAgent` + `InMemoryRunner` turn whose stand-in model records the
request. The app catalog is read through `admit_app_call` /
`list_app_catalog` on the View's connection (the toolset's pooled session,
or the 2026-era SDK session).

Observation: the server runs with `request_log_file`, so its outermost
middleware appends every inbound JSON-RPC method (and the `tools/call` name)
to a request log, and "no remote call" is read from what the server
received. Besides the malformed and reserved shapes, `SWITCHES` turns on the
`["model"]`-only tool (`model_only_tool`) and the native names that compose
reserved names under a prefix (`composed_reserved_names`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Iterator
import contextlib
import dataclasses
import json
import logging
from pathlib import Path
from typing import Any

from google.adk.agents.llm_agent import LlmAgent
from google.adk.mcp_apps.catalog import reserved_names
from google.adk.mcp_apps.catalog.app_catalog import admit_app_call
from google.adk.mcp_apps.catalog.app_catalog import AppCallPolicy
from google.adk.mcp_apps.catalog.app_catalog import list_app_catalog
from google.adk.mcp_apps.catalog.app_catalog import list_toolset_app_catalog
from google.adk.mcp_apps.catalog.visibility import MalformedVisibility
from google.adk.mcp_apps.catalog.visibility import normalize_visibility
from google.adk.mcp_apps.errors import DenialReason
from google.adk.mcp_apps.errors import McpAppVisibilityError
from google.adk.runners import InMemoryRunner
from google.adk.tools.mcp_tool.mcp_session_manager import StdioConnectionParams
from google.adk.tools.mcp_tool.mcp_session_manager import StreamableHTTPConnectionParams
from google.adk.tools.mcp_tool.mcp_toolset import McpToolset
from google.genai import types as genai_types
from mcp import StdioServerParameters
from mcp_apps_conformance_server import names
import pytest
from scripted_llm import ScriptedLlm

pytestmark = pytest.mark.integration

TRANSPORTS = ("stdio", "legacy-http", "modern-http")
SERVER_ID = "conformance"
"""The stable configured-server id of the View's own server."""

SWITCHES = {
    "malformed_visibility": True,
    # ADK's reserved names, `set_model_response` included, natively.
    "reserved_names": True,
    # Native halves (`agent`, ...) that a prefix composes into a reserved name.
    "composed_reserved_names": True,
    "model_only_tool": True,
}

MODEL_ONLY = names.MODEL_ONLY_VIEW
RESERVED = names.RESERVED_NAMES
COMPOSED = names.COMPOSED_RESERVED_NAMES
MALFORMED = {
    "malformed_visibility_not_list": MalformedVisibility.NOT_A_LIST,
    "malformed_visibility_non_string": MalformedVisibility.NON_STRING_MEMBER,
    "malformed_visibility_unknown": MalformedVisibility.UNKNOWN_MEMBER,
    "malformed_visibility_empty": MalformedVisibility.EMPTY,
    names.MALFORMED_UI_NOT_OBJECT: MalformedVisibility.UI_NOT_OBJECT,
}
APP_ONLY = (names.APP_FOLLOWUP, names.APP_FOLLOWUP_HANDLE)


@dataclasses.dataclass
class Endpoint:
  """One observed conformance server (or, on stdio, its launch recipe)."""

  transport: str
  request_log: Path
  helpers: Any
  stdio: StdioServerParameters | None = None
  url: str | None = None
  process: Any = None
  """The HTTP server's `ServerProcess` (None on stdio)."""

  def toolset(self, **kwargs: Any) -> McpToolset:
    """A directly constructed `McpToolset` for this endpoint."""
    if self.stdio is not None:
      params: Any = StdioConnectionParams(server_params=self.stdio, timeout=20)
    else:
      assert self.url is not None
      params = StreamableHTTPConnectionParams(url=self.url, timeout=20)
    return McpToolset(connection_params=params, **kwargs)

  def mark(self) -> int:
    """The number of requests the server has logged so far."""
    return len(self.requests())

  def requests(self, since: int = 0) -> list[dict[str, Any]]:
    """The requests the server received, oldest first.

    Notifications (`notifications/initialized` can be logged after the first
    request's answer) are left out: they are neither listings nor calls.
    """
    if not self.request_log.exists():
      return []
    lines = self.request_log.read_text(encoding="utf-8").splitlines()
    entries = [json.loads(line) for line in lines]
    requests = [
        e for e in entries if not e["method"].startswith("notifications/")
    ]
    return requests[since:]

  def calls(self, since: int = 0) -> list[str | None]:
    """The tool names of the `tools/call` requests received since `since`."""
    return [
        r.get("name")
        for r in self.requests(since)
        if r["method"] == "tools/call"
    ]


@contextlib.contextmanager
def observed_server(
    transport: str,
    helpers: Any,
    log: Path,
    *,
    switches: dict[str, Any] | None = None,
    admin: bool = False,
) -> Iterator[Endpoint]:
  """Starts (HTTP) or describes (stdio) an observed conformance server.

  Args:
    transport: `stdio`, `legacy-http` or `modern-http`.
    helpers: The conftest helpers (`mcp_apps` fixture).
    log: The request log file (`request_log_file`).
    switches: `ServerOptions` (default: `SWITCHES`).
    admin: Also list the `remove_listed_tool` admin tool (`removable_tools`).

  Yields:
    The endpoint; an HTTP server is stopped on exit.
  """
  options = dict(SWITCHES if switches is None else switches)
  options["request_log_file"] = str(log)
  if admin:
    options["removable_tools"] = True
  if transport == "stdio":
    yield Endpoint(
        transport, log, helpers, stdio=helpers.stdio_parameters(options)
    )
    return
  stateless = transport == "modern-http"
  if stateless:
    options["era_gate"] = "sdk"
  with helpers.conformance_server(
      "streamable-http", stateless=stateless, options=options
  ) as running:
    yield Endpoint(transport, log, helpers, url=running.url, process=running)


class ServerPool:
  """Observed servers started on first use and stopped with the module."""

  def __init__(self, stack: contextlib.ExitStack, logs: Path):
    self._stack = stack
    self._logs = logs
    self._endpoints: dict[str, Endpoint] = {}
    self.helpers: Any = None

  def __getitem__(self, transport: str) -> Endpoint:
    if transport not in self._endpoints:
      self._endpoints[transport] = self._stack.enter_context(
          observed_server(
              transport,
              self.helpers,
              self._logs / f"{transport}.jsonl",
          )
      )
    return self._endpoints[transport]


@pytest.fixture(scope="module")
def server_pool(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ServerPool]:
  with contextlib.ExitStack() as stack:
    yield ServerPool(stack, tmp_path_factory.mktemp("logs"))


@pytest.fixture
def servers(server_pool: ServerPool, mcp_apps: Any) -> ServerPool:
  """One observed server per transport, shared by the module's tests."""
  server_pool.helpers = mcp_apps
  return server_pool


@pytest.fixture(params=TRANSPORTS)
def endpoint(request: pytest.FixtureRequest, servers: ServerPool) -> Endpoint:
  return servers[request.param]


@pytest.fixture
def legacy(servers: ServerPool) -> Endpoint:
  return servers["legacy-http"]


MakeToolset = Callable[..., McpToolset]
"""`toolsets(endpoint, **kwargs)`: a directly constructed `McpToolset`."""


@pytest.fixture
async def toolsets() -> AsyncIterator[MakeToolset]:
  """Makes toolsets for endpoints; every one is closed at teardown."""
  made: list[McpToolset] = []

  def make(endpoint: Endpoint, **kwargs: Any) -> McpToolset:
    made.append(endpoint.toolset(**kwargs))
    return made[-1]

  yield make
  for toolset in made:
    await toolset.close()


@pytest.fixture
def toolset(endpoint: Endpoint, toolsets: MakeToolset) -> McpToolset:
  """A plain toolset for the test's endpoint, closed at teardown."""
  return toolsets(endpoint)


@contextlib.asynccontextmanager
async def app_session(
    endpoint: Endpoint, toolset: McpToolset
) -> AsyncIterator[Any]:
  """The View's connection: the toolset's session, or a 2026-era session."""
  if endpoint.transport == "modern-http":
    async with endpoint.helpers.connect(endpoint.url) as client:
      yield client.session
    return
  # pylint: disable-next=protected-access
  yield await toolset._mcp_session_manager.create_session()


async def admit(session: Any, tool_name: str, **kwargs: Any) -> Any:
  kwargs.setdefault("view_server_id", SERVER_ID)
  kwargs.setdefault("target_server_id", SERVER_ID)
  return await admit_app_call(session, tool_name, **kwargs)


async def denial(session: Any, tool_name: str, **kwargs: Any) -> DenialReason:
  with pytest.raises(McpAppVisibilityError) as denied:
    await admit(session, tool_name, **kwargs)
  assert denied.value.tool_name == tool_name
  return denied.value.reason


async def model_names(toolset: McpToolset) -> set[str]:
  return {tool.name for tool in await toolset.get_tools_with_prefix()}


async def llm_declarations(toolset: McpToolset) -> set[str]:
  """Runs one agent turn and returns the declared function names.

  The runner closes the toolset when it is closed.
  """
  llm = ScriptedLlm()
  agent = LlmAgent(name="catalog_probe", model=llm, tools=[toolset])
  runner = InMemoryRunner(agent=agent, app_name="catalog_probe")
  try:
    session = await runner.session_service.create_session(
        app_name="catalog_probe", user_id="tester"
    )
    async for _ in runner.run_async(
        user_id="tester",
        session_id=session.id,
        new_message=genai_types.Content(
            role="user", parts=[genai_types.Part(text="hello")]
        ),
    ):
      pass
  finally:
    await runner.close()
  (request,) = llm.requests
  declared = {
      declaration.name
      for tool in request.config.tools or []
      for declaration in getattr(tool, "function_declarations", None) or []
  }
  assert declared == set(request.tools_dict)
  return declared


async def raw_listing(session: Any) -> dict[str, Any]:
  """The server's own single-page listing, by name (no ADK filtering)."""
  return {tool.name: tool for tool in (await session.list_tools()).tools}


# P1 · Visibility normalization.


@pytest.mark.conformance("P1-VIS-01")
async def test_absent_visibility_is_model_and_app(
    endpoint: Endpoint,
    toolset: McpToolset,
) -> None:
  """P1-VIS-01: no `_meta.ui.visibility` means both catalogs have the tool."""
  model = await model_names(toolset)
  async with app_session(endpoint, toolset) as session:
    listed = await raw_listing(session)
    mark = endpoint.mark()
    admitted = await admit(session, names.WHOAMI)
    app = {t.name for t in await list_app_catalog(session)}
    assert endpoint.calls(mark) == []
    # Positive control: an admitted call is what the request log sees.
    answer = await session.call_tool(names.WHOAMI, {})
    assert endpoint.calls(mark) == [names.WHOAMI]
  assert listed[names.WHOAMI].meta is None
  assert names.WHOAMI in model
  assert admitted.name == names.WHOAMI
  assert names.WHOAMI in app
  expected_era = "modern" if endpoint.transport == "modern-http" else "legacy"
  assert answer.structured_content["era"] == expected_era


@pytest.mark.conformance("P1-VIS-02")
async def test_model_only_is_denied_to_views(
    endpoint: Endpoint,
    toolset: McpToolset,
) -> None:
  """P1-VIS-02: `["model"]` is in the model catalog; a View call is denied."""
  model = await model_names(toolset)
  async with app_session(endpoint, toolset) as session:
    listed = await raw_listing(session)
    mark = endpoint.mark()
    reason = await denial(session, MODEL_ONLY)
    app = {t.name for t in await list_app_catalog(session)}
    assert endpoint.calls(mark) == []
  assert listed[MODEL_ONLY].meta["ui"]["visibility"] == ["model"]
  assert MODEL_ONLY in model
  assert reason is DenialReason.NOT_APP_VISIBLE
  assert MODEL_ONLY not in app


@pytest.mark.conformance("P1-VIS-03")
async def test_app_only_is_hidden_from_model_callable_by_view(
    endpoint: Endpoint,
    toolset: McpToolset,
) -> None:
  """P1-VIS-03: `["app"]` is absent for the model, callable by its View."""
  model = await model_names(toolset)
  async with app_session(endpoint, toolset) as session:
    listed = await raw_listing(session)
    mark = endpoint.mark()
    admitted = [(await admit(session, name)).name for name in APP_ONLY]
    app = {t.name for t in await list_app_catalog(session)}
    answer = await session.call_tool(names.APP_FOLLOWUP, {"nonce": "x"})
    assert endpoint.calls(mark) == [names.APP_FOLLOWUP]
  declared = await llm_declarations(toolset)
  for name in APP_ONLY:
    assert listed[name].meta["ui"]["visibility"] == ["app"]
    assert name not in model
    assert name not in declared
    assert name in app
  assert admitted == list(APP_ONLY)
  # The call reached the server's app-only tool (an unknown nonce, not a
  # protocol error): admission let a real View call through.
  assert answer.structured_content["verdict"] in (
      "unknown-nonce",
      "wrong-connection",
      "connection-closed",
  )
  assert names.OPEN_VIEW in declared


@pytest.mark.conformance("P1-VIS-04")
async def test_malformed_visibility_excluded_from_model(
    endpoint: Endpoint,
    toolset: McpToolset,
) -> None:
  """P1-VIS-04: every malformed shape is deny-all for the model catalog."""
  model = await model_names(toolset)
  async with app_session(endpoint, toolset) as session:
    listed = await raw_listing(session)
  assert set(MALFORMED) <= set(listed)
  assert not set(MALFORMED) & model
  assert names.OPEN_VIEW in model


@pytest.mark.conformance("P1-VIS-05")
async def test_malformed_visibility_denied_to_views(
    endpoint: Endpoint,
    toolset: McpToolset,
) -> None:
  """P1-VIS-05: a View call to a malformed-visibility tool is denied."""
  async with app_session(endpoint, toolset) as session:
    mark = endpoint.mark()
    reasons = {name: await denial(session, name) for name in MALFORMED}
    app = {t.name for t in await list_app_catalog(session)}
    assert endpoint.calls(mark) == []
  assert reasons == dict.fromkeys(MALFORMED, DenialReason.MALFORMED_VISIBILITY)
  assert not set(MALFORMED) & app
  assert names.OPEN_VIEW in app


@pytest.mark.conformance("P1-VIS-06")
async def test_malformed_visibility_is_logged(
    endpoint: Endpoint,
    caplog: pytest.LogCaptureFixture,
    toolset: McpToolset,
) -> None:
  """P1-VIS-06: one log record names the tool and the normalization failure."""
  with caplog.at_level(logging.WARNING):
    await toolset.get_tools()
    model_records = list(caplog.records)
    caplog.clear()
    async with app_session(endpoint, toolset) as session:
      await denial(session, "malformed_visibility_unknown")
    app_records = list(caplog.records)

  def messages(records: list[logging.LogRecord], tool: str) -> list[str]:
    return [
        r.getMessage()
        for r in records
        if r.levelno >= logging.WARNING
        and repr(tool) in r.getMessage()
        and "visibility" in r.getMessage()
    ]

  for tool, why in MALFORMED.items():
    (message,) = messages(model_records, tool)
    assert why.value in message
  (message,) = messages(app_records, "malformed_visibility_unknown")
  assert MalformedVisibility.UNKNOWN_MEMBER.value in message


@pytest.mark.conformance("P1-VIS-07")
async def test_direct_toolset_never_shows_app_only(
    toolset: McpToolset,
) -> None:
  """P1-VIS-07: no profile, direct `McpToolset`: app-only never reaches the LLM."""
  model = await model_names(toolset)
  unprefixed = {t.name for t in await toolset.get_tools()}
  declared = await llm_declarations(toolset)
  for name in APP_ONLY:
    assert name not in model
    assert name not in unprefixed
    assert name not in declared
  assert declared == model
  assert {names.OPEN_VIEW, names.WHOAMI, MODEL_ONLY} <= declared


@pytest.mark.conformance("P1-VIS-08")
async def test_malformed_is_deny_all_in_both_catalogs(
    endpoint: Endpoint,
    toolset: McpToolset,
) -> None:
  """P1-VIS-08: the same normalized (malformed) value for every consumer."""
  model = await model_names(toolset)
  async with app_session(endpoint, toolset) as session:
    listed = await raw_listing(session)
    mark = endpoint.mark()
    app = {t.name for t in await list_app_catalog(session)}
    reasons = {name: await denial(session, name) for name in MALFORMED}
    assert endpoint.calls(mark) == []
  for name, why in MALFORMED.items():
    normalized = normalize_visibility(listed[name].meta)
    assert normalized.malformed is why
    assert normalized.callers == frozenset()
    assert not normalized.model and not normalized.app
    assert name not in model
    assert name not in app
    assert reasons[name] is DenialReason.MALFORMED_VISIBILITY


# P1 · Model catalog.


@pytest.mark.conformance("P1-MCAT-01")
async def test_tool_filter_intersects_model_visibility(
    endpoint: Endpoint,
    toolsets: MakeToolset,
) -> None:
  """P1-MCAT-01: the model catalog is `tool_filter` ∩ `"model"` visibility."""
  selected = [names.OPEN_VIEW, names.APP_FOLLOWUP, MODEL_ONLY]
  toolset = toolsets(endpoint, tool_filter=selected)
  model = {t.name for t in await toolset.get_tools()}
  # Model-visible but not selected: absent (side_effect, whoami, ...).
  # Selected but app-only: still absent (app_followup).
  assert model == {names.OPEN_VIEW, MODEL_ONLY}


@pytest.mark.conformance("P1-MCAT-02")
async def test_prefix_applied_exactly_once(
    endpoint: Endpoint,
    toolsets: MakeToolset,
) -> None:
  """P1-MCAT-02: model entries carry `tool_name_prefix` exactly once."""
  toolset = toolsets(endpoint, tool_name_prefix="conf")
  native = {t.name for t in await toolset.get_tools()}
  first = await toolset.get_tools_with_prefix()
  second = await toolset.get_tools_with_prefix()
  # pylint: disable-next=protected-access
  declarations = [t._get_declaration() for t in first]
  declared = await llm_declarations(toolset)
  expected = {f"conf_{name}" for name in native}
  assert names.OPEN_VIEW in native
  assert {t.name for t in first} == expected
  assert {t.name for t in second} == expected
  assert {d.name for d in declarations if d is not None} == expected
  assert None not in declarations
  assert declared == expected
  assert not any(name.startswith("conf_conf_") for name in declared)


@pytest.mark.conformance("P1-MCAT-03")
async def test_ttl_cache_serves_model_catalog(
    endpoint: Endpoint,
    toolsets: MakeToolset,
) -> None:
  """P1-MCAT-03: within the TTL a model turn issues no new `tools/list`."""

  def listings(since: int) -> int:
    return sum(r["method"] == "tools/list" for r in endpoint.requests(since))

  cached = toolsets(endpoint, tool_list_cache_ttl_seconds=3600)
  uncached = toolsets(endpoint)
  mark = endpoint.mark()
  first = {t.name for t in await cached.get_tools()}
  first_listings = listings(mark)
  async with app_session(endpoint, cached) as session:
    await session.call_tool(names.MUTATE_CATALOG, {"change": "visibility"})
    try:
      mark = endpoint.mark()
      second = {t.name for t in await cached.get_tools()}
      second_listings = listings(mark)
      # The server's catalog did change: mutable_view is now app-only.
      changed = (await raw_listing(session))[names.MUTABLE_VIEW]
    finally:
      await session.call_tool(names.MUTATE_CATALOG, {"change": "reset"})
  # Control: without a TTL every model turn lists afresh.
  mark = endpoint.mark()
  await uncached.get_tools()
  await uncached.get_tools()
  uncached_listings = listings(mark)
  assert first_listings == 1
  assert second_listings == 0
  assert second == first
  assert names.MUTABLE_VIEW in second
  assert changed.meta["ui"]["visibility"] == ["app"]
  assert uncached_listings == 2


# P1 · App catalog.


@pytest.mark.conformance("P1-ACAT-01")
async def test_app_catalog_uses_native_names(
    endpoint: Endpoint,
    toolsets: MakeToolset,
) -> None:
  """P1-ACAT-01: with a prefix, the native name is admitted, the prefixed not."""
  toolset = toolsets(endpoint, tool_name_prefix="conf")
  model = await model_names(toolset)
  async with app_session(endpoint, toolset) as session:
    mark = endpoint.mark()
    admitted = await admit(session, names.SIDE_EFFECT)
    reason = await denial(session, f"conf_{names.SIDE_EFFECT}")
    app = {t.name for t in await list_app_catalog(session)}
    assert endpoint.calls(mark) == []
  if endpoint.transport != "modern-http":
    toolset_app = {t.name for t in await list_toolset_app_catalog(toolset)}
    assert toolset_app == app
  assert f"conf_{names.SIDE_EFFECT}" in model
  assert admitted.name == names.SIDE_EFFECT
  assert reason is DenialReason.NOT_LISTED
  assert names.SIDE_EFFECT in app
  assert not any(name.startswith("conf_") for name in app)


def _expected_app_catalog(listed: dict[str, Any]) -> set[str]:
  """App-visible, well-formed, unreserved tools, judged by hand."""
  expected = set()
  for name, tool in listed.items():
    ui = (tool.meta or {}).get("ui")
    if name in RESERVED or name in MALFORMED:
      continue
    if ui is None or "visibility" not in ui or "app" in ui["visibility"]:
      expected.add(name)
  return expected


@pytest.mark.conformance("P1-ACAT-02")
async def test_default_policy_admits_exactly_app_visible(
    endpoint: Endpoint,
    toolset: McpToolset,
) -> None:
  """P1-ACAT-02: the default policy admits exactly the app-visible tools."""
  async with app_session(endpoint, toolset) as session:
    listed = await raw_listing(session)
    mark = endpoint.mark()
    app = [t.name for t in await list_app_catalog(session)]
    admitted = {name for name in app if (await admit(session, name)).name}
    denied = {
        name: await denial(session, name) for name in set(listed) - set(app)
    }
    assert endpoint.calls(mark) == []
  assert set(app) == _expected_app_catalog(listed)
  assert admitted == set(app)
  assert set(APP_ONLY) <= admitted
  assert MODEL_ONLY in denied
  assert set(denied) == set(MALFORMED) | set(RESERVED) | {MODEL_ONLY}


@pytest.mark.conformance("P1-ACAT-03")
async def test_deny_all_policy_denies_every_view_call(
    endpoint: Endpoint,
    toolset: McpToolset,
) -> None:
  """P1-ACAT-03: a deny-all policy denies even app-visible tools."""
  policy = AppCallPolicy.deny_all()
  async with app_session(endpoint, toolset) as session:
    listed = await raw_listing(session)
    mark = endpoint.mark()
    reasons = {
        name: await denial(session, name, policy=policy)
        for name in (names.SIDE_EFFECT, *APP_ONLY, names.OPEN_VIEW)
    }
    # A policy denial needs no I/O: nothing at all reached the server.
    assert endpoint.requests(mark) == []
    app = await list_app_catalog(session, policy)
    assert endpoint.calls(mark) == []
    effects = await session.call_tool(names.READ_EFFECTS, {})
  assert names.SIDE_EFFECT in listed
  assert set(reasons.values()) == {DenialReason.POLICY_DENIED}
  assert app == []
  assert effects.structured_content["counts"] == {}


@pytest.mark.conformance("P1-ACAT-04")
async def test_partial_policy_is_intersection(
    endpoint: Endpoint,
    toolset: McpToolset,
) -> None:
  """P1-ACAT-04: policy ∩ `"app"`: outside the policy or model-only is denied."""
  policy = (
      AppCallPolicy()
      .narrow(
          AppCallPolicy.only(
              {names.SIDE_EFFECT, MODEL_ONLY, names.APP_FOLLOWUP}
          )
      )
      .narrow(AppCallPolicy.only({names.SIDE_EFFECT, MODEL_ONLY}))
  )
  async with app_session(endpoint, toolset) as session:
    mark = endpoint.mark()
    admitted = await admit(session, names.SIDE_EFFECT, policy=policy)
    outside = await denial(session, names.APP_FOLLOWUP, policy=policy)
    model_only = await denial(session, MODEL_ONLY, policy=policy)
    app = [t.name for t in await list_app_catalog(session, policy)]
    assert endpoint.calls(mark) == []
  assert policy.allowed == frozenset({names.SIDE_EFFECT, MODEL_ONLY})
  assert admitted.name == names.SIDE_EFFECT
  assert outside is DenialReason.POLICY_DENIED
  assert model_only is DenialReason.NOT_APP_VISIBLE
  assert app == [names.SIDE_EFFECT]


@pytest.mark.conformance("P1-ACAT-06")
async def test_cross_server_calls_are_blocked(
    endpoint: Endpoint,
    servers: ServerPool,
    toolset: McpToolset,
    toolsets: MakeToolset,
) -> None:
  """P1-ACAT-06: a View call to another configured server is always denied."""
  other = servers[
      "legacy-http" if endpoint.transport != "legacy-http" else "modern-http"
  ]
  other_toolset = toolsets(other)
  async with app_session(other, other_toolset) as other_session:
    other_app = {t.name for t in await list_app_catalog(other_session)}
  async with app_session(endpoint, toolset) as session:
    await raw_listing(session)
    mark, other_mark = endpoint.mark(), other.mark()
    reasons = {
        name: await denial(
            session,
            name,
            view_server_id=SERVER_ID,
            target_server_id="other-server",
        )
        for name in (names.APP_FOLLOWUP, names.SIDE_EFFECT, names.WHOAMI)
    }
    # Denied before any I/O, on either server.
    assert endpoint.requests(mark) == []
    assert other.requests(other_mark) == []
  assert names.APP_FOLLOWUP in other_app  # app-only on the other server
  assert set(reasons.values()) == {DenialReason.CROSS_SERVER}


# P1 · Reserved names (legacy HTTP; each over the reserved names).


@pytest.mark.conformance("P1-RSV-01")
@pytest.mark.parametrize("reserved", RESERVED)
async def test_model_catalog_skips_reserved_native_name(
    legacy: Endpoint,
    reserved: str,
    toolsets: MakeToolset,
) -> None:
  """P1-RSV-01: a reserved native name never reaches the model, no prefix."""
  toolset = toolsets(legacy)
  model = await model_names(toolset)
  async with app_session(legacy, toolset) as session:
    listed = await raw_listing(session)
  declared = await llm_declarations(toolset)
  assert reserved in listed
  assert reserved not in model
  assert reserved not in declared
  assert names.OPEN_VIEW in declared


@pytest.mark.conformance("P1-RSV-02")
@pytest.mark.parametrize("reserved", RESERVED)
async def test_model_catalog_skips_reserved_native_name_with_prefix(
    legacy: Endpoint,
    reserved: str,
    toolsets: MakeToolset,
) -> None:
  """P1-RSV-02: with a prefix, a reserved native name is still excluded."""
  toolset = toolsets(legacy, tool_name_prefix="conf")
  model = await model_names(toolset)
  declared = await llm_declarations(toolset)
  assert f"conf_{reserved}" not in model
  assert f"conf_{reserved}" not in declared
  assert reserved not in declared
  assert f"conf_{names.OPEN_VIEW}" in declared


@pytest.mark.conformance("P1-RSV-03")
@pytest.mark.parametrize(("prefix", "native"), COMPOSED)
async def test_prefix_cannot_compose_reserved_name(
    legacy: Endpoint,
    prefix: str,
    native: str,
    toolsets: MakeToolset,
) -> None:
  """P1-RSV-03: prefix + native name composing a reserved name is excluded."""
  composed = f"{prefix}_{native}"
  assert composed in reserved_names.RESERVED_TOOL_NAMES
  toolset = toolsets(legacy, tool_name_prefix=prefix)
  model = await model_names(toolset)
  declared = await llm_declarations(toolset)
  assert composed not in model
  assert composed not in declared
  assert f"{prefix}_{names.OPEN_VIEW}" in declared


@pytest.mark.conformance("P1-RSV-04")
@pytest.mark.parametrize("reserved", RESERVED)
async def test_app_catalog_excludes_reserved_native_name(
    legacy: Endpoint,
    reserved: str,
    toolsets: MakeToolset,
) -> None:
  """P1-RSV-04: an app-visible reserved name is denied, with no remote call."""
  toolset = toolsets(legacy)
  async with app_session(legacy, toolset) as session:
    listed = await raw_listing(session)
    mark = legacy.mark()
    reason = await denial(session, reserved)
    # Denied by name alone: not even an admission listing was needed.
    assert legacy.requests(mark) == []
    app = {t.name for t in await list_app_catalog(session)}
    assert legacy.calls(mark) == []
  assert "app" in listed[reserved].meta["ui"]["visibility"]
  assert reason is DenialReason.RESERVED_NAME
  assert reserved not in app


@pytest.mark.conformance("P1-RSV-05")
@pytest.mark.parametrize("reserved", RESERVED)
async def test_app_catalog_excludes_reserved_name_under_prefix(
    legacy: Endpoint,
    reserved: str,
    toolsets: MakeToolset,
) -> None:
  """P1-RSV-05: with a prefix, the app catalog still checks native names."""
  prefix, native = next((p, n) for p, n in COMPOSED if f"{p}_{n}" == reserved)
  toolset = toolsets(legacy, tool_name_prefix=prefix)
  app = {t.name for t in await list_toolset_app_catalog(toolset)}
  async with app_session(legacy, toolset) as session:
    mark = legacy.mark()
    reason = await denial(session, reserved)
    # The native half of a composed name is an ordinary native name.
    admitted = await admit(session, native)
    assert legacy.calls(mark) == []
  assert reserved not in app
  assert reason is DenialReason.RESERVED_NAME
  assert native in app
  assert admitted.name == native
