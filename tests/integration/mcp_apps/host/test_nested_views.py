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

"""Nested Views a host independently negotiates for a View's own calls.

A View rendered by a real turn calls the conformance server's UI tool
(`open_view`) through `McpAppHostService`; the host's `nested_views`
decision says whether that call opens a nested View. The Session service
and the stores are real (in-memory, or SQLite for the restart).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import contextlib
from pathlib import Path
from typing import Any
from typing import Optional

from channel_support import call
from exec_ownership_support import eventually
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.events.ui_widget import UiWidget
from google.adk.mcp_apps.bootstrap.cold_replay import ColdOffer
from google.adk.mcp_apps.bootstrap.cold_replay import RERUN_WARNING
from google.adk.mcp_apps.contracts.replay_classification import ReplayClass
from google.adk.mcp_apps.contracts.replay_classification import ToolIdentity
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.coordination.coordinator import session_coordinator
from google.adk.mcp_apps.event_policy.audit_actions import NEGOTIATED_NESTED_WIDGETS
from google.adk.mcp_apps.event_policy.audit_actions import screen_audit_actions
from google.adk.mcp_apps.host.rerun import RerunConfirmation
from google.adk.mcp_apps.host.service import OpenedView
from google.adk.mcp_apps.operations.errors import OperationErrorReason
from google.adk.mcp_apps.operations.nested_views import NestedViewOffer
from google.adk.mcp_apps.profile import local_dev_profile
from google.adk.mcp_apps.sealing.refresh_record import RefreshInvocationRecord
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from host_support import ALICE
from host_support import AllowList
from host_support import caller
from host_support import HeaderResolver
from host_support import host
from host_support import Host
from host_support import Widget
from mcp_apps_conformance_server import names
import pytest
from sealing_support import close_profile
from sealing_support import OracleResolver
from sealing_support import sql_profile
from sealing_support import TOOLSET

pytestmark = pytest.mark.integration

IDEMPOTENCY_KEY = "com.google.adk/idempotency-key"


class Authority:
  """The test's replay classification: nothing is replay-safe."""

  source = "nested-views-test"
  revision = "r1"

  def classify(self, tool: ToolIdentity) -> ReplayClass:
    del tool
    return ReplayClass.NOT_REPLAY_SAFE


class Decision:
  """The host's `nested_views` decision; records every offer it saw."""

  def __init__(self, answer: bool) -> None:
    self.answer = answer
    self.offers: list[NestedViewOffer] = []

  async def __call__(self, offer: NestedViewOffer) -> bool:
    self.offers.append(offer)
    return self.answer


class HeldAudits(SqliteSessionService):
  """The deployment's SQLite Session service; the test holds the append of
  app-operation records until it opens `release`."""

  def __init__(self, path: str) -> None:
    super().__init__(path)
    self.release = asyncio.Event()
    self.held = asyncio.Event()

  async def append_event(self, session: Any, event: Any) -> Any:
    if (event.custom_metadata or {}).get("mcp_app_operation"):
      self.held.set()
      await self.release.wait()
    return await super().append_event(session, event)


@contextlib.asynccontextmanager
async def nested_host(
    mcp_apps: Any,
    tmp_path: Path,
    backend: str,
    *,
    session_service: Any = None,
    **options: Any,
) -> AsyncIterator[Host]:
  """`host` under a profile whose replay classification is the test's."""
  fields: dict[str, Any] = {
      "principal_resolver": HeaderResolver(),
      "session_authorizer": AllowList(ALICE),
      "replay_classification": Authority(),
  }
  if backend == "sqlite":
    profile = await sql_profile(
        f"sqlite+aiosqlite:///{tmp_path / 'stores.db'}", **fields
    )
    session_service = session_service or SqliteSessionService(
        str(tmp_path / "sessions.db")
    )
  else:
    profile = local_dev_profile(**fields)
  try:
    async with host(
        mcp_apps,
        tmp_path,
        backend,
        profile=profile,
        session_service=session_service,
        **options,
    ) as h:
      yield h
  finally:
    await close_profile(profile)


def keyed(message: dict[str, Any], key: str) -> dict[str, Any]:
  params = {**message["params"], "_meta": {IDEMPOTENCY_KEY: key}}
  return {**message, "params": params}


async def audit_records(h: Host, key: SessionKey) -> list[Event]:
  session = await h.st.session_service.get_session(
      app_name=key.app_name, user_id=key.user_id, session_id=key.session_id
  )
  return [
      e
      for e in session.events
      if (e.custom_metadata or {}).get("mcp_app_operation")
  ]


async def refresh_record(
    h: Host, key: SessionKey, event_id: str, call_id: str
) -> RefreshInvocationRecord:
  resolved = await OracleResolver(h.st.profile, h.st.session_service).resolve(
      key, event_id=event_id, function_call_id=call_id
  )
  return resolved.refresh_record()


async def call_from_view(
    h: Host, *, key: Optional[str] = None
) -> tuple[Widget, OpenedView, Any]:
  """A model-rendered View calls `open_view`; returns its widget, the View
  and its response."""
  widget = await h.widget()
  opened = await h.open(widget)
  message = call(7, names.OPEN_VIEW, {})
  response = await h.send(
      opened, message if key is None else keyed(message, key)
  )
  return widget, opened, response


@pytest.mark.conformance("P2-REF-05", "P2-RIR-04")
async def test_a_negotiated_nested_view_gets_its_own_descriptor_and_record(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  decision = Decision(True)
  async with nested_host(
      mcp_apps, tmp_path, backend, nested_views=decision
  ) as h:
    widget, _, response = await call_from_view(h)
    # The View's response is the call's result, as without a nested View.
    assert "result" in response, response
    assert "View opened" in response["result"]["content"][0]["text"]
    (record,) = await audit_records(h, widget.session)
    # A new descriptor carrying the widget-level reference; no Event-level
    # entry.
    (nested,) = record.actions.render_ui_widgets
    assert nested.provider == "mcp"
    assert nested.payload["resourceUri"] == names.VIEW_URI
    assert set(nested.payload["sealedResultRef"]) == {
        "recordId",
        "schemaVersion",
    }
    assert not record.sealed_result_refs
    (offer,) = decision.offers
    assert (offer.tool_name, offer.operation_id) == (names.OPEN_VIEW, nested.id)
    assert offer.toolset_id == TOOLSET
    # The refresh record is a model call's, but for the caller and the
    # call's own correlation.
    model = await refresh_record(
        h, widget.session, widget.event_id, widget.function_call_id
    )
    app = await refresh_record(h, widget.session, record.id, nested.id)
    assert (model.immediate_caller, app.immediate_caller) == ("model", "app")
    assert app.correlation["functionCallId"] == nested.id
    assert app.correlation["invocationId"] == record.invocation_id
    different = {"immediate_caller", "correlation"}
    assert app.model_dump(exclude=different) == model.model_dump(
        exclude=different
    )
    # The host renders the nested widget: it opens as a View of its own.
    opened = await h.service.open_view(
        caller(),
        session=widget.session,
        toolset_id=TOOLSET,
        event_id=record.id,
        function_call_id=nested.id,
    )
    assert "Conformance View" in opened.view_data["html"]


@pytest.mark.parametrize("negotiated", [None, False])
@pytest.mark.conformance("P2-REF-03")
async def test_without_negotiation_the_result_keeps_the_event_level_reference(
    mcp_apps: Any, tmp_path: Path, backend: str, negotiated: Optional[bool]
) -> None:
  options = {} if negotiated is None else {"nested_views": Decision(False)}
  async with nested_host(mcp_apps, tmp_path, backend, **options) as h:
    widget, _, response = await call_from_view(h)
    assert "result" in response, response
    (record,) = await audit_records(h, widget.session)
    assert not record.actions.render_ui_widgets
    assert set(record.sealed_result_refs or {}) == {
        record.content.parts[0].function_response.id
    }
    reservations = h.st.registry.render_reservations
    assert (
        reservations.generation_of(
            TOOLSET,
            widget.session,
            record.content.parts[0].function_response.id,
        )
        is None
    )


@pytest.mark.conformance("P2-RIR-10")
async def test_a_late_nested_view_stands_and_its_cold_affordance_survives_restart(
    mcp_apps: Any, tmp_path: Path
) -> None:
  service = HeldAudits(str(tmp_path / "sessions.db"))
  async with nested_host(
      mcp_apps,
      tmp_path,
      "sqlite",
      session_service=service,
      nested_views=Decision(True),
      append_timeout=0.05,
  ) as h:
    # The append is held at the Session service, so the deadline passes.
    widget, opened, first = await call_from_view(h, key="order-1")
    assert service.held.is_set()
    assert first["error"]["data"]["reason"] == (
        OperationErrorReason.APPEND_TIMEOUT.value
    )
    service.release.set()
    await eventually(
        lambda: session_coordinator().owner(widget.session) is None,
        "the late commit",
    )
    # The record and its nested widget stand.
    (record,) = await audit_records(h, widget.session)
    (nested,) = record.actions.render_ui_widgets
    assert "sealedResultRef" in nested.payload
    assert not record.sealed_result_refs
    # The late commit reserved the nested widget's generation: it opens.
    view = await h.service.open_view(
        caller(),
        session=widget.session,
        toolset_id=TOOLSET,
        event_id=record.id,
        function_call_id=nested.id,
    )
    assert "Conformance View" in view.view_data["html"]
    # The cached outcome stays the timeout error; nothing runs again.
    again = await h.send(opened, keyed(call(8, names.OPEN_VIEW, {}), "order-1"))
    assert again["error"] == first["error"]
    assert len(await audit_records(h, widget.session)) == 1

  # A restart: a new registry and service over the same SQLite stores.
  prompts: list[RerunConfirmation] = []

  async def confirm(prompt: RerunConfirmation) -> bool:
    prompts.append(prompt)
    return True

  async with nested_host(mcp_apps, tmp_path, "sqlite") as h2:
    rerun = await h2.service.run_tool_again(
        caller(),
        session=widget.session,
        event_id=record.id,
        function_call_id=nested.id,
        confirm=confirm,
    )
  (prompt,) = prompts
  assert (prompt.offer, prompt.tool_name, prompt.warning) == (
      ColdOffer.RERUN,
      names.OPEN_VIEW,
      RERUN_WARNING,
  )
  assert rerun.rendered and rerun.function_call_id != nested.id


@pytest.mark.conformance("P2-REF-05")
def test_only_the_negotiated_widget_passes_the_audit_nested_widget_rule() -> (
    None
):
  """The NESTED_WIDGET rule keeps exactly the registered widget (its
  reference aside), and only while its append runs."""
  widget = UiWidget(
      id="op-n", provider="mcp", payload={"resourceUri": "ui://a"}
  )
  forged = UiWidget(
      id="op-n", provider="mcp", payload={"resourceUri": "ui://b"}
  )
  sealed = UiWidget(
      id="op-n",
      provider="mcp",
      payload={"resourceUri": "ui://a", "sealedResultRef": {"recordId": "r"}},
  )

  def kept(*widgets: UiWidget) -> Any:
    screen = screen_audit_actions(EventActions(render_ui_widgets=list(widgets)))
    assert screen.error is None
    return screen.actions.render_ui_widgets

  assert kept(widget) is None
  NEGOTIATED_NESTED_WIDGETS.allow(widget)
  try:
    assert kept(widget) == [widget]
    assert kept(sealed) == [sealed]
    assert kept(forged) is None
    assert kept(widget, forged) == [widget]
  finally:
    NEGOTIATED_NESTED_WIDGETS.withdraw(widget.id)
  assert kept(widget) is None
