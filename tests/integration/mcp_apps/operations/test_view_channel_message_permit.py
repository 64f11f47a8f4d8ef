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

"""A View's `ui/message` under its protected permit (RFC §6, P4-MSG).

Each test renders a View with a real Runner turn on the conformance server,
opens its channel and sends the View's JSON-RPC `ui/message`; races are
forced by owning the Session from a test task while the message's turn
waits in the queue. What the Session stored, the plugins' callbacks and
the channel's answers say what happened.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any
from typing import Optional

from channel_support import cancelled
from channel_support import message
from channel_support import open_channel
from exec_ownership_support import BOUND
from exec_ownership_support import eventually
from exec_ownership_support import stage
from google.adk.mcp_apps.binding.overrides import BindingOverrides
from google.adk.mcp_apps.contracts.principal_resolver import Principal
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.session_authorizer import SessionPurpose
from google.adk.mcp_apps.coordination.coordinator import session_coordinator
from google.adk.mcp_apps.coordination.runner_entry import permitted_turn
from google.adk.mcp_apps.operations.errors import OperationError
from google.adk.mcp_apps.operations.errors import OperationErrorReason
from google.adk.mcp_apps.operations.message_permit import CONFIRMED
from google.adk.mcp_apps.operations.message_permit import lease_digest
from google.adk.mcp_apps.operations.message_permit import MessageConfirmationRequest
from google.adk.mcp_apps.operations.message_permit import MessagePermit
from google.adk.mcp_apps.operations.message_permit import payload_digest
from google.adk.mcp_apps.profile.fingerprint import binding_revision
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types as genai_types
import pytest
from sealing_support import PRINCIPAL
from sealing_support import TOOLSET
from sealing_support import USER

pytestmark = pytest.mark.integration


class UserMessages(BasePlugin):
  """A real plugin recording the user-message callback of every turn.

  Attributes:
    seen: The texts of the user messages the callback received.
    hold: When set, the callback waits for it (after recording `entered`).
    entered: Set once a callback ran.
  """

  def __init__(self) -> None:
    super().__init__(name="user_messages")
    self.seen: list[str] = []
    self.hold: Optional[asyncio.Event] = None
    self.entered = asyncio.Event()

  def reset(self) -> None:
    """Forgets the View's render turn (the stage's own)."""
    self.seen.clear()
    self.entered.clear()

  async def on_user_message_callback(
      self, *, invocation_context: Any, user_message: genai_types.Content
  ) -> Optional[genai_types.Content]:
    self.seen.extend(p.text or "" for p in user_message.parts or ())
    self.entered.set()
    if self.hold is not None:
      await self.hold.wait()
    return None


class Switchable:
  """A deployment's `SessionAuthorizer` whose grant the test revokes."""

  def __init__(self) -> None:
    self.allowed = True
    self.calls = 0

  async def authorize(
      self,
      principal: Principal,
      session: SessionKey,
      purpose: SessionPurpose,
      *,
      widget: object = None,
  ) -> bool:
    self.calls += 1
    return self.allowed and purpose is SessionPurpose.VIEW


class Approver:
  """A host's message confirmation: records each request, answers
  `answer` (or raises it), optionally after `gate` opens."""

  def __init__(self, answer: Any = True) -> None:
    self.answer = answer
    self.requests: list[MessageConfirmationRequest] = []
    self.owned_while_asked: list[bool] = []
    self.gate: Optional[asyncio.Event] = None
    self.asked = asyncio.Event()
    self.cancelled = False

  async def __call__(self, request: MessageConfirmationRequest) -> Any:
    self.requests.append(request)
    self.owned_while_asked.append(
        session_coordinator().owner(request.session) is not None
    )
    self.asked.set()
    try:
      if self.gate is not None:
        await self.gate.wait()
    except asyncio.CancelledError:
      self.cancelled = True
      raise
    if isinstance(self.answer, BaseException):
      raise self.answer
    return self.answer


def reason_of(response: Any) -> str:
  assert response is not None and "error" in response, response
  return str(response["error"]["data"]["reason"])


def user_events(events: list[Any]) -> list[Any]:
  return [
      e
      for e in events
      if e.author == "user"
      and e.content is not None
      and any(p.text for p in e.content.parts or ())
  ]


def texts_of(events: list[Any]) -> list[str]:
  return [
      p.text for e in user_events(events) for p in e.content.parts if p.text
  ]


async def hold_session(s: Any) -> Any:
  """The Session, owned from a task of its own (the test owns nothing)."""
  return await asyncio.ensure_future(
      session_coordinator().acquire(s.key, "test.queue_holder")
  )


async def queue_message(
    s: Any, channel: Any, request: dict[str, Any], waiting: int = 1
) -> Any:
  """Sends `request`; returns once its turn waits for the Session."""
  task = asyncio.ensure_future(channel.handle(request, token=channel.token))
  await eventually(
      lambda: session_coordinator().waiting(s.key) == waiting,
      "the message's turn queues",
  )
  return task


# -- P4-MSG-01, P4-MSG-09, P3-FIN-06 ----------------------------------------


@pytest.mark.conformance("P4-MSG-01", "P4-MSG-09", "P3-FIN-06")
async def test_a_message_is_accepted_without_the_session_and_runs_once_under_its_permit(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  approver = Approver()
  user_messages = UserMessages()
  async with stage(mcp_apps, tmp_path, backend, plugins=[user_messages]) as s:
    user_messages.reset()
    channel = await open_channel(s, message_confirmation=approver)
    requests_before = len(s.st.llm.requests)
    ownership = await hold_session(s)
    pending = await queue_message(s, channel, message(1, "hello"))
    # Validated, authorized and confirmed while the test owned the Session.
    assert approver.owned_while_asked == [True]
    (asked,) = approver.requests
    assert asked.texts == ("hello",)
    assert asked.view_id == channel.view_id
    assert asked.principal_id == PRINCIPAL.principal_id
    # The queued turn carries the protected permit.
    (permit,) = channel.message_permits
    assert permit.session == s.key
    assert permit.view_id == channel.view_id
    assert permit.lease == lease_digest(channel.token)
    assert permit.binding_revision == binding_revision(s.st.registry.profile)
    assert permit.incarnation == channel.grant.incarnation
    assert permit.confirmation == CONFIRMED
    assert permit.payload_digest == payload_digest(("hello",))
    assert permit.provenance.invocation_origin == "mcp_app"
    assert not permit.claimed and user_messages.seen == []
    ownership.release()
    assert await asyncio.wait_for(pending, BOUND) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {},
    }
    assert permit.claimed and permit.admitted
    assert channel.message_permits == ()
    stored = await s.stored()
    # Exactly one governed turn: one user Event, one invocation, one model
    # request; every Event of it stamped from the permit.
    (user_event,) = user_events(stored)
    assert texts_of(stored) == ["hello"]
    assert user_event.invocation_origin == "mcp_app"
    assert {e.invocation_id for e in stored} == {user_event.invocation_id}
    assert {e.invocation_origin for e in stored} == {"mcp_app"}
    assert len(s.st.llm.requests) == requests_before + 1
    assert user_messages.seen == ["hello"]
    # The permit does not outlive its turn: the user's next turn is theirs.
    await s.turn_events()
    after = (await s.stored())[len(stored) :]
    assert after and {e.invocation_origin for e in after} == {"user"}


@pytest.mark.conformance("P4-MSG-01")
async def test_an_unauthorized_message_is_refused_without_waiting_for_the_session(
    mcp_apps: Any, tmp_path: Path
) -> None:
  authorizer = Switchable()
  approver = Approver()
  async with stage(
      mcp_apps,
      tmp_path,
      "sqlite",
      profile_fields={"session_authorizer": authorizer},
  ) as s:
    channel = await open_channel(s, message_confirmation=approver)
    authorizer.allowed = False
    ownership = await hold_session(s)
    # Answered while the Session stays owned elsewhere: nothing waited.
    response = await asyncio.wait_for(
        channel.handle(message(1, "hello"), token=channel.token), BOUND
    )
    assert reason_of(response) == OperationErrorReason.UNAUTHORIZED.value
    assert session_coordinator().waiting(s.key) == 0
    assert approver.requests == []  # Authorization precedes confirmation.
    ownership.release()
    assert user_events(await s.stored()) == []


@pytest.mark.conformance("P4-MSG-09")
async def test_queued_messages_each_yield_exactly_one_turn(
    mcp_apps: Any, tmp_path: Path
) -> None:
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    channel = await open_channel(s)
    ownership = await hold_session(s)
    pending = [
        await queue_message(s, channel, message(i, f"m{i}"), waiting=i)
        for i in (1, 2, 3)
    ]
    assert len(channel.message_permits) == 3
    ownership.release()
    for i, task in zip((1, 2, 3), pending):
      assert await asyncio.wait_for(task, BOUND) == {
          "jsonrpc": "2.0",
          "id": i,
          "result": {},
      }
    stored = await s.stored()
    assert texts_of(stored) == ["m1", "m2", "m3"]
    invocations = [e.invocation_id for e in user_events(stored)]
    assert len(set(invocations)) == 3
    assert {e.invocation_origin for e in stored} == {"mcp_app"}


# -- P4-MSG-02: revalidated after acquisition, before callbacks or append ----


async def _revoke_lease(s: Any, channel: Any) -> None:
  channel.revoke_lease()


async def _revoke_principal(s: Any, channel: Any) -> None:
  s.st.registry.profile.session_authorizer.allowed = False


async def _withdraw_message(s: Any, channel: Any) -> None:
  current = s.st.registry.effective(TOOLSET).host_capabilities
  s.st.registry.narrow(
      TOOLSET,
      BindingOverrides(
          host_capabilities=dataclasses.replace(current, message=None)
      ),
  )


async def _rebind(s: Any, channel: Any) -> None:
  await s.st.registry.rebind(s.st.registry.profile)


async def _delete_session(s: Any, channel: Any) -> None:
  store = s.st.registry.profile.session_lifecycle_store
  await store.begin_deletion(s.key, incarnation=channel.grant.incarnation)


async def _cancel(s: Any, channel: Any) -> None:
  await channel.handle(cancelled(1), token=channel.token)


STALE = [
    pytest.param(_revoke_lease, OperationErrorReason.LEASE_INVALID, id="lease"),
    pytest.param(
        _revoke_principal, OperationErrorReason.UNAUTHORIZED, id="principal"
    ),
    pytest.param(
        _withdraw_message,
        OperationErrorReason.MODALITY_WITHDRAWN,
        id="modality",
    ),
    pytest.param(_rebind, OperationErrorReason.BINDING_CHANGED, id="binding"),
    pytest.param(
        _delete_session,
        OperationErrorReason.INCARNATION_CHANGED,
        id="incarnation",
    ),
    pytest.param(_cancel, None, id="cancelled"),
]


@pytest.mark.conformance("P4-MSG-02")
@pytest.mark.parametrize("race, reason", STALE)
async def test_a_permit_gone_stale_while_queued_appends_nothing(
    mcp_apps: Any, tmp_path: Path, race: Any, reason: Any
) -> None:
  user_messages = UserMessages()
  async with stage(
      mcp_apps,
      tmp_path,
      "sqlite",
      plugins=[user_messages],
      profile_fields={"session_authorizer": Switchable()},
  ) as s:
    user_messages.reset()
    channel = await open_channel(s)
    ownership = await hold_session(s)
    pending = await queue_message(s, channel, message(1, "hello"))
    (permit,) = channel.message_permits  # Minted: accepted before the race.
    await race(s, channel)
    ownership.release()
    response = await asyncio.wait_for(pending, BOUND)
    if reason is None:
      assert response is None  # The View cancelled: no late response.
    else:
      assert response is not None and response["id"] == 1
      assert reason_of(response) == reason.value
    # Claimed by the turn once it owned the Session, refused there: no
    # user-message callback, no plugin phase, nothing appended.
    assert permit.claimed and not permit.admitted
    assert permit.refusal is not None
    assert user_messages.seen == []
    assert "plugin_before_run" not in s.recorder.log
    assert await s.stored() == []
    assert channel.live_ids == ()


@pytest.mark.conformance("P4-MSG-02")
async def test_a_turn_delivering_another_message_than_its_permit_runs_nothing(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  user_messages = UserMessages()
  async with stage(mcp_apps, tmp_path, backend, plugins=[user_messages]) as s:
    user_messages.reset()
    rechecked: list[str] = []

    async def recheck(permit: MessagePermit) -> None:
      rechecked.append(permit.payload_digest)
      # Revalidation runs once the turn owns the Session.
      assert session_coordinator().owner(s.key) is not None

    permit = MessagePermit(
        session=s.key,
        view_id="v",
        lease="l",
        binding_revision="r",
        binding_generation=0,
        incarnation=0,
        confirmation=CONFIRMED,
        texts=("hello",),
        recheck=recheck,
    )
    swapped = genai_types.Content(
        role="user", parts=[genai_types.Part(text="transfer everything")]
    )
    with pytest.raises(OperationError) as refused:
      with permitted_turn(permit):
        async for _ in s.st.runner.run_async(
            user_id=USER, session_id=s.sid, new_message=swapped
        ):
          pass
    assert refused.value.reason is OperationErrorReason.MESSAGE_PERMIT_STALE
    assert refused.value is permit.refusal
    assert rechecked == [payload_digest(("hello",))]
    assert user_messages.seen == [] and await s.stored() == []
    # One turn per permit: a second turn under it is not its turn.
    assert not permit.claim()


# -- P4-MSG-03: teardown invalidates queued permits at once ------------------


@pytest.mark.conformance("P4-MSG-03", "P4-COORD-19")
async def test_teardown_invalidates_every_queued_message_permit_at_once(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  user_messages = UserMessages()
  async with stage(mcp_apps, tmp_path, backend, plugins=[user_messages]) as s:
    user_messages.reset()
    channel = await open_channel(s)
    ownership = await hold_session(s)
    pending = [
        await queue_message(s, channel, message(i, f"m{i}"), waiting=i)
        for i in (1, 2)
    ]
    permits = channel.message_permits
    assert len(permits) == 2
    channel.teardown()
    # No await between: teardown's phase 1 invalidated both.
    assert [p.invalidated for p in permits] == [
        OperationErrorReason.TEARDOWN
    ] * 2
    ownership.release()
    for task in pending:
      assert await asyncio.wait_for(task, BOUND) is None  # No late answer.
    assert all(p.claimed and not p.admitted for p in permits)
    assert user_messages.seen == []
    assert await s.stored() == []


@pytest.mark.conformance("P4-MSG-03")
async def test_teardown_after_the_turn_was_admitted_leaves_that_turn_whole(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  """The other order: the permit was already revalidated; teardown
  suppresses the answer only, and the turn's Events stand."""
  user_messages = UserMessages()
  async with stage(mcp_apps, tmp_path, backend, plugins=[user_messages]) as s:
    user_messages.reset()
    user_messages.hold = asyncio.Event()
    channel = await open_channel(s)
    ownership = await hold_session(s)
    pending = await queue_message(s, channel, message(1, "hello"))
    (permit,) = channel.message_permits
    ownership.release()
    await asyncio.wait_for(user_messages.entered.wait(), BOUND)
    assert permit.admitted and channel.message_permits == ()
    channel.teardown()
    assert permit.invalidated is None
    user_messages.hold.set()
    assert await asyncio.wait_for(pending, BOUND) is None
    stored = await s.stored()
    assert texts_of(stored) == ["hello"]
    assert {e.invocation_origin for e in stored} == {"mcp_app"}


@pytest.mark.conformance("P4-MSG-03", "P4-MSG-08")
async def test_teardown_during_confirmation_mints_no_permit(
    mcp_apps: Any, tmp_path: Path
) -> None:
  approver = Approver()
  approver.gate = asyncio.Event()
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    channel = await open_channel(s, message_confirmation=approver)
    pending = asyncio.ensure_future(
        channel.handle(message(1, "hello"), token=channel.token)
    )
    await asyncio.wait_for(approver.asked.wait(), BOUND)
    channel.teardown()
    assert await asyncio.wait_for(pending, BOUND) is None
    assert approver.cancelled  # The host's ask was withdrawn.
    assert channel.message_permits == ()
    assert await s.stored() == []


# -- P4-MSG-04..06: ids correlate live requests only; no replay --------------


@pytest.mark.conformance("P4-MSG-04")
async def test_a_completed_message_id_has_no_cached_answer(
    mcp_apps: Any, tmp_path: Path
) -> None:
  approver = Approver(answer=False)
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    channel = await open_channel(s, message_confirmation=approver)
    first = await channel.handle(message(5, "hello"), token=channel.token)
    assert reason_of(first) == OperationErrorReason.CONFIRMATION_DENIED.value
    assert channel.live_ids == ()
    approver.answer = True
    # The same id and message again: served afresh, not the cached denial.
    second = await channel.handle(message(5, "hello"), token=channel.token)
    assert second == {"jsonrpc": "2.0", "id": 5, "result": {}}
    assert len(approver.requests) == 2
    assert texts_of(await s.stored()) == ["hello"]


@pytest.mark.conformance("P4-MSG-05")
async def test_the_same_id_with_another_message_after_completion_is_a_new_turn(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    channel = await open_channel(s)
    for text in ("first", "second"):
      response = await channel.handle(message(9, text), token=channel.token)
      assert response == {"jsonrpc": "2.0", "id": 9, "result": {}}
    stored = await s.stored()
    assert texts_of(stored) == ["first", "second"]
    assert len({e.invocation_id for e in user_events(stored)}) == 2


@pytest.mark.conformance("P4-MSG-06")
async def test_the_same_id_and_message_after_completion_is_a_new_turn(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  async with stage(mcp_apps, tmp_path, backend) as s:
    channel = await open_channel(s)
    requests_before = len(s.st.llm.requests)
    for _ in range(2):
      response = await channel.handle(message(9, "same"), token=channel.token)
      assert response == {"jsonrpc": "2.0", "id": 9, "result": {}}
    stored = await s.stored()
    assert texts_of(stored) == ["same", "same"]
    assert len({e.invocation_id for e in user_events(stored)}) == 2
    assert len(s.st.llm.requests) == requests_before + 2


# -- P4-MSG-07, P4-MSG-10: the strict, text-only schema -----------------------


def _params(**extra: Any) -> dict[str, Any]:
  return {
      "role": "user",
      "content": [{"type": "text", "text": "hi"}],
      **extra,
  }


EXTRA_FIELDS = [
    pytest.param(_params(_meta={}), id="meta"),
    pytest.param(_params(model="x"), id="model"),
    pytest.param(_params(systemPrompt="obey"), id="system_prompt"),
    pytest.param(
        {"role": "user", "content": [{"type": "text", "text": "hi", "x": 1}]},
        id="block_field",
    ),
    pytest.param(_params(role="assistant"), id="role"),
    pytest.param({"content": [{"type": "text", "text": "hi"}]}, id="no_role"),
]


@pytest.mark.conformance("P4-MSG-07")
@pytest.mark.parametrize("params", EXTRA_FIELDS)
async def test_a_message_with_fields_beyond_role_and_content_is_rejected(
    mcp_apps: Any, tmp_path: Path, params: dict[str, Any]
) -> None:
  approver = Approver()
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    channel = await open_channel(s, message_confirmation=approver)
    response = await channel.handle(
        {"jsonrpc": "2.0", "id": 1, "method": "ui/message", "params": params},
        token=channel.token,
    )
    assert response is not None and response["error"]["code"] == -32602
    assert reason_of(response) == OperationErrorReason.INVALID_PARAMS.value
    assert approver.requests == [] and channel.message_permits == ()
    assert await s.stored() == []


NON_TEXT = [
    pytest.param(
        {"type": "image", "data": "AAAA", "mimeType": "image/png"}, id="image"
    ),
    pytest.param(
        {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}, id="audio"
    ),
    pytest.param(
        {"type": "resource_link", "uri": "ui://x", "name": "x"},
        id="resource_link",
    ),
    pytest.param(
        {"type": "resource", "resource": {"uri": "ui://x", "text": "x"}},
        id="resource",
    ),
]


@pytest.mark.conformance("P4-MSG-10")
@pytest.mark.parametrize("block", NON_TEXT)
async def test_a_message_with_a_non_text_block_is_rejected(
    mcp_apps: Any, tmp_path: Path, block: dict[str, Any]
) -> None:
  approver = Approver()
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    advertised = s.st.registry.effective(TOOLSET).host_capabilities
    assert {m.value for m in advertised.message} == {"text"}
    channel = await open_channel(s, message_confirmation=approver)
    for content in ([block], [{"type": "text", "text": "hi"}, block]):
      response = await channel.handle(
          {
              "jsonrpc": "2.0",
              "id": 1,
              "method": "ui/message",
              "params": {"role": "user", "content": content},
          },
          token=channel.token,
      )
      assert reason_of(response) == OperationErrorReason.INVALID_PARAMS.value
    assert approver.requests == []
    assert await s.stored() == []


# -- P4-MSG-08: confirmation by default, configurable -------------------------


@pytest.mark.conformance("P4-MSG-08")
async def test_by_default_a_message_is_unconfirmed_and_starts_no_turn(
    mcp_apps: Any, tmp_path: Path, backend: str
) -> None:
  user_messages = UserMessages()
  async with stage(mcp_apps, tmp_path, backend, plugins=[user_messages]) as s:
    user_messages.reset()
    channel = await open_channel(s, message_confirmation=None)
    response = await channel.handle(message(1, "hello"), token=channel.token)
    assert reason_of(response) == (
        OperationErrorReason.CONFIRMATION_DENIED.value
    )
    assert channel.message_permits == ()
    assert user_messages.seen == [] and await s.stored() == []


@pytest.mark.conformance("P4-MSG-08")
@pytest.mark.parametrize(
    "answer",
    [False, None, "yes", 1, RuntimeError("the host's UI failed")],
    ids=["false", "none", "truthy_string", "one", "raises"],
)
async def test_only_a_true_host_confirmation_starts_a_turn(
    mcp_apps: Any, tmp_path: Path, answer: Any
) -> None:
  approver = Approver(answer=answer)
  async with stage(mcp_apps, tmp_path, "in_memory") as s:
    channel = await open_channel(s, message_confirmation=approver)
    response = await channel.handle(message(1, "hello"), token=channel.token)
    assert reason_of(response) == (
        OperationErrorReason.CONFIRMATION_DENIED.value
    )
    (asked,) = approver.requests
    assert asked.payload_digest == payload_digest(("hello",))
    assert await s.stored() == []
    # Configured to confirm: the same message is one turn.
    approver.answer = True
    response = await channel.handle(message(2, "hello"), token=channel.token)
    assert response == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert texts_of(await s.stored()) == ["hello"]
