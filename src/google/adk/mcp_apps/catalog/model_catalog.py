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

"""Which listed MCP tools the model may see.

The model catalog is the developer's tool selection (`tool_filter`, applied
by the toolset) intersected with `"model"` visibility, minus framework-reserved
names. It holds with or without an Apps host profile and on a directly
constructed `McpToolset`: an app-only tool reaches no LLM request.

Example:

  model_tools = [t for t in tools if admits_for_model(t, prefix='crm')]
"""

from __future__ import annotations

import logging
from typing import Any

from . import reserved_names
from . import visibility

logger = logging.getLogger('google_adk.' + __name__)


def admits_for_model(tool: Any, prefix: str | None) -> bool:
  """Whether a listed tool belongs in the model catalog.

  Logs one record for a reserved name and one for malformed visibility; an
  app-only tool is left out silently, since that is what its server asked.

  Args:
    tool: The SDK `Tool` as listed (native name, `_meta`).
    prefix: The toolset's `tool_name_prefix`, if any.

  Returns:
    True when the model may see and call the tool.
  """
  if reserved_names.reserved_for_model(tool.name, prefix):
    logger.warning(
        "Skipping MCP tool '%s': its name%s collides with a reserved ADK"
        ' framework tool name.',
        tool.name,
        ''
        if tool.name in reserved_names.RESERVED_TOOL_NAMES
        else f" with prefix '{prefix}'",
    )
    return False
  normalized = visibility.tool_visibility(tool)
  visibility.log_malformed(tool.name, normalized)
  return normalized.model
