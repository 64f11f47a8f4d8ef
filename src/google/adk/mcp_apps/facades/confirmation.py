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


"""Confirmation of a governed app call: read-only context, one-shot permit.

`decide_confirmation` evaluates a toolset's `require_confirmation` once,
against a `ReadonlyConfirmationContext`; when confirmation is required, a
`ConfirmationPermit` seals the call's tool, server, binding revision and
arguments, and the call sends the sealed arguments exactly once.
`AppCallConfirmation` is what `call_app_tool(confirmation=...)` takes.
Design notes: docs/design/confirmation-permit.md.

Example:

  context = ReadonlyConfirmationContext.build(
      session=key, state=state, tool_name='buy', server_id='shop',
      arguments={'sku': 'A1'})
  if await decide_confirmation(spec.require_confirmation, context):
    permit = ConfirmationPermit.seal(
        tool_name='buy', server_id='shop', binding_revision=revision,
        arguments=context.arguments)
    sent = permit.redeem(
        tool_name='buy', server_id='shop', binding_revision=revision,
        arguments=context.arguments)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
import dataclasses
import hashlib
import inspect
import threading
from typing import Any
from typing import NoReturn
from typing import Optional
from typing import Union

from ...utils.context_utils import find_context_parameter
from ..canonical_json import envelope
from ..canonical_json import envelope_digest
from ..canonical_json import Purpose
from ..contracts.scope import SessionKey
from ..event_policy.callback_scope import CallbackFamily
from ..event_policy.callback_scope import restricted_callback
from .errors import FacadeError
from .errors import FacadeErrorReason
from .snapshot import plain_dict
from .snapshot import snapshot
from .snapshot import state_snapshot
from .snapshot import thaw

__all__ = [
    'AppCallConfirmation',
    'ConfirmationPermit',
    'ConfirmationPredicate',
    'ReadonlyConfirmationContext',
    'decide_confirmation',
    'governed_arguments',
]

ConfirmationPredicate = Union[bool, Callable[..., Any]]
"""A toolset's `require_confirmation`: a bool, or a sync or async callable
called with the call's arguments as keywords."""

_CONTEXT_NAMES = ('tool_context', 'confirmation_context')
"""Parameter names that receive the context (upstream's name, and ours)."""


class ReadonlyConfirmationContext:
  """What a confirmation predicate sees on the governed path.

  Identifiers, and deep-read-only snapshots of the Session state and of the
  call's arguments; nothing live. Every other attribute (`session`,
  `invocation_context`, `actions`, `save_artifact`, `request_credential`,
  ...) raises `FacadeError` (`UNAVAILABLE`), and the attempt is recorded:
  `decide_confirmation` fails closed on it even if the predicate catches
  the error. Setting an attribute raises `FacadeError` (`READ_ONLY`), as
  does writing into `state` or `arguments`.
  """

  __slots__ = (
      '_app_name',
      '_user_id',
      '_session_id',
      '_tool_name',
      '_server_id',
      '_state',
      '_arguments',
      '_refused',
  )

  _app_name: str
  _user_id: str
  _session_id: str
  _tool_name: str
  _server_id: str
  _state: Any
  _arguments: Any
  _refused: list[str]

  def __init__(
      self,
      *,
      app_name: str,
      user_id: str,
      session_id: str,
      tool_name: str,
      server_id: str,
      state: Any,
      arguments: Any,
  ) -> None:
    """Wraps values that are already snapshots; see `build`."""
    for name, value in (
        ('_app_name', app_name),
        ('_user_id', user_id),
        ('_session_id', session_id),
        ('_tool_name', tool_name),
        ('_server_id', server_id),
        ('_state', state),
        ('_arguments', arguments),
        ('_refused', []),
    ):
      object.__setattr__(self, name, value)

  @classmethod
  def build(
      cls,
      *,
      session: SessionKey,
      state: Optional[Mapping[str, Any]],
      tool_name: str,
      server_id: str,
      arguments: Optional[Mapping[str, Any]],
  ) -> ReadonlyConfirmationContext:
    """Snapshots `state` and `arguments` (each once) into a new context.

    Raises:
      FacadeError: A value is outside the snapshot domain (the call then
        fails closed).
    """
    return cls(
        app_name=session.app_name,
        user_id=session.user_id,
        session_id=session.session_id,
        tool_name=tool_name,
        server_id=server_id,
        state=state_snapshot(state),
        arguments=snapshot(plain_dict(arguments)),
    )

  @property
  def app_name(self) -> str:
    return self._app_name

  @property
  def user_id(self) -> str:
    return self._user_id

  @property
  def session_id(self) -> str:
    return self._session_id

  @property
  def tool_name(self) -> str:
    return self._tool_name

  @property
  def server_id(self) -> str:
    return self._server_id

  @property
  def state(self) -> Any:
    """A deep-read-only snapshot of the Session state."""
    return self._state

  @property
  def arguments(self) -> Any:
    """A deep-read-only snapshot of the call's arguments."""
    return self._arguments

  @property
  def refused(self) -> tuple[str, ...]:
    """The unavailable names something asked this context for."""
    return tuple(self._refused)

  def __getattr__(self, name: str) -> NoReturn:
    if name.startswith('__') and name.endswith('__'):
      raise AttributeError(name)  # Keep Python's protocol probes working.
    self._refused.append(name)
    raise FacadeError(
        FacadeErrorReason.UNAVAILABLE,
        f'a confirmation context has no {name!r}: it exposes identifiers'
        ' and read-only snapshots only',
    )

  def __setattr__(self, name: str, value: Any) -> NoReturn:
    del value
    raise FacadeError(
        FacadeErrorReason.READ_ONLY,
        f'a confirmation context cannot be changed (set {name!r})',
    )

  def __delattr__(self, name: str) -> NoReturn:
    raise FacadeError(
        FacadeErrorReason.READ_ONLY,
        f'a confirmation context cannot be changed (delete {name!r})',
    )


def _call_arguments(
    predicate: Callable[..., Any], context: ReadonlyConfirmationContext
) -> dict[str, Any]:
  """The keywords to call a predicate with, as upstream's `McpTool` would.

  The call's (read-only) arguments, filtered to the signature unless it
  takes `**kwargs`, and the context where upstream passes a `ToolContext`.

  Raises:
    FacadeError: `NEEDS_TOOL_CONTEXT` if a parameter is annotated with an
      ADK context type.
  """
  if find_context_parameter(predicate) is not None:
    raise FacadeError(
        FacadeErrorReason.NEEDS_TOOL_CONTEXT,
        'the confirmation predicate needs a live ToolContext, which a'
        ' governed app call never provides',
    )
  keywords = dict(context.arguments)
  try:
    parameters = inspect.signature(predicate).parameters
  except (TypeError, ValueError):
    return keywords
  names = set(parameters)
  takes_kwargs = any(
      p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
  )
  for name, parameter in parameters.items():
    if parameter.annotation in (
        ReadonlyConfirmationContext,
        'ReadonlyConfirmationContext',
    ):
      keywords[name] = context
  for name in _CONTEXT_NAMES:
    if name in names:
      keywords[name] = context
  if takes_kwargs:
    keywords.setdefault('tool_context', context)
    return keywords
  return {name: value for name, value in keywords.items() if name in names}


async def decide_confirmation(
    predicate: ConfirmationPredicate, context: ReadonlyConfirmationContext
) -> bool:
  """Whether a governed call needs confirmation; evaluates exactly once.

  A callable predicate is called once (awaited if it returns an awaitable)
  with the call's arguments as keywords (read-only snapshots) and the
  context where upstream would pass a `ToolContext` (`tool_context`,
  `confirmation_context`, a parameter annotated
  `ReadonlyConfirmationContext`, or `**kwargs`).

  Fails closed: a predicate that needs a live `ToolContext` (a parameter
  annotated with an ADK context type) is not called; one that raises, or
  that asked the context for anything unavailable or tried to re-enter its
  own Session (even if it caught the error), denies the call. Denial is this function raising: the call is
  never sent, and no approval is asked for.

  Args:
    predicate: The toolset's `require_confirmation`.
    context: The call's read-only context.

  Returns:
    Whether the call needs the deployment's approval.

  Raises:
    FacadeError: `NEEDS_TOOL_CONTEXT` or `PREDICATE_FAILED`: denied.
  """
  if not callable(predicate):
    return bool(predicate)
  keywords = _call_arguments(predicate, context)
  key = SessionKey(context.app_name, context.user_id, context.session_id)
  try:
    with restricted_callback(key, CallbackFamily.CONFIRMATION) as scope:
      outcome = predicate(**keywords)
      if inspect.isawaitable(outcome):
        outcome = await outcome
      required = bool(outcome)
  except Exception as e:
    raise FacadeError(
        FacadeErrorReason.PREDICATE_FAILED,
        f'the confirmation predicate failed ({type(e).__name__}); the call'
        ' is denied',
    ) from e
  reached = context.refused + tuple(scope.refused)
  if reached:
    raise FacadeError(
        FacadeErrorReason.PREDICATE_FAILED,
        'the confirmation predicate reached for'
        f' {", ".join(reached)}; the call is denied',
    )
  return required


class _Spent:
  """A permit's one-shot flag (the permit itself is frozen)."""

  def __init__(self) -> None:
    self.lock = threading.Lock()
    self.spent = False


@dataclasses.dataclass(frozen=True, eq=False)
class ConfirmationPermit:
  """A sealed, one-shot approval of exactly one call.

  Attributes:
    tool_name: The native tool name approved.
    server_id: The server the call goes to.
    binding_revision: The binding revision when the permit was sealed.
    arguments_digest: `sha256:<hex>` of the arguments' canonical envelope
      (purpose `confirmation-arguments`).
    sealed_bytes: That envelope: what the digest is over.
    arguments: The sealed arguments, a deep-read-only snapshot.
  """

  tool_name: str
  server_id: str
  binding_revision: str
  arguments_digest: str
  sealed_bytes: bytes = dataclasses.field(repr=False)
  arguments: Any = dataclasses.field(repr=False)
  _spent: _Spent = dataclasses.field(
      default_factory=_Spent, repr=False, compare=False
  )

  @classmethod
  def seal(
      cls,
      *,
      tool_name: str,
      server_id: str,
      binding_revision: str,
      arguments: Any,
  ) -> ConfirmationPermit:
    """Seals a permit over a snapshot of `arguments`.

    Raises:
      FacadeError: The arguments are outside the snapshot domain.
      CanonicalJsonError: They have no canonical form.
    """
    sealed = snapshot(plain_dict(arguments))
    data = envelope(Purpose.CONFIRMATION_ARGUMENTS, thaw(sealed))
    return cls(
        tool_name=tool_name,
        server_id=server_id,
        binding_revision=binding_revision,
        arguments_digest='sha256:' + hashlib.sha256(data).hexdigest(),
        sealed_bytes=data,
        arguments=sealed,
    )

  @property
  def consumed(self) -> bool:
    """Whether a call has used the permit."""
    return self._spent.spent

  def verify(
      self,
      *,
      tool_name: str,
      server_id: str,
      binding_revision: str,
      arguments: Any,
  ) -> None:
    """Checks that the permit covers this exact call (it is not used).

    Raises:
      FacadeError: `PERMIT_TOOL_MISMATCH`, `PERMIT_SERVER_MISMATCH`,
        `PERMIT_REVISION_MISMATCH`, `PERMIT_ARGUMENTS_MISMATCH`, or
        `PERMIT_CONSUMED`.
    """
    if self._spent.spent:
      raise FacadeError(
          FacadeErrorReason.PERMIT_CONSUMED,
          'the confirmation permit was already used by its call',
      )
    checks = (
        (
            tool_name == self.tool_name,
            FacadeErrorReason.PERMIT_TOOL_MISMATCH,
            f'it approves tool {self.tool_name!r}, not {tool_name!r}',
        ),
        (
            server_id == self.server_id,
            FacadeErrorReason.PERMIT_SERVER_MISMATCH,
            f'it approves server {self.server_id!r}, not {server_id!r}',
        ),
        (
            binding_revision == self.binding_revision,
            FacadeErrorReason.PERMIT_REVISION_MISMATCH,
            'the binding revision changed since it was sealed',
        ),
    )
    for holds, reason, why in checks:
      if not holds:
        raise FacadeError(reason, f'confirmation permit refused: {why}')
    presented = envelope_digest(
        Purpose.CONFIRMATION_ARGUMENTS, thaw(snapshot(plain_dict(arguments)))
    )
    if presented != self.arguments_digest:
      raise FacadeError(
          FacadeErrorReason.PERMIT_ARGUMENTS_MISMATCH,
          'confirmation permit refused: it approves other arguments',
      )

  def redeem(
      self,
      *,
      tool_name: str,
      server_id: str,
      binding_revision: str,
      arguments: Any,
  ) -> dict[str, Any]:
    """Verifies and consumes the permit; the arguments to send.

    Returns:
      Plain, independent copies of the sealed arguments.

    Raises:
      FacadeError: As `verify`.
    """
    with self._spent.lock:
      self.verify(
          tool_name=tool_name,
          server_id=server_id,
          binding_revision=binding_revision,
          arguments=arguments,
      )
      self._spent.spent = True
    sent: dict[str, Any] = thaw(self.arguments)
    return sent


ArgumentCallback = Callable[[dict[str, Any]], Any]
"""A before-send callback: gets its own copy of the arguments; its return
value and its changes to the copy are ignored; raising aborts the call."""


@dataclasses.dataclass(frozen=True)
class AppCallConfirmation:
  """The confirmation a governed `call_app_tool` applies.

  Attributes:
    predicate: The toolset's `require_confirmation`.
    session: The Session the View belongs to (the context's identifiers).
    binding_revision: Returns the current binding revision; read when the
      permit is sealed and again just before the call is sent.
    approve: The deployment's confirmation step (its UI): gets the sealed
      permit, returns whether the user approved.
    state: The Session state the predicate may read (snapshotted once).
    timeout: Seconds `approve` may take; None waits as long as it takes.
    callbacks: Before-send callbacks, run after approval, each with its
      own independent copy of the sealed arguments.
  """

  predicate: ConfirmationPredicate
  session: SessionKey
  binding_revision: Callable[[], str]
  approve: Callable[[ConfirmationPermit], Awaitable[bool]]
  state: Optional[Mapping[str, Any]] = None
  timeout: Optional[float] = None
  callbacks: Sequence[ArgumentCallback] = ()

  async def arguments_to_send(
      self,
      *,
      tool_name: str,
      server_id: str,
      arguments: Optional[Mapping[str, Any]],
  ) -> dict[str, Any]:
    """`governed_arguments` of this confirmation (what `call_app_tool`
    calls)."""
    return await governed_arguments(
        self, tool_name=tool_name, server_id=server_id, arguments=arguments
    )


async def governed_arguments(
    confirmation: AppCallConfirmation,
    *,
    tool_name: str,
    server_id: str,
    arguments: Optional[Mapping[str, Any]],
) -> dict[str, Any]:
  """Applies a governed call's confirmation; the arguments to send.

  Snapshots the arguments once, decides once; if confirmation is required,
  seals a permit and awaits the deployment's approval; runs the callbacks
  on independent copies; then consumes the permit and returns fresh plain
  copies of the sealed arguments. Nothing is sent by this function, and
  nothing is recorded: a refusal leaves no trace.

  Args:
    confirmation: The call's confirmation.
    tool_name: The native tool name.
    server_id: The server the call goes to.
    arguments: The arguments the View sent (None is empty).

  Returns:
    The arguments to send: independent of `arguments` and of every copy a
    predicate, approver or callback was given.

  Raises:
    FacadeError: `NEEDS_TOOL_CONTEXT` or `PREDICATE_FAILED` (as
      `decide_confirmation`), `CONFIRMATION_DENIED` (`approve` said no,
      answered anything but `True`, or raised), `CONFIRMATION_TIMEOUT`,
      a permit mismatch (`PERMIT_REVISION_MISMATCH` when the binding
      revision changed during approval), or a snapshot refusal.
  """
  context = ReadonlyConfirmationContext.build(
      session=confirmation.session,
      state=confirmation.state,
      tool_name=tool_name,
      server_id=server_id,
      arguments=arguments,
  )
  sealed = context.arguments
  permit: Optional[ConfirmationPermit] = None
  if await decide_confirmation(confirmation.predicate, context):
    permit = ConfirmationPermit.seal(
        tool_name=tool_name,
        server_id=server_id,
        binding_revision=confirmation.binding_revision(),
        arguments=sealed,
    )
    try:
      approved = await asyncio.wait_for(
          confirmation.approve(permit), confirmation.timeout
      )
    except asyncio.TimeoutError:
      raise FacadeError(
          FacadeErrorReason.CONFIRMATION_TIMEOUT,
          f'no confirmation of {tool_name!r} within'
          f' {confirmation.timeout} seconds; the call is denied',
      ) from None
    except Exception as e:
      raise FacadeError(
          FacadeErrorReason.CONFIRMATION_DENIED,
          f'the confirmation step of {tool_name!r} failed; the call is denied',
      ) from e
    if approved is not True:
      raise FacadeError(
          FacadeErrorReason.CONFIRMATION_DENIED,
          f'the call of {tool_name!r} was not confirmed',
      )
  for callback in confirmation.callbacks:
    outcome = callback(thaw(sealed))
    if inspect.isawaitable(outcome):
      await outcome
  if permit is None:
    sent: dict[str, Any] = thaw(sealed)
    return sent
  return permit.redeem(
      tool_name=tool_name,
      server_id=server_id,
      binding_revision=confirmation.binding_revision(),
      arguments=sealed,
  )
