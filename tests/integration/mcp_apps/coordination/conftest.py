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

"""Fixtures of the Runner coordination tests: session services and a
bound (or unbound) stack over the stdio conformance server.

Helpers the tests call directly are in coordination_support.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
import contextlib
from pathlib import Path
from typing import Any

from coordination_support import TOOL
from google.adk.mcp_apps.coordination.coordinator import session_coordinator
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.tools.mcp_tool.mcp_session_manager import StdioConnectionParams
import pytest
from sealing_support import bound_stack
from sealing_support import BoundStack

SERVER_TIMEOUT = 30.0


@pytest.fixture(params=("in_memory",))
async def session_service(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Any]:
  """The in-memory Session service; a test widens it to the database one
  (SQLite file) with an indirect `session_service` parametrization."""
  if request.param == "in_memory":
    service: Any = InMemorySessionService()
  else:
    service = DatabaseSessionService(
        db_url=f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}"
    )
  yield service
  close = getattr(service, "close", None)
  if close is not None:
    await close()


@pytest.fixture
def stack(
    session_service: Any, mcp_apps: Any
) -> Callable[..., contextlib.AbstractAsyncContextManager[BoundStack]]:
  """Factory: a started registry and Runner over the stdio conformance
  server whose scripted model calls `whoami` once per turn, then answers.

  Keyword arguments go to `bound_stack` (`bind=False`, `plugins`,
  `agent_fields`).
  """

  @contextlib.asynccontextmanager
  async def start(**kwargs: Any) -> AsyncIterator[BoundStack]:
    params = StdioConnectionParams(
        server_params=mcp_apps.stdio_parameters(), timeout=SERVER_TIMEOUT
    )
    async with bound_stack(
        params, session_service=session_service, **kwargs
    ) as st:
      st.llm.steps = [[(TOOL, {})]]
      yield st
    # Nothing a test started may stay queued or owned after it.
    assert not session_coordinator()._owners  # pylint: disable=protected-access
    assert not session_coordinator()._waiters  # pylint: disable=protected-access

  return start
