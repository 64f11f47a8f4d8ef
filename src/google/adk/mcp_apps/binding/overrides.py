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

"""Per-toolset narrowing of the policy a binding registry serves.

A toolset's `EffectiveBinding` starts from the registry's app-call policy,
the profile's host capabilities and both callers (tool visibility
`model` and `app`); `BindingOverrides` may
only narrow it, and `narrowed` refuses any widening.

Example:

  effective = narrowed('weather', base, BindingOverrides(visibility={'model'}))
"""

from __future__ import annotations

import dataclasses
from typing import Any
from typing import Optional

from ..catalog.app_catalog import AppCallPolicy
from ..profile.capabilities import HostCapabilities
from ..profile.limits import DeliveryLimits
from ..profile.policies import ResourcePolicySettings
from ..resources.policy import ResourceMatchKind
from ..resources.policy import ResourceReadPolicy
from .errors import WideningOverrideError

CALLERS = frozenset({'model', 'app'})
"""The callers (tool visibility values) a binding can serve."""


@dataclasses.dataclass(frozen=True)
class BindingOverrides:
  """Per-toolset narrowing of what the profile and registry allow.

  Every field may only narrow: None keeps the base, a value must be a
  subset of it.

  Attributes:
    app_call_policy: Narrows the registry's `AppCallPolicy`.
    host_capabilities: Narrows the profile's `HostCapabilities`.
    visibility: Narrows `{"model", "app"}`, the callers this toolset's
      tools may be exposed to.
    resource_policy: Narrows the profile's resource-read entries: each
      entry must be admitted by the entries in force (a prefix entry by a
      prefix entry in force).
    delivery: Narrows the profile's delivery limits, field by field.
    register_max_bytes: Narrows the profile's per-View model-context
      register cap.
  """

  app_call_policy: Optional[AppCallPolicy] = None
  host_capabilities: Optional[HostCapabilities] = None
  visibility: Optional[frozenset[str]] = None
  resource_policy: Optional[ResourcePolicySettings] = None
  delivery: Optional[DeliveryLimits] = None
  register_max_bytes: Optional[int] = None


@dataclasses.dataclass(frozen=True)
class EffectiveBinding:
  """The narrowed policy in force for one toolset.

  Attributes:
    app_call_policy: The app-call policy.
    host_capabilities: The host capabilities (None without a profile).
    visibility: The callers served.
    resource_policy: The narrowed resource-read entries; None: the
      profile's.
    delivery: The narrowed delivery limits; None: the profile's.
    register_max_bytes: The narrowed register cap; None: the profile's.
  """

  app_call_policy: AppCallPolicy
  host_capabilities: Optional[HostCapabilities]
  visibility: frozenset[str]
  resource_policy: Optional[ResourcePolicySettings] = None
  delivery: Optional[DeliveryLimits] = None
  register_max_bytes: Optional[int] = None


def _policy_within(narrow: AppCallPolicy, base: AppCallPolicy) -> bool:
  if base.allowed is None:
    return True
  return narrow.allowed is not None and narrow.allowed <= base.allowed


def _modalities_within(narrow: Any, base: Any) -> bool:
  if narrow is None:
    return True
  return base is not None and narrow <= base


def _capabilities_within(
    narrow: HostCapabilities, base: Optional[HostCapabilities]
) -> bool:
  if base is None:
    return False
  return (
      (base.server_tools or not narrow.server_tools)
      and (base.server_resources or not narrow.server_resources)
      and _modalities_within(narrow.message, base.message)
      and _modalities_within(
          narrow.update_model_context, base.update_model_context
      )
  )


_PROBE_WIDGET = 'ui://adk-narrowing.invalid/probe'
"""Stands in for a View's own URI when entries are compared."""


def _entries_within(
    narrow: ResourcePolicySettings, base: ResourcePolicySettings
) -> bool:
  if narrow.canonicalizer.revision != base.canonicalizer.revision:
    return False
  judges = {
      ResourceMatchKind.EXACT: ResourceReadPolicy(
          _PROBE_WIDGET, base.entries, canonicalizer=base.canonicalizer
      ),
      ResourceMatchKind.PREFIX: ResourceReadPolicy(
          _PROBE_WIDGET,
          [e for e in base.entries if e.kind is ResourceMatchKind.PREFIX],
          canonicalizer=base.canonicalizer,
      ),
  }
  return all(judges[e.kind].admits(e.uri) for e in narrow.entries)


def _delivery_within(narrow: DeliveryLimits, base: DeliveryLimits) -> bool:
  return all(
      getattr(narrow, f.name) <= getattr(base, f.name)
      for f in dataclasses.fields(DeliveryLimits)
  )


def narrowed(
    toolset_id: str,
    base: EffectiveBinding,
    overrides: BindingOverrides,
    *,
    profile: Any = None,
) -> EffectiveBinding:
  """Applies overrides to a base, refusing any widening.

  `profile` (the bound `McpAppsHostProfile`) supplies the resource policy
  and delivery limits a first narrowing of them narrows.
  """
  policy = base.app_call_policy
  if overrides.app_call_policy is not None:
    if not _policy_within(overrides.app_call_policy, policy):
      raise WideningOverrideError(
          f'Toolset {toolset_id!r}: the app-call policy override widens'
          ' the policy in force'
      )
    policy = overrides.app_call_policy
  capabilities = base.host_capabilities
  if overrides.host_capabilities is not None:
    if not _capabilities_within(overrides.host_capabilities, capabilities):
      raise WideningOverrideError(
          f'Toolset {toolset_id!r}: the host-capabilities override widens'
          ' the capabilities in force'
      )
    capabilities = overrides.host_capabilities
  visibility = base.visibility
  if overrides.visibility is not None:
    requested = frozenset(overrides.visibility)
    if not requested <= visibility:
      raise WideningOverrideError(
          f'Toolset {toolset_id!r}: the visibility override'
          f' {sorted(requested)} widens {sorted(visibility)}'
      )
    visibility = requested
  if 'app' not in visibility:
    policy = AppCallPolicy.deny_all()
  resources = base.resource_policy
  if overrides.resource_policy is not None:
    in_force = resources or getattr(profile, 'resource_policy', None)
    if in_force is None or not _entries_within(
        overrides.resource_policy, in_force
    ):
      raise WideningOverrideError(
          f'Toolset {toolset_id!r}: the resource-policy override widens'
          ' the entries in force'
      )
    resources = overrides.resource_policy
  delivery = base.delivery
  if overrides.delivery is not None:
    limits = base.delivery or getattr(
        getattr(profile, 'limits', None), 'delivery', None
    )
    if limits is None or not _delivery_within(overrides.delivery, limits):
      raise WideningOverrideError(
          f'Toolset {toolset_id!r}: the delivery-limits override widens'
          ' the limits in force'
      )
    delivery = overrides.delivery
  register_cap = base.register_max_bytes
  if overrides.register_max_bytes is not None:
    cap_in_force = register_cap or getattr(
        getattr(profile, 'limits', None), 'register_max_bytes', None
    )
    if cap_in_force is None or not 0 < overrides.register_max_bytes <= (
        cap_in_force
    ):
      raise WideningOverrideError(
          f'Toolset {toolset_id!r}: the register-cap override widens the'
          ' cap in force'
      )
    register_cap = overrides.register_max_bytes
  return EffectiveBinding(
      policy, capabilities, visibility, resources, delivery, register_cap
  )
