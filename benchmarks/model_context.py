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

"""Building an LLM request from a long session, with and without audit Events.

A session of `--events` Events (default 1,000): conversation turns (user
text, a function call, its response, model text), and in the `audited`
session 30% of the Events are View audit records (text, a call and its
result) interleaved with the same conversation. The contents request
processor builds the request for the session's agent `--builds` times;
after one untimed warm-up build, the median per build is reported, in
microseconds.

Runs on whichever ADK `PYTHONPATH` names. On pristine google-adk 2.13.0
the audit records are ordinary Events (it has no `audience` field and
ignores it), so they reach its request; on the patched tree they are
`app_audit` Events and do not.

Prints one JSON object on its last line.

  python benchmarks/model_context.py [--events 1000] [--builds 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import time
from typing import Any

# pylint: disable=g-import-not-at-top
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.run_config import RunConfig
from google.adk.events.event import Event
from google.adk.flows.llm_flows.contents import request_processor
from google.adk.models.llm_request import LlmRequest
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.session import Session
from google.genai import types

AGENT = 'assistant'
AUDIT_SHARE = 0.3


def _conversation_event(index: int) -> Event:
  """Event `index` of the conversation: a turn is four Events."""
  turn, step = divmod(index, 4)
  call_id = f'call-{turn}'
  if step == 0:
    author, part = 'user', types.Part(text=f'question {turn} about the plan')
  elif step == 1:
    author = AGENT
    part = types.Part(
        function_call=types.FunctionCall(
            id=call_id, name='lookup', args={'key': f'k{turn}'}
        )
    )
  elif step == 2:
    author = AGENT
    part = types.Part(
        function_response=types.FunctionResponse(
            id=call_id, name='lookup', response={'value': f'v{turn}' * 8}
        )
    )
  else:
    author, part = AGENT, types.Part(text=f'answer {turn}: ' + 'words ' * 20)
  role = 'user' if author == 'user' or step == 2 else 'model'
  return Event(
      author=author,
      invocation_id=f'inv-{turn}',
      timestamp=float(index),
      content=types.Content(role=role, parts=[part]),
  )


def _audit_event(index: int) -> Event:
  """A View's audit record: a direct call and its result."""
  call_id = f'app-call-{index}'
  return Event.model_validate({
      'author': AGENT,
      'invocation_id': f'app-op-{index}',
      'timestamp': float(index),
      'audience': 'app_audit',
      'content': types.Content(
          role='user',
          parts=[
              types.Part(text=f'view refreshed {index}'),
              types.Part(
                  function_call=types.FunctionCall(
                      id=call_id, name='app_refresh', args={'page': index}
                  )
              ),
              types.Part(
                  function_response=types.FunctionResponse(
                      id=call_id,
                      name='app_refresh',
                      response={'content': [{'type': 'text', 'text': 'ok'}]},
                  )
              ),
          ],
      ),
  })


def _sessions(total: int) -> dict[str, list[Event]]:
  """`audited`: `total` Events, 30% audit; `plain`: its conversation only."""
  audits = round(total * AUDIT_SHARE)
  every = total / audits if audits else total + 1
  audit_slots = {int(k * every) for k in range(audits)}
  audited, plain = [], []
  for index in range(total):
    if index in audit_slots:
      audited.append(_audit_event(index))
    else:
      event = _conversation_event(len(plain))
      event.timestamp = float(index)
      audited.append(event)
      plain.append(event)
  return {'audited': audited, 'plain': plain}


async def _build_us(events: list[Event], builds: int) -> dict[str, Any]:
  agent = LlmAgent(name=AGENT, model='gemini-2.5-flash')
  service = InMemorySessionService()
  session = Session(
      id='bench', app_name='bench', user_id='u', events=list(events)
  )
  context = InvocationContext(
      session_service=service,
      invocation_id='inv-bench',
      agent=agent,
      session=session,
      run_config=RunConfig(),
  )
  samples, contents = [], 0
  async for _ in request_processor.run_async(context, LlmRequest()):
    pass  # Warm-up: the first build imports what the processor needs.
  for _ in range(builds):
    request = LlmRequest()
    started = time.perf_counter()
    async for _ in request_processor.run_async(context, request):
      pass
    samples.append((time.perf_counter() - started) * 1e6)
    contents = len(request.contents)
  return {'us': statistics.median(samples), 'contents': contents}


async def main(events: int, builds: int) -> None:
  # Pristine warns about every unpaired call it drops from the request.
  logging.disable(logging.WARNING)
  sessions = _sessions(events)
  result = {
      name: await _build_us(history, builds)
      for name, history in sessions.items()
  }
  result['events'] = {name: len(h) for name, h in sessions.items()}
  print(json.dumps(result))


if __name__ == '__main__':
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument('--events', type=int, default=1000)
  parser.add_argument('--builds', type=int, default=30)
  args = parser.parse_args()
  asyncio.run(main(args.events, args.builds))
