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

"""One unbound scenario, run by whichever ADK is on PYTHONPATH; prints JSON.

`tools/demo.py` runs this file twice, once on pristine google-adk 2.13.0
(prefix 0 of the series) and once on the patched working tree, and shows
the two results side by side: what changes for a user who binds no host
profile. It uses only API both trees have.

The scenario: the published system-monitor MCP App server over stdio, a
plain `McpToolset`, its model catalog (`get_tools()`), its app catalog where
the tree has one, and one Runner turn in which a labelled stand-in model
calls `get-system-info`; the FunctionResponse is reported as the Session
API persisted it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
import json
import logging
from pathlib import Path
import sys
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'tests' / 'integration' / 'third_party_mcp_apps'))

# pylint: disable=g-import-not-at-top,wrong-import-position
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.adk.tools.mcp_tool import McpToolset
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.genai import types
import servers as third_party

APP = 'demo'
USER = 'me'


class SystemInfoStandIn(BaseLlm):
  """The demo's model: calls `get-system-info` once, then answers.

  A labelled stand-in, so the demo needs no credentials.
  """

  model: str = 'stand-in'

  async def generate_content_async(
      self, llm_request: LlmRequest, stream: bool = False
  ) -> AsyncGenerator[LlmResponse, None]:
    del stream
    last = llm_request.contents[-1].parts or []
    if any(part.function_response for part in last):
      part = types.Part(text='[stand-in model] Here is your machine.')
    else:
      call = types.FunctionCall(name='get-system-info', args={})
      part = types.Part(function_call=call)
    yield LlmResponse(content=types.Content(role='model', parts=[part]))


def quiet_logs() -> None:
  """Keeps ADK's log lines (e.g. missing token usage) out of the story."""
  logging.getLogger('google_adk').setLevel(logging.ERROR)


async def ask(runner: Any) -> Any:
  """One turn of `runner` in a new Session; returns the stored Session."""
  sessions = runner.session_service
  session = await sessions.create_session(
      app_name=runner.app_name, user_id=USER
  )
  message = types.Content(role='user', parts=[types.Part(text='How is it?')])
  async for _ in runner.run_async(
      user_id=USER, session_id=session.id, new_message=message
  ):
    pass
  return await sessions.get_session(
      app_name=runner.app_name, user_id=USER, session_id=session.id
  )


async def _app_catalog(toolset: McpToolset) -> list[str] | None:
  """The app catalog, where this ADK has one (the patched tree)."""
  try:
    from google.adk.mcp_apps.catalog.app_catalog import list_toolset_app_catalog
  except ImportError:
    return None
  return sorted(t.name for t in await list_toolset_app_catalog(toolset))


async def main() -> None:
  quiet_logs()
  toolset = McpToolset(
      connection_params=StdioConnectionParams(
          server_params=third_party.stdio_params('system-monitor'),
          timeout=60.0,
      )
  )
  runner = InMemoryRunner(
      agent=LlmAgent(name='ops', model=SystemInfoStandIn(), tools=[toolset]),
      app_name=APP,
  )
  try:
    report: dict[str, Any] = {
        'model_catalog': sorted(t.name for t in await toolset.get_tools()),
        'app_catalog': await _app_catalog(toolset),
    }
    session = await ask(runner)
    for event in session.events:
      for response in event.get_function_responses():
        report['function_response'] = response.response
        widgets = event.actions.render_ui_widgets or []
        report['ui_widget_payload_keys'] = sorted(
            key for w in widgets for key in w.payload
        )
  finally:
    await runner.close()
  print(json.dumps(report, sort_keys=True))


if __name__ == '__main__':
  asyncio.run(main())
