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

"""The database service's two storage schemas keep the series' Event
fields (`sealed_result_refs`, `audience`, `invocation_origin`, `emitter`),
and pristine google-adk 2.13.0 still reads the rows the patched service
writes (run in a subprocess on the pristine tree, as the differential
harness runs it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

from differential import EXTRA_PATHS
from differential import REPO_ROOT
from differential import trees
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.mcp_apps.descriptor.sealed_reference import SealedResultReference
from google.adk.mcp_apps.event_policy.provenance import admitted
from google.adk.mcp_apps.event_policy.provenance import APP_OPERATION
from google.adk.mcp_apps.event_policy.provenance import USER_TURN
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.schemas.v0 import Base as BaseV0
import pytest
import sqlalchemy
from sqlalchemy.ext.asyncio import create_async_engine

APP = "schema_app"
USER = "user-1"


def _sealed_event(fin: Any) -> Event:
  """An audit Event with an Event-level sealed reference and custom
  metadata of its own."""
  return fin.response_event(
      "inv-1",
      "fc-1",
      actions=EventActions(state_delta={"k": 1}),
      custom_metadata={"note": "kept"},
      sealed_result_refs={"fc-1": SealedResultReference(record_id="rec-1")},
  )


def _url(kind: str, tmp_path: Any, request: pytest.FixtureRequest) -> str:
  if kind == "sqlite":
    return f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}"
  return request.getfixturevalue("pg_server").create_database()


async def _create_v0_tables(url: str) -> None:
  """Makes `url` a legacy (v0) database: its tables, no schema metadata."""
  engine = create_async_engine(url)
  try:
    async with engine.begin() as conn:
      await conn.run_sync(BaseV0.metadata.create_all)
  finally:
    await engine.dispose()


async def _raw(url: str, column: str, session_id: str) -> Any:
  engine = create_async_engine(url)
  try:
    async with engine.connect() as conn:
      value = (
          await conn.execute(
              sqlalchemy.text(
                  f"SELECT {column} FROM events WHERE session_id=:sid"
              ),
              {"sid": session_id},
          )
      ).scalar_one()
  finally:
    await engine.dispose()
  return json.loads(value) if isinstance(value, str) else value


async def _write(url: str, fin: Any) -> tuple[str, Event]:
  service = DatabaseSessionService(url)
  try:
    session = await service.create_session(app_name=APP, user_id=USER)
    event = _sealed_event(fin)
    with admitted(APP_OPERATION):
      await service.append_event(session, event)
  finally:
    await service.close()
  return session.id, event


async def _reread(url: str, session_id: str) -> Event:
  service = DatabaseSessionService(url)
  try:
    session = await service.get_session(
        app_name=APP, user_id=USER, session_id=session_id
    )
  finally:
    await service.close()
  assert session is not None
  (event,) = session.events
  return event


def _assert_series_fields(event: Event) -> None:
  assert (event.audience, event.invocation_origin, event.emitter) == (
      "app_audit",
      "mcp_app",
      "app",
  )
  assert event.sealed_result_refs == {
      "fc-1": SealedResultReference(record_id="rec-1")
  }
  assert event.custom_metadata == {"note": "kept"}


KINDS = ("sqlite", "postgresql")


@pytest.mark.parametrize("kind", KINDS)
async def test_v1_schema_keeps_the_series_event_fields(
    kind: str, tmp_path: Any, request: pytest.FixtureRequest, fin: Any
):
  url = _url(kind, tmp_path, request)

  session_id, _ = await _write(url, fin)

  event_data = await _raw(url, "event_data", session_id)
  assert event_data["audience"] == "app_audit"
  assert event_data["sealed_result_refs"]["fc-1"]["record_id"] == "rec-1"
  _assert_series_fields(await _reread(url, session_id))


@pytest.mark.parametrize("kind", KINDS)
async def test_v0_schema_keeps_the_series_event_fields(
    kind: str, tmp_path: Any, request: pytest.FixtureRequest, fin: Any
):
  url = _url(kind, tmp_path, request)
  await _create_v0_tables(url)

  session_id, _ = await _write(url, fin)

  # The legacy layout has no column for them: a reserved custom_metadata
  # key holds them, and the service's reader takes it out again.
  custom_metadata = await _raw(url, "custom_metadata", session_id)
  assert custom_metadata["note"] == "kept"
  assert custom_metadata["_adk_event_fields"]["emitter"] == "app"
  assert await _raw(url, "actions", session_id) is not None
  _assert_series_fields(await _reread(url, session_id))


_PRISTINE_READER = textwrap.dedent("""
    import asyncio, json, sys
    import google.adk
    from google.adk.sessions.database_session_service import (
        DatabaseSessionService,
    )

    async def main(url, session_id):
      service = DatabaseSessionService(url)
      session = await service.get_session(
          app_name=%r, user_id=%r, session_id=session_id
      )
      await service.close()
      print(json.dumps({
          "adk_file": google.adk.__file__,
          "events": [
              e.model_dump(mode="json", exclude_none=True)
              for e in session.events
          ],
      }))

    asyncio.run(main(sys.argv[1], sys.argv[2]))
""") % (APP, USER)


@pytest.mark.parametrize("schema", ("v0", "v1"))
async def test_pristine_reader_reads_rows_the_patched_service_wrote(
    schema: str, tmp_path: Any, fin: Any
):
  found = trees()
  if found.pristine is None:
    pytest.skip(found.reason)
  url = f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}"
  if schema == "v0":
    await _create_v0_tables(url)
  session_id, sent = await _write(url, fin)

  done = subprocess.run(
      [sys.executable, "-c", _PRISTINE_READER, url, session_id],
      cwd=REPO_ROOT,
      env={
          **os.environ,
          "PYTHONPATH": os.pathsep.join(
              str(p) for p in (found.pristine, *EXTRA_PATHS)
          ),
      },
      capture_output=True,
      text=True,
      timeout=120,
      check=False,
  )

  assert done.returncode == 0, done.stderr[-2000:]
  output = json.loads(done.stdout.strip().splitlines()[-1])
  assert output["adk_file"].startswith(str(found.pristine))
  (event,) = output["events"]
  assert event["id"] == sent.id
  assert event["content"] == sent.content.model_dump(
      mode="json", exclude_none=True
  )
  assert event["actions"]["state_delta"] == {"k": 1}
  # 2.13.0 has none of the series' fields: it drops them on read.
  assert not {"audience", "invocation_origin", "emitter"} & set(event)
  assert "sealed_result_refs" not in event
  if schema == "v1":
    assert event["custom_metadata"] == {"note": "kept"}
  else:
    # The legacy layout's reserved key is visible to 2.13.0, beside the
    # caller's own metadata (docs/decisions/issue18-a.md).
    assert event["custom_metadata"]["note"] == "kept"
    assert set(event["custom_metadata"]) == {"note", "_adk_event_fields"}


@pytest.mark.conformance("P3-AUD-05")
async def test_v0_reserved_key_cannot_smuggle_protected_fields(tmp_path: Any):
  url = f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}"
  await _create_v0_tables(url)
  service = DatabaseSessionService(url)
  try:
    session = await service.create_session(app_name=APP, user_id=USER)
    smuggler = Event(
        invocation_id="inv-1",
        author="user",
        custom_metadata={
            "note": "kept",
            "_adk_event_fields": {
                "audience": "app_audit",
                "emitter": "host",
                "sealed_result_refs": {"fc-x": {"record_id": "rec-x"}},
            },
        },
    )
    with admitted(USER_TURN):
      await service.append_event(session, smuggler)
  finally:
    await service.close()

  event = await _reread(url, session.id)
  assert (event.audience, event.invocation_origin, event.emitter) == (
      None,
      "user",
      None,
  )
  assert event.sealed_result_refs is None
  assert event.custom_metadata == {"note": "kept"}
