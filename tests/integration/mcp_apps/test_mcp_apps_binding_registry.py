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

"""`McpAppBindingRegistry` against the real conformance server.

Cases P2-REG-01 .. P2-REG-11, P2-RDY-01 .. P2-RDY-25 (registry-level part)
and P2-REB-01 .. P2-REB-11. Advertisement is read on the wire through the
server's `whoami` (what the calling connection advertised); a connection's
termination is read server-side through `app_followup`, whose verdict is
`connection-closed` once the connection that minted a nonce has closed, and
for stdio through the server process count. Model calls run a real
`Runner` turn with a scripted model. Races are forced with events and the
header-provider / revocation-hook injection points; nothing sleeps to order
anything (the only timed waits are the server's own `slow_operation`).

A profile-bound toolset has two connection classes (connection affinity):
its Apps-advertising connections are the registry's app-safe generations,
which run the host's own calls (`proxy.call_tool`) and every UI-associated
model call; non-UI model calls keep upstream's callbacked connection, which
advertises nothing (P2-AFF-05). Advertisement is read on the class that
carries it: `whoami` through the proxy, or on the generation a model's
`open_view` call ran on (taken from the View's render reservation).

Registry-level parts only (the full proofs need later machinery): P2-RDY-12
(Views), -13 (leases), -14 (permits), -15 (pending commits), -20, -21, -22
and P2-REB-09 (Views), P2-REB-10 (`BoundToolHandle`): each is proved here
through the revocation hook and the generation-bound proxy and tools.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import threading
import types as pytypes
from typing import Any

from binding_support import http_spec
from binding_support import stdio_spec
from google.adk.agents.llm_agent import LlmAgent
from google.adk.mcp_apps.affinity.errors import GenerationInvalidatedError
from google.adk.mcp_apps.affinity.errors import InvalidationReason
from google.adk.mcp_apps.affinity.generations import GenerationHold
from google.adk.mcp_apps.affinity.routing import session_key_of
from google.adk.mcp_apps.binding import loop_routing
from google.adk.mcp_apps.binding.client_extensions import AppsClientBinding
from google.adk.mcp_apps.binding.errors import BindingConflictError
from google.adk.mcp_apps.binding.errors import ConfigurationFrozenError
from google.adk.mcp_apps.binding.errors import IllegalTransitionError
from google.adk.mcp_apps.binding.errors import McpAppBindingUnavailable
from google.adk.mcp_apps.binding.errors import RegistryClosedError
from google.adk.mcp_apps.binding.errors import StaleGenerationError
from google.adk.mcp_apps.binding.errors import ToolsetClosedError
from google.adk.mcp_apps.binding.errors import UnboundToolsetError
from google.adk.mcp_apps.binding.errors import WideningOverrideError
from google.adk.mcp_apps.binding.leases import release_runner_leases
from google.adk.mcp_apps.binding.proxy import DrainResult
from google.adk.mcp_apps.binding.proxy import HostBoundMcpToolset
from google.adk.mcp_apps.binding.proxy import ProxyState
from google.adk.mcp_apps.binding.registry import BindingOverrides
from google.adk.mcp_apps.binding.registry import LeaseGenerationKey
from google.adk.mcp_apps.binding.registry import McpAppBindingRegistry
from google.adk.mcp_apps.binding.registry import RevocationEvent
from google.adk.mcp_apps.binding.spec import McpToolsetSpec
from google.adk.mcp_apps.catalog.app_catalog import AppCallPolicy
from google.adk.mcp_apps.profile import binding_revision
from google.adk.mcp_apps.profile import HostCapabilities
from google.adk.mcp_apps.profile import local_dev_profile
from google.adk.mcp_apps.profile import Prerequisite
from google.adk.mcp_apps.profile.readiness import PROVIDERS
from google.adk.runners import InMemoryRunner
from google.adk.tools.mcp_tool import McpToolset
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.adk.tools.mcp_tool import StreamableHTTPConnectionParams
from google.genai import types as genai_types
from mcp_apps_conformance_server import names
import pytest
from scripted_llm import ScriptedLlm

pytestmark = pytest.mark.integration

TIMEOUT = 30.0
MODERN_FLAG = "ADK_ENABLE_MCP_MODERN_PROTOCOL"
S = ProxyState
APPS_AD = {names.EXTENSION_ID: {"mimeTypes": [names.APP_MIME_TYPE]}}
STEPS = (
    "generation_bumped",
    "hooks_called",
    "drained",
    "pools_closed",
    "proxies_closed",
)


# --- Helpers -----------------------------------------------------------------


def _registry(specs: Any, profile: Any = "dev", **kwargs: Any) -> Any:
  if profile == "dev":
    profile = local_dev_profile()
  kwargs.setdefault("allow_dev_providers", True)
  return McpAppBindingRegistry(specs, profile, **kwargs)


async def _call(proxy: HostBoundMcpToolset, tool: str, **args: Any) -> Any:
  result = await proxy.call_tool(tool, args)
  assert isinstance(result.structured_content, dict), result
  return result.structured_content


def _advertised(whoami: dict[str, Any]) -> dict[str, Any]:
  if whoami["era"] == "legacy":
    return whoami["handshake"]["capabilities"]
  return whoami["requestEnvelope"]["clientCapabilities"]


def _assert_not_advertising(whoami: dict[str, Any]) -> None:
  assert whoami["supportsApps"] is False
  assert "extensions" not in _advertised(whoami)


def _find(value: Any, key: str) -> Any:
  """Finds the dict carrying `key` anywhere in a function response."""
  if isinstance(value, dict):
    if key in value:
      return value
    for item in value.values():
      found = _find(item, key)
      if found is not None:
        return found
  elif isinstance(value, list):
    for item in value:
      found = _find(item, key)
      if found is not None:
        return found
  elif isinstance(value, str) and key in value:
    try:
      return _find(json.loads(value), key)
    except ValueError:
      return None
  return None


async def _model_call(
    toolset: Any,
    tool: str = names.WHOAMI,
    key: str = "connectionId",
    **agent: Any,
) -> dict[str, Any]:
  """One real Runner turn whose model calls `tool`; returns its answer.

  The answer is the part of the function response carrying `key`;
  `agent` adds `LlmAgent` arguments (callbacks).
  """
  agent = LlmAgent(
      name="probe",
      model=ScriptedLlm(steps=[[(tool, {})]]),
      tools=[toolset],
      **agent,
  )
  runner = InMemoryRunner(agent=agent, app_name="probe")
  responses = []
  try:
    session = await runner.session_service.create_session(
        app_name="probe", user_id="u"
    )
    async for event in runner.run_async(
        user_id="u",
        session_id=session.id,
        new_message=genai_types.Content(
            role="user", parts=[genai_types.Part(text="go")]
        ),
    ):
      for response in event.get_function_responses():
        responses.append(response.response)
  finally:
    await runner.close()  # Reaches the handle's close(): releases nothing.
  assert len(responses) == 1, responses
  found = _find(responses[0], key)
  assert found is not None, responses[0]
  return found


class _UiCallProbe:
  """An `after_tool_callback` recording where a model's tool call ran."""

  def __init__(self) -> None:
    self.calls: list[tuple[Any, str]] = []

  def __call__(
      self, tool: Any, args: Any, tool_context: Any, tool_response: Any
  ) -> None:
    del tool, args, tool_response
    self.calls.append(
        (session_key_of(tool_context), tool_context.function_call_id)
    )


async def _model_ui_call(
    registry: McpAppBindingRegistry, toolset_id: str = "conf"
) -> GenerationHold:
  """A Runner turn whose model calls the UI tool `open_view`.

  UI-associated model calls run on an app-safe generation, which the
  accepted result reserves for its View (P2-AFF): returns that reservation,
  taken over from the registry (the caller releases it).
  """
  probe = _UiCallProbe()
  opened = await _model_call(
      registry.toolset(toolset_id),
      names.OPEN_VIEW,
      key="text",
      after_tool_callback=probe,
  )
  assert re.search(r"nonce [0-9a-f]+", opened["text"]), opened
  ((session, call_id),) = probe.calls
  hold = registry.render_reservations.take(toolset_id, session, call_id)
  assert hold is not None, probe.calls
  return hold


async def _model_ui_whoami(
    registry: McpAppBindingRegistry, toolset_id: str = "conf"
) -> dict[str, Any]:
  """`whoami` on the very connection a model's UI tool call ran on."""
  hold = await _model_ui_call(registry, toolset_id)
  try:
    result = await hold.call_tool(names.WHOAMI, {})
  finally:
    hold.release()
  assert isinstance(result.structured_content, dict), result
  return result.structured_content


class Gate:
  """An injection point: `wait()` parks its caller until `open()`."""

  def __init__(self) -> None:
    self.entered = asyncio.Event()
    self.opened = asyncio.Event()

  async def wait(self, *args: Any) -> dict[str, str]:
    self.entered.set()
    await self.opened.wait()
    return {}

  def open(self) -> None:
    self.opened.set()


CTX = pytypes.SimpleNamespace(invocation_id="inv-1")
"""A minimal readonly context: makes the header provider run."""


# --- P2-REG ------------------------------------------------------------------


@pytest.mark.conformance("P2-REG-01")
async def test_startup_materializes_the_chain(
    legacy_http_server: Any,
) -> None:
  """P2-REG-01: toolset_id -> spec -> proxy -> profile -> server."""
  spec = http_spec(legacy_http_server.url)
  profile = local_dev_profile()
  registry = _registry({"conf": spec}, profile)
  with pytest.raises(McpAppBindingUnavailable):
    registry.lookup("conf")  # Not started.
  await registry.start()
  try:
    proxy = registry.lookup("conf")
    assert proxy.spec is spec and proxy.toolset_id == "conf"
    assert proxy.state is S.PROFILE_BOUND and proxy.construction_count == 1
    assert registry.readiness is not None
    assert registry.readiness.profile is profile
    assert registry.server_id("conf") == spec.server_id
    assert registry.event_loop.thread is not None
    assert registry.event_loop.thread.is_alive()
    who = await _call(proxy, names.WHOAMI)
    assert _advertised(who)["extensions"] == APPS_AD
  finally:
    await registry.aclose()
  assert not registry.event_loop.thread.is_alive()


@pytest.mark.conformance("P2-REG-02")
async def test_colliding_registrations_are_rejected(
    legacy_http_server: Any,
) -> None:
  """P2-REG-02."""
  spec = http_spec(legacy_http_server.url)
  with pytest.raises(BindingConflictError):
    _registry([("conf", spec), ("conf", spec)])
  registry = _registry({"conf": spec})
  with pytest.raises(BindingConflictError):
    registry.register("conf", spec)
  await registry.start()
  try:
    with pytest.raises(BindingConflictError):
      registry.register("other", spec)  # Configuration is closed.
  finally:
    await registry.aclose()


@pytest.mark.conformance("P2-REG-03")
async def test_unknown_binding_is_typed(
    legacy_http_server: Any,
) -> None:
  """P2-REG-03."""
  async with _registry({"conf": http_spec(legacy_http_server.url)}) as reg:
    with pytest.raises(McpAppBindingUnavailable) as info:
      reg.lookup("nope")
    assert info.value.toolset_id == "nope"
  with pytest.raises(RegistryClosedError):
    reg.lookup("conf")
  assert issubclass(RegistryClosedError, McpAppBindingUnavailable)


@pytest.mark.conformance("P2-REG-04")
async def test_restart_rebuilds_from_configuration(
    legacy_http_server: Any,
) -> None:
  """P2-REG-04: persisted toolset_id/server_id resolve after a restart."""

  def config() -> dict[str, McpToolsetSpec]:
    return {"conf": http_spec(legacy_http_server.url)}

  async with _registry(config()) as first:
    descriptor = ("conf", first.server_id("conf"))
    old = first.resolve(*descriptor)
  async with _registry(config()) as second:
    proxy = second.resolve(*descriptor)
    assert proxy is not old and proxy.state is S.PROFILE_BOUND
    assert (await _call(proxy, names.WHOAMI))["supportsApps"] is True
    with pytest.raises(McpAppBindingUnavailable):
      second.resolve("conf", "mcp-server:another")


@pytest.mark.conformance("P2-REG-05")
async def test_direct_toolset_stays_model_only(
    legacy_http_server: Any,
) -> None:
  """P2-REG-05: a constructed McpToolset can never be registered or bound."""
  url = legacy_http_server.url
  direct = McpToolset(
      connection_params=StreamableHTTPConnectionParams(url=url, timeout=TIMEOUT)
  )
  with pytest.raises(UnboundToolsetError):
    _registry({"conf": direct})
  with pytest.raises(UnboundToolsetError):
    HostBoundMcpToolset(direct, toolset_id="conf")  # type: ignore[arg-type]
  async with _registry({"conf": http_spec(url)}) as registry:
    assert registry.lookup("conf").state is S.PROFILE_BOUND
    try:
      who = await direct._execute_with_session(  # pylint: disable=protected-access
          lambda s: s.call_tool(names.WHOAMI, {}), "whoami"
      )
      _assert_not_advertising(who.structured_content)
    finally:
      await direct.close()


@pytest.mark.conformance("P2-REG-06")
async def test_second_profile_binding_is_rejected(
    legacy_http_server: Any,
) -> None:
  """P2-REG-06 (registry and proxy level)."""
  async with _registry({"conf": http_spec(legacy_http_server.url)}) as reg:
    with pytest.raises(BindingConflictError):
      reg.bind_profile("conf", local_dev_profile("second"))
    proxy = reg.lookup("conf")
    with pytest.raises(BindingConflictError):
      proxy._bind_apps(AppsClientBinding.for_mcp_apps())  # pylint: disable=protected-access
    assert proxy.state is S.PROFILE_BOUND and reg.lookup("conf") is proxy


@pytest.mark.conformance("P2-REG-07")
async def test_overrides_only_narrow(legacy_http_server: Any) -> None:
  """P2-REG-07: policy, capabilities and visibility narrow, never widen."""
  spec = http_spec(legacy_http_server.url)
  narrow_caps = HostCapabilities(server_resources=False, message=None)
  registry = _registry(
      {"a": spec, "b": spec},
      app_call_policy=AppCallPolicy.only({"x", "y"}),
      overrides={
          "a": BindingOverrides(
              app_call_policy=AppCallPolicy.only({"x"}),
              host_capabilities=narrow_caps,
          )
      },
  )
  assert registry.effective("a").app_call_policy == AppCallPolicy.only({"x"})
  assert registry.effective("a").host_capabilities == narrow_caps
  # Deny-all and dropping the app caller are narrowings.
  registry.narrow(
      "b", BindingOverrides(app_call_policy=AppCallPolicy.deny_all())
  )
  registry.narrow("b", BindingOverrides(visibility=frozenset({"model"})))
  assert registry.effective("b").app_call_policy == AppCallPolicy.deny_all()
  assert not registry.routes_apps("b")
  widenings = [
      ("a", BindingOverrides(app_call_policy=AppCallPolicy())),
      ("a", BindingOverrides(app_call_policy=AppCallPolicy.only({"x", "y"}))),
      ("a", BindingOverrides(host_capabilities=HostCapabilities())),
      ("b", BindingOverrides(visibility=frozenset({"model", "app"}))),
      ("a", BindingOverrides(visibility=frozenset({"model", "robot"}))),
  ]
  for toolset_id, override in widenings:
    before = registry.effective(toolset_id)
    with pytest.raises(WideningOverrideError):
      registry.narrow(toolset_id, override)
    assert registry.effective(toolset_id) == before
  with pytest.raises(WideningOverrideError):
    _registry(
        {"a": spec},
        app_call_policy=AppCallPolicy.deny_all(),
        overrides={"a": BindingOverrides(app_call_policy=AppCallPolicy())},
    )
  await registry.start()
  try:
    # Routing follows configuration: b is model-only, a is bound.
    assert registry.lookup("a").state is S.PROFILE_BOUND
    assert registry.lookup("b").state is S.MODEL_ONLY
  finally:
    await registry.aclose()


@pytest.mark.conformance("P2-REG-08")
async def test_shutdown_closes_exactly_what_it_materialized(
    mcp_apps: Any,
) -> None:
  """P2-REG-08: each registry proxy once; a foreign toolset untouched."""
  before = mcp_apps.child_pids()
  foreign = McpToolset(
      connection_params=StdioConnectionParams(
          server_params=mcp_apps.stdio_parameters(), timeout=TIMEOUT
      )
  )
  await foreign.get_tools()
  foreign_pids = mcp_apps.child_pids() - before
  assert len(foreign_pids) == 1
  registry = _registry({
      "a": stdio_spec(mcp_apps.stdio_parameters()),
      "b": stdio_spec(mcp_apps.stdio_parameters()),
  })
  await registry.start()
  for toolset_id in ("a", "b"):
    await _call(registry.lookup(toolset_id), names.WHOAMI)
  registry_pids = mcp_apps.child_pids() - before - foreign_pids
  assert len(registry_pids) == 2
  proxies = registry.materialized
  await registry.aclose()
  await registry.aclose()  # Idempotent.
  assert [p.close_count for p in proxies] == [1, 1]
  assert [p.construction_count for p in proxies] == [1, 1]
  assert all(p.state is S.CLOSED for p in proxies)
  assert mcp_apps.child_pids() - before == foreign_pids
  try:
    assert await foreign.get_tools()  # Still connected and working.
    assert mcp_apps.child_pids() - before == foreign_pids
  finally:
    await foreign.close()
  assert mcp_apps.child_pids() == before


@pytest.mark.conformance("P2-REG-09")
async def test_no_path_mutates_a_toolset_after_its_client_exists(
    legacy_http_server: Any,
) -> None:
  """P2-REG-09: filter, prefix, headers, callbacks: every attempt raises."""
  async with _registry({"conf": http_spec(legacy_http_server.url)}) as reg:
    proxy = reg.lookup("conf")
    runtime = proxy.runtime
    assert runtime is not None
    manager = runtime._mcp_session_manager  # pylint: disable=protected-access
    attempts = [
        (proxy, "tool_filter", ["x"]),
        (proxy, "tool_name_prefix", "p"),
        (proxy, "_spec", None),
        (runtime, "tool_filter", ["x"]),
        (runtime, "tool_name_prefix", "p"),
        (runtime, "_header_provider", lambda ctx: {"a": "b"}),
        (runtime, "_progress_callback", print),
        (runtime, "_sampling_callback", print),
        (runtime, "_elicitation_callback", print),
        (runtime, "_connection_params", None),
        (runtime, "_mcp_session_manager", None),
        (manager, "_sampling_callback", print),
        (manager, "_elicitation_callback", print),
        (manager, "_apps_client_binding", None),
        (manager, "_connection_params", None),
    ]
    for target, attribute, value in attempts:
      with pytest.raises(ConfigurationFrozenError):
        setattr(target, attribute, value)
      with pytest.raises(ConfigurationFrozenError):
        delattr(target, attribute)
    who = await _call(proxy, names.WHOAMI)
    assert _advertised(who) == {"extensions": APPS_AD}


@pytest.mark.conformance("P2-REG-10")
async def test_apps_routing_comes_from_configuration_only(
    legacy_http_server: Any,
) -> None:
  """P2-REG-10: no session is read; none needs to exist."""
  assert list(
      inspect.signature(McpAppBindingRegistry.routes_apps).parameters
  ) == [
      "self",
      "toolset_id",
  ]
  spec = http_spec(legacy_http_server.url)
  registry = _registry({"a": spec, "b": spec}, apps_toolsets={"a"})
  # Decided before start, before any Runner or session exists.
  assert registry.routes_apps("a") and not registry.routes_apps("b")
  assert not _registry({"a": spec}, profile=None).routes_apps("a")
  async with registry:
    assert registry.lookup("a").state is S.PROFILE_BOUND
    assert registry.lookup("b").state is S.MODEL_ONLY
    # A brand-new session: the model's UI tool runs on the app-safe class,
    # which advertises; a non-UI model tool keeps upstream's callbacked
    # connection, which does not (P2-AFF-05).
    ui = await _model_ui_whoami(registry, "a")
    assert ui["supportsApps"] is True
    assert _advertised(ui)["extensions"] == APPS_AD
    _assert_not_advertising(await _model_call(registry.toolset("a")))


@pytest.mark.conformance("P2-REG-11")
async def test_agent_facing_close_releases_nothing(
    legacy_http_server: Any,
) -> None:
  """P2-REG-11: proxy.close() and Runner.close() leave the generation alone."""
  async with _registry({"conf": http_spec(legacy_http_server.url)}) as reg:
    proxy = reg.lookup("conf")
    before = await _call(proxy, names.WHOAMI)
    await proxy.close()
    await reg.toolset("conf").close()
    await _model_call(reg.toolset("conf"))  # Ends with runner.close().
    assert proxy.state is S.PROFILE_BOUND and proxy.close_count == 0
    assert reg.lookup("conf") is proxy
    assert reg.binding_generation == 1
    after = await _call(proxy, names.WHOAMI)
    assert after["connectionId"] == before["connectionId"]  # Not closed.
  assert proxy.close_count == 1


# --- P2-RDY-01 .. 11 ---------------------------------------------------------


@pytest.fixture
def era(request: pytest.FixtureRequest, monkeypatch: Any) -> str:
  value: str = getattr(request, "param", "legacy")
  if value == "modern":
    monkeypatch.setenv(MODERN_FLAG, "1")
  else:
    monkeypatch.delenv(MODERN_FLAG, raising=False)
  return value


def _era_url(era: str, legacy: Any, modern: Any) -> str:
  return str(modern.url if era == "modern" else legacy.url)


@pytest.mark.conformance("P2-RDY-01")
@pytest.mark.parametrize("era", ["legacy", "modern"], indirect=True)
async def test_all_providers_bind_and_advertise(
    era: str, legacy_http_server: Any, modern_http_server: Any
) -> None:
  """P2-RDY-01 (both eras)."""
  url = _era_url(era, legacy_http_server, modern_http_server)
  async with _registry({"conf": http_spec(url)}) as registry:
    assert registry.lookup("conf").state is S.PROFILE_BOUND
    # The advertising class: the connection a model's UI tool call ran on.
    who = await _model_ui_whoami(registry)
    # Non-UI model calls keep upstream's connection: no advertisement.
    plain = await _model_call(registry.toolset("conf"))
  assert who["era"] == plain["era"] == era
  assert _advertised(who)["extensions"] == APPS_AD
  _assert_not_advertising(plain)


PREREQUISITE_CASES = {
    Prerequisite.RENDERER: "P2-RDY-02",
    Prerequisite.PRINCIPAL_RESOLVER: "P2-RDY-03",
    Prerequisite.SESSION_AUTHORIZER: "P2-RDY-04",
    Prerequisite.SEALED_RESULT_STORE: "P2-RDY-05",
    Prerequisite.SESSION_LIFECYCLE_STORE: "P2-RDY-06",
    Prerequisite.EXPORT_AUDIT_STORE: "P2-RDY-07",
    Prerequisite.KEY_PROVIDER: "P2-RDY-08",
    Prerequisite.REPLAY_CLASSIFICATION: "P2-RDY-09",
}


def _missing(era: str, missing: Prerequisite) -> Any:
  case = PREREQUISITE_CASES[missing]
  return pytest.param(
      era,
      missing,
      id=f"{missing.value}-{era}",
      marks=pytest.mark.conformance(case),
  )


@pytest.mark.parametrize(
    ("era", "missing"),
    [_missing("legacy", p) for p in PROVIDERS]
    + [_missing("modern", Prerequisite.RENDERER)],
    indirect=["era"],
)
async def test_missing_prerequisite_is_model_only(
    era: str,
    missing: Prerequisite,
    legacy_http_server: Any,
    modern_http_server: Any,
) -> None:
  """P2-RDY-02 .. P2-RDY-09: MODEL_ONLY and nothing advertised on the wire."""
  url = _era_url(era, legacy_http_server, modern_http_server)
  profile = local_dev_profile(**{missing.value: None})
  async with _registry({"conf": http_spec(url)}, profile) as registry:
    proxy = registry.lookup("conf")
    assert proxy.state is S.MODEL_ONLY and not proxy.profile_bound
    assert registry.readiness is None
    who = await _model_call(registry.toolset("conf"))
  assert who["era"] == era
  _assert_not_advertising(who)


@pytest.mark.conformance("P2-RDY-10")
async def test_model_only_traffic_works(
    legacy_http_server: Any,
) -> None:
  """P2-RDY-10: a MODEL_ONLY toolset serves model calls as upstream does."""
  profile = local_dev_profile(renderer=None)
  spec = http_spec(legacy_http_server.url)
  async with _registry({"conf": spec}, profile) as registry:
    tools = {t.name for t in await registry.toolset("conf").get_tools()}
    who = await _model_call(registry.toolset("conf"))
  plain = spec.build()
  try:
    assert tools == {t.name for t in await plain.get_tools()}
  finally:
    await plain.close()
  _assert_not_advertising(who)


@pytest.mark.conformance("P2-RDY-11")
async def test_loopback_configuration_binds_only_when_enabled(
    legacy_http_server: Any,
) -> None:
  """P2-RDY-11: the dev profile binds only with allow_dev_providers=True."""
  spec = http_spec(legacy_http_server.url)
  async with _registry(
      {"conf": spec}, local_dev_profile(), allow_dev_providers=False
  ) as production:
    assert production.lookup("conf").state is S.MODEL_ONLY
    _assert_not_advertising(
        await _call(production.lookup("conf"), names.WHOAMI)
    )
  async with _registry({"conf": spec}, local_dev_profile()) as dev:
    assert dev.lookup("conf").state is S.PROFILE_BOUND
    assert (await _call(dev.lookup("conf"), names.WHOAMI))["supportsApps"]


# --- P2-RDY-12 .. 25: withdrawal ---------------------------------------------


class Recorder:
  """A revocation hook recording what it saw (Views/leases/permits stand-in)."""

  def __init__(self, registry: McpAppBindingRegistry) -> None:
    self.registry = registry
    self.events: list[RevocationEvent] = []
    self.seen: list[dict[str, Any]] = []
    self.old: dict[str, HostBoundMcpToolset] = {}

  def track(self) -> None:
    self.old = {t: self.registry.lookup(t) for t in self.registry.toolset_ids}

  async def __call__(self, event: RevocationEvent) -> None:
    self.events.append(event)
    for toolset_id in event.toolset_ids:
      old = self.old[toolset_id]
      self.seen.append({
          "generation": self.registry.binding_generation,
          "old_state": old.state,
          "old_close_count": old.close_count,
          "lookup_is_new": self.registry.lookup(toolset_id) is not old,
      })


@pytest.mark.conformance(
    "P2-RDY-12", "P2-RDY-13", "P2-RDY-14", "P2-RDY-15", "P2-RDY-18"
)
async def test_withdrawal_steps_in_order(
    legacy_http_server: Any,
) -> None:
  """P2-RDY-12..15 (registry-level: the step-1 hook) and P2-RDY-18 (order)."""
  async with _registry({"conf": http_spec(legacy_http_server.url)}) as reg:
    recorder = Recorder(reg)
    recorder.track()
    reg.add_revocation_hook(recorder)
    old = reg.lookup("conf")
    listed = await old.get_tools()
    report = await reg.revoke()
    assert report.steps == STEPS
    (event,) = recorder.events
    assert event.old_generations == {"conf": 1}
    assert event.new_generation == 2 and event.reason == "withdrawal"
    # At step 1 the generation was bumped, the old proxy REVOKING, its pool
    # not yet closed, and lookup already answered with the successor.
    assert recorder.seen == [{
        "generation": 2,
        "old_state": S.REVOKING,
        "old_close_count": 0,
        "lookup_is_new": True,
    }]
    assert old.state is S.CLOSED and old.close_count == 1
    assert old.history[-2:] == (S.REVOKING, S.CLOSED)
    # Every old-generation operation (View, lease, permit, declaration)
    # now fails with the typed generation error.
    with pytest.raises(StaleGenerationError):
      await old.call_tool(names.WHOAMI)
    with pytest.raises(StaleGenerationError):
      await listed[0].run_async(args={}, tool_context=None)


@pytest.mark.conformance("P2-RDY-16", "P2-RDY-20")
async def test_in_flight_work_drains_before_pools_close(
    legacy_http_server: Any,
) -> None:
  """P2-RDY-16: admitted work finishes before step 3; the bound cancels."""
  async with _registry({"conf": http_spec(legacy_http_server.url)}) as reg:
    old = reg.lookup("conf")
    observed: list[int] = []

    async def in_flight() -> Any:
      result = await old.call_tool(
          names.SLOW_OPERATION, {"ms": 300, "tag": "drain"}
      )
      observed.append(old.close_count)  # Pools not yet closed.
      return result

    call = asyncio.create_task(in_flight())
    while old.inflight == 0:
      await asyncio.sleep(0)
    report = await reg.revoke()
    result = await call
    assert not result.is_error and observed == [0]
    assert report.drains["conf"].admitted == 1
    assert report.drains["conf"].cancelled == 0

  async with _registry(
      {"conf": http_spec(legacy_http_server.url)}, drain_timeout=0.2
  ) as reg:
    old = reg.lookup("conf")
    call = asyncio.create_task(
        old.call_tool(names.SLOW_OPERATION, {"ms": 20000, "tag": "cancel"})
    )
    while old.inflight == 0:
      await asyncio.sleep(0)
    report = await reg.revoke()
    assert report.drains["conf"].cancelled == 1
    with pytest.raises(asyncio.CancelledError):
      await call
    assert report.steps == STEPS and old.close_count == 1


async def _assert_old_connection_terminated(
    new: HostBoundMcpToolset, nonce: str
) -> None:
  verdict = await _call(new, names.APP_FOLLOWUP, nonce=nonce)
  assert verdict["verdict"] == "connection-closed", verdict


@pytest.mark.conformance("P2-RDY-17", "P2-RDY-23")
async def test_revocation_terminates_advertising_connections(
    legacy_http_server: Any,
) -> None:
  """P2-RDY-17 and P2-RDY-23: closed server-side; later ones don't advertise.

  Advertising resumes only through a rebind (P2-REB).
  """
  async with _registry({"conf": http_spec(legacy_http_server.url)}) as reg:
    handle = reg.toolset("conf")
    # The advertising connections are the app-safe generations: the one a
    # model's UI call ran on (still held for its View) and the host's own.
    view = await _model_ui_call(reg)
    before = (await view.call_tool(names.WHOAMI, {})).structured_content
    assert before["supportsApps"] is True
    old = reg.lookup("conf")
    nonce = (await _call(old, names.OPEN_VIEW))["nonce"]
    await reg.revoke()
    new = reg.lookup("conf")
    assert new.state is S.MODEL_ONLY
    # Even a held generation is terminated (step 3), its holder told why.
    assert view.generation.invalidation_reason is (
        InvalidationReason.READINESS_REVOKED
    )
    with pytest.raises(GenerationInvalidatedError):
      await view.call_tool(names.WHOAMI, {})
    view.release()
    after = await _model_call(handle)
    _assert_not_advertising(after)
    assert after["connectionId"] != before["connectionId"]
    await _assert_old_connection_terminated(new, nonce)
    # Reconnects while unready never advertise; a recheck does not rebind.
    await reg.recheck()
    _assert_not_advertising(await _model_call(handle))
    report = await reg.rebind(local_dev_profile("restored"))
    assert report.readiness is not None and report.readiness.bindable
    assert (await _model_ui_whoami(reg))["supportsApps"] is True


@pytest.mark.conformance("P2-RDY-17")
async def test_stdio_server_process_is_terminated(
    mcp_apps: Any,
) -> None:
  """P2-RDY-17 (stdio): the advertising server process is gone."""
  before = mcp_apps.child_pids()
  async with _registry(
      {"conf": stdio_spec(mcp_apps.stdio_parameters())}
  ) as reg:
    assert (await _call(reg.lookup("conf"), names.WHOAMI))["supportsApps"]
    bound_pids = mcp_apps.child_pids() - before
    assert len(bound_pids) == 1
    await reg.revoke()
    assert not mcp_apps.child_pids() & bound_pids
    _assert_not_advertising(await _call(reg.lookup("conf"), names.WHOAMI))
  assert mcp_apps.child_pids() == before


@pytest.mark.conformance("P2-RDY-19")
async def test_renderer_detached_closes_idle_reused_connection(
    legacy_http_server: Any,
) -> None:
  """P2-RDY-19: recheck after detach; the next model call does not advertise."""
  profile = local_dev_profile()
  async with _registry(
      {"conf": http_spec(legacy_http_server.url)}, profile
  ) as reg:
    handle = reg.toolset("conf")
    first = await _model_call(handle)
    reused = await _model_call(handle)
    assert first["connectionId"] == reused["connectionId"]  # Idle, reused.
    nonce = (await _call(reg.lookup("conf"), names.OPEN_VIEW))["nonce"]
    profile.renderer.detach()  # type: ignore[union-attr]
    report = await reg.recheck()
    assert report.swapped == ("conf",) and report.steps == STEPS
    nxt = await _model_call(handle)
    _assert_not_advertising(nxt)
    await _assert_old_connection_terminated(reg.lookup("conf"), nonce)


@pytest.mark.conformance("P2-PROF-20", "P2-RDY-24")
async def test_provider_replacement_fails_old_leases_typed(
    legacy_http_server: Any,
) -> None:
  """P2-RDY-24: old-generation work fails typed; descriptors stay valid."""
  profile = local_dev_profile()
  async with _registry(
      {"conf": http_spec(legacy_http_server.url)}, profile
  ) as reg:
    old = reg.lookup("conf")
    lease = await old.get_tools()  # An old-generation holding.
    descriptor = ("conf", reg.server_id("conf"))
    revision = binding_revision(profile)
    replacement = local_dev_profile(
        key_provider=profile.key_provider,
        sealed_result_store=profile.sealed_result_store,
        session_lifecycle_store=profile.session_lifecycle_store,
        export_audit_store=profile.export_audit_store,
        replay_classification=profile.replay_classification,
    )
    await reg.rebind(replacement)
    with pytest.raises(StaleGenerationError) as info:
      await lease[0].run_async(args={}, tool_context=None)
    assert info.value.binding_generation == 1
    assert info.value.current_generation == 2
    assert reg.resolve(*descriptor) is reg.lookup("conf")
    assert binding_revision(replacement) == revision


@pytest.mark.conformance("P2-RDY-25")
async def test_revoking_is_one_way(legacy_http_server: Any) -> None:
  """P2-RDY-25."""
  async with _registry({"conf": http_spec(legacy_http_server.url)}) as reg:
    old = reg.lookup("conf")
    gate = Gate()

    async def hook(event: RevocationEvent) -> None:
      del event
      await gate.wait()

    reg.add_revocation_hook(hook)
    revoking = asyncio.create_task(reg.revoke())
    await gate.entered.wait()
    assert old.state is S.REVOKING
    for target in (S.PROFILE_BOUND, S.MODEL_ONLY, S.MATERIALIZING):
      with pytest.raises(IllegalTransitionError):
        old._transition(target)  # pylint: disable=protected-access
    with pytest.raises(ToolsetClosedError):
      old._bind_apps(AppsClientBinding.for_mcp_apps())  # pylint: disable=protected-access
    with pytest.raises(StaleGenerationError):
      await old.materialize()
    gate.open()
    await revoking
    assert old.state is S.CLOSED
    assert S.PROFILE_BOUND not in old.history[old.history.index(S.REVOKING) :]


# --- P2-REB ------------------------------------------------------------------


@pytest.mark.conformance("P2-REB-01", "P2-REB-08", "P2-REB-11")
async def test_rebind_installs_a_new_proxy_atomically(
    legacy_http_server: Any,
) -> None:
  """P2-REB-01, P2-REB-08 (lookup old before, new after), P2-REB-11."""
  async with _registry({"conf": http_spec(legacy_http_server.url)}) as reg:
    recorder = Recorder(reg)
    recorder.track()
    reg.add_revocation_hook(recorder)
    old = reg.lookup("conf")
    assert reg.lookup("conf") is old  # Before the swap.
    report = await reg.rebind(local_dev_profile("replacement"))
    new = reg.lookup("conf")
    assert new is not old and report.generation == 2
    assert new.binding_generation == 2 and old.binding_generation == 1
    assert recorder.seen[0]["lookup_is_new"] is True  # At the swap point.
    assert old.state is S.CLOSED and new.state is S.PROFILE_BOUND
    assert (await _call(new, names.WHOAMI))["supportsApps"] is True
    by_generation: dict[int, list[int]] = {}
    for proxy in reg.materialized:
      by_generation.setdefault(proxy.binding_generation, []).append(
          proxy.construction_count
      )
    assert by_generation == {1: [1], 2: [1]}


@pytest.mark.conformance("P2-REB-02")
async def test_failed_rebind_leaves_model_only_serving(
    legacy_http_server: Any,
) -> None:
  """P2-REB-02: no advertisement, no resurrection of the old proxy."""
  async with _registry({"conf": http_spec(legacy_http_server.url)}) as reg:
    old = reg.lookup("conf")
    report = await reg.rebind(local_dev_profile("broken", renderer=None))
    assert report.readiness is not None and not report.readiness.bindable
    new = reg.lookup("conf")
    assert new is not old and new.state is S.MODEL_ONLY
    assert old.state is S.CLOSED
    _assert_not_advertising(await _model_call(reg.toolset("conf")))
    # Failing again changes nothing: model-only proxies keep serving.
    again = await reg.rebind(local_dev_profile("broken", renderer=None))
    assert again.swapped == () and reg.lookup("conf") is new
    assert old.state is S.CLOSED


@pytest.mark.conformance("P2-REB-03")
async def test_rebind_racing_get_tools_lists_one_generation(
    legacy_http_server: Any,
) -> None:
  """P2-REB-03: the listing is entirely the old proxy's; one construction each."""
  gate = Gate()
  spec = http_spec(legacy_http_server.url, header_provider=gate.wait)
  async with _registry({"conf": spec}) as reg:
    old = reg.lookup("conf")
    listing = asyncio.create_task(reg.toolset("conf").get_tools(CTX))  # type: ignore[arg-type]
    await gate.entered.wait()  # Admitted by the old proxy, parked.
    rebind = asyncio.create_task(reg.rebind(local_dev_profile("next")))
    while reg.lookup("conf") is old:
      await asyncio.sleep(0)
    new = reg.lookup("conf")
    assert not rebind.done()  # Draining the admitted listing.
    gate.open()
    tools = await listing
    await rebind
    gates = {id(t.__dict__["_adk_apps_gate"]) for t in tools}
    assert gates == {id(old._gate)}  # pylint: disable=protected-access
    assert old.construction_count == new.construction_count == 1
    fresh = await reg.toolset("conf").get_tools(CTX)  # type: ignore[arg-type]
    assert {id(t.__dict__["_adk_apps_gate"]) for t in fresh} == {
        id(new._gate)  # pylint: disable=protected-access
    }


@pytest.mark.conformance("P2-REB-04", "P2-REB-06", "P2-REB-07")
async def test_rebind_racing_calls(
    legacy_http_server: Any,
) -> None:
  """P2-REB-04, -06, -07: old calls finish on the old generation.

  New work is served by the new proxy while the old one drains, no model
  call fails during the swap, and the draining client opens nothing new.
  """
  profile = local_dev_profile(renderer=None)  # Model-only traffic first.
  async with _registry(
      {"conf": http_spec(legacy_http_server.url)}, profile
  ) as reg:
    handle = reg.toolset("conf")
    old = reg.lookup("conf")
    old_who = await _model_call(handle)
    call = asyncio.create_task(
        old.call_tool(names.SLOW_OPERATION, {"ms": 500, "tag": "reb"})
    )
    while old.inflight == 0:
      await asyncio.sleep(0)
    rebind = asyncio.create_task(reg.rebind(local_dev_profile("ready")))
    while reg.lookup("conf") is old:
      await asyncio.sleep(0)
    # The old proxy is draining; new model work goes to the new proxy: its
    # UI calls on its (advertising) app-safe class, the rest on its own
    # callbacked connection, not the old proxy's.
    assert old.state is S.REVOKING and old.inflight == 1
    assert (await _model_ui_whoami(reg))["supportsApps"] is True
    during = await _model_call(handle)
    _assert_not_advertising(during)
    assert during["connectionId"] != old_who["connectionId"]
    assert old.runtime is not None
    with pytest.raises(StaleGenerationError):
      await old.runtime._mcp_session_manager.create_session()  # pylint: disable=protected-access
    result = await call  # Completed on the old generation.
    assert not result.is_error
    report = await rebind
    assert report.drains["conf"].cancelled == 0
    assert old.state is S.CLOSED and old.close_count == 1
    assert reg.lookup("conf").inflight == 0


@pytest.mark.conformance("P2-REB-05")
async def test_rebind_racing_close(legacy_http_server: Any) -> None:
  """P2-REB-05: the losing operation is typed; each proxy closes once."""
  reg = _registry({"conf": http_spec(legacy_http_server.url)})
  await reg.start()
  gate = Gate()

  async def hook(event: RevocationEvent) -> None:
    del event
    await gate.wait()

  reg.add_revocation_hook(hook)
  rebind = asyncio.create_task(reg.rebind(local_dev_profile("next")))
  await gate.entered.wait()
  closing = asyncio.create_task(reg.aclose())
  for _ in range(20):
    await asyncio.sleep(0)
  assert not closing.done()  # Serialized behind the rebind.
  gate.open()
  await rebind
  await closing
  with pytest.raises(RegistryClosedError):
    await reg.rebind(local_dev_profile("late"))  # The loser, typed.
  proxies = reg.materialized
  assert len(proxies) == 2
  assert [p.close_count for p in proxies] == [1, 1]
  assert [p.construction_count for p in proxies] == [1, 1]
  for proxy in proxies:
    with pytest.raises(ToolsetClosedError):
      await proxy.get_tools()


@pytest.mark.conformance("P2-REB-09", "P2-REB-10")
async def test_old_view_and_declaration_cannot_reach_new_proxy(
    legacy_http_server: Any,
) -> None:
  """P2-REB-09 / -10 (registry level: old proxy = View's, old tools)."""
  async with _registry({"conf": http_spec(legacy_http_server.url)}) as reg:
    old = reg.lookup("conf")
    declarations = await reg.toolset("conf").get_tools()
    await reg.rebind(local_dev_profile("next"))
    new = reg.lookup("conf")
    with pytest.raises(StaleGenerationError):
      await old.call_tool(names.WHOAMI)  # What an old View would use.
    with pytest.raises(StaleGenerationError):
      await old.read_resource_by_uri(names.VIEW_URI)
    for tool in declarations:
      with pytest.raises(StaleGenerationError):
        await tool.run_async(args={}, tool_context=None)
    assert new.inflight == 0 and new.construction_count == 1


# --- P2-LOOP-01 (registry level) and P2-RDY-20 -------------------------------


@pytest.mark.conformance("P2-LOOP-01")
async def test_registry_bound_io_runs_on_the_registry_thread(
    mcp_apps: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
  """P2-LOOP-01 (registry level): with routing on for profile-bound toolsets,
  every session open, listing, call, read and close of a registry-bound
  toolset runs on the registry thread, through the handle, the proxy, a real
  Runner turn, withdrawal and shutdown alike.

  Registry-bound means the app-safe class: the generations the registry
  owns (listings, the model's UI calls, the host's calls and reads). The
  callbacked class, which serves non-UI model tools, is upstream's
  connection and stays on the caller's loop (P2-AFF-05)."""
  # pylint: disable-next=g-import-not-at-top
  from mcp.client.session import ClientSession

  ops: list[tuple[str, int, Any]] = []
  enter, send, exit_ = (
      ClientSession.__aenter__,
      ClientSession.send_request,
      ClientSession.__aexit__,
  )

  async def spy_enter(self: Any) -> Any:
    ops.append(("open", threading.get_ident(), self))
    return await enter(self)

  async def spy_send(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
    ops.append((getattr(request, "method", "?"), threading.get_ident(), self))
    return await send(self, request, *args, **kwargs)

  async def spy_exit(self: Any, *args: Any) -> Any:
    ops.append(("close", threading.get_ident(), self))
    return await exit_(self, *args)

  monkeypatch.setattr(ClientSession, "__aenter__", spy_enter)
  monkeypatch.setattr(ClientSession, "send_request", spy_send)
  monkeypatch.setattr(ClientSession, "__aexit__", spy_exit)

  async with _registry(
      {"conf": stdio_spec(mcp_apps.stdio_parameters())}
  ) as reg:
    registry_thread = reg.event_loop.thread
    assert registry_thread is not None
    proxy = reg.lookup("conf")
    assert proxy.profile_bound
    runtime = proxy.runtime
    assert runtime is not None
    # The callbacked manager is upstream's: no Apps binding, no routing.
    assert runtime._mcp_session_manager._apps_client_binding is None  # pylint: disable=protected-access
    assert await reg.toolset("conf").get_tools()
    hold = await _model_ui_call(reg)  # The model's UI call: app-safe.
    hold.release()
    plain = await _model_call(reg.toolset("conf"))  # Non-UI: callbacked.
    _assert_not_advertising(plain)
    assert (await _call(proxy, names.WHOAMI))["supportsApps"] is True
    assert await proxy.read_resource_by_uri(names.VIEW_URI)
    generations = reg.connections.generations()
    assert generations
    for generation in generations:
      connection = generation._connection  # pylint: disable=protected-access
      binding = connection._manager._apps_client_binding  # pylint: disable=protected-access
      assert binding.registry_loop is reg.event_loop
    app_safe = {id(loop_routing.unwrap(g.session)) for g in generations}
    await reg.revoke()  # Closes the advertising connections (step 3).
    bound_ops = [(m, t) for m, t, session in ops if id(session) in app_safe]
    callbacked_ops = [
        (m, t) for m, t, session in ops if id(session) not in app_safe
    ]
  methods = {what for what, _ in bound_ops}
  assert {"open", "tools/list", "tools/call", "resources/read", "close"} <= (
      methods
  ), methods
  elsewhere = [op for op in bound_ops if op[1] != registry_thread.ident]
  assert not elsewhere, elsewhere
  # The callbacked class served the non-UI model call on the caller's loop.
  assert ("tools/call", threading.get_ident()) in callbacked_ops


class _CallParker:
  """A header provider that parks the tool call armed by `before_tool`.

  McpTool builds its headers inside the proxy gate's admission, so the
  parked call is admitted and in flight; listings pass unparked.
  """

  def __init__(self) -> None:
    self.armed = False
    self.entered = asyncio.Event()
    self.opened = asyncio.Event()

  def before_tool(self, *args: Any, **kwargs: Any) -> None:
    del args, kwargs
    self.armed = True

  async def __call__(self, readonly_context: Any) -> dict[str, str]:
    del readonly_context
    if self.armed:
      self.armed = False
      self.entered.set()
      await self.opened.wait()
    return {}


@pytest.mark.conformance("P2-RDY-20")
async def test_loss_during_initial_ui_call(
    legacy_http_server: Any,
) -> None:
  """P2-RDY-20: readiness is lost while the initial UI tool call is in flight.

  A real Runner turn's model calls the UI tool `open_view` on the
  profile-bound generation; the call is admitted and parked (in its header
  provider) when `revoke()` starts. Decision: admitted work is drained, not
  failed: within the drain bound the call completes on the old generation,
  opening its connection on the registry loop after the gate has shut (the
  admission ticket carries the caller's admission there), and the model
  receives the completed UI result. Only then are the old connections
  closed (step 3); the next turn is served model-only, without the Apps
  advertisement. (Work still running at the bound is cancelled, P2-RDY-16.)
  Ordering is forced with events: the revocation hook proves the gate shut
  and the generation bumped before the parked call resumes.
  """
  parker = _CallParker()
  spec = http_spec(legacy_http_server.url, header_provider=parker)
  async with _registry({"conf": spec}) as reg:
    old = reg.lookup("conf")
    assert old.state is S.PROFILE_BOUND
    hook_ran = asyncio.Event()
    reg.add_revocation_hook(lambda event: hook_ran.set())
    handle = reg.toolset("conf")
    turn = asyncio.create_task(
        _model_call(
            handle,
            names.OPEN_VIEW,
            key="text",
            before_tool_callback=parker.before_tool,
        )
    )
    # The UI call is admitted and in flight.
    await asyncio.wait_for(parker.entered.wait(), TIMEOUT)
    assert old.inflight == 1
    revoking = asyncio.create_task(reg.revoke())
    await hook_ran.wait()  # Step 1 done: the gate is shut.
    assert old.state is S.REVOKING and reg.binding_generation == 2
    assert not revoking.done()  # Draining the admitted call.
    with pytest.raises(StaleGenerationError):
      await old.call_tool(names.WHOAMI)  # New work on it is refused.
    parker.opened.set()
    # The completed UI result reached the model.
    result = await asyncio.wait_for(turn, TIMEOUT)
    match = re.search(r"nonce ([0-9a-f]+)", result["text"])
    assert match, result
    report = await revoking
    assert report.steps == STEPS
    assert report.drains["conf"] == DrainResult(admitted=1, cancelled=0)
    assert old.state is S.CLOSED and old.close_count == 1
    new = reg.lookup("conf")
    assert new.state is S.MODEL_ONLY
    await _assert_old_connection_terminated(new, match.group(1))
    _assert_not_advertising(await _model_call(handle))


class _StandInRunner:
  """A Runner stand-in: the side table only needs a weak-referenceable key."""


async def test_runner_leases_stay_on_their_generation_across_rebind(
    mcp_apps: Any,
) -> None:
  """Registry leases across a rebind: a token stays bound to the generation
  it was issued for; withdrawal closes that generation once (step 3) and the
  token's later release closes nothing; binding again leases the successor,
  whose last release closes its connections, after which a new bind opens a
  new lease epoch."""
  before = mcp_apps.child_pids()
  closes: list[Any] = []

  async def hook(key: Any) -> None:
    closes.append(key)

  async with _registry(
      {"conf": stdio_spec(mcp_apps.stdio_parameters())}, _lease_close_hook=hook
  ) as reg:
    runner = _StandInRunner()
    token = reg.bind_runner(runner, "conf")
    assert reg.bind_runner(runner, "conf") is token  # Idempotent.
    assert token.generation_key == LeaseGenerationKey("conf", 1, 1)
    old = reg.lookup("conf")
    await _call(old, names.WHOAMI)
    await reg.rebind(local_dev_profile("next"))
    assert old.state is S.CLOSED and old.close_count == 1
    assert not mcp_apps.child_pids() - before  # Closed by withdrawal.
    await release_runner_leases(runner)
    assert closes == [token.generation_key]  # Ran, and closed nothing.
    assert old.close_count == 1

    successor = reg.bind_runner(runner, "conf")
    assert successor.generation_key == LeaseGenerationKey("conf", 2, 1)
    new = reg.lookup("conf")
    first = await _call(new, names.WHOAMI)
    await release_runner_leases(runner)
    assert not mcp_apps.child_pids() - before  # Last release closed it.
    assert new.state is S.PROFILE_BOUND  # It keeps serving, reconnecting.
    second = await _call(new, names.WHOAMI)
    assert second["connectionId"] != first["connectionId"]
    third = reg.bind_runner(runner, "conf")
    assert third.generation_key == LeaseGenerationKey("conf", 2, 2)
  assert mcp_apps.child_pids() == before
  assert reg.leases.outstanding(third.generation_key) == 1  # Shutdown closed.
