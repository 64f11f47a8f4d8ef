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

"""ADK Canonical JSON v1 (RFC §3, P2-CJ-01..08 and P2-CJ-10).

The golden vectors in `data/canonical_json/` are the contract shared with
other languages: each valid vector must come out byte for byte, each
invalid one must be refused with its typed error (and, where given, the
JSON Pointer of the offending value). The other tests cover what JSON text
cannot express: Python types outside the domain, the configured limits,
the purpose-tagged envelopes, and the fast path against the plain
reference encoder it falls back to. The two independent RFC 8785 oracles
are in `tests/integration/mcp_apps/test_mcp_apps_canonical_json_oracles.py`.
"""

from __future__ import annotations

import collections
import copy
import enum
import hashlib
import json
import math
from pathlib import Path
from typing import Any

from google.adk.mcp_apps import canonical_json as cj
from google.adk.mcp_apps.errors import McpAppsError
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import pytest

_DATA = Path(__file__).parent / 'data' / 'canonical_json'


def _load(name: str) -> list[dict[str, Any]]:
  lines = (_DATA / name).read_text(encoding='utf-8').split('\n')
  return [json.loads(line) for line in lines if line.strip()]


_VECTORS = _load('vectors.jsonl')
_ENVELOPES = _load('envelopes.jsonl')
_PURPOSES = list(cj.Purpose)
_REASONS = {
    'integer_out_of_range': cj.CanonicalJsonReason.INTEGER_OUT_OF_RANGE,
    'non_finite': cj.CanonicalJsonReason.NON_FINITE,
    'invalid_string': cj.CanonicalJsonReason.INVALID_STRING,
    'too_large': cj.CanonicalJsonReason.TOO_LARGE,
    'too_deep': cj.CanonicalJsonReason.TOO_DEEP,
    'unsupported_type': cj.CanonicalJsonReason.UNSUPPORTED_TYPE,
}


def _raises(reason: cj.CanonicalJsonReason) -> Any:
  """`pytest.raises` for a `CanonicalJsonError` with this reason."""
  return pytest.raises(
      cj.CanonicalJsonError, check=lambda e: e.reason is reason
  )


def _case(case_id: str) -> Any:
  """Parametrizes a test over the case's vectors and marks it with the case."""
  vectors = [v for v in _VECTORS if v['case'] == case_id]
  assert vectors, case_id
  parametrize = pytest.mark.parametrize(
      'vector', vectors, ids=[v['id'] for v in vectors]
  )
  return lambda test: pytest.mark.conformance(case_id)(parametrize(test))


def _limits(vector: dict[str, Any]) -> dict[str, int]:
  return {k: vector[k] for k in ('max_bytes', 'max_depth') if k in vector}


def _check_vector(vector: dict[str, Any]) -> None:
  value = json.loads(vector['input'])
  limits = _limits(vector)
  if 'expected' in vector:
    expected = vector['expected'].encode('utf-8')
    assert cj.canonicalize(value, **limits) == expected
    # The reference encoder agrees, whichever path served the call.
    depth = limits.get('max_depth', cj.DEFAULT_MAX_DEPTH)
    reference = cj._reference_encode(value, depth, None)
    assert reference.encode('utf-8') == expected
    return
  with _raises(_REASONS[vector['error']]) as raised:
    cj.canonicalize(value, **limits)
  assert raised.value.reason == vector['error']
  if 'path' in vector:
    assert raised.value.path == vector['path']


def test_vectors_are_well_formed():
  ids = [v['id'] for v in _VECTORS]
  assert len(ids) == len(set(ids))
  for vector in _VECTORS:
    assert ('expected' in vector) != ('error' in vector), vector['id']
    assert vector['case'].startswith('P2-CJ-'), vector['id']


@_case('P2-CJ-01')
def test_jcs_key_order_numbers_escaping(vector):
  """P2-CJ-01: RFC 8785 key order, number form, escaping, valid Unicode."""
  _check_vector(vector)


@_case('P2-CJ-02')
def test_integer_range_vectors(vector):
  """P2-CJ-02: |int| > 2**53-1 refused; 2**53-1 accepted."""
  _check_vector(vector)


@pytest.mark.conformance('P2-CJ-02')
@pytest.mark.parametrize('purpose', _PURPOSES, ids=lambda p: p.value)
@pytest.mark.parametrize(
    'value',
    [2**53, -(2**53), 2**63, -(2**100)],
    ids=['+2^53', '-2^53', '2^63', '-2^100'],
)
def test_integer_range_refused_for_every_purpose(purpose, value):
  """P2-CJ-02: every purpose forbids the integer, with a typed error."""
  with _raises(cj.CanonicalJsonReason.INTEGER_OUT_OF_RANGE) as raised:
    cj.canonicalize({'n': [value]}, purpose=purpose)
  assert raised.value.purpose is purpose
  assert raised.value.path == '/n/0'
  assert purpose.value in str(raised.value)
  with _raises(cj.CanonicalJsonReason.INTEGER_OUT_OF_RANGE):
    cj.envelope(purpose, value)
  assert cj.canonicalize(2**53 - 1, purpose=purpose) == b'9007199254740991'
  assert cj.canonicalize(1 - 2**53, purpose=purpose) == b'-9007199254740991'


@_case('P2-CJ-03')
def test_negative_zero_is_written_as_zero(vector):
  """P2-CJ-03: negative zero is written `0`."""
  _check_vector(vector)


@pytest.mark.conformance('P2-CJ-03')
def test_negative_zero_has_the_digest_of_zero():
  """P2-CJ-03: -0.0, 0.0 and 0 are one value, with one digest."""
  values = [-0.0, 0.0, 0]
  assert {cj.canonicalize(v) for v in values} == {b'0'}
  digests = {cj.envelope_digest('sealed-result', {'x': [v]}) for v in values}
  assert len(digests) == 1


@_case('P2-CJ-04')
def test_non_finite_refused(vector):
  """P2-CJ-04: NaN, +Infinity and -Infinity are refused."""
  _check_vector(vector)


@pytest.mark.conformance('P2-CJ-04')
@pytest.mark.parametrize(
    'value', [math.nan, math.inf, -math.inf], ids=['nan', 'inf', '-inf']
)
def test_non_finite_python_floats_refused(value):
  """P2-CJ-04: the Python floats, at the top and nested, are refused."""
  for wrapped in (value, [value], {'a': {'b': [1, value]}}):
    with _raises(cj.CanonicalJsonReason.NON_FINITE):
      cj.canonicalize(wrapped)


@_case('P2-CJ-05')
def test_size_on_final_canonical_bytes(vector):
  """P2-CJ-05: size is the canonical UTF-8 length; limit passes, +1 fails."""
  _check_vector(vector)


@pytest.mark.conformance('P2-CJ-05')
@pytest.mark.parametrize(
    'text', ['a', '\u00e9', '\u20ac', '\U0001f600', '\n', '\x01', '"']
)
def test_size_limit_is_exact_for_every_encoding_width(text):
  """P2-CJ-05: exactly the limit passes, one byte more fails."""
  value = {'k': [text * 5, 1e-7, 12.0]}
  size = len(cj.canonicalize(value))
  assert len(cj.canonicalize(value, max_bytes=size)) == size
  with _raises(cj.CanonicalJsonReason.TOO_LARGE) as raised:
    cj.canonicalize(value, max_bytes=size - 1)
  assert raised.value.limit == size - 1


@_case('P2-CJ-06')
def test_depth_counts_open_containers(vector):
  """P2-CJ-06: depth counts open containers; 64 passes, 65 fails."""
  _check_vector(vector)


@pytest.mark.conformance('P2-CJ-06')
def test_cycles_are_too_deep():
  """P2-CJ-06: a reference cycle is infinitely deep, so refused as such."""
  cyclic: list[Any] = [1]
  cyclic.append(cyclic)
  with _raises(cj.CanonicalJsonReason.TOO_DEEP):
    cj.canonicalize(cyclic)
  mapping: dict[str, Any] = {}
  mapping['self'] = {'again': mapping}
  with _raises(cj.CanonicalJsonReason.TOO_DEEP):
    cj.canonicalize(mapping)


@pytest.mark.conformance('P2-CJ-06')
def test_far_too_deep_values_fail_fast():
  """P2-CJ-06: a value far beyond the limit never reaches the C stack."""
  value: Any = 0
  for _ in range(100_000):
    value = [value]
  with _raises(cj.CanonicalJsonReason.TOO_DEEP):
    cj.canonicalize(value)


@pytest.mark.conformance('P2-CJ-07')
def test_default_limits_are_8_mib_and_depth_64():
  """P2-CJ-07: the defaults are 8 MiB and depth 64."""
  assert cj.DEFAULT_MAX_BYTES == 8 * 1024 * 1024
  assert cj.DEFAULT_MAX_DEPTH == 64
  at_limit = 'x' * (cj.DEFAULT_MAX_BYTES - 2)
  assert len(cj.canonicalize(at_limit)) == cj.DEFAULT_MAX_BYTES
  with _raises(cj.CanonicalJsonReason.TOO_LARGE):
    cj.canonicalize(at_limit + 'x')
  with _raises(cj.CanonicalJsonReason.TOO_LARGE):
    cj.envelope('sealed-result', at_limit[:-1] + '\u00e9')
  nested: Any = []
  for _ in range(63):
    nested = [nested]
  assert cj.canonicalize(nested) == b'[' * 64 + b']' * 64
  with _raises(cj.CanonicalJsonReason.TOO_DEEP) as raised:
    cj.canonicalize([nested])
  assert raised.value.limit == 64


@pytest.mark.conformance('P2-CJ-07')
def test_limits_are_configurable():
  """P2-CJ-07: a profile can raise or lower both limits."""
  deep: Any = 1
  for _ in range(100):
    deep = {'a': deep}
  with _raises(cj.CanonicalJsonReason.TOO_DEEP):
    cj.canonicalize(deep)
  assert cj.canonicalize(deep, max_depth=100).count(b'{') == 100
  with _raises(cj.CanonicalJsonReason.TOO_DEEP):
    cj.canonicalize(deep, max_depth=99)
  big = 'y' * (9 * 1024 * 1024)
  with _raises(cj.CanonicalJsonReason.TOO_LARGE):
    cj.canonicalize(big)
  assert len(cj.canonicalize(big, max_bytes=16 * 1024 * 1024)) == len(big) + 2
  assert cj.canonicalize([1, 2], max_bytes=5, max_depth=1) == b'[1,2]'
  digest = cj.envelope_digest('replay-identity', [1, 2], max_bytes=5)
  assert digest.startswith('sha256:')
  with _raises(cj.CanonicalJsonReason.TOO_LARGE):
    cj.envelope('replay-identity', [1, 2], max_bytes=4)


@pytest.mark.conformance('P2-CJ-07')
@pytest.mark.parametrize(
    'limits',
    [
        {'max_bytes': 0},
        {'max_bytes': -1},
        {'max_bytes': 1.5},
        {'max_bytes': True},
        {'max_depth': -1},
        {'max_depth': cj.MAX_DEPTH_CEILING + 1},
        {'max_depth': 2.0},
    ],
)
def test_invalid_limits_are_rejected(limits):
  """P2-CJ-07: a misconfigured limit is a programming error."""
  with pytest.raises(ValueError):
    cj.canonicalize([], **limits)


@pytest.mark.conformance('P2-CJ-08')
def test_four_purposes_four_distinct_envelopes_and_digests():
  """P2-CJ-08: one payload under four purposes gives four envelopes."""
  payload = {'tool': 'query', 'arguments': {'sql': 'SELECT 1', 'limit': 10}}
  body = cj.canonicalize(payload)
  envelopes = {p: cj.envelope(p, payload) for p in _PURPOSES}
  digests = {p: cj.envelope_digest(p, payload) for p in _PURPOSES}
  assert len(set(envelopes.values())) == 4
  assert len(set(digests.values())) == 4
  for purpose, data in envelopes.items():
    assert data == f'adk-canonical-json/v1 {purpose.value}\n'.encode() + body
    assert digests[purpose] == 'sha256:' + hashlib.sha256(data).hexdigest()
    # No envelope is itself canonical JSON, nor equal to the bare bytes.
    assert data != body
    with pytest.raises(json.JSONDecodeError):
      json.loads(data)


@pytest.mark.conformance('P2-CJ-08')
def test_envelope_opens_only_under_its_own_purpose():
  """P2-CJ-08: none verifies under another purpose."""
  payload = [1, 'two', {'three': 3.0}]
  for sealed in _PURPOSES:
    data = cj.envelope(sealed, payload)
    assert cj.open_envelope(sealed, data) == cj.canonicalize(payload)
    assert cj.open_envelope(sealed.value, data) == cj.canonicalize(payload)
    for other in _PURPOSES:
      if other is sealed:
        continue
      with _raises(cj.CanonicalJsonReason.ENVELOPE_MISMATCH) as raised:
        cj.open_envelope(other, data)
      assert raised.value.purpose is other
      assert isinstance(raised.value, McpAppsError)
  for malformed in (
      b'',
      cj.canonicalize(payload),
      b'adk-canonical-json/v2 sealed-result\n[]',
      b'adk-canonical-json/v1 sealed-result []',
      b'adk-canonical-json/v1 sealed-results\n[]',
  ):
    with _raises(cj.CanonicalJsonReason.ENVELOPE_MISMATCH):
      cj.open_envelope('sealed-result', malformed)


@pytest.mark.conformance('P2-CJ-08')
def test_purpose_names_are_closed():
  """P2-CJ-08: only the four declared purposes exist."""
  assert [p.value for p in cj.Purpose] == [
      'sealed-result',
      'confirmation-arguments',
      'binding-revision',
      'replay-identity',
  ]
  with pytest.raises(ValueError):
    cj.envelope('sealed_result', {})
  with pytest.raises(ValueError):
    cj.envelope(None, {})  # type: ignore[arg-type]
  with pytest.raises(ValueError):
    cj.canonicalize({}, purpose='other')


@pytest.mark.conformance('P2-CJ-08')
@pytest.mark.parametrize(
    'vector', _ENVELOPES, ids=[v['id'] for v in _ENVELOPES]
)
def test_envelope_golden_vectors(vector):
  """P2-CJ-08/P2-CJ-10: envelope bytes and digests match the vectors."""
  value = json.loads(vector['input'])
  data = cj.envelope(vector['purpose'], value)
  assert data == vector['envelope'].encode('utf-8')
  assert cj.envelope_digest(vector['purpose'], value) == (
      'sha256:' + vector['sha256']
  )


@pytest.mark.conformance('P2-CJ-10')
def test_golden_vectors_cover_every_case():
  """P2-CJ-10: the shared vectors exercise P2-CJ-01..06, valid and not."""
  by_case = collections.Counter(v['case'] for v in _VECTORS)
  for case in ('01', '02', '03', '04', '05', '06'):
    assert by_case[f'P2-CJ-{case}'] >= 4
  assert sum('expected' in v for v in _VECTORS) >= 100


class _Color(enum.IntEnum):
  RED = 1


class _Name(str):
  pass


class _Ratio(float):
  pass


@pytest.mark.parametrize(
    'value',
    [
        (1, 2),
        {'a': (1,)},
        {1, 2},
        frozenset(),
        b'bytes',
        bytearray(b'x'),
        _Color.RED,
        _Name('subclass'),
        _Ratio(0.5),
        collections.OrderedDict(a=1),
        collections.UserList([1]),
        object(),
        1j,
        __import__('decimal').Decimal('1.5'),
        [None, [True, {'deep': [object()]}]],
    ],
    ids=lambda v: type(v).__name__,
)
def test_values_outside_the_json_domain_are_refused(value):
  """Tuples, sets, bytes and subclasses are refused, not coerced."""
  with _raises(cj.CanonicalJsonReason.UNSUPPORTED_TYPE) as raised:
    cj.canonicalize(value, purpose='sealed-result')
  assert raised.value.reason == 'unsupported_type'
  assert isinstance(raised.value, cj.CanonicalJsonError)
  assert isinstance(raised.value, McpAppsError)


@pytest.mark.parametrize(
    'key', [1, 1.5, None, True, ('t',), b'k', _Name('k')], ids=repr
)
def test_non_string_member_names_are_refused(key):
  """Member names must be exactly `str`; `json` would coerce them."""
  with _raises(cj.CanonicalJsonReason.UNSUPPORTED_TYPE):
    cj.canonicalize({'ok': [{key: 1}]})


def test_errors_carry_reason_purpose_and_json_pointer():
  value = {'a/b': [{'c~d': [0, float('nan')]}]}
  with _raises(cj.CanonicalJsonReason.NON_FINITE) as raised:
    cj.canonicalize(value, purpose=cj.Purpose.CONFIRMATION_ARGUMENTS)
  error = raised.value
  assert error.reason == 'non_finite'
  assert error.purpose is cj.Purpose.CONFIRMATION_ARGUMENTS
  assert error.path == '/a~1b/0/c~0d/1'
  assert 'confirmation-arguments' in str(error)
  assert "'/a~1b/0/c~0d/1'" in str(error)
  with _raises(cj.CanonicalJsonReason.INVALID_STRING) as raised_string:
    cj.canonicalize({'x': ['ok', 'bad\udc00']})
  assert raised_string.value.path == '/x/1'
  assert raised_string.value.purpose is None


def test_input_is_never_modified():
  value = {
      'f': [1.0, -0.0, 1e-7, 2.5e-5, 1e16, 3.5],
      'n': {'x': 2.0, 'astral\U0001f600': 1, 'private\ue000': 2},
  }
  before = copy.deepcopy(value)
  assert (
      cj.canonicalize(value)
      == (
          '{"f":[1,0,1e-7,0.000025,10000000000000000,3.5],'
          '"n":{"astral\U0001f600":1,"private\ue000":2,"x":2}}'
      ).encode()
  )
  assert value == before
  assert repr(value) == repr(before)  # -0.0 and 1.0 are still floats


def test_placeholder_text_inside_strings_falls_back_correctly():
  """A string spelling the small-float placeholder cannot corrupt output."""
  prefix = cj._PLACEHOLDER_PREFIX
  spoof = str(cj._PLACEHOLDER_BASE)
  value = {'a': 1e-5, 'b': spoof, 'c': [prefix, 2e-6], prefix: 1e-8}
  expected = (
      '{"70000000000000":1e-8,"a":0.00001,'
      f'"b":"{spoof}","c":["{prefix}",0.000002]}}'
  ).encode()
  assert cj.canonicalize(value) == expected
  assert cj.canonicalize([1e-5, 1e-5, 'x']) == b'[0.00001,0.00001,"x"]'


@pytest.mark.conformance('P2-CJ-01')
def test_astral_member_names_sort_by_utf16_on_every_path():
  """Names above U+FFFF sort before U+E000..U+FFFF (UTF-16 order)."""
  value = {'\uff01': 1, '\U0001f600': 2, 'a': {'\ue000': 3, '\U00010000': 4}}
  expected = '{"a":{"\U00010000":4,"\ue000":3},"\U0001f600":2,"\uff01":1}'
  assert cj.canonicalize(value) == expected.encode()
  # Astral characters only in values (or in names that sort the same
  # either way) keep the fast path and the same answer.
  same = {'\U0001f600': '\U0001f601', 'b': ['\U0001f602'], 'a': 1}
  assert cj._fast_encode(same, 64, None) == cj.canonicalize(same)
  assert cj._fast_encode(value, 64, None) is None


# --- Properties ------------------------------------------------------------

_KEY_CHARS = st.sampled_from(
    ['a', 'b', '\x00', '\x1f', '"', '\\', '\u00e9', '\ue000', '\uffff']
    + ['\U00010000', '\U0001f600', '7', '0']
)
_KEYS = st.text(st.characters(exclude_categories=('Cs',)), max_size=6) | (
    st.text(_KEY_CHARS, max_size=4)
)
_FLOATS = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
    [1e-7, 1e-6, 1e-5, 1e-4, 1e16, 1e21, 2.0**53, -0.0, 5e-324, 1e20, 12.0]
)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-cj.MAX_SAFE_INTEGER, cj.MAX_SAFE_INTEGER)
    | _FLOATS
    | st.text(st.characters(exclude_categories=('Cs',)))
    | st.sampled_from([cj._PLACEHOLDER_PREFIX, str(cj._PLACEHOLDER_BASE)])
)
_DOCUMENTS = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, max_size=6)
    | st.dictionaries(_KEYS, children, max_size=6),
    max_leaves=40,
)


@pytest.mark.conformance('P2-CJ-01')
@settings(max_examples=2000, deadline=None)
@given(_DOCUMENTS)
def test_fast_path_matches_reference_encoder(value):
  """P2-CJ-01: every path writes the same bytes as the reference encoder."""
  expected = cj._reference_encode(value, 64, None).encode('utf-8')
  assert cj.canonicalize(value) == expected
  assert cj._fast_encode(value, 64, None) in (expected, None)


@pytest.mark.conformance('P2-CJ-01')
@settings(max_examples=2000, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_numbers_round_trip_in_ecmascript_form(x):
  """P2-CJ-01: shortest round-trip digits, ECMAScript notation."""
  text = cj._format_float(x)
  assert float(text) == x
  assert cj.canonicalize(x).decode() == text
  mantissa, _, exponent = text.lstrip('-').partition('e')
  if x == 0:
    assert text == '0'
  elif 1e-6 <= abs(x) < 1e21:
    assert not exponent
  else:
    assert exponent[0] in '+-' and not exponent[1:].startswith('0')
    assert '.' not in mantissa or not mantissa.endswith('0')
  if 0 < abs(x) < 1e-4:
    assert cj._format_small_float(x) == text
  digits = mantissa.replace('.', '').strip('0')
  assert len(digits) <= 17
  assert len(digits) <= len(repr(abs(x)).split('e')[0].replace('.', ''))
