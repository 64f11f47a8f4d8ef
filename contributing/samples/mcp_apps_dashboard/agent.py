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

"""A sample agent that shows an agent-events dashboard as an MCP App.

The agent reaches the dashboard server (``server.py`` next to this file) over
stdio through ``McpToolset``. Only the tools the server marks visible to the
model are handed to the model; the app-only drill-down tools stay for the
View, which the host renders from the tool's ``_meta.ui.resourceUri``.

With no model credentials configured (neither ``GOOGLE_API_KEY`` nor
``GOOGLE_GENAI_USE_VERTEXAI``), the agent runs on
:class:`DashboardStandInLlm`, a scripted stand-in model, so the sample can be
tried, and tested, offline.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
import os
import pathlib
import sys
from typing import Any

from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.mcp_tool import McpToolset
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.adk.tools.mcp_tool.mcp_tool import McpTool
from google.genai import types
from mcp import StdioServerParameters

SERVER_SCRIPT = pathlib.Path(__file__).resolve().with_name("server.py")
DASHBOARD_TOOL = "show_agent_dashboard"
STAND_IN_MODEL_NAME = "mcp-apps-dashboard-stand-in"
GEMINI_MODEL_NAME = os.environ.get("ADK_MCP_APPS_MODEL", "gemini-2.5-flash")

STAND_IN_LABEL = "[stand-in model: no LLM credentials configured]"


class DashboardStandInLlm(BaseLlm):
  """A scripted stand-in for a real model, for offline runs only.

  It is not a language model. On a user turn it calls
  ``show_agent_dashboard`` with no filters; when that call's response comes
  back it replies with the tool's text summary, prefixed with
  :data:`STAND_IN_LABEL` so nobody mistakes it for model output.
  """

  model: str = STAND_IN_MODEL_NAME

  async def generate_content_async(
      self, llm_request: LlmRequest, stream: bool = False
  ) -> AsyncGenerator[LlmResponse, None]:
    """Answers one turn from the last content of the request.

    Args:
      llm_request: The request; only its last content is looked at.
      stream: Ignored; the single response is always complete.

    Yields:
      One response: a function call, or a text summary.
    """
    del stream  # The scripted answer is never streamed.
    last = llm_request.contents[-1] if llm_request.contents else None
    parts = (last.parts if last else None) or []
    responses = [p.function_response for p in parts if p.function_response]
    if responses:
      text = f"{STAND_IN_LABEL} " + " ".join(
          _function_response_text(r) for r in responses
      )
      yield LlmResponse(
          content=types.Content(role="model", parts=[types.Part(text=text)])
      )
      return
    yield LlmResponse(
        content=types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(
                        name=DASHBOARD_TOOL, args={}
                    )
                )
            ],
        )
    )


def _function_response_text(response: types.FunctionResponse) -> str:
  """Returns the text blocks of an MCP tool's FunctionResponse."""
  payload: Any = response.response or {}
  if isinstance(payload.get("result"), dict):
    payload = payload["result"]
  if payload.get("isError") or "error" in payload:
    return f"The {response.name} call failed: {payload}"
  texts = [
      block.get("text", "")
      for block in payload.get("content") or []
      if isinstance(block, dict) and block.get("type") == "text"
  ]
  return " ".join(texts) or f"{response.name} returned no text."


def has_model_credentials() -> bool:
  """Whether a real Gemini model can be reached (API key or Vertex AI)."""
  vertex = os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower()
  return bool(os.environ.get("GOOGLE_API_KEY")) or vertex in ("1", "true")


def visible_to_model(
    tool: BaseTool, readonly_context: ReadonlyContext | None = None
) -> bool:
  """Keeps app-only MCP tools (``_meta.ui.visibility == ["app"]``) away.

  Tools with no visibility declared default to visible, per MCP Apps.
  """
  del readonly_context  # The decision depends on the tool alone.
  if not isinstance(tool, McpTool):
    return True
  visibility = tool.visibility
  return not visibility or "model" in visibility


def make_toolset(server_args: list[str] | None = None) -> McpToolset:
  """Returns a toolset that runs the dashboard server over stdio.

  Args:
    server_args: Extra ``server.py`` arguments, e.g. ``["--db", path]``.
  """
  return McpToolset(
      connection_params=StdioConnectionParams(
          server_params=StdioServerParameters(
              command=sys.executable,
              args=[str(SERVER_SCRIPT), "--transport", "stdio"]
              + list(server_args or []),
          ),
          timeout=30.0,
      ),
      tool_filter=visible_to_model,
  )


def make_agent(
    model: BaseLlm | str | None = None,
    server_args: list[str] | None = None,
) -> LlmAgent:
  """Builds the dashboard agent.

  Args:
    model: The model; by default Gemini when credentials are configured and
      :class:`DashboardStandInLlm` otherwise.
    server_args: Extra ``server.py`` arguments for the toolset.
  """
  if model is None:
    model = (
        GEMINI_MODEL_NAME if has_model_credentials() else DashboardStandInLlm()
    )
  return LlmAgent(
      name="agent_dashboard_agent",
      model=model,
      description="Shows and explains an agent-events analytics dashboard.",
      instruction=(
          "You help people understand how their agents behave. When asked"
          " about agent activity, errors, latency or events, call"
          " show_agent_dashboard (optionally filtered by agent, event type"
          " or time range); the user sees an interactive dashboard and can"
          " drill down in it. Then summarize what the tool's text result"
          " says in two or three sentences. When the user asks about a"
          " specific event the dashboard context names, explain it."
      ),
      tools=[make_toolset(server_args)],
  )


root_agent = make_agent()
