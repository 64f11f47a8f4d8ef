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

"""The layering of `google.adk.mcp_apps` that its package docstring states.

Each subpackage imports only from the layers before it (or its own), so a
lower layer never depends on a higher one. Every import counts, including
those inside functions and under `TYPE_CHECKING`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import google.adk.mcp_apps as mcp_apps

_ROOT = Path(mcp_apps.__file__).parent

# Lowest first; names on one row are peers and do not import each other.
LAYERS: list[set[str]] = [
    {"errors"},
    {"resources", "catalog", "contracts", "canonical_json"},
    {"descriptor", "stores", "profile"},
    {"lifecycle"},
    {"coordination"},
    {"sealing"},
    {"event_policy"},
    {"facades"},
    {"affinity"},
    {"binding", "bootstrap", "batch"},
    {"audit"},
    {"operations"},
    {"host"},
]
_RANK = {name: rank for rank, row in enumerate(LAYERS) for name in row}


def _imported_subpackages(path: Path) -> set[str]:
  """The `mcp_apps` subpackages a module under `_ROOT` imports."""
  parts = path.relative_to(_ROOT).with_suffix("").parts
  package = parts[:-1]  # The module's package, relative to `_ROOT`.
  found: set[str] = set()
  for node in ast.walk(ast.parse(path.read_text())):
    if not isinstance(node, ast.ImportFrom) or node.level == 0:
      continue
    up = node.level - 1
    if up > len(package):
      continue  # Outside `mcp_apps` (core ADK).
    base = list(package[: len(package) - up])
    target = base + (node.module.split(".") if node.module else [])
    if target:
      found.add(target[0])
    else:  # `from .. import x` at the root: x names the subpackage.
      found.update(alias.name for alias in node.names)
  return found


def test_the_docstring_states_the_layers_this_test_enforces() -> None:
  doc = " ".join((mcp_apps.__doc__ or "").split())
  stated = "; ".join(
      ", ".join(
          f"`{name}`" for name in sorted(row, key=lambda n: doc.find(f"`{n}`"))
      )
      for row in LAYERS
  )
  assert stated in doc


def test_no_subpackage_imports_a_higher_layer() -> None:
  upward = []
  for path in sorted(_ROOT.rglob("*.py")):
    parts = path.relative_to(_ROOT).parts
    if len(parts) == 1:
      continue  # The package surface and root modules load lazily.
    own = parts[0]
    for target in _imported_subpackages(path) - {own}:
      if _RANK.get(target, -1) >= _RANK[own]:
        upward.append(f"{path.relative_to(_ROOT)} imports {target}")
  assert not upward
