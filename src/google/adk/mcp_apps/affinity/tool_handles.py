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

"""Connection-bound tool handles: the model's declarations, pinned.

Under a bound profile a server is listed on two connection classes
(app-safe, callbacked). `classify_two_class` turns both listings into one
catalog of `BoundToolHandle`s, failing closed when the classes disagree;
`verify_declaration` refuses a call whose fresh declaration no longer
matches the one the model saw. Design: docs/design/affinity.md.

Example:

  catalog = classify_two_class(app_safe, callbacked, catalog_generation=gid)
  verify_declaration(catalog.handle('open_view'), fresh_listing)
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import hashlib
import logging
from typing import Any
from typing import Mapping
from typing import Sequence

from ...dependencies._mcp import types
from ..canonical_json import canonicalize
from ..catalog import visibility
from .errors import ConnectionAffinityError

logger = logging.getLogger('google_adk.' + __name__)

UI_SCHEME = 'ui://'
"""The scheme of an MCP Apps UI resource URI."""

FIELD_NAME = 'name'
FIELD_INPUT_SCHEMA = 'inputSchema'
FIELD_OUTPUT_SCHEMA = 'outputSchema'
FIELD_VISIBILITY = 'visibility'
FIELD_RESOURCE_URI = 'resourceUri'

PROJECTION_FIELDS = (
    FIELD_NAME,
    FIELD_INPUT_SCHEMA,
    FIELD_OUTPUT_SCHEMA,
    FIELD_VISIBILITY,
    FIELD_RESOURCE_URI,
)
"""The fields of `comparable_projection`, in the order errors name them."""

_NESTED_RESOURCE_URI = 'nested'
_FLAT_RESOURCE_URI = 'flat'
_FLAT_RESOURCE_URI_KEY = 'ui/resourceUri'

LISTED_TWICE_APP_SAFE = 'listed twice on the app-safe class'
LISTED_TWICE_CALLBACKED = 'listed twice on the callbacked class'
UI_ONLY_ON_CALLBACKED = (
    'UI-associated on the callbacked class but not on the app-safe class'
)
UI_ON_CALLBACKED_ABSENT_APP_SAFE = (
    'UI-associated on the callbacked class and absent from the app-safe class'
)
ONLY_ON_APP_SAFE = 'listed only on the app-safe class'


class ExecutionClass(enum.Enum):
  """The callback profile of a connection class."""

  APP_SAFE = 'app_safe'
  """Advertises the Apps extension; no sampling/elicitation/roots callbacks."""

  CALLBACKED = 'callbacked'
  """Upstream ADK's connection: callbacks, no Apps extension."""


class ToolHandleError(ConnectionAffinityError):
  """Base class of tool-handle errors: the call was not sent.

  Errors compare equal when they are of one type and carry the same
  attributes, so two classifications of the same listings are equal values.

  Attributes:
    tool_name: The tool's native name.
  """

  tool_name: str

  def _identity(self) -> tuple[Any, ...]:
    return (self.tool_name,)

  def __eq__(self, other: object) -> bool:
    if type(other) is not type(self):
      return NotImplemented
    assert isinstance(other, ToolHandleError)
    return self._identity() == other._identity()

  def __hash__(self) -> int:
    return hash((type(self), self._identity()))


class DeclarationMismatchError(ToolHandleError):
  """The fresh declaration of a tool differs from the one the model saw.

  Attributes:
    tool_name: The tool's native name.
    fields: The differing fields of `comparable_projection`, in
      `PROJECTION_FIELDS` order.
    detail: More about the mismatch, or ''.
  """

  def __init__(
      self, tool_name: str, fields: Sequence[str], detail: str = ''
  ) -> None:
    self.tool_name = tool_name
    self.fields = tuple(fields)
    self.detail = detail
    message = (
        f'MCP tool {tool_name!r} no longer matches the declaration shown to'
        f' the model; differing: {", ".join(self.fields)}'
    )
    super().__init__(f'{message} ({detail})' if detail else message)

  def _identity(self) -> tuple[Any, ...]:
    return (self.tool_name, self.fields, self.detail)


class ToolRemovedError(ToolHandleError):
  """The tool is no longer listed on the connection that would run it.

  Attributes:
    tool_name: The tool's native name.
  """

  def __init__(self, tool_name: str) -> None:
    self.tool_name = tool_name
    super().__init__(
        f'MCP tool {tool_name!r} is no longer listed on its execution'
        ' connection'
    )


class ClassDisagreementError(ToolHandleError):
  """The two connection classes cannot agree on where a tool runs.

  Attributes:
    tool_name: The tool's native name.
    detail: Which rule refused it (one of this module's detail constants).
  """

  def __init__(self, tool_name: str, detail: str) -> None:
    self.tool_name = tool_name
    self.detail = detail
    super().__init__(
        f'MCP tool {tool_name!r} was not bound to an execution class: {detail}'
    )

  def _identity(self) -> tuple[Any, ...]:
    return (self.tool_name, self.detail)


def _meta_of(tool: types.Tool) -> Any:
  return getattr(tool, 'meta', None)


def ui_resource_uri(tool: types.Tool) -> str | None:
  """Returns a tool's `ui://` resource URI, or None.

  The rules of `McpTool.mcp_app_resource_uri`: the nested
  `_meta.ui.resourceUri` first, then the deprecated flat
  `_meta["ui/resourceUri"]`; a value counts only if it is a string starting
  with `ui://`.

  Args:
    tool: An SDK `Tool`.

  Returns:
    The URI as declared, or None.
  """
  meta = _meta_of(tool)
  if not meta or not isinstance(meta, dict):
    return None
  ui = meta.get('ui')
  if isinstance(ui, dict):
    uri = ui.get('resourceUri')
    if isinstance(uri, str) and uri.startswith(UI_SCHEME):
      return uri
  uri = meta.get(_FLAT_RESOURCE_URI_KEY)
  if isinstance(uri, str) and uri.startswith(UI_SCHEME):
    return uri
  return None


def is_ui_associated(tool: types.Tool) -> bool:
  """Whether a tool declares a `ui://` resource (nested or flat form)."""
  return ui_resource_uri(tool) is not None


def _normalized_visibility(tool: types.Tool) -> list[str] | str:
  normalized = visibility.tool_visibility(tool)
  if normalized.malformed is not None:
    return f'malformed:{normalized.malformed.name.lower()}'
  return sorted(normalized.callers)


def _resource_metadata(meta: Any) -> dict[str, Any]:
  nested: Any = None
  flat: Any = None
  if isinstance(meta, Mapping):
    ui = meta.get('ui')
    if isinstance(ui, Mapping):
      nested = ui.get('resourceUri')
    flat = meta.get(_FLAT_RESOURCE_URI_KEY)
  return {_NESTED_RESOURCE_URI: nested, _FLAT_RESOURCE_URI: flat}


def comparable_projection(tool: types.Tool) -> dict[str, Any]:
  """Returns what a pre-call re-list compares of a tool declaration.

  The declaration is read as its JSON form (`model_dump(by_alias=True,
  mode='json')`, which names the fields alike on MCP SDK 1.x and 2.x);
  visibility is read through `catalog.visibility`, as every catalog reads it.

  Args:
    tool: An SDK `Tool`.

  Returns:
    A JSON object with the members of `PROJECTION_FIELDS`:

    * `name`: the native name;
    * `inputSchema`, `outputSchema`: as declared (`outputSchema` is null
      when absent);
    * `visibility`: the sorted callers, or `"malformed:<reason>"` with the
      lower-cased `MalformedVisibility` member name;
    * `resourceUri`: `{"nested": ..., "flat": ...}`, the raw values of
      `_meta.ui.resourceUri` and `_meta["ui/resourceUri"]` (null when
      absent), compared raw so any change to either fails closed.
  """
  dumped = tool.model_dump(by_alias=True, mode='json', exclude_none=False)
  return {
      FIELD_NAME: dumped.get('name'),
      FIELD_INPUT_SCHEMA: dumped.get('inputSchema'),
      FIELD_OUTPUT_SCHEMA: dumped.get('outputSchema'),
      FIELD_VISIBILITY: _normalized_visibility(tool),
      FIELD_RESOURCE_URI: _resource_metadata(dumped.get('_meta')),
  }


def _json_equal(a: Any, b: Any) -> bool:
  """Equality of JSON values (numbers by value; booleans are not numbers)."""
  if isinstance(a, bool) or isinstance(b, bool):
    return type(a) is type(b) and a == b
  if isinstance(a, (int, float)) and isinstance(b, (int, float)):
    return a == b
  if isinstance(a, dict) and isinstance(b, dict):
    return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
  if isinstance(a, list) and isinstance(b, list):
    return len(a) == len(b) and all(map(_json_equal, a, b))
  return type(a) is type(b) and bool(a == b)


def differing_fields(
    shown: Mapping[str, Any], fresh: Mapping[str, Any]
) -> tuple[str, ...]:
  """Returns the fields in which two projections differ.

  Args:
    shown: The projection of one declaration.
    fresh: The projection of another.

  Returns:
    The members of `PROJECTION_FIELDS` whose values are not equal JSON
    values, in that order; empty when the projections match.
  """
  return tuple(
      field
      for field in PROJECTION_FIELDS
      if not _json_equal(shown.get(field), fresh.get(field))
  )


@dataclasses.dataclass(frozen=True)
class BoundToolHandle:
  """One model catalog entry: a declaration and where it runs.

  Attributes:
    declaration: The exact raw declaration the model is shown (a private
      copy of the listed `Tool`; do not mutate it).
    catalog_generation: The id of the connection generation the declaration
      was listed on; None for the callbacked class, which has no
      generations.
    callback_class: The callback profile of the listing connection.
    credential_context: An opaque digest of the credentials the listing
      used; never a credential value.
    execution_class: The connection class that runs the tool.
    ui_associated: Whether the declaration has a `ui://` resource.
  """

  declaration: types.Tool
  catalog_generation: str | None
  callback_class: ExecutionClass
  credential_context: str
  execution_class: ExecutionClass
  ui_associated: bool

  @property
  def name(self) -> str:
    """The tool's native name."""
    return self.declaration.name

  @property
  def projection(self) -> dict[str, Any]:
    """`comparable_projection` of the declaration."""
    return comparable_projection(self.declaration)

  @property
  def fingerprint(self) -> str:
    """Hex SHA-256 of the ADK Canonical JSON of `projection`.

    Raises:
      CanonicalJsonError: The declaration is outside the canonical JSON
        domain (for example an integer above 2**53 in a schema).
        Classification and `verify_declaration` never compute it.
    """
    return hashlib.sha256(canonicalize(self.projection)).hexdigest()


@dataclasses.dataclass(frozen=True)
class Divergence:
  """One tool declared differently on the two classes.

  The handle for the tool (`TwoClassCatalog.handle`) says which declaration
  won: the app-safe one for a UI-associated tool, the callbacked one
  otherwise.

  Attributes:
    tool_name: The tool's native name.
    fields: The differing fields of `comparable_projection`.
  """

  tool_name: str
  fields: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class TwoClassCatalog:
  """The outcome of `classify_two_class`; every sequence sorted by name.

  Attributes:
    handles: One handle per bound tool.
    divergences: The bound tools whose two declarations differ.
    refused: The names bound to no class, each with the reason.
  """

  handles: tuple[BoundToolHandle, ...]
  divergences: tuple[Divergence, ...]
  refused: tuple[tuple[str, ClassDisagreementError], ...]

  def handle(self, name: str) -> BoundToolHandle | None:
    """Returns the handle of a native tool name, or None."""
    for bound in self.handles:
      if bound.name == name:
        return bound
    return None


def _by_name(
    tools: Sequence[types.Tool],
) -> tuple[dict[str, types.Tool], set[str]]:
  counts = collections.Counter(tool.name for tool in tools)
  unique = {tool.name: tool for tool in tools if counts[tool.name] == 1}
  return unique, {name for name, count in counts.items() if count > 1}


def classify_two_class(
    app_safe_tools: Sequence[types.Tool],
    callbacked_tools: Sequence[types.Tool],
    *,
    catalog_generation: str | None,
    credential_context: str,
) -> TwoClassCatalog:
  """Binds every listed tool to the connection class that runs it.

  The deterministic two-class algorithm. Per native name, looking only at
  that name's declarations:

  0. A name listed more than once on either class is refused whole
     (`LISTED_TWICE_APP_SAFE`, else `LISTED_TWICE_CALLBACKED`): which of
     the copies the model saw could not be told.
  1. The app-safe listing first. A tool UI-associated there gets an
     `APP_SAFE` handle with the app-safe declaration and
     `catalog_generation`. If the callbacked class lists the name with
     another projection (typically without `_meta.ui`, since a server may
     hide UI metadata from a client without the Apps extension), the
     app-safe declaration still wins: it is the declaration of the class
     that runs the call. The divergence is recorded and logged.
  2. The callbacked listing for the rest. A tool UI-associated on neither
     class and listed on the callbacked class gets a `CALLBACKED` handle
     with the callbacked declaration and no generation, as upstream ADK
     would have listed and run it. If the app-safe class lists it with
     another projection, that divergence is recorded and logged too.
  3. Everything else fails closed, with no handle:

     * UI-associated on the callbacked class but not on the app-safe one
       (`UI_ONLY_ON_CALLBACKED`) or absent from it
       (`UI_ON_CALLBACKED_ABSENT_APP_SAFE`): the class that would render a
       UI does not declare one, so one of the listings is stale or
       inconsistent, and neither is silently preferred;
     * not UI-associated on the app-safe class and absent from the
       callbacked one (`ONLY_ON_APP_SAFE`): the class that would run a
       non-UI tool does not declare it.

  Each refusal is logged once. The output is independent of the order of
  either listing.

  Args:
    app_safe_tools: The complete listing on the app-safe class.
    callbacked_tools: The complete listing on the callbacked class.
    catalog_generation: The id of the app-safe generation the app-safe
      listing was made on.
    credential_context: Opaque digest of the credentials both listings
      used.

  Returns:
    The handles, divergences and refusals, each sorted by name.
  """
  app_safe, app_safe_twice = _by_name(app_safe_tools)
  callbacked, callbacked_twice = _by_name(callbacked_tools)
  names = sorted(
      set(app_safe) | set(callbacked) | app_safe_twice | callbacked_twice
  )
  handles: list[BoundToolHandle] = []
  divergences: list[Divergence] = []
  refused: list[tuple[str, ClassDisagreementError]] = []

  def refuse(name: str, detail: str) -> None:
    logger.warning(
        'MCP tool %r is bound to no connection class: %s.', name, detail
    )
    refused.append((name, ClassDisagreementError(name, detail)))

  def bind(
      chosen: types.Tool,
      other: types.Tool | None,
      execution_class: ExecutionClass,
  ) -> None:
    handles.append(
        BoundToolHandle(
            declaration=chosen.model_copy(deep=True),
            catalog_generation=(
                catalog_generation
                if execution_class is ExecutionClass.APP_SAFE
                else None
            ),
            callback_class=execution_class,
            credential_context=credential_context,
            execution_class=execution_class,
            ui_associated=is_ui_associated(chosen),
        )
    )
    if other is None:
      return
    fields = differing_fields(
        comparable_projection(chosen), comparable_projection(other)
    )
    if fields:
      divergences.append(Divergence(chosen.name, fields))
      logger.warning(
          'MCP tool %r is declared differently on the app-safe and'
          ' callbacked connection classes (differing: %s); the model is'
          ' shown the %s declaration.',
          chosen.name,
          ', '.join(fields),
          execution_class.value,
      )

  for name in names:
    if name in app_safe_twice:
      refuse(name, LISTED_TWICE_APP_SAFE)
      continue
    if name in callbacked_twice:
      refuse(name, LISTED_TWICE_CALLBACKED)
      continue
    safe_tool = app_safe.get(name)
    callbacked_tool = callbacked.get(name)
    if safe_tool is not None and is_ui_associated(safe_tool):
      bind(safe_tool, callbacked_tool, ExecutionClass.APP_SAFE)
    elif callbacked_tool is None:
      refuse(name, ONLY_ON_APP_SAFE)
    elif is_ui_associated(callbacked_tool):
      refuse(
          name,
          UI_ON_CALLBACKED_ABSENT_APP_SAFE
          if safe_tool is None
          else UI_ONLY_ON_CALLBACKED,
      )
    else:
      bind(callbacked_tool, safe_tool, ExecutionClass.CALLBACKED)
  return TwoClassCatalog(tuple(handles), tuple(divergences), tuple(refused))


def verify_declaration(
    handle: BoundToolHandle, fresh_tools: Sequence[types.Tool]
) -> types.Tool:
  """The pre-call re-list check: fails closed unless nothing changed.

  Args:
    handle: The handle the model's call resolved to.
    fresh_tools: A complete listing made just now on the connection that
      would run the call (for a UI-associated tool, the handle's app-safe
      generation; checking that is the caller's part).

  Returns:
    The fresh declaration of the tool.

  Raises:
    ToolRemovedError: The fresh listing does not list the tool.
    DeclarationMismatchError: The fresh listing lists the name twice
      (`fields == ('name',)`), or its declaration differs from the
      handle's; `fields` names exactly the differing fields.
  """
  name = handle.name
  matches = [tool for tool in fresh_tools if tool.name == name]
  if not matches:
    raise ToolRemovedError(name)
  if len(matches) > 1:
    raise DeclarationMismatchError(name, (FIELD_NAME,), 'listed twice')
  fresh = matches[0]
  fields = differing_fields(handle.projection, comparable_projection(fresh))
  if fields:
    raise DeclarationMismatchError(name, fields)
  return fresh
