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


"""The host service's denial log: terminal denials, without secrets.

Every denial the host service returns is also logged here, at WARNING, with
the action, the reason and opaque target identifiers only: never a
principal id, credential, lease token or result content.

Usage:

  log_denial('open_view', HostServiceErrorReason.UNAUTHORIZED,
             function_call_id=call_id)
"""

from __future__ import annotations

import logging

from .errors import HostServiceErrorReason

logger = logging.getLogger('google_adk.mcp_apps.host')

_ALLOWED_FIELDS = frozenset({
    'app_name',
    'session_id',
    'event_id',
    'function_call_id',
    'toolset_id',
    'view_id',
    'operation_id',
    'detail',
})
"""Identifiers a denial may name; anything else is dropped, so a caller
cannot log a secret by passing it."""


def log_denial(
    action: str, reason: HostServiceErrorReason, **fields: str
) -> None:
  """Logs one terminal denial of `action`, keeping only known identifiers."""
  kept = {k: v for k, v in sorted(fields.items()) if k in _ALLOWED_FIELDS}
  logger.warning(
      'mcp_apps host denied %s: %s %s',
      action,
      reason.value,
      ' '.join(f'{k}={v}' for k, v in kept.items()),
  )
