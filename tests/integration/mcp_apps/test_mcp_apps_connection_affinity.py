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

"""Connection affinity (RFC §6, P0.1) against real servers.

Cases P2-AFF-01 .. P2-AFF-17, P2-RTRY-01 .. P2-RTRY-04, P1-ACAT-05 and
P1-DISC-02. Every initial UI call is a real `Runner` turn whose scripted
stand-in model calls the tool; the View is the render reservation of that
call (`registry.render_reservations.take`), and its app calls go through
`call_app_tool` on that hold, exactly as the host does.

Where a call ran is read on the server, never inferred from ADK state:

* the conformance server's `open_view` mints a nonce into the calling
  connection (stdio: the process) and `app_followup` honours it only there;
  `whoami` reports what the calling connection advertised, its connection
  id and its pid;
* for stdio, a small launcher (`_LAUNCHER`) runs the same conformance server
  with a request log per process (`request_log_file` named by pid, each
  line naming its connection: `request_log_connections`), so each
  connection's requests are recorded separately, and adds two test-only
  faults armed by flag files: `fail-open` (the next process exits before
  the handshake: a failed session creation) and `lose-<tool>` (the process
  runs that tool's handler, records the effect, then dies before the
  response is written: a lost response);
* over HTTP one server process logs every request with the id of the
  connection it arrived on (`request_log_connections`; the same id `whoami`
  and `app_followup` report), and the single-round MRTR tools
  (`single_round_tools`) separate the sampling, elicitation and roots
  rounds (P2-AFF-02 .. P2-AFF-05);
* the dashboard sample, which reports no identity, is read through the
  client session object each request was sent on.

Process isolation and cleanup are counted with `mcp_apps.child_pids()`.
Nothing sleeps to order anything: faults are armed by files, hooks run in
`before_tool_callback`, and process death is awaited as a condition.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
import contextlib
import dataclasses
import json
import os
from pathlib import Path
import re
import signal
import sys
import time
import types as pytypes
from typing import Any
from typing import Optional

from binding_support import http_spec
from binding_support import record_sdk_defaults
from binding_support import Recorder
from binding_support import stdio_spec
from google.adk.agents.llm_agent import LlmAgent
from google.adk.mcp_apps.affinity.errors import GenerationInvalidatedError
from google.adk.mcp_apps.affinity.errors import InvalidationReason
from google.adk.mcp_apps.affinity.generations import ConnectionEra
from google.adk.mcp_apps.affinity.generations import ConnectionGenerationState
from google.adk.mcp_apps.affinity.generations import GenerationHold
from google.adk.mcp_apps.affinity.generations import HoldKind
from google.adk.mcp_apps.affinity.routing import call_app_tool
from google.adk.mcp_apps.binding import loop_routing
from google.adk.mcp_apps.binding.registry import McpAppBindingRegistry
from google.adk.mcp_apps.binding.spec import McpToolsetSpec
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.errors import DenialReason
from google.adk.mcp_apps.errors import McpAppVisibilityError
from google.adk.mcp_apps.profile import local_dev_profile
from google.adk.models.base_llm import BaseLlm
from google.adk.runners import InMemoryRunner
from google.adk.tools.mcp_tool import SseConnectionParams
from google.genai import types as genai_types
from mcp import StdioServerParameters
import mcp.client.session as sdk_session
from mcp_apps_conformance_server import names
import pytest
from scripted_llm import ScriptedLlm

pytestmark = pytest.mark.integration

TIMEOUT = 30.0
MODERN_FLAG = "ADK_ENABLE_MCP_MODERN_PROTOCOL"
APPS_AD = {names.EXTENSION_ID: {"mimeTypes": [names.APP_MIME_TYPE]}}
INPUT_CAPABILITIES = ("sampling", "elicitation", "roots")
APP = "affinity"
USER = "u"
SHARED_SECRET = "conformance-shared-secret-0001"
REPO_ROOT = Path(__file__).resolve().parents[3]
DASHBOARD_VIEW_URI = "ui://agent-dashboard/view.html"
DASHBOARD_SERVER = (
    REPO_ROOT / "contributing" / "samples" / "mcp_apps_dashboard" / "server.py"
)

# The conformance server over stdio, with one request log per process and
# two faults a test arms by creating a flag file in the control directory.
_LAUNCHER = """
import json
import os
import sys

import anyio
from mcp_apps_conformance_server import ServerOptions
from mcp_apps_conformance_server import build_server

control = sys.argv[1]
pid = os.getpid()


def consume(flag):
  try:
    os.remove(os.path.join(control, flag))
  except FileNotFoundError:
    return False
  return True


with open(os.path.join(control, "spawns"), "a") as spawns:
  spawns.write(f"{pid}\\n")
if consume("fail-open"):
  sys.exit(3)
server = build_server(
    ServerOptions(
        request_log_file=os.path.join(control, f"{pid}.jsonl"),
        request_log_connections=True,
    )
)


async def lose_response(ctx, call_next):
  result = await call_next(ctx)
  params = ctx.params if isinstance(ctx.params, dict) else {}
  if ctx.method == "tools/call" and consume("lose-" + str(params.get("name"))):
    with open(os.path.join(control, "lost"), "w") as lost:
      json.dump({"pid": pid, "name": params.get("name"), "result": repr(result)}, lost)
    os._exit(0)
  return result


server.middleware.insert(1, lose_response)
anyio.run(server.run_stdio_async)
"""


# --- Servers and specs -------------------------------------------------------


class Control:
  """The launcher's control directory: flags, spawn list, request logs."""

  def __init__(self, path: Path, pythonpath: str):
    self.path = path
    self._pythonpath = pythonpath
    path.mkdir(parents=True, exist_ok=True)

  def params(self) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-c", _LAUNCHER, str(self.path)],
        env={"PYTHONPATH": self._pythonpath},
    )

  def arm(self, flag: str) -> None:
    (self.path / flag).touch()

  def armed(self, flag: str) -> bool:
    return (self.path / flag).exists()

  def spawns(self) -> list[int]:
    spawns = self.path / "spawns"
    if not spawns.exists():
      return []
    return [int(line) for line in spawns.read_text().split()]

  def log(self, pid: int) -> list[dict[str, Any]]:
    log = self.path / f"{pid}.jsonl"
    if not log.exists():
      return []
    return [json.loads(line) for line in log.read_text().splitlines()]

  def logs(self) -> dict[int, list[dict[str, Any]]]:
    return {
        int(log.stem): self.log(int(log.stem))
        for log in self.path.glob("*.jsonl")
    }

  def calls(self, name: str) -> dict[int, int]:
    """How many `tools/call name` each process received (non-zero only)."""
    counts = {
        pid: sum(
            1
            for entry in entries
            if entry["method"] == "tools/call" and entry.get("name") == name
        )
        for pid, entries in self.logs().items()
    }
    return {pid: n for pid, n in counts.items() if n}

  def lost(self) -> Optional[dict[str, Any]]:
    lost = self.path / "lost"
    return json.loads(lost.read_text()) if lost.exists() else None


@pytest.fixture
def control(tmp_path: Path, mcp_apps: Any) -> Control:
  return Control(
      tmp_path / "control", mcp_apps.stdio_parameters().env["PYTHONPATH"]
  )


def _sse_spec(url: str, **kwargs: Any) -> McpToolsetSpec:
  return McpToolsetSpec(
      connection_params=SseConnectionParams(url=url, timeout=TIMEOUT),
      **kwargs,
  )


def _registry(specs: Any, **kwargs: Any) -> McpAppBindingRegistry:
  kwargs.setdefault("allow_dev_providers", True)
  return McpAppBindingRegistry(specs, local_dev_profile(), **kwargs)


@dataclasses.dataclass(frozen=True)
class Endpoint:
  """One transport of the conformance server, as a spec factory."""

  name: str
  era: str
  spec: Callable[..., McpToolsetSpec]

  @property
  def legacy(self) -> bool:
    return self.era == "legacy"


@pytest.fixture
def endpoint(
    request: pytest.FixtureRequest, mcp_apps: Any, monkeypatch: Any
) -> Endpoint:
  """The parametrized transport; starts only the server it needs."""
  kind: str = request.param
  if kind == "modern-http":
    monkeypatch.setenv(MODERN_FLAG, "1")
    url = request.getfixturevalue("modern_http_server").url
    return Endpoint(kind, "modern", lambda **kw: http_spec(url, **kw))
  monkeypatch.delenv(MODERN_FLAG, raising=False)
  if kind == "stdio":
    params = mcp_apps.stdio_parameters()
    return Endpoint(kind, "legacy", lambda **kw: stdio_spec(params, **kw))
  if kind == "legacy-http":
    url = request.getfixturevalue("legacy_http_server").url
    return Endpoint(kind, "legacy", lambda **kw: http_spec(url, **kw))
  assert kind == "sse", kind
  url = request.getfixturevalue("sse_server").url
  return Endpoint(kind, "legacy", lambda **kw: _sse_spec(url, **kw))


@pytest.fixture(autouse=True)
def legacy_era_by_default(monkeypatch: Any) -> None:
  monkeypatch.delenv(MODERN_FLAG, raising=False)


# --- The stand-in model and Runner turns -------------------------------------


@dataclasses.dataclass
class Turn:
  """What one Runner turn's model called, and what each call returned."""

  session: SessionKey
  call_ids: list[str]
  responses: dict[str, dict[str, Any]]

  @property
  def call_id(self) -> str:
    assert len(self.call_ids) == 1, self.call_ids
    return self.call_ids[0]

  def response(self, index: int = 0) -> dict[str, Any]:
    return self.responses[self.call_ids[index]]


class Conversation:
  """One ADK Session driven by real Runner turns of the scripted model."""

  def __init__(
      self,
      *toolsets: Any,
      user: str = USER,
      model: Optional[BaseLlm] = None,
      **agent: Any,
  ):
    self.llm = ScriptedLlm() if model is None else model
    self.user = user
    self.runner = InMemoryRunner(
        agent=LlmAgent(
            name="probe", model=self.llm, tools=list(toolsets), **agent
        ),
        app_name=APP,
    )
    self.key: Optional[SessionKey] = None

  async def __aenter__(self) -> Conversation:
    session = await self.runner.session_service.create_session(
        app_name=APP, user_id=self.user
    )
    self.key = SessionKey(APP, self.user, session.id)
    return self

  async def __aexit__(self, *exc_info: object) -> None:
    await self.runner.close()

  async def turn(self, *calls: Any) -> Turn:
    """One turn whose model makes `calls` (tool names or (name, args))."""
    assert self.key is not None
    if isinstance(self.llm, ScriptedLlm):
      self.llm.steps = [
          [(call, {}) if isinstance(call, str) else call] for call in calls
      ]
    call_ids: list[str] = []
    responses: dict[str, dict[str, Any]] = {}
    async for event in self.runner.run_async(
        user_id=self.user,
        session_id=self.key.session_id,
        new_message=genai_types.Content(
            role="user", parts=[genai_types.Part(text="go")]
        ),
    ):
      for call in event.get_function_calls():
        assert call.id
        call_ids.append(call.id)
      for response in event.get_function_responses():
        assert response.id
        responses[response.id] = response.response or {}
    assert len(call_ids) == len(calls) == len(responses), (call_ids, responses)
    return Turn(self.key, call_ids, responses)

  def context(self) -> Any:
    """A readonly context of this Session (what the host passes)."""
    assert self.key is not None
    session = pytypes.SimpleNamespace(
        app_name=self.key.app_name,
        user_id=self.key.user_id,
        id=self.key.session_id,
    )
    return pytypes.SimpleNamespace(invocation_id="host", session=session)


def _text(response: dict[str, Any]) -> str:
  assert "error" not in response, response
  return " ".join(
      block["text"]
      for block in response.get("content", [])
      if block.get("type") == "text"
  )


@dataclasses.dataclass
class View:
  """A rendered View: its generation hold and what its initial call minted."""

  hold: GenerationHold
  token: str
  """The nonce (`open_view`) or the handle (`open_view_handle`)."""
  turn: Turn
  spec: McpToolsetSpec

  @property
  def generation_id(self) -> str:
    return self.hold.generation_id

  async def followup(self, token: Optional[str] = None) -> Any:
    """The View's app-only follow-up, through the host's app-call path."""
    tool, argument = (
        (names.APP_FOLLOWUP_HANDLE, "handle")
        if self.token.startswith(("local.", "signed."))
        else (names.APP_FOLLOWUP, "nonce")
    )
    return await call_app_tool(
        self.hold,
        tool,
        {argument: self.token if token is None else token},
        view_server_id=self.spec.server_id,
        target_server_id=self.spec.server_id,
    )


async def _render(
    registry: McpAppBindingRegistry,
    conversation: Conversation,
    toolset_id: str = "conf",
    tool: str = names.OPEN_VIEW,
) -> View:
  """A model turn calling a UI tool, and the View its result renders."""
  turn = await conversation.turn(tool)
  match = re.search(r"(?:nonce|handle) (\S+)", _text(turn.response()))
  assert match, turn.response()
  hold = registry.render_reservations.take(
      toolset_id, turn.session, turn.call_id
  )
  assert hold is not None, "the accepted result reserved no generation"
  assert hold.kind is HoldKind.RESERVATION
  spec = registry.lookup(toolset_id).spec
  return View(hold, match.group(1), turn, spec)


async def _whoami(hold: GenerationHold) -> dict[str, Any]:
  """What the server saw of the held generation's connection."""
  result = await hold.call_tool(names.WHOAMI, {})
  assert not result.is_error, result
  assert isinstance(result.structured_content, dict)
  return result.structured_content


def _advertised(who: dict[str, Any]) -> dict[str, Any]:
  if who["era"] == "legacy":
    return who["handshake"]["capabilities"]
  return who["requestEnvelope"]["clientCapabilities"]


def _verdict(result: Any) -> dict[str, Any]:
  assert isinstance(result.structured_content, dict), result
  return {**result.structured_content, "isError": bool(result.is_error)}


async def _gone(mcp_apps: Any, pid: int) -> None:
  """Waits (bounded) until `pid` is no longer a live child of this process."""
  deadline = time.monotonic() + TIMEOUT
  while pid in mcp_apps.child_pids():
    assert time.monotonic() < deadline, f"process {pid} did not exit"
    await asyncio.sleep(0.01)


def _kill(pid: int) -> None:
  os.kill(pid, signal.SIGKILL)


@pytest.fixture
def sdk_defaults(monkeypatch: Any) -> list[str]:
  """Records every input round a session WITHOUT a callback answered.

  The SDK answers a server's sampling, elicitation or roots request with
  its module-level default (an error) when the client has no callback;
  `record_sdk_defaults` records each such round and still answers.
  """
  return record_sdk_defaults(monkeypatch)


ALL_TRANSPORTS = ["stdio", "legacy-http", "sse", "modern-http"]


# --- P2-AFF-01 .. P2-AFF-05: which connection class a call runs on ----------


@pytest.mark.conformance("P2-AFF-01")
@pytest.mark.parametrize("endpoint", ALL_TRANSPORTS, indirect=True)
async def test_model_ui_call_runs_on_an_app_safe_connection(
    endpoint: Endpoint,
) -> None:
  """P2-AFF-01: a model-originated UI call runs on an app-safe connection.

  The toolset is configured with sampling and elicitation callbacks. The
  model's `open_view` runs on a generation whose connection advertised the
  Apps extension and no input capability (read by `whoami` on that same
  generation); on the legacy transports the server also confirms the call
  minted its nonce on that connection. The model's plain `whoami`, by
  contrast, runs on upstream's callbacked connection: it advertises the
  callbacks and not the extension. No callback is ever invoked.
  """
  recorder = Recorder()
  spec = endpoint.spec(**recorder.spec_kwargs())
  async with _registry({"conf": spec}) as registry:
    async with Conversation(registry.toolset("conf")) as conversation:
      view = await _render(registry, conversation)
      generation = view.hold.generation
      assert generation.era is (
          ConnectionEra.LEGACY if endpoint.legacy else ConnectionEra.MODERN
      )
      app_safe = await _whoami(view.hold)
      assert app_safe["era"] == endpoint.era
      assert app_safe["supportsApps"] is True
      assert _advertised(app_safe) == {"extensions": APPS_AD}
      assert not set(INPUT_CAPABILITIES) & set(
          app_safe["effectiveCapabilities"]
      )
      if endpoint.legacy:
        minted = _verdict(await view.followup())
        assert minted["verdict"] == "ok", minted
        assert minted["connectionId"] == app_safe["connectionId"]

      plain = await conversation.turn(names.WHOAMI)
      callbacked = plain.response()["structuredContent"]
      assert callbacked["supportsApps"] is False
      advertised = _advertised(callbacked)
      assert "extensions" not in advertised
      assert {"sampling", "elicitation"} <= set(advertised)
      assert callbacked["connectionId"] != app_safe["connectionId"]
  assert recorder.calls == []


MRTR_TRANSPORTS = ["stdio", "legacy-http", "modern-http"]
ROUND_CASES = {
    "sampling": "P2-AFF-02",
    "elicitation": "P2-AFF-03",
    "roots": "P2-AFF-04",
}


@dataclasses.dataclass(frozen=True)
class LoggedEndpoint:
  """A conformance endpoint with `single_round_tools` and a connection log."""

  name: str
  spec: Callable[..., McpToolsetSpec]
  log: Path

  @property
  def legacy(self) -> bool:
    return self.name != "modern-http"

  def entries(self) -> list[dict[str, Any]]:
    if not self.log.exists():
      return []
    return [json.loads(line) for line in self.log.read_text().splitlines()]

  def calls(self, name: str) -> list[dict[str, Any]]:
    """Every `tools/call name` the server received (any process)."""
    return [
        entry
        for entry in self.entries()
        if entry["method"] == "tools/call" and entry.get("name") == name
    ]


@pytest.fixture
def logged_endpoint(
    request: pytest.FixtureRequest,
    mcp_apps: Any,
    start_server: Any,
    monkeypatch: Any,
    tmp_path: Path,
) -> LoggedEndpoint:
  """The parametrized transport, serving the single-round MRTR tools.

  Every request is logged with the id of the connection it arrived on
  (`request_log_connections`; `null` in the modern era), one log shared by
  every process.
  """
  kind: str = request.param
  log = tmp_path / "requests.jsonl"
  options = {
      "single_round_tools": True,
      "request_log_file": str(log),
      "request_log_connections": True,
  }
  if kind == "stdio":
    params = mcp_apps.stdio_parameters(options)
    return LoggedEndpoint(kind, lambda **kw: stdio_spec(params, **kw), log)
  if kind == "modern-http":
    monkeypatch.setenv(MODERN_FLAG, "1")
  url = start_server(stateless=kind == "modern-http", options=options).url
  return LoggedEndpoint(kind, lambda **kw: http_spec(url, **kw), log)


def _undeclared(kind: str) -> str:
  """The server's refusal of a round whose capability was not declared."""
  return rf"did not declare the (form )?{kind} capability"


@pytest.mark.conformance("P2-AFF-02", "P2-AFF-03", "P2-AFF-04")
@pytest.mark.parametrize("logged_endpoint", MRTR_TRANSPORTS, indirect=True)
@pytest.mark.parametrize(
    "kind", list(ROUND_CASES), ids=[f"{c}-{k}" for k, c in ROUND_CASES.items()]
)
async def test_model_ui_single_round_call_fails_closed(
    logged_endpoint: LoggedEndpoint, kind: str, sdk_defaults: list[str]
) -> None:
  """P2-AFF-02 (sampling), P2-AFF-03 (elicitation), P2-AFF-04 (roots).

  Declared consequence, one case per parametrization: the UI-associated
  `mrtr_sample_view` / `mrtr_elicit_view` / `mrtr_roots_view` needs exactly
  one input round of its kind. Called by the model on a toolset that HAS
  sampling and elicitation callbacks, it runs on the app-safe generation,
  which declared none of the input capabilities, so the server refuses
  that round before sending it and the call fails closed: the model gets an
  error response naming the undeclared capability, no configured callback
  and no client-side input round (the SDK's no-callback defaults included)
  runs, and nothing is reserved for a View. The server received the call
  exactly once, on the generation's connection (legacy: by connection id),
  and that connection advertised the Apps extension and no input
  capability.
  """
  tool = names.SINGLE_ROUND_VIEW_TOOLS[kind]
  recorder = Recorder()
  spec = logged_endpoint.spec(**recorder.spec_kwargs())
  async with _registry({"conf": spec}) as registry:
    async with Conversation(registry.toolset("conf")) as conversation:
      turn = await conversation.turn(tool)
      error = turn.response().get("error", "")
      assert re.search(_undeclared(kind), error), turn.response()
      assert "structuredContent" not in turn.response()
      assert (
          registry.render_reservations.take("conf", turn.session, turn.call_id)
          is None
      )
      (generation,) = registry.connections.live()
      assert generation.era is (
          ConnectionEra.LEGACY
          if logged_endpoint.legacy
          else ConnectionEra.MODERN
      )
      hold = generation.hold(HoldKind.OPERATION)
      try:
        who = await _whoami(hold)
      finally:
        hold.release()
      assert _advertised(who) == {"extensions": APPS_AD}
      assert not set(INPUT_CAPABILITIES) & set(who["effectiveCapabilities"])
      (call,) = logged_endpoint.calls(tool)
      if logged_endpoint.legacy:
        assert call["connectionId"] == who["connectionId"]
      else:
        assert call["connectionId"] is None
  assert recorder.calls == []
  assert sdk_defaults == []


@pytest.mark.conformance("P2-AFF-05")
@pytest.mark.parametrize("logged_endpoint", MRTR_TRANSPORTS, indirect=True)
async def test_non_ui_model_calls_keep_their_callbacks(
    logged_endpoint: LoggedEndpoint, sdk_defaults: list[str]
) -> None:
  """P2-AFF-05: non-UI model calls keep the callbacked connection.

  In one real Runner turn the model calls the plain (no `_meta.ui`)
  `whoami`, `mrtr_sample`, `mrtr_elicit` and `mrtr_roots` of a toolset
  configured with sampling and elicitation callbacks. They run on
  upstream's callbacked connection, which advertises exactly `sampling`
  and `elicitation` (not the extension, not roots): the sampling round
  reaches the configured sampling callback and the elicitation round the
  elicitation callback, each once, and both calls succeed with what the
  callbacks answered. Roots behave as at the pin: ADK's `McpToolset` has
  no roots callback and declares no `roots` capability (before this
  series too), so the server refuses the roots round before sending it and
  the model gets that error. On the legacy transports the server's request
  log shows all four calls on the connection `whoami` reported, and none
  on the app-safe generation opened for the UI class's listing.

  Modern HTTP (2026-07-28): the calls still run on the callbacked
  connection (it advertises the callbacks and no extension), but the pin's
  `McpTool` never drives an `InputRequiredResult` (it calls without
  `allow_input_required`), so sampling and elicitation fail with the SDK's
  "Server returned InputRequiredResult" error and no callback runs, as at
  the pin; roots is refused as above.
  """
  recorder = Recorder()
  spec = logged_endpoint.spec(**recorder.spec_kwargs())
  tools = (
      names.WHOAMI,
      names.MRTR_SAMPLE,
      names.MRTR_ELICIT,
      names.MRTR_ROOTS,
  )
  async with _registry({"conf": spec}) as registry:
    async with Conversation(registry.toolset("conf")) as conversation:
      turn = await conversation.turn(*tools)
      calls = {tool: logged_endpoint.calls(tool) for tool in tools}
      app_safe = []
      for generation in registry.connections.live():
        hold = generation.hold(HoldKind.OPERATION)
        try:
          app_safe.append(await _whoami(hold))
        finally:
          hold.release()
  who = turn.response(0)["structuredContent"]
  assert who["supportsApps"] is False
  assert set(_advertised(who)) == {"sampling", "elicitation"}
  roots = turn.response(3)
  assert re.search(_undeclared("roots"), roots.get("error", "")), roots
  assert sdk_defaults == []
  for tool in tools:
    assert len(calls[tool]) == 1, (tool, calls)
  if not logged_endpoint.legacy:
    # As at the pin: ADK's McpTool calls without `allow_input_required`,
    # so the SDK client raises on the server's InputRequiredResult and no
    # round reaches a callback (driving modern rounds is not in the pin).
    for index in (1, 2):
      error = turn.response(index).get("error", "")
      assert "InputRequiredResult" in error, turn.response(index)
    assert recorder.calls == []
    return
  assert turn.response(1)["structuredContent"] == {
      "era": "legacy",
      "round": "sampling",
      "sampledText": "sampled",
  }
  assert turn.response(2)["structuredContent"] == {
      "era": "legacy",
      "round": "elicitation",
      "elicitationAction": "accept",
      "approved": True,
  }
  assert recorder.calls == ["sampling", "elicitation"]
  for tool in tools:
    assert calls[tool][0]["connectionId"] == who["connectionId"], tool
  assert app_safe, "the UI class was listed on an app-safe generation"
  for other in app_safe:
    assert other["supportsApps"] is True
    assert other["connectionId"] != who["connectionId"]


# --- P2-AFF-06, -07, -16: a View's follow-up stays on its connection -------


@pytest.mark.conformance("P2-AFF-06", "P2-AFF-07")
@pytest.mark.parametrize(
    ("endpoint", "foreign"),
    [
        ("stdio", "unknown-nonce"),
        ("legacy-http", "wrong-connection"),
        ("sse", "wrong-connection"),
    ],
    ids=["P2-AFF-06-stdio", "P2-AFF-07-legacy-http", "P2-AFF-07-sse"],
    indirect=["endpoint"],
)
async def test_nonce_followup_succeeds_only_on_its_connection(
    endpoint: Endpoint, foreign: str, mcp_apps: Any
) -> None:
  """P2-AFF-06 (stdio per-process nonce), P2-AFF-07 (legacy stateful HTTP).

  Two Sessions of one user each render a View from a model call. Each
  View's app-only follow-up, sent through `call_app_tool` on its hold,
  finds its own nonce on its own connection (stdio: its own process, by
  pid); the same nonce sent on the other Session's generation is refused
  by the server (another process: `unknown-nonce`; another live HTTP
  session or SSE stream: `wrong-connection`). Over stdio every generation
  is its own process, and every process is gone after shutdown.
  """
  before = mcp_apps.child_pids()
  spec = endpoint.spec()
  async with _registry({"conf": spec}) as registry:
    toolset = registry.toolset("conf")
    async with Conversation(toolset) as first, Conversation(toolset) as second:
      one = await _render(registry, first)
      two = await _render(registry, second)
      assert one.generation_id != two.generation_id
      who_one, who_two = await _whoami(one.hold), await _whoami(two.hold)
      for view, who in ((one, who_one), (two, who_two)):
        own = _verdict(await view.followup())
        assert own["verdict"] == "ok" and not own["isError"], own
        assert own["connectionId"] == who["connectionId"]
        assert own["pid"] == who["pid"]
      crossed = _verdict(await two.followup(one.token))
      assert crossed["isError"] and crossed["verdict"] == foreign, crossed
      assert crossed["connectionId"] == who_two["connectionId"]
      if endpoint.name == "stdio":
        generation_pids = {who_one["pid"], who_two["pid"]}
        assert len(generation_pids) == 2
        assert generation_pids <= mcp_apps.child_pids() - before
        assert crossed["processNonce"] != who_one["processNonce"]
  assert mcp_apps.child_pids() == before


@pytest.mark.conformance("P2-AFF-16")
@pytest.mark.parametrize("endpoint", ["stdio", "legacy-http"], indirect=True)
async def test_concurrent_app_calls_never_cross_connections(
    endpoint: Endpoint,
) -> None:
  """P2-AFF-16 (repro): an app call never lands on another View's connection.

  Two Sessions' Views on two generations; their follow-ups are issued
  concurrently and interleaved (four rounds each, all in flight at once).
  Every one is honoured by the server, and each lands on the connection
  id of its own View's generation and never on the other's.
  """
  async with _registry({"conf": endpoint.spec()}) as registry:
    toolset = registry.toolset("conf")
    async with Conversation(toolset) as first, Conversation(toolset) as second:
      views = [await _render(registry, first), await _render(registry, second)]
      own = [(await _whoami(view.hold))["connectionId"] for view in views]
      assert own[0] != own[1]
      results = await asyncio.gather(
          *(views[i % 2].followup() for i in range(8))
      )
  for i, result in enumerate(results):
    verdict = _verdict(result)
    assert verdict["verdict"] == "ok" and not verdict["isError"], verdict
    assert verdict["connectionId"] == own[i % 2]
    assert verdict["nonce"] == views[i % 2].token


# --- P2-AFF-08, -12: the concrete connection dies ---------------------------


def _restart_on_same_port(mcp_apps: Any, server: Any, stack: Any) -> None:
  """Stops an HTTP server and starts a fresh one on its port.

  The new process has never seen the old sessions: every stateful session
  the client holds is terminated from the server's point of view.
  """
  port = int(server.url.rsplit(":", 1)[1].split("/", 1)[0])
  server.stop()
  stack.enter_context(
      dataclasses.replace(
          server, args=mcp_apps.server_args("streamable-http", port=port)
      )
  )


@pytest.mark.conformance("P2-AFF-08")
@pytest.mark.parametrize(
    ("transport", "reason"),
    [
        ("stdio", InvalidationReason.TRANSPORT_FAILURE),
        ("legacy-http", InvalidationReason.SESSION_TERMINATED),
    ],
    ids=["stdio", "legacy-http"],
)
async def test_dead_legacy_connection_fails_its_view_typed(
    transport: str,
    reason: InvalidationReason,
    mcp_apps: Any,
    start_server: Any,
) -> None:
  """P2-AFF-08: the View of a dead legacy connection fails typed.

  stdio: the generation's server process is killed. Legacy HTTP: the server
  restarts on the same port, so the generation's `Mcp-Session-Id` is
  unknown to it. The View's next app call must fail with
  `GenerationInvalidatedError` naming its generation and the reason, and
  the generation must be invalidated for every holder.
  """
  with contextlib.ExitStack() as stack:
    server = None if transport == "stdio" else start_server()
    spec = (
        stdio_spec(mcp_apps.stdio_parameters())
        if server is None
        else http_spec(server.url)
    )
    async with _registry({"conf": spec}) as registry:
      async with Conversation(registry.toolset("conf")) as conversation:
        view = await _render(registry, conversation)
        who = await _whoami(view.hold)
        if server is None:
          _kill(who["pid"])
          await _gone(mcp_apps, who["pid"])
        else:
          await asyncio.to_thread(
              _restart_on_same_port, mcp_apps, server, stack
          )
        with pytest.raises(GenerationInvalidatedError) as info:
          await view.followup()
        assert info.value.generation_id == view.generation_id
        assert info.value.reason is reason
        assert (
            view.hold.generation.state is ConnectionGenerationState.INVALIDATED
        )


async def _assert_view_dead(
    view: View, generation_id: str, reason: InvalidationReason
) -> None:
  """Every operation of an invalidated View fails typed; nothing is sent."""
  operations: list[Callable[[], Any]] = [
      view.followup,
      lambda: view.hold.call_tool(names.WHOAMI, {}),
      view.hold.list_tools,
      lambda: view.hold.read_resource(names.VIEW_URI),
      lambda: view.hold.execute(lambda s: s.send_ping(), "ping"),
  ]
  for operation in operations:
    with pytest.raises(GenerationInvalidatedError) as info:
      await operation()
    assert info.value.generation_id == generation_id
    assert info.value.reason is reason


@pytest.mark.conformance("P2-AFF-12", "P2-AFF-13")
async def test_reconnect_invalidates_and_refresh_rebinds(
    mcp_apps: Any, control: Control
) -> None:
  """P2-AFF-12 (reconnect), P2-AFF-13 (no silent move), over stdio.

  The View's generation's server process dies. The next model turn of the
  Session (the refresh) finds the transport dead, invalidates the old
  generation (TRANSPORT_FAILURE) and binds its new View to a new
  generation in a new process. The old View then fails typed on every
  operation although a live generation for the same key exists, and no
  request of it reaches the new process (its request log holds only the new
  View's traffic); its nonce is unknown there.
  """
  before = mcp_apps.child_pids()
  async with _registry({"conf": stdio_spec(control.params())}) as registry:
    async with Conversation(registry.toolset("conf")) as conversation:
      old = await _render(registry, conversation)
      old_pid = (await _whoami(old.hold))["pid"]
      _kill(old_pid)
      await _gone(mcp_apps, old_pid)

      new = await _render(registry, conversation)
      assert new.generation_id != old.generation_id
      assert new.hold.generation.key == old.hold.generation.key
      assert old.hold.generation.invalidation_reason is (
          InvalidationReason.TRANSPORT_FAILURE
      )
      new_pid = (await _whoami(new.hold))["pid"]
      assert new_pid != old_pid and new_pid in mcp_apps.child_pids()
      before_old_ops = len(control.log(new_pid))
      await _assert_view_dead(
          old, old.generation_id, InvalidationReason.TRANSPORT_FAILURE
      )
      assert len(control.log(new_pid)) == before_old_ops
      assert _verdict(await new.followup())["verdict"] == "ok"
      stranger = _verdict(await new.followup(old.token))
      assert stranger["verdict"] == "unknown-nonce", stranger
  assert mcp_apps.child_pids() == before


@pytest.mark.conformance("P1-ACAT-05", "P2-AFF-11", "P2-AFF-13")
@pytest.mark.parametrize("endpoint", ["stdio", "legacy-http"], indirect=True)
async def test_evicted_view_fails_typed(
    endpoint: Endpoint, mcp_apps: Any
) -> None:
  """P2-AFF-11, P2-AFF-13, P1-ACAT-05: eviction, refresh, no resurrection.

  The View's generation G1 is evicted (an operator's forced eviction): its
  app call fails with `GenerationInvalidatedError(G1, EVICTED)` before
  anything is sent, and over stdio its process is gone. The next model
  turn (the refresh) binds a new View to a new generation G2 for the SAME
  key, now the live one, with the stable server id unchanged; the View
  bound to G1 stays denied on every operation (P1-ACAT-05, P2-AFF-13),
  while the refreshed View works and the old nonce means nothing on G2.
  """
  before = mcp_apps.child_pids()
  spec = endpoint.spec()
  async with _registry({"conf": spec}) as registry:
    async with Conversation(registry.toolset("conf")) as conversation:
      old = await _render(registry, conversation)
      g1 = old.hold.generation
      old_who = await _whoami(old.hold)
      assert await registry.connections.evict(g1.generation_id)
      assert g1.state is ConnectionGenerationState.INVALIDATED
      with pytest.raises(GenerationInvalidatedError) as info:
        await old.followup()
      assert info.value.generation_id == g1.generation_id
      assert info.value.reason is InvalidationReason.EVICTED
      if endpoint.name == "stdio":
        await _gone(mcp_apps, old_who["pid"])

      new = await _render(registry, conversation)
      g2 = new.hold.generation
      assert g2.generation_id != g1.generation_id and g2.key == g1.key
      assert registry.connections.find(g1.key) is g2
      assert registry.server_id("conf") == spec.server_id == new.spec.server_id
      new_who = await _whoami(new.hold)
      assert new_who["connectionId"] != old_who["connectionId"]
      if endpoint.name == "stdio":
        assert new_who["pid"] != old_who["pid"]
      await _assert_view_dead(old, g1.generation_id, InvalidationReason.EVICTED)
      assert _verdict(await new.followup())["verdict"] == "ok"
      stranger = _verdict(await new.followup(old.token))
      assert stranger["isError"], stranger
      assert stranger["verdict"] in ("unknown-nonce", "connection-closed")
  assert mcp_apps.child_pids() == before


# --- P2-AFF-09, -10: the modern era's logical binding ------------------------


@pytest.mark.conformance("P2-AFF-09", "P2-AFF-10")
async def test_modern_round_robin_explicit_handles(
    start_server: Any, start_proxy: Any, monkeypatch: Any
) -> None:
  """P2-AFF-09, P2-AFF-10: ratification-gated reading 7(f).

  Two stateless 2026-07-28 backends (sharing a handle-signing secret)
  behind the fixture's strict round-robin proxy form one logical binding.
  The model's `open_view_handle` opens a MODERN generation; the View's
  follow-ups through `call_app_tool` land on both backend processes in
  turn, each echoing the server handle byte-identically and honouring it;
  a follow-up the server refuses (a forged handle) does not end the
  binding; the View's generation never changes. (The interpretation that
  this satisfies the same-connection rule is pending ratification 7(f).)
  """
  monkeypatch.setenv(MODERN_FLAG, "1")
  options = {"handle_secret": SHARED_SECRET}
  backends = [
      start_server(stateless=True, options=options).url for _ in range(2)
  ]
  proxy = start_proxy(backends)
  spec = http_spec(proxy.url)
  async with _registry({"conf": spec}) as registry:
    async with Conversation(registry.toolset("conf")) as conversation:
      view = await _render(registry, conversation, tool=names.OPEN_VIEW_HANDLE)
      assert view.hold.generation.era is ConnectionEra.MODERN
      assert view.token.startswith("signed.")
      issuer = view.token.split(".")[1]
      answers = []
      for _ in range(4):
        answers.append(_verdict(await view.followup()))
        # One extra request shifts which backend the next follow-up's
        # tools/call reaches (admission listing + call are two requests).
        await _whoami(view.hold)
      forged = _verdict(await view.followup("signed.forged.handle.sig"))
      answers.append(_verdict(await view.followup()))
      live = registry.connections.live()
  assert forged["isError"] and forged["verdict"] == "bad-signature", forged
  assert {a["processNonce"] for a in answers} >= {issuer}
  assert len({a["processNonce"] for a in answers}) == 2, answers
  for answer in answers:
    assert answer["verdict"] == "ok" and not answer["isError"], answer
    assert answer["handle"] == view.token  # Echoed byte-identically.
    assert answer["issuedBy"] == issuer
    assert answer["era"] == "modern"
  assert [g.generation_id for g in live] == [view.generation_id]


# --- P2-AFF-14: two configured connections to one server ---------------------


@pytest.mark.conformance("P2-AFF-14")
@pytest.mark.parametrize("endpoint", ["stdio", "legacy-http"], indirect=True)
async def test_two_toolsets_to_one_server_keep_their_connections(
    endpoint: Endpoint, mcp_apps: Any
) -> None:
  """P2-AFF-14: two toolset ids, one server, two connections.

  Toolsets `a` and `b` are configured identically (same server, hence the
  same stable server id; model names prefixed `a_`/`b_`). In one Session
  the model renders a View from each: their generations differ, and their
  keys differ only in the toolset id. Each View's follow-up is honoured on
  its own connection; a follow-up carrying the other View's nonce, sent on
  this View's generation (the only place `call_app_tool` can send it), is
  refused by the server: nothing routes one toolset's View onto the
  other's connection.
  """
  before = mcp_apps.child_pids()
  specs = {"a": endpoint.spec(tool_name_prefix="a")}
  specs["b"] = endpoint.spec(tool_name_prefix="b")
  assert specs["a"].server_id == specs["b"].server_id
  async with _registry(specs) as registry:
    async with Conversation(
        registry.toolset("a"), registry.toolset("b")
    ) as conversation:
      view_a = await _render(registry, conversation, "a", "a_open_view")
      view_b = await _render(registry, conversation, "b", "b_open_view")
      key_a, key_b = view_a.hold.generation.key, view_b.hold.generation.key
      assert view_a.generation_id != view_b.generation_id
      assert (key_a.toolset_id, key_b.toolset_id) == ("a", "b")
      assert dataclasses.replace(key_a, toolset_id="b") == key_b
      who_a, who_b = await _whoami(view_a.hold), await _whoami(view_b.hold)
      assert who_a["connectionId"] != who_b["connectionId"]
      for view, who, other in (
          (view_a, who_a, view_b),
          (view_b, who_b, view_a),
      ):
        own = _verdict(await view.followup())
        assert own["verdict"] == "ok", own
        assert own["connectionId"] == who["connectionId"]
        crossed = _verdict(await view.followup(other.token))
        assert crossed["isError"], crossed
        assert crossed["connectionId"] == who["connectionId"]
      if endpoint.name == "stdio":
        assert who_a["pid"] != who_b["pid"]
        assert {who_a["pid"], who_b["pid"]} <= mcp_apps.child_pids() - before
  assert mcp_apps.child_pids() == before


@pytest.mark.conformance("P2-AFF-14")
async def test_other_server_id_is_denied_cross_server(
    start_server: Any, tmp_path: Path
) -> None:
  """P2-AFF-14: a call routed through the other toolset's server is denied.

  Two toolsets reach one server process under different configured
  addresses (so their stable server ids differ). A View of toolset `a`
  whose call names `b`'s server as its target is denied CROSS_SERVER,
  typed, before anything is sent: the server's request log gains no line.
  """
  log = tmp_path / "requests.jsonl"
  server = start_server(options={"request_log_file": str(log)})
  specs = {
      "a": http_spec(server.url, tool_name_prefix="a"),
      "b": http_spec(server.url + "?via=b", tool_name_prefix="b"),
  }
  assert specs["a"].server_id != specs["b"].server_id
  async with _registry(specs) as registry:
    async with Conversation(
        registry.toolset("a"), registry.toolset("b")
    ) as conversation:
      view = await _render(registry, conversation, "a", "a_open_view")
      lines = log.read_text().count("\n")
      with pytest.raises(McpAppVisibilityError) as info:
        await call_app_tool(
            view.hold,
            names.APP_FOLLOWUP,
            {"nonce": view.token},
            view_server_id=specs["a"].server_id,
            target_server_id=specs["b"].server_id,
        )
      assert info.value.reason is DenialReason.CROSS_SERVER
      assert log.read_text().count("\n") == lines
      assert _verdict(await view.followup())["verdict"] == "ok"


@pytest.mark.conformance("P1-ACAT-06")
async def test_view_call_to_another_configured_server_is_denied(
    start_server: Any, tmp_path: Path
) -> None:
  """P1-ACAT-06 with configured server ids: a View's call naming another
  configured server is denied CROSS_SERVER before anything is sent.

  Two toolsets reach two separate server processes; each side's server id
  is its real spec's. A View of toolset `a` calling, on server `b`, the
  app-only `app_followup` (app-only there, as `b`'s own listing shows) or
  the model-and-app `side_effect` and `whoami`, is denied typed; neither
  server's request log gains a line, and `b`'s own View still reaches its
  follow-up.
  """
  logs = {side: tmp_path / f"requests-{side}.jsonl" for side in "ab"}
  specs = {
      side: http_spec(
          start_server(options={"request_log_file": str(logs[side])}).url,
          tool_name_prefix=side,
      )
      for side in "ab"
  }
  assert specs["a"].server_id != specs["b"].server_id
  async with _registry(specs) as registry:
    async with Conversation(
        registry.toolset("a"), registry.toolset("b")
    ) as conversation:
      view = await _render(registry, conversation, "a", "a_open_view")
      other = await _render(registry, conversation, "b", "b_open_view")
      listed = {t.name: t for t in await other.hold.list_tools()}
      assert listed[names.APP_FOLLOWUP].meta["ui"]["visibility"] == ["app"]
      lines = {side: logs[side].read_text().count("\n") for side in "ab"}
      for tool, arguments in (
          (names.APP_FOLLOWUP, {"nonce": other.token}),
          (names.SIDE_EFFECT, {"key": "cross"}),
          (names.WHOAMI, {}),
      ):
        with pytest.raises(McpAppVisibilityError) as info:
          await call_app_tool(
              view.hold,
              tool,
              arguments,
              view_server_id=specs["a"].server_id,
              target_server_id=specs["b"].server_id,
          )
        assert info.value.reason is DenialReason.CROSS_SERVER, tool
      assert {
          side: logs[side].read_text().count("\n") for side in "ab"
      } == lines
      assert _verdict(await other.followup())["verdict"] == "ok"


# --- P2-AFF-15, P1-DISC-02: every View operation on the bound generation ----


VIEW_OPERATIONS = [
    {"method": "tools/list", "cursor": None},
    {"method": "tools/call", "name": names.APP_FOLLOWUP},
    {"method": "resources/read"},
    {"method": "tools/list", "cursor": None},
    {"method": "resources/read"},
]
"""What a View's operations send, in order (see `_view_operations`)."""


async def _view_operations(
    registry: McpAppBindingRegistry, conversation: Conversation, view: View
) -> None:
  """The View's app call, resource read, listing and bootstrap read."""
  followup = _verdict(await view.followup())
  assert followup["verdict"] == "ok", followup
  read = await view.hold.read_resource(names.VIEW_URI)
  assert read.contents[0].mime_type == names.APP_MIME_TYPE
  listed = {tool.name for tool in await view.hold.list_tools()}
  assert {names.OPEN_VIEW, names.APP_FOLLOWUP} <= listed
  bootstrap = await registry.lookup("conf").read_resource_by_uri(
      names.VIEW_URI, conversation.context()
  )
  assert bootstrap[0].mime_type == names.APP_MIME_TYPE


def _on(entries: list[dict[str, Any]], connection: str) -> list[Any]:
  """The entries received on `connection`, without their connection id."""
  return [
      {k: v for k, v in entry.items() if k != "connectionId"}
      for entry in entries
      if entry["connectionId"] == connection
  ]


@pytest.mark.conformance("P1-DISC-02", "P2-AFF-15")
async def test_view_operations_run_on_the_bound_generation(
    mcp_apps: Any, control: Control
) -> None:
  """P2-AFF-15, P1-DISC-02 over stdio: as recorded per request by the server.

  Over stdio each connection is its own process with its own request log.
  After the View renders, its app `tools/call` (preceded by the admission
  `tools/list`, P1-DISC-02), a `resources/read` of its View resource, a
  catalog listing, and the host's bootstrap read of the View resource for
  the View's Session (the proxy's host path) all arrive, in that order, at
  exactly the process of the View's generation (and its one connection, by
  the logged connection id), and at no other.
  """
  async with _registry({"conf": stdio_spec(control.params())}) as registry:
    async with Conversation(registry.toolset("conf")) as conversation:
      view = await _render(registry, conversation)
      who = await _whoami(view.hold)
      pid = who["pid"]
      assert control.calls(names.OPEN_VIEW) == {pid: 1}
      marks = {p: len(entries) for p, entries in control.logs().items()}
      await _view_operations(registry, conversation, view)
      logs = control.logs()
  added = {p: entries[marks.get(p, 0) :] for p, entries in logs.items()}
  on_generation = added.pop(pid)
  assert _on(on_generation, who["connectionId"]) == VIEW_OPERATIONS
  assert len(on_generation) == len(VIEW_OPERATIONS)
  assert not any(added.values()), added
  assert len(logs) == 2  # The callbacked connection and the generation.


@pytest.mark.conformance("P1-DISC-02", "P2-AFF-15")
async def test_legacy_http_by_connection_id(
    start_server: Any, tmp_path: Path
) -> None:
  """P2-AFF-15, P1-DISC-02 over legacy stateful HTTP, by connection id.

  One server process serves both connection classes; its request log
  (`request_log_connections`) names the connection (`Mcp-Session-Id`) of
  every request. The model's `open_view` arrived on the View's generation;
  afterwards the View's admission `tools/list` (P1-DISC-02) and app
  `tools/call`, its `resources/read`, a catalog listing and the host's
  bootstrap read arrive, in that order, on exactly that connection, and
  nothing arrives on any other (the callbacked connection included).
  """
  log = tmp_path / "requests.jsonl"
  server = start_server(
      options={"request_log_file": str(log), "request_log_connections": True}
  )

  def entries() -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]

  async with _registry({"conf": http_spec(server.url)}) as registry:
    async with Conversation(registry.toolset("conf")) as conversation:
      view = await _render(registry, conversation)
      who = await _whoami(view.hold)
      connection = who["connectionId"]
      opened = [
          e
          for e in entries()
          if e["method"] == "tools/call" and e["name"] == names.OPEN_VIEW
      ]
      assert [e["connectionId"] for e in opened] == [connection]
      mark = len(entries())
      await _view_operations(registry, conversation, view)
      added = entries()[mark:]
  assert _on(added, connection) == VIEW_OPERATIONS
  assert len(added) == len(VIEW_OPERATIONS), added
  connections = {e["connectionId"] for e in entries()}
  assert None not in connections
  assert len(connections) == 2  # The callbacked connection and the generation.


# --- P2-AFF-17: the dashboard sample's full path -----------------------------


@pytest.mark.conformance("P2-AFF-17")
async def test_dashboard_sample_path_runs_on_one_generation(
    tmp_path: Path, mcp_apps: Any, monkeypatch: Any
) -> None:
  """P2-AFF-17: the #396 path with the dashboard sample, one generation.

  The sample's own stand-in model calls `show_agent_dashboard` through the
  registry-bound toolset; the View reads its resource and calls both
  app-only tools (`query_agent_events`, `get_event_detail`). Every one of
  those requests, the model's initial call included, is sent on the
  client session of the View's generation (read per request from the
  session object it was sent on), none on the callbacked connection the
  model's listing used.
  """
  from mcp_apps_dashboard import agent as sample  # pylint: disable=g-import-not-at-top

  sent: list[tuple[int, str, Optional[str]]] = []
  original = sdk_session.ClientSession.send_request

  async def recording(
      self: Any, request: Any, *args: Any, **kwargs: Any
  ) -> Any:
    params = getattr(request, "params", None)
    sent.append((
        id(self),
        getattr(request, "method", "?"),
        getattr(params, "name", None),
    ))
    return await original(self, request, *args, **kwargs)

  monkeypatch.setattr(sdk_session.ClientSession, "send_request", recording)
  before = mcp_apps.child_pids()
  params = StdioServerParameters(
      command=sys.executable,
      args=[
          str(DASHBOARD_SERVER),
          "--transport",
          "stdio",
          "--db",
          str(tmp_path / "events.sqlite3"),
      ],
  )
  spec = stdio_spec(params, tool_filter=sample.visible_to_model)
  async with _registry({"dashboard": spec}) as registry:
    async with Conversation(
        registry.toolset("dashboard"), model=sample.DashboardStandInLlm()
    ) as conversation:
      turn = await conversation.turn(sample.DASHBOARD_TOOL)
    assert "Agent dashboard" in turn.response()["content"][0]["text"]
    hold = registry.render_reservations.take(
        "dashboard", turn.session, turn.call_id
    )
    assert hold is not None
    session = id(loop_routing.unwrap(hold.generation.session))
    html = await hold.read_resource(DASHBOARD_VIEW_URI)
    assert "<html" in html.contents[0].text.lower()
    page = await call_app_tool(
        hold,
        "query_agent_events",
        {"limit": 3},
        view_server_id=spec.server_id,
        target_server_id=spec.server_id,
    )
    assert not page.is_error, page
    event_id = page.structured_content["events"][0]["eventId"]
    detail = await call_app_tool(
        hold,
        "get_event_detail",
        {"event_id": event_id},
        view_server_id=spec.server_id,
        target_server_id=spec.server_id,
    )
    assert not detail.is_error, detail
    assert detail.structured_content["event"]["eventId"] == event_id
    assert len(mcp_apps.child_pids() - before) == 2  # Callbacked + app-safe.
  ui_requests = [
      (who, method, name)
      for who, method, name in sent
      if method == "resources/read"
      or name
      in ("show_agent_dashboard", "query_agent_events", "get_event_detail")
  ]
  assert [name for _, _, name in ui_requests] == [
      "show_agent_dashboard",
      None,
      "query_agent_events",
      "get_event_detail",
  ]
  assert {who for who, _, _ in ui_requests} == {session}
  listings = {who for who, method, _ in sent if method == "tools/list"}
  assert len(listings) == 2 and session in listings  # Both classes listed.
  assert mcp_apps.child_pids() == before


# --- P2-RTRY: the initial UI call is never retried ---------------------------


@pytest.mark.conformance("P2-RTRY-01", "P2-RTRY-02", "P2-RTRY-03")
async def test_lost_response_surfaces_and_is_not_retried(
    mcp_apps: Any, control: Control
) -> None:
  """P2-RTRY-01, P2-RTRY-02, P2-RTRY-03: a lost initial-call response.

  The generation G1's server process runs `open_view` (the nonce is minted:
  the effect committed) and dies before writing the response. The model
  receives an error, and exactly one `tools/call open_view` reached any
  server (RTRY-01). The model's immediate second attempt in the same
  invocation is a new function call; its declaration was listed on G1, so
  it fails closed as stale before anything is sent (no name-only dispatch
  on another generation). Its attempt in the next turn is again a new
  function call, run as a new operation on a new generation in a new
  process (RTRY-02). Only the generation that returned the accepted result
  is reserved: the failed calls reserved nothing, and the View binds to
  that new generation (RTRY-03).
  """
  before = mcp_apps.child_pids()
  async with _registry({"conf": stdio_spec(control.params())}) as registry:
    async with Conversation(registry.toolset("conf")) as conversation:
      await conversation.turn(names.WHOAMI)  # Both classes are listed.
      spawned = control.spawns()
      # G1 and the callbacked connection: the app-safe class lists first.
      assert len(spawned) == 2
      (g1,) = registry.connections.live()
      control.arm("lose-" + names.OPEN_VIEW)

      failed = await conversation.turn(names.OPEN_VIEW, names.OPEN_VIEW)
      lost = control.lost()
      assert lost is not None and lost["name"] == names.OPEN_VIEW
      assert "nonce" in lost["result"]  # The effect committed.
      assert lost["pid"] == spawned[0]
      first, again = failed.call_ids
      assert first != again
      # Typed or not (bug reported: the SDK's CONNECTION_CLOSED may win the
      # race with the transport task), the failure reaches the model.
      assert "error" in failed.response(0), failed.response(0)
      assert "stale" in failed.response(1).get("error", ""), failed.response(1)
      assert control.calls(names.OPEN_VIEW) == {lost["pid"]: 1}
      assert g1.state is ConnectionGenerationState.INVALIDATED
      assert g1.invalidation_reason is InvalidationReason.TRANSPORT_FAILURE

      retried = await _render(registry, conversation)
      assert retried.turn.call_id not in (first, again)
      assert retried.generation_id != g1.generation_id
      for call_id in (first, again):
        assert (
            registry.render_reservations.take("conf", failed.session, call_id)
            is None
        )
      followup = _verdict(await retried.followup())
      assert followup["verdict"] == "ok", followup
      new_pid = followup["pid"]
      assert new_pid not in spawned and new_pid in control.spawns()
      assert control.calls(names.OPEN_VIEW) == {lost["pid"]: 1, new_pid: 1}
  assert mcp_apps.child_pids() == before


class PoolFault:
  """Tool callbacks that break things between a listing and its call.

  Once `armed`, the next tool call (in `before`) first closes the pools as
  a lease epoch's last release does (`_close_lease_epoch`: the runtime's
  pooled callbacked connections close and the unheld app-safe generations
  are evicted; done directly because the release itself deadlocks while an
  app-safe generation is live, a reported bug), then makes the next server
  process fail before its handshake. `starts` counts the server processes
  started between the fault and the end of that tool call (`after`).
  """

  def __init__(self, registry: McpAppBindingRegistry, control: Control):
    self.registry = registry
    self.control = control
    self.armed = False
    self.fired = 0
    self.starts: Optional[list[int]] = None
    self._mark = 0

  async def before(self, tool: Any, args: Any, tool_context: Any) -> None:
    del tool, args, tool_context
    if not self.armed:
      return
    self.armed = False
    self.fired += 1
    proxy = self.registry.lookup("conf")
    await proxy._close_connections()  # pylint: disable=protected-access
    for generation in self.registry.connections.live():
      assert generation.holders == 0
      await self.registry.connections.evict(generation.generation_id)
    self._mark = len(self.control.spawns())
    self.control.arm("fail-open")

  async def after(
      self, tool: Any, args: Any, tool_context: Any, tool_response: Any
  ) -> None:
    del tool, args, tool_context, tool_response
    if self.fired and self.starts is None:
      self.starts = self.control.spawns()[self._mark :]

  def agent_callbacks(self) -> dict[str, Any]:
    return {
        "before_tool_callback": self.before,
        "after_tool_callback": self.after,
    }


@pytest.mark.conformance("P2-RTRY-01")
async def test_failed_session_for_ui_call_is_not_retried(
    mcp_apps: Any, control: Control
) -> None:
  """P2-RTRY-01: session creation for an initial UI call is tried once.

  After the model's tools are listed, the pools close and the next server
  start fails. The model's `open_view` needs a new generation; opening it
  fails and is not retried (exactly one process was started for the call,
  the failing one: it never served a request), the model gets an error, no
  `tools/call` reached any server, and nothing was reserved. Compare
  P2-RTRY-04, where the same fault is retried.
  """
  before = mcp_apps.child_pids()
  async with _registry({"conf": stdio_spec(control.params())}) as registry:
    fault = PoolFault(registry, control)
    async with Conversation(
        registry.toolset("conf"), **fault.agent_callbacks()
    ) as conversation:
      await conversation.turn(names.WHOAMI)  # Both classes are open.
      fault.armed = True
      turn = await conversation.turn(names.OPEN_VIEW)
      assert fault.fired == 1
      error = turn.response().get("error", "")
      assert "Failed to create MCP session" in error, turn.response()
      assert fault.starts is not None and len(fault.starts) == 1
      assert not control.armed("fail-open")  # That start was the failing one.
      assert control.log(fault.starts[0]) == []
      assert control.calls(names.OPEN_VIEW) == {}
      assert (
          registry.render_reservations.take("conf", turn.session, turn.call_id)
          is None
      )
  assert mcp_apps.child_pids() == before


@pytest.mark.conformance("P2-RTRY-04")
async def test_non_ui_session_creation_is_retried_once(
    mcp_apps: Any, control: Control
) -> None:
  """P2-RTRY-04: non-UI model calls keep the pin's once-retry.

  The same fault as P2-RTRY-01, for the model's plain `whoami`: its
  session creation fails once and upstream's `retry_on_errors` retries it
  with a fresh session (two processes started for the call: the failing
  one, then the one that served it), and the call runs exactly once and
  succeeds. (Compared with the pin by construction only: pristine sources
  are reachable only inside `make check-series`.)
  """
  before = mcp_apps.child_pids()
  async with _registry({"conf": stdio_spec(control.params())}) as registry:
    fault = PoolFault(registry, control)
    async with Conversation(
        registry.toolset("conf"), **fault.agent_callbacks()
    ) as conversation:
      await conversation.turn(names.WHOAMI)  # Both classes are open.
      fault.armed = True
      turn = await conversation.turn(names.WHOAMI)
      assert fault.fired == 1
      who = turn.response()["structuredContent"]
      assert who["supportsApps"] is False
      assert fault.starts is not None and len(fault.starts) == 2
      failed, retried = fault.starts
      assert control.log(failed) == [] and who["pid"] == retried
      assert control.calls(names.WHOAMI)[retried] == 1
  assert mcp_apps.child_pids() == before
