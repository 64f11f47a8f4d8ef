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

"""ADK Canonical JSON v1 against two independent RFC 8785 oracles.

P2-CJ-01 and P2-CJ-10: on every valid golden vector and on 2,000 generated
I-JSON documents, `canonical_json.canonicalize` must produce exactly the
bytes of

* the `rfc8785` package from PyPI (pure Python, pinned in
  `requirements-dev.txt`), and
* the `canonicalize` package from npm under Node, pinned with its integrity
  hash in `tests/integration/canonical_json_oracle/package-lock.json`.

The npm package is installed with `npm ci` into that folder on first use
(`ensure_oracle_installed`, through `install_lockfile` of
`third_party_mcp_apps/servers.py`). One Node process serves the whole
module: `oracle.mjs` answers one canonical line per JSON line, so the
generated examples stream through it without a process per example.
"""

from __future__ import annotations

from collections.abc import Iterator
import importlib.util
import json
from pathlib import Path
import shutil
import subprocess
import sys
from typing import Any

from google.adk.mcp_apps import canonical_json as cj
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import pytest

rfc8785 = pytest.importorskip('rfc8785')

_ROOT = Path(__file__).resolve().parents[1]
ORACLE_DIR = _ROOT / 'canonical_json_oracle'
ORACLE_TIMEOUT_S = 30.0
_VECTORS_FILE = (
    _ROOT.parent
    / 'unittests'
    / 'mcp_apps'
    / 'data'
    / 'canonical_json'
    / 'vectors.jsonl'
)

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not (shutil.which('node') and shutil.which('npm')),
        reason='node and npm are needed for the npm canonicalize oracle',
    ),
]


def _npm_fixtures() -> Any:
  """Imports `third_party_mcp_apps/servers.py` (its lockfile installer)."""
  name = '_adk_npm_lockfile_fixtures'
  if name in sys.modules:
    return sys.modules[name]
  spec = importlib.util.spec_from_file_location(
      name, _ROOT / 'third_party_mcp_apps' / 'servers.py'
  )
  assert spec is not None and spec.loader is not None
  module = importlib.util.module_from_spec(spec)
  sys.modules[name] = module
  spec.loader.exec_module(module)
  return module


def ensure_oracle_installed() -> Path:
  """Installs the pinned npm oracle from its lockfile, unless current."""
  node_modules: Path = _npm_fixtures().install_lockfile(
      ORACLE_DIR, ['canonicalize']
  )
  return node_modules


class NodeOracle:
  """One `node oracle.mjs` process, asked one document at a time."""

  def __init__(self) -> None:
    node = shutil.which('node')
    assert node
    self._process = subprocess.Popen(
        [node, str(ORACLE_DIR / 'oracle.mjs')],
        cwd=ORACLE_DIR,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        encoding='utf-8',
        bufsize=1,
    )

  def canonicalize(self, value: Any) -> str:
    """Returns the oracle's canonical text of `value` (or `!ERROR ...`)."""
    assert self._process.stdin and self._process.stdout
    # ASCII-only JSON: surrogate pairs travel as escapes, one line per value.
    self._process.stdin.write(json.dumps(value) + '\n')
    self._process.stdin.flush()
    line = self._process.stdout.readline()
    if not line:
      raise RuntimeError(f'oracle exited: {self._process.stderr.read()}')
    return line[:-1] if line.endswith('\n') else line

  def close(self) -> None:
    assert self._process.stdin
    self._process.stdin.close()
    try:
      self._process.wait(timeout=ORACLE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
      self._process.kill()
      self._process.wait()
    for stream in (self._process.stdout, self._process.stderr):
      if stream:
        stream.close()
    assert self._process.returncode == 0


@pytest.fixture(scope='module')
def node_oracle() -> Iterator[NodeOracle]:
  ensure_oracle_installed()
  oracle = NodeOracle()
  try:
    yield oracle
  finally:
    oracle.close()


def _valid_vectors() -> list[dict[str, Any]]:
  lines = _VECTORS_FILE.read_text(encoding='utf-8').split('\n')
  vectors = [json.loads(line) for line in lines if line.strip()]
  return [v for v in vectors if 'expected' in v]


_VALID = _valid_vectors()

_KEY_CHARS = st.sampled_from(
    ['a', 'b', '\x00', '\x1f', '"', '\\', '\u00e9', '\ue000', '\uffff']
    + ['\U00010000', '\U0001f600', '\u2028', '7', '0']
)
_TEXT = st.text(st.characters(exclude_categories=('Cs',)))
_KEYS = st.text(st.characters(exclude_categories=('Cs',)), max_size=6) | (
    st.text(_KEY_CHARS, max_size=4)
)
_FLOATS = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
    [1e-7, 1e-6, 1e-5, 1e16, 1e21, 2.0**53, 2.0**60, -0.0, 5e-324, 12.0]
)
_I_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-cj.MAX_SAFE_INTEGER, cj.MAX_SAFE_INTEGER)
    | _FLOATS
    | _TEXT,
    lambda children: st.lists(children, max_size=6)
    | st.dictionaries(_KEYS, children, max_size=6),
    max_leaves=40,
)


@pytest.mark.conformance('P2-CJ-10')
@pytest.mark.parametrize('vector', _VALID, ids=[v['id'] for v in _VALID])
def test_vectors_match_rfc8785_package(vector):
  """P2-CJ-10: byte-identical to PyPI `rfc8785` on every valid vector."""
  value = json.loads(vector['input'])
  expected = vector['expected'].encode('utf-8')
  assert rfc8785.dumps(value) == expected
  assert cj.canonicalize(value, max_depth=cj.MAX_DEPTH_CEILING) == expected


@pytest.mark.conformance('P2-CJ-10')
def test_vectors_match_npm_canonicalize(node_oracle):
  """P2-CJ-10: byte-identical to npm `canonicalize` on every valid vector."""
  mismatches = []
  for vector in _VALID:
    value = json.loads(vector['input'])
    answer = node_oracle.canonicalize(value)
    if answer != vector['expected']:
      mismatches.append((vector['id'], answer, vector['expected']))
  assert not mismatches


@pytest.mark.conformance('P2-CJ-10')
def test_oracles_refuse_lone_surrogates(node_oracle):
  """The oracles agree that a lone surrogate has no canonical form."""
  for value in ('\ud800', ['a\udc00'], {'k\udbff': 1}):
    assert node_oracle.canonicalize(value).startswith('!ERROR ')
    with pytest.raises(Exception):
      rfc8785.dumps(value)
    with pytest.raises(
        cj.CanonicalJsonError,
        check=lambda e: e.reason is cj.CanonicalJsonReason.INVALID_STRING,
    ):
      cj.canonicalize(value)


@pytest.mark.conformance('P2-CJ-01')
@settings(max_examples=2000, deadline=None)
@given(_I_JSON)
def test_generated_documents_match_both_oracles(node_oracle, value):
  """P2-CJ-01/P2-CJ-10: generated I-JSON documents, both oracles."""
  ours = cj.canonicalize(value)
  assert ours == rfc8785.dumps(value)
  assert ours.decode('utf-8') == node_oracle.canonicalize(value)
