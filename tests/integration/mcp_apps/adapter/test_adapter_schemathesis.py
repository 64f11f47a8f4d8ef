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

"""Schemathesis over the adapter's published Apps API surface.

The cases come from the OpenAPI schema FastAPI publishes; a bounded,
derandomized number per operation is sent to ADK's own app (ASGI). No
answer may be a 5xx, and every refusal must be in the denial log.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from adapter_support import build_app
from adapter_support import free_port
from google.adk.mcp_apps.host.fastapi_adapter import CSRF_COOKIE
import hypothesis
import pytest
import schemathesis

pytestmark = pytest.mark.integration

HOST_LOG = "google_adk.mcp_apps.host"
EXAMPLES = 12


@pytest.mark.conformance("P5-HTTP-04")
def test_generated_requests_to_the_apps_api_get_no_5xx_and_logged_denials(
    mcp_apps: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
  """P5-HTTP-04: whatever the schema admits, an Apps route answers below
  500, and each 4xx is a denial written to the denial log."""
  caplog.set_level(logging.WARNING, logger=HOST_LOG)
  port = free_port()
  app, registry, _ = build_app(mcp_apps, tmp_path, port=port)
  schema = schemathesis.openapi.from_asgi(
      "/openapi.json", app, headers={"Host": f"127.0.0.1:{port}"}
  ).include(path_regex="^/mcp-apps/api/")
  seen: list[tuple[str, int]] = []
  try:
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 7
    origin = f"http://127.0.0.1:{port}"
    page = {"Origin": origin, "X-CSRF-Token": "csrf-token"}
    runs = [(op, as_page) for op in operations for as_page in (False, True)]
    for operation, as_page in runs:

      @hypothesis.given(case=operation.as_strategy())
      @hypothesis.settings(
          max_examples=EXAMPLES,
          deadline=None,
          derandomize=True,
          database=None,
          phases=[hypothesis.Phase.generate],
          suppress_health_check=list(hypothesis.HealthCheck),
      )
      def check(case: Any) -> None:
        caplog.clear()
        # As a stranger, then as the page (Origin and the CSRF pair), so
        # the generated bodies also reach the routes behind the gate.
        response = case.call(
            base_url=origin,
            headers=page if as_page else None,
            cookies={CSRF_COOKIE: "csrf-token"} if as_page else None,
        )
        seen.append((operation.label, response.status_code))
        assert response.status_code < 500, (case.path, response.text)
        if response.status_code >= 400:
          logged = [
              r.getMessage()
              for r in caplog.records
              if r.name == HOST_LOG and "denied" in r.getMessage()
          ]
          assert logged, (case.path, response.status_code)
          assert response.json()["reason"] in logged[-1]

      check()
  finally:
    asyncio.run(registry.aclose())
  assert {label for label, _ in seen} == {op.label for op in operations}
  statuses = {status for _, status in seen}
  assert statuses - {403}, statuses  # Not everything stopped at the gate.
