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


"""The profile fingerprint and `binding_revision`.

The fingerprint subset is the part of a host profile whose change must
invalidate what was derived from it (clients, pool keys, discovery, the
`binding_revision` on every persisted descriptor). `binding_revision` is
`v1:<key_id>:<hex>`: HMAC-SHA256, under the key provider's active key, of
the subset in a `binding-revision` canonical JSON envelope. What is in the
subset and why is in docs/design/profile.md.

Example:

  revision = binding_revision(profile)
  assert verify_binding_revision(profile, revision)
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from .. import canonical_json
from ..contracts.key_provider import BindingKeyUnavailableError
from .errors import HostProfileError
from .errors import ProfileErrorReason
from .host_profile import McpAppsHostProfile

BINDING_REVISION_PURPOSE = canonical_json.Purpose.BINDING_REVISION.value
"""The purpose tag of the fingerprint's serialization."""

BINDING_REVISION_VERSION = 'v1'
"""The digest version written as the first part of a binding revision."""


def _store_identity(profile: McpAppsHostProfile, field: str) -> dict[str, str]:
  store = getattr(profile, field)
  if store is None:
    raise HostProfileError(
        ProfileErrorReason.NO_BINDING_REVISION, f'The profile has no {field}'
    )
  return {'namespace': store.namespace, 'revision': store.revision}


def fingerprint_subset(profile: McpAppsHostProfile) -> dict[str, Any]:
  """The profile's fingerprint subset as one JSON value.

  Args:
    profile: The profile.

  Returns:
    A fresh JSON-serializable dict.

  Raises:
    HostProfileError: `NO_BINDING_REVISION` if a store or the
      classification authority the subset names is missing.
  """
  authority = profile.replay_classification
  if authority is None:
    raise HostProfileError(
        ProfileErrorReason.NO_BINDING_REVISION,
        'The profile has no replay_classification',
    )
  return {
      'extension': profile.extension_settings.to_wire(),
      'host_capabilities': profile.host_capabilities.to_wire(),
      'callback_policy': profile.callback_policy.fingerprint_value(),
      'connection_affinity': profile.connection_affinity.fingerprint_value(),
      'resource_policy_revision': profile.resource_policy.revision,
      'limits_revision': profile.limits.revision,
      'sealed_result_store': _store_identity(profile, 'sealed_result_store'),
      'session_lifecycle_store': _store_identity(
          profile, 'session_lifecycle_store'
      ),
      'replay_classification': {
          'source': authority.source,
          'revision': authority.revision,
      },
  }


def fingerprint_bytes(profile: McpAppsHostProfile) -> bytes:
  """The canonical fingerprint subset: the HMAC input of the revision."""
  return canonical_json.envelope(
      canonical_json.Purpose.BINDING_REVISION, fingerprint_subset(profile)
  )


def _digest(secret: bytes, message: bytes) -> str:
  return hmac.new(secret, message, hashlib.sha256).hexdigest()


def binding_revision(profile: McpAppsHostProfile) -> str:
  """The keyed, versioned digest of the profile's fingerprint subset.

  Args:
    profile: The profile.

  Returns:
    `v1:<key_id>:<64 lowercase hex digits>`, signed with the key provider's
    active key.

  Raises:
    HostProfileError: `NO_BINDING_REVISION` if the fingerprint subset is
      incomplete.
    BindingKeyUnavailableError: If the profile has no key provider, or it
      has no active key.
  """
  if profile.key_provider is None:
    raise BindingKeyUnavailableError(None, 'the profile has no key provider')
  message = fingerprint_bytes(profile)
  key = profile.key_provider.active_key()
  return (
      f'{BINDING_REVISION_VERSION}:{key.key_id}:{_digest(key.secret, message)}'
  )


def verify_binding_revision(profile: McpAppsHostProfile, revision: str) -> bool:
  """Whether `revision` is the profile's binding revision under its key.

  The key named in `revision` is looked up among the provider's retained
  keys, so revisions signed before a rotation verify while the old key is
  retained.

  Args:
    profile: The current profile.
    revision: A binding revision read from a persisted descriptor.

  Returns:
    True iff `revision` is well-formed, its key is retained and its digest
    matches the profile's current fingerprint subset.

  Raises:
    HostProfileError: `NO_BINDING_REVISION` if the fingerprint subset is
      incomplete.
    BindingKeyUnavailableError: If the named key is missing or retired, or
      the profile has no key provider; callers fail closed.
  """
  parts = revision.split(':') if isinstance(revision, str) else []
  if len(parts) != 3 or parts[0] != BINDING_REVISION_VERSION:
    return False
  _, key_id, digest = parts
  if profile.key_provider is None:
    raise BindingKeyUnavailableError(key_id, 'the profile has no key provider')
  key = profile.key_provider.key(key_id)
  expected = _digest(key.secret, fingerprint_bytes(profile))
  return hmac.compare_digest(expected, digest)
