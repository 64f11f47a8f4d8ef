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

"""ADK Canonical JSON v1: one byte form for every digest the host computes.

The format is JCS (JSON Canonicalization Scheme) over the I-JSON domain:
sorted members, ECMAScript number text, minimal string escapes, no
whitespace. Values outside the domain or over a limit raise
`CanonicalJsonError` with a `CanonicalJsonReason`. An envelope binds the
bytes to one `Purpose`, so a digest made for one use never serves another.
The design notes are in docs/design/canonical-json.md.

Example:

  data = canonicalize({'b': 1, 'a': [1.5, None]})  # b'{"a":[1.5,null],"b":1}'
  digest = envelope_digest(Purpose.SEALED_RESULT, {'ok': True})
  assert open_envelope('sealed-result', envelope('sealed-result', 1)) == b'1'
"""

from __future__ import annotations

import decimal
import enum
import hashlib
import json
import re
from typing import Any
from typing import Callable
from typing import Optional
from typing import Union

from .errors import McpAppsError

__all__ = [
    'DEFAULT_MAX_BYTES',
    'DEFAULT_MAX_DEPTH',
    'ENVELOPE_FORMAT',
    'MAX_DEPTH_CEILING',
    'MAX_SAFE_INTEGER',
    'CanonicalJsonError',
    'CanonicalJsonReason',
    'Purpose',
    'canonicalize',
    'envelope',
    'envelope_digest',
    'open_envelope',
]

DEFAULT_MAX_BYTES = 8 * 1024 * 1024
"""Default limit on the canonical UTF-8 bytes of one value (8 MiB)."""

DEFAULT_MAX_DEPTH = 64
"""Default limit on container nesting (see the module docstring)."""

MAX_DEPTH_CEILING = 256
"""Largest configurable `max_depth`; keeps the encoders off the C stack."""

MAX_SAFE_INTEGER = 2**53 - 1
"""Largest integer magnitude in the I-JSON domain."""

ENVELOPE_FORMAT = 'adk-canonical-json/v1'
"""The format name at the start of every envelope header."""


class Purpose(str, enum.Enum):
  """What a canonical value is for; tags envelopes and errors."""

  SEALED_RESULT = 'sealed-result'
  """A tool result sealed into host-private storage."""

  CONFIRMATION_ARGUMENTS = 'confirmation-arguments'
  """The arguments a sealed confirmation permit binds."""

  BINDING_REVISION = 'binding-revision'
  """The declared serializable identity subset of a binding."""

  REPLAY_IDENTITY = 'replay-identity'
  """The identity of an operation for idempotent replay."""


PurposeLike = Union[Purpose, str]
"""A `Purpose` or its string value."""


class CanonicalJsonReason(str, enum.Enum):
  """Why a value has no canonical form (or an envelope was refused)."""

  TOO_LARGE = 'too_large'
  """The canonical UTF-8 bytes are longer than the size limit."""

  TOO_DEEP = 'too_deep'
  """Containers nest deeper than the depth limit (or form a cycle)."""

  NON_FINITE = 'non_finite'
  """A float is NaN or infinite."""

  INTEGER_OUT_OF_RANGE = 'integer_out_of_range'
  """An integer lies outside +-(2**53 - 1), the I-JSON range."""

  INVALID_STRING = 'invalid_string'
  """A string or member name is not valid Unicode (a lone surrogate)."""

  UNSUPPORTED_TYPE = 'unsupported_type'
  """A value or member name has a type outside the JSON domain."""

  ENVELOPE_MISMATCH = 'envelope_mismatch'
  """An envelope is malformed or carries another purpose than expected."""


class CanonicalJsonError(McpAppsError):
  """A value has no ADK Canonical JSON v1 form, or breaks a limit.

  Attributes:
    reason: Why, as a `CanonicalJsonReason`.
    purpose: The purpose the value was canonicalized for, if any.
    path: A JSON Pointer to the offending value; `''` is the whole value.
    limit: The size or depth limit that was broken (`TOO_LARGE` and
      `TOO_DEEP` only), else None.
    offending_type: The type of the value or member name outside the domain
      (`UNSUPPORTED_TYPE` only), else None.
    member_name: Whether the offending value is a member name (the path
      then names the object holding it).
  """

  def __init__(
      self,
      reason: CanonicalJsonReason,
      detail: str,
      purpose: Optional[Purpose] = None,
      *,
      limit: Optional[int] = None,
      offending_type: Optional[type[Any]] = None,
      member_name: bool = False,
  ):
    self.reason = reason
    self.detail = detail
    self.purpose = purpose
    self.limit = limit
    self.offending_type = offending_type
    self.member_name = member_name
    self._segments: list[str] = []
    super().__init__(detail)

  @property
  def path(self) -> str:
    """The JSON Pointer to the offending value."""
    return ''.join(
        '/' + s.replace('~', '~0').replace('/', '~1')
        for s in reversed(self._segments)
    )

  def __str__(self) -> str:
    where = f' at {self.path!r}' if self._segments else ''
    purpose = f' for {self.purpose.value}' if self.purpose else ''
    return f'Canonical JSON{purpose}: {self.detail}{where}'


def _over_limit(
    reason: CanonicalJsonReason, limit: int, purpose: Optional[Purpose]
) -> CanonicalJsonError:
  """A `TOO_LARGE` or `TOO_DEEP` error for `limit`."""
  what = 'canonical form exceeds {} bytes'
  if reason is CanonicalJsonReason.TOO_DEEP:
    what = 'nesting exceeds depth {}'
  return CanonicalJsonError(reason, what.format(limit), purpose, limit=limit)


# ---------------------------------------------------------------------------
# Numbers.

_FAST_FLOAT_MIN = 1e-4
"""From here up, `repr` of a non-integral float is ECMAScript's text."""

_EXACT_INT_FLOAT_LIMIT = 2.0**53
"""Below this magnitude `int(x)` of an integral float is ECMAScript's text."""

_PLAIN_NOTATION_LIMIT = 1e21
"""From here up both `repr` and ECMAScript use exponent notation."""


def _format_float(x: float) -> str:
  """Returns ECMAScript's `Number.prototype.toString` of a finite float.

  `repr` gives the shortest digits that round-trip (the `s` and `k` of
  ECMA-262 Number::toString, with the same closest-value tie rule); only the
  notation is rewritten.

  Args:
    x: A finite float.

  Returns:
    The JCS text of the number.
  """
  if x == 0.0:
    return '0'
  text = repr(x)
  sign = ''
  if text[0] == '-':
    sign = '-'
    text = text[1:]
  mantissa, _, exponent_text = text.partition('e')
  exponent = int(exponent_text) if exponent_text else 0
  whole, _, fraction = mantissa.partition('.')
  digits = (whole + fraction).lstrip('0')
  stripped = digits.rstrip('0')
  # value = int(digits) * 10**(exponent - len(fraction))
  scale = exponent - len(fraction) + (len(digits) - len(stripped))
  k = len(stripped)
  n = k + scale
  if k <= n <= 21:
    body = stripped + '0' * (n - k)
  elif 0 < n <= 21:
    body = stripped[:n] + '.' + stripped[n:]
  elif -6 < n <= 0:
    body = '0.' + '0' * -n + stripped
  else:
    e = n - 1
    exp = f'e+{e}' if e >= 0 else f'e-{-e}'
    if k == 1:
      body = stripped + exp
    else:
      body = stripped[0] + '.' + stripped[1:] + exp
  return sign + body


def _format_small_float(x: float) -> str:
  """Returns `_format_float(x)` for a float with 0 < |x| < 1e-4, faster.

  `repr` writes such a float as `d[.ddd]e-XX`; ECMAScript writes it in
  plain notation down to 1e-6 and as `d[.ddd]e-X` below.
  """
  mantissa, _, exponent_text = repr(x).partition('e')
  exponent = int(exponent_text)
  if exponent <= -7:
    return f'{mantissa}e{exponent}'
  sign = ''
  if mantissa[0] == '-':
    sign = '-'
    mantissa = mantissa[1:]
  return sign + '0.' + '0' * (-exponent - 1) + mantissa.replace('.', '')


def _integral_float_as_int(x: float) -> int:
  """Returns the `int` whose decimal text ECMAScript prints for `x`.

  Args:
    x: An integral float with magnitude below 1e21.
  """
  if -_EXACT_INT_FLOAT_LIMIT < x < _EXACT_INT_FLOAT_LIMIT:
    return int(x)
  # The shortest digits padded with zeros, not the exact binary value.
  return int(decimal.Decimal(repr(x)))


# ---------------------------------------------------------------------------
# Strings and member names.


def _utf16_key(name: str) -> bytes:
  """Sort key ordering names by UTF-16 code units, as JCS requires."""
  return name.encode('utf-16-be')


def _has_astral(name: str) -> bool:
  """Whether `name` holds a character above U+FFFF."""
  return not name.isascii() and max(name) > '\uffff'


def _check_string(value: str, purpose: Optional[Purpose]) -> None:
  """Raises `CanonicalJsonError` (`INVALID_STRING`) on a lone surrogate."""
  try:
    value.encode('utf-8')
  except UnicodeEncodeError as e:
    raise CanonicalJsonError(
        CanonicalJsonReason.INVALID_STRING,
        f'lone surrogate U+{ord(value[e.start]):04X} at index {e.start}',
        purpose,
    ) from None


def _unsupported(
    value: object, purpose: Optional[Purpose]
) -> CanonicalJsonError:
  what = type(value).__name__
  return CanonicalJsonError(
      CanonicalJsonReason.UNSUPPORTED_TYPE,
      f'values of type {what} have no JSON form',
      purpose,
      offending_type=type(value),
  )


def _unsupported_key(
    key: object, purpose: Optional[Purpose]
) -> CanonicalJsonError:
  what = type(key).__name__
  return CanonicalJsonError(
      CanonicalJsonReason.UNSUPPORTED_TYPE,
      f'member names must be str, not {what}',
      purpose,
      offending_type=type(key),
      member_name=True,
  )


def _out_of_range(purpose: Optional[Purpose]) -> CanonicalJsonError:
  return CanonicalJsonError(
      CanonicalJsonReason.INTEGER_OUT_OF_RANGE,
      'integer magnitude exceeds 2**53 - 1 (I-JSON)',
      purpose,
  )


def _non_finite(value: float, purpose: Optional[Purpose]) -> CanonicalJsonError:
  return CanonicalJsonError(
      CanonicalJsonReason.NON_FINITE, f'{value!r} is not a JSON number', purpose
  )


# ---------------------------------------------------------------------------
# The reference encoder.

_encode_basestring: Any = getattr(
    json.encoder, 'c_encode_basestring', None
) or (json.encoder.py_encode_basestring)


def _reference_encode(
    value: object, max_depth: int, purpose: Optional[Purpose]
) -> str:
  """Encodes `value` by direct recursion; the fast path's fallback.

  Validates everything itself: it does not rely on the pre-pass.

  Args:
    value: The value to encode.
    max_depth: The depth limit.
    purpose: Named in errors.

  Returns:
    The canonical text.

  Raises:
    CanonicalJsonError: If the value is outside the domain or too deep.
  """
  parts: list[str] = []
  append = parts.append

  def emit(node: Any, depth: int) -> None:
    kind = type(node)
    if kind is str:
      _check_string(node, purpose)
      append(_encode_basestring(node))
    elif kind is bool:
      append('true' if node else 'false')
    elif node is None:
      append('null')
    elif kind is int:
      if not -MAX_SAFE_INTEGER <= node <= MAX_SAFE_INTEGER:
        raise _out_of_range(purpose)
      append(int.__repr__(node))
    elif kind is float:
      if node - node != 0.0:
        raise _non_finite(node, purpose)
      append(_format_float(node))
    elif kind is list:
      if depth >= max_depth:
        raise _over_limit(CanonicalJsonReason.TOO_DEEP, max_depth, purpose)
      append('[')
      for index, item in enumerate(node):
        if index:
          append(',')
        try:
          emit(item, depth + 1)
        except CanonicalJsonError as e:
          e._segments.append(str(index))  # pylint: disable=protected-access
          raise
      append(']')
    elif kind is dict:
      if depth >= max_depth:
        raise _over_limit(CanonicalJsonReason.TOO_DEEP, max_depth, purpose)
      mapping: dict[Any, Any] = node
      for key in mapping:
        if type(key) is not str:
          raise _unsupported_key(key, purpose)
        _check_string(key, purpose)
      append('{')
      first = True
      for key in sorted(mapping, key=_utf16_key):
        if not first:
          append(',')
        first = False
        append(_encode_basestring(key))
        append(':')
        try:
          emit(mapping[key], depth + 1)
        except CanonicalJsonError as e:
          e._segments.append(key)  # pylint: disable=protected-access
          raise
      append('}')
    else:
      raise _unsupported(node, purpose)

  emit(value, 0)
  return ''.join(parts)


# ---------------------------------------------------------------------------
# The fast path.

_C_ENCODER = json.JSONEncoder(
    skipkeys=False,
    ensure_ascii=False,
    check_circular=False,
    allow_nan=False,
    sort_keys=True,
    separators=(',', ':'),
)

_PLACEHOLDER_INDEX_DIGITS = 12
_PLACEHOLDER_PREFIX = '7' + '0' * 13
_PLACEHOLDER_BASE = 7 * 10**25
"""A placeholder is the integer `_PLACEHOLDER_BASE + i` for an index `i`
below 10**12: 26 digits (every accepted number is written with at most 21
digits in a row), `_PLACEHOLDER_PREFIX` ('7' and 13 zeros) exactly once, at
its start, then `i` in 12 digits."""


_TWO_53 = 2.0**53

_Freeze = tuple[Callable[[dict[str, Any]], Any], Callable[[list[Any]], Any]]
"""The dict and list constructors a transcription builds with."""


def _prepass(
    root: object,
    max_depth: int,
    purpose: Optional[Purpose],
    *,
    freeze: Optional[_Freeze] = None,
    max_values: int = 0,
) -> tuple[object, list[str], int]:
  """Validates a value and rewrites the floats the C encoder would misprint.

  This is the one walker of the JSON domain's type rules. Containers are
  walked by two closures (local lookups are the cheapest in CPython); a
  container holding a rewritten member is copied, the caller's value is
  left alone. Errors get their JSON Pointer segments on the way out (`try`
  costs nothing until something raises).

  With `freeze` the walk transcribes instead (see `transcribe`): floats
  are kept as they are, every container is copied and passed through the
  matching `freeze` callable, and at most `max_values` values are visited.

  Args:
    root: The value.
    max_depth: The depth limit.
    purpose: Named in errors.
    freeze: The callables that copy a dict and a list (the caller's own or
      a rewritten one) into their read-only form, or None to prepare for
      the encoder.
    max_values: With `freeze`, the largest accepted number of values.

  Returns:
    The value to hand the C encoder, the ECMAScript text of each placeholder
    planted in it by index (one per distinct float), and the number of
    placeholders planted.

  Raises:
    CanonicalJsonError: If the value is outside the domain or too deep.
  """
  small: list[str] = []
  small_index: dict[float, int] = {}
  planted = [0]
  limit = MAX_SAFE_INTEGER
  copying = freeze is not None
  freeze_dict, freeze_list = freeze or (dict, list)
  # Values visited so far while transcribing; the root is one.
  visited = [1]

  def too_many() -> CanonicalJsonError:
    return CanonicalJsonError(
        CanonicalJsonReason.TOO_LARGE,
        f'more than {max_values} values',
        purpose,
        limit=max_values,
    )

  def number(value: float) -> object:
    # Everything but a non-integral float of magnitude 1e-4 .. 1e16.
    if value - value != 0.0:
      raise _non_finite(value, purpose)
    if value % 1.0 == 0.0:
      if -_PLAIN_NOTATION_LIMIT < value < _PLAIN_NOTATION_LIMIT:
        return _integral_float_as_int(value)
      return value
    if value >= _FAST_FLOAT_MIN or value <= -_FAST_FLOAT_MIN:
      return value
    # One placeholder per distinct value; `planted` counts occurrences.
    planted[0] += 1
    index = small_index.get(value)
    if index is None:
      index = small_index[value] = len(small)
      small.append(_format_small_float(value))
    return _PLACEHOLDER_BASE + index

  # `walk_dict` and `walk_list` repeat the per-value dispatch on purpose: a
  # shared helper would add a Python call per value to the hot path, and
  # sealing a multi-megabyte result walks every value once.
  def walk_dict(mapping: dict[Any, Any], depth: int) -> dict[Any, Any]:
    if depth > max_depth:
      raise _over_limit(CanonicalJsonReason.TOO_DEEP, max_depth, purpose)
    if copying:
      visited[0] += len(mapping)
      if visited[0] > max_values:
        raise too_many()
    out: Optional[dict[Any, Any]] = None
    key: Any = None
    try:
      for key, item in mapping.items():
        if type(key) is not str:
          raise _unsupported_key(key, purpose)
        kind = type(item)
        if kind is str:
          continue
        if kind is float:
          if 1e-4 <= item < 1e16 or -1e16 < item <= -1e-4:
            if item % 1.0 or copying:
              continue
            new: Any = int(item) if -_TWO_53 < item < _TWO_53 else number(item)
          elif copying:
            if item - item != 0.0:
              raise _non_finite(item, purpose)
            continue
          elif item == 0.0:
            new = 0
          else:
            new = number(item)
        elif kind is int:
          if item > limit or item < -limit:
            raise _out_of_range(purpose)
          continue
        elif kind is dict:
          new = walk_dict(item, depth + 1)
        elif kind is list:
          new = walk_list(item, depth + 1)
        elif kind is bool or item is None:
          continue
        else:
          raise _unsupported(item, purpose)
        if new is not item:
          if out is None:
            out = dict(mapping)
          out[key] = new
    except CanonicalJsonError as e:
      if type(key) is str:
        e._segments.append(key)  # pylint: disable=protected-access
      raise
    if copying:
      return freeze_dict(mapping if out is None else out)
    return mapping if out is None else out

  def walk_list(items: list[Any], depth: int) -> list[Any]:
    if depth > max_depth:
      raise _over_limit(CanonicalJsonReason.TOO_DEEP, max_depth, purpose)
    if copying:
      visited[0] += len(items)
      if visited[0] > max_values:
        raise too_many()
    out: Optional[list[Any]] = None
    index = -1
    try:
      for item in items:
        index += 1
        kind = type(item)
        if kind is str:
          continue
        if kind is float:
          if 1e-4 <= item < 1e16 or -1e16 < item <= -1e-4:
            if item % 1.0 or copying:
              continue
            new: Any = int(item) if -_TWO_53 < item < _TWO_53 else number(item)
          elif copying:
            if item - item != 0.0:
              raise _non_finite(item, purpose)
            continue
          elif item == 0.0:
            new = 0
          else:
            new = number(item)
        elif kind is int:
          if item > limit or item < -limit:
            raise _out_of_range(purpose)
          continue
        elif kind is dict:
          new = walk_dict(item, depth + 1)
        elif kind is list:
          new = walk_list(item, depth + 1)
        elif kind is bool or item is None:
          continue
        else:
          raise _unsupported(item, purpose)
        if new is not item:
          if out is None:
            out = list(items)
          out[index] = new
    except CanonicalJsonError as e:
      e._segments.append(str(index))  # pylint: disable=protected-access
      raise
    if copying:
      return freeze_list(items if out is None else out)
    return items if out is None else out

  value: Any = root
  kind = type(value)
  if kind is dict:
    return walk_dict(value, 1), small, planted[0]
  if kind is list:
    return walk_list(value, 1), small, planted[0]
  if kind is float:
    if copying:
      if value - value != 0.0:
        raise _non_finite(value, purpose)
      return value, small, 0
    return number(value), small, planted[0]
  if kind is str or kind is bool or value is None:
    return value, small, 0
  if kind is int:
    if value > limit or value < -limit:
      raise _out_of_range(purpose)
    return value, small, 0
  raise _unsupported(value, purpose)


def _astral_misordered(value: Any) -> bool:
  """Whether an object's code-point and UTF-16 member orders differ.

  Only an object with a member name above U+FFFF can differ; the value has
  passed the pre-pass, so it is acyclic and within the depth limit.
  """
  kind = type(value)
  if kind is dict:
    for key in value:
      if _has_astral(key):
        if sorted(value) != sorted(value, key=_utf16_key):
          return True
        break
    return any(_astral_misordered(item) for item in value.values())
  if kind is list:
    return any(_astral_misordered(item) for item in value)
  return False


_ASTRAL_LEADS = (b'\xf0', b'\xf1', b'\xf2', b'\xf3', b'\xf4')
"""UTF-8 lead bytes of the characters above U+FFFF."""


def _fast_encode(
    value: object, max_depth: int, purpose: Optional[Purpose]
) -> Optional[bytes]:
  """Encodes `value` with the C encoder after the validating pre-pass.

  Returns:
    The canonical UTF-8 bytes, or None if only the reference encoder can
    write the value (a placeholder also spelled inside a string, an object
    whose member orders differ, or a lone surrogate to be located).

  Raises:
    CanonicalJsonError: If the value is outside the domain or too deep.
  """
  prepared, small, planted = _prepass(value, max_depth, purpose)
  text: str = _C_ENCODER.encode(prepared)
  if planted:
    # Each placeholder holds the prefix exactly once; a string holding it
    # too makes the count differ.
    parts = text.split(_PLACEHOLDER_PREFIX)
    if len(parts) != planted + 1:
      return None
    width = _PLACEHOLDER_INDEX_DIGITS
    parts[1:] = [small[int(p[:width])] + p[width:] for p in parts[1:]]
    text = ''.join(parts)
  try:
    data = text.encode('utf-8')
  except UnicodeEncodeError:
    return None
  if not data.isascii():
    for lead in _ASTRAL_LEADS:
      if lead in data:
        if _astral_misordered(value):
          return None
        break
  return data


# ---------------------------------------------------------------------------
# The public API.


def _purpose(purpose: Optional[PurposeLike]) -> Optional[Purpose]:
  if purpose is None:
    return None
  try:
    return Purpose(purpose)
  except ValueError:
    raise ValueError(f'unknown canonical JSON purpose {purpose!r}') from None


def _check_limits(max_bytes: int, max_depth: int) -> None:
  if type(max_bytes) is not int or max_bytes < 1:
    raise ValueError(f'max_bytes must be a positive int, not {max_bytes!r}')
  if type(max_depth) is not int or not 0 <= max_depth <= MAX_DEPTH_CEILING:
    raise ValueError(
        f'max_depth must be an int in 0..{MAX_DEPTH_CEILING}, not {max_depth!r}'
    )


def canonicalize(
    value: object,
    *,
    purpose: Optional[PurposeLike] = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> bytes:
  """Returns the ADK Canonical JSON v1 bytes of a JSON value.

  Args:
    value: A value in the JSON domain (see the module docstring).
    purpose: What the bytes are for; named in errors. Every purpose applies
      the same rules; use `envelope` to bind the bytes to the purpose.
    max_bytes: Largest accepted length of the canonical UTF-8 bytes.
    max_depth: Deepest accepted container nesting, at most
      `MAX_DEPTH_CEILING`.

  Returns:
    The canonical UTF-8 bytes.

  Raises:
    CanonicalJsonError: Its `reason` says why the value has no canonical
      form within the limits.
    ValueError: If `purpose` or a limit is invalid.
  """
  tag = _purpose(purpose)
  _check_limits(max_bytes, max_depth)
  data = _fast_encode(value, max_depth, tag)
  if data is None:
    data = _reference_encode(value, max_depth, tag).encode('utf-8')
  if len(data) > max_bytes:
    raise _over_limit(CanonicalJsonReason.TOO_LARGE, max_bytes, tag)
  return data


def transcribe(
    value: object,
    *,
    freeze_dict: Callable[[dict[str, Any]], Any],
    freeze_list: Callable[[list[Any]], Any],
    max_values: int,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Any:
  """Returns a structural copy of a JSON value, built by the domain walker.

  The same walk `canonicalize` validates with, in its copying mode: the
  same exact-type rules, number range and depth limit; strings, numbers,
  booleans and None are shared (they are immutable), every dict and list is
  copied and handed to `freeze_dict` or `freeze_list`, children first.
  Floats keep their type. Used by `facades.snapshot`.

  Args:
    value: A value in the JSON domain.
    freeze_dict: Returns a new container holding a dict's items; the dict
      may be the caller's own, so it must be copied, not kept.
    freeze_list: Returns a new container holding a list's items, likewise.
    max_values: Largest accepted number of values, counting every
      container, member and item (the root is one).
    max_depth: Deepest accepted container nesting, at most
      `MAX_DEPTH_CEILING`.

  Returns:
    The copy.

  Raises:
    CanonicalJsonError: As `canonicalize`, except that `TOO_LARGE` means
      more than `max_values` values.
    ValueError: If a limit is invalid.
  """
  _check_limits(max_values, max_depth)
  copy, _, _ = _prepass(
      value,
      max_depth,
      None,
      freeze=(freeze_dict, freeze_list),
      max_values=max_values,
  )
  return copy


def _header(purpose: Purpose) -> bytes:
  return f'{ENVELOPE_FORMAT} {purpose.value}\n'.encode('ascii')


def envelope(
    purpose: PurposeLike,
    value: object,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> bytes:
  """Returns the purpose-tagged envelope of a JSON value.

  The envelope is `adk-canonical-json/v1 <purpose>\\n` followed by the
  canonical bytes of `value`; the limits apply to the canonical bytes.

  Args:
    purpose: What the value is for.
    value: A value in the JSON domain.
    max_bytes: Largest accepted length of the canonical value bytes.
    max_depth: Deepest accepted container nesting.

  Returns:
    The envelope bytes.

  Raises:
    CanonicalJsonError: As `canonicalize`.
    ValueError: If `purpose` or a limit is invalid.
  """
  tag = _purpose(purpose)
  if tag is None:
    raise ValueError('an envelope needs a purpose')
  body = canonicalize(
      value, purpose=tag, max_bytes=max_bytes, max_depth=max_depth
  )
  return _header(tag) + body


def envelope_digest(
    purpose: PurposeLike,
    value: object,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> str:
  """Returns `sha256:<hex>` of the purpose-tagged envelope of a value.

  Args:
    purpose: What the value is for.
    value: A value in the JSON domain.
    max_bytes: Largest accepted length of the canonical value bytes.
    max_depth: Deepest accepted container nesting.

  Raises:
    CanonicalJsonError: As `canonicalize`.
    ValueError: If `purpose` or a limit is invalid.
  """
  data = envelope(purpose, value, max_bytes=max_bytes, max_depth=max_depth)
  return 'sha256:' + hashlib.sha256(data).hexdigest()


def open_envelope(purpose: PurposeLike, data: bytes) -> bytes:
  """Returns the canonical value bytes of an envelope of `purpose`.

  Only the header is checked; the value bytes are returned as stored.

  Args:
    purpose: The purpose the caller expects.
    data: Envelope bytes.

  Returns:
    The canonical value bytes after the header.

  Raises:
    CanonicalJsonError: `ENVELOPE_MISMATCH` if `data` is not an envelope
      of `purpose` (another purpose, another format, or no header).
    ValueError: If `purpose` is invalid.
  """
  tag = _purpose(purpose)
  if tag is None:
    raise ValueError('an envelope needs a purpose')
  header = _header(tag)
  if not data.startswith(header):
    found = data.partition(b'\n')[0][:80].decode('ascii', 'replace')
    raise CanonicalJsonError(
        CanonicalJsonReason.ENVELOPE_MISMATCH,
        f'expected a {tag.value} envelope, found header {found!r}',
        tag,
    )
  return data[len(header) :]
