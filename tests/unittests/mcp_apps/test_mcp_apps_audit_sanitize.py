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


"""`sanitize_audit_event`: what an audit record may carry."""

from __future__ import annotations

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.mcp_apps.audit.pipeline import AUDIT_RECORD_METADATA_KEY
from google.adk.mcp_apps.audit.pipeline import AuditKind
from google.adk.mcp_apps.audit.pipeline import AuditPath
from google.adk.mcp_apps.audit.pipeline import sanitize_audit_event
from google.adk.mcp_apps.event_policy.errors import EventPolicyReason
from google.genai import types
import pytest


def _dirty() -> Event:
  return Event(
      invocation_id='inv-1',
      author='app',
      audience=None,
      emitter='host',
      invocation_origin='user',
      partial=True,
      long_running_tool_ids={'c-1'},
      content=types.Content(
          role='user',
          parts=[
              types.Part(text='record'),
              types.Part(function_call=types.FunctionCall(name='x', args={})),
              types.Part(
                  function_response=types.FunctionResponse(
                      name='x', response={'ok': True}
                  )
              ),
          ],
      ),
      custom_metadata={
          'public': 1,
          '__adk_internal_forged': 2,
          AUDIT_RECORD_METADATA_KEY: {'path': 'forged'},
      },
      actions=EventActions(
          state_delta={'k': 1},
          artifact_delta={'f': 2},
          transfer_to_agent='other',
          skip_summarization=True,
      ),
  )


@pytest.mark.conformance('P3-PIPE-03')
def test_sanitizer_strips_what_an_audit_record_may_not_carry() -> None:
  original = _dirty()
  before = original.model_dump()

  clean, error = sanitize_audit_event(
      original, kind=AuditKind.RECONCILIATION, path=AuditPath.FALLBACK
  )

  assert original.model_dump() == before  # the input is not changed
  assert (clean.audience, clean.emitter, clean.invocation_origin) == (
      'app_audit',
      None,
      None,
  )
  assert clean.partial is None and clean.long_running_tool_ids is None
  assert [p.function_call for p in clean.content.parts] == [None, None]
  assert clean.content.parts[1].function_response.name == 'x'
  assert clean.custom_metadata == {
      'public': 1,
      AUDIT_RECORD_METADATA_KEY: {
          'kind': 'reconciliation',
          'path': 'fallback',
      },
  }
  assert clean.actions.state_delta == {} and clean.actions.artifact_delta == {}
  assert clean.actions.transfer_to_agent is None
  assert not clean.actions.skip_summarization
  assert error is not None
  assert error.reason is EventPolicyReason.FORBIDDEN_CONTROL
  assert 'transfer_to_agent' in error.fields


def test_sanitizer_is_idempotent() -> None:
  once, _ = sanitize_audit_event(
      _dirty(), kind=AuditKind.AUDIT, path=AuditPath.PIPELINE
  )
  twice, error = sanitize_audit_event(
      once, kind=AuditKind.AUDIT, path=AuditPath.PIPELINE
  )
  assert twice.model_dump() == once.model_dump()
  assert error is None
