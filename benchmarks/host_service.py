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

"""Opening a View and exporting a result vs the raw reads, as Sessions grow.

Run by `run.py` on the patched tree. In one process, on the conformance
server over stdio, it times the SDK's `read_resource(VIEW_URI)` on a plain
SDK session, then opening a View of a rendered widget: authorize +
`bootstrap_render` + `ViewChannel.open` (the lease), on an in-memory and on
a SQLite-file Session service. Then the SQLite Session grows to each of
`--events` Events (plain Events through `append_event`) and opening the
View is timed again, beside the path that reads the whole Session (the
resolver without `get_event`, plus a full `get_session`, as before issue
25). Export is a marked stub until the export resolver lands. Prints one
JSON object. Design and numbers: docs/decisions/issue25-bench.md.

Example:

  python benchmarks/host_service.py --opens 50 --events 10,1000,10000
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import itertools
import json
import logging
from pathlib import Path
import statistics
import sys
import tempfile
import time
from typing import Any
from typing import Optional

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


async def _raw(log: Path, opens: int, warmup: int) -> dict[str, float]:
  from mcp import ClientSession
  from mcp.client.stdio import stdio_client

  async with stdio_client(_server(log)) as (read, write):
    async with ClientSession(read, write) as session:
      await session.initialize()
      assert (await session.read_resource(URI)).contents
      return {
          'read_us': await _median_us(
              lambda: session.read_resource(URI), opens, warmup
          )
      }


class _WholeSession:
  """A Session service seen without `get_event`: the resolver falls back to
  loading the whole Session, as it did before issue 25."""

  def __init__(self, service: Any) -> None:
    self._service = service

  def __getattr__(self, name: str) -> Any:
    if name == 'get_event':
      raise AttributeError(name)
    return getattr(self._service, name)


def _service_class() -> Any:
  """`McpAppHostService` when this tree has it (issue 25), else None."""
  try:
    service = importlib.import_module('google.adk.mcp_apps.host.service')
  except ImportError:
    return None
  return getattr(service, 'McpAppHostService', None)


class _Host:
  """A bound registry, a Runner over one Session service, one widget.

  With `McpAppHostService` present, the widget's turn runs and its Views
  open through the service (`run_turn`, `open_view`, `close_view`);
  otherwise through its parts (a Runner turn, `bootstrap_render`,
  `ViewChannel.open`).
  """

  def __init__(
      self,
      log: Path,
      sessions: Any,
      export_sizes: tuple[int, ...] = (),
      baseline: bool = False,
  ) -> None:
    # pylint: disable=g-import-not-at-top
    from google.adk.agents.llm_agent import LlmAgent
    from google.adk.mcp_apps import local_dev_profile
    from google.adk.mcp_apps import McpAppBindingRegistry
    from google.adk.mcp_apps import McpToolsetSpec
    from google.adk.mcp_apps.contracts.local_dev import LocalDevSessionAuthorizer
    from google.adk.runners import Runner
    from google.adk.tools.mcp_tool import StdioConnectionParams
    from scripted_llm import ScriptedLlm

    # Views for every Session; exports too (the export resolver's purpose).
    self.profile = local_dev_profile(
        session_authorizer=LocalDevSessionAuthorizer(allow_export=True)
    )
    self.export_sizes = export_sizes
    # A second widget in a Session that never grows, timed in turns with
    # the growing one: a drift of the machine shows in both.
    self.baseline = baseline
    # Per widget name: its export Event and, per text size, the call.
    self.exports: dict[str, tuple[str, dict[int, str]]] = {}
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
    self.sessions = sessions
    self.llm = ScriptedLlm(steps=[[(TOOL, {'key': 'render'})]])
    self.runner = Runner(
        app_name=APP,
        agent=LlmAgent(
            name='bench_agent',
            model=self.llm,
            tools=[self.registry.toolset(TOOLSET)],
        ),
        session_service=sessions,
    )
    self.principal: Any = None
    self.request: Any = None
    self.session_id = ''
    self.event_id = ''
    self.call_id = ''
    self.widgets: dict[str, tuple[str, str, str]] = {}
    self._last: Any = None
    self._opened: Any = None
    service = _service_class()
    # Every View the benchmark opens stays open (a widget whose last View
    # closed is cold), so the lease limits are raised for it.
    self.service: Any = None
    if service is not None:
      # pylint: disable-next=g-import-not-at-top
      from google.adk.mcp_apps import ViewLeases

      self.service = service(
          self.registry,
          self.runner,
          leases=ViewLeases(max_per_principal=100_000),
      )

  async def start(self) -> None:
    # pylint: disable=g-import-not-at-top
    from google.adk.mcp_apps import PrincipalRequest

    await self.registry.start()
    resolver = self.profile.principal_resolver
    assert resolver is not None  # local_dev_profile() supplies one.
    self.request = PrincipalRequest(client_host='127.0.0.1')
    self.principal = await resolver.resolve(self.request)
    for name in ('grown', 'baseline') if self.baseline else ('grown',):
      self.llm.steps = [[(TOOL, {'key': 'render'})]]
      await self._render(name)
      if self.export_sizes:
        # A second turn: one sealed result of each size, for export.
        self.llm.steps = [
            [(names.SIZED_RESULT, {'text_bytes': n}) for n in self.export_sizes]
        ]
        event = await self._turn()
        calls: dict[int, str] = {}
        for widget in event.actions.render_ui_widgets or ():
          resolved = await self.gated_resolve(event.id, widget.id)
          calls[len(resolved.full_result()['content'][0]['text'])] = widget.id
        self.exports[name] = (event.id, calls)
    self.use('grown')

  async def _render(self, name: str) -> None:
    """A new Session and its widget's turn; the widget is `name`."""
    session = await self.sessions.create_session(app_name=APP, user_id=USER)
    self.session_id = str(session.id)
    event = await self._turn()
    (widget,) = list(event.actions.render_ui_widgets or ())
    self.event_id, self.call_id = event.id, widget.id
    self.widgets[name] = (self.session_id, self.event_id, self.call_id)

  def use(self, name: str) -> None:
    """Opens, grows and exports on widget `name` from now on."""
    self.session_id, self.event_id, self.call_id = self.widgets[name]

  async def _turn(self) -> Any:
    """One user turn; the stored Event of its widgets."""
    # pylint: disable=g-import-not-at-top
    from google.adk.mcp_apps import SessionKey
    from google.genai import types

    message = types.Content(role='user', parts=[types.Part(text='go')])
    if self.service is not None:
      events = await self.service.run_turn(
          self.request,
          session=SessionKey(APP, USER, self.session_id),
          new_message=message,
      )
    else:
      events = [
          e
          async for e in self.runner.run_async(
              user_id=USER, session_id=self.session_id, new_message=message
          )
      ]
    (made,) = [e for e in events if e.actions.render_ui_widgets]
    stored = await self.sessions.get_session(
        app_name=APP, user_id=USER, session_id=self.session_id
    )
    (found,) = [e for e in stored.events if e.id == made.id]
    return found

  async def gated_resolve(self, event_id: str, call_id: str) -> Any:
    """The gated resolver's release of a call of the current Session (a
    View's ask)."""
    # pylint: disable=g-import-not-at-top
    from google.adk.mcp_apps import SessionKey
    from google.adk.mcp_apps.sealing.resolver import GatedResultResolver
    from google.adk.mcp_apps.sealing.resolver import ViewBinding

    return await GatedResultResolver(self.profile, self.sessions).resolve(
        SessionKey(APP, USER, self.session_id),
        event_id=event_id,
        function_call_id=call_id,
        view=ViewBinding(
            TOOLSET, self.registry.server_id(TOOLSET), event_id, call_id
        ),
    )

  async def close(self) -> None:
    await self.settle()
    if self._last is not None:
      self._last.revoke()
    await self.runner.close()
    await self.registry.aclose()

  async def grow(self, events: int) -> int:
    """Appends plain Events until the Session holds `events`; its size."""
    # pylint: disable=g-import-not-at-top
    from google.adk.events.event import Event
    from google.genai import types

    session = await self.sessions.get_session(
        app_name=APP, user_id=USER, session_id=self.session_id
    )
    for n in range(len(session.events), events):
      await self.sessions.append_event(
          session,
          Event(
              author='user',
              invocation_id=f'fill-{n}',
              content=types.Content(
                  role='user', parts=[types.Part(text=f'message {n} ' * 8)]
              ),
          ),
      )
    return len(session.events)

  async def settle(self) -> None:
    """Untimed: forgets the View the service opened last; it stays open,
    so the widget's generation stays held for the next open."""
    self._opened = None

  async def open_service_view(self) -> Any:
    """`McpAppHostService.open_view`: authorize, bootstrap, lease, channel."""
    # pylint: disable-next=g-import-not-at-top
    from google.adk.mcp_apps import SessionKey

    self._opened = await self.service.open_view(
        self.request,
        session=SessionKey(APP, USER, self.session_id),
        toolset_id=TOOLSET,
        event_id=self.event_id,
        function_call_id=self.call_id,
    )
    assert self._opened.lease and self._opened.view_data['html']
    return self._opened

  def rearm(self) -> None:
    """Untimed: the widget's render reservation, again, for the next open.

    The reservation is one-shot (issue 25 makes a second View possible);
    the benchmark puts a new hold on the same generation, as the widget's
    call did, and revokes the previous View's grant.
    """
    # pylint: disable=g-import-not-at-top
    from google.adk.mcp_apps import SessionKey
    from google.adk.mcp_apps.affinity.generations import HoldKind
    from google.adk.mcp_apps.bootstrap.render import view_hold

    if self._last is None:
      return
    generation = view_hold(self._last).generation
    self.registry.render_reservations.put(
        TOOLSET,
        self._last.session,
        self._last.binding.function_call_id,
        generation.hold(HoldKind.RESERVATION),
    )
    self._last.revoke()
    self._last = None

  async def open_view(self, whole_session: bool = False) -> Any:
    """Authorize + `bootstrap_render` + `ViewChannel.open` (the lease).

    `whole_session`: the reads as before issue 25 (the resolver loads the
    whole Session to find the Event; the channel loads it again).
    """
    # pylint: disable=g-import-not-at-top
    from google.adk.mcp_apps import bootstrap_render
    from google.adk.mcp_apps import SessionKey
    from google.adk.mcp_apps import ViewChannel

    key = SessionKey(APP, USER, self.session_id)
    document = await bootstrap_render(
        registry=self.registry,
        profile=self.profile,
        session_service=(
            _WholeSession(self.sessions) if whole_session else self.sessions
        ),
        principal=self.principal,
        session=key,
        toolset_id=TOOLSET,
        event_id=self.event_id,
        function_call_id=self.call_id,
    )
    self._last = document.grant
    if whole_session:
      await self.sessions.get_session(
          app_name=APP, user_id=USER, session_id=self.session_id
      )
    channel = await ViewChannel.open(
        document,
        principal=self.principal,
        registry=self.registry,
        runner=self.runner,
    )
    assert channel.token and document.html
    return channel


def _targets(host: _Host) -> list[tuple[Any, str, str]]:
  """What the "where the time goes" pass wraps (this process only)."""
  # pylint: disable=g-import-not-at-top
  from google.adk.mcp_apps.affinity.generations import GenerationHold
  from google.adk.mcp_apps.bootstrap import render
  from google.adk.mcp_apps.operations.view_channel import ViewChannel
  from google.adk.mcp_apps.sealing import resolver

  profile = host.profile
  return [
      (type(profile.session_authorizer), 'authorize', 'authorize'),
      (resolver.GatedResultResolver, 'resolve', 'resolve'),
      (
          type(profile.session_lifecycle_store),
          'read',
          'lifecycle_store.read',
      ),
      (resolver.GatedResultResolver, 'load_event', 'load_event'),
      (resolver, 'verify_binding_revision', 'verify_binding_revision'),
      (type(profile.sealed_result_store), 'resolve', 'sealed_store.resolve'),
      (render, 'read_app_resource', 'read_app_resource'),
      (GenerationHold, 'read_resource', 'hold.read_resource'),
      (render, 'select_app_content', 'select_app_content'),
      (ViewChannel, 'open', 'ViewChannel.open'),
      (type(host.sessions), 'get_session', 'get_session'),
  ]


async def _prime(host: _Host, mode: str) -> None:
  """Untimed: before each service View, a fresh reservation for the
  widget, so every timed open is a first View (as the parts' opens are)."""
  if mode == 'service':
    await host.open_view()
    host.rearm()


async def _open_once(host: _Host, mode: str) -> Any:
  if mode == 'service':
    return await host.open_service_view()
  return await host.open_view(whole_session=mode == 'whole')


async def _time_open(
    host: _Host, opens: int, warmup: int, mode: str = 'parts'
) -> float:
  """The median open, in microseconds; `mode` is `parts` (bootstrap_render
  + ViewChannel.open), `service` (`McpAppHostService.open_view`) or
  `whole` (the parts, reading the whole Session as before issue 25)."""
  samples: list[float] = []
  for n in range(warmup + opens):
    await host.settle()
    host.rearm()
    await _prime(host, mode)
    start = time.perf_counter_ns()
    await _open_once(host, mode)
    if n >= warmup:
      samples.append((time.perf_counter_ns() - start) / 1000)
  samples.sort()
  return samples[len(samples) // 2]


async def _time_pair(
    host: _Host, opens: int, warmup: int, mode: str = 'parts'
) -> tuple[float, float]:
  """`_time_open` of the grown and the baseline widget, in turns."""
  samples: dict[str, list[float]] = {'grown': [], 'baseline': []}
  for n in range(warmup + opens):
    for name, found in samples.items():
      host.use(name)
      await host.settle()
      host.rearm()
      await _prime(host, mode)
      start = time.perf_counter_ns()
      await _open_once(host, mode)
      if n >= warmup:
        found.append((time.perf_counter_ns() - start) / 1000)
  host.use('grown')
  return statistics.median(samples['grown']), statistics.median(
      samples['baseline']
  )


async def _parts(host: _Host, n: int) -> dict[str, float]:
  with _wrapped(_Parts(), _targets(host)) as parts:
    for _ in range(n):
      await host.settle()
      host.rearm()
      start = time.perf_counter_ns()
      await host.open_view()
      parts.end_turn((time.perf_counter_ns() - start) / 1000)
  medians: dict[str, float] = parts.medians()
  return medians


async def _host(
    log: Path, sessions: Any, args: argparse.Namespace, grow: bool
) -> dict[str, Any]:
  sizes = tuple(int(n) for n in args.export_bytes.split(',')) if grow else ()
  host = _Host(log, sessions, export_sizes=sizes, baseline=grow)
  await host.start()
  service = host.service is not None
  try:
    found: dict[str, Any] = {
        'open_us': await _time_open(host, args.opens, args.warmup),
        'parts_us': await _parts(host, max(1, args.opens // 2)),
    }
    if service:
      found['service_open_us'] = await _time_open(
          host, args.opens, args.warmup, 'service'
      )
    if grow:
      found['growth'] = {}
      for events in (int(n) for n in args.events.split(',')):
        size = await host.grow(events)
        at_size: dict[str, Any] = {
            'whole_session_open_us': await _time_open(
                host, args.whole_opens, 1, 'whole'
            ),
        }
        modes = [('open_us', 'parts')]
        if service:
          modes.append(('service_open_us', 'service'))
        for key, mode in modes:
          at_size[key], at_size[f'baseline_{key}'] = await _time_pair(
              host, args.grown_opens, 1, mode
          )
        at_size['export'] = await _exports(host, args.exports, 1)
        found['growth'][str(size)] = at_size
    return found
  finally:
    await host.close()


def _export_module() -> Any:
  """`host.export` (the export resolver) when this tree has it (issue 25),
  else None."""
  try:
    export = importlib.import_module('google.adk.mcp_apps.host.export')
  except ImportError:
    return None
  return export


async def _exports(
    host: _Host, n: int, warmup: int
) -> Optional[dict[str, Any]]:
  """Each sealed result's export vs a raw `SealedResultStore.resolve` of
  its record, median microseconds; the small Session's export of the same
  size in turns with the grown one's. None without the export resolver."""
  export_module = _export_module()
  if export_module is None or not host.exports:
    return None
  # pylint: disable=g-import-not-at-top
  from google.adk.mcp_apps import SessionKey
  from google.adk.mcp_apps.contracts.sealed_result_store import SealedResultRef

  # No byte or rate limit gets in the way of timing.
  unlimited = export_module.ExportLimits(
      max_bytes=1 << 30, max_per_principal=1 << 30, max_per_session=1 << 30
  )
  resolver = export_module.ExportResolver(
      profile=host.profile, session_service=host.sessions, limits=unlimited
  )
  store = host.profile.sealed_result_store
  assert store is not None  # local_dev_profile() supplies one.
  ops = itertools.count()

  async def export(name: str, size: int) -> None:
    session_id = host.widgets[name][0]
    event_id, calls = host.exports[name]
    result = await resolver.export(
        principal=host.principal,
        session=SessionKey(APP, USER, session_id),
        event_id=event_id,
        function_call_id=calls[size],
        operation_instance_id=f'bench-export-{next(ops)}',
    )
    assert len(result.body) > size

  found: dict[str, Any] = {}
  try:
    event_id, calls = host.exports['grown']
    for size, call_id in sorted(calls.items()):
      resolved = await host.gated_resolve(event_id, call_id)
      ref = SealedResultRef(
          resolved.reference.record_id, resolved.reference.schema_version
      )

      async def raw(scope: Any = resolved.scope, ref: Any = ref) -> None:
        envelope = await store.resolve(scope, ref)
        assert envelope.sealed_result

      samples: dict[str, list[float]] = {name: [] for name in host.exports}
      for k in range(warmup + n):
        for name, found_us in samples.items():
          start = time.perf_counter_ns()
          await export(name, size)
          if k >= warmup:
            found_us.append((time.perf_counter_ns() - start) / 1000)
      found[str(size)] = {
          'raw_us': await _median_us(raw, n, warmup),
          'export_us': statistics.median(samples['grown']),
      }
      if 'baseline' in samples:
        found[str(size)]['baseline_export_us'] = statistics.median(
            samples['baseline']
        )
  finally:
    resolver.close()
  return found


async def _run(args: argparse.Namespace) -> dict[str, Any]:
  # pylint: disable=g-import-not-at-top
  from google.adk.sessions.in_memory_session_service import InMemorySessionService
  from google.adk.sessions.sqlite_session_service import SqliteSessionService

  with tempfile.TemporaryDirectory() as tmp:
    raw = await _raw(Path(tmp) / 'raw.jsonl', args.opens, args.warmup)
    memory = await _host(
        Path(tmp) / 'memory.jsonl', InMemorySessionService(), args, False
    )
    sqlite = await _host(
        Path(tmp) / 'sqlite.jsonl',
        SqliteSessionService(str(Path(tmp) / 'sessions.db')),
        args,
        True,
    )
  return {'raw': raw, 'memory': memory, 'sqlite': sqlite}


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument('--opens', type=int, default=100)
  parser.add_argument('--warmup', type=int, default=10)
  parser.add_argument(
      '--grown-opens',
      type=int,
      default=15,
      help='opens timed at each Session size (each way)',
  )
  parser.add_argument(
      '--whole-opens',
      type=int,
      default=5,
      help='opens timed at each size reading the whole Session, as before',
  )
  parser.add_argument(
      '--events',
      default='10,1000,10000',
      help='comma-separated, ascending: the Session sizes timed',
  )
  parser.add_argument(
      '--export-bytes',
      default='1024,1048576',
      help='comma-separated: the text sizes of the exported sealed results',
  )
  parser.add_argument(
      '--exports',
      type=int,
      default=30,
      help='exports timed per result and Session size (each way)',
  )
  parser.add_argument(
      '--smoke', action='store_true', help='a few opens, small Sessions'
  )
  args = parser.parse_args()
  if args.smoke:
    args.opens, args.warmup, args.grown_opens, args.whole_opens = 3, 1, 2, 2
    args.exports = 2
    args.events = '10,40'
  logging.disable(logging.WARNING)
  print(json.dumps(asyncio.run(_run(args))))


if __name__ == '__main__':
  main()
