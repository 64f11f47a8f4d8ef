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

"""The connection of one app-safe generation, built the model path's way.

`affinity` decides which generation a call runs on but never builds a
transport; the binding registry hands each `AppSafeToolRouting` a factory
that builds one of these. It is upstream's `MCPSessionManager` with the
registry's app-safe client binding (so headers, credentials, mTLS and
transports follow the model path exactly), pooled on the registry loop. It
opens once and never reconnects.

Example:

  connect = lambda headers: AppSafeConnection(params, errlog, binding, headers)
"""

from __future__ import annotations

from typing import Any
from typing import Optional

from . import loop_routing
from ...tools.mcp_tool.mcp_session_manager import MCPSessionManager
from ...tools.mcp_tool.mcp_session_manager import StreamableHTTPConnectionParams
from ..affinity.generations import ManagedConnection
from .client_extensions import AppsClientBinding


class _OneSessionManager(MCPSessionManager):
  """The connection's manager; reports whether its pooled session died."""

  def is_disconnected(self, session: Any) -> bool:
    """Whether `session` is known to be disconnected (the pool's own probe)."""
    return bool(self._is_session_disconnected(session))


class AppSafeConnection(ManagedConnection):
  """One generation's connection: an app-safe, registry-loop-routed manager.

  The manager pools exactly one session (one header set); nothing asks it
  for a second, so it never sweeps, replaces or reconnects that session.
  """

  def __init__(
      self,
      connection_params: Any,
      errlog: Any,
      binding: AppsClientBinding,
      headers: Optional[dict[str, str]],
  ):
    self._manager = _OneSessionManager(
        connection_params=connection_params,
        errlog=errlog,
        _apps_client_binding=binding,
    )
    self._params = connection_params
    self._headers = headers
    self._session: Any = None

  async def open(self) -> Any:
    self._session = await self._manager.create_session(self._headers)
    return self._session

  def protocol_version(self) -> Optional[str]:
    session = loop_routing.unwrap(self._session)
    version = getattr(session, 'protocol_version', None)
    return version if isinstance(version, str) else None

  def is_stateless_http(self) -> bool:
    return isinstance(self._params, StreamableHTTPConnectionParams)

  def is_disconnected(self) -> bool:
    if self._session is None:
      return False
    session = loop_routing.unwrap(self._session)
    return self._manager.is_disconnected(session)

  async def close(self) -> None:
    await self._manager.close()  # type: ignore[no-untyped-call]
