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

"""Checks the conformance map against the RFC's conformance case list.

The RFC's case list names every behaviour the MCP Apps host series must
prove, one stable ID per case. It is not part of this repository: the
project keeps it in its shared RFC folder, which a working copy finds at
`../shared/rfc/conformance-cases.md` (or pass `--cases`). `docs/conformance.md`
maps each ID to the pytest node ids that prove it, or to an explicit status
(`planned (PR n)`, `cross-repo`, `not applicable: <why>`).

Where the case list is absent (a clone on its own, e.g. an upstream
reviewer's), the map is checked on its own, every row and cited test id
included, and the cross-check against the case list is skipped with a line
that says so. An explicit `--cases` path must exist.

This checker keeps the two in step, so a case cannot be silently dropped and a
claimed proof cannot point at a test that does not exist. It fails when:

* a case of the list has no row, a row names an unknown ID, or an ID has two
  rows;
* a row's Proof is malformed, plans a case for a PR that does not own it, or
  gives a cross-repo case an in-repo status (or the reverse);
* a row's Marks differ from the case's markers, or a case marked `◇` or `∅`
  has no Reading;
* a referenced node id is not collected by `pytest --collect-only`;
* the case list disagrees with its own Counts table.

Without the case list, the first three are checked against the map's own
rows (its IDs, marks and sections) and the last is skipped.

It always prints coverage per group. Standard library only, so it runs before
anything is installed.
"""

from __future__ import annotations

import argparse
import collections
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
import dataclasses
import enum
import pathlib
import re
import shlex
import subprocess
import sys

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
    assert proof.pr is not None
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


# ---------------------------------------------------------------- collection


def referenced_node_ids(rows: Iterable[Row]) -> dict[str, list[Row]]:
  """Every well-formed node id the map cites -> the rows citing it."""
  cited: dict[str, list[Row]] = collections.defaultdict(list)
  for row in rows:
    proof = parse_proof(row.proof)
    for node_id in proof.node_ids if proof else ():
      cited[node_id].append(row)
  return dict(cited)


def parse_collect_output(text: str) -> set[str]:
  """The node ids printed by `pytest --collect-only -q`."""
  collected = set()
  for line in text.splitlines():
    candidate = line.strip()
    if '::' in candidate and re.match(r'[^\s]+?\.py::', candidate):
      collected.add(candidate)
  return collected


def is_collected(node_id: str, collected: set[str]) -> bool:
  """Exact match; an id without `[...]` also matches its parametrizations."""
  if node_id in collected:
    return True
  match = NODE_ID_RE.fullmatch(node_id)
  if match is None or match.group('params'):
    return False
  prefix = node_id + '['
  return any(candidate.startswith(prefix) for candidate in collected)


def collect(
    root: pathlib.Path, files: Sequence[str], pytest_cmd: Sequence[str]
) -> tuple[set[str], list[Problem], str]:
  """Runs pytest collection once over `files` from `root`."""
  command = [*pytest_cmd, '--collect-only', '-q', *files]
  completed = subprocess.run(
      command,
      cwd=root,
      capture_output=True,
      text=True,
      check=False,
  )
  output = completed.stdout + completed.stderr
  problems: list[Problem] = []
  # 0: collected; 5: nothing collected (every id then reports missing).
  if completed.returncode not in (0, 5):
    problems.append(
        Problem(
            'pytest',
            f'collection exited with status {completed.returncode}; fix the'
            f' collection errors shown below (ran: {shlex.join(command)})',
        )
    )
  return parse_collect_output(output), problems, output


def check_node_ids(
    cited: Mapping[str, Sequence[Row]],
    collected: set[str],
    root: pathlib.Path,
    where: str,
) -> list[Problem]:
  problems: list[Problem] = []
  for node_id, citing_rows in sorted(cited.items()):
    path = node_id.split('::', 1)[0]
    if not (root / path).is_file():
      reason = f'cites {node_id}, but {path} does not exist'
    elif not is_collected(node_id, collected):
      reason = f'cites {node_id}, which pytest does not collect'
    else:
      continue
    problems.extend(
        Problem(
            f'{where}:{row.line}',
            f'{reason}; fix the node id or write planned (PR n)',
            row.case_id,
        )
        for row in citing_rows
    )
  return problems


def existing_files(
    cited: Mapping[str, Sequence[Row]], root: pathlib.Path
) -> list[str]:
  paths = {node_id.split('::', 1)[0] for node_id in cited}
  return sorted(path for path in paths if (root / path).is_file())


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
          'Check docs/conformance.md against the RFC conformance case list.'
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
  source = parser.add_mutually_exclusive_group()
  source.add_argument(
      '--collect-from',
      type=pathlib.Path,
      metavar='FILE',
      help=(
          'read `pytest --collect-only -q` output from FILE instead of'
          ' running pytest'
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
  rows, problems = parse_map(map_path.read_text(encoding='utf-8'), map_where)
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
  problems += check_rows(cases, rows, map_where)

  cited = referenced_node_ids(rows)
  pytest_output = ''
  if cited:
    if args.collect_from:
      collected = parse_collect_output(
          args.collect_from.read_text(encoding='utf-8')
      )
    else:
      pytest_cmd = (
          shlex.split(args.pytest_cmd)
          if args.pytest_cmd
          else [sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider']
      )
      collected, collect_problems, pytest_output = collect(
          root, existing_files(cited, root), pytest_cmd
      )
      problems += collect_problems
    problems += check_node_ids(cited, collected, root, map_where)

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
