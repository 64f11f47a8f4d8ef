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

"""The golden rewind scenario of P3-RWD-01, runnable on any ADK tree.

Three agent turns, each saving state and artifacts through a tool, with a
View's audit records between them (state deltas in every scope, a session
and a user artifact), then `Runner.rewind_async` to before turn two. It
imports only what pristine google-adk 2.13.0 has: `differential_scenarios`
registers it, and `differential.run_scenarios` runs it on the pristine and
the patched tree. On a tree with provenance admission the audit records are
appended inside `admitted(APP_OPERATION)`, so there they are `app_audit`
Events; pristine stores the same Events without the field.

The result is the session after the rewind: its state, every artifact
version's text, and each stored Event's JSON with run values (ids,
invocation ids, timestamps) replaced and the provenance fields moved out
to `provenance`, the one place the trees may differ.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any
from typing import Iterator

from google.adk.agents.llm_agent import LlmAgent
from google.adk.artifacts.in_memory_artifact_service import InMemoryArtifactService
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.session import Session
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from scripted_llm import ScriptedLlm

APP_NAME = "rewind_golden"
USER_ID = "tester"
PROVENANCE_FIELDS = ("audience", "invocation_origin", "emitter")
"""The fields a patched tree stamps on every Event (declared change #3)."""


@contextlib.contextmanager
def _app_operation() -> Iterator[None]:
  """A View's direct operation: admitted on a tree that has admission."""
  try:
    from google.adk.mcp_apps.event_policy import provenance
  except ImportError:  # Pristine ADK: nothing to admit.
    yield
    return
  with provenance.admitted(provenance.APP_OPERATION):
    yield


async def save_note(tool_context: ToolContext) -> dict[str, Any]:
  """Counts the turn in every state scope and saves two artifacts."""
  turn = int(tool_context.state.get("turns", 0)) + 1
  tool_context.state["turns"] = turn
  tool_context.state[f"note_{turn}"] = f"note {turn}"
  tool_context.state["app:last_turn"] = turn
  tool_context.state["user:last_turn"] = turn
  for filename in ("note.txt", "user:profile.txt"):
    await tool_context.save_artifact(
        filename, types.Part(text=f"{filename} at turn {turn}")
    )
  return {"turn": turn}


async def _append_view_record(
    runner: Runner, session_id: str, number: int
) -> None:
  """A View's audit record: state in every scope, two artifacts, text."""
  artifact_delta = {}
  for filename in ("view.txt", "user:avatar.txt"):
    artifact_delta[filename] = await runner.artifact_service.save_artifact(
        app_name=APP_NAME,
        user_id=USER_ID,
        session_id=session_id,
        filename=filename,
        artifact=types.Part(text=f"{filename} by view {number}"),
    )
  session = await runner.session_service.get_session(
      app_name=APP_NAME, user_id=USER_ID, session_id=session_id
  )
  event = Event(
      author="keeper",
      invocation_id=f"view-operation-{number}",
      content=types.Content(
          role="user", parts=[types.Part(text=f"view record {number}")]
      ),
      actions=EventActions(
          state_delta={
              "view_count": number,
              f"view_{number}": True,
              "app:theme": f"theme {number}",
              "user:seen": number,
          },
          artifact_delta=artifact_delta,
      ),
  )
  with _app_operation():
    await runner.session_service.append_event(session=session, event=event)


async def _artifacts(runner: Runner, session_id: str) -> dict[str, list[Any]]:
  """Every artifact's versions, dumped (None where one cannot be loaded)."""
  service = runner.artifact_service
  scope = {"app_name": APP_NAME, "user_id": USER_ID, "session_id": session_id}
  result = {}
  for filename in await service.list_artifact_keys(**scope):
    versions = await service.list_versions(filename=filename, **scope)
    parts = [
        await service.load_artifact(filename=filename, version=v, **scope)
        for v in versions
    ]
    result[filename] = [
        None if p is None else p.model_dump(mode="json", exclude_none=True)
        for p in parts
    ]
  return result


def _normalized(session: Session) -> tuple[list[str], list[dict[str, Any]]]:
  """Each Event's JSON with run values replaced; provenance apart.

  Event, invocation and function-call ids become placeholders numbered by
  first appearance, and timestamps one placeholder.
  """
  ids: dict[str, str] = {}
  events, provenance = [], []
  for event in session.events:
    data = json.loads(event.model_dump_json(exclude_none=True))
    provenance.append({f: data.pop(f, None) for f in PROVENANCE_FIELDS})
    data["id"] = ids.setdefault(event.id, f"<event-{len(ids)}>")
    data["invocation_id"] = ids.setdefault(
        event.invocation_id, f"<invocation-{len(ids)}>"
    )
    data["timestamp"] = "<timestamp>"
    for part in (data.get("content") or {}).get("parts") or []:
      for key in ("function_call", "function_response"):
        if key in part:  # ADK mints `adk-<uuid>` call ids.
          part[key]["id"] = ids.setdefault(
              part[key]["id"], f"<call-{len(ids)}>"
          )
    rewind = data.get("actions", {}).get("rewind_before_invocation_id")
    if rewind:
      data["actions"]["rewind_before_invocation_id"] = ids[rewind]
    events.append(json.dumps(data, sort_keys=True))
  return events, provenance


async def rewind_with_audit_events(_: dict[str, Any]) -> dict[str, Any]:
  """Three turns around two View records, then a rewind to turn two."""
  model = ScriptedLlm(steps=[[("save_note", {})]])
  runner = Runner(
      agent=LlmAgent(name="keeper", model=model, tools=[save_note]),
      app_name=APP_NAME,
      session_service=InMemorySessionService(),
      artifact_service=InMemoryArtifactService(),
  )
  session = await runner.session_service.create_session(
      app_name=APP_NAME, user_id=USER_ID
  )
  turns = []
  try:
    for number in (1, 2, 3):
      async for event in runner.run_async(
          user_id=USER_ID,
          session_id=session.id,
          new_message=types.Content(
              role="user", parts=[types.Part(text=f"turn {number}")]
          ),
      ):
        turns.append(event.invocation_id)
      if number < 3:
        await _append_view_record(runner, session.id, number)
    await runner.rewind_async(
        user_id=USER_ID,
        session_id=session.id,
        rewind_before_invocation_id=sorted(set(turns), key=turns.index)[1],
    )
  finally:
    await runner.close()
  rewound = await runner.session_service.get_session(
      app_name=APP_NAME, user_id=USER_ID, session_id=session.id
  )
  events, provenance = _normalized(rewound)
  return {
      "state": dict(sorted(rewound.state.items())),
      "artifacts": await _artifacts(runner, session.id),
      "stored_events": events,
      "provenance": provenance,
  }
