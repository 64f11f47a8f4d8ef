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

"""Builds the MCP Apps renderer page's AppBridge bundle into package data.

The renderer page (``src/google/adk/mcp_apps/host/web/``) speaks the host
side of MCP Apps through the published ``@modelcontextprotocol/ext-apps``
``AppBridge``, never a copy of the protocol. ``tools/page/`` pins that
package and the bundler in ``package-lock.json``; this tool installs the
lockfile with ``npm ci`` (only when it changed), bundles
``tools/page/bridge_entry.js`` into one browser ES module and writes it,
with the license text of every package inside it, to
``src/google/adk/mcp_apps/host/web/static/vendor/``. The output is
generated (git ignores it) and rebuilt by ``make page``, which ``make
wheel`` and ``make test`` run first, so the wheel always carries it.

Usage::

    python tools/build_page.py          # build when inputs changed
    python tools/build_page.py --check  # exit 1 when the bundle is stale
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROJECT = ROOT / 'tools' / 'page'
NODE_MODULES = PROJECT / 'node_modules'
ENTRY = PROJECT / 'bridge_entry.js'
OUT = ROOT / 'src' / 'google' / 'adk' / 'mcp_apps' / 'host' / 'web' / 'static'
VENDOR = OUT / 'vendor'
BUNDLE = VENDOR / 'app-bridge.js'
NOTICES = VENDOR / 'THIRD_PARTY_NOTICES.txt'
STAMP = VENDOR / '.build-inputs.sha256'
INSTALL_STAMP = NODE_MODULES / '.adk-lockfile.sha256'
EXT_APPS = '@modelcontextprotocol/ext-apps'
EXT_APPS_VERSION = '2.0.4'
_LICENSE_NAMES = re.compile(r'^(licen[cs]e|copying)(\.[a-z]+)?$', re.I)


def _sha256(*paths: pathlib.Path) -> str:
  digest = hashlib.sha256()
  for path in paths:
    digest.update(path.name.encode())
    digest.update(path.read_bytes())
  digest.update(pathlib.Path(__file__).read_bytes())
  return digest.hexdigest()


def _install() -> None:
  lock = PROJECT / 'package-lock.json'
  wanted = _sha256(lock)
  if INSTALL_STAMP.is_file() and INSTALL_STAMP.read_text().strip() == wanted:
    return
  subprocess.run(
      [
          'npm',
          'ci',
          '--ignore-scripts',
          '--no-audit',
          '--no-fund',
          '--loglevel=error',
      ],
      cwd=PROJECT,
      check=True,
  )
  INSTALL_STAMP.write_text(wanted + '\n')


def _package_of(input_path: str) -> str | None:
  match = re.search(r'node_modules/((?:@[^/]+/)?[^/]+)/', input_path)
  return match.group(1) if match else None


def _notices(packages: list[str]) -> str:
  parts = [
      'Third-party software bundled into app-bridge.js by tools/build_page.py'
      ' (from tools/page/package-lock.json).\n'
  ]
  for name in packages:
    pkg_dir = NODE_MODULES / name
    meta = json.loads((pkg_dir / 'package.json').read_text(encoding='utf-8'))
    header = f'{name} {meta.get("version")} ({meta.get("license")})'
    texts = [
        p.read_text(encoding='utf-8')
        for p in sorted(pkg_dir.iterdir())
        if p.is_file() and _LICENSE_NAMES.match(p.name)
    ]
    if not texts:
      raise SystemExit(f'build_page: {name} ships no license file')
    parts.append('=' * 78 + f'\n{header}\n' + '=' * 78 + '\n' + texts[0])
  return '\n'.join(parts)


def _check_pin() -> None:
  meta = json.loads(
      (NODE_MODULES / EXT_APPS / 'package.json').read_text(encoding='utf-8')
  )
  if meta['version'] != EXT_APPS_VERSION:
    raise SystemExit(
        f'build_page: {EXT_APPS} is {meta["version"]}, pinned'
        f' {EXT_APPS_VERSION}'
    )


def build() -> pathlib.Path:
  """Builds the bundle unless its inputs are unchanged; returns its path.

  Concurrent callers (pytest-xdist workers) serialize on a lock file.
  """
  PROJECT.mkdir(parents=True, exist_ok=True)
  with open(PROJECT / '.build.lock', 'w', encoding='utf-8') as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    return _build_locked()


def _build_locked() -> pathlib.Path:
  inputs = _sha256(PROJECT / 'package-lock.json', ENTRY)
  if (
      BUNDLE.is_file()
      and NOTICES.is_file()
      and STAMP.is_file()
      and STAMP.read_text().strip() == inputs
  ):
    return BUNDLE
  _install()
  _check_pin()
  with tempfile.TemporaryDirectory() as tmp:
    meta_path = pathlib.Path(tmp) / 'meta.json'
    out_path = pathlib.Path(tmp) / 'app-bridge.js'
    subprocess.run(
        [
            str(NODE_MODULES / '.bin' / 'esbuild'),
            str(ENTRY),
            '--bundle',
            '--format=esm',
            '--platform=browser',
            '--target=es2022',
            '--minify',
            '--legal-comments=none',
            '--log-level=warning',
            f'--metafile={meta_path}',
            f'--outfile={out_path}',
        ],
        cwd=PROJECT,
        check=True,
    )
    meta = json.loads(meta_path.read_text(encoding='utf-8'))
    packages = sorted(
        {p for p in map(_package_of, meta['inputs']) if p is not None}
    )
    if EXT_APPS not in packages:
      raise SystemExit(f'build_page: the bundle does not contain {EXT_APPS}')
    VENDOR.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(out_path, BUNDLE)
  NOTICES.write_text(_notices(packages), encoding='utf-8')
  for path in (BUNDLE, NOTICES):
    path.chmod(0o644)
  STAMP.write_text(inputs + '\n')
  return BUNDLE


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--check', action='store_true')
  args = parser.parse_args(argv)
  if args.check:
    inputs = _sha256(PROJECT / 'package-lock.json', ENTRY)
    fresh = STAMP.is_file() and STAMP.read_text().strip() == inputs
    print('page: up to date' if fresh else 'page: stale, run make page')
    return 0 if fresh else 1
  bundle = build()
  print(f'page: {bundle.relative_to(ROOT)} ({bundle.stat().st_size} bytes)')
  return 0


if __name__ == '__main__':
  sys.exit(main())
