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

"""The adapter's HTTP mechanics: Origin, CSRF, credentials, denial log,
loopback-only binding, the stock routes, dev-only marking, OpenAPI.

ADK's own FastAPI app (`get_fast_api_app(..., mcp_apps=True)`) is driven
through httpx's ASGI transport from a loopback peer: a socket adds nothing
to these checks (the end-to-end test serves over uvicorn).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any
from typing import Optional

from adapter_support import APP
from adapter_support import BearerResolver
from adapter_support import GOOD_BEARER
from adapter_support import served
from adapter_support import TOOLSET
from adapter_support import USER
from google.adk.mcp_apps.contracts.principal_resolver import Principal
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.session_authorizer import SessionPurpose
from google.adk.mcp_apps.contracts.session_authorizer import WidgetTarget
from google.adk.mcp_apps.host.fastapi_adapter import CSRF_COOKIE
from google.adk.mcp_apps.host.fastapi_adapter import MAX_BODY_BYTES
from google.adk.mcp_apps.host.fastapi_adapter import McpAppsAdapter
from google.adk.mcp_apps.host.service import WORKERS_ENV
from google.adk.mcp_apps.profile import local_dev_profile
from mcp_apps_conformance_server import names
import pytest

pytestmark = pytest.mark.integration

HOST_LOG = "google_adk.mcp_apps.host"
FAKE_TARGET = {
    "appName": APP,
    "userId": USER,
    "sessionId": "no-such-session",
    "toolsetId": TOOLSET,
    "eventId": "e-1",
    "functionCallId": "c-1",
}


class RecordingAuthorizer:
  """The deployment's `SessionAuthorizer`: allows VIEW, records asks."""

  def __init__(self) -> None:
    self.asked: list[SessionPurpose] = []

  async def authorize(
      self,
      principal: Principal,
      session: SessionKey,
      purpose: SessionPurpose,
      *,
      widget: Optional[WidgetTarget] = None,
  ) -> bool:
    del principal, session, widget
    self.asked.append(purpose)
    return purpose is SessionPurpose.VIEW


def denials(caplog: pytest.LogCaptureFixture) -> list[str]:
  return [
      r.getMessage()
      for r in caplog.records
      if r.name == HOST_LOG
      and r.levelno == logging.WARNING
      and "denied" in r.getMessage()
  ]


@pytest.mark.conformance("P5-HTTP-01", "P5-HTTP-04")
async def test_cross_origin_requests_to_apps_routes_are_denied_and_logged(
    mcp_apps: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
  """P5-HTTP-01: another Origin, a missing Origin on a POST, a cross-site
  fetch and the sandbox origin are refused on the Apps routes; each denial
  is a logged WARNING naming the reason."""
  caplog.set_level(logging.WARNING, logger=HOST_LOG)
  async with served(mcp_apps, tmp_path, socket_=False) as s:
    token = await s.csrf()
    evil = {"Origin": "http://evil.example", "X-CSRF-Token": token}
    attempts = [
        await s.client.post(
            "/mcp-apps/api/views", json=FAKE_TARGET, headers=evil
        ),
        await s.client.post(
            "/mcp-apps/api/views",
            json=FAKE_TARGET,
            headers={"X-CSRF-Token": token},
        ),
        await s.client.get(
            f"/mcp-apps/api/sessions/{APP}/{USER}/x/widgets",
            headers={"Origin": "http://localhost:1"},
        ),
        await s.client.get(
            f"/mcp-apps/api/sessions/{APP}/{USER}/x/widgets",
            headers={"Sec-Fetch-Site": "cross-site"},
        ),
    ]
    for response in attempts:
      assert response.status_code == 403, response.text
      assert response.json() == {"reason": "origin_denied"}
    # The sandbox page is served on the sandbox origin only.
    assert (await s.client.get("/mcp-apps/sandbox")).status_code == 404
    assert s.adapter.view_hosts() == {}
  logged = denials(caplog)
  assert len([m for m in logged if "origin_denied" in m]) == len(attempts)
  assert all(token not in m for m in logged)


@pytest.mark.conformance("P5-HTTP-02", "P5-HTTP-04")
async def test_state_changing_routes_need_the_csrf_double_submit(
    mcp_apps: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
  """P5-HTTP-02: a POST without the token, with a token other than the
  cookie's, or with no cookie is denied `csrf_denied` before the host
  service is reached; the matching pair passes the gate."""
  caplog.set_level(logging.WARNING, logger=HOST_LOG)
  async with served(mcp_apps, tmp_path, socket_=False) as s:
    token = await s.csrf()
    page = await s.client.get("/mcp-apps/")
    cookie = page.headers["set-cookie"].lower()
    assert "samesite=strict" in cookie and "path=/mcp-apps" in cookie
    routes = [
        "/mcp-apps/api/views",
        "/mcp-apps/api/views/v-1/rpc",
        "/mcp-apps/api/views/v-1/teardown",
        "/mcp-apps/api/rerun",
        "/mcp-apps/api/exports",
    ]
    for route in routes:
      for headers in (
          {"Origin": s.origin},
          {"Origin": s.origin, "X-CSRF-Token": token + "x"},
      ):
        denied = await s.client.post(route, json={}, headers=headers)
        assert denied.status_code == 403, (route, denied.text)
        assert denied.json() == {"reason": "csrf_denied"}
    s.client.cookies.delete(CSRF_COOKIE)
    no_cookie = await s.client.post(
        routes[0],
        json=FAKE_TARGET,
        headers={"Origin": s.origin, "X-CSRF-Token": token},
    )
    assert no_cookie.json() == {"reason": "csrf_denied"}
    token = await s.csrf()
    passed = await s.client.post(
        routes[0], json=FAKE_TARGET, headers=s.post_headers(token)
    )
    assert passed.json()["reason"] != "csrf_denied"
  assert len([m for m in denials(caplog) if "csrf_denied" in m]) == 11
  assert all(token not in m for m in denials(caplog))


@pytest.mark.conformance("P5-HTTP-03", "P5-HTTP-04")
async def test_missing_or_bad_bearer_is_denied_before_any_session_access(
    mcp_apps: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
  """P5-HTTP-03, P5-HTTP-04: the deployment's resolver reads the bearer
  from the request headers; without it, or with a wrong one, listing and
  opening are 401 before the authorizer (or the Session) is consulted,
  with no fallback to the loopback dev resolver, and nothing secret is
  logged."""
  caplog.set_level(logging.WARNING, logger=HOST_LOG)
  resolver = BearerResolver()
  authorizer = RecordingAuthorizer()
  profile = local_dev_profile(
      principal_resolver=resolver, session_authorizer=authorizer
  )
  async with served(mcp_apps, tmp_path, profile=profile, socket_=False) as s:
    s.headers = {"Authorization": f"Bearer {GOOD_BEARER}"}
    widget = await s.chat_widget()
    authorizer.asked.clear()
    listing = f"/mcp-apps/api/sessions/{APP}/{USER}/{widget['sessionId']}"
    for credential in (None, "Bearer wrong-credential", f"Basic {GOOD_BEARER}"):
      s.headers = {} if credential is None else {"Authorization": credential}
      listed = await s.client.get(listing + "/widgets", headers=s.headers)
      assert listed.status_code == 401
      assert listed.json() == {"reason": "unauthenticated"}
      opened = await s.open_view(widget)
      assert opened.status_code == 401
      assert opened.json() == {"reason": "unauthenticated"}
    assert authorizer.asked == []  # No Session was touched.
    assert s.adapter.view_hosts() == {}
    s.headers = {"Authorization": f"Bearer {GOOD_BEARER}"}
    opened = await s.open_view(widget)
    assert opened.status_code == 200, opened.text
    lease = opened.json()["lease"]
    assert authorizer.asked  # Only an authenticated caller reached it.
  logged = denials(caplog)
  assert len([m for m in logged if "unauthenticated" in m]) == 6
  for secret in (GOOD_BEARER, "wrong-credential", lease, "alice"):
    assert all(secret not in m for m in logged), secret


@pytest.mark.conformance("P5-HTTP-04")
async def test_an_oversized_view_message_is_denied_logged_and_has_no_effect(
    mcp_apps: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
  """A View message over the adapter's body limit, with its length
  declared or streamed without one, is refused 413 `too_large` before it
  reaches the channel: logged, nothing appended, the View still serves."""
  caplog.set_level(logging.WARNING, logger=HOST_LOG)
  async with served(mcp_apps, tmp_path, socket_=False) as s:
    widget = await s.chat_widget()
    opened = (await s.open_view(widget)).json()
    view_id, lease = opened["viewId"], opened["lease"]
    session_path = f"/apps/{APP}/users/{USER}/sessions/{widget['sessionId']}"
    before = (await s.client.get(session_path)).json()["events"]
    body = json.dumps({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": names.APP_FOLLOWUP,
            "arguments": {"pad": "x" * MAX_BODY_BYTES},
        },
    }).encode()
    token = await s.csrf()

    def headers(nonce: str) -> dict[str, str]:
      return s.post_headers(
          token,
          **{
              "Content-Type": "application/json",
              "X-MCP-Apps-Lease": lease,
              "X-MCP-Apps-Request-Token": nonce,
          },
      )

    async def streamed() -> AsyncIterator[bytes]:
      for start in range(0, len(body), 64 * 1024):
        yield body[start : start + 64 * 1024]

    rpc = f"/mcp-apps/api/views/{view_id}/rpc"
    declared = await s.client.post(rpc, content=body, headers=headers("n-1"))
    undeclared = await s.client.post(
        rpc, content=streamed(), headers=headers("n-2")
    )
    for denied in (declared, undeclared):
      assert denied.status_code == 413
      assert denied.json() == {"reason": "too_large"}
    after = (await s.client.get(session_path)).json()["events"]
    assert [e["id"] for e in after] == [e["id"] for e in before]
    served_still = await s.rpc(
        view_id,
        lease,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "resources/read",
            "params": {"uri": names.VIEW_URI},
        },
    )
    assert served_still.status_code == 200, served_still.text
    assert served_still.json()["result"]["contents"]
  assert len([m for m in denials(caplog) if "too_large" in m]) == 2


@pytest.mark.conformance("P5-HTTP-05")
@pytest.mark.parametrize("app_profile", [False, True])
async def test_a_non_loopback_server_binds_no_profile_and_serves_no_view(
    mcp_apps: Any, tmp_path: Path, app_profile: bool
) -> None:
  """P5-HTTP-05: told to bind 0.0.0.0, the adapter binds no profile (and
  withdraws one the app brought), so the toolset stays model-only and
  nothing is advertised; every Apps route denies `not_loopback`."""
  profile = local_dev_profile() if app_profile else None
  async with served(
      mcp_apps, tmp_path, host="0.0.0.0", profile=profile, socket_=False
  ) as s:
    assert not s.adapter.loopback
    created = await s.client.post(f"/apps/{APP}/users/{USER}/sessions")
    assert created.status_code == 200
    s.llm.steps = []
    run = await s.client.post(
        "/run",
        json={
            "appName": APP,
            "userId": USER,
            "sessionId": created.json()["id"],
            "newMessage": {"role": "user", "parts": [{"text": "hi"}]},
        },
    )
    assert run.status_code == 200, run.text
    assert s.registry.readiness is None
    assert not s.registry.lookup(TOOLSET).profile_bound
    for path in (
        "/mcp-apps/",
        f"/mcp-apps/api/sessions/{APP}/{USER}/{created.json()['id']}/widgets",
    ):
      denied = await s.client.get(path)
      assert denied.status_code == 403
      assert denied.json() == {"reason": "not_loopback"}
    sandbox = await s.client.get(
        "/mcp-apps/sandbox", headers={"Host": "localhost"}
    )
    assert sandbox.status_code == 404


@pytest.mark.conformance("XR-WEB-01")
async def test_nothing_binds_or_is_advertised_until_the_renderer_is_built(
    mcp_apps: Any, tmp_path: Path
) -> None:
  """XR-WEB-01: with the renderer page not built (no AppBridge bundle), a
  chat turn finds the toolset model-only and no Apps route serves the app;
  once the page is there, the next Apps request binds the profile."""
  async with served(mcp_apps, tmp_path, socket_=False) as s:
    built = s.adapter.web_dir
    unbuilt = tmp_path / "unbuilt"
    unbuilt.mkdir()
    for name in ("index.html", "sandbox.html"):
      (unbuilt / name).write_bytes((built / name).read_bytes())
    s.adapter.web_dir = unbuilt
    assert not s.adapter.renderer_ready
    session_id = await s.chat_turn()
    assert s.registry.readiness is None
    assert not s.registry.lookup(TOOLSET).profile_bound
    path = f"/mcp-apps/api/sessions/{APP}/{USER}/{session_id}/widgets"
    withheld = await s.client.get(path, headers=s.headers)
    assert withheld.status_code == 404
    assert withheld.json() == {"reason": "not_found"}
    s.adapter.web_dir = built
    assert s.adapter.renderer_ready
    listed = await s.client.get(path, headers=s.headers)
    assert listed.status_code == 200, listed.text
    assert s.registry.readiness is not None
    assert s.registry.lookup(TOOLSET).profile_bound


@pytest.mark.conformance("P5-HTTP-06")
async def test_stock_routes_stay_unauthenticated_and_never_make_apps_ready(
    mcp_apps: Any, tmp_path: Path
) -> None:
  """P5-HTTP-06: with a credentialed Apps profile, the stock routes still
  serve a caller with no credential (as documented), while that caller's
  Apps requests are denied; without the option no Apps route exists and
  the app's registry is never made ready."""
  profile = local_dev_profile(principal_resolver=BearerResolver())
  async with served(mcp_apps, tmp_path, profile=profile, socket_=False) as s:
    assert (await s.client.get("/list-apps")).json() == [APP]
    session_id = await s.chat_turn()  # No credential: stock, as before.
    listed = await s.client.get(
        f"/mcp-apps/api/sessions/{APP}/{USER}/{session_id}/widgets"
    )
    assert listed.status_code == 401
  async with served(
      mcp_apps, tmp_path, socket_=False, mcp_apps_option=False
  ) as s:
    assert (await s.client.get("/list-apps")).json() == [APP]
    assert (await s.client.get("/mcp-apps/")).status_code == 404
    paths = (await s.client.get("/openapi.json")).json()["paths"]
    assert not [p for p in paths if p.startswith("/mcp-apps")]
    assert s.registry.readiness is None


@pytest.mark.conformance("P5-ADP-01")
async def test_the_adapter_is_dev_only_single_process_and_loopback_by_default(
    mcp_apps: Any,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
  """P5-ADP-01: the adapter is marked dev-only and loopback-only, says so
  when mounted, installs the loopback-only development providers when the
  app brings none, and refuses several workers without sticky sessions."""
  caplog.set_level(logging.WARNING, logger=HOST_LOG)
  assert McpAppsAdapter.dev_only and McpAppsAdapter.loopback_only
  async with served(mcp_apps, tmp_path, socket_=False) as s:
    assert any("DEV ONLY" in r.getMessage() for r in caplog.records)
    await s.chat_widget()
    profile = s.registry.profile
    assert profile is not None and s.registry.readiness is not None
    for name in (
        "principal_resolver",
        "session_authorizer",
        "sealed_result_store",
        "session_lifecycle_store",
        "export_audit_store",
        "key_provider",
    ):
      provider = getattr(profile, name)
      assert provider.dev_only and provider.loopback_only, name
  monkeypatch.setenv(WORKERS_ENV, "2")
  async with served(mcp_apps, tmp_path, socket_=False) as s:
    session_id = await s.chat_turn()
    listed = await s.client.get(
        f"/mcp-apps/api/sessions/{APP}/{USER}/{session_id}/widgets"
    )
    assert listed.status_code == 400
    assert listed.json() == {"reason": "unsupported"}


async def test_the_apps_routes_are_in_the_openapi_schema(
    mcp_apps: Any, tmp_path: Path
) -> None:
  """FastAPI publishes every Apps route, with its request body schema."""
  async with served(mcp_apps, tmp_path, socket_=False) as s:
    schema = (await s.client.get("/openapi.json")).json()
  paths = schema["paths"]
  expected = {
      "/mcp-apps/": "get",
      "/mcp-apps/static/{path}": "get",
      "/mcp-apps/sandbox": "get",
      "/mcp-apps/api/sessions/{app_name}/{user_id}/{session_id}/widgets": "get",
      "/mcp-apps/api/views": "post",
      "/mcp-apps/api/views/{view_id}/rpc": "post",
      "/mcp-apps/api/views/{view_id}/notifications": "get",
      "/mcp-apps/api/views/{view_id}/teardown": "post",
      "/mcp-apps/api/rerun": "post",
      "/mcp-apps/api/exports": "post",
  }
  for path, method in expected.items():
    assert method in paths.get(path, {}), path
  body = paths["/mcp-apps/api/views"]["post"]["requestBody"]
  properties = body["content"]["application/json"]["schema"]["properties"]
  assert set(properties) == {
      "appName",
      "userId",
      "sessionId",
      "toolsetId",
      "eventId",
      "functionCallId",
  }


async def test_rerun_and_export_routes_reach_the_service_and_deny_typed(
    mcp_apps: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
  """ "Run tool again" runs a new call only when confirmed; export is
  denied under the dev authorizer (no EXPORT purpose), logged."""
  caplog.set_level(logging.WARNING, logger=HOST_LOG)
  async with served(mcp_apps, tmp_path, socket_=False) as s:
    widget = await s.chat_widget()
    locator = {
        k: widget[k]
        for k in ("appName", "userId", "sessionId", "eventId", "functionCallId")
    }
    token = await s.csrf()
    refused = await s.client.post(
        "/mcp-apps/api/rerun",
        json={**locator, "confirmed": False},
        headers=s.post_headers(token),
    )
    assert refused.status_code == 403
    assert refused.json() == {"reason": "rerun_denied"}
    rerun = await s.client.post(
        "/mcp-apps/api/rerun",
        json={**locator, "confirmed": True},
        headers=s.post_headers(token),
    )
    assert rerun.status_code == 200, rerun.text
    new = rerun.json()
    assert new["functionCallId"] != widget["functionCallId"]
    listed = await s.client.get(
        f"/mcp-apps/api/sessions/{APP}/{USER}/{widget['sessionId']}/widgets"
    )
    assert [w["functionCallId"] for w in listed.json()["widgets"]] == [
        widget["functionCallId"],
        new["functionCallId"],
    ]
    exported = await s.client.post(
        "/mcp-apps/api/exports",
        json={**locator, "operationInstanceId": "op-1"},
        headers=s.post_headers(token),
    )
    assert exported.status_code == 403
    assert exported.json()["reason"] in ("unauthorized", "export_denied")
  logged = denials(caplog)
  assert any("run_tool_again" in m and "rerun_denied" in m for m in logged)
  assert any(m.startswith("mcp_apps host denied export") for m in logged)
