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

"""A differential harness: the same scenario on pristine and patched ADK.

`run_scenarios` runs named scenarios from `differential_scenarios.py` in two
subprocesses at once, one with `PYTHONPATH` = the pristine google-adk 2.13.0
sources (prefix 0 of the series), one with the patched tree, each printing
JSON. `compare` diffs the two outputs and sorts every difference into one of
the RFC's three declared behavioural changes (`DeclaredChange`) or into
`untolerated`. A scenario tolerates only the changes `TOLERATED` names for
it; every other scenario must come out byte-identical.

The pristine tree comes from `ADK_PRISTINE_SRC` or, in this repository, from
`python3 tools/series.py materialize 0 .cache/series/prefix-0`; without
either, `pristine_src()` says why, and the tests skip with that reason.

This module imports no google-adk: only the subprocesses do.
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
import dataclasses
import enum
import functools
import importlib.metadata
import json
import os
import pathlib
import subprocess
import sys
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[2]
SCENARIOS_FILE = HERE / "differential_scenarios.py"
PATCHED_SRC = REPO_ROOT / "src"
SERIES_TOOL = REPO_ROOT / "tools" / "series.py"
PREFIX_0_DIR = REPO_ROOT / ".cache" / "series" / "prefix-0"
EXTRA_PATHS = (
    REPO_ROOT / "tests" / "integration" / "fixtures",
    REPO_ROOT / "contributing" / "samples",
)
PRISTINE_VERSION = "2.13.0"
SCENARIO_TIMEOUT_SECONDS = 120.0


class DeclaredChange(enum.Enum):
  """The RFC's declared behavioural changes: the only tolerated differences."""

  VISIBILITY_ENFORCEMENT = "visibility enforcement"
  """App-only (and malformed-visibility) tools leave the model catalog."""
  UI_RESULT_PROJECTION = "UI-result projection"
  """A UI tool's persisted FunctionResponse is the model projection."""
  PROVENANCE_STAMPING = "provenance stamping"
  """Every stored Event gains `invocation_origin` (and `emitter` where the
  core wrote it); nothing else about it changes. Implemented in PR 3."""


TOLERATED: Mapping[str, frozenset[DeclaredChange]] = {
    "ui_result": frozenset({DeclaredChange.UI_RESULT_PROJECTION}),
    "conformance_catalog": frozenset({DeclaredChange.VISIBILITY_ENFORCEMENT}),
    "ui_event_serialization": frozenset({
        DeclaredChange.UI_RESULT_PROJECTION,
        DeclaredChange.PROVENANCE_STAMPING,
    }),
}
"""Changes each scenario may show; a scenario not listed tolerates none."""

# The projection's allow-list, restated here from the RFC (§5) rather than
# imported, so the harness does not trust the code it checks.
MODEL_RESULT_KEYS = frozenset(
    {"content", "isError", "is_error", "resultType", "result_type"}
)
# The keys provenance stamping adds to a serialized Event, snake case and by
# alias, with the values each may take (RFC "Provenance"); restated here, not
# imported, for the same reason. `audience` is not among them: with no
# profile bound no Event is an app_audit record.
PROVENANCE_KEYS: Mapping[str, frozenset[str]] = {
    "invocation_origin": frozenset({"user", "mcp_app", "system"}),
    "invocationOrigin": frozenset({"user", "mcp_app", "system"}),
    "emitter": frozenset({"app", "host", "session-api", "system"}),
}
# Pristine ADK on MCP SDK 2.x pops `resultType` from every result; the
# projection keeps it for UI results (P1-PROJ-03).
RESULT_TYPE_KEYS = frozenset({"resultType", "result_type"})


def sdk_has_result_type() -> bool:
  """Whether the installed MCP SDK's results carry `resultType` (2.x).

  MCP SDK 1.x has no such field, so there neither tree has one to keep or
  pop. The scenario subprocesses run this interpreter, so this SDK.
  """
  return int(importlib.metadata.version("mcp").split(".")[0]) >= 2


MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>"})()


# --------------------------------------------------------------------------
# Trees.
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Trees:
  """Where the two ADK trees are; `pristine` is None when unavailable."""

  pristine: pathlib.Path | None
  patched: pathlib.Path
  reason: str = ""


def _is_pristine_adk(src: pathlib.Path) -> str:
  """Returns why `src` is not a pristine 2.13.0 tree ('' when it is)."""
  version = src / "google" / "adk" / "version.py"
  if not version.is_file():
    return f"{src} holds no google/adk/version.py"
  if f'"{PRISTINE_VERSION}"' not in version.read_text(encoding="utf-8"):
    return f"{version} is not google-adk {PRISTINE_VERSION}"
  if (src / "google" / "adk" / "mcp_apps").exists():
    return f"{src} has google/adk/mcp_apps: it is not pristine"
  return ""


@functools.lru_cache(maxsize=1)
def trees() -> Trees:
  """Locates pristine google-adk 2.13.0 (`ADK_PRISTINE_SRC` wins)."""
  override = os.environ.get("ADK_PRISTINE_SRC")
  if override:
    src = pathlib.Path(override).resolve()
    problem = _is_pristine_adk(src)
    return Trees(None if problem else src, PATCHED_SRC, problem)
  if not SERIES_TOOL.is_file():
    return Trees(
        None,
        PATCHED_SRC,
        "pristine ADK unavailable: set ADK_PRISTINE_SRC to a google-adk"
        f" {PRISTINE_VERSION} src/ (no {SERIES_TOOL} to materialize it)",
    )
  done = subprocess.run(
      ["python3", str(SERIES_TOOL), "materialize", "0", str(PREFIX_0_DIR)],
      cwd=REPO_ROOT,
      capture_output=True,
      text=True,
      timeout=300,
      check=False,
  )
  if done.returncode != 0:
    return Trees(
        None,
        PATCHED_SRC,
        f"`tools/series.py materialize 0` failed ({done.returncode}):"
        f" {done.stderr.strip()[-400:]}",
    )
  src = PREFIX_0_DIR / "src"
  problem = _is_pristine_adk(src)
  return Trees(None if problem else src, PATCHED_SRC, problem)


# --------------------------------------------------------------------------
# Running.
# --------------------------------------------------------------------------


def _env(src: pathlib.Path) -> dict[str, str]:
  env = dict(os.environ)
  env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (src, *EXTRA_PATHS))
  env["PYTHONUNBUFFERED"] = "1"
  return env


def _start(src: pathlib.Path, batch: str) -> subprocess.Popen[str]:
  return subprocess.Popen(
      [sys.executable, str(SCENARIOS_FILE), batch],
      cwd=REPO_ROOT,
      env=_env(src),
      stdout=subprocess.PIPE,
      stderr=subprocess.PIPE,
      text=True,
  )


def _finish(
    process: subprocess.Popen[str], src: pathlib.Path
) -> dict[str, Any]:
  try:
    stdout, stderr = process.communicate(timeout=SCENARIO_TIMEOUT_SECONDS)
  except subprocess.TimeoutExpired:
    process.kill()
    stdout, stderr = process.communicate()
    raise RuntimeError(f"scenarios timed out on {src}:\n{stderr[-2000:]}")
  if process.returncode != 0 or not stdout.strip():
    raise RuntimeError(
        f"scenarios failed on {src} ({process.returncode}):\n{stderr[-4000:]}"
    )
  output = json.loads(stdout.strip().splitlines()[-1])
  expected_init = src / "google" / "adk" / "__init__.py"
  if pathlib.Path(output["adk_file"]).resolve() != expected_init.resolve():
    raise RuntimeError(f"ran {output['adk_file']}, not {expected_init}")
  return output["results"]


@dataclasses.dataclass(frozen=True)
class Outputs:
  """One scenario's JSON output on each tree."""

  pristine: dict[str, Any]
  patched: dict[str, Any]


def run_scenarios(
    names: Sequence[str],
    kwargs: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    on: Sequence[str] = ("pristine", "patched"),
) -> dict[str, Any]:
  """Runs scenarios on the requested trees, the two trees in parallel.

  Args:
    names: Scenario names (keys of `differential_scenarios.SCENARIOS`).
    kwargs: Per-scenario keyword arguments, JSON-serializable.
    on: Which trees: "pristine", "patched" or both.

  Returns:
    `{name: Outputs}` for both trees, else `{name: output}` for the one.

  Raises:
    RuntimeError: The pristine tree is unavailable, or a run failed.
  """
  located = trees()
  if "pristine" in on and located.pristine is None:
    raise RuntimeError(located.reason)
  batch = json.dumps([[n, dict((kwargs or {}).get(n, {}))] for n in names])
  sources = {
      "pristine": located.pristine,
      "patched": located.patched,
  }
  started = {tree: (_start(sources[tree], batch), sources[tree]) for tree in on}
  finished = {tree: _finish(p, src) for tree, (p, src) in started.items()}
  if len(on) == 1:
    return finished[on[0]]
  return {
      name: Outputs(finished["pristine"][name], finished["patched"][name])
      for name in names
  }


# --------------------------------------------------------------------------
# Comparing.
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Difference:
  """One leaf where the outputs differ (`MISSING` when a side lacks it)."""

  path: tuple[Any, ...]
  pristine: Any
  patched: Any


@dataclasses.dataclass(frozen=True)
class Comparison:
  """The verdict on one scenario."""

  scenario: str
  identical: bool
  """Byte-identical outputs (the JSON text of both)."""
  tolerated: tuple[tuple[Difference, DeclaredChange], ...]
  untolerated: tuple[Difference, ...]

  @property
  def differences(self) -> tuple[Difference, ...]:
    return tuple(d for d, _ in self.tolerated) + self.untolerated


def _decoded(output: Mapping[str, Any]) -> dict[str, Any]:
  """Parses the embedded JSON strings, and keys catalogs by tool name."""
  result = dict(output)
  if "events" in result:
    result["events"] = [
        {
            "function_responses": [
                json.loads(r) for r in event["function_responses"]
            ],
            "ui_widget_ids": event["ui_widget_ids"],
        }
        for event in result["events"]
    ]
  if "catalog" in result:
    catalog = {}
    for tool in result["catalog"]:
      entry = dict(tool)
      if "declaration" in entry:
        entry["declaration"] = json.loads(entry["declaration"])
      catalog[entry.pop("name")] = entry
    result["catalog"] = catalog
  if "llm_requests" in result:
    result["llm_requests"] = [json.loads(r) for r in result["llm_requests"]]
  return result


def _diff(a: Any, b: Any, path: tuple[Any, ...] = ()) -> Iterator[Difference]:
  if isinstance(a, dict) and isinstance(b, dict):
    for key in list(a) + [k for k in b if k not in a]:
      yield from _diff(a.get(key, MISSING), b.get(key, MISSING), path + (key,))
  elif isinstance(a, list) and isinstance(b, list):
    for index in range(max(len(a), len(b))):
      yield from _diff(
          a[index] if index < len(a) else MISSING,
          b[index] if index < len(b) else MISSING,
          path + (index,),
      )
  elif type(a) is not type(b) or a != b:
    yield Difference(path, a, b)


def _ui_projection_explains(
    difference: Difference, pristine: dict[str, Any], patched: dict[str, Any]
) -> bool:
  """Whether `difference` is exactly what the UI-result projection does.

  It must sit directly under the `response` of a function response whose id
  names a persisted MCP widget on both trees, and be either a key outside
  the allow-list that the patched tree dropped, or the `resultType`
  discriminator that pristine ADK pops and the projection keeps.
  """
  path = difference.path
  if len(path) != 6 or path[0] != "events" or path[2] != "function_responses":
    return False
  if path[4] != "response":
    return False
  event_index, response_index, key = path[1], path[3], path[5]
  ids = set()
  for side in (pristine, patched):
    event = side["events"][event_index]
    if not event["ui_widget_ids"]:
      return False
    ids.add(
        frozenset(event["ui_widget_ids"])
        if event["function_responses"][response_index]["id"]
        in event["ui_widget_ids"]
        else None
    )
  if None in ids or len(ids) != 1:
    return False
  if key not in MODEL_RESULT_KEYS:
    return difference.patched is MISSING
  return key in RESULT_TYPE_KEYS and difference.pristine is MISSING


def _visibility_explains(difference: Difference) -> bool:
  """Whether `difference` is a non-model-visible tool leaving the catalog."""
  path = difference.path
  if len(path) != 2 or path[0] != "catalog":
    return False
  if difference.patched is not MISSING or difference.pristine is MISSING:
    return False
  ui = ((difference.pristine or {}).get("meta") or {}).get("ui")
  if not isinstance(ui, dict) or "visibility" not in ui:
    return False
  visibility = ui["visibility"]
  well_formed = (
      isinstance(visibility, list)
      and visibility
      and all(v in ("model", "app") for v in visibility)
  )
  return not well_formed or "model" not in visibility


def _event_object(value: Any) -> dict[str, Any] | None:
  """A serialized Event as a dict (a JSON object text or a dict), or None."""
  if isinstance(value, str):
    try:
      value = json.loads(value)
    except ValueError:
      return None
  return value if isinstance(value, dict) else None


def without_provenance(event: Mapping[str, Any]) -> dict[str, Any]:
  """`event` without the keys provenance stamping adds."""
  return {k: v for k, v in event.items() if k not in PROVENANCE_KEYS}


def _provenance_explains(difference: Difference) -> bool:
  """Whether `difference` is exactly provenance stamping on one Event.

  Both sides must be one serialized Event; the patched one may add only
  `PROVENANCE_KEYS` (each with a value of its vocabulary, `invocation_origin`
  always present) and must otherwise equal the pristine one key for key.
  """
  pristine = _event_object(difference.pristine)
  patched = _event_object(difference.patched)
  if pristine is None or patched is None:
    return False
  if any(key in pristine for key in PROVENANCE_KEYS):
    return False
  added = {k: v for k, v in patched.items() if k in PROVENANCE_KEYS}
  if not {"invocation_origin", "invocationOrigin"} & set(added):
    return False
  if any(value not in PROVENANCE_KEYS[k] for k, value in added.items()):
    return False
  return without_provenance(patched) == pristine


def _explains(
    change: DeclaredChange,
    difference: Difference,
    pristine: dict[str, Any],
    patched: dict[str, Any],
) -> bool:
  if change is DeclaredChange.UI_RESULT_PROJECTION:
    return _ui_projection_explains(difference, pristine, patched)
  if change is DeclaredChange.VISIBILITY_ENFORCEMENT:
    return _visibility_explains(difference)
  return _provenance_explains(difference)


def compare(
    scenario: str,
    outputs: Outputs,
    tolerated: frozenset[DeclaredChange] | None = None,
) -> Comparison:
  """Compares a scenario's two outputs under its tolerated changes.

  Args:
    scenario: The scenario name.
    outputs: Its pristine and patched outputs.
    tolerated: Overrides `TOLERATED[scenario]` (to show what an undeclared
      difference looks like).
  """
  allowed = (
      TOLERATED.get(scenario, frozenset()) if tolerated is None else (tolerated)
  )
  identical = json.dumps(outputs.pristine) == json.dumps(outputs.patched)
  pristine, patched = _decoded(outputs.pristine), _decoded(outputs.patched)
  kept: list[tuple[Difference, DeclaredChange]] = []
  rejected: list[Difference] = []
  for difference in _diff(pristine, patched):
    change = next(
        (
            c
            for c in DeclaredChange
            if c in allowed and _explains(c, difference, pristine, patched)
        ),
        None,
    )
    if change is None:
      rejected.append(difference)
    else:
      kept.append((difference, change))
  return Comparison(scenario, identical, tuple(kept), tuple(rejected))
