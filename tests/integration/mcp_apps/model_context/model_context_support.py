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

"""Helpers of the model-context tests: audit Events in real sessions.

A `Conversation` runs real `Runner` turns on one session of a real session
service (the conftest's `backend` fixture: in-memory, `SqliteSessionService`
and `DatabaseSessionService` on SQLite files) and appends audit Events the way
a View's direct operation does: inside `admitted(APP_OPERATION)`, so the
core finalizer stamps `audience='app_audit'`. Every audit Event carries
`SENTINEL` (one word, so the memory services index it as a token); the
tests search the recorded request bytes for it.
"""

from __future__ import annotations

from collections.abc import Sequence
import dataclasses
import itertools
from typing import Any

from google.adk.apps.app import App
from google.adk.events.event import Event
from google.adk.mcp_apps.event_policy.protected_fields import APP_AUDIT
from google.adk.mcp_apps.event_policy.provenance import admitted
from google.adk.mcp_apps.event_policy.provenance import APP_OPERATION
from google.adk.models.llm_request import LlmRequest
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.session import Session
from google.adk.workflow import BaseNode
from google.genai import types

APP_NAME = "model_context"
USER_ID = "tester"
SENTINEL = "zqxauditsentinel7f3c"
"""In every audit Event; never in a request, summary or memory."""

_op_ids = itertools.count()


@dataclasses.dataclass
class Backend:
  """A session service under test.

  Attributes:
    name: `memory`, `sqlite` or `database`.
    service: The service; its `append_event` runs the core finalizer.
  """

  name: str
  service: BaseSessionService


def text(value: str, role: str = "user") -> types.Content:
  return types.Content(role=role, parts=[types.Part(text=value)])


def audit_event(author: str, **fields: Any) -> Event:
  """An audit record of a View's direct operation, `SENTINEL` in its text.

  Args:
    author: The agent whose View made the call.
    **fields: More Event fields (`isolation_scope`, `actions`, ...).
  """
  fields.setdefault("invocation_id", f"app-op-{next(_op_ids)}")
  fields.setdefault("content", text(f"view refreshed {SENTINEL}"))
  return Event(author=author, **fields)


def call_part(call_id: str, name: str, args: dict[str, Any]) -> types.Part:
  return types.Part(
      function_call=types.FunctionCall(id=call_id, name=name, args=args)
  )


def response_part(
    call_id: str, name: str, response: dict[str, Any]
) -> types.Part:
  return types.Part(
      function_response=types.FunctionResponse(
          id=call_id, name=name, response=response
      )
  )


def app_call_audit_event(author: str, call_id: str = "app-call-1") -> Event:
  """The audit record of a View's direct `tools/call`: call and result."""
  result = {"content": [{"type": "text", "text": SENTINEL}]}
  return audit_event(
      author,
      content=types.Content(
          role="user",
          parts=[
              call_part(call_id, "app_refresh", {"q": SENTINEL}),
              response_part(call_id, "app_refresh", result),
          ],
      ),
  )


def request_bytes(requests: Sequence[LlmRequest]) -> list[str]:
  """Each recorded request as the JSON a model provider is sent."""
  return [request.model_dump_json() for request in requests]


def assert_no_sentinel(requests: Sequence[LlmRequest]) -> None:
  assert requests, "no request was recorded"
  for dumped in request_bytes(requests):
    assert SENTINEL not in dumped


def audit_events(session: Session) -> list[Event]:
  """The session's stored audit Events."""
  return [e for e in session.events if e.audience == APP_AUDIT]


class Conversation:
  """One session of `backend`, driven by a `Runner`.

  Use as `async with Conversation(backend, agent_or_app) as chat:`; the
  Runner is closed on exit.
  """

  def __init__(
      self, backend: Backend, root: BaseNode | App, **runner_args: Any
  ) -> None:
    self.backend = backend
    runner_args["session_service"] = backend.service
    if isinstance(root, App):
      self.runner = Runner(app=root, **runner_args)
    else:
      self.runner = Runner(agent=root, app_name=APP_NAME, **runner_args)
    self.session_id = ""

  async def __aenter__(self) -> Conversation:
    session = await self.backend.service.create_session(
        app_name=self.runner.app_name, user_id=USER_ID
    )
    self.session_id = session.id
    return self

  async def __aexit__(self, *exc_info: object) -> None:
    await self.runner.close()

  async def session(self) -> Session:
    """The session as the service returns it now."""
    session = await self.backend.service.get_session(
        app_name=self.runner.app_name,
        user_id=USER_ID,
        session_id=self.session_id,
    )
    assert session is not None
    return session

  async def turn(self, message: str) -> list[Event]:
    """One user turn; returns the Events the Runner yielded."""
    return await self.answer(text(message))

  async def answer(self, content: types.Content) -> list[Event]:
    """Runs the Runner on `content` (a message or function responses)."""
    return [
        event
        async for event in self.runner.run_async(
            user_id=USER_ID, session_id=self.session_id, new_message=content
        )
    ]

  async def audit(self, *events: Event) -> None:
    """Appends audit Events as a View's direct operation does."""
    for event in events:
      await append_audit(self.backend, await self.session(), event)


async def append_audit(
    backend: Backend, session: Session, event: Event
) -> Event:
  """Appends `event` under `admitted(APP_OPERATION)` through the service."""
  with admitted(APP_OPERATION):
    stored = await backend.service.append_event(session=session, event=event)
  assert stored.audience == APP_AUDIT
  return stored
