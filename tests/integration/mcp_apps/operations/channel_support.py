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

"""A View channel over a `Stage`'s rendered View, and JSON-RPC builders.

`open_channel` mints the View's grant from the Stage's hold (as
`bootstrap_render` would) and opens a `ViewChannel` on it; `call` and
`read` build the View's JSON-RPC requests.
"""

from __future__ import annotations

import secrets
from typing import Any
from typing import Optional

from exec_ownership_support import Stage
from google.adk.mcp_apps.bootstrap.render import ViewGrant
from google.adk.mcp_apps.operations.app_call import OperationEnvironment
from google.adk.mcp_apps.operations.message_permit import attest_every_message
from google.adk.mcp_apps.operations.view_channel import ViewChannel
from google.adk.mcp_apps.sealing.resolver import ViewBinding
from sealing_support import PRINCIPAL
from sealing_support import TOOLSET


async def incarnation_of(s: Stage) -> int:
  """The Session's incarnation in the profile's lifecycle store (0 if none)."""
  store = s.st.profile.session_lifecycle_store
  if store is None:
    return 0
  record = await store.read(s.key)
  return int(record.incarnation)


def widget_uri_of(payload: dict[str, Any]) -> str:
  """The View's `ui://` resource from its widget's payload."""
  uri = payload.get("resource_uri") or payload.get("resourceUri")
  if uri is None:
    uri = payload["descriptor"]["resource_uri"]
  return str(uri)


async def open_channel(
    s: Stage,
    *,
    sent: Optional[list[dict[str, Any]]] = None,
    view: Optional[tuple[Any, Any]] = None,
    view_id: Optional[str] = None,
    **fields: Any,
) -> ViewChannel:
  """A channel on the Stage's View (or on `view`, an Event with a widget
  and that widget's hold); its notifications go to `sent`."""
  if view is None:
    (event,) = [
        e
        for e in s.session.events
        if e.actions is not None and e.actions.render_ui_widgets
    ][-1:]
    hold = s.hold
  else:
    event, hold = view
  (widget,) = event.actions.render_ui_widgets
  grant = ViewGrant(
      view_id=view_id or secrets.token_urlsafe(12),
      session=s.key,
      binding=ViewBinding(TOOLSET, s.server_id, event.id, widget.id),
      generation_id=hold.generation_id,
      incarnation=await incarnation_of(s),
      _hold=hold,
  )

  async def notify(message: dict[str, Any]) -> None:
    if sent is not None:
      sent.append(message)

  fields.setdefault("principal", PRINCIPAL)
  fields.setdefault("runner", s.st.runner)
  # The test is the host: it attests every message unless a test says
  # otherwise (`message_confirmation=None` is the channel's default).
  fields.setdefault("message_confirmation", attest_every_message)
  return ViewChannel(
      grant=grant,
      widget_uri=widget_uri_of(widget.payload),
      registry=s.st.registry,
      environment=s.environment(),
      call_cache=s.cache,
      notify=notify,
      **fields,
  )


async def open_read_channel(view: Any, **fields: Any) -> ViewChannel:
  """A channel on a `read_support.ViewReads` View (reads only)."""
  key = view.stack.key(view.session_id)
  store = view.stack.profile.session_lifecycle_store
  incarnation = 0 if store is None else (await store.read(key)).incarnation
  grant = ViewGrant(
      view_id=secrets.token_urlsafe(12),
      session=key,
      binding=ViewBinding(
          TOOLSET,
          view.stack.registry.server_id(TOOLSET),
          view.event_id,
          view.call_id,
      ),
      generation_id=view.hold.generation_id,
      incarnation=int(incarnation),
      _hold=view.hold,
  )
  session = await view.stack.session_service.get_session(
      app_name=key.app_name, user_id=key.user_id, session_id=key.session_id
  )
  fields.setdefault("principal", PRINCIPAL)
  return ViewChannel(
      grant=grant,
      widget_uri=view.widget_uri,
      registry=view.stack.registry,
      environment=OperationEnvironment(
          session_service=view.stack.session_service,
          session=session,
          plugin_manager=view.stack.runner.plugin_manager,
          agent=view.stack.runner.agent,
          root_agent=view.stack.runner.agent,
      ),
      **fields,
  )


def call(
    request_id: Any,
    name: str,
    arguments: Optional[dict[str, Any]] = None,
    **params: Any,
) -> dict[str, Any]:
  """A View `tools/call` request."""
  body: dict[str, Any] = {"name": name, **params}
  if arguments is not None:
    body["arguments"] = arguments
  return {
      "jsonrpc": "2.0",
      "id": request_id,
      "method": "tools/call",
      "params": body,
  }


def read(request_id: Any, uri: str, **params: Any) -> dict[str, Any]:
  """A View `resources/read` request."""
  return {
      "jsonrpc": "2.0",
      "id": request_id,
      "method": "resources/read",
      "params": {"uri": uri, **params},
  }


def message(request_id: Any, text: str, **params: Any) -> dict[str, Any]:
  """A View `ui/message` request of one text block."""
  return {
      "jsonrpc": "2.0",
      "id": request_id,
      "method": "ui/message",
      "params": {
          "role": "user",
          "content": [{"type": "text", "text": text}],
          **params,
      },
  }


def cancelled(request_id: Any) -> dict[str, Any]:
  """The View's `notifications/cancelled` of a request."""
  return {
      "jsonrpc": "2.0",
      "method": "notifications/cancelled",
      "params": {"requestId": request_id},
  }
