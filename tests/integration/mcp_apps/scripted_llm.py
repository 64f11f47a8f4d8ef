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

"""`ScriptedLlm`: the stand-in model of the MCP Apps tests.

It plays scripted function calls and then answers with text, so a test
drives real tools through ADK's `Runner` without a real model. Imports only
what pristine google-adk 2.13.0 has: `differential_scenarios.py` runs it in
a subprocess on the pristine tree too.

Example:

  llm = ScriptedLlm(steps=[[("open_view", {})]])
  agent = LlmAgent(name="probe", model=llm, tools=[toolset])
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any
from typing import Optional

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field

Call = tuple[str, dict[str, Any]]
"""A scripted function call: the tool's name and its arguments."""


def step_of(llm_request: LlmRequest) -> int:
  """How many model responses of the current user turn made calls.

  A user turn starts at the last user message (a user content that is not
  function responses); counting from the request itself keeps the model
  stateless, so concurrent turns on one instance do not disturb each other.
  """
  step = 0
  for content in reversed(llm_request.contents):
    parts = content.parts or []
    if content.role == "model":
      step += any(part.function_call for part in parts)
    elif not any(part.function_response for part in parts):
      break
  return step


class ScriptedLlm(BaseLlm):
  """Makes the scripted calls of each user turn, then answers with text.

  Response k of a user turn makes the calls of `steps[k]`, all in one
  response (ADK runs them in parallel); once a turn's steps are used up the
  model answers with `answer()` ("done"). Every user turn plays the same
  steps; a test changes `steps` between turns to script the next one.

  Attributes:
    steps: The calls of each response of a user turn, in order.
    requests: Every request received, as received (see `record`).
    on_answer: Awaited before a text answer that follows function
      responses (after the calls' Event was appended): a barrier between
      the two model calls.
    prompt_token_count: Reported as usage metadata on every response.
  """

  model: str = "scripted"
  steps: list[list[Call]] = Field(default_factory=list)
  requests: list[LlmRequest] = Field(default_factory=list)
  on_answer: Optional[Callable[[], Awaitable[None]]] = Field(
      default=None, exclude=True
  )
  prompt_token_count: Optional[int] = None

  def plan(self, llm_request: LlmRequest, step: int) -> list[Call]:
    """The calls of response `step` of the turn; none makes it answer."""
    del llm_request
    return self.steps[step] if step < len(self.steps) else []

  def answer(self, llm_request: LlmRequest, step: int) -> str:
    """The text of the turn's last response."""
    del llm_request, step
    return "done"

  def call_id(self, index: int) -> Optional[str]:
    """The id of the response's `index`th call; None lets ADK mint one."""
    del index
    return None

  def record(self, llm_request: LlmRequest) -> None:
    """Keeps a request in `requests`."""
    self.requests.append(llm_request)

  async def generate_content_async(
      self, llm_request: LlmRequest, stream: bool = False
  ) -> AsyncGenerator[LlmResponse, None]:
    del stream
    self.record(llm_request)
    step = step_of(llm_request)
    calls = self.plan(llm_request, step)
    if calls:
      parts = [
          types.Part(
              function_call=types.FunctionCall(
                  id=self.call_id(i), name=name, args=dict(args)
              )
          )
          for i, (name, args) in enumerate(calls)
      ]
    else:
      if step and self.on_answer is not None:
        await self.on_answer()
      parts = [types.Part(text=self.answer(llm_request, step))]
    usage = (
        None
        if self.prompt_token_count is None
        else types.GenerateContentResponseUsageMetadata(
            prompt_token_count=self.prompt_token_count
        )
    )
    yield LlmResponse(
        content=types.Content(role="model", parts=parts),
        usage_metadata=usage,
    )
