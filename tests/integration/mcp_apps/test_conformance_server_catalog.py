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

"""Capability gating, advertisement observation and catalog shapes.

Gating is exercised on a single server process whose era gate is off, so one
endpoint serves a legacy handshake client and a 2026-07-28 client; catalog
shapes are transport-independent and are listed over stdio in both eras.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
from typing import Any

from mcp.client import advertise
from mcp.shared.exceptions import MCPError
from mcp_apps_conformance_server import names
from mcp_apps_conformance_server import ServerOptions
import pytest

pytestmark = pytest.mark.integration

_GATED = {"require_apps_capability": True, "era_gate": "sdk"}


async def _tools(client: Any) -> dict[str, Any]:
  listing = await client.list_tools()
  assert listing.next_cursor is None
  return {tool.name: tool for tool in listing.tools}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_gating_withholds_ui_meta_from_clients_without_apps(
    start_server: Any, mcp_apps: Any, mode: str
) -> None:
  server = start_server(options=_GATED)
  async with mcp_apps.connect(server.url, mode=mode, apps=True) as client:
    era = "modern" if client.protocol_version == "2026-07-28" else "legacy"
    assert era == ("legacy" if mode == "legacy" else "modern")
    advertised = await _tools(client)
  async with mcp_apps.connect(server.url, mode=mode, apps=False) as client:
    withheld = await _tools(client)
  assert advertised[names.OPEN_VIEW].meta["ui"]["resourceUri"] == names.VIEW_URI
  assert withheld[names.OPEN_VIEW].meta is None
  assert set(advertised) == set(withheld)
  assert withheld[names.ADAPTIVE_VIEW].meta == {"conformance/textOnly": True}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_whoami_reports_what_the_client_advertised(
    start_server: Any, mcp_apps: Any, mode: str
) -> None:
  server = start_server(options={"era_gate": "sdk"})
  wrong_mime = [advertise(names.EXTENSION_ID, {"mimeTypes": ["text/html"]})]
  async with mcp_apps.connect(server.url, mode=mode) as client:
    apps = (await client.call_tool(names.WHOAMI, {})).structured_content
  async with mcp_apps.connect(
      server.url, mode=mode, extensions=wrong_mime
  ) as client:
    html_only = (await client.call_tool(names.WHOAMI, {})).structured_content
    log = (await client.call_tool(names.CLIENT_LOG, {})).structured_content
  assert apps["supportsApps"] is True and html_only["supportsApps"] is False
  ui_settings = {"mimeTypes": [names.APP_MIME_TYPE]}
  if mode == "legacy":
    assert apps["era"] == "legacy" and apps["requestEnvelope"] is None
    capabilities = apps["handshake"]["capabilities"]
  else:
    assert apps["era"] == "modern" and apps["handshake"] is None
    capabilities = apps["requestEnvelope"]["clientCapabilities"]
  assert capabilities["extensions"][names.EXTENSION_ID] == ui_settings
  seen = [
      entry["clientCapabilities"].get("extensions", {}).get(names.EXTENSION_ID)
      for entry in log["advertisements"]
      if entry["era"] == apps["era"]
  ]
  assert ui_settings in seen and {"mimeTypes": ["text/html"]} in seen


async def test_adaptive_tool_answers_by_capability(
    legacy_http_server: Any, mcp_apps: Any
) -> None:
  async with mcp_apps.connect(legacy_http_server.url, apps=True) as client:
    rich = await client.call_tool(names.ADAPTIVE_VIEW, {})
    listed = await _tools(client)
  async with mcp_apps.connect(legacy_http_server.url, apps=False) as client:
    plain = await client.call_tool(names.ADAPTIVE_VIEW, {})
  assert rich.structured_content == {"mode": "view"}
  assert plain.structured_content is None
  assert listed[names.ADAPTIVE_VIEW].meta["ui"]["resourceUri"] == (
      names.ADAPTIVE_URI
  )


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_catalog_shapes_are_listed_and_callable_over_stdio(
    mcp_apps: Any, mode: str
) -> None:
  options = {
      "malformed_visibility": True,
      "reserved_names": True,
      "deprecated_flat_key": True,
  }
  async with mcp_apps.connect(
      mcp_apps.stdio_parameters(options), mode=mode
  ) as client:
    tools = await _tools(client)
    called = await client.call_tool(names.RESERVED_NAMES[0], {})
  for name, override in names.MALFORMED_TOOLS.items():
    assert tools[name].meta["ui"]["visibility"] == override["visibility"]
  assert tools[names.MALFORMED_UI_NOT_OBJECT].meta == {"ui": names.VIEW_URI}
  assert tools[names.LEGACY_FLAT_VIEW].meta == {
      names.FLAT_UI_KEY: names.VIEW_URI
  }
  for reserved in names.RESERVED_NAMES:
    assert tools[reserved].meta["ui"]["resourceUri"] == names.VIEW_URI
  assert not called.is_error
  assert called.content[0].text == f"{names.RESERVED_NAMES[0]} ran"


async def test_default_catalog_has_no_hard_shapes(
    legacy_http_server: Any, mcp_apps: Any
) -> None:
  async with mcp_apps.connect(legacy_http_server.url) as client:
    tools = await _tools(client)
  natives = {native for _, native in names.COMPOSED_RESERVED_NAMES}
  assert not set(names.RESERVED_NAMES) & set(tools)
  assert not natives & set(tools)
  assert not set(names.MALFORMED_TOOLS) & set(tools)
  assert names.LEGACY_FLAT_VIEW not in tools
  assert names.MODEL_ONLY_VIEW not in tools
  assert names.REMOVE_LISTED_TOOL not in tools


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_model_only_and_composed_reserved_shapes(
    mcp_apps: Any, mode: str
) -> None:
  options = {"model_only_tool": True, "composed_reserved_names": True}
  async with mcp_apps.connect(
      mcp_apps.stdio_parameters(options), mode=mode
  ) as client:
    tools = await _tools(client)
    called = await client.call_tool(names.MODEL_ONLY_VIEW, {})
  assert tools[names.MODEL_ONLY_VIEW].meta["ui"] == {
      "resourceUri": names.VIEW_URI,
      "visibility": ["model"],
  }
  assert called.content[0].text == f"{names.MODEL_ONLY_VIEW} ran"
  for prefix, native in names.COMPOSED_RESERVED_NAMES:
    assert f"{prefix}_{native}" in names.RESERVED_NAMES
    assert f"{prefix}_{native}" not in tools
    assert tools[native].meta["ui"]["visibility"] == ["model", "app"]
  assert not set(names.RESERVED_NAMES) & set(tools)


async def test_removable_tools_drop_a_tool_silently(
    legacy_http_server: Any, start_server: Any, mcp_apps: Any
) -> None:
  server = start_server(options={"removable_tools": True})
  changed: list[Any] = []

  async def on_message(message: Any) -> None:
    changed.append(message)

  async with mcp_apps.connect(
      server.url, mode="legacy", message_handler=on_message
  ) as client:
    before = await _tools(client)
    removed = await client.call_tool(
        names.REMOVE_LISTED_TOOL, {"name": names.SIDE_EFFECT}
    )
    after = await _tools(client)
    gone = await client.call_tool(names.SIDE_EFFECT, {"key": "k"})
  assert names.SIDE_EFFECT in before
  assert not removed.is_error
  assert names.SIDE_EFFECT not in after
  assert set(before) - set(after) == {names.SIDE_EFFECT}
  assert gone.is_error
  assert not [m for m in changed if "list_changed" in repr(m)]
  # Another server process keeps its own catalog.
  async with mcp_apps.connect(legacy_http_server.url) as client:
    assert names.SIDE_EFFECT in await _tools(client)


@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
async def test_request_log_records_every_method_and_tool_name(
    start_server: Any, mcp_apps: Any, tmp_path: Any, transport: str
) -> None:
  log = tmp_path / "requests.jsonl"
  options = {"request_log_file": str(log), "page_size": 10, "failing_page": 1}
  if transport == "stdio":
    target: Any = mcp_apps.stdio_parameters(options)
  else:
    target = start_server(options=options).url
  async with mcp_apps.connect(target, mode="legacy") as client:
    first = await client.list_tools()
    with pytest.raises(MCPError):
      await client.list_tools(cursor=first.next_cursor)
    await client.call_tool(names.WHOAMI, {})
    await client.read_resource(names.VIEW_URI)
  entries = [json.loads(line) for line in log.read_text().splitlines()]
  requests = [e for e in entries if not e["method"].startswith("notif")]
  assert requests[:3] == [
      {"method": "initialize"},
      {"method": "tools/list", "cursor": None},
      # The failing page is logged: the log is the outermost middleware.
      {"method": "tools/list", "cursor": first.next_cursor},
  ]
  # (The SDK client may list page 0 again to validate a call's result.)
  assert [e for e in requests[3:] if e["method"] != "tools/list"] == [
      {"method": "tools/call", "name": names.WHOAMI},
      {"method": "resources/read"},
  ]
  assert {"method": "notifications/initialized"} in entries


@pytest.mark.parametrize("transport", ["stdio", "legacy-http", "sse"])
async def test_request_log_connection_ids_match_the_affinity_tools(
    start_server: Any, mcp_apps: Any, tmp_path: Any, transport: str
) -> None:
  """`request_log_connections`: each line names its connection's id."""
  log = tmp_path / "requests.jsonl"
  options = {"request_log_file": str(log), "request_log_connections": True}
  if transport == "stdio":
    target: Any = mcp_apps.stdio_parameters(options)
  elif transport == "sse":
    target = start_server("sse", options=options).url
  else:
    target = start_server(options=options).url
  seen = []
  for _ in range(2):
    async with mcp_apps.connect(target, mode="legacy") as client:
      who = (await client.call_tool(names.WHOAMI, {})).structured_content
      opened = await client.call_tool(names.OPEN_VIEW, {})
      assert opened.structured_content["connectionId"] == who["connectionId"]
      seen.append(who["connectionId"])
  assert seen[0] != seen[1]
  entries = [json.loads(line) for line in log.read_text().splitlines()]
  assert all(isinstance(e["connectionId"], str) for e in entries), entries
  calls = [
      (e["name"], e["connectionId"])
      for e in entries
      if e["method"] == "tools/call"
  ]
  assert calls == [
      (names.WHOAMI, seen[0]),
      (names.OPEN_VIEW, seen[0]),
      (names.WHOAMI, seen[1]),
      (names.OPEN_VIEW, seen[1]),
  ]
  by_connection = {
      cid: [e["method"] for e in entries if e["connectionId"] == cid]
      for cid in seen
  }
  assert set(by_connection) == {e["connectionId"] for e in entries}
  for methods in by_connection.values():
    assert methods[0] == "initialize"
    assert "notifications/initialized" in methods


async def test_request_log_connection_ids_are_null_in_the_modern_era(
    start_server: Any, mcp_apps: Any, tmp_path: Any
) -> None:
  log = tmp_path / "requests.jsonl"
  options = {"request_log_file": str(log), "request_log_connections": True}
  server = start_server(stateless=True, options=options)
  async with mcp_apps.connect(server.url) as client:
    assert client.protocol_version == "2026-07-28"
    await client.call_tool(names.WHOAMI, {})
  entries = [json.loads(line) for line in log.read_text().splitlines()]
  assert {
      "method": "tools/call",
      "name": names.WHOAMI,
      "connectionId": None,
  } in (entries)
  assert all(e["connectionId"] is None for e in entries), entries


async def test_request_log_connections_needs_a_log_and_is_off_by_default(
    start_server: Any, mcp_apps: Any, tmp_path: Any
) -> None:
  with pytest.raises(ValueError, match="request_log_file"):
    ServerOptions(request_log_connections=True)
  log = tmp_path / "requests.jsonl"
  server = start_server(options={"request_log_file": str(log)})
  async with mcp_apps.connect(server.url, mode="legacy") as client:
    await client.call_tool(names.WHOAMI, {})
  entries = [json.loads(line) for line in log.read_text().splitlines()]
  assert not [e for e in entries if "connectionId" in e]


@pytest.mark.parametrize(
    "fixture", ["legacy_http_server", "modern_http_server"]
)
async def test_mutate_catalog_changes_the_next_listing(
    request: pytest.FixtureRequest, mcp_apps: Any, fixture: str
) -> None:
  server = request.getfixturevalue(fixture)
  async with mcp_apps.connect(server.url) as client:
    before = (await _tools(client))[names.MUTABLE_VIEW]
    changes = {}
    for change in ("schema", "uri", "visibility"):
      answer = await client.call_tool(names.MUTATE_CATALOG, {"change": change})
      changes[change] = answer.structured_content
    after = (await _tools(client))[names.MUTABLE_VIEW]
    called = await client.call_tool(
        names.MUTABLE_VIEW, {"label": "x", "count": 2}
    )
    await client.call_tool(names.MUTATE_CATALOG, {"change": "reset"})
    reset = (await _tools(client))[names.MUTABLE_VIEW]
  assert set(before.input_schema["properties"]) == {"label"}
  assert set(after.input_schema["properties"]) == {"label", "count"}
  assert before.meta["ui"] == {
      "resourceUri": names.VIEW_URI,
      "visibility": ["model", "app"],
  }
  assert after.meta["ui"] == {
      "resourceUri": names.MUTATED_URI,
      "visibility": ["app"],
  }
  assert changes["visibility"]["schemaVersion"] == 2
  assert called.structured_content["count"] == 2
  assert reset.meta == before.meta
  assert reset.input_schema == before.input_schema


async def test_mutate_catalog_output_schema_and_rename_change_one_thing(
    start_server: Any, mcp_apps: Any
) -> None:
  server = start_server()
  async with mcp_apps.connect(server.url) as client:
    before = (await _tools(client))[names.MUTABLE_VIEW]
    await client.call_tool(names.MUTATE_CATALOG, {"change": "output_schema"})
    typed = (await _tools(client))[names.MUTABLE_VIEW]
    typed_call = await client.call_tool(names.MUTABLE_VIEW, {"label": "t"})
    await client.call_tool(names.MUTATE_CATALOG, {"change": "reset"})
    answer = await client.call_tool(names.MUTATE_CATALOG, {"change": "rename"})
    renamed = await _tools(client)
    called = await client.call_tool(names.RENAMED_VIEW, {"label": "r"})
    await client.call_tool(names.MUTATE_CATALOG, {"change": "reset"})
    reset = await _tools(client)
  assert typed.input_schema == before.input_schema
  assert typed.meta == before.meta
  assert set(typed.output_schema["properties"]) == {"label", "generation"}
  assert typed.output_schema != before.output_schema
  assert typed_call.structured_content["label"] == "t"
  assert answer.structured_content["name"] == names.RENAMED_VIEW
  assert names.MUTABLE_VIEW not in renamed
  moved = renamed[names.RENAMED_VIEW]
  assert (moved.input_schema, moved.output_schema, moved.meta) == (
      before.input_schema,
      before.output_schema,
      before.meta,
  )
  assert called.structured_content["label"] == "r"
  assert names.RENAMED_VIEW not in reset
  assert reset[names.MUTABLE_VIEW].input_schema == before.input_schema
  assert reset[names.MUTABLE_VIEW].output_schema == before.output_schema


async def test_adaptive_schema_differs_by_capability(
    start_server: Any, mcp_apps: Any
) -> None:
  server = start_server(options={"adaptive_schema": True})
  async with mcp_apps.connect(server.url, apps=True) as client:
    rich = (await _tools(client))[names.ADAPTIVE_VIEW]
  async with mcp_apps.connect(server.url, apps=False) as client:
    plain = (await _tools(client))[names.ADAPTIVE_VIEW]
  assert rich.input_schema["properties"] == {}
  assert rich.meta["ui"]["resourceUri"] == names.ADAPTIVE_URI
  assert plain.input_schema["required"] == ["format"]
  assert plain.meta == {"conformance/textOnly": True}


async def test_crashing_tool_kills_the_process_mid_call(
    legacy_http_server: Any, start_server: Any, mcp_apps: Any
) -> None:
  async with mcp_apps.connect(legacy_http_server.url) as client:
    assert names.CRASH_VIEW not in await _tools(client)
  server = start_server(options={"crashing_tool": True})
  async with mcp_apps.connect(server.url) as client:
    listed = (await _tools(client))[names.CRASH_VIEW]
    with pytest.raises(MCPError):
      await client.call_tool(names.CRASH_VIEW, {})
  assert listed.meta["ui"]["resourceUri"] == names.VIEW_URI
  assert server.process.wait(10) == 17


async def test_request_log_apps_tells_the_two_client_classes_apart(
    legacy_http_server: Any, start_server: Any, mcp_apps: Any, tmp_path: Any
) -> None:
  """`request_log_apps`: each line says whether its client has Apps."""
  del legacy_http_server
  log = tmp_path / "requests.jsonl"
  with pytest.raises(ValueError, match="request_log_file"):
    ServerOptions(request_log_apps=True)
  server = start_server(
      options={"request_log_file": str(log), "request_log_apps": True}
  )
  async with mcp_apps.connect(server.url, mode="legacy") as client:
    await client.list_tools()
  async with mcp_apps.connect(server.url, mode="legacy", apps=False) as client:
    await client.list_tools()
  entries = [json.loads(line) for line in log.read_text().splitlines()]
  listings = [e for e in entries if e["method"] == "tools/list"]
  assert listings == [
      {"method": "tools/list", "cursor": None, "apps": True},
      {"method": "tools/list", "cursor": None, "apps": False},
  ]
  assert all(isinstance(e["apps"], bool) for e in entries), entries


@pytest.mark.parametrize("plain", [False, True])
async def test_mutate_catalog_ui_off_and_on_flip_the_class(
    mcp_apps: Any, plain: bool
) -> None:
  """`ui_off` / `ui_on` (and `mutable_view_plain`): UI metadata comes and
  goes, nothing else of the listing changes; `reset` returns to the start."""
  options = {"mutable_view_plain": True} if plain else {}
  async with mcp_apps.connect(mcp_apps.stdio_parameters(options)) as client:
    start = (await _tools(client))[names.MUTABLE_VIEW]
    flip = "ui_on" if plain else "ui_off"
    answer = await client.call_tool(names.MUTATE_CATALOG, {"change": flip})
    flipped = (await _tools(client))[names.MUTABLE_VIEW]
    await client.call_tool(names.MUTATE_CATALOG, {"change": "reset"})
    reset = (await _tools(client))[names.MUTABLE_VIEW]
    ran = await client.call_tool(names.MUTABLE_VIEW, {"label": "x"})
  with_ui, without_ui = (flipped, start) if plain else (start, flipped)
  assert with_ui.meta["ui"]["resourceUri"] == names.VIEW_URI
  assert "ui" not in (without_ui.meta or {})
  assert answer.structured_content["ui"] is plain
  assert flipped.input_schema == start.input_schema
  assert reset.meta == start.meta
  assert not ran.is_error


async def test_listing_faults_are_confined_to_one_class_and_armed_on_demand(
    mcp_apps: Any,
) -> None:
  """`listing_fault_class` + `listing_faults_on_demand`: a failing page
  fails only for the chosen class, and only after `arm_listing_faults`."""
  options = {
      "failing_page": 0,
      "listing_fault_class": "plain",
      "listing_faults_on_demand": True,
  }
  params = mcp_apps.stdio_parameters(options)
  async with mcp_apps.connect(params, mode="legacy", apps=False) as plain:
    before = await _tools(plain)
    armed = await plain.call_tool(names.ARM_LISTING_FAULTS, {})
    with pytest.raises(MCPError, match="fails on purpose"):
      await plain.list_tools()
  async with mcp_apps.connect(params, mode="legacy") as apps:
    await apps.call_tool(names.ARM_LISTING_FAULTS, {})
    # Armed in this process too, but an Apps client is not "plain".
    listed = await _tools(apps)
  assert names.ARM_LISTING_FAULTS in before
  assert not armed.is_error
  assert names.OPEN_VIEW in listed
  async with mcp_apps.connect(mcp_apps.stdio_parameters()) as client:
    assert names.ARM_LISTING_FAULTS not in await _tools(client)


async def test_listing_fault_class_apps_oversizes_only_apps_listings(
    mcp_apps: Any,
) -> None:
  options = {
      "oversized_page": 0,
      "oversized_page_items": 3,
      "listing_fault_class": "apps",
  }
  params = mcp_apps.stdio_parameters(options)
  async with mcp_apps.connect(params, mode="legacy") as apps:
    padded = await _tools(apps)
  async with mcp_apps.connect(params, mode="legacy", apps=False) as plain:
    unpadded = await _tools(plain)
  pads = [n for n in padded if n.startswith(names.PADDED_PREFIX)]
  assert len(pads) == 3
  assert not [n for n in unpadded if n.startswith(names.PADDED_PREFIX)]


async def test_gated_listing_holds_page_zero_until_the_test_answers(
    mcp_apps: Any,
) -> None:
  """`gated_listing`: the listing reaches the gate and waits there."""
  with pytest.raises(ValueError, match="gate_socket"):
    ServerOptions(gated_listing=True)
  directory = tempfile.mkdtemp(prefix="adk-gate-")
  path = os.path.join(directory, "gate")
  reached = asyncio.Event()
  release = asyncio.Event()
  tags: list[str] = []

  async def serve(
      reader: asyncio.StreamReader, writer: asyncio.StreamWriter
  ) -> None:
    tags.append((await reader.readline()).decode().strip())
    reached.set()
    await release.wait()
    writer.write(b"go\n")
    await writer.drain()
    writer.close()

  gate = await asyncio.start_unix_server(serve, path)
  try:
    options = {"gate_socket": path, "gated_listing": True}
    async with mcp_apps.connect(mcp_apps.stdio_parameters(options)) as client:
      listing = asyncio.ensure_future(client.list_tools())
      await reached.wait()
      assert not listing.done()
      release.set()
      tools = {tool.name for tool in (await listing).tools}
  finally:
    gate.close()
    await gate.wait_closed()
    shutil.rmtree(directory, ignore_errors=True)
  assert tags[0] == "tools/list"
  assert names.OPEN_VIEW in tools
