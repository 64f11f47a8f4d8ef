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

"""Dual-era Apps advertisement and app-safe connections, on the wire.

S0-SDK-06 characterizes the SDK's own `ClientSession`: capabilities come
from its constructor callback table and cannot change once connected. The
P2-ADV cases run ADK's `McpToolset`, built with and without the registry's
`AppsClientBinding`, against the connection-stateful conformance server and
read what the server saw: `whoami` reports the legacy `initialize` params or
the 2026-07-28 per-request `_meta` envelope of the request it answers, and
`client_log` every distinct advertisement the process received.

ADK speaks the 2026-07-28 era only with `ADK_ENABLE_MCP_MODERN_PROTOCOL`;
the `era` fixture sets or clears it. Stateful streamable HTTP, SSE and stdio
without the flag are legacy; stateless streamable HTTP and stdio with the
flag are modern.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
import contextlib
from typing import Any

from google.adk.mcp_apps.binding.client_extensions import AppsClientBinding
from google.adk.tools.mcp_tool import McpToolset
from google.adk.tools.mcp_tool import SseConnectionParams
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.adk.tools.mcp_tool import StreamableHTTPConnectionParams
from google.adk.tools.mcp_tool.mcp_tool import McpTool
from mcp import ClientSession
from mcp import types
from mcp.client.streamable_http import streamable_http_client
from mcp_apps_conformance_server import names
import pytest

pytestmark = pytest.mark.integration

MODERN_FLAG = "ADK_ENABLE_MCP_MODERN_PROTOCOL"
UI_SETTINGS = {"mimeTypes": [names.APP_MIME_TYPE]}
APPS_AD = {names.EXTENSION_ID: UI_SETTINGS}
INPUT_CAPABILITIES = ("sampling", "elicitation", "roots")
TIMEOUT = 30.0
# Every era on every transport that era serves.
ERA_TRANSPORTS = [
    ("legacy", "stateful-http"),
    ("legacy", "stdio"),
    ("modern", "stateless-http"),
    ("modern", "stdio"),
]


# --- Helpers -----------------------------------------------------------------


async def _sampling(*args: Any, **kwargs: Any) -> Any:
  raise AssertionError("the conformance server is never asked to sample here")


async def _elicitation(*args: Any, **kwargs: Any) -> Any:
  raise AssertionError("the conformance server never elicits here")


async def _roots(*args: Any, **kwargs: Any) -> Any:
  return types.ListRootsResult(roots=[])


CALLBACKS: dict[str, dict[str, Any]] = {
    "sampling": {"sampling_callback": _sampling},
    "elicitation": {"elicitation_callback": _elicitation},
    "roots": {"list_roots_callback": _roots},
}
"""One SDK constructor callback per input capability."""

TOOLSET_CALLBACKS: dict[str, Any] = {
    "sampling_callback": _sampling,
    "sampling_capabilities": types.SamplingCapability(),
    "elicitation_callback": _elicitation,
}
"""Every input-request callback `McpToolset` accepts (it has no roots)."""


@pytest.fixture
def era(request: pytest.FixtureRequest, monkeypatch: Any) -> str:
  """Sets ADK's era flag from the test's `era` parameter."""
  value: str = request.param
  if value == "modern":
    monkeypatch.setenv(MODERN_FLAG, "1")
  else:
    monkeypatch.delenv(MODERN_FLAG, raising=False)
  return value


def _connection(
    transport: str, url: str | None, mcp_apps: Any, options: Any = None
) -> Any:
  if transport == "stdio":
    return StdioConnectionParams(
        server_params=mcp_apps.stdio_parameters(options), timeout=TIMEOUT
    )
  assert url is not None
  if transport == "sse":
    return SseConnectionParams(url=url, timeout=TIMEOUT)
  return StreamableHTTPConnectionParams(url=url, timeout=TIMEOUT)


@contextlib.asynccontextmanager
async def _toolset(
    connection: Any,
    binding: AppsClientBinding | None = None,
    **kwargs: Any,
) -> AsyncIterator[McpToolset]:
  if binding is not None:
    kwargs["_apps_client_binding"] = binding
  toolset = McpToolset(connection_params=connection, **kwargs)
  try:
    yield toolset
  finally:
    await toolset.close()


async def _call(toolset: McpToolset, tool: str) -> dict[str, Any]:
  """Calls a conformance tool on the toolset's own pooled session."""
  # pylint: disable-next=protected-access
  result = await toolset._execute_with_session(
      lambda session: session.call_tool(tool, {}), f"calling {tool}"
  )
  assert not result.is_error, result
  assert isinstance(result.structured_content, dict)
  return result.structured_content


def _advertised(whoami: dict[str, Any]) -> dict[str, Any]:
  """The capabilities the request `whoami` answered carried, either era."""
  if whoami["era"] == "legacy":
    assert whoami["requestEnvelope"] is None
    return whoami["handshake"]["capabilities"]
  assert whoami["handshake"] is None
  return whoami["requestEnvelope"]["clientCapabilities"]


def _adk_ads(log: dict[str, Any], era: str) -> list[dict[str, Any]]:
  """ADK's distinct advertisements of one era in a `client_log` answer."""
  return [
      entry["clientCapabilities"]
      for entry in log["advertisements"]
      if entry["era"] == era and entry["clientInfo"]["name"] == "google-adk"
  ]


def _server_url(
    transport: str, start_server: Callable[..., Any], options: Any = None
) -> str | None:
  if transport == "stdio":
    return None
  if transport == "stateless-http":
    return start_server(stateless=True, options=options).url
  if transport == "sse":
    return start_server("sse", options=options).url
  return start_server(options=options).url


# --- S0-SDK-06: the SDK's ClientSession --------------------------------------


@contextlib.asynccontextmanager
async def _sdk_session(url: str, **kwargs: Any) -> AsyncIterator[ClientSession]:
  async with streamable_http_client(url) as transports:
    async with ClientSession(
        *transports[:2], read_timeout_seconds=TIMEOUT, **kwargs
    ) as session:
      yield session


async def _sdk_whoami(session: ClientSession) -> dict[str, Any]:
  result = await session.call_tool(names.WHOAMI, {})
  assert isinstance(result.structured_content, dict)
  return result.structured_content


@pytest.mark.conformance("S0-SDK-06")
async def test_no_callbacks_advertise_no_input_capability(
    legacy_http_server: Any,
) -> None:
  async with _sdk_session(legacy_http_server.url) as session:
    await session.initialize()
    capabilities = _advertised(await _sdk_whoami(session))
  assert not set(INPUT_CAPABILITIES) & set(capabilities)


@pytest.mark.conformance("S0-SDK-06")
@pytest.mark.parametrize("capability", sorted(CALLBACKS))
async def test_one_callback_advertises_exactly_its_capability(
    legacy_http_server: Any, capability: str
) -> None:
  async with _sdk_session(
      legacy_http_server.url, **CALLBACKS[capability]
  ) as session:
    await session.initialize()
    capabilities = _advertised(await _sdk_whoami(session))
  assert set(INPUT_CAPABILITIES) & set(capabilities) == {capability}


@pytest.mark.conformance("S0-SDK-06")
async def test_sampling_capabilities_alone_advertise_nothing(
    legacy_http_server: Any,
) -> None:
  """The callback, not `sampling_capabilities`, decides the ad."""
  async with _sdk_session(
      legacy_http_server.url,
      sampling_capabilities=types.SamplingCapability(),
  ) as session:
    await session.initialize()
    capabilities = _advertised(await _sdk_whoami(session))
  assert "sampling" not in capabilities


@pytest.mark.conformance("S0-SDK-06")
async def test_legacy_advertisement_is_fixed_once_initialized(
    legacy_http_server: Any,
) -> None:
  extensions = {names.EXTENSION_ID: {"mimeTypes": [names.APP_MIME_TYPE]}}
  async with _sdk_session(
      legacy_http_server.url, extensions=extensions, **CALLBACKS["sampling"]
  ) as session:
    first = await session.initialize()
    before = await _sdk_whoami(session)
    # Whatever the client does to its own inputs afterwards, and a second
    # `initialize()`, which the SDK answers from its cache.
    extensions[names.EXTENSION_ID]["mimeTypes"].clear()
    extensions.clear()
    assert await session.initialize() is first
    after = await _sdk_whoami(session)
  assert before["connectionId"] == after["connectionId"]
  assert before["handshake"] == after["handshake"]
  assert _advertised(after)["extensions"] == APPS_AD
  assert "sampling" in _advertised(after)


@pytest.mark.conformance("S0-SDK-06")
async def test_modern_stamp_is_fixed_at_adoption(
    modern_http_server: Any,
) -> None:
  """The 2026-07-28 `_meta` capabilities are frozen when discover adopts."""
  settings = {"mimeTypes": [names.APP_MIME_TYPE]}
  async with _sdk_session(
      modern_http_server.url,
      extensions={names.EXTENSION_ID: settings},
      **CALLBACKS["elicitation"],
  ) as session:
    await session.discover()
    before = await _sdk_whoami(session)
    settings["mimeTypes"].append("text/plain")
    after = await _sdk_whoami(session)
  assert before["era"] == after["era"] == "modern"
  assert _advertised(before) == _advertised(after)
  assert _advertised(after)["extensions"] == APPS_AD
  assert set(INPUT_CAPABILITIES) & set(_advertised(after)) == {"elicitation"}


@pytest.mark.conformance("S0-SDK-06")
async def test_settings_are_aliased_until_connect(
    legacy_http_server: Any,
) -> None:
  """Surprise: `ClientSession` copies the map but not the settings inside.

  A settings object mutated between construction and `initialize()` is what
  goes on the wire, which is why `AppsClientBinding` hands every session a
  fresh deep copy.
  """
  settings: dict[str, Any] = {"mimeTypes": [names.APP_MIME_TYPE]}
  async with _sdk_session(
      legacy_http_server.url, extensions={names.EXTENSION_ID: settings}
  ) as session:
    settings["mimeTypes"] = ["text/plain"]
    await session.initialize()
    whoami = await _sdk_whoami(session)
  assert _advertised(whoami)["extensions"][names.EXTENSION_ID] == {
      "mimeTypes": ["text/plain"]
  }
  assert whoami["supportsApps"] is False


# --- P2-ADV-01 / P2-ADV-02: the extension and its exact settings -------------


@pytest.mark.conformance("P2-ADV-01")
@pytest.mark.parametrize("era", ["legacy"], indirect=True)
@pytest.mark.parametrize("transport", ["stdio", "stateful-http", "sse"])
async def test_legacy_initialize_carries_the_extension(
    era: str, transport: str, start_server: Any, mcp_apps: Any
) -> None:
  url = _server_url(transport, start_server)
  async with _toolset(
      _connection(transport, url, mcp_apps), AppsClientBinding.for_mcp_apps()
  ) as toolset:
    await toolset.get_tools()
    whoami = await _call(toolset, names.WHOAMI)
    log = await _call(toolset, names.CLIENT_LOG)
  assert whoami["era"] == era
  assert whoami["handshake"]["clientInfo"]["name"] == "google-adk"
  assert _advertised(whoami)["extensions"] == APPS_AD
  assert whoami["supportsApps"] is True
  # One handshake, carrying the exact map.
  assert [ad.get("extensions") for ad in _adk_ads(log, "legacy")] == [APPS_AD]


@pytest.mark.conformance("P2-ADV-02")
@pytest.mark.parametrize("era", ["modern"], indirect=True)
@pytest.mark.parametrize("transport", ["stateless-http", "stdio"])
async def test_modern_meta_carries_the_extension_on_every_request(
    era: str, transport: str, start_server: Any, mcp_apps: Any
) -> None:
  url = _server_url(transport, start_server)
  async with _toolset(
      _connection(transport, url, mcp_apps),
      AppsClientBinding.for_mcp_apps(),
      tool_list_cache_ttl_seconds=None,
  ) as toolset:
    answers = []
    for _ in range(3):
      await toolset.get_tools()
      answers.append(await _call(toolset, names.WHOAMI))
    await toolset.read_resource_by_uri(names.VIEW_URI)
    log = await _call(toolset, names.CLIENT_LOG)
  for whoami in answers:
    assert whoami["era"] == era
    assert whoami["requestEnvelope"]["clientInfo"]["name"] == "google-adk"
    assert _advertised(whoami)["extensions"] == APPS_AD
    assert whoami["supportsApps"] is True
  # `client_log` keeps distinct envelopes: every enveloped request this
  # server received (discover, tools/list, tools/call, resources/read)
  # carried the one advertisement.
  ads = _adk_ads(log, "modern")
  assert [ad.get("extensions") for ad in ads] == [APPS_AD]
  assert not _adk_ads(log, "legacy")


# --- P2-ADV-04: a capability-gated server ------------------------------------


@pytest.mark.conformance("P2-ADV-04")
@pytest.mark.parametrize(
    ("era", "transport"),
    [("legacy", "stateful-http"), ("modern", "stateless-http")],
    indirect=["era"],
)
async def test_gated_server_shows_ui_only_to_the_bound_toolset(
    era: str, transport: str, start_server: Any, mcp_apps: Any
) -> None:
  url = _server_url(
      transport, start_server, options={"require_apps_capability": True}
  )
  connection = _connection(transport, url, mcp_apps)
  async with _toolset(connection, AppsClientBinding.for_mcp_apps()) as bound:
    bound_tools = {t.name: t for t in await bound.get_tools()}
  async with _toolset(connection, **TOOLSET_CALLBACKS) as plain:
    plain_tools = {t.name: t for t in await plain.get_tools()}

  view = bound_tools[names.OPEN_VIEW]
  assert isinstance(view, McpTool)
  assert view.mcp_app_resource_uri == names.VIEW_URI
  assert bound_tools[names.ADAPTIVE_VIEW].mcp_app_resource_uri == (
      names.ADAPTIVE_URI
  )
  # The same tools, listed without `_meta.ui`: no UI tool at all.
  assert names.OPEN_VIEW in plain_tools
  assert not [
      name
      for name, tool in plain_tools.items()
      if isinstance(tool, McpTool) and tool.mcp_app_resource_uri
  ]


# --- P2-ADV-08 / P2-ADV-09: app-safe connections -----------------------------


@pytest.mark.conformance("P2-ADV-08", "P2-ADV-09")
@pytest.mark.parametrize(("era", "transport"), ERA_TRANSPORTS, indirect=["era"])
async def test_app_safe_connection_advertises_no_input_capability(
    era: str, transport: str, start_server: Any, mcp_apps: Any
) -> None:
  """P2-ADV-08 (legacy `initialize`) and P2-ADV-09 (modern `_meta`)."""
  url = _server_url(transport, start_server)
  connection = _connection(transport, url, mcp_apps)
  async with _toolset(
      connection, AppsClientBinding.for_mcp_apps(), **TOOLSET_CALLBACKS
  ) as app_safe:
    safe = await _call(app_safe, names.WHOAMI)
    await app_safe.get_tools()
    log = await _call(app_safe, names.CLIENT_LOG)
  # The control: the same configuration, unbound, does advertise them.
  async with _toolset(connection, **TOOLSET_CALLBACKS) as configured:
    control = _advertised(await _call(configured, names.WHOAMI))

  assert safe["era"] == era
  assert _advertised(safe) == {"extensions": APPS_AD}
  assert safe["supportsApps"] is True
  for ad in _adk_ads(log, era):
    assert not set(INPUT_CAPABILITIES) & set(ad)
  assert {"sampling", "elicitation"} <= set(control)


# --- P2-ADV-10: a directly constructed toolset -------------------------------


@pytest.mark.conformance("P2-ADV-10")
@pytest.mark.parametrize(("era", "transport"), ERA_TRANSPORTS, indirect=["era"])
async def test_plain_toolset_never_advertises_apps(
    era: str, transport: str, start_server: Any, mcp_apps: Any
) -> None:
  url = _server_url(transport, start_server)
  connection = _connection(transport, url, mcp_apps)
  # A bound toolset on the same server first: nothing of it may leak into a
  # toolset the application builds itself, with or without callbacks.
  async with _toolset(connection, AppsClientBinding.for_mcp_apps()) as bound:
    assert (await _call(bound, names.WHOAMI))["supportsApps"] is True
  answers = []
  for callbacks in ({}, TOOLSET_CALLBACKS):
    async with _toolset(connection, **callbacks) as plain:
      await plain.get_tools()
      answers.append(await _call(plain, names.WHOAMI))
      log = await _call(plain, names.CLIENT_LOG)

  for whoami in answers:
    assert whoami["era"] == era
    assert "extensions" not in _advertised(whoami)
    assert whoami["supportsApps"] is False
  assert {"sampling", "elicitation"} <= set(_advertised(answers[1]))
  if transport != "stdio":
    # One server process saw all three toolsets: the bound one advertised,
    # no other advertisement it received carries the extension.
    ads = _adk_ads(log, era)
    assert [ad for ad in ads if "extensions" in ad] == [{"extensions": APPS_AD}]
    assert len(ads) >= 3


# --- Pool separation on a live server ----------------------------------------


async def test_bound_and_plain_sessions_are_never_shared(
    start_server: Any, mcp_apps: Any, monkeypatch: Any
) -> None:
  """Two toolsets, one server: two connections, each with its own ad."""
  monkeypatch.delenv(MODERN_FLAG, raising=False)
  url = start_server().url
  connection = _connection("stateful-http", url, mcp_apps)
  async with _toolset(connection, AppsClientBinding.for_mcp_apps()) as bound:
    async with _toolset(connection) as plain:
      bound_who = await _call(bound, names.WHOAMI)
      plain_who = await _call(plain, names.WHOAMI)
      # pylint: disable=protected-access
      bound_keys = set(bound._mcp_session_manager._sessions)
      plain_keys = set(plain._mcp_session_manager._sessions)
  assert bound_who["connectionId"] != plain_who["connectionId"]
  assert bound_who["supportsApps"] and not plain_who["supportsApps"]
  assert plain_keys and all(key.startswith("session_") for key in plain_keys)
  assert bound_keys and all(key.startswith("apps_") for key in bound_keys)
  assert not bound_keys & plain_keys
