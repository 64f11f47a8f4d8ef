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

"""The session coordinator as a primitive: FIFO ownership across loops and
threads, queued-waiter cancellation, and the reentry rule's execution
context. The Runner's use of it is tested in
tests/integration/mcp_apps/coordination/."""

from __future__ import annotations

import asyncio
import threading

from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.coordination.coordinator import owned_here
from google.adk.mcp_apps.coordination.coordinator import SessionCoordinator
from google.adk.mcp_apps.coordination.errors import CoordinationError
from google.adk.mcp_apps.coordination.errors import CoordinationErrorReason
import pytest

KEY = SessionKey('app', 'user', 's1')
OTHER = SessionKey('app', 'user', 's2')
BOUND = 5.0
"""Seconds a step may take before the test fails (never slept)."""


async def _held_elsewhere(coordinator: SessionCoordinator, name: str):
  """Acquires KEY in another task, so this test's context owns nothing
  (tasks it spawns would otherwise inherit the ownership and be refused)."""
  return await asyncio.create_task(coordinator.acquire(KEY, name))


async def _queued(coordinator: SessionCoordinator, count: int) -> None:
  """Returns once `count` acquisitions of KEY are queued."""
  while coordinator.waiting(KEY) < count:
    await asyncio.sleep(0)


async def test_waiters_own_the_session_one_at_a_time_in_arrival_order():
  coordinator = SessionCoordinator()
  order: list[str] = []
  first = await _held_elsewhere(coordinator, 'first')

  async def later(name: str) -> None:
    async with coordinator.owned(KEY, name) as ownership:
      order.append(name)
      assert coordinator.owner(KEY) is ownership

  tasks = []
  for i, name in enumerate(['second', 'third']):
    tasks.append(asyncio.create_task(later(name)))
    await asyncio.wait_for(_queued(coordinator, i + 1), BOUND)
  assert order == []
  first.release()
  await asyncio.wait_for(asyncio.gather(*tasks), BOUND)
  assert order == ['second', 'third']
  assert coordinator.owner(KEY) is None
  assert coordinator.waiting(KEY) == 0


@pytest.mark.conformance('P4-COORD-16')
async def test_cancelling_a_queued_waiter_leaves_the_queue_without_owning():
  coordinator = SessionCoordinator()
  first = await _held_elsewhere(coordinator, 'first')
  owned_by: list[str] = []

  async def wait(name: str) -> None:
    async with coordinator.owned(KEY, name):
      owned_by.append(name)

  cancelled = asyncio.create_task(wait('cancelled'))
  await asyncio.wait_for(_queued(coordinator, 1), BOUND)
  survivor = asyncio.create_task(wait('survivor'))
  await asyncio.wait_for(_queued(coordinator, 2), BOUND)
  cancelled.cancel()
  with pytest.raises(asyncio.CancelledError):
    await cancelled
  assert coordinator.waiting(KEY) == 1
  assert coordinator.owner(KEY) is first
  first.release()
  await asyncio.wait_for(survivor, BOUND)
  assert owned_by == ['survivor']
  assert coordinator.owner(KEY) is None


@pytest.mark.conformance('P4-COORD-16')
async def test_a_waiter_cancelled_as_it_is_granted_passes_the_session_on():
  coordinator = SessionCoordinator()
  first = await _held_elsewhere(coordinator, 'first')
  granted = asyncio.create_task(coordinator.acquire(KEY, 'granted'))
  await asyncio.wait_for(_queued(coordinator, 1), BOUND)
  survivor = asyncio.create_task(coordinator.acquire(KEY, 'survivor'))
  await asyncio.wait_for(_queued(coordinator, 2), BOUND)
  # The release hands ownership to `granted` and schedules its wake; the
  # cancellation lands before the wake runs.
  first.release()
  granted.cancel()
  with pytest.raises(asyncio.CancelledError):
    await granted
  ownership = await asyncio.wait_for(survivor, BOUND)
  assert ownership.operation == 'survivor'
  assert coordinator.owner(KEY) is ownership
  ownership.release()


@pytest.mark.conformance('P4-REEN-13', 'P4-REEN-16')
async def test_reentry_is_refused_before_waiting_and_other_sessions_proceed():
  coordinator = SessionCoordinator()
  async with coordinator.owned(KEY, 'Runner.run_async'):
    with pytest.raises(CoordinationError) as refused:
      await asyncio.wait_for(
          coordinator.acquire(KEY, 'Runner.rewind_async'), BOUND
      )
    assert refused.value.reason is CoordinationErrorReason.SAME_SESSION_REENTRY
    assert refused.value.operation == 'Runner.rewind_async'
    assert coordinator.waiting(KEY) == 0
    async with coordinator.owned(OTHER, 'Runner.run_async') as other:
      assert coordinator.owner(OTHER) is other
  assert owned_here(KEY) is None


@pytest.mark.conformance('P4-REEN-14')
async def test_a_task_that_outlives_its_owner_waits_instead_of_being_refused():
  coordinator = SessionCoordinator()
  released = asyncio.Event()
  owned_by_task: list[bool] = []

  async def spawned() -> None:
    await released.wait()
    # The owner released; the task's copied context still names it.
    async with coordinator.owned(KEY, 'Runner.run_async'):
      owned_by_task.append(True)

  async with coordinator.owned(KEY, 'Runner.run_async'):
    task = asyncio.create_task(spawned())
  released.set()
  await asyncio.wait_for(task, BOUND)
  assert owned_by_task == [True]


@pytest.mark.conformance('P4-REEN-14')
async def test_a_task_spawned_while_its_owner_holds_is_refused_not_queued():
  coordinator = SessionCoordinator()
  async with coordinator.owned(KEY, 'Runner.run_async'):
    task = asyncio.create_task(coordinator.acquire(KEY, 'Runner.run_async'))
    with pytest.raises(CoordinationError):
      await asyncio.wait_for(task, BOUND)
    assert coordinator.waiting(KEY) == 0


async def _turn(coordinator: SessionCoordinator, closed: list[str]):
  """A turn as the Runner wraps one: the closer takes the ownership over."""
  async with coordinator.owned(KEY, 'Runner.run_async') as ownership:
    try:
      yield 'event'
    finally:
      ownership.transfer_here()
      closed.append('closed')


async def test_a_caller_that_dropped_its_turn_queues_behind_its_closing():
  coordinator = SessionCoordinator()
  closed: list[str] = []

  async def ask() -> None:
    async for _ in _turn(coordinator, closed):
      break  # Dropped: the loop closes it in a task of its own.

  await ask()
  assert closed == []
  async with asyncio.timeout(BOUND):
    async with coordinator.owned(KEY, 'Runner.run_async'):
      assert closed == ['closed']
  assert coordinator.owner(KEY) is None


async def test_a_caller_still_holding_its_turn_is_refused():
  coordinator = SessionCoordinator()
  closed: list[str] = []
  turn = _turn(coordinator, closed)
  await turn.__anext__()
  with pytest.raises(CoordinationError):
    await asyncio.wait_for(coordinator.acquire(KEY, 'Runner.run_async'), BOUND)
  assert coordinator.waiting(KEY) == 0
  await turn.aclose()
  assert closed == ['closed']
  assert coordinator.owner(KEY) is None


def _acquire_on_new_loop(
    coordinator: SessionCoordinator,
    acquired: threading.Event,
    release: threading.Event,
) -> None:
  async def main() -> None:
    ownership = await coordinator.acquire(KEY, 'Runner.run')
    acquired.set()
    await asyncio.get_running_loop().run_in_executor(None, release.wait, BOUND)
    ownership.release()

  asyncio.run(main())


@pytest.mark.conformance('P4-REEN-17')
async def test_ownership_serializes_waiters_on_another_thread_and_loop():
  coordinator = SessionCoordinator()
  acquired, release = threading.Event(), threading.Event()
  thread = threading.Thread(
      target=_acquire_on_new_loop, args=(coordinator, acquired, release)
  )
  thread.start()
  try:
    assert await asyncio.to_thread(acquired.wait, BOUND)
    waiter = asyncio.create_task(coordinator.acquire(KEY, 'Runner.run_async'))
    await asyncio.wait_for(_queued(coordinator, 1), BOUND)
    assert not waiter.done()
    release.set()
    ownership = await asyncio.wait_for(waiter, BOUND)
    assert ownership.operation == 'Runner.run_async'
    ownership.release()
  finally:
    release.set()
    await asyncio.to_thread(thread.join, BOUND)


@pytest.mark.conformance('P4-REEN-17')
async def test_reentry_is_detected_on_a_thread_that_inherits_the_context():
  coordinator = SessionCoordinator()
  async with coordinator.owned(KEY, 'Runner.run_async'):
    # asyncio.to_thread copies the context, as Runner.run's worker does.
    def on_thread() -> CoordinationErrorReason:
      async def attempt() -> None:
        await coordinator.acquire(KEY, 'Runner.run_async')

      try:
        asyncio.run(attempt())
      except CoordinationError as error:
        return error.reason
      raise AssertionError('the reentry was not refused')

    reason = await asyncio.wait_for(asyncio.to_thread(on_thread), BOUND)
  assert reason is CoordinationErrorReason.SAME_SESSION_REENTRY
  assert coordinator.owner(KEY) is None


async def test_release_is_idempotent_and_only_the_owner_hands_over():
  coordinator = SessionCoordinator()
  first = await _held_elsewhere(coordinator, 'first')
  first.release()
  second = await coordinator.acquire(KEY, 'second')
  first.release()
  assert coordinator.owner(KEY) is second
  assert first.released and not second.released
  second.release()


async def test_requeue_lets_the_queue_run_then_hands_back_the_same_ownership():
  coordinator = SessionCoordinator()
  order: list[str] = []

  async def suspended_operation() -> None:
    async with coordinator.owned(KEY, 'app.read') as ownership:
      order.append('leg-1')
      await _queued(coordinator, 1)
      await coordinator.requeue(ownership)
      assert not ownership.released
      assert coordinator.owner(KEY) is ownership
      assert owned_here(KEY) is ownership
      order.append('leg-2')
    assert ownership.released

  async def turn() -> None:
    async with coordinator.owned(KEY, 'turn'):
      order.append('turn')

  operation = asyncio.create_task(suspended_operation())
  while not order:
    await asyncio.sleep(0)
  waiting_turn = asyncio.create_task(turn())
  await asyncio.wait_for(asyncio.gather(operation, waiting_turn), BOUND)
  assert order == ['leg-1', 'turn', 'leg-2']
  assert coordinator.owner(KEY) is None and coordinator.waiting(KEY) == 0


async def test_requeue_cancelled_while_queued_leaves_the_session_free():
  coordinator = SessionCoordinator()
  suspended = asyncio.Event()

  async def suspended_operation() -> None:
    async with coordinator.owned(KEY, 'app.read') as ownership:
      await _queued(coordinator, 1)
      suspended.set()
      await coordinator.requeue(ownership)

  operation = asyncio.create_task(suspended_operation())
  turn_granted = asyncio.Event()
  turn_done = asyncio.Event()

  async def turn() -> None:
    async with coordinator.owned(KEY, 'turn'):
      turn_granted.set()
      await turn_done.wait()

  waiting_turn = asyncio.create_task(turn())
  await asyncio.wait_for(turn_granted.wait(), BOUND)
  await asyncio.wait_for(_queued(coordinator, 1), BOUND)  # The requeue.
  operation.cancel()
  with pytest.raises(asyncio.CancelledError):
    await operation
  assert coordinator.waiting(KEY) == 0
  turn_done.set()
  await asyncio.wait_for(waiting_turn, BOUND)
  assert coordinator.owner(KEY) is None
