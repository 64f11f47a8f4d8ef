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


"""The deterministic serialization behind the profile's own revisions.

The limits and resource-policy revisions are unkeyed digests of JSON values
(sorted-key compact UTF-8 JSON in a purpose-tagged envelope); for their
plain string, integer and boolean values this equals ADK Canonical JSON v1.
The keyed `binding_revision` uses canonical JSON directly (`fingerprint`).

Example:

  revision = revision_digest('host-limits', {'max_pages': 8})
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

ENVELOPE_VERSION = 1
"""The version of the envelope layout written by `serialize`."""


def serialize(purpose: str, value: Any) -> bytes:
  """Serializes `value` deterministically under a purpose tag.

  Args:
    purpose: The purpose tag, e.g. `binding-revision`.
    value: A JSON value: dicts with string keys, lists, strings, bools,
      None, ints and finite floats.

  Returns:
    The UTF-8 bytes of `{"purpose": ..., "v": 1, "value": ...}`, sorted keys,
    no whitespace.

  Raises:
    ValueError: If `value` holds a non-finite float.
    TypeError: If `value` holds a type JSON cannot express.
  """
  envelope = {'purpose': purpose, 'v': ENVELOPE_VERSION, 'value': value}
  return json.dumps(
      envelope,
      sort_keys=True,
      separators=(',', ':'),
      ensure_ascii=False,
      allow_nan=False,
  ).encode('utf-8')


def revision_digest(purpose: str, value: Any) -> str:
  """An unkeyed revision label, `sha256:<hex>`, of `serialize(...)`."""
  return 'sha256:' + hashlib.sha256(serialize(purpose, value)).hexdigest()
