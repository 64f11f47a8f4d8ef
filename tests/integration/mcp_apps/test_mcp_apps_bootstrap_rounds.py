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

"""The rounds of bootstrap's one logical `resources/read` (P2-BOOT-06).

RFC §3, render bootstrap step 4: "state-only MRTR rounds in v1". Bootstrap's
read is driven against the conformance server's interactive template
(`INTERACTIVE_URI`), whose read takes two state-only `InputRequiredResult`
rounds before the View in the 2026-07-28 era and a single round in the
handshake era, and against its asking template (`ASKING_URI`), whose modern
read asks for input. The reservation hold's read is redirected to that URI
and its items relabelled with the descriptor's URI (as
`test_mcp_apps_bootstrap.py` redirects it), so exact-one selection applies
unchanged; the rounds are counted in the server's request log.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
import contextlib
import json
from pathlib import Path
from typing import Any
from typing import Optional

from google.adk.mcp_apps.bootstrap.render import bootstrap_render
from google.adk.mcp_apps.bootstrap.render import BootstrapError
from google.adk.mcp_apps.bootstrap.render import BootstrapStep
from google.adk.mcp_apps.bootstrap.render import RenderDocument
from google.adk.mcp_apps.profile.limits import HostLimits
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.mcp_tool import StreamableHTTPConnectionParams
from mcp_apps_conformance_server import names
import pytest
from sealing_support import bound_stack
from sealing_support import BoundStack
from sealing_support import close_profile
from sealing_support import PRINCIPAL
from sealing_support import sql_profile
from sealing_support import TOOLSET
from sealing_support import widget_event

pytestmark = pytest.mark.integration

TIMEOUT = 30.0
MODERN_FLAG = "ADK_ENABLE_MCP_MODERN_PROTOCOL"
READ = "resources/read"


def _entries(log: Path) -> list[dict[str, Any]]:
  """Every message the server received, in order."""
  if not log.exists():
    return []
  return [json.loads(line) for line in log.read_text().splitlines()]


@contextlib.asynccontextmanager
async def _http_stack(
    start_server: Any,
    tmp_path: Path,
    *,
    modern: bool,
    limits: Optional[HostLimits] = None,
    **options: Any,
) -> AsyncIterator[tuple[BoundStack, Path]]:
  """A bound stack over a logged streamable-HTTP conformance server
  (`limits`: the profile's, instead of the defaults)."""
  log = tmp_path / "requests.jsonl"
  server = start_server(
      "streamable-http",
      stateless=modern,
      options={"request_log_file": str(log), **options},
  )
  params = StreamableHTTPConnectionParams(url=server.url, timeout=TIMEOUT)
  profile = await sql_profile(
      f"sqlite+aiosqlite:///{tmp_path / 'stores.db'}",
      **({} if limits is None else {"limits": limits}),
  )
  svc = SqliteSessionService(str(tmp_path / "sessions.db"))
  try:
    async with bound_stack(params, session_service=svc, profile=profile) as st:
      yield st, log
  finally:
    await close_profile(profile)


def _relabelled(result: Any, uri: str) -> Any:
  """The read with every item's URI set to `uri` (as if served for it).

  A state-only round (no `contents`) passes through unchanged.
  """
  if not hasattr(result, "contents"):
    return result
  return result.model_copy(
      update={
          "contents": [
              item.model_copy(update={"uri": uri}) for item in result.contents
          ]
      }
  )


async def _bootstrap_interactive(
    st: BoundStack, log: Path, target: str = names.INTERACTIVE_URI
) -> tuple[RenderDocument, Any, list[dict[str, Any]], list[str]]:
  """Bootstraps an `open_view` widget whose one read is of `target`.

  Returns:
    The document, the reserved hold, the server's log entries during the
    bootstrap, and the URIs the hold was asked to read.
  """
  sid = await st.new_session()
  event = widget_event(await st.turn(sid, (names.OPEN_VIEW, {})))
  (widget,) = event.actions.render_ui_widgets
  hold = st.registry.render_reservations.peek(TOOLSET, st.key(sid), widget.id)
  original = hold.read_resource
  asked: list[str] = []

  async def interactive(uri: str, **kwargs: Any) -> Any:
    asked.append(uri)
    return _relabelled(await original(target, **kwargs), uri)

  hold.read_resource = interactive
  before = len(_entries(log))
  doc = await bootstrap_render(
      registry=st.registry,
      profile=st.profile,
      session_service=st.session_service,
      principal=PRINCIPAL,
      session=st.key(sid),
      toolset_id=TOOLSET,
      event_id=event.id,
      function_call_id=widget.id,
  )
  return doc, hold, _entries(log)[before:], asked


# --- P2-BOOT-06: rounds of the one bootstrap read ----------------------------


@pytest.mark.conformance("P2-BOOT-06")
async def test_legacy_interactive_read_is_one_complete_round(
    start_server: Any, tmp_path: Path, monkeypatch: Any
) -> None:
  """P2-BOOT-06 (handshake era): the interactive read completes in one round.

  Over stateful streamable HTTP (2025-11-25) the interactive template
  answers its first round with the View. Bootstrap's one read reaches the
  server as exactly one `resources/read`, selection takes that View, and a
  live grant is returned on the reserved generation.
  """
  monkeypatch.delenv(MODERN_FLAG, raising=False)
  async with _http_stack(start_server, tmp_path, modern=False) as (st, log):
    doc, hold, seen, asked = await _bootstrap_interactive(st, log)
    assert isinstance(doc, RenderDocument)
    assert asked == [names.VIEW_URI]
    assert [e["method"] for e in seen] == [READ]
    assert "served after 1 round(s)" in doc.html
    assert doc.resource_uri == names.VIEW_URI
    assert doc.grant.active and not hold.released
    assert doc.grant.generation_id == hold.generation_id
    doc.grant.revoke()


@pytest.mark.conformance("P2-BOOT-06")
async def test_modern_state_only_rounds_complete(
    start_server: Any, tmp_path: Path, monkeypatch: Any
) -> None:
  """P2-BOOT-06 (2026-07-28 era): two state-only rounds, then the View.

  Over stateless streamable HTTP the interactive template answers two
  state-only `InputRequiredResult` rounds (`requestState` only, no input
  requests) before the View. Bootstrap's one logical read must drive them
  on the bound generation: three `resources/read` messages reach the
  server, the HTML is the one served after three rounds, and the grant is
  live.
  """
  monkeypatch.setenv(MODERN_FLAG, "1")
  async with _http_stack(start_server, tmp_path, modern=True) as (st, log):
    doc, hold, seen, _ = await _bootstrap_interactive(st, log)
    assert [e["method"] for e in seen] == [READ] * 3
    assert "served after 3 round(s)" in doc.html
    assert doc.grant.active and not hold.released
    doc.grant.revoke()


@pytest.mark.conformance("P2-BOOT-06")
async def test_read_asking_for_input_fails_closed(
    start_server: Any, tmp_path: Path, monkeypatch: Any
) -> None:
  """P2-BOOT-06 (2026-07-28 era): a round that asks for input fails closed.

  The asking read's first round is an `InputRequiredResult` carrying an
  elicitation request. Bootstrap gathers no input for reads: it stops after
  that one round with a typed `BootstrapError` at READ ('input_required'), the
  reservation is released and no grant exists.
  """
  monkeypatch.setenv(MODERN_FLAG, "1")
  async with _http_stack(
      start_server, tmp_path, modern=True, asking_read=True
  ) as (st, log):
    sid = await st.new_session()
    event = widget_event(await st.turn(sid, (names.OPEN_VIEW, {})))
    (widget,) = event.actions.render_ui_widgets
    hold = st.registry.render_reservations.peek(TOOLSET, st.key(sid), widget.id)
    original = hold.read_resource

    async def asking(uri: str, **kwargs: Any) -> Any:
      return _relabelled(await original(names.ASKING_URI, **kwargs), uri)

    hold.read_resource = asking
    before = len(_entries(log))
    with pytest.raises(BootstrapError, match=r" at read: ") as info:
      await bootstrap_render(
          registry=st.registry,
          profile=st.profile,
          session_service=st.session_service,
          principal=PRINCIPAL,
          session=st.key(sid),
          toolset_id=TOOLSET,
          event_id=event.id,
          function_call_id=widget.id,
      )
    assert info.value.reason == "input_required"
    assert info.value.step is BootstrapStep.READ
    assert [e["method"] for e in _entries(log)[before:]] == [READ]
    assert hold.released


@pytest.mark.conformance("P2-BOOT-06", "P4-MRTR-05")
async def test_modern_rounds_over_the_profile_cap_fail_closed(
    start_server: Any, tmp_path: Path, monkeypatch: Any
) -> None:
  """P2-BOOT-06, P4-MRTR-05: the profile's round cap bounds the read.

  With `mrtr_max_rounds` 2, the interactive read's third round is never
  sent: bootstrap stops after two state-only rounds with a typed
  `BootstrapError` at READ (`mrtr_rounds_exceeded`), the reservation is
  released and no grant exists.
  """
  monkeypatch.setenv(MODERN_FLAG, "1")
  async with _http_stack(
      start_server, tmp_path, modern=True, limits=HostLimits(mrtr_max_rounds=2)
  ) as (st, log):
    sid = await st.new_session()
    event = widget_event(await st.turn(sid, (names.OPEN_VIEW, {})))
    (widget,) = event.actions.render_ui_widgets
    hold = st.registry.render_reservations.peek(TOOLSET, st.key(sid), widget.id)
    original = hold.read_resource

    async def interactive(uri: str, **kwargs: Any) -> Any:
      return _relabelled(await original(names.INTERACTIVE_URI, **kwargs), uri)

    hold.read_resource = interactive
    before = len(_entries(log))
    with pytest.raises(BootstrapError, match=r" at read: ") as info:
      await bootstrap_render(
          registry=st.registry,
          profile=st.profile,
          session_service=st.session_service,
          principal=PRINCIPAL,
          session=st.key(sid),
          toolset_id=TOOLSET,
          event_id=event.id,
          function_call_id=widget.id,
      )
    assert info.value.reason == "mrtr_rounds_exceeded"
    assert info.value.step is BootstrapStep.READ
    assert [e["method"] for e in _entries(log)[before:]] == [READ] * 2
    assert hold.released
