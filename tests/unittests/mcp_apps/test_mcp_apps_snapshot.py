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


"""The closed deep-read-only snapshot (RFC §4, P3-SNAP-01..12)."""

from __future__ import annotations

import copy
import json
import math
import pickle
from typing import Any

from google.adk.mcp_apps import canonical_json
from google.adk.mcp_apps.facades.errors import FacadeError
from google.adk.mcp_apps.facades.errors import FacadeErrorReason
from google.adk.mcp_apps.facades.snapshot import FrozenDict
from google.adk.mcp_apps.facades.snapshot import FrozenList
from google.adk.mcp_apps.facades.snapshot import snapshot
from google.adk.mcp_apps.facades.snapshot import thaw
from hypothesis import given
from hypothesis import HealthCheck
from hypothesis import settings
from hypothesis import strategies as st
import pytest
import snapshot_properties
from snapshot_properties import check_golden_table
from snapshot_properties import check_row
from snapshot_properties import Hooked

R = FacadeErrorReason


def _rows(case: str) -> list[Any]:
  return [
      pytest.param(row, id=row.name)
      for row in snapshot_properties.rows()
      if row.case == case
  ]


@pytest.mark.conformance(*(f'P3-SNAP-{n:02d}' for n in range(1, 13)))
def test_the_golden_table_passes_for_snapshot_itself() -> None:
  check_golden_table(snapshot)


def test_the_golden_table_follows_smaller_limits() -> None:
  check_golden_table(
      lambda v: snapshot(v, max_values=50, max_depth=3),
      max_values=50,
      max_depth=3,
  )


@pytest.mark.conformance('P3-SNAP-01')
@pytest.mark.parametrize('row', _rows('P3-SNAP-01'))
def test_json_values_are_copied_structurally(row: Any) -> None:
  check_row(row, snapshot)


@pytest.mark.conformance('P3-SNAP-01')
def test_copy_uses_read_only_container_types_and_shares_scalars() -> None:
  text = 'a long string ' * 10
  result = snapshot({'a': [text, {'b': 1}]})
  assert type(result) is FrozenDict
  assert type(result['a']) is FrozenList
  assert type(result['a'][1]) is FrozenDict
  assert result['a'][0] is text


@pytest.mark.conformance('P3-SNAP-01')
def test_a_shared_sublist_is_copied_once_per_occurrence() -> None:
  shared = [1, 2]
  result = snapshot({'left': shared, 'right': shared})
  assert result == {'left': [1, 2], 'right': [1, 2]}
  assert result['left'] is not result['right']


@pytest.mark.conformance('P3-SNAP-02')
@pytest.mark.parametrize('row', _rows('P3-SNAP-02'))
def test_numbers_in_the_i_json_range_only(row: Any) -> None:
  check_row(row, snapshot)


@pytest.mark.conformance('P3-SNAP-02')
def test_floats_keep_their_type_unlike_canonical_text() -> None:
  result = snapshot([2.0, 1e16, 2.5e-05])
  assert [type(x) for x in result] == [float, float, float]
  assert json.dumps(result) == '[2.0, 1e+16, 2.5e-05]'


@pytest.mark.conformance('P3-SNAP-03')
@pytest.mark.parametrize('row', _rows('P3-SNAP-03'))
def test_non_finite_floats_are_rejected(row: Any) -> None:
  check_row(row, snapshot)


@pytest.mark.conformance('P3-SNAP-04')
@pytest.mark.parametrize('row', _rows('P3-SNAP-04'))
def test_numeric_subclasses_are_rejected(row: Any) -> None:
  check_row(row, snapshot)


@pytest.mark.conformance('P3-SNAP-05')
@pytest.mark.parametrize('row', _rows('P3-SNAP-05'))
def test_tuples_are_rejected(row: Any) -> None:
  check_row(row, snapshot)


@pytest.mark.conformance('P3-SNAP-05')
def test_a_rejection_names_the_offending_path() -> None:
  with pytest.raises(FacadeError) as caught:
    snapshot({'a': [0, {'b/c': (1,)}]})
  assert caught.value.reason is R.TUPLE
  assert caught.value.path == '/a/1/b~1c'


@pytest.mark.conformance('P3-SNAP-06')
@pytest.mark.parametrize('row', _rows('P3-SNAP-06'))
def test_cycles_are_rejected(row: Any) -> None:
  check_row(row, snapshot)


@pytest.mark.conformance('P3-SNAP-06')
def test_a_cycle_is_named_as_such_under_any_depth_limit() -> None:
  loop: dict[str, Any] = {}
  loop['self'] = loop
  for depth in (1, 2, 64, canonical_json.MAX_DEPTH_CEILING):
    with pytest.raises(FacadeError) as caught:
      snapshot({'x': loop}, max_depth=depth)
    assert caught.value.reason is R.CYCLE
    assert 'contains itself' in str(caught.value)


@pytest.mark.conformance('P3-SNAP-07')
@pytest.mark.parametrize('row', _rows('P3-SNAP-07'))
def test_non_string_keys_are_rejected_not_coerced(row: Any) -> None:
  check_row(row, snapshot)


@pytest.mark.conformance('P3-SNAP-08')
@pytest.mark.parametrize('row', _rows('P3-SNAP-08'))
def test_keys_that_would_collide_after_coercion_are_rejected(row: Any) -> None:
  check_row(row, snapshot)


@pytest.mark.conformance('P3-SNAP-09')
@pytest.mark.parametrize('row', _rows('P3-SNAP-09'))
def test_the_size_limit_is_enforced(row: Any) -> None:
  check_row(row, snapshot)


@pytest.mark.conformance('P3-SNAP-09')
def test_the_size_limit_counts_every_value_and_is_reported() -> None:
  value = {'a': [1, 2], 'b': {'c': None}}  # 6 values with the root.
  assert snapshot(value, max_values=6) == value
  with pytest.raises(FacadeError) as caught:
    snapshot(value, max_values=5)
  assert caught.value.reason is R.TOO_LARGE
  assert caught.value.limit == 5


@pytest.mark.conformance('P3-SNAP-09')
def test_a_repeated_reference_counts_once_per_occurrence() -> None:
  level: Any = [0, 0]
  for _ in range(30):  # 2**30 leaves if unfolded.
    level = [level, level]
  with pytest.raises(FacadeError) as caught:
    snapshot(level)
  assert caught.value.reason is R.TOO_LARGE


@pytest.mark.conformance('P3-SNAP-10')
@pytest.mark.parametrize('row', _rows('P3-SNAP-10'))
def test_the_depth_limit_is_enforced(row: Any) -> None:
  check_row(row, snapshot)


@pytest.mark.conformance('P3-SNAP-10')
def test_a_deep_shared_structure_is_too_deep_not_a_cycle() -> None:
  level: Any = [0]
  for _ in range(100):  # 2**100 paths, 101 distinct lists.
    level = [level, level]
  with pytest.raises(FacadeError) as caught:
    snapshot(level)
  assert caught.value.reason is R.TOO_DEEP


@pytest.mark.conformance('P3-SNAP-10')
def test_the_depth_limit_is_reported() -> None:
  with pytest.raises(FacadeError) as caught:
    snapshot({'a': {'b': {'c': 1}}}, max_depth=2)
  assert caught.value.reason is R.TOO_DEEP
  assert caught.value.limit == 2
  assert snapshot({'a': {'b': 1}}, max_depth=2) == {'a': {'b': 1}}


def test_invalid_limits_are_refused() -> None:
  with pytest.raises(ValueError):
    snapshot([], max_values=0)
  with pytest.raises(ValueError):
    snapshot([], max_depth=canonical_json.MAX_DEPTH_CEILING + 1)


@pytest.mark.conformance('P3-SNAP-11')
@pytest.mark.parametrize('row', _rows('P3-SNAP-11'))
def test_arbitrary_objects_are_rejected_without_a_hook(row: Any) -> None:
  check_row(row, snapshot)


@pytest.mark.conformance('P3-SNAP-11')
def test_deepcopy_is_never_called(monkeypatch: pytest.MonkeyPatch) -> None:
  called = []

  def recording(*args: Any, **kwargs: Any) -> Any:
    called.append(args)
    raise AssertionError('copy used')

  monkeypatch.setattr(copy, 'deepcopy', recording)
  monkeypatch.setattr(copy, 'copy', recording)
  assert snapshot({'a': [1, {'b': 'c'}]}) == {'a': [1, {'b': 'c'}]}
  Hooked.calls.clear()
  with pytest.raises(FacadeError):
    snapshot([{'x': Hooked()}])
  assert called == []
  assert Hooked.calls == []


@pytest.mark.conformance('P3-SNAP-12')
def test_mutating_the_source_leaves_the_snapshot_unchanged() -> None:
  source = {'cart': [{'qty': 1}], 'tags': ['a']}
  result = snapshot(source)
  source['cart'][0]['qty'] = 9
  source['cart'].append({'qty': 2})
  source['tags'].clear()
  source['new'] = True
  assert result == {'cart': [{'qty': 1}], 'tags': ['a']}


@pytest.mark.conformance('P3-SNAP-12')
def test_mutating_the_snapshot_raises_read_only() -> None:
  result = snapshot({'cart': [{'qty': 1}]})
  attempts = [
      lambda: result.__setitem__('x', 1),
      lambda: result['cart'].append(2),
      lambda: result['cart'][0].update(qty=5),
      lambda: result.__ior__({'x': 1}),
      lambda: result['cart'].__init__([]),
      lambda: result.__init__({}),
  ]
  for attempt in attempts:
    with pytest.raises(FacadeError) as caught:
      attempt()
    assert caught.value.reason is R.READ_ONLY
  assert result == {'cart': [{'qty': 1}]}
  with pytest.raises(FacadeError):
    FrozenDict({'a': 1})


@pytest.mark.conformance('P3-SNAP-12')
def test_derived_values_are_plain_and_mutable() -> None:
  result = snapshot({'a': [1]})
  merged = result | {'b': 2}
  merged['c'] = 3
  items = result['a'] + [2]
  items.append(3)
  assert type(merged) is dict and type(items) is list
  assert result == {'a': [1]}


def test_thaw_returns_independent_plain_values() -> None:
  result = snapshot({'a': [1, {'b': 2.0}]})
  plain = thaw(result)
  assert plain == result
  assert type(plain) is dict and type(plain['a']) is list
  assert type(plain['a'][1]) is dict
  plain['a'][1]['b'] = 3
  assert result['a'][1]['b'] == 2.0
  assert canonical_json.canonicalize(plain) == b'{"a":[1,{"b":3}]}'


def test_a_snapshot_round_trips_through_pickle_and_copy() -> None:
  result = snapshot({'a': [1, {'b': None}]})
  for again in (pickle.loads(pickle.dumps(result)), copy.deepcopy(result)):
    assert again == result
    assert type(again) is FrozenDict and type(again['a']) is FrozenList
    with pytest.raises(FacadeError):
      again['a'].append(1)


def test_a_snapshot_is_not_itself_in_the_domain() -> None:
  with pytest.raises(FacadeError) as caught:
    snapshot(snapshot({'a': 1}))
  assert caught.value.reason is R.UNSUPPORTED_TYPE
  assert snapshot(thaw(snapshot({'a': 1}))) == {'a': 1}


# ---------------------------------------------------------------------------
# Generated values.

_SAFE = 2**53 - 1
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-_SAFE, _SAFE)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
_json = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=20,
)


def _forbidden() -> Any:
  items: list[Any] = []
  items.append(items)
  return items


_FORBIDDEN: list[tuple[Any, FacadeErrorReason]] = [
    (lambda: (1,), R.TUPLE),
    (lambda: math.nan, R.NON_FINITE),
    (lambda: -math.inf, R.NON_FINITE),
    (lambda: _SAFE + 1, R.OUT_OF_RANGE),
    (lambda: snapshot_properties.Colour.RED, R.NUMERIC_SUBCLASS),
    (lambda: snapshot_properties.Count(1), R.NUMERIC_SUBCLASS),
    (lambda: {1: 'a', '1': 'b'}, R.NON_STRING_KEY),
    (lambda: {None: 1}, R.NON_STRING_KEY),
    (lambda: {1, 2}, R.UNSUPPORTED_TYPE),
    (lambda: b'x', R.UNSUPPORTED_TYPE),
    (Hooked, R.UNSUPPORTED_TYPE),
    (_forbidden, R.CYCLE),
]


@settings(
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(_json)
def test_generated_json_values_snapshot_equal_independent_read_only(
    value: Any,
) -> None:
  text = json.dumps(value)
  result = snapshot(value)
  assert snapshot_properties.same(result, value)
  assert json.dumps(result) == text
  assert snapshot_properties.same(thaw(result), value)
  for node in snapshot_properties.containers(result):
    with pytest.raises(FacadeError) as caught:
      node.clear()
    assert caught.value.reason is R.READ_ONLY
  snapshot_properties.mutate_source(value)
  assert json.dumps(result) == text


@settings(
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(_json, st.sampled_from(range(len(_FORBIDDEN))), st.data())
def test_one_forbidden_value_anywhere_is_rejected_with_its_reason(
    value: Any, which: int, data: st.DataObject
) -> None:
  make, reason = _FORBIDDEN[which]
  depth = data.draw(st.integers(0, 6))
  bad = make()
  for _ in range(depth):
    bad = data.draw(st.sampled_from([lambda b: [b], lambda b: {'k': b}]))(bad)
  holder = [value, bad] if data.draw(st.booleans()) else {'v': value, 'b': bad}
  Hooked.calls.clear()
  with pytest.raises(FacadeError) as caught:
    snapshot(holder)
  assert caught.value.reason is reason
  assert Hooked.calls == []
