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


"""The `BindingRevisionKeyProvider` deployment contract: the binding key.

Every persisted widget descriptor carries a `binding_revision`: a keyed,
versioned digest of the host profile's fingerprint subset, computed under
the provider's active key and naming that key's id. The active key must
survive a restart and be shared by sticky-compatible workers, or descriptors
written before the restart stop verifying. Rotation is a window in which the
old key still verifies while the new one signs; a lost or retired key fails
closed (read-only render).

`binding_revision` is computed synchronously, so the provider answers from
memory; a deployment that keeps keys in a KMS refreshes them out of band.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Optional
from typing import Protocol
from typing import runtime_checkable

from .errors import ContractError

_KEY_ID = re.compile(r'[A-Za-z0-9._-]{1,128}')
MIN_KEY_BYTES = 32
"""The shortest accepted secret: HMAC-SHA256 wants at least 256 bits."""


@dataclasses.dataclass(frozen=True, repr=False)
class BindingKey:
  """One binding-revision key.

  Attributes:
    key_id: A stable id, 1-128 characters of `[A-Za-z0-9._-]`; it is written
      into every binding revision, so it must not be secret.
    secret: The HMAC key, at least 32 bytes. Never in `repr`.
  """

  key_id: str
  secret: bytes

  def __post_init__(self) -> None:
    if not isinstance(self.key_id, str) or not _KEY_ID.fullmatch(self.key_id):
      raise ValueError(
          'BindingKey.key_id must be 1-128 characters of [A-Za-z0-9._-]'
      )
    if not isinstance(self.secret, bytes) or len(self.secret) < MIN_KEY_BYTES:
      raise ValueError(
          f'BindingKey.secret must be at least {MIN_KEY_BYTES} bytes'
      )

  def __repr__(self) -> str:
    return f'BindingKey(key_id={self.key_id!r}, secret=<redacted>)'


class BindingKeyUnavailableError(ContractError):
  """A binding key is missing, retired or could not be loaded.

  Attributes:
    key_id: The key asked for, or None for the active key.
  """

  def __init__(self, key_id: Optional[str], detail: str = '') -> None:
    self.key_id = key_id
    what = 'active binding key' if key_id is None else f'binding key {key_id!r}'
    message = f'The {what} is unavailable'
    super().__init__(f'{message} ({detail})' if detail else message)


@runtime_checkable
class BindingRevisionKeyProvider(Protocol):
  """Supplies the key that signs binding revisions, and retained keys.

  ADK calls `active_key` whenever it computes a binding revision (binding,
  descriptor emission) and during readiness, and `key` when it verifies a
  persisted descriptor.
  """

  def active_key(self) -> BindingKey:
    """The key new binding revisions are signed with.

    Raises:
      BindingKeyUnavailableError: No active key is loaded.
    """
    ...

  def key(self, key_id: str) -> BindingKey:
    """A key that still verifies: the active one or one in rotation.

    Raises:
      BindingKeyUnavailableError: The key is unknown or retired.
    """
    ...
