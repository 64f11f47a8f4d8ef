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


"""Render bootstrap and the read-only render.

* `render`: `bootstrap_render`, the ordered bootstrap of a View from
  a persisted descriptor, its `RenderDocument` and host-held `ViewGrant`.
* `live_replay`: `replay_to_view`, a live View's later asks for its sealed
  result, under the post-lease rule.
* `read_only`: `ReadOnlyRender`, the host-owned error placeholder.
* `cold_replay`: what a widget offers once its View is gone for good
  (refresh, "run tool again", or the placeholder).

Design: docs/design/bootstrap.md.
"""
