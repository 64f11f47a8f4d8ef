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


"""Shared helpers of the export resolver tests.

`export_world` is the app-call test stage (a real Runner over the
conformance server, a Session whose real turn rendered a UI tool, so a
sealed result exists) with test deployment contracts: `Grants` (a
`SessionAuthorizer` granting `VIEW` and `EXPORT` per principal),
`TokenPrincipals` (a `PrincipalResolver` over revocable bearer tokens) and
`AuditObserver` (an `ExportAuditStore` wrapper that records every append
and can fail). Run as a script, this module is the crash tests' child: it
exports once and kills itself at a named `ExportPoint`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import contextlib
import dataclasses
import json
import os
from pathlib import Path
import sys
from typing import Any
from typing import Optional

from google.adk.mcp_apps.canonical_json import canonicalize
from google.adk.mcp_apps.contracts.errors import ContractError
from google.adk.mcp_apps.contracts.export_audit_store import ExportAuditRecord
from google.adk.mcp_apps.contracts.export_audit_store import ExportAuditStore
from google.adk.mcp_apps.contracts.local_dev import LocalDevExportAuditStore
from google.adk.mcp_apps.contracts.local_dev import LocalDevSessionAuthorizer
from google.adk.mcp_apps.contracts.principal_resolver import Principal
from google.adk.mcp_apps.contracts.principal_resolver import PrincipalRequest
from google.adk.mcp_apps.contracts.principal_resolver import PrincipalUnresolvedError
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.session_authorizer import SessionPurpose
from google.adk.mcp_apps.contracts.session_authorizer import WidgetTarget
from google.adk.mcp_apps.host.export import ExportHook
from google.adk.mcp_apps.host.export import ExportPoint
from google.adk.mcp_apps.host.export import ExportResolver
from google.adk.mcp_apps.stores.sql_export_audit_store import SqlExportAuditStore

APP = "sealing"
USER = "alice"
OWNER = Principal("alice-principal")
"""The principal the tests export as (the stage's `PRINCIPAL`)."""
TOKEN = "bearer-alice-1"


class Grants:
  """A test `SessionAuthorizer`: per-principal `VIEW` and `EXPORT` sets."""

  def __init__(self) -> None:
    self.view: set[str] = {OWNER.principal_id}
    self.export: set[str] = {OWNER.principal_id}
    self.asked: list[tuple[SessionPurpose, Optional[WidgetTarget]]] = []

  async def authorize(
      self,
      principal: Principal,
      session: SessionKey,
      purpose: SessionPurpose,
      *,
      widget: Optional[WidgetTarget] = None,
  ) -> bool:
    del session
    self.asked.append((purpose, widget))
    pool = self.export if purpose is SessionPurpose.EXPORT else self.view
    return principal.principal_id in pool


class TokenPrincipals:
  """A test `PrincipalResolver`: bearer tokens mapped to principals.

  Loopback-only (it sits beside the local-development providers, which
  require that of the resolver).
  """

  dev_only = True
  loopback_only = True

  def __init__(self) -> None:
    self.tokens: dict[str, str] = {TOKEN: OWNER.principal_id}

  async def resolve(self, request: PrincipalRequest) -> Principal:
    if request.client_host != "127.0.0.1":
      raise PrincipalUnresolvedError("not_loopback")
    token = request.headers.get("authorization", "")
    if token not in self.tokens:
      raise PrincipalUnresolvedError("unauthenticated")
    return Principal(self.tokens[token])


def request_with(token: str = TOKEN) -> PrincipalRequest:
  return PrincipalRequest("127.0.0.1", headers={"authorization": token})


class AuditObserver:
  """Wraps an `ExportAuditStore`; sees every append; can fail on demand.

  Attributes:
    appended: Every record the resolver appended, in order.
    fail_writes: Appends raise `ContractError` (a failed write).
    down: Every call raises `ContractError` (the store is down).
  """

  def __init__(self, inner: ExportAuditStore) -> None:
    self.inner = inner
    self.appended: list[ExportAuditRecord] = []
    self.fail_writes = False
    self.down = False

  @property
  def namespace(self) -> str:
    return self.inner.namespace

  @property
  def revision(self) -> str:
    return self.inner.revision

  def _check(self) -> None:
    if self.down:
      raise ContractError("export audit store unavailable: down")

  async def append(self, record: ExportAuditRecord) -> None:
    self._check()
    if self.fail_writes:
      raise ContractError("export audit write failed")
    await self.inner.append(record)
    self.appended.append(record)

  async def records(
      self, operation_instance_id: str
  ) -> tuple[ExportAuditRecord, ...]:
    self._check()
    return await self.inner.records(operation_instance_id)

  async def delete_incarnation(
      self, session: SessionKey, incarnation: int
  ) -> int:
    self._check()
    return await self.inner.delete_incarnation(session, incarnation)

  async def purge_expired(self, *, now: float) -> int:
    self._check()
    return await self.inner.purge_expired(now=now)

  def statuses(self, op: str) -> list[str]:
    """The statuses appended for `op`, in order."""
    return [
        r.status.value for r in self.appended if r.operation_instance_id == op
    ]


@dataclasses.dataclass
class ExportWorld:
  """A stage with a sealed UI result and the export test contracts."""

  s: Any
  grants: Grants
  principals: TokenPrincipals
  audit: AuditObserver
  event_id: str
  call_id: str

  @property
  def key(self) -> SessionKey:
    return SessionKey(APP, USER, self.s.sid)

  @property
  def profile(self) -> Any:
    return self.s.st.profile

  def resolver(self, **fields: Any) -> ExportResolver:
    return ExportResolver(
        profile=self.profile,
        session_service=self.s.st.session_service,
        **fields,
    )

  async def export(
      self, resolver: ExportResolver, op: str = "op-1", **fields: Any
  ) -> Any:
    fields.setdefault("principal", OWNER)
    fields.setdefault("session", self.key)
    fields.setdefault("event_id", self.event_id)
    fields.setdefault("function_call_id", self.call_id)
    return await resolver.export(operation_instance_id=op, **fields)

  async def sealed_body(self) -> bytes:
    """The canonical bytes of the sealed result, read by the test oracle."""
    from sealing_support import OracleResolver  # pylint: disable=g-import-not-at-top

    resolved = await OracleResolver(
        self.profile, self.s.st.session_service
    ).resolve(self.key, event_id=self.event_id, function_call_id=self.call_id)
    return canonicalize(resolved.full_result())

  def reads(self) -> list[dict[str, Any]]:
    """The `resources/read` requests the conformance server received."""
    log = self.s.requests_log
    if not log.exists():
      return []
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    return [e for e in entries if e.get("method") == "resources/read"]


@contextlib.asynccontextmanager
async def export_world(
    mcp_apps: Any,
    tmp_path: Path,
    backend: str,
    *,
    durable_audit: bool = False,
    **stage_fields: Any,
) -> AsyncIterator[ExportWorld]:
  """The stage on `backend` with the export contracts bound.

  `durable_audit` puts a `SqlExportAuditStore` (a SQLite file) under the
  observer instead of the local-development one.
  """
  from exec_ownership_support import stage  # pylint: disable=g-import-not-at-top

  inner: Any = LocalDevExportAuditStore()
  if durable_audit:
    inner = SqlExportAuditStore(audit_url(tmp_path))
    await inner.open()
  grants = Grants()
  principals = TokenPrincipals()
  audit = AuditObserver(inner)
  fields = {
      "session_authorizer": grants,
      "principal_resolver": principals,
      "export_audit_store": audit,
      **stage_fields.pop("profile_fields", {}),
  }
  try:
    async with stage(
        mcp_apps, tmp_path, backend, profile_fields=fields, **stage_fields
    ) as s:
      (event,) = [
          e
          for e in s.session.events
          if e.actions is not None and e.actions.render_ui_widgets
      ]
      (widget,) = event.actions.render_ui_widgets
      yield ExportWorld(s, grants, principals, audit, event.id, widget.id)
  finally:
    if durable_audit:
      await inner.aclose()


def audit_url(directory: Path) -> str:
  return f"sqlite+aiosqlite:///{directory / 'audit.db'}"


async def crash_profile(directory: Path) -> Any:
  """The crash tests' profile: the SQL stores of the stage's SQLite
  backend, `EXPORT` granted, the durable audit store."""
  from sealing_support import sql_profile  # pylint: disable=g-import-not-at-top

  return await sql_profile(
      f"sqlite+aiosqlite:///{directory / 'stores.db'}",
      session_authorizer=LocalDevSessionAuthorizer(allow_export=True),
      export_audit_store=SqlExportAuditStore(audit_url(directory)),
  )


async def _child(spec: dict[str, Any]) -> None:
  """Exports once; `os._exit` at `spec['kill_at']`; writes the body out."""
  from google.adk.sessions.sqlite_session_service import SqliteSessionService  # pylint: disable=g-import-not-at-top
  from sealing_support import close_profile  # pylint: disable=g-import-not-at-top

  directory = Path(spec["directory"])
  profile = await crash_profile(directory)
  service = SqliteSessionService(str(directory / "sessions.db"))

  async def hook(point: ExportPoint) -> None:
    if point.value == spec["kill_at"]:
      os._exit(17)  # pylint: disable=protected-access

  hooked: ExportHook = hook
  resolver = ExportResolver(
      profile=profile, session_service=service, hook=hooked
  )
  result = await resolver.export(
      principal=OWNER,
      session=SessionKey(APP, USER, spec["session_id"]),
      event_id=spec["event_id"],
      function_call_id=spec["call_id"],
      operation_instance_id=spec["op"],
  )
  sys.stdout.buffer.write(result.body)
  sys.stdout.flush()
  await close_profile(profile)
  audit = profile.export_audit_store
  assert isinstance(audit, SqlExportAuditStore)
  await audit.aclose()


if __name__ == "__main__":
  asyncio.run(_child(json.loads(sys.argv[1])))
