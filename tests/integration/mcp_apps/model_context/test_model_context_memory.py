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

"""Memory ingestion: audit Events never become memories.

A memory feeds the model later (`load_memory`, `preload_memory`), so the
shipped memory services ingest conversation only: a session with audit
Events is added whole, through each ingestion entry point, and a search
for the audit sentinel finds nothing while the conversation is found.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
import pathlib

from differential_scenarios import RecordingLlm
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.memory import InMemoryMemoryService
from google.adk.memory import SqliteMemoryService
from google.adk.memory.base_memory_service import BaseMemoryService
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.session import Session
from model_context_support import app_call_audit_event
from model_context_support import audit_event
from model_context_support import audit_events
from model_context_support import Backend
from model_context_support import Conversation
from model_context_support import SENTINEL
from model_context_support import USER_ID
import pytest

pytestmark = pytest.mark.integration

AGENT = "assistant"
TOPIC = "zebraplan"
"""A word of the conversation: the control that ingestion happened."""


@pytest.fixture(params=["in_memory", "sqlite"])
async def memory_service(
    request: pytest.FixtureRequest, tmp_path: pathlib.Path
) -> AsyncIterator[BaseMemoryService]:
  if request.param == "in_memory":
    yield InMemoryMemoryService()
    return
  service = SqliteMemoryService(db_path=tmp_path / "memory.db")
  try:
    yield service
  finally:
    await service.close()


async def _session_with_audit_events(
    memory_service: BaseMemoryService | None = None,
) -> Session:
  """Two turns around three audit Events; the agent saves itself to memory."""

  async def remember(callback_context: CallbackContext) -> None:
    if memory_service is not None:
      await callback_context.add_session_to_memory()

  agent = LlmAgent(
      name=AGENT, model=RecordingLlm(), after_agent_callback=remember
  )
  backend = Backend("memory", InMemorySessionService())
  async with Conversation(
      backend, agent, memory_service=memory_service
  ) as chat:
    await chat.turn(f"remember the {TOPIC} please")
    await chat.audit(
        audit_event(AGENT), audit_event("user"), app_call_audit_event(AGENT)
    )
    await chat.turn("thanks")
    session = await chat.session()
  assert len(audit_events(session)) == 3
  return session


async def _search(service: BaseMemoryService, query: str) -> list[str]:
  response = await service.search_memory(
      app_name="model_context", user_id=USER_ID, query=query
  )
  return [m.model_dump_json() for m in response.memories]


async def _assert_conversation_only(service: BaseMemoryService) -> None:
  assert await _search(service, TOPIC), "the conversation was not ingested"
  assert await _search(service, SENTINEL) == []
  # The audit Events' other words ("view refreshed") are no memory either.
  assert await _search(service, "view refreshed") == []


@pytest.mark.conformance("P3-PRED-05")
async def test_add_session_to_memory_ingests_no_audit_event(
    memory_service: BaseMemoryService,
) -> None:
  """P3-PRED-05: `add_session_to_memory` of a whole session."""
  session = await _session_with_audit_events()
  await memory_service.add_session_to_memory(session)
  await _assert_conversation_only(memory_service)


@pytest.mark.conformance("P3-PRED-05")
async def test_add_events_to_memory_ingests_no_audit_event(
    memory_service: BaseMemoryService,
) -> None:
  """P3-PRED-05: `add_events_to_memory` given every Event of the session."""
  session = await _session_with_audit_events()
  await memory_service.add_events_to_memory(
      app_name=session.app_name,
      user_id=session.user_id,
      session_id=session.id,
      events=session.events,
  )
  await _assert_conversation_only(memory_service)


@pytest.mark.conformance("P3-PRED-05")
async def test_agent_saving_its_session_to_memory_ingests_no_audit_event(
    memory_service: BaseMemoryService,
) -> None:
  """P3-PRED-05: an agent's callback saving its session after each turn."""
  await _session_with_audit_events(memory_service)
  await _assert_conversation_only(memory_service)
