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

"""Multi-round (MRTR) app `tools/call`s: P4-MRTR-01..08, 12; S0-SDK-05.

Every test drives `run_app_call` (or `call_app_tool`) on the hold of a
View a real Runner turn rendered, against the real conformance server's
`state_rounds_view`: at 2026-07-28 (stateless streamable HTTP) it answers
`rounds` - 1 state-only `InputRequiredResult`s, then a result listing the
plaintext states it was handed back. The server's request log
(`request_log_rounds`) records each leg's JSON-RPC id and the sealed
`requestState` the client sent, and each answer's `resultType` and the
sealed `requestState` the server sent, exactly as on the wire. Readings:
docs/decisions/issue23-mrtr.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import contextlib
import dataclasses
import json
from pathlib import Path
from typing import Any
from typing import Optional

from exec_ownership_support import BOUND
from exec_ownership_support import Stage
from exec_ownership_support import stage
from google.adk.mcp_apps.affinity.errors import InputRequestRefusedError
from google.adk.mcp_apps.affinity.generations import ConnectionEra
from google.adk.mcp_apps.affinity.rounds import drive_state_rounds
from google.adk.mcp_apps.affinity.rounds import MultiRoundError
from google.adk.mcp_apps.affinity.rounds import MultiRoundFailure
from google.adk.mcp_apps.affinity.rounds import state_kwargs
from google.adk.mcp_apps.affinity.routing import call_app_tool
from google.adk.mcp_apps.audit.pipeline import AuditKind
from google.adk.mcp_apps.operations.app_call import OPERATION_ERROR_CODE
from google.adk.mcp_apps.operations.app_call import OperationOutcome
from google.adk.mcp_apps.operations.app_call import OperationOutcomeKind
from google.adk.mcp_apps.operations.errors import OperationError
from google.adk.mcp_apps.operations.errors import OperationErrorReason
from google.adk.mcp_apps.profile.limits import HostLimits
from google.adk.tools.mcp_tool import StreamableHTTPConnectionParams
from mcp import Client
from mcp import types as mcp_types
from mcp_apps_conformance_server import build_server
from mcp_apps_conformance_server import names
from mcp_apps_conformance_server import ServerOptions
import pytest
from sealing_support import ServerGate

pytestmark = pytest.mark.integration

TIMEOUT = 30.0
MODERN_FLAG = "ADK_ENABLE_MCP_MODERN_PROTOCOL"
TOOL = names.STATE_ROUNDS_VIEW
ROUNDS_OPTIONS = {"state_rounds_tool": True, "request_log_rounds": True}


@dataclasses.dataclass(frozen=True)
class Leg:
  """One `tools/call` of the tool as the server logged it, with its answer."""

  id: Any
  sent_state: Optional[str]
  """The `requestState` the client sent (None on the first leg)."""
  result_type: Optional[str]
  """The answer's `resultType` (None: no answer was written)."""
  answered_state: Optional[str]
  """The `requestState` the server answered with."""


def legs(log: Path, tool: str = TOOL) -> list[Leg]:
  """The legs of `tool` in `log`, in order."""
  if not log.exists():
    return []
  entries = [json.loads(line) for line in log.read_text().splitlines()]
  answers = {e["responseTo"]: e for e in entries if e["method"] is None}
  found = []
  for e in entries:
    if e["method"] == "tools/call" and e.get("name") == tool:
      answer = answers.get(e["id"], {})
      found.append(
          Leg(
              e["id"],
              e["requestState"],
              answer.get("resultType"),
              answer.get("requestState"),
          )
      )
  return found


def modern_http(start_server: Any) -> Any:
  """`stage(connect=...)`: a stateless (2026-07-28) HTTP server."""

  def connect(options: dict[str, Any]) -> StreamableHTTPConnectionParams:
    server = start_server("streamable-http", stateless=True, options=options)
    return StreamableHTTPConnectionParams(url=server.url, timeout=TIMEOUT)

  return connect


def legacy_http(start_server: Any) -> Any:
  """`stage(connect=...)`: a stateful (handshake-era) HTTP server."""

  def connect(options: dict[str, Any]) -> StreamableHTTPConnectionParams:
    server = start_server("streamable-http", options=options)
    return StreamableHTTPConnectionParams(url=server.url, timeout=TIMEOUT)

  return connect


@contextlib.asynccontextmanager
async def rounds_stage(
    mcp_apps: Any,
    tmp_path: Path,
    backend: str,
    connect: Any,
    *,
    gate: Optional[ServerGate] = None,
    **options: Any,
) -> AsyncIterator[Stage]:
  """A rendered View over a server listing `state_rounds_view`."""
  async with stage(
      mcp_apps,
      tmp_path,
      backend,
      gate=gate,
      options={**ROUNDS_OPTIONS, **options},
      connect=connect,
  ) as s:
    yield s


def capped(s: Stage, **limits: Any) -> Any:
  """The stage's profile with other MRTR limits."""
  return dataclasses.replace(s.st.profile, limits=HostLimits(**limits))


def reason_of(outcome: OperationOutcome) -> str:
  assert isinstance(outcome.error, mcp_types.ErrorData), outcome
  assert outcome.error.code == OPERATION_ERROR_CODE
  assert isinstance(outcome.error.data, dict)
  return str(outcome.error.data["reason"])


# --- P4-MRTR-01..04, 07, S0-SDK-05: rounds inside one operation --------------


@pytest.mark.conformance(
    "P4-MRTR-01", "P4-MRTR-02", "P4-MRTR-03", "P4-MRTR-04", "S0-SDK-05"
)
async def test_state_only_rounds_complete_as_one_operation_with_one_record(
    mcp_apps: Any,
    tmp_path: Path,
    backend: str,
    start_server: Any,
    monkeypatch: Any,
) -> None:
  """Three legs, one operation, one audit Event, one cached outcome.

  The modern server answers the View's call with two state-only
  `InputRequiredResult`s (S0-SDK-05: they reach the driver instead of
  failing the call) and then the result. Each leg is a fresh JSON-RPC
  request (its own id) carrying exactly the sealed `requestState` the
  server sent last (byte-identical on the wire, and opaque: the plaintext
  the handler minted is not in it); the server's handler got back every
  state it minted, in order. The tool callbacks ran once, the audit
  record is one Event carrying the terminal result, and the cached
  outcome is that one: asking again runs no further leg.
  """
  monkeypatch.setenv(MODERN_FLAG, "1")
  async with rounds_stage(
      mcp_apps, tmp_path, backend, modern_http(start_server)
  ) as s:
    assert s.hold.generation.era is ConnectionEra.MODERN
    seen: list[dict[str, Any]] = []

    async def after(**kwargs: Any) -> None:
      seen.append(kwargs["result"])

    s.recorder.after = after
    outcome = await s.call(TOOL, {"rounds": 3, "tag": "t"}, op="op-rounds")
    result = outcome.wire
    assert isinstance(result, mcp_types.CallToolResult), outcome
    assert result.structured_content == {
        "era": "modern",
        "tag": "t",
        "legs": 3,
        "states": ["t:leg1", "t:leg2"],
    }
    logged = legs(s.requests_log)
    assert [leg.result_type for leg in logged] == [
        "input_required",
        "input_required",
        "complete",
    ]
    assert len({leg.id for leg in logged}) == 3
    assert logged[0].sent_state is None
    for previous, leg in zip(logged, logged[1:]):
      assert leg.sent_state == previous.answered_state
      assert leg.sent_state and "leg" not in leg.sent_state
    # The callbacks ran once, around the terminal result only.
    assert s.recorder.log.count(f"plugin_before_tool:{TOOL}") == 1
    assert [r["structuredContent"]["legs"] for r in seen] == [3]
    # One operation record, one cached outcome.
    (record,) = await s.stored()
    assert record.id == outcome.record_id
    assert outcome.record_kind is AuditKind.AUDIT
    assert record.custom_metadata["mcp_app_operation"]["path"] == "result"
    (part,) = record.content.parts
    assert part.function_response.response["structuredContent"]["legs"] == 3
    assert s.cache.get("op-rounds") is outcome
    again = await s.call(TOOL, {"rounds": 3, "tag": "t"}, op="op-rounds")
    assert again is outcome
    assert len(legs(s.requests_log)) == 3
    assert len(await s.stored()) == 1


@pytest.mark.conformance("P4-MRTR-01", "P4-MRTR-07")
async def test_the_operation_stays_pending_and_delivers_nothing_until_terminal(
    mcp_apps: Any,
    tmp_path: Path,
    start_server: Any,
    monkeypatch: Any,
) -> None:
  """While leg 2 is held at the server, nothing has been delivered.

  The second leg waits at the server's gate: the outer operation is still
  pending, no after-tool callback saw anything, no Event was stored and
  no outcome is cached. Opened, the operation ends with the terminal
  result only.
  """
  monkeypatch.setenv(MODERN_FLAG, "1")
  async with ServerGate() as gate:
    async with rounds_stage(
        mcp_apps, tmp_path, "in_memory", modern_http(start_server), gate=gate
    ) as s:
      seen: list[dict[str, Any]] = []

      async def after(**kwargs: Any) -> None:
        seen.append(kwargs["result"])

      s.recorder.after = after
      task = asyncio.ensure_future(
          s.call(TOOL, {"rounds": 2, "tag": "p", "gate_leg": 2}, op="op-p")
      )
      await asyncio.wait_for(gate.entered.wait(), BOUND)
      assert gate.tags == ["p:leg2"]
      assert not task.done()
      assert seen == []
      assert await s.stored() == []
      assert s.cache.get("op-p") is None
      assert [leg.result_type for leg in legs(s.requests_log)] == [
          "input_required",
          None,
      ]
      gate.open()
      outcome = await asyncio.wait_for(task, BOUND)
      assert isinstance(outcome.wire, mcp_types.CallToolResult)
      assert outcome.wire.structured_content["states"] == ["p:leg1"]
      assert [r["structuredContent"]["legs"] for r in seen] == [2]
      assert len(await s.stored()) == 1


# --- P4-MRTR-05, 06: the caps --------------------------------------------------


@pytest.mark.conformance("P4-MRTR-05", "P5-LIM-05")
async def test_over_the_round_cap_fails_typed_after_exactly_the_cap(
    mcp_apps: Any,
    tmp_path: Path,
    backend: str,
    start_server: Any,
    monkeypatch: Any,
) -> None:
  """A never-terminal tool: `mrtr_max_rounds` legs, then a typed failure.

  With the profile's cap at 3, the operation sends exactly three legs and
  ends `mrtr_rounds_exceeded`: the View gets the host's JSON-RPC error, no
  result was delivered, and the audit Event records the failure (no
  function response). `call_app_tool` alone raises `MultiRoundError`.
  """
  monkeypatch.setenv(MODERN_FLAG, "1")
  async with rounds_stage(
      mcp_apps, tmp_path, backend, modern_http(start_server)
  ) as s:
    outcome = await s.call(
        TOOL,
        {"rounds": 0, "tag": "cap"},
        op="op-cap",
        profile=capped(s, mrtr_max_rounds=3),
    )
    assert outcome.kind is OperationOutcomeKind.ERROR
    assert outcome.result is None
    assert reason_of(outcome) == "mrtr_rounds_exceeded"
    assert outcome.cause is not None
    assert outcome.cause.reason is OperationErrorReason.MRTR_ROUNDS_EXCEEDED
    assert isinstance(outcome.cause.__cause__, MultiRoundError)
    assert [leg.result_type for leg in legs(s.requests_log)] == [
        "input_required"
    ] * 3
    (record,) = await s.stored()
    assert record.id == outcome.record_id
    assert record.custom_metadata["mcp_app_operation"]["path"] == (
        "mrtr_rounds_exceeded"
    )
    assert all(p.function_response is None for p in record.content.parts)

    with pytest.raises(MultiRoundError) as info:
      await call_app_tool(
          s.hold,
          TOOL,
          {"rounds": 0, "tag": "direct"},
          view_server_id=s.server_id,
          target_server_id=s.server_id,
          max_rounds=2,
      )
    assert info.value.failure is MultiRoundFailure.ROUNDS_EXCEEDED
    assert info.value.legs == 2
    assert info.value.method == "tools/call"
    assert len(legs(s.requests_log)) == 5


@pytest.mark.conformance("P4-MRTR-06")
async def test_over_the_time_cap_fails_typed_with_the_leg_in_flight(
    mcp_apps: Any,
    tmp_path: Path,
    start_server: Any,
    monkeypatch: Any,
) -> None:
  """A leg held at the server past `mrtr_max_seconds` ends the operation.

  Leg 2 waits at the gate, which never opens while the operation runs:
  the time cap (the profile's, 4 s here) ends the operation
  `mrtr_timeout`, typed, with one audit record and no result; the leg was
  never answered on the wire before it did.
  """
  monkeypatch.setenv(MODERN_FLAG, "1")
  async with ServerGate() as gate:
    async with rounds_stage(
        mcp_apps, tmp_path, "in_memory", modern_http(start_server), gate=gate
    ) as s:
      outcome = await asyncio.wait_for(
          s.call(
              TOOL,
              {"rounds": 3, "tag": "slow", "gate_leg": 2},
              op="op-slow",
              profile=capped(s, mrtr_max_seconds=4.0),
          ),
          BOUND,
      )
      assert gate.tags == ["slow:leg2"]
      assert outcome.kind is OperationOutcomeKind.ERROR
      assert outcome.result is None
      assert reason_of(outcome) == "mrtr_timeout"
      assert outcome.cause is not None
      assert outcome.cause.reason is OperationErrorReason.MRTR_TIMEOUT
      assert [leg.result_type for leg in legs(s.requests_log)] == [
          "input_required",
          None,
      ]
      (record,) = await s.stored()
      assert record.custom_metadata["mcp_app_operation"]["path"] == (
          "mrtr_timeout"
      )


# --- P4-MRTR-08: legacy is single-round ---------------------------------------


@pytest.mark.conformance("P4-MRTR-08")
async def test_legacy_era_is_single_round(
    mcp_apps: Any,
    tmp_path: Path,
    start_server: Any,
    monkeypatch: Any,
) -> None:
  """Handshake era: the same tool answers in one leg.

  Over stateful streamable HTTP (2025-11-25) the generation is LEGACY and
  `state_rounds_view` answers at once: one `tools/call`, one result.
  """
  monkeypatch.delenv(MODERN_FLAG, raising=False)
  async with rounds_stage(
      mcp_apps, tmp_path, "in_memory", legacy_http(start_server)
  ) as s:
    assert s.hold.generation.era is ConnectionEra.LEGACY
    outcome = await s.call(TOOL, {"rounds": 3, "tag": "l"}, op="op-l")
    assert isinstance(outcome.wire, mcp_types.CallToolResult)
    assert outcome.wire.structured_content["legs"] == 1
    assert len(legs(s.requests_log)) == 1


@pytest.mark.conformance("P4-MRTR-08")
@pytest.mark.parametrize("transport", ["stdio", "legacy_http"])
async def test_a_legacy_intermediate_is_never_driven(
    transport: str,
    mcp_apps: Any,
    tmp_path: Path,
    start_server: Any,
    monkeypatch: Any,
) -> None:
  """Handshake era: an intermediate is refused, never echoed.

  The SDK cannot send an intermediate in the handshake era (its 2025-11-25
  result sieve drops `resultType` and `requestState`), so the fixture's
  `legacy_intermediates` middleware adds both to the wire answer after the
  sieve: a non-conforming legacy server. The client's 2025-11-25 session
  drops them again (fields of a later revision), so on the real LEGACY
  generation the operation is one leg and the state is never echoed.

  The driver's own legacy branch is then run with that real LEGACY
  generation's era and id, its one leg sent to a 2026-07-28 server (the
  only place an intermediate can come from): it refuses the intermediate
  (`MultiRoundError`, `legacy_intermediate`) after that one leg, and that
  server saw no second leg.
  """
  monkeypatch.delenv(MODERN_FLAG, raising=False)
  connect = None if transport == "stdio" else legacy_http(start_server)
  async with rounds_stage(
      mcp_apps, tmp_path, "in_memory", connect, legacy_intermediates=True
  ) as s:
    assert s.hold.generation.era is ConnectionEra.LEGACY
    outcome = await s.call(TOOL, {"rounds": 3, "tag": "x"}, op="op-x")
    (leg,) = legs(s.requests_log)
    assert leg.result_type == "input_required"
    assert leg.answered_state == "legacy:x:leg1"
    assert leg.sent_state is None
    assert isinstance(outcome.wire, mcp_types.CallToolResult)
    assert outcome.wire.structured_content["legs"] == 1

    modern_log = tmp_path / "modern.jsonl"
    modern = start_server(
        "streamable-http",
        stateless=True,
        options={
            **ROUNDS_OPTIONS,
            "request_log_file": str(modern_log),
        },
    )
    async with mcp_apps.connect(modern.url) as client:
      sent: list[Optional[str]] = []

      async def leg_of(state: Optional[str]) -> Any:
        sent.append(state)
        return await client.session.call_tool(
            TOOL,
            {"rounds": 3, "tag": "m"},
            allow_input_required=True,
            request_state=state,
        )

      with pytest.raises(MultiRoundError) as info:
        await drive_state_rounds(
            leg_of,
            era=s.hold.generation.era,
            generation_id=s.hold.generation_id,
            method="tools/call",
            max_rounds=8,
            max_seconds=TIMEOUT,
        )
    assert info.value.failure is MultiRoundFailure.LEGACY_INTERMEDIATE
    assert info.value.legs == 1
    assert sent == [None]
    (modern_leg,) = legs(modern_log)
    assert modern_leg.result_type == "input_required"


# --- P4-MRTR-12: input rounds stay refused -------------------------------------


@pytest.mark.conformance("P4-MRTR-12")
@pytest.mark.parametrize(
    "tool, arguments",
    [
        (names.ASKING_TOOL, {"kind": "elicitation"}),
        (names.MRTR_SAMPLE_VIEW, {}),
    ],
    ids=["input_required_result", "resolve_round"],
)
async def test_an_input_round_fails_the_operation_closed_after_one_leg(
    tool: str,
    arguments: dict[str, Any],
    mcp_apps: Any,
    tmp_path: Path,
    start_server: Any,
    monkeypatch: Any,
) -> None:
  """2026-07-28: a round asking for input ends the operation typed.

  `asking_view` answers an `InputRequiredResult` with an elicitation
  request; `mrtr_sample_view` needs a sampling round the app-safe client
  never declared. Either way the operation sends one leg and ends
  `input_request_refused`, audited, with no result: the driver fulfils no
  input request.
  """
  monkeypatch.setenv(MODERN_FLAG, "1")
  async with rounds_stage(
      mcp_apps,
      tmp_path,
      "in_memory",
      modern_http(start_server),
      asking_read=True,
      single_round_tools=True,
  ) as s:
    outcome = await s.call(tool, arguments, op="op-ask")
    assert outcome.kind is OperationOutcomeKind.ERROR
    assert reason_of(outcome) == "input_request_refused"
    assert outcome.cause is not None
    assert isinstance(outcome.cause.__cause__, InputRequestRefusedError)
    assert len(legs(s.requests_log, tool)) == 1
    (record,) = await s.stored()
    assert record.custom_metadata["mcp_app_operation"]["path"] == (
        "input_request_refused"
    )


# --- The channel's barrier between legs ----------------------------------------


@pytest.mark.conformance("P4-MRTR-01", "P4-MRTR-03")
async def test_the_barrier_runs_before_every_further_leg_and_can_end_it(
    mcp_apps: Any,
    tmp_path: Path,
    backend: str,
    start_server: Any,
    monkeypatch: Any,
) -> None:
  """`AppCallRequest.between_legs` gates each leg after the first.

  Passing, it ran once before each of legs 2 and 3 (each time with
  exactly the legs before it sent). Refusing with an `OperationError`
  before leg 2, the operation ends with the barrier's own reason after
  one leg: the callbacks ran, so it is reconciled (a reconciliation
  record, no result).
  """
  monkeypatch.setenv(MODERN_FLAG, "1")
  async with rounds_stage(
      mcp_apps, tmp_path, backend, modern_http(start_server)
  ) as s:
    sent_before: list[int] = []

    async def passing() -> None:
      sent_before.append(len(legs(s.requests_log)))

    outcome = await s.call(
        TOOL, {"rounds": 3, "tag": "b"}, op="op-pass", between_legs=passing
    )
    assert isinstance(outcome.wire, mcp_types.CallToolResult)
    assert sent_before == [1, 2]

    async def refusing() -> None:
      raise OperationError(OperationErrorReason.LEASE_INVALID, "revoked")

    refused = await s.call(
        TOOL, {"rounds": 3, "tag": "r"}, op="op-refused", between_legs=refusing
    )
    assert refused.kind is OperationOutcomeKind.ERROR
    assert reason_of(refused) == "lease_invalid"
    assert refused.cause is not None
    assert refused.cause.reason is OperationErrorReason.LEASE_INVALID
    assert refused.record_kind is AuditKind.RECONCILIATION
    assert len(legs(s.requests_log)) == 3 + 1
    assert s.recorder.log.count(f"plugin_before_tool:{TOOL}") == 2


# --- P2-AFF-10: requestState across a round-robin binding ----------------------

SHARED_STATE_KEY = "conformance-request-state-key-0001-shared"


def round_robin(
    start_server: Any, start_proxy: Any, logs: list[Path], **extra: Any
) -> Any:
  """`stage(connect=...)`: two stateless backends behind the proxy.

  Each backend logs to its own file in `logs`.
  """

  def connect(options: dict[str, Any]) -> StreamableHTTPConnectionParams:
    backends = [
        start_server(
            "streamable-http",
            stateless=True,
            options={**options, **extra, "request_log_file": str(log)},
        ).url
        for log in logs
    ]
    proxy = start_proxy(backends)
    return StreamableHTTPConnectionParams(url=proxy.url, timeout=TIMEOUT)

  return connect


@pytest.mark.conformance("P2-AFF-10", "P4-MRTR-02")
async def test_request_state_is_echoed_byte_identically_across_backends(
    mcp_apps: Any,
    tmp_path: Path,
    start_server: Any,
    start_proxy: Any,
    monkeypatch: Any,
) -> None:
  """One logical binding, two backend processes, one multi-round call.

  Two stateless 2026-07-28 backends share a `requestState` key behind the
  strict round-robin proxy. The View's four-leg call alternates between
  them: each leg after the first carries exactly the sealed state the
  other backend sent (ADK echoes it opaquely), every leg is a fresh id,
  and the call completes with every state the servers minted.
  """
  monkeypatch.setenv(MODERN_FLAG, "1")
  logs = [tmp_path / "backend0.jsonl", tmp_path / "backend1.jsonl"]
  connect = round_robin(
      start_server, start_proxy, logs, request_state_secret=SHARED_STATE_KEY
  )
  async with rounds_stage(mcp_apps, tmp_path, "in_memory", connect) as s:
    assert s.hold.generation.era is ConnectionEra.MODERN
    outcome = await s.call(TOOL, {"rounds": 4, "tag": "rr"}, op="op-rr")
    assert isinstance(outcome.wire, mcp_types.CallToolResult), outcome
    assert outcome.wire.structured_content["states"] == [
        "rr:leg1",
        "rr:leg2",
        "rr:leg3",
    ]
    by_backend = [legs(log) for log in logs]
    assert all(by_backend), "the legs must reach both backends"
    merged = sorted(
        ((leg, i) for i, found in enumerate(by_backend) for leg in found),
        key=lambda pair: pair[0].id,
    )
    assert len(merged) == 4
    assert len({leg.id for leg, _ in merged}) == 4
    assert merged[0][0].sent_state is None
    for (previous, was), (leg, now) in zip(merged, merged[1:]):
      assert now != was  # Each echo crosses to the other process.
      assert leg.sent_state == previous.answered_state
    assert merged[-1][0].result_type == "complete"


# --- The driver itself, against an in-process 2026-07-28 server ---------------


@contextlib.asynccontextmanager
async def in_process_legs(
    tmp_path: Path, arguments: dict[str, Any], tool: str = TOOL
) -> AsyncIterator[tuple[Any, Path]]:
  """A leg function calling `tool` on an in-process modern server, and the
  server's request log."""
  log = tmp_path / "in_process.jsonl"
  server = build_server(
      ServerOptions(
          state_rounds_tool=True,
          asking_read=True,
          request_log_file=str(log),
          request_log_rounds=True,
      )
  )
  async with Client(server) as client:

    async def leg(state: Optional[str]) -> Any:
      return await client.session.call_tool(
          tool, arguments, **state_kwargs(state)
      )

    yield leg, log


@pytest.mark.conformance("P4-MRTR-06")
async def test_the_time_cap_covers_all_legs_together(tmp_path: Path) -> None:
  """The cap is on the legs' total time, checked before each leg.

  With a clock that advances 10 s per leg and a 25 s cap, legs 1-3 are
  sent (before each, time remains) and the fourth is not: `TIMEOUT`
  after three legs, and the server saw exactly three.
  """
  now = [0.0]
  async with in_process_legs(tmp_path, {"rounds": 0, "tag": "clock"}) as (
      send,
      log,
  ):

    async def leg(state: Optional[str]) -> Any:
      result = await send(state)
      now[0] += 10.0
      return result

    with pytest.raises(MultiRoundError) as info:
      await drive_state_rounds(
          leg,
          era=ConnectionEra.MODERN,
          generation_id="in-process",
          method="tools/call",
          max_rounds=8,
          max_seconds=25.0,
          clock=lambda: now[0],
      )
  assert info.value.failure is MultiRoundFailure.TIMEOUT
  assert info.value.legs == 3
  assert len(legs(log)) == 3


@pytest.mark.conformance("P4-MRTR-03", "P4-MRTR-12")
async def test_the_driver_sends_no_leg_after_a_refusal(tmp_path: Path) -> None:
  """What ends the request sends nothing more.

  A barrier raising before leg 2 ends the request with its own error after
  one leg; an input-bearing first answer (`asking_view`) is refused typed
  after one leg, its state never echoed.
  """

  class Revoked(Exception):
    pass

  async def barrier() -> None:
    raise Revoked()

  async with in_process_legs(tmp_path, {"rounds": 3, "tag": "bar"}) as (
      leg,
      log,
  ):
    with pytest.raises(Revoked):
      await drive_state_rounds(
          leg,
          era=ConnectionEra.MODERN,
          generation_id="in-process",
          method="tools/call",
          max_rounds=8,
          max_seconds=TIMEOUT,
          between_legs=barrier,
      )
    assert len(legs(log)) == 1

  async with in_process_legs(
      tmp_path, {"kind": "elicitation"}, tool=names.ASKING_TOOL
  ) as (leg, log):
    with pytest.raises(InputRequestRefusedError) as info:
      await drive_state_rounds(
          leg,
          era=ConnectionEra.MODERN,
          generation_id="in-process",
          method="tools/call",
          max_rounds=8,
          max_seconds=TIMEOUT,
      )
    assert info.value.generation_id == "in-process"
    (leg_entry,) = legs(log, names.ASKING_TOOL)
    assert leg_entry.sent_state is None
