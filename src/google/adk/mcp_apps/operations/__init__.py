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

"""App-originated operations run through the host's execution pipeline.

Modules:

* `errors`: `OperationError` and its `OperationErrorReason`.
* `app_call`: `run_app_call`, one app-originated `tools/call` end to end,
  its `OperationOutcome` (wire, durable record, cached outcome) and the
  in-process `OperationOutcomeCache`.
* `sessions`: `FirstPartySessions`, the first-party Session create/import,
  patch and delete of ADK's own Session routes under a bound profile.
* `view_channel`: `ViewChannel`, a View's governed JSON-RPC channel.
* `app_read`: `run_app_read`, one governed `resources/read` and its
  response-side validation.
* `idempotency`: the idempotency key, the method-aware
  `OperationIdentity`, and `RetainedOutcomes`, the process-local ledger of
  keyed operations' terminal outcomes.
* `message_permit`: `MessagePermit`, the protected permit a `ui/message`
  turn revalidates once it owns the Session, and the host's
  `MessageConfirmation`.
* `context_registers`: the process-local model-context registers of each
  Session and the one `user`-role block every model turn reads.
* `context_updates`: a View's `ui/update-model-context`, validated, then
  committed under the Session's ownership.

Example:

  from google.adk.mcp_apps.operations.app_call import run_app_call
  outcome = await run_app_call(request, environment=env, cache=cache)
"""
