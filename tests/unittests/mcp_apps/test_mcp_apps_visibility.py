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

"""Visibility normalization: one reading of `_meta.ui.visibility` for all."""

from __future__ import annotations

import logging

from google.adk.mcp_apps.catalog import model_catalog
from google.adk.mcp_apps.catalog import visibility
from google.adk.mcp_apps.catalog.visibility import MalformedVisibility
from mcp import types
import pytest


def _tool(name: str = 't', meta=None) -> types.Tool:
  # From the wire shape, which MCP SDK 1.x and 2.x both accept.
  wire = {'name': name, 'inputSchema': {'type': 'object'}, '_meta': meta}
  return types.Tool.model_validate(wire)


@pytest.mark.conformance('P1-VIS-01')
@pytest.mark.parametrize(
    'meta',
    [None, {}, {'ui': {}}, {'ui': {'resourceUri': 'ui://x/y'}}, {'other': 1}],
    ids=[
        'no-meta',
        'empty-meta',
        'empty-ui',
        'ui-without-visibility',
        'unrelated-meta',
    ],
)
def test_absent_visibility_defaults_to_model_and_app(meta):
  """P1-VIS-01: absent visibility normalizes to ["model", "app"]."""
  normalized = visibility.normalize_visibility(meta)
  assert normalized.callers == {'model', 'app'}
  assert normalized.model and normalized.app
  assert normalized.malformed is None


@pytest.mark.parametrize(
    ('declared', 'model', 'app'),
    [
        (['model'], True, False),
        (['app'], False, True),
        (['app', 'model'], True, True),
        (['app', 'app'], False, True),
    ],
)
def test_declared_visibility_is_kept(declared, model, app):
  normalized = visibility.normalize_visibility({'ui': {'visibility': declared}})
  assert (normalized.model, normalized.app) == (model, app)
  assert normalized.malformed is None


MALFORMED_SHAPES = [
    pytest.param(
        {'ui': 'app'}, MalformedVisibility.UI_NOT_OBJECT, id='ui-not-object'
    ),
    pytest.param(
        {'ui': ['app']}, MalformedVisibility.UI_NOT_OBJECT, id='ui-is-list'
    ),
    pytest.param(
        {'ui': {'visibility': 'app'}},
        MalformedVisibility.NOT_A_LIST,
        id='string',
    ),
    pytest.param(
        {'ui': {'visibility': {'app': True}}},
        MalformedVisibility.NOT_A_LIST,
        id='object',
    ),
    pytest.param(
        {'ui': {'visibility': None}}, MalformedVisibility.NOT_A_LIST, id='null'
    ),
    pytest.param(
        {'ui': {'visibility': ['app', 1]}},
        MalformedVisibility.NON_STRING_MEMBER,
        id='non-string-member',
    ),
    pytest.param(
        {'ui': {'visibility': ['app', 'user']}},
        MalformedVisibility.UNKNOWN_MEMBER,
        id='unknown-member',
    ),
    pytest.param(
        {'ui': {'visibility': ['Model']}},
        MalformedVisibility.UNKNOWN_MEMBER,
        id='wrong-case',
    ),
    pytest.param(
        {'ui': {'visibility': []}}, MalformedVisibility.EMPTY, id='empty-list'
    ),
]


@pytest.mark.conformance('P1-VIS-04')
@pytest.mark.parametrize(('meta', 'reason'), MALFORMED_SHAPES)
def test_malformed_visibility_is_deny_all(meta, reason):
  """P1-VIS-04/05: every malformed shape is visible to no one."""
  normalized = visibility.normalize_visibility(meta)
  assert normalized.malformed is reason
  assert not normalized.model and not normalized.app
  assert not model_catalog.admits_for_model(_tool(meta=meta), prefix=None)


@pytest.mark.conformance('P1-VIS-06')
@pytest.mark.parametrize(('meta', 'reason'), MALFORMED_SHAPES)
def test_malformed_visibility_logs_tool_and_reason(meta, reason, caplog):
  """P1-VIS-06: one log record names the tool and the failure."""
  with caplog.at_level(logging.WARNING):
    model_catalog.admits_for_model(_tool('bad_tool', meta), prefix=None)
  records = [r for r in caplog.records if 'bad_tool' in r.getMessage()]
  assert len(records) == 1
  assert reason.value in records[0].getMessage()


def test_tool_visibility_reads_the_sdk_tool_meta():
  tool = _tool(meta={'ui': {'visibility': ['app']}})
  assert tool.meta == {'ui': {'visibility': ['app']}}
  assert visibility.tool_visibility(tool) == visibility.Visibility(
      frozenset({'app'})
  )
