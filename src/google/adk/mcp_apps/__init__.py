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

"""The MCP Apps host (SEP-1865, `io.modelcontextprotocol/ui`) for ADK.

The subpackage is layered the way the upstream pull requests stack, and a
module imports only from its own layer or the ones below it:

* `catalog` and `resources` (PR 1): tool visibility, the model and app
  catalogs, bounded tool listing, URI canonicalization, the resource-read
  policy, direct URI reads; `projection`, the model-facing view of UI tool
  results.
* `contracts`, `profile` and `binding` (PR 2): the deployment contracts a
  host profile references (runtime-checkable protocols, with loopback-only
  local-development implementations); `McpAppsHostProfile` with its
  advertised capabilities, policies, limits, fingerprint, `binding_revision`
  and readiness; the client advertisement seam and the registry's event loop;
  `affinity` (app-safe connection generations, security-domain keys, bound
  tool handles), `lifecycle` and `stores` (Session incarnations and the
  durable stores), `descriptor` (the persisted widget descriptor and its
  sealed-result references), `sealing` (sealing, the append stage and the
  gated resolver) and `bootstrap` (the ordered render bootstrap, live
  replay to a View, the read-only render and cold replay).

Everything here is inert until an Apps host profile is bound, except the
three behaviour changes the RFC declares (visibility enforcement, the model
projection of UI results, provenance stamping).
"""
