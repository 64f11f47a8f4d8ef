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

"""Parallel batches of function calls under a bound profile.

A batch is admitted (or refused) as a whole before any call starts, and an
admitted UI batch runs over one effect ledger. Designs:
docs/design/batch-admission.md, docs/design/batch-ledger.md.

* `seam`: `govern_batch`, what ADK's batch executor calls.
* `admission`: the fresh two-class snapshot of the called tools.
* `refusal`: the core-owned Event answering a refused batch.
* `ledger`: `EventBatchEffects`, its child and event-policy ledgers, and
  the `FrozenBatch` the merged Event is built from.
* `errors`: `BatchError` and its `BatchErrorReason`.
"""
