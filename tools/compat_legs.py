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

"""The compatibility legs: the drop-in promise on installs ADK supports.

The project's virtualenv has every extra the series needs, so the suite
alone cannot show that the patched package still works where pristine
google-adk 2.13.0 does with less installed. Each leg builds a virtualenv of
its own under `.cache/compat/` (kept, and reused while its requirements are
unchanged) and compares the patched trees with pristine there:

* `core` (`make compat-core`): only google-adk 2.13.0's core requirements,
  no extras, so no `mcp`. Every upstream module that imports on pristine
  must import on every prefix of the series; one `InMemoryRunner` turn with
  a scripted model, the FastAPI app of `google.adk.cli.fast_api` on
  loopback and `adk api_server` must give what pristine gives.
* `mcp1` (`make compat-mcp1`): the `mcp` extra with MCP SDK 1.24 and with
  the newest 1.x. PR 1's unbound tests that need no SDK-2 API, the
  pristine-vs-patched differential and the 1.x refusal of a bound profile
  run there. The fixture MCP servers are SDK-2 programs, so they run under
  the project's own interpreter (`ADK_FIXTURE_SERVER_PYTHON`): the client
  under test is on 1.x, the server is a real one, as for any user.

Pristine is prefix 0 of the series (`tools/series.py materialize 0`); lower
prefixes are materialized from `patches/`; the top of the stack is the
working tree's `src/`, or with `--wheel` the built distribution installed
(without dependencies) beside the leg's virtualenv.

Standard library only; run it with any Python 3.11+.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import difflib
import hashlib
import json
import os
from pathlib import Path
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from typing import Any
from typing import Sequence

ROOT = Path(__file__).resolve().parent.parent
COMPAT_DIR = ROOT / 'tools' / 'compat'
CACHE = ROOT / '.cache' / 'compat'
sys.path.insert(0, str(ROOT / 'tools'))

import series as series_tool  # pylint: disable=g-import-not-at-top,wrong-import-position

# MCP SDK 1.x releases the mcp1 leg runs on: the oldest the `mcp` extra
# admits and the newest 1.x release (1.30 when this was written; bump it
# when a newer 1.x appears: `pip index versions mcp`).
MCP1_RELEASES = ('1.24.*', '1.30.*')

# What the mcp1 leg runs. Only tests that import no SDK-2 API: the rest of
# PR 1's tests drive the SDK-2 fixture helpers in-process. Run with
# `--noconftest`, since `tests/integration/mcp_apps/conftest.py` imports the
# SDK-2 client at module level.
MCP1_TESTS = (
    'tests/unittests/mcp_apps/test_mcp_apps_projection.py',
    'tests/unittests/mcp_apps/test_mcp_apps_resource_policy.py',
    'tests/unittests/mcp_apps/test_mcp_apps_uri.py',
    'tests/unittests/mcp_apps/test_mcp_apps_uri_policy_battery.py',
    'tests/unittests/mcp_apps/test_mcp_apps_listing.py',
    'tests/unittests/mcp_apps/test_mcp_apps_visibility.py',
    'tests/integration/mcp_apps/test_mcp_apps_compat_differential.py',
    'tests/integration/mcp_apps/test_mcp_apps_sdk_compat.py',
    'tests/integration/mcp_apps/test_mcp_apps_sdk1_refusal.py',
)
# Test tooling for the mcp1 leg, with the project's pins.
_TEST_TOOLS = ('pytest', 'pytest-asyncio', 'hypothesis')
_WORKER_SECONDS = 600.0


class LegError(Exception):
  """The leg could not run (as opposed to: it ran and found a failure)."""


# ---------------------------------------------------------------------------
# Virtualenvs


def _venv_python(venv: Path) -> Path:
  return venv / 'bin' / 'python'


def leg_venv(name: str, requirements: Sequence[str]) -> Path:
  """A cached virtualenv holding exactly `requirements` (and their deps).

  Keyed by the requirements and the interpreter version, so a changed pin
  builds a new one; stale ones of the same name are removed.
  """
  spec = '\n'.join(sorted(requirements)) + '\n'
  digest = hashlib.sha256(f'{sys.version_info[:2]}\n{spec}'.encode())
  key = digest.hexdigest()[:16]
  venv = CACHE / f'venv-{name}-{key}'
  stamp = venv / '.compat-requirements'
  if stamp.is_file() and stamp.read_text() == spec:
    return venv
  CACHE.mkdir(parents=True, exist_ok=True)
  for stale in CACHE.glob(f'venv-{name}-*'):
    shutil.rmtree(stale, ignore_errors=True)
  print(f'compat: building the {name} virtualenv (once)', flush=True)
  subprocess.run([sys.executable, '-m', 'venv', str(venv)], check=True)
  with tempfile.NamedTemporaryFile('w', suffix='.txt') as reqs:
    reqs.write(spec)
    reqs.flush()
    try:
      _pip(_venv_python(venv), '-r', reqs.name)
    except LegError:
      shutil.rmtree(venv, ignore_errors=True)
      raise
  stamp.write_text(spec)
  return venv


def _pip(python: Path, *args: str) -> None:
  """`pip install` with `python`; raises LegError with pip's stderr."""
  proc = subprocess.run(
      [
          str(python),
          '-m',
          'pip',
          'install',
          '--quiet',
          '--disable-pip-version-check',
          *args,
      ],
      capture_output=True,
      text=True,
  )
  if proc.returncode != 0:
    raise LegError(f'pip install {" ".join(args)} failed:\n{proc.stderr}')


def _installed(venv: Path, distribution: str) -> str | None:
  proc = subprocess.run(
      [
          str(_venv_python(venv)),
          '-c',
          (
              'import importlib.metadata as m, sys\n'
              'try: print(m.version(sys.argv[1]))\n'
              'except m.PackageNotFoundError: pass'
          ),
          distribution,
      ],
      capture_output=True,
      text=True,
      check=True,
  )
  return proc.stdout.strip() or None


# ---------------------------------------------------------------------------
# Trees


@dataclasses.dataclass(frozen=True)
class Tree:
  label: str
  src: Path
  prefix: int = 0
  """How many PRs of the stack the tree holds (0: pristine)."""


def _series() -> series_tool.Series:
  return series_tool.Series.load(ROOT)


def pristine_tree() -> Tree:
  return Tree('pristine 2.13.0', series_tool.pristine_src(ROOT))


def pristine_pyproject() -> dict[str, Any]:
  path = series_tool.pristine_src(ROOT).parent / 'pyproject.toml'
  return tomllib.loads(path.read_text(encoding='utf-8'))


def patched_trees(wheel: Path | None) -> list[Tree]:
  """Every prefix of the stack with content; the top one as built."""
  series = _series()
  numbers = [
      k
      for k, patch in enumerate(series_tool.committed_patches(series), 1)
      if patch is not None
  ]
  trees = []
  for k in numbers[:-1]:
    dest = CACHE / f'prefix-{k}'
    series_tool.materialize_prefix(series, k, dest)
    trees.append(Tree(f'prefix {k}', dest / 'src', k))
  last = numbers[-1] if numbers else 0
  top = f'prefix {last}' if numbers else 'working tree'
  if wheel is None:
    trees.append(Tree(f'{top} (working tree)', ROOT / 'src', last))
  else:
    trees.append(Tree(f'{top} ({wheel.name})', _unpacked_wheel(wheel), last))
  return trees


def _unpacked_wheel(wheel: Path) -> Path:
  """The wheel installed without dependencies into a scratch target."""
  target = CACHE / 'wheel-target'
  shutil.rmtree(target, ignore_errors=True)
  _pip(Path(sys.executable), '--no-deps', '--target', str(target), str(wheel))
  return target


def _tree_env(tree: Tree, extra: Sequence[Path] = ()) -> dict[str, str]:
  env = {
      k: v
      for k, v in os.environ.items()
      if k not in ('PYTHONPATH', 'VIRTUAL_ENV')
  }
  env['PYTHONPATH'] = os.pathsep.join(str(p) for p in (tree.src, *extra))
  env['PYTHONDONTWRITEBYTECODE'] = '1'
  return env


def _worker(
    venv: Path, tree: Tree, script: str, *args: str, stdin: str = ''
) -> dict[str, Any]:
  proc = subprocess.run(
      [str(_venv_python(venv)), str(COMPAT_DIR / script), *args],
      input=stdin,
      capture_output=True,
      text=True,
      env=_tree_env(tree),
      cwd=tempfile.gettempdir(),
      timeout=_WORKER_SECONDS,
  )
  lines = proc.stdout.strip().splitlines()
  if proc.returncode != 0 or not lines:
    raise LegError(
        f'{script} failed on {tree.label} ({proc.returncode}):\n'
        f'{proc.stderr[-4000:]}'
    )
  result: dict[str, Any] = json.loads(lines[-1])
  expected = (tree.src / 'google' / 'adk' / '__init__.py').resolve()
  if Path(result['adk_file']).resolve() != expected:
    raise LegError(f'{script} ran {result["adk_file"]}, not {expected}')
  return result


# ---------------------------------------------------------------------------
# The core leg


def upstream_modules(src: Path) -> list[str]:
  """Every module of a google-adk tree, by file (`__main__` left out)."""
  names = []
  for path in sorted((src / 'google' / 'adk').rglob('*.py')):
    parts = list(path.relative_to(src).with_suffix('').parts)
    if parts[-1] == '__main__':
      continue
    if parts[-1] == '__init__':
      parts.pop()
    names.append('.'.join(parts))
  return names


def _diff(label: str, theirs: Any, ours: Any) -> str:
  a = json.dumps(theirs, indent=1, sort_keys=True).splitlines()
  b = json.dumps(ours, indent=1, sort_keys=True).splitlines()
  return '\n'.join(
      difflib.unified_diff(a, b, 'pristine', label, lineterm='', n=2)
  )


# Provenance stamping (the RFC's declared compatibility exception #3) exists
# from this PR of the stack on; a lower prefix must equal pristine exactly.
_STAMPING_PR = 3
# Provenance stamping (the RFC's declared compatibility exception #3, PR 3):
# every Event the patched tree serializes gains `invocation_origin` (and
# `emitter` where the core wrote it), with these values; nothing else.
_PROVENANCE_KEYS = {
    'invocation_origin': frozenset({'user', 'mcp_app', 'system'}),
    'invocationOrigin': frozenset({'user', 'mcp_app', 'system'}),
    'emitter': frozenset({'app', 'host', 'session-api', 'system'}),
}


def _split_provenance(value: Any, found: list[dict[str, Any]]) -> Any:
  """`value` without the provenance keys of every serialized Event in it
  (a dict with an `author`); each Event's removed keys go to `found`."""
  if isinstance(value, list):
    return [_split_provenance(v, found) for v in value]
  if not isinstance(value, dict):
    return value
  kept = {k: _split_provenance(v, found) for k, v in value.items()}
  if 'author' in value:
    found.append({k: kept.pop(k) for k in _PROVENANCE_KEYS if k in kept})
  return kept


def _declared_provenance_failure(theirs: Any, ours: Any) -> str:
  """'' if `ours` is `theirs` plus provenance stamping on every Event."""
  pristine_found: list[dict[str, Any]] = []
  patched_found: list[dict[str, Any]] = []
  base = _split_provenance(theirs, pristine_found)
  stripped = _split_provenance(ours, patched_found)
  problems = []
  if any(pristine_found):
    problems.append('    pristine Events carry provenance keys')
  for stamp in patched_found:
    origins = {stamp.get('invocation_origin'), stamp.get('invocationOrigin')}
    if not origins - {None}:
      problems.append(f'    an Event lacks invocation_origin: {stamp}')
    for key, value in stamp.items():
      if value not in _PROVENANCE_KEYS[key]:
        problems.append(f'    {key}={value!r} is outside the vocabulary')
  if stripped != base:
    problems.append(_diff('patched without provenance', base, stripped))
  return '\n'.join(problems)


def _turn(venv: Path, tree: Tree) -> dict[str, Any]:
  with tempfile.TemporaryDirectory(prefix='compat-agents-') as tmp:
    agents = Path(tmp) / 'agents'
    shutil.copytree(COMPAT_DIR / 'agents', agents)
    return _worker(venv, tree, 'agent_turn.py', str(agents))


def run_core(wheel: Path | None) -> int:
  started = time.monotonic()
  pyproject = pristine_pyproject()
  venv = leg_venv('core', pyproject['project']['dependencies'])
  if _installed(venv, 'mcp') is not None:
    raise LegError(f'{venv} has mcp installed: the leg would prove nothing')
  pristine = pristine_tree()
  trees = patched_trees(wheel)
  modules = upstream_modules(pristine.src)
  listing = '\n'.join(modules) + '\n'
  checks: list[tuple[str, str]] = []  # (check, failure or '')

  with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    scans = {
        t.label: pool.submit(_worker, venv, t, 'import_scan.py', stdin=listing)
        for t in (pristine, *trees)
    }
    turns = {t.label: pool.submit(_turn, venv, t) for t in (pristine, *trees)}
    base_scan = scans[pristine.label].result()
    base_turn = turns[pristine.label].result()
    importable = [m for m in modules if m not in base_scan['errors']]
    for required in ('google.adk.runners', 'google.adk.cli.fast_api'):
      if required not in importable:
        raise LegError(
            f'{required} does not import on pristine in {venv}:'
            f' {base_scan["errors"].get(required)}'
        )
    for tree in trees:
      scan = scans[tree.label].result()
      broken = {m: scan['errors'][m] for m in importable if m in scan['errors']}
      checks.append((
          (
              f'{tree.label}: the {len(importable)} modules that import on'
              ' pristine without mcp import'
          ),
          '\n'.join(f'    {m}: {e}' for m, e in broken.items()),
      ))
      try:
        turn = turns[tree.label].result()
      except LegError as e:
        for part in ('InMemoryRunner turn', 'FastAPI app', 'adk api_server'):
          checks.append((f'{tree.label}: {part} as pristine', str(e)))
        continue
      stamping = tree.prefix >= _STAMPING_PR
      for key, part in (
          ('turn', 'InMemoryRunner turn'),
          ('fast_api', 'FastAPI app on loopback'),
          ('api_server', 'adk api_server'),
      ):
        if not stamping:
          same = turn[key] == base_turn[key]
          checks.append((
              f'{tree.label}: {part} as pristine',
              '' if same else _diff(tree.label, base_turn[key], turn[key]),
          ))
          continue
        checks.append((
            (
                f'{tree.label}: {part} as pristine but for the declared'
                ' provenance stamping'
            ),
            _declared_provenance_failure(base_turn[key], turn[key]),
        ))
      if not stamping:
        continue
      # The stamping itself works on the core install (no mcp): the Events
      # of the user's turn say so.
      stamped = [
          event.get('invocation_origin', event.get('invocationOrigin'))
          for event in turn['turn']['stored'] + turn['fast_api']['run']
      ]
      checks.append((
          f'{tree.label}: every Event of a user turn is stamped user',
          '' if stamped and set(stamped) == {'user'} else f'    {stamped}',
      ))
  return _report(
      'compat-core',
      checks,
      started,
      [
          (
              f'virtualenv: {venv.name} (google-adk 2.13.0 core requirements'
              ' only; mcp absent)'
          ),
          (
              f'modules: {len(modules)} upstream, {len(importable)} import on'
              ' pristine without extras'
          ),
      ],
  )


# ---------------------------------------------------------------------------
# The MCP SDK 1.x leg


def _dev_requirements(names: Sequence[str]) -> list[str]:
  """The project's pins (requirements-dev.txt) of the named packages."""
  wanted = {n.lower() for n in names}
  found = []
  for line in (ROOT / 'requirements-dev.txt').read_text().splitlines():
    line = line.split('#', 1)[0].strip()
    name = line.split('[', 1)[0]
    for sep in ('=', '<', '>', '!', '~', ' '):
      name = name.split(sep, 1)[0]
    if name.lower() in wanted:
      found.append(line)
  if len(found) != len(wanted):
    raise LegError(f'requirements-dev.txt lacks one of {sorted(wanted)}')
  return found


def mcp1_requirements(release: str) -> list[str]:
  """Core + upstream's `mcp` extra with `mcp` pinned + the test tools."""
  pyproject = pristine_pyproject()
  extra = pyproject['project']['optional-dependencies']['mcp']
  pinned = [r for r in extra if not r.replace(' ', '').startswith('mcp')]
  return [
      *pyproject['project']['dependencies'],
      *pinned,
      f'mcp=={release}',
      *_dev_requirements(_TEST_TOOLS),
  ]


def _project_server_python() -> str:
  """The interpreter that runs the SDK-2 fixture servers."""
  python = ROOT / '.venv' / 'bin' / 'python'
  if not python.exists():
    raise LegError(f'{python} is missing: run `make venv` first')
  version = _installed(ROOT / '.venv', 'mcp')
  if version is None or not version.startswith('2.'):
    raise LegError(f'{python} has mcp {version}, the fixtures need 2.x')
  return str(python)


def _pytest(venv: Path, tests: Sequence[str]) -> tuple[int, str]:
  pristine = series_tool.pristine_src(ROOT)
  env = _tree_env(
      Tree('working tree', ROOT / 'src'),
      (
          ROOT / 'tests' / 'integration' / 'fixtures',
          ROOT / 'contributing' / 'samples',
      ),
  )
  env['ADK_FIXTURE_SERVER_PYTHON'] = _project_server_python()
  env['ADK_PRISTINE_SRC'] = str(pristine)
  proc = subprocess.run(
      [
          str(_venv_python(venv)),
          '-m',
          'pytest',
          '-p',
          'no:cacheprovider',
          '--noconftest',
          '-q',
          '-rs',
          *tests,
      ],
      cwd=ROOT,
      env=env,
      capture_output=True,
      text=True,
  )
  return proc.returncode, proc.stdout + proc.stderr


def _mcp1_release(release: str) -> tuple[str, str, str]:
  """Runs the selection on one SDK release: (version, summary, failure)."""
  venv = leg_venv(f'mcp-{release.rstrip(".*")}', mcp1_requirements(release))
  version = _installed(venv, 'mcp') or '(none)'
  if not version.startswith('1.'):
    raise LegError(f'{venv} has mcp {version}, not 1.x')
  started = time.monotonic()
  code, output = _pytest(venv, MCP1_TESTS)
  lines = output.strip().splitlines()
  summary = (lines[-1] if lines else '(no pytest output)').strip('= ')
  summary += f' ({time.monotonic() - started:.0f} s)'
  # Nothing may skip here: a skip would hide a test the leg exists to run.
  skipped = [line for line in lines if line.startswith('SKIPPED')]
  failed = code != 0 or bool(skipped)
  return version, summary, output[-8000:] if failed else ''


def run_mcp1(releases: Sequence[str]) -> int:
  started = time.monotonic()
  for release in releases:  # Built one at a time: pip is not concurrent.
    leg_venv(f'mcp-{release.rstrip(".*")}', mcp1_requirements(release))
  series_tool.pristine_src(ROOT)  # Once, before the threads read it.
  with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    results = list(pool.map(_mcp1_release, releases))
  checks = [
      (
          (
              f'mcp {version}: PR 1 unbound tests, the differential and the'
              ' refusal of a bound profile'
          ),
          failure,
      )
      for version, _, failure in results
  ]
  notes = [f'mcp {version}: {summary}' for version, summary, _ in results]
  return _report('compat-mcp1', checks, started, notes)


# ---------------------------------------------------------------------------


def _report(
    leg: str, checks: list[tuple[str, str]], started: float, notes: list[str]
) -> int:
  for note in notes:
    print(f'{leg}: {note}')
  failed = 0
  for check, failure in checks:
    print(f'{leg}: {"FAIL" if failure else "ok  "} {check}')
    if failure:
      failed += 1
      print(failure)
  print(f'{leg}: {time.monotonic() - started:.0f} s')
  print(f'{len(checks) - failed} passed, {failed} failed')
  return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  sub = parser.add_subparsers(dest='leg', required=True)
  core = sub.add_parser('core', help='core requirements only, no mcp')
  core.add_argument(
      '--wheel', type=Path, help='test this built wheel as the top prefix'
  )
  mcp1 = sub.add_parser('mcp1', help='MCP SDK 1.x, no profile bound')
  mcp1.add_argument(
      '--mcp',
      action='append',
      help=f'an mcp release spec (default: {", ".join(MCP1_RELEASES)})',
  )
  args = parser.parse_args(argv)
  try:
    if args.leg == 'core':
      return run_core(args.wheel)
    return run_mcp1(args.mcp or MCP1_RELEASES)
  except (LegError, series_tool.SeriesError) as e:
    print(f'compat {args.leg}: {e}', file=sys.stderr)
    return 2


if __name__ == '__main__':
  sys.exit(main())
