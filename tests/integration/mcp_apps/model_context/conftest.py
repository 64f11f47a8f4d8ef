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

"""The `backend` fixture of the model-context tests (helpers:
`model_context_support`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
import pathlib
from typing import Any

from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from model_context_support import Backend
import pytest


@pytest.fixture(params=["memory", "sqlite", "database"])
async def backend(
    request: pytest.FixtureRequest, tmp_path: pathlib.Path
) -> AsyncIterator[Backend]:
  """Each session service the content and routing cases run on."""
  name = request.param
  if name == "memory":
    yield Backend(name, InMemorySessionService())
    return
  if name == "sqlite":
    service: Any = SqliteSessionService(db_path=str(tmp_path / "sessions.db"))
  else:
    service = DatabaseSessionService(
        f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}"
    )
  try:
    yield Backend(name, service)
  finally:
    await service.close()
