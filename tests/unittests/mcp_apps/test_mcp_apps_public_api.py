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

"""The documented surface, `google.adk.mcp_apps`.

Its names load lazily, because core modules (`events`, `runners`, the MCP
toolset) import submodules of the package and pristine ADK imports them
without the `mcpapps` extra. These tests pin that: the package imports with
the MCP SDK and SQLAlchemy absent, every public name is the object its
module defines, the type-checking imports list exactly the public names,
and a name whose module needs the extra says so.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import os
from pathlib import Path
import subprocess
import sys

import google.adk.mcp_apps as mcp_apps
import pytest

_INIT = Path(mcp_apps.__file__)


def _type_checking_imports() -> dict[str, str]:
  """`name -> module` of the package's `if TYPE_CHECKING:` block."""
  tree = ast.parse(_INIT.read_text())
  (block,) = [
      node
      for node in tree.body
      if isinstance(node, ast.If)
      and isinstance(node.test, ast.Name)
      and node.test.id == "TYPE_CHECKING"
  ]
  found = {}
  for node in block.body:
    assert isinstance(node, ast.ImportFrom), ast.dump(node)
    assert len(node.names) == 1, "one import line per name"
    (alias,) = node.names
    assert alias.asname == alias.name, "`X as X` re-exports for mypy"
    found[alias.name] = "." * node.level + (node.module or "")
  return found


def test_every_public_name_is_the_object_its_module_defines() -> None:
  for name in mcp_apps.__all__:
    value = getattr(mcp_apps, name)
    module = importlib.import_module(
        mcp_apps._LAZY[name], mcp_apps.__name__  # pylint: disable=protected-access
    )
    assert value is getattr(module, name), name
  assert len(set(mcp_apps.__all__)) == len(mcp_apps.__all__)


def test_type_checking_imports_list_exactly_the_public_names() -> None:
  assert _type_checking_imports() == dict(
      mcp_apps._LAZY  # pylint: disable=protected-access
  )


def test_the_surface_holds_what_a_host_needs() -> None:
  expected = {
      # Profiles and readiness.
      "McpAppsHostProfile",
      "local_dev_profile",
      "check_readiness",
      # The registry, its specs and its readiness report.
      "McpAppBindingRegistry",
      "McpToolsetSpec",
      "ReadinessReport",
      "ModelOnlyReason",
      # The host service, its Views and its denials.
      "McpAppHostService",
      "OpenedView",
      "HostServiceError",
      "ViewLeases",
      "ExportLimits",
      "ExportResult",
      "RerunConfirmation",
      "RerunResult",
      # Views: render, the governed channel, replay, cold open.
      "bootstrap_render",
      "ViewGrant",
      "ViewChannel",
      "replay_to_view",
      "cold_affordance",
      # Contracts, their dev implementations, the durable stores.
      "PrincipalResolver",
      "SessionAuthorizer",
      "SealedResultStore",
      "LocalDevPrincipalResolver",
      "SqlSealedResultStore",
      "SqlSessionLifecycleStore",
      "SqlExportAuditStore",
      "SqlBindingKeyProvider",
  }
  assert expected <= set(mcp_apps.__all__)
  assert set(mcp_apps.__all__) <= set(dir(mcp_apps))


@pytest.mark.conformance("P4-CALL-07")
def test_no_public_name_runs_a_view_operation_outside_the_channel() -> None:
  """A View's `tools/call` and `resources/read` run only through its
  `ViewChannel`: the public API names no ungoverned runner of them, and what
  `bootstrap_render` hands a host keeps the View's connection to itself."""
  for name in (
      "call_app_tool",
      "run_app_call",
      "run_app_read",
      "GenerationHold",
      "ConnectionGeneration",
  ):
    assert name not in mcp_apps.__all__
    with pytest.raises(AttributeError):
      getattr(mcp_apps, name)
  assert "ViewChannel" in mcp_apps.__all__
  executes = {"call_tool", "read_resource", "execute", "hold", "generation"}
  for cls in (
      mcp_apps.RenderDocument,
      mcp_apps.ViewGrant,
      mcp_apps.ViewChannel,
  ):
    public = {n for n in dir(cls) if not n.startswith("_")}
    assert not public & executes, (cls.__name__, public & executes)
  grant_fields = {
      f.name for f in dataclasses.fields(mcp_apps.ViewGrant) if f.repr
  }
  assert grant_fields == {
      "view_id",
      "session",
      "binding",
      "generation_id",
      "incarnation",
  }


def test_unknown_name_is_an_attribute_error() -> None:
  try:
    getattr(mcp_apps, "NoSuchName")
  except AttributeError as e:
    assert "NoSuchName" in str(e)
  else:
    raise AssertionError("an unknown name resolved")


def _run_without_extra(code: str) -> subprocess.CompletedProcess[str]:
  """Runs `code` in a fresh interpreter where the extra's packages are absent."""
  prelude = (
      "import sys\n"
      "for blocked in ('mcp', 'sqlalchemy', 'anyio'):\n"
      "  sys.modules[blocked] = None\n"
  )
  return subprocess.run(
      [sys.executable, "-c", prelude + inspect.cleandoc(code)],
      capture_output=True,
      text=True,
      env=dict(os.environ),
      timeout=120,
      check=False,
  )


def test_package_imports_without_the_extra_and_loads_nothing() -> None:
  proc = _run_without_extra("""
      before = set(sys.modules)
      import google.adk.mcp_apps as apps
      loaded = sorted(
          m for m in set(sys.modules) - before
          if m.startswith('google.adk.mcp_apps.')
      )
      assert not loaded, loaded
      assert set(apps.__all__) <= set(dir(apps))
      print('ok')
  """)
  assert proc.returncode == 0, proc.stderr
  assert proc.stdout.strip() == "ok"


def test_a_name_that_needs_the_extra_says_how_to_install_it() -> None:
  proc = _run_without_extra("""
      import google.adk.mcp_apps as apps
      try:
        apps.SqlSealedResultStore
      except ImportError as e:
        print(e)
  """)
  assert proc.returncode == 0, proc.stderr
  assert "google-adk[mcpapps]" in proc.stdout, proc.stdout
