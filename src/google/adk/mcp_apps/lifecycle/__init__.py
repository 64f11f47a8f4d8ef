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

"""Session incarnations (PR 2): fenced creation, recovery, migration, deletion.

ADK lets a client reuse a Session id after deletion and commits Session
creation in its own transaction, so nothing in 2.13.0 stops a stale creator,
a late result or an old reference from landing in the wrong conversation.
Under a lifecycle-enabled configuration this package gives every app-enabled
Session a durable incarnation (RFC §3): `fenced_creation` is the write fence
the session services commit against, `manager` drives creation, recovery,
adoption of pre-series Sessions and cascade deletion, and `errors` holds the
typed refusals. Nothing here runs without such a configuration.
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
