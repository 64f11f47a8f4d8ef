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


"""The shared golden property table of the closed snapshot (P3-SNAP-01..12).

Every facade that hands out a snapshot runs the same rows through its own
accessor. Each row builds a fresh input and states the outcome: the exact
copy, or the `FacadeErrorReason` of the refusal.

Example (a facade test):

  from snapshot_properties import check_golden_table

  def test_state_snapshot_passes_the_golden_table():
    check_golden_table(lambda value: facade_over(value).state)
"""

from __future__ import annotations

import dataclasses
import decimal
import enum
import fractions
import json
import math
from typing import Any
from typing import Callable

from google.adk.mcp_apps.facades.errors import FacadeError
from google.adk.mcp_apps.facades.errors import FacadeErrorReason
from google.adk.mcp_apps.facades.snapshot import DEFAULT_MAX_DEPTH
from google.adk.mcp_apps.facades.snapshot import DEFAULT_MAX_VALUES
import pytest

R = FacadeErrorReason


class Colour(enum.IntEnum):
  RED = 1


class Ratio(float):
  pass


class Count(int):
  pass


class Name(str):
  pass


class Hooked:
  """An object whose copy and pickle hooks record every call."""

  calls: list[str] = []

  def __copy__(self) -> Any:
    Hooked.calls.append('__copy__')
    return self

  def __deepcopy__(self, memo: Any) -> Any:
    Hooked.calls.append('__deepcopy__')
    return self

  def __reduce__(self) -> Any:
    Hooked.calls.append('__reduce__')
    return (Hooked, ())

  def __reduce_ex__(self, protocol: Any) -> Any:
    Hooked.calls.append('__reduce_ex__')
    return (Hooked, ())

  def __getstate__(self) -> Any:
    Hooked.calls.append('__getstate__')
    return {}


class HookedDict(dict):  # type: ignore[type-arg]
  """A dict subclass with a recording `__deepcopy__`."""

  def __deepcopy__(self, memo: Any) -> Any:
    Hooked.calls.append('HookedDict.__deepcopy__')
    return dict(self)


@dataclasses.dataclass(frozen=True)
class Row:
  """One property: a case, a fresh input, and the outcome."""

  case: str
  name: str
  make: Callable[[], Any]
  expected: Any
  """The exact copy, or the `FacadeErrorReason` of the refusal."""


def _cycle_list() -> Any:
  items: list[Any] = [1]
  items.append(items)
  return items


def _cycle_dict() -> Any:
  outer: dict[str, Any] = {'a': {'b': []}}
  outer['a']['b'].append(outer)
  return outer


def _dag() -> Any:
  shared = [1, {'x': 2}]
  return {'left': shared, 'right': shared}


def _nested(depth: int) -> Any:
  value: Any = 'leaf'
  for _ in range(depth):
    value = [value]
  return value


def rows(
    max_values: int = DEFAULT_MAX_VALUES, max_depth: int = DEFAULT_MAX_DEPTH
) -> list[Row]:
  """The table, with its limit rows built for the accessor's limits."""
  big = 2**53 - 1
  return [
      # P3-SNAP-01: the structural domain.
      Row('P3-SNAP-01', 'str', lambda: 'héllo ✓', 'héllo ✓'),
      Row('P3-SNAP-01', 'empty str', lambda: '', ''),
      Row('P3-SNAP-01', 'true', lambda: True, True),
      Row('P3-SNAP-01', 'false', lambda: False, False),
      Row('P3-SNAP-01', 'None', lambda: None, None),
      Row('P3-SNAP-01', 'empty list', lambda: [], []),
      Row('P3-SNAP-01', 'empty dict', lambda: {}, {}),
      Row(
          'P3-SNAP-01',
          'nested state',
          lambda: {'cart': [{'sku': 'A1', 'qty': 2, 'gift': None}], 'n': ''},
          {'cart': [{'sku': 'A1', 'qty': 2, 'gift': None}], 'n': ''},
      ),
      Row(
          'P3-SNAP-01',
          'shared list (DAG)',
          _dag,
          {
              'left': [1, {'x': 2}],
              'right': [1, {'x': 2}],
          },
      ),
      # P3-SNAP-02: numbers in the I-JSON range.
      Row('P3-SNAP-02', 'zero', lambda: 0, 0),
      Row('P3-SNAP-02', 'max safe int', lambda: big, big),
      Row('P3-SNAP-02', 'min safe int', lambda: -big, -big),
      Row(
          'P3-SNAP-02',
          'float',
          lambda: [1.5, -0.0, 1e-7, 1e300],
          [
              1.5,
              -0.0,
              1e-7,
              1e300,
          ],
      ),
      Row('P3-SNAP-02', 'integral float stays float', lambda: 2.0, 2.0),
      Row('P3-SNAP-02', 'int above range', lambda: big + 1, R.OUT_OF_RANGE),
      Row(
          'P3-SNAP-02',
          'int below range',
          lambda: {'n': -big - 1},
          R.OUT_OF_RANGE,
      ),
      Row('P3-SNAP-02', 'huge int', lambda: [10**100], R.OUT_OF_RANGE),
      # P3-SNAP-03: non-finite floats.
      Row('P3-SNAP-03', 'nan', lambda: math.nan, R.NON_FINITE),
      Row('P3-SNAP-03', 'inf in list', lambda: [math.inf], R.NON_FINITE),
      Row('P3-SNAP-03', '-inf in dict', lambda: {'x': -math.inf}, R.NON_FINITE),
      # P3-SNAP-04: numeric subclasses (exact types only).
      Row('P3-SNAP-04', 'IntEnum', lambda: Colour.RED, R.NUMERIC_SUBCLASS),
      Row(
          'P3-SNAP-04',
          'Decimal',
          lambda: [decimal.Decimal('1.5')],
          R.NUMERIC_SUBCLASS,
      ),
      Row(
          'P3-SNAP-04',
          'Fraction',
          lambda: {'f': fractions.Fraction(1, 3)},
          R.NUMERIC_SUBCLASS,
      ),
      Row('P3-SNAP-04', 'int subclass', lambda: Count(3), R.NUMERIC_SUBCLASS),
      Row(
          'P3-SNAP-04',
          'float subclass',
          lambda: [Ratio(0.5)],
          R.NUMERIC_SUBCLASS,
      ),
      Row('P3-SNAP-04', 'complex', lambda: 1j, R.NUMERIC_SUBCLASS),
      Row(
          'P3-SNAP-04',
          'str subclass',
          lambda: {'s': Name('x')},
          R.UNSUPPORTED_TYPE,
      ),
      # P3-SNAP-05: tuples.
      Row('P3-SNAP-05', 'tuple', lambda: (1, 2), R.TUPLE),
      Row('P3-SNAP-05', 'empty tuple in dict', lambda: {'t': ()}, R.TUPLE),
      Row(
          'P3-SNAP-05', 'namedtuple-like in list', lambda: [[0, (1,)]], R.TUPLE
      ),
      # P3-SNAP-06: cycles.
      Row('P3-SNAP-06', 'list containing itself', _cycle_list, R.CYCLE),
      Row('P3-SNAP-06', 'dict cycle through a list', _cycle_dict, R.CYCLE),
      # P3-SNAP-07: non-string keys, never coerced.
      Row('P3-SNAP-07', 'int key', lambda: {1: 'a'}, R.NON_STRING_KEY),
      Row('P3-SNAP-07', 'None key', lambda: {'a': {None: 1}}, R.NON_STRING_KEY),
      Row('P3-SNAP-07', 'bool key', lambda: {True: 1}, R.NON_STRING_KEY),
      Row(
          'P3-SNAP-07',
          'str subclass key',
          lambda: {Name('k'): 1},
          R.NON_STRING_KEY,
      ),
      Row('P3-SNAP-07', 'tuple key', lambda: {(1,): 1}, R.NON_STRING_KEY),
      # P3-SNAP-08: a name that would collide after coercion is refused
      # before any coercion could happen.
      Row(
          'P3-SNAP-08',
          "1 and '1'",
          lambda: {1: 'a', '1': 'b'},
          R.NON_STRING_KEY,
      ),
      Row(
          'P3-SNAP-08',
          "'1' and 1",
          lambda: {'1': 'b', 1: 'a'},
          R.NON_STRING_KEY,
      ),
      Row(
          'P3-SNAP-08',
          "True and 'true'",
          lambda: {'true': 1, True: 2},
          R.NON_STRING_KEY,
      ),
      # P3-SNAP-09: the size limit (values, the root included).
      Row(
          'P3-SNAP-09',
          'at the size limit',
          lambda: [0] * (max_values - 1),
          [0] * (max_values - 1),
      ),
      Row(
          'P3-SNAP-09',
          'over the size limit',
          lambda: [0] * max_values,
          R.TOO_LARGE,
      ),
      Row(
          'P3-SNAP-09',
          'over the size limit, nested',
          lambda: {'a': [[0] * (max_values // 2)] * 2},
          R.TOO_LARGE,
      ),
      # P3-SNAP-10: the depth limit.
      Row(
          'P3-SNAP-10',
          'at the depth limit',
          lambda: _nested(max_depth),
          _nested(max_depth),
      ),
      Row(
          'P3-SNAP-10',
          'over the depth limit',
          lambda: _nested(max_depth + 1),
          R.TOO_DEEP,
      ),
      # P3-SNAP-11: arbitrary objects, never copied through a hook.
      Row(
          'P3-SNAP-11',
          'object with copy hooks',
          lambda: Hooked(),
          R.UNSUPPORTED_TYPE,
      ),
      Row(
          'P3-SNAP-11',
          'nested hooked object',
          lambda: {'a': [Hooked()]},
          R.UNSUPPORTED_TYPE,
      ),
      Row(
          'P3-SNAP-11',
          'dict subclass with __deepcopy__',
          lambda: HookedDict(a=1),
          R.UNSUPPORTED_TYPE,
      ),
      Row('P3-SNAP-11', 'set', lambda: {'s': {1}}, R.UNSUPPORTED_TYPE),
      Row('P3-SNAP-11', 'bytes', lambda: [b'x'], R.UNSUPPORTED_TYPE),
      Row('P3-SNAP-11', 'frozenset', lambda: frozenset(), R.UNSUPPORTED_TYPE),
      # P3-SNAP-12 is checked on every accepted row (see `check_row`).
  ]


def containers(value: Any) -> list[Any]:
  """Every dict and list inside `value`, itself included."""
  found = []
  stack = [value]
  while stack:
    node = stack.pop()
    if isinstance(node, dict):
      found.append(node)
      stack.extend(node.values())
    elif isinstance(node, list):
      found.append(node)
      stack.extend(node)
  return found


def same(a: Any, b: Any) -> bool:
  """Equal with the same exact types throughout (so 2.0 is not 2)."""
  if isinstance(a, dict) and isinstance(b, dict):
    return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
  if isinstance(a, list) and isinstance(b, list):
    return len(a) == len(b) and all(map(same, a, b))
  if type(a) is not type(b):
    return False
  if type(a) is float:
    return a == b and math.copysign(1, a) == math.copysign(1, b)
  return bool(a == b)


_WRITES: list[Callable[[Any], Any]] = [
    lambda d: d.__setitem__('k', 1),
    lambda d: d.pop(next(iter(d), 'k')),
    lambda d: d.update(k=1),
    lambda d: d.setdefault('k', 1),
    lambda d: d.clear(),
    lambda d: d.popitem(),
    lambda d: d.__delitem__(next(iter(d), 'k')),
]
_LIST_WRITES: list[Callable[[Any], Any]] = [
    lambda s: s.append(1),
    lambda s: s.extend([1]),
    lambda s: s.insert(0, 1),
    lambda s: s.__setitem__(0, 1),
    lambda s: s.__setitem__(slice(0, 0), [1]),
    lambda s: s.__delitem__(0),
    lambda s: s.pop(),
    lambda s: s.remove(1),
    lambda s: s.clear(),
    lambda s: s.sort(),
    lambda s: s.reverse(),
    lambda s: s.__iadd__([1]),
    lambda s: s.__imul__(2),
]


def mutate_source(value: Any) -> None:
  """Changes every container of the source in place."""
  for node in containers(value):
    if isinstance(node, dict):
      node['__added__'] = 1
      for key in list(node):
        if key != '__added__' and not isinstance(node[key], (dict, list)):
          node[key] = 'changed'
    else:
      node.append('added')
      for i, item in enumerate(node):
        if not isinstance(item, (dict, list)):
          node[i] = 'changed'


def check_row(row: Row, take_snapshot: Callable[[Any], Any]) -> None:
  """Runs one row through `take_snapshot` and checks its outcome."""
  source = row.make()
  Hooked.calls.clear()
  if isinstance(row.expected, FacadeErrorReason):
    with pytest.raises(FacadeError) as caught:
      take_snapshot(source)
    assert caught.value.reason is row.expected, row.name
    assert Hooked.calls == [], row.name
    return
  copy = take_snapshot(source)
  assert Hooked.calls == [], row.name
  # P3-SNAP-01/02: the exact value, exact types, JSON text unchanged.
  assert same(copy, row.expected), row.name
  assert json.dumps(copy) == json.dumps(row.expected), row.name
  frozen = containers(copy)
  # P3-SNAP-12: no container is shared with the source...
  assert not {id(n) for n in frozen} & {id(n) for n in containers(source)}
  # ... each refuses every write and is left as it was...
  for node in frozen:
    before = json.dumps(node)
    writes = _WRITES if isinstance(node, dict) else _LIST_WRITES
    for write in writes:
      with pytest.raises(FacadeError) as caught:
        write(node)
      assert caught.value.reason is R.READ_ONLY, row.name
    assert json.dumps(node) == before, row.name
  # ... and changing the source afterwards leaves the copy alone.
  mutate_source(source)
  assert same(copy, row.expected), row.name


def check_golden_table(
    take_snapshot: Callable[[Any], Any],
    *,
    max_values: int = DEFAULT_MAX_VALUES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> None:
  """Runs every row through an accessor that hands out a snapshot.

  Args:
    take_snapshot: Puts a value where the facade reads it and returns what
      the facade hands out (or raises the facade's `FacadeError`).
    max_values: The accessor's size limit.
    max_depth: The accessor's depth limit.
  """
  for row in rows(max_values, max_depth):
    check_row(row, take_snapshot)
