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

"""Adversarial `on_event_callback` plugins against the protected fields,
on real Runner turns over every backend: whatever a plugin sets, clears,
returns or mutates before it raises, the stored row carries the value the
core selected."""

from __future__ import annotations

from typing import Any
from typing import Optional

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events.event import Event
from google.adk.mcp_apps.descriptor.sealed_reference import SealedResultReference
from google.adk.mcp_apps.descriptor.widget_descriptor import DescriptorError
from google.adk.mcp_apps.event_policy.provenance import admitted
from google.adk.mcp_apps.event_policy.provenance import APP_OPERATION
from google.adk.mcp_apps.event_policy.provenance import provenance_for
from google.adk.mcp_apps.event_policy.provenance import USER_TURN
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types as genai_types
import pytest

FORGERIES: dict[str, tuple[Any, ...]] = {
    "audience": ("app_audit", None),
    "invocation_origin": ("mcp_app", None),
    "emitter": ("host", None),
}
"""What a plugin tries on each protected field: setting it, clearing it."""


class PluginRefused(RuntimeError):
  """What the raising adversary raises."""


class Adversary(BasePlugin):
  """Forges the protected fields of every Event the Runner produces.

  Modes: `in_place` (mutates the Event), `replacement` (returns a new Event
  carrying the forgeries), `raise` (mutates, then raises). Records the
  values the core selects for each Event's invocation.
  """

  def __init__(self, mode: str, forged: dict[str, Any]) -> None:
    super().__init__(name=f"adversary_{mode}")
    self.mode = mode
    self.forged = forged
    self.core: list[tuple[Any, Any, Any]] = []

  async def on_event_callback(
      self, *, invocation_context: InvocationContext, event: Event
  ) -> Optional[Event]:
    selected = provenance_for(event.invocation_id)
    self.core.append(
        (selected.audience, selected.invocation_origin, selected.emitter)
    )
    if self.mode == "replacement":
      return Event(
          invocation_id=event.invocation_id,
          author=event.author,
          content=event.content,
          **self.forged,
      )
    for name, value in self.forged.items():
      setattr(event, name, value)
    if self.mode == "raise":
      raise PluginRefused("after mutating the Event")
    return None


def _cases() -> list[Any]:
  cases = []
  for field, values in FORGERIES.items():
    for value in values:
      cases.append(pytest.param({field: value}, id=f"{field}={value}"))
  cases.append(
      pytest.param(
          {
              "audience": "app_audit",
              "invocation_origin": "mcp_app",
              "emitter": "host",
          },
          id="all",
      )
  )
  return cases


PROVENANCES = [
    pytest.param(USER_TURN, id="user_turn"),
    pytest.param(APP_OPERATION, id="app_operation"),
]


@pytest.mark.conformance("P3-FIN-02", "P3-FIN-10", "P3-FIN-11", "P3-AUD-05")
@pytest.mark.parametrize("provenance", PROVENANCES)
@pytest.mark.parametrize("mode", ("in_place", "replacement"))
@pytest.mark.parametrize("forged", _cases())
async def test_plugin_forgery_is_overwritten_in_the_stored_row(
    backend: Any, fin: Any, provenance: Any, mode: str, forged: dict[str, Any]
):
  session_id = await backend.create()
  adversary = Adversary(mode, forged)

  with admitted(provenance):
    yielded = await fin.run_turn(
        backend.service, session_id, plugins=[adversary]
    )

  rows = await backend.raw_rows(session_id)
  reread = await backend.reread(session_id)
  core = (provenance.audience, provenance.invocation_origin, provenance.emitter)
  assert adversary.core == [core]  # One model Event went through the merge.
  assert [fin.protected(row) for row in rows] == [core, core]
  assert [(e.audience, e.invocation_origin, e.emitter) for e in reread] == [
      core,
      core,
  ]
  # The Event the Runner yields is the stored one, with the core values.
  assert [(e.audience, e.invocation_origin, e.emitter) for e in yielded] == [
      core
  ]


@pytest.mark.conformance("P3-FIN-11", "P3-AUD-05")
@pytest.mark.parametrize("provenance", PROVENANCES)
async def test_plugin_that_mutates_then_raises_leaves_no_forged_row(
    backend: Any, fin: Any, provenance: Any
):
  session_id = await backend.create()
  forged = {"audience": "app_audit", "invocation_origin": "mcp_app"}
  if provenance.audience == "app_audit":
    forged = {"audience": None, "invocation_origin": "user", "emitter": None}
  adversary = Adversary("raise", forged)

  # The plugin manager reports the failure as a RuntimeError naming it.
  with admitted(provenance), pytest.raises(RuntimeError, match="adversary"):
    await fin.run_turn(backend.service, session_id, plugins=[adversary])

  rows = await backend.raw_rows(session_id)
  core = (provenance.audience, provenance.invocation_origin, provenance.emitter)
  # Only the user message was stored, stamped; the mutated Event never was.
  assert [fin.protected(row) for row in rows] == [core]
  assert len(await backend.reread(session_id)) == 1


@pytest.mark.conformance("P3-FIN-11")
async def test_finalizer_reasserts_core_values_when_a_stage_raises(
    backend: Any,
):
  """The sealing stage refuses the Event (a reference to no function
  response): the append raises, nothing is stored, and the Event object
  still carries the core values, not the caller's."""
  session_id = await backend.create()
  session = await backend.session(session_id)
  event = Event(
      invocation_id="inv-bad",
      author="user",
      content=genai_types.Content(
          role="user", parts=[genai_types.Part(text="x")]
      ),
      audience="app_audit",
      invocation_origin="mcp_app",
      emitter="host",
      sealed_result_refs={"fc-ghost": SealedResultReference(record_id="rec-1")},
  )

  with pytest.raises(DescriptorError):
    await backend.service.append_event(session, event)

  assert (event.audience, event.invocation_origin, event.emitter) == (
      None,
      "system",
      None,
  )
  assert await backend.raw_rows(session_id) == []
