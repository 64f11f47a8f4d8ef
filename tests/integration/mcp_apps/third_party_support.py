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

"""The published MCP App servers' process helpers, loaded once by path.

`tests/` is not a package, so `third_party_mcp_apps/servers.py` is imported
from its file. A plain module, not `conftest.py`: test modules use `servers`
at import time (parametrize lists) and skip with `needs_node`.

  from third_party_support import servers
  pytestmark = [needs_node, pytest.mark.usefixtures("third_party_packages")]
"""

from __future__ import annotations

import importlib.util
import pathlib
import shutil
import sys
from types import ModuleType

import pytest

FIXTURE_DIR = (
    pathlib.Path(__file__).resolve().parents[1] / "third_party_mcp_apps"
)


def _load_servers_module() -> ModuleType:
  """Imports `third_party_mcp_apps/servers.py` by path, once."""
  name = "_adk_third_party_mcp_apps_servers"
  if name in sys.modules:
    return sys.modules[name]
  spec = importlib.util.spec_from_file_location(
      name, FIXTURE_DIR / "servers.py"
  )
  assert spec and spec.loader
  module = importlib.util.module_from_spec(spec)
  sys.modules[name] = module
  spec.loader.exec_module(module)
  return module


servers = _load_servers_module()

needs_node = pytest.mark.skipif(
    not (shutil.which("node") and shutil.which("npm")),
    reason="node and npm are needed for the third-party MCP App servers",
)
