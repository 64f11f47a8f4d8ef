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

"""Result shapes, multi-round tool calls, side effects and timing."""

from __future__ import annotations

import json
from pathlib import Path
import time
from typing import Any

import anyio
from mcp.shared.exceptions import MCPError
from mcp_apps_conformance_server import CANONICAL_LIMIT_BYTES
from mcp_apps_conformance_server import names
from mcp_apps_conformance_server import results
import mcp_types as types
import pytest

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    "fixture", ["legacy_http_server", "modern_http_server"]
)
async def test_ui_result_and_numbers(
    request: pytest.FixtureRequest, mcp_apps: Any, fixture: str
) -> None:
  server = request.getfixturevalue(fixture)
  async with mcp_apps.connect(server.url) as client:
    failed = await client.call_tool(
        names.UI_RESULT, {"is_error": True, "label": "bad"}
    )
    numbers = await client.call_tool(names.EXOTIC_NUMBERS, {})
  assert failed.is_error
  assert failed.content[0].text == "bad: for the model"
  assert failed.structured_content == {"label": "bad", "forView": True}
  assert failed.meta["conformance/private"] == {"label": "bad"}
  values = numbers.structured_content
  # The SDK's JSON-mode serialization nulls non-finite floats ...
  assert values["nan"] is None and values["positiveInfinity"] is None
  # ... and passes integers of any size and extreme floats unchanged.
  assert values["beyondSafeInteger"] == 2**53 + 1
  assert values["hugeInteger"] == 10**30
  assert values["negativeHugeInteger"] == -(2**70)
  assert values["largestFloat"] == 1e308
  assert values["smallestSubnormal"] == 5e-324
  assert "NaN" in numbers.content[0].text


@pytest.mark.parametrize(
    ("fixture", "preset", "size"),
    [
        ("legacy_http_server", "near_limit", results.NEAR_LIMIT_TEXT_BYTES),
        ("modern_http_server", "over_limit", results.OVER_LIMIT_TEXT_BYTES),
    ],
)
async def test_sized_results_straddle_the_limit(
    request: pytest.FixtureRequest,
    mcp_apps: Any,
    fixture: str,
    preset: str,
    size: int,
) -> None:
  server = request.getfixturevalue(fixture)
  async with mcp_apps.connect(server.url, max_sse_event_size=None) as client:
    sized = await client.call_tool(names.SIZED_RESULT, {"preset": preset})
    exact = await client.call_tool(names.SIZED_RESULT, {"text_bytes": 1234})
  assert len(sized.content[0].text) == size
  assert sized.meta["conformance/textBytes"] == size
  assert (size > CANONICAL_LIMIT_BYTES) == (preset == "over_limit")
  assert len(exact.content[0].text) == 1234


class _Inputs:
  """Client callbacks for the three input kinds, recording each call."""

  def __init__(self) -> None:
    self.calls: list[str] = []

  async def elicit(self, ctx: Any, params: Any) -> types.ElicitResult:
    self.calls.append("elicitation")
    return types.ElicitResult(action="accept", content={"approve": True})

  async def sample(self, ctx: Any, params: Any) -> types.CreateMessageResult:
    self.calls.append("sampling")
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="sampled"),
        model="fixture-model",
    )

  async def roots(self, ctx: Any) -> types.ListRootsResult:
    self.calls.append("roots")
    return types.ListRootsResult(roots=[types.Root(uri="file:///conformance")])

  def client_kwargs(self) -> dict[str, Any]:
    return {
        "elicitation_callback": self.elicit,
        "sampling_callback": self.sample,
        "list_roots_callback": self.roots,
    }


def _assert_gathered(result: Any, era: str) -> None:
  assert not result.is_error
  assert result.structured_content == {
      "era": era,
      "elicitationAction": "accept",
      "approved": True,
      "sampledText": "sampled",
      "roots": ["file:///conformance"],
  }


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_mrtr_over_stdio_by_era(mcp_apps: Any, mode: str) -> None:
  inputs = _Inputs()
  async with mcp_apps.connect(
      mcp_apps.stdio_parameters(), mode=mode, **inputs.client_kwargs()
  ) as client:
    if mode == "auto":
      first = await client.session.call_tool(
          names.MRTR_GATHER, {}, allow_input_required=True
      )
      assert isinstance(first, types.InputRequiredResult)
      methods = sorted(r.method for r in first.input_requests.values())
      assert methods == [
          "elicitation/create",
          "roots/list",
          "sampling/createMessage",
      ]
      assert first.request_state
      assert inputs.calls == []
    result = await client.call_tool(names.MRTR_GATHER, {})
  _assert_gathered(result, "modern" if mode == "auto" else "legacy")
  assert sorted(inputs.calls) == ["elicitation", "roots", "sampling"]


@pytest.mark.parametrize(
    "fixture", ["legacy_http_server", "modern_http_server"]
)
async def test_mrtr_over_http(
    request: pytest.FixtureRequest, mcp_apps: Any, fixture: str
) -> None:
  server = request.getfixturevalue(fixture)
  inputs = _Inputs()
  async with mcp_apps.connect(server.url, **inputs.client_kwargs()) as client:
    result = await client.call_tool(names.MRTR_GATHER, {})
    era = "modern" if client.protocol_version == "2026-07-28" else "legacy"
  _assert_gathered(result, era)
  assert sorted(inputs.calls) == ["elicitation", "roots", "sampling"]


_SINGLE_ROUND = {"single_round_tools": True}
_CALLBACK_OF = {
    "sampling": "sampling_callback",
    "elicitation": "elicitation_callback",
    "roots": "list_roots_callback",
}
_SINGLE_ROUND_ANSWERS = {
    "sampling": {"sampledText": "sampled"},
    "elicitation": {"elicitationAction": "accept", "approved": True},
    "roots": {"roots": ["file:///conformance"]},
}


def _single_round_target(
    transport: str, start_server: Any, mcp_apps: Any
) -> tuple[Any, str]:
  """The endpoint (with `single_round_tools`) and its client mode."""
  if transport == "stdio-legacy":
    return mcp_apps.stdio_parameters(_SINGLE_ROUND), "legacy"
  if transport == "stdio-modern":
    return mcp_apps.stdio_parameters(_SINGLE_ROUND), "auto"
  stateless = transport == "modern-http"
  return start_server(stateless=stateless, options=_SINGLE_ROUND).url, "auto"


@pytest.mark.parametrize(
    "transport", ["stdio-legacy", "stdio-modern", "legacy-http", "modern-http"]
)
async def test_single_round_tools_ask_exactly_their_one_round(
    start_server: Any, mcp_apps: Any, transport: str
) -> None:
  """Each single-round tool (UI and plain) triggers only its own callback."""
  target, mode = _single_round_target(transport, start_server, mcp_apps)
  era = "modern" if "modern" in transport else "legacy"
  async with mcp_apps.connect(target, mode=mode, apps=True) as client:
    tools = await _tools_by_name(client)
    for kind in ("sampling", "elicitation", "roots"):
      for tool in (
          names.SINGLE_ROUND_VIEW_TOOLS[kind],
          names.SINGLE_ROUND_PLAIN_TOOLS[kind],
      ):
        inputs = _Inputs()
        async with mcp_apps.connect(
            target, mode=mode, **inputs.client_kwargs()
        ) as caller:
          result = await caller.call_tool(tool, {})
        assert not result.is_error, (tool, result)
        assert result.structured_content == {
            "era": era,
            "round": kind,
            **_SINGLE_ROUND_ANSWERS[kind],
        }, tool
        assert inputs.calls == [kind], tool
  for kind, tool in names.SINGLE_ROUND_VIEW_TOOLS.items():
    assert tools[tool].meta["ui"] == {
        "resourceUri": names.VIEW_URI,
        "visibility": ["model", "app"],
    }, kind
  for tool in names.SINGLE_ROUND_PLAIN_TOOLS.values():
    assert not (tools[tool].meta or {}).get("ui"), tool


@pytest.mark.parametrize(
    "transport", ["stdio-legacy", "legacy-http", "modern-http"]
)
@pytest.mark.parametrize("kind", ["sampling", "elicitation", "roots"])
async def test_single_round_tool_without_the_capability_is_refused(
    start_server: Any, mcp_apps: Any, transport: str, kind: str
) -> None:
  """Undeclared capability: the SDK's error names it; no round is sent."""
  target, mode = _single_round_target(transport, start_server, mcp_apps)
  inputs = _Inputs()
  # Every callback but this round's one: its capability is not declared.
  kwargs = inputs.client_kwargs()
  del kwargs[_CALLBACK_OF[kind]]
  async with mcp_apps.connect(target, mode=mode, **kwargs) as client:
    for tool in (
        names.SINGLE_ROUND_VIEW_TOOLS[kind],
        names.SINGLE_ROUND_PLAIN_TOOLS[kind],
    ):
      with pytest.raises(MCPError, match=rf"declare the (form )?{kind} cap"):
        await client.call_tool(tool, {})
  assert inputs.calls == []


async def test_single_round_tools_are_off_by_default(
    legacy_http_server: Any, mcp_apps: Any
) -> None:
  async with mcp_apps.connect(legacy_http_server.url) as client:
    tools = await _tools_by_name(client)
  assert not set(names.SINGLE_ROUND_VIEW_TOOLS.values()) & set(tools)
  assert not set(names.SINGLE_ROUND_PLAIN_TOOLS.values()) & set(tools)
  assert names.MRTR_GATHER in tools


async def _tools_by_name(client: Any) -> dict[str, Any]:
  listing = await client.list_tools()
  assert listing.next_cursor is None
  return {tool.name: tool for tool in listing.tools}


async def test_side_effects_are_counted_across_processes(
    start_server: Any, start_proxy: Any, mcp_apps: Any, tmp_path: Path
) -> None:
  ledger = tmp_path / "effects.json"
  options = {"effects_file": str(ledger)}
  backends = [
      start_server(stateless=True, options=options).url for _ in range(2)
  ]
  proxy = start_proxy(backends)
  async with mcp_apps.connect(proxy.url) as client:
    answers = [
        (
            await client.call_tool(names.SIDE_EFFECT, {"key": "k"})
        ).structured_content
        for _ in range(4)
    ]
    other = await client.call_tool(names.SIDE_EFFECT, {"key": "other"})
    in_band = (
        await client.call_tool(names.READ_EFFECTS, {})
    ).structured_content
  assert [a["count"] for a in answers] == [1, 2, 3, 4]
  assert len({a["processNonce"] for a in answers}) == 2
  assert other.structured_content["count"] == 1
  on_disk = json.loads(ledger.read_text())
  assert on_disk["counts"] == {"k": 4, "other": 1}
  assert in_band["counts"] == on_disk["counts"]


@pytest.mark.parametrize("stateless", [False, True])
async def test_slow_operation_cancellation_is_recorded(
    start_server: Any, mcp_apps: Any, tmp_path: Path, stateless: bool
) -> None:
  ledger = tmp_path / "effects.json"
  server = start_server(
      stateless=stateless, options={"effects_file": str(ledger)}
  )
  started = anyio.Event()

  async def on_progress(progress: float, total: Any, message: Any) -> None:
    if message == "started":
      started.set()

  async with mcp_apps.connect(server.url) as client:
    async with anyio.create_task_group() as group:

      async def call() -> None:
        await client.call_tool(
            names.SLOW_OPERATION,
            {"ms": 60_000, "tag": "cancel-me"},
            progress_callback=on_progress,
        )

      group.start_soon(call)
      with anyio.fail_after(15):
        await started.wait()
      group.cancel_scope.cancel()
    # The server records the cancellation after the client abandons the
    # call; wait for that record with a deadline.
    deadline = time.monotonic() + 10
    events: list[str] = []
    while time.monotonic() < deadline:
      events = json.loads(ledger.read_text())["events"]
      if "slow:cancelled:cancel-me" in events:
        break
      await anyio.sleep(0.05)
  assert events[:2] == ["slow:started:cancel-me", "slow:cancelled:cancel-me"]


@pytest.mark.parametrize(
    "fixture", ["legacy_http_server", "modern_http_server"]
)
async def test_terminal_response_overtakes_blocked_progress_handler(
    request: pytest.FixtureRequest, mcp_apps: Any, fixture: str
) -> None:
  server = request.getfixturevalue(fixture)
  release = anyio.Event()
  order: list[str] = []

  async def on_progress(progress: float, total: Any, message: Any) -> None:
    order.append(f"progress {progress:g} entered")
    await release.wait()
    order.append(f"progress {progress:g} done")

  async with mcp_apps.connect(server.url) as client:
    with anyio.fail_after(15):
      result = await client.call_tool(
          names.PROGRESS_THEN_RESULT,
          {"steps": 2},
          progress_callback=on_progress,
      )
    order.append("terminal response")
    release.set()
    with anyio.fail_after(5):
      while sum(entry.endswith("done") for entry in order) < 2:
        await anyio.sleep(0.01)
  assert result.structured_content == {"steps": 2}
  terminal = order.index("terminal response")
  assert all(not e.endswith("done") for e in order[:terminal])
  assert (
      order.count("progress 1 entered") + order.count("progress 2 entered") == 2
  )
