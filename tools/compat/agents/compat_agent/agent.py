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

"""The compatibility legs' agent: a scripted model and one function tool.

`ScriptedLlm` answers a user message by calling `add` with the two numbers
it names, and answers the function response with text that quotes it, so a
turn exercises a model call, a tool call, the persisted function response
and the next request's contents, with no network.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
import re

from google.adk.agents.llm_agent import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types


def add(a: int, b: int) -> dict[str, int]:
  """Adds two integers.

  Args:
    a: The first addend.
    b: The second addend.

  Returns:
    The sum.
  """
  return {'sum': a + b}


class ScriptedLlm(BaseLlm):
  """Calls `add` for the user's numbers, then reports the tool's answer."""

  model: str = 'compat-scripted-llm'

  async def generate_content_async(
      self, llm_request: LlmRequest, stream: bool = False
  ) -> AsyncGenerator[LlmResponse, None]:
    del stream
    last = llm_request.contents[-1]
    responses = [
        p.function_response for p in last.parts or () if p.function_response
    ]
    if responses:
      text = f'the tool said {responses[0].response}'
      yield LlmResponse(
          content=types.Content(role='model', parts=[types.Part(text=text)])
      )
      return
    numbers = [int(n) for n in re.findall(r'\d+', last.parts[0].text or '')]
    call = types.FunctionCall(
        id='call-1', name='add', args={'a': numbers[0], 'b': numbers[1]}
    )
    yield LlmResponse(
        content=types.Content(
            role='model', parts=[types.Part(function_call=call)]
        )
    )


root_agent = LlmAgent(
    name='compat_agent',
    model=ScriptedLlm(),
    instruction='Add the numbers the user names.',
    tools=[add],
)
