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

"""Runs the renderer page in Debian's Chromium against an HTTP server.

``ContractServer`` serves the real page, sandbox proxy and AppBridge bundle
(``google.adk.mcp_apps.host.web``) on two loopback origins of one port and
answers the issue-26 HTTP contract's ``/mcp-apps/api`` routes from a script
the test writes (widgets, View documents, replies), recording every request
the page makes. It is the page's counterpart until the adapter is merged;
the page under test is the shipped one.

Example::

    with ContractServer(widgets=[...], documents={...}) as server:
      page.goto(server.page_url('app', 'user', 'session'))
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
import contextlib
import dataclasses
import json
import pathlib
import secrets
import subprocess
import sys
import threading
from typing import Any

from google.adk.mcp_apps.host import web
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse
from starlette.responses import HTMLResponse
from starlette.responses import JSONResponse
from starlette.responses import Response
from starlette.responses import StreamingResponse
from starlette.routing import Route
import uvicorn

ROOT = pathlib.Path(__file__).resolve().parents[4]
CHROMIUM = '/usr/bin/chromium'
CHROMIUM_ARGS = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
]
IN_PROCESS_FRAMES = (
    '--disable-site-isolation-trials',
    '--disable-features=IsolateOrigins,site-per-process',
)
"""Keeps cross-origin frames in the page's process, where Playwright can
route their requests (a View's CDN loads); origins and sandboxing hold."""
CSRF_COOKIE = 'adk_mcp_apps_csrf'


def ensure_page_built() -> None:
  """Builds the AppBridge bundle (``make page``) when it is missing."""
  subprocess.run(
      [sys.executable, str(ROOT / 'tools' / 'build_page.py')],
      check=True,
      capture_output=True,
  )


def view_html(body_script: str = '') -> str:
  """A small View speaking raw JSON-RPC over postMessage (the app side).

  It initializes, reports its size, answers ``ping`` and
  ``ui/resource-teardown`` (unless ``window.hangTeardown``), records what it
  receives in ``window.rec`` and exposes ``window.request(method, params)``.
  ``body_script`` runs first, before the handshake.
  """
  return (
      '<!doctype html><html><head><title>view</title></head><body>'
      '<p id="out">view</p><script>'
      'const rec = window.rec = {received: [], params: {}, replies: {},'
      ' initResult: null, denied: []};'
      'let nextId = 0; const pending = {};'
      'const send = (m) => parent.postMessage(m, "*");'
      'window.request = (method, params) => { const id = ++nextId;'
      ' send({jsonrpc: "2.0", id, method, params});'
      ' return new Promise((r) => { pending[id] = r; }); };'
      'addEventListener("message", (e) => { if (e.source !== parent) return;'
      ' const m = e.data; if (m.id !== undefined && !m.method) {'
      ' if (pending[m.id]) { pending[m.id](m); delete pending[m.id]; }'
      ' return; }'
      ' rec.received.push(m.method); rec.params[m.method] = m.params;'
      ' if (m.method === "ui/resource-teardown" && !window.hangTeardown)'
      ' send({jsonrpc: "2.0", id: m.id, result: {}});'
      ' if (m.method === "ping") send({jsonrpc: "2.0", id: m.id, result: {}});'
      ' });'
      + body_script
      + '(async () => {'
      ' const init = await window.request("ui/initialize", {'
      ' protocolVersion: "2026-01-26", appInfo: {name: "t", version: "1"},'
      ' appCapabilities: {}});'
      ' rec.initResult = init;'
      ' send({jsonrpc: "2.0", method: "ui/notifications/initialized",'
      ' params: {}});'
      ' send({jsonrpc: "2.0", method: "ui/notifications/size-changed",'
      ' params: {width: 300, height: 222}});'
      ' rec.ready = true; })();'
      '</script></body></html>'
  )


@dataclasses.dataclass
class ContractServer:
  """The issue-26 HTTP contract on loopback, scripted by a test."""

  widgets: list[dict[str, Any]]
  documents: dict[str, dict[str, Any]]
  """eventId -> the ``view`` object ``POST /views`` returns."""
  denied_views: dict[str, str] = dataclasses.field(default_factory=dict)
  """eventId -> the denial reason ``POST /views`` answers with (403)."""
  requests: list[tuple[str, str]] = dataclasses.field(default_factory=list)
  rpc: list[dict[str, Any]] = dataclasses.field(default_factory=list)
  teardowns: list[dict[str, Any]] = dataclasses.field(default_factory=list)
  reruns: list[dict[str, Any]] = dataclasses.field(default_factory=list)
  backend: (
      Callable[
          [],
          contextlib.AbstractAsyncContextManager[
              Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
          ],
      ]
      | None
  ) = None
  """Opens, in the server's loop, what answers forwarded View requests."""
  port: int = 0

  def __post_init__(self) -> None:
    self._csrf = secrets.token_urlsafe(16)
    self._leases: dict[str, str] = {}
    self._queues: dict[str, asyncio.Queue[dict[str, Any] | None]] = {}
    self._loop: asyncio.AbstractEventLoop | None = None
    self._forward: (
        Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]] | None
    ) = None
    self._server: uvicorn.Server | None = None
    self._thread: threading.Thread | None = None
    self.sse_open = threading.Event()

  # -- the routes -----------------------------------------------------------

  def _main_origin(self, request: Request) -> bool:
    return request.headers.get('host', '').startswith('127.0.0.1:')

  async def _page(self, request: Request) -> Response:
    self.requests.append(('GET', request.url.path))
    if not self._main_origin(request):
      return JSONResponse({'reason': 'not_found'}, 404)
    response = HTMLResponse(web.page_html())
    response.set_cookie(CSRF_COOKIE, self._csrf, samesite='strict')
    return response

  async def _static(self, request: Request) -> Response:
    if not self._main_origin(request):
      return JSONResponse({'reason': 'not_found'}, 404)
    try:
      path = web.static_file(request.path_params['path'])
    except FileNotFoundError:
      return JSONResponse({'reason': 'not_found'}, 404)
    return FileResponse(path)

  async def _sandbox(self, request: Request) -> Response:
    self.requests.append(('GET', request.url.path))
    if not request.headers.get('host', '').startswith('localhost:'):
      return JSONResponse({'reason': 'not_found'}, 404)
    return HTMLResponse(
        web.sandbox_html(),
        headers={
            'Content-Security-Policy': web.sandbox_proxy_csp(
                f'http://127.0.0.1:{self.port}'
            )
        },
    )

  def _post_ok(self, request: Request) -> bool:
    return request.headers.get('x-csrf-token') == self._csrf

  async def _widgets(self, request: Request) -> Response:
    self.requests.append(('GET', request.url.path))
    return JSONResponse({'widgets': self.widgets})

  async def _views(self, request: Request) -> Response:
    self.requests.append(('POST', request.url.path))
    if not self._post_ok(request):
      return JSONResponse({'reason': 'csrf'}, 403)
    body = await request.json()
    event_id = body['eventId']
    if event_id in self.denied_views:
      return JSONResponse({'reason': self.denied_views[event_id]}, 403)
    view_id = f'view-{len(self._leases) + 1}'
    self._leases[view_id] = secrets.token_urlsafe(16)
    self._queues[view_id] = asyncio.Queue()
    return JSONResponse({
        'viewId': view_id,
        'lease': self._leases[view_id],
        'expiresAt': '2099-01-01T00:00:00Z',
        'view': self.documents[event_id],
    })

  def _lease_ok(self, request: Request) -> bool:
    view_id = request.path_params['view_id']
    return self._leases.get(view_id) == request.headers.get('x-mcp-apps-lease')

  async def _rpc(self, request: Request) -> Response:
    self.requests.append(('POST', request.url.path))
    if not (self._post_ok(request) and self._lease_ok(request)):
      return JSONResponse({'reason': 'lease'}, 409)
    message = await request.json()
    self.rpc.append({
        'viewId': request.path_params['view_id'],
        'token': request.headers.get('x-mcp-apps-request-token'),
        'message': message,
    })
    if 'id' not in message:
      return Response(status_code=204)
    result: dict[str, Any] = {}
    if self._forward is not None:
      result = await self._forward(message['method'], message.get('params'))
    elif message['method'] == 'tools/call':
      name = message['params']['name']
      result = {'content': [{'type': 'text', 'text': f'called {name}'}]}
    return JSONResponse(
        {'jsonrpc': '2.0', 'id': message['id'], 'result': result}
    )

  async def _notifications(self, request: Request) -> Response:
    if not self._lease_ok(request):
      return JSONResponse({'reason': 'lease'}, 409)
    queue = self._queues[request.path_params['view_id']]

    async def events():
      self.sse_open.set()
      while (item := await queue.get()) is not None:
        yield f'data: {json.dumps(item)}\n\n'

    return StreamingResponse(events(), media_type='text/event-stream')

  async def _teardown(self, request: Request) -> Response:
    self.requests.append(('POST', request.url.path))
    if not (self._post_ok(request) and self._lease_ok(request)):
      return JSONResponse({'reason': 'lease'}, 409)
    body = await request.json()
    self.teardowns.append({'viewId': request.path_params['view_id'], **body})
    await self._queues[request.path_params['view_id']].put(None)
    return Response(status_code=204)

  async def _rerun(self, request: Request) -> Response:
    self.requests.append(('POST', request.url.path))
    if not self._post_ok(request):
      return JSONResponse({'reason': 'csrf'}, 403)
    body = await request.json()
    self.reruns.append(body)
    return JSONResponse({'eventId': 'e-rerun', 'functionCallId': 'fc-rerun'})

  # -- control --------------------------------------------------------------

  def notify(self, view_id: str, message: dict[str, Any]) -> None:
    """Pushes one notification onto a View's SSE stream."""
    assert self._loop is not None
    self._loop.call_soon_threadsafe(self._queues[view_id].put_nowait, message)

  def page_url(self, app: str, user: str, session: str, **extra: str) -> str:
    query = '&'.join(
        f'{k}={v}'
        for k, v in {
            'app': app,
            'user': user,
            'session': session,
            **extra,
        }.items()
    )
    return f'http://127.0.0.1:{self.port}/mcp-apps/?{query}'

  def __enter__(self) -> ContractServer:
    base = '/mcp-apps/api'
    view = base + '/views/{view_id}'
    app = Starlette(
        routes=[
            Route('/mcp-apps/', self._page),
            Route('/mcp-apps/static/{path:path}', self._static),
            Route('/mcp-apps/sandbox', self._sandbox),
            Route(
                base + '/sessions/{app}/{user}/{session}/widgets',
                self._widgets,
            ),
            Route(base + '/views', self._views, methods=['POST']),
            Route(view + '/rpc', self._rpc, methods=['POST']),
            Route(view + '/notifications', self._notifications),
            Route(view + '/teardown', self._teardown, methods=['POST']),
            Route(base + '/rerun', self._rerun, methods=['POST']),
        ]
    )
    config = uvicorn.Config(
        app, host='127.0.0.1', port=0, log_level='warning', lifespan='off'
    )
    self._server = uvicorn.Server(config)
    started = threading.Event()

    def run() -> None:
      self._loop = asyncio.new_event_loop()
      asyncio.set_event_loop(self._loop)

      async def serve() -> None:
        assert self._server is not None
        async with contextlib.AsyncExitStack() as stack:
          if self.backend is not None:
            self._forward = await stack.enter_async_context(self.backend())
          await listen()

      async def listen() -> None:
        assert self._server is not None
        task = asyncio.ensure_future(self._server.serve())
        while not self._server.started and not task.done():
          await asyncio.sleep(0.01)
        started.set()
        await task

      self._loop.run_until_complete(serve())

    self._thread = threading.Thread(target=run, daemon=True)
    self._thread.start()
    if not started.wait(60) or not self._server.started:
      raise RuntimeError('the contract server did not start')
    self.port = self._server.servers[0].sockets[0].getsockname()[1]
    return self

  def __exit__(self, *exc_info: object) -> None:
    assert self._server is not None and self._thread is not None
    if self._loop is not None:
      for queue in self._queues.values():
        self._loop.call_soon_threadsafe(queue.put_nowait, None)
    self._server.should_exit = True
    self._thread.join(20)


@contextlib.contextmanager
def chromium_page(
    artifacts: pathlib.Path, name: str, extra_args: tuple[str, ...] = ()
):
  """A fresh headless Chromium page; a screenshot is kept if the body fails."""
  from playwright.sync_api import sync_playwright

  with sync_playwright() as playwright:
    browser = playwright.chromium.launch(
        executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *extra_args]
    )
    try:
      page = browser.new_page()
      console: list[str] = []
      page.on('console', lambda msg: console.append(msg.text))
      try:
        yield page
      except BaseException:
        artifacts.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(Exception):
          page.screenshot(path=str(artifacts / f'{name}.png'), full_page=True)
        (artifacts / f'{name}.console.txt').write_text('\n'.join(console))
        raise
    finally:
      browser.close()


def page_log(page: Any) -> list[dict[str, Any]]:
  """The page's own record of what it did (``window.adkMcpApps.log``)."""
  return page.evaluate('() => window.adkMcpApps.log')


def view_frame(
    page: Any, event_id: str, ready: str = '() => window.rec !== undefined'
) -> Any:
  """The inner View frame of a widget (sandbox proxy -> srcdoc child).

  ``ready`` is a predicate evaluated in the frame until true; the default
  fits :func:`view_html`.
  """
  outer = page.frame_locator(f'section[data-event-id="{event_id}"] iframe')
  inner = outer.locator('iframe')
  inner.wait_for(state='attached')
  frame = inner.element_handle().content_frame()
  assert frame is not None
  frame.wait_for_function(ready)
  return frame
