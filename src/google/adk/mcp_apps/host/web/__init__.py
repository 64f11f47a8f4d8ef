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

"""The MCP Apps renderer page and sandbox proxy, as package data.

The adapter serves these files; the page speaks the host side of MCP Apps
through the published ext-apps ``AppBridge`` bundled into
``static/vendor/`` by ``make page`` (tools/build_page.py). Design notes:
docs/decisions/issue26-page.md.

Example::

    from google.adk.mcp_apps.host import web

    html = web.page_html()            # GET /mcp-apps/ on the main origin
    proxy = web.sandbox_html()        # GET /mcp-apps/sandbox, sandbox origin
    asset = web.static_file('page.js')  # GET /mcp-apps/static/page.js
    csp = web.sandbox_proxy_csp('http://127.0.0.1:8000')  # proxy's header
"""

from __future__ import annotations

import pathlib
import re

WEB_DIR = pathlib.Path(__file__).resolve().parent
"""This package's directory: ``index.html``, ``sandbox.html``, ``static/``."""

STATIC_DIR = WEB_DIR / 'static'
"""The page's assets, served under ``/mcp-apps/static/``."""

BRIDGE_BUNDLE = STATIC_DIR / 'vendor' / 'app-bridge.js'
"""The generated AppBridge bundle (``make page``)."""


def sandbox_proxy_csp(main_origin: str) -> str:
  """The header CSP of the sandbox proxy page framed by ``main_origin``.

  Deliberately narrow: the View's srcdoc frame inherits the proxy's policy,
  so anything stricter here would cut what the server declared in
  ``_meta.ui.csp`` (the proxy writes that policy into the View's document).
  The View runs without ``allow-same-origin``, so it cannot reach the
  proxy's document. Only the renderer page's origin may frame the proxy.

  Args:
    main_origin: The renderer page's origin, e.g. ``http://127.0.0.1:8000``
      (a source expression: ``http://127.0.0.1:*`` for any port).

  Returns:
    The policy.

  Raises:
    ValueError: ``main_origin`` is not a single ``http(s)`` origin.
  """
  if not re.fullmatch(r'https?://[A-Za-z0-9.-]+(:(\d+|\*))?', main_origin):
    raise ValueError(f'not an origin: {main_origin!r}')
  return f"object-src 'none'; frame-ancestors {main_origin}"


SANDBOX_PROXY_CSP = sandbox_proxy_csp('http://127.0.0.1:*')
"""The proxy CSP for a main origin on any loopback port (``127.0.0.1``);
a server that knows its port sends ``sandbox_proxy_csp(main_origin)``."""


class MissingPageBuildError(RuntimeError):
  """The AppBridge bundle was not built (run ``make page``)."""


def page_html() -> str:
  """Returns the renderer page's HTML."""
  return (WEB_DIR / 'index.html').read_text(encoding='utf-8')


def sandbox_html() -> str:
  """Returns the sandbox proxy page's HTML (inline script, no assets)."""
  return (WEB_DIR / 'sandbox.html').read_text(encoding='utf-8')


def static_file(relative: str) -> pathlib.Path:
  """Resolves a static asset path, refusing anything outside ``static/``.

  Args:
    relative: The path below ``/mcp-apps/static/``.

  Returns:
    The file's path.

  Raises:
    FileNotFoundError: The path escapes ``static/`` or names no file.
    MissingPageBuildError: The AppBridge bundle was asked for but not built.
  """
  path = (STATIC_DIR / relative).resolve()
  if STATIC_DIR not in path.parents or not path.is_file():
    if path == BRIDGE_BUNDLE:
      raise MissingPageBuildError('run `make page` to build the AppBridge')
    raise FileNotFoundError(relative)
  return path
