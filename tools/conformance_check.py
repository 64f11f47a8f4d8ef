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

"""Generates the conformance map from the tests' markers and checks it.

The RFC's case list names every behaviour the MCP Apps host series must
prove, one stable ID per case. It is not part of this repository: the
project keeps it in its shared RFC folder, which a working copy finds at
`../shared/rfc/conformance-cases.md` (or pass `--cases`).

A test proves cases by carrying them in a marker,
`@pytest.mark.conformance('P2-RDY-12', ...)` (on a function, a class, a
module's `pytestmark` or one `pytest.param`). This tool collects `tests/`
once with itself as a pytest plugin, reads every item's markers, and writes
the Proof column of `docs/conformance.md` from them: a case carried by every
variant of a test cites the test, one carried by some variants cites those
variants. A case no test carries keeps the status its row holds by hand
(`planned (PR n)`, `cross-repo`, `not applicable: <why>`); the Marks and
Reading columns and all prose are hand-kept too.

    python tools/conformance_check.py          # check (make test)
    python tools/conformance_check.py --write  # regenerate (make conformance)

The check fails when:

* the committed map differs from what the markers generate;
* a marker names something that is not a known case ID;
* a row cites tests that no marker backs (neither proof nor status);
* a case of the list has no row, a row names an unknown ID, or an ID has two
  rows;
* a row's status is malformed, plans a case for a PR that does not own it,
  or gives a cross-repo case an in-repo status (or the reverse);
* a row's Marks differ from the case's markers, or a case marked `◇` or `∅`
  has no Reading;
* collection fails, or the case list disagrees with its own Counts table.

Where the case list is absent (a clone on its own, e.g. an upstream
reviewer's), the known IDs and marks are the map's own rows, the cross-check
against the case list is skipped with a line that says so. An explicit
`--cases` path must exist. It always prints coverage per group. Standard
library only, so it runs before anything is installed (pytest runs in a
subprocess).
"""

from __future__ import annotations

import argparse
import collections
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
import dataclasses
import difflib
import enum
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile
from typing import Any

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
CASES_FROM_ROOT = pathlib.Path('..', 'shared', 'rfc', 'conformance-cases.md')
MAP_FROM_ROOT = pathlib.Path('docs', 'conformance.md')

GROUPS = ('S0', 'P1', 'P2', 'P3', 'P4', 'P5', 'XR')
IN_REPO_GROUPS = GROUPS[:-1]
CROSS_REPO_GROUP = 'XR'
# Step 0 has no PR of its own: the pin context note of the case list assigns
# each S0 case to the PR that satisfies it. Used to suggest missing rows; any
# PR 1..5 is accepted for S0.
S0_PLANNED_PR = {
    'S0-SDK-01': 1,
    'S0-SDK-02': 1,
    'S0-SDK-03': 1,
    'S0-SDK-04': 1,
    'S0-SDK-05': 4,
    'S0-SDK-06': 2,
}

CASE_ID_RE = re.compile(r'(S0|P[1-5]|XR)-[A-Z0-9]+-\d+')
CASE_BULLET_RE = re.compile(r'- `([^`]+)`')
MARK_RE = re.compile(r'◇|∅|⚑7\([a-z]\)')
READING_MARKS = frozenset({'◇', '∅'})
# `planned (PR n)` for the owning PR; a case whose proof needs a later PR's
# machinery says so: `planned (PR n): <why>` with n above the owner.
PLANNED_RE = re.compile(r'planned \(PR ([1-5])\)(?:: *(\S.*))?')
NOT_APPLICABLE_RE = re.compile(r'not applicable: *(\S.*)')
CROSS_REPO_STATUS = 'cross-repo'
BR_RE = re.compile(r'\s*<br\s*/?>\s*')
NODE_ID_RE = re.compile(
    r'(?P<path>[\w.\-/]+\.py)(?:::[A-Za-z_]\w*)+(?P<params>\[.+\])?'
)
SEPARATOR_CELL_RE = re.compile(r':?-+:?')
COUNTS_LABEL_RES = (
    (re.compile(r'Step 0\b'), 'S0'),
    (re.compile(r'PR ([1-5])\b'), 'P'),
    (re.compile(r'Cross-repo\b'), CROSS_REPO_GROUP),
    (re.compile(r'In-repo total\b'), 'in-repo'),
)
MAP_COLUMNS = ('ID', 'Marks', 'Proof', 'Reading')
MARKER = 'conformance'
MARKERS_ENV = 'CONFORMANCE_CHECK_MARKERS_OUT'
TESTS_FROM_ROOT = 'tests'


@dataclasses.dataclass(frozen=True)
class Case:
  """One case of the RFC's case list."""

  case_id: str
  marks: tuple[str, ...]
  line: int

  @property
  def group(self) -> str:
    return group_of(self.case_id)


@dataclasses.dataclass(frozen=True)
class CaseList:
  """The parsed case list: cases in file order plus its Counts table."""

  cases: tuple[Case, ...]
  counts: Mapping[str, int]
  duplicates: tuple[Case, ...]


@dataclasses.dataclass(frozen=True)
class Row:
  """One row of a conformance map table."""

  case_id: str
  marks: str
  proof: str
  reading: str
  line: int
  section: str


class ProofKind(enum.Enum):
  TESTS = 'tests'
  PLANNED = 'planned'
  NOT_APPLICABLE = 'not-applicable'
  CROSS_REPO = 'cross-repo'


@dataclasses.dataclass(frozen=True)
class Proof:
  kind: ProofKind
  node_ids: tuple[str, ...] = ()
  pr: int | None = None
  why: str | None = None


@dataclasses.dataclass(frozen=True)
class Problem:
  """One failure, printed as one line naming where, which ID and the fix."""

  where: str
  message: str
  case_id: str | None = None

  def __str__(self) -> str:
    if self.case_id:
      return f'{self.where}: {self.case_id}: {self.message}'
    return f'{self.where}: {self.message}'


@dataclasses.dataclass
class Coverage:
  total: int = 0
  tests: int = 0
  planned: int = 0
  not_applicable: int = 0
  cross_repo: int = 0

  def add(self, other: Coverage) -> None:
    self.total += other.total
    self.tests += other.tests
    self.planned += other.planned
    self.not_applicable += other.not_applicable
    self.cross_repo += other.cross_repo


def group_of(case_id: str) -> str:
  return case_id.split('-', 1)[0]


def owner_pr(case_id: str) -> int | None:
  """The PR that owns a case: n for Pn, the pin note's PR for S0, else None."""
  group = group_of(case_id)
  if group == 'S0':
    return S0_PLANNED_PR.get(case_id, 1)
  if group in IN_REPO_GROUPS:
    return int(group[1])
  return None


def find_marks(text: str) -> tuple[str, ...]:
  """The distinct markers in `text`, in order of first appearance."""
  return tuple(dict.fromkeys(MARK_RE.findall(text)))


def split_cells(line: str) -> list[str] | None:
  """The cells of a Markdown table line, or None if it is not one."""
  stripped = line.strip()
  if not stripped.startswith('|'):
    return None
  body = stripped[1:-1] if stripped.endswith('|') else stripped[1:]
  return [cell.strip() for cell in body.split('|')]


# ---------------------------------------------------------------- case list


def parse_cases(text: str) -> CaseList:
  """Extracts the case IDs, their markers and the Counts table."""
  cases: list[Case] = []
  duplicates: list[Case] = []
  seen: set[str] = set()
  for number, line in enumerate(text.splitlines(), start=1):
    match = CASE_BULLET_RE.match(line)
    if not match or not CASE_ID_RE.fullmatch(match.group(1)):
      continue
    case = Case(match.group(1), find_marks(line[match.end() :]), number)
    if case.case_id in seen:
      duplicates.append(case)
      continue
    seen.add(case.case_id)
    cases.append(case)
  return CaseList(tuple(cases), parse_counts_table(text), tuple(duplicates))


def parse_counts_table(text: str) -> dict[str, int]:
  """Reads the `## Counts` table: group (or 'in-repo') -> number of cases."""
  counts: dict[str, int] = {}
  in_section = False
  for line in text.splitlines():
    if line.startswith('## '):
      in_section = line[3:].strip() == 'Counts'
      continue
    cells = split_cells(line) if in_section else None
    if not cells or len(cells) < 2:
      continue
    label = cells[0].strip('* ')
    number = cells[1].strip('* ')
    if not number.isdigit():
      continue
    for label_re, group in COUNTS_LABEL_RES:
      match = label_re.match(label)
      if match:
        key = f'P{match.group(1)}' if group == 'P' else group
        counts[key] = int(number)
        break
  return counts


def check_case_list(case_list: CaseList, where: str) -> list[Problem]:
  """Problems of the case list itself: duplicate IDs, Counts disagreement."""
  problems = [
      Problem(
          f'{where}:{case.line}',
          'the case list repeats this ID; IDs must be unique',
          case.case_id,
      )
      for case in case_list.duplicates
  ]
  found = collections.Counter(case.group for case in case_list.cases)
  found['in-repo'] = sum(found[group] for group in IN_REPO_GROUPS)
  for key, expected in case_list.counts.items():
    if found[key] != expected:
      problems.append(
          Problem(
              where,
              f'the Counts table says {key} has {expected} cases, but'
              f' {found[key]} case bullets were found; fix the bullets or'
              ' the table',
          )
      )
  return problems


# ---------------------------------------------------------------- the map


def parse_map(text: str, where: str) -> tuple[list[Row], list[Problem]]:
  """Reads the ID rows of the map's group sections (`## <group> ...`).

  Tables outside group sections (e.g. in the preamble) are prose; an ID row
  found there is reported rather than silently ignored.
  """
  rows: list[Row] = []
  problems: list[Problem] = []
  section: str | None = None
  for number, line in enumerate(text.splitlines(), start=1):
    if line.startswith('## '):
      words = line[3:].split(maxsplit=1)
      section = words[0] if words and words[0] in GROUPS else None
      continue
    cells = split_cells(line)
    if cells is None or is_header_or_separator(cells):
      continue
    location = f'{where}:{number}'
    case_id = backticked_case_id(cells[0])
    if section is None:
      if case_id:
        problems.append(
            Problem(
                location,
                'row sits outside the group sections; move it to section'
                f' {group_of(case_id)}',
                case_id,
            )
        )
      continue
    if len(cells) != len(MAP_COLUMNS):
      problems.append(
          Problem(
              location,
              f'table row has {len(cells)} cells, expected'
              f' {len(MAP_COLUMNS)} ({", ".join(MAP_COLUMNS)}); a cell must'
              ' not contain "|"',
              case_id,
          )
      )
    elif case_id is None:
      problems.append(
          Problem(
              location,
              f'ID cell {cells[0]!r} is not one backticked case ID such as'
              ' `P1-VIS-01`',
          )
      )
    else:
      marks, proof, reading = cells[1:]
      rows.append(Row(case_id, marks, proof, reading, number, section))
  return rows, problems


def backticked_case_id(cell: str) -> str | None:
  match = re.fullmatch(r'`([^`]+)`', cell)
  if match and CASE_ID_RE.fullmatch(match.group(1)):
    return match.group(1)
  return None


def is_header_or_separator(cells: Sequence[str]) -> bool:
  if cells and cells[0] == MAP_COLUMNS[0]:
    return True
  return all(SEPARATOR_CELL_RE.fullmatch(cell) for cell in cells)


def parse_proof(cell: str) -> Proof | None:
  """Parses a Proof cell; None when it is neither node ids nor one status."""
  if cell == CROSS_REPO_STATUS:
    return Proof(ProofKind.CROSS_REPO)
  if match := PLANNED_RE.fullmatch(cell):
    return Proof(ProofKind.PLANNED, pr=int(match.group(1)), why=match.group(2))
  if NOT_APPLICABLE_RE.fullmatch(cell):
    return Proof(ProofKind.NOT_APPLICABLE)
  node_ids = []
  for part in BR_RE.split(cell):
    match = re.fullmatch(r'`([^`]+)`', part)
    if not match or not is_node_id(match.group(1)):
      return None
    node_ids.append(match.group(1))
  return Proof(ProofKind.TESTS, node_ids=tuple(node_ids))


def is_node_id(text: str) -> bool:
  """Whether `text` looks like a repo-relative pytest node id."""
  match = NODE_ID_RE.fullmatch(text)
  if not match:
    return False
  path = match.group('path')
  return not path.startswith('/') and '..' not in path.split('/')


def suggested_row(case: Case) -> str:
  marks = ' '.join(case.marks)
  if case.group == CROSS_REPO_GROUP:
    proof, pending = CROSS_REPO_STATUS, 'reading pending (cross-repo)'
  else:
    pr = owner_pr(case.case_id)
    proof, pending = f'planned (PR {pr})', f'reading pending (PR {pr})'
  reading = pending if READING_MARKS.intersection(case.marks) else ''
  return f'| `{case.case_id}` | {marks} | {proof} | {reading} |'


def cases_from_rows(rows: Sequence[Row]) -> tuple[Case, ...]:
  """The cases the map itself names, for checking it without the case list.

  Each ID's first row stands for its case (its marks are taken as the
  case's), so every per-row check still runs: a second row, a wrong
  section, a ◇/∅ row without a Reading, a malformed Proof or status.
  """
  cases: dict[str, Case] = {}
  for row in rows:
    if row.case_id not in cases:
      marks = tuple(MARK_RE.findall(row.marks))
      cases[row.case_id] = Case(row.case_id, marks, row.line)
  return tuple(cases.values())


def check_rows(
    cases: Sequence[Case], rows: Sequence[Row], where: str
) -> list[Problem]:
  """Problems of the map's rows against the case list (not test existence)."""
  by_id = {case.case_id: case for case in cases}
  problems: list[Problem] = []
  first_row: dict[str, Row] = {}
  for row in rows:
    location = f'{where}:{row.line}'
    case = by_id.get(row.case_id)
    if case is None:
      problems.append(
          Problem(
              location,
              'not in the case list; remove the row or correct the ID',
              row.case_id,
          )
      )
      continue
    if row.case_id in first_row:
      problems.append(
          Problem(
              location,
              'has a second row (first at line'
              f' {first_row[row.case_id].line}); keep one',
              row.case_id,
          )
      )
      continue
    first_row[row.case_id] = row
    problems.extend(check_row(case, row, location))
  for case in cases:
    if case.case_id not in first_row:
      problems.append(
          Problem(
              where,
              f'has no row; add "{suggested_row(case)}" to section'
              f' {case.group}',
              case.case_id,
          )
      )
  return problems


def check_row(case: Case, row: Row, location: str) -> list[Problem]:
  """Problems of one row of a known case."""
  problems: list[Problem] = []

  def report(message: str) -> None:
    problems.append(Problem(location, message, case.case_id))

  if row.section != case.group:
    report(f'row sits in section {row.section}; move it to {case.group}')
  marks = MARK_RE.findall(row.marks)
  if MARK_RE.sub('', row.marks).strip():
    report(f'Marks cell {row.marks!r} holds something other than ◇, ∅, ⚑7(x)')
  elif sorted(marks) != sorted(case.marks):
    expected = ' '.join(case.marks) or '(empty)'
    report(
        f'Marks are {row.marks or "(empty)"!r}; the case list says {expected}'
    )
  if READING_MARKS.intersection(case.marks) and not row.reading:
    pr = owner_pr(case.case_id)
    pending = f'PR {pr}' if pr else 'cross-repo'
    report(
        'is marked ◇/∅ but has no Reading; write the precise reading, or'
        f' "reading pending ({pending})"'
    )
  proof = parse_proof(row.proof)
  if proof is None:
    report(
        f'Proof {row.proof!r} is neither backticked pytest node ids'
        ' (separated by <br>) nor one status: planned (PR n), not'
        ' applicable: <why>, cross-repo'
    )
  else:
    problems.extend(
        Problem(location, message, case.case_id)
        for message in proof_status_problems(case, proof)
    )
    if len(set(proof.node_ids)) != len(proof.node_ids):
      report('lists the same node id twice; list each once')
  return problems


def proof_status_problems(case: Case, proof: Proof) -> list[str]:
  """Whether a status suits the case's group."""
  if case.group == CROSS_REPO_GROUP:
    if proof.kind is ProofKind.PLANNED:
      return [
          'is cross-repo and cannot be planned in-repo; write cross-repo,'
          ' not applicable: <why>, or the node ids of in-repo tests'
      ]
    return []
  if proof.kind is ProofKind.CROSS_REPO:
    return [
        'is an in-repo case and cannot be cross-repo; write planned'
        f' (PR {owner_pr(case.case_id)}), node ids, or not applicable: <why>'
    ]
  if proof.kind is ProofKind.PLANNED and case.group != 'S0':
    owner = owner_pr(case.case_id)
    assert proof.pr is not None and owner is not None
    if proof.pr < owner:
      return [
          f'is planned for PR {proof.pr}, but PR {owner} owns it and a PR'
          f' cannot prove what a later one builds; write planned (PR {owner})'
      ]
    if proof.pr > owner and not proof.why:
      return [
          f'is planned for PR {proof.pr}, later than its owner PR {owner};'
          f' say why: planned (PR {proof.pr}): <the machinery it needs>'
      ]
  return []


# ---------------------------------------------------------------- markers


def pytest_collection_finish(session: Any) -> None:
  """Pytest hook (this module runs as a plugin): writes each item's cases.

  One JSON line per collected item carrying `conformance` markers, in
  collection order, to the file named by MARKERS_ENV.
  """
  out = os.environ.get(MARKERS_ENV)
  if not out:
    return
  with open(out, 'w', encoding='utf-8') as stream:
    for item in session.items:
      args = [arg for mark in item.iter_markers(MARKER) for arg in mark.args]
      if args:
        stream.write(json.dumps({'nodeid': item.nodeid, 'cases': args}) + '\n')


@dataclasses.dataclass(frozen=True)
class Marked:
  """One collected test item and the case IDs its markers name."""

  node_id: str
  cases: tuple[Any, ...]

  @property
  def function(self) -> str:
    """The node id without its parametrize suffix."""
    return self.node_id.split('[', 1)[0]


def parse_markers(text: str) -> list[Marked]:
  """Reads the JSON lines the plugin writes."""
  marked = []
  for line in text.splitlines():
    if line.strip():
      entry = json.loads(line)
      marked.append(Marked(entry['nodeid'], tuple(entry['cases'])))
  return marked


def collect_markers(
    root: pathlib.Path, paths: Sequence[str], pytest_cmd: Sequence[str]
) -> tuple[list[Marked], list[Problem], str]:
  """Collects `paths` once with this module as a plugin; reads the markers."""
  with tempfile.TemporaryDirectory() as scratch:
    out = pathlib.Path(scratch, 'markers.jsonl')
    command = [
        *pytest_cmd,
        '-p',
        pathlib.Path(__file__).stem,
        '--collect-only',
        '-q',
        *paths,
    ]
    tools = str(pathlib.Path(__file__).resolve().parent)
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(
        filter(None, [tools, env.get('PYTHONPATH')])
    )
    env[MARKERS_ENV] = str(out)
    completed = subprocess.run(
        command,
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    text = out.read_text(encoding='utf-8') if out.is_file() else ''
  output = completed.stdout + completed.stderr
  problems: list[Problem] = []
  # 0: collected; 5: nothing collected (no test proves anything then).
  if completed.returncode not in (0, 5):
    problems.append(
        Problem(
            'pytest',
            f'collection exited with status {completed.returncode}; fix the'
            f' collection errors shown below (ran: {shlex.join(command)})',
        )
    )
  return parse_markers(text), problems, output


def proofs_from_markers(
    marked: Sequence[Marked], known: Iterable[str]
) -> tuple[dict[str, list[str]], list[Problem]]:
  """Case ID -> the node ids that prove it, in collection order.

  A case carried by every collected variant of a test cites the test
  (`file::test`); one carried by some variants only (a marker on a
  `pytest.param`) cites each of those variants exactly.
  """
  known = set(known)
  variants: dict[str, list[str]] = collections.defaultdict(list)
  for item in marked:
    variants[item.function].append(item.node_id)
  carriers: dict[str, dict[str, list[str]]] = collections.defaultdict(
      lambda: collections.defaultdict(list)
  )
  problems: list[Problem] = []
  for item in marked:
    for case_id in dict.fromkeys(item.cases):
      if not isinstance(case_id, str) or not CASE_ID_RE.fullmatch(case_id):
        problems.append(
            Problem(
                item.node_id,
                f'conformance marker argument {case_id!r} is not a case ID'
                ' such as "P1-VIS-01"',
            )
        )
      elif case_id not in known:
        problems.append(
            Problem(
                item.node_id,
                'a conformance marker names this ID, which is not in the'
                ' case list; correct the marker',
                case_id,
            )
        )
      else:
        carriers[case_id][item.function].append(item.node_id)
  proofs: dict[str, list[str]] = {}
  for case_id, by_function in carriers.items():
    cited: list[str] = []
    for function, node_ids in by_function.items():
      if len(node_ids) == len(variants[function]):
        cited.append(function)
      else:
        cited.extend(node_ids)
    proofs[case_id] = cited
  return proofs, problems


# ---------------------------------------------------------------- generation


def format_proof(node_ids: Sequence[str]) -> str:
  return '<br>'.join(f'`{node_id}`' for node_id in node_ids)


def generate_map(
    text: str, rows: Sequence[Row], proofs: Mapping[str, Sequence[str]]
) -> tuple[str, list[Problem]]:
  """The map with every row's Proof cell generated from the markers.

  A case some test marks gets those tests; a case no test marks keeps its
  hand-kept status. A row citing tests that no marker backs any more keeps
  its cell and is reported: it has neither proof nor status.
  """
  lines = text.splitlines(keepends=True)
  problems: list[Problem] = []
  seen: set[str] = set()
  for row in rows:
    if row.case_id in seen:
      continue  # A second row is reported by check_rows.
    seen.add(row.case_id)
    node_ids = proofs.get(row.case_id)
    if node_ids:
      proof = format_proof(node_ids)
    else:
      proof = row.proof
      parsed = parse_proof(row.proof)
      if parsed is not None and parsed.kind is ProofKind.TESTS:
        problems.append(
            Problem(
                f'{MAP_FROM_ROOT}:{row.line}',
                'has neither proof nor status: no test carries'
                f' @pytest.mark.conformance("{row.case_id}"); mark the tests'
                ' that prove it, or write planned (PR n), not applicable:'
                ' <why> or cross-repo',
                row.case_id,
            )
        )
    if proof == row.proof:
      continue  # The row stays as written.
    ending = '\n' if lines[row.line - 1].endswith('\n') else ''
    lines[row.line - 1] = (
        f'| `{row.case_id}` | {row.marks} | {proof} | {row.reading} |{ending}'
    )
  return ''.join(lines), problems


def diff_problem(
    committed: str, generated: str, where: str, limit: int = 40
) -> Problem:
  """The map differs from what the markers generate: a short diff."""
  diff = list(
      difflib.unified_diff(
          committed.splitlines(),
          generated.splitlines(),
          'committed',
          'generated',
          n=0,
          lineterm='',
      )
  )
  shown = '\n'.join(diff[:limit])
  more = (
      f'\n... {len(diff) - limit} more diff lines' if len(diff) > limit else ''
  )
  return Problem(
      where,
      'is not what the conformance markers generate; run `make conformance`'
      f' (tools/conformance_check.py --write) and commit it:\n{shown}{more}',
  )


# ---------------------------------------------------------------- coverage


def coverage(cases: Sequence[Case], rows: Sequence[Row]) -> dict[str, Coverage]:
  """Per group: how each case's (first) row proves it."""
  first_row: dict[str, Row] = {}
  for row in rows:
    first_row.setdefault(row.case_id, row)
  result = {group: Coverage() for group in GROUPS}
  for case in cases:
    entry = result[case.group]
    entry.total += 1
    found = first_row.get(case.case_id)
    proof = parse_proof(found.proof) if found else None
    if proof is None:
      continue
    if proof.kind is ProofKind.TESTS:
      entry.tests += 1
    elif proof.kind is ProofKind.PLANNED:
      entry.planned += 1
    elif proof.kind is ProofKind.NOT_APPLICABLE:
      entry.not_applicable += 1
    else:
      entry.cross_repo += 1
  return result


def format_coverage(by_group: Mapping[str, Coverage]) -> str:
  """The coverage table: groups, then the in-repo total."""
  header = [
      'group',
      'mapped-to-test/total',
      'planned',
      'not-applicable',
      'cross-repo',
  ]
  total = Coverage()
  for group in IN_REPO_GROUPS:
    total.add(by_group[group])
  lines = [header]
  for label, entry in [*by_group.items(), ('in-repo total', total)]:
    lines.append([
        label,
        f'{entry.tests}/{entry.total}',
        str(entry.planned),
        str(entry.not_applicable),
        str(entry.cross_repo),
    ])
  widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
  return '\n'.join(
      '  '.join(
          cell.ljust(width) if i == 0 else cell.rjust(width)
          for i, (cell, width) in enumerate(zip(line, widths))
      ).rstrip()
      for line in lines
  )


# ---------------------------------------------------------------- CLI


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
  parser = argparse.ArgumentParser(
      description=(
          'Generate the Proof column of docs/conformance.md from the tests'
          "' conformance markers and check the map against the RFC"
          ' conformance case list.'
      )
  )
  parser.add_argument(
      '--root',
      type=pathlib.Path,
      default=REPO_ROOT,
      help=(
          'repository root; node ids are relative to it (default: %(default)s)'
      ),
  )
  parser.add_argument(
      '--cases',
      type=pathlib.Path,
      help=(
          f'case list (default: ROOT/{CASES_FROM_ROOT}; where that is'
          ' absent, the cross-check is skipped)'
      ),
  )
  parser.add_argument(
      '--map',
      type=pathlib.Path,
      help=f'conformance map (default: ROOT/{MAP_FROM_ROOT})',
  )
  parser.add_argument(
      '--write',
      action='store_true',
      help=(
          'write the generated map instead of failing when the committed one'
          ' differs from it'
      ),
  )
  parser.add_argument(
      '--tests',
      nargs='+',
      default=[TESTS_FROM_ROOT],
      metavar='PATH',
      help='what pytest collects, relative to ROOT (default: %(default)s)',
  )
  source = parser.add_mutually_exclusive_group()
  source.add_argument(
      '--markers-from',
      type=pathlib.Path,
      metavar='FILE',
      help=(
          'read the markers (JSON lines: {"nodeid": ..., "cases": [...]})'
          ' from FILE instead of running pytest'
      ),
  )
  source.add_argument(
      '--pytest-cmd',
      metavar='CMD',
      help=(
          'command that runs pytest, split like a shell would (default:'
          ' "PYTHON -m pytest -p no:cacheprovider")'
      ),
  )
  return parser.parse_args(argv)


def display(path: pathlib.Path, root: pathlib.Path) -> str:
  try:
    return str(path.resolve().relative_to(root.resolve()))
  except ValueError:
    return str(path.resolve())


def main(argv: Sequence[str] | None = None) -> int:
  args = parse_args(argv)
  root: pathlib.Path = args.root
  cases_path = args.cases or root / CASES_FROM_ROOT
  map_path = args.map or root / MAP_FROM_ROOT
  required = [('map', map_path)]
  if args.cases is not None:  # Asked for by name: it must be there.
    required.insert(0, ('cases file', cases_path))
  for label, path in required:
    if not path.is_file():
      print(
          f'conformance: {label} not found: {path.resolve()} (pass'
          f' --{"cases" if label == "cases file" else "map"} PATH)',
          file=sys.stderr,
      )
      return 1
  map_where = display(map_path, root)
  committed = map_path.read_text(encoding='utf-8')
  rows, problems = parse_map(committed, map_where)
  if cases_path.is_file():
    case_list = parse_cases(cases_path.read_text(encoding='utf-8'))
    problems = check_case_list(case_list, display(cases_path, root)) + problems
    cases = case_list.cases
  else:
    print(
        'conformance: skipped the cross-check against the RFC case list:'
        f' {cases_path.resolve()} is not here (the case list lives in the'
        " project's shared RFC folder; pass --cases PATH). The map was"
        ' checked on its own; coverage counts its rows.'
    )
    cases = cases_from_rows(rows)

  pytest_output = ''
  if args.markers_from:
    marked = parse_markers(args.markers_from.read_text(encoding='utf-8'))
  else:
    pytest_cmd = (
        shlex.split(args.pytest_cmd)
        if args.pytest_cmd
        else [sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider']
    )
    marked, collect_problems, pytest_output = collect_markers(
        root, args.tests, pytest_cmd
    )
    problems += collect_problems
  known = {case.case_id for case in cases}
  proofs, marker_problems = proofs_from_markers(marked, known)
  problems += marker_problems
  generated, generate_problems = generate_map(committed, rows, proofs)
  problems += generate_problems
  rows, _ = parse_map(generated, map_where)
  problems += check_rows(cases, rows, map_where)
  for case_id in sorted(set(proofs) - {row.case_id for row in rows}):
    if case_id in known:
      problems.append(
          Problem(
              map_where,
              'tests carry a conformance marker for it, but the map has no'
              ' row; add its row (the checker fills the Proof)',
              case_id,
          )
      )

  if generated != committed:
    if args.write:
      map_path.write_text(generated, encoding='utf-8')
      print(f'conformance: wrote {map_where}')
    else:
      problems.append(diff_problem(committed, generated, map_where))

  print(format_coverage(coverage(cases, rows)))
  if not problems:
    print('conformance: OK')
    return 0
  for problem in problems:
    print(problem, file=sys.stderr)
  if pytest_output and any(p.where == 'pytest' for p in problems):
    print('--- pytest --collect-only output ---', file=sys.stderr)
    print(pytest_output.rstrip(), file=sys.stderr)
  print(f'conformance: {len(problems)} problem(s)', file=sys.stderr)
  return 1


if __name__ == '__main__':
  sys.exit(main())
