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

"""Refresh and "Run tool again" as new invocations, over a real server.

Cases P2-COLD-11..14 (RFC §6, ⚑7(i)). Each test runs on the operations
stage: the conformance server over stdio, a bound registry and a real
Runner whose scripted model called `open_view` (not replay-safe here) and,
where a test needs it, `mutable_view` (a pure echo, replay-safe here). The
replay-classification authority is the test's own; the confirmation is the
host's callable, played by the test. The server's request log says what
reached it; the Runner's `Recorder` plugin says which callbacks ran.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any
from typing import Optional

from channel_support import call
from channel_support import open_channel
from exec_ownership_support import Stage
from exec_ownership_support import stage
from google.adk.events.event import Event
from google.adk.mcp_apps.bootstrap.cold_replay import ColdOffer
from google.adk.mcp_apps.bootstrap.cold_replay import RERUN_WARNING
from google.adk.mcp_apps.bootstrap.render import bootstrap_render
from google.adk.mcp_apps.bootstrap.render import BootstrapError
from google.adk.mcp_apps.bootstrap.render import RenderDocument
from google.adk.mcp_apps.contracts.principal_resolver import Principal
from google.adk.mcp_apps.contracts.replay_classification import ReplayClass
from google.adk.mcp_apps.contracts.replay_classification import ToolIdentity
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.session_authorizer import SessionPurpose
from google.adk.mcp_apps.descriptor.widget_descriptor import read_mcp_widget
from google.adk.mcp_apps.host.errors import HostServiceError
from google.adk.mcp_apps.host.errors import HostServiceErrorReason
from google.adk.mcp_apps.host.rerun import RerunConfirmation
from google.adk.mcp_apps.host.rerun import RerunResult
from google.adk.mcp_apps.host.rerun import run_tool_again
from google.adk.mcp_apps.sealing.refresh_record import RefreshInvocationRecord
from mcp_apps_conformance_server import names
import pytest
from sealing_support import OracleResolver
from sealing_support import PRINCIPAL
from sealing_support import TOOLSET
from sealing_support import widget_event

pytestmark = pytest.mark.integration

LABEL = {"label": "cold"}
IDEMPOTENCY_KEY = "com.google.adk/idempotency-key"


class Authority:
  """The test's replay classification: only `mutable_view` is safe.

  Attributes:
    revision: The classification revision; a test may move it.
  """

  source = "rerun-test-authority"

  def __init__(self) -> None:
    self.revision = "r1"

  def classify(self, tool: ToolIdentity) -> ReplayClass:
    if tool.tool_name == names.MUTABLE_VIEW:
      return ReplayClass.REPLAY_SAFE
    return ReplayClass.NOT_REPLAY_SAFE


class Confirmation:
  """The host's confirmation callable; records every prompt it showed."""

  def __init__(self, answer: Optional[bool] = True) -> None:
    self.answer = answer
    self.prompts: list[RerunConfirmation] = []

  async def __call__(self, prompt: RerunConfirmation) -> bool:
    self.prompts.append(prompt)
    if self.answer is None:
      raise RuntimeError("the confirmation dialog failed")
    return self.answer


class Switchable:
  """A deployment's `SessionAuthorizer` whose grant the test revokes."""

  def __init__(self) -> None:
    self.allowed = True

  async def authorize(
      self,
      principal: Principal,
      session: SessionKey,
      purpose: SessionPurpose,
      *,
      widget: object = None,
  ) -> bool:
    return self.allowed and purpose is SessionPurpose.VIEW


def _staged(
    mcp_apps: Any,
    tmp_path: Path,
    backend: str,
    *,
    authority: Optional[Authority] = None,
    authorizer: Optional[Switchable] = None,
    **fields: Any,
) -> Any:
  profile_fields: dict[str, Any] = {
      "replay_classification": authority or Authority()
  }
  if authorizer is not None:
    profile_fields["session_authorizer"] = authorizer
  return stage(
      mcp_apps, tmp_path, backend, profile_fields=profile_fields, **fields
  )


def _widget(event: Event) -> tuple[str, str]:
  """The Event's id and its one widget's id."""
  (widget,) = event.actions.render_ui_widgets
  return event.id, widget.id


def _opened(s: Stage) -> tuple[str, str]:
  """The stage's own `open_view` widget (rendered by the model's call)."""
  return _widget(widget_event(list(s.session.events)))


async def _again(
    s: Stage, widget: tuple[str, str], confirm: Any = None
) -> RerunResult:
  event_id, call_id = widget
  return await run_tool_again(
      runner=s.st.runner,
      registry=s.st.registry,
      principal=PRINCIPAL,
      session=s.key,
      event_id=event_id,
      function_call_id=call_id,
      confirm=confirm,
  )


async def _denied(
    s: Stage, widget: tuple[str, str], confirm: Any = None
) -> HostServiceError:
  with pytest.raises(HostServiceError) as raised:
    await _again(s, widget, confirm)
  assert raised.value.reason is HostServiceErrorReason.RERUN_DENIED
  return raised.value


async def _record(s: Stage, event_id: str, call_id: str) -> Any:
  return await OracleResolver(s.st.profile, s.st.session_service).resolve(
      s.key, event_id=event_id, function_call_id=call_id
  )


async def _refresh_record(
    s: Stage, event_id: str, call_id: str
) -> RefreshInvocationRecord:
  return (await _record(s, event_id, call_id)).refresh_record()


async def _bootstrap(s: Stage, event_id: str, call_id: str) -> RenderDocument:
  return await bootstrap_render(
      registry=s.st.registry,
      profile=s.st.profile,
      session_service=s.st.session_service,
      principal=PRINCIPAL,
      session=s.key,
      toolset_id=TOOLSET,
      event_id=event_id,
      function_call_id=call_id,
  )


async def _mutable_widget(s: Stage) -> tuple[str, str]:
  """A second, replay-safe widget: the model calls `mutable_view`."""
  event = widget_event(await s.st.turn(s.sid, (names.MUTABLE_VIEW, LABEL)))
  s.clear_logs()
  return _widget(event)


# --- P2-COLD-11: the normal confirmation policy runs first -------------------


@pytest.mark.conformance("P2-COLD-11")
async def test_rerun_runs_nothing_until_the_user_confirms(
    mcp_apps: Any,
    tmp_path: Path,
    backend: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
  async with _staged(mcp_apps, tmp_path, backend) as s:
    widget = _opened(s)
    refused = Confirmation(answer=False)
    broken = Confirmation(answer=None)
    caplog.set_level(logging.WARNING, logger="google_adk.mcp_apps.host")

    no_dialog = await _denied(s, widget)
    declined = await _denied(s, widget, refused)
    failed = await _denied(s, widget, broken)

    assert no_dialog.detail == "confirmation_required"
    assert declined.detail == failed.detail == "confirmation_denied"
    # The dialog named the tool and warned that its effects may repeat.
    (prompt,) = refused.prompts
    assert prompt == RerunConfirmation(
        offer=ColdOffer.RERUN,
        tool_name=names.OPEN_VIEW,
        warning=RERUN_WARNING,
        tool_requires_confirmation=False,
    )
    # Nothing ran: no server call, no callback, no Event.
    assert s.tool_calls(names.OPEN_VIEW) == 1
    assert s.recorder.log == []
    assert await s.stored() == []
    denials = [r for r in caplog.records if "run_tool_again" in r.getMessage()]
    assert len(denials) == 3
    assert all("rerun_denied" in r.getMessage() for r in denials)
    assert not any(PRINCIPAL.principal_id in r.getMessage() for r in denials)

    confirmed = Confirmation()
    result = await _again(s, widget, confirmed)
  assert len(confirmed.prompts) == 1
  assert result.offer is ColdOffer.RERUN
  assert s.tool_calls(names.OPEN_VIEW) == 2


@pytest.mark.conformance("P2-COLD-11")
async def test_refresh_asks_only_when_the_tools_policy_requires_it(
    mcp_apps: Any, tmp_path: Path
) -> None:
  policy = {"require": False}

  def require_confirmation() -> bool:
    return policy["require"]

  async with _staged(
      mcp_apps,
      tmp_path,
      "in_memory",
      spec_fields={"require_confirmation": require_confirmation},
  ) as s:
    widget = await _mutable_widget(s)
    one_click = Confirmation()
    first = await _again(s, widget, one_click)
    # The tool's own policy now asks for a confirmation.
    policy["require"] = True
    asked = Confirmation(answer=False)
    no_dialog = await _denied(s, widget)
    declined = await _denied(s, widget, asked)
    calls_while_denied = s.tool_calls(names.MUTABLE_VIEW)
    approved = Confirmation()
    second = await _again(s, widget, approved)

  # Replay-safe and no confirmation required: one click, no dialog.
  assert first.offer is ColdOffer.REFRESH
  assert one_click.prompts == []
  assert no_dialog.detail == "confirmation_required"
  assert declined.detail == "confirmation_denied"
  assert calls_while_denied == 2  # The model's call and the first refresh.
  expected = RerunConfirmation(
      offer=ColdOffer.REFRESH,
      tool_name=names.MUTABLE_VIEW,
      warning=None,
      tool_requires_confirmation=True,
  )
  assert asked.prompts == approved.prompts == [expected]
  # The approval reached the tool's own gate: the tool ran and rendered.
  assert second.offer is ColdOffer.REFRESH and second.rendered
  assert s.tool_calls(names.MUTABLE_VIEW) == 3


@pytest.mark.conformance("P2-COLD-07", "P2-COLD-11")
async def test_a_change_while_the_user_confirms_runs_nothing(
    mcp_apps: Any, tmp_path: Path
) -> None:
  authority = Authority()
  async with _staged(mcp_apps, tmp_path, "in_memory", authority=authority) as s:
    widget = _opened(s)

    async def confirm_then_reclassify(prompt: RerunConfirmation) -> bool:
      # The classification source moves on while the dialog is open.
      authority.revision = "r2"
      return True

    denied = await _denied(s, widget, confirm_then_reclassify)
  # Re-decided once the Session was owned: the placeholder, nothing ran.
  # (The classification revision is part of the binding revision, so the
  # gated resolver refuses the old record before the record check would.)
  assert denied.detail == "binding_mismatch"
  assert s.tool_calls(names.OPEN_VIEW) == 1
  assert s.recorder.log == []


@pytest.mark.conformance("P2-COLD-02")
async def test_the_action_is_reauthorized_and_a_denial_runs_nothing(
    mcp_apps: Any, tmp_path: Path
) -> None:
  authorizer = Switchable()
  async with _staged(
      mcp_apps, tmp_path, "in_memory", authorizer=authorizer
  ) as s:
    widget = _opened(s)
    authorizer.allowed = False
    confirm = Confirmation()
    denied = await _denied(s, widget, confirm)
    stored = await s.stored()
  assert denied.detail == "unauthorized"
  assert confirm.prompts == []  # Nothing was even offered.
  assert s.tool_calls(names.OPEN_VIEW) == 1
  assert stored == []


# --- P2-COLD-12: a new, separately attributed invocation ---------------------


@pytest.mark.conformance("P2-COLD-12")
async def test_rerun_is_a_new_invocation_called_by_the_host(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  seen: list[tuple[str, str, str]] = []

  async def before(*, tool: Any, tool_args: Any, tool_context: Any) -> None:
    seen.append((
        tool_context.immediate_caller,
        tool_context.function_call_id,
        tool_context.invocation_id,
    ))

  async with _staged(mcp_apps, tmp_path, backend) as s:
    old_event_id, old_call_id = _opened(s)
    old = await _refresh_record(s, old_event_id, old_call_id)
    (old_event,) = [e for e in s.session.events if e.id == old_event_id]
    s.recorder.before = before
    first = await _again(s, (old_event_id, old_call_id), Confirmation())
    second = await _again(s, (old_event_id, old_call_id), Confirmation())
    stored = await s.stored()
    new = await _refresh_record(s, first.event_id, first.function_call_id)

  ids = {old_call_id, first.function_call_id, second.function_call_id}
  assert len(ids) == 3
  invocations = {old_event.invocation_id, first.invocation_id}
  assert len(invocations | {second.invocation_id}) == 3
  operations = {first.operation_id, second.operation_id}
  assert None not in operations and len(operations) == 2
  # The tool saw the host as its caller, on the new call and invocation.
  assert seen == [
      ("host", first.function_call_id, first.invocation_id),
      ("host", second.function_call_id, second.invocation_id),
  ]
  # Each invocation: the host-authored call, then its response; both
  # stamped with the user's ingress, under the new invocation only.
  assert [e.invocation_id for e in stored] == [first.invocation_id] * 2 + [
      second.invocation_id
  ] * 2
  call_event, response_event = stored[:2]
  (function_call,) = call_event.get_function_calls()
  assert function_call.id == first.function_call_id
  assert function_call.name == names.OPEN_VIEW
  assert call_event.author == old_event.author
  assert response_event.id == first.event_id
  assert {e.invocation_origin for e in stored} == {"user"}
  # The sealed record attributes the call to the host, the old to the model.
  assert old.immediate_caller == "model"
  assert new.immediate_caller == "host"
  assert new.correlation["functionCallId"] == first.function_call_id
  assert new.correlation["invocationId"] == first.invocation_id
  assert dict(new.arguments) == dict(old.arguments)


# --- P2-COLD-13: the old idempotency outcome is never reused -----------------


@pytest.mark.conformance("P2-COLD-13")
async def test_rerun_runs_again_despite_a_retained_outcome(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with _staged(mcp_apps, tmp_path, backend) as s:
    widget = _opened(s)
    channel = await open_channel(s)
    keyed = call(1, names.OPEN_VIEW, {}, _meta={IDEMPOTENCY_KEY: "once"})
    retained = await channel.handle(keyed, token=channel.token)
    replayed = await channel.handle({**keyed, "id": 2}, token=channel.token)
    # Positive control: the key's outcome is retained and served again.
    assert retained is not None and replayed is not None
    assert replayed["result"] == retained["result"]
    assert s.tool_calls(names.OPEN_VIEW) == 2  # The model's and the View's.
    old_nonce = retained["result"]["structuredContent"]["nonce"]

    result = await _again(s, widget, Confirmation())
    resolved = await _record(s, result.event_id, result.function_call_id)

  # The server got a third tools/call: nothing retained answered it.
  assert s.tool_calls(names.OPEN_VIEW) == 3
  assert resolved.full_result()["structuredContent"]["nonce"] != old_nonce


# --- P2-COLD-14: a new Event, descriptor and View; the old stays dead --------


@pytest.mark.conformance("P2-COLD-14")
async def test_refresh_makes_a_new_view_and_never_revives_the_old(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with _staged(mcp_apps, tmp_path, backend) as s:
    old_event_id, old_call_id = await _mutable_widget(s)
    old_view = await _bootstrap(s, old_event_id, old_call_id)
    old_view.grant.revoke()  # The View is gone.
    before = await s.stored()

    result = await _again(s, (old_event_id, old_call_id))
    after = await s.stored()
    new_view = await _bootstrap(s, result.event_id, result.function_call_id)
    with pytest.raises(BootstrapError) as old_again:
      await _bootstrap(s, old_event_id, old_call_id)
    new_active = new_view.grant.active
    new_view.grant.revoke()

  assert result.offer is ColdOffer.REFRESH and result.rendered
  _assert_new_view(before, after, result, old_view, new_view, new_active)
  assert new_view.tool_input == LABEL
  assert old_again.value.reason == "no_reservation"


@pytest.mark.conformance("P2-COLD-14")
async def test_rerun_makes_a_new_view_and_never_revives_the_old(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with _staged(mcp_apps, tmp_path, backend) as s:
    old_event_id, old_call_id = _opened(s)
    s.hold.release()  # The stage's View is gone.
    with pytest.raises(BootstrapError):
      await _bootstrap(s, old_event_id, old_call_id)
    before = await s.stored()

    result = await _again(s, (old_event_id, old_call_id), Confirmation())
    after = await s.stored()
    new_view = await _bootstrap(s, result.event_id, result.function_call_id)
    with pytest.raises(BootstrapError) as old_again:
      await _bootstrap(s, old_event_id, old_call_id)
    new_active = new_view.grant.active
    new_view.grant.revoke()

  assert result.offer is ColdOffer.RERUN and result.rendered
  assert before == []
  (response,) = [e for e in after if e.id == result.event_id]
  (descriptor,) = [
      read_mcp_widget(w) for w in response.actions.render_ui_widgets
  ]
  assert descriptor.correlation.function_call_id == result.function_call_id
  assert descriptor.sealed_result_ref is not None
  assert new_active and new_view.descriptor == descriptor
  assert old_again.value.reason == "no_reservation"


def _assert_new_view(
    before: list[Event],
    after: list[Event],
    result: RerunResult,
    old_view: RenderDocument,
    new_view: RenderDocument,
    new_active: bool,
) -> None:
  """A new Event with a new sealed descriptor, and a new live View whose
  old counterpart stays dead."""
  added = after[len(before) :]
  assert [e.id for e in added][-1] == result.event_id
  assert not {e.id for e in added} & {e.id for e in before}
  (descriptor,) = [
      read_mcp_widget(w) for w in added[-1].actions.render_ui_widgets
  ]
  old = old_view.descriptor
  assert descriptor.correlation.function_call_id == result.function_call_id
  assert descriptor.correlation.invocation_id == result.invocation_id
  assert descriptor.sealed_result_ref is not None
  assert old.sealed_result_ref is not None
  assert (
      descriptor.sealed_result_ref.record_id != old.sealed_result_ref.record_id
  )
  assert new_view.descriptor == descriptor
  assert new_active and not old_view.grant.active
  assert new_view.grant.view_id != old_view.grant.view_id
