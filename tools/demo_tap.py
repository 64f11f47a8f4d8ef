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

"""A stdio tap for `make demo`: what a third-party server receives.

The published system-monitor server logs nothing about its clients, so the
demo launches it through this tap: `demo_tap.py LOG -- COMMAND...` starts
COMMAND with this process's stdout and stderr, forwards stdin to it line by
line unchanged, and appends one JSON line to LOG for every `initialize`
request that passes: the tap's pid (one per connection) and the client's
`capabilities` and `clientInfo`, exactly as the server receives them.

The MCP SDK stops a stdio server by signalling its process group, which
holds the tap and the server alike; end of input closes the server's input.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys


def _record(log: str, line: bytes) -> None:
  try:
    message = json.loads(line)
  except ValueError:
    return
  if not isinstance(message, dict) or message.get('method') != 'initialize':
    return
  params = message.get('params') or {}
  entry = {
      'connection': os.getpid(),
      'capabilities': params.get('capabilities'),
      'clientInfo': params.get('clientInfo'),
  }
  with open(log, 'a', encoding='utf-8') as f:
    f.write(json.dumps(entry, sort_keys=True) + '\n')


def main(argv: list[str]) -> int:
  if len(argv) < 3 or argv[1] != '--':
    sys.exit('usage: demo_tap.py LOG -- COMMAND [ARG...]')
  log, command = argv[0], argv[2:]
  server = subprocess.Popen(command, stdin=subprocess.PIPE)
  assert server.stdin is not None
  try:
    for line in sys.stdin.buffer:
      _record(log, line)
      server.stdin.write(line)
      server.stdin.flush()
  except BrokenPipeError:
    pass
  finally:
    try:
      server.stdin.close()
    except BrokenPipeError:
      pass
  return server.wait()


if __name__ == '__main__':
  sys.exit(main(sys.argv[1:]))
