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

"""The protected Event fields' vocabulary, a leaf module the core imports.

Usage:

  if event.audience == APP_AUDIT:
    ...  # a record of an MCP App operation, never model context
"""

from __future__ import annotations

from typing import Final
from typing import Literal

Audience = Literal['app_audit']
"""Who an Event is for besides the conversation: only `'app_audit'`."""

APP_AUDIT: Final = 'app_audit'
"""The audience of an MCP App operation's audit record."""

InvocationOrigin = Literal['user', 'mcp_app', 'system']
"""Where the operation that produced an Event entered the system."""

ImmediateCaller = Literal['model', 'app', 'host']
"""Who called a tool: the model, a View (`app`) or the host itself."""

Emitter = Literal['app', 'host', 'session-api', 'system']
"""Who wrote an Event when no agent flow did: a View's operation, the host,
the first-party Session API, or the core itself (rewind, compaction,
reconciliation). `None` on an Event means an agent flow wrote it."""

PROTECTED_EVENT_FIELDS: Final = ('audience', 'invocation_origin', 'emitter')
"""The Event fields only the core finalizer sets."""
