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

"""Multi-round requests (MRTR): state-only rounds on one bound generation.

A 2026-07-28 server may answer a `tools/call` or `resources/read` with an
`InputRequiredResult`. On an app-safe generation ADK fulfils no input
request, so the only rounds it drives are state-only ones: each echoes the
server's `requestState` exactly, as a fresh request, within the profile's
round and time caps, until a terminal result. The caller's operation stays
one operation; `between_legs` lets it re-check its admission before each
further leg. A legacy-era server is single-round: an intermediate result
there is refused.

Example:

  result = await drive_state_rounds(
      lambda state: hold.read_resource(uri, allow_input_required=True,
                                       **state_kwargs(state)),
      era=hold.generation.era, generation_id=hold.generation_id,
      method='resources/read', max_rounds=8, max_seconds=120.0)
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
import enum
import time
from typing import Any
from typing import Optional

import anyio

from ..errors import McpAppsError
from .errors import InputRequestRefusedError
from .generations import ConnectionEra
from .generations import input_requests_of

Leg = Callable[[Optional[str]], Awaitable[Any]]
"""Issues one leg: the `requestState` to echo (None on the first leg)."""


class MultiRoundFailure(enum.Enum):
  """Why a multi-round request ended without a terminal result."""

  ROUNDS_EXCEEDED = 'rounds_exceeded'
  """More legs than the round cap."""

  TIMEOUT = 'timeout'
  """The legs together took longer than the time cap."""

  LEGACY_INTERMEDIATE = 'legacy_intermediate'
  """A legacy-era server sent an intermediate result."""

  MALFORMED = 'malformed'
  """An intermediate result carried neither input requests nor state."""


class MultiRoundError(McpAppsError):
  """A multi-round request failed closed; no result is delivered.

  Attributes:
    failure: Why.
    method: `tools/call` or `resources/read`.
    legs: How many legs were issued.
  """

  def __init__(self, failure: MultiRoundFailure, method: str, legs: int):
    self.failure = failure
    self.method = method
    self.legs = legs
    super().__init__(f'{method} failed after {legs} leg(s): {failure.value}')


def state_kwargs(state: Optional[str]) -> dict[str, Any]:
  """The SDK keywords of one leg: input rounds allowed, the state echoed."""
  kwargs: dict[str, Any] = {'allow_input_required': True}
  if state is not None:
    kwargs['request_state'] = state
  return kwargs


def is_terminal(result: Any) -> bool:
  """Whether `result` is a terminal (complete) result."""
  return getattr(result, 'result_type', None) in (None, 'complete')


async def drive_state_rounds(
    leg: Leg,
    *,
    era: ConnectionEra,
    generation_id: str,
    method: str,
    max_rounds: int,
    max_seconds: float,
    between_legs: Optional[Callable[[], Awaitable[None]]] = None,
    clock: Callable[[], float] = time.monotonic,
) -> Any:
  """Drives one request's state-only rounds to its terminal result.

  Args:
    leg: Issues one leg; each call is a fresh request on the generation.
    era: The generation's era; a legacy one is single-round.
    generation_id: For errors.
    method: For errors.
    max_rounds: Most legs (the first included).
    max_seconds: Longest all legs together may take.
    between_legs: Awaited before every leg after the first (the caller's
      admission re-check); what it raises ends the request.
    clock: The monotonic clock.

  Returns:
    The terminal result, as the SDK returned it.

  Raises:
    InputRequestRefusedError: A round asked for sampling, elicitation or
      roots (app-safe paths fulfil none).
    MultiRoundError: Over a cap, an intermediate result on the legacy era,
      or a malformed intermediate result.
  """
  deadline = clock() + max_seconds
  state: Optional[str] = None
  for legs in range(1, max_rounds + 1):
    if legs > 1 and between_legs is not None:
      await between_legs()
    remaining = deadline - clock()
    if remaining <= 0:
      raise MultiRoundError(MultiRoundFailure.TIMEOUT, method, legs - 1)
    try:
      with anyio.fail_after(remaining):
        result = await leg(state)
    except TimeoutError as error:
      raise MultiRoundError(MultiRoundFailure.TIMEOUT, method, legs) from error
    if is_terminal(result):
      return result
    kinds = input_requests_of(result)
    if kinds is not None:
      raise InputRequestRefusedError(generation_id, kinds, method)
    if era is ConnectionEra.LEGACY:
      raise MultiRoundError(MultiRoundFailure.LEGACY_INTERMEDIATE, method, legs)
    state = getattr(result, 'request_state', None)
    if not isinstance(state, str) or not state:
      raise MultiRoundError(MultiRoundFailure.MALFORMED, method, legs)
  raise MultiRoundError(MultiRoundFailure.ROUNDS_EXCEEDED, method, max_rounds)
