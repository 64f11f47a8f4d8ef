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

"""`make bench`: the patched build beside pristine upstream and the raw SDK.

Every measurement runs in one invocation, side by side, so the ratios compare
like with like on the same machine at the same time. Variants are
interleaved over several rounds and the median of the round medians is
reported. Nothing here asserts a time: the output is for people.

`--smoke` runs every benchmark once at a tiny size: `make test` uses it to
prove they still run and print, never to judge a time.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import statistics
import subprocess
import sys
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'tools'))

import series  # pylint: disable=g-import-not-at-top


def _env(src: Path | None) -> dict[str, str]:
  env = dict(os.environ)
  paths = [str(ROOT / 'tests' / 'integration' / 'fixtures')]
  if src is not None:
    paths.insert(0, str(src))
  env['PYTHONPATH'] = os.pathsep.join(paths)
  # Both trees compile to bytecode, as an installed package is compiled at
  # install; otherwise a module ADK re-imports on every turn (a failing
  # optional import) is recompiled from source by whichever tree has no
  # cache yet (see benchmarks/ui_call_end_to_end.py).
  env.pop('PYTHONDONTWRITEBYTECODE', None)
  return env


def _run(script: str, src: Path | None, *args: str) -> dict[str, Any]:
  proc = subprocess.run(
      [sys.executable, str(ROOT / 'benchmarks' / script), *args],
      env=_env(src),
      capture_output=True,
      text=True,
      timeout=600,
  )
  if proc.returncode != 0:
    sys.exit(f'{script} failed:\n{proc.stderr[-3000:]}')
  return json.loads(proc.stdout.strip().splitlines()[-1])


# Per-benchmark arguments: full size, and the smoke size `make test` uses.
_SIZES: dict[str, dict[str, tuple[str, ...]]] = {
    'full': {
        'mcp_calls.py': (),
        'ui_calls.py': (),
        'ui_call_end_to_end.py': ('--turns', '40', '--first-turns', '3'),
        'coordinated_turns.py': ('--turns', '200', '--sessions', '100'),
        'batch_calls.py': ('--batches', '20', '--warmup', '2'),
        'session_lifecycle.py': ('--n', '30'),
        'canonical_json.py': (),
        'snapshot.py': (),
        'governed_callbacks.py': (),
        'sealing.py': ('--n', '7'),
        'uri_canonicalization.py': (),
        'model_context.py': ('--events', '1000', '--builds', '30'),
        'append_latency.py': ('--n', '300'),
        'view_channel.py': ('--calls', '200', '--warmup', '20'),
        'host_service.py': ('--opens', '100', '--events', '10,1000,10000'),
        'adapter_load.py': ('--views', '100', '--operations', '20'),
    },
    'smoke': {
        'mcp_calls.py': ('--calls', '3', '--warmup', '1'),
        'ui_calls.py': ('--calls', '3', '--warmup', '1'),
        'ui_call_end_to_end.py': ('--smoke',),
        'coordinated_turns.py': (
            '--turns',
            '3',
            '--warmup',
            '1',
            '--sessions',
            '3',
            '--session-turns',
            '1',
        ),
        'batch_calls.py': ('--batches', '1', '--warmup', '1'),
        'session_lifecycle.py': ('--n', '2'),
        'canonical_json.py': ('--runs', '1'),
        'snapshot.py': ('--runs', '1', '--bytes', '20000'),
        'governed_callbacks.py': ('--runs', '2', '--sizes', '2000'),
        'sealing.py': ('--n', '1'),
        'uri_canonicalization.py': ('--count', '200'),
        'model_context.py': ('--events', '40', '--builds', '1'),
        'append_latency.py': ('--n', '3', '--warmup', '1'),
        'view_channel.py': ('--smoke',),
        'host_service.py': ('--smoke',),
        'adapter_load.py': ('--smoke',),
    },
}
_size = _SIZES['full']


def _ratio(a: float, b: float) -> str:
  return f'{a / b:.3f}x' if b else 'n/a'


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument('--rounds', type=int, default=3)
  parser.add_argument(
      '--smoke', action='store_true', help='one round at a tiny size'
  )
  args = parser.parse_args()
  global _size
  if args.smoke:
    _size = _SIZES['smoke']
    args.rounds = 1
  pristine_src = series.pristine_src(ROOT)
  variants = {
      'raw MCP SDK': (None, ('--raw',)),
      'pristine ADK 2.13.0': (pristine_src, ()),
      'patched ADK': (ROOT / 'src', ()),
  }
  samples: dict[str, dict[str, list[float]]] = {v: {} for v in variants}
  for _ in range(args.rounds):
    for name, (src, extra) in variants.items():
      result = _run('mcp_calls.py', src, *_size['mcp_calls.py'], *extra)
      for metric, value in result.items():
        samples[name].setdefault(metric, []).append(value)
  medians = {
      name: {m: statistics.median(v) for m, v in metrics.items()}
      for name, metrics in samples.items()
  }
  print('MCP over stdio (conformance server), median per call, microseconds')
  print(
      f'{"metric":<12} {"raw SDK":>10} {"pristine":>10} {"patched":>10}'
      f' {"patched/pristine":>17} {"patched/raw":>12}'
  )
  for metric in ('call_tool', 'list_tools'):
    raw = medians['raw MCP SDK'][metric]
    pristine = medians['pristine ADK 2.13.0'][metric]
    patched = medians['patched ADK'][metric]
    label = 'McpTool call' if metric == 'call_tool' else 'get_tools()'
    print(
        f'{label:<12} {raw:>10.0f} {pristine:>10.0f} {patched:>10.0f}'
        f' {_ratio(patched, pristine):>17} {_ratio(patched, raw):>12}'
    )
  print(
      "(target: patched/pristine <= 1.02x; raw SDK lists without ADK's"
      ' McpTool wrapping)'
  )
  _ui_calls(args.rounds, pristine_src)
  _ui_call_end_to_end(args.rounds, pristine_src)
  _batch_calls(args.rounds, pristine_src)
  _session_lifecycle()
  _append_latency(args.rounds, pristine_src)
  _canonical_json()
  _snapshot()
  _governed_callbacks()
  _sealing()
  _model_context(args.rounds, pristine_src)
  _coordinated_turns(args.rounds, pristine_src)
  _view_channel(args.rounds)
  _host_service(args.rounds)
  _adapter_load()
  uri = _run(
      'uri_canonicalization.py',
      ROOT / 'src',
      *_size['uri_canonicalization.py'],
  )
  print(
      f'\nURI canonicalization: {uri["uris_per_second"]:,.0f} URIs/s over'
      f' {uri["count"]:,} URIs (stdlib urllib.parse.urlsplit alone:'
      f' {uri["urlsplit_per_second"]:,.0f}/s,'
      f' ratio {uri["urlsplit_per_second"] / uri["uris_per_second"]:.2f}x)'
  )


def _ui_calls(rounds: int, pristine_src: Path) -> None:
  """A UI-associated model call: upstream's path vs the app-safe one."""
  pristine: list[float] = []
  patched: dict[str, list[float]] = {}
  for _ in range(rounds):
    pristine.append(
        _run('ui_calls.py', pristine_src, '--upstream', *_size['ui_calls.py'])[
            'upstream_ui_call'
        ]
    )
    patched_run = _run('ui_calls.py', ROOT / 'src', *_size['ui_calls.py'])
    for metric, value in patched_run.items():
      patched.setdefault(metric, []).append(value)
  base = statistics.median(pristine)
  unbound = statistics.median(patched['upstream_ui_call'])
  app_safe = statistics.median(patched['app_safe_ui_call'])
  relist = statistics.median(patched['relist'])
  print(
      '\nUI-associated model call (open_view over stdio), median microseconds'
  )
  print(f'  pristine ADK, upstream path:        {base:>8.0f}')
  print(
      f'  patched, no profile bound:           {unbound:>8.0f}'
      f'  ({_ratio(unbound, base)} of pristine)'
  )
  print(
      f'  patched, app-safe generation:        {app_safe:>8.0f}'
      f'  ({_ratio(app_safe, base)} of pristine)'
  )
  print(
      f'  of which the pre-call re-listing:    {relist:>8.0f}'
      f'  ({_ratio(relist, app_safe)} of the app-safe call)'
  )


# How `_ui_call_end_to_end` prints a bound turn's parts: nesting depth,
# label in the JSON, what it is.
_E2E_PARTS: tuple[tuple[int, str, str], ...] = (
    (1, 'toolset.get_tools', 'toolset.get_tools (both model calls)'),
    (2, 'routing.acquire in toolset.get_tools', 'routing.acquire'),
    (2, 'hold.list_tools in toolset.get_tools', 'hold.list_tools'),
    (1, 'tool.run_async', 'tool.run_async'),
    (2, 'routing.acquire in tool.run_async', 'routing.acquire'),
    (2, 'hold.list_tools in tool.run_async', 'hold.list_tools (re-listing)'),
    (2, 'hold.call_tool', 'hold.call_tool (the MCP call)'),
    (2, 'render_ui_widget', 'render_ui_widget (model_dump + seal)'),
    (3, 'prepare_seal', 'prepare_seal'),
    (4, 'seal_bytes', 'seal_bytes (canonical JSON)'),
    (4, 'candidate_of', 'candidate_of'),
    (1, 'append_event (all)', 'append_event (every Event)'),
    (2, 'finalize_for_append', 'finalize_for_append'),
    (3, 'seal_before_append', 'seal_before_append'),
    (4, 'approved_envelope', 'approved_envelope (canonical JSON)'),
    (4, 'store.create', 'sealed_result_store.create'),
    (2, 'event_persisted', 'event_persisted (mark referenced)'),
)


def _size_label(size: str) -> str:
  n = int(size)
  return f'{n // 2**20} MB' if n >= 2**20 else f'{n // 2**10} KB'


def _print_parts(title: str, parts: dict[str, float]) -> None:
  turn = parts['turn']
  print(f'    {title}: turn {turn:,.0f} us')
  top = 0.0
  for depth, key, label in _E2E_PARTS:
    if key not in parts:
      continue
    if depth == 1:
      top += parts[key]
    name = '  ' * depth + label
    print(
        f'    {name:<46} {parts[key]:>9,.0f} {100 * parts[key] / turn:>5.1f}%'
    )
  rest = turn - top
  print(
      f'    {"  rest (Runner, flow, model, telemetry)":<46} {rest:>9,.0f}'
      f' {100 * rest / turn:>5.1f}%'
  )


def _ui_call_end_to_end(rounds: int, pristine_src: Path) -> None:
  """A model-originated UI call through a Runner turn, three builds."""
  variants = {
      'raw SDK': (None, 'raw'),
      'pristine': (pristine_src, 'upstream'),
      'unbound': (ROOT / 'src', 'upstream'),
      'bound': (ROOT / 'src', 'bound'),
  }
  runs: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
  order = list(variants)
  for round_ in range(rounds):
    # Alternate the order, so drift favours no variant.
    for name in order if round_ % 2 == 0 else order[::-1]:
      src, variant = variants[name]
      runs[name].append(
          _run(
              'ui_call_end_to_end.py',
              src,
              '--variant',
              variant,
              *_size['ui_call_end_to_end.py'],
          )
      )

  def median(name: str, size: str, *path: str) -> float:
    values: list[float] = []
    for run in runs[name]:
      value: Any = run[size]
      for key in path:
        value = value[key]
      values.append(float(value))
    return statistics.median(values)

  def parts(name: str, size: str, key: str) -> dict[str, float]:
    labels = runs[name][0][size][key]
    return {label: median(name, size, key, label) for label in labels}

  print(
      '\nA model-originated UI call end to end: one Runner turn (scripted'
      ' model: the call, then text; InMemorySessionService) of sized_result'
      ' over stdio, median microseconds per turn'
  )
  print(
      f'  {"result":<7} {"raw SDK":>8} {"pristine":>9} {"unbound":>9}'
      f' {"bound":>9} {"unbound/pristine":>17} {"bound/pristine":>15}'
      f' {"tools/list per turn":>20}'
  )
  sizes = list(runs['raw SDK'][0])
  for size in sizes:
    raw = median('raw SDK', size, 'us')
    pristine = median('pristine', size, 'us')
    unbound = median('unbound', size, 'us')
    bound = median('bound', size, 'us')
    lists = (
        f'{median("pristine", size, "listings"):.0f} /'
        f' {median("bound", size, "listings"):.0f}'
    )
    print(
        f'  {_size_label(size):<7} {raw:>8,.0f} {pristine:>9,.0f}'
        f' {unbound:>9,.0f} {bound:>9,.0f} {_ratio(unbound, pristine):>17}'
        f' {_ratio(bound, pristine):>15} {lists:>20}'
    )
  print(
      '  (target: bound/pristine <= 1.5x at 1 KB; unbound = patched, no'
      ' profile; "raw SDK" is call_tool alone; tools/list: pristine / bound)'
  )
  print('  where the time goes, median microseconds and share of the turn:')
  for size in sizes:
    _print_parts(
        f'{_size_label(size)}, pristine', parts('pristine', size, 'parts_us')
    )
    _print_parts(
        f'{_size_label(size)}, bound', parts('bound', size, 'parts_us')
    )
  print('  the first turn of a new Session, median microseconds:')
  for size in sizes:
    first = parts('bound', size, 'first_turn_us')
    print(
        f'    {_size_label(size)}: pristine'
        f' {median("pristine", size, "first_turn_us", "turn"):,.0f}, bound'
        f' {first["turn"]:,.0f}, of which opening the Session\'s generation'
        ' (routing.acquire in toolset.get_tools)'
        f' {first.get("routing.acquire in toolset.get_tools", 0.0):,.0f}'
    )


def _batch_calls(rounds: int, pristine_src: Path) -> None:
  """A 10-call parallel UI batch: raw SDK, pristine ADK, bound profile."""
  variants = {
      'raw MCP SDK (10 concurrent call_tool)': (None, 'raw'),
      'pristine ADK, plain McpToolset': (pristine_src, 'upstream'),
      'patched ADK, bound profile': (ROOT / 'src', 'bound'),
  }
  us: dict[str, list[float]] = {name: [] for name in variants}
  listings: dict[str, float] = {}
  for _ in range(rounds):
    for name, (src, variant) in variants.items():
      result = _run(
          'batch_calls.py', src, '--variant', variant, *_size['batch_calls.py']
      )
      us[name].append(result['us'])
      listings[name] = result['listings']
  base = statistics.median(us['pristine ADK, plain McpToolset'])
  raw = statistics.median(us['raw MCP SDK (10 concurrent call_tool)'])
  print(
      '\nA 10-call parallel batch of open_view over stdio, median'
      ' microseconds per batch'
  )
  print(
      f'  {"variant":<40} {"us":>8} {"/pristine":>10} {"/raw":>8}'
      f' {"tools/list per batch":>21}'
  )
  for name in variants:
    value = statistics.median(us[name])
    print(
        f'  {name:<40} {value:>8.0f} {_ratio(value, base):>10}'
        f' {_ratio(value, raw):>8} {listings[name]:>21.1f}'
    )
  print(
      '  (target: admission adds one fresh listing of each class for the'
      ' whole batch, not one per call)'
  )


def _session_lifecycle() -> None:
  """Fenced create+activate and delete+cascade vs the plain calls."""
  result = _run(
      'session_lifecycle.py', ROOT / 'src', *_size['session_lifecycle.py']
  )
  print('\nSession lifecycle store vs plain session service, median ms')
  print(
      f'  {"backend":<16} {"create":>8} {"lifecycle":>10} {"ratio":>7}'
      f' {"delete":>8} {"lifecycle":>10} {"ratio":>7}'
  )
  for row in result['results']:
    print(
        f'  {row["backend"]:<16} {row["plain_create_ms"]:>8.2f}'
        f' {row["lifecycle_create_ms"]:>10.2f} {row["create_ratio"]:>6.2f}x'
        f' {row["plain_delete_ms"]:>8.2f} {row["lifecycle_delete_ms"]:>10.2f}'
        f' {row["delete_ratio"]:>6.2f}x'
    )
  print('  (target: lifecycle create <= 1.5x plain create)')


def _append_latency(rounds: int, pristine_src: Path) -> None:
  """A plain model Event's append, per backend: patched vs pristine."""
  sys.path.insert(0, str(ROOT / 'tests' / 'integration' / 'fixtures'))
  from postgres_server import find_postgres_bindir  # pylint: disable=g-import-not-at-top
  from postgres_server import postgres_server  # pylint: disable=g-import-not-at-top

  def measure(pg_url: str | None) -> dict[str, dict[str, list[float]]]:
    extra = ('--pg-url', pg_url) if pg_url else ()
    found: dict[str, dict[str, list[float]]] = {'pristine': {}, 'patched': {}}
    trees = [('pristine', pristine_src), ('patched', ROOT / 'src')]
    for round_ in range(rounds):
      # Alternate which tree goes first, so drift favours neither.
      for name, src in trees if round_ % 2 == 0 else trees[::-1]:
        result = _run(
            'append_latency.py', src, *_size['append_latency.py'], *extra
        )
        for backend, value in result['median_us'].items():
          found[name].setdefault(backend, []).append(value)
    return found

  if find_postgres_bindir() is not None:
    with postgres_server() as server:
      samples = measure(server.create_database())
  else:
    samples = measure(None)
  print(
      '\nAppend of a plain model Event, no profile bound, median microseconds'
  )
  print(
      f'  {"backend":<20} {"pristine":>10} {"patched":>10} {"ratio":>8}'
      f' {"difference":>11}'
  )
  for backend, values in samples['pristine'].items():
    pristine = statistics.median(values)
    patched = statistics.median(samples['patched'][backend])
    print(
        f'  {backend:<20} {pristine:>10.1f} {patched:>10.1f}'
        f' {_ratio(patched, pristine):>8} {patched - pristine:>+11.1f}'
    )
  print('  (target: patched/pristine <= 1.05x; the core event finalizer)')


def _canonical_json() -> None:
  result = _run('canonical_json.py', ROOT / 'src', *_size['canonical_json.py'])
  rates = result['mb_per_second']
  print(
      f'\nADK Canonical JSON v1 on a {result["bytes"] / 1e6:.1f} MB tool'
      ' result, MB/s:'
  )
  print('  ' + ', '.join(f'{name} {rate:.1f}' for name, rate in rates.items()))
  print(
      f'  adk vs C json.dumps(sort_keys=True): {result["adk_vs_json_c"]:.2f}x'
      ' (target >= 0.5x)'
  )
  if 'adk_vs_rfc8785' in result:
    print(f'  adk vs rfc8785: {result["adk_vs_rfc8785"]:.2f}x (target >= 3x)')


def _snapshot() -> None:
  """The closed snapshot vs `copy.deepcopy` and a canonical round trip."""
  result = _run('snapshot.py', ROOT / 'src', *_size['snapshot.py'])
  ms = result['median_ms']
  print(
      f'\nDeep-read-only snapshot of a {result["bytes"] / 1e6:.1f} MB state,'
      ' median ms:'
  )
  print('  ' + ', '.join(f'{name} {v:.1f}' for name, v in ms.items()))
  print(
      f'  deepcopy/snapshot {result["deepcopy_vs_snapshot"]:.2f}x,'
      ' canonical round trip/snapshot'
      f' {result["round_trip_vs_snapshot"]:.2f}x (target: both > 1x,'
      ' snapshot faster than both)'
  )


def _governed_callbacks() -> None:
  """An app path's governed MCP callbacks vs the model path's live ones."""
  result = _run(
      'governed_callbacks.py', ROOT / 'src', *_size['governed_callbacks.py']
  )
  print(
      '\nMCP callbacks of one call (header provider, filter, one progress'
      ' notification), median microseconds'
  )
  for row in result['results']:
    us = row['median_us']
    print(
        f'  state {row["state_bytes"] / 1e3:>7.1f} kB: model path'
        f' {us["model"]:>7.0f}, governed app path {us["governed"]:>7.0f}'
        f' ({row["governed_vs_model"]:.2f}x; the difference is one state'
        ' snapshot per operation)'
    )


def _sealing() -> None:
  """Seal + store vs a raw insert; bootstrap vs a raw `resources/read`."""
  result = _run('sealing.py', ROOT / 'src', *_size['sealing.py'])
  print('\nSealed-result store vs a raw insert of the same bytes, median ms')
  print(
      f'  {"backend":<11} {"size":>5} {"raw":>8} {"store":>8} {"ratio":>7}'
      f' {"+canon":>8} {"ratio":>7}'
  )
  for row in result['seal']:
    print(
        f'  {row["backend"]:<11} {row["size"]:>5} {row["raw_insert_ms"]:>8.2f}'
        f' {row["store_ms"]:>8.2f} {row["store_ratio"]:>6.2f}x'
        f' {row["seal_ms"]:>8.2f} {row["seal_ratio"]:>6.2f}x'
    )
  print(
      '  (target: store <= 2x raw insert; "+canon" adds ADK Canonical JSON of'
      ' the result, measured above)'
  )
  boot = result['bootstrap']
  print(
      '\nbootstrap_render vs a raw resources/read on the same generation:'
      f' {boot["bootstrap_ms"]:.2f} ms vs {boot["raw_read_ms"]:.2f} ms'
      f' ({boot["ratio"]:.2f}x; target <= 1.3x)'
  )
  print(
      '  steps, median ms: '
      + ', '.join(f'{k.lower()} {v:.2f}' for k, v in boot['steps_ms'].items())
  )


def _model_context(rounds: int, pristine_src: Path) -> None:
  """An LLM request from a long session, with 30% audit Events or none."""
  trees = {'pristine': pristine_src, 'patched': ROOT / 'src'}
  samples: dict[tuple[str, str], list[float]] = {}
  events: dict[str, int] = {}
  for _ in range(rounds):
    for tree, src in trees.items():
      result = _run('model_context.py', src, *_size['model_context.py'])
      events = result['events']
      for session in ('plain', 'audited'):
        samples.setdefault((tree, session), []).append(result[session]['us'])
  us = {key: statistics.median(values) for key, values in samples.items()}
  print(
      f'\nLLM request from a {events["audited"]:,}-Event session, 30% of them'
      f' audit Events, vs its {events["plain"]:,} conversation Events alone;'
      ' median microseconds per request'
  )
  print(f'  {"session":<22} {"pristine":>9} {"patched":>9} {"ratio":>7}')
  for session, label in (
      ('plain', 'conversation only'),
      ('audited', 'with audit Events'),
  ):
    pristine, patched = us['pristine', session], us['patched', session]
    print(
        f'  {label:<22} {pristine:>9.0f} {patched:>9.0f}'
        f' {_ratio(patched, pristine):>7}'
    )
  print(
      '  patched, with audit Events / conversation only:'
      f' {_ratio(us["patched", "audited"], us["patched", "plain"])}'
      ' (pristine sends its audit records to the model as conversation)'
  )


def _coordinated_turns(rounds: int, pristine_src: Path) -> None:
  """Plain turns: pristine vs patched, and the session coordinator's cost."""
  samples: dict[tuple[str, str], list[float]] = {}
  for _ in range(rounds):
    runs = {
        'pristine': _run(
            'coordinated_turns.py', pristine_src, *_size['coordinated_turns.py']
        )['plain'],
        **_run(
            'coordinated_turns.py',
            ROOT / 'src',
            '--coordinated',
            *_size['coordinated_turns.py'],
        ),
    }
    for variant, metrics in runs.items():
      for metric, value in metrics.items():
        samples.setdefault((variant, metric), []).append(value)
  med = {key: statistics.median(values) for key, values in samples.items()}
  print('\nA plain turn (text answer, in-memory Session), median')
  print(f'  {"":<34} {"pristine":>10} {"patched":>10} {"coordinated":>12}')
  for metric, label in (
      ('turn_us', 'one turn, microseconds'),
      ('concurrent_per_s', 'turns/s, many Sessions at once'),
  ):
    base = med[('pristine', metric)]
    plain = med[('plain', metric)]
    coordinated = med[('coordinated', metric)]
    print(
        f'  {label:<34} {base:>10.0f} {plain:>10.0f} {coordinated:>12.0f}'
        f'  (patched {_ratio(plain, base)}, coordinated'
        f' {_ratio(coordinated, plain)} of patched)'
    )
  print(
      '  (targets: patched <= 1.02x pristine; a coordinated turn <= 1.10x;'
      ' Sessions do not serialize each other: turns/s within 5%)'
  )


# How `_view_channel` prints a governed request's parts: nesting depth and
# label in the JSON, for a call (all inside `run_app_call`) and for a read.
_CALL_PARTS: tuple[tuple[int, str], ...] = (
    (1, 'run_app_call'),
    (2, 'coordinator.acquire'),
    (2, 'barrier'),
    (2, 'admission (preflight)'),
    (2, 'admission (before a replay)'),
    (2, 'admission (again, in call_app_tool)'),
    (3, 'tools/list (all listings)'),
    (2, 'hold.call_tool'),
    (2, 'append_audit_event'),
)
_READ_PARTS: tuple[tuple[int, str], ...] = (
    (1, 'coordinator.acquire'),
    (1, 'barrier'),
    (1, 'run_app_read'),
    (2, 'hold.read_resource'),
    (1, 'append_audit_event'),
)


def _view_channel(rounds: int) -> None:
  """A View's governed requests through its channel vs the raw SDK."""
  runs = [
      _run('view_channel.py', ROOT / 'src', *_size['view_channel.py'])
      for _ in range(rounds)
  ]

  def median(*path: str) -> float:
    values = []
    for run in runs:
      value: Any = run
      for key in path:
        value = value.get(key, 0.0)
      values.append(float(value))
    return statistics.median(values)

  raw_call, raw_read = median('raw', 'call_us'), median('raw', 'read_us')
  print(
      "\nA View's requests through ViewChannel.handle vs one raw SDK request"
      ' (conformance server over stdio, local_dev_profile, in-memory'
      ' Session), median microseconds'
  )
  print(
      f'  {"request":<34} {"raw SDK":>8} {"channel":>8} {"ratio":>8}'
      '  server requests per request'
  )
  rows = (
      ('call', 'tools/call side_effect', raw_call),
      ('keyed_call', '  with a new idempotency key', raw_call),
      ('replay', '  replay of one key (cached)', raw_call),
      ('read', "resources/read (the View's ui://)", raw_read),
  )
  for key, label, raw in rows:
    governed = median('governed', key, 'us')
    sent = runs[0]['governed'][key]['requests']
    print(
        f'  {label:<34} {raw:>8,.0f} {governed:>8,.0f}'
        f' {_ratio(governed, raw):>8}  '
        + ', '.join(f'{m} {n:g}' for m, n in sorted(sent.items()))
    )
  raw_list = median('raw', 'list_us')
  replay = median('governed', 'replay', 'us')
  keyed = median('governed', 'keyed_call', 'us')
  print(
      f'  raw SDK tools/list alone: {raw_list:,.0f}; raw tools/list +'
      f' call_tool: {raw_list + raw_call:,.0f}'
      f' ({_ratio(raw_list + raw_call, raw_call)} of call_tool); replay /'
      f' keyed fresh call: {_ratio(replay, keyed)}'
  )
  print('  (target: a governed call <= 2.2x one raw call_tool)')
  print('  where the time goes (a wrapped pass), median microseconds:')
  for key, label, _ in rows:
    labels = runs[0]['governed'][key]['parts_us']
    turn = median('governed', key, 'parts_us', 'turn')
    print(f'    {label.strip()}: {turn:,.0f} us')
    shown = _READ_PARTS if key == 'read' else _CALL_PARTS
    top = 0.0
    for depth, part in shown:
      if part not in labels:
        continue
      value = median('governed', key, 'parts_us', part)
      top += value if depth == 1 else 0.0
      name = '  ' * depth + part
      print(f'    {name:<46} {value:>9,.0f} {100 * value / turn:>5.1f}%')
    rest = turn - top
    print(
        f'    {"  rest (intake, answer)":<46} {rest:>9,.0f}'
        f' {100 * rest / turn:>5.1f}%'
    )
  first = runs[0]['poll']
  some = next(iter(first.values()))
  print(
      f'  {some["views"]} Views each polling side_effect {some["polls"]}'
      ' times, all at once (each View sequential); latency of one poll:'
  )
  print(
      f'    {"Sessions":>8} {"p50 ms":>8} {"p99 ms":>8} {"max ms":>8}'
      f' {"calls/s":>8} {"responses":>10} {"Events/Session":>15}'
  )
  for count, poll in first.items():
    print(
        f'    {count:>8} {median("poll", count, "p50_us") / 1e3:>8.1f}'
        f' {median("poll", count, "p99_us") / 1e3:>8.1f}'
        f' {median("poll", count, "max_us") / 1e3:>8.1f}'
        f' {median("poll", count, "calls_per_s"):>8.0f}'
        f' {poll["responses"]:>10} {poll["events_per_session"]:>15}'
    )
  print(
      '    (checked: exactly one terminal response per request, and the'
      " server ran each View's polls exactly once each)"
  )


# How `_host_service` prints where opening a View goes: nesting depth and
# label in the JSON.
_OPEN_PARTS: tuple[tuple[int, str], ...] = (
    (1, 'authorize'),
    (1, 'resolve'),
    (2, 'lifecycle_store.read'),
    (2, 'load_event'),
    (2, 'verify_binding_revision'),
    (2, 'sealed_store.resolve'),
    (1, 'read_app_resource'),
    (2, 'hold.read_resource'),
    (1, 'select_app_content'),
    (1, 'ViewChannel.open'),
    (2, 'get_session'),
)


def _slope(median: Any, first: str, last: str, *path: str) -> str:
  """The per-1,000-Event slope of `path` from Session size `first` to
  `last`, taken over the small Session's time (drift cancels) when the run
  has one, and the grown / small ratio at `last`."""
  *parent, key = path

  def at(size: str, name: str) -> float:
    return float(median('sqlite', 'growth', size, *parent, name))

  span = int(last) - int(first)
  runs_small = at(first, f'baseline_{key}') > 0
  if not runs_small:
    slope = (at(last, key) - at(first, key)) / span
    return f'{1000 * slope:,.1f} us per 1,000 Events'
  slope = (
      (at(last, key) - at(last, f'baseline_{key}'))
      - (at(first, key) - at(first, f'baseline_{key}'))
  ) / span
  return (
      f'{1000 * slope:,.1f} us per 1,000 Events over the small Session;'
      f' at {int(last):,} Events / small:'
      f' {_ratio(at(last, key), at(last, f"baseline_{key}"))}'
  )


def _adapter_load() -> None:
  """Concurrent Views' governed calls through the reference adapter."""
  result = _run('adapter_load.py', ROOT / 'src', *_size['adapter_load.py'])
  print(
      f'\nReference adapter under load: {result["views"]} Views x'
      f' {result["operationsPerView"]} app-only tools/call over HTTP at once'
      ' (uvicorn on loopback, conformance server over stdio, SQLite'
      ' Sessions; client in the same process)'
  )
  print(
      f'  {result["throughputOpsPerSecond"]:.1f} operations/s, p50'
      f' {result["p50Ms"]:.0f} ms, p99 {result["p99Ms"]:.0f} ms; audit'
      f' records {result["auditRecords"]} of {result["operations"]},'
      f' failed answers {result["failedAnswers"]}'
  )


def _host_service(rounds: int) -> None:
  """Opening a View vs a raw read; as the Session grows; export (stub)."""
  runs = [
      _run('host_service.py', ROOT / 'src', *_size['host_service.py'])
      for _ in range(rounds)
  ]

  def median(*path: str) -> float:
    values = []
    for run in runs:
      value: Any = run
      for key in path:
        value = value.get(key, 0.0)
      values.append(float(value))
    return statistics.median(values)

  raw = median('raw', 'read_us')
  print(
      '\nOpening a View (authorize + bootstrap_render + ViewChannel.open, the'
      ' lease) vs one raw SDK read_resource(ui://) (conformance server over'
      ' stdio, local_dev_profile), median microseconds'
  )
  print(f'  {"":<34} {"raw read":>9} {"open":>9} {"ratio":>8}')
  service = 'service_open_us' in runs[0]['memory']
  for backend, label in (
      ('memory', 'in-memory Session'),
      ('sqlite', 'SQLite-file Session'),
  ):
    for key, how in (('open_us', ''), ('service_open_us', ', open_view')):
      if key == 'service_open_us' and not service:
        continue
      opened = median(backend, key)
      name = f'{label}{how}'
      print(
          f'  {name:<34} {raw:>9,.0f} {opened:>9,.0f} {_ratio(opened, raw):>8}'
      )
  if not service:
    print(
        '  (McpAppHostService.open_view is not in this tree: the parts are'
        ' timed)'
    )
  print('  (target: <= 2x; one open sends the server one resources/read)')
  for backend, label in (
      ('memory', 'in-memory'),
      ('sqlite', 'SQLite file'),
  ):
    turn = median(backend, 'parts_us', 'turn')
    print(f'  where the time goes, {label} ({turn:,.0f} us, a wrapped pass):')
    top = 0.0
    labels = runs[0][backend]['parts_us']
    for depth, part in _OPEN_PARTS:
      if part not in labels:
        continue
      value = median(backend, 'parts_us', part)
      top += value if depth == 1 else 0.0
      name = '  ' * depth + part
      print(f'    {name:<40} {value:>9,.0f} {100 * value / turn:>5.1f}%')
    rest = turn - top
    print(
        f'    {"  rest (reserve, checks, grant)":<40} {rest:>9,.0f}'
        f' {100 * rest / turn:>5.1f}%'
    )
  sizes = list(runs[0]['sqlite']['growth'])
  print(
      '  opening a View as the SQLite-file Session grows (plain Events),'
      ' median microseconds; "small" is a View of a Session that stays at'
      ' its first turn, opened in turns with the grown one:'
  )
  columns = [('open_us', 'open'), ('baseline_open_us', 'small')]
  if service:
    columns += [
        ('service_open_us', 'open_view'),
        ('baseline_service_open_us', 'small'),
    ]
  columns.append(('whole_session_open_us', 'whole-Session'))
  print(f'    {"Events":>8}' + ''.join(f' {label:>13}' for _, label in columns))
  for size in sizes:
    print(
        f'    {size:>8}'
        + ''.join(
            f' {median("sqlite", "growth", size, key):>13,.0f}'
            for key, _ in columns
        )
    )
  print(
      '    (whole-Session: the resolver and the channel load every Event,'
      ' as before issue 25)'
  )
  first, last = sizes[0], sizes[-1]
  span = int(last) - int(first)
  if span > 0:
    for key, label in (
        ('open_us', 'open'),
        ('service_open_us', 'open_view'),
        ('whole_session_open_us', 'whole-Session reads'),
    ):
      if key == 'service_open_us' and not service:
        continue
      print(f'    slope, {label}: ' + _slope(median, first, last, key))
  print('  (target: flat in Session size)')
  exports = runs[0]['sqlite']['growth'][first].get('export')
  if exports is None:
    print(
        '  export of 1 KiB / 1 MiB sealed results: NOT MEASURED (this tree'
        ' has no host.export.ExportResolver)'
    )
    return
  print(
      '  export (ExportResolver.export: authorize, authoritative Event,'
      ' durable audit, recheck, canonical body) vs a raw'
      ' SealedResultStore.resolve of the same record, SQLite-file Session,'
      ' local_dev stores, median microseconds:'
  )
  print(
      f'    {"Events":>8} {"result":>9} {"raw store":>10} {"export":>9}'
      f' {"ratio":>9} {"small":>9}'
  )
  for size in sizes:
    for result in exports:
      at = ('sqlite', 'growth', size, 'export', result)
      raw_us = median(*at, 'raw_us')
      export_us = median(*at, 'export_us')
      print(
          f'    {size:>8} {int(result):>9,} {raw_us:>10,.0f}'
          f' {export_us:>9,.0f} {_ratio(export_us, raw_us):>9}'
          f' {median(*at, "baseline_export_us"):>9,.0f}'
      )
  if span > 0:
    for result in exports:
      print(
          f'    slope, export of {int(result):,} bytes: '
          + _slope(median, first, last, 'export', result, 'export_us')
      )


if __name__ == '__main__':
  main()
