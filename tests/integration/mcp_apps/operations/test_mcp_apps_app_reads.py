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

"""Governed View `resources/read` execution (RFC §6 "resources/read").

`run_app_read` is driven on a real View's hold: a Runner turn renders
`open_view` from the conformance server, and the test takes that widget's
render reservation, the hold the View's generation is pinned by. The
server's request log proves what reached the server (nothing, for a denied
request URI); its bundle reads (`ui://conformance/bundle/...`) serve the
response shapes: sub-resources under one prefix, an extra out-of-prefix
item, items that differ only in spelling. Each case runs on stdio (the
2025-11-25 handshake era) and on stateless streamable HTTP (2026-07-28)
unless it is about one era's rounds.

The channel's own cases (lease revocation P4-READ-04, teardown during
suspension P4-READ-13, the served `serverResources` P4-READ-14, the
admission gate P4-READ-16, the rate limit of P4-READ-12) are the channel's
tests.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
import dataclasses
from pathlib import Path
from typing import Any

from google.adk.dependencies._mcp import McpError
from google.adk.mcp_apps.operations.app_read import ReadLimits
from google.adk.mcp_apps.operations.app_read import ReadRejection
from google.adk.mcp_apps.operations.app_read import run_app_read
from google.adk.mcp_apps.operations.errors import OperationError
from google.adk.mcp_apps.operations.errors import OperationErrorReason
from google.adk.mcp_apps.resources import canonicalize
from mcp import types as mcp_types
from mcp_apps_conformance_server import names
from mcp_apps_conformance_server import views
import pytest
from read_support import LIMITS
from read_support import READ
from read_support import TRANSPORTS
from read_support import view_reads
from read_support import ViewReads
from sealing_support import ServerGate

pytestmark = pytest.mark.integration


@pytest.fixture(params=TRANSPORTS)
async def view(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    mcp_apps: Any,
    start_server: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[ViewReads]:
  """A View's reads on stdio (handshake era) and stateless HTTP (2026)."""
  async with view_reads(
      request.param, tmp_path, mcp_apps, start_server, monkeypatch
  ) as reads:
    yield reads


@pytest.fixture
async def modern_view(
    tmp_path: Path,
    mcp_apps: Any,
    start_server: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[ViewReads]:
  """A View's reads on stateless HTTP (2026-07-28), the asking read on."""
  async with view_reads(
      "modern_http",
      tmp_path,
      mcp_apps,
      start_server,
      monkeypatch,
      asking_read=True,
  ) as reads:
    yield reads


def _sizes(result: mcp_types.ReadResourceResult) -> list[int]:
  """Each item's bytes: UTF-8 text, decoded blob."""
  return [
      len(item.text.encode())
      if isinstance(item, mcp_types.TextResourceContents)
      else len(base64.b64decode(item.blob))
      for item in result.contents
  ]


# --- P4-READ-01: a terminal read ---------------------------------------------


@pytest.mark.conformance("P4-READ-01")
async def test_in_policy_read_returns_one_validated_terminal_result(
    view: ViewReads,
) -> None:
  """P4-READ-01: the View's own URI is read once and returned validated."""
  before = view.reads()
  result, uris = await view.read(names.VIEW_URI)

  assert view.reads() - before == 1
  assert isinstance(result, mcp_types.ReadResourceResult)
  assert result.result_type in (None, "complete")
  (item,) = result.contents
  assert item.uri == names.VIEW_URI
  assert item.mime_type == names.APP_MIME_TYPE
  assert "Conformance View" in item.text
  assert uris == (canonicalize(names.VIEW_URI),)
  # The same response is refused under limits it does not fit: the result
  # above was returned only because it passed them.
  await view.rejected(
      names.VIEW_URI,
      limits=ReadLimits(
          max_item_bytes=_sizes(result)[0] - 1,
          max_total_bytes=LIMITS.delivery.max_response_bytes,
          max_items=1,
      ),
  )


@pytest.mark.conformance("P4-READ-01")
async def test_server_json_rpc_error_propagates_unchanged(
    view: ViewReads,
) -> None:
  """A server's own JSON-RPC error is raised as the server sent it."""
  missing = names.URI_PREFIX + "missing.html"
  before = view.reads()
  with pytest.raises(McpError) as info:
    await view.read(missing)
  assert view.reads() - before == 1
  assert missing in info.value.error.message
  # The generation is fine: the next read succeeds on the same hold.
  result, _ = await view.read(names.VIEW_URI)
  assert result.contents[0].uri == names.VIEW_URI


# --- P4-READ-02: state-only MRTR inside one outer read -----------------------


@pytest.mark.conformance("P4-READ-02")
async def test_state_only_rounds_complete_inside_one_read(
    view: ViewReads,
) -> None:
  """P4-READ-02: the interactive read's rounds stay inside one read.

  At 2026-07-28 the server answers two state-only `InputRequiredResult`s
  before the View: three legs reach it, the channel's barrier runs before
  each further leg, and only the terminal result comes back. In the
  handshake era the same read is one round.
  """
  barriers: list[str] = []

  async def barrier() -> None:
    view.hold.check()  # Every leg stays on the View's own generation.
    barriers.append(view.hold.generation_id)

  before = view.reads()
  result, uris = await view.read(names.INTERACTIVE_URI, between_legs=barrier)

  rounds = 3 if view.transport == "modern_http" else 1
  assert view.reads() - before == rounds
  assert barriers == [view.hold.generation_id] * (rounds - 1)
  assert isinstance(result, mcp_types.ReadResourceResult)
  (item,) = result.contents
  assert f"served after {rounds} round(s)" in item.text
  assert uris == (canonicalize(names.INTERACTIVE_URI),)


@pytest.mark.conformance("P4-READ-02")
async def test_rounds_over_the_cap_fail_typed(modern_view: ViewReads) -> None:
  """P4-READ-02: a read needing more legs than the cap ends typed."""
  before = modern_view.reads()
  with pytest.raises(OperationError) as info:
    await run_app_read(modern_view.request(names.INTERACTIVE_URI, max_rounds=2))
  assert info.value.reason is OperationErrorReason.MRTR_ROUNDS_EXCEEDED
  assert modern_view.reads() - before == 2


@pytest.mark.conformance("P4-READ-02")
async def test_hold_released_between_legs_ends_the_read(
    modern_view: ViewReads,
) -> None:
  """P4-READ-02: a leg never runs once the View's hold is gone.

  The barrier before the second leg releases the View's hold (its
  teardown): the read ends with `VIEW_GENERATION_INVALIDATED` and the
  server saw only the first leg.
  """

  async def teardown() -> None:
    modern_view.hold.release()

  before = modern_view.reads()
  with pytest.raises(OperationError) as info:
    await modern_view.read(names.INTERACTIVE_URI, between_legs=teardown)
  assert info.value.reason is OperationErrorReason.VIEW_GENERATION_INVALIDATED
  assert modern_view.reads() - before == 1


# --- P4-READ-03: an input-request round fails closed -------------------------


@pytest.mark.conformance("P4-READ-03")
@pytest.mark.parametrize("kind", sorted(names.ASKING_URIS))
async def test_input_request_round_fails_closed(
    modern_view: ViewReads, kind: str
) -> None:
  """P4-READ-03: a 2026-07-28 read asking for input is refused, typed.

  The asking read's first round carries one input request (sampling,
  elicitation or roots); the app read gathers none: one leg reached the
  server and the read ends with `INPUT_REQUEST_REFUSED`.
  """
  before = modern_view.reads()
  with pytest.raises(OperationError) as info:
    await modern_view.read(names.ASKING_URIS[kind])
  assert info.value.reason is OperationErrorReason.INPUT_REQUEST_REFUSED
  assert kind in str(info.value)
  assert modern_view.reads() - before == 1


# --- P4-READ-05: the request URI is checked before any remote read -----------


@pytest.mark.conformance("P4-READ-05")
@pytest.mark.parametrize(
    "uri",
    [
        names.OUTSIDE_URI,
        views.MULTI_SCRIPT_URI,
        names.BUNDLE_LOOKALIKE_URI,
        names.URI_PREFIX + "bundle/../multi.html",
        names.UNLISTED_URI,
    ],
    ids=[
        "other-authority",
        "https",
        "prefix-lookalike",
        "dot-segment",
        "not-admitted",
    ],
)
async def test_out_of_policy_request_uri_is_denied_before_any_read(
    view: ViewReads, uri: str
) -> None:
  """P4-READ-05: denied with `RESOURCE_POLICY_DENIED`; nothing was sent."""
  before = view.reads()
  with pytest.raises(OperationError) as info:
    await view.read(uri)
  assert info.value.reason is OperationErrorReason.RESOURCE_POLICY_DENIED
  assert view.reads() == before


# --- P4-READ-06, 07, 08, 09, 15: response-side validation --------------------


@pytest.mark.conformance("P4-READ-06", "P4-READ-15")
async def test_one_extra_out_of_policy_item_rejects_the_whole_response(
    view: ViewReads,
) -> None:
  """P4-READ-06/15: the request URI passed; one returned item did not.

  `bundle/extra.html` is in policy and its first four items are too; the
  fifth, `bundle-evil/steal.js`, only looks as if it were under the
  prefix. The read reached the server and nothing is returned.
  """
  error = await view.rejected(names.BUNDLE_EXTRA_URI)
  assert error.rejection is ReadRejection.OUT_OF_POLICY
  assert error.index == len(views.BUNDLE_ITEMS)


@pytest.mark.conformance("P4-READ-07", "P1-DRD-02")
async def test_prefix_subresources_are_accepted_with_their_own_uris(
    view: ViewReads,
) -> None:
  """P4-READ-07: every item under the prefix entry is accepted.

  The whole `contents` array comes back, each item with the URI the server
  gave it (the last spelled in capitals, P1-DRD-02); the canonical URIs are
  returned beside them.
  """
  result, uris = await view.read(names.BUNDLE_URI)

  assert [item.uri for item in result.contents] == list(views.BUNDLE_ITEMS)
  assert uris == tuple(canonicalize(uri) for uri in views.BUNDLE_ITEMS)
  assert str(uris[-1]) == names.BUNDLE_PREFIX + "assets/app.js"
  assert result.contents[1].text == views.BUNDLE_LABELS_TEXT
  assert base64.b64decode(result.contents[2].blob) == views.BUNDLE_LOGO_BYTES


@pytest.mark.conformance("P4-READ-08")
@pytest.mark.parametrize(
    "uri",
    [names.DOUBLE_URI, names.BUNDLE_TWICE_URI],
    ids=["same-spelling", "respelled"],
)
async def test_duplicate_canonical_uris_reject_the_response(
    view: ViewReads, uri: str
) -> None:
  """P4-READ-08: two items with one canonical URI are rejected whole.

  `double.html` repeats its URI; `bundle/twice.html` respells it
  (`UI://Conformance/...#again`). Which item to deliver would be
  ambiguous, so neither is.
  """
  error = await view.rejected(uri)
  assert error.rejection is ReadRejection.DUPLICATE_URI
  assert error.index == 1


@pytest.mark.conformance("P4-READ-09", "P4-READ-15")
async def test_mixed_policy_response_is_rejected_whole(
    view: ViewReads,
) -> None:
  """P4-READ-09: in-policy and out-of-policy items mixed: all rejected.

  `multi.html` and `multi/part-2.html` are in policy;
  `ui://elsewhere/outside.html` and the CDN script are not.
  """
  error = await view.rejected(names.MULTI_URI)
  assert error.rejection is ReadRejection.OUT_OF_POLICY
  assert error.index == 2


# --- P4-READ-10, 11, 12: byte, item-count and time limits --------------------


@pytest.mark.conformance("P4-READ-10", "P4-READ-12")
@pytest.mark.parametrize(
    "uri", [names.VIEW_URI, names.BLOB_URI], ids=["text", "blob"]
)
async def test_item_over_the_per_item_limit_rejects_the_response(
    view: ViewReads, uri: str
) -> None:
  """P4-READ-10: an item one byte over the per-item limit is refused.

  Text counts its UTF-8 bytes, a blob its decoded bytes (not its base64
  text): at exactly the item's size the read is accepted.
  """
  result, _ = await view.read(uri)
  (size,) = _sizes(result)

  def limits(item: int) -> ReadLimits:
    return ReadLimits.of(LIMITS, max_item_bytes=item)

  error = await view.rejected(uri, limits=limits(size - 1))
  assert error.rejection is ReadRejection.ITEM_TOO_LARGE
  assert error.index == 0
  accepted, _ = await run_app_read(view.request(uri, limits=limits(size)))
  assert accepted.contents[0].uri == uri
  if uri == names.BLOB_URI:
    assert len(result.contents[0].blob) > size


@pytest.mark.conformance("P4-READ-11", "P4-READ-12")
async def test_response_over_the_aggregate_limit_is_rejected(
    view: ViewReads,
) -> None:
  """P4-READ-11: the bundle one byte over the total is refused.

  Every item fits the per-item limit; the running total crosses the
  aggregate limit at the last item. At exactly the total it is accepted.
  """
  result, _ = await view.read(names.BUNDLE_URI)
  sizes = _sizes(result)
  assert sizes[1] > len(views.BUNDLE_LABELS_TEXT)  # UTF-8, not characters.
  assert sizes[2] == len(views.BUNDLE_LOGO_BYTES)  # Decoded, not base64.

  def limits(total: int) -> ReadLimits:
    return ReadLimits(
        max_item_bytes=max(sizes), max_total_bytes=total, max_items=4
    )

  error = await view.rejected(names.BUNDLE_URI, limits=limits(sum(sizes) - 1))
  assert error.rejection is ReadRejection.TOTAL_TOO_LARGE
  assert error.index == len(sizes) - 1
  accepted, _ = await run_app_read(
      view.request(names.BUNDLE_URI, limits=limits(sum(sizes)))
  )
  assert len(accepted.contents) == len(sizes)


@pytest.mark.conformance("P4-READ-11", "P4-READ-12", "P5-LIM-04")
async def test_response_over_the_item_count_is_rejected(
    view: ViewReads,
) -> None:
  """P4-READ-11: four items where three are allowed: refused whole."""
  limits = dataclasses.replace(ReadLimits.of(LIMITS), max_items=3)
  error = await view.rejected(names.BUNDLE_URI, limits=limits)
  assert error.rejection is ReadRejection.TOO_MANY_ITEMS
  assert error.index is None


@pytest.mark.conformance("P4-READ-12")
async def test_read_held_at_the_server_past_the_time_limit_fails_typed(
    transport: str,
    tmp_path: Path,
    mcp_apps: Any,
    start_server: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
  """P4-READ-12 (time): a read held at the server's gate times out typed.

  The gated read reaches the server (the gate saw its tag) and waits there
  until the test opens the gate, which it does only after the read ended
  with `MRTR_TIMEOUT` (`max_seconds=3`). The late answer is dropped, the
  read was not sent again, and the View's generation still serves the next
  read.
  """
  async with ServerGate() as gate:
    async with view_reads(
        transport,
        tmp_path,
        mcp_apps,
        start_server,
        monkeypatch,
        gate_socket=gate.path,
    ) as view:
      uri = names.GATED_READ_TEMPLATE.format(tag="late")
      before = view.reads()
      task = asyncio.create_task(
          run_app_read(view.request(uri, max_seconds=3.0))
      )
      entered = asyncio.create_task(gate.entered.wait())
      try:
        done, _ = await asyncio.wait(
            {task, entered}, return_when=asyncio.FIRST_COMPLETED
        )
      finally:
        entered.cancel()
      assert entered in done  # Held at the server before the time ran out.
      with pytest.raises(OperationError) as info:
        await task
      assert info.value.reason is OperationErrorReason.MRTR_TIMEOUT
      gate.open()
      result, _ = await view.read(names.VIEW_URI)
      assert result.contents[0].uri == names.VIEW_URI
      assert gate.tags == ["late"]
      assert view.reads() - before == 2


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
  return str(request.param)


@pytest.mark.conformance("P4-READ-12")
async def test_rounds_past_the_time_limit_fail_typed(
    modern_view: ViewReads,
) -> None:
  """P4-READ-12 (time, between legs): the whole read has one deadline.

  The clock passes the read's `max_seconds` while the channel's barrier
  runs before the second leg: the read ends with `MRTR_TIMEOUT` and the
  second leg is never sent.
  """
  now = [100.0]

  async def slow_barrier() -> None:
    now[0] += 31.0

  before = modern_view.reads()
  with pytest.raises(OperationError) as info:
    await run_app_read(
        modern_view.request(names.INTERACTIVE_URI, max_seconds=30.0),
        between_legs=slow_barrier,
        clock=lambda: now[0],
    )
  assert info.value.reason is OperationErrorReason.MRTR_TIMEOUT
  assert modern_view.reads() - before == 1
