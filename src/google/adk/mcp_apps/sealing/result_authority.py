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


"""The single result authority of UI calls: approve, merge, re-validate.

A profile-bound UI call leaves a `ResultCandidate` (its hidden fields and
immutable correlation) with its pending seal. When the Event reporting the
call is appended, after every callback and `on_event` had its say,
`approve_event` reads the approved public fields from the Event's own
FunctionResponse, merges them with the call's hidden fields, re-validates
the merged `CallToolResult` and reseals it. Any candidate's failure refuses
the whole Event before a single record is written. Design:
docs/design/sealing.md; readings: docs/decisions/issue21-results.md.

Usage:

  seals = approve_event(event, seals)  # raises SealingError: refuse all
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import json
from typing import Any
from typing import Mapping
from typing import Optional

import jsonschema
from pydantic import TypeAdapter
from pydantic import ValidationError

from ...events.event import Event
from ..canonical_json import canonicalize
from ..canonical_json import CanonicalJsonError
from ..canonical_json import Purpose
from ..contracts.sealed_result_store import SealedEnvelope
from ..descriptor.reference_validation import mcp_widgets
from ..descriptor.widget_descriptor import McpAppWidgetDescriptor
from ..descriptor.widget_descriptor import WidgetCorrelation
from .errors import SealingError
from .errors import SealingErrorReason

PUBLIC_KEYS: dict[str, str] = {
    'content': 'content',
    'isError': 'isError',
    'is_error': 'isError',
    'resultType': 'resultType',
    'result_type': 'resultType',
}
"""Approved public keys of a FunctionResponse, by their wire spelling."""

HIDDEN_KEYS: tuple[str, ...] = ('structuredContent', '_meta')
"""The wire keys only the call's own candidate supplies."""

TERMINAL_RESULT_TYPES: frozenset[str] = frozenset({'complete'})
"""The `resultType` values a terminal tool result may carry."""


@functools.cache
def _block_adapter() -> TypeAdapter[Any]:
  # The MCP SDK is an extra: imported on first use, so a core install (no
  # `mcp`) can still run the append stage, which never gets here there.
  from ...dependencies._mcp import types as mcp_types

  return TypeAdapter(mcp_types.ContentBlock)


class ConnectionEra(enum.Enum):
  """The protocol era the candidate's connection negotiated."""

  LEGACY = 'legacy'
  MODERN = 'modern'


@dataclasses.dataclass(frozen=True)
class ResultCandidate:
  """One UI call's private candidate, keyed by its immutable correlation.

  Attributes:
    correlation: The call's correlation (invocation, function-call id).
    function_name: The function name the model called.
    hidden: Deep copies of the server's `structuredContent` and `_meta`.
    era: The era of the connection that answered.
    max_bytes: The profile's sealing size limit.
    max_depth: The profile's sealing depth limit.
  """

  correlation: WidgetCorrelation
  function_name: str
  hidden: Mapping[str, Any] = dataclasses.field(repr=False)
  era: ConnectionEra
  max_bytes: int
  max_depth: int

  @property
  def function_call_id(self) -> str:
    return self.correlation.function_call_id


def candidate_of(
    full_result: Mapping[str, Any],
    *,
    correlation: WidgetCorrelation,
    function_name: str,
    era: ConnectionEra,
    max_bytes: int,
    max_depth: int,
) -> ResultCandidate:
  """The candidate of a server's full result (wire form); hidden fields are
  deep-copied, so nothing the caller holds can change them later."""
  hidden = {
      key: copy.deepcopy(full_result[key])
      for key in HIDDEN_KEYS
      if key in full_result
  }
  return ResultCandidate(
      correlation=correlation,
      function_name=function_name,
      hidden=hidden,
      era=era,
      max_bytes=max_bytes,
      max_depth=max_depth,
  )


def _refuse(
    reason: SealingErrorReason, candidate: ResultCandidate, what: str
) -> SealingError:
  return _refuse_call(reason, candidate.function_call_id, what)


def _refuse_call(
    reason: SealingErrorReason, function_call_id: str, what: str
) -> SealingError:
  return SealingError(
      reason,
      f'The result of UI call {function_call_id!r} is refused: {what}',
      function_call_id=function_call_id,
  )


def _approved_public(
    event: Event, candidate: ResultCandidate
) -> Mapping[str, Any]:
  """The call's one FunctionResponse, checked against its correlation."""
  call_id = candidate.function_call_id
  parts = event.content.parts if event.content and event.content.parts else []
  matches = [
      part.function_response
      for part in parts
      if part.function_response is not None
      and part.function_response.id == call_id
  ]
  corr = SealingErrorReason.RESULT_CORRELATION
  if not matches:
    raise _refuse(
        corr,
        candidate,
        'no FunctionResponse carries its id (removed, or its id changed)',
    )
  if len(matches) > 1:
    raise _refuse(corr, candidate, 'its FunctionResponse was duplicated')
  (response,) = matches
  if response.name != candidate.function_name:
    raise _refuse(corr, candidate, 'its function name was changed')
  if event.invocation_id != candidate.correlation.invocation_id:
    raise _refuse(corr, candidate, 'it was moved to another invocation')
  widget = mcp_widgets(event).get(call_id)
  if (
      isinstance(widget, McpAppWidgetDescriptor)
      and widget.correlation != candidate.correlation
  ):
    raise _refuse(corr, candidate, "its descriptor's correlation changed")
  approved = response.response
  if not isinstance(approved, Mapping):
    raise _refuse(
        SealingErrorReason.RESULT_INVALID, candidate, 'it has no result'
    )
  return approved


def merged_result(
    approved: Mapping[str, Any], candidate: ResultCandidate
) -> dict[str, Any]:
  """The approved public fields over the call's own hidden fields.

  Keys of `approved` other than the public ones are not part of the
  authority (the model projection drops them too).
  """
  merged: dict[str, Any] = {}
  for key, value in approved.items():
    wire = PUBLIC_KEYS.get(key)
    if wire is not None:
      merged[wire] = copy.deepcopy(value)
  for key, value in candidate.hidden.items():
    merged[key] = copy.deepcopy(value)
  return merged


def _meaningful(block: Mapping[str, Any]) -> bool:
  if block.get('type') == 'text':
    text = block.get('text')
    return isinstance(text, str) and bool(text.strip())
  return True


def validate_merged(
    merged: Mapping[str, Any], candidate: ResultCandidate
) -> None:
  """Re-validates a merged result as a terminal result of the call's era.

  Raises:
    SealingError: As `validate_result`.
  """
  validate_result(
      merged, function_call_id=candidate.function_call_id, era=candidate.era
  )


def validate_result(
    result: Mapping[str, Any],
    *,
    function_call_id: str,
    era: ConnectionEra = ConnectionEra.LEGACY,
) -> None:
  """Validates a complete `CallToolResult` (wire spelling) as terminal.

  Raises:
    SealingError: (`RESULT_INVALID`) Missing or empty `content`, no
      meaningful block, an invalid block, a non-boolean `isError`, or a
      non-terminal `resultType`.
  """
  invalid = SealingErrorReason.RESULT_INVALID

  def refuse(what: str) -> SealingError:
    return _refuse_call(invalid, function_call_id, what)

  content = result.get('content')
  if not isinstance(content, list) or not content:
    raise refuse('its content is missing or empty')
  for index, block in enumerate(content):
    if not isinstance(block, Mapping):
      raise refuse(f'content block {index} is not an object')
    try:
      _block_adapter().validate_python(dict(block))
    except ValidationError as e:
      raise refuse(
          f'content block {index} is not a valid content block'
          f' ({e.error_count()} errors)'
      ) from e
  if not any(_meaningful(block) for block in content):
    raise refuse('its content has no meaningful block')
  if 'isError' in result and not isinstance(result['isError'], bool):
    raise refuse('its isError is not a boolean')
  if 'resultType' in result:
    result_type = result['resultType']
    if result_type not in TERMINAL_RESULT_TYPES:
      raise refuse(f'its resultType {result_type!r} is not terminal')
  from ...dependencies._mcp import types as mcp_types

  try:
    mcp_types.CallToolResult.model_validate(dict(result))
  except ValidationError as e:
    raise refuse(
        f'it is not a CallToolResult of the {era.value} era'
        f' ({e.error_count()} errors)'
    ) from e


def wire_result(value: Mapping[str, Any]) -> dict[str, Any]:
  """`value` with its public keys in wire spelling (`is_error` ->
  `isError`), other keys as they are."""
  return {PUBLIC_KEYS.get(key, key): item for key, item in value.items()}


def short_circuit_result(
    value: Any,
    *,
    function_call_id: str,
    output_schema: Optional[Mapping[str, Any]] = None,
) -> dict[str, Any]:
  """Converts and validates a `before_tool_callback` short-circuit.

  A mapping with `content` is a complete `CallToolResult` and is validated
  as one. Any other value becomes one meaningful JSON text block; with an
  `output_schema`, the value must validate against it and is added as
  `structuredContent` (never replacing `content`).

  Returns:
    The complete result in wire spelling.

  Raises:
    SealingError: (`RESULT_INVALID`) The short-circuit does not validate.
  """
  if isinstance(value, Mapping) and 'content' in value:
    result = wire_result(value)
  else:
    try:
      text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError) as e:
      raise _refuse_call(
          SealingErrorReason.RESULT_INVALID,
          function_call_id,
          'the short-circuit value is not JSON',
      ) from e
    result = {'content': [{'type': 'text', 'text': text}], 'isError': False}
    if output_schema is not None:
      result['structuredContent'] = value
  if output_schema is not None:
    try:
      jsonschema.validate(result.get('structuredContent'), output_schema)
    except jsonschema.ValidationError as e:
      raise _refuse_call(
          SealingErrorReason.RESULT_INVALID,
          function_call_id,
          f'its structuredContent violates the outputSchema: {e.message}',
      ) from e
  validate_result(result, function_call_id=function_call_id)
  return result


def released_result(event: Event, candidate: ResultCandidate) -> dict[str, Any]:
  """The merged result a stored Event releases for the candidate's call.

  The same merge `approved_envelope` seals: the Event's approved public
  fields over the call's own hidden fields, re-validated. An
  app-originated call answers its View with it, so wire and seal agree.

  Raises:
    SealingError: (`RESULT_CORRELATION`, `RESULT_INVALID`) As
      `approved_envelope`.
  """
  merged = merged_result(_approved_public(event, candidate), candidate)
  validate_merged(merged, candidate)
  return merged


def approved_envelope(
    event: Event, candidate: ResultCandidate, envelope: SealedEnvelope
) -> SealedEnvelope:
  """The call's envelope resealed from its approved, merged result.

  Raises:
    SealingError: (`RESULT_CORRELATION`, `RESULT_INVALID`,
      `LIMIT_EXCEEDED`) The candidate is rejected.
  """
  merged = merged_result(_approved_public(event, candidate), candidate)
  validate_merged(merged, candidate)
  try:
    sealed = canonicalize(
        merged,
        purpose=Purpose.SEALED_RESULT,
        max_bytes=candidate.max_bytes,
        max_depth=candidate.max_depth,
    )
  except CanonicalJsonError as e:
    raise _refuse(
        SealingErrorReason.LIMIT_EXCEEDED, candidate, f'cannot be sealed: {e}'
    ) from e
  return SealedEnvelope(
      sealed_result=sealed, refresh_record=envelope.refresh_record
  )
