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

"""Fixtures of the host-service tests.

They run on the operations tests' stage (`exec_ownership_support.stage`)
and channel helpers, whose folder is put on the import path here; the
export helpers are in export_support.py.
"""

from __future__ import annotations

from pathlib import Path
import sys

import pytest

_OPERATIONS = str(Path(__file__).resolve().parents[1] / "operations")
if _OPERATIONS not in sys.path:
  sys.path.append(_OPERATIONS)


@pytest.fixture(params=["in_memory", "sqlite"])
def backend(request: pytest.FixtureRequest) -> str:
  """The Session service: in-memory (local-development profile) or SQLite
  (SQL stores)."""
  return str(request.param)
