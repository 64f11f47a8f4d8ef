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

"""The audience predicate: which Events may feed the model or routing.

Every consumer that builds model input or picks an agent from session
history (content construction, compaction, summarization, memory
ingestion, agent routing, task scope) asks this one predicate.

Usage:

  history = [e for e in session.events if is_model_context_event(e)]
"""

from __future__ import annotations

from typing import Any

from .protected_fields import APP_AUDIT


def is_model_context_event(event: Any) -> bool:
  """Whether `event` is conversation (not an `app_audit` record)."""
  return getattr(event, 'audience', None) != APP_AUDIT
