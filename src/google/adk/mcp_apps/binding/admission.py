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
"""`AdmissionGate`: admission and in-flight tracking of one binding generation.

Every listing, read and tool call of a registry proxy enters its gate. Once
the registry starts retiring the generation, the gate refuses new work with
a typed error, and the work already admitted is drained (or cancelled at a
bound). Loop-neutral: one gate serves every event loop.

Example:

  gate = AdmissionGate()
  async with gate.operation():
    ...  # Admitted work.
  gate.shut(lambda: ToolsetClosedError('conf', 1))
  await gate.drain(timeout=10.0)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Iterator
import contextlib
import dataclasses
import threading
from typing import Any
from typing import Optional

ErrorFactory = Callable[[], Exception]


@dataclasses.dataclass(frozen=True)
class DrainResult:
  """What draining admitted work achieved within its bound.

  Attributes:
    admitted: Operations in flight when draining began.
    cancelled: Operations still in flight at the bound, then cancelled.
  """

  admitted: int
  cancelled: int


def _current_task() -> Optional[asyncio.Task[Any]]:
  try:
    return asyncio.current_task()
  except RuntimeError:  # No running loop.
    return None


@dataclasses.dataclass(frozen=True, eq=False)
class AdmissionTicket:
  """A caller task's admission, carried to the task that does its I/O.

  The gate identifies admitted work by its asyncio task, but a routed
  session manager opens connections in another task, on the registry loop
  (`loop_routing`). The caller checks admission in its own task and hands
  this ticket over; `AdmissionGate.adopt` re-validates it on the other side.

  Attributes:
    gate: The gate that issued it.
    task: The caller's task (None outside a task).
  """

  gate: AdmissionGate
  task: Optional[asyncio.Task[Any]]


class AdmissionGate:
  """Admission and in-flight tracking for one proxy generation.

  Loop-neutral: state is guarded by a `threading.Lock`, and each admitted
  operation is recorded with its task and loop so it can be cancelled from
  whichever loop revokes.
  """

  def __init__(self) -> None:
    self._lock = threading.Lock()
    self._refusal: Optional[ErrorFactory] = None
    self._inflight: dict[asyncio.Task[Any], tuple[int, Any]] = {}
    # Registry-side tasks acting for an admitted caller (`adopt`): `check`
    # lets them through, but the drain neither waits for nor cancels them;
    # cancelling their caller cancels them.
    self._adopted: dict[asyncio.Task[Any], int] = {}
    self._idle = threading.Event()
    self._idle.set()

  def check(self) -> None:
    """Raises the refusal error once the gate is shut.

    Work admitted before the gate shut (the calling task is in flight, or
    acts for one through `adopt`) is let through: draining means letting it
    finish.
    """
    task = _current_task()
    with self._lock:
      refusal = self._refusal
      admitted = task is not None and (
          task in self._inflight or task in self._adopted
      )
    if refusal is not None and not admitted:
      raise refusal()

  def ticket(self) -> AdmissionTicket:
    """Caller side: `check()`, then a ticket to carry to another task.

    Returns:
      The calling task's admission, for `adopt` on the registry loop.

    Raises:
      Exception: The refusal, if the gate is shut and the calling task was
        not admitted before it shut.
    """
    self.check()
    return AdmissionTicket(self, _current_task())

  @contextlib.contextmanager
  def adopt(self, ticket: AdmissionTicket) -> Iterator[None]:
    """Registry side: admits the current task on behalf of `ticket`.

    The admission is re-decided here, under the gate's lock, so a handover
    that races the gate shutting cannot open a connection for work the
    drain never saw: it passes while the gate is open, or while the
    ticket's task is still admitted (and so still drained for).

    Args:
      ticket: A ticket this gate issued.

    Yields:
      Nothing; `check()` in the current task passes until exit.

    Raises:
      Exception: The refusal, if the gate has shut and the ticket's task is
        no longer admitted.
    """
    if ticket.gate is not self:
      raise ValueError('The admission ticket belongs to another gate')
    task = _current_task()
    with self._lock:
      refusal = self._refusal
      if refusal is not None and ticket.task not in self._inflight:
        admitted = False
      else:
        admitted = True
        if task is not None:
          self._adopted[task] = self._adopted.get(task, 0) + 1
    if not admitted:
      assert refusal is not None
      raise refusal()
    try:
      yield
    finally:
      if task is not None:
        with self._lock:
          depth = self._adopted.pop(task) - 1
          if depth:
            self._adopted[task] = depth

  @property
  def inflight(self) -> int:
    """Operations admitted and not yet finished."""
    with self._lock:
      return len(self._inflight)

  @contextlib.asynccontextmanager
  async def operation(self) -> AsyncIterator[None]:
    """Admits one operation (re-entrant per task) or raises the refusal."""
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    with self._lock:
      if self._refusal is not None:
        refusal = self._refusal
      else:
        refusal = None
        if task is not None:
          depth, _ = self._inflight.get(task, (0, loop))
          self._inflight[task] = (depth + 1, loop)
          self._idle.clear()
    if refusal is not None:
      raise refusal()
    try:
      yield
    finally:
      if task is not None:
        with self._lock:
          depth, _ = self._inflight[task]
          if depth > 1:
            self._inflight[task] = (depth - 1, loop)
          else:
            del self._inflight[task]
          if not self._inflight:
            self._idle.set()

  def shut(self, refusal: ErrorFactory) -> None:
    """Refuses all new work from now on (idempotent; first refusal wins)."""
    with self._lock:
      if self._refusal is None:
        self._refusal = refusal

  async def drain(self, timeout: float) -> DrainResult:
    """Waits for admitted work, then cancels what is left at the bound."""
    admitted = self.inflight
    if admitted and not await asyncio.to_thread(self._idle.wait, timeout):
      with self._lock:
        left = list(self._inflight.items())
      for task, (_, loop) in left:
        with contextlib.suppress(RuntimeError):  # Its loop is closed.
          loop.call_soon_threadsafe(task.cancel)
      await asyncio.to_thread(self._idle.wait, timeout)
      return DrainResult(admitted, len(left))
    return DrainResult(admitted, 0)
