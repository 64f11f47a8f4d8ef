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

"""Method-aware idempotency: the key, the identities and the ledger.

The ledger is exercised directly with an injected clock. Races run on real
threads (or tasks) and are ordered by a barrier and by events the clock
sets when a claimant is inside the ledger; nothing sleeps to order anything.
The View channel's end-to-end cases (a real server called once, the
barrier before the lookup) are the channel's tests.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import json
from pathlib import Path
import string
import threading
from typing import Any
from typing import Optional

from google.adk.mcp_apps.contracts.principal_resolver import Principal
from google.adk.mcp_apps.operations.errors import OperationError
from google.adk.mcp_apps.operations.errors import OperationErrorReason
from google.adk.mcp_apps.operations.idempotency import Claim
from google.adk.mcp_apps.operations.idempotency import idempotency_key_of
from google.adk.mcp_apps.operations.idempotency import IDEMPOTENCY_META_KEY
from google.adk.mcp_apps.operations.idempotency import IdempotencyNamespace
from google.adk.mcp_apps.operations.idempotency import OperationIdentity
from google.adk.mcp_apps.operations.idempotency import OperationMethod
from google.adk.mcp_apps.operations.idempotency import read_retention
from google.adk.mcp_apps.operations.idempotency import Retained
from google.adk.mcp_apps.operations.idempotency import RetainedOutcomes
from google.adk.mcp_apps.resources import canonicalize
from google.adk.mcp_apps.resources import ResourceReadPolicy
from google.adk.mcp_apps.resources.uri import CanonicalUri
from google.adk.mcp_apps.resources.uri import UriCanonicalizer
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from mcp import types as mcp_types
import pytest

WAIT = 10.0
"""Upper bound on any cross-thread wait (never a pacing delay)."""

_PROPERTY = settings(max_examples=500, deadline=None)

_VECTORS = json.loads(
    (
        Path(__file__).parent / 'data' / 'uri' / 'canonicalization_vectors.json'
    ).read_text(encoding='utf-8')
)['vectors']
_VALID = [v for v in _VECTORS if v.get('canonical')]
_INVALID = [v for v in _VECTORS if not v.get('canonical')]
_SPELLINGS = collections.defaultdict(list)
for _vector in _VALID:
  _SPELLINGS[_vector['canonical']].append(_vector['input'])

# The key alphabet, written out independently of the module's regex.
_KEY_CHARS = string.ascii_letters + string.digits + '._-'


def _oracle_accepts(text: str) -> bool:
  return 1 <= len(text) <= 128 and all(c in _KEY_CHARS for c in text)


class Clock:
  """A settable monotonic clock; `on_read` runs on every reading."""

  def __init__(self) -> None:
    self.now = 1000.0
    self.on_read = lambda: None

  def __call__(self) -> float:
    self.on_read()
    return self.now


def _namespace(**changes: Any) -> IdempotencyNamespace:
  fields = dict(
      principal_digest='k1:aa11',
      view_id='view-1',
      binding_revision='rev-1',
      binding_generation=1,
      incarnation=1,
      connection_generation_id='gen-1',
      resource_policy_revision='sha256:policy-1',
      delivery_limit_revision='limits-1',
  )
  fields.update(changes)
  return IdempotencyNamespace(**fields)


def _call(**arguments: Any) -> OperationIdentity:
  return OperationIdentity.for_call('shop', 'srv', 'buy', arguments)


def _read(uri: str = 'ui://shop/cart') -> OperationIdentity:
  return OperationIdentity.for_read('shop', 'srv', uri)


def _reason(excinfo: pytest.ExceptionInfo[OperationError]) -> Any:
  return excinfo.value.reason


def _run_once(
    ledger: RetainedOutcomes,
    identity: OperationIdentity,
    outcome: Any,
    *,
    namespace: Optional[IdempotencyNamespace] = None,
    key: str = 'k-1',
    **settle: Any,
) -> bool:
  claim = ledger.claim(namespace or _namespace(), key, identity)
  assert isinstance(claim, Claim)
  return claim.settle(outcome, **settle)


# The key (P4-IDEM-03..06).


@pytest.mark.conformance('P4-IDEM-03')
def test_an_empty_key_is_rejected_with_a_typed_error():
  with pytest.raises(OperationError) as excinfo:
    idempotency_key_of({IDEMPOTENCY_META_KEY: ''})
  assert _reason(excinfo) is OperationErrorReason.IDEMPOTENCY_KEY_INVALID


@pytest.mark.conformance('P4-IDEM-04')
def test_a_129_character_key_is_rejected_and_1_to_128_are_accepted():
  for key in ('a', 'Z' * 128, '-' * 64 + '.' * 64):
    assert idempotency_key_of({IDEMPOTENCY_META_KEY: key}) == key
  with pytest.raises(OperationError) as excinfo:
    idempotency_key_of({IDEMPOTENCY_META_KEY: 'a' * 129})
  assert _reason(excinfo) is OperationErrorReason.IDEMPOTENCY_KEY_INVALID


@pytest.mark.conformance('P4-IDEM-05')
@pytest.mark.parametrize(
    'key', ['a b', 'a/b', 'a+b', 'é', '٣', 'ß', 'a\n', '\n', 'a\x00', 'a:b']
)
def test_a_key_with_a_character_outside_the_alphabet_is_rejected(key):
  with pytest.raises(OperationError) as excinfo:
    idempotency_key_of({IDEMPOTENCY_META_KEY: key})
  assert _reason(excinfo) is OperationErrorReason.IDEMPOTENCY_KEY_INVALID


@pytest.mark.conformance('P4-IDEM-03', 'P4-IDEM-04', 'P4-IDEM-05')
@_PROPERTY
@given(
    key=st.one_of(
        st.text(alphabet=_KEY_CHARS, max_size=140),
        st.text(alphabet=_KEY_CHARS + ' \n\r\t/+:é٣ß\x00\u2028', max_size=130),
        st.text(max_size=130),
    )
)
def test_the_key_rule_agrees_with_an_independent_oracle(key):
  if _oracle_accepts(key):
    assert idempotency_key_of({IDEMPOTENCY_META_KEY: key}) == key
  else:
    with pytest.raises(OperationError) as excinfo:
      idempotency_key_of({IDEMPOTENCY_META_KEY: key})
    assert _reason(excinfo) is OperationErrorReason.IDEMPOTENCY_KEY_INVALID


class _Text(str):
  pass


@pytest.mark.conformance('P4-IDEM-06')
@pytest.mark.parametrize(
    'key', [None, 7, 1.5, True, ['a'], {'a': 'b'}, b'abc', _Text('abc')]
)
def test_a_non_string_key_is_rejected_with_a_typed_error(key):
  with pytest.raises(OperationError) as excinfo:
    idempotency_key_of({IDEMPOTENCY_META_KEY: key})
  assert _reason(excinfo) is OperationErrorReason.IDEMPOTENCY_KEY_INVALID


def test_a_meta_that_is_not_an_object_is_invalid_params():
  with pytest.raises(OperationError) as excinfo:
    idempotency_key_of(['com.google.adk/idempotency-key'])
  assert _reason(excinfo) is OperationErrorReason.INVALID_PARAMS


# Identities (P4-IDEM-14, P4-IDEM-15, P1-URI-12).

_JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53) + 1, 2**53 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
_JSON = st.recursive(
    _JSON_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=6), inner, max_size=4),
    ),
    max_leaves=20,
)


def _reordered(value: Any, rng: Any) -> Any:
  if isinstance(value, dict):
    items = [(k, _reordered(v, rng)) for k, v in value.items()]
    rng.shuffle(items)
    return dict(items)
  if isinstance(value, list):
    return [_reordered(v, rng) for v in value]
  return value


@pytest.mark.conformance('P4-IDEM-14')
@_PROPERTY
@given(
    arguments=st.dictionaries(st.text(max_size=6), _JSON, max_size=6),
    rng=st.randoms(use_true_random=False),
)
def test_reordering_argument_members_keeps_the_call_identity(arguments, rng):
  reordered = _reordered(arguments, rng)
  a = OperationIdentity.for_call('shop', 'srv', 'buy', arguments)
  b = OperationIdentity.for_call('shop', 'srv', 'buy', reordered)
  assert a == b
  assert a.method is OperationMethod.TOOLS_CALL
  assert a.arguments_digest.startswith('sha256:')


@pytest.mark.conformance('P4-IDEM-14')
def test_the_call_identity_is_method_toolset_server_tool_and_arguments():
  base = OperationIdentity.for_call('shop', 'srv', 'buy', {'sku': 'A1'})
  assert base == OperationIdentity.for_call('shop', 'srv', 'buy', {'sku': 'A1'})
  others = [
      OperationIdentity.for_call('other', 'srv', 'buy', {'sku': 'A1'}),
      OperationIdentity.for_call('shop', 'other', 'buy', {'sku': 'A1'}),
      OperationIdentity.for_call('shop', 'srv', 'sell', {'sku': 'A1'}),
      OperationIdentity.for_call('shop', 'srv', 'buy', {'sku': 'A2'}),
      OperationIdentity.for_call('shop', 'srv', 'buy', {'sku': ['A1']}),
  ]
  assert all(other != base for other in others)
  assert OperationIdentity.for_call('shop', 'srv', 'buy', None) == (
      OperationIdentity.for_call('shop', 'srv', 'buy', {})
  )
  with pytest.raises(OperationError) as excinfo:
    OperationIdentity.for_call('shop', 'srv', 'buy', {'x': float('nan')})
  assert _reason(excinfo) is OperationErrorReason.INVALID_PARAMS


@pytest.mark.conformance('P4-IDEM-15', 'P1-URI-12')
@pytest.mark.parametrize('vector', _VALID, ids=[v['id'] for v in _VALID])
def test_equivalent_uris_share_one_read_identity(vector):
  identity = _read(vector['input'])
  assert identity.method is OperationMethod.RESOURCES_READ
  assert identity.target == vector['canonical']
  for spelling in _SPELLINGS[vector['canonical']]:
    assert _read(spelling) == identity
  assert _read(canonicalize(vector['input'])) == identity
  for other in _SPELLINGS:
    if other != vector['canonical']:
      assert _read(other) != identity


@pytest.mark.conformance('P1-URI-12')
@pytest.mark.parametrize('vector', _INVALID, ids=[v['id'] for v in _INVALID])
def test_a_uri_the_canonicalizer_rejects_has_no_read_identity(vector):
  with pytest.raises(OperationError) as excinfo:
    _read(vector['input'])
  assert _reason(excinfo) is OperationErrorReason.INVALID_PARAMS


@pytest.mark.conformance('P4-IDEM-15', 'P1-URI-12')
def test_the_read_identity_uses_the_policy_canonicalizer():
  def lower_path(uri: str) -> CanonicalUri:
    return CanonicalUri('x', None, uri.split(':', 1)[1].lower())

  rules = UriCanonicalizer().with_scheme('x', lower_path, revision='1')
  policy = ResourceReadPolicy('x:Board', canonicalizer=rules)
  a = OperationIdentity.for_read(
      'shop', 'srv', 'x:BOARD', canonicalizer=policy.canonicalizer
  )
  b = OperationIdentity.for_read(
      'shop', 'srv', policy.check('X:board'), canonicalizer=policy.canonicalizer
  )
  assert a == b and a.target == 'x:board'
  assert _read('x:BOARD') != a  # The built-in rules keep the case.


@pytest.mark.conformance('P4-IDEM-15', 'P1-URI-12')
def test_a_read_retained_under_one_spelling_replays_under_another():
  ledger = RetainedOutcomes()
  outcome = {'contents': [{'uri': 'ui://shop/cart', 'text': 'x'}]}
  assert _run_once(ledger, _read('UI://SHOP/cart#top'), outcome)
  got = ledger.claim(_namespace(), 'k-1', _read('ui://Shop/cart'))
  assert isinstance(got, Retained) and got.outcome is outcome


# The ledger: replay, conflicts and namespaces (P4-IDEM-11..13, 16, 17).


def test_the_same_key_and_identity_get_the_retained_outcome_even_an_error():
  ledger = RetainedOutcomes()
  error = {'error': {'code': -32001, 'message': 'timed out'}}
  assert _run_once(ledger, _call(sku='A1'), error)
  for _ in range(2):
    got = ledger.claim(_namespace(), 'k-1', _call(sku='A1'))
    assert isinstance(got, Retained) and got.outcome is error
  assert len(ledger) == 1


@pytest.mark.conformance('P4-IDEM-11')
def test_the_same_key_with_other_arguments_or_tool_is_a_conflict():
  ledger = RetainedOutcomes()
  assert _run_once(ledger, _call(sku='A1'), {'content': []})
  others = [
      _call(sku='A2'),
      OperationIdentity.for_call('shop', 'srv', 'sell', {'sku': 'A1'}),
      OperationIdentity.for_call('shop', 'srv2', 'buy', {'sku': 'A1'}),
  ]
  for other in others:
    with pytest.raises(OperationError) as excinfo:
      ledger.claim(_namespace(), 'k-1', other)
    assert _reason(excinfo) is OperationErrorReason.IDEMPOTENCY_CONFLICT
  got = ledger.claim(_namespace(), 'k-1', _call(sku='A1'))
  assert isinstance(got, Retained)


@pytest.mark.conformance('P4-IDEM-11')
def test_the_same_key_with_other_arguments_conflicts_while_running():
  ledger = RetainedOutcomes()
  running = ledger.claim(_namespace(), 'k-1', _call(sku='A1'))
  assert isinstance(running, Claim)
  with pytest.raises(OperationError) as excinfo:
    ledger.try_claim(_namespace(), 'k-1', _call(sku='A2'))
  assert _reason(excinfo) is OperationErrorReason.IDEMPOTENCY_CONFLICT
  running.abandon()
  fresh = ledger.claim(_namespace(), 'k-1', _call(sku='A2'))
  assert isinstance(fresh, Claim)


@pytest.mark.conformance('P4-IDEM-12')
@pytest.mark.parametrize('first', ['call', 'read'])
def test_a_call_and_a_read_under_one_key_conflict(first):
  ledger = RetainedOutcomes()
  call, read = _call(sku='A1'), _read()
  # One namespace object as the channel builds it for the View; a call's
  # records ignore the read revisions, the conflict check spans both.
  view = _namespace()
  call_namespace = _namespace(
      resource_policy_revision=None, delivery_limit_revision=None
  )
  done, other = (call, read) if first == 'call' else (read, call)
  assert _run_once(ledger, done, {'ok': first}, namespace=view)
  for namespace in (view, call_namespace):
    if other is read and namespace is call_namespace:
      continue  # A read needs its revisions.
    with pytest.raises(OperationError) as excinfo:
      ledger.claim(namespace, 'k-1', other)
    assert _reason(excinfo) is OperationErrorReason.IDEMPOTENCY_CONFLICT
  # A read under a newer policy revision still conflicts with the call.
  if other is read:
    with pytest.raises(OperationError):
      ledger.claim(_namespace(resource_policy_revision='p-2'), 'k-1', read)


@pytest.mark.conformance('P4-IDEM-13')
def test_reads_of_two_canonical_uris_under_one_key_conflict():
  ledger = RetainedOutcomes()
  assert _run_once(ledger, _read('ui://shop/cart'), {'contents': []})
  with pytest.raises(OperationError) as excinfo:
    ledger.claim(_namespace(), 'k-1', _read('ui://shop/orders'))
  assert _reason(excinfo) is OperationErrorReason.IDEMPOTENCY_CONFLICT
  got = ledger.claim(_namespace(), 'k-1', _read('UI://shop/cart'))
  assert isinstance(got, Retained)


@pytest.mark.conformance('P4-IDEM-16')
@pytest.mark.parametrize(
    'change',
    [
        {'principal_digest': 'k1:bb22'},
        {'view_id': 'view-2'},
        {'binding_revision': 'rev-2'},
        {'binding_generation': 2},
        {'incarnation': 2},
        {'connection_generation_id': 'gen-2'},
    ],
    ids=lambda change: next(iter(change)),
)
def test_another_namespace_never_sees_or_conflicts_with_a_record(change):
  ledger = RetainedOutcomes()
  assert _run_once(ledger, _call(sku='A1'), {'content': []})
  other = _namespace(**change)
  same = ledger.claim(other, 'k-1', _call(sku='A1'))
  assert isinstance(same, Claim)  # Not replayed: it runs.
  same.abandon()
  different = ledger.claim(other, 'k-1', _call(sku='A2'))
  assert isinstance(different, Claim)  # No conflict across namespaces.
  assert isinstance(
      ledger.claim(_namespace(), 'k-1', _call(sku='A1')), Retained
  )


@pytest.mark.conformance('P4-IDEM-16')
@pytest.mark.parametrize(
    'change',
    [{'resource_policy_revision': 'p-2'}, {'delivery_limit_revision': 'l-2'}],
    ids=lambda change: next(iter(change)),
)
def test_a_read_is_not_replayed_under_another_policy_or_limit_revision(change):
  ledger = RetainedOutcomes()
  old = {'contents': ['old']}
  assert _run_once(ledger, _read(), old)
  fresh = ledger.claim(_namespace(**change), 'k-1', _read())
  assert isinstance(fresh, Claim)
  new = {'contents': ['new']}
  assert fresh.settle(new)
  assert ledger.claim(_namespace(**change), 'k-1', _read()).outcome is new
  # A call's records do not depend on the read revisions.
  assert _run_once(ledger, _call(sku='A1'), 'call', key='k-2')
  got = ledger.claim(_namespace(**change), 'k-2', _call(sku='A1'))
  assert isinstance(got, Retained) and got.outcome == 'call'


@pytest.mark.conformance('P4-IDEM-16')
def test_the_namespace_takes_a_principal_digest_never_the_principal():
  with pytest.raises(TypeError):
    _namespace(principal_digest=Principal('alice'))
  with pytest.raises(ValueError):
    _namespace(principal_digest='')
  digest = 'k1:' + 'aa11' * 8
  assert digest not in repr(_namespace(principal_digest=digest))
  with pytest.raises(ValueError):
    RetainedOutcomes().claim(
        _namespace(resource_policy_revision=None), 'k-1', _read()
    )


@pytest.mark.conformance('P4-IDEM-17')
def test_without_a_key_every_call_runs_and_nothing_is_retained():
  assert idempotency_key_of(None) is None
  assert idempotency_key_of({'progressToken': 3}) is None
  ledger = RetainedOutcomes()
  first = ledger.claim(_namespace(), None, _call(sku='A1'))
  second = ledger.claim(_namespace(), None, _call(sku='A1'))
  assert isinstance(first, Claim) and isinstance(second, Claim)
  assert first.settle('one') is False and second.settle('two') is False
  assert isinstance(ledger.claim(_namespace(), None, _call(sku='A1')), Claim)
  assert len(ledger) == 0


# Expiry, eviction and server TTL (P4-IDEM-18, 21, 33).


@pytest.mark.conformance('P4-IDEM-18', 'P4-IDEM-33')
def test_an_expired_key_runs_again():
  clock = Clock()
  ledger = RetainedOutcomes(retention_seconds=60, clock=clock)
  assert _run_once(ledger, _call(sku='A1'), 'first')
  clock.now += 59.999
  assert ledger.claim(_namespace(), 'k-1', _call(sku='A1')).outcome == 'first'
  clock.now += 0.001
  again = ledger.claim(_namespace(), 'k-1', _call(sku='A1'))
  assert isinstance(again, Claim)
  again.settle('second')
  assert ledger.claim(_namespace(), 'k-1', _call(sku='A1')).outcome == 'second'


@pytest.mark.conformance('P4-IDEM-18')
def test_an_expired_key_may_name_another_operation():
  clock = Clock()
  ledger = RetainedOutcomes(clock=clock)
  assert ledger.retention_seconds == 600
  assert _run_once(ledger, _call(sku='A1'), 'first')
  clock.now += 600
  assert isinstance(ledger.claim(_namespace(), 'k-1', _read()), Claim)


@pytest.mark.conformance('P4-IDEM-18')
def test_an_evicted_key_runs_again_oldest_first():
  ledger = RetainedOutcomes(capacity=2)
  for key in ('k-1', 'k-2', 'k-3'):
    assert _run_once(ledger, _call(sku='A1'), key, key=key)
  assert len(ledger) == 2
  assert isinstance(ledger.claim(_namespace(), 'k-1', _call(sku='A1')), Claim)
  for key in ('k-2', 'k-3'):
    got = ledger.claim(_namespace(), key, _call(sku='A1'))
    assert isinstance(got, Retained) and got.outcome == key


def test_eviction_drops_expired_records_before_live_ones():
  clock = Clock()
  ledger = RetainedOutcomes(capacity=2, clock=clock)
  assert _run_once(ledger, _call(sku='A1'), 'live', key='k-1')
  assert _run_once(ledger, _call(sku='A1'), 'short', key='k-2', ttl_seconds=1)
  clock.now += 1
  assert _run_once(ledger, _call(sku='A1'), 'new', key='k-3')
  assert ledger.claim(_namespace(), 'k-1', _call(sku='A1')).outcome == 'live'
  assert len(ledger) == 2


@pytest.mark.conformance('P4-IDEM-21', 'P4-IDEM-33')
def test_read_retention_never_exceeds_the_server_ttl():
  clock = Clock()
  ledger = RetainedOutcomes(retention_seconds=600, clock=clock)
  result = mcp_types.ReadResourceResult(
      contents=[], ttl_ms=5000, cache_scope='public'
  ).model_dump(by_alias=True, mode='json')
  retention = read_retention(result)
  assert retention.ttl_seconds == 5 and not retention.private
  assert _run_once(ledger, _read(), result, ttl_seconds=retention.ttl_seconds)
  clock.now += 4.999
  assert ledger.claim(_namespace(), 'k-1', _read()).outcome is result
  clock.now += 0.001
  assert isinstance(ledger.claim(_namespace(), 'k-1', _read()), Claim)


@pytest.mark.conformance('P4-IDEM-21')
def test_a_zero_or_malformed_ttl_retains_nothing_and_a_long_one_is_capped():
  clock = Clock()
  ledger = RetainedOutcomes(retention_seconds=60, clock=clock)
  for ttl_ms in (0, -1, 1.5, '1000', True, None):
    assert read_retention({'ttlMs': ttl_ms}).ttl_seconds == 0
  assert read_retention({'contents': []}).ttl_seconds is None  # Legacy.
  assert not _run_once(ledger, _read(), 'stale', ttl_seconds=0)
  assert not _run_once(ledger, _read(), 'nan', ttl_seconds=float('nan'))
  assert isinstance(ledger.claim(_namespace(), 'k-1', _read()), Claim)
  huge = read_retention({'ttlMs': 10**400}).ttl_seconds
  assert huge is not None and huge > 60
  long = read_retention({'ttlMs': 3_600_000}).ttl_seconds
  assert _run_once(ledger, _read(), 'long', key='k-2', ttl_seconds=long)
  clock.now += 60
  assert isinstance(ledger.claim(_namespace(), 'k-2', _read()), Claim)


# Private scope (P4-IDEM-22, 34).


@pytest.mark.conformance('P4-IDEM-22', 'P4-IDEM-34')
def test_a_private_read_is_bound_to_its_credential_context():
  ledger = RetainedOutcomes()
  result = {'contents': [], 'ttlMs': 60000, 'cacheScope': 'private'}
  retention = read_retention(result)
  assert retention.private
  claim = ledger.claim(_namespace(), 'k-1', _read(), credential_context='c-a')
  assert claim.settle(
      result, ttl_seconds=retention.ttl_seconds, credential_context='c-a'
  )
  for other in ('c-b', None):
    got = ledger.claim(_namespace(), 'k-1', _read(), credential_context=other)
    assert isinstance(got, Claim)  # Never the other context's record.
    got.abandon()
  got = ledger.claim(_namespace(), 'k-1', _read(), credential_context='c-a')
  assert isinstance(got, Retained) and got.outcome is result
  # Each context's private record stands side by side.
  theirs = ledger.claim(_namespace(), 'k-1', _read(), credential_context='c-b')
  theirs.settle('b-result', credential_context='c-b')
  for context, expected in (('c-a', result), ('c-b', 'b-result')):
    got = ledger.claim(_namespace(), 'k-1', _read(), credential_context=context)
    assert got.outcome is expected


@pytest.mark.conformance('P4-IDEM-22')
def test_a_public_read_is_shared_and_a_missing_scope_counts_as_private():
  assert not read_retention({'cacheScope': 'public'}).private
  for result in ({}, {'cacheScope': 'shared'}, {'cacheScope': None}):
    assert read_retention(result).private
  ledger = RetainedOutcomes()
  claim = ledger.claim(_namespace(), 'k-1', _read(), credential_context='c-a')
  claim.settle('public', credential_context=None)
  for context in ('c-a', 'c-b', None):
    got = ledger.claim(_namespace(), 'k-1', _read(), credential_context=context)
    assert got.outcome == 'public'


# Claims: waiting, abandoning and racing.


def _waiting_probe(clock: Clock, claimants: int) -> threading.Event:
  """An event set once `claimants` distinct threads read the clock.

  The ledger reads its clock under its lock on every claim, so the event
  means each claimant is past its look-up.
  """
  readers: set[int] = set()
  inside = threading.Event()

  def on_read() -> None:
    readers.add(threading.get_ident())
    if len(readers) >= claimants:
      inside.set()

  clock.on_read = on_read
  return inside


@pytest.mark.parametrize('claimants', [2, 8])
def test_racing_claims_of_one_key_execute_once(claimants):
  clock = Clock()
  ledger = RetainedOutcomes(clock=clock)
  inside = _waiting_probe(clock, claimants)
  barrier = threading.Barrier(claimants)
  executions = []
  outcome = {'content': [{'type': 'text', 'text': 'bought'}]}

  def claimant(name: int) -> Any:
    barrier.wait(WAIT)
    got = ledger.claim(_namespace(), 'k-1', _call(sku='A1'), timeout=WAIT)
    if isinstance(got, Claim):
      executions.append(name)
      assert inside.wait(WAIT)  # The others are past their look-ups.
      got.settle(outcome)
    return got

  with concurrent.futures.ThreadPoolExecutor(claimants) as pool:
    results = list(pool.map(claimant, range(claimants)))
  assert len(executions) == 1
  retained = [r for r in results if isinstance(r, Retained)]
  assert len(retained) == claimants - 1
  assert all(r.outcome is outcome for r in retained)


def test_a_waiter_claims_the_key_when_the_running_claim_is_abandoned():
  clock = Clock()
  ledger = RetainedOutcomes(clock=clock)
  first = ledger.claim(_namespace(), 'k-1', _call(sku='A1'))
  inside = _waiting_probe(clock, 1)
  with concurrent.futures.ThreadPoolExecutor(1) as pool:
    waiter = pool.submit(
        ledger.claim, _namespace(), 'k-1', _call(sku='A1'), timeout=WAIT
    )
    assert inside.wait(WAIT)
    first.abandon()
    second = waiter.result(WAIT)
  assert isinstance(second, Claim) and second.is_open
  second.settle('ran')
  assert ledger.claim(_namespace(), 'k-1', _call(sku='A1')).outcome == 'ran'


def test_a_waiter_does_not_get_a_record_bound_to_another_context():
  clock = Clock()
  ledger = RetainedOutcomes(clock=clock)
  first = ledger.claim(_namespace(), 'k-1', _read(), credential_context='c-a')
  inside = _waiting_probe(clock, 1)
  with concurrent.futures.ThreadPoolExecutor(1) as pool:
    waiter = pool.submit(
        ledger.claim,
        _namespace(),
        'k-1',
        _read(),
        credential_context='c-b',
        timeout=WAIT,
    )
    assert inside.wait(WAIT)
    first.settle('for-a', credential_context='c-a')
    assert isinstance(waiter.result(WAIT), Claim)


async def test_an_awaiting_claim_gets_the_outcome_of_the_running_one():
  clock = Clock()
  ledger = RetainedOutcomes(clock=clock)
  first = await ledger.claim_async(_namespace(), 'k-1', _call(sku='A1'))
  assert isinstance(first, Claim)
  inside = asyncio.Event()
  clock.on_read = inside.set
  waiter = asyncio.create_task(
      ledger.claim_async(_namespace(), 'k-1', _call(sku='A1'))
  )
  await asyncio.wait_for(inside.wait(), WAIT)
  assert not waiter.done()
  first.settle('once')
  got = await asyncio.wait_for(waiter, WAIT)
  assert isinstance(got, Retained) and got.outcome == 'once'


async def test_waiting_is_bounded_and_never_blocks_the_loop():
  ledger = RetainedOutcomes()
  running = await ledger.claim_async(_namespace(), 'k-1', _call(sku='A1'))
  assert ledger.try_claim(_namespace(), 'k-1', _call(sku='A1')) is None
  with pytest.raises(OperationError) as excinfo:
    await ledger.claim_async(_namespace(), 'k-1', _call(sku='A1'), timeout=0)
  assert _reason(excinfo) is OperationErrorReason.LIMIT_EXCEEDED
  with pytest.raises(RuntimeError):
    ledger.claim(_namespace(), 'k-1', _call(sku='A1'))
  running.settle('done')
  got = ledger.claim(_namespace(), 'k-1', _call(sku='A1'))
  assert got.outcome == 'done'  # Nothing to wait for: no error on a loop.


def test_a_claim_left_open_by_an_exception_is_abandoned():
  ledger = RetainedOutcomes()
  with pytest.raises(KeyError):
    with ledger.claim(_namespace(), 'k-1', _call(sku='A1')):
      raise KeyError('boom')
  claim = ledger.claim(_namespace(), 'k-1', _call(sku='A2'))
  assert isinstance(claim, Claim)  # The key is free again.
  claim.settle('x')
  with pytest.raises(RuntimeError):
    claim.settle('y')
  with pytest.raises(RuntimeError):
    claim.abandon()
  with pytest.raises(OperationError) as excinfo:
    ledger.claim(_namespace(), 'k-1', _call(sku='A1'), timeout=0)
  assert _reason(excinfo) is OperationErrorReason.IDEMPOTENCY_CONFLICT


# The rules against a model (sequential claims, each settled at once).

_MODEL_NAMESPACES = [
    _namespace(),
    _namespace(principal_digest='k1:bb22'),
    _namespace(resource_policy_revision='sha256:policy-2'),
]
_MODEL_IDENTITIES = [
    _call(sku='A1'),
    _call(sku='A2'),
    _read('ui://shop/cart'),
    _read('ui://shop/orders'),
]
_STEP = st.tuples(
    st.integers(0, len(_MODEL_NAMESPACES) - 1),
    st.sampled_from(['k-1', 'k-2']),
    st.integers(0, len(_MODEL_IDENTITIES) - 1),
    st.sampled_from([None, 'c-a', 'c-b']),
    st.sampled_from(['public', 'private', 'abandon']),
    st.sampled_from([None, 0.0, 3.0]),
    st.sampled_from([0.0, 2.0, 5.0]),
)


@pytest.mark.conformance(
    'P4-IDEM-11',
    'P4-IDEM-12',
    'P4-IDEM-13',
    'P4-IDEM-16',
    'P4-IDEM-18',
    'P4-IDEM-22',
)
@_PROPERTY
@given(steps=st.lists(_STEP, max_size=30))
def test_the_ledger_follows_the_model(steps):
  clock = Clock()
  ledger = RetainedOutcomes(retention_seconds=10, clock=clock)
  # (the six scope fields, key) -> [identity, {(revisions, context): ...}]
  model: dict[Any, list[Any]] = {}
  for ns_i, key, id_i, context, action, ttl, advance in steps:
    namespace, identity = _MODEL_NAMESPACES[ns_i], _MODEL_IDENTITIES[id_i]
    scope = (
        namespace.principal_digest,
        namespace.view_id,
        namespace.binding_revision,
        namespace.binding_generation,
        namespace.incarnation,
        namespace.connection_generation_id,
        key,
    )
    revisions = None
    if identity.method is OperationMethod.RESOURCES_READ:
      revisions = (
          namespace.resource_policy_revision,
          namespace.delivery_limit_revision,
      )
    entry = model.get(scope)
    if entry is not None:
      entry[1] = {k: v for k, v in entry[1].items() if v[1] > clock.now}
      if not entry[1]:
        entry = model.pop(scope)
        entry = None
    visible = None
    if entry is not None and entry[0] == identity:
      for record_key in ((revisions, None), (revisions, context)):
        if record_key in entry[1]:
          visible = entry[1][record_key][0]
          break
    try:
      got = ledger.try_claim(
          namespace, key, identity, credential_context=context
      )
    except OperationError as e:
      assert e.reason is OperationErrorReason.IDEMPOTENCY_CONFLICT
      assert entry is not None and entry[0] != identity
    else:
      assert entry is None or entry[0] == identity
      if visible is not None:
        assert isinstance(got, Retained) and got.outcome is visible
      else:
        assert isinstance(got, Claim)
        outcome = object()
        if action == 'abandon':
          got.abandon()
        else:
          bound = context if action == 'private' else None
          got.settle(outcome, ttl_seconds=ttl, credential_context=bound)
          if ttl != 0:
            entry = model.setdefault(scope, [identity, {}])
            entry[1][(revisions, bound)] = (
                outcome,
                clock.now + (10 if ttl is None else ttl),
            )
    clock.now += advance
