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

"""Imported events of a fenced creation: finalized, then digested.

Usage:

  finalized = finalize_imported_events(events)
  digest = import_digest(finalized)  # 'sha256:…', the receipt's digest
"""

from __future__ import annotations

from collections.abc import Sequence
import copy
import hashlib
import json

from ...events._internal_metadata import mark_restored
from ...events.event import Event

DIGEST_PREFIX = 'sha256:'
"""The prefix of every import digest (the algorithm's name)."""

_DIGEST_DOMAIN = b'adk-mcp-apps/session-import/v1\x00'


def finalize_imported_events(events: Sequence[Event]) -> list[Event]:
  """Finalizes events imported at creation, before any digest is taken.

  Each event is deep-copied, stripped of caller-supplied internal metadata,
  stamped restored (the API server's `mark_restored`) and given the
  Session API's protected fields (`invocation_origin='system'`,
  `emitter='session-api'`, no audience), as the session service's
  finalizer stores them. Partial events
  and events that carry a state delta are refused: an import restores a
  conversation, it does not change state.

  Args:
    events: The events to import, in order.

  Returns:
    The finalized copies; the inputs are not modified.

  Raises:
    ValueError: For a partial event or one with a state delta.
  """
  finalized = []
  for index, event in enumerate(events):
    if not isinstance(event, Event):
      raise TypeError(f'imported event {index} is not an Event')
    if event.partial:
      raise ValueError(f'imported event {index} is partial')
    if event.actions.state_delta:
      raise ValueError(f'imported event {index} carries a state delta')
    copied = mark_restored(copy.deepcopy(event))
    # The first-party Session API's provenance, as the session service's
    # finalizer stamps it on every imported Event it stores (this layer
    # sits below `event_policy`, so the values are spelled here).
    copied.audience = None
    copied.invocation_origin = 'system'
    copied.emitter = 'session-api'
    finalized.append(copied)
  return finalized


def import_digest(events: Sequence[Event]) -> str:
  """The receipt digest of finalized imported events.

  SHA-256 over a domain tag and the sorted-key JSON of each event's stored
  form (`model_dump(mode='json', exclude_none=True)`), length-framed, so two
  imports with the same number of events but any differing byte differ.
  """
  digest = hashlib.sha256(_DIGEST_DOMAIN)
  digest.update(len(events).to_bytes(8, 'big'))
  for event in events:
    body = json.dumps(
        event.model_dump(mode='json', exclude_none=True),
        sort_keys=True,
        separators=(',', ':'),
        ensure_ascii=False,
    ).encode('utf-8')
    digest.update(len(body).to_bytes(8, 'big') + body)
  return DIGEST_PREFIX + digest.hexdigest()
