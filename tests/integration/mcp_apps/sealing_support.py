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


"""Shared set-up for the sealed-result, bootstrap and cold-replay tests.

A `BoundStack` is the whole real path: the conformance server (stdio, or an
HTTP process the caller started), an `McpAppBindingRegistry` binding it to a
profile, and a `Runner` over a durable Session service whose scripted model
calls the UI tools a test names and then answers with text. Stores are the
SQL ones on SQLite files or on the loopback PostgreSQL server, or the
local-development ones.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import contextlib
import dataclasses
import json
import os
from pathlib import Path
import shutil
import tempfile
from typing import Any
from typing import Awaitable
from typing import Callable
from typing import Optional

from google.adk.agents.llm_agent import LlmAgent
from google.adk.events.event import Event
from google.adk.mcp_apps.binding.registry import McpAppBindingRegistry
from google.adk.mcp_apps.binding.spec import McpToolsetSpec
from google.adk.mcp_apps.bootstrap.render import bootstrap_render
from google.adk.mcp_apps.bootstrap.render import RenderDocument
from google.adk.mcp_apps.contracts.principal_resolver import Principal
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.sealed_result_store import SealedRecordScope
from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultRef
from google.adk.mcp_apps.descriptor.reference_validation import mcp_widgets
from google.adk.mcp_apps.descriptor.widget_descriptor import McpAppWidgetDescriptor
from google.adk.mcp_apps.descriptor.widget_descriptor import WidgetCorrelation
from google.adk.mcp_apps.profile import local_dev_profile
from google.adk.mcp_apps.profile.host_profile import McpAppsHostProfile
from google.adk.mcp_apps.sealing import resolver as resolver_module
from google.adk.mcp_apps.sealing.resolver import ExportPermit
from google.adk.mcp_apps.sealing.resolver import GatedResultResolver
from google.adk.mcp_apps.sealing.resolver import ResolvedResult
from google.adk.mcp_apps.sealing.resolver import ViewBinding
from google.adk.mcp_apps.sealing.result_sealer import PENDING_SEALS
from google.adk.mcp_apps.sealing.result_sealer import prepare_seal
from google.adk.mcp_apps.sealing.result_sealer import SealPlacement
from google.adk.mcp_apps.sealing.result_sealer import SealRequest
from google.adk.mcp_apps.stores.sql_key_provider import SqlBindingKeyProvider
from google.adk.mcp_apps.stores.sql_sealed_result_store import SqlSealedResultStore
from google.adk.mcp_apps.stores.sql_session_lifecycle_store import SqlSessionLifecycleStore
from google.adk.runners import Runner
from google.genai import types as genai_types
from scripted_llm import ScriptedLlm

APP = "sealing"
USER = "alice"
TOOLSET = "conf"
PRINCIPAL = Principal("alice-principal")


class ServerGate:
  """The test's side of the conformance server's `gated_view` barrier.

  Start the server with `{"gate_socket": gate.path}`. Each `gated_view` call
  connects, and its tag lands in `tags` (`entered` is set): the call is at
  the server, in flight. Every call waiting at the gate answers once
  `open()` is called.
  """

  def __init__(self) -> None:
    # AF_UNIX paths are short (about 100 bytes): not under pytest's tmp_path.
    self._dir = tempfile.mkdtemp(prefix="adk-gate-")
    self.path = os.path.join(self._dir, "gate")
    self.tags: list[str] = []
    self.entered = asyncio.Event()
    self._open = asyncio.Event()
    self._server: Optional[asyncio.AbstractServer] = None

  async def __aenter__(self) -> ServerGate:
    self._server = await asyncio.start_unix_server(self._serve, self.path)
    return self

  async def __aexit__(self, *exc_info: object) -> None:
    self._open.set()
    if self._server is not None:
      self._server.close()
      await self._server.wait_closed()
    shutil.rmtree(self._dir, ignore_errors=True)

  async def _serve(
      self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
  ) -> None:
    self.tags.append((await reader.readline()).decode().strip())
    self.entered.set()
    await self._open.wait()
    writer.write(b"open\n")
    await writer.drain()
    writer.close()

  def open(self) -> None:
    """Lets every waiting call (and every later one) answer."""
    self._open.set()


async def sql_profile(
    url: str, *, name: str = "sealing", **overrides: Any
) -> McpAppsHostProfile:
  """A profile whose sealed-result, lifecycle and key stores are SQL ones
  on `url` (the other providers stay the local-development ones)."""
  sealed = SqlSealedResultStore(url)
  await sealed.open()
  lifecycle = SqlSessionLifecycleStore(url)
  await lifecycle.open()
  keys = SqlBindingKeyProvider(url)
  await keys.load()
  fields: dict[str, Any] = {
      "sealed_result_store": sealed,
      "session_lifecycle_store": lifecycle,
      "key_provider": keys,
  }
  fields.update(overrides)
  return local_dev_profile(name, **fields)


def event_seal(
    profile: McpAppsHostProfile,
    key: SessionKey,
    invocation_id: str,
    call_id: str,
    result: dict[str, Any],
) -> None:
  """Leaves a pending Event-level seal of `result` for the call, as an
  interactive non-rendering UI call of the conformance server does."""
  from mcp_apps_conformance_server import names  # pylint: disable=g-import-not-at-top

  descriptor = prepare_seal(
      SealRequest(
          profile=profile,
          server_id="srv",
          toolset_id=TOOLSET,
          tool_name=names.APP_FOLLOWUP,
          resource_uri=names.VIEW_URI,
          declaration_fingerprint="fp",
          catalog_generation=None,
          session=key,
          correlation=WidgetCorrelation(
              invocation_id=invocation_id,
              function_call_id=call_id,
              agent_path="probe",
          ),
          arguments={},
          full_result=result,
      ),
      placement=SealPlacement.EVENT,
  )
  assert descriptor is None


async def close_profile(profile: McpAppsHostProfile) -> None:
  """Closes the SQL stores `sql_profile` opened."""
  for store in (
      profile.sealed_result_store,
      profile.session_lifecycle_store,
      profile.key_provider,
  ):
    aclose = getattr(store, "aclose", None)
    if aclose is not None:
      await aclose()


@dataclasses.dataclass
class BoundStack:
  """A registry, a Runner and a Session service over one real server."""

  registry: McpAppBindingRegistry
  profile: McpAppsHostProfile
  session_service: Any
  runner: Runner
  llm: ScriptedLlm

  def key(self, session_id: str) -> SessionKey:
    return SessionKey(APP, USER, session_id)

  async def new_session(self) -> str:
    session = await self.session_service.create_session(
        app_name=APP, user_id=USER
    )
    return str(session.id)

  async def turn(
      self, session_id: str, *calls: tuple[str, dict[str, Any]]
  ) -> list[Event]:
    """One Runner turn in which the model makes `calls` in parallel."""
    self.llm.steps = [list(calls)]
    events: list[Event] = []
    async for event in self.runner.run_async(
        user_id=USER,
        session_id=session_id,
        new_message=genai_types.Content(
            role="user", parts=[genai_types.Part(text="go")]
        ),
    ):
      events.append(event)
    return events

  async def stored_events(self, session_id: str) -> list[Event]:
    """The Session's Events as the service persisted them."""
    session = await self.session_service.get_session(
        app_name=APP, user_id=USER, session_id=session_id
    )
    assert session is not None
    return list(session.events)


def widget_event(events: list[Event]) -> Event:
  """The one Event of `events` that carries MCP widgets."""
  found = [e for e in events if e.actions and e.actions.render_ui_widgets]
  assert len(found) == 1, [e.model_dump(exclude_none=True) for e in events]
  return found[0]


@dataclasses.dataclass
class LoggedStack:
  """A bound stack over a conformance server that logs what it receives.

  The base of the bootstrap tests' harnesses.

  Attributes:
    st: The bound stack.
    log: The server's request log (`request_log_file`).
  """

  st: BoundStack
  log: Path

  @property
  def profile(self) -> Any:
    return self.st.profile

  @property
  def svc(self) -> Any:
    return self.st.session_service

  def entries(self) -> list[dict[str, Any]]:
    """Every message the server received, in order."""
    if not self.log.exists():
      return []
    return [json.loads(line) for line in self.log.read_text().splitlines()]

  async def turn(self, *calls: tuple[str, dict[str, Any]]) -> tuple[str, Event]:
    """A new Session and one turn making `calls`; its widget Event."""
    sid = await self.st.new_session()
    return sid, widget_event(await self.st.turn(sid, *calls))

  def reservation(self, sid: str, call_id: str) -> Any:
    """The render reservation a call left, or None."""
    return self.st.registry.render_reservations.peek(
        TOOLSET, self.st.key(sid), call_id
    )

  async def bootstrap(
      self, sid: str, event_id: str, call_id: str, **kwargs: Any
  ) -> RenderDocument:
    """`bootstrap_render` of one widget, with the stack's profile unless
    `profile` is given."""
    kwargs.setdefault("profile", self.profile)
    return await bootstrap_render(
        registry=self.st.registry,
        session_service=self.svc,
        principal=PRINCIPAL,
        session=self.st.key(sid),
        toolset_id=TOOLSET,
        event_id=event_id,
        function_call_id=call_id,
        **kwargs,
    )


@contextlib.asynccontextmanager
async def bound_stack(
    connection_params: Any,
    *,
    session_service: Any,
    profile: Optional[McpAppsHostProfile] = None,
    bind: bool = True,
    plugins: Optional[list[Any]] = None,
    agent_fields: Optional[dict[str, Any]] = None,
    **spec_fields: Any,
) -> AsyncIterator[BoundStack]:
  """A started registry and a Runner over `session_service`.

  Args:
    connection_params: ADK connection parameters of the server.
    session_service: The Session service (a durable one for lifecycle).
    profile: The profile; the local-development one by default.
    bind: False leaves the toolset model-only (no profile bound).
    plugins: The Runner's plugins (their `on_event_callback` runs on every
      Event before it is appended).
    agent_fields: Further `LlmAgent` fields (`after_tool_callback`).
    **spec_fields: Further `McpToolsetSpec` fields (`require_confirmation`).
  """
  profile = profile or local_dev_profile()
  spec = McpToolsetSpec(connection_params=connection_params, **spec_fields)
  registry = McpAppBindingRegistry(
      {TOOLSET: spec},
      profile if bind else None,
      allow_dev_providers=True,
  )
  PENDING_SEALS.clear()
  async with registry:
    llm = ScriptedLlm()
    agent = LlmAgent(
        name="probe",
        model=llm,
        tools=[registry.toolset(TOOLSET)],
        **(agent_fields or {}),
    )
    runner = Runner(
        agent=agent,
        app_name=APP,
        session_service=session_service,
        plugins=plugins,
    )
    try:
      yield BoundStack(registry, profile, session_service, runner, llm)
    finally:
      await runner.close()
      PENDING_SEALS.clear()


def referenced_record_ids(event: Event) -> dict[str, str]:
  """The Event's sealed references by function-call id, both placements."""
  refs = {
      call_id: ref.record_id
      for call_id, ref in (event.sealed_result_refs or {}).items()
  }
  for call_id, widget in mcp_widgets(event).items():
    if (
        isinstance(widget, McpAppWidgetDescriptor)
        and widget.sealed_result_ref is not None
    ):
      refs[call_id] = widget.sealed_result_ref.record_id
  return refs


def authoritative_check(
    service: Any,
) -> Callable[[SealedRecordScope, SealedResultRef], Awaitable[bool]]:
  """GC's `is_referenced`: does a persisted Event carry this reference?"""

  async def is_referenced(
      scope: SealedRecordScope, ref: SealedResultRef
  ) -> bool:
    session = await service.get_session(
        app_name=scope.session.app_name,
        user_id=scope.session.user_id,
        session_id=scope.session.session_id,
    )
    if session is None:
      return False
    return any(
        event.id == scope.event_id
        and referenced_record_ids(event).get(scope.function_call_id)
        == ref.record_id
        for event in session.events
    )

  return is_referenced


class OracleResolver(GatedResultResolver):
  """The gated resolver as the tests' oracle: without a View binding it
  presents a test-minted export permit, so a test reads what was sealed
  through every check (the product path needs the export resolver)."""

  async def resolve(  # type: ignore[override]
      self,
      session: SessionKey,
      *,
      event_id: str,
      function_call_id: str,
      view: Optional[ViewBinding] = None,
      incarnation: Optional[int] = None,
      permit: Optional[ExportPermit] = None,
  ) -> ResolvedResult:
    if view is None and permit is None:
      permit = ExportPermit(
          resolver_module._ISSUER,  # pylint: disable=protected-access
          session,
          None,
          event_id,
          function_call_id,
      )
    return await super().resolve(
        session,
        event_id=event_id,
        function_call_id=function_call_id,
        view=view,
        incarnation=incarnation,
        permit=permit,
    )
