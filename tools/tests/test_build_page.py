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

"""tools/build_page.py: the renderer page's AppBridge bundle and licenses."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load():
  spec = importlib.util.spec_from_file_location(
      '_build_page', ROOT / 'tools' / 'build_page.py'
  )
  assert spec and spec.loader
  module = importlib.util.module_from_spec(spec)
  sys.modules['_build_page'] = module
  spec.loader.exec_module(module)
  return module


build_page = _load()


def test_bundle_is_the_pinned_ext_apps_with_every_license() -> None:
  bundle = build_page.build()
  assert bundle == build_page.BUNDLE
  # The pin in the lockfile is the version the tool requires.
  lock = json.loads(
      (build_page.PROJECT / 'package-lock.json').read_text(encoding='utf-8')
  )
  locked = lock['packages']['node_modules/@modelcontextprotocol/ext-apps']
  assert locked['version'] == build_page.EXT_APPS_VERSION == '2.0.4'
  # The bundle exports the published AppBridge (no hand-written copy).
  text = bundle.read_text(encoding='utf-8')
  assert 'export{' in text.replace(' ', '') and 'AppBridge' in text
  notices = build_page.NOTICES.read_text(encoding='utf-8')
  assert '@modelcontextprotocol/ext-apps 2.0.4 (MIT)' in notices
  ext_apps_license = (
      build_page.NODE_MODULES / '@modelcontextprotocol/ext-apps/LICENSE'
  ).read_text(encoding='utf-8')
  assert ext_apps_license in notices
  # A second build is a no-op and the check agrees it is current.
  mtime = bundle.stat().st_mtime_ns
  assert build_page.build().stat().st_mtime_ns == mtime
  assert build_page.main(['--check']) == 0
