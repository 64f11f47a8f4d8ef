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

"""`ui://` resources: listing, direct reads, odd read shapes, MRTR reads."""

from __future__ import annotations

import base64
from typing import Any

from mcp_apps_conformance_server import names
from mcp_apps_conformance_server import views
from mcp_types import InputRequiredResult
import pytest

pytestmark = pytest.mark.integration

_SERVERS = ["legacy_http_server", "modern_http_server", "sse_server"]


@pytest.fixture(params=_SERVERS)
def server(request: pytest.FixtureRequest) -> Any:
  return request.getfixturevalue(request.param)


async def test_listing_and_reads(server: Any, mcp_apps: Any) -> None:
  async with mcp_apps.connect(server.url) as client:
    listed = {r.uri: r for r in (await client.list_resources()).resources}
    view = await client.read_resource(names.VIEW_URI)
    unlisted = await client.read_resource(names.UNLISTED_URI)
    multi = await client.read_resource(names.MULTI_URI)
    empty = await client.read_resource(names.EMPTY_URI)
    double = await client.read_resource(names.DOUBLE_URI)
    blob = await client.read_resource(names.BLOB_URI)
  assert names.VIEW_URI in listed and names.UNLISTED_URI not in listed
  assert listed[names.VIEW_URI].mime_type == names.APP_MIME_TYPE
  assert listed[names.VIEW_URI].meta is None
  [content] = view.contents
  assert content.mime_type == names.APP_MIME_TYPE
  ui = content.meta["ui"]
  assert ui["prefersBorder"] is True
  assert ui["domain"] == views.VIEW_DOMAIN
  assert ui["csp"]["connectDomains"] == ["https://api.conformance.invalid"]
  assert "clipboardWrite" in ui["permissions"]
  assert unlisted.contents[0].uri == names.UNLISTED_URI
  multi_uris = [item.uri for item in multi.contents]
  assert multi_uris[0] == names.MULTI_URI
  assert names.OUTSIDE_URI in multi_uris
  assert [u for u in multi_uris if not u.startswith(names.URI_PREFIX)] == [
      names.OUTSIDE_URI,
      views.MULTI_SCRIPT_URI,
  ]
  assert empty.contents == []
  assert [i.mime_type for i in double.contents] == [names.APP_MIME_TYPE] * 2
  assert {i.uri for i in double.contents} == {names.DOUBLE_URI}
  html = base64.b64decode(blob.contents[0].blob).decode()
  assert blob.contents[0].mime_type == names.APP_MIME_TYPE
  assert html.startswith("<!doctype html>")


async def test_listing_meta_switch(start_server: Any, mcp_apps: Any) -> None:
  server = start_server(options={"resource_meta_on_listing": True})
  async with mcp_apps.connect(server.url) as client:
    listed = {r.uri: r for r in (await client.list_resources()).resources}
    read = await client.read_resource(names.VIEW_URI)
  assert listed[names.VIEW_URI].meta == {"ui": views.LISTING_UI_META}
  assert read.contents[0].meta["ui"]["prefersBorder"] is True


async def test_interactive_read_modern_takes_state_only_rounds(
    modern_http_server: Any, mcp_apps: Any
) -> None:
  async with mcp_apps.connect(modern_http_server.url) as client:
    session = client.session
    first = await session.read_resource(
        names.INTERACTIVE_URI, allow_input_required=True
    )
    second = await session.read_resource(
        names.INTERACTIVE_URI,
        request_state=first.request_state,
        allow_input_required=True,
    )
    final = await session.read_resource(
        names.INTERACTIVE_URI,
        request_state=second.request_state,
        allow_input_required=True,
    )
    driven = await client.read_resource(names.INTERACTIVE_URI)
  for interim in (first, second):
    assert isinstance(interim, InputRequiredResult)
    assert not interim.input_requests and interim.request_state
  assert first.request_state != second.request_state
  assert "after 3 round(s)" in final.contents[0].text
  assert "after 3 round(s)" in driven.contents[0].text


async def test_interactive_read_legacy_is_a_single_round(
    legacy_http_server: Any, mcp_apps: Any
) -> None:
  async with mcp_apps.connect(legacy_http_server.url) as client:
    result = await client.session.read_resource(
        names.INTERACTIVE_URI, allow_input_required=True
    )
  assert not isinstance(result, InputRequiredResult)
  assert result.contents[0].mime_type == names.APP_MIME_TYPE
  assert "after 1 round(s)" in result.contents[0].text
