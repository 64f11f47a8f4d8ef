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

"""Tests for the MCP Apps resource-read policy (P1-RPOL-01..03)."""

from __future__ import annotations

import dataclasses

from google.adk.mcp_apps.errors import McpAppsError
from google.adk.mcp_apps.resources import canonicalize
from google.adk.mcp_apps.resources import canonicalize_generic
from google.adk.mcp_apps.resources import McpAppUriError
from google.adk.mcp_apps.resources import ResourceMatchKind
from google.adk.mcp_apps.resources import ResourcePolicyEntry
from google.adk.mcp_apps.resources import ResourceReadDenialReason
from google.adk.mcp_apps.resources import ResourceReadDeniedError
from google.adk.mcp_apps.resources import ResourceReadPolicy
from google.adk.mcp_apps.resources import UriCanonicalizer
from google.adk.mcp_apps.resources import UriErrorReason
import pytest

_WIDGET = 'ui://bqaa/dashboard.html'


def _raises(reason: UriErrorReason):
  """`pytest.raises` for a `McpAppUriError` with this reason."""
  return pytest.raises(McpAppUriError, check=lambda e: e.reason is reason)


@pytest.mark.conformance('P1-RPOL-01')
def test_widget_uri_only_by_default():
  """P1-RPOL-01: without expansion only the declared widget URI is readable."""
  policy = ResourceReadPolicy(_WIDGET)
  assert policy.entries == ()
  for spelling in (
      _WIDGET,
      'UI://BQAA/dashboard.html',
      'ui://bqaa/dashboard%2Ehtml',
      'ui://bqaa/dashboard.html#section',
  ):
    assert policy.admits(spelling)
    assert policy.check(spelling) == canonicalize(_WIDGET)
  for other in (
      'ui://bqaa/other.html',
      'ui://bqaa/dashboard.html/child',
      'ui://bqaa/dashboard.html?tab=2',
      'ui://bqaa/dashboard.htm',
      'ui://bqaa/',
      'ui://bqaa',
      'ui://other/dashboard.html',
      'https://bqaa/dashboard.html',
  ):
    assert not policy.admits(other)
    with pytest.raises(ResourceReadDeniedError) as excinfo:
      policy.check(other)
    assert excinfo.value.reason is ResourceReadDenialReason.NOT_ADMITTED
    assert excinfo.value.canonical_uri == canonicalize(other)
    assert excinfo.value.policy_revision == policy.revision


@pytest.mark.conformance('P1-RPOL-02')
def test_exact_entry_admits_only_that_uri():
  """P1-RPOL-02: an exact entry admits that canonical URI, nothing beneath."""
  policy = ResourceReadPolicy(
      _WIDGET, [ResourcePolicyEntry.exact('ui://bqaa/data/summary.json')]
  )
  for spelling in (
      'ui://bqaa/data/summary.json',
      'UI://Bqaa/data/summary%2Ejson#x',
      'ui://bqaa/data/%73ummary.json',
  ):
    assert policy.admits(spelling)
  assert policy.admits(_WIDGET)
  for other in (
      'ui://bqaa/data/summary.json/child',
      'ui://bqaa/data/summary.json/',
      'ui://bqaa/data/summary.json?v=2',
      'ui://bqaa/data/summary.jsonx',
      'ui://bqaa/data',
      'ui://bqaa/data/',
      'ui://bqaa/data/Summary.json',
  ):
    assert not policy.admits(other)


@pytest.mark.conformance('P1-RPOL-02')
def test_exact_entry_with_query_matches_query_exactly():
  """P1-RPOL-02: an exact entry's query is part of what it admits."""
  policy = ResourceReadPolicy(
      _WIDGET, [ResourcePolicyEntry.exact('ui://bqaa/data?a=1&b=2')]
  )
  assert policy.admits('ui://bqaa/data?a=1&b=%32')
  assert not policy.admits('ui://bqaa/data?b=2&a=1')
  assert not policy.admits('ui://bqaa/data')
  assert not policy.admits('ui://bqaa/data?a=1&b=2&c=3')


@pytest.mark.conformance('P1-RPOL-03')
def test_prefix_entry_admits_segment_bounded_subtree():
  """P1-RPOL-03: a prefix entry admits itself and what is beneath it only."""
  policy = ResourceReadPolicy(
      _WIDGET, [ResourcePolicyEntry.prefix('ui://bqaa/dash')]
  )
  for admitted in (
      'ui://bqaa/dash',
      'ui://bqaa/dash/',
      'ui://bqaa/dash/child',
      'ui://bqaa/dash/child/grandchild.html',
      'ui://bqaa/dash/child?tab=2',
      'ui://bqaa/dash//child',
      'UI://BQAA/dash/Child#top',
      'ui://bqaa/d%61sh/child',
  ):
    assert policy.admits(admitted), admitted
  for denied in (
      'ui://bqaa/dashboard-evil',
      'ui://bqaa/dash.evil',
      'ui://bqaa/dash-evil/child',
      'ui://bqaa/dash%2Fchild',
      'ui://bqaa/Dash/child',
      'ui://bqaa/das',
      'ui://bqaa/',
      'ui://bqaa/other/dash',
      'ui://bqaa.evil/dash/child',
      'ui://bqaa:1/dash/child',
      'ui://evil@bqaa/dash/child',
      'ui://bqaa/dash/../secret',
      'https://bqaa/dash/child',
  ):
    assert not policy.admits(denied), denied


@pytest.mark.conformance('P1-RPOL-03')
def test_prefix_entry_with_trailing_slash():
  """P1-RPOL-03: `dash/` admits itself and beneath it, but not `dash`."""
  policy = ResourceReadPolicy(
      _WIDGET, [ResourcePolicyEntry.prefix('ui://bqaa/dash/')]
  )
  assert policy.admits('ui://bqaa/dash/')
  assert policy.admits('ui://bqaa/dash/child')
  assert not policy.admits('ui://bqaa/dash')
  assert not policy.admits('ui://bqaa/dashboard')


def test_prefix_entry_without_path_admits_the_authority():
  policy = ResourceReadPolicy(
      _WIDGET, [ResourcePolicyEntry.prefix('ui://bqaa')]
  )
  assert policy.admits('ui://bqaa')
  assert policy.admits('ui://bqaa/anything/at/all?x')
  assert not policy.admits('ui://bqaa.evil/x')
  assert not policy.admits('ui://bqaa:8080/x')
  https_policy = ResourceReadPolicy(
      _WIDGET, [ResourcePolicyEntry.prefix('https://Example.com:443')]
  )
  assert https_policy.admits('https://example.com/a/b')
  assert https_policy.admits('https://example.com')
  assert not https_policy.admits('https://example.com:8443/a')


@pytest.mark.parametrize(
    'prefix', ['ui://bqaa/dash?tab=1', 'ui://bqaa/dash?', 'urn:bqaa:dash']
)
def test_prefix_entry_must_be_hierarchical_without_query(prefix):
  with pytest.raises(ValueError):
    ResourceReadPolicy(_WIDGET, [ResourcePolicyEntry.prefix(prefix)])


def test_opaque_exact_entry_allowed():
  policy = ResourceReadPolicy(
      _WIDGET, [ResourcePolicyEntry.exact('URN:bqaa:dash')]
  )
  assert policy.admits('urn:bqaa:dash')
  assert not policy.admits('urn:bqaa:dash:x')


def test_invalid_configuration_raises():
  with _raises(UriErrorReason.HOST):
    ResourceReadPolicy('ui:///dash')
  with pytest.raises(McpAppUriError):
    ResourceReadPolicy(_WIDGET, [ResourcePolicyEntry.exact('ui://bqaa/../x')])
  with pytest.raises(ValueError):
    ResourceReadPolicy(_WIDGET, ['ui://bqaa/x'])  # type: ignore[list-item]


@pytest.mark.parametrize(
    'uri',
    [
        None,
        42,
        b'ui://bqaa/dashboard.html',
        '',
        'dashboard.html',
        'ui://bqaa/' + 'a' * 100_000,
        'ui://bqaa/dashboard.html\n',
        'ui://bqaa/%zz',
        'ui://bq\u200daa/dashboard.html',
    ],
)
def test_invalid_uri_denied_never_raises(uri):
  policy = ResourceReadPolicy(
      _WIDGET, [ResourcePolicyEntry.prefix('ui://bqaa')]
  )
  assert policy.admits(uri) is False
  with pytest.raises(ResourceReadDeniedError) as excinfo:
    policy.check(uri)
  assert excinfo.value.reason is ResourceReadDenialReason.INVALID_URI
  assert excinfo.value.canonical_uri is None
  assert isinstance(excinfo.value.__cause__, McpAppUriError)
  assert len(str(excinfo.value)) < 300


def test_denied_error_is_an_mcp_apps_error():
  assert issubclass(ResourceReadDeniedError, McpAppsError)
  assert not issubclass(ResourceReadDeniedError, McpAppUriError)


def test_check_returns_canonical_uri():
  policy = ResourceReadPolicy(
      _WIDGET, [ResourcePolicyEntry.prefix('ui://bqaa/dash')]
  )
  checked = policy.check('UI://BQAA/dash/%7Echild#f')
  assert str(checked) == 'ui://bqaa/dash/~child'
  assert policy.check(checked) == checked


def test_entries_are_canonical_deduplicated_and_sorted():
  policy = ResourceReadPolicy(
      'UI://BQAA/dashboard.html',
      [
          ResourcePolicyEntry.prefix('ui://bqaa/z'),
          ResourcePolicyEntry.exact('UI://bqaa/b'),
          ResourcePolicyEntry.exact('ui://bqaa/b#frag'),
          ResourcePolicyEntry.prefix(canonicalize('ui://bqaa/a')),
      ],
  )
  assert str(policy.widget_uri) == _WIDGET
  assert policy.entries == (
      ResourcePolicyEntry('ui://bqaa/b', ResourceMatchKind.EXACT),
      ResourcePolicyEntry('ui://bqaa/a', ResourceMatchKind.PREFIX),
      ResourcePolicyEntry('ui://bqaa/z', ResourceMatchKind.PREFIX),
  )


def test_revision_is_a_content_digest():
  entries = [
      ResourcePolicyEntry.prefix('ui://bqaa/dash'),
      ResourcePolicyEntry.exact('ui://bqaa/data'),
  ]
  policy = ResourceReadPolicy(_WIDGET, entries)
  assert policy.revision.startswith('sha256:')
  same = ResourceReadPolicy(
      'UI://bqaa/dashboard.html',
      [
          ResourcePolicyEntry.exact('ui://BQAA/data'),
          ResourcePolicyEntry.prefix('ui://bqaa/dash'),
          ResourcePolicyEntry.prefix('ui://bqaa/dash'),
      ],
  )
  assert same.revision == policy.revision
  assert same == policy
  assert hash(same) == hash(policy)
  different = [
      ResourceReadPolicy('ui://bqaa/other.html', entries),
      ResourceReadPolicy(_WIDGET, entries[:1]),
      ResourceReadPolicy(
          _WIDGET, [ResourcePolicyEntry.exact('ui://bqaa/dash')]
      ),
      ResourceReadPolicy(
          _WIDGET,
          entries,
          canonicalizer=UriCanonicalizer().with_scheme(
              'x', canonicalize_generic, revision='1'
          ),
      ),
  ]
  revisions = {policy.revision} | {p.revision for p in different}
  assert len(revisions) == 1 + len(different)


def test_policy_is_immutable():
  policy = ResourceReadPolicy(_WIDGET)
  with pytest.raises(dataclasses.FrozenInstanceError):
    policy.revision = 'other'  # type: ignore[misc]
  with pytest.raises(dataclasses.FrozenInstanceError):
    policy.widget_uri = canonicalize('ui://bqaa/x')  # type: ignore[misc]
  assert isinstance(policy.entries, tuple)


def test_denied_error_truncates_huge_uri():
  policy = ResourceReadPolicy(_WIDGET)
  with pytest.raises(ResourceReadDeniedError) as excinfo:
    policy.check('ui://bqaa/' + 'x' * 4000)
  assert len(str(excinfo.value)) < 300
  assert excinfo.value.reason is ResourceReadDenialReason.NOT_ADMITTED
