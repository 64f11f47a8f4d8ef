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

"""`McpAppHostService`: opening Views, grant secrecy, per-View teardown.

Every View is rendered by a real turn run through the service on the real
conformance server; the principal comes from the test deployment's
header resolver.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from google.adk.mcp_apps.affinity.security_domain import security_domain
from google.adk.mcp_apps.contracts.principal_resolver import Principal
from google.adk.mcp_apps.contracts.session_authorizer import SessionPurpose
from google.adk.mcp_apps.contracts.session_authorizer import WidgetTarget
from google.adk.mcp_apps.host.errors import HostServiceError
from google.adk.mcp_apps.host.errors import HostServiceErrorReason
from google.adk.mcp_apps.operations.context_registers import context_registers
from host_support import ALICE
from host_support import AllowList
from host_support import BOB
from host_support import caller
from host_support import host
from host_support import read_view
from host_support import Widget
from mcp_apps_conformance_server import names
import pytest
from sealing_support import TOOLSET

pytestmark = pytest.mark.integration


@pytest.mark.conformance("P5-GRNT-01", "P5-GRNT-02", "P5-GRNT-03")
async def test_no_grant_lease_or_host_secret_reaches_the_iframe(
    mcp_apps: Any, tmp_path: Path
) -> None:
  """P5-GRNT-01..03: the html, hostContext, the tool-input and tool-result
  notifications and every channel notification carry none of the lease
  token, the channel token, the principal id or digest, the generation id
  or the host key."""
  async with host(mcp_apps, tmp_path) as h:
    opened = await h.open(await h.widget())
    assert "Conformance View" in opened.view_data["html"]
    response = await h.send(opened, read_view())
    assert "result" in response, response
    view = h.service._views[opened.view_id]  # pylint: disable=protected-access
    key = h.st.profile.key_provider.active_key()
    secrets_ = {
        "lease": opened.lease,
        "channel token": view.channel.token,
        "principal": ALICE,
        "principal digest": h.service.leases.digest(
            view.channel._principal  # pylint: disable=protected-access
        ),
        "generation": view.channel.grant.generation_id,
        "host key": key.secret.hex(),
    }
    payloads = {
        "html": opened.view_data["html"],
        "hostContext": json.dumps(opened.view_data["hostContext"]),
        "view_data": json.dumps(opened.view_data, default=str),
        "notifications": json.dumps(opened.notifications()),
        "channel": json.dumps([m for _, m in h.sent]),
        "response": json.dumps(response),
    }
    assert [m["method"] for m in opened.notifications()] == [
        "ui/notifications/tool-input",
        "ui/notifications/tool-result",
    ]
    for name, payload in payloads.items():
      for what, secret in secrets_.items():
        assert secret not in payload, (what, name)
    # Host-side reprs (logs) carry no token or principal either.
    logged = repr(opened) + repr(view.lease) + repr(view.scope)
    for what in ("lease", "channel token", "principal", "principal digest"):
      assert secrets_[what] not in logged, what


@pytest.mark.conformance("P5-VIEW-01", "P5-GRNT-04")
async def test_two_views_of_one_widget_are_independent(
    mcp_apps: Any, tmp_path: Path
) -> None:
  """P5-VIEW-01, P5-GRNT-04: a second View of the same widget has its own
  id, lease and teardown; a lease serves only its own View; closing one
  leaves the other serving."""
  async with host(mcp_apps, tmp_path) as h:
    widget = await h.widget()
    first = await h.open(widget)
    second = await h.open(widget)
    assert first.view_id != second.view_id and first.lease != second.lease
    with pytest.raises(HostServiceError) as denied:
      await h.send(first, read_view(), lease=second.lease)
    assert denied.value.reason is HostServiceErrorReason.LEASE_INVALID
    await h.service.close_view(
        caller(), view_id=first.view_id, lease=first.lease, acknowledged=True
    )
    assert h.service.view_ids == (second.view_id,)
    assert "result" in await h.send(second, read_view())
    with pytest.raises(HostServiceError) as closed:
      await h.send(first, read_view())
    assert closed.value.reason is HostServiceErrorReason.LEASE_INVALID


@pytest.mark.conformance("P5-VIEW-02", "P5-LSE-11")
@pytest.mark.parametrize("acknowledged", [True, False])
async def test_teardown_ack_or_timeout_runs_both_phases(
    mcp_apps: Any, tmp_path: Path, acknowledged: bool
) -> None:
  """P5-VIEW-02, P5-LSE-11: the frontend's teardown acknowledgement (or
  its timeout) revokes the lease at once and completes phase 2: the
  channel is torn down, the View's generation hold released."""
  async with host(mcp_apps, tmp_path) as h:
    opened = await h.open(await h.widget())
    view = h.service._views[opened.view_id]  # pylint: disable=protected-access
    await h.service.close_view(
        caller(),
        view_id=opened.view_id,
        lease=opened.lease,
        acknowledged=acknowledged,
    )
    assert view.lease.revoked and view.channel.torn_down
    assert not view.channel.grant.active
    assert (
        context_registers().clear_view(view.scope.session, opened.view_id)
        is False
    )
    with pytest.raises(HostServiceError) as denied:
      await h.send(opened, read_view())
    assert denied.value.reason is HostServiceErrorReason.LEASE_INVALID


async def test_unauthenticated_caller_is_denied_typed(
    mcp_apps: Any, tmp_path: Path, caplog: Any
) -> None:
  """A request without a credential is `UNAUTHENTICATED`, logged without
  the request's headers."""
  async with host(mcp_apps, tmp_path) as h:
    widget = await h.widget()
    with pytest.raises(HostServiceError) as denied:
      await h.service.open_view(caller(None), **widget.target())
    assert denied.value.reason is HostServiceErrorReason.UNAUTHENTICATED
    assert "open_view: unauthenticated" in caplog.text
    assert h.service.view_ids == ()


async def test_another_principals_widget_is_refused(
    mcp_apps: Any, tmp_path: Path, caplog: Any
) -> None:
  """Design gap 2: Bob, authorized on the Session, cannot open the widget
  Alice's turn rendered: its generation is in Alice's security domain.
  The denial log names neither principal."""
  async with host(mcp_apps, tmp_path) as h:
    widget = await h.widget(ALICE)
    with pytest.raises(HostServiceError) as denied:
      await h.open(widget, BOB)
    assert denied.value.reason is HostServiceErrorReason.UNAUTHORIZED
    assert denied.value.detail == "other_security_domain"
    assert ALICE not in caplog.text and BOB not in caplog.text
    assert (await h.open(widget, ALICE)).view_id in h.service.view_ids


@pytest.mark.conformance("P5-CTR-02")
async def test_authorizer_is_asked_per_widget_and_channel_export_separate(
    mcp_apps: Any, tmp_path: Path
) -> None:
  """P5-CTR-02: opening a View asks the authorizer for VIEW of exactly that
  widget; the View's channel operations ask for the widget and its
  `view_instance_id`; EXPORT is a separate purpose the VIEW grant does not
  imply."""
  authorizer = AllowList(ALICE)
  async with host(mcp_apps, tmp_path, authorizer=authorizer) as h:
    widget = await h.widget()
    authorizer.asked.clear()
    opened = await h.open(widget)
    target = WidgetTarget(TOOLSET, widget.event_id, widget.function_call_id)
    assert authorizer.asked == [(ALICE, SessionPurpose.VIEW, target)]
    authorizer.asked.clear()
    assert "result" in await h.send(opened, read_view())
    channel_target = dataclasses.replace(
        target, view_instance_id=opened.view_id
    )
    assert authorizer.asked
    assert set(authorizer.asked) == {
        (ALICE, SessionPurpose.VIEW, channel_target)
    }
    principal = Principal(ALICE)
    assert not await authorizer.authorize(
        principal, widget.session, SessionPurpose.EXPORT, widget=target
    )


async def test_a_turn_runs_in_the_callers_security_domain(
    mcp_apps: Any, tmp_path: Path
) -> None:
  """Design gap 3: `run_turn` runs under the caller's principal, so the
  widget's generation is keyed to the caller's security domain, neither
  the unattributed one nor the Session owner's."""
  async with host(mcp_apps, tmp_path) as h:
    widget = await h.widget(BOB)
    generation = h.st.registry.render_reservations.generation_of(
        TOOLSET, widget.session, widget.function_call_id
    )
    key = h.st.profile.key_provider.active_key()
    assert generation is not None
    assert generation.key.security_domain == (
        security_domain(key, Principal(BOB)).digest
    )


async def test_a_widget_rendered_by_a_views_message_turn_opens_for_its_user(
    mcp_apps: Any, tmp_path: Path
) -> None:
  """The turn a View's `ui/message` starts acts for the View's principal:
  a widget that turn renders is keyed to that principal's security domain,
  not the Session owner's, so the same user opens it."""
  async with host(mcp_apps, tmp_path) as h:
    widget = await h.widget(BOB)
    opened = await h.open(widget, BOB)
    h.st.llm.steps = [[(names.OPEN_VIEW, {})]]
    answer = await h.send(
        opened,
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "ui/message",
            "params": {
                "role": "user",
                "content": [{"type": "text", "text": "show it again"}],
            },
        },
        principal_id=BOB,
    )
    assert answer == {"jsonrpc": "2.0", "id": 7, "result": {}}
    stored = await h.st.session_service.get_session(
        app_name=widget.session.app_name,
        user_id=widget.session.user_id,
        session_id=widget.session.session_id,
    )
    rendered = [e for e in stored.events if e.actions.render_ui_widgets]
    assert [e.id for e in rendered][0] == widget.event_id
    (new,) = rendered[-1].actions.render_ui_widgets
    assert rendered[-1].id != widget.event_id
    generation = h.st.registry.render_reservations.generation_of(
        TOOLSET, widget.session, new.id
    )
    key = h.st.profile.key_provider.active_key()
    assert generation is not None
    assert generation.key.security_domain == (
        security_domain(key, Principal(BOB)).digest
    )
    again = await h.open(Widget(widget.session, rendered[-1].id, new.id), BOB)
    assert again.view_id != opened.view_id


@pytest.mark.conformance("P5-LSE-11")
async def test_view_requested_teardown_revokes_and_forgets_the_view(
    mcp_apps: Any, tmp_path: Path
) -> None:
  """P5-LSE-11: the View's own `ui/notifications/request-teardown` (the
  service approves it) revokes the lease and runs phase 2: the View leaves
  the service and its lease is refused."""
  async with host(mcp_apps, tmp_path) as h:
    opened = await h.open(await h.widget())
    view = h.service._views[opened.view_id]  # pylint: disable=protected-access
    request = {
        "jsonrpc": "2.0",
        "method": "ui/notifications/request-teardown",
        "params": {},
    }
    assert await h.send(opened, request) is None
    assert view.lease.revoked and view.channel.torn_down
    assert h.service.view_ids == ()
    with pytest.raises(HostServiceError) as denied:
      await h.send(opened, read_view())
    assert denied.value.reason is HostServiceErrorReason.LEASE_INVALID
