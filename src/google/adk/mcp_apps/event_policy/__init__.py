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

"""What the core enforces on every Event before a session service stores it.

Leaf modules the core imports (`protected_fields`, `provenance`,
`callback_scope`, `audience`) depend on nothing of the package but its
errors. Design:
docs/design/event-policy.md.

* `protected_fields`: the vocabulary of `Event.audience`,
  `Event.invocation_origin`, `Event.emitter` and the derived immediate
  caller.
* `provenance`: `Provenance`, admitted once per operation, and where the
  finalizer finds it.
* `audience`: `is_model_context_event`, the one predicate every
  model-feeding consumer applies.
* `finalizer`: the core event finalizer the session services run.
* `audit_actions`: what an `app_audit` Event may carry, which the
  finalizer enforces.
* `callback_scope`: `restricted_callback` and `refuse_reentry`, the
  same-session reentry rule for user code on an app path.
* `tool_callbacks`: `guarded_tool_callbacks`, what a profile-bound UI
  call's tool callbacks run in (restricted, no direct state write).
* `errors`: `EventPolicyError` and its `EventPolicyReason`.
"""
