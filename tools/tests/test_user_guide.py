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

"""`docs/user-guide.md` runs as written, so the guide and the code cannot drift.

The guide's fenced blocks are read from the Markdown itself. Its `python`
blocks run in order, in one namespace, with top-level `await` (as
`python -m asyncio` would run them), in a fresh interpreter whose working
directory holds the npm-installed published system-monitor server, the way
the guide tells a user to install it. They run once with the stores on
SQLite and once on a throw-away PostgreSQL server (the guide reads the
database URL from `APPS_DB_URL`). Its `sh` blocks cannot run here (they
install packages or serve until Ctrl-C), so each of their commands is
checked against what it names instead: the wheel's `mcpapps` extra, the
pinned server version, the Makefile target and the variables it reads, and
the `adk` command's options and agent directory (`make demo`, whose part 3
runs that `adk web` command, is tested in `test_demo.py`).

The guide lives in the series repository, not upstream, so this test sits
with the project's own tools.
"""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Iterator
import dataclasses
import importlib.util
import inspect
import json
import os
from pathlib import Path
import re
import shutil
import subprocess
import sys
import tomllib
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / 'docs' / 'user-guide.md'
NPM_DIR = ROOT / 'tests' / 'integration' / 'third_party_mcp_apps'
FENCE = re.compile(r'^```(\w*)\n(.*?)^```$', re.M | re.S)
DONE = 'user guide: all {n} python blocks ran'


@dataclasses.dataclass(frozen=True)
class Block:
  """One fenced block of the guide."""

  language: str
  source: str
  line: int
  """The 1-based line of the block's first source line."""


def blocks(text: str) -> list[Block]:
  """The fenced blocks of a Markdown text, in order."""
  return [
      Block(
          match.group(1),
          match.group(2),
          text.count('\n', 0, match.start(2)) + 1,
      )
      for match in FENCE.finditer(text)
  ]


async def _run_blocks(path: Path) -> int:
  namespace: dict[str, Any] = {'__name__': '__guide__'}
  python = [b for b in blocks(path.read_text()) if b.language == 'python']
  for block in python:
    # Padding keeps tracebacks on the guide's own line numbers.
    source = '\n' * (block.line - 1) + block.source
    code = compile(
        source, str(path), 'exec', flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    )
    result = eval(code, namespace)  # pylint: disable=eval-used
    if inspect.iscoroutine(result):
      await result
  return len(python)


def _load(name: str, path: Path) -> ModuleType:
  spec = importlib.util.spec_from_file_location(name, path)
  assert spec and spec.loader
  module = importlib.util.module_from_spec(spec)
  sys.modules[name] = module  # Its dataclasses look their module up.
  spec.loader.exec_module(module)
  return module


@pytest.fixture(scope='module')
def servers() -> ModuleType:
  """`third_party_mcp_apps/servers.py`, with the pinned packages installed."""
  if not (shutil.which('node') and shutil.which('npm')):
    pytest.skip('node and npm are needed for the published MCP App server')
  module = _load('_guide_third_party_servers', NPM_DIR / 'servers.py')
  module.ensure_installed()
  return module


@pytest.fixture(scope='module')
def postgres_url() -> Iterator[str]:
  """A fresh database on a throw-away PostgreSQL server."""
  fixture = _load(
      '_guide_postgres_server',
      ROOT / 'tests' / 'integration' / 'fixtures' / 'postgres_server.py',
  )
  fixture.require_postgres_bindir()
  with fixture.postgres_server() as server:
    yield server.create_database()


def _run_guide(servers: ModuleType, **env: str) -> str:
  """Runs the guide's Python blocks in a fresh interpreter; its stdout."""
  before = servers.descendant_pids()
  proc = subprocess.run(
      [sys.executable, __file__, str(GUIDE)],
      cwd=NPM_DIR,
      env={**os.environ, **env},
      capture_output=True,
      text=True,
      timeout=300,
      check=False,
  )
  assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
  leaked = servers.new_descendants(before)
  assert not leaked, servers.describe_processes(leaked)
  return proc.stdout


def test_every_block_is_python_or_sh() -> None:
  found = blocks(GUIDE.read_text())
  assert found, 'the guide has no code blocks'
  assert {b.language for b in found} == {'python', 'sh'}


EXPECTED_LINES = (
    # What the guide's comments say its prints show, in order.
    (
        "monitor: profile-bound to 'local-dev' (binding generation 1): its"
        ' app-safe connections advertise io.modelcontextprotocol/ui'
    ),
    'turn from elsewhere: unauthenticated',
    'ui/notifications/tool-input',
    'ui/notifications/tool-result',
    '-32602 invalid_params',
    'lease of another View: lease_invalid',
    'request token again: replayed',
    'after close_view: lease_invalid',
    'open again: view_unavailable cold:no_reservation',
    'Running this tool again may repeat its effects.',
    "{'only_polling': 'admitted', 'counting': 'mcp_callback_failed'}",
    'after restart: refresh',
)


def _assert_ran(out: str) -> None:
  count = sum(b.language == 'python' for b in blocks(GUIDE.read_text()))
  lines = out.strip().splitlines()
  assert lines[-1] == DONE.format(n=count), out
  found = [line for line in lines if line in EXPECTED_LINES]
  assert found == list(EXPECTED_LINES), out
  (refusal,) = [line for line in lines if 'is not bindable' in line]
  assert refusal.endswith(
      'Local-development providers bind only with allow_dev_providers=True,'
      ' on a loopback-only host.'
  )


def test_guide_python_blocks_run_on_sqlite(servers: ModuleType) -> None:
  _assert_ran(_run_guide(servers))


def test_guide_python_blocks_run_on_postgresql(
    servers: ModuleType, postgres_url: str
) -> None:
  _assert_ran(_run_guide(servers, APPS_DB_URL=postgres_url))


def test_guide_sh_commands_name_what_the_repository_ships() -> None:
  upstream = tomllib.loads((ROOT / 'upstream' / 'pyproject.toml').read_text())
  extras = upstream['project']['optional-dependencies']
  lock = json.loads((NPM_DIR / 'package-lock.json').read_text())
  pinned = {
      path.removeprefix('node_modules/'): entry['version']
      for path, entry in lock['packages'].items()
      if path.startswith('node_modules/@modelcontextprotocol/server-')
  }
  dev_requirements = (ROOT / 'requirements-dev.txt').read_text()
  commands = [
      line.strip()
      for block in blocks(GUIDE.read_text())
      if block.language == 'sh'
      for line in block.source.splitlines()
      if line.strip()
  ]
  assert commands
  for command in commands:
    wheel = re.fullmatch(
        r'pip install "\$\(ls (dist/[^)]+)\)\[(\w+)\]"', command
    )
    npm = re.fullmatch(r'npm install (@[\w-]+/[\w-]+)@([\d.]+)', command)
    pip = re.fullmatch(r'pip install ([\w-]+)', command)
    make = re.fullmatch(r'((?:[A-Z_]+=\S+ )*)make ([\w-]+)', command)
    adk = re.fullmatch(
        r'adk (web|api_server)((?: --\w+(?:-\w+)*)+) (\S+)', command
    )
    if make:
      _check_make(make.group(2), make.group(1).split())
    elif adk:
      _check_adk(adk.group(1), adk.group(2).split(), adk.group(3))
    elif wheel:
      assert wheel.group(1) == 'dist/google_adk-*.whl', command
      assert wheel.group(2) in extras, command
      assert any(r.startswith('mcp>=2') for r in extras[wheel.group(2)])
    elif npm:
      assert pinned.get(npm.group(1)) == npm.group(2), (command, pinned)
    elif pip:
      assert re.search(rf'^{pip.group(1)}\b', dev_requirements, re.M), command
    else:
      raise AssertionError(f'unchecked sh command in the guide: {command}')


def _check_make(target: str, assignments: list[str]) -> None:
  """A `make` command names a target, and variables the demo reads."""
  makefile = (ROOT / 'Makefile').read_text()
  assert re.search(rf'^{re.escape(target)}:', makefile, re.M), target
  for assignment in assignments:
    name = assignment.split('=', 1)[0]
    assert name in (ROOT / 'tools' / 'demo_web.py').read_text(), assignment


def _check_adk(command: str, flags: list[str], agents_dir: str) -> None:
  """An `adk` command uses only its options, on an agent of this repo."""
  # pylint: disable-next=g-import-not-at-top
  from google.adk.cli import cli_tools_click

  click_command = cli_tools_click.main.commands[command]
  options = {
      option
      for param in click_command.params
      for option in (*param.opts, *param.secondary_opts)
  }
  assert set(flags) <= options, set(flags) - options
  agent = ROOT / agents_dir
  assert (agent / 'agent.py').is_file() and (agent / '__init__.py').is_file()


def test_guide_images_exist() -> None:
  images = re.findall(r'!\[[^\]]*\]\(([^)]+)\)', GUIDE.read_text())
  for image in images:
    assert (GUIDE.parent / image).is_file(), image


if __name__ == '__main__':
  ran = asyncio.run(_run_blocks(Path(sys.argv[1])))
  print(DONE.format(n=ran))
