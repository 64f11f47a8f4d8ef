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

"""Unit proofs of the lifecycle pieces that need no database server.

The reduced-durability (local-development) variant of the lifecycle store
and the import finalization and digest; the durable cases run on SQLite
and PostgreSQL in `tests/integration/mcp_apps/`.
"""

from __future__ import annotations

from google.adk.events.event import Event
from google.adk.mcp_apps.contracts.local_dev import LocalDevSessionLifecycleStore
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.contracts.session_lifecycle_store import LifecycleConflictError
from google.adk.mcp_apps.contracts.session_lifecycle_store import LifecycleState
from google.adk.mcp_apps.contracts.session_lifecycle_store import SessionLifecycleStore
from google.adk.mcp_apps.lifecycle import finalize_imported_events
from google.adk.mcp_apps.lifecycle import import_digest
from google.adk.mcp_apps.stores.sql_session_lifecycle_store import SqlSessionLifecycleStore
import pytest

KEY = SessionKey('app', 'alice', 's')


def _event(text: str) -> Event:
  return Event(
      id='e1',
      author='user',
      invocation_id='i',
      timestamp=1.0,
      custom_metadata={'__adk_internal_x': 1, 'text': text},
  )


@pytest.mark.conformance('P2-SLS-05')
def test_digest_is_over_finalized_events_and_not_a_count():
  """P2-SLS-05: finalization strips internals first; P2-SLS-15 digest≠count."""
  raw = [_event('a')]
  finalized = finalize_imported_events(raw)
  assert '__adk_internal_x' not in finalized[0].custom_metadata
  assert raw[0].custom_metadata['__adk_internal_x'] == 1
  assert import_digest(finalized) != import_digest(raw)
  assert import_digest(finalize_imported_events([_event('b')])) != (
      import_digest(finalized)
  )
  with pytest.raises(ValueError):
    finalize_imported_events([_event('a').model_copy(update={'partial': True})])


@pytest.mark.conformance('P2-SLS-18')
def test_reduced_durability_store_abandons_and_recreates():
  """P2-SLS-18: the dev store follows the transitions, in memory only."""
  store = LocalDevSessionLifecycleStore()
  assert store.dev_only and store.loopback_only
  assert isinstance(store, SessionLifecycleStore)

  async def run():
    creating = await store.reserve_creation(
        KEY, expected=await store.read(KEY), operation_id='A'
    )
    with pytest.raises(LifecycleConflictError):
      await store.abandon_creation(KEY, incarnation=1, operation_id='B')
    abandoned = await store.abandon_creation(
        KEY, incarnation=1, operation_id='A'
    )
    assert (abandoned.state, abandoned.abandoned) == (
        LifecycleState.DELETED,
        True,
    )
    again = await store.reserve_creation(
        KEY, expected=abandoned, operation_id='B'
    )
    assert (again.incarnation, again.abandoned) == (2, False)
    del creating

  import asyncio  # pylint: disable=g-import-not-at-top

  asyncio.run(run())


@pytest.mark.conformance('P2-SLS-01')
def test_sql_store_refuses_in_memory_sqlite():
  """P2-SLS-01: the durable store refuses a non-durable database."""
  with pytest.raises(ValueError):
    SqlSessionLifecycleStore('sqlite+aiosqlite:///:memory:')
  store = SqlSessionLifecycleStore('sqlite+aiosqlite:////tmp/unused.db')
  assert isinstance(store, SessionLifecycleStore)
