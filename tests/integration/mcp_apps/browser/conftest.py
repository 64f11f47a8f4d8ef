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

"""Fixtures for the renderer page's browser tests."""

from __future__ import annotations

import os
import pathlib
import re
import sys

from browser_support import ensure_page_built
import pytest

# third_party_support (the published servers) lives one level up,
# adapter_support (the adapter over the conformance server) beside it.
_MCP_APPS = pathlib.Path(__file__).resolve().parents[1]
for _path in (str(_MCP_APPS), str(_MCP_APPS / 'adapter')):
  if _path not in sys.path:
    sys.path.append(_path)


@pytest.fixture(scope='session', autouse=True)
def _page_built() -> None:
  ensure_page_built()


@pytest.fixture
def artifacts(request: pytest.FixtureRequest) -> pathlib.Path:
  """Where a failing test's screenshot and console log go.

  `$MCP_APPS_BROWSER_ARTIFACTS` (CI can collect it) or the project's
  `.cache/browser-artifacts/`, one folder per test.
  """
  base = os.environ.get('MCP_APPS_BROWSER_ARTIFACTS') or str(
      pathlib.Path(__file__).resolve().parents[4]
      / '.cache'
      / 'browser-artifacts'
  )
  name = re.sub(r'[^A-Za-z0-9_.-]+', '_', request.node.nodeid)
  return pathlib.Path(base) / name
