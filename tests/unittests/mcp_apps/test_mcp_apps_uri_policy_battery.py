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

"""Policy matching reaches the shared canonicalizer's forms (P1-URI-10).

The golden vectors are the battery: every valid input, used as a widget URI,
is admitted exactly under its canonical form, and every equivalent spelling
of it (the other vectors with the same canonical form) is admitted by the
same policy; every invalid input is denied, never raised.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

from google.adk.mcp_apps.resources import canonicalize
from google.adk.mcp_apps.resources import ResourceReadPolicy
import pytest

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


@pytest.mark.conformance('P1-URI-10')
@pytest.mark.parametrize('vector', _VALID, ids=[v['id'] for v in _VALID])
def test_policy_admits_under_the_canonical_form(vector):
  policy = ResourceReadPolicy(vector['input'])
  assert str(policy.check(vector['input'])) == vector['canonical']
  assert policy.check(vector['input']) == canonicalize(vector['input'])
  for spelling in _SPELLINGS[vector['canonical']]:
    assert policy.admits(spelling)


@pytest.mark.conformance('P1-URI-10')
@pytest.mark.parametrize('vector', _INVALID, ids=[v['id'] for v in _INVALID])
def test_policy_denies_what_the_canonicalizer_rejects(vector):
  policy = ResourceReadPolicy('ui://bqaa/dash')
  assert not policy.admits(vector['input'])
