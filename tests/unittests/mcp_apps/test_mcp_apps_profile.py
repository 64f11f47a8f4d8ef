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


"""Tests for the MCP Apps host profile and its advertised values.

Cases: P2-PROF-01, P2-PROF-02, P2-ADV-03, P2-ADV-05, P2-ADV-06.
"""

from __future__ import annotations

import dataclasses

from google.adk.mcp_apps.errors import McpAppsError
from google.adk.mcp_apps.profile import AppPathProgress
from google.adk.mcp_apps.profile import CallbackPolicy
from google.adk.mcp_apps.profile import ConnectionAffinityPolicy
from google.adk.mcp_apps.profile import ContextModality
from google.adk.mcp_apps.profile import CrossSessionSharing
from google.adk.mcp_apps.profile import DeliveryLimits
from google.adk.mcp_apps.profile import EXTENSION_ID
from google.adk.mcp_apps.profile import ExtensionSettings
from google.adk.mcp_apps.profile import HostCapabilities
from google.adk.mcp_apps.profile import HostLimits
from google.adk.mcp_apps.profile import HostProfileError
from google.adk.mcp_apps.profile import local_dev_profile
from google.adk.mcp_apps.profile import MCP_APP_MIME_TYPE
from google.adk.mcp_apps.profile import McpAppsHostProfile
from google.adk.mcp_apps.profile import MessageModality
from google.adk.mcp_apps.profile import ProfileErrorReason
from google.adk.mcp_apps.profile import ResourcePolicySettings
from google.adk.mcp_apps.resources import ResourcePolicyEntry
import pytest

_V1_CAPABILITIES = {
    'serverTools': {},
    'serverResources': {},
    'message': {'text': {}},
    'updateModelContext': {'text': {}, 'structuredContent': {}},
}


# P2-PROF-01


@pytest.mark.conformance('P2-PROF-01')
@pytest.mark.parametrize(
    'field', [f.name for f in dataclasses.fields(McpAppsHostProfile)]
)
def test_assigning_any_profile_field_raises(field):
  """P2-PROF-01: assigning any field after construction raises."""
  profile = local_dev_profile()
  before = getattr(profile, field)
  with pytest.raises(dataclasses.FrozenInstanceError):
    setattr(profile, field, None)
  with pytest.raises(dataclasses.FrozenInstanceError):
    delattr(profile, field)
  assert getattr(profile, field) is before


def _raises(reason: ProfileErrorReason, match: str | None = None):
  """`pytest.raises` for a `HostProfileError` with this reason."""
  return pytest.raises(
      HostProfileError, match=match, check=lambda e: e.reason is reason
  )


@pytest.mark.conformance('P2-PROF-01')
def test_nested_values_cannot_be_mutated():
  """P2-PROF-01: nested settings, policies and limits are immutable too."""
  profile = local_dev_profile(
      resource_policy=ResourcePolicySettings(
          [ResourcePolicyEntry.prefix('ui://bqaa/assets')]
      )
  )
  revision = profile.resource_policy.revision
  attempts = [
      lambda: setattr(profile.extension_settings, 'mime_types', ()),
      lambda: profile.extension_settings.mime_types.append('x/y'),
      lambda: setattr(profile.host_capabilities, 'server_tools', False),
      lambda: profile.host_capabilities.message.add(MessageModality.TEXT),
      lambda: setattr(
          profile.callback_policy, 'app_path_progress', AppPathProgress.DISABLED
      ),
      lambda: setattr(profile.connection_affinity, 'idle_eviction_seconds', 1),
      lambda: setattr(profile.limits, 'mrtr_max_rounds', 1),
      lambda: setattr(profile.limits.delivery, 'max_request_bytes', 1),
      lambda: setattr(profile.limits.discovery, 'max_pages', 1),
      lambda: setattr(profile.resource_policy, 'revision', 'x'),
      lambda: profile.resource_policy.entries.append(None),
  ]
  for attempt in attempts:
    with pytest.raises((AttributeError, TypeError)):
      attempt()
  assert profile.extension_settings.mime_types == (MCP_APP_MIME_TYPE,)
  assert profile.host_capabilities.to_wire() == _V1_CAPABILITIES
  assert profile.resource_policy.revision == revision


@pytest.mark.conformance('P2-PROF-01')
def test_returned_wire_maps_are_copies():
  """P2-PROF-01: mutating a returned wire map leaves the profile unchanged."""
  profile = local_dev_profile()
  extensions = profile.client_extensions()
  extensions[EXTENSION_ID]['mimeTypes'].append('text/plain')
  capabilities = profile.host_capabilities.to_wire()
  capabilities['openLinks'] = {}
  assert profile.client_extensions() == {
      EXTENSION_ID: {'mimeTypes': [MCP_APP_MIME_TYPE]}
  }
  assert profile.host_capabilities.to_wire() == _V1_CAPABILITIES


# P2-PROF-02


@pytest.mark.conformance('P2-PROF-02')
def test_profile_exposes_every_field_group():
  """P2-PROF-02: every field group of the RFC table is on the profile."""
  profile = local_dev_profile()
  assert profile.extension_settings.to_wire() == {
      'mimeTypes': [MCP_APP_MIME_TYPE]
  }
  assert profile.host_capabilities.message == frozenset({MessageModality.TEXT})
  assert profile.host_capabilities.update_model_context == frozenset(
      {ContextModality.TEXT, ContextModality.STRUCTURED_CONTENT}
  )
  assert profile.renderer.renderer_id == 'adk-web-local-dev'
  assert profile.principal_resolver is not None
  assert profile.session_authorizer is not None
  assert profile.sealed_result_store.namespace
  assert profile.session_lifecycle_store.namespace
  assert profile.export_audit_store.namespace
  assert profile.key_provider.active_key().key_id == 'local-dev-1'
  assert profile.replay_classification_source == 'local-dev'
  assert profile.replay_classification_revision.startswith('sha256:')
  assert isinstance(profile.callback_policy, CallbackPolicy)
  assert isinstance(profile.connection_affinity, ConnectionAffinityPolicy)
  assert profile.resource_policy_revision == profile.resource_policy.revision
  assert profile.resource_policy_revision.startswith('sha256:')
  assert profile.limits_revision == profile.limits.revision
  assert profile.limits_revision.startswith('sha256:')


@pytest.mark.conformance('P2-PROF-02')
def test_defaults_follow_the_rfc():
  """P2-PROF-02: the policy defaults are the RFC's adopted defaults."""
  affinity = ConnectionAffinityPolicy()
  assert affinity.security_domain_keying is True
  assert affinity.session_incarnation_keying is True
  assert affinity.cross_session_sharing is None
  limits = HostLimits()
  assert limits.sealing_max_bytes == 8 * 1024 * 1024
  assert limits.sealing_max_depth == 64
  assert CallbackPolicy().app_safe_input_callbacks.value == 'none'


@pytest.mark.conformance('P2-PROF-02')
def test_cross_session_sharing_needs_a_handle_contract():
  """P2-PROF-02: cross-Session sharing is opt-in with a declared contract."""
  shared = ConnectionAffinityPolicy(
      cross_session_sharing=CrossSessionSharing('explicit-server-handles/v1')
  )
  assert shared.session_incarnation_keying is False
  with _raises(ProfileErrorReason.INVALID_POLICY):
    CrossSessionSharing('  ')
  with _raises(ProfileErrorReason.INVALID_POLICY, match='across principals'):
    ConnectionAffinityPolicy(security_domain_keying=False)
  for bad in (0, -1, float('inf'), float('nan'), True, '5'):
    with _raises(ProfileErrorReason.INVALID_POLICY):
      ConnectionAffinityPolicy(idle_eviction_seconds=bad)


@pytest.mark.conformance('P2-PROF-02')
def test_invalid_limits_and_field_types_are_rejected():
  """P2-PROF-02: limits must be positive; field groups must be typed."""
  for bad in (0, -5, 1.5, True):
    with _raises(ProfileErrorReason.INVALID_POLICY):
      HostLimits(mrtr_max_rounds=bad)
  with _raises(ProfileErrorReason.INVALID_POLICY):
    DeliveryLimits(max_content_items=0)
  with _raises(ProfileErrorReason.INVALID_POLICY):
    HostLimits(register_max_bytes=10, registers_max_total_bytes=5)
  with _raises(ProfileErrorReason.INVALID_PROFILE, match='extension_settings'):
    McpAppsHostProfile(
        name='p', extension_settings={'mimeTypes': [MCP_APP_MIME_TYPE]}
    )
  with _raises(ProfileErrorReason.INVALID_PROFILE, match='name'):
    McpAppsHostProfile(name='')
  with _raises(ProfileErrorReason.INVALID_POLICY):
    ResourcePolicySettings([ResourcePolicyEntry.prefix('ui://a/b?q=1')])


# P2-ADV-03


@pytest.mark.conformance('P2-ADV-03')
@pytest.mark.parametrize(
    'settings',
    [
        {},
        {'mimeTypes': []},
        {'mimeTypes': None},
        {'mimeTypes': 'text/html;profile=mcp-app'},
        {'mimeTypes': ['text/html']},
        {'mimeTypes': ['TEXT/HTML;PROFILE=MCP-APP']},
        {'mimeTypes': [MCP_APP_MIME_TYPE, MCP_APP_MIME_TYPE]},
        {'mimeTypes': [MCP_APP_MIME_TYPE, 7]},
        {'mimeTypes': [MCP_APP_MIME_TYPE], 'features': ['streaming']},
    ],
)
def test_settings_without_valid_mime_types_fail(settings):
  """P2-ADV-03: settings lacking (valid) `mimeTypes` fail validation."""
  advertised = []
  with _raises(ProfileErrorReason.INVALID_EXTENSION_SETTINGS) as excinfo:
    profile = McpAppsHostProfile(
        name='p', extension_settings=ExtensionSettings.from_wire(settings)
    )
    advertised.append(profile.client_extensions())
  assert isinstance(excinfo.value, McpAppsError)
  assert advertised == []


@pytest.mark.conformance('P2-ADV-03')
def test_empty_mime_types_fail_direct_construction():
  """P2-ADV-03: `mimeTypes` is REQUIRED also when built directly."""
  with _raises(ProfileErrorReason.INVALID_EXTENSION_SETTINGS, match='REQUIRED'):
    ExtensionSettings(mime_types=())


@pytest.mark.conformance('P2-ADV-03')
def test_valid_settings_round_trip():
  """P2-ADV-03: the valid settings map advertises exactly itself."""
  settings = ExtensionSettings.from_wire({'mimeTypes': [MCP_APP_MIME_TYPE]})
  profile = McpAppsHostProfile(name='p', extension_settings=settings)
  assert profile.client_extensions() == {
      'io.modelcontextprotocol/ui': {'mimeTypes': ['text/html;profile=mcp-app']}
  }


# P2-ADV-05


@pytest.mark.conformance('P2-ADV-05')
def test_default_host_capabilities_are_exactly_v1():
  """P2-ADV-05: the advertised host capabilities are exactly the v1 set."""
  assert HostCapabilities().to_wire() == _V1_CAPABILITIES
  assert local_dev_profile().host_capabilities.to_wire() == _V1_CAPABILITIES


@pytest.mark.conformance('P2-ADV-05')
def test_narrowing_drops_only_what_was_narrowed():
  """P2-ADV-05: narrowing a modality or member removes only it."""
  narrowed = HostCapabilities(
      server_resources=False,
      update_model_context=frozenset({ContextModality.TEXT}),
  )
  assert narrowed.to_wire() == {
      'serverTools': {},
      'message': {'text': {}},
      'updateModelContext': {'text': {}},
  }
  assert HostCapabilities(message=None).to_wire() == {
      k: v for k, v in _V1_CAPABILITIES.items() if k != 'message'
  }
  with _raises(ProfileErrorReason.UNSUPPORTED_CAPABILITIES, match='use None'):
    HostCapabilities(update_model_context=frozenset())


# P2-ADV-06


@pytest.mark.conformance('P2-ADV-06')
def test_unsupported_members_cannot_be_expressed():
  """P2-ADV-06: openLinks, downloadFile, logging, sandbox are not fields."""
  for member in (
      'open_links',
      'openLinks',
      'download_file',
      'logging',
      'sandbox',
      'experimental',
      'sampling',
  ):
    with pytest.raises(TypeError):
      HostCapabilities(**{member: {}})
  wire = HostCapabilities().to_wire()
  for member in ('openLinks', 'downloadFile', 'logging', 'sandbox'):
    assert member not in wire
  assert 'listChanged' not in wire['serverTools']
  assert 'listChanged' not in wire['serverResources']


@pytest.mark.conformance('P2-ADV-06')
@pytest.mark.parametrize(
    'field, modality',
    [
        ('message', 'image'),
        ('message', ContextModality.STRUCTURED_CONTENT),
        ('message', 'audio'),
        ('update_model_context', 'resourceLink'),
        ('update_model_context', MessageModality.TEXT),
    ],
)
def test_unsupported_modalities_are_rejected(field, modality):
  """P2-ADV-06: non-v1 modalities cannot be expressed."""
  with _raises(
      ProfileErrorReason.UNSUPPORTED_CAPABILITIES, match='does not support'
  ):
    HostCapabilities(**{field: frozenset({modality})})
  assert set(HostCapabilities().to_wire()['message']) == {'text'}
  assert set(HostCapabilities().to_wire()['updateModelContext']) == {
      'text',
      'structuredContent',
  }
