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


"""The closed deep-read-only snapshot every facade hands out.

`snapshot` copies a JSON value (exactly `str`, `bool`, `None`, `int` and
`float` in the I-JSON range, `list`, and `dict` with `str` keys) into an
independent value whose dicts are `FrozenDict`s and lists `FrozenList`s,
and refuses everything else with a `FacadeError`. The walk is the canonical
JSON walker's (`canonical_json.transcribe`); no `copy` hook ever runs. The
copy compares equal to the source and `json.dumps` writes it as the source.
Design notes: docs/design/snapshot.md.

Example:

  state = snapshot({'cart': [{'sku': 'A1', 'qty': 2}]})
  state['cart'][0]['qty'] = 3  # FacadeError (READ_ONLY)
  plain = thaw(state)          # independent plain dicts and lists
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Mapping
import contextlib
import contextvars
import decimal
import numbers
from typing import Any
from typing import NoReturn
from typing import Optional

from .. import canonical_json
from ...sessions.state import State
from ..canonical_json import CanonicalJsonError
from ..canonical_json import CanonicalJsonReason
from .errors import FacadeError
from .errors import FacadeErrorReason

__all__ = [
    'DEFAULT_MAX_DEPTH',
    'DEFAULT_MAX_VALUES',
    'FrozenDict',
    'FrozenList',
    'plain_dict',
    'snapshot',
    'state_snapshot',
    'thaw',
    'watch_writes',
]

DEFAULT_MAX_VALUES = 1_000_000
"""Default limit on the values one snapshot holds (containers, members and
items, the root included)."""

DEFAULT_MAX_DEPTH = canonical_json.DEFAULT_MAX_DEPTH
"""Default limit on container nesting, as canonical JSON's."""


_writes: contextvars.ContextVar[Optional[list[str]]] = contextvars.ContextVar(
    'adk_mcp_apps_snapshot_writes', default=None
)


@contextlib.contextmanager
def watch_writes() -> Iterator[list[str]]:
  """Records every refused write to any snapshot made inside the block.

  The list holds the refused containers' type names, in order, even when
  the caller of the write caught the `FacadeError`.
  """
  attempts: list[str] = []
  token = _writes.set(attempts)
  try:
    yield attempts
  finally:
    _writes.reset(token)


def _refuse(self: object, *args: Any, **kwargs: Any) -> NoReturn:
  del args, kwargs
  attempts = _writes.get()
  if attempts is not None:
    attempts.append(type(self).__name__)
  raise FacadeError(
      FacadeErrorReason.READ_ONLY,
      f'a snapshot {type(self).__name__} cannot be changed',
  )


class FrozenDict(dict):  # type: ignore[type-arg]
  """A snapshot's read-only dict.

  A `dict` subclass, so it compares equal to a plain dict and `json.dumps`
  writes it as one; every mutating method raises `FacadeError`
  (`READ_ONLY`). `copy()` and `|` return plain, mutable dicts. Built only
  by `snapshot`; calling `dict`'s own methods on it unbound bypasses the
  guard (Python cannot stop that) and changes only this copy.
  """

  __slots__ = ()

  __init__ = _refuse
  __setitem__ = _refuse
  __delitem__ = _refuse
  __ior__ = _refuse
  clear = _refuse
  pop = _refuse
  popitem = _refuse
  setdefault = _refuse
  update = _refuse

  def __reduce__(self) -> tuple[Any, ...]:
    return (_frozen_dict, (dict(self),))


class FrozenList(list):  # type: ignore[type-arg]
  """A snapshot's read-only list.

  A `list` subclass, so it compares equal to a plain list and `json.dumps`
  writes it as one; every mutating method raises `FacadeError`
  (`READ_ONLY`). `copy()`, slices and `+` return plain, mutable lists.
  Built only by `snapshot`.
  """

  __slots__ = ()

  __init__ = _refuse
  __setitem__ = _refuse
  __delitem__ = _refuse
  __iadd__ = _refuse
  __imul__ = _refuse
  append = _refuse
  clear = _refuse
  extend = _refuse
  insert = _refuse
  pop = _refuse
  remove = _refuse
  reverse = _refuse
  sort = _refuse

  def __reduce__(self) -> tuple[Any, ...]:
    return (_frozen_list, (list(self),))


def _frozen_dict(source: dict[str, Any]) -> FrozenDict:
  """A new `FrozenDict` holding `source`'s items (`source` is not kept)."""
  frozen: FrozenDict = dict.__new__(FrozenDict)
  dict.update(frozen, source)
  return frozen


def _frozen_list(source: list[Any]) -> FrozenList:
  """A new `FrozenList` holding `source`'s items (`source` is not kept)."""
  frozen: FrozenList = list.__new__(FrozenList)
  list.extend(frozen, source)
  return frozen


_NUMERIC_BASES = (int, float, complex, numbers.Number, decimal.Decimal)


def _has_cycle(root: object) -> bool:
  """Whether a dict or list contains itself, at any depth.

  An iterative depth-first walk that enters only exact dicts and lists
  (never a hook of an arbitrary object), keeps the containers on the
  current path and visits a shared container once. Run on a refusal
  only, so the copying walk stays lean.
  """
  on_path: set[int] = set()
  done: set[int] = set()  # Shared sub-values are explored once.
  stack: list[tuple[Any, bool]] = [(root, True)]
  while stack:
    node, entering = stack.pop()
    if not entering:
      on_path.discard(id(node))
      done.add(id(node))
      continue
    kind = type(node)
    if (kind is not dict and kind is not list) or id(node) in done:
      continue
    if id(node) in on_path:
      return True
    on_path.add(id(node))
    stack.append((node, False))
    children = node.values() if kind is dict else node
    stack.extend((child, True) for child in children)
  return False


def _reason(error: CanonicalJsonError, root: object) -> FacadeErrorReason:
  """Maps the walker's refusal to the facade reason that names it."""
  reason = error.reason
  if reason is CanonicalJsonReason.UNSUPPORTED_TYPE:
    if error.member_name:
      return FacadeErrorReason.NON_STRING_KEY
    kind = error.offending_type
    if kind is not None and issubclass(kind, tuple):
      return FacadeErrorReason.TUPLE
    if kind is not None and issubclass(kind, _NUMERIC_BASES):
      return FacadeErrorReason.NUMERIC_SUBCLASS
    return FacadeErrorReason.UNSUPPORTED_TYPE
  if reason is CanonicalJsonReason.TOO_DEEP:
    # A cycle always breaks the depth limit; tell the two apart after the
    # refusal, so the copying walk keeps no identity set.
    if _has_cycle(root):
      return FacadeErrorReason.CYCLE
    return FacadeErrorReason.TOO_DEEP
  if reason is CanonicalJsonReason.NON_FINITE:
    return FacadeErrorReason.NON_FINITE
  if reason is CanonicalJsonReason.INTEGER_OUT_OF_RANGE:
    return FacadeErrorReason.OUT_OF_RANGE
  if reason is CanonicalJsonReason.TOO_LARGE:
    return FacadeErrorReason.TOO_LARGE
  return FacadeErrorReason.UNSUPPORTED_TYPE


def snapshot(
    value: object,
    *,
    max_values: int = DEFAULT_MAX_VALUES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Any:
  """Returns an independent, deep-read-only copy of a JSON value.

  Args:
    value: Exactly `str`, `bool`, `None`, an `int` with magnitude at most
      2**53 - 1, a finite `float`, or a `list` or `str`-keyed `dict` of
      such values, nested at most `max_depth` deep.
    max_values: Largest accepted number of values (every container, member
      and item, the root included). Strings are shared, not copied, so the
      count bounds the snapshot's time and memory.
    max_depth: Deepest accepted container nesting (the root container is
      depth 1), at most `canonical_json.MAX_DEPTH_CEILING`.

  Returns:
    The copy: scalars as they are (immutable, shared), dicts as
    `FrozenDict` and lists as `FrozenList`, each new. Shared sub-values of
    the source (one list under two keys) are copied once per occurrence.

  Raises:
    FacadeError: Its `reason` names the first value outside the domain or
      the limit broken; its `path` locates it.
    ValueError: If a limit is invalid.
  """
  try:
    return canonical_json.transcribe(
        value,
        freeze_dict=_frozen_dict,
        freeze_list=_frozen_list,
        max_values=max_values,
        max_depth=max_depth,
    )
  except CanonicalJsonError as e:
    reason = _reason(e, value)
    detail = e.detail
    if reason is FacadeErrorReason.CYCLE:
      detail = 'a container contains itself'
    raise FacadeError(
        reason,
        f'no snapshot: {detail}',
        path=e.path,
        limit=e.limit,
    ) from None


def plain_dict(value: Optional[Mapping[str, Any]]) -> dict[str, Any]:
  """An exact `dict` of a mapping, for `snapshot` (None is empty).

  A snapshot is thawed (it is acyclic by construction); any other mapping
  is listed key by key, so no copy hook of it ever runs.
  """
  if value is None:
    return {}
  if type(value) is dict:  # pylint: disable=unidiomatic-typecheck
    return value
  if isinstance(value, dict):
    plain: dict[str, Any] = thaw(value)
    return plain
  return {key: value[key] for key in value}


def state_snapshot(
    state: Optional[Mapping[str, Any]],
    *,
    max_values: int = DEFAULT_MAX_VALUES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Any:
  """Returns the `snapshot` of a Session's state as the Session stores it.

  Keys under ADK's `temp:` prefix are left out. They are invocation-scoped
  and never persisted, and ADK's auth flow keeps the credential it
  exchanged there (`temp:<credential_key>`); an app path runs outside the
  invocation, so what it may read is the stored state, and credentials
  stay on the auth-config path.

  Args:
    state: The live state: a `dict`, an ADK `State`, a snapshot, or None
      (empty).
    max_values: As for `snapshot`.
    max_depth: As for `snapshot`.

  Returns:
    A `FrozenDict`.

  Raises:
    FacadeError: As for `snapshot`.
  """
  if state is None:
    items: Mapping[Any, Any] = {}
  elif isinstance(state, State):
    items = state.to_dict()
  else:
    items = state
  stored = {
      key: thaw(value) if isinstance(value, (FrozenDict, FrozenList)) else value
      for key, value in items.items()
      if not (isinstance(key, str) and key.startswith(State.TEMP_PREFIX))
  }
  return snapshot(stored, max_values=max_values, max_depth=max_depth)


def thaw(value: Any) -> Any:
  """Returns plain, mutable, independent dicts and lists for a snapshot.

  Args:
    value: A value returned by `snapshot` (or any part of one).

  Returns:
    The same value built from `dict` and `list`; scalars are shared.
  """
  if isinstance(value, dict):
    return {key: thaw(item) for key, item in value.items()}
  if isinstance(value, list):
    return [thaw(item) for item in value]
  return value
