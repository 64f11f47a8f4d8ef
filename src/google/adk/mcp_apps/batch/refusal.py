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

"""The Event that answers a refused batch: one error response per call.

A batch the core refuses before any of it runs (a mixed UI/non-UI batch
under a bound profile, or one whose admission failed) is still answered in
full, so every provider-side call correlation holds and the model is asked
again through the ordinary function-response flow. The Event is
core-owned: the Runner stores it exactly as built, with no event callback.

Usage:

  return refusal_event(invocation_context, function_calls, error)
"""

from __future__ import annotations

from typing import Sequence
from typing import TYPE_CHECKING

from google.genai import types

from ...events.event import Event
from ..event_policy import core_owned
from .errors import BatchError
from .errors import BatchErrorReason

if TYPE_CHECKING:
  from ...agents.invocation_context import InvocationContext

MIXED_BATCH_MESSAGE = (
    'None of these tool calls ran: MCP App tools (tools that show a user'
    ' interface) cannot run in parallel with other tools. Call these tools'
    ' one after another, each in its own turn.'
)
"""What every call of a mixed batch is answered with."""

REFUSED_BATCH_MESSAGE = (
    'None of these tool calls ran: {detail}. The tool list has been'
    ' refreshed; check the tools you can call and call again.'
)
"""What every call of a batch whose admission failed is answered with."""


def refusal_message(error: BatchError) -> str:
  """The text the model reads for a refused batch."""
  if error.reason is BatchErrorReason.MIXED_BATCH:
    return MIXED_BATCH_MESSAGE
  return REFUSED_BATCH_MESSAGE.format(detail=str(error).rstrip('.'))


def refusal_event(
    invocation_context: InvocationContext,
    function_calls: Sequence[types.FunctionCall],
    error: BatchError,
) -> Event:
  """Builds and claims the core-owned Event that answers a refused batch.

  Args:
    invocation_context: The invocation the batch belongs to.
    function_calls: Every call of the batch, in the model's order (ADK has
      filled in missing ids by then).
    error: Why the batch was refused.

  Returns:
    The Event: one error `FunctionResponse` per call, each with the call's
    id and name, in the same order; `response` is
    `{"error": <text>, "reason": <BatchErrorReason value>}`.
  """
  message = refusal_message(error)
  parts = [
      types.Part(
          function_response=types.FunctionResponse(
              id=call.id,
              name=call.name,
              response={'error': message, 'reason': error.reason.value},
          )
      )
      for call in function_calls
  ]
  agent = invocation_context.agent
  assert agent is not None  # A batch runs inside an agent's turn.
  event = Event(
      invocation_id=invocation_context.invocation_id,
      author=agent.name,
      branch=invocation_context.branch,
      content=types.Content(role='user', parts=parts),
  )
  return core_owned.claim(event)
