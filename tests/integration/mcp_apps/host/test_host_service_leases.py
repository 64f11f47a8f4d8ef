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

"""View leases through `McpAppHostService`: scope, expiry, replay, limits.

The lease table (`ViewLeases`) is exercised field by field; the service's
checks run against real Views of the conformance server.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from google.adk.mcp_apps.affinity.errors import InvalidationReason
from google.adk.mcp_apps.contracts.principal_resolver import Principal
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.host.errors import HostServiceError
from google.adk.mcp_apps.host.errors import HostServiceErrorReason
from google.adk.mcp_apps.host.view_leases import LeaseScope
from google.adk.mcp_apps.host.view_leases import ViewLeases
from host_support import ALICE
from host_support import BOB
from host_support import caller
from host_support import host
from host_support import read_view
import pytest


class Clock:
  """A clock the test moves."""

  def __init__(self) -> None:
    self.now = 1_000.0

  def __call__(self) -> float:
    return self.now


def _scope(leases: ViewLeases, **changes: Any) -> LeaseScope:
  scope = LeaseScope(
      principal_digest=leases.digest(Principal(ALICE)),
      session=SessionKey("app", "user", "s1"),
      incarnation=3,
      toolset_id="conf",
      server_id="server-a",
      event_id="e1",
      function_call_id="c1",
      view_instance_id="v1",
      binding_revision=7,
      generation_id="g1",
  )
  return dataclasses.replace(scope, **changes)


_SWAPS = [
    pytest.param("principal_digest", "P5-LSE-01", id="principal"),
    pytest.param("session", "P5-LSE-02", id="session"),
    pytest.param("incarnation", "P5-LSE-03", id="incarnation"),
    pytest.param("event_id", "P5-LSE-04", id="widget_event"),
    pytest.param("function_call_id", "P5-LSE-04", id="widget_call"),
    pytest.param("view_instance_id", "P5-LSE-05", id="view_instance"),
    pytest.param("toolset_id", "P5-LSE-06", id="toolset"),
    pytest.param("server_id", "P5-LSE-07", id="server"),
    pytest.param("binding_revision", "P5-LSE-08", id="binding_revision"),
    pytest.param("generation_id", "P5-LSE-09", id="generation"),
]
_OTHER: dict[str, Any] = {
    "session": SessionKey("app", "user", "s2"),
    "incarnation": 4,
    "binding_revision": 8,
}


@pytest.mark.conformance(
    "P5-LSE-01",
    "P5-LSE-02",
    "P5-LSE-03",
    "P5-LSE-04",
    "P5-LSE-05",
    "P5-LSE-06",
    "P5-LSE-07",
    "P5-LSE-08",
    "P5-LSE-09",
)
@pytest.mark.parametrize("field,case", _SWAPS)
def test_lease_presented_for_anything_else_is_refused(
    field: str, case: str
) -> None:
  """P5-LSE-01..09: one field swapped at a time is `LEASE_INVALID`, naming
  the field, and spends no request token; the lease still serves its own
  scope."""
  del case
  leases = ViewLeases()
  lease = leases.issue(_scope(leases))
  other = _OTHER.get(field, f"other-{field}")
  if field == "principal_digest":
    other = leases.digest(Principal(BOB))
  with pytest.raises(HostServiceError) as denied:
    leases.check(
        lease.token, _scope(leases, **{field: other}), request_token="n1"
    )
  assert denied.value.reason is HostServiceErrorReason.LEASE_INVALID
  assert denied.value.detail == f"other {field}"
  assert leases.check(lease.token, _scope(leases), request_token="n1") is lease


@pytest.mark.integration
@pytest.mark.conformance("P5-LSE-01", "P5-GRNT-04")
async def test_another_principal_presenting_a_lease_is_refused_and_logged(
    mcp_apps: Any, tmp_path: Path, caplog: Any
) -> None:
  """P5-LSE-01, P5-GRNT-04: Bob presenting Alice's View id and lease is
  refused; the denial is logged without either principal or the lease."""
  async with host(mcp_apps, tmp_path) as h:
    opened = await h.open(await h.widget())
    with pytest.raises(HostServiceError) as denied:
      await h.send(opened, read_view(), principal_id=BOB)
    assert denied.value.reason is HostServiceErrorReason.LEASE_INVALID
    assert "handle: lease_invalid" in caplog.text
    for secret in (ALICE, BOB, opened.lease):
      assert secret not in caplog.text
    assert "result" in await h.send(opened, read_view())


@pytest.mark.integration
@pytest.mark.conformance("P5-LSE-08", "P5-LSE-09", "P5-AUTHZ-04")
async def test_rebind_or_a_lost_generation_ends_the_lease(
    mcp_apps: Any, tmp_path: Path
) -> None:
  """P5-LSE-08/09, P5-AUTHZ-04: after the View's connection generation is
  invalidated the lease serves nothing (`other generation_id`); after a
  rebind another View's lease is refused (`other binding_revision`)."""
  async with host(mcp_apps, tmp_path) as h:
    widget = await h.widget()
    opened = await h.open(widget)
    view = h.service._views[opened.view_id]  # pylint: disable=protected-access
    assert await h.st.registry.connections.invalidate(
        view.scope.generation_id, InvalidationReason.EVICTED
    )
    with pytest.raises(HostServiceError) as gone:
      await h.send(opened, read_view())
    assert gone.value.detail == "other generation_id"

    second = await h.open(await h.widget())
    await h.st.registry.rebind(h.st.profile)
    with pytest.raises(HostServiceError) as rebound:
      await h.send(second, read_view())
    assert rebound.value.reason is HostServiceErrorReason.LEASE_INVALID
    assert rebound.value.detail == "other binding_revision"


@pytest.mark.integration
@pytest.mark.conformance("P5-LSE-10")
async def test_an_expired_lease_is_refused_on_one_clock(
    mcp_apps: Any, tmp_path: Path
) -> None:
  """P5-LSE-10: at the lease's expiry the service refuses it
  (`LEASE_EXPIRED`) and the View's channel, opened on the same clock and
  deadline, refuses its own token too."""
  clock = Clock()
  leases = ViewLeases(lifetime_seconds=60, clock=clock)
  async with host(mcp_apps, tmp_path, leases=leases) as h:
    opened = await h.open(await h.widget())
    view = h.service._views[opened.view_id]  # pylint: disable=protected-access
    clock.now += 59
    assert "result" in await h.send(opened, read_view())
    clock.now += 1
    with pytest.raises(HostServiceError) as expired:
      await h.send(opened, read_view())
    assert expired.value.reason is HostServiceErrorReason.LEASE_EXPIRED
    answer = await view.channel.handle(read_view(2), token=view.channel.token)
    assert answer["error"]["data"]["reason"] == "lease_invalid"


@pytest.mark.integration
@pytest.mark.conformance("P5-LSE-12", "P5-AUTHZ-02")
async def test_replayed_request_token_or_old_wire_message_is_refused(
    mcp_apps: Any, tmp_path: Path
) -> None:
  """P5-LSE-12, P5-AUTHZ-02: a captured request re-sent with its request
  token is `REPLAYED` and reaches no server; after the View closed, the
  captured lease and message yield nothing (`LEASE_INVALID`)."""
  async with host(mcp_apps, tmp_path) as h:
    opened = await h.open(await h.widget())
    assert "result" in await h.send(opened, read_view(), request_token="t-1")
    with pytest.raises(HostServiceError) as replayed:
      await h.send(opened, read_view(), request_token="t-1")
    assert replayed.value.reason is HostServiceErrorReason.REPLAYED
    await h.service.close_view(
        caller(), view_id=opened.view_id, lease=opened.lease, acknowledged=True
    )
    with pytest.raises(HostServiceError) as old:
      await h.send(opened, read_view(), request_token="t-2")
    assert old.value.reason is HostServiceErrorReason.LEASE_INVALID


@pytest.mark.integration
@pytest.mark.conformance("P5-LSE-13")
async def test_lease_limits_give_a_typed_error(
    mcp_apps: Any, tmp_path: Path
) -> None:
  """P5-LSE-13: past the per-principal limit `open_view` is
  `LIMIT_EXCEEDED` before any bootstrap (no new View); a second lease for
  one View is refused too; a closed View frees its slot."""
  leases = ViewLeases(max_per_principal=1)
  async with host(mcp_apps, tmp_path, leases=leases) as h:
    widget = await h.widget()
    first = await h.open(widget)
    with pytest.raises(HostServiceError) as limited:
      await h.open(widget)
    assert limited.value.reason is HostServiceErrorReason.LIMIT_EXCEEDED
    assert h.service.view_ids == (first.view_id,)
    view = h.service._views[first.view_id]  # pylint: disable=protected-access
    with pytest.raises(HostServiceError) as per_view:
      leases.issue(dataclasses.replace(view.scope, principal_digest="other"))
    assert per_view.value.reason is HostServiceErrorReason.LIMIT_EXCEEDED
    await h.service.close_view(
        caller(), view_id=first.view_id, lease=first.lease, acknowledged=False
    )
    assert (await h.open(await h.widget())).view_id in h.service.view_ids
