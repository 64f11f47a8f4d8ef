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

"""Bounded, fully paginated `tools/list`.

Upstream ADK reads only the first `tools/list` page. `list_all_tools` follows
every page within `ToolListingBounds` (pages, items, bytes, time) and
raises `ToolListingError` on any violation, a repeated cursor or a failed
request, so a caller gets the whole catalog or an error, never a partial
one. Importing this module never needs the `mcp` package. Notes:
docs/design/catalog.md.

Example:

  tools = await list_all_tools(session, ToolListingBounds(max_pages=8))
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
from typing import Any
from typing import Optional
from typing import Protocol
from typing import TYPE_CHECKING

from ..errors import McpAppsError

if TYPE_CHECKING:
  from ...dependencies._mcp import types


@dataclasses.dataclass(frozen=True)
class ToolListingBounds:
  """Limits on one complete `tools/list`.

  Attributes:
    max_pages: Most pages followed, the first included.
    max_items: Most tools over all pages.
    max_bytes: Most bytes over all pages, measured as each page's compact
      JSON serialization (the SDK hands over parsed pages, not wire bytes);
      a page that is not a pydantic model is not counted.
    max_seconds: Most wall-clock time for the whole listing.
  """

  max_pages: int = 64
  max_items: int = 4096
  max_bytes: int = 8 * 1024 * 1024
  max_seconds: float = 30.0

  def __post_init__(self) -> None:
    for field in dataclasses.fields(self):
      if getattr(self, field.name) <= 0:
        raise ValueError(f'ToolListingBounds.{field.name} must be positive')


DEFAULT_BOUNDS = ToolListingBounds()


class ToolListingReason(enum.Enum):
  """Why a complete `tools/list` could not be obtained."""

  BOUND_EXCEEDED = 'bound_exceeded'
  """The listing went past one of its `ToolListingBounds`."""

  REPEATED_CURSOR = 'repeated_cursor'
  """The server returned a `nextCursor` it had already returned."""

  REQUEST_FAILED = 'request_failed'
  """The server or the transport failed a `tools/list` request."""


class ToolListingError(McpAppsError):
  """A complete `tools/list` could not be obtained; nothing was returned.

  Attributes:
    reason: Why.
    bound: Which bound was exceeded (`pages`, `items`, `bytes` or
      `seconds`), for `BOUND_EXCEEDED`; else None.
    limit: The configured limit of that bound, for `BOUND_EXCEEDED`.
    page: The page that repeated a cursor, for `REPEATED_CURSOR`.
  """

  def __init__(
      self,
      reason: ToolListingReason,
      message: str,
      *,
      bound: Optional[str] = None,
      limit: Optional[float] = None,
      page: Optional[int] = None,
  ):
    self.reason = reason
    self.bound = bound
    self.limit = limit
    self.page = page
    super().__init__(message)


def _bound_exceeded(bound: str, limit: float) -> ToolListingError:
  return ToolListingError(
      ToolListingReason.BOUND_EXCEEDED,
      f'tools/list exceeded its {bound} bound ({limit})',
      bound=bound,
      limit=limit,
  )


class ToolLister(Protocol):
  """What listing needs of a session: the SDK `ClientSession` has it."""

  async def list_tools(
      self, *, params: types.PaginatedRequestParams | None = None
  ) -> types.ListToolsResult:
    ...


def _page_bytes(page: Any) -> int:
  dump = getattr(page, 'model_dump_json', None)
  text = dump(by_alias=True, exclude_none=True) if callable(dump) else None
  if not isinstance(text, str):
    return 0  # Not an SDK model (a stand-in): nothing to measure.
  return len(text.encode('utf-8'))


def _next_cursor(page: Any) -> str | None:
  """The page's cursor under either SDK's field name; None ends the listing."""
  for name in ('next_cursor', 'nextCursor'):
    cursor = getattr(page, name, None)
    if isinstance(cursor, str) and cursor:
      return cursor
  return None


async def _list_page(session: ToolLister, cursor: str | None) -> Any:
  if cursor is None:
    # The first request is exactly the one ADK has always sent.
    return await session.list_tools()
  from ...dependencies._mcp import types  # pylint: disable=g-import-not-at-top

  return await session.list_tools(
      params=types.PaginatedRequestParams(cursor=cursor)
  )


async def _list_pages(
    session: ToolLister, bounds: ToolListingBounds
) -> list[types.Tool]:
  tools: list[types.Tool] = []
  seen_cursors: set[str] = set()
  total_bytes = 0
  cursor: str | None = None
  for page_number in range(1, bounds.max_pages + 1):
    try:
      page = await _list_page(session, cursor)
    except asyncio.CancelledError:
      raise
    except Exception as e:
      raise ToolListingError(
          ToolListingReason.REQUEST_FAILED,
          f'tools/list page {page_number} failed: {type(e).__name__}: {e}',
      ) from e
    total_bytes += _page_bytes(page)
    if total_bytes > bounds.max_bytes:
      raise _bound_exceeded('bytes', bounds.max_bytes)
    tools.extend(page.tools)
    if len(tools) > bounds.max_items:
      raise _bound_exceeded('items', bounds.max_items)
    cursor = _next_cursor(page)
    if cursor is None:
      return tools
    if cursor in seen_cursors:
      raise ToolListingError(
          ToolListingReason.REPEATED_CURSOR,
          f'tools/list page {page_number} repeated an earlier cursor; stopped',
          page=page_number,
      )
    seen_cursors.add(cursor)
  raise _bound_exceeded('pages', bounds.max_pages)


async def list_all_tools(
    session: Any, bounds: ToolListingBounds = DEFAULT_BOUNDS
) -> list[types.Tool]:
  """Lists every tool of a server, following `nextCursor` to the end.

  Args:
    session: An initialized MCP `ClientSession` (anything with `list_tools`).
    bounds: The limits for this listing.

  Returns:
    Every tool, in the order the server listed them.

  Raises:
    ToolListingError: A bound was exceeded (`BOUND_EXCEEDED`), the server
      repeated a cursor (`REPEATED_CURSOR`), or a request failed
      (`REQUEST_FAILED`: a JSON-RPC or transport error).
  """
  try:
    async with asyncio.timeout(bounds.max_seconds):
      return await _list_pages(session, bounds)
  except TimeoutError as e:
    raise _bound_exceeded('seconds', bounds.max_seconds) from e
