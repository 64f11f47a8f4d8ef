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

"""Shared helpers of the binding, affinity and generation tests.

A plain module, not `conftest.py`: module-level helpers (endpoint and spec
factories, `Host` classes) call these at import time and outside fixtures.

  spec = http_spec(server.url, tool_filter=["whoami"])
  response = await run_turn(runner, session)
  data = await app_followup(hold, nonce, server_id)
"""

from __future__ import annotations

import contextlib
from typing import Any
from typing import Optional

from google.adk.mcp_apps.affinity.generations import GenerationHold
from google.adk.mcp_apps.affinity.routing import call_app_tool
from google.adk.mcp_apps.affinity.security_domain import acting_principal
from google.adk.mcp_apps.binding.spec import McpToolsetSpec
from google.adk.mcp_apps.contracts.principal_resolver import Principal
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.runners import Runner
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.adk.tools.mcp_tool import StreamableHTTPConnectionParams
from google.genai import types as genai_types
from mcp import StdioServerParameters
from mcp import types as mcp_types
import mcp.client.session as sdk_session
from mcp_apps_conformance_server import names

TIMEOUT = 30.0

SDK_INPUT_DEFAULTS = {
    "sampling": "_default_sampling_callback",
    "elicitation": "_default_elicitation_callback",
    "roots": "_default_list_roots_callback",
}
"""The SDK's module-level answers to input rounds a client has no callback
for (each answers with an error), by round kind."""


class Recorder:
  """Sampling and elicitation callbacks that would succeed, and count."""

  def __init__(self) -> None:
    self.calls: list[str] = []

  async def sampling(self, context: Any, params: Any) -> Any:
    del context, params
    self.calls.append("sampling")
    return mcp_types.CreateMessageResult(
        role="assistant",
        content=mcp_types.TextContent(type="text", text="sampled"),
        model="stand-in",
    )

  async def elicitation(self, context: Any, params: Any) -> Any:
    del context, params
    self.calls.append("elicitation")
    return mcp_types.ElicitResult(action="accept", content={"approve": True})

  def spec_kwargs(self) -> dict[str, Any]:
    return {
        "sampling_callback": self.sampling,
        "elicitation_callback": self.elicitation,
    }


def record_sdk_defaults(
    monkeypatch: Any, defaults: Optional[dict[str, str]] = None
) -> list[str]:
  """Records every call of the SDK's module-level client defaults.

  A `ClientSession` built without a callback binds the SDK's default when
  it is constructed, so this must run before any connection opens. Each
  wrapper records its kind and still runs the SDK's default.

  Args:
    monkeypatch: The test's `monkeypatch`.
    defaults: Kind -> `mcp.client.session` attribute; the input-round
      defaults (`SDK_INPUT_DEFAULTS`) unless given.

  Returns:
    The kinds of the defaults that ran, in order (appended to live).
  """
  rounds: list[str] = []
  for kind, attribute in (defaults or SDK_INPUT_DEFAULTS).items():
    original = getattr(sdk_session, attribute)

    def recording(
        *args: Any, _kind: str = kind, _original: Any = original
    ) -> Any:
      rounds.append(_kind)
      return _original(*args)

    monkeypatch.setattr(sdk_session, attribute, recording)
  return rounds


def conformance_connection(
    transport: str, options: dict[str, Any], mcp_apps: Any, start_server: Any
) -> StdioConnectionParams | StreamableHTTPConnectionParams:
  """Connection parameters for a conformance server started with `options`.

  Args:
    transport: "stdio", or "legacy_http" / "modern_http" (stateful or
      stateless streamable HTTP, a server started here).
    options: The server's options.
    mcp_apps: The `mcp_apps` fixture.
    start_server: The `start_server` fixture.
  """
  if transport == "stdio":
    return StdioConnectionParams(
        server_params=mcp_apps.stdio_parameters(options), timeout=TIMEOUT
    )
  server = start_server(
      "streamable-http",
      stateless=transport == "modern_http",
      options=options,
  )
  return StreamableHTTPConnectionParams(url=server.url, timeout=TIMEOUT)


def http_spec(
    url: str, headers: Optional[dict[str, str]] = None, **kwargs: Any
) -> McpToolsetSpec:
  """A spec for a streamable-HTTP server at `url`."""
  return McpToolsetSpec(
      connection_params=StreamableHTTPConnectionParams(
          url=url, headers=headers, timeout=TIMEOUT
      ),
      **kwargs,
  )


def stdio_spec(params: StdioServerParameters, **kwargs: Any) -> McpToolsetSpec:
  """A spec for a stdio server started with `params`."""
  return McpToolsetSpec(
      connection_params=StdioConnectionParams(
          server_params=params, timeout=TIMEOUT
      ),
      **kwargs,
  )


async def app_followup(
    hold: GenerationHold, nonce: str, server_id: str
) -> dict[str, Any]:
  """A View's app-only `app_followup(nonce)` on its own server; the data.

  Args:
    hold: The View's hold on its connection generation.
    nonce: The nonce the follow-up presents.
    server_id: The View's server, also the call's target.
  """
  result = await call_app_tool(
      hold,
      names.APP_FOLLOWUP,
      {"nonce": nonce},
      view_server_id=server_id,
      target_server_id=server_id,
  )
  data = result.structured_content
  assert isinstance(data, dict), result
  assert bool(result.is_error) == (data["verdict"] != "ok"), result
  return data


async def run_turn(
    runner: Runner,
    session: SessionKey,
    principal: Optional[Principal] = None,
) -> genai_types.FunctionResponse:
  """One real Runner turn ("go"), as `principal` if given; its one response.

  Args:
    runner: The Runner whose scripted model makes exactly one call.
    session: The Session the turn runs in.
    principal: The acting principal the serving host declares, if any.
  """
  responses = []
  scope = (
      acting_principal(principal)
      if principal is not None
      else contextlib.nullcontext()
  )
  with scope:
    async for event in runner.run_async(
        user_id=session.user_id,
        session_id=session.session_id,
        new_message=genai_types.Content(
            role="user", parts=[genai_types.Part(text="go")]
        ),
    ):
      responses.extend(event.get_function_responses())
  assert len(responses) == 1, responses
  return responses[0]
