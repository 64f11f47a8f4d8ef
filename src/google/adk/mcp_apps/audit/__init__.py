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


"""The canonical audit append pipeline and the audit observer phase.

Modules:

* `errors`: `AuditError` and its `AuditErrorReason`.
* `pipeline`: `append_audit_event`, the one way an MCP App operation's
  audit (or reconciliation) record is appended, its core-only fallback,
  and the observer phase that follows a successful append.

Example:

  from google.adk.mcp_apps.audit.pipeline import append_audit_event
  outcome = await append_audit_event(
      session_service=service, session=session, event=record,
      effects=effects, plugin_manager=plugin_manager)
"""
