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

"""`make test`'s driver: stages end on a signal or timeout, nothing is left."""

from __future__ import annotations

from collections.abc import Iterator
import os
from pathlib import Path
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest
import run_tests

# A stage that starts a grandchild in a session of its own (as PostgreSQL
# and the MCP SDK's stdio servers do), records its pid, then waits forever.
_ESCAPING_STAGE = """
import pathlib, subprocess, sys, time
child = subprocess.Popen(
    [sys.executable, '-c', 'import time; time.sleep(600)'],
    start_new_session=True,
)
pathlib.Path(sys.argv[1]).write_text(str(child.pid))
time.sleep(600)
"""


def _alive(pid: int) -> bool:
  try:
    stat = Path(f'/proc/{pid}/stat').read_text()
  except OSError:
    return False
  return stat[stat.rfind(')') + 2 :].split()[0] != 'Z'


def _sleeper(marker: str) -> subprocess.Popen[bytes]:
  env = dict(os.environ, **{run_tests.MARKER: marker})
  return subprocess.Popen(
      [sys.executable, '-c', 'import time; time.sleep(600)'],
      env=env,
      start_new_session=True,
  )


def _wait_for(path: Path, timeout: float = 30.0) -> str:
  deadline = time.monotonic() + timeout
  while not path.exists() or not path.read_text():
    assert time.monotonic() < deadline, f'{path} never appeared'
    time.sleep(0.01)
  return path.read_text()


@pytest.fixture
def marker() -> Iterator[str]:
  value = uuid.uuid4().hex[:16]
  yield value
  for pid in run_tests.marked_processes(value):  # never leak from a failure
    os.kill(pid, signal.SIGKILL)


def test_sweep_ends_only_this_checkouts_processes(marker, tmp_path):
  ours, theirs = _sleeper(marker), _sleeper(uuid.uuid4().hex[:16])
  leftover_dir = tmp_path / 'run-tmp'
  leftover_dir.mkdir()
  try:
    assert set(run_tests.marked_processes(marker)) == {ours.pid}
    assert run_tests.sweep(marker, leftover_dir) == 1
    assert ours.wait(10) == -signal.SIGKILL
    assert theirs.poll() is None
    assert not leftover_dir.exists()
  finally:
    theirs.kill()
    theirs.wait()


def _stage_runner(marker: str, deadline: float) -> run_tests.Runner:
  env = dict(os.environ, **{run_tests.MARKER: marker})
  return run_tests.Runner(env, deadline)


def test_signal_ends_the_stage_and_the_sweep_ends_its_escaped_children(
    marker, tmp_path
):
  pid_file = tmp_path / 'grandchild.pid'
  runner = _stage_runner(marker, time.monotonic() + 600)
  stage = run_tests.Stage(
      'escaping', [sys.executable, '-c', _ESCAPING_STAGE, str(pid_file)]
  )

  def interrupt() -> None:
    _wait_for(pid_file)
    runner.on_signal(signal.SIGTERM, None)

  interrupter = threading.Thread(target=interrupt)
  interrupter.start()
  with pytest.raises(run_tests.Interrupted) as raised:
    runner.run(stage)
  interrupter.join()
  assert raised.value.returncode == 128 + signal.SIGTERM
  grandchild = int(pid_file.read_text())
  # The stage's process group is gone; the grandchild left it, so only the
  # marker finds it.
  assert _alive(grandchild)
  assert grandchild in run_tests.marked_processes(marker)
  run_tests.sweep(marker, tmp_path / 'absent')
  assert not _alive(grandchild)
  assert run_tests.marked_processes(marker) == []


def test_overall_timeout_stops_the_stage(marker, tmp_path):
  pid_file = tmp_path / 'grandchild.pid'
  runner = _stage_runner(marker, time.monotonic())
  stage = run_tests.Stage(
      'escaping', [sys.executable, '-c', _ESCAPING_STAGE, str(pid_file)]
  )
  with pytest.raises(run_tests.Interrupted) as raised:
    runner.run(stage)
  assert raised.value.returncode == 124
  assert stage.returncode is None and stage.seconds > 0
  run_tests.sweep(marker, tmp_path / 'absent')
  assert run_tests.marked_processes(marker) == []


def test_a_stage_that_exits_reports_its_code_and_time(marker):
  runner = _stage_runner(marker, time.monotonic() + 600)
  stage = run_tests.Stage(
      'fails', [sys.executable, '-c', 'raise SystemExit(3)']
  )
  runner.run(stage)
  assert stage.returncode == 3
  assert stage.seconds > 0
