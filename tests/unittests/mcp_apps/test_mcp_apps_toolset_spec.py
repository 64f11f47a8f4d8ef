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

"""`McpToolsetSpec`: lossless, connection-only, immutable; the stdio gate.

Cases P2-SPEC-01 .. P2-SPEC-04. Building a toolset connects nothing, so no
server is needed here; the spec-built toolsets are exercised against real
servers in `tests/integration/mcp_apps/test_mcp_apps_proxy_lifecycle.py`.
"""

from __future__ import annotations

import dataclasses
import io
from typing import Any

from fastapi.openapi.models import HTTPBearer
from google.adk.auth.auth_credential import AuthCredential
from google.adk.auth.auth_credential import AuthCredentialTypes
from google.adk.auth.auth_credential import HttpAuth
from google.adk.auth.auth_credential import HttpCredentials
from google.adk.mcp_apps.binding import spec as spec_module
from google.adk.mcp_apps.binding.client_extensions import AppsClientBinding
from google.adk.mcp_apps.binding.errors import McpToolsetSpecError
from google.adk.mcp_apps.binding.spec import McpToolsetSpec
from google.adk.mcp_apps.catalog.listing import ToolListingBounds
from google.adk.tools.mcp_tool import mcp_toolset
from google.adk.tools.mcp_tool.mcp_session_manager import StdioConnectionParams
from google.adk.tools.mcp_tool.mcp_session_manager import StreamableHTTPConnectionParams
from google.adk.tools.mcp_tool.mcp_toolset import McpToolset
from google.adk.tools.tool_configs import ToolArgsConfig
from mcp import StdioServerParameters
from mcp import types
import pytest


def _header_provider(context: Any) -> dict[str, str]:
  return {"x-tenant": "t"}


def _progress(progress: float, total: Any, message: Any) -> None:
  del progress, total, message


async def _sampling(*args: Any) -> Any:
  raise AssertionError("not called")


async def _elicitation(*args: Any) -> Any:
  raise AssertionError("not called")


def _confirm(**kwargs: Any) -> bool:
  return True


def _full_spec() -> McpToolsetSpec:
  return McpToolsetSpec(
      connection_params=StreamableHTTPConnectionParams(
          url="http://127.0.0.1:1/mcp", headers={"x-static": "1"}, timeout=7
      ),
      tool_filter=["whoami", "open_view"],
      tool_name_prefix="conf",
      tool_list_cache_ttl_seconds=12.5,
      errlog=io.StringIO(),
      auth_scheme=HTTPBearer(bearerFormat="JWT"),
      auth_credential=AuthCredential(
          auth_type=AuthCredentialTypes.HTTP,
          http=HttpAuth(
              scheme="bearer", credentials=HttpCredentials(token="tok")
          ),
      ),
      credential_key="cred-key",
      require_confirmation=_confirm,
      header_provider=_header_provider,
      progress_callback=_progress,
      use_mcp_resources=True,
      sampling_callback=_sampling,
      sampling_capabilities=types.SamplingCapability(),
      elicitation_callback=_elicitation,
      propagate_grounding_metadata=True,
      tool_listing_bounds=ToolListingBounds(max_pages=3),
  )


@pytest.mark.conformance("P2-SPEC-01")
def test_round_trip_is_lossless() -> None:
  """P2-SPEC-01: every McpToolset argument survives spec -> kwargs -> spec."""
  spec = _full_spec()
  kwargs = spec.to_kwargs()
  expected = {
      f.name for f in dataclasses.fields(McpToolsetSpec) if f.name != "origin"
  }
  assert set(kwargs) == expected
  assert McpToolsetSpec(**kwargs) == spec
  # Every spec field is an McpToolset parameter (roots only if it has one).
  import inspect

  params = set(inspect.signature(McpToolset.__init__).parameters)
  assert expected <= params
  assert params - expected == {
      "self",
      "_apps_client_binding",
      "_apps_routing",
  } | ({"list_roots_callback"} if spec_module.ROOTS_SUPPORTED else set())

  toolset = spec.build()
  # pylint: disable=protected-access
  assert toolset.connection_params == spec.connection_params
  assert toolset.tool_filter == ["whoami", "open_view"]
  assert toolset.tool_name_prefix == "conf"
  assert toolset._tool_list_cache_ttl_seconds == 12.5
  assert toolset.errlog is spec.errlog
  assert toolset.auth_scheme == spec.auth_scheme
  assert toolset.auth_credential == spec.auth_credential
  auth_config = toolset.get_auth_config()
  assert auth_config is not None and auth_config.credential_key == "cred-key"
  assert toolset.require_confirmation is _confirm
  assert toolset.header_provider is _header_provider
  assert toolset._progress_callback is _progress
  assert toolset._use_mcp_resources is True
  assert toolset._sampling_callback is _sampling
  assert toolset._sampling_capabilities == types.SamplingCapability()
  assert toolset._elicitation_callback is _elicitation
  assert toolset._propagate_grounding_metadata is True
  assert toolset._tool_listing_bounds == ToolListingBounds(max_pages=3)
  assert toolset._mcp_session_manager._apps_client_binding is None


@pytest.mark.conformance("P2-SPEC-01")
def test_spec_is_immutable_and_copies_in_and_out() -> None:
  """P2-SPEC-01: neither the caller nor a built toolset can alter a spec."""
  params = StreamableHTTPConnectionParams(url="http://127.0.0.1:1/mcp")
  names = ["a"]
  spec = McpToolsetSpec(connection_params=params, tool_filter=names)
  params.url = "http://evil.invalid/mcp"
  names.append("b")
  assert spec.connection_params.url == "http://127.0.0.1:1/mcp"
  assert spec.tool_filter == ("a",)
  with pytest.raises(dataclasses.FrozenInstanceError):
    spec.tool_name_prefix = "x"  # type: ignore[misc]
  built = spec.build()
  built.connection_params.url = "http://evil.invalid/mcp"
  assert spec.connection_params.url == "http://127.0.0.1:1/mcp"
  assert spec.build().connection_params.url == "http://127.0.0.1:1/mcp"


@pytest.mark.conformance("P2-SPEC-02")
def test_spec_holds_connection_configuration_only() -> None:
  """P2-SPEC-02: no profile, live client or session is embedded."""
  spec = _full_spec()
  field_names = {f.name for f in dataclasses.fields(McpToolsetSpec)}
  assert not {"profile", "_apps_client_binding", "session", "client"} & (
      field_names
  )
  with pytest.raises(TypeError):
    McpToolsetSpec(  # type: ignore[call-arg]
        connection_params=spec.connection_params, profile=object()
    )
  # Two builds: two toolsets, two session managers, nothing shared; the
  # binding is given at build time only.
  first = spec.build()
  second = spec.build(_apps_client_binding=AppsClientBinding.for_mcp_apps())
  # pylint: disable=protected-access
  assert first._mcp_session_manager is not second._mcp_session_manager
  assert first._mcp_session_manager._apps_client_binding is None
  assert second._mcp_session_manager._apps_client_binding is not None
  assert not any(
      isinstance(getattr(spec, name), (McpToolset, AppsClientBinding))
      for name in field_names
  )
  with pytest.raises(McpToolsetSpecError):
    McpToolsetSpec(connection_params=first)  # type: ignore[arg-type]


def _stdio_config() -> ToolArgsConfig:
  return ToolArgsConfig.model_validate({
      "stdio_server_params": {"command": "python3", "args": ["-V"]},
      "tool_filter": ["x"],
  })


@pytest.fixture
def stdio_gate_default(monkeypatch: pytest.MonkeyPatch) -> None:
  monkeypatch.delenv(
      mcp_toolset.ALLOW_CONFIG_STDIO_SERVERS_ENV_VAR, raising=False
  )
  monkeypatch.setattr(mcp_toolset, "_allow_config_stdio_servers", None)


@pytest.mark.conformance("P2-SPEC-03")
def test_config_stdio_spec_is_rejected_by_default(
    stdio_gate_default: None,
) -> None:
  """P2-SPEC-03: upstream's config-stdio gate (`a61d8ecf`) applies."""
  with pytest.raises(ValueError, match="Stdio MCP servers are not allowed"):
    McpToolsetSpec.from_config(_stdio_config(), "/tmp/agent.yaml")
  # Upstream refuses the same config the same way.
  with pytest.raises(ValueError, match="Stdio MCP servers are not allowed"):
    McpToolset.from_config(_stdio_config(), "/tmp/agent.yaml")
  # The opt-in admits it, and a remote transport never needs it.
  mcp_toolset._set_allow_config_stdio_servers(True)  # pylint: disable=protected-access
  spec = McpToolsetSpec.from_config(_stdio_config(), "/tmp/agent.yaml")
  assert spec.origin == "config" and spec.is_stdio
  assert spec.tool_filter == ("x",)
  mcp_toolset._set_allow_config_stdio_servers(None)  # pylint: disable=protected-access
  remote = McpToolsetSpec.from_config(
      ToolArgsConfig.model_validate(
          {"streamable_http_connection_params": {"url": "http://127.0.0.1:1/m"}}
      ),
      "/tmp/agent.yaml",
  )
  assert remote.origin == "config" and not remote.is_stdio


@pytest.mark.conformance("P2-SPEC-04")
def test_code_constructed_stdio_spec_is_trusted(
    stdio_gate_default: None,
) -> None:
  """P2-SPEC-04: code-constructed specs bypass the config gate."""
  spec = McpToolsetSpec(
      connection_params=StdioConnectionParams(
          server_params=StdioServerParameters(command="python3", args=["-V"])
      )
  )
  assert spec.origin == "code" and spec.is_stdio
  assert isinstance(spec.build(), McpToolset)


@pytest.mark.conformance("P2-REG-04")
def test_server_id_is_stable_and_secret_free() -> None:
  """Supports P2-REG-04: descriptors' server ids survive a restart."""
  a = McpToolsetSpec(
      connection_params=StreamableHTTPConnectionParams(
          url="http://127.0.0.1:1/mcp", headers={"authorization": "secret"}
      )
  )
  b = McpToolsetSpec(
      connection_params=StreamableHTTPConnectionParams(
          url="http://127.0.0.1:1/mcp"
      )
  )
  assert a.server_id == b.server_id
  assert "secret" not in a.server_id
