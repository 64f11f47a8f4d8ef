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


"""The bound half of `make demo`: one profile-bound UI call, end to end.

Runs on the patched tree only (pristine ADK has no host profile). The
dashboard sample's server is bound through an `McpAppBindingRegistry` to the
local-development profile with the SQL sealed-result, lifecycle and key
stores on a temporary SQLite file, and a Runner over a `SqliteSessionService`
makes one turn with the sample's stand-in model. The report shows what the
Session API persists (the descriptor and its opaque reference), what the
store holds (a record, no public bytes), what `bootstrap_render` hands the
renderer, what the gated resolver refuses, and the cold affordance after a
restart. Prints one JSON object.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
import sys
import tempfile
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'contributing' / 'samples'))
sys.path.insert(0, str(ROOT / 'tests' / 'integration' / 'mcp_apps'))

from google.adk.mcp_apps.binding.registry import McpAppBindingRegistry
from google.adk.mcp_apps.binding.spec import McpToolsetSpec
# pylint: disable=g-import-not-at-top,wrong-import-position
from google.adk.mcp_apps.bootstrap.cold_replay import cold_affordance
from google.adk.mcp_apps.bootstrap.live_replay import replay_to_view
from google.adk.mcp_apps.bootstrap.render import bootstrap_render
from google.adk.mcp_apps.bootstrap.render import BootstrapError
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.sealing.resolver import GatedResultResolver
from google.adk.mcp_apps.sealing.resolver import SealedResolutionError
from google.adk.mcp_apps.sealing.resolver import ViewBinding
from google.adk.runners import Runner
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.genai import types
from mcp import StdioServerParameters
from mcp_apps_dashboard import agent as dashboard_agent
from sealing_support import close_profile
from sealing_support import PRINCIPAL
from sealing_support import sql_profile

APP = 'demo-bound'
USER = 'u'
TOOLSET = 'dashboard'


def _params(db: Path) -> StdioConnectionParams:
  return StdioConnectionParams(
      server_params=StdioServerParameters(
          command=sys.executable,
          args=[
              str(dashboard_agent.SERVER_SCRIPT),
              '--transport',
              'stdio',
              '--db',
              str(db),
          ],
      ),
      timeout=60.0,
  )


async def _turn(tmp: Path, report: dict[str, Any]) -> tuple[str, str, str]:
  profile = await sql_profile(f'sqlite+aiosqlite:///{tmp / "stores.db"}')
  sessions = SqliteSessionService(str(tmp / 'sessions.db'))
  registry = McpAppBindingRegistry(
      {TOOLSET: McpToolsetSpec(connection_params=_params(tmp / 'events.db'))},
      profile,
      allow_dev_providers=True,
  )
  try:
    async with registry:
      agent = dashboard_agent.make_agent(
          model=dashboard_agent.DashboardStandInLlm()
      )
      agent.tools = [registry.toolset(TOOLSET)]
      runner = Runner(app_name=APP, agent=agent, session_service=sessions)
      try:
        session = await sessions.create_session(app_name=APP, user_id=USER)
        message = types.Content(
            role='user', parts=[types.Part(text='How are my agents doing?')]
        )
        async for _ in runner.run_async(
            user_id=USER, session_id=session.id, new_message=message
        ):
          pass
        stored = await sessions.get_session(
            app_name=APP, user_id=USER, session_id=session.id
        )
        assert stored is not None
        event = next(e for e in stored.events if e.actions.render_ui_widgets)
        widget = event.actions.render_ui_widgets[0]
        report['persisted_widget_payload'] = widget.payload
        report['persisted_function_response_keys'] = sorted(
            event.get_function_responses()[0].response or {}
        )
        key = SessionKey(APP, USER, session.id)
        document = await bootstrap_render(
            registry=registry,
            profile=profile,
            session_service=sessions,
            principal=PRINCIPAL,
            session=key,
            toolset_id=TOOLSET,
            event_id=event.id,
            function_call_id=widget.id,
        )
        html = document.html
        report['bootstrap'] = {
            'html_bytes': len(html.encode()),
            'html_title': (
                html.split('<title>')[1].split('</title>')[0]
                if '<title>' in html
                else None
            ),
            'ui_meta': document.ui_meta,
            'tool_result_keys': sorted(document.tool_result),
            'view_data_keys': sorted(document.view_data()),
            'grant': repr(document.grant),
        }
        replayed = await replay_to_view(
            document.grant, profile=profile, session_service=sessions
        )
        report['live_replay'] = {
            'same_result_as_bootstrap': (
                replayed.full_result() == document.tool_result
            ),
        }
        document.grant.revoke()
        try:
          await replay_to_view(
              document.grant, profile=profile, session_service=sessions
          )
        except SealedResolutionError as e:
          report['live_replay']['after_revoke'] = e.fault.value
        try:
          await GatedResultResolver(profile, sessions).resolve(
              key,
              event_id=event.id,
              function_call_id=widget.id,
              view=ViewBinding(TOOLSET, 'another-server', event.id, widget.id),
          )
        except SealedResolutionError as e:
          report['resolver_refuses_another_view'] = e.fault.value
        return session.id, event.id, widget.id
      finally:
        await runner.close()
  finally:
    await close_profile(profile)


async def _after_restart(
    tmp: Path, ids: tuple[str, str, str], report: dict[str, Any]
) -> None:
  session_id, event_id, call_id = ids
  profile = await sql_profile(f'sqlite+aiosqlite:///{tmp / "stores.db"}')
  sessions = SqliteSessionService(str(tmp / 'sessions.db'))
  registry = McpAppBindingRegistry(
      {TOOLSET: McpToolsetSpec(connection_params=_params(tmp / 'events.db'))},
      profile,
      allow_dev_providers=True,
  )
  key = SessionKey(APP, USER, session_id)
  try:
    async with registry:
      try:
        await bootstrap_render(
            registry=registry,
            profile=profile,
            session_service=sessions,
            principal=PRINCIPAL,
            session=key,
            toolset_id=TOOLSET,
            event_id=event_id,
            function_call_id=call_id,
        )
      except BootstrapError as e:
        report['bootstrap_after_restart'] = {
            'reason': e.reason,
            'cold': e.cold,
        }
      listing = [
          tool.raw_mcp_tool
          for tool in await registry.toolset(TOOLSET).get_tools(None)
      ]
      affordance = await cold_affordance(
          profile=profile,
          session_service=sessions,
          principal=PRINCIPAL,
          session=key,
          event_id=event_id,
          function_call_id=call_id,
          current_tools=listing,
      )
      report['cold_affordance'] = {
          'offer': affordance.offer.value,
          'reason': affordance.reason,
          'tool': affordance.tool_name,
          'warning': affordance.warning,
      }
  finally:
    await close_profile(profile)


async def main() -> None:
  report: dict[str, Any] = {}
  with tempfile.TemporaryDirectory() as tmp:
    ids = await _turn(Path(tmp), report)
    await _after_restart(Path(tmp), ids, report)
  print(json.dumps(report, sort_keys=True))


if __name__ == '__main__':
  asyncio.run(main())
