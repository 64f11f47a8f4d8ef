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

"""Runner-scoped lease tokens with real Runners and a real stdio MCP server.

Two `google.adk.runners.Runner` objects, A and B, share one `LlmAgent`. The
agent's tool is the registry's non-owning handle, `registry.toolset(id)`, for
one profile-bound toolset connected over stdio to the conformance server (its
I/O on the registry loop): the handle's `close()` releases nothing (RFC §1).
Each Runner is bound with `McpAppBindingRegistry.bind_runner`, which leases
the toolset's current generation from the registry's `RunnerLeaseLedger`;
the last release closes the generation's connections. A scripted model makes
each turn call the server's `whoami`, whose answer names the server's pid and
the connection, so a test sees the very process and connection survive or
go. `GenerationCloser` counts close attempts through the registry's
lease-close test seam (which also injects the timeouts, hangs and gates) and
successful closes on the proxy.

Races are forced with events; nothing sleeps to order anything. The one
timed wait is `LeaseRetryPolicy.attempt_timeout` cutting a close attempt
that can never finish on its own, which is the behaviour under test. Its
8 s leave the retry (a real close of a stdio server) room on a loaded CI
machine; at 2 s the retry itself was cut under load.

Cases: P2-RLT-01..09 and, at the lease level, P2-REG-11.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
import dataclasses
import json
from typing import Any

from google.adk.agents.llm_agent import LlmAgent
from google.adk.mcp_apps.binding.leases import LeaseGenerationState
from google.adk.mcp_apps.binding.leases import LeaseRetryPolicy
from google.adk.mcp_apps.binding.leases import LeaseToken
from google.adk.mcp_apps.binding.leases import runner_leases
from google.adk.mcp_apps.binding.leases import RunnerLeaseLedger
from google.adk.mcp_apps.binding.proxy import HostBoundMcpToolset
from google.adk.mcp_apps.binding.registry import LeaseGenerationKey
from google.adk.mcp_apps.binding.registry import McpAppBindingRegistry
from google.adk.mcp_apps.binding.registry import RegistryToolset
from google.adk.mcp_apps.binding.spec import McpToolsetSpec
from google.adk.mcp_apps.profile import local_dev_profile
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.tools.mcp_tool import StdioConnectionParams
from google.genai import types
from mcp_apps_conformance_server import names
from pydantic import Field
import pytest

pytestmark = [
    pytest.mark.integration,
    pytest.mark.usefixtures("no_leaked_processes"),
]

TOOLSET_ID = "conformance-stdio"
USER_ID = "lease-tester"


class WhoamiLlm(BaseLlm):
  """Calls `whoami` on every user turn; optionally parks before doing so.

  When `entered` and `proceed` are set, the next user turn sets `entered`
  and waits for `proceed` before answering, so a test can act while that
  Runner's turn is live.
  """

  model: str = "lease-whoami-llm"
  entered: asyncio.Event | None = Field(default=None, exclude=True)
  proceed: asyncio.Event | None = Field(default=None, exclude=True)
  calls: int = 0

  async def generate_content_async(
      self, llm_request: LlmRequest, stream: bool = False
  ) -> AsyncGenerator[LlmResponse, None]:
    del stream
    last = llm_request.contents[-1] if llm_request.contents else None
    if any(p.function_response for p in (last.parts if last else None) or []):
      yield LlmResponse(
          content=types.Content(role="model", parts=[types.Part(text="ok")])
      )
      return
    if self.entered is not None and self.proceed is not None:
      entered, proceed = self.entered, self.proceed
      self.entered = self.proceed = None
      entered.set()
      await proceed.wait()
    self.calls += 1
    yield LlmResponse(
        content=types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(
                        id=f"whoami-{self.calls}", name=names.WHOAMI, args={}
                    )
                )
            ],
        )
    )


@dataclasses.dataclass
class GenerationCloser:
  """Counts a generation's closes and injects failures into them.

  `hook` is the registry's lease-close seam, awaited at the start of each
  close attempt: `script` lists what each attempt does first: `"timeout"`
  raises `TimeoutError` (as a marshalled close past its deadline does),
  `"hang"` never finishes (only the ledger's attempt timeout ends it),
  `"gate"` sets `entered` and waits for `gate`. Then the registry closes the
  generation's connections; `watch` counts each close that did.
  """

  script: list[str] = dataclasses.field(default_factory=list)
  attempts: int = 0
  successes: int = 0
  entered: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)
  gate: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)

  async def hook(self, key: LeaseGenerationKey) -> None:
    del key
    step = (
        self.script[self.attempts] if self.attempts < len(self.script) else ""
    )
    self.attempts += 1
    if step == "timeout":
      raise TimeoutError("injected: marshalled close timed out")
    if step == "hang":
      await asyncio.Event().wait()
    if step == "gate":
      self.entered.set()
      await self.gate.wait()

  def watch(self, proxy: HostBoundMcpToolset, monkeypatch: Any) -> None:
    close = proxy._close_connections  # pylint: disable=protected-access

    async def counted() -> bool:
      closed = await close()
      self.successes += int(closed)
      return closed

    monkeypatch.setattr(proxy, "_close_connections", counted)


@dataclasses.dataclass
class Shared:
  """Runners A and B sharing one Agent, registry toolset and generation."""

  registry: McpAppBindingRegistry
  closer: GenerationCloser
  toolset: RegistryToolset
  model: WhoamiLlm
  agent: LlmAgent
  a: Runner
  b: Runner
  tokens: dict[str, LeaseToken]
  pending: list[Any]
  child_pids: Any
  outstanding_at_close: list[int]

  @property
  def ledger(self) -> RunnerLeaseLedger:
    return self.registry.leases

  @property
  def gen(self) -> Any:
    """The generation (lease epoch) both Runners are bound to."""
    return self.tokens["a"].generation_key

  def runner(self, name: str) -> Runner:
    return self.a if name == "a" else self.b

  def server_alive(self, pid: int) -> bool:
    return pid in self.child_pids()


async def _shared(
    mcp_apps: Any,
    monkeypatch: Any,
    script: list[str] | None = None,
    policy: LeaseRetryPolicy | None = None,
) -> Shared:
  pending: list[Any] = []
  closer = GenerationCloser(list(script or []))
  registry = McpAppBindingRegistry(
      {
          TOOLSET_ID: McpToolsetSpec(
              connection_params=StdioConnectionParams(
                  server_params=mcp_apps.stdio_parameters(), timeout=30.0
              )
          )
      },
      local_dev_profile(),
      allow_dev_providers=True,
      lease_retry_policy=policy or LeaseRetryPolicy(attempt_timeout=30.0),
      on_lease_close_pending=pending.append,
      _lease_close_hook=closer.hook,
  )
  await registry.start()
  proxy = registry.lookup(TOOLSET_ID)
  assert proxy.profile_bound
  closer.watch(proxy, monkeypatch)
  toolset = registry.toolset(TOOLSET_ID)
  model = WhoamiLlm()
  agent = LlmAgent(
      name="lease_agent",
      model=model,
      instruction="Call whoami.",
      tools=[toolset],
  )
  runners = {
      name: Runner(
          agent=agent,
          app_name=f"leases_{name}",
          session_service=InMemorySessionService(),
      )
      for name in ("a", "b")
  }
  tokens = {
      name: registry.bind_runner(r, TOOLSET_ID) for name, r in runners.items()
  }
  gen = tokens["a"].generation_key
  assert gen == LeaseGenerationKey(TOOLSET_ID, 1, 1)
  # The handle's `close()` releases nothing; record what was outstanding
  # each time Runner cleanup reached it.
  outstanding_at_close: list[int] = []
  close = toolset.close

  async def recording_close() -> None:
    outstanding_at_close.append(registry.leases.outstanding(gen))
    await close()

  monkeypatch.setattr(toolset, "close", recording_close)
  return Shared(
      registry=registry,
      closer=closer,
      toolset=toolset,
      model=model,
      agent=agent,
      a=runners["a"],
      b=runners["b"],
      tokens=tokens,
      pending=pending,
      child_pids=mcp_apps.child_pids,
      outstanding_at_close=outstanding_at_close,
  )


@pytest.fixture
async def shared_factory(
    mcp_apps: Any, monkeypatch: pytest.MonkeyPatch
) -> AsyncGenerator[Any, None]:
  """Builds `Shared` setups; shuts their registries down at teardown."""
  made: list[Shared] = []

  async def make(**kwargs: Any) -> Shared:
    shared = await _shared(mcp_apps, monkeypatch, **kwargs)
    made.append(shared)
    return shared

  yield make
  for shared in made:
    shared.closer.gate.set()
    await shared.registry.aclose()


def _whoami(response: types.FunctionResponse) -> dict[str, Any]:
  payload: dict[str, Any] = dict(response.response or {})
  structured = payload.get("structuredContent") or payload.get(
      "structured_content"
  )
  if structured:
    return dict(structured)
  (block,) = payload["content"]
  return dict(json.loads(block["text"]))


async def _turn(runner: Runner) -> dict[str, Any]:
  """Runs one turn that calls `whoami` through the real connection."""
  session = await runner.session_service.create_session(
      app_name=runner.app_name, user_id=USER_ID
  )
  responses: list[types.FunctionResponse] = []
  async for event in runner.run_async(
      user_id=USER_ID,
      session_id=session.id,
      new_message=types.Content(role="user", parts=[types.Part(text="who?")]),
  ):
    responses.extend(event.get_function_responses())
  (response,) = responses
  assert response.name == names.WHOAMI
  answer = _whoami(response)
  assert isinstance(answer["pid"], int) and answer["connectionId"]
  return answer


async def _both_live(shared: Shared) -> dict[str, Any]:
  """Both Runners call the server; returns the (shared) server identity."""
  a, b = await _turn(shared.a), await _turn(shared.b)
  assert a["pid"] == b["pid"] and a["connectionId"] == b["connectionId"]
  assert shared.server_alive(a["pid"])
  return a


# --------------------------------------------------------------------------
# P2-RLT-01
# --------------------------------------------------------------------------


@pytest.mark.conformance("P2-RLT-01")
async def test_runner_close_releases_exactly_its_token(
    shared_factory: Any,
) -> None:
  """P2-RLT-01: binding stores the Runner's token in its side table;
  `Runner.close()` releases exactly that token."""
  shared = await shared_factory()
  assert runner_leases(shared.a) == (shared.tokens["a"],)
  assert runner_leases(shared.b) == (shared.tokens["b"],)
  assert shared.tokens["a"] != shared.tokens["b"]
  assert shared.ledger.outstanding(shared.gen) == 2
  server = await _both_live(shared)

  await shared.a.close()
  assert runner_leases(shared.a) == ()
  assert not shared.ledger.is_held(shared.tokens["a"])
  assert shared.ledger.is_held(shared.tokens["b"])
  assert runner_leases(shared.b) == (shared.tokens["b"],)
  assert shared.closer.attempts == 0 and shared.server_alive(server["pid"])

  await shared.b.close()
  assert shared.closer.successes == 1
  assert not shared.server_alive(server["pid"])


# --------------------------------------------------------------------------
# P2-RLT-02, P2-RLT-03, P2-RLT-08
# --------------------------------------------------------------------------


@pytest.mark.conformance("P2-RLT-02", "P2-RLT-03")
@pytest.mark.parametrize(
    "first, second",
    [
        pytest.param("a", "b", id="p2_rlt_02_a_then_b"),
        pytest.param("b", "a", id="p2_rlt_03_b_then_a"),
    ],
)
async def test_generation_closes_once_after_second_release(
    shared_factory: Any, first: str, second: str
) -> None:
  """P2-RLT-02 (A then B) / P2-RLT-03 (B then A): the generation, and with
  it the server process, closes exactly once, after the second release."""
  shared = await shared_factory()
  server = await _both_live(shared)

  await shared.runner(first).close()
  assert shared.closer.attempts == 0
  assert shared.ledger.state(shared.gen) is LeaseGenerationState.OPEN
  assert shared.server_alive(server["pid"])

  await shared.runner(second).close()
  assert (shared.closer.attempts, shared.closer.successes) == (1, 1)
  assert shared.ledger.state(shared.gen) is LeaseGenerationState.CLOSED
  assert not shared.server_alive(server["pid"])


@pytest.mark.conformance("P2-RLT-08")
async def test_final_release_closes_exactly_once(
    shared_factory: Any,
) -> None:
  """P2-RLT-08: the final release drives the one registry close; nothing
  after it (retries, repeat closes, shutdown) closes again."""
  shared = await shared_factory()
  server = await _both_live(shared)
  await shared.a.close()
  await shared.b.close()
  assert shared.closer.successes == 1
  assert not shared.server_alive(server["pid"])

  assert await shared.registry.retry_lease_closes() == frozenset()
  await shared.a.close()
  await shared.b.close()
  await shared.registry.aclose()
  assert (shared.closer.attempts, shared.closer.successes) == (1, 1)


# --------------------------------------------------------------------------
# P2-RLT-04, P2-RLT-05
# --------------------------------------------------------------------------


@pytest.mark.conformance("P2-RLT-04", "P2-RLT-05")
@pytest.mark.parametrize(
    "twice, other",
    [
        pytest.param("a", "b", id="p2_rlt_04_runner_a"),
        pytest.param("b", "a", id="p2_rlt_05_runner_b"),
    ],
)
async def test_duplicate_close_releases_own_token_once(
    shared_factory: Any, twice: str, other: str
) -> None:
  """P2-RLT-04 (A) / P2-RLT-05 (B): closing one Runner twice releases its
  token once and never the other's; the other keeps calling the server."""
  shared = await shared_factory()
  server = await _both_live(shared)

  await shared.runner(twice).close()
  await shared.runner(twice).close()
  assert shared.ledger.is_held(shared.tokens[other])
  assert shared.ledger.outstanding(shared.gen) == 1
  assert shared.closer.attempts == 0
  again = await _turn(shared.runner(other))
  assert again["pid"] == server["pid"]
  assert again["connectionId"] == server["connectionId"]

  await shared.runner(other).close()
  await shared.runner(twice).close()
  assert (shared.closer.attempts, shared.closer.successes) == (1, 1)
  assert not shared.server_alive(server["pid"])


# --------------------------------------------------------------------------
# P2-RLT-06
# --------------------------------------------------------------------------


@pytest.mark.conformance("P2-RLT-06")
@pytest.mark.parametrize(
    "script, policy",
    [
        pytest.param(
            ["timeout"],
            LeaseRetryPolicy(attempt_timeout=30.0),
            id="close_reports_timeout",
        ),
        pytest.param(
            ["hang"],
            LeaseRetryPolicy(attempt_timeout=8.0),
            id="ledger_attempt_timeout",
        ),
    ],
)
async def test_timed_out_close_is_retried_once(
    shared_factory: Any, script: list[str], policy: LeaseRetryPolicy
) -> None:
  """P2-RLT-06: the final release's close times out once; the ledger
  retries it and the server is closed by exactly one successful close."""
  shared = await shared_factory(script=script, policy=policy)
  server = await _both_live(shared)
  await shared.a.close()
  await shared.b.close()
  assert (shared.closer.attempts, shared.closer.successes) == (2, 1)
  assert shared.pending == []
  assert not shared.server_alive(server["pid"])
  await shared.b.close()
  await shared.a.close()
  assert shared.closer.attempts == 2


@pytest.mark.conformance("P2-RLT-06")
@pytest.mark.parametrize("retry_by", ["registry_retry", "second_close"])
async def test_cancelled_release_is_retried_token_idempotently(
    shared_factory: Any, retry_by: str
) -> None:
  """P2-RLT-06: B's `Runner.close()` is cancelled while the final close
  runs; the token stays released once, the close pending (the registry is
  told); the ledger's retry or B's second close then closes exactly once."""
  shared = await shared_factory(script=["gate"])
  server = await _both_live(shared)
  await shared.a.close()

  closing = asyncio.create_task(shared.b.close())
  await shared.closer.entered.wait()
  closing.cancel()
  with pytest.raises(asyncio.CancelledError):
    await closing
  shared.closer.gate.set()
  assert shared.ledger.state(shared.gen) is LeaseGenerationState.CLOSE_PENDING
  assert shared.pending == [shared.gen]
  assert shared.ledger.outstanding(shared.gen) == 0
  assert shared.closer.successes == 0 and shared.server_alive(server["pid"])
  await shared.a.close()  # A's repeat close acts on nobody's behalf.
  assert shared.closer.attempts == 1

  if retry_by == "registry_retry":
    assert await shared.registry.retry_lease_closes() == frozenset({shared.gen})
  else:
    await shared.b.close()
  assert (shared.closer.attempts, shared.closer.successes) == (2, 1)
  assert not shared.server_alive(server["pid"])
  await shared.b.close()
  assert await shared.registry.retry_lease_closes() == frozenset()
  assert shared.closer.attempts == 2
  assert runner_leases(shared.b) == ()


# --------------------------------------------------------------------------
# P2-RLT-07
# --------------------------------------------------------------------------


@pytest.mark.conformance("P2-RLT-07")
async def test_other_runner_keeps_working_after_one_closes(
    shared_factory: Any,
) -> None:
  """P2-RLT-07: with both Runners live, A closes while B is mid-turn; B's
  turn then calls the server on the same process and connection."""
  shared = await shared_factory()
  server = await _both_live(shared)

  shared.model.entered, shared.model.proceed = asyncio.Event(), asyncio.Event()
  proceed = shared.model.proceed
  b_turn = asyncio.create_task(_turn(shared.b))
  await shared.model.entered.wait()
  await shared.a.close()
  assert shared.closer.attempts == 0 and shared.server_alive(server["pid"])
  proceed.set()
  after = await b_turn
  assert after["pid"] == server["pid"]
  assert after["connectionId"] == server["connectionId"]
  again = await _turn(shared.b)
  assert again["connectionId"] == server["connectionId"]

  await shared.b.close()
  assert shared.closer.successes == 1
  assert not shared.server_alive(server["pid"])


# --------------------------------------------------------------------------
# P2-RLT-09
# --------------------------------------------------------------------------


@pytest.mark.conformance("P2-RLT-09")
async def test_shutdown_closes_then_runner_close_closes_nothing(
    shared_factory: Any,
) -> None:
  """P2-RLT-09: registry shutdown closes the generation with both tokens
  outstanding; the Runners' later closes close nothing twice."""
  shared = await shared_factory()
  server = await _both_live(shared)

  await shared.registry.aclose()
  assert (shared.closer.attempts, shared.closer.successes) == (1, 1)
  assert not shared.server_alive(server["pid"])
  assert shared.ledger.outstanding(shared.gen) == 2

  await shared.a.close()
  await shared.b.close()
  await shared.a.close()
  assert shared.closer.attempts == 1
  assert shared.ledger.outstanding(shared.gen) == 0
  assert runner_leases(shared.a) == runner_leases(shared.b) == ()


# --------------------------------------------------------------------------
# P2-REG-11 (lease level)
# --------------------------------------------------------------------------


@pytest.mark.conformance("P2-REG-11")
async def test_runner_cleanup_toolset_close_releases_no_token(
    shared_factory: Any,
) -> None:
  """P2-REG-11: the shared toolset's `close()`, called by Runner cleanup,
  releases no token and closes nothing; only the tokens do."""
  shared = await shared_factory()
  server = await _both_live(shared)

  await shared.a._cleanup_toolsets(  # pylint: disable=protected-access
      shared.a._collect_toolset(shared.agent)  # pylint: disable=protected-access
  )
  await shared.toolset.close()
  assert shared.ledger.outstanding(shared.gen) == 2
  assert shared.server_alive(server["pid"])

  await shared.a.close()
  again = await _turn(shared.b)
  assert again["connectionId"] == server["connectionId"]
  await shared.b.close()
  # Each Runner.close() closed the toolset while its own token was held.
  assert shared.outstanding_at_close == [2, 2, 2, 1]
  assert shared.closer.successes == 1
  assert not shared.server_alive(server["pid"])
