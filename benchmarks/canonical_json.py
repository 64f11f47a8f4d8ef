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

"""Throughput of ADK Canonical JSON v1 on a realistic 1 MB tool result.

The document is what a table-producing MCP tool returns as
`structuredContent`, decoded from JSON text the way the host receives it:
rows of strings (some non-ASCII, some with escapes), integers, prices and
ratios (a share of them integral, so written `12.0` on the wire and decoded
as floats), booleans, nulls, nested location objects and tag lists, and
tiny floats written in exponent notation (in about 6% of the rows).

Measured interleaved, the median of several runs each:

* `adk`: `canonical_json.canonicalize`;
* `rfc8785`: the `rfc8785` package's `dumps` (pure Python, if installed);
* `json_c`: `json.dumps(sort_keys=True, separators=(',', ':'),
  ensure_ascii=False).encode()`, the C encoder, which is not canonical but
  bounds what any pre-pass design can reach.

Targets (not asserted anywhere): `adk` at least 3x `rfc8785` and at least
0.5x `json_c`. Prints one JSON line (MB/s and the ratios); with `--check`
also asserts that `adk` and `rfc8785` agree on the document.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from typing import Any
from typing import Callable

from google.adk.mcp_apps import canonical_json

TARGET_BYTES = 1_100_000


def _row(rng: random.Random, i: int) -> dict[str, Any]:
  names = ['Ada', 'Grace', 'Linus', 'Zoë', 'Björn', '李雷', 'Ōkuma', 'Amélie']
  cities = ['Zürich', 'São Paulo', 'Kraków', 'Tokyo', 'Austin', 'Reykjavík']
  price = rng.choice([rng.randrange(1, 500), rng.randrange(100, 50000) / 100])
  return {
      'id': i,
      'sku': f'SKU-{rng.randrange(10**8):08d}',
      'name': f'{rng.choice(names)} {rng.choice(names)}',
      'email': f'user{i}@example.com',
      'price': float(price),
      'quantity': rng.randrange(0, 1000),
      'discount': round(rng.random() * 0.3, 4),
      'ratio': rng.random(),
      'active': rng.random() < 0.8,
      'notes': (
          None
          if rng.random() < 0.5
          else 'Line one\nline "two"\tend — ✓ ' + rng.choice(cities)
      ),
      'tags': rng.sample(['new', 'sale', 'eu', 'us', 'vip', 'bulk'], 3),
      'location': {
          'city': rng.choice(cities),
          'lat': round(rng.uniform(-90, 90), 6),
          'lon': round(rng.uniform(-180, 180), 6),
      },
      'updated': (
          f'2026-0{rng.randrange(1, 10)}-1{rng.randrange(10)}T'
          f'{rng.randrange(10, 24)}:00:00Z'
      ),
      'error_rate': (
          0.0
          if rng.random() < 0.4
          else rng.choice([2.5e-05, 1e-06, 7.5e-08])
          if rng.random() < 0.1
          else round(rng.random() * 0.05, 5)
      ),
  }


def document(target_bytes: int = TARGET_BYTES) -> Any:
  """Returns the benchmark document, decoded from its JSON text."""
  rng = random.Random(1865)
  rows = []
  size = 0
  while size < target_bytes:
    row = _row(rng, len(rows))
    size += len(json.dumps(row, ensure_ascii=False).encode()) + 1
    rows.append(row)
  value = {
      'structuredContent': {
          'columns': list(rows[0]),
          'rows': rows,
          'total': len(rows),
          'generatedAt': '2026-01-26T00:00:00Z',
      },
      'isError': False,
  }
  return json.loads(json.dumps(value))


def _median_seconds(
    variants: dict[str, Callable[[], bytes]], runs: int
) -> dict[str, float]:
  """Times the variants interleaved, so drift affects all alike."""
  samples: dict[str, list[float]] = {name: [] for name in variants}
  for _ in range(runs):
    for name, fn in variants.items():
      start = time.perf_counter()
      fn()
      samples[name].append(time.perf_counter() - start)
  return {name: statistics.median(s) for name, s in samples.items()}


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument('--runs', type=int, default=15)
  parser.add_argument('--check', action='store_true')
  args = parser.parse_args()
  value = document()
  canonical = canonical_json.canonicalize(value)
  size = len(canonical)
  variants: dict[str, Callable[[], bytes]] = {
      'adk': lambda: canonical_json.canonicalize(value),
      'json_c': (
          lambda: json.dumps(
              value, sort_keys=True, separators=(',', ':'), ensure_ascii=False
          ).encode()
      ),
  }
  try:
    import rfc8785  # pylint: disable=g-import-not-at-top

    variants['rfc8785'] = lambda: rfc8785.dumps(value)
    if args.check:
      assert rfc8785.dumps(value) == canonical
  except ImportError:
    pass
  seconds = _median_seconds(variants, args.runs)
  result: dict[str, Any] = {
      'bytes': size,
      'mb_per_second': {k: size / v / 1e6 for k, v in seconds.items()},
      'adk_vs_json_c': seconds['json_c'] / seconds['adk'],
  }
  if 'rfc8785' in seconds:
    result['adk_vs_rfc8785'] = seconds['rfc8785'] / seconds['adk']
  print(json.dumps(result))


if __name__ == '__main__':
  main()
