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

"""The confirmation context's snapshots pass the shared golden table.

`ReadonlyConfirmationContext` hands out two snapshots, `state` and
`arguments`; each is a member of a dict the facade snapshots whole, so a
row's value sits one level down (the limits shift by that wrapper).
"""

from __future__ import annotations

from typing import Any

from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.facades.confirmation import ReadonlyConfirmationContext
from google.adk.mcp_apps.facades.snapshot import DEFAULT_MAX_DEPTH
from google.adk.mcp_apps.facades.snapshot import DEFAULT_MAX_VALUES
import pytest
from snapshot_properties import check_golden_table

KEY = SessionKey('app', 'user', 'session')


def _context(state: Any, arguments: Any) -> ReadonlyConfirmationContext:
  return ReadonlyConfirmationContext.build(
      session=KEY,
      state=state,
      tool_name='tool',
      server_id='server',
      arguments=arguments,
  )


@pytest.mark.conformance('P3-CONF-03', 'P3-SNAP-15')
@pytest.mark.parametrize('accessor', ['state', 'arguments'])
def test_confirmation_context_snapshots_pass_the_golden_table(
    accessor: str,
) -> None:
  def take(value: Any) -> Any:
    wrapped = {'v': value}
    if accessor == 'state':
      return _context(wrapped, {}).state['v']
    return _context({}, wrapped).arguments['v']

  check_golden_table(
      take, max_values=DEFAULT_MAX_VALUES - 1, max_depth=DEFAULT_MAX_DEPTH - 1
  )
