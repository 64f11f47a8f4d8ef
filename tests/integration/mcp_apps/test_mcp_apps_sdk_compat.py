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

"""PR 1 with no profile bound, on whichever MCP SDK major is installed.

Upstream's `mcp` extra admits `mcp>=1.24,<3`, so a plain `McpToolset` must
list, filter and project on SDK 1.x as on 2.x: every page of a paginating
server (1.x names the cursor `nextCursor`, 2.x `next_cursor`), the same
visibility enforcement, the same model projection of UI results. These
tests use only APIs both majors have (no SDK-2 client, no in-process
fixture server) and no fixture of `conftest.py`, so `make compat-mcp1` runs
them on MCP SDK 1.24 and the newest 1.x; the suite runs them on 2.x.

The conformance server is a real one over stdio, run by
`differential_scenarios.server_python()` (an SDK-2 program, like any server
an agent may talk to). Its `request_log_file` option records every request
it receives, so the pages ADK asked for are read from the server's side.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import differential
import differential_scenarios as ds
import pytest

pytestmark = pytest.mark.integration

PAGED = {"page_size": 5, "generated_tools": 20}
"""About 40 tools in pages of 5."""
APP_ONLY = {"app_followup", "app_followup_handle"}
MALFORMED = {
    "malformed_visibility_not_list",
    "malformed_visibility_non_string",
    "malformed_visibility_unknown",
    "malformed_visibility_empty",
    "malformed_ui_not_object",
}


async def _catalog(options: dict[str, Any]) -> list[str]:
  toolset = ds.conformance_toolset(options)
  try:
    return [tool.name for tool in await toolset.get_tools()]
  finally:
    await toolset.close()


def _requests(log: Path) -> list[dict[str, Any]]:
  return [json.loads(line) for line in log.read_text().splitlines() if line]


async def test_paginated_catalog_lists_every_page(tmp_path: Path) -> None:
  """Every page reaches the model, however this SDK names the cursor."""
  log = tmp_path / "requests.jsonl"
  log.touch()
  paged = await _catalog({**PAGED, "request_log_file": str(log)})
  whole = await _catalog({"generated_tools": 20})

  assert paged == whole
  assert len(paged) > 20
  pages = [r for r in _requests(log) if r["method"] == "tools/list"]
  assert len(pages) >= 8
  assert pages[0]["cursor"] is None
  cursors = [page["cursor"] for page in pages[1:]]
  assert all(cursors) and len(set(cursors)) == len(cursors)


async def test_repeated_cursor_fails_the_catalog_whole() -> None:
  """A server that repeats a cursor yields an error, never a partial list."""
  toolset = ds.conformance_toolset({**PAGED, "repeat_cursor_page": 2})
  try:
    with pytest.raises(ConnectionError) as failed:
      await toolset.get_tools()
  finally:
    await toolset.close()
  cause: BaseException | None = failed.value
  while cause is not None and (
      getattr(getattr(cause, "reason", None), "value", None)
      != "repeated_cursor"
  ):
    cause = cause.__cause__
  assert cause is not None, f"not a repeated cursor: {failed.value!r}"


async def test_app_only_and_malformed_tools_leave_the_model_catalog() -> None:
  """Visibility is enforced on this SDK: only model-visible tools remain."""
  names = set(await _catalog({"malformed_visibility": True}))

  assert {"open_view", "ui_result", "whoami", "progress_then_result"} <= names
  assert not names & APP_ONLY
  assert not names & MALFORMED


async def test_ui_result_is_projected_and_plain_result_kept() -> None:
  """The persisted UI result is the projection; a plain one is untouched."""
  model = ds.RecordingLlm(
      calls=[[
          ["ui_result", {"label": "x"}],
          ["progress_then_result", {"steps": 0}],
      ]]
  )
  _, session, _ = await ds.run_turns(
      ds.make_agent(model, [ds.conformance_toolset()]), ["call both"]
  )

  (event,) = ds.function_response_events(session)
  ui, plain = (r.response for r in event.get_function_responses())
  result_type = {"resultType"} if differential.sdk_has_result_type() else set()
  assert set(ui) == {"content", "isError"} | result_type
  assert "structuredContent" in plain and "resultType" not in plain
  # The View is still offered, exactly as pristine ADK offers it.
  (widget,) = event.actions.render_ui_widgets or []
  assert widget.payload["resource_uri"] == "ui://conformance/view.html"
