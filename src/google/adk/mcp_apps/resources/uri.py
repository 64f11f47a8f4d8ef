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

"""The one URI canonicalization contract of the MCP Apps host.

Every place the host compares resource URIs (the resource-read policy,
returned items, operation identity, descriptor matching, bootstrap) calls
`canonicalize` or a profile-configured `UriCanonicalizer` and compares the
results. Input whose meaning could differ between consumers (dot segments,
userinfo, bad escapes or hosts) raises `McpAppUriError`, whose
`UriErrorReason` names the rule. The rules are in docs/design/resources.md.

Example:

  assert canonicalize('UI://BQAA/x#top') == canonicalize('ui://bqaa/x')
  assert not uris_equal('ui://bqaa/a/../b', 'ui://bqaa/b')  # Rejected.
  custom = UriCanonicalizer().with_scheme(
      'x', canonicalize_generic, revision='1'
  )
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import ipaddress
import re
from typing import Callable
from typing import Mapping
from typing import NoReturn
from typing import Optional
from typing import Union

import idna

from ..errors import McpAppsError

MAX_URI_LENGTH = 8192
"""The longest URI, in characters, that is canonicalized; longer is an error."""

BUILTIN_RULES_VERSION = '1'
"""Bumped whenever the built-in rules change what a URI canonicalizes to."""

_EXCERPT_LENGTH = 80
_CACHE_SIZE = 4096
_CACHEABLE_LENGTH = 2048

_UNRESERVED = frozenset(
    'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~'
)
_SCHEME_RE = re.compile(r'([A-Za-z][A-Za-z0-9+.\-]*):')
_CANONICAL_SCHEME_RE = re.compile(r'[a-z][a-z0-9+.\-]*')
_FORBIDDEN_RE = re.compile(r'[\x00-\x20\x7f\\]')
_PATH_RE = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*")
_QUERY_RE = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*")
_AUTHORITY_RE = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:%\[\]]*")
_BAD_ESCAPE_RE = re.compile(r'%(?![0-9A-Fa-f]{2})')
_ESCAPE_RE = re.compile(r'%([0-9A-Fa-f]{2})')
_ASCII_HOST_RE = re.compile(r'[a-z0-9_\-]+(?:\.[a-z0-9_\-]+)*')
_IPV6_LITERAL_RE = re.compile(r'\[([0-9A-Fa-f:.]+)\]')
_PORT_RE = re.compile(r'[0-9]+')
_HOST_CHARS_RE = re.compile(r'[^\[\]]*')


class UriErrorReason(enum.Enum):
  """Which rule an invalid URI broke."""

  SYNTAX = 'syntax'
  """The URI is malformed, too long, or has a forbidden character."""

  DOT_SEGMENT = 'dot_segment'
  """The path has a `.` or `..` segment, possibly percent-encoded."""

  USERINFO = 'userinfo'
  """The authority carries userinfo (`user@host`)."""

  HOST = 'host'
  """The host is empty where one is required, or is not a valid host."""

  PORT = 'port'
  """The port is empty, not decimal, or out of range."""

  SCHEME = 'scheme'
  """A registered scheme canonicalizer failed or broke its contract."""


class McpAppUriError(McpAppsError, ValueError):
  """A URI cannot be canonicalized; it must be treated as matching nothing.

  Attributes:
    reason: Which rule the URI broke.
    part: The URI component at fault: `uri`, `scheme`, `userinfo`, `host`,
      `port`, `authority`, `path`, `query` or `fragment`.
    uri_excerpt: A truncated `repr` of the offending URI, safe to log.
  """

  def __init__(
      self,
      message: str,
      *,
      reason: UriErrorReason = UriErrorReason.SYNTAX,
      part: str = 'uri',
      uri_excerpt: str = '',
  ) -> None:
    super().__init__(message)
    self.reason = reason
    self.part = part
    self.uri_excerpt = uri_excerpt


def _excerpt(text: str) -> str:
  if len(text) <= _EXCERPT_LENGTH:
    return repr(text)
  return f'{text[:_EXCERPT_LENGTH]!r}... ({len(text)} characters)'


def _fail(reason: UriErrorReason, part: str, detail: str, uri: str) -> NoReturn:
  excerpt = _excerpt(uri)
  raise McpAppUriError(
      f'Invalid URI {part}: {detail}; uri={excerpt}',
      reason=reason,
      part=part,
      uri_excerpt=excerpt,
  )


def _normalize_escape(match: re.Match[str]) -> str:
  char = chr(int(match.group(1), 16))
  if char in _UNRESERVED:
    return char
  return '%' + match.group(1).upper()


def _escapes_normalized(text: str) -> bool:
  if '%' not in text:
    return True
  if _BAD_ESCAPE_RE.search(text):
    return False
  return _ESCAPE_RE.sub(_normalize_escape, text) == text


def _normalize_component(
    text: str, allowed: re.Pattern[str], part: str, uri: str
) -> str:
  """Checks a component's characters and normalizes its escapes."""
  if not allowed.fullmatch(text):
    bad = next(c for c in text if not allowed.fullmatch(c))
    _fail(
        UriErrorReason.SYNTAX,
        part,
        f'character {bad!r} is not allowed here (URI syntax; non-ASCII text'
        ' must be percent-encoded)',
        uri,
    )
  if '%' not in text:
    return text
  if _BAD_ESCAPE_RE.search(text):
    _fail(
        UriErrorReason.SYNTAX,
        part,
        "'%' is not followed by two hex digits",
        uri,
    )
  return _ESCAPE_RE.sub(_normalize_escape, text)


def _has_dot_segment(path: str) -> bool:
  if '.' not in path:
    return False
  return any(segment in ('.', '..') for segment in path.split('/'))


def _check_raw(uri: object) -> str:
  if not isinstance(uri, str):
    raise McpAppUriError(
        f'Invalid URI: expected a str, got {type(uri).__name__}'
    )
  if len(uri) > MAX_URI_LENGTH:
    _fail(
        UriErrorReason.SYNTAX, 'uri', f'longer than {MAX_URI_LENGTH} chars', uri
    )
  forbidden = _FORBIDDEN_RE.search(uri)
  if forbidden:
    _fail(
        UriErrorReason.SYNTAX,
        'uri',
        f'control character, space or backslash {forbidden.group()!r} at'
        f' index {forbidden.start()}',
        uri,
    )
  return uri


def _scheme_of(uri: str) -> str:
  match = _SCHEME_RE.match(uri)
  if not match:
    _fail(UriErrorReason.SYNTAX, 'scheme', 'missing or malformed scheme', uri)
  return match.group(1).lower()


@dataclasses.dataclass(frozen=True)
class CanonicalUri:
  """A URI in canonical form; two URIs are equivalent iff these are equal.

  `str()` gives the canonical string, which canonicalizes to an equal value.
  Construct one with `canonicalize`; direct construction (by a scheme
  canonicalizer) validates the invariants and raises `McpAppUriError`
  (`SYNTAX` or `DOT_SEGMENT`) when they do not hold.

  Attributes:
    scheme: The lowercase scheme, e.g. `ui`.
    authority: `host[:port]`, `''` for an empty authority (`file:///x`), or
      None when the URI has no `//` authority at all (`urn:x`).
    path: The path, with normalized escapes. It is empty or starts with `/`
      when there is an authority.
    query: The query without its `?`, or None when there is no `?`.
  """

  scheme: str
  authority: Optional[str]
  path: str
  query: Optional[str] = None

  def __post_init__(self) -> None:
    text = self._compose()
    if not isinstance(self.scheme, str) or not _CANONICAL_SCHEME_RE.fullmatch(
        self.scheme
    ):
      _fail(UriErrorReason.SYNTAX, 'scheme', 'not a lowercase scheme', text)
    if self.authority is not None and not (
        isinstance(self.authority, str)
        and _AUTHORITY_RE.fullmatch(self.authority)
        and _escapes_normalized(self.authority)
    ):
      _fail(
          UriErrorReason.SYNTAX, 'authority', 'not a canonical authority', text
      )
    if not (
        isinstance(self.path, str)
        and _PATH_RE.fullmatch(self.path)
        and _escapes_normalized(self.path)
    ):
      _fail(UriErrorReason.SYNTAX, 'path', 'not a canonical path', text)
    if self.authority is not None and self.path[:1] not in ('', '/'):
      _fail(
          UriErrorReason.SYNTAX,
          'path',
          "must start with '/' after authority",
          text,
      )
    if self.authority is None and self.path.startswith('//'):
      _fail(
          UriErrorReason.SYNTAX,
          'path',
          "starts with '//' without authority",
          text,
      )
    if _has_dot_segment(self.path):
      _fail(UriErrorReason.DOT_SEGMENT, 'path', "'.' or '..' segment", text)
    if self.query is not None and not (
        isinstance(self.query, str)
        and _QUERY_RE.fullmatch(self.query)
        and _escapes_normalized(self.query)
    ):
      _fail(UriErrorReason.SYNTAX, 'query', 'not a canonical query', text)

  @property
  def path_segments(self) -> tuple[str, ...]:
    """The path split on `/`, after the leading `/` if there is one.

    `ui://h` has `()`, `ui://h/` has `('',)`, `ui://h/a/b` has `('a', 'b')`
    and `urn:a:b` has `('a:b',)`. An encoded slash (`%2F`) never splits.
    """
    if not self.path:
      return ()
    if self.path.startswith('/'):
      return tuple(self.path[1:].split('/'))
    return tuple(self.path.split('/'))

  def _compose(self) -> str:
    parts = [str(self.scheme), ':']
    if self.authority is not None:
      parts += ['//', str(self.authority)]
    parts.append(str(self.path))
    if self.query is not None:
      parts += ['?', str(self.query)]
    return ''.join(parts)

  def __str__(self) -> str:
    return self._compose()


SchemeCanonicalizer = Callable[[str], CanonicalUri]
"""Canonicalizes a URI of one scheme; raises `McpAppUriError` if invalid.

It receives the raw URI (already checked for type, length, control
characters, spaces and backslashes) and must be pure: results are cached.
"""


@dataclasses.dataclass(frozen=True)
class _HierarchicalRules:
  default_port: Optional[int] = None
  require_host: bool = False
  empty_path_is_root: bool = False


_GENERIC_RULES = _HierarchicalRules()
_BUILTIN_RULES: Mapping[str, _HierarchicalRules] = {
    'ui': _HierarchicalRules(require_host=True),
    'http': _HierarchicalRules(80, True, True),
    'https': _HierarchicalRules(443, True, True),
    'ws': _HierarchicalRules(80, True, True),
    'wss': _HierarchicalRules(443, True, True),
}


def _canonical_host(raw: str, uri: str) -> str:
  if not raw:
    return ''
  host = _normalize_component(raw, _HOST_CHARS_RE, 'host', uri)
  if '%' in host:
    _fail(
        UriErrorReason.HOST, 'host', 'escape of a non-unreserved character', uri
    )
  if host.isascii():
    lowered = host.lower()
    if not any(label.startswith('xn--') for label in lowered.split('.')):
      if not _ASCII_HOST_RE.fullmatch(lowered):
        _fail(
            UriErrorReason.HOST,
            'host',
            f'{_excerpt(host)} is not dot-separated labels of a-z 0-9 - _',
            uri,
        )
      return lowered
  try:
    encoded = idna.encode(host, uts46=True).decode('ascii')
    # Recent idna releases reject non-canonical ("fake") A-labels such as
    # `xn---bbk` themselves; checking the round trip keeps older ones exact.
    for label in encoded.split('.'):
      if label.startswith('xn--'):
        if idna.alabel(idna.ulabel(label)).decode('ascii') != label:
          raise idna.IDNAError(f'{label!r} is not a canonical A-label')
  except UnicodeError as e:  # idna.IDNAError is a UnicodeError.
    _fail(UriErrorReason.HOST, 'host', f'IDNA (UTS-46): {str(e)[:120]}', uri)
  if '' in encoded.split('.'):
    _fail(UriErrorReason.HOST, 'host', 'empty label (or trailing dot)', uri)
  return encoded


def _canonical_ip_literal(raw: str, uri: str) -> str:
  match = _IPV6_LITERAL_RE.fullmatch(raw)
  if not match:
    _fail(UriErrorReason.HOST, 'host', 'a bracketed host must be IPv6', uri)
  try:
    address = ipaddress.IPv6Address(match.group(1))
  except ValueError:
    _fail(UriErrorReason.HOST, 'host', 'invalid IPv6 address', uri)
  return f'[{_format_ipv6(int(address))}]'


def _format_ipv6(value: int) -> str:
  """Formats an IPv6 address in its compressed text form, on any Python."""
  groups = [f'{(value >> (112 - 16 * i)) & 0xFFFF:x}' for i in range(8)]
  run_start, run_length = 0, 0
  start = 0
  while start < 8:
    end = start
    while end < 8 and groups[end] == '0':
      end += 1
    if end - start > run_length:
      run_start, run_length = start, end - start
    start = end + 1
  if run_length < 2:
    return ':'.join(groups)
  head = ':'.join(groups[:run_start])
  tail = ':'.join(groups[run_start + run_length :])
  return f'{head}::{tail}'


def _canonical_port(
    raw: Optional[str], rules: _HierarchicalRules, uri: str
) -> Optional[int]:
  if raw is None:
    return None
  if not raw:
    _fail(UriErrorReason.PORT, 'port', "empty port after ':'", uri)
  if not _PORT_RE.fullmatch(raw) or len(raw.lstrip('0')) > 5:
    _fail(
        UriErrorReason.PORT,
        'port',
        f'{_excerpt(raw)} is not a port number',
        uri,
    )
  port = int(raw)
  if port > 65535:
    _fail(UriErrorReason.PORT, 'port', f'{port} is out of range', uri)
  return None if port == rules.default_port else port


def _canonical_authority(raw: str, rules: _HierarchicalRules, uri: str) -> str:
  if '@' in raw:
    _fail(
        UriErrorReason.USERINFO, 'userinfo', "'user@host' is not allowed", uri
    )
  port_raw: Optional[str] = None
  if raw.startswith('['):
    close = raw.find(']')
    if close < 0:
      _fail(UriErrorReason.HOST, 'host', "'[' without ']'", uri)
    host = _canonical_ip_literal(raw[: close + 1], uri)
    after = raw[close + 1 :]
    if after:
      if not after.startswith(':'):
        _fail(UriErrorReason.HOST, 'host', "text after ']' is not a port", uri)
      port_raw = after[1:]
  else:
    colon = raw.find(':')
    if colon >= 0:
      raw, port_raw = raw[:colon], raw[colon + 1 :]
    host = _canonical_host(raw, uri)
    if not host:
      if rules.require_host:
        _fail(UriErrorReason.HOST, 'host', 'empty host', uri)
      if port_raw is not None:
        _fail(UriErrorReason.HOST, 'host', 'a port without a host', uri)
  port = _canonical_port(port_raw, rules, uri)
  return host if port is None else f'{host}:{port}'


def _canonicalize_with_rules(
    uri: str, scheme: str, rules: _HierarchicalRules
) -> CanonicalUri:
  rest = uri[len(scheme) + 1 :]
  hash_at = rest.find('#')
  if hash_at >= 0:
    _normalize_component(rest[hash_at + 1 :], _QUERY_RE, 'fragment', uri)
    rest = rest[:hash_at]
  query: Optional[str] = None
  question_at = rest.find('?')
  if question_at >= 0:
    query = _normalize_component(
        rest[question_at + 1 :], _QUERY_RE, 'query', uri
    )
    rest = rest[:question_at]
  authority: Optional[str] = None
  if rest.startswith('//'):
    slash_at = rest.find('/', 2)
    if slash_at < 0:
      slash_at = len(rest)
    authority = _canonical_authority(rest[2:slash_at], rules, uri)
    rest = rest[slash_at:]
  elif rules.require_host:
    _fail(
        UriErrorReason.SYNTAX,
        'authority',
        f"a {scheme!r} URI needs '//' and a host",
        uri,
    )
  path = _normalize_component(rest, _PATH_RE, 'path', uri)
  if _has_dot_segment(path):
    _fail(UriErrorReason.DOT_SEGMENT, 'path', "'.' or '..' segment", uri)
  if not path and authority is not None and rules.empty_path_is_root:
    path = '/'
  return CanonicalUri(scheme, authority, path, query)


def canonicalize_generic(
    uri: str,
    *,
    default_port: Optional[int] = None,
    require_host: bool = False,
    empty_path_is_root: bool = False,
) -> CanonicalUri:
  """Applies the built-in rules with the given scheme properties.

  A building block for scheme canonicalizers: the built-in schemes are this
  function with fixed arguments, and any other scheme gets the defaults.

  Args:
    uri: The URI to canonicalize.
    default_port: A port that is removed because the scheme implies it.
    require_host: Whether the URI must have `//` and a non-empty host.
    empty_path_is_root: Whether an empty path after an authority is `/`.

  Returns:
    The canonical URI.

  Raises:
    McpAppUriError: If the URI is invalid under the built-in rules.
  """
  uri = _check_raw(uri)
  rules = _HierarchicalRules(default_port, require_host, empty_path_is_root)
  return _canonicalize_with_rules(uri, _scheme_of(uri), rules)


@dataclasses.dataclass(frozen=True)
class _Registration:
  canonicalizer: SchemeCanonicalizer
  revision: str


class UriCanonicalizer:
  """An immutable set of canonicalization rules, one per scheme.

  Schemes without a registered canonicalizer use the built-in rules. The
  host profile builds one of these, and every URI comparison under that
  profile goes through it. Results for URIs up to 2048 characters are kept
  in a bounded LRU cache; that is safe because the rules and the results
  are immutable and errors are never cached.
  """

  __slots__ = ('_registrations', '_revision', '_cached')

  _registrations: Mapping[str, _Registration]
  _revision: str
  _cached: Callable[[str], CanonicalUri]

  def __init__(self) -> None:
    """Creates a canonicalizer with only the built-in rules."""
    self._initialize({})

  def _initialize(self, registrations: Mapping[str, _Registration]) -> None:
    revision = ';'.join(
        [f'builtin={BUILTIN_RULES_VERSION}']
        + [f'{s}={registrations[s].revision}' for s in sorted(registrations)]
    )
    object.__setattr__(self, '_registrations', dict(registrations))
    object.__setattr__(self, '_revision', revision)
    object.__setattr__(
        self,
        '_cached',
        functools.lru_cache(maxsize=_CACHE_SIZE)(self._canonicalize_uncached),
    )

  def __setattr__(self, name: str, value: object) -> None:
    raise AttributeError(f'{type(self).__name__} is immutable')

  def __repr__(self) -> str:
    return f'UriCanonicalizer(revision={self._revision!r})'

  @property
  def revision(self) -> str:
    """Identifies the rules; part of the resource policy's revision."""
    return self._revision

  @property
  def registered_schemes(self) -> frozenset[str]:
    """The schemes with a registered (not built-in) canonicalizer."""
    return frozenset(self._registrations)

  def with_scheme(
      self,
      scheme: str,
      canonicalizer: SchemeCanonicalizer,
      *,
      revision: str,
  ) -> UriCanonicalizer:
    """Returns a copy that canonicalizes `scheme` URIs with `canonicalizer`.

    Args:
      scheme: The scheme, in any case. Registering a built-in scheme replaces
        its built-in rules.
      canonicalizer: A pure function from the raw URI to its canonical form;
        it must keep the scheme and raise `McpAppUriError` for invalid URIs.
      revision: A non-empty label that changes whenever the canonicalizer's
        results change, so that policy revisions and fingerprints change.

    Returns:
      A new `UriCanonicalizer`; this one is unchanged.

    Raises:
      ValueError: If the scheme or the revision is malformed.
    """
    key = scheme.lower() if isinstance(scheme, str) else ''
    if not _CANONICAL_SCHEME_RE.fullmatch(key):
      raise ValueError(f'Invalid scheme name: {scheme!r}')
    if not isinstance(revision, str) or not revision or ';' in revision:
      raise ValueError(f'Invalid revision for scheme {key!r}: {revision!r}')
    if not callable(canonicalizer):
      raise ValueError(f'The canonicalizer for {key!r} is not callable')
    registrations = dict(self._registrations)
    registrations[key] = _Registration(canonicalizer, revision)
    new = object.__new__(UriCanonicalizer)
    new._initialize(registrations)
    return new

  def canonicalize(self, uri: Union[str, CanonicalUri]) -> CanonicalUri:
    """Returns the canonical form of `uri`.

    Args:
      uri: The URI. A `CanonicalUri` is re-checked under these rules.

    Returns:
      The canonical URI.

    Raises:
      McpAppUriError: If the URI is invalid; its `reason` names the rule.
    """
    if isinstance(uri, CanonicalUri):
      uri = str(uri)
    uri = _check_raw(uri)
    if len(uri) > _CACHEABLE_LENGTH:
      return self._canonicalize_uncached(uri)
    return self._cached(uri)

  def uris_equal(
      self, a: Union[str, CanonicalUri], b: Union[str, CanonicalUri]
  ) -> bool:
    """Whether `a` and `b` name the same resource.

    An invalid URI equals nothing, not even itself.

    Args:
      a: A URI.
      b: Another URI.

    Returns:
      True iff both are valid and their canonical forms are equal.
    """
    try:
      return self.canonicalize(a) == self.canonicalize(b)
    except McpAppUriError:
      return False

  def _canonicalize_uncached(self, uri: str) -> CanonicalUri:
    scheme = _scheme_of(uri)
    registration = self._registrations.get(scheme)
    if registration is None:
      rules = _BUILTIN_RULES.get(scheme, _GENERIC_RULES)
      return _canonicalize_with_rules(uri, scheme, rules)
    try:
      result = registration.canonicalizer(uri)
    except McpAppUriError:
      raise
    except Exception as e:  # pylint: disable=broad-exception-caught
      _fail(
          UriErrorReason.SCHEME,
          'scheme',
          f'the {scheme!r} canonicalizer raised {type(e).__name__}',
          uri,
      )
    if not isinstance(result, CanonicalUri) or result.scheme != scheme:
      _fail(
          UriErrorReason.SCHEME,
          'scheme',
          f'the {scheme!r} canonicalizer did not return a {scheme!r} URI',
          uri,
      )
    return result


DEFAULT_URI_CANONICALIZER = UriCanonicalizer()
"""The built-in rules only; what `canonicalize` and `uris_equal` use."""


def canonicalize(uri: Union[str, CanonicalUri]) -> CanonicalUri:
  """Canonicalizes `uri` with the built-in rules.

  Args:
    uri: The URI.

  Returns:
    The canonical URI; `str()` of it is the canonical string.

  Raises:
    McpAppUriError: If the URI is invalid; its `reason` names the rule.
  """
  return DEFAULT_URI_CANONICALIZER.canonicalize(uri)


def uris_equal(
    a: Union[str, CanonicalUri], b: Union[str, CanonicalUri]
) -> bool:
  """Whether `a` and `b` name the same resource under the built-in rules.

  Args:
    a: A URI.
    b: Another URI.

  Returns:
    True iff both are valid and canonicalize to equal values; an invalid URI
    equals nothing.
  """
  return DEFAULT_URI_CANONICALIZER.uris_equal(a, b)
