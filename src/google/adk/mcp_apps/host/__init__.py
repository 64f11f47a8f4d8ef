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


"""The MCP Apps host service: what a web framework drives to host Views.

`McpAppHostService` resolves the calling principal, opens Views under
leases, serves each View's governed channel, exports sealed results through
the purpose-bound export resolver and runs "Run tool again" and refresh as
new invocations. Design: docs/design/host-service.md. `fastapi_adapter` is
the reference (DEV ONLY, loopback-only) FastAPI adapter that
`adk web --mcp_apps` mounts under `/mcp-apps`.
"""
