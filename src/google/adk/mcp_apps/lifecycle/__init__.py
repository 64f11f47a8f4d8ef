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

"""Session incarnations: fenced creation, recovery, migration, deletion.

Under a lifecycle-enabled configuration every app-enabled Session gets a
durable incarnation, so a stale creator, a late result or an old reference
cannot land in a recreated Session. Nothing here runs without such a
configuration. Design: docs/design/lifecycle.md.

Usage:

  manager = SessionLifecycleManager(lifecycle_store, session_service)
  await manager.create(SessionKey('app', 'user', 'session-1'))
"""

from .errors import AdoptionRefusedError
from .errors import CreationFenceError
from .errors import FenceRefusal
from .errors import FenceUnsupportedError
from .errors import ReceiptMismatchError
from .errors import SessionExistsError
from .errors import SessionLifecycleError
from .errors import SessionNotAdmittedError
from .errors import StaleIncarnationError
from .fenced_creation import fence_for
from .fenced_creation import FenceToken
from .imported_events import finalize_imported_events
from .imported_events import import_digest
from .manager import FaultPoint
from .manager import RecoveryOutcome
from .manager import SealedStoreParticipant
from .manager import SessionLifecycleManager
from .manager import Step

__all__ = [
    'AdoptionRefusedError',
    'CreationFenceError',
    'FaultPoint',
    'FenceRefusal',
    'FenceToken',
    'FenceUnsupportedError',
    'ReceiptMismatchError',
    'RecoveryOutcome',
    'SealedStoreParticipant',
    'SessionExistsError',
    'SessionLifecycleError',
    'SessionLifecycleManager',
    'SessionNotAdmittedError',
    'StaleIncarnationError',
    'Step',
    'fence_for',
    'finalize_imported_events',
    'import_digest',
]
