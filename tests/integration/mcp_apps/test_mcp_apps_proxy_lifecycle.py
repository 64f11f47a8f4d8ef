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

"""`HostBoundMcpToolset` lifecycle against the real conformance server.

Cases P2-LIFE-01 .. P2-LIFE-09. Races are forced with the proxy's
`_materialize_hook` injection point and asyncio events, never with sleeps.
Every race test records the four things P2-LIFE-08 asks for: the losing
operation's typed outcome, the construction count, the close count and
post-close use. Server processes are counted with `child_pids` (stdio) to
prove each close terminated exactly what was opened.
"""

from __future__ import annotations

import asyncio
from typing import Any

from binding_support import http_spec
from binding_support import stdio_spec
from google.adk.mcp_apps.binding.client_extensions import AppsClientBinding
from google.adk.mcp_apps.binding.errors import IllegalTransitionError
from google.adk.mcp_apps.binding.errors import ToolsetClosedError
from google.adk.mcp_apps.binding.proxy import HostBoundMcpToolset
from google.adk.mcp_apps.binding.proxy import ProxyState
from google.adk.mcp_apps.binding.spec import McpToolsetSpec
from google.adk.tools.mcp_tool import McpToolset
from mcp_apps_conformance_server import names
import pytest

pytestmark = pytest.mark.integration

S = ProxyState


async def _whoami(proxy: HostBoundMcpToolset) -> dict[str, Any]:
  result = await proxy.call_tool(names.WHOAMI)
  assert not result.is_error, result
  assert isinstance(result.structured_content, dict)
  return result.structured_content


class Blocker:
  """An injection point: `hook` parks until `release()`."""

  def __init__(self) -> None:
    self.entered = asyncio.Event()
    self.released = asyncio.Event()
    self.calls = 0

  async def hook(self) -> None:
    self.calls += 1
    self.entered.set()
    await self.released.wait()

  def release(self) -> None:
    self.released.set()


def _proxy(spec: McpToolsetSpec, **kwargs: Any) -> HostBoundMcpToolset:
  return HostBoundMcpToolset(spec, toolset_id="conf", **kwargs)


async def _assert_post_close_use_raises(
    proxy: HostBoundMcpToolset, listed: list[Any] | None = None
) -> None:
  with pytest.raises(ToolsetClosedError):
    await proxy.get_tools()
  with pytest.raises(ToolsetClosedError):
    await proxy.call_tool(names.WHOAMI)
  with pytest.raises(ToolsetClosedError):
    await proxy.read_resource_by_uri(names.VIEW_URI)
  with pytest.raises(ToolsetClosedError):
    await proxy.materialize()
  for tool in listed or []:
    with pytest.raises(ToolsetClosedError):
      await tool.run_async(args={}, tool_context=None)


# --- P2-LIFE-01 --------------------------------------------------------------


@pytest.mark.conformance("P2-LIFE-01")
@pytest.mark.parametrize("bound", [False, True], ids=["model_only", "bound"])
async def test_only_the_declared_transitions_are_reachable(
    legacy_http_server: Any, bound: bool
) -> None:
  """P2-LIFE-01: the path is exactly the RFC's; illegal steps raise."""
  binding = AppsClientBinding.for_mcp_apps() if bound else None
  proxy = _proxy(
      http_spec(legacy_http_server.url), _apps_client_binding=binding
  )
  with pytest.raises(IllegalTransitionError):
    proxy._transition(S.MODEL_ONLY)  # pylint: disable=protected-access
  with pytest.raises(IllegalTransitionError):
    proxy._transition(S.REVOKING)  # pylint: disable=protected-access
  who = await _whoami(proxy)
  assert who["supportsApps"] is bound
  serving = S.PROFILE_BOUND if bound else S.MODEL_ONLY
  assert proxy.state is serving
  for illegal in (S.UNMATERIALIZED, S.MATERIALIZING, S.CLOSED):
    with pytest.raises(IllegalTransitionError):
      proxy._transition(illegal)  # pylint: disable=protected-access
  assert await proxy._aclose()  # pylint: disable=protected-access
  assert proxy.history == (
      S.UNMATERIALIZED,
      S.MATERIALIZING,
      serving,
      S.REVOKING,
      S.CLOSED,
  )
  for target in S:
    with pytest.raises(IllegalTransitionError):
      proxy._transition(target)  # pylint: disable=protected-access


# --- P2-LIFE-02 / P2-LIFE-08 -------------------------------------------------


@pytest.mark.conformance("P2-LIFE-02", "P2-LIFE-08")
async def test_concurrent_materializations_construct_once(
    mcp_apps: Any,
) -> None:
  """P2-LIFE-02 (and the P2-LIFE-08 record): one construction, one process."""
  before = mcp_apps.child_pids()
  blocker = Blocker()
  proxy = _proxy(
      stdio_spec(mcp_apps.stdio_parameters()), _materialize_hook=blocker.hook
  )
  tasks = [asyncio.create_task(proxy.get_tools()) for _ in range(5)]
  await blocker.entered.wait()
  assert proxy.state is S.MATERIALIZING
  blocker.release()
  listings = await asyncio.gather(*tasks)
  assert blocker.calls == 1
  assert proxy.construction_count == 1
  assert all(
      {t.name for t in tools} == {t.name for t in listings[0]}
      for tools in listings
  )
  spawned = mcp_apps.child_pids() - before
  assert len(spawned) == 1  # One runtime, one pooled stdio process.
  assert await proxy._aclose()  # pylint: disable=protected-access
  # The four records.
  assert proxy.construction_count == 1
  assert proxy.close_count == 1
  assert not (mcp_apps.child_pids() & spawned)
  await _assert_post_close_use_raises(proxy, listings[0][:1])


@pytest.mark.conformance("P2-LIFE-08")
async def test_cancelled_materializer_leaves_one_construction(
    legacy_http_server: Any,
) -> None:
  """P2-LIFE-08: the losing (cancelled) materializer constructs nothing."""
  blocker = Blocker()
  proxy = _proxy(
      http_spec(legacy_http_server.url), _materialize_hook=blocker.hook
  )
  loser = asyncio.create_task(proxy.materialize())
  await blocker.entered.wait()
  waiter = asyncio.create_task(proxy.materialize())
  loser.cancel()
  with pytest.raises(asyncio.CancelledError):
    await loser
  # The waiter took over materialization and parks in the hook in turn.
  blocker.release()
  runtime = await waiter
  assert isinstance(runtime, McpToolset)
  assert proxy.history[:4] == (
      S.UNMATERIALIZED,
      S.MATERIALIZING,
      S.UNMATERIALIZED,
      S.MATERIALIZING,
  )
  assert proxy.construction_count == 1
  assert (await _whoami(proxy))["supportsApps"] is False
  assert await proxy._aclose()  # pylint: disable=protected-access
  assert proxy.close_count == 1
  await _assert_post_close_use_raises(proxy)


# --- P2-LIFE-03 --------------------------------------------------------------


@pytest.mark.conformance("P2-LIFE-03")
async def test_close_before_materialize_constructs_nothing(
    mcp_apps: Any,
) -> None:
  """P2-LIFE-03: zero constructions, zero processes, ends CLOSED."""
  before = mcp_apps.child_pids()
  proxy = _proxy(stdio_spec(mcp_apps.stdio_parameters()))
  assert await proxy._aclose()  # pylint: disable=protected-access
  assert proxy.state is S.CLOSED
  assert proxy.history == (S.UNMATERIALIZED, S.CLOSED)
  assert proxy.construction_count == 0 and proxy.close_count == 0
  await _assert_post_close_use_raises(proxy)
  assert proxy.construction_count == 0
  assert mcp_apps.child_pids() == before


# --- P2-LIFE-04 --------------------------------------------------------------


@pytest.mark.conformance("P2-LIFE-04", "P2-LIFE-08")
async def test_close_waits_for_materialization_and_closes_once(
    mcp_apps: Any,
) -> None:
  """P2-LIFE-04 (with the P2-LIFE-08 record)."""
  before = mcp_apps.child_pids()
  blocker = Blocker()
  proxy = _proxy(
      stdio_spec(mcp_apps.stdio_parameters()), _materialize_hook=blocker.hook
  )
  lister = asyncio.create_task(proxy.get_tools())
  await blocker.entered.wait()
  closer = asyncio.create_task(
      proxy._aclose()  # pylint: disable=protected-access
  )
  for _ in range(20):  # Let the closer run as far as it can.
    await asyncio.sleep(0)
  assert not closer.done()
  assert proxy.state is S.MATERIALIZING
  blocker.release()
  closed, listed = await asyncio.gather(closer, lister, return_exceptions=True)
  assert closed is True
  # The losing lister either listed before the close admitted it, or was
  # refused with the typed error; it never hangs or constructs again.
  assert isinstance(listed, (list, ToolsetClosedError)), listed
  assert proxy.construction_count == 1
  assert proxy.close_count == 1
  assert proxy.state is S.CLOSED
  assert mcp_apps.child_pids() == before
  await _assert_post_close_use_raises(proxy)


# --- P2-LIFE-05 --------------------------------------------------------------


@pytest.mark.conformance("P2-LIFE-05")
async def test_close_is_idempotent(mcp_apps: Any) -> None:
  """P2-LIFE-05: concurrent and repeated closes close once."""
  before = mcp_apps.child_pids()
  proxy = _proxy(stdio_spec(mcp_apps.stdio_parameters()))
  await _whoami(proxy)
  assert len(mcp_apps.child_pids() - before) == 1
  first, second = await asyncio.gather(
      proxy._aclose(), proxy._aclose()  # pylint: disable=protected-access
  )
  assert [first, second].count(True) == 1
  assert await proxy._aclose() is False  # pylint: disable=protected-access
  assert proxy.close_count == 1 and proxy.construction_count == 1
  assert mcp_apps.child_pids() == before


# --- P2-LIFE-06 --------------------------------------------------------------


@pytest.mark.conformance("P2-LIFE-06")
async def test_use_after_close_is_typed(
    legacy_http_server: Any,
) -> None:
  """P2-LIFE-06: get_tools, call, read (bootstrap's read) and old tools."""
  proxy = _proxy(http_spec(legacy_http_server.url))
  tools = await proxy.get_tools()
  assert tools
  await proxy._aclose()  # pylint: disable=protected-access
  await _assert_post_close_use_raises(proxy, tools)
  # The runtime's session manager cannot reopen a connection either.
  assert proxy.runtime is not None
  with pytest.raises(ToolsetClosedError):
    await proxy.runtime._mcp_session_manager.create_session()  # pylint: disable=protected-access
  assert proxy.construction_count == 1 and proxy.close_count == 1


# --- P2-LIFE-07 --------------------------------------------------------------


@pytest.mark.conformance("P2-LIFE-07")
async def test_late_binding_after_model_only_is_rejected(
    legacy_http_server: Any,
) -> None:
  """P2-LIFE-07: MODEL_ONLY is terminal; nothing starts advertising."""
  proxy = _proxy(http_spec(legacy_http_server.url))
  assert (await _whoami(proxy))["supportsApps"] is False
  assert proxy.state is S.MODEL_ONLY
  with pytest.raises(IllegalTransitionError):
    proxy._bind_apps(AppsClientBinding.for_mcp_apps())  # pylint: disable=protected-access
  assert proxy.state is S.MODEL_ONLY
  assert (await _whoami(proxy))["supportsApps"] is False
  assert proxy.construction_count == 1
  await proxy._aclose()  # pylint: disable=protected-access
  with pytest.raises(ToolsetClosedError):
    proxy._bind_apps(AppsClientBinding.for_mcp_apps())  # pylint: disable=protected-access


# --- P2-LIFE-09 --------------------------------------------------------------


class CountingFilter:
  """A `ToolPredicate` that counts how often each tool is asked about."""

  def __init__(self, keep: set[str]) -> None:
    self.keep = keep
    self.seen: list[str] = []

  def __call__(self, tool: Any, readonly_context: Any = None) -> bool:
    self.seen.append(tool.name)
    return tool.name in self.keep


@pytest.mark.conformance("P2-LIFE-09")
async def test_filter_and_prefix_are_applied_once(
    legacy_http_server: Any,
) -> None:
  """P2-LIFE-09: the runtime applies both; no doubled prefix, one filter run."""
  keep = {names.WHOAMI, names.OPEN_VIEW}
  counting = CountingFilter(keep)
  spec = http_spec(
      legacy_http_server.url, tool_filter=counting, tool_name_prefix="conf"
  )
  proxy = _proxy(spec)
  assert proxy.tool_filter is None and proxy.tool_name_prefix is None
  tools = await proxy.get_tools()
  assert sorted(t.name for t in tools) == sorted(f"conf_{n}" for n in keep)
  assert all(not t.name.startswith("conf_conf_") for t in tools)
  declarations = {t._get_declaration().name for t in tools}  # pylint: disable=protected-access
  assert declarations == {f"conf_{n}" for n in keep}
  # One listing: the filter saw each model-visible tool exactly once.
  assert len(counting.seen) == len(set(counting.seen))
  # The same spec as a plain toolset gives the same names.
  plain = spec.build()
  try:
    assert sorted(t.name for t in await plain.get_tools_with_prefix()) == (
        sorted(t.name for t in tools)
    )
  finally:
    await plain.close()
  # The proxy's own BaseToolset listing (what an Agent calls) adds nothing.
  counting.seen.clear()
  proxy_listing = await proxy.get_tools_with_prefix()
  assert sorted(t.name for t in proxy_listing) == sorted(t.name for t in tools)
  await proxy._aclose()  # pylint: disable=protected-access
