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

"""Fixtures of the batch admission tests: servers, session services.

Helpers the tests call directly are in batch_support.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from batch_support import Served
from binding_support import conformance_connection
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.in_memory_session_service import InMemorySessionService
import pytest


@pytest.fixture(params=("stdio",))
def transport(request: pytest.FixtureRequest) -> str:
  """The conformance server's transport (a test widens it with an indirect
  `transport` parametrization)."""
  value: str = request.param
  return value


@pytest.fixture
def serve(
    transport: str, start_server: Any, mcp_apps: Any, tmp_path: Path
) -> Callable[..., Served]:
  """Factory: a conformance server on `transport`, with a request log."""

  def start(**options: Any) -> Served:
    log = tmp_path / f"requests-{len(list(tmp_path.iterdir()))}.jsonl"
    options = {"request_log_file": str(log), **options}
    params = conformance_connection(transport, options, mcp_apps, start_server)
    return Served(params, log)

  return start


@pytest.fixture(params=("in_memory", "database"))
async def session_service(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Any:
  """The in-memory service and the database service (SQLite file)."""
  service: BaseSessionService
  if request.param == "in_memory":
    service = InMemorySessionService()
  else:
    service = DatabaseSessionService(
        db_url=f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}"
    )
  yield service
  close = getattr(service, "close", None)
  if close is not None:
    await close()
