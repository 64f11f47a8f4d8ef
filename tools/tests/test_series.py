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

"""Tests of the patch-series tool on a small synthetic upstream.

Each test builds a throw-away project: a git repository with a
`patches/series.toml` pinning a tiny sdist made in the test (placed in the
tool's cache, so nothing is downloaded) and drives the real tool through its
command-line entry point.
"""

from __future__ import annotations

import concurrent.futures
import gzip
import hashlib
import io
import os
from pathlib import Path
import subprocess
import sys
import tarfile
import textwrap

import pytest
import series

_UPSTREAM = {
    'src/google/adk/__init__.py': 'VERSION = "1.0"\n',
    'src/google/adk/mod.py': ''.join(f'line_{i} = {i}\n' for i in range(30)),
    'src/google/adk/tools/run.sh': '#!/bin/sh\necho hi\n',
    'LICENSE': 'Apache License 2.0 (test copy)\n',
    'pyproject.toml': '[project]\nname = "fake"\n',
}
_GIT_ENV = {
    'GIT_AUTHOR_NAME': 't',
    'GIT_AUTHOR_EMAIL': 't@example.com',
    'GIT_COMMITTER_NAME': 't',
    'GIT_COMMITTER_EMAIL': 't@example.com',
}


def _make_sdist() -> bytes:
  """The same bytes on every call (gzip's header otherwise holds the time)."""
  buffer = io.BytesIO()
  with tarfile.open(fileobj=buffer, mode='w') as tar:
    for rel, text in {**_UPSTREAM, 'PKG-INFO': 'Name: fake\n'}.items():
      data = text.encode()
      info = tarfile.TarInfo(f'fake-1.0/{rel}')
      info.size = len(data)
      info.mode = 0o755 if rel.endswith('.sh') else 0o644
      tar.addfile(info, io.BytesIO(data))
  return gzip.compress(buffer.getvalue(), mtime=0)


def _git(root: Path, *args: str) -> str:
  env = {**os.environ, **_GIT_ENV}
  return subprocess.run(
      ['git', *args],
      cwd=root,
      env=env,
      check=True,
      capture_output=True,
      text=True,
  ).stdout


class Project:
  """A synthetic series project on disk."""

  def __init__(self, root: Path, prs: dict[int, list[str]]):
    self.root = root
    sdist = _make_sdist()
    cache = root / '.cache' / 'series'
    cache.mkdir(parents=True)
    (cache / 'fake-1.0.tar.gz').write_bytes(sdist)
    (root / 'patches').mkdir()
    self.sha = hashlib.sha256(sdist).hexdigest()
    self.set_prs(prs)
    (root / '.gitignore').write_text(
        '/.cache/\n/.series-amend/\n__pycache__/\n'
    )
    _git(root, 'init', '-q')

  def set_prs(self, prs: dict[int, list[str]]) -> None:
    text = textwrap.dedent(f"""\
        [pin]
        name = "fake"
        version = "1.0"
        sdist = "fake-1.0.tar.gz"
        sha256 = "{self.sha}"
        [pin.root_files]
        "LICENSE" = "LICENSE"
        "pyproject.toml" = "upstream/pyproject.toml"
        """)
    for number in sorted(prs):
      paths = ', '.join(f'"{p}"' for p in prs[number])
      text += (
          f'[[pr]]\nnumber = {number}\nslug = "pr-{number}"\n'
          f'title = "PR {number}"\npaths = [{paths}]\n'
      )
    (self.root / 'patches' / 'series.toml').write_text(text)

  def set_commits(self, prs: dict[int, list[tuple[str, list[str]]]]) -> None:
    """PRs made of `[[pr.commit]]`s: number -> [(slug, paths), ...]."""
    self.set_prs({})
    text = (self.root / 'patches' / 'series.toml').read_text()
    for number in sorted(prs):
      text += (
          f'[[pr]]\nnumber = {number}\nslug = "pr-{number}"\n'
          f'title = "PR {number}"\n'
      )
      for slug, paths in prs[number]:
        listed = ', '.join(f'"{p}"' for p in paths)
        text += (
            f'[[pr.commit]]\nslug = "{slug}"\nsubject = "Add {slug}"\n'
            f'message = "Why {slug} exists."\npaths = [{listed}]\n'
        )
    (self.root / 'patches' / 'series.toml').write_text(text)

  def mail(self, number: int, index: int, slug: str) -> bytes | None:
    p = self.path(f'patches/{number:04d}-pr-{number}/{index:04d}-{slug}.patch')
    return p.read_bytes() if p.exists() else None

  def run(self, *args: str) -> int:
    return series.main(['--root', str(self.root), *args])

  def path(self, rel: str) -> Path:
    return self.root / rel

  def write(self, rel: str, text: str) -> None:
    target = self.path(rel)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)

  def edit(self, rel: str, old: str, new: str) -> None:
    text = self.path(rel).read_text()
    assert old in text, (rel, old)
    self.write(rel, text.replace(old, new, 1))

  def patch(self, number: int) -> bytes | None:
    p = self.path(f'patches/{number:04d}-pr-{number}/0001-pr-{number}.patch')
    return p.read_bytes() if p.exists() else None

  def commit(self) -> None:
    _git(self.root, 'add', '-A')
    _git(self.root, 'commit', '-q', '-m', 'work', '--allow-empty')


@pytest.fixture
def project(tmp_path: Path) -> Project:
  proj = Project(
      tmp_path / 'proj',
      {
          1: ['src/google/adk/mod.py', 'src/google/adk/one/', 'tests/one/'],
          2: ['src/google/adk/mod.py', 'src/google/adk/two/', 'tests/two/'],
      },
  )
  assert proj.run('sync') == 0
  proj.commit()
  return proj


def test_sync_materializes_and_ignores_exactly_upstream(project: Project):
  assert (
      project.path('src/google/adk/mod.py').read_text()
      == _UPSTREAM['src/google/adk/mod.py']
  )
  assert project.path('upstream/pyproject.toml').exists()
  assert os.access(project.path('src/google/adk/tools/run.sh'), os.X_OK)
  assert not project.path('PKG-INFO').exists()
  tracked = _git(project.root, 'ls-files').split()
  assert not [p for p in tracked if p.startswith(('src/', 'upstream/'))]
  assert 'LICENSE' not in tracked
  # A new series file next to upstream ones is not ignored.
  project.write('src/google/adk/one/new.py', 'X = 1\n')
  status = _git(project.root, 'status', '--porcelain', '--untracked-files=all')
  assert status.split() == ['??', 'src/google/adk/one/new.py']
  assert project.run('sync') == 0  # idempotent


def test_export_is_deterministic(project: Project, tmp_path: Path):
  project.edit('src/google/adk/mod.py', 'line_3 = 3', 'line_3 = 33')
  project.write('src/google/adk/one/new.py', 'X = 1\n')
  assert project.run('export') == 0
  first = project.patch(1)
  assert first is not None and b'line_3 = 33' in first
  assert project.run('export') == 0
  assert project.patch(1) == first
  # A fresh clone with a fresh cache reproduces the same bytes.
  project.commit()
  clone = _clone(project, tmp_path / 'clone')
  assert clone.run('export') == 0
  assert clone.patch(1) == first
  assert clone.run('check-patches') == 0


def test_unlisted_path_is_an_ownership_violation(project: Project, capsys):
  project.edit('src/google/adk/__init__.py', '1.0', '1.1')
  assert project.run('export') == 1
  err = capsys.readouterr().err
  assert 'src/google/adk/__init__.py' in err and 'listed by no PR' in err
  assert project.run('check-patches') == 1
  project.write('tests/unlisted/test_x.py', 'def test_x(): pass\n')
  project.edit('src/google/adk/__init__.py', '1.1', '1.0')
  assert project.run('check-patches') == 1
  assert 'tests/unlisted/test_x.py' in capsys.readouterr().err


def test_committed_upstream_file_is_reported(project: Project, capsys):
  _git(project.root, 'add', '-f', 'src/google/adk/mod.py')
  assert project.run('check-patches') == 1
  err = capsys.readouterr().err
  assert 'src/google/adk/mod.py: an upstream file is committed' in err


def test_stale_patch_is_reported(project: Project, capsys):
  project.write('src/google/adk/one/new.py', 'X = 1\n')
  assert project.run('export') == 0
  assert project.run('check-patches') == 0
  project.write('src/google/adk/one/new.py', 'X = 2\n')
  assert project.run('check-patches') == 1
  err = capsys.readouterr().err
  assert 'patches/0001-pr-1/0001-pr-1.patch is stale' in err
  assert 'src/google/adk/one/new.py: differs from pristine + patches' in err


def test_sync_refuses_to_destroy_unexported_edit(project: Project, capsys):
  project.edit('src/google/adk/mod.py', 'line_3 = 3', 'line_3 = 33')
  assert project.run('sync') == 1
  assert 'make patches' in capsys.readouterr().err
  assert 'line_3 = 33' in project.path('src/google/adk/mod.py').read_text()
  # Once exported, sync accepts it; a deleted upstream file is restored.
  assert project.run('export') == 0
  project.path('src/google/adk/mod.py').unlink()
  assert project.run('sync') == 0
  assert 'line_3 = 33' in project.path('src/google/adk/mod.py').read_text()


def _clone(project: Project, dest: Path) -> Project:
  _git(project.root.parent, 'clone', '-q', str(project.root), str(dest))
  cache = dest / '.cache' / 'series'
  cache.mkdir(parents=True)
  (cache / 'fake-1.0.tar.gz').write_bytes(_make_sdist())
  clone = Project.__new__(Project)
  clone.root, clone.sha = dest, project.sha
  assert clone.run('sync') == 0
  return clone


def test_sync_follows_new_patches_after_a_pull(
    project: Project, tmp_path: Path
):
  project.edit('src/google/adk/mod.py', 'line_3 = 3', 'line_3 = 33')
  assert project.run('export') == 0
  project.commit()
  other = _clone(project, tmp_path / 'other')
  other.edit('src/google/adk/mod.py', 'line_5 = 5', 'line_5 = 55')
  assert other.run('export') == 0
  other.commit()
  _git(project.root, 'pull', '-q', str(other.root), 'HEAD')
  # The file holds exactly what this clone exported: sync may replace it.
  assert project.run('sync') == 0
  text = project.path('src/google/adk/mod.py').read_text()
  assert 'line_3 = 33' in text and 'line_5 = 55' in text
  assert project.run('check-patches') == 0


def test_multi_pr_path_freezes_lower_hunks(project: Project):
  # First modification of a path listed by PRs 1 and 2 belongs to PR 1.
  project.edit('src/google/adk/mod.py', 'line_3 = 3', 'line_3 = 33')
  assert project.run('export') == 0
  pr1 = project.patch(1)
  assert pr1 is not None and project.patch(2) is None
  # Later edits go to the highest listing PR; PR 1's hunk stays as it was.
  project.edit('src/google/adk/mod.py', 'line_20 = 20', 'line_20 = 2020')
  project.edit('src/google/adk/mod.py', 'line_3 = 33', 'line_3 = 333')
  assert project.run('export') == 0
  assert project.patch(1) == pr1
  pr2 = project.patch(2)
  assert pr2 is not None
  assert b'+line_20 = 2020' in pr2 and b'-line_3 = 33\n+line_3 = 333' in pr2
  assert b'line_20' not in pr1
  assert project.run('check-patches') == 0


def test_prefix_isolation_and_check_series(project: Project, capsys):
  project.write('src/google/adk/one/__init__.py', 'ONE = 1\n')
  project.write(
      'src/google/adk/two/__init__.py',
      'from google.adk.one import ONE\nTWO = ONE + 1\n',
  )
  project.write(
      'tests/one/test_one.py',
      textwrap.dedent("""\
      import importlib.util

      def test_pr2_module_absent_from_prefix_1():
        import google.adk.one
        assert importlib.util.find_spec('google.adk.two') is None
      """),
  )
  project.write(
      'tests/two/test_two.py',
      textwrap.dedent("""\
      def test_pr2_uses_pr1():
        from google.adk.two import TWO
        assert TWO == 2
      """),
  )
  assert project.run('export') == 0
  assert b'one/__init__.py' in project.patch(1)
  assert b'two/__init__.py' not in project.patch(1)
  assert project.run('check-series', '--python', sys.executable) == 0
  out = capsys.readouterr().out
  assert 'prefix 1: import ok; 1 passed' in out
  # The top prefix is the working tree: its tests are `make test`'s full run.
  assert 'prefix 2: import ok; its tests are the full run' in out
  # The full matrix runs PR 1's tests at prefix 2 too, where this one, true
  # only of prefix 1, fails.
  assert project.run('check-series', '--python', sys.executable, '--full') == 1
  captured = capsys.readouterr()
  assert 'prefix 1: import ok; 1 passed' in captured.out
  assert 'prefix 2: tests failed' in captured.err
  assert 'FAILED tests/one/test_one.py' in captured.err
  assert '1 failed, 1 passed' in captured.err
  # PR 1 code that reaches up into PR 2 fails its own prefix.
  project.write(
      'src/google/adk/one/__init__.py', 'ONE = 1\nfrom google.adk import two\n'
  )
  project.write(
      'src/google/adk/__init__.py',
      'VERSION = "1.0"\nfrom google.adk import one\n',
  )
  project.set_prs({
      1: [
          'src/google/adk/mod.py',
          'src/google/adk/one/',
          'tests/one/',
          'src/google/adk/__init__.py',
      ],
      2: ['src/google/adk/mod.py', 'src/google/adk/two/', 'tests/two/'],
  })
  assert project.run('export') == 0
  assert project.run('check-series', '--python', sys.executable) == 1
  assert 'commit 1.1 (pr-1) does not import' in capsys.readouterr().err


def _two_pr_edits(project: Project) -> None:
  project.edit('src/google/adk/mod.py', 'line_3 = 3', 'line_3 = 33')
  assert project.run('export') == 0
  project.edit('src/google/adk/mod.py', 'line_20 = 20', 'line_20 = 2020')
  assert project.run('export') == 0
  project.commit()
  assert project.patch(1) and project.patch(2)


def test_amend_lower_pr_restacks_the_ones_above(project: Project):
  _two_pr_edits(project)
  assert project.run('amend-start', '1') == 0
  amend = project.path('.series-amend/src/google/adk/mod.py')
  assert 'line_3 = 33' in amend.read_text()
  assert 'line_20 = 2020' not in amend.read_text()  # the tree at PR 1
  amend.write_text(amend.read_text().replace('line_9 = 9', 'line_9 = 99'))
  assert project.run('amend-finish') == 0
  assert b'+line_9 = 99' in project.patch(1)
  assert b'line_9' not in project.patch(2)
  text = project.path('src/google/adk/mod.py').read_text()
  assert 'line_9 = 99' in text and 'line_20 = 2020' in text
  assert not project.path('.series-amend').exists()
  assert project.run('check-patches') == 0
  assert (
      project.run('check-series', '--python', sys.executable, '--no-tests') == 0
  )


def test_amend_conflict_is_reported_and_changes_nothing(
    project: Project, capsys
):
  _two_pr_edits(project)
  before = (
      project.patch(1),
      project.patch(2),
      project.path('src/google/adk/mod.py').read_text(),
  )
  assert project.run('amend-start', '1') == 0
  amend = project.path('.series-amend/src/google/adk/mod.py')
  amend.write_text(amend.read_text().replace('line_20 = 20', 'line_20 = -1'))
  assert project.run('amend-finish') == 1
  err = capsys.readouterr().err
  assert 'PR 2 no longer applies' in err and 'src/google/adk/mod.py' in err
  after = (
      project.patch(1),
      project.patch(2),
      project.path('src/google/adk/mod.py').read_text(),
  )
  assert after == before
  # The amend is still in progress and can be abandoned cleanly.
  assert project.path('.series-amend').exists()
  assert project.run('amend-abort') == 0
  assert not project.path('.series-amend').exists()
  assert project.run('check-patches') == 0


def test_git_am_onto_pristine_repository(project: Project):
  _two_pr_edits(project)
  project.write('src/google/adk/one/__init__.py', 'ONE = 1\n')
  assert project.run('export') == 0
  s = series.Series.load(project.root)
  series.check_git_am(s, series.committed_mails(s))
  broken = project.patch(2).replace(b'-line_20 = 20', b'-line_20 = 21')
  with pytest.raises(series.SeriesError, match='git am of mail 1 of PR 2'):
    series.check_git_am(s, [[project.patch(1)], [broken]])


def test_sdist_hash_mismatch_is_refused(
    project: Project, tmp_path: Path, monkeypatch, capsys
):
  cache = project.path('.cache/series')
  for stale in cache.glob('stack-*'):
    subprocess.run(['rm', '-rf', str(stale)], check=True)
  (cache / 'fake-1.0.tar.gz').unlink()
  mirror = tmp_path / 'mirror'
  mirror.mkdir()
  (mirror / 'fake-1.0.tar.gz').write_bytes(b'not the pinned sdist')
  monkeypatch.setenv('ADK_SERIES_SDIST_DIR', str(mirror))
  assert project.run('sync') == 1
  assert 'does not match the pin' in capsys.readouterr().err
  assert not (cache / 'fake-1.0.tar.gz').exists()
  (mirror / 'fake-1.0.tar.gz').write_bytes(_make_sdist())
  assert project.run('sync') == 0


def test_a_file_listed_by_name_beats_a_listed_directory(project: Project):
  # PR 1 lists tests/one/; PR 2 names one file inside it.
  project.set_prs({
      1: ['src/google/adk/mod.py', 'src/google/adk/one/', 'tests/one/'],
      2: ['src/google/adk/two/', 'tests/one/test_pr2_only.py'],
  })
  project.write('tests/one/test_pr1.py', 'def test_a(): pass\n')
  project.write('tests/one/test_pr2_only.py', 'def test_b(): pass\n')
  assert project.run('export') == 0
  assert b'tests/one/test_pr1.py' in project.patch(1)
  assert b'test_pr2_only' not in project.patch(1)
  assert b'tests/one/test_pr2_only.py' in project.patch(2)
  assert b'test_pr1.py' not in project.patch(2)


def test_concurrent_prefix_reads_print_nothing_and_keep_stdout(
    project: Project, capsys
):
  # The compatibility legs read pristine from two threads at once; a helper
  # that swapped sys.stdout to stay quiet lost every later print that way.
  stdout = sys.stdout
  series.pristine_src(project.root)  # built once; the threads then read it
  with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
    sources = list(pool.map(series.pristine_src, [project.root] * 4))
  assert sys.stdout is stdout
  assert capsys.readouterr().out == ''
  assert len(set(sources)) == 1 and (sources[0] / 'google/adk').is_dir()
  assert project.run('materialize', '0', str(project.path('p0'))) == 0
  assert capsys.readouterr().out.strip() == str(project.path('p0'))


# ---------------------------------------------------------------------------
# Commits inside a PR


def _three_commits(project: Project) -> None:
  """PR 1: base, then mod.py's edit; PR 2: two commits; PR 3: empty."""
  project.set_commits({
      1: [
          ('base', ['src/google/adk/one/', 'tests/one/']),
          ('seam', ['src/google/adk/mod.py']),
      ],
      2: [
          ('core', ['src/google/adk/two/core.py', 'src/google/adk/mod.py']),
          ('rest', ['src/google/adk/two/', 'tests/two/']),
      ],
      3: [],
  })


def test_commits_split_a_pr_by_path_in_order(project: Project):
  _three_commits(project)
  project.write('src/google/adk/one/__init__.py', 'ONE = 1\n')
  project.edit('src/google/adk/mod.py', 'line_3 = 3', 'line_3 = 33')
  project.write('src/google/adk/two/__init__.py', '')
  project.write(
      'src/google/adk/two/core.py', 'from google.adk.one import ONE\n'
  )
  project.write('src/google/adk/two/extra.py', 'from .core import ONE\n')
  assert project.run('export') == 0
  base, seam = project.mail(1, 1, 'base'), project.mail(1, 2, 'seam')
  assert base is not None and seam is not None
  assert b'Subject: [PATCH 1/2] Add base' in base
  assert b'Why base exists.' in base
  assert b'one/__init__.py' in base and b'mod.py' not in base
  assert b'+line_3 = 33' in seam and b'one/__init__' not in seam
  core, rest = project.mail(2, 1, 'core'), project.mail(2, 2, 'rest')
  assert b'two/core.py' in core and b'two/extra.py' not in core
  # The most specific entry wins: core.py by name, the rest by directory.
  assert b'two/extra.py' in rest and b'two/__init__.py' in rest
  assert b'two/core.py' not in rest
  assert not project.path('patches/0003-pr-3').exists()  # empty PR: no mails
  assert project.run('check-patches') == 0
  # Every commit applies with `git am`, in order, onto pristine.
  s = series.Series.load(project.root)
  series.check_git_am(s, series.committed_mails(s))


def test_freezing_works_at_commit_granularity(project: Project):
  _three_commits(project)
  # First change of a path PR 1 (seam) and PR 2 (core) both list: PR 1.
  project.edit('src/google/adk/mod.py', 'line_3 = 3', 'line_3 = 33')
  assert project.run('export') == 0
  seam = project.mail(1, 2, 'seam')
  assert seam is not None and project.mail(2, 1, 'core') is None
  # Later edits go to PR 2's one commit that lists it; PR 1's stays frozen.
  project.edit('src/google/adk/mod.py', 'line_20 = 20', 'line_20 = 2020')
  project.write('src/google/adk/two/__init__.py', '')
  assert project.run('export') == 0
  assert project.mail(1, 2, 'seam') == seam
  core = project.mail(2, 1, 'core')
  assert core is not None and b'+line_20 = 2020' in core
  assert b'two/__init__.py' not in core
  assert b'two/__init__.py' in project.mail(2, 2, 'rest')
  assert project.run('check-patches') == 0


def test_a_path_in_no_commit_is_reported(project: Project, capsys):
  _three_commits(project)
  project.write('src/google/adk/three/x.py', 'X = 1\n')
  assert project.run('export') == 1
  err = capsys.readouterr().err
  assert 'src/google/adk/three/x.py: added or modified but listed by no' in err
  assert project.run('check-patches') == 1


def test_duplicate_ownership_within_a_pr_is_refused(project: Project, capsys):
  project.set_commits({
      1: [('a', ['src/google/adk/one/']), ('b', ['src/google/adk/one/'])],
  })
  assert project.run('check-patches') == 1
  err = capsys.readouterr().err
  assert "PR 1 lists 'src/google/adk/one/' in two commits (a and b)" in err


def test_new_file_under_a_listed_directory_is_placed_and_named(
    project: Project, capsys
):
  _three_commits(project)
  project.write('src/google/adk/two/later.py', 'X = 1\n')
  assert project.run('export') == 0
  out = capsys.readouterr().out
  assert 'src/google/adk/two/later.py: new; placed in PR 2.2 (rest)' in out
  # PR 1's commits name folders nothing fills yet.
  assert (
      'tests/one/: listed by PR 1.1 (base) in series.toml, but nothing' in out
  )
  assert b'two/later.py' in project.mail(2, 2, 'rest')


def test_regrouping_commits_keeps_every_pr_tree(project: Project):
  _three_commits(project)
  project.write('src/google/adk/one/__init__.py', 'ONE = 1\n')
  project.edit('src/google/adk/mod.py', 'line_3 = 3', 'line_3 = 33')
  assert project.run('export') == 0
  project.commit()
  # mod.py moves to PR 1's first commit; the old mail's name goes away.
  project.set_commits({
      1: [(
          'base',
          ['src/google/adk/one/', 'tests/one/', 'src/google/adk/mod.py'],
      )],
      2: [(
          'core',
          ['src/google/adk/two/', 'tests/two/', 'src/google/adk/mod.py'],
      )],
  })
  assert project.run('check-patches') == 1  # The layout is stale...
  assert project.run('export') == 0  # ...and export rewrites it.
  assert project.mail(1, 2, 'seam') is None
  assert b'+line_3 = 33' in project.mail(1, 1, 'base')
  assert project.run('check-patches') == 0
  assert project.run('sync') == 0


def test_a_legacy_pr_mail_is_split_into_commits(project: Project):
  project.edit('src/google/adk/mod.py', 'line_3 = 3', 'line_3 = 33')
  project.write('src/google/adk/one/__init__.py', 'ONE = 1\n')
  assert project.run('export') == 0
  # The one-mail-per-PR layout, as a merge from before commits brings it.
  mail = project.patch(1)
  project.path('patches/0001-pr-1/0001-pr-1.patch').unlink()
  project.path('patches/0001-pr-1').rmdir()
  project.path('patches/0001-pr-1.patch').write_bytes(mail)
  _three_commits(project)
  assert project.run('check-patches') == 1
  assert project.run('export') == 0
  assert not project.path('patches/0001-pr-1.patch').exists()
  assert b'one/__init__.py' in project.mail(1, 1, 'base')
  assert b'+line_3 = 33' in project.mail(1, 2, 'seam')
  assert project.run('check-patches') == 0


def test_check_series_imports_every_commit(project: Project, capsys):
  _three_commits(project)
  project.write('src/google/adk/one/__init__.py', 'ONE = 1\n')
  project.write('src/google/adk/two/__init__.py', '')
  # core.py needs a module that arrives only in the next commit.
  project.write(
      'src/google/adk/two/core.py', 'from google.adk.two.extra import X\n'
  )
  project.write('src/google/adk/two/extra.py', 'X = 1\n')
  assert project.run('export') == 0
  assert project.run('check-series', '--python', sys.executable) == 1
  err = capsys.readouterr().err
  assert 'commit 2.1 (core) does not import' in err
  assert 'import google.adk.two.core' in err
  # The failing commit's tree, to look at.
  assert project.run('materialize', '2.1', str(project.path('c21'))) == 0
  assert project.path('c21/src/google/adk/two/core.py').exists()
  assert not project.path('c21/src/google/adk/two/extra.py').exists()
  project.write('src/google/adk/two/core.py', 'X = 2\n')
  assert project.run('export') == 0
  assert project.run('check-series', '--python', sys.executable) == 0
  assert 'git am of 3 mails' in capsys.readouterr().out


def test_amend_a_pr_spreads_edits_over_its_commits(project: Project):
  _three_commits(project)
  project.write('src/google/adk/one/__init__.py', 'ONE = 1\n')
  project.edit('src/google/adk/mod.py', 'line_3 = 3', 'line_3 = 33')
  assert project.run('export') == 0
  project.edit('src/google/adk/mod.py', 'line_20 = 20', 'line_20 = 2020')
  project.write('src/google/adk/two/__init__.py', '')
  assert project.run('export') == 0
  project.commit()
  assert project.run('amend-start', '1') == 0
  amend = project.path('.series-amend')
  (amend / 'src/google/adk/one/__init__.py').write_text('ONE = 11\n')
  mod = amend / 'src/google/adk/mod.py'
  mod.write_text(mod.read_text().replace('line_9 = 9', 'line_9 = 99'))
  assert project.run('amend-finish') == 0
  assert b'+ONE = 11' in project.mail(1, 1, 'base')
  assert b'+line_9 = 99' in project.mail(1, 2, 'seam')
  assert b'line_9' not in project.mail(2, 1, 'core')
  text = project.path('src/google/adk/mod.py').read_text()
  assert 'line_9 = 99' in text and 'line_20 = 2020' in text
  assert project.run('check-patches') == 0
