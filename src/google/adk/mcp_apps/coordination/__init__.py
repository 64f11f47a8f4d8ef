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

"""Session coordination: one mutator of an app-enabled Session at a time.

The coordinated writers are the Runner's entry points, app operations
(`run_app_call`) and the first-party Session API
(`operations.sessions.FirstPartySessions`). A direct external
`SessionService.append_event` on an app-enabled Session is outside the
coordinated contract and unsupported: it neither waits for the Session's
owner nor is ordered with its writes.

Modules:

* `errors`: `CoordinationError` and its `CoordinationErrorReason`.
* `coordinator`: `SessionCoordinator`, `Ownership` and the process-wide
  `session_coordinator()`; the reentry rule (`refuse_reentry`).
* `runner_entry`: the hooks `runners.py` applies on app-enabled Runners.
* `sessions`: `SessionCoordination` (the lifecycle manager's deletion
  coordinator and append exclusion) and `IncarnationPermit`.

Example:

  from google.adk.mcp_apps.coordination.coordinator import session_coordinator
  async with session_coordinator().owned(key, 'host.export'):
    ...
"""
