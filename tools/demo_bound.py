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

"""The bound half of `make demo`: hosting the system-monitor MCP App.

Runs on the patched tree and uses only the public `google.adk.mcp_apps`
API (what `docs/user-guide.md` documents), printing the story as it goes:
the published system-monitor server is bound through an
`McpAppBindingRegistry` to the local-development profile with the SQL
stores on a temporary SQLite file; the server runs behind `demo_tap.py`,
so the `io.modelcontextprotocol/ui` advertisement is shown as the server
received it. Then the model and app catalogs, one turn of a labelled
stand-in model, the View's render (its HTML written to a file), the View's
app-only `poll-system-stats` call, a refused call to another server, the
grant revoked, and the cold widget after a restart.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
import json
import os
from pathlib import Path
import sys
import tempfile
import textwrap
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'tools'))

# pylint: disable=g-import-not-at-top,wrong-import-position
from demo_scenario import ask
from demo_scenario import quiet_logs
from demo_scenario import SystemInfoStandIn
from google.adk.agents import LlmAgent
from google.adk.mcp_apps import bootstrap_render
from google.adk.mcp_apps import BootstrapError
from google.adk.mcp_apps import cold_affordance
from google.adk.mcp_apps import EXTENSION_ID
from google.adk.mcp_apps import list_toolset_app_catalog
from google.adk.mcp_apps import local_dev_profile
from google.adk.mcp_apps import LocalDevReplayClassification
from google.adk.mcp_apps import McpAppBindingRegistry
from google.adk.mcp_apps import McpAppsHostProfile
from google.adk.mcp_apps import McpToolsetSpec
from google.adk.mcp_apps import Principal
from google.adk.mcp_apps import PrincipalRequest
from google.adk.mcp_apps import RenderDocument
from google.adk.mcp_apps import replay_to_view
from google.adk.mcp_apps import SealedResolutionError
from google.adk.mcp_apps import SessionKey
from google.adk.mcp_apps import SqlBindingKeyProvider
from google.adk.mcp_apps import SqlSealedResultStore
from google.adk.mcp_apps import SqlSessionLifecycleStore
from google.adk.mcp_apps import ViewChannel
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.mcp_tool import McpTool
from google.adk.tools.mcp_tool import McpToolset
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.genai import types
from mcp import StdioServerParameters
import servers as third_party

APP = 'ops'
USER = 'me'
MONITOR = 'monitor'
CLOCK = 'clock'
VIEW_DIR = ROOT / '.cache' / 'demo'


def say(text: str = '') -> None:
  print(text, flush=True)


def _fill(text: str, first: str, rest: str) -> str:
  return textwrap.fill(
      text,
      78,
      initial_indent=first,
      subsequent_indent=rest,
      break_on_hyphens=False,
      break_long_words=False,
  )


def step(title: str, meaning: str) -> None:
  """A step's title and its one-line (wrapped) explanation."""
  say(f'\n== {title}')
  say(_fill(meaning, '   ', '   '))


def show(label: str, value: Any) -> None:
  text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
  say(_fill(f'{label}: {text}', '   ', '     '))


def _tapped(name: str, log: Path) -> StdioConnectionParams:
  """`name` over stdio, behind the tap that records what it receives."""
  server = third_party.stdio_params(name)
  return StdioConnectionParams(
      server_params=StdioServerParameters(
          command=sys.executable,
          args=[
              str(ROOT / 'tools' / 'demo_tap.py'),
              str(log),
              '--',
              server.command,
              *server.args,
          ],
          cwd=server.cwd,
      ),
      timeout=60.0,
  )


async def _profile(url: str) -> McpAppsHostProfile:
  """Local-development providers, with the three SQL stores on `url`."""
  sealed = SqlSealedResultStore(url)
  lifecycle = SqlSessionLifecycleStore(url)
  keys = SqlBindingKeyProvider(url)
  await sealed.open()
  await lifecycle.open()
  await keys.load()
  return local_dev_profile(
      sealed_result_store=sealed,
      session_lifecycle_store=lifecycle,
      key_provider=keys,
      # get-system-info only reads: a cold widget may offer a refresh.
      replay_classification=LocalDevReplayClassification(['get-system-info']),
  )


async def _close(profile: McpAppsHostProfile) -> None:
  for store in (
      profile.sealed_result_store,
      profile.session_lifecycle_store,
      profile.key_provider,
  ):
    await store.aclose()  # type: ignore[union-attr]


def _registry(log: Path, profile: McpAppsHostProfile) -> McpAppBindingRegistry:
  return McpAppBindingRegistry(
      {
          MONITOR: McpToolsetSpec(
              connection_params=_tapped('system-monitor', log)
          ),
          CLOCK: McpToolsetSpec(
              connection_params=StdioConnectionParams(
                  server_params=third_party.stdio_params('basic-vanillajs')
              )
          ),
      },
      profile,
      allow_dev_providers=True,
  )


def _advertisements(log: Path) -> list[dict[str, Any]]:
  if not log.exists():
    return []
  return [json.loads(line) for line in log.read_text().splitlines()]


def _show_advertisements(log: Path) -> None:
  for n, entry in enumerate(_advertisements(log), start=1):
    capabilities = entry.get('capabilities') or {}
    extensions = capabilities.get('extensions') or {}
    inputs = sorted(
        c for c in ('sampling', 'elicitation', 'roots') if c in capabilities
    )
    if EXTENSION_ID in extensions:
      what = (
          f'advertises {EXTENSION_ID} {json.dumps(extensions[EXTENSION_ID])}'
          ' (an app-safe connection: UI calls and their Views)'
      )
    else:
      what = 'advertises no MCP Apps extension (the model path: non-UI calls)'
    show(
        f'connection {n}',
        f'{what}; input capabilities: {", ".join(inputs) or "none"}',
    )


def _reason(response: Any) -> str:
  """The refusal reason of a channel response ("none" for a result)."""
  error = (response or {}).get('error')
  return str(error['data']['reason']) if error else 'none (unexpected)'


async def _principal(profile: McpAppsHostProfile) -> Principal:
  """Who is asking: a loopback caller, as the dev resolver requires."""
  resolver = profile.principal_resolver
  assert resolver is not None
  return await resolver.resolve(PrincipalRequest(client_host='127.0.0.1'))


async def _render(
    registry: McpAppBindingRegistry,
    profile: McpAppsHostProfile,
    sessions: SqliteSessionService,
    ids: tuple[str, str, str],
) -> RenderDocument:
  """`bootstrap_render` of one widget: (session id, event id, call id)."""
  session_id, event_id, call_id = ids
  return await bootstrap_render(
      registry=registry,
      profile=profile,
      session_service=sessions,
      principal=await _principal(profile),
      session=SessionKey(APP, USER, session_id),
      toolset_id=MONITOR,
      event_id=event_id,
      function_call_id=call_id,
  )


async def _catalogs(registry: McpAppBindingRegistry) -> None:
  step(
      'Model catalog vs app catalog',
      'The model catalog is what the model is offered; the app catalog is'
      ' what a View of this server may call (app-visible tools, listed'
      ' afresh). poll-system-stats is app-only: `_meta.ui.visibility` is'
      ' ["app"].',
  )
  model = [t.name for t in await registry.toolset(MONITOR).get_tools()]
  plain = McpToolset(
      connection_params=StdioConnectionParams(
          server_params=third_party.stdio_params('system-monitor')
      )
  )
  try:
    app = [t.name for t in await list_toolset_app_catalog(plain)]
  finally:
    await plain.close()
  show('model catalog', model)
  show('app catalog', app)


def local_time() -> dict[str, str]:
  """A plain function tool (no View)."""
  return {'time': 'noon'}


class ParallelStandIn(BaseLlm):
  """Calls get-system-info and local_time in one response, then answers."""

  model: str = 'parallel-stand-in'

  async def generate_content_async(
      self, llm_request: LlmRequest, stream: bool = False
  ) -> AsyncGenerator[LlmResponse, None]:
    del stream
    last = llm_request.contents[-1].parts or []
    if any(part.function_response for part in last):
      parts = [types.Part(text='[stand-in model] One at a time, then.')]
    else:
      parts = [
          types.Part(function_call=types.FunctionCall(name=name, args={}))
          for name in ('get-system-info', 'local_time')
      ]
    yield LlmResponse(content=types.Content(role='model', parts=parts))


async def _first_process(tmp: Path, log: Path) -> tuple[str, str, str]:
  url = f'sqlite+aiosqlite:///{tmp / "apps.db"}'
  profile = await _profile(url)
  sessions = SqliteSessionService(str(tmp / 'sessions.db'))
  registry = _registry(log, profile)
  try:
    await registry.start()
    step(
        'Readiness',
        'A toolset serves MCP Apps only when its host profile has every'
        ' provider it needs; otherwise it stays model-only and the report'
        ' says why.',
    )
    for entry in registry.readiness_report():
      show(entry.toolset_id, entry.message)

    say('\n   starting system-monitor (node, stdio, behind a recording tap)...')
    model_tools = await registry.toolset(MONITOR).get_tools()
    step(
        f'The {EXTENSION_ID} advertisement, as the server received it',
        'A client states its capabilities once, in `initialize`; the tap in'
        " front of system-monitor recorded each connection's.",
    )
    _show_advertisements(log)
    del model_tools
    await _catalogs(registry)

    step(
        'One turn: the model calls get-system-info',
        'Under the bound profile the Event persists a descriptor (which'
        ' server and View, a reference to the sealed full result) and the'
        ' model-facing projection of the result.',
    )
    agent = LlmAgent(
        name=APP, model=SystemInfoStandIn(), tools=[registry.toolset(MONITOR)]
    )
    runner = Runner(app_name=APP, agent=agent, session_service=sessions)
    try:
      session = await ask(runner)
    finally:
      await runner.close()
    event = next(e for e in session.events if e.actions.render_ui_widgets)
    widget = event.actions.render_ui_widgets[0]
    show('persisted widget payload keys', sorted(widget.payload))
    show(
        'persisted FunctionResponse keys',
        sorted(event.get_function_responses()[0].response or {}),
    )

    step(
        'The model calls a UI tool and a plain tool at once',
        'Under the bound profile a parallel batch is checked as a whole'
        ' before anything runs; one that mixes UI and other tools runs'
        ' nothing, and the model is told to call them one after another.',
    )
    parallel = Runner(
        app_name=APP,
        agent=LlmAgent(
            name=APP,
            model=ParallelStandIn(),
            tools=[registry.toolset(MONITOR), local_time],
        ),
        session_service=sessions,
    )
    try:
      mixed = await ask(parallel)
    finally:
      await parallel.close()
    (answered,) = [e for e in mixed.events if e.get_function_responses()]
    for response in answered.get_function_responses():
      show(str(response.name), (response.response or {}).get('reason'))

    step(
        'Render the View',
        'bootstrap_render authorizes the caller, takes the connection that'
        ' produced the result, resolves the sealed result and reads the'
        " View's HTML there. The grant is the host's handle on that View.",
    )
    ids = (session.id, event.id, widget.id)
    document = await _render(registry, profile, sessions, ids)
    VIEW_DIR.mkdir(parents=True, exist_ok=True)
    view_file = VIEW_DIR / 'system-monitor-view.html'
    view_file.write_text(document.html, encoding='utf-8')
    data_file = VIEW_DIR / 'system-monitor-view-data.json'
    data = document.view_data()
    del data['html']
    data_file.write_text(json.dumps(data, indent=2), encoding='utf-8')
    show('View HTML', f'{len(document.html.encode())} bytes; open it:')
    say(f'     {view_file}')
    show('what the renderer sends it (toolInput, toolResult)', 'in')
    say(f'     {data_file}')
    show('resource', document.resource_uri)
    show('_meta.ui', document.ui_meta)
    show('toolInput', document.tool_input)
    show('toolResult keys', sorted(document.tool_result))
    show('grant', repr(document.grant))
    grant = document.grant
    own = grant.binding.server_id

    step(
        'The View calls app-only poll-system-stats',
        "The View's JSON-RPC goes to its ViewChannel, which checks it, queues"
        ' it for the Session, re-checks what it depends on and runs it on the'
        " View's own connection.",
    )
    viewer = Runner(app_name=APP, agent=agent, session_service=sessions)
    try:
      channel = await ViewChannel.open(
          document,
          principal=await _principal(profile),
          registry=registry,
          runner=viewer,
      )

      def poll(request_id: int, **extra: Any) -> dict[str, Any]:
        return {
            'jsonrpc': '2.0',
            'id': request_id,
            'method': 'tools/call',
            'params': {'name': 'poll-system-stats', 'arguments': {}, **extra},
        }

      polled = await channel.handle(poll(1), token=channel.token) or {}
      data = (polled.get('result') or {}).get('structuredContent') or {}
      show(
          'result',
          f'{len(data.get("cpu", {}).get("cores", []))} CPU cores, memory'
          f' {data.get("memory", {}).get("usedPercent")}% used, up'
          f' {round(data.get("uptime", {}).get("seconds", 0))} s',
      )

      step(
          'The View names another server',
          'A View may call only the server it was rendered from: its request'
          ' names none, and one that tries is refused before anything is'
          ' sent.',
      )
      elsewhere = await channel.handle(
          poll(2, server=registry.server_id(CLOCK)), token=channel.token
      )
      show('refused', _reason(elsewhere))

      step(
          'The grant is revoked',
          'The host ends the View (closed tab, logout); its connection is let'
          ' go, and nothing reaches it any more.',
      )
      grant.revoke()
      try:
        await replay_to_view(grant, profile=profile, session_service=sessions)
        show('replay of its result', 'released (unexpected)')
      except SealedResolutionError as e:
        show('replay of its result', f'refused: {e.fault.value}')
      after = await channel.handle(poll(3), token=channel.token)
      show('poll-system-stats', f'refused: {_reason(after)}')
    finally:
      await viewer.close()
    return ids
  finally:
    await registry.aclose()
    await _close(profile)


async def _after_restart(
    tmp: Path, log: Path, ids: tuple[str, str, str]
) -> None:
  step(
      'After a restart',
      'A View is never resurrected. The cold widget offers a refresh (the'
      ' profile classifies get-system-info as replay-safe), "Run tool again",'
      ' or a placeholder.',
  )
  session_id, event_id, call_id = ids
  profile = await _profile(f'sqlite+aiosqlite:///{tmp / "apps.db"}')
  sessions = SqliteSessionService(str(tmp / 'sessions.db'))
  registry = _registry(log, profile)
  try:
    await registry.start()
    try:
      await _render(registry, profile, sessions, ids)
      show('bootstrap', 'rendered (unexpected)')
    except BootstrapError as e:
      show('bootstrap', f'{e.reason} (cold: {e.cold})')
    tools = await registry.toolset(MONITOR).get_tools()
    offer = await cold_affordance(
        profile=profile,
        session_service=sessions,
        principal=await _principal(profile),
        session=SessionKey(APP, USER, session_id),
        event_id=event_id,
        function_call_id=call_id,
        current_tools=[t.raw_mcp_tool for t in tools if isinstance(t, McpTool)],
    )
    show('cold affordance', f'{offer.offer.value} {offer.tool_name}')
  finally:
    await registry.aclose()
    await _close(profile)


async def main() -> None:
  quiet_logs()
  with tempfile.TemporaryDirectory(prefix='adk-demo-') as tmp:
    log = Path(tmp) / 'initialize.jsonl'
    ids = await _first_process(Path(tmp), log)
    await _after_restart(Path(tmp), log, ids)


if __name__ == '__main__':
  os.environ.setdefault('PYTHONUNBUFFERED', '1')
  asyncio.run(main())
