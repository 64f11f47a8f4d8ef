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

"""A smuggled value for every `EventActions` field, and Event builders.

Each value that can hold text holds `SENTINEL`, so a test can search stored
bytes for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi.openapi.models import APIKey
from fastapi.openapi.models import APIKeyIn
from google.adk.auth.auth_tool import AuthConfig
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.events.event_actions import EventCompaction
from google.adk.events.ui_widget import UiWidget
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.genai import types

SENTINEL = "audit-sentinel-5d1e"

SMUGGLED: dict[str, Callable[[], Any]] = {
    "skip_summarization": lambda: True,
    "state_delta": lambda: {"audit_counter": 1},
    "artifact_delta": lambda: {"report.txt": 0},
    "transfer_to_agent": lambda: SENTINEL + "-agent",
    "transfer_reason": lambda: SENTINEL + "-reason",
    "escalate": lambda: True,
    "requested_auth_configs": lambda: {
        "fc-auth": AuthConfig(
            auth_scheme=APIKey(**{"in": APIKeyIn.header, "name": SENTINEL})
        )
    },
    "requested_tool_confirmations": lambda: {
        "fc-confirm": ToolConfirmation(hint=SENTINEL + "-confirm")
    },
    "compaction": lambda: EventCompaction(
        start_timestamp=1.0,
        end_timestamp=2.0,
        compacted_content=types.Content(
            role="model", parts=[types.Part(text=SENTINEL + "-summary")]
        ),
    ),
    "end_of_agent": lambda: True,
    "agent_state": lambda: {"checkpoint": SENTINEL + "-state"},
    "rewind_before_invocation_id": lambda: SENTINEL + "-invocation",
    "route": lambda: SENTINEL + "-route",
    "render_ui_widgets": lambda: [
        UiWidget(
            id="widget-1",
            provider="mcp",
            payload={"resource_uri": "ui://audit/" + SENTINEL + "-widget"},
        )
    ],
    "set_model_response": lambda: {"answer": SENTINEL + "-response"},
}
"""A fresh non-default value per `EventActions` field."""


def carries_text(field: str) -> bool:
  """Whether the smuggled value of `field` contains `SENTINEL`."""
  return (
      SENTINEL in EventActions(**{field: SMUGGLED[field]()}).model_dump_json()
  )


def default_of(field: str) -> Any:
  return EventActions.model_fields[field].get_default(call_default_factory=True)


def audit_event(invocation_id: str = "inv-app-op", **actions: Any) -> Event:
  """An Event an MCP App operation appends, with `actions` set."""
  return Event(
      invocation_id=invocation_id,
      author="app",
      content=types.Content(
          role="user", parts=[types.Part(text="app called a tool")]
      ),
      actions=EventActions(**actions),
  )
