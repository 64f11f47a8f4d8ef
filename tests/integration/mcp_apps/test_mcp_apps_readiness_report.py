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

"""`McpAppBindingRegistry.readiness_report()` against the conformance server.

A toolset the registry cannot bind stays model-only and keeps serving the
model, so the report is the one place a user learns why. Each test checks
the report entry against what the toolset really does: whether its proxy is
profile-bound, and whether the connection it calls on advertises the Apps
extension to the server (the server's `whoami` answer).
"""

from __future__ import annotations

from typing import Any

from google.adk.mcp_apps import BindingOverrides
from google.adk.mcp_apps import local_dev_profile
from google.adk.mcp_apps import McpAppBindingRegistry
from google.adk.mcp_apps import McpToolsetSpec
from google.adk.mcp_apps import ModelOnlyReason
from google.adk.mcp_apps import Prerequisite
from google.adk.mcp_apps import Problem
from google.adk.mcp_apps import ReadinessReport
from google.adk.mcp_apps import ToolsetReadiness
from google.adk.mcp_apps.profile.readiness import PROVIDERS
from google.adk.tools.mcp_tool import StdioConnectionParams
from mcp_apps_conformance_server import names
import pytest

pytestmark = pytest.mark.integration

TIMEOUT = 30.0


def _spec(mcp_apps: Any) -> McpToolsetSpec:
  return McpToolsetSpec(
      connection_params=StdioConnectionParams(
          server_params=mcp_apps.stdio_parameters(), timeout=TIMEOUT
      )
  )


async def _advertises_apps(registry: McpAppBindingRegistry, tid: str) -> bool:
  """Whether the toolset's own calls reach the server advertising Apps."""
  result = await registry.lookup(tid).call_tool(names.WHOAMI, {})
  assert isinstance(result.structured_content, dict), result
  return bool(result.structured_content["supportsApps"])


def _model_only(
    entry: ToolsetReadiness, reason: ModelOnlyReason
) -> ToolsetReadiness:
  assert not entry.profile_bound, entry
  assert entry.reason is reason, entry
  assert entry.message.startswith(
      "not started" if reason is ModelOnlyReason.NOT_STARTED else "model-only"
  ), entry
  return entry


async def test_bound_toolset_reports_bound_and_advertises(
    mcp_apps: Any,
) -> None:
  registry = McpAppBindingRegistry(
      {"conf": _spec(mcp_apps)}, local_dev_profile(), allow_dev_providers=True
  )
  _model_only(registry.readiness_report()["conf"], ModelOnlyReason.NOT_STARTED)
  async with registry:
    report = registry.readiness_report()
    advertises = await _advertises_apps(registry, "conf")
  entry = report["conf"]
  assert isinstance(report, ReadinessReport)
  assert report.all_bound and report.profile_name == "local-dev"
  assert report.profile_readiness is not None
  assert report.profile_readiness.bindable
  assert entry.profile_bound and entry.reason is None
  assert entry.readiness_reasons == () and entry.binding_generation == 1
  assert "io.modelcontextprotocol/ui" in entry.message
  assert advertises
  _model_only(registry.readiness_report()["conf"], ModelOnlyReason.CLOSED)


async def test_dev_profile_without_dev_configuration_explains_the_fix(
    mcp_apps: Any,
) -> None:
  """The misconfiguration the registry docstring example used to teach."""
  registry = McpAppBindingRegistry(
      {"conf": _spec(mcp_apps)}, local_dev_profile(), allow_dev_providers=False
  )
  async with registry:
    entry = registry.readiness_report()["conf"]
    advertises = await _advertises_apps(registry, "conf")
  _model_only(entry, ModelOnlyReason.PROFILE_NOT_READY)
  assert {r.problem for r in entry.readiness_reasons} == {
      Problem.DEV_PROVIDER_REFUSED
  }
  assert {r.prerequisite for r in entry.readiness_reasons} == set(PROVIDERS)
  assert "allow_dev_providers=True" in entry.message
  assert not advertises


async def test_missing_provider_is_named_in_the_report(mcp_apps: Any) -> None:
  registry = McpAppBindingRegistry(
      {"conf": _spec(mcp_apps)},
      local_dev_profile("prod", principal_resolver=None),
      allow_dev_providers=True,
  )
  async with registry:
    report = registry.readiness_report()
    advertises = await _advertises_apps(registry, "conf")
  entry = _model_only(report["conf"], ModelOnlyReason.PROFILE_NOT_READY)
  ((prerequisite, problem),) = {
      (r.prerequisite, r.problem) for r in entry.readiness_reasons
  }
  assert (prerequisite, problem) == (
      Prerequisite.PRINCIPAL_RESOLVER,
      Problem.MISSING,
  )
  assert "'prod'" in entry.message and "principal_resolver: missing" in str(
      report
  )
  assert not report.all_bound and not advertises


async def test_registry_without_profile_reports_no_profile(
    mcp_apps: Any,
) -> None:
  async with McpAppBindingRegistry({"conf": _spec(mcp_apps)}) as registry:
    report = registry.readiness_report()
    advertises = await _advertises_apps(registry, "conf")
  _model_only(report["conf"], ModelOnlyReason.NO_PROFILE)
  assert report.profile_name is None and report.profile_readiness is None
  assert not advertises


async def test_routing_exclusions_are_reported_per_toolset(
    mcp_apps: Any,
) -> None:
  registry = McpAppBindingRegistry(
      {
          "apps": _spec(mcp_apps),
          "unlisted": _spec(mcp_apps),
          "model_only_visibility": _spec(mcp_apps),
      },
      local_dev_profile(),
      allow_dev_providers=True,
      apps_toolsets={"apps", "model_only_visibility"},
      overrides={
          "model_only_visibility": BindingOverrides(
              visibility=frozenset({"model"})
          )
      },
  )
  async with registry:
    report = registry.readiness_report()
    advertised = {
        tid: await _advertises_apps(registry, tid)
        for tid in registry.toolset_ids
    }
  assert [e.toolset_id for e in report] == [
      "apps",
      "unlisted",
      "model_only_visibility",
  ]
  assert report["apps"].profile_bound
  _model_only(report["unlisted"], ModelOnlyReason.NOT_APPS_ROUTED)
  _model_only(
      report["model_only_visibility"], ModelOnlyReason.APP_VISIBILITY_EXCLUDED
  )
  assert advertised == {
      "apps": True,
      "unlisted": False,
      "model_only_visibility": False,
  }
  with pytest.raises(KeyError):
    report["nope"]  # pylint: disable=pointless-statement


async def test_withdrawal_loss_and_rebind_move_the_report(
    mcp_apps: Any,
) -> None:
  registry = McpAppBindingRegistry(
      {"conf": _spec(mcp_apps)}, local_dev_profile(), allow_dev_providers=True
  )
  replacement = local_dev_profile()
  async with registry:
    await registry.revoke()
    withdrawn = registry.readiness_report()["conf"]
    withdrawn_advertises = await _advertises_apps(registry, "conf")

    await registry.rebind(replacement)
    rebound = registry.readiness_report()["conf"]
    rebound_advertises = await _advertises_apps(registry, "conf")

    replacement.renderer.detach()  # type: ignore[union-attr]
    await registry.recheck()
    lost = registry.readiness_report()["conf"]
    lost_advertises = await _advertises_apps(registry, "conf")

  _model_only(withdrawn, ModelOnlyReason.WITHDRAWN)
  assert "rebind()" in withdrawn.message and not withdrawn_advertises
  assert rebound.profile_bound and rebound.binding_generation == 3
  assert rebound_advertises
  _model_only(lost, ModelOnlyReason.PROFILE_NOT_READY)
  assert [(r.prerequisite, r.problem) for r in lost.readiness_reasons] == [
      (Prerequisite.RENDERER, Problem.RENDERER_DETACHED)
  ]
  assert lost.binding_generation == 4 and not lost_advertises
