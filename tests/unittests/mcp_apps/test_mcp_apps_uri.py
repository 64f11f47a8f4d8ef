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

"""Tests for the MCP Apps URI canonicalization contract.

Cases P1-URI-01..09 and P1-URI-15..19 of the conformance checklist, the
golden vectors in data/uri/, and Hypothesis properties. Where an independent
oracle exists the properties use it: `idna.encode(..., uts46=True)` for hosts
and `urllib.parse` for the other components.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import pickle
import re
import string
import urllib.parse

from google.adk.mcp_apps.errors import McpAppsError
from google.adk.mcp_apps.resources import canonicalize
from google.adk.mcp_apps.resources import canonicalize_generic
from google.adk.mcp_apps.resources import CanonicalUri
from google.adk.mcp_apps.resources import DEFAULT_URI_CANONICALIZER
from google.adk.mcp_apps.resources import McpAppUriError
from google.adk.mcp_apps.resources import ResourcePolicyEntry
from google.adk.mcp_apps.resources import ResourceReadDenialReason
from google.adk.mcp_apps.resources import ResourceReadDeniedError
from google.adk.mcp_apps.resources import ResourceReadPolicy
from google.adk.mcp_apps.resources import uri as uri_module
from google.adk.mcp_apps.resources import UriCanonicalizer
from google.adk.mcp_apps.resources import UriErrorReason
from google.adk.mcp_apps.resources import uris_equal
from hypothesis import assume
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import idna
import pytest

_VECTORS_PATH = (
    pathlib.Path(__file__).parent
    / 'data'
    / 'uri'
    / 'canonicalization_vectors.json'
)
_VECTORS = json.loads(_VECTORS_PATH.read_text(encoding='utf-8'))['vectors']

_PROPERTY = settings(max_examples=2000, deadline=None)


def _raises(reason: UriErrorReason):
  """`pytest.raises` for a `McpAppUriError` with this reason."""
  return pytest.raises(McpAppUriError, check=lambda e: e.reason is reason)


def _prefix_policy(
    prefix: str, widget: str | None = None
) -> ResourceReadPolicy:
  return ResourceReadPolicy(
      widget or prefix, [ResourcePolicyEntry.prefix(prefix)]
  )


# ---------------------------------------------------------------------------
# Example tests, one per conformance case.
# ---------------------------------------------------------------------------


@pytest.mark.conformance('P1-URI-01')
def test_scheme_lowercased():
  """P1-URI-01: the scheme is lowercased."""
  assert canonicalize('UI://bqaa/x') == canonicalize('ui://bqaa/x')
  assert str(canonicalize('Ui://bqaa/x')) == 'ui://bqaa/x'
  assert canonicalize('UI://bqaa/x').scheme == 'ui'


@pytest.mark.conformance('P1-URI-02')
def test_host_lowercased():
  """P1-URI-02: the host is lowercased."""
  assert uris_equal('https://Example.COM/p', 'https://example.com/p')
  assert str(canonicalize('https://Example.COM/p')) == 'https://example.com/p'
  # The path is not: it is case-sensitive.
  assert not uris_equal('https://example.com/P', 'https://example.com/p')


@pytest.mark.conformance('P1-URI-03')
def test_host_idna_normalized():
  """P1-URI-03: a Unicode host and its punycode A-label are identical."""
  unicode_form = canonicalize('https://bücher.example/p')
  assert unicode_form == canonicalize('https://xn--bcher-kva.example/p')
  assert unicode_form == canonicalize('https://XN--BCHER-KVA.example/p')
  assert unicode_form == canonicalize('https://BÜCHER.example/p')
  assert unicode_form.authority == 'xn--bcher-kva.example'
  assert unicode_form.authority == idna.encode(
      'bücher.example', uts46=True
  ).decode('ascii')
  assert canonicalize('ui://ｂｑａａ/x') == canonicalize('ui://bqaa/x')
  with _raises(UriErrorReason.HOST):
    canonicalize('https://xn--zz/p')  # Not valid Punycode.
  with _raises(UriErrorReason.HOST):
    canonicalize('https://xn---bbk/p')  # A non-canonical ("fake") A-label.


@pytest.mark.conformance('P1-URI-04')
def test_default_port_removed_non_default_kept():
  """P1-URI-04: the default port is removed, a non-default one is kept."""
  assert uris_equal('https://h:443/p', 'https://h/p')
  assert uris_equal('http://h:80/p', 'http://h/p')
  assert uris_equal('wss://h:443/p', 'wss://h/p')
  assert uris_equal('ws://h:80/p', 'ws://h/p')
  assert str(canonicalize('https://h:8443/p')) == 'https://h:8443/p'
  assert not uris_equal('https://h:8443/p', 'https://h/p')
  # A port is default only for its own scheme.
  assert not uris_equal('http://h:443/p', 'http://h/p')
  assert not uris_equal('ui://bqaa:80/x', 'ui://bqaa/x')


@pytest.mark.conformance('P1-URI-05')
def test_only_unreserved_escapes_decoded():
  """P1-URI-05: only unreserved escapes are decoded; %2F stays encoded."""
  assert str(canonicalize('ui://bqaa/%7E%41')) == 'ui://bqaa/~A'
  assert uris_equal('ui://bqaa/%7e', 'ui://bqaa/~')
  encoded_slash = canonicalize('ui://bqaa/a%2fb')
  assert str(encoded_slash) == 'ui://bqaa/a%2Fb'
  assert encoded_slash.path_segments == ('a%2Fb',)
  assert not uris_equal('ui://bqaa/a%2Fb', 'ui://bqaa/a/b')
  assert str(canonicalize('ui://bqaa/%c3%a9')) == 'ui://bqaa/%C3%A9'
  assert str(canonicalize('ui://bqaa/%252F')) == 'ui://bqaa/%252F'


@pytest.mark.conformance('P1-URI-06')
@pytest.mark.parametrize(
    'uri',
    [
        'ui://bqaa/dash/../secret',
        'ui://bqaa/dash/./secret',
        'ui://bqaa/dash/..',
        'ui://bqaa/..',
        'ui://bqaa/dash/%2E%2E/secret',
        'ui://bqaa/dash/%2e%2E/secret',
        'ui://bqaa/dash/.%2E/secret',
        'ui://bqaa/dash/%2e/secret',
        'https://h/a/../b?x=1',
        'urn:a/../b',
    ],
)
def test_dot_segments_rejected(uri):
  """P1-URI-06: dot segments, plain or encoded, are a typed error."""
  with _raises(UriErrorReason.DOT_SEGMENT) as excinfo:
    canonicalize(uri)
  assert excinfo.value.part == 'path'
  assert not uris_equal(uri, uri)


@pytest.mark.conformance('P1-URI-07')
def test_fragment_stripped():
  """P1-URI-07: the fragment is stripped."""
  assert uris_equal('ui://a/b#frag', 'ui://a/b')
  assert str(canonicalize('ui://a/b?x=1#frag')) == 'ui://a/b?x=1'
  assert str(canonicalize('ui://a/b#')) == 'ui://a/b'


@pytest.mark.conformance('P1-URI-08')
def test_query_order_sensitive():
  """P1-URI-08: the query is kept, and its order matters."""
  ab = canonicalize('ui://a/b?a=1&b=2')
  ba = canonicalize('ui://a/b?b=2&a=1')
  assert ab != ba
  assert ab.query == 'a=1&b=2'
  assert not uris_equal('ui://a/b?', 'ui://a/b')


def _case_insensitive_docs(uri: str) -> CanonicalUri:
  """A scheme with case-insensitive paths and default port 8443."""
  generic = canonicalize_generic(uri, default_port=8443, require_host=True)
  return dataclasses.replace(generic, path=generic.path.lower())


@pytest.mark.conformance('P1-URI-09')
def test_custom_scheme_canonicalizer_registered():
  """P1-URI-09: a registered per-scheme canonicalizer is used for its scheme."""
  custom = UriCanonicalizer().with_scheme(
      'BQAA-Docs', _case_insensitive_docs, revision='docs-1'
  )
  assert custom.registered_schemes == frozenset({'bqaa-docs'})
  assert custom.uris_equal(
      'bqaa-docs://h:8443/Guide/Intro', 'BQAA-DOCS://H/guide/intro'
  )
  # The built-in rules do not know these equivalences ...
  assert not uris_equal(
      'bqaa-docs://h:8443/Guide/Intro', 'bqaa-docs://h/guide/intro'
  )
  # ... and still apply, unchanged, to every other scheme.
  assert custom.canonicalize('UI://BQAA/Path') == canonicalize('ui://bqaa/Path')
  assert not custom.uris_equal('ui://bqaa/ABC', 'ui://bqaa/abc')
  with _raises(UriErrorReason.SYNTAX):
    custom.canonicalize('bqaa-docs:no-authority')
  assert DEFAULT_URI_CANONICALIZER.registered_schemes == frozenset()
  assert custom.revision != DEFAULT_URI_CANONICALIZER.revision
  # The policy matches under the canonicalizer it is given.
  policy = ResourceReadPolicy(
      'ui://bqaa/dash',
      [ResourcePolicyEntry.prefix('bqaa-docs://h/guide')],
      canonicalizer=custom,
  )
  assert policy.admits('BQAA-DOCS://h:8443/GUIDE/Intro')
  assert not policy.admits('bqaa-docs://h/guidebook')


@pytest.mark.conformance('P1-URI-15')
def test_dot_segment_adversary_denied_before_read():
  """P1-URI-15: `dash/../secret` is denied and no remote read is issued."""
  policy = _prefix_policy('ui://bqaa/dash')
  reads = []

  def read(uri: str) -> None:
    reads.append(policy.check(uri))

  for uri in (
      'ui://bqaa/dash/../secret',
      'ui://bqaa/dash/%2E%2E/secret',
      'ui://bqaa/dash/%2e./secret',
  ):
    assert not policy.admits(uri)
    with pytest.raises(ResourceReadDeniedError) as excinfo:
      read(uri)
    assert excinfo.value.reason is ResourceReadDenialReason.INVALID_URI
    assert excinfo.value.__cause__.reason is UriErrorReason.DOT_SEGMENT
  assert not reads


@pytest.mark.conformance('P1-URI-16')
def test_encoded_slash_adversary_not_a_boundary():
  """P1-URI-16: `dash%2F..%2Fsecret` is no sub-resource of `dash`."""
  policy = _prefix_policy('ui://bqaa/dash')
  for uri in (
      'ui://bqaa/dash%2F..%2Fsecret',
      'ui://bqaa/dash%2f..%2fsecret',
      'ui://bqaa/dash%2Fchild',
  ):
    canonical = canonicalize(uri)
    assert len(canonical.path_segments) == 1
    assert not policy.admits(uri)
    with pytest.raises(ResourceReadDeniedError) as excinfo:
      policy.check(uri)
    assert excinfo.value.reason is ResourceReadDenialReason.NOT_ADMITTED
  assert policy.admits('ui://bqaa/dash/child')


@pytest.mark.conformance('P1-URI-17')
@pytest.mark.parametrize(
    'uri',
    [
        'ui://evil@bqaa/dash',
        'ui://bqaa@evil/dash',
        'ui://bqaa:x@evil/dash',
        'ui://@bqaa/dash',
        'ui://bqaa%40evil/dash',
        'ui://bqaa.evil/dash',
        'ui://evil.bqaa/dash',
        'ui://bqaa./dash',
        'ui://bqaa%2Eevil/dash',
        'ui://bqaa。evil/dash',
        'ui://bqaa:80/dash',
        'ui://bqaa:0/dash',
        'ui://bqaa:/dash',
        'ui://bqaa:65536/dash',
        'ui:///bqaa/dash',
        'ui:bqaa/dash',
        'ui://evil#@bqaa/dash',
        'ui://evil?@bqaa/dash',
        'ui://evil\\@bqaa/dash',
        'ui://bqaa＠evil/dash',
        'ui://bqaa／dash',
        'https://bqaa/dash',
    ],
)
def test_authority_swap_adversary_denied(uri):
  """P1-URI-17: userinfo, look-alike hosts and port tricks never pass."""
  policy = _prefix_policy('ui://bqaa/dash')
  assert not policy.admits(uri)
  with pytest.raises(ResourceReadDeniedError):
    policy.check(uri)


@pytest.mark.conformance('P1-URI-17')
def test_authority_swap_userinfo_is_typed_error():
  """P1-URI-17: userinfo is rejected outright, naming the part."""
  with _raises(UriErrorReason.USERINFO) as excinfo:
    canonicalize('ui://evil@bqaa/dash')
  assert excinfo.value.part == 'userinfo'


@pytest.mark.conformance('P1-URI-18')
def test_boundary_splice_adversary_segment_bounded():
  """P1-URI-18: prefix matching is bounded by path segments."""
  policy = _prefix_policy('ui://bqaa/dash')
  assert policy.admits('ui://bqaa/dash')
  assert policy.admits('ui://bqaa/dash/child')
  assert policy.admits('ui://bqaa/dash/child/grandchild')
  assert not policy.admits('ui://bqaa/dashboard-evil')
  assert not policy.admits('ui://bqaa/dash.evil')
  assert not policy.admits('ui://bqaa/dash%2Eevil')
  assert not policy.admits('ui://bqaa/das')
  assert not policy.admits('ui://bqaa/')


@pytest.mark.conformance('P1-URI-19')
def test_case_port_idna_variants_admitted_as_canonical():
  """P1-URI-19: case/port/IDNA variants are admitted as the canonical form."""
  widget = 'https://bücher.example/dash'
  policy = _prefix_policy(widget)
  canonical = canonicalize(widget)
  for variant in (
      'HTTPS://BÜCHER.EXAMPLE/dash',
      'https://xn--bcher-kva.example:443/dash',
      'https://XN--BCHER-KVA.EXAMPLE:0443/dash#top',
      'https://ｂüｃｈｅｒ.example/dash',
      'https://bücher。example/d%61sh',
  ):
    assert policy.check(variant) == canonical
  assert policy.check('HTTPS://Bücher.Example:443/dash/x') == canonicalize(
      'https://xn--bcher-kva.example/dash/x'
  )
  for other in (
      'https://bucher.example/dash',
      'https://bücher.example:8443/dash',
      'http://bücher.example/dash',
      'https://bücher.example/Dash',
      'https://bücher.example.evil/dash',
      'https://xn--bcher-kva.example:444/dash',
  ):
    assert not policy.admits(other)


# ---------------------------------------------------------------------------
# Golden vectors and further rules.
# ---------------------------------------------------------------------------


@pytest.mark.conformance('P1-URI-10')
@pytest.mark.parametrize('vector', _VECTORS, ids=[v['id'] for v in _VECTORS])
def test_golden_vector(vector):
  if 'canonical' in vector:
    canonical = canonicalize(vector['input'])
    assert str(canonical) == vector['canonical']
    assert canonicalize(vector['canonical']) == canonical
  else:
    reason = UriErrorReason(vector['error'])
    with pytest.raises(McpAppUriError) as excinfo:
      canonicalize(vector['input'])
    assert excinfo.value.reason is reason


def test_error_hierarchy():
  assert {r.value for r in UriErrorReason} == {
      'syntax',
      'dot_segment',
      'userinfo',
      'host',
      'port',
      'scheme',
  }
  assert issubclass(McpAppUriError, ValueError)
  assert issubclass(McpAppUriError, McpAppsError)


def test_error_message_truncates_huge_input():
  uri = 'ui://bqaa/' + 'a' * 5000 + '/../x'
  with _raises(UriErrorReason.DOT_SEGMENT) as excinfo:
    canonicalize(uri)
  assert len(str(excinfo.value)) < 300
  assert 'path' in str(excinfo.value)
  assert '5015 characters' in excinfo.value.uri_excerpt


def test_error_is_picklable():
  with pytest.raises(McpAppUriError) as excinfo:
    canonicalize('ui://evil@bqaa/')
  copy = pickle.loads(pickle.dumps(excinfo.value))
  assert type(copy) is McpAppUriError
  assert copy.reason is UriErrorReason.USERINFO
  assert str(copy) == str(excinfo.value)


def test_too_long_rejected():
  with _raises(UriErrorReason.SYNTAX):
    canonicalize('ui://bqaa/' + 'a' * uri_module.MAX_URI_LENGTH)


@pytest.mark.parametrize('value', [None, 42, b'ui://bqaa/x', ['ui://bqaa']])
def test_non_string_rejected(value):
  with _raises(UriErrorReason.SYNTAX):
    canonicalize(value)
  assert not uris_equal(value, value)


def test_canonical_uri_value_type():
  canonical = canonicalize('HTTPS://Example.com:443/a/b/?q#f')
  assert canonical == CanonicalUri('https', 'example.com', '/a/b/', 'q')
  assert canonical.path_segments == ('a', 'b', '')
  assert canonicalize(canonical) == canonical
  assert hash(canonical) == hash(canonicalize('https://example.com/a/b/?q'))
  with pytest.raises(dataclasses.FrozenInstanceError):
    canonical.path = '/x'  # type: ignore[misc]
  assert canonicalize('ui://h').path_segments == ()
  assert canonicalize('ui://h/').path_segments == ('',)
  assert canonicalize('urn:a:b/c').path_segments == ('a:b', 'c')
  assert canonicalize('urn:a:b').authority is None
  assert canonicalize('file:///x').authority == ''


@pytest.mark.parametrize(
    ('fields', 'error_type'),
    [
        (('UI', 'h', '/x', None), UriErrorReason.SYNTAX),
        (('ui', 'user@h', '/x', None), UriErrorReason.SYNTAX),
        (('ui', 'h', 'x', None), UriErrorReason.SYNTAX),
        (('ui', None, '//x', None), UriErrorReason.SYNTAX),
        (('ui', 'h', '/%2f', None), UriErrorReason.SYNTAX),
        (('ui', 'h', '/%41', None), UriErrorReason.SYNTAX),
        (('ui', 'h', '/a b', None), UriErrorReason.SYNTAX),
        (('ui', 'h', '/x', 'a#b'), UriErrorReason.SYNTAX),
        (('ui', 'h', '/a/../b', None), UriErrorReason.DOT_SEGMENT),
        (('ui', 'h', '/%2E', None), UriErrorReason.SYNTAX),
    ],
)
def test_canonical_uri_rejects_non_canonical_fields(fields, error_type):
  with _raises(error_type):
    CanonicalUri(*fields)


def test_scheme_canonicalizer_contract_enforced():
  def other_scheme(uri: str) -> CanonicalUri:
    del uri
    return CanonicalUri('ui', 'bqaa', '/dash')

  def broken(uri: str) -> CanonicalUri:
    raise KeyError(uri)

  def not_a_uri(uri: str) -> CanonicalUri:
    return uri  # type: ignore[return-value]

  for function in (other_scheme, broken, not_a_uri):
    custom = UriCanonicalizer().with_scheme('x', function, revision='1')
    with _raises(UriErrorReason.SCHEME):
      custom.canonicalize('x://anything')
    assert not custom.uris_equal('x://a', 'x://a')


@pytest.mark.parametrize(
    ('scheme', 'revision'),
    [('', '1'), ('1x', '1'), ('a b', '1'), ('x', ''), ('x', 'a;b')],
)
def test_with_scheme_validates_arguments(scheme, revision):
  with pytest.raises(ValueError):
    UriCanonicalizer().with_scheme(
        scheme, canonicalize_generic, revision=revision
    )


def test_canonicalizer_is_immutable():
  with pytest.raises(AttributeError):
    # pylint: disable-next=protected-access
    DEFAULT_URI_CANONICALIZER._revision = 'x'
  base = UriCanonicalizer()
  extended = base.with_scheme('x', canonicalize_generic, revision='1')
  assert base.registered_schemes == frozenset()
  assert extended.registered_schemes == frozenset({'x'})
  assert base.revision == DEFAULT_URI_CANONICALIZER.revision
  assert 'x=1' in extended.revision


def test_long_uri_bypasses_cache_with_same_result():
  uri = 'UI://bqaa/' + 'a' * 3000
  assert str(canonicalize(uri)) == 'ui://bqaa/' + 'a' * 3000


# ---------------------------------------------------------------------------
# Hypothesis properties.
# ---------------------------------------------------------------------------

_UNRESERVED = string.ascii_letters + string.digits + '-._~'
_SEGMENT_CHARS = _UNRESERVED + "!$&'()*+,;=:@"
_QUERY_CHARS = _SEGMENT_CHARS + '/?'
_DEFAULT_PORTS = {'http': 80, 'https': 443, 'ws': 80, 'wss': 443}
_SCHEMES = ['ui', 'http', 'https', 'ws', 'wss', 'bqaa-x']


def _escape(char_code: int, upper: bool) -> str:
  text = f'%{char_code:02X}'
  return text if upper else text.lower()


# A token is one character or one escape, so that a variant can re-encode a
# character without ever touching the inside of an escape. Escapes cover the
# unreserved characters (decoded) and delimiters and non-ASCII (kept). For
# speed, a whole path or query is drawn as one string in which each escape is
# stood for by a private-use character.
_ESCAPES = [
    _escape(code, upper)
    for code in [ord(c) for c in _UNRESERVED] + [
        0x00,
        0x20,
        0x23,
        0x25,
        0x2F,
        0x3F,
        0x40,
        0x5C,
        0x7F,
        0x80,
        0xC3,
        0xFF,
    ]
    for upper in (True, False)
]
_PLACEHOLDERS = ''.join(chr(0xE000 + i) for i in range(len(_ESCAPES)))


def _tokens(text):
  return [_ESCAPES[ord(c) - 0xE000] if c in _PLACEHOLDERS else c for c in text]


def _is_dot_segment(segment: str) -> bool:
  return urllib.parse.unquote(segment) in ('.', '..')


def _path_segments(text):
  if not text:
    return []
  return [_tokens(segment) for segment in text.split('/')]


_path = (
    st.text(_SEGMENT_CHARS * 2 + _PLACEHOLDERS + '///', max_size=24)
    .map(_path_segments)
    .filter(
        lambda segments: not any(
            _is_dot_segment(''.join(tokens)) for tokens in segments
        )
    )
)
_query = st.none() | st.text(_QUERY_CHARS + _PLACEHOLDERS, max_size=10).map(
    _tokens
)


def _to_host(text):
  labels = [label.strip('-') for label in text.split('.')]
  labels = [re.sub('-+', '-', label) for label in labels if label]
  return '.'.join(labels) or 'h'


_LABEL_CHARS = string.ascii_lowercase + string.digits
_host = st.text(_LABEL_CHARS * 3 + '..-', min_size=1, max_size=16).map(_to_host)
_label = st.text(_LABEL_CHARS, min_size=1, max_size=8)


@st.composite
def _uri_parts(draw):
  scheme = draw(st.sampled_from(_SCHEMES))
  host = draw(_host)
  port = draw(st.none() | st.integers(min_value=1, max_value=65535))
  segments = draw(_path)
  query = draw(_query)
  return scheme, host, port, segments, query


def _join(scheme, host, port, segments, query, fragment=None):
  uri = f'{scheme}://{host}'
  if port is not None:
    uri += f':{port}'
  if segments:
    uri += '/' + '/'.join(''.join(tokens) for tokens in segments)
  if query is not None:
    uri += '?' + ''.join(query)
  if fragment is not None:
    uri += '#' + fragment
  return uri


def _bits(draw, count):
  """Draws `count` random booleans at once (one draw is much faster)."""
  mask = draw(st.integers(min_value=0, max_value=(1 << count) - 1))
  return [bool(mask >> i & 1) for i in range(count)]


def _random_case(draw, text):
  flips = _bits(draw, len(text))
  return ''.join(c.upper() if f else c for c, f in zip(text, flips))


def _reencode(draw, tokens):
  """Percent-encodes random unreserved characters; random-cases escapes."""
  change = _bits(draw, len(tokens))
  upper = _bits(draw, len(tokens))
  result = []
  for token, change_it, upper_it in zip(tokens, change, upper):
    if change_it and len(token) == 1 and token in _UNRESERVED:
      result.append(_escape(ord(token), upper_it))
    elif change_it and len(token) == 3:
      result.append(token.upper() if upper_it else token.lower())
    else:
      result.append(token)
  return result


@_PROPERTY
@given(parts=_uri_parts())
def test_property_idempotent(parts):
  canonical = canonicalize(_join(*parts))
  again = canonicalize(str(canonical))
  assert again == canonical
  assert str(again) == str(canonical)


_noise = st.text(
    alphabet=_QUERY_CHARS + '%#[]\\ "<>^`{|}\t\n' + 'éü。．／＠ａß\u200d\u00ad',
    max_size=40,
)


@_PROPERTY
@given(
    prefix=st.sampled_from(['ui://', 'https://', 'urn:', 'x:', 'UI:', '']),
    body=_noise,
)
def test_property_idempotent_or_typed_error_on_noise(prefix, body):
  try:
    canonical = canonicalize(prefix + body)
  except McpAppUriError:
    return
  assert canonicalize(str(canonical)) == canonical


@_PROPERTY
@given(parts=_uri_parts(), data=st.data())
def test_property_equivalent_spellings_equal(parts, data):
  scheme, host, port, segments, query = parts
  variant_port = port
  if port is None and scheme in _DEFAULT_PORTS and data.draw(st.booleans()):
    zeros = '0' * data.draw(st.integers(min_value=0, max_value=3))
    variant_port = zeros + str(_DEFAULT_PORTS[scheme])
  variant = _join(
      _random_case(data.draw, scheme),
      _random_case(data.draw, host),
      variant_port,
      [_reencode(data.draw, tokens) for tokens in segments],
      None if query is None else _reencode(data.draw, query),
      fragment=data.draw(st.none() | st.text(_QUERY_CHARS, max_size=5)),
  )
  assert canonicalize(variant) == canonicalize(_join(*parts))


@_PROPERTY
@given(parts=_uri_parts())
def test_property_matches_urllib_and_idna_oracle(parts):
  uri = _join(*parts)
  canonical = canonicalize(uri)
  split = urllib.parse.urlsplit(uri)
  assert canonical.scheme == split.scheme
  expected_host = idna.encode(split.hostname, uts46=True).decode('ascii')
  expected_port = split.port
  if expected_port == _DEFAULT_PORTS.get(split.scheme):
    expected_port = None
  expected_authority = expected_host
  if expected_port is not None:
    expected_authority += f':{expected_port}'
  assert canonical.authority == expected_authority
  # Per segment, the decoded bytes are unchanged and no segment is split.
  raw_segments = split.path.split('/')[1:] if split.path else []
  if not raw_segments and split.scheme in _DEFAULT_PORTS:
    raw_segments = ['']
  assert [
      urllib.parse.unquote_to_bytes(s) for s in canonical.path_segments
  ] == [urllib.parse.unquote_to_bytes(s) for s in raw_segments]
  if parts[4] is None:
    assert canonical.query is None
  else:
    assert urllib.parse.unquote_to_bytes(
        canonical.query
    ) == urllib.parse.unquote_to_bytes(split.query)


_host_chars = (
    string.ascii_letters
    + string.digits
    + '-._'
    + 'üÜßéÉαΩςıİ中ﬁ'
    + 'ＡＢａｂ'
    + '。．'
    + '\u212a\u00ad\u200d\u0301'
)


@pytest.mark.conformance('P1-URI-03')
@_PROPERTY
@given(host=st.text(alphabet=_host_chars, min_size=1, max_size=20))
def test_property_host_matches_idna_package(host):
  """The IDNA oracle: `idna.encode(host, uts46=True)`, used directly."""
  try:
    expected = idna.encode(host, uts46=True).decode('ascii')
  except UnicodeError:  # idna.IDNAError is a UnicodeError.
    expected = None
  if expected is not None and '' in expected.split('.'):
    expected = None  # Empty labels (a trailing dot) are always rejected.
  ascii_path = host.isascii() and not any(
      label.startswith('xn--') for label in host.lower().split('.')
  )
  try:
    authority = canonicalize(f'https://{host}/p').authority
  except McpAppUriError as e:
    assert e.reason is UriErrorReason.HOST
    authority = None
  if ascii_path and authority is not None:
    # Plain ASCII hosts skip IDNA's hyphen and underscore rules but are
    # otherwise only lowercased.
    assert authority == host.lower()
    assert expected in (None, authority)
  else:
    assert authority == expected


_prefix_segment = st.text(_SEGMENT_CHARS, min_size=1, max_size=6).filter(
    lambda s: s not in ('.', '..')
)


@pytest.mark.conformance('P1-URI-18')
@_PROPERTY
@given(
    prefix=st.lists(_prefix_segment, min_size=1, max_size=4),
    splice=st.text(_SEGMENT_CHARS + '%', min_size=1, max_size=6),
    children=st.lists(_prefix_segment, min_size=1, max_size=3),
)
def test_property_prefix_never_crosses_segment_boundary(
    prefix, splice, children
):
  prefix_uri = 'ui://bqaa/' + '/'.join(prefix)
  policy = _prefix_policy(prefix_uri, widget='ui://bqaa-widget/w')
  assert policy.admits(prefix_uri)
  assert policy.admits(prefix_uri + '/' + '/'.join(children))
  # The splice extends the last segment (valid or not): never admitted.
  assert not policy.admits(prefix_uri + splice)


_dots = st.lists(st.sampled_from(['.', '%2E', '%2e']), min_size=1, max_size=2)


@pytest.mark.conformance('P1-URI-15')
@_PROPERTY
@given(
    segments=st.lists(_prefix_segment, max_size=4),
    dots=_dots,
    position=st.integers(min_value=0, max_value=4),
    tail=st.booleans(),
)
def test_property_dot_segments_always_rejected(segments, dots, position, tail):
  segments = list(segments)
  segments.insert(min(position, len(segments)), ''.join(dots))
  if tail:
    segments.append('secret')
  uri = 'ui://bqaa/' + '/'.join(segments)
  with _raises(UriErrorReason.DOT_SEGMENT):
    canonicalize(uri)
  policy = _prefix_policy('ui://bqaa')
  with pytest.raises(ResourceReadDeniedError) as excinfo:
    policy.check(uri)
  assert excinfo.value.reason is ResourceReadDenialReason.INVALID_URI


@pytest.mark.conformance('P1-URI-16')
@_PROPERTY
@given(
    head=_prefix_segment,
    slash=st.sampled_from(['%2F', '%2f', '%5C', '%5c']),
    rest=st.lists(
        st.sampled_from(['..', '.', '%2E%2E', 'secret', 'x']), max_size=3
    ),
)
def test_property_encoded_slash_never_a_boundary(head, slash, rest):
  segment = head + slash + slash.join(rest)
  uri = 'ui://bqaa/dash/' + segment
  segments = canonicalize(uri).path_segments
  assert len(segments) == 2 and segments[0] == 'dash'
  assert not _prefix_policy('ui://bqaa/dash/' + head).admits(uri)
  assert not _prefix_policy('ui://bqaa/' + head).admits('ui://bqaa/' + segment)


@st.composite
def _authority_swap(draw):
  host = 'bqaa'
  label = draw(_label)
  assume(label != host)
  port = draw(st.integers(min_value=0, max_value=99999))
  zeros = '0' * draw(st.integers(min_value=0, max_value=2))
  userinfo = draw(st.text(_SEGMENT_CHARS.replace('@', ''), max_size=6))
  return draw(
      st.sampled_from([
          f'ui://{userinfo}@{host}/dash',
          f'ui://{host}@{label}/dash',
          f'ui://{host}:{userinfo}@{label}/dash',
          f'ui://{host}.{label}/dash',
          f'ui://{label}.{host}/dash',
          f'ui://{host}{label}/dash',
          f'ui://{host}%2E{label}/dash',
          f'ui://{host}:{zeros}{port}/dash',
          f'ui://{label}/dash',
          f'https://{host}/dash',
      ])
  )


@pytest.mark.conformance('P1-URI-17')
@_PROPERTY
@given(uri=_authority_swap())
def test_property_authority_swap_never_admitted(uri):
  assert not _prefix_policy('ui://bqaa/dash').admits(uri)


_FULLWIDTH = {
    c: chr(ord(c) - ord('a') + ord('ａ')) for c in string.ascii_lowercase
}


@pytest.mark.conformance('P1-URI-19')
@_PROPERTY
@given(data=st.data())
def test_property_case_port_idna_variants_admitted_exactly(data):
  unicode_host = data.draw(st.sampled_from(['bücher', 'münchen', 'ελλάδα']))
  alabel = idna.encode(unicode_host, uts46=True).decode('ascii')
  policy = _prefix_policy(f'https://{unicode_host}.example/dash')
  canonical = canonicalize(f'https://{alabel}.example/dash')
  if data.draw(st.booleans()):
    host = _random_case(data.draw, alabel)
  else:
    host = ''.join(
        _FULLWIDTH.get(c, c) if data.draw(st.booleans()) else c
        for c in _random_case(data.draw, unicode_host)
    )
  port = data.draw(st.sampled_from(['', ':443', ':0443', ':00443']))
  variant = (
      f'{_random_case(data.draw, "https")}://{host}'
      f'{_random_case(data.draw, ".example")}{port}/dash'
  )
  assert policy.check(variant) == canonical
  other = data.draw(
      st.sampled_from([
          f'https://{host}x.example{port}/dash',
          f'https://{host}.example.evil{port}/dash',
          f'https://{host}.example:444/dash',
          f'http://{host}.example/dash',
          f'https://{host}.example{port}/Dash',
          f'https://{host}.example{port}/dashboard',
      ])
  )
  assert not policy.admits(other)
