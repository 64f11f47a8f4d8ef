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

"""Response-side read validation agrees with the canonicalizer (P1-URI-11).

`validate_read_response` is run on the URI battery of the canonicalizer's
own tests: the golden vectors (`data/uri/canonicalization_vectors.json`)
and the generated URIs and equivalent spellings of
`test_mcp_apps_uri.py`'s properties. Each returned item's canonical URI
is `canonicalize`'s, an item is admitted exactly when the policy admits
its URI, an uncanonicalizable item is rejected as such, and two spellings
of one canonical URI are duplicates. The byte rules (UTF-8 text, decoded
blobs) and `ReadLimits` are checked here too; the integration cases are
in tests/integration/mcp_apps/operations/test_mcp_apps_app_reads.py.
"""

from __future__ import annotations

import base64
import collections
import json
from pathlib import Path

from google.adk.mcp_apps.operations.app_read import ReadLimits
from google.adk.mcp_apps.operations.app_read import ReadRejection
from google.adk.mcp_apps.operations.app_read import ReadResponseRejectedError
from google.adk.mcp_apps.operations.app_read import validate_read_response
from google.adk.mcp_apps.operations.errors import OperationErrorReason
from google.adk.mcp_apps.profile.limits import DeliveryLimits
from google.adk.mcp_apps.profile.limits import HostLimits
from google.adk.mcp_apps.resources import canonicalize
from google.adk.mcp_apps.resources import McpAppUriError
from google.adk.mcp_apps.resources import ResourcePolicyEntry
from google.adk.mcp_apps.resources import ResourceReadPolicy
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from mcp import types as mcp_types
import pytest
# The battery's generators, shared with the canonicalizer's own properties.
from test_mcp_apps_uri import _DEFAULT_PORTS
from test_mcp_apps_uri import _join
from test_mcp_apps_uri import _noise
from test_mcp_apps_uri import _QUERY_CHARS
from test_mcp_apps_uri import _random_case
from test_mcp_apps_uri import _reencode
from test_mcp_apps_uri import _uri_parts

_VECTORS = json.loads(
    (
        Path(__file__).parent / 'data' / 'uri' / 'canonicalization_vectors.json'
    ).read_text(encoding='utf-8')
)['vectors']
_VALID = [v for v in _VECTORS if v.get('canonical')]
_INVALID = [v for v in _VECTORS if not v.get('canonical')]
_SPELLINGS: dict[str, list[str]] = collections.defaultdict(list)
for _vector in _VALID:
  _SPELLINGS[_vector['canonical']].append(_vector['input'])
_RESPELLED = sorted(c for c, s in _SPELLINGS.items() if len(s) > 1)

_LIMITS = ReadLimits.of(HostLimits())
_PROPERTY = settings(max_examples=500, deadline=None)
_NOISE_POLICY = ResourceReadPolicy(
    'ui://bqaa/dash',
    [
        ResourcePolicyEntry.prefix('ui://bqaa/'),
        ResourcePolicyEntry.prefix('https://example.com/'),
        ResourcePolicyEntry.exact('urn:x'),
    ],
)


def _text(uri: str, text: str = 'x') -> mcp_types.TextResourceContents:
  return mcp_types.TextResourceContents(uri=uri, text=text)


def _blob(uri: str, data: bytes) -> mcp_types.BlobResourceContents:
  return mcp_types.BlobResourceContents(
      uri=uri, blob=base64.b64encode(data).decode()
  )


def _rejection(contents, policy, limits=_LIMITS) -> ReadResponseRejectedError:
  with pytest.raises(ReadResponseRejectedError) as info:
    validate_read_response(contents, policy, limits)
  assert info.value.reason is OperationErrorReason.READ_RESPONSE_REJECTED
  return info.value


def _variant(parts, data) -> str:
  """An equivalent spelling, drawn as the canonicalizer's property does."""
  scheme, host, port, segments, query = parts
  variant_port = port
  if port is None and scheme in _DEFAULT_PORTS and data.draw(st.booleans()):
    zeros = '0' * data.draw(st.integers(min_value=0, max_value=3))
    variant_port = zeros + str(_DEFAULT_PORTS[scheme])
  return _join(
      _random_case(data.draw, scheme),
      _random_case(data.draw, host),
      variant_port,
      [_reencode(data.draw, tokens) for tokens in segments],
      None if query is None else _reencode(data.draw, query),
      fragment=data.draw(st.none() | st.text(_QUERY_CHARS, max_size=5)),
  )


# --- P1-URI-11: the golden vectors -------------------------------------------


@pytest.mark.conformance('P1-URI-11')
@pytest.mark.parametrize('vector', _VALID, ids=[v['id'] for v in _VALID])
def test_returned_item_is_identified_by_its_canonical_form(vector):
  """Every valid vector, returned as an item, is admitted canonically."""
  policy = ResourceReadPolicy(vector['canonical'])
  spellings = _SPELLINGS[vector['canonical']]

  for spelling in spellings:
    (uri,) = validate_read_response([_text(spelling)], policy, _LIMITS)
    assert uri == canonicalize(spelling)
    assert str(uri) == vector['canonical']
  # A policy for another URI admits none of them.
  other = ResourceReadPolicy('ui://bqaa-other/w')
  error = _rejection([_text(vector['input'])], other)
  assert error.rejection is ReadRejection.OUT_OF_POLICY


@pytest.mark.conformance('P1-URI-11')
@pytest.mark.parametrize('vector', _INVALID, ids=[v['id'] for v in _INVALID])
def test_uncanonicalizable_item_is_rejected(vector):
  """Every invalid vector, returned after a good item, rejects it all."""
  with pytest.raises(McpAppUriError):
    canonicalize(vector['input'])
  policy = ResourceReadPolicy('ui://bqaa/dash')
  error = _rejection([_text('ui://bqaa/dash'), _text(vector['input'])], policy)
  assert error.rejection is ReadRejection.INVALID_URI
  assert error.index == 1


@pytest.mark.conformance('P1-URI-11')
@pytest.mark.parametrize('canonical', _RESPELLED)
def test_vector_spellings_of_one_uri_are_duplicates(canonical):
  """The vectors' spellings of one canonical URI are one item's URI."""
  first, second, *_ = _SPELLINGS[canonical]
  error = _rejection(
      [_text(first), _text(second)], ResourceReadPolicy(canonical)
  )
  assert error.rejection is ReadRejection.DUPLICATE_URI
  assert error.index == 1


# --- P1-URI-11: the generated battery ----------------------------------------


@pytest.mark.conformance('P1-URI-11')
@_PROPERTY
@given(parts=_uri_parts(), data=st.data())
def test_property_equivalent_spelling_validates_to_canonicalize(parts, data):
  """A generated URI and any equivalent spelling: one canonical URI."""
  uri = _join(*parts)
  variant = _variant(parts, data)
  policy = ResourceReadPolicy(uri)

  assert validate_read_response([_text(variant)], policy, _LIMITS) == (
      canonicalize(variant),
  )
  assert canonicalize(variant) == canonicalize(uri)
  error = _rejection([_text(uri), _text(variant)], policy)
  assert error.rejection is ReadRejection.DUPLICATE_URI


@pytest.mark.conformance('P1-URI-11')
@_PROPERTY
@given(
    prefix=st.sampled_from(['ui://', 'https://', 'urn:', 'x:', 'UI:', '']),
    body=_noise,
)
def test_property_item_admission_agrees_with_the_policy(prefix, body):
  """Noise: admitted exactly when the policy admits it, canonically."""
  uri = prefix + body
  try:
    canonical = canonicalize(uri)
  except McpAppUriError:
    canonical = None
  if _NOISE_POLICY.admits(uri):
    assert validate_read_response([_text(uri)], _NOISE_POLICY, _LIMITS) == (
        canonical,
    )
    return
  error = _rejection([_text(uri)], _NOISE_POLICY)
  expected = (
      ReadRejection.INVALID_URI
      if canonical is None
      else ReadRejection.OUT_OF_POLICY
  )
  assert error.rejection is expected


# --- Bytes and limits ---------------------------------------------------------


def test_text_counts_utf8_bytes_and_blob_counts_decoded_bytes():
  """Per-item bytes: UTF-8 for text, decoded for a blob."""
  policy = ResourceReadPolicy(
      'ui://bqaa/', [ResourcePolicyEntry.prefix('ui://bqaa/')]
  )
  text = 'Grüße ✓'  # 7 characters, 11 UTF-8 bytes.
  data = bytes(range(10))  # 16 characters of base64.
  contents = [_text('ui://bqaa/t', text), _blob('ui://bqaa/b', data)]

  fits = ReadLimits(max_item_bytes=11, max_total_bytes=21, max_items=2)
  assert len(validate_read_response(contents, policy, fits)) == 2
  error = _rejection(
      contents,
      policy,
      ReadLimits(max_item_bytes=10, max_total_bytes=21, max_items=2),
  )
  assert (error.rejection, error.index) == (ReadRejection.ITEM_TOO_LARGE, 0)
  error = _rejection(
      contents,
      policy,
      ReadLimits(max_item_bytes=11, max_total_bytes=20, max_items=2),
  )
  assert (error.rejection, error.index) == (ReadRejection.TOTAL_TOO_LARGE, 1)


def test_blob_that_is_not_base64_is_rejected():
  """Line-wrapped base64 counts its decoded bytes; non-base64 is refused."""
  policy = ResourceReadPolicy('ui://bqaa/b')
  encoded = base64.b64encode(bytes(60)).decode()
  wrapped = mcp_types.BlobResourceContents(
      uri='ui://bqaa/b', blob=encoded[:40] + '\r\n' + encoded[40:]
  )
  exact = ReadLimits(max_item_bytes=60, max_total_bytes=60, max_items=1)
  assert len(validate_read_response([wrapped], policy, exact)) == 1
  item = mcp_types.BlobResourceContents(uri='ui://bqaa/b', blob='*not base64*')
  error = _rejection([item], policy)
  assert (error.rejection, error.index) == (ReadRejection.MALFORMED_ITEM, 0)


def test_empty_response_is_accepted():
  assert (
      validate_read_response([], ResourceReadPolicy('ui://bqaa/b'), _LIMITS)
      == ()
  )


def test_read_limits_follow_the_profile_and_revise_with_it():
  """Defaults: total and count from `delivery`; per item = total."""
  limits = HostLimits(
      delivery=DeliveryLimits(max_response_bytes=4096, max_content_items=3)
  )
  read = ReadLimits.of(limits)
  assert read == ReadLimits(
      max_item_bytes=4096, max_total_bytes=4096, max_items=3
  )
  smaller = ReadLimits.of(limits, max_item_bytes=1024)
  assert smaller.max_item_bytes == 1024
  assert read.revision.startswith('sha256:') and len(read.revision) == 23
  assert read.revision == ReadLimits.of(limits).revision
  assert read.revision != smaller.revision
  with pytest.raises(ValueError):
    ReadLimits(max_item_bytes=0, max_total_bytes=1, max_items=1)
  with pytest.raises(ValueError):
    ReadLimits.of(limits, max_item_bytes=8192)
