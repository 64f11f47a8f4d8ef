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

"""One agent turn and two API servers on one ADK tree; prints what happened.

Runs inside a leg's virtualenv with `PYTHONPATH` = the tree's `src` (and
nothing else of this repository):

    python agent_turn.py AGENTS_DIR

`AGENTS_DIR` holds the `compat_agent` package (a scripted model, no
network); it must be a scratch copy, since the API servers keep their
sessions under it. The script

1. runs one turn with `InMemoryRunner`;
2. serves `google.adk.cli.fast_api.get_fast_api_app` on 127.0.0.1 (an
   ephemeral port) in this process, runs the same turn through `/run`, reads
   the session back, and stops the server;
3. starts `adk api_server` (`python -m google.adk.cli`) on 127.0.0.1 as a
   child process, lists its apps, and stops it;

and prints one JSON object on its last stdout line. Run-dependent values
(event and invocation ids, timestamps) are replaced by placeholders, so two
trees that behave alike print the same JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
import re
import signal
import subprocess
import sys
from typing import Any

USER = 'compat-user'
MESSAGE = 'please add 2 and 40'
# Keys whose values differ from run to run; masked wherever they appear.
_RUN_KEYS = frozenset({
    'timestamp',
    'invocation_id',
    'invocationId',
    'last_update_time',
    'lastUpdateTime',
})
_STARTED = re.compile(r'Uvicorn running on http://127\.0\.0\.1:(\d+)')
_SERVER_SECONDS = 60.0


class _Masker:
  """Replaces run-dependent values by placeholders, by first appearance."""

  def __init__(self) -> None:
    self._seen: dict[tuple[str, str], str] = {}

  def value(self, kind: str, value: Any) -> str:
    key = (kind, json.dumps(value))
    count = sum(1 for k in self._seen if k[0] == kind)
    return self._seen.setdefault(key, f'<{kind}-{count}>')

  def walk(self, data: Any) -> Any:
    if isinstance(data, dict):
      return {
          k: self.value(k, v) if k in _RUN_KEYS else self.walk(v)
          for k, v in data.items()
      }
    if isinstance(data, list):
      return [self.walk(v) for v in data]
    return data

  def events(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    masked = []
    for event in events:
      event = self.walk(event)
      if 'id' in event:
        event['id'] = self.value('event', event['id'])
      masked.append(event)
    return masked


def _dump(event: Any) -> dict[str, Any]:
  return json.loads(event.model_dump_json(exclude_none=True))


async def in_memory_turn() -> dict[str, Any]:
  """One turn through `InMemoryRunner`: yielded and stored events."""
  from compat_agent.agent import root_agent
  from google.adk.runners import InMemoryRunner
  from google.genai import types

  runner = InMemoryRunner(agent=root_agent, app_name='compat')
  session = await runner.session_service.create_session(
      app_name='compat', user_id=USER, session_id='turn'
  )
  yielded = []
  try:
    async for event in runner.run_async(
        user_id=USER,
        session_id=session.id,
        new_message=types.Content(
            role='user', parts=[types.Part(text=MESSAGE)]
        ),
    ):
      yielded.append(_dump(event))
  finally:
    await runner.close()
  stored = await runner.session_service.get_session(
      app_name='compat', user_id=USER, session_id=session.id
  )
  assert stored is not None
  masker = _Masker()
  return {
      'yielded': masker.events(yielded),
      'stored': masker.events([_dump(e) for e in stored.events]),
      'state': stored.state,
  }


async def fast_api_turn(agents_dir: Path) -> dict[str, Any]:
  """The FastAPI app on loopback: list apps, create a session, `/run`."""
  from google.adk.cli.fast_api import get_fast_api_app
  import httpx
  import uvicorn

  app = get_fast_api_app(agents_dir=str(agents_dir), web=False)
  server = uvicorn.Server(
      uvicorn.Config(app, host='127.0.0.1', port=0, log_level='warning')
  )
  serving = asyncio.create_task(server.serve())
  try:
    async with asyncio.timeout(_SERVER_SECONDS):
      while not server.started:
        if serving.done():
          serving.result()  # Raises why the server could not start.
        await asyncio.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    base = f'http://127.0.0.1:{port}'
    sessions = f'{base}/apps/compat_agent/users/{USER}/sessions'
    async with httpx.AsyncClient(timeout=_SERVER_SECONDS) as client:
      apps = (await client.get(f'{base}/list-apps')).json()
      created = await client.post(f'{sessions}/api', json={})
      created.raise_for_status()
      run = await client.post(
          f'{base}/run',
          json={
              'app_name': 'compat_agent',
              'user_id': USER,
              'session_id': 'api',
              'new_message': {'role': 'user', 'parts': [{'text': MESSAGE}]},
          },
      )
      run.raise_for_status()
      stored = await client.get(f'{sessions}/api')
      stored.raise_for_status()
  finally:
    server.should_exit = True
    await serving
  masker = _Masker()
  session = masker.walk(stored.json())
  session['events'] = masker.events(stored.json()['events'])
  return {
      'apps': apps,
      'run': masker.events(run.json()),
      'session': session,
  }


def api_server(agents_dir: Path) -> dict[str, Any]:
  """`adk api_server` as a user starts it: it serves, then stops."""
  import httpx

  process = subprocess.Popen(
      [
          sys.executable,
          '-m',
          'google.adk.cli',
          'api_server',
          '--host',
          '127.0.0.1',
          '--port',
          '0',
          str(agents_dir),
      ],
      stdout=subprocess.DEVNULL,
      stderr=subprocess.PIPE,
      text=True,
      env={**os.environ, 'PYTHONUNBUFFERED': '1'},
  )
  lines: list[str] = []
  try:
    assert process.stderr is not None
    for line in process.stderr:
      lines.append(line)
      match = _STARTED.search(line)
      if match:
        break
    else:
      raise RuntimeError(
          f'adk api_server exited ({process.wait()}) before serving:\n'
          + ''.join(lines[-40:])
      )
    base = f'http://127.0.0.1:{match.group(1)}'
    apps = httpx.get(f'{base}/list-apps', timeout=_SERVER_SECONDS).json()
  finally:
    process.send_signal(signal.SIGINT)
    try:
      process.communicate(timeout=_SERVER_SECONDS)
    except subprocess.TimeoutExpired:
      process.kill()
      process.communicate()
  return {'apps': apps, 'stopped': process.returncode is not None}


def main(argv: list[str]) -> None:
  agents_dir = Path(argv[0]).resolve()
  sys.path.insert(0, str(agents_dir))
  import google.adk

  result = {
      'adk_file': google.adk.__file__,
      'turn': asyncio.run(in_memory_turn()),
      'fast_api': asyncio.run(fast_api_turn(agents_dir)),
      'api_server': api_server(agents_dir),
      'mcp_loaded': sorted(
          m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')
      ),
  }
  print(json.dumps(result, sort_keys=True))


if __name__ == '__main__':
  main(sys.argv[1:])
