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

"""The fingerprint subset versus the ephemeral generations, on real servers.

Cases P2-PROF-13 .. P2-PROF-18, P2-PROF-20 and P2-PROF-21 (RFC §1,
"Fingerprint subset"), through the real `McpAppBindingRegistry` and the
conformance server:

* A fingerprint change (a `rebind` with a profile whose limits or
  resource-policy revision differ) must invalidate everything derived from
  the profile: the MCP client (P2-PROF-13), the pool keys (P2-PROF-14),
  discovery (P2-PROF-15) and the `tools/list` TTL-cache key (P2-PROF-16).
* An ephemeral generation change must leave `binding_revision` alone: a
  reconnect (new connection generation, P2-PROF-17) and a provider
  replacement (binding generation bump, P2-PROF-18).
* With `binding_revision` equal, the independent generation check still
  rejects a stale lease (P2-PROF-20) and a stale cache entry (P2-PROF-21).

P2-PROF-19 (stale View) needs Views, which a later part adds; it is not
here. The descriptor half of P2-PROF-17/-18 needs descriptors (a later
part); it is proved here through `verify_binding_revision` on the revision
computed before the change, and `resolve(toolset_id, server_id)`.

Observation: server-side through `whoami` (`connectionId`, process id), the
`app_followup` verdict on a nonce minted by the old connection
(`connection-closed` once that connection is gone), and the server's
`request_log_file` (one JSON line per inbound message, read from the file,
not through the connection under test). Nothing sleeps to order anything.

Under connection affinity the fingerprint-derived, Apps-advertising state is
the app-safe class: the generations in `registry.connections`, keyed by
the client binding's fingerprint (it covers the profile's), and its listing,
which is never cached. The runtime's own manager is upstream's callbacked
one (no scope in its keys); it and its `tools/list` TTL cache belong to the
runtime toolset, which a rebind constructs anew.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import select
import signal
import types as pytypes
from typing import Any

from binding_support import http_spec
from binding_support import stdio_spec
from google.adk.agents.llm_agent import LlmAgent
from google.adk.mcp_apps.affinity.errors import InvalidationReason
from google.adk.mcp_apps.affinity.generations import ConnectionGeneration
from google.adk.mcp_apps.affinity.generations import GenerationKey
from google.adk.mcp_apps.binding import leases as leases_module
from google.adk.mcp_apps.binding import loop_routing
from google.adk.mcp_apps.binding.errors import StaleGenerationError
from google.adk.mcp_apps.binding.leases import LeaseError
from google.adk.mcp_apps.binding.leases import LeaseGenerationState
from google.adk.mcp_apps.binding.leases import release_runner_leases
from google.adk.mcp_apps.binding.proxy import HostBoundMcpToolset
from google.adk.mcp_apps.binding.proxy import ProxyState
from google.adk.mcp_apps.binding.registry import LeaseGenerationKey
from google.adk.mcp_apps.binding.registry import McpAppBindingRegistry
from google.adk.mcp_apps.binding.spec import McpToolsetSpec
from google.adk.mcp_apps.contracts.local_dev import LocalDevKeyProvider
from google.adk.mcp_apps.profile import binding_revision
from google.adk.mcp_apps.profile import fingerprint_subset
from google.adk.mcp_apps.profile import HostLimits
from google.adk.mcp_apps.profile import local_dev_profile
from google.adk.mcp_apps.profile import McpAppsHostProfile
from google.adk.mcp_apps.profile import ResourcePolicySettings
from google.adk.mcp_apps.profile import verify_binding_revision
from google.adk.mcp_apps.resources.policy import ResourcePolicyEntry
from google.adk.runners import InMemoryRunner
from google.genai import types as genai_types
from mcp_apps_conformance_server import names
import pytest
from scripted_llm import ScriptedLlm

pytestmark = pytest.mark.integration

TIMEOUT = 30.0
TTL = 3600.0
"""A `tools/list` TTL no test outlives: a cache entry never expires here."""
S = ProxyState

# --- Profiles ----------------------------------------------------------------


def _base_profile(name: str = "base", **overrides: Any) -> McpAppsHostProfile:
  """A bindable dev profile with a fixed key (revisions are comparable)."""
  overrides.setdefault("key_provider", LocalDevKeyProvider(secret=b"k" * 32))
  return local_dev_profile(name, **overrides)


def _replacement(profile: McpAppsHostProfile) -> McpAppsHostProfile:
  """Every provider replaced by a new object; the fingerprint subset equal.

  The renderer, principal resolver, session authorizer, both stores, the
  export audit store and the classification authority are fresh objects
  (the stores and the authority with the same namespace/revision and
  source/revision); the key provider is the same key.
  """
  return local_dev_profile(
      "replacement",
      key_provider=profile.key_provider,
      limits=profile.limits,
      resource_policy=profile.resource_policy,
  )


FINGERPRINT_CHANGES = {
    "limits": lambda p: _base_profile(
        "changed",
        key_provider=p.key_provider,
        limits=HostLimits(mrtr_max_rounds=4),
    ),
    "resource_policy": lambda p: _base_profile(
        "changed",
        key_provider=p.key_provider,
        resource_policy=ResourcePolicySettings(
            [ResourcePolicyEntry.prefix(names.URI_PREFIX)]
        ),
    ),
}


def _changed(profile: McpAppsHostProfile, what: str) -> McpAppsHostProfile:
  """A profile whose fingerprint subset differs from `profile`'s in `what`."""
  changed = FINGERPRINT_CHANGES[what](profile)
  assert binding_revision(changed) != binding_revision(profile)
  assert not verify_binding_revision(changed, binding_revision(profile))
  return changed


# --- Servers and registries ----------------------------------------------------


class RequestLog:
  """The server's request log, read from the file."""

  def __init__(self, path: Path) -> None:
    self.path = path

  def requests(self, since: int = 0) -> list[dict[str, Any]]:
    """Requests (notifications left out), oldest first, from `since`."""
    if not self.path.exists():
      return []
    entries = [
        json.loads(line)
        for line in self.path.read_text(encoding="utf-8").splitlines()
    ]
    return [e for e in entries if not e["method"].startswith("notifications/")][
        since:
    ]

  def mark(self) -> int:
    """How many requests were logged so far."""
    return len(self.requests())

  def methods(self, since: int) -> list[str]:
    """The methods logged since `since`."""
    return [e["method"] for e in self.requests(since)]

  def listings(self, since: int) -> int:
    """How many `tools/list` requests were logged since `since`."""
    return self.methods(since).count("tools/list")


@pytest.fixture
def request_log(tmp_path: Path) -> RequestLog:
  return RequestLog(tmp_path / "requests.jsonl")


@pytest.fixture
def http_server(start_server: Any, request_log: RequestLog) -> Any:
  """A stateful (legacy-era) HTTP conformance server with a request log."""
  return start_server(
      options={
          "request_log_file": str(request_log.path),
          "removable_tools": True,
      }
  )


def _stdio_spec(
    mcp_apps: Any, request_log: RequestLog, **kwargs: Any
) -> McpToolsetSpec:
  params = mcp_apps.stdio_parameters(
      options={"request_log_file": str(request_log.path)}
  )
  return stdio_spec(params, **kwargs)


class SpecFactory:
  """Builds specs for one transport; every server logs to one request log."""

  def __init__(self, transport: str, build: Any) -> None:
    self.transport = transport
    self._build = build

  def __call__(self, **kwargs: Any) -> McpToolsetSpec:
    spec: McpToolsetSpec = self._build(**kwargs)
    return spec


@pytest.fixture(params=["legacy-http", "stdio"])
def spec_factory(
    request: pytest.FixtureRequest,
    start_server: Any,
    mcp_apps: Any,
    request_log: RequestLog,
) -> SpecFactory:
  """Specs for a stateful HTTP server, or a stdio server per connection."""
  if request.param == "stdio":
    return SpecFactory(
        "stdio", lambda **kw: _stdio_spec(mcp_apps, request_log, **kw)
    )
  server = start_server(options={"request_log_file": str(request_log.path)})
  return SpecFactory("legacy-http", lambda **kw: http_spec(server.url, **kw))


def _registry(
    spec: McpToolsetSpec, profile: McpAppsHostProfile, **kwargs: Any
) -> McpAppBindingRegistry:
  return McpAppBindingRegistry(
      {"conf": spec}, profile, allow_dev_providers=True, **kwargs
  )


async def _whoami(proxy: HostBoundMcpToolset) -> dict[str, Any]:
  result = await proxy.call_tool(names.WHOAMI, {})
  assert isinstance(result.structured_content, dict), result
  return result.structured_content


def _manager(proxy: HostBoundMcpToolset) -> Any:
  runtime = proxy.runtime
  assert runtime is not None
  return runtime._mcp_session_manager  # pylint: disable=protected-access


def _generations(
    reg: McpAppBindingRegistry, proxy: HostBoundMcpToolset
) -> list[ConnectionGeneration]:
  """The proxy's live app-safe generations: its Apps-advertising connections.

  A bound toolset's advertising connections are the app-safe generations the
  registry pools (host calls, UI calls, the app-safe listing); the runtime's
  own manager is upstream's callbacked one, which advertises nothing.
  """
  return [
      g
      for g in reg.connections.live()
      if g.key.toolset_id == proxy.toolset_id
      and g.key.binding_generation == proxy.binding_generation
  ]


def _pooled_sessions(
    reg: McpAppBindingRegistry, proxy: HostBoundMcpToolset
) -> dict[str, Any]:
  """Generation id -> `ClientSession` of each live app-safe generation."""
  return {
      g.generation_id: loop_routing.unwrap(g.session)
      for g in _generations(reg, proxy)
  }


def _pool_keys(
    reg: McpAppBindingRegistry, proxy: HostBoundMcpToolset
) -> set[GenerationKey]:
  """The pool keys of the proxy's live app-safe generations."""
  return {g.key for g in _generations(reg, proxy)}


def _binding_fingerprint(generation: ConnectionGeneration) -> str:
  """The fingerprint of the client binding a generation connected with."""
  connection: Any = generation._connection  # pylint: disable=protected-access
  fingerprint: str = connection._manager._apps_client_binding.fingerprint  # pylint: disable=protected-access
  return fingerprint


def _build(n: int) -> Any:
  """A minimal readonly context for catalog build `n` (its own invocation).

  Each model catalog build runs in an invocation; a toolset serves a second
  listing within one invocation from its invocation cache (a call without a
  context counts as one invocation), so a build that must reach the toolset's
  TTL cache and the server needs an invocation id of its own.
  """
  return pytypes.SimpleNamespace(invocation_id=f"build-{n}")


def _gate_of(tool: Any) -> Any:
  return tool.__dict__["_adk_apps_gate"]


class _StandInRunner:
  """A Runner stand-in: the side table needs a weak-referenceable key."""


def _stale_barriers(
    old: HostBoundMcpToolset, listed: list[Any]
) -> list[tuple[str, Any]]:
  """Every barrier of a superseded generation, each as a thunk."""
  manager = _manager(old)
  barriers: list[tuple[str, Any]] = [
      ("materialize", old.materialize),
      ("get_tools", old.get_tools),
      ("call_tool", lambda: old.call_tool(names.WHOAMI, {})),
      (
          "read_resource_by_uri",
          lambda: old.read_resource_by_uri(names.VIEW_URI),
      ),
      ("read_resource", lambda: old.read_resource("view")),
      ("list_resources", old.list_resources),
      (
          "process_llm_request",
          lambda: old.process_llm_request(tool_context=None, llm_request=None),  # type: ignore[arg-type]
      ),
      ("create_session", manager.create_session),
  ]
  for tool in listed:
    barriers.append((
        f"run_async:{tool.name}",
        lambda tool=tool: tool.run_async(args={}, tool_context=None),
    ))
  return barriers


async def _assert_every_barrier_stale(
    old: HostBoundMcpToolset,
    listed: list[Any],
    log: RequestLog,
    current_generation: int,
) -> None:
  """Each barrier raises the typed generation error; nothing reaches the server."""
  mark = log.mark()
  for name, thunk in _stale_barriers(old, listed):
    with pytest.raises(StaleGenerationError) as info:
      await thunk()
    assert info.value.binding_generation == old.binding_generation, name
    assert info.value.current_generation == current_generation, name
  assert log.requests(mark) == []


# --- P2-PROF-13 .. 16: a fingerprint change ----------------------------------


@pytest.mark.conformance("P2-PROF-13")
@pytest.mark.parametrize("change", sorted(FINGERPRINT_CHANGES))
async def test_fingerprint_change_constructs_a_new_client(
    change: str, spec_factory: SpecFactory
) -> None:
  """P2-PROF-13: no pre-change client, manager or session is reused.

  Neither the runtime (with its callbacked manager) nor any app-safe
  generation's manager or session. The old (advertising) connection is
  proved gone server-side: a nonce it minted reads `connection-closed` from
  the new one.
  """
  profile = _base_profile()
  async with _registry(spec_factory(), profile) as reg:
    old = reg.lookup("conf")
    old_runtime, old_manager = old.runtime, _manager(old)
    before = await _whoami(old)
    nonce = (await old.call_tool(names.OPEN_VIEW, {})).structured_content[
        "nonce"
    ]
    old_sessions = set(map(id, _pooled_sessions(reg, old).values()))
    assert old_sessions
    old_managers = {
        id(g._connection._manager)  # type: ignore[attr-defined]  # pylint: disable=protected-access
        for g in _generations(reg, old)
    }
    report = await reg.rebind(_changed(profile, change))
    assert report.readiness is not None and report.readiness.bindable
    new = reg.lookup("conf")
    after = await _whoami(new)
    assert new is not old and new.state is S.PROFILE_BOUND
    assert new.runtime is not old_runtime
    assert _manager(new) is not old_manager
    assert after["supportsApps"] is True
    assert after["connectionId"] != before["connectionId"]
    assert not set(map(id, _pooled_sessions(reg, new).values())) & old_sessions
    new_managers = {
        id(g._connection._manager)  # type: ignore[attr-defined]  # pylint: disable=protected-access
        for g in _generations(reg, new)
    }
    assert new_managers and not new_managers & old_managers
    assert old.state is S.CLOSED and old.close_count == 1
    assert old.construction_count == new.construction_count == 1
    verdict = (
        await new.call_tool(names.APP_FOLLOWUP, {"nonce": nonce})
    ).structured_content
    if spec_factory.transport == "stdio":
      # One process per connection: the old one, and its nonce, are gone.
      assert after["pid"] != before["pid"]
      assert verdict["verdict"] == "unknown-nonce", verdict
    else:
      assert verdict["verdict"] == "connection-closed", verdict


@pytest.mark.conformance("P2-PROF-14")
@pytest.mark.parametrize("change", sorted(FINGERPRINT_CHANGES))
async def test_pooled_sessions_are_never_shared(
    change: str, spec_factory: SpecFactory
) -> None:
  """P2-PROF-14 (sessions): the new pool holds none of the old sessions.

  The pooled (app-safe, advertising) connections of the old binding are
  invalidated by withdrawal step 3, and nothing the new binding pools was
  pooled before the change.
  """
  profile = _base_profile()
  async with _registry(spec_factory(), profile) as reg:
    old = reg.lookup("conf")
    await _whoami(old)
    old_pool = _pooled_sessions(reg, old)
    assert len(old_pool) == 1
    await reg.rebind(_changed(profile, change))
    new = reg.lookup("conf")
    await _whoami(new)
    new_pool = _pooled_sessions(reg, new)
    assert len(new_pool) == 1
    assert not {id(s) for s in new_pool.values()} & {
        id(s) for s in old_pool.values()
    }
    assert _pooled_sessions(reg, old) == {}  # Closed at step 3.


@pytest.mark.conformance("P2-PROF-14")
@pytest.mark.parametrize("change", sorted(FINGERPRINT_CHANGES))
async def test_fingerprint_change_yields_new_pool_keys(
    change: str, spec_factory: SpecFactory
) -> None:
  """P2-PROF-14 (keys): no pool key of the old binding recurs in the new one.

  The keys are the app-safe generation keys, scoped by the fingerprint of
  the client binding they connect with (it covers the profile's).
  """
  profile = _base_profile()
  async with _registry(spec_factory(), profile) as reg:
    old = reg.lookup("conf")
    await _whoami(old)
    old_keys = _pool_keys(reg, old)
    for generation in _generations(reg, old):
      assert generation.key.binding_scope == _binding_fingerprint(generation)
    await reg.rebind(_changed(profile, change))
    new = reg.lookup("conf")
    await _whoami(new)
    new_keys = _pool_keys(reg, new)
    assert old_keys and new_keys
    assert not new_keys & old_keys, (old_keys, new_keys)
    old_scopes = {key.binding_scope for key in old_keys}
    assert not {key.binding_scope for key in new_keys} & old_scopes


@pytest.mark.conformance("P2-PROF-15")
@pytest.mark.parametrize("change", sorted(FINGERPRINT_CHANGES))
async def test_fingerprint_change_forces_fresh_discovery(
    change: str, spec_factory: SpecFactory, request_log: RequestLog
) -> None:
  """P2-PROF-15: both classes list afresh after the change, within the TTL.

  Before the change a second catalog build serves the callbacked listing
  from the TTL cache and lists only the (never cached) app-safe class, on
  the generation it already had: no new connection. After the change both
  classes list again, each on a new connection (an `initialize` apiece),
  the app-safe one on a generation of the new fingerprint.
  """
  profile = _base_profile()
  async with _registry(
      spec_factory(tool_list_cache_ttl_seconds=TTL), profile
  ) as reg:
    handle = reg.toolset("conf")
    mark = request_log.mark()
    first = await handle.get_tools(_build(1))
    assert request_log.listings(mark) == 2  # One per connection class.
    (listed_on,) = _generations(reg, reg.lookup("conf"))
    mark = request_log.mark()
    assert {t.name for t in await handle.get_tools(_build(2))} == {
        t.name for t in first
    }
    # Within the TTL: only the app-safe class lists, on the same generation.
    assert request_log.methods(mark) == ["tools/list"]
    assert _generations(reg, reg.lookup("conf")) == [listed_on]
    await reg.rebind(_changed(profile, change))
    mark = request_log.mark()
    fresh = await handle.get_tools(_build(3))
    methods = request_log.methods(mark)
    assert methods.count("tools/list") == 2, methods
    assert methods.count("initialize") == 2, methods
    (fresh_on,) = _generations(reg, reg.lookup("conf"))
    assert fresh_on.generation_id != listed_on.generation_id
    assert fresh_on.key.binding_scope != listed_on.key.binding_scope
    assert {t.name for t in fresh} == {t.name for t in first}
    new_gate = reg.lookup("conf")._gate  # pylint: disable=protected-access
    assert {id(_gate_of(t)) for t in fresh} == {id(new_gate)}


@pytest.mark.conformance("P2-PROF-16")
@pytest.mark.parametrize("change", sorted(FINGERPRINT_CHANGES))
async def test_no_cached_listing_is_served_across_fingerprints(
    change: str, http_server: Any, request_log: RequestLog
) -> None:
  """P2-PROF-16 (served listing): a stale cached catalog does not survive.

  The server drops a plain tool and a UI tool silently (no `list_changed`)
  after the first listing. The old fingerprint's TTL cache (the callbacked
  class's) still serves the plain tool; the listing after the change does
  not. The UI tool is never served stale, even before the change: the
  app-safe class that declares it is listed afresh by every catalog build.
  """
  profile = _base_profile()
  spec = http_spec(http_server.url, tool_list_cache_ttl_seconds=TTL)
  removed = {names.CLIENT_LOG, names.SIDE_EFFECT}
  async with _registry(spec, profile) as reg:
    handle = reg.toolset("conf")
    assert removed <= {t.name for t in await handle.get_tools(_build(1))}
    for name in sorted(removed):
      await reg.lookup("conf").call_tool(
          names.REMOVE_LISTED_TOOL, {"name": name}
      )
    mark = request_log.mark()
    cached = {t.name for t in await handle.get_tools(_build(2))}
    assert names.CLIENT_LOG in cached  # The cache is live and stale.
    assert names.SIDE_EFFECT not in cached  # Listed afresh: fails closed.
    assert request_log.listings(mark) == 1  # The app-safe class only.
    await reg.rebind(_changed(profile, change))
    mark = request_log.mark()
    fresh = {t.name for t in await handle.get_tools(_build(3))}
    assert request_log.listings(mark) == 2  # Both classes, none cached.
    assert not fresh & removed
    assert fresh == cached - removed


@pytest.mark.conformance("P2-PROF-16")
@pytest.mark.parametrize("change", sorted(FINGERPRINT_CHANGES))
async def test_fingerprint_change_changes_the_cache_key(
    change: str, spec_factory: SpecFactory, request_log: RequestLog
) -> None:
  """P2-PROF-16 (key): no listing is cached under a key the change keeps.

  The Apps-advertising listing (the app-safe class) is never cached: each
  catalog build lists it on the caller's generation, whose key carries the
  binding fingerprint, so after the change it is listed under a new key.
  The callbacked class's TTL cache is upstream's (its key carries no
  fingerprint) and belongs to the runtime toolset, which the change
  constructs anew: the new cache holds only what was listed after it.
  """
  profile = _base_profile()
  async with _registry(
      spec_factory(tool_list_cache_ttl_seconds=TTL), profile
  ) as reg:
    handle = reg.toolset("conf")
    await handle.get_tools(_build(1))
    old = reg.lookup("conf")
    assert old.runtime is not None
    old_cache = old.runtime._tool_list_cache  # pylint: disable=protected-access
    assert len(old_cache) == 1
    old_keys = _pool_keys(reg, old)
    assert len(old_keys) == 1
    mark = request_log.mark()
    await handle.get_tools(_build(2))
    assert request_log.listings(mark) == 1  # The app-safe class: uncached.
    assert _pool_keys(reg, old) == old_keys
    await reg.rebind(_changed(profile, change))
    mark = request_log.mark()
    await handle.get_tools(_build(3))
    assert request_log.listings(mark) == 2  # No entry served across.
    new = reg.lookup("conf")
    assert new.runtime is not None
    new_cache = new.runtime._tool_list_cache  # pylint: disable=protected-access
    assert new_cache is not old_cache and len(new_cache) == 1
    new_keys = _pool_keys(reg, new)
    assert len(new_keys) == 1
    assert not new_keys & old_keys, (old_keys, new_keys)
    old_scopes = {key.binding_scope for key in old_keys}
    assert not {key.binding_scope for key in new_keys} & old_scopes


# --- P2-PROF-17 / 18: ephemeral generations leave binding_revision alone -----


async def _reconnect_by_lease_release(reg: McpAppBindingRegistry) -> None:
  """The lease epoch's last release closes the pool; next use reconnects."""
  runner = _StandInRunner()
  reg.bind_runner(runner, "conf")
  await release_runner_leases(runner)


async def _reconnect_by_discard(reg: McpAppBindingRegistry) -> None:
  """The session is terminated: what a terminated session triggers.

  An app-safe generation never reconnects: it is invalidated for every
  holder, and the next use opens a new generation.
  """
  for generation in _generations(reg, reg.lookup("conf")):
    await reg.connections.invalidate(
        generation.generation_id, InvalidationReason.SESSION_TERMINATED
    )


RECONNECTS = {
    "lease_release": _reconnect_by_lease_release,
    "discarded_session": _reconnect_by_discard,
}


@pytest.mark.conformance("P2-PROF-17")
@pytest.mark.parametrize("reconnect", sorted(RECONNECTS))
async def test_reconnect_leaves_binding_revision_unchanged(
    reconnect: str, spec_factory: SpecFactory
) -> None:
  """P2-PROF-17: a new connection generation; the revision still verifies."""
  profile = _base_profile()
  async with _registry(spec_factory(), profile) as reg:
    proxy = reg.lookup("conf")
    revision = binding_revision(profile)
    before = await _whoami(proxy)
    await RECONNECTS[reconnect](reg)
    after = await _whoami(proxy)
    assert after["connectionId"] != before["connectionId"]  # Reconnected.
    assert after["supportsApps"] is True
    assert reg.lookup("conf") is proxy and reg.binding_generation == 1
    assert binding_revision(profile) == revision
    assert verify_binding_revision(profile, revision)
    descriptor = ("conf", reg.server_id("conf"))
    assert reg.resolve(*descriptor) is proxy


def _kill_and_await_exit(pid: int) -> None:
  """SIGKILLs a process and blocks until it has exited (a pidfd event).

  The registry loop's child watcher may reap it first; either way the
  process, and so the connection, is dead on return.
  """
  try:
    pidfd = os.pidfd_open(pid)
  except ProcessLookupError:
    return
  try:
    os.kill(pid, signal.SIGKILL)
    readable, _, _ = select.select([pidfd], [], [], TIMEOUT)
    assert readable, f"server process {pid} did not exit"
  finally:
    os.close(pidfd)


@pytest.mark.conformance("P2-PROF-17")
async def test_server_process_killed_then_reconnected(
    mcp_apps: Any, request_log: RequestLog
) -> None:
  """P2-PROF-17 (stdio): the server process dies; the toolset reconnects."""
  profile = _base_profile()
  before_pids = mcp_apps.child_pids()
  async with _registry(_stdio_spec(mcp_apps, request_log), profile) as reg:
    proxy = reg.lookup("conf")
    revision = binding_revision(profile)
    before = await _whoami(proxy)
    (server_pid,) = mcp_apps.child_pids() - before_pids
    _kill_and_await_exit(server_pid)
    # The listing retries once on a dead session, reconnecting.
    assert await reg.toolset("conf").get_tools()
    after = await _whoami(proxy)
    assert after["pid"] != before["pid"]
    assert after["connectionId"] != before["connectionId"]
    assert reg.lookup("conf") is proxy and reg.binding_generation == 1
    assert binding_revision(profile) == revision
    assert verify_binding_revision(profile, revision)
  assert mcp_apps.child_pids() == before_pids


@pytest.mark.conformance("P2-PROF-18")
async def test_provider_replacement_keeps_binding_revision(
    spec_factory: SpecFactory,
) -> None:
  """P2-PROF-18: new providers, same subset: same revision, new generation."""
  profile = _base_profile()
  replacement = _replacement(profile)
  for field in (
      "renderer",
      "principal_resolver",
      "session_authorizer",
      "sealed_result_store",
      "session_lifecycle_store",
      "export_audit_store",
      "replay_classification",
  ):
    assert getattr(replacement, field) is not getattr(profile, field), field
  assert fingerprint_subset(replacement) == fingerprint_subset(profile)
  async with _registry(spec_factory(), profile) as reg:
    old = reg.lookup("conf")
    revision = binding_revision(profile)
    descriptor = ("conf", reg.server_id("conf"))
    generation = reg.binding_generation
    report = await reg.rebind(replacement)
    assert report.readiness is not None and report.readiness.bindable
    assert report.readiness.profile is replacement
    assert reg.binding_generation == report.generation == generation + 1
    new = reg.lookup("conf")
    assert new is not old and new.binding_generation == generation + 1
    assert new.state is S.PROFILE_BOUND and old.state is S.CLOSED
    assert binding_revision(replacement) == revision
    assert verify_binding_revision(replacement, revision)
    assert reg.resolve(*descriptor) is new
    assert (await _whoami(new))["supportsApps"] is True


# --- P2-PROF-20 / 21: stale generations rejected, revision equal -------------


@pytest.mark.conformance("P2-PROF-20")
async def test_stale_lease_rejected_at_every_barrier(
    http_server: Any, request_log: RequestLog
) -> None:
  """P2-PROF-20: a token of the previous generation reaches nothing.

  Under an equal `binding_revision`: every barrier of the generation the
  token leases fails typed without a request reaching the server; the
  Runner is issued a new token on the new generation, never the stale one;
  and releasing the stale token closes nothing of the new generation.
  """
  profile = _base_profile()
  async with _registry(http_spec(http_server.url), profile) as reg:
    runner = _StandInRunner()
    stale = reg.bind_runner(runner, "conf")
    assert stale.generation_key == LeaseGenerationKey("conf", 1, 1)
    old = reg.lookup("conf")
    listed = await reg.toolset("conf").get_tools()
    revision = binding_revision(profile)
    replacement = _replacement(profile)
    await reg.rebind(replacement)
    assert binding_revision(replacement) == revision
    assert verify_binding_revision(replacement, revision)
    assert stale.generation_key.binding_generation != reg.binding_generation
    await _assert_every_barrier_stale(old, listed, request_log, 2)

    fresh = reg.bind_runner(runner, "conf")
    assert fresh != stale
    assert fresh.generation_key == LeaseGenerationKey("conf", 2, 1)
    new = reg.lookup("conf")
    serving = await _whoami(new)
    await reg.leases.release(stale)
    assert not reg.leases.is_held(stale)
    assert reg.leases.state(fresh.generation_key) is LeaseGenerationState.OPEN
    assert reg.leases.outstanding(fresh.generation_key) == 1
    after = await _whoami(new)
    assert after["connectionId"] == serving["connectionId"]  # Not closed.
    assert new.state is S.PROFILE_BOUND and new.close_count == 0


@pytest.mark.conformance("P2-PROF-20")
async def test_superseded_generation_issues_no_new_lease(
    http_server: Any,
) -> None:
  """P2-PROF-20 (ledger barrier): no lease is issued on a superseded epoch."""
  profile = _base_profile()
  async with _registry(http_spec(http_server.url), profile) as reg:
    stale = reg.bind_runner(_StandInRunner(), "conf")
    await reg.rebind(_replacement(profile))
    with pytest.raises(LeaseError):
      reg.leases.acquire(stale.generation_key)
    with pytest.raises(LeaseError):
      leases_module.bind_runner(
          _StandInRunner(), reg.leases, stale.generation_key
      )
    # Tokens already issued stay releasable; only new leases are refused.
    assert reg.leases.is_held(stale)
    result = await reg.leases.release(stale)
    assert result.released


async def _turn(tools: list[Any]) -> None:
  """One real Runner turn whose model calls `whoami` from `tools`."""
  agent = LlmAgent(
      name="probe", model=ScriptedLlm(steps=[[(names.WHOAMI, {})]]), tools=tools
  )
  runner = InMemoryRunner(agent=agent, app_name="probe")
  try:
    session = await runner.session_service.create_session(
        app_name="probe", user_id="u"
    )
    async for _ in runner.run_async(
        user_id="u",
        session_id=session.id,
        new_message=genai_types.Content(
            role="user", parts=[genai_types.Part(text="go")]
        ),
    ):
      pass
  finally:
    await runner.close()


@pytest.mark.conformance("P2-PROF-21")
async def test_stale_catalog_is_never_served_or_dispatched(
    http_server: Any, request_log: RequestLog
) -> None:
  """P2-PROF-21: the catalog listed under the previous generation.

  With a TTL cache and an equal `binding_revision`: the old generation's
  cached listing is never served again (its proxy refuses, and the handle
  lists afresh on the new generation), and its tool objects fail typed,
  directly or dispatched by a Runner turn, with no `tools/call` sent.
  """
  profile = _base_profile()
  spec = http_spec(http_server.url, tool_list_cache_ttl_seconds=TTL)
  async with _registry(spec, profile) as reg:
    handle = reg.toolset("conf")
    old = reg.lookup("conf")
    stale = await handle.get_tools()
    revision = binding_revision(profile)
    replacement = _replacement(profile)
    await reg.rebind(replacement)
    assert binding_revision(replacement) == revision
    new = reg.lookup("conf")

    mark = request_log.mark()
    with pytest.raises(StaleGenerationError):
      await old.get_tools()  # Its cached listing is never served.
    for tool in stale:
      with pytest.raises(StaleGenerationError) as info:
        await tool.run_async(args={}, tool_context=None)
      assert info.value.binding_generation == 1
      assert info.value.current_generation == 2
    (stale_whoami,) = [t for t in stale if t.name == names.WHOAMI]
    with pytest.raises(StaleGenerationError):
      await _turn([stale_whoami])
    assert request_log.requests(mark) == []

    fresh = await handle.get_tools()
    # Both classes listed anew on the new generation, not from a cache.
    assert request_log.listings(mark) == 2
    assert not {id(t) for t in fresh} & {id(t) for t in stale}
    assert {id(_gate_of(t)) for t in fresh} == {id(new._gate)}  # pylint: disable=protected-access
    assert {t.name for t in fresh} == {t.name for t in stale}
