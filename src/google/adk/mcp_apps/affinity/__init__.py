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

"""Connection affinity of MCP Apps: which connection a UI-associated call uses.

A View may call an app-visible tool "from the same server connection only".
UI-associated calls therefore run on app-safe connection generations the
binding registry owns, keyed by an opaque security domain, and the model's
declarations are pinned to them through connection-bound tool handles.
Design: docs/design/affinity.md.

Example:

  pool = AppSafeConnectionPool()
  hold = await pool.acquire(key, connect, HoldKind.VIEW)
"""
