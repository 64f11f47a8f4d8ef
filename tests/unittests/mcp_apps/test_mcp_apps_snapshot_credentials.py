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

"""A state snapshot never carries the credential ADK's auth flow stored.

ADK's auth handler keeps the credential it received for an auth config in
the invocation-scoped `temp:` state (`AuthHandler.
parse_and_store_auth_response`). `state_snapshot`, which every facade's
`state` is built with, leaves those keys out, so a facade built while an
invocation holds a credential neither refuses the state nor shows it.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi.openapi.models import HTTPBearer
from google.adk.auth.auth_credential import AuthCredential
from google.adk.auth.auth_credential import AuthCredentialTypes
from google.adk.auth.auth_credential import HttpAuth
from google.adk.auth.auth_credential import HttpCredentials
from google.adk.auth.auth_handler import AuthHandler
from google.adk.auth.auth_tool import AuthConfig
from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.facades.confirmation import ReadonlyConfirmationContext
from google.adk.mcp_apps.facades.snapshot import state_snapshot
from google.adk.sessions.state import State
import pytest

SECRET = 'bearer-secret-0f9e'


async def _state_after_auth() -> tuple[State, AuthConfig]:
  """A live `State` the way ADK's auth flow leaves it."""
  value: dict[str, Any] = {'cart': ['A1'], 'user:tier': 'gold'}
  state = State(value, {})
  credential = AuthCredential(
      auth_type=AuthCredentialTypes.HTTP,
      http=HttpAuth(scheme='bearer', credentials=HttpCredentials(token=SECRET)),
  )
  config = AuthConfig(
      auth_scheme=HTTPBearer(),
      raw_auth_credential=credential,
      exchanged_auth_credential=credential,
  )
  await AuthHandler(config).parse_and_store_auth_response(state)
  return state, config


def _text(value: Any) -> str:
  return json.dumps(value, sort_keys=True)


@pytest.mark.conformance('P3-SNAP-18')
async def test_the_auth_flows_credential_is_left_out_of_a_state_snapshot() -> (
    None
):
  state, config = await _state_after_auth()
  # The auth flow really stored it, where a live context would see it.
  stored = AuthHandler(config).get_auth_response(state)
  assert stored is not None and stored.http is not None
  assert stored.http.credentials.token == SECRET

  taken = state_snapshot(state)

  assert taken == {'cart': ['A1'], 'user:tier': 'gold'}
  assert SECRET not in _text(taken)


@pytest.mark.conformance('P3-SNAP-18')
async def test_a_temp_credential_stored_as_a_dict_is_left_out_too() -> None:
  state = State({'cart': []}, {})
  state['temp:my_api'] = {'http': {'credentials': {'token': SECRET}}}
  taken = state_snapshot(state)
  assert taken == {'cart': []}
  assert SECRET not in _text(taken)


@pytest.mark.conformance('P3-SNAP-18')
async def test_the_confirmation_context_shows_no_credential() -> None:
  state, _ = await _state_after_auth()
  context = ReadonlyConfirmationContext.build(
      session=SessionKey('app', 'user', 'session'),
      state=state,
      tool_name='tool',
      server_id='server',
      arguments={'q': 1},
  )
  assert SECRET not in _text(context.state)
  assert SECRET not in _text(context.arguments)
  for name in ('credential_service', 'load_credential', 'get_auth_response'):
    with pytest.raises(Exception) as caught:
      getattr(context, name)
    assert SECRET not in str(caught.value)
  assert set(context.refused) == {
      'credential_service',
      'load_credential',
      'get_auth_response',
  }


def test_state_snapshot_of_none_and_of_a_plain_dict() -> None:
  assert state_snapshot(None) == {}
  assert state_snapshot({'a': 1, 'temp:b': 2}) == {'a': 1}
