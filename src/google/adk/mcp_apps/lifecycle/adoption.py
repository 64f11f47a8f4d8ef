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


"""Lazy migration: a Session's first app-enabled touch adopts it.

Sessions created before a profile was bound have no lifecycle record; the
first app-safe listing or UI call adopts them as `ACTIVE(1)`. Design:
docs/design/lifecycle.md.

Usage:

  record = await touch_record(lifecycle_store, key, session_service)
"""

from __future__ import annotations

import logging
from typing import Any
from typing import Optional
import uuid

from ..contracts.scope import SessionKey
from ..contracts.session_lifecycle_store import LifecycleConflictError
from ..contracts.session_lifecycle_store import LifecycleRecord
from ..contracts.session_lifecycle_store import LifecycleState
from ..contracts.session_lifecycle_store import SessionLifecycleStore
from .errors import FenceUnsupportedError
from .errors import SessionExistsError
from .errors import SessionLifecycleError
from .manager import not_admitted_error
from .manager import SessionLifecycleManager

logger = logging.getLogger('google_adk.' + __name__)


async def adopt_on_first_touch(
    store: SessionLifecycleStore,
    session: SessionKey,
    session_service: Optional[Any],
) -> LifecycleRecord:
  """The Session's record, adopting an `ABSENT` Session when possible.

  Args:
    store: The profile's lifecycle store.
    session: The Session touched.
    session_service: Its Session service; None skips adoption.

  Returns:
    The current record (`ACTIVE(1)` after an adoption; unchanged when the
    Session was not `ABSENT` or could not be adopted).

  Raises:
    FenceUnsupportedError: The service cannot host the creation fence and
      the store is not the local-development one.
    SessionLifecycleError: The adoption was refused (no Session row, or the
      row was created by the lifecycle).
  """
  record = await store.read(session)
  if record.state is not LifecycleState.ABSENT or session_service is None:
    return record
  try:
    try:
      manager = SessionLifecycleManager(store, session_service)
    except FenceUnsupportedError:
      if not getattr(store, 'dev_only', False):
        raise
      return await store.adopt_existing(
          session, adoption_id=f'adopt-{uuid.uuid4().hex}'
      )
    return await manager.adopt(session)
  except (SessionExistsError, LifecycleConflictError):
    # A concurrent first touch adopted it; use what it wrote.
    return await store.read(session)


async def active_incarnation(
    store: SessionLifecycleStore,
    session: SessionKey,
    session_service: Optional[Any],
) -> int:
  """The `ACTIVE` incarnation, adopting on first touch.

  Raises:
    SessionNotAdmittedError: `ABSENT` (not adoptable), `CREATING`,
      `DELETING` or `DELETED`.
    SessionLifecycleError: As `adopt_on_first_touch`.
  """
  record = await adopt_on_first_touch(store, session, session_service)
  if record.state is not LifecycleState.ACTIVE:
    raise not_admitted_error(record)
  return record.incarnation


async def touch_record(
    store: SessionLifecycleStore,
    session: SessionKey,
    session_service: Optional[Any],
) -> LifecycleRecord:
  """The Session's record at an app-safe touch, adopting if possible.

  A Session that cannot be adopted keeps its record as read (`ABSENT`,
  incarnation 0); sealing its results then fails typed
  (`active_incarnation`).
  """
  try:
    return await adopt_on_first_touch(store, session, session_service)
  except SessionLifecycleError:
    logger.warning('Session lifecycle: adoption on first touch refused')
    return await store.read(session)
