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


"""The closed snapshot of a 1 MB session state vs two ways to copy it.

The state is what an app-heavy session keeps: per-user preferences, a
cart of line items, a history of turn records with nested tool arguments,
counters and ratios, some non-ASCII text, all decoded from JSON text.

Measured interleaved, the median of several runs each:

* `snapshot`: `facades.snapshot.snapshot` (validates and freezes);
* `deepcopy`: `copy.deepcopy` (no validation, mutable result);
* `canonical_round_trip`: `json.loads(canonicalize(value))` (validates,
  mutable result, integral floats become ints).

Target (measured, never asserted): `snapshot` faster than both. Prints one
JSON line: the canonical size, the medians in milliseconds and the ratios.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import time
from typing import Any
from typing import Callable

from google.adk.mcp_apps import canonical_json
from google.adk.mcp_apps.facades.snapshot import snapshot

TARGET_BYTES = 1_100_000


def _turn(rng: random.Random, i: int) -> dict[str, Any]:
  words = ['refund', 'order', 'Zürich', 'größe', '配送', 'status', 'ok']
  return {
      'turn': i,
      'author': rng.choice(['user', 'agent', 'tool']),
      'text': ' '.join(rng.choice(words) for _ in range(rng.randrange(3, 12))),
      'tool': {
          'name': rng.choice(['lookup_order', 'issue_refund', 'show_map']),
          'args': {
              'order_id': f'ORD-{rng.randrange(10**6):06d}',
              'amount': round(rng.uniform(1, 500), 2),
              'items': [rng.randrange(100) for _ in range(rng.randrange(4))],
          },
          'ok': rng.random() < 0.9,
      },
      'latency_ms': rng.randrange(5, 3000),
      'score': rng.random(),
      'flags': rng.sample(['retry', 'cached', 'ui', 'sealed', 'batch'], 2),
      'note': None if rng.random() < 0.7 else 'needs follow-up',
  }


def state(target_bytes: int = TARGET_BYTES) -> Any:
  """Returns the benchmark state, decoded from its JSON text."""
  rng = random.Random(20)
  history = []
  size = 0
  while size < target_bytes:
    turn = _turn(rng, len(history))
    size += len(json.dumps(turn, ensure_ascii=False).encode()) + 1
    history.append(turn)
  value = {
      'user:prefs': {'lang': 'de-CH', 'units': 'metric', 'theme': 'dark'},
      'app:counters': {f'c{i}': i * 7 for i in range(50)},
      'cart': [
          {'sku': f'SKU-{i:05d}', 'qty': i % 4 + 1, 'price': 9.5 + i}
          for i in range(40)
      ],
      'history': history,
      'temp:ratio': 0.25,
  }
  return json.loads(json.dumps(value))


def _median_ms(
    variants: dict[str, Callable[[], Any]], runs: int
) -> dict[str, float]:
  """Times the variants interleaved, so drift affects all alike."""
  samples: dict[str, list[float]] = {name: [] for name in variants}
  for _ in range(runs):
    for name, fn in variants.items():
      start = time.perf_counter()
      fn()
      samples[name].append((time.perf_counter() - start) * 1000)
  return {name: statistics.median(s) for name, s in samples.items()}


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument('--runs', type=int, default=15)
  parser.add_argument('--bytes', type=int, default=TARGET_BYTES)
  args = parser.parse_args()
  value = state(args.bytes)
  assert snapshot(value) == value
  variants: dict[str, Callable[[], Any]] = {
      'snapshot': lambda: snapshot(value),
      'deepcopy': lambda: copy.deepcopy(value),
      'canonical_round_trip': lambda: json.loads(
          canonical_json.canonicalize(value)
      ),
  }
  ms = _median_ms(variants, args.runs)
  print(
      json.dumps({
          'bytes': len(canonical_json.canonicalize(value)),
          'median_ms': ms,
          'deepcopy_vs_snapshot': ms['deepcopy'] / ms['snapshot'],
          'round_trip_vs_snapshot': ms['canonical_round_trip'] / ms['snapshot'],
      })
  )


if __name__ == '__main__':
  main()
