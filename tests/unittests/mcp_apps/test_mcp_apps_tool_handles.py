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

"""Connection-bound tool handles: two-class classification, pre-call check."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import logging
import re

from google.adk.mcp_apps.affinity import tool_handles
from google.adk.mcp_apps.affinity.tool_handles import BoundToolHandle
from google.adk.mcp_apps.affinity.tool_handles import ClassDisagreementError
from google.adk.mcp_apps.affinity.tool_handles import classify_two_class
from google.adk.mcp_apps.affinity.tool_handles import comparable_projection
from google.adk.mcp_apps.affinity.tool_handles import DeclarationMismatchError
from google.adk.mcp_apps.affinity.tool_handles import Divergence
from google.adk.mcp_apps.affinity.tool_handles import ExecutionClass
from google.adk.mcp_apps.affinity.tool_handles import is_ui_associated
from google.adk.mcp_apps.affinity.tool_handles import ToolHandleError
from google.adk.mcp_apps.affinity.tool_handles import ToolRemovedError
from google.adk.mcp_apps.affinity.tool_handles import verify_declaration
from google.adk.mcp_apps.canonical_json import canonicalize
from google.adk.mcp_apps.canonical_json import CanonicalJsonError
from google.adk.mcp_apps.errors import McpAppsError
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from mcp import types
import pytest

_LOGGER = tool_handles.logger.name
_GENERATION = 'gen-7'
_CREDENTIALS = 'cred-digest-1'
_SCHEMA = {'type': 'object', 'properties': {'city': {'type': 'string'}}}
_OUTPUT = {'type': 'object', 'properties': {'temp': {'type': 'number'}}}
_SENTINEL = 'SENTINEL_SCHEMA_VALUE_42'
"""Planted in schemas and `_meta` to prove no message or log carries them."""


def _tool(
    name: str,
    *,
    schema: dict | None = None,
    output: dict | None = None,
    meta: dict | None = None,
    description: str | None = None,
) -> types.Tool:
  return types.Tool(
      name=name,
      description=description,
      inputSchema=copy.deepcopy(_SCHEMA if schema is None else schema),
      outputSchema=copy.deepcopy(output),
      _meta=copy.deepcopy(meta),
  )


def _ui(uri: str = 'ui://weather/view', **ui) -> dict:
  return {'ui': {'resourceUri': uri, **ui}}


def _classify(app_safe, callbacked):
  return classify_two_class(
      app_safe,
      callbacked,
      catalog_generation=_GENERATION,
      credential_context=_CREDENTIALS,
  )


def _records(caplog, name):
  return [
      r
      for r in caplog.records
      if r.name == _LOGGER and repr(name) in r.getMessage()
  ]


# --- UI association and the projection -------------------------------------


@pytest.mark.parametrize(
    ('meta', 'expected'),
    [
        (None, False),
        ({}, False),
        ({'ui': {}}, False),
        ({'ui': {'resourceUri': 'ui://a/b'}}, True),
        ({'ui/resourceUri': 'ui://a/b'}, True),
        ({'ui': {'resourceUri': 'https://a/b'}}, False),
        ({'ui': {'resourceUri': 7}}, False),
        ({'ui': 'ui://a/b'}, False),
        (
            {'ui': {'resourceUri': 'https://a'}, 'ui/resourceUri': 'ui://a'},
            True,
        ),
        ({'ui': {'visibility': ['app']}}, False),
    ],
    ids=[
        'no-meta',
        'empty-meta',
        'empty-ui',
        'nested',
        'flat',
        'nested-not-ui-scheme',
        'nested-not-string',
        'ui-not-object',
        'nested-invalid-flat-valid',
        'visibility-only',
    ],
)
def test_is_ui_associated_follows_mcp_tool_rules(meta, expected):
  """P2-BTH-01 precondition: UI association as `McpTool` reads it."""
  assert is_ui_associated(_tool('t', meta=meta)) is expected


def test_projection_members():
  """P2-BTH-04..08 precondition: what the pre-call re-list compares."""
  tool = _tool(
      'weather',
      output=_OUTPUT,
      meta={
          'ui': {'resourceUri': 'ui://w/v', 'visibility': ['model', 'app']},
          'ui/resourceUri': 'ui://w/flat',
      },
      description='ignored',
  )
  assert comparable_projection(tool) == {
      'name': 'weather',
      'inputSchema': _SCHEMA,
      'outputSchema': _OUTPUT,
      'visibility': ['app', 'model'],
      'resourceUri': {'nested': 'ui://w/v', 'flat': 'ui://w/flat'},
  }
  plain = comparable_projection(_tool('plain'))
  assert plain['outputSchema'] is None
  assert plain['visibility'] == ['app', 'model']
  assert plain['resourceUri'] == {'nested': None, 'flat': None}
  malformed = comparable_projection(_tool('m', meta={'ui': {'visibility': []}}))
  assert malformed['visibility'] == 'malformed:empty'


def test_projection_ignores_description_and_compares_json_numbers():
  """P2-BTH-05 precondition: `1` equals `1.0`; `true` is not `1`."""
  handle = _classify([_tool('a', meta=_ui())], []).handle('a')
  assert handle is not None
  verify_declaration(handle, [_tool('a', meta=_ui(), description='new')])
  as_int = _tool('n', schema={'type': 'object', 'maximum': 1})
  as_float = _tool('n', schema={'type': 'object', 'maximum': 1.0})
  as_bool = _tool('n', schema={'type': 'object', 'maximum': True})
  assert (
      tool_handles.differing_fields(
          comparable_projection(as_int), comparable_projection(as_float)
      )
      == ()
  )
  assert tool_handles.differing_fields(
      comparable_projection(as_int), comparable_projection(as_bool)
  ) == ('inputSchema',)


# --- Classification ----------------------------------------------------------


@pytest.mark.conformance('P2-BTH-01')
def test_ui_on_app_safe_non_ui_on_callbacked():
  """P2-BTH-01: UI tools bind to the app-safe class, others to callbacked."""
  app_safe = [_tool('show', meta=_ui()), _tool('plain')]
  callbacked = [_tool('show', meta=_ui()), _tool('plain')]
  catalog = _classify(app_safe, callbacked)
  assert [h.name for h in catalog.handles] == ['plain', 'show']
  show = catalog.handle('show')
  plain = catalog.handle('plain')
  assert show is not None and plain is not None
  assert show.execution_class is ExecutionClass.APP_SAFE
  assert show.callback_class is ExecutionClass.APP_SAFE
  assert show.catalog_generation == _GENERATION
  assert show.ui_associated
  assert plain.execution_class is ExecutionClass.CALLBACKED
  assert plain.callback_class is ExecutionClass.CALLBACKED
  assert plain.catalog_generation is None
  assert not plain.ui_associated
  assert catalog.divergences == ()
  assert catalog.refused == ()
  assert catalog.handle('missing') is None


@pytest.mark.conformance('P2-BTH-02')
def test_divergent_declaration_app_safe_wins_and_is_logged(caplog):
  """P2-BTH-02: the app-safe declaration wins; one warning names the fields."""
  safe = _tool(
      'show',
      schema={'type': 'object', 'properties': {_SENTINEL: {'type': 'string'}}},
      meta=_ui('ui://a/' + _SENTINEL),
  )
  other = _tool('show', meta=_ui('ui://b/' + _SENTINEL))
  with caplog.at_level(logging.WARNING, logger=_LOGGER):
    catalog = _classify([safe], [other])
  handle = catalog.handle('show')
  assert handle is not None
  assert handle.execution_class is ExecutionClass.APP_SAFE
  assert handle.declaration == safe
  assert catalog.divergences == (
      Divergence('show', ('inputSchema', 'resourceUri')),
  )
  records = _records(caplog, 'show')
  assert len(records) == 1
  message = records[0].getMessage()
  assert records[0].levelno == logging.WARNING
  assert 'inputSchema, resourceUri' in message
  assert 'app_safe' in message
  assert _SENTINEL not in message
  assert 'ui://' not in message


@pytest.mark.conformance('P2-BTH-03')
def test_handle_holds_the_binding_and_a_fingerprint():
  """P2-BTH-03: declaration, generation, classes and credential context."""
  listed = _tool('show', output=_OUTPUT, meta=_ui())
  catalog = _classify([listed], [])
  handle = catalog.handle('show')
  assert handle == BoundToolHandle(
      declaration=listed,
      catalog_generation=_GENERATION,
      callback_class=ExecutionClass.APP_SAFE,
      credential_context=_CREDENTIALS,
      execution_class=ExecutionClass.APP_SAFE,
      ui_associated=True,
  )
  assert handle.name == 'show'
  # A private copy: mutating the listed object does not reach the handle.
  assert handle.declaration is not listed
  listed.input_schema['properties']['city']['type'] = 'integer'
  assert handle.declaration.input_schema['properties']['city'] == {
      'type': 'string'
  }
  assert re.fullmatch('[0-9a-f]{64}', handle.fingerprint)
  assert (
      handle.fingerprint
      == hashlib.sha256(
          canonicalize(comparable_projection(handle.declaration))
      ).hexdigest()
  )
  changed = _classify([_tool('show', meta=_ui('ui://other'))], []).handle(
      'show'
  )
  assert changed is not None and changed.fingerprint != handle.fingerprint
  with pytest.raises(dataclasses.FrozenInstanceError):
    handle.execution_class = ExecutionClass.CALLBACKED  # type: ignore[misc]


def test_fingerprint_outside_canonical_domain_raises_but_compare_works():
  """P2-BTH-05 precondition: big integers are compared, not refused."""
  big = {'type': 'object', 'maximum': 2**64 - 1}
  handle = _classify([_tool('b', schema=big, meta=_ui())], []).handle('b')
  assert handle is not None
  with pytest.raises(CanonicalJsonError):
    handle.fingerprint  # pylint: disable=pointless-statement
  assert verify_declaration(handle, [_tool('b', schema=big, meta=_ui())])
  with pytest.raises(DeclarationMismatchError):
    verify_declaration(
        handle,
        [_tool('b', schema={'type': 'object', 'maximum': 2**64}, meta=_ui())],
    )


@pytest.mark.conformance('P2-BTH-09')
def test_capability_adapted_metadata_uses_app_safe(caplog):
  """P2-BTH-09: callbacked listing lacks `_meta.ui`; the model sees app-safe."""
  safe = _tool('show', meta=_ui(visibility=['model']))
  adapted = _tool('show')
  with caplog.at_level(logging.WARNING, logger=_LOGGER):
    catalog = _classify([safe], [adapted])
  handle = catalog.handle('show')
  assert handle is not None
  assert handle.declaration == safe
  assert handle.execution_class is ExecutionClass.APP_SAFE
  assert handle.catalog_generation == _GENERATION
  assert catalog.divergences == (
      Divergence('show', ('visibility', 'resourceUri')),
  )
  assert catalog.refused == ()
  assert len(_records(caplog, 'show')) == 1


@pytest.mark.conformance('P2-BTH-10')
def test_different_schemas_and_uris_execute_on_app_safe():
  """P2-BTH-10: every differing field resolves to the app-safe handle."""
  safe = _tool('show', output=_OUTPUT, meta=_ui('ui://a'))
  other = _tool(
      'show',
      schema={'type': 'object'},
      output={'type': 'object'},
      meta=_ui('ui://b'),
  )
  catalog = _classify([safe], [other])
  handle = catalog.handle('show')
  assert handle is not None
  assert handle.execution_class is ExecutionClass.APP_SAFE
  assert handle.declaration == safe
  assert catalog.divergences[0].fields == (
      'inputSchema',
      'outputSchema',
      'resourceUri',
  )
  # The model-facing declaration verifies against a fresh app-safe listing,
  # and not against the callbacked variant.
  assert verify_declaration(handle, [safe]) == safe
  with pytest.raises(DeclarationMismatchError):
    verify_declaration(handle, [other])


def test_app_only_ui_tool_is_classified_too():
  """P2-BTH-01: app-only tools are kept; the model catalog filters later."""
  catalog = _classify([_tool('hidden', meta=_ui(visibility=['app']))], [])
  handle = catalog.handle('hidden')
  assert handle is not None
  assert handle.execution_class is ExecutionClass.APP_SAFE


def test_non_ui_on_both_binds_callbacked_declaration(caplog):
  """P2-BTH-01: a non-UI tool runs, as upstream, on the callbacked class."""
  safe = _tool('plain', schema={'type': 'object'})
  callbacked = _tool('plain', output=_OUTPUT)
  with caplog.at_level(logging.WARNING, logger=_LOGGER):
    catalog = _classify([safe], [callbacked])
  handle = catalog.handle('plain')
  assert handle is not None
  assert handle.declaration == callbacked
  assert handle.execution_class is ExecutionClass.CALLBACKED
  assert handle.catalog_generation is None
  assert handle.credential_context == _CREDENTIALS
  assert catalog.divergences == (
      Divergence('plain', ('inputSchema', 'outputSchema')),
  )
  (record,) = _records(caplog, 'plain')
  assert 'callbacked declaration' in record.getMessage()


def test_non_ui_only_on_callbacked_binds_callbacked():
  """P3-ADM-06 (classification): callbacked-only non-UI tool is bound."""
  catalog = _classify([], [_tool('plain')])
  handle = catalog.handle('plain')
  assert handle is not None
  assert handle.execution_class is ExecutionClass.CALLBACKED
  assert catalog.divergences == ()


def test_ui_only_on_app_safe_binds_app_safe():
  """P3-ADM-06 (classification): app-safe-only UI tool is bound there."""
  catalog = _classify([_tool('show', meta=_ui())], [])
  handle = catalog.handle('show')
  assert handle is not None
  assert handle.execution_class is ExecutionClass.APP_SAFE
  assert catalog.divergences == ()


@pytest.mark.parametrize(
    ('app_safe', 'detail'),
    [
        ([_tool('show')], tool_handles.UI_ONLY_ON_CALLBACKED),
        ([], tool_handles.UI_ON_CALLBACKED_ABSENT_APP_SAFE),
    ],
    ids=['non-ui-on-app-safe', 'absent-on-app-safe'],
)
def test_ui_on_callbacked_only_is_refused(app_safe, detail, caplog):
  """P3-ADM-11 (classification): a UI/non-UI disagreement fails closed."""
  callbacked = [_tool('show', meta=_ui('ui://x/' + _SENTINEL))]
  with caplog.at_level(logging.WARNING, logger=_LOGGER):
    catalog = _classify(app_safe, callbacked)
  assert catalog.handles == ()
  assert catalog.divergences == ()
  assert catalog.refused == (('show', ClassDisagreementError('show', detail)),)
  name, error = catalog.refused[0]
  assert error.tool_name == name == 'show'
  assert error.detail == detail
  assert isinstance(error, ToolHandleError)
  assert isinstance(error, McpAppsError)
  (record,) = _records(caplog, 'show')
  assert detail in record.getMessage()
  assert _SENTINEL not in record.getMessage()


def test_non_ui_only_on_app_safe_is_refused(caplog):
  """P3-ADM-06 (classification): the executing class must declare it."""
  with caplog.at_level(logging.WARNING, logger=_LOGGER):
    catalog = _classify([_tool('plain')], [])
  assert catalog.handles == ()
  assert catalog.refused == (
      (
          'plain',
          ClassDisagreementError('plain', 'listed only on the app-safe class'),
      ),
  )
  assert len(_records(caplog, 'plain')) == 1


@pytest.mark.parametrize(
    ('app_safe', 'callbacked', 'detail'),
    [
        (
            [_tool('d', meta=_ui()), _tool('d', meta=_ui())],
            [_tool('d')],
            tool_handles.LISTED_TWICE_APP_SAFE,
        ),
        (
            [_tool('d', meta=_ui())],
            [_tool('d'), _tool('d', output=_OUTPUT)],
            tool_handles.LISTED_TWICE_CALLBACKED,
        ),
        (
            [_tool('d'), _tool('d')],
            [_tool('d'), _tool('d')],
            tool_handles.LISTED_TWICE_APP_SAFE,
        ),
    ],
    ids=['twice-on-app-safe', 'twice-on-callbacked', 'twice-on-both'],
)
def test_duplicate_names_are_refused_whole(app_safe, callbacked, detail):
  """P3-ADM-06 (classification): a name listed twice binds to nothing."""
  catalog = _classify(app_safe + [_tool('ok')], callbacked + [_tool('ok')])
  assert [h.name for h in catalog.handles] == ['ok']
  assert catalog.refused == (('d', ClassDisagreementError('d', detail)),)
  assert 'listed twice' in detail


def test_reclassification_follows_the_fresh_listings():
  """P3-ADM-04/05 (classification): UI status comes from the fresh lists."""
  before = _classify([_tool('t')], [_tool('t')])
  after = _classify([_tool('t', meta=_ui())], [_tool('t')])
  back = _classify([_tool('t')], [_tool('t')])
  assert before.handles[0].execution_class is ExecutionClass.CALLBACKED
  assert after.handles[0].execution_class is ExecutionClass.APP_SAFE
  assert back == before


def test_errors_are_values_without_argument_values():
  """P2-BTH-04..08: typed errors carry names and fields, never values."""
  assert ClassDisagreementError('a', 'x') == ClassDisagreementError('a', 'x')
  assert ClassDisagreementError('a', 'x') != ClassDisagreementError('a', 'y')
  assert hash(ToolRemovedError('a')) == hash(ToolRemovedError('a'))
  assert ToolRemovedError('a') != ClassDisagreementError('a', 'x')
  mismatch = DeclarationMismatchError('a', ['inputSchema', 'visibility'])
  assert mismatch.fields == ('inputSchema', 'visibility')
  assert str(mismatch) == (
      "MCP tool 'a' no longer matches the declaration shown to the model;"
      ' differing: inputSchema, visibility'
  )
  assert str(ToolRemovedError('a')) == (
      "MCP tool 'a' is no longer listed on its execution connection"
  )
  assert str(
      ClassDisagreementError('a', 'listed twice on the app-safe class')
  ) == (
      "MCP tool 'a' was not bound to an execution class: listed twice on the"
      ' app-safe class'
  )


# --- The pre-call re-list ----------------------------------------------------


def _ui_handle(**overrides) -> BoundToolHandle:
  fields = {'output': _OUTPUT, 'meta': _ui(visibility=['model', 'app'])}
  fields.update(overrides)
  handle = _classify([_tool('show', **fields)], []).handle('show')
  assert handle is not None
  return handle


def test_verify_returns_the_fresh_declaration():
  """P2-BTH-04 precondition: an unchanged declaration passes."""
  handle = _ui_handle()
  fresh = _tool('show', output=_OUTPUT, meta=_ui(visibility=['app', 'model']))
  assert verify_declaration(handle, [_tool('other'), fresh]) is fresh


@pytest.mark.conformance('P2-BTH-04')
def test_name_no_longer_listed():
  """P2-BTH-04: the name is gone (renamed): fails closed."""
  handle = _ui_handle()
  renamed = _tool('show_v2', output=_OUTPUT, meta=handle.declaration.meta)
  with pytest.raises(ToolRemovedError) as caught:
    verify_declaration(handle, [renamed])
  assert caught.value.tool_name == 'show'


@pytest.mark.conformance('P2-BTH-04')
def test_name_listed_twice():
  """P2-BTH-04: the name is listed twice: fails closed on `name`."""
  handle = _ui_handle()
  with pytest.raises(DeclarationMismatchError) as caught:
    verify_declaration(handle, [handle.declaration, handle.declaration])
  assert caught.value.fields == ('name',)
  assert caught.value.detail == 'listed twice'


@pytest.mark.conformance('P2-BTH-05')
def test_input_schema_changed():
  """P2-BTH-05: an input-schema change fails closed."""
  handle = _ui_handle()
  fresh = _tool(
      'show',
      schema={'type': 'object', 'properties': {'city': {'type': _SENTINEL}}},
      output=_OUTPUT,
      meta=handle.declaration.meta,
  )
  with pytest.raises(DeclarationMismatchError) as caught:
    verify_declaration(handle, [fresh])
  assert caught.value.fields == ('inputSchema',)
  assert caught.value.tool_name == 'show'
  assert _SENTINEL not in str(caught.value)


@pytest.mark.conformance('P2-BTH-06')
@pytest.mark.parametrize(
    'output',
    [None, {'type': 'object', 'properties': {'temp': {'type': 'string'}}}],
    ids=['removed', 'changed'],
)
def test_output_schema_changed(output):
  """P2-BTH-06: an output-schema change (or removal) fails closed."""
  handle = _ui_handle()
  fresh = _tool('show', output=output, meta=handle.declaration.meta)
  with pytest.raises(DeclarationMismatchError) as caught:
    verify_declaration(handle, [fresh])
  assert caught.value.fields == ('outputSchema',)


@pytest.mark.conformance('P2-BTH-07')
@pytest.mark.parametrize(
    'visibility',
    [['app'], ['model'], [], 'app'],
    ids=['app-only', 'model-only', 'malformed-empty', 'malformed-string'],
)
def test_visibility_changed(visibility):
  """P2-BTH-07: `["model","app"]` to `["app"]` (or malformed) fails closed."""
  handle = _ui_handle()
  fresh = _tool('show', output=_OUTPUT, meta=_ui(visibility=visibility))
  with pytest.raises(DeclarationMismatchError) as caught:
    verify_declaration(handle, [fresh])
  assert caught.value.fields == ('visibility',)


@pytest.mark.conformance('P2-BTH-07')
def test_default_visibility_equals_declared_both():
  """P2-BTH-07: absent visibility normalizes to `["app", "model"]`."""
  handle = _ui_handle()
  assert verify_declaration(handle, [_tool('show', output=_OUTPUT, meta=_ui())])


@pytest.mark.conformance('P2-BTH-08')
@pytest.mark.parametrize(
    'meta',
    [
        _ui('ui://weather/other', visibility=['model', 'app']),
        {'ui': {'visibility': ['model', 'app']}},
        {
            'ui': {'resourceUri': 'ui://weather/view'},
            'ui/resourceUri': 'ui://weather/view',
        },
    ],
    ids=['uri-changed', 'uri-removed', 'flat-form-added'],
)
def test_resource_uri_changed(meta):
  """P2-BTH-08: a `_meta.ui.resourceUri` change fails closed."""
  handle = _ui_handle(meta=_ui())
  fresh = _tool('show', output=_OUTPUT, meta=meta)
  with pytest.raises(DeclarationMismatchError) as caught:
    verify_declaration(handle, [fresh])
  assert 'resourceUri' in caught.value.fields
  assert 'ui://' not in str(caught.value)


@pytest.mark.conformance('P2-BTH-08')
def test_flat_form_resource_uri_changed():
  """P2-BTH-08: the deprecated flat `_meta["ui/resourceUri"]` form."""
  handle = _ui_handle(meta={'ui/resourceUri': 'ui://weather/view'})
  assert handle.ui_associated
  same = _tool(
      'show', output=_OUTPUT, meta={'ui/resourceUri': 'ui://weather/view'}
  )
  assert verify_declaration(handle, [same]) is same
  for meta in (
      {'ui/resourceUri': 'ui://weather/other'},
      {'ui': {'resourceUri': 'ui://weather/view'}},
      None,
  ):
    with pytest.raises(DeclarationMismatchError) as caught:
      verify_declaration(handle, [_tool('show', output=_OUTPUT, meta=meta)])
    assert caught.value.fields == ('resourceUri',)


def test_verify_names_every_differing_field():
  """P2-BTH-05..08: all differing fields are named, in projection order."""
  handle = _ui_handle()
  fresh = _tool(
      'show', schema={'type': 'object'}, meta=_ui('ui://x', visibility=['app'])
  )
  with pytest.raises(DeclarationMismatchError) as caught:
    verify_declaration(handle, [fresh])
  assert caught.value.fields == (
      'inputSchema',
      'outputSchema',
      'visibility',
      'resourceUri',
  )


@pytest.mark.conformance('P2-BTH-11')
def test_removed_between_listing_and_call():
  """P2-BTH-11: a tool removed before the call fails closed, typed."""
  handle = _ui_handle()
  for fresh in ([], [_tool('other', meta=_ui())]):
    with pytest.raises(ToolRemovedError) as caught:
      verify_declaration(handle, fresh)
    assert caught.value.tool_name == 'show'
    assert isinstance(caught.value, McpAppsError)


# --- Determinism -------------------------------------------------------------

_APP_SAFE_LISTING = (
    _tool('ui_both', meta=_ui('ui://a')),
    _tool('ui_diverged', schema={'type': 'object'}, meta=_ui('ui://a')),
    _tool('ui_adapted', meta=_ui()),
    _tool('ui_app_only', meta=_ui(visibility=['app'])),
    _tool('ui_only_safe', meta=_ui()),
    _tool('plain_both'),
    _tool('plain_diverged', output=_OUTPUT),
    _tool('plain_only_safe'),
    _tool('ui_disagree'),
    _tool('dup_safe', meta=_ui('ui://1')),
    _tool('dup_safe', meta=_ui('ui://2')),
    _tool('dup_cb'),
)
_CALLBACKED_LISTING = (
    _tool('ui_both', meta=_ui('ui://a')),
    _tool('ui_diverged', meta=_ui('ui://b')),
    _tool('ui_adapted'),
    _tool('ui_app_only'),
    _tool('plain_both'),
    _tool('plain_diverged'),
    _tool('plain_only_cb'),
    _tool('ui_disagree', meta=_ui()),
    _tool('ui_only_cb', meta=_ui()),
    _tool('dup_safe'),
    _tool('dup_cb', output=_OUTPUT),
    _tool('dup_cb'),
)
_BASELINE = _classify(_APP_SAFE_LISTING, _CALLBACKED_LISTING)


def test_baseline_classification():
  """P2-BTH-01/02, P3-ADM-06/11: the fixed set covers every branch."""
  classes = {h.name: h.execution_class for h in _BASELINE.handles}
  assert classes == {
      'plain_both': ExecutionClass.CALLBACKED,
      'plain_diverged': ExecutionClass.CALLBACKED,
      'plain_only_cb': ExecutionClass.CALLBACKED,
      'ui_adapted': ExecutionClass.APP_SAFE,
      'ui_app_only': ExecutionClass.APP_SAFE,
      'ui_both': ExecutionClass.APP_SAFE,
      'ui_diverged': ExecutionClass.APP_SAFE,
      'ui_only_safe': ExecutionClass.APP_SAFE,
  }
  assert [h.name for h in _BASELINE.handles] == sorted(classes)
  assert [d.tool_name for d in _BASELINE.divergences] == [
      'plain_diverged',
      'ui_adapted',
      'ui_app_only',
      'ui_diverged',
  ]
  assert [(name, e.detail) for name, e in _BASELINE.refused] == [
      ('dup_cb', tool_handles.LISTED_TWICE_CALLBACKED),
      ('dup_safe', tool_handles.LISTED_TWICE_APP_SAFE),
      ('plain_only_safe', tool_handles.ONLY_ON_APP_SAFE),
      ('ui_disagree', tool_handles.UI_ONLY_ON_CALLBACKED),
      ('ui_only_cb', tool_handles.UI_ON_CALLBACKED_ABSENT_APP_SAFE),
  ]


@settings(max_examples=250, deadline=None)
@given(
    app_safe=st.permutations(_APP_SAFE_LISTING),
    callbacked=st.permutations(_CALLBACKED_LISTING),
)
def test_classification_is_independent_of_listing_order(app_safe, callbacked):
  """P3-ADM-03: the same listings, in any order, give an equal catalog."""
  catalog = _classify(app_safe, callbacked)
  assert catalog == _BASELINE
  assert [h.fingerprint for h in catalog.handles] == [
      h.fingerprint for h in _BASELINE.handles
  ]
