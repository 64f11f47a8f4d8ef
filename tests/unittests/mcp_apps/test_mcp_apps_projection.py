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

"""The model projection of UI tool results, and its replay of old events."""

from __future__ import annotations

import json

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.events.ui_widget import UiWidget
from google.adk.mcp_apps import projection
from google.genai import types
import pytest

SENTINEL = 'VIEW-ONLY-SENTINEL-7f3a'

FULL_RESULT = {
    'content': [{'type': 'text', 'text': 'three rows'}],
    'structuredContent': {'rows': [1, 2, 3], 'secret': SENTINEL},
    'meta': {'viewUUID': SENTINEL},
    '_meta': {'viewUUID': SENTINEL},
    'isError': False,
    'resultType': 'complete',
    'futureViewField': SENTINEL,
}


@pytest.mark.conformance('P1-PROJ-01')
def test_structured_content_removed():
  """P1-PROJ-01."""
  assert 'structuredContent' not in projection.project_ui_result(FULL_RESULT)


@pytest.mark.conformance('P1-PROJ-02')
def test_meta_removed_in_both_spellings():
  """P1-PROJ-02: upstream's dump renames `_meta` to `meta`."""
  projected = projection.project_ui_result(FULL_RESULT)
  assert '_meta' not in projected and 'meta' not in projected


@pytest.mark.conformance('P1-PROJ-03')
def test_kept_fields_are_byte_identical():
  """P1-PROJ-03."""
  projected = projection.project_ui_result(FULL_RESULT)
  for key in ('content', 'isError', 'resultType'):
    assert json.dumps(projected[key]) == json.dumps(FULL_RESULT[key])


@pytest.mark.conformance('P1-PROJ-04')
def test_exact_key_set():
  """P1-PROJ-04: the allow-list, exactly; unknown extras are dropped."""
  assert list(projection.project_ui_result(FULL_RESULT)) == [
      'content',
      'isError',
      'resultType',
  ]
  assert SENTINEL not in json.dumps(projection.project_ui_result(FULL_RESULT))
  legacy = {'content': [], 'is_error': True, 'structured_content': {}}
  assert projection.project_ui_result(legacy) == {
      'content': [],
      'is_error': True,
  }


@pytest.mark.conformance('P1-PROJ-05')
def test_error_result_keeps_its_flag_and_content():
  """P1-PROJ-05."""
  error = dict(FULL_RESULT, isError=True)
  projected = projection.project_ui_result(error)
  assert projected['isError'] is True
  assert projected['content'] == FULL_RESULT['content']


def _event(response: dict, *, widget: bool, call_id: str = 'call-1') -> Event:
  actions = EventActions()
  if widget:
    actions.render_ui_widgets = [
        UiWidget(
            id=call_id,
            provider='mcp',
            payload={'resource_uri': 'ui://x/y', 'tool': {}, 'tool_args': {}},
        )
    ]
  return Event(
      author='agent',
      actions=actions,
      content=types.Content(
          role='user',
          parts=[
              types.Part(
                  function_response=types.FunctionResponse(
                      id=call_id, name='show', response=response
                  )
              ),
              types.Part(
                  function_response=types.FunctionResponse(
                      id='call-2', name='plain', response=dict(FULL_RESULT)
                  )
              ),
          ],
      ),
  )


@pytest.mark.conformance('P1-PROJ-09')
def test_legacy_event_is_projected_on_replay_and_left_intact():
  """P1-PROJ-09: a whole result persisted by unpatched ADK."""
  event = _event(dict(FULL_RESULT), widget=True)
  before = event.model_dump_json()
  replayed = projection.project_event_for_model(event)
  ui_part, plain_part = replayed.content.parts
  assert SENTINEL not in json.dumps(ui_part.function_response.response)
  # A non-UI response in the same event is untouched.
  assert plain_part.function_response.response == FULL_RESULT
  assert event.model_dump_json() == before  # the stored event is unchanged


@pytest.mark.conformance('P1-PROJ-12')
def test_event_without_ui_widget_is_returned_as_is():
  """P1-PROJ-12: non-UI history is the same object, byte for byte."""
  event = _event(dict(FULL_RESULT), widget=False)
  assert projection.project_event_for_model(event) is event


@pytest.mark.parametrize('provider', ['a2ui', 'other'])
def test_only_mcp_widgets_mark_ui_results(provider):
  event = _event(dict(FULL_RESULT), widget=True)
  event.actions.render_ui_widgets[0].provider = provider
  assert projection.project_event_for_model(event) is event
