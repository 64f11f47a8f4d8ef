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


"""The host profile's callback, connection-affinity and resource policies.

`CallbackPolicy` selects the MCP callbacks app-safe connections get (no
input-request callbacks in v1); `ConnectionAffinityPolicy` keys app-safe
connection generations by security domain and, by default, Session
incarnation; `ResourcePolicySettings` holds the resource-read entries. All
are immutable and enter the binding fingerprint. Notes:
docs/design/profile.md.

Example:

  affinity = ConnectionAffinityPolicy(idle_eviction_seconds=300)
  resources = ResourcePolicySettings([ResourcePolicyEntry.prefix('ui://a/')])
"""

from __future__ import annotations

import dataclasses
import enum
import math
from typing import Any
from typing import Iterable
from typing import Optional
from typing import Union

from ..errors import McpAppsError
from ..resources import CanonicalUri
from ..resources import DEFAULT_URI_CANONICALIZER
from ..resources import ResourcePolicyEntry
from ..resources import ResourceReadPolicy
from ..resources import UriCanonicalizer
from .errors import HostProfileError
from .errors import ProfileErrorReason
from .serialization import revision_digest


def _policy_error(message: str) -> HostProfileError:
  return HostProfileError(ProfileErrorReason.INVALID_POLICY, message)


class AppSafeInputCallbacks(enum.Enum):
  """Which MCP input-request callbacks app-safe connections get."""

  NONE = 'none'
  """Sampling, elicitation and roots are all absent (v1)."""


class AppPathProgress(enum.Enum):
  """How progress callbacks behave on direct app paths."""

  NOTIFICATION_ONLY = 'notification_only'
  """Delivered with a read-only context; mutation fails closed (v1)."""

  DISABLED = 'disabled'
  """Not delivered on app paths at all (a narrowing)."""


@dataclasses.dataclass(frozen=True)
class CallbackPolicy:
  """The profile's selection in the governed MCP-callback matrix.

  Model-originated calls of non-UI tools keep the toolset's callbacks and
  are not governed by this policy.

  Attributes:
    app_safe_input_callbacks: The input-request callbacks of app-safe
      connections; only `NONE` exists in v1.
    app_path_progress: Progress delivery on direct app paths.
  """

  app_safe_input_callbacks: AppSafeInputCallbacks = AppSafeInputCallbacks.NONE
  app_path_progress: AppPathProgress = AppPathProgress.NOTIFICATION_ONLY

  def __post_init__(self) -> None:
    if not isinstance(self.app_safe_input_callbacks, AppSafeInputCallbacks):
      raise _policy_error('app_safe_input_callbacks must be NONE in v1')
    if not isinstance(self.app_path_progress, AppPathProgress):
      raise _policy_error('app_path_progress must be an AppPathProgress')

  def fingerprint_value(self) -> dict[str, Any]:
    """The JSON value this policy contributes to the fingerprint."""
    return {
        'app_path_progress': self.app_path_progress.value,
        'app_safe_input_callbacks': self.app_safe_input_callbacks.value,
    }


@dataclasses.dataclass(frozen=True)
class CrossSessionSharing:
  """Opt-in sharing of one principal's app-safe generation across Sessions.

  Attributes:
    server_handle_contract: The name of the server-handle contract the
      servers honour (server state travels in explicit handles, not in the
      connection). Carried on the generation and checked at admission.
  """

  server_handle_contract: str

  def __post_init__(self) -> None:
    if (
        not isinstance(self.server_handle_contract, str)
        or not self.server_handle_contract.strip()
    ):
      raise _policy_error(
          'Cross-Session sharing must declare a non-empty server-handle'
          ' contract'
      )


def _positive_seconds(name: str, value: Any) -> float:
  if isinstance(value, bool) or not isinstance(value, (int, float)):
    raise _policy_error(f'{name} must be a number of seconds')
  seconds = float(value)
  if not math.isfinite(seconds) or seconds <= 0:
    raise _policy_error(f'{name} must be positive and finite')
  return seconds


@dataclasses.dataclass(frozen=True)
class ConnectionAffinityPolicy:
  """How app-safe connection generations are keyed and retired.

  Attributes:
    security_domain_keying: Key generations by a host-derived opaque
      security-domain key of the resolved principal. Always True: a
      stateful generation is never shared across principals.
    cross_session_sharing: None (the default) keys generations by Session
      incarnation too; a value opts into sharing one principal's generation
      across its Sessions under the declared handle contract.
    idle_eviction_seconds: An unreferenced generation is evicted after
      this long idle.
    max_lifetime_seconds: A generation, and every View on it, is
      invalidated after this long regardless of use.
    credential_expiry_seconds: The credentials a generation was opened with
      are treated as expired this long after it opened, which invalidates
      it and every View on it; None leaves only the maximum lifetime.
  """

  security_domain_keying: bool = True
  cross_session_sharing: Optional[CrossSessionSharing] = None
  idle_eviction_seconds: float = 300.0
  max_lifetime_seconds: float = 3600.0
  credential_expiry_seconds: Optional[float] = None

  def __post_init__(self) -> None:
    if self.security_domain_keying is not True:
      raise _policy_error(
          'Security-domain keying cannot be disabled: a stateful connection'
          ' must never be shared across principals'
      )
    if self.cross_session_sharing is not None and not isinstance(
        self.cross_session_sharing, CrossSessionSharing
    ):
      raise _policy_error(
          'cross_session_sharing must be a CrossSessionSharing or None'
      )
    object.__setattr__(
        self,
        'idle_eviction_seconds',
        _positive_seconds('idle_eviction_seconds', self.idle_eviction_seconds),
    )
    object.__setattr__(
        self,
        'max_lifetime_seconds',
        _positive_seconds('max_lifetime_seconds', self.max_lifetime_seconds),
    )
    if self.credential_expiry_seconds is not None:
      object.__setattr__(
          self,
          'credential_expiry_seconds',
          _positive_seconds(
              'credential_expiry_seconds', self.credential_expiry_seconds
          ),
      )

  @property
  def session_incarnation_keying(self) -> bool:
    """Whether generations are keyed by Session incarnation."""
    return self.cross_session_sharing is None

  def fingerprint_value(self) -> dict[str, Any]:
    """The JSON value this policy contributes to the fingerprint."""
    sharing = self.cross_session_sharing
    value: dict[str, Any] = {
        'cross_session_handle_contract': (
            None if sharing is None else sharing.server_handle_contract
        ),
        'idle_eviction_seconds': self.idle_eviction_seconds,
        'max_lifetime_seconds': self.max_lifetime_seconds,
        'security_domain_keying': self.security_domain_keying,
        'session_incarnation_keying': self.session_incarnation_keying,
    }
    if self.credential_expiry_seconds is not None:
      # Only when set, so profiles without it keep their binding revision.
      value['credential_expiry_seconds'] = self.credential_expiry_seconds
    return value


@dataclasses.dataclass(frozen=True, init=False)
class ResourcePolicySettings:
  """The profile's resource-read expansion, with its revision.

  A View may always read its own widget URI; these entries widen that, for
  every View of the profile. `for_widget` builds one View's policy.

  Attributes:
    entries: The canonical entries, deduplicated and sorted.
    canonicalizer: The URI rules (built-in plus per-scheme) to match under.
    revision: A digest of the entries and the canonicalizer's revision.
  """

  entries: tuple[ResourcePolicyEntry, ...]
  canonicalizer: UriCanonicalizer = dataclasses.field(compare=False)
  revision: str

  def __init__(
      self,
      entries: Iterable[ResourcePolicyEntry] = (),
      *,
      canonicalizer: Optional[UriCanonicalizer] = None,
  ) -> None:
    """Validates and canonicalizes the entries.

    Args:
      entries: Exact or prefix-inclusive entries.
      canonicalizer: The URI rules; the built-in rules if None.

    Raises:
      HostProfileError: `INVALID_POLICY` if an entry is invalid.
    """
    canonicalizer = canonicalizer or DEFAULT_URI_CANONICALIZER
    entries = tuple(entries)
    canonical: tuple[ResourcePolicyEntry, ...] = ()
    if entries:
      try:
        # A View policy over the first entry validates and canonicalizes
        # them all; which URI stands in for the widget does not matter.
        probe = ResourceReadPolicy(
            entries[0].uri, entries, canonicalizer=canonicalizer
        )
      except (AttributeError, ValueError, McpAppsError) as e:
        raise _policy_error(f'Invalid resource policy entry: {e}') from e
      canonical = probe.entries
    object.__setattr__(self, 'entries', canonical)
    object.__setattr__(self, 'canonicalizer', canonicalizer)
    object.__setattr__(
        self,
        'revision',
        revision_digest(
            'resource-policy-revision',
            {
                'canonicalizer': canonicalizer.revision,
                'entries': [[e.kind.value, e.uri] for e in canonical],
            },
        ),
    )

  def for_widget(
      self, widget_uri: Union[str, CanonicalUri]
  ) -> ResourceReadPolicy:
    """The read policy of one View whose descriptor declares `widget_uri`."""
    return ResourceReadPolicy(
        widget_uri, self.entries, canonicalizer=self.canonicalizer
    )
