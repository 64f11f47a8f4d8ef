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

"""One scenario, run by whichever ADK is on PYTHONPATH; prints JSON.

`tools/demo.py` runs this file twice, once on pristine google-adk 2.13.0
(prefix 0 of the series) and once on the patched working tree, and prints
the two results side by side. It uses only public ADK API, so the same code
runs on both.

The scenario: the published system-monitor MCP App server and the dashboard
sample, both over stdio; each toolset's model catalog (`get_tools()`), and
one Runner turn (with the sample's stand-in model) whose persisted
FunctionResponse and UI widget are reported as the Session API returns them.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
import sys
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'contributing' / 'samples'))
sys.path.insert(0, str(ROOT / 'tests' / 'integration' / 'third_party_mcp_apps'))

from google.adk.runners import Runner  # pylint: disable=g-import-not-at-top
from google.adk.sessions.in_memory_session_service import InMemorySessionService  # pylint: disable=g-import-not-at-top
from google.adk.tools.mcp_tool import McpToolset  # pylint: disable=g-import-not-at-top
from google.adk.tools.mcp_tool import StdioConnectionParams  # pylint: disable=g-import-not-at-top
from google.genai import types  # pylint: disable=g-import-not-at-top
from mcp import StdioServerParameters  # pylint: disable=g-import-not-at-top
from mcp_apps_dashboard import agent as dashboard_agent  # pylint: disable=g-import-not-at-top
import servers as third_party  # pylint: disable=g-import-not-at-top


def _toolset(params: StdioServerParameters) -> McpToolset:
  return McpToolset(
      connection_params=StdioConnectionParams(
          server_params=params, timeout=60.0
      )
  )


async def _catalog(toolset: McpToolset) -> list[str]:
  return sorted(tool.name for tool in await toolset.get_tools())


async def _app_catalog(toolset: McpToolset) -> list[str] | None:
  """The app catalog, where this ADK has one (the patched tree)."""
  try:
    from google.adk.mcp_apps.catalog import app_catalog  # pylint: disable=g-import-not-at-top
  except ImportError:
    return None
  return sorted(
      tool.name for tool in await app_catalog.list_toolset_app_catalog(toolset)
  )


async def _dashboard_turn(db: Path) -> dict[str, Any]:
  toolset = _toolset(
      StdioServerParameters(
          command=sys.executable,
          args=[
              str(dashboard_agent.SERVER_SCRIPT),
              '--transport',
              'stdio',
              '--db',
              str(db),
          ],
      )
  )
  agent = dashboard_agent.make_agent(
      model=dashboard_agent.DashboardStandInLlm()
  )
  agent.tools = [toolset]
  sessions = InMemorySessionService()
  runner = Runner(app_name='demo', agent=agent, session_service=sessions)
  try:
    session = await sessions.create_session(app_name='demo', user_id='u')
    message = types.Content(
        role='user', parts=[types.Part(text='How are my agents doing?')]
    )
    async for _ in runner.run_async(
        user_id='u', session_id=session.id, new_message=message
    ):
      pass
    stored = await sessions.get_session(
        app_name='demo', user_id='u', session_id=session.id
    )
    assert stored is not None
    result: dict[str, Any] = {
        'model_catalog': await _catalog(toolset),
        'app_catalog': await _app_catalog(toolset),
    }
    for event in stored.events:
      for response in event.get_function_responses():
        result['function_response'] = response.response
        widgets = event.actions.render_ui_widgets or []
        result['ui_widget_payload_keys'] = sorted(
            key for w in widgets for key in w.payload
        )
        result['same_event'] = any(w.id == response.id for w in widgets)
      if event.content and event.content.parts and event.author != 'user':
        texts = [p.text for p in event.content.parts if p.text]
        if texts:
          result['final_text'] = ' '.join(texts)
    return result
  finally:
    await runner.close()
    await toolset.close()


async def _system_monitor() -> dict[str, Any]:
  toolset = _toolset(third_party.stdio_params('system-monitor'))
  try:
    return {
        'model_catalog': await _catalog(toolset),
        'app_catalog': await _app_catalog(toolset),
    }
  finally:
    await toolset.close()


async def main() -> None:
  db = Path(os.environ.get('ADK_DEMO_DB', ROOT / '.cache' / 'demo-events.db'))
  report = {
      'adk': __import__('google.adk', fromlist=['__file__']).__file__,
      'system_monitor': await _system_monitor(),
      'dashboard': await _dashboard_turn(db),
  }
  print(json.dumps(report, sort_keys=True))


if __name__ == '__main__':
  asyncio.run(main())
