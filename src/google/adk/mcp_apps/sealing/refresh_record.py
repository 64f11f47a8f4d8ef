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


"""`RefreshInvocationRecord`: how a render-producing call could be refreshed.

Sealed with the result, it names exactly what ran, so cold replay can offer
a refresh or an explicit re-run. Design: docs/design/sealing.md.

Usage:

  record = RefreshInvocationRecord.from_bytes(envelope.refresh_record)
"""

from __future__ import annotations

import hashlib
import json
from typing import Any
from typing import Literal
from typing import Optional

from pydantic import BaseModel
from pydantic import ConfigDict

from ..canonical_json import canonicalize
from ..canonical_json import CanonicalJsonError
from ..canonical_json import Purpose
from .errors import SealingError
from .errors import SealingErrorReason

REFRESH_RECORD_VERSION = 1
"""The record format this host writes and reads."""


class RefreshInvocationRecord(BaseModel):
  """The sealed identity of one render-producing call.

  Attributes:
    server_id: The configured server's stable id.
    toolset_id: The configured toolset's stable id.
    tool_name: The tool's native (unprefixed) name.
    arguments: The call's arguments, as the tool received them.
    declaration_fingerprint: The fingerprint of the declaration the call was
      checked against (its schema, visibility and UI association).
    catalog_generation: The connection generation the declaration was
      listed on.
    binding_revision: The descriptor's binding revision.
    classification_source: The replay-classification authority's source.
    classification_revision: Its revision when the call ran.
    replay_class: The call's classification then (`ReplayClass` value).
    immediate_caller: Who called the tool: `model` (an initial call) or
      `app` (a View's call); the tool context's vocabulary.
    correlation: The descriptor's correlation, in wire form.
  """

  model_config = ConfigDict(extra='forbid', frozen=True, strict=True)

  server_id: str
  toolset_id: str
  tool_name: str
  arguments: dict[str, Any]
  declaration_fingerprint: str
  catalog_generation: Optional[str]
  binding_revision: str
  classification_source: str
  classification_revision: str
  replay_class: str
  immediate_caller: Literal['model', 'app', 'host']
  correlation: dict[str, Any]

  def to_value(self) -> dict[str, Any]:
    """The record as a JSON value, with its format version."""
    value: dict[str, Any] = self.model_dump(mode='json')
    value['version'] = REFRESH_RECORD_VERSION
    return value

  def to_bytes(self, *, max_bytes: int, max_depth: int) -> bytes:
    """ADK Canonical JSON bytes of the record, under the sealing limits."""
    return canonicalize(
        self.to_value(),
        purpose=Purpose.SEALED_RESULT,
        max_bytes=max_bytes,
        max_depth=max_depth,
    )

  def arguments_digest(self) -> str:
    """A digest of the canonical arguments (for logs and comparisons)."""
    return hashlib.sha256(
        canonicalize(self.arguments, purpose=Purpose.REPLAY_IDENTITY)
    ).hexdigest()

  @classmethod
  def from_bytes(cls, data: Optional[bytes]) -> RefreshInvocationRecord:
    """Parses sealed record bytes.

    Raises:
      SealingError: (`REFRESH_RECORD_CORRUPT`) Missing, not canonical JSON of this
        format, or a field is missing or mistyped.
    """
    if data is None:
      raise SealingError(
          SealingErrorReason.REFRESH_RECORD_CORRUPT,
          'The envelope holds no refresh record',
      )
    try:
      value = json.loads(data.decode('utf-8'))
      # Re-encoding must give the very bytes: an edit that still parses is
      # corruption too.
      if canonicalize(value, purpose=Purpose.SEALED_RESULT) != data:
        raise ValueError('not canonical')
      if value.pop('version', None) != REFRESH_RECORD_VERSION:
        raise ValueError('unknown version')
      return cls.model_validate(value)
    except (
        CanonicalJsonError,
        AttributeError,
        TypeError,
        UnicodeDecodeError,
        ValueError,
    ) as e:
      # pydantic's ValidationError is a ValueError.
      raise SealingError(
          SealingErrorReason.REFRESH_RECORD_CORRUPT,
          f'The refresh record is corrupt ({type(e).__name__})',
      ) from e
