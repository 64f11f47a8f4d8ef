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

"""Throughput of the shared URI canonicalizer, for `benchmarks/run.py`.

Canonicalizes a fixed, realistic mix of 10,000 `ui://` and `https://` URIs
(case variants, default ports, escaped unreserved characters, queries) and,
for scale, splits the same URIs with `urllib.parse.urlsplit`. Prints one JSON
line.
"""

from __future__ import annotations

import argparse
import json
import random
import time
import urllib.parse

from google.adk.mcp_apps.resources import uri as uri_module

COUNT = 10_000


def _uris(count: int) -> list[str]:
  rng = random.Random(1865)
  hosts = [
      'bqaa',
      'Dashboard.Example.COM',
      'bücher.example',
      'xn--bcher-kva.example',
  ]
  uris = []
  for i in range(count):
    host = rng.choice(hosts)
    path = '/'.join(f'seg{rng.randrange(50)}%7E{i % 7}' for _ in range(3))
    if rng.random() < 0.5:
      uris.append(f'UI://{host}/{path}?v={i}&lang=en#frag')
    else:
      uris.append(f'HTTPS://{host}:443/{path}?q={i}')
  return uris


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument('--count', type=int, default=COUNT)
  count = parser.parse_args().count
  uris = _uris(count)
  canonicalize = uri_module.canonicalize
  # Distinct strings each time: a cache, if any, must not flatter the result.
  start = time.perf_counter()
  for value in uris:
    canonicalize(value)
  elapsed = time.perf_counter() - start
  start = time.perf_counter()
  for value in uris:
    urllib.parse.urlsplit(value)
  split_elapsed = time.perf_counter() - start
  print(
      json.dumps({
          'count': count,
          'uris_per_second': count / elapsed,
          'urlsplit_per_second': count / split_elapsed,
      })
  )


if __name__ == '__main__':
  main()
