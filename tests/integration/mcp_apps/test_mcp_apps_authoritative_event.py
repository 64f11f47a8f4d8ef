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

"""The gated resolver reads the authoritative Event by id (issue 25).

`GatedResultResolver.load_event` asks the Session service for the one Event
(`get_event`) instead of loading the whole Session. Through a real Runner
turn on the stdio conformance server, two parallel `open_view` results are
resolved on an in-memory and on a SQLite-file Session, with later plain
Events appended, by the resolver over the service itself and over the same
service seen without `get_event` (a duck-typed service: the resolver scans
`get_session`, as before): both release the same Event, reference, scope and
bytes, and both refuse the same asks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google.adk.events.event import Event
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.sealing.resolver import GatedResultResolver
from google.adk.mcp_apps.sealing.resolver import ResolutionFault
from google.adk.mcp_apps.sealing.resolver import SealedResolutionError
from google.adk.mcp_apps.sealing.resolver import ViewBinding
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.genai import types
from mcp_apps_conformance_server import names
import pytest
from sealing_support import APP
from sealing_support import bound_stack
from sealing_support import TOOLSET
from sealing_support import USER
from sealing_support import widget_event

pytestmark = pytest.mark.integration


class _WithoutGetEvent:
  """A Session service offering everything but `get_event`."""

  def __init__(self, service: Any) -> None:
    self._service = service

  def __getattr__(self, name: str) -> Any:
    if name == "get_event":
      raise AttributeError(name)
    return getattr(self._service, name)


async def _fault(
    resolver: GatedResultResolver, key: SessionKey, **kwargs: Any
) -> ResolutionFault:
  with pytest.raises(SealedResolutionError) as raised:
    await resolver.resolve(key, **kwargs)
  return raised.value.fault


@pytest.mark.conformance("P5-EXP-08")
@pytest.mark.parametrize("backend", ["in_memory", "sqlite"])
async def test_resolver_releases_the_same_by_event_id_as_from_whole_session(
    backend: str, tmp_path: Path, mcp_apps: Any
):
  service: Any = (
      InMemorySessionService()
      if backend == "in_memory"
      else SqliteSessionService(str(tmp_path / "sessions.db"))
  )
  params = StdioConnectionParams(
      server_params=mcp_apps.stdio_parameters({}), timeout=30.0
  )
  async with bound_stack(params, session_service=service) as st:
    sid = await st.new_session()
    event = widget_event(
        await st.turn(sid, (names.OPEN_VIEW, {}), (names.OPEN_VIEW, {}))
    )
    session = await service.get_session(
        app_name=APP, user_id=USER, session_id=sid
    )
    for n in range(20):
      await service.append_event(
          session,
          Event(
              author="user",
              invocation_id=f"later-{n}",
              content=types.Content(
                  role="user", parts=[types.Part(text=f"later {n}")]
              ),
          ),
      )
    key = st.key(sid)
    server_id = st.registry.server_id(TOOLSET)
    by_id = GatedResultResolver(st.profile, service)
    whole = GatedResultResolver(st.profile, _WithoutGetEvent(service))
    calls = [w.id for w in event.actions.render_ui_widgets]

    def view(event_id: str, call_id: str) -> ViewBinding:
      return ViewBinding(TOOLSET, server_id, event_id, call_id)

    released = []
    for call_id in calls:
      one, other = [
          await resolver.resolve(
              key,
              event_id=event.id,
              function_call_id=call_id,
              view=view(event.id, call_id),
          )
          for resolver in (by_id, whole)
      ]
      assert one.event == other.event
      assert (one.reference, one.scope, one.descriptor) == (
          other.reference,
          other.scope,
          other.descriptor,
      )
      assert one.envelope == other.envelope
      released.append(one.full_result())

    refused = [
        [
            await _fault(
                resolver,
                key,
                event_id="no-such-event",
                function_call_id=c,
                view=view("no-such-event", c),
            ),
            await _fault(
                resolver,
                SessionKey(APP, "mallory", sid),
                event_id=event.id,
                function_call_id=c,
                view=view(event.id, c),
            ),
        ]
        for resolver in (by_id, whole)
        for c in calls
    ]

  assert len(calls) == 2 and released[0] != released[1]
  assert refused == [refused[0]] * 4
  assert refused[0][0] is ResolutionFault.EVENT_MISSING
