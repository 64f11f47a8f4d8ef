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

"""PR 1 bounded, paginated, fresh discovery at admission (P1-DISC-*).

Conformance cases P1-DISC-01 and 03..09 against the real conformance server,
each with exactly the pagination switch it needs (`page_size`,
`generated_tools`, `oversized_page*`, `slow_page*`, `repeat_cursor_page`,
`failing_page`), plus a killed server. Admission (`admit_app_call`) and the
model catalog (`McpToolset.get_tools()`, whose bound violations surface as
`ConnectionError` chained from the typed listing error) both list through
`list_all_tools`; both are checked to fail whole rather than fall back on
the pages already received.

The servers run with the `request_log_file` option (one request-log line per
inbound JSON-RPC message, see `observed_server` in `test_mcp_apps_catalogs.py`),
so page requests and the absence of any `tools/call` are read from what the
server received; P1-DISC-01 also switches on `removable_tools`.
P1-DISC-02 (the listing runs on the View's bound connection generation)
needs connection generations, which arrive with the host profile in PR 2.
"""

from __future__ import annotations

from collections.abc import Iterator
import contextlib
import importlib.util
import os
from pathlib import Path
import signal
import sys
import time
from types import ModuleType
from typing import Any

from google.adk.mcp_apps.catalog.app_catalog import list_app_catalog
from google.adk.mcp_apps.catalog.listing import ToolListingBounds
from google.adk.mcp_apps.catalog.listing import ToolListingError
from google.adk.mcp_apps.catalog.listing import ToolListingReason
from google.adk.mcp_apps.errors import DenialReason
from google.adk.mcp_apps.errors import McpAppVisibilityError
from mcp_apps_conformance_server import names
import pytest

pytestmark = pytest.mark.integration

PAGED = {"page_size": 5, "generated_tools": 20}
"""About 40 tools in pages of 5; `open_view` is on page 0."""
TARGET = names.OPEN_VIEW
GENEROUS = ToolListingBounds()


def _load_catalogs_module() -> ModuleType:
  """Imports the sibling catalogs test module (its observed-server helpers)."""
  name = "_adk_mcp_apps_catalogs_helpers"
  if name in sys.modules:
    return sys.modules[name]
  path = Path(__file__).resolve().with_name("test_mcp_apps_catalogs.py")
  spec = importlib.util.spec_from_file_location(name, path)
  assert spec and spec.loader
  module = importlib.util.module_from_spec(spec)
  sys.modules[name] = module
  spec.loader.exec_module(module)
  return module


catalogs = _load_catalogs_module()


@pytest.fixture
def observed(tmp_path: Path, mcp_apps: Any) -> Iterator[Any]:
  """Factory: an observed server with the given switches, per test."""
  with contextlib.ExitStack() as stack:

    def start(
        switches: dict[str, Any], transport: str = "stdio", admin: bool = False
    ) -> Any:
      log = tmp_path / f"requests-{len(list(tmp_path.glob('*.jsonl')))}.jsonl"
      log.touch()
      return stack.enter_context(
          catalogs.observed_server(
              transport,
              mcp_apps,
              log,
              switches=switches,
              admin=admin,
          )
      )

    yield start


def _alive(pid: int, timeout: float = 10.0) -> bool:
  """Whether `pid` still runs once SIGKILL had `timeout` s to land."""
  deadline = time.monotonic() + timeout
  while time.monotonic() < deadline:
    try:
      stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
      return False
    if stat[stat.rfind(")") + 2] in "ZX":
      return False
    time.sleep(0.01)
  return True


async def _denied_listing(
    session: Any, bounds: ToolListingBounds, tool_name: str = TARGET
) -> BaseException:
  """Admission of `tool_name` must fail on the listing; returns the cause."""
  with pytest.raises(McpAppVisibilityError) as denied:
    await catalogs.admit(session, tool_name, bounds=bounds)
  assert denied.value.reason is DenialReason.LISTING_FAILED
  cause = denied.value.__cause__
  assert isinstance(cause, ToolListingError)
  return cause


async def _model_catalog_fails(toolset: Any) -> BaseException:
  """`get_tools` fails whole; returns the typed error it was chained from."""
  with pytest.raises(ConnectionError) as failed:
    await toolset.get_tools()
  cause: BaseException | None = failed.value
  while cause is not None and not isinstance(cause, ToolListingError):
    cause = cause.__cause__
  assert cause is not None, f"no typed listing error under {failed.value!r}"
  return cause


async def _denied_everywhere(
    endpoint: Any,
    bounds: ToolListingBounds | None = None,
    *,
    control: bool = False,
) -> tuple[BaseException, list[dict[str, Any]], BaseException]:
  """Admission and the model catalog both fail on one toolset's listing.

  Args:
    endpoint: The observed server.
    bounds: The toolset's listing bounds; none means the defaults, and
      admission is then tried within `GENEROUS`.
    control: Whether an admission within `GENEROUS` on the same session
      must then succeed (the connection survives the denial).

  Returns:
    The admission's typed cause, the requests the denied admission made, and
    the model catalog's typed cause.
  """
  if bounds is None:
    toolset = endpoint.toolset()
  else:
    toolset = endpoint.toolset(tool_listing_bounds=bounds)
  try:
    async with catalogs.app_session(endpoint, toolset) as session:
      mark = endpoint.mark()
      cause = await _denied_listing(session, bounds or GENEROUS)
      requests = endpoint.requests(mark)
      if control:
        assert (await catalogs.admit(session, TARGET, bounds=GENEROUS)).name
    model_cause = await _model_catalog_fails(toolset)
  finally:
    await toolset.close()
  return cause, requests, model_cause


@pytest.mark.conformance("P1-DISC-01")
@pytest.mark.parametrize("transport", ["stdio", "legacy-http"])
async def test_admission_lists_afresh_past_ttl_cache(
    observed: Any, transport: str
) -> None:
  """P1-DISC-01: a tool gone from the fresh listing is denied, cache or not."""
  endpoint = observed(PAGED, transport, admin=True)
  toolset = endpoint.toolset(tool_list_cache_ttl_seconds=3600)
  try:
    before = {t.name for t in await toolset.get_tools()}
    async with catalogs.app_session(endpoint, toolset) as session:
      admitted = await catalogs.admit(session, names.SIDE_EFFECT)
      await session.call_tool(
          names.REMOVE_LISTED_TOOL, {"name": names.SIDE_EFFECT}
      )
      mark = endpoint.mark()
      cached = {t.name for t in await toolset.get_tools()}
      after_model_turn = endpoint.mark()
      with pytest.raises(McpAppVisibilityError) as denied:
        await catalogs.admit(session, names.SIDE_EFFECT)
      requests = endpoint.requests(mark)
  finally:
    await toolset.close()
  assert admitted.name == names.SIDE_EFFECT
  assert names.SIDE_EFFECT in before
  # The model turn was served from the TTL cache: no listing was issued.
  assert after_model_turn == mark
  assert names.SIDE_EFFECT in cached
  assert denied.value.reason is DenialReason.NOT_LISTED
  # Admission listed afresh, every page (about 40 tools in pages of 5) ...
  pages = [r for r in requests if r["method"] == "tools/list"]
  assert len(pages) >= 8
  assert pages[0]["cursor"] is None
  assert all(page["cursor"] for page in pages[1:])
  # ... and made no call.
  assert [r for r in requests if r["method"] == "tools/call"] == []


@pytest.mark.conformance("P1-DISC-03")
async def test_page_bound_denies_admission(observed: Any) -> None:
  """P1-DISC-03: a listing over the page-count bound denies admission."""
  endpoint = observed(PAGED)
  bounds = ToolListingBounds(max_pages=3)
  unbounded = endpoint.toolset()
  try:
    # Control: the same catalog within the default bounds is admitted.
    cause, requests, model_cause = await _denied_everywhere(
        endpoint, bounds, control=True
    )
    everything = {t.name for t in await unbounded.get_tools()}
  finally:
    await unbounded.close()
  assert cause.reason is ToolListingReason.BOUND_EXCEEDED
  assert (cause.bound, cause.limit) == ("pages", 3)
  assert [r["method"] for r in requests] == ["tools/list"] * 3
  assert model_cause.reason is ToolListingReason.BOUND_EXCEEDED
  assert model_cause.bound == "pages"
  # The model catalog follows every page: the last generated tool is there.
  assert f"{names.GENERATED_PREFIX}0019" in everything


@pytest.mark.conformance("P1-DISC-04")
async def test_item_bound_denies_admission(observed: Any) -> None:
  """P1-DISC-04: a listing over the item-count bound denies admission."""
  endpoint = observed(dict(PAGED, oversized_page=1, oversized_page_items=40))
  bounds = ToolListingBounds(max_items=30)
  cause, requests, model_cause = await _denied_everywhere(
      endpoint, bounds, control=True
  )
  assert cause.reason is ToolListingReason.BOUND_EXCEEDED
  assert (cause.bound, cause.limit) == ("items", 30)
  # Page 0 (5 items) and the oversized page 1 (45 items): stopped there.
  assert [r["method"] for r in requests] == ["tools/list"] * 2
  assert model_cause.reason is ToolListingReason.BOUND_EXCEEDED
  assert model_cause.bound == "items"


@pytest.mark.conformance("P1-DISC-05")
async def test_byte_bound_denies_admission(observed: Any) -> None:
  """P1-DISC-05: a listing over the byte bound denies admission."""
  endpoint = observed(
      dict(PAGED, oversized_page=1, oversized_page_bytes=200_000)
  )
  bounds = ToolListingBounds(max_bytes=100_000)
  cause, requests, model_cause = await _denied_everywhere(
      endpoint, bounds, control=True
  )
  assert cause.reason is ToolListingReason.BOUND_EXCEEDED
  assert (cause.bound, cause.limit) == ("bytes", 100_000)
  assert [r["method"] for r in requests] == ["tools/list"] * 2
  assert model_cause.reason is ToolListingReason.BOUND_EXCEEDED
  assert model_cause.bound == "bytes"


@pytest.mark.conformance("P1-DISC-06")
async def test_time_bound_denies_admission(observed: Any) -> None:
  """P1-DISC-06: a listing over the time bound denies admission."""
  slow_ms = 1_000
  endpoint = observed(dict(PAGED, slow_page=1, slow_page_ms=slow_ms))
  bounds = ToolListingBounds(max_seconds=0.3)
  toolset = endpoint.toolset(tool_listing_bounds=bounds)
  try:
    async with catalogs.app_session(endpoint, toolset) as session:
      mark = endpoint.mark()
      started = time.monotonic()
      cause = await _denied_listing(session, bounds)
      elapsed = time.monotonic() - started
      requests = endpoint.requests(mark)
      # The connection survives the abandoned page: a later admission with
      # room for the slow page is admitted on the same session.
      assert (await catalogs.admit(session, TARGET, bounds=GENEROUS)).name
  finally:
    await toolset.close()
  assert cause.reason is ToolListingReason.BOUND_EXCEEDED
  assert (cause.bound, cause.limit) == ("seconds", 0.3)
  # Denied at the bound, without waiting for the slow page.
  assert elapsed < slow_ms / 1000
  assert [r["cursor"] is None for r in requests] == [True, False]


@pytest.mark.conformance("P1-DISC-07")
async def test_repeated_cursor_denies_without_looping(
    observed: Any,
) -> None:
  """P1-DISC-07: a repeated `nextCursor` is detected; the listing stops."""
  endpoint = observed(dict(PAGED, repeat_cursor_page=2))
  cause, requests, model_cause = await _denied_everywhere(endpoint)
  assert cause.reason is ToolListingReason.REPEATED_CURSOR
  assert cause.page == 3
  assert model_cause.reason is ToolListingReason.REPEATED_CURSOR
  # Page 0, page 1, page 2 (which hands back its own cursor): then stop.
  assert [r["method"] for r in requests] == ["tools/list"] * 3
  cursors = [r["cursor"] for r in requests]
  assert cursors[0] is None and cursors[1] != cursors[2]


@pytest.mark.conformance("P1-DISC-08")
@pytest.mark.parametrize(
    ("switches", "bounds", "expected"),
    [
        (
            {"oversized_page": 2, "oversized_page_items": 40},
            ToolListingBounds(max_items=30),
            ToolListingReason.BOUND_EXCEEDED,
        ),
        (
            {"repeat_cursor_page": 2},
            GENEROUS,
            ToolListingReason.REPEATED_CURSOR,
        ),
        ({"failing_page": 2}, GENEROUS, ToolListingReason.REQUEST_FAILED),
    ],
    ids=["items", "repeated-cursor", "failing-page"],
)
async def test_partial_catalog_is_never_consulted(
    observed: Any,
    mcp_apps: Any,
    switches: dict[str, Any],
    bounds: ToolListingBounds,
    expected: ToolListingReason,
) -> None:
  """P1-DISC-08: after a violation, a tool already received is still denied."""
  endpoint = observed(dict(PAGED, **switches))
  toolset = endpoint.toolset(tool_listing_bounds=bounds)
  try:
    async with catalogs.app_session(endpoint, toolset) as session:
      first_page = (await session.list_tools()).tools
      mark = endpoint.mark()
      cause = await _denied_listing(session, bounds)
      requests = endpoint.requests(mark)
      with pytest.raises(
          ToolListingError, check=lambda e: e.reason is expected
      ):
        await list_app_catalog(session, bounds=bounds)
    model_cause = await _model_catalog_fails(toolset)
  finally:
    await toolset.close()
  assert TARGET in [t.name for t in first_page]
  assert cause.reason is expected
  assert model_cause.reason is expected
  # Pages 0, 1 and the violating page 2 were received; nothing was called.
  assert [r["method"] for r in requests] == ["tools/list"] * 3


@pytest.mark.conformance("P1-DISC-09")
async def test_failing_page_denies_admission(observed: Any) -> None:
  """P1-DISC-09: a JSON-RPC error on a later page denies admission."""
  endpoint = observed(dict(PAGED, failing_page=1, failing_page_code=-32050))
  cause, requests, model_cause = await _denied_everywhere(endpoint)
  assert cause.reason is ToolListingReason.REQUEST_FAILED
  assert "page 2 failed" in str(cause)
  assert "-32050" in str(cause) or "fails on purpose" in str(cause)
  assert model_cause.reason is ToolListingReason.REQUEST_FAILED
  assert [r["method"] for r in requests] == ["tools/list"] * 2


@pytest.mark.conformance("P1-DISC-09")
@pytest.mark.parametrize("transport", ["stdio", "legacy-http"])
async def test_killed_server_denies_admission(
    observed: Any, transport: str
) -> None:
  """P1-DISC-09: a transport failure (the server was killed) denies admission."""
  endpoint = observed(PAGED, transport)
  toolset = endpoint.toolset()
  bounds = ToolListingBounds(max_seconds=10)
  try:
    async with catalogs.app_session(endpoint, toolset) as session:
      assert (await catalogs.admit(session, TARGET, bounds=bounds)).name
      if transport == "stdio":
        who = await session.call_tool(names.WHOAMI, {})
        pid = who.structured_content["pid"]
        os.kill(pid, signal.SIGKILL)
      else:
        pid = endpoint.process.pid
        endpoint.process.stop()
      assert not _alive(pid)
      started = time.monotonic()
      cause = await _denied_listing(session, bounds)
      elapsed = time.monotonic() - started
  finally:
    await toolset.close()
  assert isinstance(cause, ToolListingError)
  assert elapsed < bounds.max_seconds
