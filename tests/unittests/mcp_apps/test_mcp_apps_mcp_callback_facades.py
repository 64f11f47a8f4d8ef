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


"""The app-path callback facade and its governed runner.

`ReadonlyCallbackContext` is what a `tool_filter`, `header_provider` and
progress factory receive on an app path. The golden table runs through
the facade a real filter and a real header provider received (the state
one level down, as the confirmation context's test does); the verdict
rows run real callbacks through `AppPathCallbacks`.
"""

from __future__ import annotations

import asyncio
from typing import Any
from typing import Optional

from google.adk.mcp_apps.contracts.scope import SessionKey
from google.adk.mcp_apps.errors import DenialReason
from google.adk.mcp_apps.errors import McpAppVisibilityError
from google.adk.mcp_apps.event_policy.callback_scope import refuse_reentry
from google.adk.mcp_apps.event_policy.errors import EventPolicyError
from google.adk.mcp_apps.facades.callback_context import ReadonlyCallbackContext
from google.adk.mcp_apps.facades.errors import FacadeError
from google.adk.mcp_apps.facades.errors import FacadeErrorReason
from google.adk.mcp_apps.facades.mcp_callbacks import AppPathCallbacks
from google.adk.mcp_apps.facades.snapshot import DEFAULT_MAX_DEPTH
from google.adk.mcp_apps.facades.snapshot import DEFAULT_MAX_VALUES
from google.adk.tools.mcp_tool.mcp_tool import McpTool
from mcp import types
import pytest
from snapshot_properties import check_golden_table

KEY = SessionKey('app', 'user', 'session')
TOOL = types.Tool(name='refresh', inputSchema={'type': 'object'})


def _callbacks(state: Any, **callbacks: Any) -> AppPathCallbacks:
  fields: dict[str, Any] = {
      'tool_filter': None,
      'header_provider': None,
      'progress_callback': None,
  }
  fields.update(callbacks)
  return AppPathCallbacks(
      context=ReadonlyCallbackContext.build(session=KEY, state=state),
      **fields,
  )


@pytest.mark.conformance('P3-SNAP-13')
def test_tool_filter_facade_passes_the_golden_table() -> None:
  def take(value: Any) -> Any:
    received: list[Any] = []

    def tool_filter(tool: Any, readonly_context: Any = None) -> bool:
      received.append(readonly_context)
      return True

    callbacks = _callbacks({'v': value}, tool_filter=tool_filter)
    asyncio.run(callbacks.admit_tool(TOOL))
    (context,) = received
    return context.state['v']

  check_golden_table(
      take, max_values=DEFAULT_MAX_VALUES - 1, max_depth=DEFAULT_MAX_DEPTH - 1
  )


@pytest.mark.conformance('P3-SNAP-14')
def test_header_provider_facade_passes_the_golden_table() -> None:
  def take(value: Any) -> Any:
    received: list[Any] = []

    def header_provider(readonly_context: Any) -> dict[str, str]:
      received.append(readonly_context)
      return {}

    callbacks = _callbacks({'v': value}, header_provider=header_provider)
    assert asyncio.run(callbacks.headers()) == {}
    (context,) = received
    return context.state['v']

  check_golden_table(
      take, max_values=DEFAULT_MAX_VALUES - 1, max_depth=DEFAULT_MAX_DEPTH - 1
  )


def test_facade_exposes_identifiers_and_refuses_the_live_surface() -> None:
  context = ReadonlyCallbackContext.build(
      session=KEY, state={'a': [1]}, invocation_id='inv', agent_name='ag'
  )
  assert (context.app_name, context.user_id, context.session_id) == (
      'app',
      'user',
      'session',
  )
  assert (context.invocation_id, context.agent_name) == ('inv', 'ag')
  for name in ('session', 'session_service', 'actions', 'save_artifact'):
    with pytest.raises(FacadeError) as caught:
      getattr(context, name)
    assert caught.value.reason is FacadeErrorReason.UNAVAILABLE
  assert context.refused == (
      'session',
      'session_service',
      'actions',
      'save_artifact',
  )
  with pytest.raises(FacadeError) as caught:
    context.app_name = 'other'  # type: ignore[misc]
  assert caught.value.reason is FacadeErrorReason.READ_ONLY
  assert context.mutations == ('app_name',)


async def test_filter_receives_an_unrunnable_mcp_tool_copy() -> None:
  received: list[Any] = []

  def tool_filter(tool: Any, readonly_context: Any = None) -> bool:
    received.append(tool)
    return tool.name == 'refresh'

  await _callbacks({}, tool_filter=tool_filter).admit_tool(TOOL)
  (tool,) = received
  assert isinstance(tool, McpTool) and tool.raw_mcp_tool is not TOOL
  assert tool.raw_mcp_tool == TOOL
  with pytest.raises(FacadeError) as caught:
    await tool.run_async(args={}, tool_context=None)
  assert caught.value.reason is FacadeErrorReason.UNAVAILABLE


async def test_name_list_filter_narrows_the_app_catalog() -> None:
  await _callbacks({}, tool_filter=('refresh',)).admit_tool(TOOL)
  with pytest.raises(McpAppVisibilityError) as caught:
    await _callbacks({}, tool_filter=('other',)).admit_tool(TOOL)
  assert caught.value.reason is DenialReason.POLICY_DENIED


def _reenter() -> None:
  refuse_reentry(KEY.app_name, KEY.user_id, KEY.session_id, 'probe')


def _swallow(action: Any) -> None:
  try:
    action()
  except (FacadeError, EventPolicyError):
    pass


@pytest.mark.parametrize(
    ('action', 'reason'),
    [
        (lambda c: c.state.update(x=1), FacadeErrorReason.CALLBACK_FAILED),
        (lambda c: c.state['a'].append(2), FacadeErrorReason.CALLBACK_FAILED),
        (lambda c: c.session, FacadeErrorReason.CALLBACK_FAILED),
        (lambda c: setattr(c, 'x', 1), FacadeErrorReason.CALLBACK_FAILED),
        (lambda c: _reenter(), FacadeErrorReason.CALLBACK_REENTRY),
    ],
    ids=['state-write', 'nested-write', 'unavailable', 'setattr', 'reentry'],
)
@pytest.mark.parametrize('family', ['filter', 'header', 'factory'])
async def test_caught_misbehaviour_still_fails_closed(
    action: Any, reason: FacadeErrorReason, family: str
) -> None:
  def tool_filter(tool: Any, readonly_context: Any = None) -> bool:
    _swallow(lambda: action(readonly_context))
    return True

  def header_provider(readonly_context: Any) -> dict[str, str]:
    _swallow(lambda: action(readonly_context))
    return {}

  def factory(
      tool_name: str, *, callback_context: Any = None, **kwargs: Any
  ) -> Optional[Any]:
    _swallow(lambda: action(callback_context))

    async def on_progress(*args: Any) -> None:
      del args

    return on_progress

  callbacks = _callbacks(
      {'a': [1]},
      tool_filter=tool_filter,
      header_provider=header_provider,
      progress_callback=factory,
  )
  if family == 'factory':
    # Progress is notification-only: a failed factory gives no handler.
    assert await callbacks.progress_for('refresh') is None
    return
  with pytest.raises(FacadeError) as caught:
    if family == 'filter':
      await callbacks.admit_tool(TOOL)
    else:
      await callbacks.headers()
  assert caught.value.reason is reason


async def test_progress_handler_closes_after_its_first_failure() -> None:
  deliveries: list[float] = []

  async def on_progress(progress: float, *args: Any) -> None:
    deliveries.append(progress)
    if progress == 1:
      _swallow(_reenter)

  handler = await _callbacks({}, progress_callback=on_progress).progress_for(
      'refresh'
  )
  assert handler is not None
  with pytest.raises(FacadeError) as caught:
    await handler(1, 3, None)
  assert caught.value.reason is FacadeErrorReason.CALLBACK_REENTRY
  await handler(2, 3, None)
  assert deliveries == [1] and handler.closed
