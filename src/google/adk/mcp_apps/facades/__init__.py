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


"""Restricted facades user code on an app path receives.

Modules:

* `app_call_context`: `AppCallToolContext`, the `tool_context` a direct app
  call's tool callbacks receive: identifiers, snapshot state reads, and the
  call's child-ledger writes (`state[key] = value`, `save_artifact`).
* `audit_context`: `ReadonlyAuditContext`, what an audit observer sees:
  identifiers and a read-only state snapshot.
* `callback_context`: `ReadonlyCallbackContext`, what an MCP-owned
  callback (`tool_filter`, `header_provider`, progress factory) receives
  on an app path.
* `confirmation`: `ReadonlyConfirmationContext`, `decide_confirmation`, the
  sealed one-shot `ConfirmationPermit` and `AppCallConfirmation`, what a
  governed app call's confirmation uses.
* `errors`: `FacadeError` and its `FacadeErrorReason`.
* `event_policy`: `EventPolicyContext` and `run_event_policy`, the
  restricted event callback on a direct-app audit Event, its ledger API and
  its core-only fallback.
* `mcp_callbacks`: `AppPathCallbacks` and `run_governed`, the app path's
  governed filter, header provider and progress.
* `snapshot`: `snapshot()`, the closed deep-read-only copy of a JSON value
  every facade hands out, `state_snapshot()` for a Session's stored state
  (no `temp:` keys, where ADK's auth flow keeps credentials), and `thaw()`
  to get plain values back.

Example:

  from google.adk.mcp_apps.facades.snapshot import snapshot
  state = snapshot({'cart': [1, 2]})
"""
