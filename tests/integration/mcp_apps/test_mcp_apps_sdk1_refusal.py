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

"""A host profile on MCP SDK 1.x: refused with a reason, tools kept.

MCP SDK 1.x cannot advertise client extensions, so it cannot host MCP Apps,
yet upstream's `mcp` extra admits it. A profile that is otherwise complete
is then not ready: readiness names the SDK (`mcp_sdk: sdk_unsupported`) and
what to install, the registry leaves every toolset model-only with all its
tools, and asking for the extension directly raises the typed
`ClientExtensionsUnsupportedError`.

These tests need MCP SDK 1.x: `make compat-mcp1` runs them there (on 2.x
they skip). They use no fixture of `conftest.py`; the server, the plain
fixture server over stdio, is an SDK-2 program run by
`differential_scenarios.server_python()`.
"""

from __future__ import annotations

import importlib.metadata
import logging

import differential_scenarios as ds
from google.adk.dependencies import _mcp
from google.adk.mcp_apps.binding.client_extensions import AppsClientBinding
from google.adk.mcp_apps.binding.client_extensions import ClientExtensionsUnsupportedError
from google.adk.mcp_apps.binding.proxy import ProxyState
from google.adk.mcp_apps.binding.registry import McpAppBindingRegistry
from google.adk.mcp_apps.binding.spec import McpToolsetSpec
from google.adk.mcp_apps.profile import check_readiness
from google.adk.mcp_apps.profile import local_dev_profile
from google.adk.mcp_apps.profile import Prerequisite
from google.adk.mcp_apps.profile import Problem
from google.adk.mcp_apps.profile import ProfileNotReadyError
from google.adk.mcp_apps.profile.capabilities import EXTENSION_ID
from google.adk.mcp_apps.profile.capabilities import MCP_APP_MIME_TYPE
from google.adk.tools.mcp_tool import StdioConnectionParams
from mcp import StdioServerParameters
import pytest

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        _mcp.IS_MCP_SDK_V2,
        reason='needs MCP SDK 1.x; `make compat-mcp1` runs it there',
    ),
]


def _plain_spec() -> McpToolsetSpec:
  return McpToolsetSpec(
      connection_params=StdioConnectionParams(
          server_params=StdioServerParameters(
              command=ds.server_python(),
              args=['-m', 'mcp_apps_plain_server'],
              env={'PYTHONPATH': str(ds.FIXTURES_DIR)},
          ),
          timeout=30.0,
      )
  )


def test_readiness_names_the_sdk_and_what_to_install() -> None:
  """A complete profile is not ready on 1.x, for one readable reason."""
  readiness = check_readiness(local_dev_profile(), allow_dev_providers=True)

  assert not readiness.bindable
  (reason,) = readiness.reasons
  assert reason.prerequisite is Prerequisite.MCP_SDK
  assert reason.problem is Problem.SDK_UNSUPPORTED
  assert importlib.metadata.version('mcp') in reason.detail
  assert 'mcp>=2.3,<3' in reason.detail
  assert 'google-adk[mcpapps]' in reason.detail
  assert readiness.client_extensions() == {}
  with pytest.raises(ProfileNotReadyError, match='mcp_sdk: sdk_unsupported'):
    readiness.raise_if_not_bindable()


async def test_registry_keeps_every_tool_model_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
  """The registry refuses to bind and still serves the server's tools."""
  plain = _plain_spec().build()
  try:
    expected = [tool.name for tool in await plain.get_tools()]
  finally:
    await plain.close()

  caplog.set_level(logging.WARNING)
  async with McpAppBindingRegistry(
      {'plain': _plain_spec()}, local_dev_profile(), allow_dev_providers=True
  ) as registry:
    proxy = registry.lookup('plain')
    tools = [tool.name for tool in await registry.toolset('plain').get_tools()]

    assert proxy.state is ProxyState.MODEL_ONLY
    assert not proxy.profile_bound
  assert tools == expected == ['lookup', 'total']
  assert any(
      'not bindable' in r.getMessage() and 'mcp_sdk' in r.getMessage()
      for r in caplog.records
  )


def test_asking_for_the_apps_extension_raises_the_typed_error() -> None:
  """Building an Apps client binding directly fails, and says why."""
  with pytest.raises(ClientExtensionsUnsupportedError, match='SDK 2.x'):
    AppsClientBinding({EXTENSION_ID: {'mimeTypes': [MCP_APP_MIME_TYPE]}})
