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

"""Two-phase batch admission: one fresh, class-neutral snapshot per batch.

Before any call of a profile-bound batch starts, every bound toolset the
batch calls is listed afresh on both connection classes (app-safe first,
by the same algorithm that built the model's catalog), and each call is
checked against that snapshot: the tool the model saw must still be
declared exactly so, on the same class, generation and credentials. The
snapshot then says which calls are UI-associated. Only bounded listing
happens here: no tool, callback, confirmation or effect.

Usage:

  snapshot = await admit_batch(ReadonlyContext(invocation_context), calls)
  if snapshot.mixed:
    ...  # refuse the batch
"""

from __future__ import annotations

import dataclasses
from typing import Any
from typing import Optional
from typing import Sequence
from typing import TYPE_CHECKING

from ..affinity.admitted_tool import BatchDiscovery
from ..affinity.errors import ConnectionAffinityError
from ..affinity.errors import StaleToolHandleError
from ..affinity.routing import AppSafeMcpTool
from ..affinity.tool_handles import BoundToolHandle
from ..affinity.tool_handles import comparable_projection
from ..affinity.tool_handles import differing_fields
from ..affinity.tool_handles import ExecutionClass
from ..affinity.tool_handles import TwoClassCatalog
from ..catalog.listing import ToolListingError
from .errors import BatchError
from .errors import BatchErrorReason

if TYPE_CHECKING:
  from ...agents.readonly_context import ReadonlyContext
  from ...tools.base_tool import BaseTool


def discovery_of(tool: BaseTool) -> Optional[BatchDiscovery]:
  """The toolset a batch admission lists for `tool`; None if not bound."""
  discovery: Optional[BatchDiscovery] = getattr(tool, 'batch_discovery', None)
  return discovery


@dataclasses.dataclass(frozen=True)
class AdmittedCall:
  """One call of an admitted batch, as the snapshot classified it.

  Attributes:
    function_call_id: The call's id.
    tool_name: The model-facing tool name.
    handle: The fresh catalog entry the call runs against; None for a
      call outside every bound toolset.
    ui_associated: Whether the snapshot makes the call UI-associated.
  """

  function_call_id: Optional[str]
  tool_name: str
  handle: Optional[BoundToolHandle]
  ui_associated: bool


@dataclasses.dataclass(frozen=True)
class BatchSnapshot:
  """The immutable batch-wide classification, in the model's call order.

  Attributes:
    calls: One entry per call.
  """

  calls: tuple[AdmittedCall, ...]

  @property
  def ui_calls(self) -> int:
    """How many calls are UI-associated."""
    return sum(call.ui_associated for call in self.calls)

  @property
  def mixed(self) -> bool:
    """Whether UI-associated and other calls are in the same batch."""
    return 0 < self.ui_calls < len(self.calls)

  @property
  def all_ui(self) -> bool:
    """Whether every call is UI-associated."""
    return bool(self.calls) and self.ui_calls == len(self.calls)


def _changed(tool_name: str, what: str) -> BatchError:
  return BatchError(
      BatchErrorReason.TOOL_CHANGED,
      f'MCP tool {tool_name!r} changed since the model saw it ({what})',
      tool_name=tool_name,
  )


def _check_call(
    tool: Any, tool_name: str, catalog: TwoClassCatalog
) -> BoundToolHandle:
  """The fresh handle the call may run against, or a typed refusal."""
  native = tool.raw_mcp_tool.name
  fresh = catalog.handle(native)
  if fresh is None:
    for refused_name, disagreement in catalog.refused:
      if refused_name == native:
        raise BatchError(
            BatchErrorReason.CLASS_DISAGREEMENT,
            f'MCP tool {tool_name!r}: {disagreement.detail}',
            tool_name=tool_name,
        )
    raise BatchError(
        BatchErrorReason.TOOL_REMOVED,
        f'MCP tool {tool_name!r} is no longer listed',
        tool_name=tool_name,
    )
  if isinstance(tool, AppSafeMcpTool):
    shown = tool.bound_tool_handle
    if fresh.execution_class is not ExecutionClass.APP_SAFE:
      raise _changed(tool_name, 'it is no longer UI-associated')
    if fresh.credential_context != shown.credential_context:
      raise BatchError(
          BatchErrorReason.CREDENTIALS_CHANGED,
          f'MCP tool {tool_name!r} was listed for other credentials',
          tool_name=tool_name,
      )
    if fresh.catalog_generation != shown.catalog_generation:
      raise _changed(tool_name, 'its connection generation changed')
    shown_projection = shown.projection
  else:
    if fresh.execution_class is not ExecutionClass.CALLBACKED:
      raise _changed(tool_name, 'it is UI-associated now')
    shown_projection = comparable_projection(tool.raw_mcp_tool)
  fields = differing_fields(shown_projection, fresh.projection)
  if fields:
    raise _changed(tool_name, 'differs in ' + ', '.join(fields))
  return fresh


async def _discover(
    discovery: BatchDiscovery, readonly_context: ReadonlyContext
) -> TwoClassCatalog:
  try:
    return await discovery.discover_for_batch(readonly_context)
  except StaleToolHandleError as stale:
    raise BatchError(
        BatchErrorReason.CREDENTIALS_CHANGED, str(stale)
    ) from stale
  except (ToolListingError, ConnectionAffinityError) as lost:
    raise BatchError(
        BatchErrorReason.DISCOVERY_FAILED,
        f'The called MCP tools could not be listed afresh: {lost}',
    ) from lost
  except Exception as failure:  # pylint: disable=broad-exception-caught
    # A transport or server failure: the batch cannot be classified, so
    # none of it runs. ADK wraps a failed listing of its own connection in
    # a `ConnectionError`; the typed listing error under it says why.
    cause = _listing_cause(failure)
    detail = str(cause) if cause is not None else type(failure).__name__
    raise BatchError(
        BatchErrorReason.DISCOVERY_FAILED,
        f'The called MCP tools could not be listed afresh: {detail}',
    ) from failure


def _listing_cause(error: BaseException) -> Optional[ToolListingError]:
  cause: Optional[BaseException] = error
  seen = 0
  while cause is not None and seen < 8:
    if isinstance(cause, ToolListingError):
      return cause
    cause = cause.__cause__ or cause.__context__
    seen += 1
  return None


async def admit_batch(
    readonly_context: ReadonlyContext,
    calls: Sequence[tuple[Optional[str], str, BaseTool]],
) -> BatchSnapshot:
  """Lists every bound toolset of the batch once and classifies each call.

  Args:
    readonly_context: The invoking agent's context (it selects the
      caller's generation and credentials).
    calls: `(function_call_id, model-facing name, tool)` per call, in the
      model's order.

  Returns:
    The snapshot.

  Raises:
    BatchError: A listing failed or a called tool changed; the whole batch
      is refused and nothing of it runs.
  """
  catalogs: dict[int, TwoClassCatalog] = {}
  listed: list[BatchDiscovery] = []
  admitted: list[AdmittedCall] = []
  try:
    for call_id, name, tool in calls:
      discovery = discovery_of(tool)
      if discovery is None:
        admitted.append(AdmittedCall(call_id, name, None, False))
        continue
      catalog = catalogs.get(id(discovery))
      if catalog is None:
        # Each bound toolset once per batch, in the order the calls name
        # them.
        listed.append(discovery)
        catalog = await _discover(discovery, readonly_context)
        catalogs[id(discovery)] = catalog
      fresh = _check_call(tool, name, catalog)
      admitted.append(
          AdmittedCall(
              call_id,
              name,
              fresh,
              fresh.execution_class is ExecutionClass.APP_SAFE,
          )
      )
  except BatchError:
    # What the model was shown is stale: its next step lists again.
    for discovery in listed:
      discovery.forget_catalog()
    raise
  return BatchSnapshot(tuple(admitted))
