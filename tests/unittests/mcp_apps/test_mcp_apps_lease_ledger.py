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

"""Runner-scoped registry lease tokens: the ledger and the Runner seam.

The ledger is exercised directly, and through real `google.adk.runners.Runner`
objects (no MCP server; the integration tests add one). Close callbacks are
real coroutines that count their invocations and successes. Races are forced
with `threading.Barrier`, events and gates; nothing sleeps to order anything.

Cases: P2-RLT-01..09 at ledger level, P2-REG-11 at the lease level.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
import concurrent.futures
import dataclasses
import gc
import threading
from typing import Any
import weakref

from google.adk.agents.llm_agent import LlmAgent
from google.adk.mcp_apps.binding import leases
from google.adk.mcp_apps.binding.leases import bind_runner
from google.adk.mcp_apps.binding.leases import GenerationCloseIncompleteError
from google.adk.mcp_apps.binding.leases import LeaseError
from google.adk.mcp_apps.binding.leases import LeaseGenerationState
from google.adk.mcp_apps.binding.leases import LeaseRetryPolicy
from google.adk.mcp_apps.binding.leases import LeaseToken
from google.adk.mcp_apps.binding.leases import LedgerShutdownIncompleteError
from google.adk.mcp_apps.binding.leases import release_runner_leases
from google.adk.mcp_apps.binding.leases import ReleaseResult
from google.adk.mcp_apps.binding.leases import runner_leases
from google.adk.mcp_apps.binding.leases import RunnerLeaseLedger
from google.adk.mcp_apps.errors import McpAppsError
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.tools.base_toolset import BaseToolset
import pytest

GEN = 'generation-1'
WAIT = 10.0
"""Upper bound on any cross-thread wait (never a pacing delay)."""


@dataclasses.dataclass
class Closer:
  """A generation close callback that counts attempts and successes.

  `script` lists what each attempt does, in order: `'ok'` succeeds,
  `'timeout'` raises `TimeoutError`, `'fail'` raises `RuntimeError`,
  `'hang'` waits on `release_hang` (an `asyncio.Event` of the attempt's loop
  is not shareable, so a thread event polled through `to_thread`), `'gate'`
  sets `entered` and waits for `gate` before succeeding. Attempts past the
  script succeed.
  """

  script: list[str] = dataclasses.field(default_factory=list)
  attempts: int = 0
  successes: int = 0
  threads: list[int] = dataclasses.field(default_factory=list)
  entered: threading.Event = dataclasses.field(default_factory=threading.Event)
  gate: threading.Event = dataclasses.field(default_factory=threading.Event)
  active: int = 0
  max_active: int = 0

  async def __call__(self) -> None:
    step = (
        self.script[self.attempts] if self.attempts < len(self.script) else 'ok'
    )
    self.attempts += 1
    self.threads.append(threading.get_ident())
    self.active += 1
    self.max_active = max(self.max_active, self.active)
    try:
      if step == 'timeout':
        raise TimeoutError('injected close timeout')
      if step == 'fail':
        raise RuntimeError('injected close failure')
      if step == 'hang':
        await asyncio.Event().wait()  # Never set: only a timeout ends it.
      if step == 'gate':
        self.entered.set()
        await asyncio.to_thread(self.gate.wait, WAIT)
        assert self.gate.is_set()
      self.successes += 1
    finally:
      self.active -= 1


def _ledger(
    closer: Closer | None = None,
    *,
    key: str = GEN,
    **kwargs: Any,
) -> tuple[RunnerLeaseLedger, Closer]:
  ledger = RunnerLeaseLedger(**kwargs)
  closer = closer or Closer()
  ledger.open_generation(key, closer)
  return ledger, closer


def _run_in_thread(fn: Callable[[], Awaitable[Any]]) -> Any:
  """Runs `fn()` under `asyncio.run` on a new thread; returns or raises."""
  outcome: dict[str, Any] = {}

  def worker() -> None:
    async def body() -> Any:
      return await fn()

    try:
      outcome['result'] = asyncio.run(body())
    except BaseException as error:  # pylint: disable=broad-exception-caught
      outcome['error'] = error

  thread = threading.Thread(target=worker)
  thread.start()
  thread.join(WAIT)
  assert not thread.is_alive()
  if 'error' in outcome:
    raise outcome['error']
  return outcome['result']


def _observe_waits(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
  """Injection point: an event set once a caller waits on another's close.

  Wraps the ledger's real cross-loop wait (it still runs), so a test knows
  the waiter is parked before it lets the running close proceed.
  """
  waiting = threading.Event()
  real_wait = leases._wait_threadsafe  # pylint: disable=protected-access

  async def observed(future: Any) -> None:
    waiting.set()
    await real_wait(future)

  monkeypatch.setattr(leases, '_wait_threadsafe', observed)
  return waiting


class NonOwningToolset(BaseToolset):
  """A shared toolset whose `close()` releases nothing (P2-REG-11 shape).

  It records, at each `close()`, how many tokens the ledger still counted,
  so a test can prove Runner cleanup's toolset close released none.
  """

  def __init__(self, ledger: RunnerLeaseLedger, key: str = GEN):
    super().__init__()
    self.ledger = ledger
    self.key = key
    self.outstanding_at_close: list[int] = []

  async def get_tools(self, readonly_context: Any = None) -> list[Any]:
    del readonly_context
    return []

  async def close(self) -> None:
    self.outstanding_at_close.append(self.ledger.outstanding(self.key))


def _runner(agent: LlmAgent, name: str = 'leases_app') -> Runner:
  return Runner(
      agent=agent, app_name=name, session_service=InMemorySessionService()
  )


def _agent(*tools: Any) -> LlmAgent:
  return LlmAgent(
      name='lease_agent', model='gemini-2.5-flash', tools=list(tools)
  )


# --------------------------------------------------------------------------
# Tokens and typed errors.
# --------------------------------------------------------------------------


def test_errors_are_mcp_apps_errors() -> None:
  """Every ledger error is a typed `McpAppsError`."""
  for error in (
      LeaseError,
      GenerationCloseIncompleteError,
      LedgerShutdownIncompleteError,
  ):
    assert issubclass(error, McpAppsError)


@pytest.mark.conformance('P2-RLT-01')
def test_tokens_are_opaque_unguessable_and_generation_bound() -> None:
  """P2-RLT-01: each acquire issues a distinct, opaque, one-generation token."""
  ledger, _ = _ledger()
  ledger.open_generation('generation-2', Closer())
  first, second = ledger.acquire(GEN), ledger.acquire(GEN)
  other = ledger.acquire('generation-2')
  assert first != second and hash(first) != hash(second)
  assert first.generation_key == GEN and other.generation_key == 'generation-2'
  secret = first._secret  # pylint: disable=protected-access
  assert len(secret) >= 40
  assert secret not in repr(first) and secret not in str(first)
  assert (
      ledger.outstanding(GEN) == 2 and ledger.outstanding('generation-2') == 1
  )
  # A token forged without the secret, or issued by another ledger, is refused.
  foreign_ledger, _ = _ledger()
  foreign = foreign_ledger.acquire(GEN)
  for bogus in (LeaseToken('guess', GEN), foreign):
    with pytest.raises(LeaseError, match='^foreign_token:'):
      asyncio.run(ledger.release(bogus))
    assert not ledger.is_held(bogus)
  assert ledger.outstanding(GEN) == 2


def test_open_and_acquire_refusals() -> None:
  """Unknown, duplicate and closed generations are refused, typed."""
  ledger, _ = _ledger()
  with pytest.raises(LeaseError, match='^unknown_generation:'):
    ledger.acquire('never-opened')
  with pytest.raises(LeaseError, match='^duplicate_generation:'):
    ledger.open_generation(GEN, Closer())
  with pytest.raises(LeaseError, match='^unknown_generation:'):
    ledger.state('never-opened')
  with pytest.raises(ValueError):
    LeaseRetryPolicy(max_attempts=0)
  with pytest.raises(ValueError):
    LeaseRetryPolicy(attempt_timeout=0)


# --------------------------------------------------------------------------
# Ledger-level cases.
# --------------------------------------------------------------------------


@pytest.mark.conformance('P2-RLT-02', 'P2-RLT-03')
@pytest.mark.parametrize('order', ['a_then_b', 'b_then_a'])
async def test_both_orders_close_once_after_second_release(
    order: str,
) -> None:
  """P2-RLT-02 (A then B) and P2-RLT-03 (B then A): one close, after the 2nd."""
  ledger, closer = _ledger()
  tokens = {'a': ledger.acquire(GEN), 'b': ledger.acquire(GEN)}
  first, second = ('a', 'b') if order == 'a_then_b' else ('b', 'a')

  assert await ledger.release(tokens[first]) == ReleaseResult(True, False)
  assert closer.attempts == 0
  assert ledger.state(GEN) is LeaseGenerationState.OPEN
  assert ledger.is_held(tokens[second]) and not ledger.is_held(tokens[first])

  assert await ledger.release(tokens[second]) == ReleaseResult(True, True)
  assert (closer.attempts, closer.successes) == (1, 1)
  assert ledger.state(GEN) is LeaseGenerationState.CLOSED


@pytest.mark.conformance('P2-RLT-04', 'P2-RLT-05')
@pytest.mark.parametrize('duplicate', ['a', 'b'])
async def test_duplicate_release_never_releases_the_other(
    duplicate: str,
) -> None:
  """P2-RLT-04 (A twice) and P2-RLT-05 (B twice): the other token survives."""
  ledger, closer = _ledger()
  tokens = {'a': ledger.acquire(GEN), 'b': ledger.acquire(GEN)}
  other = 'b' if duplicate == 'a' else 'a'

  assert await ledger.release(tokens[duplicate]) == ReleaseResult(True, False)
  for _ in range(3):
    assert await ledger.release(tokens[duplicate]) == ReleaseResult(
        False, False
    )
  assert ledger.is_held(tokens[other])
  assert ledger.outstanding(GEN) == 1
  assert closer.attempts == 0

  assert await ledger.release(tokens[other]) == ReleaseResult(True, True)
  assert await ledger.release(tokens[duplicate]) == ReleaseResult(False, False)
  assert (closer.attempts, closer.successes) == (1, 1)


@pytest.mark.conformance('P2-RLT-06')
async def test_close_times_out_once_then_succeeds() -> None:
  """P2-RLT-06: a close raising TimeoutError once is retried: one success."""
  ledger, closer = _ledger(Closer(['timeout']))
  token = ledger.acquire(GEN)
  assert await ledger.release(token) == ReleaseResult(True, True)
  assert (closer.attempts, closer.successes) == (2, 1)
  assert ledger.state(GEN) is LeaseGenerationState.CLOSED
  assert await ledger.release(token) == ReleaseResult(False, False)
  assert await ledger.retry_pending() == frozenset()
  await ledger.shutdown()
  assert (closer.attempts, closer.successes) == (2, 1)


@pytest.mark.conformance('P2-RLT-06')
async def test_attempt_timeout_cuts_a_hung_close() -> None:
  """P2-RLT-06: the ledger's attempt timeout ends a hung close and retries.

  The first attempt waits on an event nobody sets, so only the ledger's
  timeout can end it; the timeout is what is under test, not a pacing delay.
  """
  ledger, closer = _ledger(
      Closer(['hang']),
      retry_policy=LeaseRetryPolicy(max_attempts=2, attempt_timeout=0.05),
  )
  token = ledger.acquire(GEN)
  assert await ledger.release(token) == ReleaseResult(True, True)
  assert (closer.attempts, closer.successes) == (2, 1)
  assert closer.active == 0


@pytest.mark.conformance('P2-RLT-06')
async def test_cancelled_release_is_retried_by_repeat_release() -> None:
  """P2-RLT-06: a cancelled release leaves the close pending; repeating the
  same token's release finishes it exactly once, and never twice."""
  pending: list[str] = []
  ledger, closer = _ledger(Closer(['gate']), on_close_pending=pending.append)
  a, b = ledger.acquire(GEN), ledger.acquire(GEN)
  assert (await ledger.release(a)).released

  task = asyncio.create_task(ledger.release(b))
  assert await asyncio.to_thread(closer.entered.wait, WAIT)
  task.cancel()
  with pytest.raises(asyncio.CancelledError):
    await task
  closer.gate.set()
  assert closer.successes == 0
  assert ledger.state(GEN) is LeaseGenerationState.CLOSE_PENDING
  assert pending == [GEN]
  assert not ledger.is_held(b) and ledger.outstanding(GEN) == 0
  # Another token's repeat release does not act on B's behalf.
  assert await ledger.release(a) == ReleaseResult(False, False)
  assert closer.attempts == 1

  assert await ledger.release(b) == ReleaseResult(False, True)
  assert (closer.attempts, closer.successes) == (2, 1)
  assert await ledger.release(b) == ReleaseResult(False, False)
  assert await ledger.retry_pending() == frozenset()
  assert closer.successes == 1


@pytest.mark.conformance('P2-RLT-06')
async def test_exhausted_attempts_are_retried_by_the_ledger() -> None:
  """P2-RLT-06: every attempt failing leaves the close pending and typed;
  `retry_pending()` (the registry's entry point) closes it exactly once."""
  pending: list[str] = []
  ledger, closer = _ledger(
      Closer(['timeout', 'fail']),
      retry_policy=LeaseRetryPolicy(max_attempts=2),
      on_close_pending=pending.append,
  )
  token = ledger.acquire(GEN)
  with pytest.raises(GenerationCloseIncompleteError) as raised:
    await ledger.release(token)
  assert raised.value.generation_key == GEN and raised.value.attempts == 2
  assert isinstance(raised.value.__cause__, RuntimeError)
  assert ledger.state(GEN) is LeaseGenerationState.CLOSE_PENDING
  assert pending == [GEN] and closer.successes == 0
  with pytest.raises(LeaseError, match='^generation_closed:'):
    ledger.acquire(GEN)

  assert await ledger.retry_pending() == frozenset({GEN})
  assert (closer.attempts, closer.successes) == (3, 1)
  assert await ledger.retry_pending() == frozenset()
  assert await ledger.release(token) == ReleaseResult(False, False)
  assert closer.successes == 1


@pytest.mark.conformance('P2-RLT-06')
async def test_cancelled_retry_strands_no_generation() -> None:
  """P2-RLT-06: cancelling `retry_pending()` mid-close leaves every
  generation pending (none stuck closing); the next retry closes each once."""
  ledger = RunnerLeaseLedger(retry_policy=LeaseRetryPolicy(max_attempts=1))
  closers = {'g1': Closer(['fail', 'gate']), 'g2': Closer(['fail'])}
  for key, closer in closers.items():
    ledger.open_generation(key, closer)
  for key in closers:
    with pytest.raises(GenerationCloseIncompleteError):
      await ledger.release(ledger.acquire(key))

  retry = asyncio.create_task(ledger.retry_pending())
  assert await asyncio.to_thread(closers['g1'].entered.wait, WAIT)
  retry.cancel()
  with pytest.raises(asyncio.CancelledError):
    await retry
  closers['g1'].gate.set()
  assert ledger.state('g1') is LeaseGenerationState.CLOSE_PENDING
  assert ledger.state('g2') is LeaseGenerationState.CLOSE_PENDING

  assert await ledger.retry_pending() == frozenset({'g1', 'g2'})
  assert [c.successes for c in closers.values()] == [1, 1]
  assert [c.attempts for c in closers.values()] == [3, 2]


@pytest.mark.conformance('P2-RLT-07')
async def test_one_release_leaves_the_generation_working() -> None:
  """P2-RLT-07: one holder's release leaves the generation open for others."""
  ledger, closer = _ledger()
  a, b = ledger.acquire(GEN), ledger.acquire(GEN)
  await ledger.release(a)
  assert ledger.state(GEN) is LeaseGenerationState.OPEN
  assert ledger.is_held(b) and closer.attempts == 0
  # The survivor's side can still lease (e.g. a third Runner binding).
  c = ledger.acquire(GEN)
  await ledger.release(b)
  assert closer.attempts == 0
  assert (await ledger.release(c)).closed_generation
  assert closer.successes == 1


@pytest.mark.conformance('P2-RLT-08')
async def test_final_release_closes_exactly_once() -> None:
  """P2-RLT-08: the last release closes once; nothing re-closes it."""
  ledger, closer = _ledger()
  tokens = [ledger.acquire(GEN) for _ in range(4)]
  results = [await ledger.release(token) for token in tokens]
  assert [r.closed_generation for r in results] == [False, False, False, True]
  for token in tokens:
    assert await ledger.release(token) == ReleaseResult(False, False)
  with pytest.raises(LeaseError, match='^generation_closed:'):
    ledger.acquire(GEN)
  assert await ledger.retry_pending() == frozenset()
  await ledger.shutdown()
  assert (closer.attempts, closer.successes) == (1, 1)


@pytest.mark.conformance('P2-RLT-09')
async def test_shutdown_closes_whatever_tokens_remain() -> None:
  """P2-RLT-09: shutdown closes every generation once; later releases
  close nothing; nothing new is leased."""
  ledger, first = _ledger()
  second = Closer()
  ledger.open_generation('unleased', second)
  held = [ledger.acquire(GEN), ledger.acquire(GEN)]

  await ledger.shutdown()
  assert (first.successes, second.successes) == (1, 1)
  assert ledger.state(GEN) is LeaseGenerationState.CLOSED
  assert ledger.state('unleased') is LeaseGenerationState.CLOSED
  for token in held:
    assert await ledger.release(token) == ReleaseResult(True, False)
    assert await ledger.release(token) == ReleaseResult(False, False)
  await ledger.shutdown()
  assert (first.attempts, second.attempts) == (1, 1)
  with pytest.raises(LeaseError, match='^ledger_shut_down:'):
    ledger.acquire(GEN)
  with pytest.raises(LeaseError, match='^ledger_shut_down:'):
    ledger.open_generation('late', Closer())


@pytest.mark.conformance('P2-RLT-09')
async def test_incomplete_shutdown_is_typed_and_repeatable() -> None:
  """P2-RLT-09: a shutdown whose close fails says so; repeating it closes."""
  ledger, closer = _ledger(
      Closer(['fail']), retry_policy=LeaseRetryPolicy(max_attempts=1)
  )
  ledger.acquire(GEN)
  with pytest.raises(LedgerShutdownIncompleteError) as raised:
    await ledger.shutdown()
  assert raised.value.generation_keys == (GEN,)
  await ledger.shutdown()
  assert (closer.attempts, closer.successes) == (2, 1)


# --------------------------------------------------------------------------
# Races across threads and loops, forced with barriers and gates.
# --------------------------------------------------------------------------


@pytest.mark.conformance('P2-RLT-02')
@pytest.mark.parametrize('round_', range(25))
def test_concurrent_releases_on_two_loops_close_once(
    round_: int,
) -> None:
  """P2-RLT-02/08: two threads, two loops, released together: one close."""
  del round_
  ledger, closer = _ledger()
  tokens = [ledger.acquire(GEN), ledger.acquire(GEN)]
  barrier = threading.Barrier(2)
  results: list[ReleaseResult] = []

  def releaser(token: LeaseToken) -> None:
    async def body() -> ReleaseResult:
      barrier.wait(WAIT)
      return await ledger.release(token)

    results.append(asyncio.run(body()))

  threads = [threading.Thread(target=releaser, args=(t,)) for t in tokens]
  for thread in threads:
    thread.start()
  for thread in threads:
    thread.join(WAIT)
  assert sorted(r.closed_generation for r in results) == [False, True]
  assert all(r.released for r in results)
  assert (closer.attempts, closer.successes) == (1, 1)


@pytest.mark.conformance('P2-RLT-04')
@pytest.mark.parametrize('round_', range(10))
def test_same_token_released_concurrently_releases_once(
    round_: int,
) -> None:
  """P2-RLT-04: one token released from two threads at once counts once."""
  del round_
  ledger, closer = _ledger()
  token, other = ledger.acquire(GEN), ledger.acquire(GEN)
  barrier = threading.Barrier(2)
  results: list[ReleaseResult] = []

  def releaser() -> None:
    async def body() -> ReleaseResult:
      barrier.wait(WAIT)
      return await ledger.release(token)

    results.append(asyncio.run(body()))

  threads = [threading.Thread(target=releaser) for _ in range(2)]
  for thread in threads:
    thread.start()
  for thread in threads:
    thread.join(WAIT)
  assert sorted(r.released for r in results) == [False, True]
  assert ledger.is_held(other) and closer.attempts == 0


@pytest.mark.conformance('P2-RLT-09')
def test_shutdown_waits_for_a_close_running_on_another_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
  """P2-RLT-08/09: shutdown on loop 2 waits for the last release's close on
  loop 1 instead of running the callback a second time."""
  ledger, closer = _ledger(Closer(['gate']))
  token = ledger.acquire(GEN)
  release_result: dict[str, Any] = {}
  releaser = threading.Thread(
      target=lambda: release_result.update(
          result=asyncio.run(ledger.release(token))
      )
  )
  releaser.start()
  assert closer.entered.wait(WAIT)
  assert ledger.state(GEN) is LeaseGenerationState.CLOSING

  waiting = _observe_waits(monkeypatch)
  shutdown_done: dict[str, Any] = {}
  shutter = threading.Thread(
      target=lambda: shutdown_done.update(result=asyncio.run(ledger.shutdown()))
  )
  shutter.start()
  assert waiting.wait(WAIT)
  closer.gate.set()
  releaser.join(WAIT)
  shutter.join(WAIT)
  assert release_result['result'] == ReleaseResult(True, True)
  assert 'result' in shutdown_done
  assert (closer.attempts, closer.successes, closer.max_active) == (1, 1, 1)


@pytest.mark.conformance('P2-RLT-06')
def test_shutdown_takes_over_a_cancelled_close(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
  """P2-RLT-06/09: the last release is cancelled mid-close on loop 1 while
  shutdown waits on loop 2; shutdown retries it: exactly one success."""
  ledger, closer = _ledger(Closer(['gate']))
  token = ledger.acquire(GEN)
  loop1 = asyncio.new_event_loop()
  loop1_thread = threading.Thread(target=loop1.run_forever)
  loop1_thread.start()
  try:
    release_future = asyncio.run_coroutine_threadsafe(
        ledger.release(token), loop1
    )
    assert closer.entered.wait(WAIT)
    waiting = _observe_waits(monkeypatch)
    shutter = threading.Thread(target=lambda: asyncio.run(ledger.shutdown()))
    shutter.start()
    assert waiting.wait(WAIT)
    # Cancel the release's task on loop 1 while its attempt is gated.
    release_future.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
      release_future.result(WAIT)
    closer.gate.set()
    shutter.join(WAIT)
    assert not shutter.is_alive()
  finally:
    closer.gate.set()
    loop1.call_soon_threadsafe(loop1.stop)
    loop1_thread.join(WAIT)
    loop1.close()
  assert ledger.state(GEN) is LeaseGenerationState.CLOSED
  assert closer.successes == 1 and closer.max_active == 1
  assert closer.attempts == 2


# --------------------------------------------------------------------------
# The Runner seam, with real Runners.
# --------------------------------------------------------------------------


@pytest.mark.conformance('P2-RLT-01')
async def test_bind_runner_stores_token_and_close_releases_it() -> None:
  """P2-RLT-01: binding stores one token in the Runner's side table;
  `Runner.close()` releases exactly that token."""
  ledger, closer = _ledger()
  agent = _agent(NonOwningToolset(ledger))
  runner_a, runner_b = _runner(agent), _runner(agent)
  token_a = bind_runner(runner_a, ledger, GEN)
  token_b = bind_runner(runner_b, ledger, GEN)
  assert bind_runner(runner_a, ledger, GEN) is token_a  # Idempotent.
  assert runner_leases(runner_a) == (token_a,)
  assert runner_leases(runner_b) == (token_b,)
  assert ledger.outstanding(GEN) == 2

  await runner_a.close()
  assert not ledger.is_held(token_a) and ledger.is_held(token_b)
  assert runner_leases(runner_a) == () and closer.attempts == 0
  await runner_b.close()
  assert closer.successes == 1


@pytest.mark.conformance('P2-REG-11')
async def test_runner_cleanup_toolset_close_releases_no_token() -> None:
  """P2-REG-11: the shared toolset's close(), run by Runner cleanup, releases
  no token; only the Runner's own token release moves the ledger."""
  ledger, closer = _ledger()
  toolset = NonOwningToolset(ledger)
  agent = _agent(toolset)
  runner_a, runner_b = _runner(agent), _runner(agent)
  bind_runner(runner_a, ledger, GEN)
  bind_runner(runner_b, ledger, GEN)

  for _ in range(3):
    await toolset.close()
  # pylint: disable-next=protected-access
  await runner_a._cleanup_toolsets(runner_a._collect_toolset(agent))
  assert ledger.outstanding(GEN) == 2

  await runner_a.close()
  await runner_b.close()
  # Runner cleanup closed the toolset before releasing each Runner's token.
  assert toolset.outstanding_at_close == [2, 2, 2, 2, 2, 1]
  assert closer.successes == 1


@pytest.mark.conformance('P2-RLT-04', 'P2-RLT-05')
@pytest.mark.parametrize('duplicate', ['a', 'b'])
async def test_duplicate_runner_close(duplicate: str) -> None:
  """P2-RLT-04/05: a Runner closed twice releases its token once only."""
  ledger, closer = _ledger()
  agent = _agent(NonOwningToolset(ledger))
  runners = {'a': _runner(agent), 'b': _runner(agent)}
  tokens = {k: bind_runner(r, ledger, GEN) for k, r in runners.items()}
  other = 'b' if duplicate == 'a' else 'a'
  await runners[duplicate].close()
  await runners[duplicate].close()
  assert ledger.is_held(tokens[other]) and ledger.outstanding(GEN) == 1
  await runners[other].close()
  await runners[duplicate].close()
  assert (closer.attempts, closer.successes) == (1, 1)


@pytest.mark.conformance('P2-RLT-06')
async def test_cancelled_runner_close_retried_by_second_close() -> None:
  """P2-RLT-06: a cancelled `Runner.close()` keeps its token in the side
  table; the second close retries the pending close exactly once."""
  ledger, closer = _ledger(Closer(['gate']))
  runner = _runner(_agent(NonOwningToolset(ledger)))
  token = bind_runner(runner, ledger, GEN)
  task = asyncio.create_task(runner.close())
  assert await asyncio.to_thread(closer.entered.wait, WAIT)
  task.cancel()
  with pytest.raises(asyncio.CancelledError):
    await task
  closer.gate.set()
  assert runner_leases(runner) == (token,)
  assert ledger.state(GEN) is LeaseGenerationState.CLOSE_PENDING
  await runner.close()
  assert runner_leases(runner) == ()
  assert (closer.attempts, closer.successes) == (2, 1)


@pytest.mark.conformance('P2-RLT-09')
async def test_runner_close_after_shutdown_closes_nothing() -> None:
  """P2-RLT-09: after registry shutdown, `Runner.close()` closes nothing."""
  ledger, closer = _ledger()
  agent = _agent(NonOwningToolset(ledger))
  runner_a, runner_b = _runner(agent), _runner(agent)
  bind_runner(runner_a, ledger, GEN)
  bind_runner(runner_b, ledger, GEN)
  await ledger.shutdown()
  await runner_a.close()
  await runner_b.close()
  await runner_a.close()
  assert (closer.attempts, closer.successes) == (1, 1)
  assert runner_leases(runner_a) == runner_leases(runner_b) == ()


def test_unbound_runner_release_never_suspends() -> None:
  """With no token held, the seam returns without suspending: an unbound
  `Runner.close()` runs exactly the upstream steps."""
  runner = _runner(_agent())
  coroutine = release_runner_leases(runner)
  with pytest.raises(StopIteration):
    coroutine.send(None)
  assert runner_leases(runner) == ()


async def test_unbound_runner_close_still_closes_its_toolsets() -> None:
  """No lease held: `Runner.close()` closes toolsets as upstream does."""
  ledger, closer = _ledger()
  toolset = NonOwningToolset(ledger)
  runner = _runner(_agent(toolset))
  await runner.close()
  assert toolset.outstanding_at_close == [0]
  assert closer.attempts == 0 and ledger.state(GEN) is LeaseGenerationState.OPEN


def test_side_table_does_not_keep_a_runner_alive() -> None:
  """The side table is weak: a dropped Runner leaves no entry behind."""
  ledger, _ = _ledger()
  runner = _runner(_agent())
  bind_runner(runner, ledger, GEN)
  alive = weakref.ref(runner)
  assert alive() in leases._runner_leases  # pylint: disable=protected-access
  del runner
  gc.collect()
  assert alive() is None
