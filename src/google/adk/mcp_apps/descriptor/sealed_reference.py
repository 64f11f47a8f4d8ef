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


"""The public reference to a sealed result: an opaque locator, nothing more.

A profile-bound UI result is sealed into the host's `SealedResultStore`; what
the Event keeps is this reference, `{recordId, schemaVersion}` on the wire.
It carries no result bytes, no content digest and no grant: resolving it
takes the matching Session scope and ADK's gated resolver. This module only
imports pydantic because the core `Event` model declares a field of its type.
"""

from __future__ import annotations

from pydantic import alias_generators
from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field

SEALED_REFERENCE_SCHEMA_VERSION = 1
"""The only reference schema version this host writes and reads."""


class SealedResultReference(BaseModel):
  """`sealedResultRef`: where a sealed result is, not what it is.

  Attributes:
    record_id: The store's random, opaque record id (>= 128 bits).
    schema_version: The reference schema version.
  """

  model_config = ConfigDict(
      extra='forbid',
      frozen=True,
      alias_generator=alias_generators.to_camel,
      populate_by_name=True,
  )

  record_id: str = Field(min_length=1)
  schema_version: int = SEALED_REFERENCE_SCHEMA_VERSION
