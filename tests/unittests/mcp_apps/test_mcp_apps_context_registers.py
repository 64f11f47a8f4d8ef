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

"""The model-context register store and its projection, directly.

The channel path and the model turns are in
tests/integration/mcp_apps/operations/test_view_channel_registers.py.
Concurrency across threads is forced with a `threading.Barrier`.
"""

from __future__ import annotations

import concurrent.futures
import threading

from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.operations.context_registers import BLOCK_HEADER
from google.adk.mcp_apps.operations.context_registers import context_registers
from google.adk.mcp_apps.operations.context_registers import ContextRegisters
from google.adk.mcp_apps.operations.context_registers import inject_registers
from google.adk.mcp_apps.operations.context_registers import RegisterBody
from google.adk.mcp_apps.operations.context_registers import registers_content
from google.adk.mcp_apps.operations.context_updates import parse_update
from google.adk.mcp_apps.operations.errors import OperationError
from google.adk.mcp_apps.operations.errors import OperationErrorReason
from google.adk.models.llm_request import LlmRequest
from google.adk.sessions.session import Session
from google.genai import types
import pytest

KEY = SessionKey('app', 'user', 'session')


def text(body: str) -> RegisterBody:
  return RegisterBody.of([body])


def block(registers: ContextRegisters, total: int = 1024) -> str:
  content = registers_content(KEY, max_total_bytes=total, registers=registers)
  assert content is not None and content.role == 'user'
  (part,) = content.parts or ()
  assert part.text is not None
  return part.text


def section(widget: str, view: str, body: str) -> str:
  return (
      f'[MCP App context — widget {widget}, view {view}]\n{body}\n'
      f'[end MCP App context — widget {widget}, view {view}]'
  )


@pytest.mark.conformance('P4-UMC-02', 'P4-REGS-04')
def test_concurrent_commits_get_distinct_consecutive_sequences() -> None:
  registers = ContextRegisters()
  barrier = threading.Barrier(8)

  def commit(index: int) -> int | None:
    barrier.wait()
    return registers.commit(
        KEY, f'v{index}', f'w{index}', text(str(index)), max_bytes=64
    )

  with concurrent.futures.ThreadPoolExecutor(8) as pool:
    sequences = list(pool.map(commit, range(8)))
  assert sorted(s for s in sequences if s is not None) == list(range(1, 9))
  committed = {r.view_id: r.sequence for r in registers.registers(KEY)}
  assert committed == {f'v{i}': sequences[i] for i in range(8)}


@pytest.mark.conformance('P4-REGS-11', 'P4-UMC-03')
def test_an_over_cap_body_is_refused_and_changes_nothing() -> None:
  registers = ContextRegisters()
  assert registers.commit(KEY, 'v', 'w', text('ok'), max_bytes=4) == 1
  with pytest.raises(OperationError) as refused:
    registers.commit(KEY, 'v', 'w', text('12345'), max_bytes=4)
  assert refused.value.reason is OperationErrorReason.LIMIT_EXCEEDED
  assert registers.sequence(KEY) == 1
  assert block(registers) == '\n'.join((BLOCK_HEADER, section('w', 'v', 'ok')))


@pytest.mark.conformance('P4-UMC-10', 'P4-UMC-03')
def test_an_update_admitted_before_the_writer_is_superseded() -> None:
  registers = ContextRegisters()
  older = registers.admit(KEY, 'v')
  newer = registers.admit(KEY, 'v')
  assert (
      registers.commit(KEY, 'v', 'w', text('new'), max_bytes=64, ticket=newer)
      == 1
  )
  with pytest.raises(OperationError) as refused:
    registers.commit(KEY, 'v', 'w', text('old'), max_bytes=64, ticket=older)
  assert refused.value.reason is OperationErrorReason.SUPERSEDED
  (register,) = registers.registers(KEY)
  assert (register.sequence, register.body.texts) == (1, ('new',))


@pytest.mark.conformance('P4-REGS-05', 'P4-REGS-06', 'P4-REGS-08')
def test_winners_per_widget_by_sequence_and_promotion_on_clear() -> None:
  registers = ContextRegisters()
  registers.commit(KEY, 'v1', 'w1', text('a'), max_bytes=64)
  registers.commit(KEY, 'v2', 'w2', text('b'), max_bytes=64)
  registers.commit(KEY, 'v3', 'w1', text('c'), max_bytes=64)
  assert block(registers) == '\n'.join(
      (BLOCK_HEADER, section('w2', 'v2', 'b'), section('w1', 'v3', 'c'))
  )
  assert registers.clear_view(KEY, 'v3')
  assert block(registers) == '\n'.join(
      (BLOCK_HEADER, section('w1', 'v1', 'a'), section('w2', 'v2', 'b'))
  )
  assert not registers.clear_view(KEY, 'v3')  # Idempotent.


@pytest.mark.conformance('P4-REGS-10', 'P4-REGS-02')
def test_reading_keeps_registers_and_an_empty_body_clears_one() -> None:
  registers = ContextRegisters()
  registers.commit(KEY, 'v', 'w', text('a'), max_bytes=64)
  assert block(registers) == block(registers)  # Read twice, still there.
  assert registers.commit(KEY, 'v', 'w', RegisterBody(), max_bytes=64) is None
  assert registers.registers(KEY) == ()
  assert registers.sequence(KEY) == 1  # Clearing allocates nothing.
  assert registers_content(KEY, max_total_bytes=64, registers=registers) is None


@pytest.mark.conformance('P4-REGS-12')
def test_the_aggregate_cap_evicts_whole_registers_with_a_marker() -> None:
  registers = ContextRegisters()
  registers.commit(KEY, 'v1', 'w1', text('1' * 10), max_bytes=64)
  registers.commit(KEY, 'v2', 'w2', text('2' * 10), max_bytes=64)
  registers.commit(KEY, 'v3', 'w3', text('3' * 10), max_bytes=64)
  assert block(registers, total=20) == '\n'.join((
      BLOCK_HEADER,
      '[MCP App context evicted — widgets w1]',
      section('w2', 'v2', '2' * 10),
      section('w3', 'v3', '3' * 10),
  ))
  assert block(registers, total=19) == '\n'.join((
      BLOCK_HEADER,
      '[MCP App context evicted — widgets w1, w2]',
      section('w3', 'v3', '3' * 10),
  ))


@pytest.mark.conformance('P4-REGS-09')
def test_structured_content_is_canonical_json_text() -> None:
  params = {
      'content': [{'type': 'text', 'text': 'summary'}],
      'structuredContent': {'z': [1.0, 2.5], 'a': {'y': 'é', 'x': 1e-7}},
  }
  body = parse_update(params)
  assert body.structured == '{"a":{"x":1e-7,"y":"é"},"z":[1,2.5]}'
  assert body.text == 'summary\n' + body.structured
  assert body.size == len(body.text.encode('utf-8'))


@pytest.mark.conformance('P4-UMC-12')
def test_non_json_structured_content_is_refused() -> None:
  with pytest.raises(OperationError) as refused:
    parse_update({'structuredContent': {'n': float('nan')}})
  assert refused.value.reason is OperationErrorReason.INVALID_PARAMS


@pytest.mark.parametrize('user_id', ['user', ''])
def test_a_session_without_registers_leaves_the_request_untouched(
    user_id: str,
) -> None:
  # Another Session of the process has one, so the store is in use.
  keyed = SessionKey('app', 'user', 'has-registers')
  context_registers().commit(keyed, 'v', 'w', text('x'), max_bytes=8)
  session = Session(id='no-registers', app_name='app', user_id=user_id)
  request = LlmRequest(
      contents=[types.Content(role='user', parts=[types.Part(text='hi')])]
  )
  before = request.model_dump()
  inject_registers(session, request)
  assert request.model_dump() == before
  context_registers().clear_session(keyed)
