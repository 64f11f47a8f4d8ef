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

"""The reference adapter end to end, over a real uvicorn socket.

A chat turn on ADK's stock `/run` route renders a widget (scripted model,
real conformance server); the test then acts as the renderer page: it
loads the page for its CSRF cookie, opens a View, drives the View's
channel (`tools/call`, `resources/read`, `ui/message`,
`ui/update-model-context`) and tears it down, all over HTTP.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from adapter_support import served
from google.adk.mcp_apps.operations.message_permit import attest_every_message
from mcp_apps_conformance_server import names
import pytest

pytestmark = pytest.mark.integration


def request(request_id: int, method: str, **params: Any) -> dict[str, Any]:
  return {
      "jsonrpc": "2.0",
      "id": request_id,
      "method": method,
      "params": params,
  }


@pytest.mark.conformance("P5-ADP-02")
async def test_a_chat_widget_opens_serves_and_tears_down_over_http(
    mcp_apps: Any, tmp_path: Path
) -> None:
  """P5-ADP-02 (backend half): bootstrap, app tools/call and
  resources/read, ui/message, ui/update-model-context and teardown all
  succeed through the adapter's routes."""
  async with served(
      mcp_apps, tmp_path, message_confirmation=attest_every_message
  ) as s:
    widget = await s.chat_widget()
    assert widget["state"] == "live"
    assert widget["toolsetId"] == "conf"
    assert widget["toolName"] == names.OPEN_VIEW
    opened = await s.open_view(widget)
    assert opened.status_code == 200, opened.text
    body = opened.json()
    view_id, lease = body["viewId"], body["lease"]
    assert "Conformance View" in body["view"]["html"]
    assert lease not in json.dumps(body["view"])

    stream_open = asyncio.Event()
    streamed: list[str] = []

    async def listen() -> None:
      async with s.client.stream(
          "GET",
          f"/mcp-apps/api/views/{view_id}/notifications",
          headers={"X-MCP-Apps-Lease": lease},
      ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith(
            "text/event-stream"
        )
        stream_open.set()
        async for line in response.aiter_lines():
          streamed.append(line)

    listener = asyncio.create_task(listen())
    await asyncio.wait(
        {listener, asyncio.create_task(stream_open.wait())},
        return_when=asyncio.FIRST_COMPLETED,
    )
    assert stream_open.is_set()

    called = await s.rpc(
        view_id,
        lease,
        request(1, "tools/call", name=names.SIDE_EFFECT, arguments={"key": "k"}),
    )
    assert called.status_code == 200, called.text
    assert "result" in called.json(), called.json()
    read = await s.rpc(
        view_id, lease, request(2, "resources/read", uri=names.VIEW_URI)
    )
    assert read.status_code == 200 and "result" in read.json(), read.text
    said = await s.rpc(
        view_id,
        lease,
        request(
            3,
            "ui/message",
            role="user",
            content=[{"type": "text", "text": "hello from the View"}],
        ),
    )
    assert said.status_code == 200 and "result" in said.json(), said.text
    updated = await s.rpc(
        view_id,
        lease,
        request(
            4,
            "ui/update-model-context",
            content=[{"type": "text", "text": "the View's context"}],
        ),
    )
    assert updated.status_code == 200, updated.text
    assert "result" in updated.json(), updated.json()

    closed = await s.teardown(view_id, lease)
    assert closed.status_code == 204, closed.text
    await listener  # The notification stream ends with the View.
    assert s.adapter is not None
    after = await s.rpc(
        view_id, lease, request(5, "resources/read", uri=names.VIEW_URI)
    )
    assert after.status_code == 404
    assert after.json() == {"reason": "not_found"}
