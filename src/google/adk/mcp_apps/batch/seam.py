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

"""The batch seam: where ADK admits, refuses or ledgers a batch of calls.

ADK's batch executor hands every prepared batch to `govern_batch` before any
call starts. A batch that calls no profile-bound toolset runs exactly as
upstream runs it. Otherwise the whole batch is admitted against one fresh
snapshot of the tools it calls; a batch that mixes UI-associated calls with
others, or fails admission, is answered by one core-owned refusal Event and
none of it runs; an all-UI batch runs with one `EventBatchEffects` ledger
whose frozen snapshot gives the merged Event its deltas. Design:
docs/design/batch-admission.md.

Usage:

  return await govern_batch(invocation_context, prepared_calls, execute)
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
import contextvars
import dataclasses
from typing import Any
from typing import Optional
from typing import Protocol
from typing import Sequence
from typing import TYPE_CHECKING
from typing import TypeVar

if TYPE_CHECKING:
  from google.genai import types

  from ...agents.invocation_context import InvocationContext
  from ...events.event import Event
  from ...tools.base_tool import BaseTool
  from ...tools.tool_context import ToolContext
  from .ledger import FrozenBatch


class PreparedCall(Protocol):
  """What the seam reads of one of ADK's prepared calls."""

  function_call: types.FunctionCall
  tool: BaseTool
  tool_context: ToolContext
  contextvars_snapshot: contextvars.Context


_P = TypeVar('_P', bound=PreparedCall)


def _is_bound(tool: Any) -> bool:
  # Plain attribute probe: a batch of ordinary tools imports nothing of the
  # MCP Apps host (and nothing of the `mcp` package).
  return getattr(tool, 'batch_discovery', None) is not None


async def govern_batch(
    invocation_context: InvocationContext,
    prepared_calls: Sequence[_P],
    execute: Callable[[list[_P]], Awaitable[Optional[Event]]],
) -> Optional[Event]:
  """Runs one batch of prepared calls, admitted as a whole when bound.

  Args:
    invocation_context: The invocation the batch belongs to.
    prepared_calls: The batch, in the model's order; nothing has run.
    execute: ADK's fan-out and merge of a list of prepared calls.

  Returns:
    The merged function response Event (the refusal Event for a refused
    batch), or None as `execute` returns.
  """
  if len(prepared_calls) < 2 or not any(
      _is_bound(call.tool) for call in prepared_calls
  ):
    # One call is no parallel batch: its tool admits it on the connection
    # that runs it (the pre-call re-list of a connection-bound handle).
    return await execute(list(prepared_calls))
  from ...agents.readonly_context import ReadonlyContext
  from .admission import admit_batch
  from .errors import BatchError
  from .errors import BatchErrorReason
  from .refusal import refusal_event

  function_calls = [call.function_call for call in prepared_calls]
  try:
    snapshot = await admit_batch(
        ReadonlyContext(invocation_context),
        [
            (call.function_call.id, call.function_call.name or '', call.tool)
            for call in prepared_calls
        ],
    )
    if snapshot.mixed:
      raise BatchError(
          BatchErrorReason.MIXED_BATCH,
          'UI-associated MCP tools were called in parallel with other tools',
      )
    call_ids = [call.function_call.id for call in prepared_calls]
    if snapshot.all_ui and (
        None in call_ids or '' in call_ids or len(set(call_ids)) < len(call_ids)
    ):
      raise BatchError(
          BatchErrorReason.DUPLICATE_CALL_ID,
          'Two calls of the batch share a function-call id',
      )
  except BatchError as refused:
    return refusal_event(invocation_context, function_calls, refused)
  if not snapshot.all_ui:
    return await execute(list(prepared_calls))
  from ..affinity.routing import admit_for_fan_out

  handles = [call.handle for call in snapshot.calls if call.handle is not None]
  for call in prepared_calls:
    # Fan-out runs against the snapshot: each call finds its declaration
    # verified on the generation the snapshot listed.
    admit_for_fan_out(call.contextvars_snapshot, handles)
  return await _run_ledgered(invocation_context, prepared_calls, execute)


async def _run_ledgered(
    invocation_context: InvocationContext,
    prepared_calls: Sequence[_P],
    execute: Callable[[list[_P]], Awaitable[Optional[Event]]],
) -> Optional[Event]:
  """Fans an admitted all-UI batch out over one `EventBatchEffects`."""
  from ...tools.tool_context import ToolContext
  from .ledger import EventBatchEffects

  call_ids = [call.function_call.id or '' for call in prepared_calls]
  effects = EventBatchEffects(
      call_ids, live_state=invocation_context.session.state
  )
  bound = [
      # `_P` is ADK's prepared-call dataclass, named structurally here.
      dataclasses.replace(  # type: ignore[type-var]
          call,
          tool_context=ToolContext(
              invocation_context,
              function_call_id=call_id,
              tool_confirmation=call.tool_context.tool_confirmation,
              event_actions=effects.child(call_id).event_actions(),
          ),
      )
      for call, call_id in zip(prepared_calls, call_ids)
  ]
  try:
    event = await execute(bound)
  except BaseException as failure:
    _reconcile_failure(invocation_context, failure, effects.freeze())
    raise
  frozen = effects.freeze()
  if event is not None:
    from ..sealing import batch_reconciliation

    # The merged deltas come from the frozen ledger alone: id order decides
    # sibling writes to one key, never the order the calls finished in.
    event.actions.state_delta = dict(frozen.state_delta)
    event.actions.artifact_delta = dict(frozen.artifact_delta)
    # If the append stage refuses the Event, it stores these on their own.
    batch_reconciliation.expect(event, frozen, frozen.calls)
  return event


def _reconcile_failure(
    invocation_context: InvocationContext,
    failure: BaseException,
    frozen: FrozenBatch,
) -> None:
  """Makes the failure path record the frozen batch's effects.

  A call that failed may have written before it failed; its effects stand
  (they are live already). ADK keeps the finished calls' responses as one
  Event for the flow to store before the error propagates; that Event's
  deltas become the frozen batch's. With no such Event and some effect, a
  response-free Event carrying only the frozen deltas is kept instead, so
  what stands is what is stored. Design: docs/decisions/issue21-batch.md.
  """
  if not frozen.state_delta and not frozen.artifact_delta:
    return
  from ...events.event import Event
  from ...events.event_actions import EventActions
  from ...flows.llm_flows.tools import _batch_executor
  from ..sealing import batch_reconciliation

  attribute = _batch_executor._KEPT_FUNCTION_RESPONSE_EVENT_ATTR
  kept = getattr(failure, attribute, None)
  if not isinstance(kept, Event):
    agent = invocation_context.agent
    kept = Event(
        invocation_id=invocation_context.invocation_id,
        author=agent.name if agent is not None else 'model',
        branch=invocation_context.branch,
        actions=EventActions(),
    )
    try:
      setattr(failure, attribute, kept)
    except AttributeError:
      # An exception that takes no attributes: nothing can be kept.
      return
  kept.actions.state_delta = dict(frozen.state_delta)
  kept.actions.artifact_delta = dict(frozen.artifact_delta)
  # A kept Event the append stage refuses is reconciled like a merged one.
  batch_reconciliation.expect(kept, frozen, frozen.calls)
