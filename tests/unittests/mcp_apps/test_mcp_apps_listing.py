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

"""`list_all_tools` takes a page as any `list_tools()` returns it.

Before the series, `McpToolset.get_tools()` read `.tools` of whatever the
session's `list_tools()` returned, and upstream's own tests hand it plain
stand-ins: objects with only a `tools` list, or a `MagicMock` whose every
attribute exists. The bounded listing must accept those too: it measures a
page's bytes only when the page serializes, reads the cursor under either
SDK's name, and ends the listing at anything but a non-empty string.
"""

from __future__ import annotations

from typing import Any
from unittest import mock

from google.adk.mcp_apps.catalog.listing import list_all_tools
from google.adk.mcp_apps.catalog.listing import ToolListingBounds
from google.adk.mcp_apps.catalog.listing import ToolListingError
from google.adk.mcp_apps.catalog.listing import ToolListingReason
from mcp import types
import pytest


class _Page:
  """A page that is not an SDK model: only `tools`, and maybe a cursor."""

  def __init__(self, tools: list[str], **cursor: Any) -> None:
    self.tools = tools
    self.__dict__.update(cursor)


class _Session:
  """Serves `pages` in order and records how each was asked for."""

  def __init__(self, *pages: Any) -> None:
    self.pages = list(pages)
    self.requests: list[dict[str, Any]] = []

  async def list_tools(self, **kwargs: Any) -> Any:
    self.requests.append(kwargs)
    return self.pages.pop(0)


def _cursors(session: _Session) -> list[str | None]:
  return [
      r['params'].cursor if 'params' in r else None for r in session.requests
  ]


async def test_a_page_without_a_cursor_is_the_whole_listing() -> None:
  session = _Session(_Page(['a', 'b']))

  assert await list_all_tools(session) == ['a', 'b']
  assert session.requests == [{}]  # Exactly the request ADK always sent.


@pytest.mark.parametrize(
    'cursor',
    [None, '', 0, 7, ['c'], mock.sentinel.cursor],
    ids=['none', 'empty', 'zero', 'int', 'list', 'object'],
)
@pytest.mark.parametrize('field', ['next_cursor', 'nextCursor'])
async def test_a_cursor_that_is_not_a_non_empty_string_ends_it(
    field: str, cursor: Any
) -> None:
  session = _Session(_Page(['a'], **{field: cursor}))

  assert await list_all_tools(session) == ['a']
  assert len(session.requests) == 1


async def test_a_magic_mock_page_is_one_page() -> None:
  """Every attribute of a `MagicMock` exists; none is a cursor or a dump."""
  page = mock.MagicMock()
  page.tools = ['a', 'b']
  session = _Session(page)

  assert await list_all_tools(session, ToolListingBounds(max_bytes=1)) == [
      'a',
      'b',
  ]


@pytest.mark.parametrize('field', ['next_cursor', 'nextCursor'])
async def test_either_cursor_name_is_followed(field: str) -> None:
  session = _Session(_Page(['a'], **{field: 'p2'}), _Page(['b']))

  assert await list_all_tools(session) == ['a', 'b']
  assert _cursors(session) == [None, 'p2']


async def test_a_repeated_cursor_still_fails_on_stand_ins() -> None:
  session = _Session(
      _Page(['a'], nextCursor='p2'),
      _Page(['b'], nextCursor='p3'),
      _Page(['c'], nextCursor='p2'),
  )

  with pytest.raises(
      ToolListingError,
      check=lambda e: e.reason is ToolListingReason.REPEATED_CURSOR,
  ):
    await list_all_tools(session)


async def test_sdk_pages_are_still_measured() -> None:
  """A page that serializes counts against `max_bytes`."""
  tool = types.Tool.model_validate(
      {'name': 'padded', 'description': 'x' * 500, 'inputSchema': {}}
  )
  page = types.ListToolsResult.model_validate({'tools': [tool.model_dump()]})
  session = _Session(page)

  with pytest.raises(
      ToolListingError,
      check=lambda e: e.reason is ToolListingReason.BOUND_EXCEEDED,
  ) as exceeded:
    await list_all_tools(session, ToolListingBounds(max_bytes=400))
  assert exceeded.value.bound == 'bytes'
