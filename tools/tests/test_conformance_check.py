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

"""Tests for tools/conformance_check.py."""

from __future__ import annotations

import dataclasses
import json
import pathlib
import shlex
import subprocess
import sys

import conformance_check as cc
import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]

CASES = """\
# Cases

## Legend

- `⚑7(x)` — ratification-gated.
- `◇` — reading.

## Counts

| Group | Cases | ◇ reading |
|---|---:|---:|
| Step 0 — SDK | **2** | 0 |
| PR 1 — visibility | **3** | 1 |
| PR 2 — profile | **1** | 0 |
| **In-repo total** | **6** | 1 |
| Cross-repo / out of scope | 2 | 0 |

## S0

- `S0-SDK-01` The dependency is raised. [Baseline]
- `S0-SDK-05` MRTR call sites. [Baseline]

## P1

- `P1-VIS-01` Absent visibility defaults. [§2]
- `P1-VIS-04` Malformed visibility. ◇ Not enumerated. [§2]
- `P1-URI-10` Shared canonicalizer, see P1-VIS-01. [§2]

## P2

- `P2-COLD-01` No resurrection. ⚑7(i) [§6]

## XR

- `XR-WEB-01` Renderer registered. [XR-DoD]
- `XR-396-01` Fixture proves visibility. [XR-DoD]
  - `XR-396-99` an indented bullet is not a case
"""

ROWS = {
    'S0-SDK-01': '| `S0-SDK-01` | | planned (PR 1) | |',
    'S0-SDK-05': '| `S0-SDK-05` | | planned (PR 4) | |',
    'P1-VIS-01': '| `P1-VIS-01` | | planned (PR 1) | |',
    'P1-VIS-04': (
        '| `P1-VIS-04` | ◇ | planned (PR 1) | reading pending (PR 1) |'
    ),
    'P1-URI-10': '| `P1-URI-10` | | planned (PR 1) | |',
    'P2-COLD-01': '| `P2-COLD-01` | ⚑7(i) | planned (PR 2) | |',
    'XR-WEB-01': '| `XR-WEB-01` | | cross-repo | |',
    'XR-396-01': '| `XR-396-01` | | cross-repo | |',
}

TEST_FILE = 'tests/test_demo.py'


def make_map(rows: dict[str, str]) -> str:
  """A conformance map with one section per group holding `rows`."""
  parts = [
      '# Map',
      '',
      '| Column | Meaning |',
      '|---|---|',
      '| ID | the case ID |',
      '',
  ]
  for group in cc.GROUPS:
    parts += [f'## {group} — title', '', '| ID | Marks | Proof | Reading |']
    parts.append('|---|---|---|---|')
    parts += [row for case_id, row in rows.items() if case_id[:2] == group]
    parts.append('')
  return '\n'.join(parts)


@dataclasses.dataclass
class Result:
  code: int
  out: str
  err: str

  def lines_for(self, case_id: str) -> list[str]:
    return [line for line in self.err.splitlines() if f' {case_id}: ' in line]


@pytest.fixture
def run(tmp_path, capsys):
  """Runs the checker in-process over tmp files; returns a Result."""

  def _run(
      rows: dict[str, str] | None = None,
      cases: str | None = CASES,
      markers: dict[str, list[object]] | None = None,
      extra_args: tuple[str, ...] = (),
      map_text: str | None = None,
  ) -> Result:
    """`cases=None`: no case list, as in a clone without the shared folder.

    `markers` (node id -> case IDs) stands in for collection; with
    `--pytest-cmd` in `extra_args` the checker runs pytest instead.
    """
    if map_text is None:
      map_text = make_map(ROWS if rows is None else rows)
    (tmp_path / 'map.md').write_text(map_text, encoding='utf-8')
    args = ['--root', str(tmp_path), '--map', str(tmp_path / 'map.md')]
    if cases is not None:
      (tmp_path / 'cases.md').write_text(cases, encoding='utf-8')
      args += ['--cases', str(tmp_path / 'cases.md')]
    if '--pytest-cmd' not in extra_args:
      (tmp_path / 'markers.jsonl').write_text(
          ''.join(
              json.dumps({'nodeid': node_id, 'cases': ids}) + '\n'
              for node_id, ids in (markers or {}).items()
          ),
          encoding='utf-8',
      )
      args += ['--markers-from', str(tmp_path / 'markers.jsonl')]
    code = cc.main([*args, *extra_args])
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)

  return _run


def with_row(case_id: str, row: str) -> dict[str, str]:
  return {**ROWS, case_id: row}


def coverage_line(out: str, label: str) -> list[str]:
  for line in out.splitlines():
    if line.startswith(label + ' '):
      return line[len(label) :].split()
  raise AssertionError(f'no coverage line {label!r} in:\n{out}')


# ---------------------------------------------------------------- parsing


def test_parse_cases_extracts_ids_markers_and_counts():
  case_list = cc.parse_cases(CASES)

  assert [case.case_id for case in case_list.cases] == list(ROWS)
  marks = {case.case_id: case.marks for case in case_list.cases}
  assert marks['P1-VIS-04'] == ('◇',)
  assert marks['P2-COLD-01'] == ('⚑7(i)',)
  assert marks['P1-VIS-01'] == ()
  assert case_list.counts == {
      'S0': 2,
      'P1': 3,
      'P2': 1,
      'in-repo': 6,
      'XR': 2,
  }
  assert not case_list.duplicates


def test_parse_cases_keeps_marker_order_and_irregular_topics():
  text = '- `XR-396-04` Refresh. ⚑7(i) ◇ reading. [XR-DoD]\n'

  (case,) = cc.parse_cases(text).cases

  assert (case.case_id, case.group, case.marks) == (
      'XR-396-04',
      'XR',
      ('⚑7(i)', '◇'),
  )


def test_parse_markers_reads_the_plugin_lines():
  text = (
      '{"nodeid": "tests/a.py::test_x", "cases": ["P1-VIS-01"]}\n'
      '\n'
      '{"nodeid": "tests/a.py::TestC::test_y[p-1]", "cases": []}\n'
  )

  marked = cc.parse_markers(text)

  assert marked == [
      cc.Marked('tests/a.py::test_x', ('P1-VIS-01',)),
      cc.Marked('tests/a.py::TestC::test_y[p-1]', ()),
  ]
  assert marked[1].function == 'tests/a.py::TestC::test_y'


# ---------------------------------------------------------------- verdicts


def test_consistent_map_passes(run):
  result = run()

  assert result.code == 0, result.err
  assert 'conformance: OK' in result.out
  assert result.err == ''


def test_missing_row_is_reported_with_the_row_to_add(run):
  rows = {k: v for k, v in ROWS.items() if k != 'P1-VIS-04'}

  result = run(rows)

  assert result.code == 1
  (line,) = result.lines_for('P1-VIS-04')
  assert 'has no row' in line
  assert f'add "{ROWS["P1-VIS-04"]}"' in line
  assert 'section P1' in line


def test_unknown_id_is_reported(run):
  result = run(with_row('P1-VIS-99', '| `P1-VIS-99` | | planned (PR 1) | |'))

  assert result.code == 1
  (line,) = result.lines_for('P1-VIS-99')
  assert 'not in the case list' in line
  assert 'map.md:' in line


def test_duplicate_row_is_reported(run):
  rows = dict(ROWS)
  rows['P1-VIS-01'] = ROWS['P1-VIS-01'] + '\n' + ROWS['P1-VIS-01']

  result = run(rows)

  assert result.code == 1
  (line,) = result.lines_for('P1-VIS-01')
  assert 'second row' in line


def test_malformed_id_cell_is_reported(run):
  result = run(with_row('P1-ZZZ-01', '| P1-VIS-01 | | planned (PR 1) | |'))

  assert result.code == 1
  assert "ID cell 'P1-VIS-01' is not one backticked case ID" in result.err


@pytest.mark.parametrize(
    'proof',
    [
        'planned',
        'planned (PR 9)',
        'planned (pr 1)',
        'todo',
        'not applicable:',
        '`not a node id`',
        '`/abs/tests/test_demo.py::test_one`',
        '`../tests/test_demo.py::test_one`',
        'tests/test_demo.py::test_one',
        'planned (PR 1)<br>`tests/test_demo.py::test_one`',
        'cross-repo, planned (PR 1)',
    ],
)
def test_bad_proof_is_reported(run, proof):
  result = run(with_row('P1-VIS-01', f'| `P1-VIS-01` | | {proof} | |'))

  assert result.code == 1
  (line,) = result.lines_for('P1-VIS-01')
  assert 'is neither backticked pytest node ids' in line


def test_row_with_wrong_cell_count_is_reported(run):
  row = '| `P1-VIS-01` | | planned (PR 1) | a | b |'

  result = run(with_row('P1-VIS-01', row))

  assert result.code == 1
  first, *_ = result.lines_for('P1-VIS-01')
  assert 'has 5 cells, expected 4' in first


def test_planned_for_a_lower_pr_is_reported(run):
  result = run(
      with_row('P2-COLD-01', '| `P2-COLD-01` | ⚑7(i) | planned (PR 1) | |')
  )

  assert result.code == 1
  (line,) = result.lines_for('P2-COLD-01')
  assert 'planned for PR 1, but PR 2 owns it' in line


def test_planned_for_a_later_pr_needs_a_reason(run):
  result = run(
      with_row('P2-COLD-01', '| `P2-COLD-01` | ⚑7(i) | planned (PR 3) | |')
  )

  assert result.code == 1
  (line,) = result.lines_for('P2-COLD-01')
  assert 'later than its owner PR 2; say why' in line


def test_planned_for_a_later_pr_with_reason_is_accepted(run):
  row = '| `P2-COLD-01` | ⚑7(i) | planned (PR 3): needs the batch ledger | |'
  result = run(with_row('P2-COLD-01', row))

  assert not result.lines_for('P2-COLD-01')


@pytest.mark.parametrize('pr', [1, 2, 3, 4, 5])
def test_step0_may_be_planned_for_any_pr(run, pr):
  result = run(
      with_row('S0-SDK-05', f'| `S0-SDK-05` | | planned (PR {pr}) | |')
  )

  assert result.code == 0, result.err


@pytest.mark.parametrize(
    ('proof', 'ok'),
    [
        ('cross-repo', True),
        ('not applicable: adk-web owns it', True),
        ('planned (PR 2)', False),
    ],
)
def test_cross_repo_statuses(run, proof, ok):
  result = run(with_row('XR-WEB-01', f'| `XR-WEB-01` | | {proof} | |'))

  assert (result.code == 0) is ok, result.err
  if not ok:
    (line,) = result.lines_for('XR-WEB-01')
    assert 'cannot be planned' in line


def test_cross_repo_case_may_cite_in_repo_tests(run):
  row = f'| `XR-WEB-01` | | `{TEST_FILE}::test_one` | |'

  result = run(
      with_row('XR-WEB-01', row),
      markers={f'{TEST_FILE}::test_one': ['XR-WEB-01']},
  )

  assert result.code == 0, result.err


def test_in_repo_case_cannot_be_cross_repo(run):
  result = run(with_row('P1-VIS-01', '| `P1-VIS-01` | | cross-repo | |'))

  assert result.code == 1
  (line,) = result.lines_for('P1-VIS-01')
  assert 'cannot be cross-repo' in line


def test_not_applicable_in_repo_is_accepted_and_counted(run):
  row = '| `P1-URI-10` | | not applicable: covered by P1-URI-11 | |'

  result = run(with_row('P1-URI-10', row))

  assert result.code == 0, result.err
  assert coverage_line(result.out, 'P1') == ['0/3', '2', '1', '0']


def test_marks_must_match_the_case_list(run):
  result = run(
      with_row('P2-COLD-01', '| `P2-COLD-01` | ◇ | planned (PR 2) | x |')
  )

  assert result.code == 1
  (line,) = result.lines_for('P2-COLD-01')
  assert 'the case list says ⚑7(i)' in line


def test_reading_required_for_diamond_cases(run):
  result = run(with_row('P1-VIS-04', '| `P1-VIS-04` | ◇ | planned (PR 1) | |'))

  assert result.code == 1
  (line,) = result.lines_for('P1-VIS-04')
  assert 'reading pending (PR 1)' in line


def test_row_in_wrong_section_is_reported(run):
  rows = dict(ROWS)
  del rows['P2-COLD-01']
  rows['P1-VIS-01'] += '\n| `P2-COLD-01` | ⚑7(i) | planned (PR 2) | |'

  result = run(rows)

  assert result.code == 1
  (line,) = result.lines_for('P2-COLD-01')
  assert 'sits in section P1; move it to P2' in line


def test_counts_table_disagreement_is_reported(run):
  cases = CASES.replace('| PR 1 — visibility | **3** |', '| PR 1 — v | **4** |')

  result = run(cases=cases)

  assert result.code == 1
  assert 'Counts table says P1 has 4 cases, but 3' in result.err
  assert 'Counts table says in-repo has 6' not in result.err


def test_missing_explicit_cases_file_names_the_path(tmp_path, capsys):
  missing = tmp_path / 'nowhere' / 'conformance-cases.md'

  code = cc.main(['--root', str(tmp_path), '--cases', str(missing)])

  assert code == 1
  assert str(missing) in capsys.readouterr().err


# ---------------------------------------------------------------- no case list


def test_without_the_case_list_the_map_alone_passes_and_says_so(run):
  result = run(cases=None)

  assert result.code == 0, result.err
  assert 'skipped the cross-check against the RFC case list' in result.out
  assert 'conformance: OK' in result.out
  assert coverage_line(result.out, 'in-repo total') == ['0/6', '6', '0', '0']
  assert coverage_line(result.out, 'XR') == ['0/2', '0', '0', '2']


@pytest.mark.parametrize(
    ('case_id', 'row', 'expected'),
    [
        ('P1-VIS-01', '| `P1-VIS-01` | | maybe | |', "Proof 'maybe'"),
        ('P1-VIS-04', '| `P1-VIS-04` | ◇ | planned (PR 1) | |', 'no Reading'),
        ('P1-VIS-01', '| `P1-VIS-01` | | planned (PR 0) | |', 'is neither'),
        ('P1-VIS-01', '| `P1-VIS-01` | | cross-repo | |', 'cannot be cross'),
    ],
)
def test_without_the_case_list_row_problems_still_fail(
    run, case_id, row, expected
):
  result = run(with_row(case_id, row), cases=None)

  assert result.code == 1
  assert 'skipped the cross-check' in result.out
  assert any(expected in line for line in result.lines_for(case_id))


def test_without_the_case_list_a_second_row_and_wrong_section_fail(run):
  doubled = make_map(ROWS).replace(
      ROWS['P1-VIS-01'], ROWS['P1-VIS-01'] + '\n' + ROWS['P1-VIS-01']
  )
  misplaced = doubled.replace(ROWS['XR-WEB-01'], '').replace(
      ROWS['S0-SDK-01'], ROWS['S0-SDK-01'] + '\n' + ROWS['XR-WEB-01']
  )

  result = run(cases=None, map_text=misplaced)

  assert result.code == 1
  assert any('second row' in line for line in result.lines_for('P1-VIS-01'))
  assert any('section S0' in line for line in result.lines_for('XR-WEB-01'))


# ---------------------------------------------------------------- markers


def proof_of(result_map: str, case_id: str) -> str:
  """The Proof cell of `case_id`'s row in a map's text."""
  for line in result_map.splitlines():
    cells = cc.split_cells(line)
    if cells and cells[0] == f'`{case_id}`':
      return cells[2]
  raise AssertionError(f'no row {case_id}')


def test_map_that_lags_the_markers_fails_with_a_diff(run):
  result = run(markers={f'{TEST_FILE}::test_one': ['P1-VIS-01']})

  assert result.code == 1
  assert 'is not what the conformance markers generate' in result.err
  assert 'make conformance' in result.err
  assert f'+| `P1-VIS-01` |  | `{TEST_FILE}::test_one` |  |' in result.err


def test_write_fills_proofs_from_markers_and_then_checks_clean(run, tmp_path):
  markers = {
      f'{TEST_FILE}::test_one': ['P1-VIS-01', 'P1-URI-10'],
      f'{TEST_FILE}::TestC::test_two': ['P1-VIS-01'],
  }

  written = run(markers=markers, extra_args=('--write',))
  text = (tmp_path / 'map.md').read_text(encoding='utf-8')
  again = run(markers=markers, map_text=text)

  assert written.code == 0, written.err
  assert proof_of(text, 'P1-VIS-01') == (
      f'`{TEST_FILE}::test_one`<br>`{TEST_FILE}::TestC::test_two`'
  )
  assert proof_of(text, 'P1-URI-10') == f'`{TEST_FILE}::test_one`'
  assert proof_of(text, 'P1-VIS-04') == 'planned (PR 1)'
  assert again.code == 0, again.err
  assert coverage_line(again.out, 'P1') == ['2/3', '1', '0', '0']


@pytest.mark.parametrize(
    ('carried_by', 'cited'),
    [
        (['test_p[a]', 'test_p[b]'], ['test_p']),
        (['test_p[b]'], ['test_p[b]']),
        (['test_p[a]'], ['test_p[a]']),
        (['TestC::test_p[a-1]'], ['TestC::test_p']),
    ],
)
def test_parametrized_marker_cites_the_test_or_its_variants(
    run, tmp_path, carried_by, cited
):
  variants = ['test_p[a]', 'test_p[b]', 'TestC::test_p[a-1]']
  markers: dict[str, list[object]] = {
      f'{TEST_FILE}::{name}': [] for name in variants
  }
  for name in carried_by:
    markers[f'{TEST_FILE}::{name}'] = ['P1-VIS-01']

  result = run(markers=markers, extra_args=('--write',))

  assert result.code == 0, result.err
  text = (tmp_path / 'map.md').read_text(encoding='utf-8')
  assert proof_of(text, 'P1-VIS-01') == '<br>'.join(
      f'`{TEST_FILE}::{name}`' for name in cited
  )


@pytest.mark.parametrize('bad', ['P1-VIS-99', 'P9-VIS-01', 'visibility', 7])
def test_marker_naming_an_unknown_case_is_reported(run, bad):
  node_id = f'{TEST_FILE}::test_one'

  result = run(markers={node_id: [bad]})

  assert result.code == 1
  assert any(
      line.startswith(node_id) and repr(bad).strip("'") in line
      for line in result.err.splitlines()
  ), result.err


def test_cited_tests_without_a_marker_have_neither_proof_nor_status(run):
  row = f'| `P1-VIS-01` | | `{TEST_FILE}::test_gone` | |'

  result = run(with_row('P1-VIS-01', row))

  assert result.code == 1
  (line,) = result.lines_for('P1-VIS-01')
  assert 'has neither proof nor status' in line


def test_marker_replaces_a_hand_kept_status(run, tmp_path):
  result = run(
      markers={f'{TEST_FILE}::test_one': ['XR-396-01']},
      extra_args=('--write',),
  )

  assert result.code == 0, result.err
  text = (tmp_path / 'map.md').read_text(encoding='utf-8')
  assert proof_of(text, 'XR-396-01') == f'`{TEST_FILE}::test_one`'
  assert proof_of(text, 'XR-WEB-01') == 'cross-repo'


def test_marked_case_without_a_row_is_reported(run):
  rows = {k: v for k, v in ROWS.items() if k != 'P1-URI-10'}

  result = run(rows, markers={f'{TEST_FILE}::test_one': ['P1-URI-10']})

  assert result.code == 1
  assert any('has no row' in line for line in result.lines_for('P1-URI-10'))


def write_tests(tmp_path: pathlib.Path, source: str) -> tuple[str, ...]:
  """A test file under tmp_path and a pytest command rooted there."""
  (tmp_path / 'tests').mkdir(exist_ok=True)
  (tmp_path / TEST_FILE).write_text(source, encoding='utf-8')
  return (
      '--pytest-cmd',
      shlex.join([
          sys.executable,
          '-m',
          'pytest',
          '-p',
          'no:cacheprovider',
          '-c',
          '/dev/null',
          '--rootdir',
          str(tmp_path),
      ]),
  )


def test_collection_reads_function_class_module_and_param_markers(
    run, tmp_path
):
  pytest_args = write_tests(
      tmp_path,
      'import pytest\n\n'
      "pytestmark = pytest.mark.conformance('P1-URI-10')\n\n"
      "@pytest.mark.conformance('P1-VIS-01')\n"
      'def test_one():\n  pass\n\n'
      "@pytest.mark.conformance('P2-COLD-01')\n"
      'class TestC:\n  def test_m(self):\n    pass\n\n'
      '@pytest.mark.parametrize(\n'
      "    'v', ['a', pytest.param('b', marks=pytest.mark.conformance("
      "'S0-SDK-01'))]\n)\n"
      'def test_p(v):\n  pass\n',
  )

  result = run(extra_args=(*pytest_args, '--write'))

  assert result.code == 0, result.err
  text = (tmp_path / 'map.md').read_text(encoding='utf-8')
  assert proof_of(text, 'P1-VIS-01') == f'`{TEST_FILE}::test_one`'
  assert proof_of(text, 'P2-COLD-01') == f'`{TEST_FILE}::TestC::test_m`'
  assert proof_of(text, 'S0-SDK-01') == f'`{TEST_FILE}::test_p[b]`'
  assert proof_of(text, 'P1-URI-10') == '<br>'.join(
      f'`{TEST_FILE}::{name}`'
      for name in ('test_one', 'TestC::test_m', 'test_p')
  )


def test_collection_error_is_reported_with_pytest_output(run, tmp_path):
  pytest_args = write_tests(tmp_path, 'import no_such_module_xyz\n')

  result = run(extra_args=pytest_args)

  assert result.code == 1
  assert 'pytest: collection exited with status 2' in result.err
  assert 'no_such_module_xyz' in result.err


# ---------------------------------------------------------------- coverage


def test_coverage_table_counts_each_status(run):
  rows = with_row(
      'P1-VIS-01', f'| `P1-VIS-01` |  | `{TEST_FILE}::test_one` |  |'
  )
  rows['XR-396-01'] = '| `XR-396-01` | | not applicable: product-only | |'

  result = run(rows, markers={f'{TEST_FILE}::test_one': ['P1-VIS-01']})

  assert result.code == 0, result.err
  header = result.out.splitlines()[0].split()
  assert header == [
      'group',
      'mapped-to-test/total',
      'planned',
      'not-applicable',
      'cross-repo',
  ]
  assert coverage_line(result.out, 'S0') == ['0/2', '2', '0', '0']
  assert coverage_line(result.out, 'P1') == ['1/3', '2', '0', '0']
  assert coverage_line(result.out, 'P2') == ['0/1', '1', '0', '0']
  assert coverage_line(result.out, 'P3') == ['0/0', '0', '0', '0']
  assert coverage_line(result.out, 'XR') == ['0/2', '0', '1', '1']
  assert coverage_line(result.out, 'in-repo total') == ['1/6', '5', '0', '0']


def test_coverage_is_printed_when_failing(run):
  rows = {k: v for k, v in ROWS.items() if k != 'S0-SDK-01'}

  result = run(rows)

  assert result.code == 1
  assert coverage_line(result.out, 'S0') == ['0/2', '1', '0', '0']
  assert coverage_line(result.out, 'in-repo total') == ['0/6', '5', '0', '0']
  assert result.err.splitlines()[-1] == 'conformance: 1 problem(s)'


# ---------------------------------------------------------------- real files


def test_real_map_passes_with_the_case_list_where_it_exists():
  """The committed map passes; where the shared case list is beside the
  repository, it covers it exactly (971 in-repo cases)."""
  completed = subprocess.run(
      [sys.executable, str(REPO_ROOT / 'tools' / 'conformance_check.py')],
      cwd=REPO_ROOT.parent,
      capture_output=True,
      text=True,
      check=False,
  )

  assert completed.returncode == 0, completed.stderr
  if not (REPO_ROOT / cc.CASES_FROM_ROOT).is_file():
    # A clone on its own: the map alone passed, and the output says so.
    assert 'skipped the cross-check' in completed.stdout
    return
  assert 'skipped' not in completed.stdout
  total = coverage_line(completed.stdout, 'in-repo total')
  assert total[0].endswith('/971')
  assert coverage_line(completed.stdout, 'XR')[0].endswith('/39')
  for group, count in zip(cc.IN_REPO_GROUPS, (6, 69, 331, 286, 195, 84)):
    assert coverage_line(completed.stdout, group)[0].endswith(f'/{count}')
