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

"""Short-circuit conversion of a bound UI call (RFC §5 step 1).

`short_circuit_result` is what the tool caller applies to a
`before_tool_callback` value of a profile-bound UI tool; the end-to-end
cases (RES-06, 07, 09) are in
tests/integration/mcp_apps/test_mcp_apps_result_authority.py. These cover
the `outputSchema` rule, which no conformance-server UI tool declares.
"""

from __future__ import annotations

import json

from google.adk.mcp_apps.sealing.errors import SealingError
from google.adk.mcp_apps.sealing.errors import SealingErrorReason
from google.adk.mcp_apps.sealing.result_authority import short_circuit_result
import pytest

SCHEMA = {
    'type': 'object',
    'properties': {'total': {'type': 'integer'}},
    'required': ['total'],
}


@pytest.mark.conformance('P3-RES-08')
def test_output_schema_adds_validated_structured_content_beside_content():
  result = short_circuit_result(
      {'total': 3}, function_call_id='c1', output_schema=SCHEMA
  )

  assert result['structuredContent'] == {'total': 3}
  (block,) = result['content']
  assert block['type'] == 'text'
  assert json.loads(block['text']) == {'total': 3}
  assert result['isError'] is False


@pytest.mark.conformance('P3-RES-08')
def test_complete_result_keeps_its_content_under_an_output_schema():
  result = short_circuit_result(
      {
          'content': [{'type': 'text', 'text': 'three'}],
          'structuredContent': {'total': 3},
      },
      function_call_id='c1',
      output_schema=SCHEMA,
  )

  assert result['content'] == [{'type': 'text', 'text': 'three'}]
  assert result['structuredContent'] == {'total': 3}


@pytest.mark.conformance('P3-RES-09')
@pytest.mark.parametrize(
    'value',
    [
        pytest.param({'total': 'three'}, id='ordinary-value-off-schema'),
        pytest.param(
            {
                'content': [{'type': 'text', 'text': 'three'}],
                'structuredContent': {'total': 'three'},
            },
            id='complete-result-off-schema',
        ),
        pytest.param(
            {'content': [{'type': 'text', 'text': 'x'}]},
            id='complete-result-without-structured-content',
        ),
    ],
)
def test_structured_content_violating_the_schema_is_refused(value):
  with pytest.raises(SealingError) as raised:
    short_circuit_result(value, function_call_id='c1', output_schema=SCHEMA)

  assert raised.value.reason is SealingErrorReason.RESULT_INVALID
  assert raised.value.function_call_id == 'c1'
