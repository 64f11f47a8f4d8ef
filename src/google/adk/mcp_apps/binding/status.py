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

"""The registry's readiness report: which toolsets serve Apps, and why not.

A toolset the registry cannot bind stays model-only and keeps working, so
nothing fails loudly when a profile is misconfigured. The report is how an
operator finds out: one entry per configured toolset, with a reason enum and
a message, and the profile's readiness reasons where they are the cause.

Example:
  report = registry.readiness_report()
  if not report['monitor'].profile_bound:
    print(report['monitor'].message)
"""

from __future__ import annotations

from collections.abc import Iterator
import dataclasses
import enum
from typing import Optional

from ..profile.readiness import Problem
from ..profile.readiness import Readiness
from ..profile.readiness import ReadinessReason


class ModelOnlyReason(enum.Enum):
  """Why a configured toolset is not profile-bound."""

  NOT_STARTED = 'not_started'
  """`start()` has not run; nothing is bound yet."""

  CLOSED = 'closed'
  """The registry has shut down."""

  NO_PROFILE = 'no_profile'
  """The registry was built without a host profile."""

  NOT_APPS_ROUTED = 'not_apps_routed'
  """The toolset is not among the registry's `apps_toolsets`."""

  APP_VISIBILITY_EXCLUDED = 'app_visibility_excluded'
  """A `BindingOverrides.visibility` override removed the `app` caller."""

  PROFILE_NOT_READY = 'profile_not_ready'
  """The profile failed its readiness check; see `readiness_reasons`."""

  WITHDRAWN = 'withdrawn'
  """Readiness was withdrawn (`revoke()`); `rebind()` binds again."""


@dataclasses.dataclass(frozen=True)
class ToolsetReadiness:
  """Whether one toolset is profile-bound, and if not, why.

  Attributes:
    toolset_id: The configured toolset id.
    profile_bound: True when the toolset serves MCP Apps: its app-safe
      connections advertise the Apps extension.
    reason: Why it is model-only; None when it is profile-bound.
    message: One human-readable sentence; never contains secrets.
    readiness_reasons: The profile's readiness reasons when `reason` is
      `PROFILE_NOT_READY`, else empty.
    binding_generation: The generation of the toolset's current proxy (0
      before `start()`).
  """

  toolset_id: str
  profile_bound: bool
  reason: Optional[ModelOnlyReason]
  message: str
  readiness_reasons: tuple[ReadinessReason, ...] = ()
  binding_generation: int = 0

  def __str__(self) -> str:
    return f'{self.toolset_id}: {self.message}'


@dataclasses.dataclass(frozen=True)
class ReadinessReport:
  """The registry's readiness, per configured toolset.

  Attributes:
    profile_name: The configured profile's name, or None without one.
    allow_dev_providers: Whether the local-development configuration is in
      force.
    profile_readiness: The profile's most recent readiness check (bindable
      or not), or None when none ran.
    toolsets: One entry per configured toolset, in registration order.
  """

  profile_name: Optional[str]
  allow_dev_providers: bool
  profile_readiness: Optional[Readiness]
  toolsets: tuple[ToolsetReadiness, ...]

  def __getitem__(self, toolset_id: str) -> ToolsetReadiness:
    for entry in self.toolsets:
      if entry.toolset_id == toolset_id:
        return entry
    raise KeyError(toolset_id)

  def __iter__(self) -> Iterator[ToolsetReadiness]:
    return iter(self.toolsets)

  @property
  def all_bound(self) -> bool:
    """Whether every configured toolset is profile-bound."""
    return all(entry.profile_bound for entry in self.toolsets)

  def __str__(self) -> str:
    return '\n'.join(str(entry) for entry in self.toolsets)


def _not_ready_message(readiness: Readiness) -> str:
  listed = '; '.join(str(r) for r in readiness.reasons)
  message = (
      f'model-only: host profile {readiness.profile.name!r} is not'
      f' bindable: {listed}'
  )
  if any(r.problem is Problem.DEV_PROVIDER_REFUSED for r in readiness.reasons):
    message += (
        '. Local-development providers bind only with'
        ' allow_dev_providers=True, on a loopback-only host.'
    )
  return message


def toolset_readiness(
    toolset_id: str,
    *,
    started: bool,
    closed: bool,
    profile_name: Optional[str],
    profile_bound: bool,
    binding_generation: int,
    apps_listed: bool,
    app_visible: bool,
    last_check: Optional[Readiness],
) -> ToolsetReadiness:
  """The report entry of one toolset, from the registry's state.

  Args:
    toolset_id: The toolset id.
    started: Whether the registry has started.
    closed: Whether it has shut down.
    profile_name: The configured profile's name, or None.
    profile_bound: Whether the toolset's current proxy is profile-bound.
    binding_generation: The current proxy's generation.
    apps_listed: Whether the toolset is among the Apps-routed ids.
    app_visible: Whether its effective visibility includes `app`.
    last_check: The profile's most recent readiness check.

  Returns:
    The entry.
  """

  def model_only(
      reason: ModelOnlyReason,
      message: str,
      reasons: tuple[ReadinessReason, ...] = (),
  ) -> ToolsetReadiness:
    return ToolsetReadiness(
        toolset_id, False, reason, message, reasons, binding_generation
    )

  if closed:
    return model_only(
        ModelOnlyReason.CLOSED, 'model-only: the registry has shut down'
    )
  if not started:
    return model_only(
        ModelOnlyReason.NOT_STARTED,
        'not started: call start() (or enter the registry) first',
    )
  if profile_bound:
    return ToolsetReadiness(
        toolset_id,
        True,
        None,
        f'profile-bound to {profile_name!r} (binding generation'
        f' {binding_generation}): its app-safe connections advertise'
        ' io.modelcontextprotocol/ui',
        (),
        binding_generation,
    )
  if profile_name is None:
    return model_only(
        ModelOnlyReason.NO_PROFILE,
        'model-only: the registry has no host profile',
    )
  if not apps_listed:
    return model_only(
        ModelOnlyReason.NOT_APPS_ROUTED,
        "model-only: not among the registry's apps_toolsets",
    )
  if not app_visible:
    return model_only(
        ModelOnlyReason.APP_VISIBILITY_EXCLUDED,
        'model-only: an override removed the app caller',
    )
  if last_check is not None and not last_check.bindable:
    return model_only(
        ModelOnlyReason.PROFILE_NOT_READY,
        _not_ready_message(last_check),
        last_check.reasons,
    )
  return model_only(
      ModelOnlyReason.WITHDRAWN,
      'model-only: readiness was withdrawn (revoke()); rebind() binds again',
  )
