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

"""`make test`: every check once, in timed stages, with nothing left behind.

Stages: set-up, the series checks (lower prefixes run their own PR's tests;
the top prefix is the working tree, whose tests are the full run), the wheel
and the compatibility legs (core install without mcp, MCP SDK 1.x), the
conformance map, the full run (pytest-xdist, one file per worker at a
time), the tests marked `serial` alone, and a one-iteration smoke of every
benchmark. Each stage runs in its own process group under a run marker;
SIGINT, SIGTERM or the overall timeout end the stage's group and every
process that carries the marker (PostgreSQL, MCP servers, Chromium), and
every run first removes what a killed earlier run of this checkout left
behind. Standard library only.

  python3 tools/run_tests.py            # what `make test` runs
  python3 tools/run_tests.py --full     # with the complete prefix matrix
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
import contextlib
import dataclasses
import hashlib
import os
from pathlib import Path
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parent.parent
VENV_PYTHON = ROOT / '.venv' / 'bin' / 'python'
# Inherited by everything a run starts; the sweep finds its processes by it.
MARKER = 'ADK_SERIES_TEST_RUN'
DEFAULT_WORKERS = 4
# CI stops a run at 90 minutes; stop a little earlier and clean up.
DEFAULT_TIMEOUT_SECONDS = 85 * 60
GRACE_SECONDS = 10.0


def run_marker(root: Path = ROOT) -> str:
  """The marker value of this checkout's runs (one per checkout path)."""
  return hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]


def run_tmpdir(root: Path = ROOT) -> Path:
  """This checkout's temporary directory for test runs (TMPDIR)."""
  return Path(tempfile.gettempdir()) / f'adk-series-test-{run_marker(root)}'


def _ancestors() -> set[int]:
  pids, pid = set(), os.getpid()
  while pid > 1:
    pids.add(pid)
    try:
      stat = Path(f'/proc/{pid}/stat').read_text()
    except OSError:
      break
    pid = int(stat[stat.rfind(')') + 2 :].split()[1])
  return pids


def marked_processes(marker: str) -> list[int]:
  """Pids (other than this process and its ancestors) carrying `marker`."""
  needle = f'{MARKER}={marker}'.encode()
  spared = _ancestors()
  found = []
  for entry in Path('/proc').iterdir():
    if not entry.name.isdigit() or int(entry.name) in spared:
      continue
    try:
      environ = (entry / 'environ').read_bytes()
    except OSError:
      continue
    if needle in environ.split(b'\0'):
      found.append(int(entry.name))
  return found


def sweep(marker: str, tmpdir: Path) -> int:
  """Kills every process of this checkout's runs; removes their tmpdir.

  Returns:
    How many processes were killed.
  """
  killed = 0
  for _ in range(5):  # a dying parent may still fork; look again
    victims = marked_processes(marker)
    if not victims:
      break
    for pid in victims:
      with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)
        killed += 1
    deadline = time.monotonic() + GRACE_SECONDS
    while time.monotonic() < deadline and any(
        Path(f'/proc/{pid}').exists() and not _zombie(pid) for pid in victims
    ):
      time.sleep(0.05)
  shutil.rmtree(tmpdir, ignore_errors=True)
  return killed


def _zombie(pid: int) -> bool:
  try:
    stat = Path(f'/proc/{pid}/stat').read_text()
  except OSError:
    return True
  return stat[stat.rfind(')') + 2 :].split()[0] == 'Z'


@dataclasses.dataclass
class Stage:
  """One step of the run; `ok` holds the exit codes that mean success."""

  name: str
  argv: list[str]
  ok: frozenset[int] = frozenset({0})
  seconds: float = 0.0
  returncode: int | None = None


class Interrupted(Exception):
  """A signal or the overall timeout ended the run."""

  def __init__(self, reason: str, returncode: int) -> None:
    super().__init__(reason)
    self.returncode = returncode


class Runner:
  """Runs stages one at a time, each in its own process group."""

  def __init__(self, env: dict[str, str], deadline: float) -> None:
    self.env = env
    self.deadline = deadline
    self.current: subprocess.Popen[bytes] | None = None
    self.signalled: int | None = None

  def on_signal(self, signum: int, frame: object) -> None:
    del frame
    self.signalled = signum
    self._stop_current()

  def _stop_current(self) -> None:
    process = self.current
    if process is None or process.poll() is not None:
      return
    with contextlib.suppress(ProcessLookupError):
      os.killpg(process.pid, signal.SIGTERM)
    try:
      process.wait(GRACE_SECONDS)
    except subprocess.TimeoutExpired:
      with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
      process.wait()

  def run(self, stage: Stage) -> None:
    print(f'\n=== {stage.name}: {" ".join(stage.argv)}', flush=True)
    start = time.monotonic()
    self.current = subprocess.Popen(
        stage.argv, cwd=ROOT, env=self.env, start_new_session=True
    )
    try:
      while True:
        remaining = self.deadline - time.monotonic()
        try:
          stage.returncode = self.current.wait(max(0.1, min(remaining, 1.0)))
          break
        except subprocess.TimeoutExpired:
          pass
        if self.signalled is not None:
          break
        if remaining <= 0:
          self._stop_current()
          raise Interrupted('overall timeout', 124)
      if self.signalled is not None:
        self._stop_current()
        stage.returncode = None
        name = signal.Signals(self.signalled).name
        raise Interrupted(name, 128 + self.signalled)
    finally:
      stage.seconds = time.monotonic() - start
      self.current = None


def _stages(args: argparse.Namespace) -> list[Stage]:
  py = str(VENV_PYTHON)
  system = sys.executable
  workers = str(args.workers)
  series = [system, 'tools/series.py', 'check-series', '--python', py]
  series += ['--workers', workers] + (['--full'] if args.full else [])
  pytest = [py, '-m', 'pytest', '-p', 'no:cacheprovider', '-q']
  paths = ['tests', 'tools/tests']
  return [
      Stage(
          'set-up',
          ['make', '-s', 'venv', 'sync', 'npm-servers', 'page', 'chromium'],
      ),
      Stage('series checks', series),
      # The wheel, then the core install (no mcp) with it as the top prefix.
      Stage('wheel, core leg', ['make', '-s', 'compat-core']),
      Stage('MCP SDK 1.x leg', ['make', '-s', 'compat-mcp1']),
      Stage('conformance map', [py, 'tools/conformance_check.py']),
      Stage(
          'full run',
          pytest
          + (['-n', workers, '--dist', 'loadfile'] if args.workers else [])
          + ['-m', 'not serial', '--durations=20', *paths],
      ),
      # Tests marked `serial` run alone; none selected (exit 5) is fine.
      Stage(
          'serial tests',
          pytest + ['-p', 'no:xdist', '-m', 'serial', *paths],
          ok=frozenset({0, 5}),
      ),
      Stage('benchmark smoke', [py, 'benchmarks/run.py', '--smoke']),
  ]


def main(argv: Sequence[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument(
      '--workers',
      type=int,
      default=int(os.environ.get('ADK_TEST_WORKERS', DEFAULT_WORKERS)),
      help='pytest-xdist workers (0: in-process); $ADK_TEST_WORKERS',
  )
  parser.add_argument(
      '--full',
      action='store_true',
      help='every prefix runs the tests of every PR up to it',
  )
  parser.add_argument(
      '--timeout',
      type=float,
      default=float(
          os.environ.get('ADK_TEST_TIMEOUT', DEFAULT_TIMEOUT_SECONDS)
      ),
      help='seconds for the whole run; $ADK_TEST_TIMEOUT',
  )
  parser.add_argument(
      '--sweep-only',
      action='store_true',
      help="end a killed run's leftovers and exit",
  )
  args = parser.parse_args(argv)
  # Lines in order with the stages' own output, even through a pipe.
  sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
  marker, tmpdir = run_marker(), run_tmpdir()
  leftovers = sweep(marker, tmpdir)
  if leftovers:
    print(f'run_tests: ended {leftovers} process(es) left by an earlier run')
  if args.sweep_only:
    return 0
  tmpdir.mkdir(parents=True)
  env = dict(os.environ, TMPDIR=str(tmpdir), PYTHONDONTWRITEBYTECODE='1')
  env['PYTHONPATH'] = os.pathsep.join(
      str(ROOT / p)
      for p in ('src', 'tests/integration/fixtures', 'contributing/samples')
  )
  env[MARKER] = marker
  runner = Runner(env, time.monotonic() + args.timeout)
  for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(signum, runner.on_signal)
  stages = _stages(args)
  started = time.monotonic()
  returncode = 0
  try:
    for stage in stages:
      runner.run(stage)
      if stage.returncode not in stage.ok and stage.name == 'set-up':
        break
  except Interrupted as e:
    print(f'\nrun_tests: stopped by {e}', file=sys.stderr)
    returncode = e.returncode
  finally:
    ended = sweep(marker, tmpdir)
    total = time.monotonic() - started
    print('\n=== stage timings')
    for stage in stages:
      if stage.returncode is None and not stage.seconds:
        status = 'not run'
      elif stage.returncode is None:
        status = 'stopped'
      else:
        status = (
            'ok'
            if stage.returncode in stage.ok
            else f'FAILED ({stage.returncode})'
        )
      print(f'  {stage.name:<18} {stage.seconds:>7.1f} s  {status}')
    print(f'  {"total":<18} {total:>7.1f} s')
    if ended:
      print(f'  (ended {ended} process(es) the stages left running)')
  failed = [
      s.name
      for s in stages
      if s.returncode is not None and s.returncode not in s.ok
  ]
  if failed and not returncode:
    print(f'run_tests: failed stages: {", ".join(failed)}', file=sys.stderr)
    returncode = 1
  return returncode


if __name__ == '__main__':
  sys.exit(main())
