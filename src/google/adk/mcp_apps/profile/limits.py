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


"""The host profile's limits, under one limits revision.

Every bound the Apps host enforces comes from the profile: sealing size and
depth, model-context register caps, round and time caps, the admission
`tools/list` bounds (`ToolListingBounds`) and the delivery limits of
View-originated operations. `HostLimits.revision` digests all of them, so
any change changes the binding fingerprint.

Example:

  limits = HostLimits(discovery=ToolListingBounds(max_pages=8))
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ..catalog.listing import DEFAULT_BOUNDS
from ..catalog.listing import ToolListingBounds
from .errors import HostProfileError
from .errors import ProfileErrorReason
from .serialization import revision_digest


def _check_positive(owner: object) -> None:
  for field in dataclasses.fields(owner):  # type: ignore[arg-type]
    value = getattr(owner, field.name)
    name = f'{type(owner).__name__}.{field.name}'
    if field.type in ('int', int):
      if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise HostProfileError(
            ProfileErrorReason.INVALID_POLICY, f'{name} must be a positive int'
        )
    elif field.type in ('float', float):
      if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise HostProfileError(
            ProfileErrorReason.INVALID_POLICY,
            f'{name} must be a positive number',
        )
      if not math.isfinite(value) or value <= 0:
        raise HostProfileError(
            ProfileErrorReason.INVALID_POLICY,
            f'{name} must be positive and finite',
        )
      object.__setattr__(owner, field.name, float(value))


@dataclasses.dataclass(frozen=True)
class DeliveryLimits:
  """Limits on each View-originated operation and its delivery.

  Attributes:
    max_queued_operations: Most operations queued per View.
    max_operations_per_minute: Most operations admitted per View per minute.
    max_request_bytes: Largest request accepted from a View.
    max_response_bytes: Largest response delivered to a View or an export.
    max_content_items: Most content items in one delivered result or read.
  """

  max_queued_operations: int = 16
  max_operations_per_minute: int = 600
  max_request_bytes: int = 1024 * 1024
  max_response_bytes: int = 8 * 1024 * 1024
  max_content_items: int = 256

  def __post_init__(self) -> None:
    _check_positive(self)


@dataclasses.dataclass(frozen=True)
class HostLimits:
  """Every limit of the Apps host, with a revision over all of them.

  Attributes:
    sealing_max_bytes: Largest canonical sealed result (default 8 MiB).
    sealing_max_depth: Deepest sealed result (default 64).
    register_max_bytes: Largest single model-context register.
    registers_max_total_bytes: Largest total of a Session's live registers;
      beyond it whole registers are evicted, oldest first.
    mrtr_max_rounds: Most input-required rounds in one operation.
    mrtr_max_seconds: Longest one multi-round operation may take.
    discovery: The bounds of one complete `tools/list` of a profile-bound
      toolset, on both connection classes (model-catalog discovery and the
      pre-call re-listing; a View call's admission uses them through
      `AppSafeToolRouting.bounds`). They replace the toolset spec's own
      `tool_listing_bounds` while the toolset is bound.
    delivery: The limits of View-originated operations.
  """

  sealing_max_bytes: int = 8 * 1024 * 1024
  sealing_max_depth: int = 64
  register_max_bytes: int = 64 * 1024
  registers_max_total_bytes: int = 256 * 1024
  mrtr_max_rounds: int = 8
  mrtr_max_seconds: float = 120.0
  discovery: ToolListingBounds = DEFAULT_BOUNDS
  delivery: DeliveryLimits = DeliveryLimits()

  def __post_init__(self) -> None:
    _check_positive(self)
    if not isinstance(self.discovery, ToolListingBounds):
      raise HostProfileError(
          ProfileErrorReason.INVALID_POLICY,
          'HostLimits.discovery must be ToolListingBounds',
      )
    if not isinstance(self.delivery, DeliveryLimits):
      raise HostProfileError(
          ProfileErrorReason.INVALID_POLICY,
          'HostLimits.delivery must be DeliveryLimits',
      )
    if self.register_max_bytes > self.registers_max_total_bytes:
      raise HostProfileError(
          ProfileErrorReason.INVALID_POLICY,
          'HostLimits.register_max_bytes exceeds registers_max_total_bytes',
      )

  def revision_value(self) -> dict[str, Any]:
    """Every limit as one JSON value; what `revision` digests."""
    value = {
        f.name: getattr(self, f.name)
        for f in dataclasses.fields(self)
        if f.name not in ('discovery', 'delivery')
    }
    value['discovery'] = {
        'max_bytes': self.discovery.max_bytes,
        'max_items': self.discovery.max_items,
        'max_pages': self.discovery.max_pages,
        'max_seconds': float(self.discovery.max_seconds),
    }
    value['delivery'] = dataclasses.asdict(self.delivery)
    return value

  @property
  def revision(self) -> str:
    """The limits revision, `sha256:<hex>`; changes with any limit."""
    return revision_digest('limits-revision', self.revision_value())
