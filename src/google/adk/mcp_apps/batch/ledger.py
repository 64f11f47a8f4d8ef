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

"""One merged Event's effect ledger: a child per function call, one freeze.

ADK runs one task and one `ToolContext` per parallel function call, then
merges their responses into one Event. An `EventBatchEffects` is made
before that fan-out; each call's `ToolContext` is built over the
`EventActions` its child ledger hands out, whose `state_delta` and
`artifact_delta` are recording maps, so a write through `State` (or a
`save_artifact`) is applied live and recorded in that child at once. When
every call and the event-policy step have finished, a single `freeze()`
picks the winners and returns the `FrozenBatch` the merged Event is built
from. Design: docs/design/batch-ledger.md.

Usage:

  effects = EventBatchEffects(call_ids, live_state=session.state)
  tool_context = ToolContext(
      invocation_context,
      function_call_id=call_id,
      event_actions=effects.child(call_id).event_actions(),
  )
  ...  # every call task and the event-policy step finish
  frozen = effects.freeze()
  actions = EventActions(
      state_delta=dict(frozen.state_delta),
      artifact_delta=dict(frozen.artifact_delta),
  )
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import MutableMapping
import dataclasses
import enum
import threading
import types
from typing import Any
from typing import Final
from typing import Optional
from typing import Self
from typing import TYPE_CHECKING
from typing import Union

from .errors import BatchError
from .errors import BatchErrorReason

if TYPE_CHECKING:
  from ...events.event_actions import EventActions


class EventPolicyWriter(enum.Enum):
  """The writer of the event-policy ledger, never a function-call id."""

  EVENT_POLICY = 'event_policy'


EVENT_POLICY: Final = EventPolicyWriter.EVENT_POLICY
"""Names the event-policy ledger wherever a writer is reported."""

Writer = Union[str, EventPolicyWriter]
"""A function-call id, or `EVENT_POLICY`."""


class LedgerState(enum.Enum):
  """Where a batch is in its one-way life."""

  OPEN = 'open'
  FROZEN = 'frozen'


@dataclasses.dataclass(frozen=True)
class StateWrite:
  """One state write a ledger recorded, in the batch's commit order.

  Attributes:
    sequence: Its position in the batch's commit order (from 0, shared by
      state writes and artifact records).
    writer: The ledger it was recorded in.
    key: The state key.
    value: The value written (the very object the live state received).
    withdrawn: True when this entry records `State` withdrawing the
      writer's earlier write of `key` from its delta (a nested write into
      a container with no JSON form equal to it); `value` is then the
      container withdrawn.
  """

  sequence: int
  writer: Writer
  key: str
  value: Any
  withdrawn: bool = False


@dataclasses.dataclass(frozen=True)
class ArtifactRecord:
  """One artifact save a ledger recorded after the save completed.

  Attributes:
    sequence: Its position in the batch's commit order.
    writer: The ledger it was recorded in.
    filename: The artifact's filename.
    version: The version the artifact service returned for the save.
  """

  sequence: int
  writer: Writer
  filename: str
  version: int


@dataclasses.dataclass(frozen=True)
class FrozenBatch:
  """What a batch holds at its freeze; the merged Event derives from it.

  Mappings are read-only views and sequences are tuples. State values are
  the objects the live state holds, as with any ADK delta.

  Attributes:
    calls: The batch's function-call ids in UTF-8 byte order.
    state_delta: Each written key's winning value.
    state_winners: Each key of `state_delta` and the writer that won it.
    artifact_delta: Each saved filename's applied (highest) version.
    artifact_winners: Each filename of `artifact_delta` and the writer
      whose save produced that version.
    writes: Every state write and withdrawal, in commit order.
    artifacts: Every artifact record, in commit order.
  """

  calls: tuple[str, ...]
  state_delta: Mapping[str, Any]
  state_winners: Mapping[str, Writer]
  artifact_delta: Mapping[str, int]
  artifact_winners: Mapping[str, Writer]
  writes: tuple[StateWrite, ...]
  artifacts: tuple[ArtifactRecord, ...]


_ABSENT: Final = object()


def _precedence(writer: Writer) -> tuple[int, bytes]:
  # The event-policy step runs after every call, so it ranks above any id.
  if isinstance(writer, EventPolicyWriter):
    return (1, b'')
  return (0, writer.encode('utf-8'))


def _writer_name(writer: Writer) -> str:
  return writer.value if isinstance(writer, EventPolicyWriter) else writer


class _RecordingMap(dict[str, Any]):
  """A delta map every change of which goes through its ledger.

  The dict's own contents mirror what the ledger recorded for its writer,
  because `State` reads a key from its delta before the live state.
  """

  def __init__(self, ledger: EffectLedger) -> None:
    super().__init__()
    self._ledger = ledger

  def _record(self, delta: dict[str, Any]) -> None:
    raise NotImplementedError

  def __setitem__(self, key: str, value: Any) -> None:
    self._record({key: value})

  def update(self, *args: Any, **kwargs: Any) -> None:
    self._record(dict(*args, **kwargs))

  # dict's own `|=` merges in C without calling `update`. typeshed's
  # overloads of `__ior__` and `__or__` admit no single override.
  def __ior__(  # type: ignore[override,misc]
      self, other: Mapping[str, Any], /
  ) -> Self:
    self.update(other)
    return self

  def setdefault(self, key: str, default: Any = None) -> Any:
    if key in self:
      return self[key]
    self[key] = default
    return default

  def pop(self, key: str, /, *default: Any) -> Any:
    raise self._ledger._refuse_removal('pop', key)

  def __delitem__(self, key: str) -> None:
    raise self._ledger._refuse_removal('del', key)

  def popitem(self) -> tuple[str, Any]:
    raise self._ledger._refuse_removal('popitem', None)

  def clear(self) -> None:
    raise self._ledger._refuse_removal('clear', None)

  def copy(self) -> dict[str, Any]:
    return dict(self)

  def __reduce__(self) -> Any:
    # A copy (pickle, `copy.deepcopy`, a pydantic deep copy) is a plain
    # dict detached from the ledger: only the original records.
    return (dict, (dict(self),))


class _StateDeltaMap(_RecordingMap):
  """A writer's `state_delta`."""

  def _record(self, delta: dict[str, Any]) -> None:
    self._ledger._record_state(delta)

  def pop(self, key: str, /, *default: Any) -> Any:
    return self._ledger._withdraw_state(key, default)

  def recorded_in_batch(self, key: str, value: Any) -> bool:
    """True if some writer of the batch recorded this very `value` for
    `key` (a sibling's `State` write the live state now holds)."""
    return self._ledger._batch._recorded(key, value)


class _ArtifactDeltaMap(_RecordingMap):
  """A writer's `artifact_delta`."""

  def _record(self, delta: dict[str, Any]) -> None:
    self._ledger._record_artifacts(delta)


class EffectLedger:
  """One writer's ledger in a batch: a function call's, or the event policy's.

  Obtained from `EventBatchEffects.child` or `.event_policy`; never built
  directly.
  """

  def __init__(self, batch: EventBatchEffects, writer: Writer) -> None:
    self._batch = batch
    self._writer = writer
    self._state_map = _StateDeltaMap(self)
    self._artifact_map = _ArtifactDeltaMap(self)
    self._actions: Optional[EventActions] = None

  @property
  def writer(self) -> Writer:
    """The function-call id, or `EVENT_POLICY`."""
    return self._writer

  def event_actions(self) -> EventActions:
    """The `EventActions` to build this writer's context over.

    Its `state_delta` and `artifact_delta` are this ledger's recording
    maps (the same objects on every call). Anything else set on it is
    outside the ledger.
    """
    if self._actions is None:
      from ...events.event_actions import EventActions

      # Validation would copy the maps into plain dicts and lose them.
      self._actions = EventActions.model_construct(
          state_delta=self._state_map, artifact_delta=self._artifact_map
      )
    return self._actions

  def _record_state(self, delta: dict[str, Any]) -> None:
    self._batch._record_state(self, delta)

  def _withdraw_state(self, key: str, default: tuple[Any, ...]) -> Any:
    return self._batch._withdraw_state(self, key, default)

  def _record_artifacts(self, delta: dict[str, Any]) -> None:
    self._batch._record_artifacts(self, delta)

  def _refuse_removal(self, operation: str, key: Optional[str]) -> BatchError:
    return self._batch._refuse_removal(self, operation, key)


class EventBatchEffects:
  """The effect authority of one merged function-response Event.

  Holds one child ledger per function-call id and one event-policy
  ledger; stays `OPEN` until `freeze()` and then refuses every write.
  Safe to write from several threads (a tool may run in a thread pool).
  """

  def __init__(
      self,
      call_ids: Iterable[str],
      *,
      live_state: MutableMapping[str, Any],
  ) -> None:
    """Makes an open batch.

    Args:
      call_ids: The function-call ids of the batch's calls.
      live_state: The live session state the calls' `State` objects write
        (`session.state`).

    Raises:
      ValueError: No call ids, or an id that is not a non-empty string
        UTF-8 can encode, or the same id twice.
    """
    ids = tuple(call_ids)
    if not ids:
      raise ValueError('A batch needs at least one function-call id.')
    for call_id in ids:
      if not isinstance(call_id, str) or not call_id:
        raise ValueError(f'Bad function-call id {call_id!r}.')
      try:
        call_id.encode('utf-8')
      except UnicodeEncodeError as e:
        raise ValueError(
            f'Function-call id {call_id!r} has no UTF-8 form.'
        ) from e
    if len(set(ids)) != len(ids):
      raise ValueError('Duplicate function-call ids in one batch.')
    self._calls = tuple(sorted(ids, key=lambda i: i.encode('utf-8')))
    self._live = live_state
    self._lock = threading.Lock()
    self._state = LedgerState.OPEN
    self._next_sequence = 0
    self._writes: list[StateWrite] = []
    self._artifacts: list[ArtifactRecord] = []
    self._live_at_freeze: dict[str, Any] = {}
    self._children = {i: EffectLedger(self, i) for i in ids}
    self._event_policy = EffectLedger(self, EVENT_POLICY)

  @property
  def state(self) -> LedgerState:
    """`OPEN` until `freeze()`, then `FROZEN`."""
    return self._state

  @property
  def calls(self) -> tuple[str, ...]:
    """The batch's function-call ids in UTF-8 byte order."""
    return self._calls

  @property
  def event_policy(self) -> EffectLedger:
    """The event-policy step's ledger."""
    return self._event_policy

  def child(self, call_id: str) -> EffectLedger:
    """The ledger of the call `call_id`.

    Raises:
      BatchError: `UNKNOWN_CALL`, the batch has no such call.
    """
    ledger = self._children.get(call_id)
    if ledger is None:
      raise BatchError(
          BatchErrorReason.UNKNOWN_CALL,
          f'No function call {call_id!r} in this batch.',
          writer=call_id,
      )
    return ledger

  def freeze(self) -> FrozenBatch:
    """Closes the batch, picks the winners, and returns the frozen view.

    For a state key several writers wrote, the writer ranked highest wins:
    the event policy, else the greatest function-call id in UTF-8 byte
    order (as if the calls ran one after another in ascending id order).
    The winner is written into the live state too, so the live and the
    stored state agree. For an artifact filename the applied save wins:
    the highest version.

    Raises:
      BatchError: `ALREADY_FROZEN`.
    """
    with self._lock:
      if self._state is LedgerState.FROZEN:
        raise BatchError(
            BatchErrorReason.ALREADY_FROZEN, 'The batch is already frozen.'
        )
      self._state = LedgerState.FROZEN
      state_delta, state_winners = self._state_outcome()
      for key, value in state_delta.items():
        self._live[key] = value
      # Taken after the winners are in, so undoing a late write restores
      # what the frozen batch says.
      self._live_at_freeze = dict(self._live)
      artifact_delta, artifact_winners = self._artifact_outcome()
      return FrozenBatch(
          calls=self._calls,
          state_delta=types.MappingProxyType(state_delta),
          state_winners=types.MappingProxyType(state_winners),
          artifact_delta=types.MappingProxyType(artifact_delta),
          artifact_winners=types.MappingProxyType(artifact_winners),
          writes=tuple(self._writes),
          artifacts=tuple(self._artifacts),
      )

  def _state_outcome(self) -> tuple[dict[str, Any], dict[str, Writer]]:
    # Each writer's own delta: its last write of a key, unless withdrawn.
    own: dict[str, dict[Writer, tuple[int, Any]]] = {}
    for write in self._writes:
      by_writer = own.setdefault(write.key, {})
      if write.withdrawn:
        by_writer.pop(write.writer, None)
      elif write.writer in by_writer:
        by_writer[write.writer] = (by_writer[write.writer][0], write.value)
      else:
        by_writer[write.writer] = (write.sequence, write.value)
    # Keys come out in the order the ascending-id sequential run would
    # first write them, so the delta's order does not depend on timing.
    placed = sorted(
        (
            min((_precedence(w), first) for w, (first, _) in by_writer.items()),
            key,
        )
        for key, by_writer in own.items()
        if by_writer
    )
    delta: dict[str, Any] = {}
    winners: dict[str, Writer] = {}
    for _, key in placed:
      winner = max(own[key], key=_precedence)
      delta[key] = own[key][winner][1]
      winners[key] = winner
    return delta, winners

  def _artifact_outcome(self) -> tuple[dict[str, int], dict[str, Writer]]:
    best: dict[str, ArtifactRecord] = {}
    first: dict[str, tuple[tuple[int, bytes], int]] = {}
    for record in self._artifacts:
      # As for state: a filename's place is where the ascending-id run
      # would first save it, so the delta's order does not depend on timing.
      rank = (_precedence(record.writer), record.sequence)
      first[record.filename] = min(first.get(record.filename, rank), rank)
      held = best.get(record.filename)
      # Equal versions can only come from records no real store produced;
      # the id order settles them so the outcome stays deterministic.
      if held is None or (record.version, _precedence(record.writer)) > (
          held.version,
          _precedence(held.writer),
      ):
        best[record.filename] = record
    ordered = sorted(best.values(), key=lambda r: first[r.filename])
    return (
        {r.filename: r.version for r in ordered},
        {r.filename: r.writer for r in ordered},
    )

  def _recorded(self, key: str, value: Any) -> bool:
    with self._lock:
      return any(w.key == key and w.value is value for w in self._writes)

  def _sequence(self) -> int:
    sequence = self._next_sequence
    self._next_sequence += 1
    return sequence

  def _frozen_error(self, ledger: EffectLedger, key: str) -> BatchError:
    return BatchError(
        BatchErrorReason.FROZEN,
        f'Write to {key!r} after the batch froze.',
        writer=_writer_name(ledger.writer),
        key=key,
    )

  def _record_state(self, ledger: EffectLedger, delta: dict[str, Any]) -> None:
    if not delta:
      return  # `State.update({})` writes nothing, before or after freeze.
    with self._lock:
      if self._state is LedgerState.FROZEN:
        for key, value in delta.items():
          # `State` wrote the live state before its delta; a value that is
          # not there came from elsewhere and is not ours to undo.
          if self._live.get(key, _ABSENT) is value:
            if key in self._live_at_freeze:
              self._live[key] = self._live_at_freeze[key]
            else:
              del self._live[key]
        raise self._frozen_error(ledger, next(iter(delta)))
      for key, value in delta.items():
        # `State` (and its nested-write path) puts the very object in the
        # live state first; a delta-only value bypassed it.
        if self._live.get(key, _ABSENT) is not value:
          raise BatchError(
              BatchErrorReason.OUT_OF_API,
              f'State key {key!r} written to the delta map outside State.',
              writer=_writer_name(ledger.writer),
              key=key,
          )
      for key, value in delta.items():
        self._writes.append(
            StateWrite(self._sequence(), ledger.writer, key, value)
        )
        dict.__setitem__(ledger._state_map, key, value)

  def _withdraw_state(
      self, ledger: EffectLedger, key: str, default: tuple[Any, ...]
  ) -> Any:
    # pylint: disable-next=g-import-not-at-top
    from ...sessions.state import _equals_its_json_form

    with self._lock:
      if self._state is LedgerState.FROZEN:
        raise self._frozen_error(ledger, key)
      held = dict.get(ledger._state_map, key, _ABSENT)
      if held is _ABSENT:
        if default:
          return default[0]
        raise KeyError(key)
      # The one removal `State` makes: a nested write it recorded whose
      # container lost its JSON form, so the durable delta cannot carry it.
      # The same predicate decides here, on the container the live state
      # still holds.
      if self._live.get(key, _ABSENT) is not held or _equals_its_json_form(
          held
      ):
        raise self._refuse_removal(ledger, 'pop', key)
      self._writes.append(
          StateWrite(self._sequence(), ledger.writer, key, held, True)
      )
      dict.pop(ledger._state_map, key)
      return held

  def _record_artifacts(
      self, ledger: EffectLedger, delta: dict[str, Any]
  ) -> None:
    if not delta:
      return
    with self._lock:
      if self._state is LedgerState.FROZEN:
        raise self._frozen_error(ledger, next(iter(delta)))
      for filename, version in delta.items():
        # `bool` is an `int`; no artifact service returns one.
        if (
            not isinstance(filename, str)
            or type(version) is not int
            or version < 0
        ):
          raise BatchError(
              BatchErrorReason.OUT_OF_API,
              f'Artifact record {filename!r} -> {version!r} is not a save'
              ' the artifact API reports.',
              writer=_writer_name(ledger.writer),
              key=filename if isinstance(filename, str) else None,
          )
      for filename, version in delta.items():
        self._artifacts.append(
            ArtifactRecord(self._sequence(), ledger.writer, filename, version)
        )
        dict.__setitem__(ledger._artifact_map, filename, version)

  def _refuse_removal(
      self, ledger: EffectLedger, operation: str, key: Optional[str]
  ) -> BatchError:
    if self._state is LedgerState.FROZEN:
      return self._frozen_error(ledger, key or '')
    return BatchError(
        BatchErrorReason.OUT_OF_API,
        f'{operation} on a recording delta map; only the State and artifact'
        ' APIs change it.',
        writer=_writer_name(ledger.writer),
        key=key,
    )
