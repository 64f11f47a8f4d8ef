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
received it. Then the model and app catalogs, and the Views hosted through
an `McpAppHostService`: one turn of a labelled stand-in model, the View
opened (its HTML written to a file), its app-only `poll-system-stats` call
under its lease, a refused call to another server, a lease presented for
another View and a replayed request token, the View closed and its widget
cold; after a restart, the cold widget refreshed and its result exported.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from collections.abc import Awaitable
import json
import os
from pathlib import Path
import secrets
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
from google.adk.mcp_apps import attest_every_message
from google.adk.mcp_apps import EXTENSION_ID
from google.adk.mcp_apps import HostServiceError
from google.adk.mcp_apps import list_toolset_app_catalog
from google.adk.mcp_apps import local_dev_profile
from google.adk.mcp_apps import LocalDevReplayClassification
from google.adk.mcp_apps import LocalDevSessionAuthorizer
from google.adk.mcp_apps import McpAppBindingRegistry
from google.adk.mcp_apps import McpAppHostService
from google.adk.mcp_apps import McpAppsHostProfile
from google.adk.mcp_apps import McpToolsetSpec
from google.adk.mcp_apps import OpenedView
from google.adk.mcp_apps import PrincipalRequest
from google.adk.mcp_apps import SessionKey
from google.adk.mcp_apps import SqlBindingKeyProvider
from google.adk.mcp_apps import SqlExportAuditStore
from google.adk.mcp_apps import SqlSealedResultStore
from google.adk.mcp_apps import SqlSessionLifecycleStore
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.sqlite_session_service import SqliteSessionService
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
  """Local-development providers, with the four SQL stores on `url`."""
  sealed = SqlSealedResultStore(url)
  lifecycle = SqlSessionLifecycleStore(url)
  audit = SqlExportAuditStore(url)
  keys = SqlBindingKeyProvider(url)
  await sealed.open()
  await lifecycle.open()
  await audit.open()
  await keys.load()
  return local_dev_profile(
      # Local development grants the export purpose only when asked to.
      session_authorizer=LocalDevSessionAuthorizer(allow_export=True),
      sealed_result_store=sealed,
      session_lifecycle_store=lifecycle,
      export_audit_store=audit,
      key_provider=keys,
      # get-system-info only reads: a cold widget may offer a refresh.
      replay_classification=LocalDevReplayClassification(['get-system-info']),
  )


async def _close(profile: McpAppsHostProfile) -> None:
  for store in (
      profile.sealed_result_store,
      profile.session_lifecycle_store,
      profile.export_audit_store,
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


ME = PrincipalRequest(client_host='127.0.0.1')
"""What a web framework builds from the user's request: a loopback peer,
as the local-development resolver requires."""


def _service(
    registry: McpAppBindingRegistry, runner: Runner
) -> McpAppHostService:
  return McpAppHostService(
      registry, runner, message_confirmation=attest_every_message
  )


async def _open(
    service: McpAppHostService, ids: tuple[str, str, str]
) -> OpenedView:
  """`open_view` of one widget: (session id, event id, call id)."""
  session_id, event_id, call_id = ids
  return await service.open_view(
      ME,
      session=SessionKey(APP, USER, session_id),
      toolset_id=MONITOR,
      event_id=event_id,
      function_call_id=call_id,
  )


def _poll(request_id: int, **extra: Any) -> dict[str, Any]:
  return {
      'jsonrpc': '2.0',
      'id': request_id,
      'method': 'tools/call',
      'params': {'name': 'poll-system-stats', 'arguments': {}, **extra},
  }


async def _denied(action: Awaitable[Any]) -> str:
  """The host service's refusal of `action`: reason (detail)."""
  try:
    await action
  except HostServiceError as e:
    return f'{e.reason.value} ({e.detail})' if e.detail else e.reason.value
  return 'allowed (unexpected)'


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

    agent = LlmAgent(
        name=APP, model=SystemInfoStandIn(), tools=[registry.toolset(MONITOR)]
    )
    runner = Runner(app_name=APP, agent=agent, session_service=sessions)
    service = _service(registry, runner)
    try:
      return await _host_a_view(service, sessions, registry.server_id(CLOCK))
    finally:
      await service.close()
      await runner.close()
  finally:
    await registry.aclose()
    await _close(profile)


async def _host_a_view(
    service: McpAppHostService,
    sessions: SqliteSessionService,
    other_server: str,
) -> tuple[str, str, str]:
  """One turn through the host service, and its View's life."""
  step(
      'One turn through the host service: the model calls get-system-info',
      'McpAppHostService.run_turn runs the turn as the caller its'
      ' PrincipalRequest resolves to. Under the bound profile the Event'
      ' persists a descriptor (which server and View, a reference to the'
      ' sealed full result) and the model-facing projection of the result.',
  )
  created = await sessions.create_session(app_name=APP, user_id=USER)
  key = SessionKey(APP, USER, created.id)
  question = types.Content(role='user', parts=[types.Part(text='How is it?')])
  events = await service.run_turn(ME, session=key, new_message=question)
  event = next(e for e in events if e.actions.render_ui_widgets)
  widget = event.actions.render_ui_widgets[0]
  show('persisted widget payload keys', sorted(widget.payload))
  show(
      'persisted FunctionResponse keys',
      sorted(event.get_function_responses()[0].response or {}),
  )
  ids = (created.id, event.id, widget.id)

  step(
      'Open the View',
      'open_view authorizes the caller, takes the connection that produced'
      " the result, resolves the sealed result, reads the View's HTML there"
      ' and issues a lease: the host page keeps it, the View never sees it.',
  )
  opened = await _open(service, ids)
  VIEW_DIR.mkdir(parents=True, exist_ok=True)
  view_file = VIEW_DIR / 'system-monitor-view.html'
  view_file.write_text(opened.view_data['html'], encoding='utf-8')
  data_file = VIEW_DIR / 'system-monitor-view-data.json'
  data = {k: v for k, v in opened.view_data.items() if k != 'html'}
  data['notifications'] = opened.notifications()
  data_file.write_text(json.dumps(data, indent=2), encoding='utf-8')
  show('View HTML', f'{len(opened.view_data["html"].encode())} bytes; open it:')
  say(f'     {view_file}')
  show('what the host page sends it (hostContext, notifications)', 'in')
  say(f'     {data_file}')
  show('view data keys', sorted(opened.view_data))
  show('toolInput', opened.view_data['toolInput'])
  show('toolResult keys', sorted(opened.view_data['toolResult']))
  show('lease', 'held by the host page only (not shown)')

  async def send(
      view: OpenedView,
      message: dict[str, Any],
      *,
      lease: str | None = None,
      token: str | None = None,
  ) -> Any:
    return await service.handle(
        ME,
        view_id=view.view_id,
        lease=lease or view.lease,
        request_token=token or secrets.token_urlsafe(16),
        message=message,
    )

  step(
      'The View calls app-only poll-system-stats',
      "The host page passes the View's JSON-RPC on with the lease and a"
      " fresh request token; the View's channel checks it, queues it for the"
      " Session, re-checks what it depends on and runs it on the View's own"
      ' connection.',
  )
  polled = await send(opened, _poll(1)) or {}
  stats = (polled.get('result') or {}).get('structuredContent') or {}
  show(
      'result',
      f'{len(stats.get("cpu", {}).get("cores", []))} CPU cores, memory'
      f' {stats.get("memory", {}).get("usedPercent")}% used, up'
      f' {round(stats.get("uptime", {}).get("seconds", 0))} s',
  )

  step(
      'The View names another server',
      'A View may call only the server it was rendered from: its request'
      ' names none, and one that tries is refused before anything is sent.',
  )
  elsewhere = await send(opened, _poll(2, server=other_server))
  show('refused', _reason(elsewhere))

  step(
      'A lease speaks for one View, a request token counts once',
      'A second tab opens the same widget as a View of its own; the first'
      " View's lease is refused for it, and a request token presented again"
      ' is refused as a replay.',
  )
  second = await _open(service, ids)
  show(
      'lease of another View',
      await _denied(send(second, _poll(3), lease=opened.lease)),
  )
  await send(opened, _poll(4), token='token-1')
  show(
      'request token again',
      await _denied(send(opened, _poll(5), token='token-1')),
  )
  await service.close_view(
      ME, view_id=second.view_id, lease=second.lease, acknowledged=True
  )

  step(
      'The View is closed',
      'The user closes the tab: the host tears the View down, its lease and'
      ' connection are let go, and its widget is cold: a View is never'
      ' resurrected.',
  )
  await service.close_view(
      ME, view_id=opened.view_id, lease=opened.lease, acknowledged=True
  )
  show('poll-system-stats', f'refused: {await _denied(send(opened, _poll(6)))}')
  show('open again', f'refused: {await _denied(_open(service, ids))}')
  return ids


async def _after_restart(
    tmp: Path, log: Path, ids: tuple[str, str, str]
) -> None:
  step(
      'After a restart',
      'The sealed result survived in SQLite, the View did not. The cold'
      ' widget is refreshed as a new call (the profile classifies'
      ' get-system-info as replay-safe; another tool would be "Run tool'
      ' again", confirmed by the user) or its result exported, audited.',
  )
  session_id, event_id, call_id = ids
  profile = await _profile(f'sqlite+aiosqlite:///{tmp / "apps.db"}')
  sessions = SqliteSessionService(str(tmp / 'sessions.db'))
  registry = _registry(log, profile)
  try:
    await registry.start()
    agent = LlmAgent(
        name=APP, model=SystemInfoStandIn(), tools=[registry.toolset(MONITOR)]
    )
    runner = Runner(app_name=APP, agent=agent, session_service=sessions)
    service = _service(registry, runner)
    try:
      show('open_view', f'refused: {await _denied(_open(service, ids))}')
      key = SessionKey(APP, USER, session_id)
      refreshed = await service.run_tool_again(
          ME, session=key, event_id=event_id, function_call_id=call_id
      )
      fresh = await _open(
          service, (session_id, refreshed.event_id, refreshed.function_call_id)
      )
      show(
          'cold widget',
          f'{refreshed.offer.value} ran get-system-info as a new call; its'
          f' new View opened ({len(fresh.view_data["html"])} bytes of HTML)',
      )
      exported = await service.export(
          ME,
          session=key,
          event_id=event_id,
          function_call_id=call_id,
          operation_instance_id='demo-export',
      )
      audit = profile.export_audit_store
      assert audit is not None
      statuses = [r.status.value for r in await audit.records('demo-export')]
      show(
          'export',
          f'{len(exported.body)} bytes of {exported.media_type};'
          f' audited: {", ".join(statuses)}',
      )
    finally:
      await service.close()
      await runner.close()
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
