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


"""Sealing of profile-bound UI results into the `SealedResultStore`.

* `refresh_record`: `RefreshInvocationRecord`, what cold replay needs to
  refresh or re-run a render-producing call, sealed beside its result.
* `result_sealer`: canonicalization under the profile's sealing limits and
  the pending seals a tool call leaves for its Event.
* `append_stage`: creates the sealed envelopes once the Event's id is final,
  writes the references, validates and appends, then marks them referenced.
* `batch_reconciliation`: the frozen deltas of a model batch, stored on
  their own when the append stage refuses the batch's Event.
* `resolver`: the gated resolver, which releases sealed bytes only after
  checking the authoritative persisted Event.
* `errors`: `SealingError`, with a `SealingErrorReason`.

Design: docs/design/sealing.md.
"""
