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


"""The reference FastAPI adapter: `/mcp-apps` routes on ADK's server. DEV ONLY.

`adk web --mcp_apps` (or `get_fast_api_app(..., mcp_apps=True)`) mounts it.
It serves one process on a loopback address only, around one
`McpAppHostService` per Apps app. Contract and decisions:
docs/decisions/issue26-adapter.md.

Usage:

  app = get_fast_api_app(agents_dir=..., web=True, mcp_apps=True)
  # or, on a server object of your own:
  adapter = mount_mcp_apps(app, server, host='127.0.0.1', port=8000)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
import dataclasses
import hmac
import json
import logging
from pathlib import Path
import secrets
from typing import Any
from typing import ClassVar
from typing import Final
from typing import NoReturn
from typing import Optional
from typing import TypeVar
import urllib.parse

from fastapi import APIRouter
from fastapi import FastAPI
from fastapi import Request
from fastapi.responses import FileResponse
from fastapi.responses import HTMLResponse
from fastapi.responses import JSONResponse
from fastapi.responses import Response
from fastapi.responses import StreamingResponse
import pydantic
from pydantic import alias_generators

from . import web
from ..affinity.security_domain import acting_principal
from ..binding.registry import McpAppBindingRegistry
from ..binding.registry_toolset import RegistryToolset
from ..bootstrap.cold_replay import ColdOffer
from ..contracts.local_dev import is_loopback_host
from ..contracts.principal_resolver import Principal
from ..contracts.principal_resolver import PrincipalRequest
from ..contracts.principal_resolver import PrincipalUnresolvedError
from ..contracts.scope import SessionKey
from ..contracts.session_authorizer import SessionPurpose
from ..descriptor.reference_validation import mcp_widgets
from ..descriptor.widget_descriptor import McpAppWidgetDescriptor
from ..profile.local_dev import local_dev_profile
from .denial_log import log_denial
from .errors import HostServiceError
from .errors import HostServiceErrorReason
from .service import McpAppHostService

logger = logging.getLogger('google_adk.mcp_apps.host')

PREFIX: Final = '/mcp-apps'
CSRF_COOKIE: Final = 'adk_mcp_apps_csrf'
CSRF_HEADER: Final = 'x-csrf-token'
LEASE_HEADER: Final = 'x-mcp-apps-lease'
REQUEST_TOKEN_HEADER: Final = 'x-mcp-apps-request-token'
MAX_BODY_BYTES: Final = 1 << 20
"""The largest request body an Apps route reads."""

WEB_DIR: Final = Path(__file__).resolve().parent / 'web'
"""Where the built page lives: `index.html`, `sandbox.html`, `static/`."""
RENDERER_FILES: Final = (
    'index.html',
    'sandbox.html',
    'static/vendor/app-bridge.js',
)
"""What `McpAppsAdapter.renderer_ready` needs below the page directory."""

Reason = HostServiceErrorReason
_STATUS: Final[dict[HostServiceErrorReason, int]] = {
    Reason.UNAUTHENTICATED: 401,
    Reason.UNAUTHORIZED: 403,
    Reason.ORIGIN_DENIED: 403,
    Reason.CSRF_DENIED: 403,
    Reason.NOT_LOOPBACK: 403,
    Reason.EXPORT_DENIED: 403,
    Reason.RERUN_DENIED: 403,
    Reason.NOT_FOUND: 404,
    Reason.LEASE_INVALID: 409,
    Reason.LEASE_EXPIRED: 409,
    Reason.REPLAYED: 409,
    Reason.VIEW_UNAVAILABLE: 409,
    Reason.TOO_LARGE: 413,
    Reason.LIMIT_EXCEEDED: 429,
    Reason.BAD_REQUEST: 400,
    Reason.UNSUPPORTED: 400,
    Reason.AUDIT_UNAVAILABLE: 503,
}

_PLACEHOLDER_PAGE: Final = (
    '<!doctype html><meta charset="utf-8"><title>ADK MCP Apps</title>'
    '<p>The MCP Apps renderer page is not built.</p>'
)
_CLOSED: Final = object()
"""Ends a View's notification stream."""


class _Body(pydantic.BaseModel):
  model_config = pydantic.ConfigDict(
      alias_generator=alias_generators.to_camel,
      populate_by_name=True,
      extra='forbid',
  )


class SessionTarget(_Body):
  """A Session an Apps route acts in."""

  app_name: str = pydantic.Field(min_length=1, max_length=512)
  user_id: str = pydantic.Field(min_length=1, max_length=512)
  session_id: str = pydantic.Field(min_length=1, max_length=512)

  def key(self) -> SessionKey:
    return SessionKey(self.app_name, self.user_id, self.session_id)


class OpenViewBody(SessionTarget):
  """`POST /mcp-apps/api/views`."""

  toolset_id: str = pydantic.Field(min_length=1, max_length=512)
  event_id: str = pydantic.Field(min_length=1, max_length=512)
  function_call_id: str = pydantic.Field(min_length=1, max_length=512)


class TeardownBody(_Body):
  """`POST /mcp-apps/api/views/{viewId}/teardown`."""

  acknowledged: bool


class RerunBody(SessionTarget):
  """`POST /mcp-apps/api/rerun`."""

  event_id: str = pydantic.Field(min_length=1, max_length=512)
  function_call_id: str = pydantic.Field(min_length=1, max_length=512)
  confirmed: bool


class ExportBody(SessionTarget):
  """`POST /mcp-apps/api/exports`."""

  event_id: str = pydantic.Field(min_length=1, max_length=512)
  function_call_id: str = pydantic.Field(min_length=1, max_length=512)
  operation_instance_id: str = pydantic.Field(min_length=1, max_length=512)


_B = TypeVar('_B', bound=_Body)


class _Denied(Exception):
  """A terminal adapter denial (already logged)."""

  def __init__(self, reason: HostServiceErrorReason) -> None:
    super().__init__(reason.value)
    self.reason = reason


def _deny(
    action: str, reason: HostServiceErrorReason, detail: str = '', **ids: str
) -> NoReturn:
  log_denial(action, reason, detail=detail, **ids)
  raise _Denied(reason)


def _denial_response(reason: HostServiceErrorReason) -> JSONResponse:
  return JSONResponse({'reason': reason.value}, status_code=_STATUS[reason])


def _json_schema(model: type[pydantic.BaseModel]) -> dict[str, Any]:
  return {
      'requestBody': {
          'required': True,
          'content': {
              'application/json': {
                  'schema': model.model_json_schema(by_alias=True)
              }
          },
      }
  }


def find_registry(agent: Any) -> Optional[McpAppBindingRegistry]:
  """The one `McpAppBindingRegistry` whose toolsets the agent tree holds.

  Returns:
    The registry, or None when the tree holds no registry toolset (not an
    Apps app) or toolsets of several registries (refused: one host per
    app).
  """
  found: dict[int, McpAppBindingRegistry] = {}
  stack = [agent]
  while stack:
    current = stack.pop()
    for tool in getattr(current, 'tools', None) or ():
      if isinstance(tool, RegistryToolset) and isinstance(
          tool.registry, McpAppBindingRegistry
      ):
        found[id(tool.registry)] = tool.registry
    stack.extend(getattr(current, 'sub_agents', None) or ())
  if len(found) != 1:
    if found:
      logger.warning('An app holds toolsets of several MCP Apps registries')
    return None
  return next(iter(found.values()))


@dataclasses.dataclass(eq=False)
class _AppHost:
  runner: Any
  registry: McpAppBindingRegistry
  service: McpAppHostService


class McpAppsAdapter:
  """DEV ONLY: the `/mcp-apps` routes around one host service per app.

  Attributes:
    loopback: Whether the server's configuration is loopback-only; when
      False nothing binds and every Apps route denies `not_loopback`.
    main_origin: The renderer page's origin.
    sandbox_origin: The sandbox proxy's (second, loopback) origin.
  """

  dev_only: ClassVar[bool] = True
  loopback_only: ClassVar[bool] = True

  def __init__(
      self,
      get_runner: Callable[[str], Awaitable[Any]],
      *,
      host: str = '127.0.0.1',
      bind_host: Optional[str] = None,
      port: int = 8000,
      web_dir: Path = WEB_DIR,
      **service_options: Any,
  ) -> None:
    """Creates the adapter.

    Args:
      get_runner: ADK's cached Runner of an app (the server's
        `get_runner_async`).
      host: The host the server was asked to serve.
      bind_host: The address it binds (None: as `host`).
      port: Its port; both origins use it.
      web_dir: The built page.
      **service_options: Further `McpAppHostService` options.
    """
    self._get_runner = get_runner
    self.loopback = is_loopback_host(host) and is_loopback_host(
        bind_host if bind_host is not None else host
    )
    self.main_origin = f'http://127.0.0.1:{port}'
    self.sandbox_origin = f'http://localhost:{port}'
    self.web_dir = web_dir
    """The built renderer page (`renderer_ready` checks it)."""
    self.service_options = service_options
    """`McpAppHostService` options of the hosts created from now on."""
    self._hosts: dict[str, _AppHost] = {}
    self._lock = asyncio.Lock()
    self._queues: dict[str, asyncio.Queue[Any]] = {}
    self._listening: set[str] = set()
    self._loop: Optional[asyncio.AbstractEventLoop] = None

  @property
  def renderer_ready(self) -> bool:
    """Whether the renderer page is built: its page, its sandbox proxy and
    the AppBridge bundle (`make page`). Until it is, nothing binds."""
    return all((self.web_dir / name).is_file() for name in RENDERER_FILES)

  # -- apps --------------------------------------------------------------------

  async def prepare(self, app_name: str, runner: Any) -> None:
    """Readies an app's registry for the Runner ADK built for it.

    Starts the registry the root agent names. On a loopback configuration
    a registry without a profile is bound to the loopback-only
    `local_dev_profile` (bindable only if the app built the registry with
    `allow_dev_providers=True`); on any other configuration a bound
    profile is withdrawn, so nothing is advertised.
    """
    registry = find_registry(getattr(runner, 'agent', None))
    if registry is None:
      return
    async with self._lock:
      await registry.start()
      # A renderer is registered before anything is advertised: without
      # the built page no View could render, so the toolset stays
      # model-only.
      withheld = (
          'non_loopback'
          if not self.loopback
          else None
          if self.renderer_ready
          else 'renderer_missing'
      )
      if withheld is not None:
        if registry.readiness is not None:
          await registry.revoke(withheld)
        return
      if registry.profile is None:
        await registry.rebind(local_dev_profile())
    del app_name

  async def _host(self, action: str, app_name: str) -> _AppHost:
    try:
      runner = await self._get_runner(app_name)
    except Exception:  # pylint: disable=broad-exception-caught
      _deny(action, Reason.NOT_FOUND, 'app', app_name=app_name)
    current = self._hosts.get(app_name)
    if current is not None and current.runner is runner:
      return current
    await self.prepare(app_name, runner)
    registry = find_registry(runner.agent)
    if registry is None or registry.readiness is None:
      _deny(action, Reason.NOT_FOUND, 'not_apps', app_name=app_name)
    try:
      service = McpAppHostService(
          registry, runner, notify=self._notify, **self._options()
      )
    except HostServiceError as e:
      _deny(action, e.reason, e.detail, app_name=app_name)
    if current is not None:
      await current.service.close()
    host = _AppHost(runner, registry, service)
    self._hosts[app_name] = host
    return host

  def _options(self) -> dict[str, Any]:
    options = dict(self.service_options)

    async def closed(channel: Any) -> None:
      self._push(channel.view_id, _CLOSED)

    options['teardown_hooks'] = (*options.get('teardown_hooks', ()), closed)
    return options

  # -- notifications -----------------------------------------------------------

  def _queue(self, view_id: str) -> asyncio.Queue[Any]:
    queue = self._queues.get(view_id)
    if queue is None:
      queue = self._queues[view_id] = asyncio.Queue()
    return queue

  def _push(self, view_id: str, item: Any) -> None:
    if item is _CLOSED and view_id not in self._listening:
      self._queues.pop(view_id, None)  # Nobody streams it: drop its queue.
      return
    loop = self._loop
    try:
      running = asyncio.get_running_loop()
    except RuntimeError:
      running = None
    if loop is None or running is loop:
      self._queue(view_id).put_nowait(item)
    else:
      loop.call_soon_threadsafe(lambda: self._queue(view_id).put_nowait(item))

  async def _notify(self, view_id: str, message: dict[str, Any]) -> None:
    self._push(view_id, message)

  async def _stream(self, view_id: str) -> AsyncIterator[bytes]:
    queue = self._queue(view_id)
    try:
      while True:
        item = await queue.get()
        if item is _CLOSED:
          return
        yield f'data: {json.dumps(item)}\n\n'.encode()
    finally:
      self._listening.discard(view_id)
      self._queues.pop(view_id, None)

  # -- request gate ------------------------------------------------------------

  def _host_header(self, request: Request) -> str:
    return (request.headers.get('host') or '').lower()

  def _gate(self, action: str, request: Request, *, post: bool) -> None:
    """Loopback configuration, Host, Origin, fetch site and (on POST) the
    CSRF double submit; every refusal is terminal and logged."""
    self._loop = asyncio.get_running_loop()
    if not self.loopback:
      _deny(action, Reason.NOT_LOOPBACK)
    main = urllib.parse.urlsplit(self.main_origin).netloc
    if self._host_header(request) != main:
      _deny(action, Reason.ORIGIN_DENIED, 'host')
    self.check_origin(action, request)
    origin = request.headers.get('origin')
    if not post:
      return
    if origin is None:
      _deny(action, Reason.ORIGIN_DENIED, 'no_origin')
    cookie = request.cookies.get(CSRF_COOKIE) or ''
    header = request.headers.get(CSRF_HEADER) or ''
    if not cookie or not hmac.compare_digest(cookie.encode(), header.encode()):
      _deny(action, Reason.CSRF_DENIED)

  def check_origin(self, action: str, request: Request) -> None:
    """Refuses another `Origin` and a cross-site fetch (logged)."""
    origin = request.headers.get('origin')
    if origin is not None and origin != self.main_origin:
      _deny(action, Reason.ORIGIN_DENIED, 'origin')
    if request.headers.get('sec-fetch-site') in ('cross-site', 'same-site'):
      _deny(action, Reason.ORIGIN_DENIED, 'fetch_site')

  @staticmethod
  def principal_request(request: Request) -> PrincipalRequest:
    """What the principal resolver sees of an HTTP request."""
    return PrincipalRequest(
        client_host=request.client.host if request.client else '',
        origin=request.headers.get('origin'),
        headers=dict(request.headers),
    )

  async def _body(self, action: str, request: Request) -> bytes:
    declared = request.headers.get('content-length')
    if declared is not None and (
        not declared.isdigit() or int(declared) > MAX_BODY_BYTES
    ):
      _deny(action, Reason.TOO_LARGE)
    body = b''
    async for chunk in request.stream():
      body += chunk
      if len(body) > MAX_BODY_BYTES:
        _deny(action, Reason.TOO_LARGE)
    return body

  async def _parse(self, action: str, request: Request, model: type[_B]) -> _B:
    body = await self._body(action, request)
    try:
      return model.model_validate_json(body)
    except pydantic.ValidationError:
      _deny(action, Reason.BAD_REQUEST)

  def _lease(self, action: str, request: Request, view_id: str) -> str:
    lease = request.headers.get(LEASE_HEADER)
    if not lease:
      _deny(action, Reason.LEASE_INVALID, 'no_lease', view_id=view_id)
    return lease

  def _view_host(self, action: str, view_id: str) -> _AppHost:
    for host in self._hosts.values():
      if view_id in host.service.view_ids:
        return host
    _deny(action, Reason.NOT_FOUND, 'view', view_id=view_id)

  async def _authorized_session(
      self, action: str, request: Request, host: _AppHost, session: SessionKey
  ) -> Principal:
    """Resolves the caller and authorizes `VIEW` before any session read."""
    ids = {'session_id': session.session_id}
    profile = host.service.profile
    resolver = profile.principal_resolver
    try:
      if resolver is None:
        raise PrincipalUnresolvedError('no_resolver')
      principal = await resolver.resolve(self.principal_request(request))
    except PrincipalUnresolvedError as e:
      _deny(action, Reason.UNAUTHENTICATED, e.reason, **ids)
    except Exception:  # pylint: disable=broad-exception-caught
      _deny(action, Reason.UNAUTHENTICATED, **ids)
    authorizer = profile.session_authorizer
    try:
      allowed = (
          session.app_name == host.runner.app_name
          and authorizer is not None
          and await authorizer.authorize(
              principal, session, SessionPurpose.VIEW
          )
      )
    except Exception:  # pylint: disable=broad-exception-caught
      allowed = False
    if not allowed:
      _deny(action, Reason.UNAUTHORIZED, **ids)
    return principal

  # -- routes ------------------------------------------------------------------

  def router(self) -> APIRouter:
    """The `/mcp-apps` routes (in the OpenAPI schema, tag `mcp-apps`)."""
    router = APIRouter(prefix=PREFIX, tags=['mcp-apps'])

    def guarded(action: str, *, post: bool) -> Callable[
        [Callable[..., Awaitable[Response]]],
        Callable[..., Awaitable[Response]],
    ]:
      def wrap(
          handler: Callable[..., Awaitable[Response]],
      ) -> Callable[..., Awaitable[Response]]:
        async def run(request: Request, **kwargs: Any) -> Response:
          try:
            self._gate(action, request, post=post)
            return await handler(request, **kwargs)
          except _Denied as e:
            return _denial_response(e.reason)
          except HostServiceError as e:
            return _denial_response(e.reason)

        return run

      return wrap

    @router.get('/', response_class=HTMLResponse)
    async def page(request: Request) -> Response:
      """The renderer page; sets the CSRF double-submit cookie."""

      @guarded('page', post=False)
      async def serve(request: Request) -> Response:
        index = self.web_dir / 'index.html'
        html = (
            index.read_text(encoding='utf-8')
            if index.is_file()
            else _PLACEHOLDER_PAGE
        )
        response = HTMLResponse(html)
        token = request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(32)
        response.set_cookie(
            CSRF_COOKIE,
            token,
            path=PREFIX,
            samesite='strict',
            httponly=False,
        )
        return response

      return await serve(request)

    @router.get('/static/{path:path}')
    async def static(request: Request, path: str) -> Response:
      """The page's built assets."""

      @guarded('static', post=False)
      async def serve(request: Request) -> Response:
        root = (self.web_dir / 'static').resolve()
        target = (root / path).resolve()
        if not target.is_file() or not target.is_relative_to(root):
          return Response(status_code=404)
        return FileResponse(target)

      return await serve(request)

    @router.get('/sandbox', response_class=HTMLResponse)
    async def sandbox(request: Request) -> Response:
      """The sandbox proxy page, on the sandbox origin only."""
      sandbox_host = urllib.parse.urlsplit(self.sandbox_origin).netloc
      if not self.loopback or self._host_header(request) != sandbox_host:
        return Response(status_code=404)
      page_file = self.web_dir / 'sandbox.html'
      if not page_file.is_file():
        return Response(status_code=404)
      return HTMLResponse(
          page_file.read_text(encoding='utf-8'),
          headers={
              'Content-Security-Policy': web.sandbox_proxy_csp(self.main_origin)
          },
      )

    @router.get('/api/sessions/{app_name}/{user_id}/{session_id}/widgets')
    async def widgets(
        request: Request, app_name: str, user_id: str, session_id: str
    ) -> Response:
      """The Session's widgets in Event order."""

      @guarded('list_widgets', post=False)
      async def serve(request: Request) -> Response:
        host = await self._host('list_widgets', app_name)
        key = SessionKey(app_name, user_id, session_id)
        await self._authorized_session('list_widgets', request, host, key)
        listed = await self._widgets(host, key, request)
        return JSONResponse({'widgets': listed})

      return await serve(request)

    @router.post('/api/views', openapi_extra=_json_schema(OpenViewBody))
    async def open_view(request: Request) -> Response:
      """Opens a View of a widget (`McpAppHostService.open_view`)."""

      @guarded('open_view', post=True)
      async def serve(request: Request) -> Response:
        body = await self._parse('open_view', request, OpenViewBody)
        host = await self._host('open_view', body.app_name)
        opened = await host.service.open_view(
            self.principal_request(request),
            session=body.key(),
            toolset_id=body.toolset_id,
            event_id=body.event_id,
            function_call_id=body.function_call_id,
        )
        data = opened.view_data
        return JSONResponse({
            'viewId': opened.view_id,
            'lease': opened.lease,
            'expiresAt': opened.expires_at,
            'view': {
                'html': data['html'],
                'uiMeta': data.get('uiMeta'),
                'hostContext': data['hostContext'],
                'toolInput': data['toolInput'],
                'toolResult': data['toolResult'],
            },
        })

      return await serve(request)

    @router.post(
        '/api/views/{view_id}/rpc',
        openapi_extra={
            'requestBody': {
                'required': True,
                'content': {'application/json': {'schema': {'type': 'object'}}},
            }
        },
    )
    async def rpc(request: Request, view_id: str) -> Response:
      """One JSON-RPC message of the View (`McpAppHostService.handle`)."""

      @guarded('handle', post=True)
      async def serve(request: Request) -> Response:
        lease = self._lease('handle', request, view_id)
        nonce = request.headers.get(REQUEST_TOKEN_HEADER)
        if not nonce:
          _deny('handle', Reason.BAD_REQUEST, 'no_token', view_id=view_id)
        body = await self._body('handle', request)
        host = self._view_host('handle', view_id)
        answer = await host.service.handle(
            self.principal_request(request),
            view_id=view_id,
            lease=lease,
            request_token=nonce,
            message=body,
        )
        if answer is None:
          return Response(status_code=204)
        return JSONResponse(answer)

      return await serve(request)

    @router.get('/api/views/{view_id}/notifications')
    async def notifications(request: Request, view_id: str) -> Response:
      """The View's channel notifications, as Server-Sent Events."""

      @guarded('notifications', post=False)
      async def serve(request: Request) -> Response:
        lease = self._lease('notifications', request, view_id)
        host = self._view_host('notifications', view_id)
        await host.service.check_view(
            self.principal_request(request), view_id=view_id, lease=lease
        )
        # Listening from now on, so a close before the stream's first
        # read still ends it.
        self._listening.add(view_id)
        self._queue(view_id)
        return StreamingResponse(
            self._stream(view_id), media_type='text/event-stream'
        )

      return await serve(request)

    @router.post(
        '/api/views/{view_id}/teardown',
        status_code=204,
        openapi_extra=_json_schema(TeardownBody),
    )
    async def teardown(request: Request, view_id: str) -> Response:
      """Closes a View (`McpAppHostService.close_view`)."""

      @guarded('close_view', post=True)
      async def serve(request: Request) -> Response:
        lease = self._lease('close_view', request, view_id)
        body = await self._parse('close_view', request, TeardownBody)
        host = self._view_host('close_view', view_id)
        await host.service.close_view(
            self.principal_request(request),
            view_id=view_id,
            lease=lease,
            acknowledged=body.acknowledged,
        )
        self._push(view_id, _CLOSED)
        return Response(status_code=204)

      return await serve(request)

    @router.post('/api/rerun', openapi_extra=_json_schema(RerunBody))
    async def rerun(request: Request) -> Response:
      """Refresh or "Run tool again" as a new invocation."""

      @guarded('run_tool_again', post=True)
      async def serve(request: Request) -> Response:
        body = await self._parse('run_tool_again', request, RerunBody)
        host = await self._host('run_tool_again', body.app_name)

        async def confirm(offer: Any) -> bool:
          del offer
          return body.confirmed

        result = await host.service.run_tool_again(
            self.principal_request(request),
            session=body.key(),
            event_id=body.event_id,
            function_call_id=body.function_call_id,
            confirm=confirm,
        )
        return JSONResponse({
            'eventId': result.event_id,
            'functionCallId': result.function_call_id,
        })

      return await serve(request)

    @router.post('/api/exports', openapi_extra=_json_schema(ExportBody))
    async def export(request: Request) -> Response:
      """Exports one sealed result (`McpAppHostService.export`)."""

      @guarded('export', post=True)
      async def serve(request: Request) -> Response:
        body = await self._parse('export', request, ExportBody)
        host = await self._host('export', body.app_name)
        result = await host.service.export(
            self.principal_request(request),
            session=body.key(),
            event_id=body.event_id,
            function_call_id=body.function_call_id,
            operation_instance_id=body.operation_instance_id,
        )
        return Response(result.body, media_type=result.media_type)

      return await serve(request)

    return router

  async def _widgets(
      self, host: _AppHost, key: SessionKey, request: Request
  ) -> list[dict[str, Any]]:
    session = await host.runner.session_service.get_session(
        app_name=key.app_name, user_id=key.user_id, session_id=key.session_id
    )
    if session is None:
      _deny('list_widgets', Reason.NOT_FOUND, 'session')
    reservations = host.registry.render_reservations
    listed: list[dict[str, Any]] = []
    for event in session.events:
      try:
        found = mcp_widgets(event)
      except Exception:  # pylint: disable=broad-exception-caught
        continue
      names = {
          r.id: r.name
          for r in event.get_function_responses() or ()
          if r.id is not None
      }
      for call_id, widget in found.items():
        if isinstance(widget, McpAppWidgetDescriptor):
          live = (
              reservations.generation_of(widget.toolset_id, key, call_id)
              is not None
          )
          toolset_id, state = widget.toolset_id, 'live' if live else 'cold'
        else:
          toolset_id, state = '', 'legacy'
        listed.append({
            'eventId': event.id,
            'functionCallId': call_id,
            'toolsetId': toolset_id,
            'toolName': names.get(call_id) or '',
            'state': state,
            'affordance': (
                await self._affordance(host, key, request, event.id, call_id)
                if state == 'cold'
                else None
            ),
        })
    return listed

  async def _affordance(
      self,
      host: _AppHost,
      key: SessionKey,
      request: Request,
      event_id: str,
      call_id: str,
  ) -> dict[str, Any]:
    """A cold widget's offer, as the page shows it (no host-private
    field: the refresh record never leaves the service)."""
    decided = await host.service.cold_affordance(
        self.principal_request(request),
        session=key,
        event_id=event_id,
        function_call_id=call_id,
    )
    return {
        'offer': decided.offer.value,
        'replaySafe': decided.offer is ColdOffer.REFRESH,
        'toolName': decided.tool_name,
        'warning': decided.warning,
        'reason': decided.reason,
    }

  async def turn_principal(
      self, request: Request, body: bytes
  ) -> Optional[Principal]:
    """The caller a stock chat turn acts for, or None (unattributed)."""
    try:
      app_name = json.loads(body).get('appName') or json.loads(body).get(
          'app_name'
      )
      runner = await self._get_runner(str(app_name))
      if find_registry(runner.agent) is None:
        return None  # Not an Apps app: its turns stay as they were.
      host = await self._host('run_turn', str(app_name))
      resolver = host.service.profile.principal_resolver
      if resolver is None:
        return None
      principal: Principal = await resolver.resolve(
          self.principal_request(request)
      )
      return principal
    except Exception:  # pylint: disable=broad-exception-caught
      return None

  def view_hosts(self) -> dict[str, str]:
    """The open Views, by View id, with the app each belongs to."""
    return {
        view_id: app_name
        for app_name, host in self._hosts.items()
        for view_id in host.service.view_ids
    }

  async def aclose(self) -> None:
    """Closes every host service (their Views tear down)."""
    hosts, self._hosts = list(self._hosts.values()), {}
    for host in hosts:
      await host.service.close()
    for view_id in list(self._queues):
      self._push(view_id, _CLOSED)


_TURN_ROUTES: Final = ('/run', '/run_sse')


class TurnAttribution:
  """ASGI middleware: the Apps routes' Origin check runs first; a chat turn on the stock `/run` and `/run_sse` routes
  of an Apps app runs under `acting_principal` of the caller its profile's
  resolver resolves, so its widgets open for that caller; a caller it does
  not resolve runs unattributed, as before (its Views then do not open).
  """

  def __init__(self, app: Any, adapter: McpAppsAdapter) -> None:
    self._app = app
    self._adapter = adapter

  async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
    # The sandbox proxy page is framed cross-site by design (the main origin
    # embeds the second loopback origin); its route checks the Host itself.
    if (
        scope.get('type') == 'http'
        and str(scope.get('path', '')).startswith(PREFIX)
        and scope.get('path') != PREFIX + '/sandbox'
    ):
      # Ahead of the stock Origin middleware, so an Apps denial is the
      # adapter's: logged, with its reason body.
      try:
        self._adapter.check_origin('request', Request(scope))
      except _Denied as e:
        await _denial_response(e.reason)(scope, receive, send)
        return
    if (
        scope.get('type') != 'http'
        or scope.get('method') != 'POST'
        or not str(scope.get('path', '')).endswith(_TURN_ROUTES)
        or not self._adapter.loopback
    ):
      await self._app(scope, receive, send)
      return
    chunks: list[bytes] = []
    more = True
    while more:
      message = await receive()
      chunks.append(message.get('body', b''))
      more = bool(message.get('more_body'))
      if message['type'] != 'http.request' or sum(map(len, chunks)) > (
          MAX_BODY_BYTES
      ):
        break
    body = b''.join(chunks)
    replayed = False

    async def replay() -> Any:
      nonlocal replayed
      if not replayed:
        replayed = True
        return {'type': 'http.request', 'body': body, 'more_body': more}
      return await receive()

    principal = await self._adapter.turn_principal(Request(scope), body)
    if principal is None:
      await self._app(scope, replay, send)
      return
    with acting_principal(principal):
      await self._app(scope, replay, send)


def mount_mcp_apps(
    app: FastAPI,
    server: Any,
    *,
    host: str = '127.0.0.1',
    bind_host: Optional[str] = None,
    port: int = 8000,
    **options: Any,
) -> McpAppsAdapter:
  """DEV ONLY: mounts the `/mcp-apps` routes on ADK's FastAPI app.

  Every Runner ADK builds for an app (`server.get_runner_async`) is readied
  first (`McpAppsAdapter.prepare`), so chat turns on the stock routes and
  Views on the Apps routes share one Runner and one registry.

  Args:
    app: The FastAPI app `get_fast_api_app` built.
    server: Its ADK server object (`ApiServer` or `DevServer`).
    host: The host the server serves.
    bind_host: The address it binds.
    port: Its port.
    **options: Further `McpAppsAdapter` options.

  Returns:
    The adapter.
  """
  original = server.get_runner_async

  async def get_runner_async(app_name: str) -> Any:
    runner = await original(app_name)
    await adapter.prepare(app_name, runner)
    return runner

  adapter = McpAppsAdapter(
      original, host=host, bind_host=bind_host, port=port, **options
  )
  server.get_runner_async = get_runner_async
  app.include_router(adapter.router())
  app.add_middleware(TurnAttribution, adapter=adapter)
  app.state.mcp_apps_adapter = adapter
  if adapter.loopback and not adapter.renderer_ready:
    logger.warning(
        'MCP Apps: the renderer page in %s is not built (run `make page`),'
        ' so no Apps profile binds and nothing is advertised.',
        adapter.web_dir,
    )
  elif adapter.loopback:
    logger.warning(
        'MCP Apps routes are mounted at %s: DEV ONLY, one process,'
        ' loopback-only development providers.',
        PREFIX,
    )
  else:
    logger.warning(
        'MCP Apps routes deny every request: %s is not a loopback'
        ' configuration, so no Apps profile binds.',
        bind_host or host,
    )
  return adapter
