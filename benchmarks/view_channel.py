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

"""A View's governed channel vs the raw SDK, on the conformance server.

Run by `run.py` on the patched tree. In one process, over stdio, it times
the SDK's `ClientSession.call_tool('side_effect')` and
`read_resource(VIEW_URI)` on a plain SDK session, and the same requests
sent by a rendered View through `ViewChannel.handle` (public API only:
`McpAppBindingRegistry` with `local_dev_profile()`, a `Runner` turn that
renders the View, `bootstrap_render`, `ViewChannel.open`): a fresh call, a
keyed fresh call, a replay of one idempotency key, a read. Then `--views`
channels each poll `side_effect` `--polls` times, all at once, and every
answer is checked. Prints one JSON object. Design and numbers:
docs/decisions/issue23-bench.md.

Example:

  python benchmarks/view_channel.py --calls 50 --views 10 --polls 5
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import logging
from pathlib import Path
import statistics
import sys
import tempfile
import time
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.dont_write_bytecode = False  # As ui_call_end_to_end.py: compile once.
sys.path.insert(0, str(ROOT / 'tests' / 'integration' / 'fixtures'))
# The tests' scripted model; appended so nothing there shadows a module.
sys.path.append(str(ROOT / 'tests' / 'integration' / 'mcp_apps'))

# pylint: disable=g-import-not-at-top
from batch_calls import _server
from mcp_apps_conformance_server import names
from mcp_calls import _median_us
from ui_call_end_to_end import _Parts
from ui_call_end_to_end import _wrapped

APP = 'bench'
USER = 'u'
TOOLSET = 'conformance'
TOOL = names.SIDE_EFFECT
URI = names.VIEW_URI
KEY_META = 'com.google.adk/idempotency-key'


def _requests(log: Path) -> collections.Counter[str]:
  """The server's requests so far, by method (and tool for a call)."""
  found: collections.Counter[str] = collections.Counter()
  if not log.exists():
    return found
  for line in log.read_text().splitlines():
    entry = json.loads(line)
    method = entry.get('method')
    if method == 'tools/call':
      method = f'tools/call {entry.get("name")}'
    if method:
      found[method] += 1
  return found


def _per_op(
    before: collections.Counter[str], after: collections.Counter[str], n: int
) -> dict[str, float]:
  return {m: (after[m] - before[m]) / n for m in after if after[m] > before[m]}


async def _raw(log: Path, calls: int, warmup: int) -> dict[str, Any]:
  from mcp import ClientSession
  from mcp.client.stdio import stdio_client

  async with stdio_client(_server(log)) as (read, write):
    async with ClientSession(read, write) as session:
      await session.initialize()
      result = await session.call_tool(TOOL, {'key': 'raw'})
      assert not result.is_error, result
      read_result = await session.read_resource(URI)
      assert read_result.contents, read_result
      return {
          'call_us': await _median_us(
              lambda: session.call_tool(TOOL, {'key': 'raw'}), calls, warmup
          ),
          'read_us': await _median_us(
              lambda: session.read_resource(URI), calls, warmup
          ),
          'list_us': await _median_us(session.list_tools, calls, warmup),
      }


class _Host:
  """A bound registry, a Runner, and Views rendered by its turns."""

  def __init__(self, log: Path) -> None:
    # pylint: disable=g-import-not-at-top
    from google.adk.agents.llm_agent import LlmAgent
    from google.adk.mcp_apps import local_dev_profile
    from google.adk.mcp_apps import McpAppBindingRegistry
    from google.adk.mcp_apps import McpToolsetSpec
    from google.adk.runners import Runner
    from google.adk.sessions.in_memory_session_service import InMemorySessionService
    from google.adk.tools.mcp_tool import StdioConnectionParams
    from scripted_llm import ScriptedLlm

    self.profile = local_dev_profile()
    self.registry = McpAppBindingRegistry(
        {
            TOOLSET: McpToolsetSpec(
                connection_params=StdioConnectionParams(
                    server_params=_server(log), timeout=60.0
                )
            )
        },
        self.profile,
        allow_dev_providers=True,
    )
    self.llm = ScriptedLlm(steps=[[(TOOL, {'key': 'render'})]])
    self.sessions = InMemorySessionService()
    self.runner = Runner(
        app_name=APP,
        agent=LlmAgent(
            name='bench_agent',
            model=self.llm,
            tools=[self.registry.toolset(TOOLSET)],
        ),
        session_service=self.sessions,
    )
    self.principal: Any = None

  async def start(self) -> None:
    # pylint: disable-next=g-import-not-at-top
    from google.adk.mcp_apps import PrincipalRequest

    await self.registry.start()
    resolver = self.profile.principal_resolver
    assert resolver is not None  # local_dev_profile() supplies one.
    self.principal = await resolver.resolve(
        PrincipalRequest(client_host='127.0.0.1')
    )

  async def close(self) -> None:
    await self.runner.close()
    await self.registry.aclose()

  async def new_session(self) -> str:
    session = await self.sessions.create_session(app_name=APP, user_id=USER)
    return str(session.id)

  async def render(self, session_id: str) -> Any:
    """One Runner turn calls the UI tool; its View's `RenderDocument`."""
    # pylint: disable=g-import-not-at-top
    from google.adk.mcp_apps import bootstrap_render
    from google.adk.mcp_apps import SessionKey
    from google.genai import types

    async for _ in self.runner.run_async(
        user_id=USER,
        session_id=session_id,
        new_message=types.Content(role='user', parts=[types.Part(text='go')]),
    ):
      pass
    session = await self.sessions.get_session(
        app_name=APP, user_id=USER, session_id=session_id
    )
    assert session is not None
    event = [e for e in session.events if e.actions.render_ui_widgets][-1]
    (widget,) = list(event.actions.render_ui_widgets or ())
    return await bootstrap_render(
        registry=self.registry,
        profile=self.profile,
        session_service=self.sessions,
        principal=self.principal,
        session=SessionKey(APP, USER, session_id),
        toolset_id=TOOLSET,
        event_id=event.id,
        function_call_id=widget.id,
    )

  async def channel(self, document: Any) -> Any:
    # pylint: disable-next=g-import-not-at-top
    from google.adk.mcp_apps import ViewChannel

    return await ViewChannel.open(
        document,
        principal=self.principal,
        registry=self.registry,
        runner=self.runner,
    )

  def history(self, session_id: str) -> list[Any]:
    """The stored Session's Event list (InMemorySessionService's own)."""
    return self.sessions.sessions[APP][USER][session_id].events


def _call(request_id: int, key: str, replay: str | None = None) -> Any:
  params: dict[str, Any] = {'name': TOOL, 'arguments': {'key': key}}
  if replay is not None:
    params['_meta'] = {KEY_META: replay}
  return {
      'jsonrpc': '2.0',
      'id': request_id,
      'method': 'tools/call',
      'params': params,
  }


def _read(request_id: int) -> Any:
  return {
      'jsonrpc': '2.0',
      'id': request_id,
      'method': 'resources/read',
      'params': {'uri': URI},
  }


def _ok(response: Any, request_id: int, method: str) -> Any:
  assert response is not None and response['id'] == request_id, response
  assert 'result' in response, response
  result = response['result']
  if method == 'tools/call':
    assert not result.get('isError'), result
    return result['structuredContent']
  assert result['contents'], result
  return result


class _Channel:
  """One View channel's requests, numbered, each checked; the Session's
  history is trimmed back after each (untimed), so every request sees the
  same Session however many ran before it."""

  def __init__(self, host: _Host, session_id: str, channel: Any) -> None:
    self.host = host
    self.channel = channel
    self.events = host.history(session_id)
    self.keep = len(self.events)
    self.next_id = 0

  async def send(self, build: Any, method: str) -> Any:
    self.next_id += 1
    request_id = self.next_id
    response = await self.channel.handle(
        build(request_id), token=self.channel.token
    )
    del self.events[self.keep :]
    return _ok(response, request_id, method)


# What the "where the time goes" pass wraps (benchmark process only), in
# the namespaces the channel's code calls them through.
def _targets() -> list[tuple[Any, str, str]]:
  # pylint: disable=g-import-not-at-top
  from google.adk.mcp_apps.affinity import routing
  from google.adk.mcp_apps.affinity.generations import GenerationHold
  from google.adk.mcp_apps.affinity.generations import GenerationPages
  from google.adk.mcp_apps.coordination.coordinator import SessionCoordinator
  from google.adk.mcp_apps.operations import app_call
  from google.adk.mcp_apps.operations import view_channel

  return [
      (SessionCoordinator, 'acquire', 'coordinator.acquire'),
      (view_channel.ViewChannel, 'barrier', 'barrier'),
      (view_channel, 'run_app_call', 'run_app_call'),
      (app_call, 'admit_app_call', 'admission (preflight)'),
      (view_channel, 'admit_app_call', 'admission (before a replay)'),
      (routing, 'admit_app_call', 'admission (again, in call_app_tool)'),
      (GenerationPages, 'list_tools', 'tools/list (all listings)'),
      (GenerationHold, 'call_tool', 'hold.call_tool'),
      (view_channel, 'run_app_read', 'run_app_read'),
      (GenerationHold, 'read_resource', 'hold.read_resource'),
      (app_call, 'append_audit_event', 'append_audit_event'),
      (view_channel, 'append_audit_event', 'append_audit_event'),
  ]


async def _parts(
    step: Any, n: int, targets: list[tuple[Any, str, str]]
) -> dict[str, float]:
  with _wrapped(_Parts(), targets) as parts:
    for _ in range(n):
      start = time.perf_counter_ns()
      await step()
      parts.end_turn((time.perf_counter_ns() - start) / 1000)
  medians: dict[str, float] = parts.medians()
  return medians


async def _governed(
    host: _Host, log: Path, calls: int, warmup: int
) -> dict[str, Any]:
  session_id = await host.new_session()
  document = await host.render(session_id)
  found: dict[str, Any] = {}
  fresh_keys = iter(range(10**9))

  async def measure(name: str, build: Any, method: str) -> _Channel:
    # A channel per measurement: its admissions stay under the profile's
    # per-minute rate.
    channel = _Channel(host, session_id, await host.channel(document))

    async def step() -> Any:
      return await channel.send(build, method)

    await step()
    before = _requests(log)
    found[name] = {'us': await _median_us(step, calls, warmup)}
    found[name]['requests'] = _per_op(before, _requests(log), calls + warmup)
    found[name]['parts_us'] = await _parts(step, max(1, calls // 2), _targets())
    return channel

  await measure('call', lambda i: _call(i, 'fresh'), 'tools/call')
  await measure(
      'keyed_call',
      lambda i: _call(i, 'keyed', replay=f'fresh-{next(fresh_keys)}'),
      'tools/call',
  )
  replay = await measure(
      'replay', lambda i: _call(i, 'replayed', replay='one-key'), 'tools/call'
  )
  # Every replay answered the first execution's result: the server ran
  # `side_effect('replayed')` once.
  last = await replay.send(
      lambda i: _call(i, 'replayed', replay='one-key'), 'tools/call'
  )
  assert last['count'] == 1, last
  await measure('read', _read, 'resources/read')
  return found


async def _poll(
    host: _Host, views: int, polls: int, view_sessions: int
) -> dict[str, Any]:
  """`views` channels over `view_sessions` Sessions, all polling at once."""
  session_ids = [await host.new_session() for _ in range(view_sessions)]
  channels = []
  for n in range(views):
    session_id = session_ids[n % view_sessions]
    channels.append(await host.channel(await host.render(session_id)))
  latencies: list[float] = []
  answers: collections.Counter[tuple[int, int]] = collections.Counter()
  counts: dict[int, int] = {}

  async def view(n: int, channel: Any) -> None:
    for poll in range(1, polls + 1):
      start = time.perf_counter_ns()
      response = await channel.handle(
          _call(poll, f'view-{n}'), token=channel.token
      )
      latencies.append((time.perf_counter_ns() - start) / 1000)
      answers[n, poll] += 1
      counts[n] = _ok(response, poll, 'tools/call')['count']

  start = time.perf_counter()
  await asyncio.gather(*(view(n, c) for n, c in enumerate(channels)))
  elapsed = time.perf_counter() - start
  # Exactly one terminal response per request, and the server ran each
  # View's calls exactly `polls` times (its counter per View's key).
  assert len(answers) == views * polls and set(answers.values()) == {1}
  assert counts == {n: polls for n in range(views)}, counts
  latencies.sort()
  return {
      'views': views,
      'polls': polls,
      'sessions': view_sessions,
      'responses': sum(answers.values()),
      'p50_us': latencies[len(latencies) // 2],
      'p99_us': latencies[min(len(latencies) - 1, len(latencies) * 99 // 100)],
      'max_us': latencies[-1],
      'calls_per_s': len(latencies) / elapsed,
      'events_per_session': max(len(host.history(s)) for s in session_ids),
  }


async def _run(args: argparse.Namespace) -> dict[str, Any]:
  with tempfile.TemporaryDirectory() as tmp:
    raw = await _raw(Path(tmp) / 'raw.jsonl', args.calls, args.warmup)
    log = Path(tmp) / 'governed.jsonl'
    host = _Host(log)
    await host.start()
    try:
      governed = await _governed(host, log, args.calls, args.warmup)
      polled = {
          count: await _poll(host, args.views, args.polls, int(count))
          for count in args.view_sessions.split(',')
      }
    finally:
      await host.close()
  return {'raw': raw, 'governed': governed, 'poll': polled}


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument('--calls', type=int, default=200)
  parser.add_argument('--warmup', type=int, default=20)
  parser.add_argument('--views', type=int, default=50)
  parser.add_argument('--polls', type=int, default=20)
  parser.add_argument(
      '--view-sessions',
      default='1,10',
      help=(
          'comma-separated: each runs the poll once, its Views spread over'
          ' that many Sessions (round robin)'
      ),
  )
  parser.add_argument(
      '--smoke', action='store_true', help='a few requests of each kind'
  )
  args = parser.parse_args()
  if args.smoke:
    args.calls, args.warmup, args.views, args.polls = 3, 1, 4, 2
    args.view_sessions = '2'
  logging.disable(logging.WARNING)
  print(json.dumps(asyncio.run(_run(args))))


if __name__ == '__main__':
  main()
