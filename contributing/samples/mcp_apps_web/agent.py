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

"""An agent whose MCP App Views `adk web --mcp_apps` renders in the browser.

Two MCP App servers are toolsets of ONE `McpAppBindingRegistry` (the
adapter finds it in the agent tree and binds it to the loopback-only
development profile): the dashboard sample's server
(`../mcp_apps_dashboard/server.py`) and the published system-monitor server
installed by `make npm-servers`. Without model credentials the agent runs on
`WebDemoStandInLlm`, a scripted stand-in, so it works offline.

Usage (from the repository root):

  adk web --mcp_apps --no-reload contributing/samples/mcp_apps_web
  # chat, then open
  # http://127.0.0.1:8000/mcp-apps/?app=mcp_apps_web&user=<user>&session=<id>
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
import logging
import os
from pathlib import Path
import shutil
import sys
from typing import Any

from google.adk.agents.llm_agent import LlmAgent
from google.adk.mcp_apps import McpAppBindingRegistry
from google.adk.mcp_apps import McpToolsetSpec
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.genai import types
from mcp import StdioServerParameters

logger = logging.getLogger('google_adk.' + __name__)

ROOT = Path(__file__).resolve().parents[3]
DASHBOARD_SERVER = ROOT / 'contributing/samples/mcp_apps_dashboard/server.py'
NPM_DIR = ROOT / 'tests/integration/third_party_mcp_apps'
SYSTEM_MONITOR = (
    NPM_DIR
    / 'node_modules/@modelcontextprotocol/server-system-monitor/dist/index.js'
)
DASHBOARD_TOOL = 'show_agent_dashboard'
MONITOR_TOOL = 'get-system-info'
MONITOR_WORDS = ('system', 'machine', 'cpu', 'memory', 'monitor')
INSTALL_HINT = (
    'The system-monitor server is not installed: run `make npm-servers`'
    ' in the repository root (it installs the pinned npm package into'
    ' tests/integration/third_party_mcp_apps/).'
)
STAND_IN_LABEL = '[stand-in model: no LLM credentials configured]'
GEMINI_MODEL_NAME = os.environ.get('ADK_MCP_APPS_MODEL', 'gemini-2.5-flash')


class WebDemoStandInLlm(BaseLlm):
  """A scripted stand-in for a real model, for offline runs only.

  It is not a language model. A user turn that mentions the machine
  ("system", "cpu", "memory", ...) calls `get-system-info`; any other turn
  calls `show_agent_dashboard`. When the call's response comes back it
  repeats the tool's text, prefixed with `STAND_IN_LABEL`.
  """

  model: str = 'mcp-apps-web-stand-in'

  async def generate_content_async(
      self, llm_request: LlmRequest, stream: bool = False
  ) -> AsyncGenerator[LlmResponse, None]:
    """Answers one turn from the last content of the request.

    Args:
      llm_request: The request; its last content and tool names are read.
      stream: Ignored; the single response is always complete.

    Yields:
      One response: a function call, or a text answer.
    """
    del stream
    last = llm_request.contents[-1] if llm_request.contents else None
    parts = (last.parts if last else None) or []
    responses = [p.function_response for p in parts if p.function_response]
    if responses:
      yield _text(' '.join(_response_text(r) for r in responses))
      return
    said = ' '.join(p.text or '' for p in parts).lower()
    tool = (
        MONITOR_TOOL
        if any(w in said for w in MONITOR_WORDS)
        else DASHBOARD_TOOL
    )
    if tool not in llm_request.tools_dict:
      yield _text(INSTALL_HINT if tool == MONITOR_TOOL else f'No {tool} tool.')
      return
    call = types.FunctionCall(name=tool, args={})
    yield LlmResponse(
        content=types.Content(
            role='model', parts=[types.Part(function_call=call)]
        )
    )


def _text(text: str) -> LlmResponse:
  part = types.Part(text=f'{STAND_IN_LABEL} {text}')
  return LlmResponse(content=types.Content(role='model', parts=[part]))


def _response_text(response: types.FunctionResponse) -> str:
  """The text blocks of an MCP tool's FunctionResponse."""
  payload: Any = response.response or {}
  if isinstance(payload.get('result'), dict):
    payload = payload['result']
  texts = [
      block.get('text', '')
      for block in payload.get('content') or []
      if isinstance(block, dict) and block.get('type') == 'text'
  ]
  return ' '.join(texts) or f'{response.name} answered; see its View.'


def has_model_credentials() -> bool:
  """Whether a real Gemini model can be reached (API key or Vertex AI)."""
  vertex = os.environ.get('GOOGLE_GENAI_USE_VERTEXAI', '').lower()
  return bool(os.environ.get('GOOGLE_API_KEY')) or vertex in ('1', 'true')


def dashboard_spec() -> McpToolsetSpec:
  """The dashboard sample's server over stdio."""
  env = {
      k: os.environ[k]
      for k in ('ADK_MCP_APPS_DASHBOARD_DB', 'XDG_CACHE_HOME')
      if k in os.environ
  }
  return McpToolsetSpec(
      connection_params=StdioConnectionParams(
          server_params=StdioServerParameters(
              command=sys.executable,
              args=[str(DASHBOARD_SERVER), '--transport', 'stdio'],
              env=env or None,
          ),
          timeout=30.0,
      )
  )


def system_monitor_spec() -> McpToolsetSpec | None:
  """The published system-monitor server over stdio, if it is installed."""
  node = shutil.which('node')
  if node is None or not SYSTEM_MONITOR.is_file():
    logger.warning(INSTALL_HINT)
    return None
  return McpToolsetSpec(
      connection_params=StdioConnectionParams(
          server_params=StdioServerParameters(
              command=node,
              args=[str(SYSTEM_MONITOR), '--stdio'],
              cwd=str(NPM_DIR),
          ),
          timeout=30.0,
      )
  )


def make_registry() -> McpAppBindingRegistry:
  """One registry for both servers, with no profile of its own.

  `adk web --mcp_apps` binds it to `local_dev_profile()` on a loopback
  host; `allow_dev_providers=True` is this sample's consent to that.
  """
  specs = {'dashboard': dashboard_spec()}
  monitor = system_monitor_spec()
  if monitor is not None:
    specs['monitor'] = monitor
  return McpAppBindingRegistry(specs, None, allow_dev_providers=True)


registry = make_registry()
root_agent = LlmAgent(
    name='mcp_apps_web',
    model=(
        GEMINI_MODEL_NAME if has_model_credentials() else WebDemoStandInLlm()
    ),
    description='Shows agent activity and this machine as MCP App Views.',
    instruction=(
        'When asked about agent activity, call show_agent_dashboard; when'
        ' asked about this machine, call get-system-info. The user sees an'
        ' interactive View of each; summarize its text result briefly.'
    ),
    tools=[registry.toolset(t) for t in registry.toolset_ids],
)
