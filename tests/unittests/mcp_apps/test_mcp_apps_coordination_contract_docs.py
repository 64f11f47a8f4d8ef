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

"""P4-COORD-12: the public docstrings say a direct append is unsupported.

A documentation assertion: what `help()` shows a user of the coordination
package and of the first-party Session API.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from google.adk.mcp_apps import coordination
from google.adk.mcp_apps.operations.sessions import FirstPartySessions
import pytest


def _words(documented: Any) -> str:
  doc = inspect.getdoc(documented)
  assert doc, documented
  return re.sub(r'\s+', ' ', doc)


@pytest.mark.conformance('P4-COORD-12')
@pytest.mark.parametrize(
    'documented',
    [coordination, FirstPartySessions],
    ids=['coordination', 'FirstPartySessions'],
)
def test_docstring_says_a_direct_append_event_is_outside_the_contract(
    documented: Any,
) -> None:
  words = _words(documented)
  assert 'A direct external `SessionService.append_event`' in words, documented
  assert 'outside the coordinated contract and unsupported' in words
