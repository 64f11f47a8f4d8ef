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

"""A View's `ui/update-model-context`: a permit-gated atomic commit.

The View channel checks the params at intake (`parse_update`) and hands
the request to `update_model_context`, which owns the Session, runs the
channel's post-queue barrier, re-checks the advertised modalities and
commits the register (`context_registers`) with no await in between.

Example:

  body = parse_update(params)            # at intake, before queueing
  await update_model_context(channel, registry, params, size, live)
"""

from __future__ import annotations

from typing import Any
from typing import Final
from typing import Mapping
from typing import Optional
from typing import Protocol

from ..bootstrap.render import ViewGrant
from ..coordination.coordinator import refuse_reentry
from ..coordination.coordinator import session_coordinator
from ..profile.capabilities import ContextModality
from .context_registers import context_registers
from .context_registers import RegisterBody
from .errors import OperationError
from .errors import OperationErrorReason

__all__ = [
    'UPDATE_MODEL_CONTEXT',
    'UPDATE_OPERATION',
    'parse_update',
    'update_model_context',
]

UPDATE_MODEL_CONTEXT: Final = 'ui/update-model-context'
"""The View's method."""

UPDATE_OPERATION: Final = 'app.update_model_context'
"""The operation name an update owns its Session under."""

_BLOCK_FIELDS: Final = frozenset({'type', 'text', 'annotations', '_meta'})


class UpdatingChannel(Protocol):
  """What an update reads of its View channel."""

  grant: ViewGrant
  view_id: str

  async def barrier(
      self,
      method: str,
      uri: Optional[str] = None,
      size: Optional[int] = None,
  ) -> None:
    """The channel's post-queue barrier."""
    ...


class UpdatingRegistry(Protocol):
  """What an update reads of the binding registry."""

  @property
  def profile(self) -> Any:
    """The profile bound now."""
    ...

  def effective(self, toolset_id: str) -> Any:
    """The narrowed policy in force for a toolset."""
    ...


def _invalid(detail: str) -> OperationError:
  return OperationError(OperationErrorReason.INVALID_PARAMS, detail)


def parse_update(params: Mapping[str, Any]) -> RegisterBody:
  """The update's validated payload (v1: text blocks, structuredContent).

  Raises:
    OperationError: `INVALID_PARAMS` for any other field, a block of an
      undeclared modality (image, audio, resources) or a malformed one.
  """
  if not set(params) <= {'content', 'structuredContent'}:
    raise _invalid('content and structuredContent only')
  content = params.get('content', [])
  if not isinstance(content, list):
    raise _invalid('content')
  texts: list[str] = []
  for block in content:
    if not isinstance(block, Mapping) or block.get('type') != 'text':
      raise _invalid('an undeclared modality')
    if (
        not isinstance(block.get('text'), str)
        or not set(block) <= _BLOCK_FIELDS
        or not isinstance(block.get('annotations', {}), Mapping)
        or not isinstance(block.get('_meta', {}), Mapping)
    ):
      raise _invalid('a text block')
    texts.append(block['text'])
  structured = params.get('structuredContent')
  if structured is not None and not isinstance(structured, Mapping):
    raise _invalid('structuredContent')
  return RegisterBody.of(texts, structured)


def _modalities(body: RegisterBody) -> frozenset[ContextModality]:
  used: set[ContextModality] = set()
  if body.texts:
    used.add(ContextModality.TEXT)
  if body.structured is not None:
    used.add(ContextModality.STRUCTURED_CONTENT)
  return frozenset(used)


async def update_model_context(
    channel: UpdatingChannel,
    registry: UpdatingRegistry,
    params: Mapping[str, Any],
    size: int,
    live: Any,
) -> Optional[int]:
  """Owns the Session, re-checks the permit, commits the register.

  Args:
    channel: The View's channel (its grant, View id and barrier).
    registry: The binding registry serving the View.
    params: The request's params, already checked by `parse_update`.
    size: The request's bytes (the barrier re-checks them).
    live: The request's live entry; a View-cancelled update commits
      nothing.

  Returns:
    The commit sequence, or None when the update cleared the register.

  Raises:
    OperationError: The barrier's refusal, `MODALITY_WITHDRAWN`,
      `LIMIT_EXCEEDED`, `SUPERSEDED` or `CANCELLED`; nothing changed.
  """
  grant = channel.grant
  body = parse_update(params)
  registers = context_registers()
  # Taken at intake, before queueing: it orders the View's updates.
  ticket = registers.admit(grant.session, channel.view_id)
  refuse_reentry(grant.session, UPDATE_OPERATION)
  async with session_coordinator().owned(grant.session, UPDATE_OPERATION):
    await channel.barrier(UPDATE_MODEL_CONTEXT, size=size)
    # From here to the commit nothing awaits: the checks and the commit
    # are one step on the loop.
    if getattr(live, 'cancelled', False):
      raise OperationError(OperationErrorReason.CANCELLED, 'by the View')
    capabilities = registry.effective(
        grant.binding.toolset_id
    ).host_capabilities
    advertised = (
        capabilities.update_model_context if capabilities is not None else None
    ) or frozenset()
    if not _modalities(body) <= advertised:
      raise OperationError(
          OperationErrorReason.MODALITY_WITHDRAWN, 'updateModelContext'
      )
    profile = registry.profile
    if profile is None:
      raise OperationError(OperationErrorReason.BINDING_CHANGED, 'unbound')
    return registers.commit(
        grant.session,
        channel.view_id,
        grant.binding.function_call_id,
        body,
        max_bytes=(
            registry.effective(grant.binding.toolset_id).register_max_bytes
            or profile.limits.register_max_bytes
        ),
        max_total_bytes=profile.limits.registers_max_total_bytes,
        ticket=ticket,
    )
