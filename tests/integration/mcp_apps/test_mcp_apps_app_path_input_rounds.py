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

"""App paths fail input-request rounds closed (RFC §4 item 4, P3-MCB-11..14).

A View's direct app call (`call_app_tool`), the host's own reads and calls
(the proxy's host path) and bootstrap's read run on the View's app-safe
generation, which advertised the Apps extension and no input capability.
A server round asking it for sampling, elicitation or roots fails closed
with a typed error (`InputRequestRefusedError`, bootstrap's `BootstrapError`
at READ), and neither a user callback (the toolset here HAS sampling and
elicitation callbacks; ADK 2.13 has no roots callback) nor the SDK's
no-callback default ever runs: the server refuses before the round is sent
(handshake era and 2026-07-28 tool calls: the SDK's
`MISSING_REQUIRED_CLIENT_CAPABILITY`) or the host refuses the
`InputRequiredResult` it received (2026-07-28 reads).

Where a server can ask: a tool call can, in both eras (`single_round_tools`;
at 2026-07-28 also by returning an `InputRequiredResult` itself,
`asking_view`); a read can only at 2026-07-28 (`asking_read`: in the
handshake era the same read serves the View in one round, shown here).
The model-path counterpart
is P2-AFF-02..04 (`test_mcp_apps_connection_affinity.py`), bootstrap's
state-only rounds P2-BOOT-06 (`test_mcp_apps_bootstrap_rounds.py`).

P3-MCB-14: neither the SDK `logging_callback` nor the general message
handler can be configured in this ADK version (`McpToolset`,
`McpToolsetSpec` and `McpToolsetConfig` refuse them at construction), and a
log line on an app-safe connection reaches the SDK's own defaults.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
import contextlib
import dataclasses
import json
from pathlib import Path
from typing import Any

from binding_support import conformance_connection
from binding_support import record_sdk_defaults
from binding_support import Recorder
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.mcp_apps.affinity.errors import ConnectionAffinityError
from google.adk.mcp_apps.affinity.errors import InputRequestKind
from google.adk.mcp_apps.affinity.errors import InputRequestRefusedError
from google.adk.mcp_apps.affinity.generations import ConnectionGenerationState
from google.adk.mcp_apps.affinity.generations import GenerationHold
from google.adk.mcp_apps.affinity.generations import HoldKind
from google.adk.mcp_apps.affinity.routing import call_app_tool
from google.adk.mcp_apps.binding.spec import McpToolsetSpec
from google.adk.mcp_apps.binding.spec import ROOTS_SUPPORTED
from google.adk.mcp_apps.bootstrap.render import bootstrap_render
from google.adk.mcp_apps.bootstrap.render import BootstrapError
from google.adk.mcp_apps.bootstrap.render import BootstrapStep
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.tools.mcp_tool import McpToolset
from google.adk.tools.mcp_tool import StreamableHTTPConnectionParams
from google.adk.tools.mcp_tool.mcp_toolset import McpToolsetConfig
from mcp import types as mcp_types
import mcp.client.session as sdk_session
from mcp_apps_conformance_server import names
import pydantic
import pytest
from sealing_support import bound_stack
from sealing_support import BoundStack
from sealing_support import PRINCIPAL
from sealing_support import TOOLSET
from sealing_support import widget_event

pytestmark = pytest.mark.integration

MODERN_FLAG = "ADK_ENABLE_MCP_MODERN_PROTOCOL"
APPS_AD = {names.EXTENSION_ID: {"mimeTypes": [names.APP_MIME_TYPE]}}
INPUT_CAPABILITIES = ("sampling", "elicitation", "roots")
CASES = ("P3-MCB-11", "P3-MCB-12", "P3-MCB-13")
KINDS = {
    "roots": "P3-MCB-11",
    "sampling": "P3-MCB-12",
    "elicitation": "P3-MCB-13",
}
KIND_IDS = [f"{case}-{kind}" for kind, case in KINDS.items()]
TRANSPORTS = ["stdio", "legacy_http", "modern_http"]
READ = "resources/read"
UNCONFIGURABLE = ("logging_callback", "message_handler", "list_roots_callback")


@dataclasses.dataclass
class AppPath:
  """A bound stack over a logged conformance server, with user callbacks."""

  transport: str
  stack: BoundStack
  log: Path
  recorder: Recorder

  @property
  def legacy(self) -> bool:
    return self.transport != "modern_http"

  def entries(self) -> list[dict[str, Any]]:
    if not self.log.exists():
      return []
    return [json.loads(line) for line in self.log.read_text().splitlines()]

  def calls(self, tool: str) -> list[dict[str, Any]]:
    return [
        e
        for e in self.entries()
        if e["method"] == "tools/call" and e.get("name") == tool
    ]

  async def view(self) -> tuple[str, str, Any]:
    """A model turn rendering `open_view`: Session id, call id, event."""
    sid = await self.stack.new_session()
    event = widget_event(await self.stack.turn(sid, (names.OPEN_VIEW, {})))
    (widget,) = event.actions.render_ui_widgets
    return sid, widget.id, event

  async def hold(self) -> tuple[str, GenerationHold]:
    """A rendered View's hold (taken from its reservation, as the host)."""
    sid, call_id, _ = await self.view()
    hold = self.stack.registry.render_reservations.take(
        TOOLSET, self.stack.key(sid), call_id
    )
    assert hold is not None
    return sid, hold

  async def context(self, sid: str) -> ReadonlyContext:
    """A read-only context of the Session, as the host passes one."""
    stack = self.stack
    session = await stack.session_service.get_session(
        app_name=stack.key(sid).app_name,
        user_id=stack.key(sid).user_id,
        session_id=sid,
    )
    return ReadonlyContext(
        InvocationContext(
            session_service=stack.session_service,
            invocation_id="host",
            agent=stack.runner.agent,
            session=session,
        )
    )


@contextlib.asynccontextmanager
async def _app_path(
    transport: str,
    tmp_path: Path,
    mcp_apps: Any,
    start_server: Any,
    monkeypatch: Any,
    **options: Any,
) -> AsyncIterator[AppPath]:
  """A bound stack (toolset with sampling and elicitation callbacks)."""
  if transport == "modern_http":
    monkeypatch.setenv(MODERN_FLAG, "1")
  else:
    monkeypatch.delenv(MODERN_FLAG, raising=False)
  log = tmp_path / "requests.jsonl"
  params = conformance_connection(
      transport,
      {
          "single_round_tools": True,
          "asking_read": True,
          "request_log_file": str(log),
          "request_log_connections": True,
          **options,
      },
      mcp_apps,
      start_server,
  )
  recorder = Recorder()
  async with bound_stack(
      params,
      session_service=InMemorySessionService(),
      **recorder.spec_kwargs(),
  ) as stack:
    yield AppPath(transport, stack, log, recorder)


async def _assert_app_safe(hold: GenerationHold) -> dict[str, Any]:
  """The held generation is live and advertised no input capability."""
  assert hold.generation.state is ConnectionGenerationState.LIVE
  result = await hold.call_tool(names.WHOAMI, {})
  who = result.structured_content
  assert isinstance(who, dict), result
  advertised = (
      who["handshake"]["capabilities"]
      if who["era"] == "legacy"
      else who["requestEnvelope"]["clientCapabilities"]
  )
  assert advertised == {"extensions": APPS_AD}
  assert not set(INPUT_CAPABILITIES) & set(who["effectiveCapabilities"])
  return who


def _assert_typed(
    error: InputRequestRefusedError, kind: str, hold: GenerationHold
) -> None:
  assert isinstance(error, ConnectionAffinityError)
  assert error.kinds == {InputRequestKind(kind)}
  assert error.generation_id == hold.generation_id
  assert kind in str(error)


# --- P3-MCB-11 .. 13: a View's direct app call -------------------------------


@pytest.mark.conformance(*CASES)
@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("kind", list(KINDS), ids=KIND_IDS)
async def test_direct_app_call_input_round_fails_closed_typed(
    transport: str,
    kind: str,
    tmp_path: Path,
    mcp_apps: Any,
    start_server: Any,
    monkeypatch: Any,
) -> None:
  """A View's app call of a tool needing one input round fails closed, typed.

  The View calls `mrtr_{sample,elicit,roots}_view` through `call_app_tool`
  on its hold. The server refuses the round its capability was not
  declared for, and the host raises `InputRequestRefusedError` naming that
  round and the View's generation (not the SDK's bare error). The call
  reached the server exactly once, on the generation's connection (legacy:
  by connection id); the generation stays live for the View's next call;
  it advertised the Apps extension and no input capability; no configured
  callback and no SDK default answered anything.
  """
  defaults = record_sdk_defaults(monkeypatch)
  tool = names.SINGLE_ROUND_VIEW_TOOLS[kind]
  async with _app_path(
      transport, tmp_path, mcp_apps, start_server, monkeypatch
  ) as path:
    _, hold = await path.hold()
    server_id = path.stack.registry.lookup(TOOLSET).spec.server_id
    try:
      with pytest.raises(InputRequestRefusedError) as info:
        await call_app_tool(
            hold,
            tool,
            {},
            view_server_id=server_id,
            target_server_id=server_id,
        )
      _assert_typed(info.value, kind, hold)
      assert info.value.operation == "tools/call"
      who = await _assert_app_safe(hold)
    finally:
      hold.release()
    (call,) = path.calls(tool)
    if path.legacy:
      assert call["connectionId"] == who["connectionId"]
  assert path.recorder.calls == []
  assert defaults == []


@pytest.mark.conformance(*CASES)
@pytest.mark.parametrize("kind", list(KINDS), ids=KIND_IDS)
async def test_direct_app_call_input_required_result_fails_closed_typed(
    kind: str,
    tmp_path: Path,
    mcp_apps: Any,
    start_server: Any,
    monkeypatch: Any,
) -> None:
  """2026-07-28: a tool answering `InputRequiredResult` itself fails typed.

  `asking_view` returns an `InputRequiredResult` with one request of
  `kind` without the SDK's capability check (no `Resolve`). The View's
  app call receives it, answers nothing and raises
  `InputRequestRefusedError` after exactly one `tools/call`; no callback
  or SDK default ran and the generation stays live.
  """
  defaults = record_sdk_defaults(monkeypatch)
  async with _app_path(
      "modern_http", tmp_path, mcp_apps, start_server, monkeypatch
  ) as path:
    _, hold = await path.hold()
    server_id = path.stack.registry.lookup(TOOLSET).spec.server_id
    try:
      with pytest.raises(InputRequestRefusedError) as info:
        await call_app_tool(
            hold,
            names.ASKING_TOOL,
            {"kind": kind},
            view_server_id=server_id,
            target_server_id=server_id,
        )
      _assert_typed(info.value, kind, hold)
      await _assert_app_safe(hold)
    finally:
      hold.release()
    assert len(path.calls(names.ASKING_TOOL)) == 1
  assert path.recorder.calls == []
  assert defaults == []


# --- P3-MCB-11 .. 13: the host's own reads and calls -------------------------


@pytest.mark.conformance(*CASES)
@pytest.mark.parametrize("kind", list(KINDS), ids=KIND_IDS)
async def test_host_read_asking_for_input_fails_closed_typed(
    kind: str,
    tmp_path: Path,
    mcp_apps: Any,
    start_server: Any,
    monkeypatch: Any,
) -> None:
  """2026-07-28: a host read whose round asks for input fails closed, typed.

  The host reads `ui://conformance/asking/<kind>...` for a Session through
  the proxy (`read_resource_by_uri`, host path: the Session's app-safe
  generation). The server answers with an `InputRequiredResult` carrying
  one sampling, elicitation or roots request; the host gathers nothing and
  raises `InputRequestRefusedError` for that round after exactly one
  `resources/read`. No callback or SDK default ran; the generation stays
  live and advertised no input capability.
  """
  defaults = record_sdk_defaults(monkeypatch)
  async with _app_path(
      "modern_http", tmp_path, mcp_apps, start_server, monkeypatch
  ) as path:
    sid, hold = await path.hold()
    proxy = path.stack.registry.lookup(TOOLSET)
    try:
      before = len(path.entries())
      with pytest.raises(InputRequestRefusedError) as info:
        await proxy.read_resource_by_uri(
            names.ASKING_URIS[kind], await path.context(sid)
        )
      _assert_typed(info.value, kind, hold)
      assert [e["method"] for e in path.entries()[before:]] == [READ]
      await _assert_app_safe(hold)
    finally:
      hold.release()
  assert path.recorder.calls == []
  assert defaults == []


@pytest.mark.conformance(*CASES)
async def test_host_read_state_only_round_is_not_an_input_refusal(
    tmp_path: Path,
    mcp_apps: Any,
    start_server: Any,
    monkeypatch: Any,
) -> None:
  """2026-07-28: a state-only round is not an input round, and not driven.

  The host's read of the interactive template gets a state-only
  `InputRequiredResult` (no input requests). That is not refused as input
  (no `InputRequestRefusedError`); the host read does not drive further
  rounds (bootstrap does, P2-BOOT-06) and fails after that one
  `resources/read`; the generation stays live.
  """
  async with _app_path(
      "modern_http", tmp_path, mcp_apps, start_server, monkeypatch
  ) as path:
    sid, hold = await path.hold()
    proxy = path.stack.registry.lookup(TOOLSET)
    try:
      before = len(path.entries())
      with pytest.raises(RuntimeError, match="state-only rounds") as info:
        await proxy.read_resource_by_uri(
            names.INTERACTIVE_URI, await path.context(sid)
        )
      assert not isinstance(info.value, InputRequestRefusedError)
      assert [e["method"] for e in path.entries()[before:]] == [READ]
      await _assert_app_safe(hold)
    finally:
      hold.release()


@pytest.mark.conformance(*CASES)
@pytest.mark.parametrize("transport", ["stdio", "legacy_http"])
async def test_handshake_era_host_read_cannot_ask(
    transport: str,
    tmp_path: Path,
    mcp_apps: Any,
    start_server: Any,
    monkeypatch: Any,
) -> None:
  """Handshake era: the same asking reads serve the View in one round.

  Where a read cannot ask there is nothing to refuse: each asking URI is
  read by the host in one `resources/read` and returns the View; no
  callback or SDK default runs.
  """
  defaults = record_sdk_defaults(monkeypatch)
  async with _app_path(
      transport, tmp_path, mcp_apps, start_server, monkeypatch
  ) as path:
    sid, hold = await path.hold()
    proxy = path.stack.registry.lookup(TOOLSET)
    try:
      for uri in names.ASKING_URIS.values():
        before = len(path.entries())
        (item,) = await proxy.read_resource_by_uri(uri, await path.context(sid))
        assert "served after 1 round(s)" in item.text
        assert [e["method"] for e in path.entries()[before:]] == [READ]
    finally:
      hold.release()
  assert path.recorder.calls == []
  assert defaults == []


@pytest.mark.conformance(*CASES)
@pytest.mark.parametrize("kind", list(KINDS), ids=KIND_IDS)
async def test_host_call_input_round_fails_closed_typed(
    kind: str,
    tmp_path: Path,
    mcp_apps: Any,
    start_server: Any,
    monkeypatch: Any,
) -> None:
  """The host's own tool call (proxy host path) fails an input round typed.

  Over stateful HTTP the host calls `mrtr_<kind>_view` for a Session
  (`HostBoundMcpToolset.call_tool`): it runs on the Session's app-safe
  generation, the server refuses the undeclared round, and the host raises
  `InputRequestRefusedError`; nothing answered a round.
  """
  defaults = record_sdk_defaults(monkeypatch)
  tool = names.SINGLE_ROUND_VIEW_TOOLS[kind]
  async with _app_path(
      "legacy_http", tmp_path, mcp_apps, start_server, monkeypatch
  ) as path:
    sid, hold = await path.hold()
    proxy = path.stack.registry.lookup(TOOLSET)
    try:
      with pytest.raises(InputRequestRefusedError) as info:
        await proxy.call_tool(tool, {}, await path.context(sid))
      _assert_typed(info.value, kind, hold)
      who = await _assert_app_safe(hold)
    finally:
      hold.release()
    (call,) = path.calls(tool)
    assert call["connectionId"] == who["connectionId"]
  assert path.recorder.calls == []
  assert defaults == []


# --- P3-MCB-11 .. 13: bootstrap's read ---------------------------------------


@pytest.mark.conformance(*CASES)
@pytest.mark.parametrize("kind", list(KINDS), ids=KIND_IDS)
async def test_bootstrap_read_asking_for_input_fails_closed_typed(
    kind: str,
    tmp_path: Path,
    mcp_apps: Any,
    start_server: Any,
    monkeypatch: Any,
) -> None:
  """2026-07-28: bootstrap's read asking for input fails closed, typed.

  The View's bootstrap reads its resource on the reserved generation; that
  read is redirected to the asking URI of `kind` (as P2-BOOT-06 redirects
  it). Its one round asks for input: bootstrap raises `BootstrapError` at
  READ (`input_required`) after one `resources/read`, releases the
  reservation and grants nothing; no callback or SDK default ran.
  """
  defaults = record_sdk_defaults(monkeypatch)
  async with _app_path(
      "modern_http", tmp_path, mcp_apps, start_server, monkeypatch
  ) as path:
    stack = path.stack
    sid, call_id, event = await path.view()
    hold = stack.registry.render_reservations.peek(
        TOOLSET, stack.key(sid), call_id
    )
    assert hold is not None
    generation = hold.generation
    original = hold.read_resource

    async def asking(uri: str, **kwargs: Any) -> Any:
      del uri
      return await original(names.ASKING_URIS[kind], **kwargs)

    hold.read_resource = asking
    before = len(path.entries())
    with pytest.raises(BootstrapError) as info:
      await bootstrap_render(
          registry=stack.registry,
          profile=stack.profile,
          session_service=stack.session_service,
          principal=PRINCIPAL,
          session=stack.key(sid),
          toolset_id=TOOLSET,
          event_id=event.id,
          function_call_id=call_id,
      )
    assert info.value.step is BootstrapStep.READ
    assert info.value.reason == "input_required"
    assert [e["method"] for e in path.entries()[before:]] == [READ]
    assert hold.released
    check = generation.hold(HoldKind.OPERATION)
    try:
      await _assert_app_safe(check)
    finally:
      check.release()
  assert path.recorder.calls == []
  assert defaults == []


# --- P3-MCB-14: logging and the message handler ------------------------------


def _handler(*args: Any) -> None:
  del args


@pytest.mark.conformance("P3-MCB-14")
@pytest.mark.parametrize("surface", UNCONFIGURABLE)
def test_logging_and_message_handler_cannot_be_configured(
    surface: str,
) -> None:
  """No user logging callback, message handler or roots callback exists.

  In this ADK version none of them is a configuration surface: the
  `McpToolset` constructor, the registry's `McpToolsetSpec` and the YAML
  `McpToolsetConfig` all refuse the argument at construction, before any
  connection exists, so nothing user-supplied can reach a connection; a
  spec's `McpToolset` arguments never carry one.
  """
  params = StreamableHTTPConnectionParams(url="http://127.0.0.1:9/mcp")
  with pytest.raises(TypeError, match=surface):
    McpToolsetSpec(connection_params=params, **{surface: _handler})
  with pytest.raises(TypeError, match=surface):
    McpToolset(connection_params=params, **{surface: _handler})
  with pytest.raises(pydantic.ValidationError, match=surface):
    McpToolsetConfig.model_validate({
        "streamable_http_connection_params": {"url": "http://127.0.0.1:9/"},
        surface: "module.handler",
    })
  kwargs = McpToolsetSpec(connection_params=params).to_kwargs()
  assert not set(UNCONFIGURABLE) & set(kwargs)
  assert ROOTS_SUPPORTED is False


@pytest.mark.conformance("P3-MCB-14")
@pytest.mark.parametrize("transport", ["stdio", "legacy_http"])
async def test_app_safe_connection_logs_through_sdk_defaults(
    transport: str,
    tmp_path: Path,
    mcp_apps: Any,
    start_server: Any,
    monkeypatch: Any,
) -> None:
  """A server log line on an app-safe connection reaches the SDK defaults.

  The View calls `logging_view`, which sends one `notifications/message`
  before it answers (handshake era: 2026-07-28 has no logging). The SDK's
  own `_default_logging_callback` receives that line and its default
  message handler the notification, on the View's generation; the call
  succeeds, and no user callback ran.
  """
  logs: list[Any] = []
  messages: list[Any] = []
  # pylint: disable-next=protected-access
  sdk_logging = sdk_session._default_logging_callback
  # pylint: disable-next=protected-access
  sdk_messages = sdk_session._default_message_handler

  async def logging_seen(params: Any) -> None:
    logs.append(params)
    await sdk_logging(params)

  async def message_seen(message: Any) -> None:
    messages.append(message)
    await sdk_messages(message)

  monkeypatch.setattr(sdk_session, "_default_logging_callback", logging_seen)
  monkeypatch.setattr(sdk_session, "_default_message_handler", message_seen)
  async with _app_path(
      transport,
      tmp_path,
      mcp_apps,
      start_server,
      monkeypatch,
      logging_tool=True,
  ) as path:
    _, hold = await path.hold()
    server_id = path.stack.registry.lookup(TOOLSET).spec.server_id
    try:
      result = await call_app_tool(
          hold,
          names.LOGGING_VIEW,
          {},
          view_server_id=server_id,
          target_server_id=server_id,
      )
      assert not result.is_error, result
      assert result.structured_content["logged"] == names.LOGGED_TEXT
      who = await _assert_app_safe(hold)
    finally:
      hold.release()
    (call,) = path.calls(names.LOGGING_VIEW)
    assert call["connectionId"] == who["connectionId"]
  assert [params.data for params in logs] == [names.LOGGED_TEXT]
  assert isinstance(logs[0], mcp_types.LoggingMessageNotificationParams)
  logged = [
      m.params.data
      for m in messages
      if isinstance(m, mcp_types.LoggingMessageNotification)
  ]
  assert logged == [names.LOGGED_TEXT]
  assert path.recorder.calls == []
