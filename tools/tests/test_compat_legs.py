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

"""Tests for tools/compat_legs.py that build no virtualenv."""

from __future__ import annotations

from pathlib import Path
import sys

import compat_legs as legs
import pytest


def _write(root: Path, rel: str, text: str = '') -> None:
  path = root / rel
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_text(text, encoding='utf-8')


def test_upstream_modules_names_packages_and_modules_but_not_main(tmp_path):
  for rel in (
      'google/adk/__init__.py',
      'google/adk/runners.py',
      'google/adk/cli/__init__.py',
      'google/adk/cli/__main__.py',
      'google/adk/cli/fast_api.py',
  ):
    _write(tmp_path, rel)

  assert legs.upstream_modules(tmp_path) == [
      'google.adk',
      'google.adk.cli',
      'google.adk.cli.fast_api',
      'google.adk.runners',
  ]


def test_import_scan_reports_what_failed_and_the_missing_package(tmp_path):
  _write(tmp_path, 'google/adk/__init__.py')
  _write(tmp_path, 'google/adk/fine.py', 'print("noise on stdout")\n')
  _write(tmp_path, 'google/adk/needs_sdk.py', 'import not_installed_sdk\n')
  _write(tmp_path, 'google/adk/broken.py', 'raise RuntimeError("boom")\n')
  tree = legs.Tree('synthetic', tmp_path)
  venv = Path(sys.executable).parent.parent

  result = legs._worker(
      venv,
      tree,
      'import_scan.py',
      stdin='google.adk.fine\ngoogle.adk.needs_sdk\ngoogle.adk.broken\n',
  )

  assert set(result['errors']) == {'google.adk.needs_sdk', 'google.adk.broken'}
  assert result['missing'] == {'google.adk.needs_sdk': 'not_installed_sdk'}
  assert 'boom' in result['errors']['google.adk.broken']


def test_mcp1_requirements_pin_mcp_and_keep_the_rest_of_the_extra():
  requirements = legs.mcp1_requirements('1.24.*')
  pyproject = legs.pristine_pyproject()['project']

  assert [r for r in requirements if r.startswith('mcp')] == ['mcp==1.24.*']
  assert set(pyproject['dependencies']) <= set(requirements)
  extra = pyproject['optional-dependencies']['mcp']
  assert {r for r in extra if not r.startswith('mcp')} <= set(requirements)
  assert {r.split('>')[0].split('=')[0] for r in requirements} >= {
      'pytest',
      'pytest-asyncio',
      'hypothesis',
  }


def test_the_mcp1_selection_names_existing_test_files():
  for test in legs.MCP1_TESTS:
    assert (legs.ROOT / test).is_file(), test


@pytest.mark.parametrize('release', legs.MCP1_RELEASES)
def test_mcp1_releases_are_1x(release):
  assert release.startswith('1.')


_TURN = {'stored': [{'author': 'user', 'content': {'parts': [{'text': 'hi'}]}}]}


def _stamped(**keys: str) -> dict:
  return {'stored': [{**_TURN['stored'][0], **keys}]}


@pytest.mark.parametrize(
    'keys',
    [
        {'invocation_origin': 'user'},
        {'invocationOrigin': 'system', 'emitter': 'session-api'},
    ],
)
def test_declared_provenance_stamping_is_tolerated(keys):
  assert legs._declared_provenance_failure(_TURN, _stamped(**keys)) == ''


@pytest.mark.parametrize(
    'patched',
    [
        _TURN,  # Not stamped at all.
        _stamped(invocation_origin='model'),  # Outside the vocabulary.
        _stamped(emitter='system'),  # An emitter without an origin.
        _stamped(invocation_origin='user', audience='app_audit'),
        {'stored': [{'author': 'agent', 'invocation_origin': 'user'}]},
    ],
)
def test_anything_beyond_declared_provenance_stamping_fails(patched):
  assert legs._declared_provenance_failure(_TURN, patched) != ''
