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

"""Security-domain keying of app-safe generations, against real servers.

Cases P2-SEC-01 .. P2-SEC-10 (RFC §6, "Security-domain keying") and
P2-CRED-01 / P2-CRED-02 (RFC §3, "Credential-aware, connection-affine
resolution"; credential redaction).

Connection state is the conformance server's: a real `Runner` turn's
scripted model calls the UI tool `open_view`, which mints a nonce into the
calling connection; the View (the render reservation of that call, taken
with `registry.render_reservations.take`) calls the app-only
`app_followup(nonce)`, which the server answers `ok` only on the connection
that minted the nonce (else `unknown-nonce`: another process,
`wrong-connection`: another live connection, `connection-closed`). So "sees
only its own state" is read from the server, not inferred from ADK.

Principals are declared the way a serving host declares them for a
model-originated turn (`acting_principal`); without one a turn acts for
the Session's owner. HTTP requests are observed server-side by a loopback
front door (`RecordingFrontDoor`, the fixture's round-robin proxy with one
backend, wrapped to record each request's headers, JSON-RPC body and
response headers), because the conformance server does not report request
headers. Nothing sleeps to order anything: concurrency is forced with a
barrier in a before-tool callback.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from collections.abc import Iterator
import contextlib
import dataclasses
import hashlib
import hmac
import itertools
import json
import logging
import re
import socket
import threading
from typing import Any
from typing import Optional
import uuid

from binding_support import app_followup
from binding_support import http_spec
from binding_support import run_turn
from binding_support import stdio_spec
from google.adk.agents.llm_agent import LlmAgent
from google.adk.mcp_apps.affinity.errors import AdmissionRefusal
from google.adk.mcp_apps.affinity.errors import GenerationAdmissionError
from google.adk.mcp_apps.affinity.errors import GenerationInvalidatedError
from google.adk.mcp_apps.affinity.errors import InvalidationReason
from google.adk.mcp_apps.affinity.errors import StaleToolHandleError
from google.adk.mcp_apps.affinity.generations import ConnectionEra
from google.adk.mcp_apps.affinity.generations import ConnectionGeneration
from google.adk.mcp_apps.affinity.generations import ConnectionGenerationState
from google.adk.mcp_apps.affinity.generations import GenerationHold
from google.adk.mcp_apps.binding.registry import McpAppBindingRegistry
from google.adk.mcp_apps.binding.spec import McpToolsetSpec
from google.adk.mcp_apps.contracts.local_dev import LocalDevKeyProvider
from google.adk.mcp_apps.contracts.principal_resolver import Principal
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.session_lifecycle_store import CreationReceipt
from google.adk.mcp_apps.contracts.session_lifecycle_store import LifecycleState
from google.adk.mcp_apps.profile import ConnectionAffinityPolicy
from google.adk.mcp_apps.profile import CrossSessionSharing
from google.adk.mcp_apps.profile import local_dev_profile
from google.adk.runners import InMemoryRunner
from google.genai import types as genai_types
from mcp_apps_conformance_server import names
from mcp_apps_conformance_server.round_robin import build_proxy_app
import pytest
from scripted_llm import ScriptedLlm
import uvicorn

pytestmark = pytest.mark.integration

TIMEOUT = 30.0
TOOLSET = "conf"
APP = "probe"
NONCE = re.compile(r"View opened with nonce ([0-9a-f]+)")
CONTRACT = "conformance-view-handles/v1"
SECURITY_DOMAIN_LABEL = b"adk-mcp-apps/security-domain/v1"
SESSION_SCOPE_LABEL = b"adk-mcp-apps/session-scope/v1"
CREDENTIAL_LABEL = b"adk-mcp-apps/credential-context/v1"
TRANSPORTS = ["stdio", "legacy_http"]
MODERN_FLAG = "ADK_ENABLE_MCP_MODERN_PROTOCOL"


# --- Helpers -----------------------------------------------------------------


def _spec(transport: str, mcp_apps: Any, server: Any) -> McpToolsetSpec:
  if transport == "stdio":
    return stdio_spec(mcp_apps.stdio_parameters())
  return http_spec(server.url)


def _registry(
    spec: McpToolsetSpec, profile: Any = None
) -> McpAppBindingRegistry:
  return McpAppBindingRegistry(
      {TOOLSET: spec},
      profile if profile is not None else local_dev_profile(),
      allow_dev_providers=True,
  )


def _sharing_profile(**overrides: Any) -> Any:
  return local_dev_profile(
      connection_affinity=ConnectionAffinityPolicy(
          cross_session_sharing=CrossSessionSharing(
              server_handle_contract=CONTRACT
          )
      ),
      **overrides,
  )


def _digest(key_id: str, secret: bytes, label: bytes, value: Any) -> str:
  """An independent HMAC: RFC 8785 of a list of strings and integers."""
  subkey = hmac.new(secret, label, hashlib.sha256).digest()
  message = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
  mac = hmac.new(subkey, message.encode("utf-8"), hashlib.sha256).hexdigest()
  return f"{key_id}:{mac}"


@dataclasses.dataclass
class View:
  """One rendered View: its Session, nonce and hold on its generation."""

  session: SessionKey
  nonce: str
  hold: GenerationHold

  @property
  def generation(self) -> ConnectionGeneration:
    return self.hold.generation


class Host:
  """A registry, a real Runner on the scripted model, and View helpers."""

  def __init__(self, registry: McpAppBindingRegistry, **agent: Any):
    self.registry = registry
    self.runner = InMemoryRunner(
        agent=LlmAgent(
            name="probe",
            model=ScriptedLlm(steps=[[(names.OPEN_VIEW, {})]]),
            tools=[registry.toolset(TOOLSET)],
            **agent,
        ),
        app_name=APP,
    )
    self.server_id = registry.server_id(TOOLSET)

  async def session(
      self, user_id: str = "u", session_id: Optional[str] = None
  ) -> SessionKey:
    session = await self.runner.session_service.create_session(
        app_name=APP, user_id=user_id, session_id=session_id
    )
    return SessionKey(APP, user_id, session.id)

  async def turn(
      self, session: SessionKey, principal: Optional[Principal] = None
  ) -> genai_types.FunctionResponse:
    """One real Runner turn whose model calls `open_view`; its response."""
    return await run_turn(self.runner, session, principal)

  async def open_view(
      self, session: SessionKey, principal: Optional[Principal] = None
  ) -> View:
    """One real Runner turn whose model calls `open_view`; takes the View."""
    response = await self.turn(session, principal)
    match = NONCE.search(response.response["content"][0]["text"])
    assert match, response.response
    hold = self.registry.render_reservations.take(TOOLSET, session, response.id)
    assert hold is not None, "the accepted UI result reserved nothing"
    return View(session, match.group(1), hold)

  async def followup(self, view: View, nonce: str) -> dict[str, Any]:
    """The View's app-only `app_followup(nonce)`; returns the server's data."""
    return await app_followup(view.hold, nonce, self.server_id)

  async def assert_isolated(self, views: list[View]) -> list[dict[str, Any]]:
    """Each View's follow-up sees its own nonce and none of the others'.

    Runs every follow-up concurrently. Returns each View's own answer.
    """
    pairs = list(itertools.product(range(len(views)), repeat=2))
    answers = await asyncio.gather(
        *(self.followup(views[i], views[j].nonce) for i, j in pairs)
    )
    own = {}
    for (i, j), answer in zip(pairs, answers):
      if i == j:
        assert answer["verdict"] == "ok", answer
        own[i] = answer
      else:
        assert answer["verdict"] != "ok", (i, j, answer)
    return [own[i] for i in range(len(views))]

  async def whoami(self, hold: GenerationHold) -> dict[str, Any]:
    result = await hold.call_tool(names.WHOAMI, {})
    assert isinstance(result.structured_content, dict), result
    return result.structured_content


@contextlib.asynccontextmanager
async def _host(
    registry: McpAppBindingRegistry, **agent: Any
) -> AsyncGenerator[Host, None]:
  async with registry:
    host = Host(registry, **agent)
    try:
      yield host
    finally:
      await host.runner.close()


def _assert_distinct_generations(views: list[View]) -> None:
  ids = [v.hold.generation_id for v in views]
  assert len(set(ids)) == len(ids), ids
  keys = [v.generation.key for v in views]
  assert len(set(keys)) == len(keys), keys


@dataclasses.dataclass
class Recorded:
  """One HTTP request as it reached the server's front door."""

  method: str
  headers: dict[str, str]
  body: bytearray
  response_headers: dict[str, str] = dataclasses.field(default_factory=dict)

  def message(self) -> dict[str, Any]:
    """The JSON-RPC message of a POST (empty for anything else)."""
    if self.method != "POST" or not self.body:
      return {}
    value = json.loads(bytes(self.body))
    return value if isinstance(value, dict) else {}

  @property
  def session_id(self) -> Optional[str]:
    return self.headers.get("mcp-session-id") or self.response_headers.get(
        "mcp-session-id"
    )


class RecordingFrontDoor:
  """The fixture's proxy (one backend) in front of a server, recording.

  Runs uvicorn on its own thread and loop, on a socket bound and listening
  before the thread starts, so it is usable as soon as it is constructed.
  """

  def __init__(self, backend: str):
    self.requests: list[Recorded] = []
    self._lock = threading.Lock()
    inner = build_proxy_app([backend])

    async def app(scope: Any, receive: Any, send: Any) -> None:
      if scope["type"] != "http":
        await inner(scope, receive, send)
        return
      entry = Recorded(
          scope["method"],
          {k.decode().lower(): v.decode() for k, v in scope["headers"]},
          bytearray(),
      )
      with self._lock:
        self.requests.append(entry)

      async def recording_receive() -> Any:
        message = await receive()
        if message["type"] == "http.request":
          entry.body.extend(message.get("body", b""))
        return message

      async def recording_send(message: Any) -> None:
        if message["type"] == "http.response.start":
          entry.response_headers = {
              k.decode().lower(): v.decode()
              for k, v in message.get("headers", [])
          }
        await send(message)

      await inner(scope, recording_receive, recording_send)

    self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    self._sock.bind(("127.0.0.1", 0))
    self._sock.listen(128)
    port = self._sock.getsockname()[1]
    self.url = f"http://127.0.0.1:{port}/mcp"
    self._server = uvicorn.Server(
        uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=2,
        )
    )
    self._thread = threading.Thread(
        target=self._server.run,
        kwargs={"sockets": [self._sock]},
        name="recording-front-door",
        daemon=True,
    )
    self._thread.start()

  def snapshot(self) -> list[Recorded]:
    with self._lock:
      return list(self.requests)

  def app_safe_sessions(self) -> dict[str, list[Recorded]]:
    """The requests of each session whose `initialize` advertised Apps."""
    requests = self.snapshot()
    advertising = set()
    for request in requests:
      message = request.message()
      if message.get("method") == "initialize":
        capabilities = message["params"].get("capabilities") or {}
        if names.EXTENSION_ID in (capabilities.get("extensions") or {}):
          advertising.add(request.response_headers.get("mcp-session-id"))
    advertising.discard(None)
    return {
        sid: [r for r in requests if r.session_id == sid] for sid in advertising
    }

  def find_call(self, tool: str, **arguments: Any) -> Recorded:
    """The one `tools/call` of `tool` with these arguments."""
    found = []
    for request in self.snapshot():
      message = request.message()
      params = message.get("params") or {}
      if (
          message.get("method") == "tools/call"
          and params.get("name") == tool
          and all(
              (params.get("arguments") or {}).get(k) == v
              for k, v in arguments.items()
          )
      ):
        found.append(request)
    assert len(found) == 1, found
    return found[0]

  def close(self) -> None:
    self._server.should_exit = True
    self._thread.join(TIMEOUT)
    self._sock.close()


@pytest.fixture
def front_door(legacy_http_server: Any) -> Iterator[RecordingFrontDoor]:
  """A recording front door to the module's legacy stateful HTTP server."""
  door = RecordingFrontDoor(legacy_http_server.url)
  try:
    yield door
  finally:
    door.close()


async def _recreate(store: Any, session: SessionKey) -> int:
  """Drives the Session's lifecycle record to a new `ACTIVE` incarnation.

  Deletes the current incarnation first if there is one.

  Returns:
    The new incarnation.
  """
  record = await store.read(session)
  if record.state is LifecycleState.ACTIVE:
    await store.begin_deletion(session, incarnation=record.incarnation)
    record = await store.complete_deletion(
        session, incarnation=record.incarnation
    )
  reserved = await store.reserve_creation(
      session, expected=record, operation_id=f"create-{uuid.uuid4().hex}"
  )
  assert reserved.operation_id is not None
  active = await store.activate(
      session,
      receipt=CreationReceipt(
          reserved.operation_id, reserved.incarnation, "sha256:no-imports"
      ),
  )
  assert active.state is LifecycleState.ACTIVE
  return active.incarnation


# --- P2-SEC-01 / P2-SEC-02 -----------------------------------------------------


@pytest.mark.conformance("P2-SEC-01")
async def test_identical_http_headers_two_principals(
    legacy_http_server: Any,
) -> None:
  """P2-SEC-01: two principals behind one static service-account header
  write their own connection state; each View's follow-up sees only its own,
  on separate generations and server connections."""
  spec = http_spec(
      legacy_http_server.url,
      headers={"Authorization": "Bearer shared-service-account"},
  )
  async with _host(_registry(spec)) as host:
    alice_session = await host.session("alice")
    bob_session = await host.session("bob")
    alice = await host.open_view(alice_session, Principal("alice"))
    bob = await host.open_view(bob_session, Principal("bob"))

    _assert_distinct_generations([alice, bob])
    a_key, b_key = alice.generation.key, bob.generation.key
    assert a_key.credential_context == b_key.credential_context  # Same headers.
    assert a_key.security_domain != b_key.security_domain
    own = await host.assert_isolated([alice, bob])
    assert own[0]["connectionId"] != own[1]["connectionId"]
    cross = await host.followup(alice, bob.nonce)
    assert cross["verdict"] == "wrong-connection"  # One server, two sessions.
    with pytest.raises(GenerationAdmissionError):
      alice.generation.check_admission(
          b_key.security_domain, b_key.session_scope, None
      )


@pytest.mark.conformance("P2-SEC-02")
async def test_stdio_constant_key_two_principals(
    mcp_apps: Any,
) -> None:
  """P2-SEC-02: on stdio (upstream pools it under one constant key) two
  principals get separate app-safe generations and processes, and each
  View's follow-up sees only its own state."""
  before = mcp_apps.child_pids()
  async with _host(_registry(stdio_spec(mcp_apps.stdio_parameters()))) as host:
    alice = await host.open_view(await host.session("alice"), Principal("a"))
    bob = await host.open_view(await host.session("bob"), Principal("b"))

    _assert_distinct_generations([alice, bob])
    own = await host.assert_isolated([alice, bob])
    pids = {answer["pid"] for answer in own}
    assert len(pids) == 2 and pids <= mcp_apps.child_pids() - before
    cross = await host.followup(bob, alice.nonce)
    assert cross["verdict"] == "unknown-nonce"  # Another process entirely.
  assert mcp_apps.child_pids() == before


# --- P2-SEC-03 -----------------------------------------------------------------


@pytest.mark.conformance("P2-SEC-03")
async def test_security_domain_is_an_hmac_of_the_principal(
    legacy_http_server: Any, caplog: pytest.LogCaptureFixture
) -> None:
  """P2-SEC-03: the security-domain key is HMAC(principal) under the host
  key (checked against an independent HMAC), differs by principal and by
  key, and the raw principal id never appears in a key, a generation, a
  hold, an admission error or a log line."""
  caplog.set_level(logging.DEBUG, logger="google_adk")
  principals = {
      "alice": Principal("principal-alice-7c1e9b"),
      "bob": Principal("principal-bob-2f40d8"),
  }
  keys = {"k1": b"\x11" * 32, "k2": b"\x22" * 32}
  domains: dict[tuple[str, str], str] = {}
  texts: list[str] = []
  for key_id, secret in keys.items():
    profile = local_dev_profile(
        key_provider=LocalDevKeyProvider(key_id=key_id, secret=secret)
    )
    spec = http_spec(legacy_http_server.url)
    async with _host(_registry(spec, profile)) as host:
      session = await host.session("u")
      views = {
          name: await host.open_view(session, principal)
          for name, principal in principals.items()
      }
      _assert_distinct_generations(list(views.values()))
      for name, view in views.items():
        key = view.generation.key
        expected = _digest(
            key_id,
            secret,
            SECURITY_DOMAIN_LABEL,
            ["principal", principals[name].principal_id],
        )
        assert key.security_domain == expected
        domains[(key_id, name)] = key.security_domain
        # The Session scope is an HMAC too (incarnation 1: the Session had
        # no record and was adopted at its first app-safe listing).
        assert key.session_scope == _digest(
            key_id,
            secret,
            SESSION_SCOPE_LABEL,
            [APP, session.user_id, session.session_id, 1],
        )
        texts += [repr(key), *map(str, dataclasses.astuple(key))]
        texts += [repr(view.generation), repr(view.hold)]
      with pytest.raises(GenerationAdmissionError) as info:
        views["alice"].generation.check_admission(
            views["bob"].generation.key.security_domain,
            views["bob"].generation.key.session_scope,
            None,
        )
      texts += [str(info.value), repr(info.value)]
  assert len(set(domains.values())) == 4  # By principal and by key.

  texts += [record.getMessage() for record in caplog.records]
  texts.append(caplog.text)
  assert caplog.records  # DEBUG logging of the run was captured.
  for principal in principals.values():
    leaks = [t for t in texts if principal.principal_id in t]
    assert not leaks, leaks


@pytest.mark.conformance("P2-SEC-03")
@pytest.mark.parametrize("kind", ["per-session", "shared", "shared-modern"])
async def test_every_generation_refuses_another_security_domain(
    kind: str,
    mcp_apps: Any,
    modern_http_server: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
  """P2-SEC-03 at admission: whatever a generation's sharing (one Session's
  legacy generation; a legacy one shared across Sessions by the profile's
  opt-in; a sessionless modern one shared the same way), a caller of
  another security domain is refused by the domain check itself, even
  presenting the generation's own Session scope and handle contract,
  while the generation's own domain is admitted."""
  if kind == "shared-modern":
    monkeypatch.setenv(MODERN_FLAG, "1")
    spec = http_spec(modern_http_server.url)
  else:
    monkeypatch.delenv(MODERN_FLAG, raising=False)
    spec = stdio_spec(mcp_apps.stdio_parameters())
  profile = local_dev_profile() if kind == "per-session" else _sharing_profile()
  key = profile.key_provider.active_key()
  async with _host(_registry(spec, profile)) as host:
    view = await host.open_view(await host.session("u"), Principal("alice"))
    generation, own = view.generation, view.generation.key
    assert (own.session_scope is None) is (kind != "per-session")
    assert (generation.era is ConnectionEra.MODERN) is (kind == "shared-modern")
    generation.check_admission(own.security_domain, own.session_scope, CONTRACT)
    for someone in ("bob", "alice@another-idp"):
      domain = _digest(
          key.key_id, key.secret, SECURITY_DOMAIN_LABEL, ["principal", someone]
      )
      with pytest.raises(GenerationAdmissionError) as info:
        generation.check_admission(domain, own.session_scope, CONTRACT)
      assert info.value.reason is not AdmissionRefusal.SHARING_NOT_DECLARED
      assert "another security domain" in str(info.value)


# --- P2-SEC-04 / P2-SEC-05 -------------------------------------------------------


@pytest.mark.conformance("P2-SEC-04")
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_two_sessions_of_one_principal_are_isolated(
    transport: str, mcp_apps: Any, legacy_http_server: Any
) -> None:
  """P2-SEC-04: two Sessions of one principal each set their own nonce; by
  default each follow-up sees only its own (the Session incarnation is in
  the key; ratification 7(k))."""
  spec = _spec(transport, mcp_apps, legacy_http_server)
  async with _host(_registry(spec)) as host:
    first = await host.open_view(await host.session("u"))
    second = await host.open_view(await host.session("u"))
    _assert_distinct_generations([first, second])
    one, two = first.generation.key, second.generation.key
    assert one.security_domain == two.security_domain  # One principal.
    assert one.session_scope != two.session_scope
    await host.assert_isolated([first, second])
    with pytest.raises(GenerationAdmissionError, match="sharing_not_declared"):
      first.generation.check_admission(
          two.security_domain, two.session_scope, CONTRACT
      )


@pytest.mark.conformance("P2-SEC-05")
async def test_simultaneous_views_stay_isolated(
    legacy_http_server: Any,
) -> None:
  """P2-SEC-05: three Views (two principals; two Sessions of one of them)
  are opened by concurrent turns whose UI calls are all in flight at once
  (a barrier in the before-tool callback), then all nine follow-ups run
  concurrently: no crossover of connection state."""
  barrier = asyncio.Barrier(3)

  async def all_in_flight(
      tool: Any, args: Any, tool_context: Any
  ) -> Optional[dict[str, Any]]:
    del tool, args, tool_context
    await asyncio.wait_for(barrier.wait(), TIMEOUT)
    return None

  spec = http_spec(legacy_http_server.url)
  async with _host(_registry(spec), before_tool_callback=all_in_flight) as host:
    sessions = [
        (await host.session("alice"), Principal("alice")),
        (await host.session("alice"), Principal("alice")),
        (await host.session("bob"), Principal("bob")),
    ]
    views = list(
        await asyncio.gather(
            *(host.open_view(session, who) for session, who in sessions)
        )
    )
    _assert_distinct_generations(views)
    own = await host.assert_isolated(views)
    assert len({answer["connectionId"] for answer in own}) == 3


# --- P2-SEC-06 -----------------------------------------------------------------


@pytest.mark.conformance("P2-SEC-06")
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_session_recreation_gets_a_new_generation(
    transport: str, mcp_apps: Any, legacy_http_server: Any
) -> None:
  """P2-SEC-06: deleting a Session and recreating it under the same id (a
  new incarnation in the profile's SessionLifecycleStore) yields a new
  generation key, and no connection state carries over."""
  profile = local_dev_profile()
  store = profile.session_lifecycle_store
  key = profile.key_provider.active_key()
  spec = _spec(transport, mcp_apps, legacy_http_server)
  async with _host(_registry(spec, profile)) as host:
    session = await host.session("u")
    assert await _recreate(store, session) == 1
    old = await host.open_view(session)

    # Teardown and recreation: the ADK Session and its lifecycle record.
    await host.runner.session_service.delete_session(
        app_name=APP, user_id=session.user_id, session_id=session.session_id
    )
    again = await host.session("u", session_id=session.session_id)
    assert again == session
    assert await _recreate(store, session) == 2
    new = await host.open_view(session)

    _assert_distinct_generations([old, new])
    old_key, new_key = old.generation.key, new.generation.key
    assert new_key.security_domain == old_key.security_domain
    for incarnation, scope in ((1, old_key), (2, new_key)):
      assert scope.session_scope == _digest(
          key.key_id,
          key.secret,
          SESSION_SCOPE_LABEL,
          [APP, "u", session.session_id, incarnation],
      )
    stale = await host.followup(new, old.nonce)
    assert stale["verdict"] != "ok", stale  # Nothing carried over.
    assert (await host.followup(new, new.nonce))["verdict"] == "ok"
    with pytest.raises(GenerationAdmissionError, match="sharing_not_declared"):
      old.generation.check_admission(
          new_key.security_domain, new_key.session_scope, None
      )


# --- P2-SEC-07 -----------------------------------------------------------------


@pytest.mark.conformance("P2-SEC-07")
async def test_rotated_credentials_never_share_the_old_generation(
    legacy_http_server: Any,
) -> None:
  """P2-SEC-07: a principal's rotated credentials get a new generation; the
  old one is invalidated and never serves the rotated context (nor the old
  credentials again); another principal's generation is untouched."""
  tokens = {"alice": "Bearer alice-1", "bob": "Bearer bob-1"}
  spec = http_spec(
      legacy_http_server.url,
      header_provider=lambda ctx: {"Authorization": tokens[ctx.user_id]},
  )
  async with _host(_registry(spec)) as host:
    alice_session = await host.session("alice")
    first = await host.open_view(alice_session)
    bob = await host.open_view(await host.session("bob"))

    tokens["alice"] = "Bearer alice-2"
    rotated = await host.open_view(alice_session)
    assert rotated.hold.generation_id != first.hold.generation_id
    assert first.generation.invalidation_reason is (
        InvalidationReason.CREDENTIAL_ROTATED
    )
    with pytest.raises(GenerationInvalidatedError):
      await host.followup(first, first.nonce)
    stale = await host.followup(rotated, first.nonce)
    assert stale["verdict"] == "connection-closed"
    assert bob.generation.state is ConnectionGenerationState.LIVE
    assert (await host.followup(bob, bob.nonce))["verdict"] == "ok"

    # Back to the first credentials: a new generation, not the old one.
    tokens["alice"] = "Bearer alice-1"
    back = await host.open_view(alice_session)
    assert back.generation.key == first.generation.key
    assert back.hold.generation_id not in {
        first.hold.generation_id,
        rotated.hold.generation_id,
    }
    assert first.generation.state is ConnectionGenerationState.INVALIDATED
    assert (await host.followup(back, first.nonce))["verdict"] != "ok"
    assert (await host.followup(back, back.nonce))["verdict"] == "ok"


# --- P2-SEC-08 -----------------------------------------------------------------


@pytest.mark.conformance("P2-SEC-08")
async def test_principal_remapping_gets_a_new_domain(
    legacy_http_server: Any,
) -> None:
  """P2-SEC-08: the same Session under a remapped acting principal has a
  different security-domain key; the old generation is not reused (and
  refuses the new domain at admission)."""
  spec = http_spec(legacy_http_server.url)
  async with _host(_registry(spec)) as host:
    session = await host.session("u")
    before = await host.open_view(session, Principal("idp-1:alice"))
    after = await host.open_view(session, Principal("idp-2:alice"))

    _assert_distinct_generations([before, after])
    old_key, new_key = before.generation.key, after.generation.key
    assert old_key.security_domain != new_key.security_domain
    assert (
        dataclasses.replace(old_key, security_domain=new_key.security_domain)
        == new_key
    )  # Only the domain changed.
    assert before.generation.state is ConnectionGenerationState.LIVE
    with pytest.raises(GenerationAdmissionError):
      before.generation.check_admission(
          new_key.security_domain, new_key.session_scope, None
      )
    await host.assert_isolated([before, after])


# --- P2-SEC-09 -----------------------------------------------------------------


@pytest.mark.conformance("P2-SEC-09")
async def test_explicit_share_opt_in(mcp_apps: Any) -> None:
  """P2-SEC-09: under the profile's cross-Session opt-in two Sessions of one
  principal share one generation (one process), which carries the declared
  handle contract and checks it at admission; a generation opened without
  the opt-in refuses another Session (SHARING_NOT_DECLARED)."""
  before = mcp_apps.child_pids()
  profile = _sharing_profile()
  key = profile.key_provider.active_key()
  async with _host(
      _registry(stdio_spec(mcp_apps.stdio_parameters()), profile)
  ) as host:
    one, two = await host.session("u"), await host.session("u")
    first = await host.open_view(one)
    second = await host.open_view(two)
    shared = first.generation
    assert second.generation is shared
    assert shared.handle_contract == CONTRACT
    assert shared.key.session_scope is None
    assert len(host.registry.connections.live()) == 1
    assert (await host.whoami(first.hold))["pid"] == (
        await host.whoami(second.hold)
    )["pid"]
    # The declared sharing: Session two's View reaches Session one's state.
    assert (await host.followup(second, first.nonce))["verdict"] == "ok"

    domain = shared.key.security_domain
    other_scope = _digest(
        key.key_id,
        key.secret,
        SESSION_SCOPE_LABEL,
        [APP, "u", "another-session", 0],
    )
    shared.check_admission(domain, other_scope, CONTRACT)
    for contract in (None, "another-contract/v1"):
      with pytest.raises(
          GenerationAdmissionError, match="sharing_not_declared"
      ):
        shared.check_admission(domain, other_scope, contract)
    with pytest.raises(GenerationAdmissionError) as info:
      shared.check_admission(
          _digest(
              key.key_id,
              key.secret,
              SECURITY_DOMAIN_LABEL,
              ["principal", "someone-else"],
          ),
          other_scope,
          CONTRACT,
      )
    assert info.value.reason is not AdmissionRefusal.SHARING_NOT_DECLARED

  # Without the opt-in: one generation per Session, each refusing sharing.
  async with _host(_registry(stdio_spec(mcp_apps.stdio_parameters()))) as host:
    one, two = await host.session("u"), await host.session("u")
    first = await host.open_view(one)
    second = await host.open_view(two)
    _assert_distinct_generations([first, second])
    assert first.generation.handle_contract is None
    other = second.generation.key
    with pytest.raises(GenerationAdmissionError, match="sharing_not_declared"):
      first.generation.check_admission(
          other.security_domain, other.session_scope, CONTRACT
      )
    await host.assert_isolated([first, second])
  assert mcp_apps.child_pids() == before


# --- P2-SEC-10 -----------------------------------------------------------------


@pytest.mark.conformance("P2-SEC-10")
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_no_stateful_generation_is_shared_without_opt_in(
    transport: str, mcp_apps: Any, legacy_http_server: Any
) -> None:
  """P2-SEC-10: without the opt-in, every (principal, Session) combination
  gets its own legacy generation: all ids and keys distinct, every
  follow-up isolated, and every generation refusing every other
  combination at admission."""
  before = mcp_apps.child_pids()
  spec = _spec(transport, mcp_apps, legacy_http_server)
  async with _host(_registry(spec)) as host:
    sessions = [
        await host.session("u"),
        await host.session("u"),
        await host.session("w"),
    ]
    principals = [None, Principal("alice"), Principal("bob")]
    views = []
    for session, principal in itertools.product(sessions, principals):
      views.append(await host.open_view(session, principal))
    _assert_distinct_generations(views)
    assert all(v.generation.handle_contract is None for v in views)
    own = await host.assert_isolated(views)
    assert len({answer["connectionId"] for answer in own}) == len(views)
    if transport == "stdio":
      assert len({answer["pid"] for answer in own}) == len(views)
    for holder, caller in itertools.permutations(views, 2):
      key = caller.generation.key
      with pytest.raises(GenerationAdmissionError) as info:
        holder.generation.check_admission(
            key.security_domain, key.session_scope, None
        )
      # Another principal is refused by the domain check itself; the same
      # principal's other Session by the Session-scope check.
      other_domain = (
          key.security_domain != holder.generation.key.security_domain
      )
      assert (
          info.value.reason is AdmissionRefusal.SHARING_NOT_DECLARED
      ) is not other_domain, (holder.session, caller.session)
  assert mcp_apps.child_pids() == before


# --- P2-CRED-01 / P2-CRED-02 -------------------------------------------------------


@pytest.mark.conformance("P2-CRED-01")
async def test_app_paths_carry_the_callers_own_headers(
    front_door: RecordingFrontDoor,
) -> None:
  """P2-CRED-01: app listings, calls and reads (the View's own and the
  host's bootstrap read) derive their MCP session from the caller's context
  exactly as model calls do: the server receives user A's header on A's
  app-safe session, B's on B's, and nothing arrives without a user's
  header (no shared privileged client)."""
  contexts: dict[str, Any] = {}

  def per_user(ctx: Any) -> dict[str, str]:
    contexts[ctx.user_id] = ctx
    return {"Authorization": f"Bearer token-for-{ctx.user_id}"}

  spec = http_spec(front_door.url, header_provider=per_user)
  async with _host(_registry(spec)) as host:
    views = {
        user: await host.open_view(await host.session(user))
        for user in ("alice", "bob")
    }
    for user, view in views.items():
      await host.followup(view, view.nonce)
      await view.hold.read_resource(names.VIEW_URI)  # The View's own read.
      # The host's bootstrap read, through the proxy with the user's context.
      proxy = host.registry.lookup(TOOLSET)
      await proxy.read_resource_by_uri(names.VIEW_URI, contexts[user])

  sessions = front_door.app_safe_sessions()
  assert len(sessions) == 2, sessions.keys()
  owner = {}
  for sid, requests in sessions.items():
    tokens = {r.headers.get("authorization") for r in requests}
    assert len(tokens) == 1, (sid, tokens)
    owner[sid] = tokens.pop()
  for user, view in views.items():
    token = f"Bearer token-for-{user}"
    call = front_door.find_call(names.APP_FOLLOWUP, nonce=view.nonce)
    assert call.headers["authorization"] == token
    assert owner[call.session_id] == token
    methods = [r.message().get("method") for r in sessions[call.session_id]]
    assert "tools/list" in methods  # The app call's admission listing.
    assert methods.count("resources/read") == 2  # The View's and the host's.
    assert methods.count("tools/call") >= 2  # open_view and app_followup.
  everything = front_door.snapshot()
  assert everything
  assert all(
      r.headers.get("authorization", "").startswith("Bearer token-for-")
      for r in everything
  ), [r.headers for r in everything]


@pytest.mark.conformance("P2-CRED-02")
async def test_no_credential_value_leaks(
    front_door: RecordingFrontDoor, caplog: pytest.LogCaptureFixture
) -> None:
  """P2-CRED-02: with DEBUG logging on, a distinctive credential reaches the
  server yet appears in no generation key or repr, no hold, no affinity
  error (a rotation's GenerationInvalidatedError, a mid-turn rotation's
  StaleToolHandleError), no log line and no Session Event."""
  caplog.set_level(logging.DEBUG, logger="google_adk")
  secret = f"cred-{uuid.uuid4().hex}"
  credential = {"value": f"Bearer {secret}-one"}

  async def rotate_mid_turn(
      tool: Any, args: Any, tool_context: Any
  ) -> Optional[dict[str, Any]]:
    del tool, args, tool_context
    if rotate.is_set():
      credential["value"] = f"Bearer {secret}-two"
    return None

  rotate = asyncio.Event()
  spec = http_spec(
      front_door.url,
      header_provider=lambda ctx: {"Authorization": credential["value"]},
  )
  texts: list[str] = []
  errors: list[BaseException] = []
  async with _host(
      _registry(spec),
      before_tool_callback=rotate_mid_turn,
  ) as host:
    session = await host.session("u")
    view = await host.open_view(session)
    first = view.generation
    # The next turn lists its tools under the old credential and calls
    # under the new one: the handle is stale, and the old generation rotates.
    rotate.set()
    failed = await host.turn(session)
    assert "is stale" in failed.response["error"], failed.response
    errors += [
        record.exc_info[1]
        for record in caplog.records
        if record.exc_info
        and isinstance(record.exc_info[1], StaleToolHandleError)
    ]
    assert len(errors) == 1, caplog.records  # The tool error, logged.
    assert first.invalidation_reason is InvalidationReason.CREDENTIAL_ROTATED
    with pytest.raises(GenerationInvalidatedError) as dead:
      await host.followup(view, view.nonce)
    errors.append(dead.value)

    for generation in host.registry.connections.generations():
      texts += [repr(generation), repr(generation.key)]
      texts += map(str, dataclasses.astuple(generation.key))
    texts.append(repr(view.hold))
    adk_session = await host.runner.session_service.get_session(
        app_name=APP, user_id=session.user_id, session_id=session.session_id
    )
    assert adk_session is not None and adk_session.events
    texts.append(adk_session.model_dump_json())

  for error in errors:
    texts += [str(error), repr(error), *map(str, error.args)]
  texts += [record.getMessage() for record in caplog.records]
  texts.append(caplog.text)
  leaks = [t for t in texts if secret in t]
  assert not leaks, leaks
  # Not vacuous: both credentials did reach the server.
  sent = {r.headers.get("authorization") for r in front_door.snapshot()}
  assert {f"Bearer {secret}-one", f"Bearer {secret}-two"} <= sent


@pytest.mark.conformance("P2-SEC-06")
@pytest.mark.parametrize("transport", ["stdio", "legacy_http"])
async def test_deletion_revokes_the_incarnations_generations(
    transport: str, mcp_apps: Any, legacy_http_server: Any
) -> None:
  """P2-SEC-06: deleting a Session ends its incarnation's connections.

  `registry.revoke_session` is the lifecycle manager's phase-1 revoke hook:
  every View of the deleted incarnation fails typed (`SESSION_DELETED`)
  and its connection closes, while another Session's View keeps working.
  """
  profile = local_dev_profile()
  store = profile.session_lifecycle_store
  spec = _spec(transport, mcp_apps, legacy_http_server)
  async with _host(_registry(spec, profile)) as host:
    doomed = await host.session("u")
    assert await _recreate(store, doomed) == 1
    kept = await host.session("u")
    views = [await host.open_view(doomed) for _ in range(2)]
    other = await host.open_view(kept)
    generation = views[0].generation
    assert views[1].generation is generation

    revoked = await host.registry.revoke_session(doomed, 1)
    assert revoked == (generation.generation_id,)
    assert await host.registry.revoke_session(doomed, 1) == ()  # Idempotent.
    assert generation.invalidation_reason is (
        InvalidationReason.SESSION_DELETED
    )
    for view in views:
      with pytest.raises(GenerationInvalidatedError) as info:
        await host.followup(view, view.nonce)
      assert info.value.reason is InvalidationReason.SESSION_DELETED
    assert (await host.followup(other, other.nonce))["verdict"] == "ok"
