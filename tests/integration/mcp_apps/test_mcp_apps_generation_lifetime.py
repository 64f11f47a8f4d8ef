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

"""The lifetime of app-safe connection generations, against real servers.

Cases P2-AFF-18 .. P2-AFF-25 (RFC §6, "Connection ownership, the registry
loop, and multi-View lifetime"). A real `Runner` turn's scripted model calls
the conformance server's UI tool `open_view`, which mints a nonce into the
calling connection's state; the accepted result reserves its app-safe
generation, and the test takes that reservation as the View's hold
(`registry.render_reservations.take`). A View's app call is
`call_app_tool(hold, "app_followup", {"nonce": ...})`: the server answers
`ok` only on the connection that minted the nonce, and otherwise names why
(`unknown-nonce`: another process; `wrong-connection`; `connection-closed`:
the minting connection has closed). A generation's process is named by the
server's `whoami` (its pid), and a stdio process's death is read from
/proc (`child_pids`).

Time is the registry pool's clock, replaced by a controllable one
(`registry._connection_clock` is patched before the registry is built), so
idle eviction, maximum lifetime and credential expiry are driven by explicit
clock steps and sweeps. In-flight operations are parked on events. Nothing
sleeps to order anything.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
import contextlib
import dataclasses
import os
import re
import signal
from typing import Any
from typing import Optional

from binding_support import app_followup
from binding_support import http_spec
from binding_support import run_turn
from binding_support import stdio_spec
from google.adk.agents.llm_agent import LlmAgent
from google.adk.mcp_apps.affinity.errors import GenerationInvalidatedError
from google.adk.mcp_apps.affinity.errors import HoldReleasedError
from google.adk.mcp_apps.affinity.errors import InvalidationReason
from google.adk.mcp_apps.affinity.generations import ConnectionGeneration
from google.adk.mcp_apps.affinity.generations import ConnectionGenerationState
from google.adk.mcp_apps.affinity.generations import GenerationHold
from google.adk.mcp_apps.affinity.generations import HoldKind
from google.adk.mcp_apps.binding import registry as registry_module
from google.adk.mcp_apps.binding.registry import McpAppBindingRegistry
from google.adk.mcp_apps.binding.spec import McpToolsetSpec
from google.adk.mcp_apps.contracts.principal_resolver import Principal
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.profile import ConnectionAffinityPolicy
from google.adk.mcp_apps.profile import local_dev_profile
from google.adk.runners import InMemoryRunner
from mcp_apps_conformance_server import names
import pytest
from scripted_llm import ScriptedLlm

pytestmark = pytest.mark.integration

TIMEOUT = 30.0
TOOLSET = "conf"
APP = "probe"
NONCE = re.compile(r"View opened with nonce ([0-9a-f]+)")
R = InvalidationReason
# Idle eviction after 60 s; the lifetime bound never reached.
IDLE_EVICTION = {"idle_eviction_seconds": 60, "max_lifetime_seconds": 100_000}


# --- Helpers -----------------------------------------------------------------


class Clock:
  """The registry pool's clock, stepped by the test."""

  def __init__(self) -> None:
    self.now = 1000.0

  def __call__(self) -> float:
    return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
  """Replaces the pool clock of every registry the test builds afterwards."""
  fake = Clock()
  monkeypatch.setattr(registry_module, "_connection_clock", fake)
  return fake


def _registry(spec: McpToolsetSpec, **affinity: Any) -> McpAppBindingRegistry:
  """A registry with one toolset and the dev profile's affinity policy."""
  profile = local_dev_profile(
      connection_affinity=ConnectionAffinityPolicy(**affinity)
  )
  return McpAppBindingRegistry(
      {TOOLSET: spec}, profile, allow_dev_providers=True
  )


def _stdio_registry(mcp_apps: Any, **affinity: Any) -> McpAppBindingRegistry:
  """`_registry` on a stdio conformance server."""
  return _registry(stdio_spec(mcp_apps.stdio_parameters()), **affinity)


@dataclasses.dataclass(frozen=True)
class Turn:
  """An accepted `open_view` result: its function call and minted nonce."""

  session: SessionKey
  function_call_id: str
  nonce: str


@dataclasses.dataclass(frozen=True)
class View:
  """One rendered View: its turn and its hold on its generation."""

  turn: Turn
  hold: GenerationHold

  @property
  def nonce(self) -> str:
    return self.turn.nonce

  @property
  def generation(self) -> ConnectionGeneration:
    return self.hold.generation


class Host:
  """A registry, a real Runner on the scripted model, and View helpers."""

  def __init__(self, registry: McpAppBindingRegistry):
    self.registry = registry
    agent = LlmAgent(
        name="probe",
        model=ScriptedLlm(steps=[[(names.OPEN_VIEW, {})]]),
        tools=[registry.toolset(TOOLSET)],
    )
    self.runner = InMemoryRunner(agent=agent, app_name=APP)
    self.server_id = registry.server_id(TOOLSET)

  async def session(self, user_id: str = "u") -> SessionKey:
    session = await self.runner.session_service.create_session(
        app_name=APP, user_id=user_id
    )
    return SessionKey(APP, user_id, session.id)

  async def turn(
      self, session: SessionKey, principal: Optional[Principal] = None
  ) -> Turn:
    """One real Runner turn whose model calls `open_view`.

    Args:
      session: The Session the turn runs in.
      principal: The acting principal the serving host declares, if any.
    """
    response = await run_turn(self.runner, session, principal)
    assert response.name == names.OPEN_VIEW, response
    match = NONCE.search(response.response["content"][0]["text"])
    assert match, response.response
    return Turn(session, response.id, match.group(1))

  async def open_view(
      self, session: SessionKey, principal: Optional[Principal] = None
  ) -> View:
    """A turn, then the View taking its render reservation as its hold."""
    turn = await self.turn(session, principal)
    hold = self.registry.render_reservations.take(
        TOOLSET, session, turn.function_call_id
    )
    assert hold is not None, "the accepted UI result reserved nothing"
    return View(turn, hold)

  async def followup(self, hold: GenerationHold, nonce: str) -> dict[str, Any]:
    """The View's app-only `app_followup(nonce)`; returns the server's data."""
    return await app_followup(hold, nonce, self.server_id)

  async def whoami(self, hold: GenerationHold) -> dict[str, Any]:
    """The server's view of the held generation's connection."""
    result = await hold.call_tool(names.WHOAMI, {})
    assert isinstance(result.structured_content, dict), result
    return result.structured_content

  async def aclose(self) -> None:
    await self.runner.close()


@contextlib.asynccontextmanager
async def _host(registry: McpAppBindingRegistry) -> AsyncGenerator[Host, None]:
  async with registry:
    host = Host(registry)
    try:
      yield host
    finally:
      await host.aclose()


class Listener:
  """Records the invalidations one hold is told about."""

  def __init__(self, hold: GenerationHold):
    self.errors: list[GenerationInvalidatedError] = []
    hold.on_invalidated(self.errors.append)

  def assert_told(self, generation_id: str, reason: InvalidationReason) -> None:
    assert len(self.errors) == 1, self.errors
    assert self.errors[0].generation_id == generation_id
    assert self.errors[0].reason is reason


async def _assert_dead(
    host: Host, view: View, reason: InvalidationReason
) -> None:
  """Every way the View could use its hold fails typed, before any I/O."""
  for attempt in (
      host.followup(view.hold, view.nonce),
      view.hold.call_tool(names.WHOAMI, {}),
      view.hold.list_tools(),
      view.hold.read_resource(names.VIEW_URI),
  ):
    with pytest.raises(GenerationInvalidatedError) as info:
      await attempt
    assert info.value.reason is reason
    assert info.value.generation_id == view.hold.generation_id


def _gone(mcp_apps: Any, pid: int) -> bool:
  return pid not in mcp_apps.child_pids()


class Parked:
  """An in-flight operation on a generation, parked until released."""

  def __init__(self, generation: ConnectionGeneration, nonce: str):
    self.entered = asyncio.Event()
    self.proceed = asyncio.Event()

    async def operation(session: Any) -> Any:
      self.entered.set()
      await self.proceed.wait()
      return await session.call_tool(names.APP_FOLLOWUP, {"nonce": nonce})

    self.task = asyncio.ensure_future(
        generation.execute(operation, "parked test operation")
    )

  async def __aenter__(self) -> Parked:
    await asyncio.wait_for(self.entered.wait(), TIMEOUT)
    return self

  async def __aexit__(self, *exc_info: object) -> None:
    self.proceed.set()

  async def result(self) -> Any:
    self.proceed.set()
    return await asyncio.wait_for(self.task, TIMEOUT)


# --- P2-AFF-18 ---------------------------------------------------------------


@pytest.mark.conformance("P2-AFF-18")
async def test_referenced_generations_are_never_evicted(
    mcp_apps: Any, clock: Clock
) -> None:
  """P2-AFF-18: reservations, Views and in-flight operations pin.

  The registry reference-counts each app-safe generation: the accepted UI
  result's reservation, the View's hold and an in-flight operation each
  keep it through sweeps far past the idle time. Only when the last
  reference goes does the idle clock start, from that release.
  """
  before = mcp_apps.child_pids()
  registry = _stdio_registry(mcp_apps, **IDLE_EVICTION)
  async with _host(registry) as host:
    pool = registry.connections
    session = await host.session()
    view = await host.turn(session)

    # The reservation alone pins it (the call's own hold is gone).
    reserved = registry.render_reservations.peek(
        TOOLSET, session, view.function_call_id
    )
    assert reserved is not None and reserved.kind is HoldKind.RESERVATION
    generation = reserved.generation
    assert generation.holders == 1
    pid = (await host.whoami(reserved))["pid"]
    clock.now += 6_000
    report = await pool.sweep()
    assert generation.generation_id not in report.evicted
    assert generation.state is ConnectionGenerationState.LIVE

    # The View takes the reservation and holds it as a View.
    taken = registry.render_reservations.take(
        TOOLSET, session, view.function_call_id
    )
    assert taken is reserved
    view_hold = generation.hold(HoldKind.VIEW)
    taken.release()
    assert generation.holders == 1
    clock.now += 6_000
    assert not (await pool.sweep()).evicted
    assert (await host.followup(view_hold, view.nonce))["verdict"] == "ok"

    # An in-flight operation pins it with no View left.
    async with Parked(generation, view.nonce) as parked:
      view_hold.release()
      assert generation.holders == 1  # The operation's own hold.
      clock.now += 6_000
      assert not (await pool.sweep()).evicted
      assert generation.state is ConnectionGenerationState.LIVE
    assert (await parked.result()).structured_content["verdict"] == "ok"
    assert generation.holders == 0

    # Unreferenced now: the idle time counts from the last release.
    clock.now += 59
    assert not (await pool.sweep()).evicted
    clock.now += 1
    assert (await pool.sweep()).evicted == (generation.generation_id,)
    assert generation.invalidation_reason is R.EVICTED
    assert _gone(mcp_apps, pid)
  assert mcp_apps.child_pids() == before


@pytest.mark.conformance("P2-AFF-18")
async def test_lease_epoch_close_keeps_held_generations(
    mcp_apps: Any,
) -> None:
  """P2-AFF-18: the last Runner lease release closes the lease epoch's
  connections but evicts only app-safe generations nobody holds: a View's
  generation stays pinned, and its process keeps serving the View."""
  registry = _stdio_registry(mcp_apps)
  async with _host(registry) as host:
    registry.bind_runner(host.runner, TOOLSET)
    view = await host.open_view(await host.session())
    # A second Session's generation, released: unheld at the epoch's close.
    loose = await host.open_view(await host.session())
    loose.hold.release()
    held_pid = (await host.whoami(view.hold))["pid"]
    loose_who = await loose.generation.execute(
        lambda session: session.call_tool(names.WHOAMI, {}), "whoami"
    )
    loose_pid = loose_who.structured_content["pid"]
    assert loose.generation.holders == 0

    await host.runner.close()  # The Runner's last lease release.
    assert loose.generation.invalidation_reason is R.EVICTED
    assert _gone(mcp_apps, loose_pid)
    assert view.generation.state is ConnectionGenerationState.LIVE
    assert held_pid in mcp_apps.child_pids()
    assert (await host.followup(view.hold, view.nonce))["verdict"] == "ok"


# --- P2-AFF-19 ---------------------------------------------------------------


@pytest.mark.conformance("P2-AFF-19")
async def test_one_views_teardown_leaves_its_sibling_working(
    mcp_apps: Any, clock: Clock
) -> None:
  """P2-AFF-19: two Views on one generation; tearing one down releases only
  its reference."""
  registry = _stdio_registry(mcp_apps, **IDLE_EVICTION)
  async with _host(registry) as host:
    session = await host.session()
    first = await host.open_view(session)
    second = await host.open_view(session)
    generation = first.generation
    assert second.generation is generation  # One Session: one generation.
    assert generation.holders == 2
    sibling = Listener(second.hold)

    first.hold.release()
    first.hold.release()  # Idempotent: never drops the sibling's reference.
    assert generation.holders == 1
    with pytest.raises(HoldReleasedError):
      await host.followup(first.hold, first.nonce)
    clock.now += 6_000
    assert not (await registry.connections.sweep()).evicted

    # The sibling keeps working, on the very connection that opened it.
    assert generation.state is ConnectionGenerationState.LIVE
    answer = await host.followup(second.hold, second.nonce)
    assert answer["verdict"] == "ok"
    assert (
        answer["connectionId"]
        == (await host.whoami(second.hold))["connectionId"]
    )
    assert not sibling.errors


RELEASED_HOLD_OPERATIONS = {
    "check": lambda host, hold: _sync(hold.check),
    "call_tool": lambda host, hold: hold.call_tool(names.WHOAMI, {}),
    "list_tools": lambda host, hold: hold.list_tools(),
    "read_resource": lambda host, hold: hold.read_resource(names.VIEW_URI),
    "execute": lambda host, hold: hold.execute(
        lambda session: session.call_tool(names.WHOAMI, {}), "whoami"
    ),
    "app_call": lambda host, hold: host.followup(hold, "any-nonce"),
}
"""Every operation a View's hold offers, as `(host, hold) -> awaitable`."""


async def _sync(check: Any) -> None:
  check()


@pytest.mark.conformance("P2-AFF-19")
@pytest.mark.parametrize("operation", sorted(RELEASED_HOLD_OPERATIONS))
async def test_a_released_hold_refuses_every_operation(
    mcp_apps: Any, clock: Clock, operation: str
) -> None:
  """P2-AFF-19: a torn-down View's released hold refuses each operation with
  `HoldReleasedError` (its generation still live, held by the sibling), and
  the refusal leaves the sibling's reference and connection untouched."""
  del clock
  registry = _stdio_registry(mcp_apps, max_lifetime_seconds=100_000)
  async with _host(registry) as host:
    session = await host.session()
    first = await host.open_view(session)
    second = await host.open_view(session)
    generation = first.generation
    assert second.generation is generation
    first.hold.release()

    with pytest.raises(HoldReleasedError):
      await RELEASED_HOLD_OPERATIONS[operation](host, first.hold)

    assert generation.state is ConnectionGenerationState.LIVE
    assert generation.holders == 1
    assert (await host.followup(second.hold, second.nonce))["verdict"] == "ok"


# --- P2-AFF-20 ---------------------------------------------------------------


@pytest.mark.conformance("P2-AFF-20")
async def test_last_release_makes_the_generation_evictable(
    mcp_apps: Any, clock: Clock
) -> None:
  """P2-AFF-20: after the last View's release the idle policy evicts the
  generation and closes its process; the next turn opens a new one."""
  before = mcp_apps.child_pids()
  registry = _stdio_registry(mcp_apps, **IDLE_EVICTION)
  async with _host(registry) as host:
    session = await host.session()
    view = await host.open_view(session)
    generation = view.generation
    pid = (await host.whoami(view.hold))["pid"]
    assert pid in mcp_apps.child_pids()

    view.hold.release()
    assert generation.holders == 0
    clock.now += 59
    assert not (await registry.connections.sweep()).evicted
    assert generation.state is ConnectionGenerationState.LIVE
    clock.now += 1
    report = await registry.connections.sweep()
    assert report.evicted == (generation.generation_id,)
    assert generation.state is ConnectionGenerationState.INVALIDATED
    assert generation.invalidation_reason is R.EVICTED
    assert _gone(mcp_apps, pid)
    with pytest.raises(GenerationInvalidatedError) as info:
      registry.connections.get(generation.generation_id)
    assert info.value.reason is R.EVICTED
    assert registry.connections.find(generation.key) is None

    # Same Session, same key: a new generation, never the evicted one.
    again = await host.open_view(session)
    assert again.generation.key == generation.key
    assert again.generation.generation_id != generation.generation_id
    assert (await host.whoami(again.hold))["pid"] != pid
    stale = await host.followup(again.hold, view.nonce)
    assert stale["verdict"] == "unknown-nonce"  # Another process.
    assert (await host.followup(again.hold, again.nonce))["verdict"] == "ok"
  assert mcp_apps.child_pids() == before


# --- P2-AFF-21 ---------------------------------------------------------------


@pytest.mark.conformance("P2-AFF-21")
async def test_max_lifetime_invalidates_every_dependent_view(
    mcp_apps: Any, clock: Clock
) -> None:
  """P2-AFF-21: at the profile's maximum lifetime the generation and every
  View on it are invalidated (held or not), each told MAX_LIFETIME."""
  registry = _stdio_registry(
      mcp_apps,
      idle_eviction_seconds=1_000,
      max_lifetime_seconds=100,
  )
  async with _host(registry) as host:
    session = await host.session()
    views = [await host.open_view(session) for _ in range(2)]
    generation = views[0].generation
    assert views[1].generation is generation and generation.holders == 2
    listeners = [Listener(v.hold) for v in views]
    pid = (await host.whoami(views[0].hold))["pid"]

    clock.now = generation.created_at + 99
    assert not (await registry.connections.sweep()).expired
    for view in views:
      assert (await host.followup(view.hold, view.nonce))["verdict"] == "ok"

    clock.now = generation.created_at + 100
    report = await registry.connections.sweep()
    assert report.expired == (generation.generation_id,)
    assert generation.invalidation_reason is R.MAX_LIFETIME
    for listener in listeners:
      listener.assert_told(generation.generation_id, R.MAX_LIFETIME)
    for view in views:
      await _assert_dead(host, view, R.MAX_LIFETIME)
    assert _gone(mcp_apps, pid)

    fresh = await host.open_view(session)
    assert fresh.generation.generation_id != generation.generation_id
    assert (await host.followup(fresh.hold, fresh.nonce))["verdict"] == "ok"


# --- P2-AFF-22 ---------------------------------------------------------------


@pytest.mark.conformance("P2-AFF-22")
async def test_credential_expiry_invalidates_every_dependent_view(
    legacy_http_server: Any, clock: Clock
) -> None:
  """P2-AFF-22: when the profile's credential-expiry policy fires, the
  generation and every View on it are invalidated CREDENTIAL_EXPIRED, and
  its server connection is closed."""
  registry = _registry(
      http_spec(
          legacy_http_server.url,
          header_provider=lambda ctx: {"Authorization": "Bearer expiring"},
      ),
      idle_eviction_seconds=1_000,
      max_lifetime_seconds=10_000,
      credential_expiry_seconds=50,
  )
  async with _host(registry) as host:
    session = await host.session()
    views = [await host.open_view(session) for _ in range(2)]
    generation = views[0].generation
    assert views[1].generation is generation
    listeners = [Listener(v.hold) for v in views]

    clock.now = generation.created_at + 49
    report = await registry.connections.sweep()
    assert not report.credential_expired and not report.expired
    clock.now = generation.created_at + 50
    report = await registry.connections.sweep()
    assert report.credential_expired == (generation.generation_id,)
    assert generation.invalidation_reason is R.CREDENTIAL_EXPIRED
    for listener in listeners:
      listener.assert_told(generation.generation_id, R.CREDENTIAL_EXPIRED)
    for view in views:
      await _assert_dead(host, view, R.CREDENTIAL_EXPIRED)

    # The next turn opens a new generation; the server saw the old one close.
    fresh = await host.open_view(session)
    assert fresh.generation.generation_id != generation.generation_id
    assert fresh.generation.key == generation.key  # Same credentials.
    old = await host.followup(fresh.hold, views[0].nonce)
    assert old["verdict"] == "connection-closed"
    assert (await host.followup(fresh.hold, fresh.nonce))["verdict"] == "ok"


# --- P2-AFF-23 ---------------------------------------------------------------


@pytest.mark.conformance("P2-AFF-23")
async def test_readiness_revocation_invalidates_every_view(
    mcp_apps: Any, clock: Clock
) -> None:
  """P2-AFF-23: `revoke()` invalidates READINESS_REVOKED every View (and
  reservation) on every generation of the revoked binding, and closes their
  processes."""
  before = mcp_apps.child_pids()
  registry = _stdio_registry(mcp_apps)
  async with _host(registry) as host:
    first_session = await host.session()
    second_session = await host.session()
    views = [
        await host.open_view(first_session),
        await host.open_view(first_session),
        await host.open_view(second_session),
    ]
    pending = await host.turn(second_session)
    reservation = registry.render_reservations.peek(
        TOOLSET, second_session, pending.function_call_id
    )
    assert reservation is not None
    holds = [v.hold for v in views] + [reservation]
    generations = {h.generation for h in holds}
    assert len(generations) == 2  # One per Session.
    listeners = [Listener(h) for h in holds]
    pids = {(await host.whoami(h))["pid"] for h in holds}
    assert len(pids) == 2 and pids <= mcp_apps.child_pids()

    await registry.revoke()
    for listener, hold in zip(listeners, holds):
      listener.assert_told(hold.generation_id, R.READINESS_REVOKED)
    for generation in generations:
      assert generation.invalidation_reason is R.READINESS_REVOKED
    for view in views:
      await _assert_dead(host, view, R.READINESS_REVOKED)
    assert not pids & mcp_apps.child_pids()
    assert not registry.connections.live()
  assert mcp_apps.child_pids() == before


# --- P2-AFF-24 ---------------------------------------------------------------


@pytest.mark.conformance("P2-AFF-24")
async def test_credential_rotation_invalidates_every_view(
    legacy_http_server: Any,
) -> None:
  """P2-AFF-24: the same principal and Session calling with new credentials
  invalidates the old generation CREDENTIAL_ROTATED for every View on it
  (its server connection closes), and a new generation serves the new
  credentials."""
  credential = {"token": "Bearer first"}
  registry = _registry(
      http_spec(
          legacy_http_server.url,
          header_provider=lambda ctx: {"Authorization": credential["token"]},
      )
  )
  async with _host(registry) as host:
    session = await host.session()
    views = [await host.open_view(session) for _ in range(2)]
    old = views[0].generation
    assert views[1].generation is old
    listeners = [Listener(v.hold) for v in views]

    credential["token"] = "Bearer second"
    rotated = await host.open_view(session)
    new = rotated.generation
    assert new.generation_id != old.generation_id
    assert new.key.lineage == old.key.lineage
    assert new.key.credential_context != old.key.credential_context
    assert old.invalidation_reason is R.CREDENTIAL_ROTATED
    for listener in listeners:
      listener.assert_told(old.generation_id, R.CREDENTIAL_ROTATED)
    for view in views:
      await _assert_dead(host, view, R.CREDENTIAL_ROTATED)
    assert registry.connections.live() == (new,)
    for view in views:
      answer = await host.followup(rotated.hold, view.nonce)
      assert answer["verdict"] == "connection-closed"
    assert (await host.followup(rotated.hold, rotated.nonce))["verdict"] == "ok"


# --- P2-AFF-25 ---------------------------------------------------------------


def _transport(
    kind: str, mcp_apps: Any, start_server: Any
) -> tuple[McpToolsetSpec, Any]:
  """The spec of a private server, and a function that kills it."""
  if kind == "stdio":

    async def kill(host: Host, hold: GenerationHold) -> None:
      os.kill((await host.whoami(hold))["pid"], signal.SIGKILL)

    return stdio_spec(mcp_apps.stdio_parameters()), kill
  server = start_server()

  async def stop(host: Host, hold: GenerationHold) -> None:
    del host, hold
    server.stop()

  return http_spec(server.url), stop


@pytest.mark.conformance("P2-AFF-25")
@pytest.mark.parametrize("kind", ["stdio", "legacy_http"])
async def test_transport_failure_invalidates_every_view(
    kind: str, mcp_apps: Any, start_server: Any
) -> None:
  """P2-AFF-25: the generation's process or server dies: every View on it
  is invalidated TRANSPORT_FAILURE (each told so), nothing reconnects
  underneath them, and each later use fails typed.

  The failure is found by the pool's liveness sweep, which every acquire
  (every model or app turn that needs a generation) runs first. The very
  first app call after the death is covered by the test below.
  """
  spec, kill = _transport(kind, mcp_apps, start_server)
  async with _host(_registry(spec)) as host:
    session = await host.session()
    views = [await host.open_view(session) for _ in range(2)]
    generation = views[0].generation
    assert views[1].generation is generation
    listeners = [Listener(v.hold) for v in views]

    await kill(host, views[0].hold)
    # The View's next call reaches the dead transport and fails; after it
    # the client has observed the closed connection.
    with pytest.raises(Exception):
      await host.followup(views[0].hold, views[0].nonce)
    report = await host.registry.connections.sweep()
    if generation.invalidation_reason is None:  # pragma: no cover
      pytest.fail(f"the dead generation survived the sweep: {report}")
    assert generation.invalidation_reason is R.TRANSPORT_FAILURE
    for listener in listeners:
      listener.assert_told(generation.generation_id, R.TRANSPORT_FAILURE)
    for view in views:
      await _assert_dead(host, view, R.TRANSPORT_FAILURE)
    assert generation.generation_id not in {
        g.generation_id for g in host.registry.connections.live()
    }
    if kind == "stdio":
      # The next turn opens a new generation (a new process).
      fresh = await host.open_view(session)
      assert fresh.generation.generation_id != generation.generation_id
      stale = await host.followup(fresh.hold, views[1].nonce)
      assert stale["verdict"] == "unknown-nonce"


@pytest.mark.conformance("P2-AFF-25")
@pytest.mark.parametrize("kind", ["stdio", "legacy_http"])
async def test_first_call_after_transport_failure_fails_typed(
    kind: str, mcp_apps: Any, start_server: Any
) -> None:
  """P2-AFF-25: the first View call after the transport died fails with
  GenerationInvalidatedError(TRANSPORT_FAILURE), and every sibling View is
  told at once, without waiting for a sweep."""
  spec, kill = _transport(kind, mcp_apps, start_server)
  async with _host(_registry(spec)) as host:
    session = await host.session()
    views = [await host.open_view(session) for _ in range(2)]
    generation = views[0].generation
    sibling = Listener(views[1].hold)
    await kill(host, views[0].hold)
    with pytest.raises(GenerationInvalidatedError) as info:
      await host.followup(views[0].hold, views[0].nonce)
    assert info.value.reason is R.TRANSPORT_FAILURE
    sibling.assert_told(generation.generation_id, R.TRANSPORT_FAILURE)
