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

"""One View-originated `resources/read`, governed, on the View's hold.

`run_app_read` checks the requested URI against the View's resource policy
before anything is sent, drives the read's state-only rounds on the View's
own generation, and returns the terminal `ReadResourceResult` only after
`validate_read_response` has passed every returned item (policy, duplicate
canonical URIs, per-item and aggregate bytes, item count). It owns no
Session and appends no Event: the View channel does both. Decisions:
docs/decisions/issue23-read.md.

Example:

  result, uris = await run_app_read(
      AppReadRequest(
          operation_id='op-7', hold=hold, uri='ui://shop/assets/app.js',
          policy=profile.resource_policy.for_widget('ui://shop/view.html'),
          limits=ReadLimits.of(profile.limits),
          max_rounds=profile.limits.mrtr_max_rounds,
          max_seconds=profile.limits.mrtr_max_seconds),
      between_legs=barrier)
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
import dataclasses
import enum
import math
import time
from typing import Any
from typing import Final
from typing import Optional

from ...dependencies._mcp import McpError
from ...dependencies._mcp import types as mcp_types
from ..affinity.errors import GenerationInvalidatedError
from ..affinity.errors import HoldReleasedError
from ..affinity.errors import InputRequestRefusedError
from ..affinity.generations import GenerationHold
from ..affinity.generations import input_request_refusal
from ..affinity.rounds import drive_state_rounds
from ..affinity.rounds import MultiRoundError
from ..affinity.rounds import MultiRoundFailure
from ..affinity.rounds import state_kwargs
from ..profile.limits import HostLimits
from ..profile.serialization import revision_digest
from ..resources.policy import ResourceReadDenialReason
from ..resources.policy import ResourceReadDeniedError
from ..resources.policy import ResourceReadPolicy
from ..resources.uri import CanonicalUri
from .errors import OperationError
from .errors import OperationErrorReason

__all__ = [
    'APP_READ_METHOD',
    'AppReadRequest',
    'ReadLimits',
    'ReadRejection',
    'ReadResponseRejectedError',
    'run_app_read',
    'validate_read_response',
]

APP_READ_METHOD: Final = 'resources/read'
"""The method an app read runs (and names in its errors)."""

_REVISION_LENGTH = len('sha256:') + 16
_ASCII_SPACE = str.maketrans('', '', ' \t\n\r\f\v')

_ROUND_FAILURES: Final = {
    MultiRoundFailure.ROUNDS_EXCEEDED: (
        OperationErrorReason.MRTR_ROUNDS_EXCEEDED
    ),
    MultiRoundFailure.TIMEOUT: OperationErrorReason.MRTR_TIMEOUT,
    MultiRoundFailure.LEGACY_INTERMEDIATE: (
        OperationErrorReason.MRTR_INTERMEDIATE_REFUSED
    ),
    MultiRoundFailure.MALFORMED: OperationErrorReason.READ_RESPONSE_REJECTED,
}


def _positive_int(owner: str, name: str, value: object) -> None:
  if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
    raise ValueError(f'{owner}.{name} must be a positive int, not {value!r}')


@dataclasses.dataclass(frozen=True)
class ReadLimits:
  """The delivery limits one read's response is validated against.

  Attributes:
    max_item_bytes: Largest item: its text's UTF-8 bytes, or its blob's
      decoded bytes.
    max_total_bytes: Largest sum of every item's bytes.
    max_items: Most items.
  """

  max_item_bytes: int
  max_total_bytes: int
  max_items: int

  def __post_init__(self) -> None:
    for field in dataclasses.fields(self):
      _positive_int('ReadLimits', field.name, getattr(self, field.name))
    if self.max_item_bytes > self.max_total_bytes:
      raise ValueError('ReadLimits.max_item_bytes exceeds max_total_bytes')

  @classmethod
  def of(
      cls, limits: HostLimits, *, max_item_bytes: Optional[int] = None
  ) -> ReadLimits:
    """The read limits of a profile's delivery limits.

    Args:
      limits: The profile's limits; `delivery.max_response_bytes` bounds
        the total, `delivery.max_content_items` the item count.
      max_item_bytes: A smaller per-item bound; the total if None.

    Returns:
      The limits.
    """
    total = limits.delivery.max_response_bytes
    return cls(
        max_item_bytes=total if max_item_bytes is None else max_item_bytes,
        max_total_bytes=total,
        max_items=limits.delivery.max_content_items,
    )

  @property
  def revision(self) -> str:
    """A short digest of the three limits, `sha256:<16 hex>`.

    Part of a read's idempotency namespace: a retained read is never
    delivered under other limits.
    """
    return revision_digest(
        'app-read-limits-revision', dataclasses.asdict(self)
    )[:_REVISION_LENGTH]


@dataclasses.dataclass(frozen=True)
class AppReadRequest:
  """One View-originated `resources/read`, admitted by the channel.

  Attributes:
    operation_id: The operation's id (for errors and logs).
    hold: The View's hold on its connection generation; every leg runs on
      it, never elsewhere.
    uri: The URI as the View sent it; it is what the server is asked for.
    policy: The View's resource-read policy
      (`profile.resource_policy.for_widget(descriptor URI)`).
    limits: The response's delivery limits.
    max_rounds: Most legs of the read (`limits.mrtr_max_rounds`).
    max_seconds: Longest the whole read may take, every leg together
      (`limits.mrtr_max_seconds`).
  """

  operation_id: str
  hold: GenerationHold
  uri: str
  policy: ResourceReadPolicy
  limits: ReadLimits
  max_rounds: int
  max_seconds: float

  def __post_init__(self) -> None:
    _positive_int('AppReadRequest', 'max_rounds', self.max_rounds)
    seconds: object = self.max_seconds
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, (int, float))
        or not math.isfinite(seconds)
        or seconds <= 0
    ):
      raise ValueError(
          'AppReadRequest.max_seconds must be positive and finite, not'
          f' {seconds!r}'
      )


class ReadRejection(enum.Enum):
  """Which response-side rule a read's response broke."""

  OUT_OF_POLICY = 'out_of_policy'
  """An item's canonical URI is outside the View's resource policy."""

  INVALID_URI = 'invalid_uri'
  """An item's URI cannot be canonicalized."""

  DUPLICATE_URI = 'duplicate_uri'
  """Two items have one canonical URI (which to deliver is ambiguous)."""

  ITEM_TOO_LARGE = 'item_too_large'
  """An item is over `ReadLimits.max_item_bytes`."""

  TOTAL_TOO_LARGE = 'total_too_large'
  """The items together are over `ReadLimits.max_total_bytes`."""

  TOO_MANY_ITEMS = 'too_many_items'
  """More items than `ReadLimits.max_items`."""

  MALFORMED_ITEM = 'malformed_item'
  """An item has neither text nor a valid base64 blob."""

  NOT_TERMINAL = 'not_terminal'
  """The read ended in something other than a terminal
  `ReadResourceResult` (a malformed intermediate round included)."""


class ReadResponseRejectedError(OperationError):
  """A read's response failed response-side validation; nothing is delivered.

  Its reason is always `READ_RESPONSE_REJECTED`.

  Attributes:
    rejection: The rule the response broke.
    index: The first offending item's index, or None for the whole
      response (item count, not terminal).
  """

  def __init__(
      self, rejection: ReadRejection, message: str, index: Optional[int] = None
  ) -> None:
    self.rejection = rejection
    self.index = index
    where = '' if index is None else f'item {index}: '
    super().__init__(
        OperationErrorReason.READ_RESPONSE_REJECTED,
        f'{where}{rejection.value}: {message}',
    )


def _payload_bytes(item: Any, index: int) -> int:
  """An item's size: its text's UTF-8 bytes or its blob's decoded bytes."""
  text = getattr(item, 'text', None)
  if isinstance(text, str):
    try:
      return len(text.encode('utf-8'))
    except UnicodeEncodeError as error:
      raise ReadResponseRejectedError(
          ReadRejection.MALFORMED_ITEM, 'text is not valid Unicode', index
      ) from error
  blob = getattr(item, 'blob', None)
  if isinstance(blob, str):
    try:
      return len(base64.b64decode(blob.translate(_ASCII_SPACE), validate=True))
    except (binascii.Error, ValueError) as error:
      raise ReadResponseRejectedError(
          ReadRejection.MALFORMED_ITEM, 'blob is not base64', index
      ) from error
  raise ReadResponseRejectedError(
      ReadRejection.MALFORMED_ITEM, 'neither text nor blob', index
  )


def validate_read_response(
    contents: Sequence[Any], policy: ResourceReadPolicy, limits: ReadLimits
) -> tuple[CanonicalUri, ...]:
  """Validates every item of a read's response; one bad item rejects all.

  Items are checked in order: each one's canonical URI must pass the
  policy's matcher (a prefix-inclusive entry admits sub-resources) and be
  the only item with that canonical URI; its bytes must be within the
  per-item limit and the running total within the aggregate limit. The
  item count is checked first. Items are not altered.

  Args:
    contents: The response's `contents` (text and blob resource contents).
    policy: The View's resource-read policy.
    limits: The delivery limits.

  Returns:
    Each item's canonical URI, in item order.

  Raises:
    ReadResponseRejectedError: The first rule broken (`rejection`, and the
      item's `index`).
  """
  items = list(contents)
  if len(items) > limits.max_items:
    raise ReadResponseRejectedError(
        ReadRejection.TOO_MANY_ITEMS,
        f'{len(items)} items, at most {limits.max_items}',
    )
  seen: dict[CanonicalUri, int] = {}
  canonical: list[CanonicalUri] = []
  total = 0
  for index, item in enumerate(items):
    uri = getattr(item, 'uri', None)
    if not isinstance(uri, str):
      raise ReadResponseRejectedError(
          ReadRejection.MALFORMED_ITEM, 'no URI', index
      )
    try:
      checked = policy.check(uri)
    except ResourceReadDeniedError as error:
      rejection = (
          ReadRejection.INVALID_URI
          if error.reason is ResourceReadDenialReason.INVALID_URI
          else ReadRejection.OUT_OF_POLICY
      )
      raise ReadResponseRejectedError(rejection, str(error), index) from error
    if checked in seen:
      raise ReadResponseRejectedError(
          ReadRejection.DUPLICATE_URI,
          f'same canonical URI as item {seen[checked]}',
          index,
      )
    seen[checked] = index
    size = _payload_bytes(item, index)
    if size > limits.max_item_bytes:
      raise ReadResponseRejectedError(
          ReadRejection.ITEM_TOO_LARGE,
          f'{size} bytes, at most {limits.max_item_bytes}',
          index,
      )
    total += size
    if total > limits.max_total_bytes:
      raise ReadResponseRejectedError(
          ReadRejection.TOTAL_TOO_LARGE,
          f'over {limits.max_total_bytes} bytes in all',
          index,
      )
    canonical.append(checked)
  return tuple(canonical)


async def run_app_read(
    request: AppReadRequest,
    *,
    between_legs: Optional[Callable[[], Awaitable[None]]] = None,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[mcp_types.ReadResourceResult, tuple[CanonicalUri, ...]]:
  """Runs one governed View `resources/read` to a validated terminal result.

  Args:
    request: The read.
    between_legs: Awaited before every leg after the first (the channel's
      re-acquisition and post-queue barrier); what it raises ends the read
      unchanged (an affinity invalidation is mapped as below).
    clock: The monotonic clock the round driver measures with.

  Returns:
    The terminal result, as the server sent it (each item keeps its own
    `uri`), and each item's canonical URI.

  Raises:
    OperationError: `RESOURCE_POLICY_DENIED` (nothing was sent),
      `INPUT_REQUEST_REFUSED`, `VIEW_GENERATION_INVALIDATED`,
      `MRTR_ROUNDS_EXCEEDED`, `MRTR_TIMEOUT`, `MRTR_INTERMEDIATE_REFUSED`,
      or a `ReadResponseRejectedError` (`READ_RESPONSE_REJECTED`).
    McpError: The server answered with a JSON-RPC error (unchanged).
  """
  try:
    request.policy.check(request.uri)
  except ResourceReadDeniedError as error:
    raise OperationError(
        OperationErrorReason.RESOURCE_POLICY_DENIED,
        f'operation {request.operation_id}: {error}',
    ) from error
  hold = request.hold

  def leg(state: Optional[str]) -> Awaitable[Any]:
    return hold.read_resource(request.uri, **state_kwargs(state))

  try:
    result = await drive_state_rounds(
        leg,
        era=hold.generation.era,
        generation_id=hold.generation_id,
        method=APP_READ_METHOD,
        max_rounds=request.max_rounds,
        max_seconds=request.max_seconds,
        between_legs=between_legs,
        clock=clock,
    )
  except MultiRoundError as error:
    reason = _ROUND_FAILURES[error.failure]
    message = f'operation {request.operation_id}: {error}'
    if reason is OperationErrorReason.READ_RESPONSE_REJECTED:
      raise ReadResponseRejectedError(
          ReadRejection.NOT_TERMINAL, message
      ) from error
    raise OperationError(reason, message) from error
  except InputRequestRefusedError as error:
    raise _input_refused(request, error) from error
  except (GenerationInvalidatedError, HoldReleasedError) as error:
    raise OperationError(
        OperationErrorReason.VIEW_GENERATION_INVALIDATED,
        f'operation {request.operation_id}: {error}',
    ) from error
  except McpError as error:
    # A server that may not ask this client for input refuses the read
    # itself (either era): that is this read's input round, refused.
    refusal = input_request_refusal(error, hold.generation_id, APP_READ_METHOD)
    if refusal is None:
      raise
    raise _input_refused(request, refusal) from error
  if not isinstance(result, mcp_types.ReadResourceResult):
    raise ReadResponseRejectedError(
        ReadRejection.NOT_TERMINAL,
        f'operation {request.operation_id}: a {type(result).__name__}',
    )
  return result, validate_read_response(
      result.contents, request.policy, request.limits
  )


def _input_refused(
    request: AppReadRequest, error: InputRequestRefusedError
) -> OperationError:
  return OperationError(
      OperationErrorReason.INPUT_REQUEST_REFUSED,
      f'operation {request.operation_id}: {error}',
  )
