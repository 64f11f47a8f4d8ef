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


"""Readiness: may this host profile be bound, and if not, why not.

A profile binds only when the complete host service is present (every
deployment contract, the key provider and the classification authority) on
an MCP SDK that can advertise the extension. `check_readiness` lists every
missing or unacceptable prerequisite at once; development providers are
accepted only when asked for and loopback-only. Binding an unready profile
raises `ProfileNotReadyError`. Notes: docs/design/profile.md.

Example:

  readiness = check_readiness(profile, allow_dev_providers=False)
  for reason in readiness.reasons:
    print(reason)  # e.g. renderer: dev_provider_refused (...)
"""

from __future__ import annotations

import dataclasses
import enum
import importlib.metadata
from typing import Any
from typing import cast

from ..contracts.export_audit_store import ExportAuditStore
from ..contracts.key_provider import BindingKeyUnavailableError
from ..contracts.key_provider import BindingRevisionKeyProvider
from ..contracts.principal_resolver import PrincipalResolver
from ..contracts.renderer import RendererRegistration
from ..contracts.replay_classification import ReplayClassificationAuthority
from ..contracts.sealed_result_store import read_label
from ..contracts.sealed_result_store import SealedResultStore
from ..contracts.session_authorizer import SessionAuthorizer
from ..contracts.session_lifecycle_store import SessionLifecycleStore
from ..errors import McpAppsError
from .host_profile import McpAppsHostProfile


class Prerequisite(enum.Enum):
  """A binding prerequisite.

  Each provider's value is the profile field holding it (`PROVIDERS`);
  `MCP_SDK` is the installed MCP Python SDK, which must be able to advertise
  client extensions.
  """

  RENDERER = 'renderer'
  PRINCIPAL_RESOLVER = 'principal_resolver'
  SESSION_AUTHORIZER = 'session_authorizer'
  SEALED_RESULT_STORE = 'sealed_result_store'
  SESSION_LIFECYCLE_STORE = 'session_lifecycle_store'
  EXPORT_AUDIT_STORE = 'export_audit_store'
  KEY_PROVIDER = 'key_provider'
  REPLAY_CLASSIFICATION = 'replay_classification'
  MCP_SDK = 'mcp_sdk'


_CONTRACTS: dict[Prerequisite, type] = {
    Prerequisite.RENDERER: RendererRegistration,
    Prerequisite.PRINCIPAL_RESOLVER: PrincipalResolver,
    Prerequisite.SESSION_AUTHORIZER: SessionAuthorizer,
    Prerequisite.SEALED_RESULT_STORE: SealedResultStore,
    Prerequisite.SESSION_LIFECYCLE_STORE: SessionLifecycleStore,
    Prerequisite.EXPORT_AUDIT_STORE: ExportAuditStore,
    Prerequisite.KEY_PROVIDER: BindingRevisionKeyProvider,
    Prerequisite.REPLAY_CLASSIFICATION: ReplayClassificationAuthority,
}

PROVIDERS: tuple[Prerequisite, ...] = tuple(_CONTRACTS)
"""The prerequisites a profile provides, one per profile field."""

_SDK_NEEDED = (
    'the MCP Apps host needs MCP SDK 2.x (mcp>=2.3,<3, installed by'
    " pip install 'google-adk[mcpapps]'); model-only MCP toolsets work"
    ' without it'
)

_STORES = (
    Prerequisite.SEALED_RESULT_STORE,
    Prerequisite.SESSION_LIFECYCLE_STORE,
    Prerequisite.EXPORT_AUDIT_STORE,
)


class Problem(enum.Enum):
  """What is wrong with a prerequisite."""

  MISSING = 'missing'
  """The profile has no provider for it."""

  NOT_CONFORMING = 'not_conforming'
  """The provider lacks a member of its contract, or a member failed."""

  RENDERER_DETACHED = 'renderer_detached'
  """The renderer is registered but not attached."""

  KEY_UNAVAILABLE = 'key_unavailable'
  """The key provider has no active key."""

  MISSING_NAMESPACE = 'missing_namespace'
  """A store has no non-empty namespace (or the authority no source)."""

  MISSING_REVISION = 'missing_revision'
  """A store or the authority has no non-empty revision."""

  NAMESPACE_COLLISION = 'namespace_collision'
  """Two stores share one namespace."""

  DEV_PROVIDER_REFUSED = 'dev_provider_refused'
  """A local-development provider in the production configuration."""

  DEV_PROVIDER_NOT_LOOPBACK = 'dev_provider_not_loopback'
  """A local-development provider that is not marked loopback-only."""

  DEV_RESOLVER_NOT_LOOPBACK = 'dev_resolver_not_loopback'
  """Dev providers are present but the resolver is not loopback-only."""

  SDK_UNSUPPORTED = 'sdk_unsupported'
  """The installed MCP SDK cannot advertise the Apps extension (1.x)."""


@dataclasses.dataclass(frozen=True)
class ReadinessReason:
  """One reason a profile is not bindable.

  Attributes:
    prerequisite: The prerequisite concerned.
    problem: What is wrong with it.
    detail: A human-readable explanation; never contains secrets.
  """

  prerequisite: Prerequisite
  problem: Problem
  detail: str

  def __str__(self) -> str:
    return f'{self.prerequisite.value}: {self.problem.value} ({self.detail})'


class ProfileNotReadyError(McpAppsError):
  """A profile was bound although it is not ready.

  Attributes:
    reasons: Every reason it is not bindable.
  """

  def __init__(self, profile_name: str, reasons: tuple[ReadinessReason, ...]):
    self.reasons = reasons
    listed = '; '.join(str(r) for r in reasons)
    super().__init__(f'Host profile {profile_name!r} is not ready: {listed}')


@dataclasses.dataclass(frozen=True)
class Readiness:
  """The outcome of a readiness check.

  Attributes:
    profile: The profile checked.
    allow_dev_providers: Whether the development configuration was checked.
    reasons: Every reason the profile is not bindable, in a fixed order.
  """

  profile: McpAppsHostProfile
  allow_dev_providers: bool
  reasons: tuple[ReadinessReason, ...]

  @property
  def bindable(self) -> bool:
    """Whether the profile may be bound: there is no reason against it."""
    return not self.reasons

  def missing(self) -> frozenset[Prerequisite]:
    """The prerequisites the profile has no provider for."""
    return frozenset(
        r.prerequisite for r in self.reasons if r.problem is Problem.MISSING
    )

  def raise_if_not_bindable(self) -> None:
    """Raises `ProfileNotReadyError` unless the profile is bindable."""
    if self.reasons:
      raise ProfileNotReadyError(self.profile.name, self.reasons)

  def client_extensions(self) -> dict[str, dict[str, Any]]:
    """The extension map to advertise: the profile's if bindable, else {}."""
    return self.profile.client_extensions() if self.bindable else {}


def _is_dev_only(provider: object) -> bool:
  return bool(getattr(provider, 'dev_only', False))


def _is_loopback_only(provider: object) -> bool:
  return getattr(provider, 'loopback_only', False) is True


def _conforms(prerequisite: Prerequisite, provider: object) -> bool:
  try:
    return isinstance(provider, _CONTRACTS[prerequisite])
  except Exception:  # pylint: disable=broad-exception-caught
    return False  # A member raised while being looked up.


def persistence_compatibility_reasons(
    profile: McpAppsHostProfile,
) -> list[ReadinessReason]:
  """The persistence-compatibility hook of readiness.

  Checks that each present, conforming store has a non-empty namespace and
  revision, that the classification authority has a non-empty source and
  revision, and that no two stores share a namespace.

  Args:
    profile: The profile.

  Returns:
    The reasons found; empty if compatible as far as checked.
  """
  reasons: list[ReadinessReason] = []
  namespaces: dict[str, Prerequisite] = {}
  for prerequisite in _STORES:
    store = getattr(profile, prerequisite.value)
    if store is None or not _conforms(prerequisite, store):
      continue
    namespace, why = read_label(store, 'namespace')
    if namespace is None:
      reasons.append(
          ReadinessReason(prerequisite, Problem.MISSING_NAMESPACE, why)
      )
    elif namespace in namespaces:
      reasons.append(
          ReadinessReason(
              prerequisite,
              Problem.NAMESPACE_COLLISION,
              f'namespace {namespace!r} is also used by'
              f' {namespaces[namespace].value}',
          )
      )
    else:
      namespaces[namespace] = prerequisite
    if read_label(store, 'revision')[0] is None:
      reasons.append(
          ReadinessReason(
              prerequisite,
              Problem.MISSING_REVISION,
              read_label(store, 'revision')[1],
          )
      )
  authority = profile.replay_classification
  if authority is not None and _conforms(
      Prerequisite.REPLAY_CLASSIFICATION, authority
  ):
    for attribute, problem in (
        ('source', Problem.MISSING_NAMESPACE),
        ('revision', Problem.MISSING_REVISION),
    ):
      value, why = read_label(authority, attribute)
      if value is None:
        reasons.append(
            ReadinessReason(Prerequisite.REPLAY_CLASSIFICATION, problem, why)
        )
  return reasons


def _provider_reasons(
    prerequisite: Prerequisite, provider: object
) -> list[ReadinessReason]:
  contract = _CONTRACTS[prerequisite]
  if not _conforms(prerequisite, provider):
    return [
        ReadinessReason(
            prerequisite,
            Problem.NOT_CONFORMING,
            f'{type(provider).__name__} does not implement {contract.__name__}',
        )
    ]
  if prerequisite is Prerequisite.RENDERER:
    provider = cast(RendererRegistration, provider)
    if read_label(provider, 'renderer_id')[0] is None:
      return [
          ReadinessReason(
              prerequisite, Problem.NOT_CONFORMING, 'renderer_id is empty'
          )
      ]
    try:
      attached = provider.is_attached() is True
    except Exception:  # pylint: disable=broad-exception-caught
      attached = False
    if not attached:
      return [
          ReadinessReason(
              prerequisite,
              Problem.RENDERER_DETACHED,
              f'renderer {provider.renderer_id!r} is not attached',
          )
      ]
  if prerequisite is Prerequisite.KEY_PROVIDER:
    provider = cast(BindingRevisionKeyProvider, provider)
    try:
      provider.active_key()
    except BindingKeyUnavailableError as e:
      return [ReadinessReason(prerequisite, Problem.KEY_UNAVAILABLE, str(e))]
    except Exception as e:  # pylint: disable=broad-exception-caught
      return [
          ReadinessReason(
              prerequisite,
              Problem.KEY_UNAVAILABLE,
              f'active_key raised {type(e).__name__}',
          )
      ]
  return []


def _dev_reasons(
    profile: McpAppsHostProfile, allow_dev_providers: bool
) -> list[ReadinessReason]:
  reasons: list[ReadinessReason] = []
  dev_present = False
  for prerequisite in PROVIDERS:
    provider = getattr(profile, prerequisite.value)
    if provider is None or not _is_dev_only(provider):
      continue
    dev_present = True
    name = type(provider).__name__
    if not allow_dev_providers:
      reasons.append(
          ReadinessReason(
              prerequisite,
              Problem.DEV_PROVIDER_REFUSED,
              f'{name} is for local development only',
          )
      )
    elif not _is_loopback_only(provider):
      reasons.append(
          ReadinessReason(
              prerequisite,
              Problem.DEV_PROVIDER_NOT_LOOPBACK,
              f'{name} is dev-only but not marked loopback-only',
          )
      )
  resolver = profile.principal_resolver
  if (
      allow_dev_providers
      and dev_present
      and resolver is not None
      and not (_is_dev_only(resolver) and _is_loopback_only(resolver))
  ):
    reasons.append(
        ReadinessReason(
            Prerequisite.PRINCIPAL_RESOLVER,
            Problem.DEV_RESOLVER_NOT_LOOPBACK,
            'dev providers require a loopback-only principal resolver',
        )
    )
  return reasons


def _sdk_version() -> str:
  try:
    return importlib.metadata.version('mcp')
  except importlib.metadata.PackageNotFoundError:
    return 'of unknown version'


def _sdk_reasons() -> list[ReadinessReason]:
  """Whether the installed MCP SDK can advertise client extensions.

  Read at each check, and imported here rather than at module level, so
  that importing this module never needs the `mcp` package.
  """
  try:
    from ...dependencies import _mcp  # pylint: disable=g-import-not-at-top
  except ImportError as e:
    detail = f'the MCP SDK does not import ({e}); {_SDK_NEEDED}'
  else:
    if _mcp.IS_MCP_SDK_V2:
      return []
    detail = f'MCP SDK {_sdk_version()} is installed; {_SDK_NEEDED}'
  return [
      ReadinessReason(Prerequisite.MCP_SDK, Problem.SDK_UNSUPPORTED, detail)
  ]


def check_readiness(
    profile: McpAppsHostProfile, *, allow_dev_providers: bool
) -> Readiness:
  """Checks every binding prerequisite of `profile`.

  Args:
    profile: The profile to check.
    allow_dev_providers: True only for the explicit local-development
      configuration; production passes False, and every `dev_only`
      provider is then refused.

  Returns:
    The readiness, listing every reason against binding. Never raises for
    a faulty provider; the fault becomes a reason.
  """
  reasons = _sdk_reasons()
  for prerequisite in PROVIDERS:
    provider = getattr(profile, prerequisite.value)
    if provider is None:
      reasons.append(
          ReadinessReason(prerequisite, Problem.MISSING, 'not configured')
      )
    else:
      reasons.extend(_provider_reasons(prerequisite, provider))
  reasons.extend(persistence_compatibility_reasons(profile))
  reasons.extend(_dev_reasons(profile, allow_dev_providers))
  return Readiness(profile, allow_dev_providers, tuple(reasons))
