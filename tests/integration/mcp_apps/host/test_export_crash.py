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


"""Crash points of an export (P5-EXP-30..33): a killed process.

A child process exports a sealed result a real turn produced and kills
itself (`os._exit`) at one `ExportPoint`; the test then reopens the durable
`SqlExportAuditStore` and reads the record state, and checks the child
wrote no byte of the body.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import subprocess
import sys
from typing import Any

from exec_ownership_support import stage
import export_support
from export_support import audit_url
from export_support import crash_profile
from google.adk.mcp_apps.canonical_json import canonicalize
from google.adk.mcp_apps.stores.sql_export_audit_store import SqlExportAuditStore
import pytest
from sealing_support import close_profile
from sealing_support import OracleResolver

pytestmark = pytest.mark.integration


def _statuses(records: Any) -> list[str]:
  return [r.status.value for r in records]


@pytest.mark.parametrize(
    ("kill_at", "expected"),
    [
        pytest.param(
            "loaded",
            [],
            marks=pytest.mark.conformance("P5-EXP-30"),
            id="before_audit_append",
        ),
        pytest.param(
            "audited",
            ["authorized"],
            marks=pytest.mark.conformance("P5-EXP-31", "P5-EAUD-02"),
            id="after_audit_append",
        ),
        pytest.param(
            "rechecked",
            ["authorized"],
            marks=pytest.mark.conformance("P5-EXP-32"),
            id="before_response_release",
        ),
        pytest.param(
            "released",
            ["authorized", "released"],
            marks=pytest.mark.conformance("P5-EXP-33"),
            id="after_response_release",
        ),
        pytest.param(
            "never",
            ["authorized", "released"],
            id="no_crash",
        ),
    ],
)
async def test_a_killed_export_leaves_the_expected_record_and_no_bytes(
    mcp_apps: Any, tmp_path: Path, kill_at: str, expected: list[str]
) -> None:
  profile = await crash_profile(tmp_path)
  fields = {
      "session_authorizer": profile.session_authorizer,
      "export_audit_store": profile.export_audit_store,
  }
  async with stage(mcp_apps, tmp_path, "sqlite", profile_fields=fields) as s:
    (event,) = [
        e
        for e in s.session.events
        if e.actions is not None and e.actions.render_ui_widgets
    ]
    call_id = event.actions.render_ui_widgets[0].id
    sealed = await OracleResolver(s.st.profile, s.st.session_service).resolve(
        s.key, event_id=event.id, function_call_id=call_id
    )
    body = canonicalize(sealed.full_result())
  await profile.export_audit_store.aclose()
  await close_profile(profile)
  spec = {
      "directory": str(tmp_path),
      "session_id": s.sid,
      "event_id": event.id,
      "call_id": call_id,
      "op": "op-crash",
      "kill_at": kill_at,
  }
  child = subprocess.run(
      [sys.executable, export_support.__file__, json.dumps(spec)],
      env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
      stdin=subprocess.DEVNULL,
      capture_output=True,
      timeout=120,
      check=False,
  )
  reopened = SqlExportAuditStore(audit_url(tmp_path))
  try:
    records = await reopened.records("op-crash")
  finally:
    await reopened.aclose()
  assert _statuses(records) == expected
  if kill_at == "never":
    assert child.returncode == 0, child.stderr.decode()[-2000:]
    assert child.stdout == body
  else:
    assert child.returncode == 17, child.stderr.decode()[-2000:]
    assert child.stdout == b""
