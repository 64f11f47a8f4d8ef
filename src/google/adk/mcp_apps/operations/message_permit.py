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

"""The protected permit of a View's `ui/message` turn, and its confirmation.

The View's channel validates, authorizes and confirms a message without
owning the Session, then mints a `MessagePermit` and delivers the message
as one `Runner.run_async` turn under it. The turn claims the permit once it
owns the Session and revalidates it before any callback or append; the
permit's provenance is the turn's admission. Design:
docs/design/view-channel.md.

Example:

  permit = MessagePermit(session=key, view_id=view_id, lease=lease,
                         binding_revision=revision, incarnation=3,
                         confirmation=CONFIRMED, texts=('hi',),
                         recheck=recheck)
  with permitted_turn(permit):
    async for _ in runner.run_async(user_id=user, session_id=sid,
                                    new_message=content):
      pass
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
import contextlib
import dataclasses
import hashlib
import threading
from typing import Any
from typing import Final
from typing import Optional

from ..canonical_json import canonicalize
from ..contracts.scope import SessionKey
from ..event_policy.provenance import admitted
from ..event_policy.provenance import APP_MESSAGE_TURN
from ..event_policy.provenance import Provenance
from .errors import OperationError
from .errors import OperationErrorReason

__all__ = [
    'CONFIRMED',
    'MessageConfirmation',
    'MessageConfirmationRequest',
    'MessagePermit',
    'attest_every_message',
    'content_texts',
    'lease_digest',
    'payload_digest',
]

CONFIRMED: Final = 'confirmed'
"""The confirmation outcome a permit is minted with (the host's
`MessageConfirmation` answered True)."""

_PAYLOAD_DOMAIN: Final = b'adk-ui-message/v1\n'
_LEASE_DOMAIN: Final = b'adk-view-lease/v1\n'


@dataclasses.dataclass(frozen=True)
class MessageConfirmationRequest:
  """What the host's message confirmation sees: identifiers and the text.

  Attributes:
    session: The View's Session.
    view_id: The View that sent the message.
    principal_id: The principal the View was bootstrapped for.
    texts: The message's text blocks, in order (what the turn appends).
    payload_digest: The digest the permit will bind (`payload_digest`).
  """

  session: SessionKey
  view_id: str
  principal_id: str
  texts: tuple[str, ...]
  payload_digest: str


MessageConfirmation = Callable[[MessageConfirmationRequest], Awaitable[bool]]
"""The host's confirmation of a `ui/message`: its attestation or its own
ask of the user. Only `True` confirms; False, any other answer or an
exception leaves the message unconfirmed (no turn)."""


async def attest_every_message(request: MessageConfirmationRequest) -> bool:
  """Host attestation that its policy admits every View message.

  For a host whose own UI already stands for the user's consent, and for
  local development; the channel's default confirms nothing.
  """
  del request
  return True


def payload_digest(texts: Sequence[str]) -> str:
  """`sha256:<hex>` of a message's canonical payload (ADK Canonical JSON v1
  of `{"role": "user", "content": [text blocks]}`, domain-separated)."""
  canonical = canonicalize({
      'role': 'user',
      'content': [{'type': 'text', 'text': text} for text in texts],
  })
  return 'sha256:' + hashlib.sha256(_PAYLOAD_DOMAIN + canonical).hexdigest()


def lease_digest(token: str) -> str:
  """The lease identity a permit binds: a digest, never the token."""
  return hashlib.sha256(_LEASE_DOMAIN + token.encode()).hexdigest()


def content_texts(message: Any) -> Optional[tuple[str, ...]]:
  """The text blocks of a user `Content` of text parts only, else None."""
  if message is None or getattr(message, 'role', None) != 'user':
    return None
  texts: list[str] = []
  for part in getattr(message, 'parts', None) or ():
    dumped = part.model_dump(exclude_none=True)
    if set(dumped) != {'text'} or not isinstance(dumped['text'], str):
      return None
    texts.append(dumped['text'])
  return tuple(texts) if texts else None


Recheck = Callable[['MessagePermit'], Awaitable[None]]
"""The channel's revalidation (its barrier and identities); raises
`OperationError` when stale."""


@contextlib.contextmanager
def _admitted_turn(provenance: Provenance) -> Iterator[Provenance]:
  scope = admitted(provenance)
  entered = scope.__enter__()
  try:
    yield entered
  finally:
    try:
      scope.__exit__(None, None, None)
    except ValueError:
      pass  # The turn was closed from another context.


class MessagePermit:
  """The protected permit of one accepted `ui/message`.

  Minted by the channel after validation, authorization and confirmation,
  without owning the Session; claimed by exactly one turn, which
  revalidates it once the Session is owned (`revalidate`). Teardown
  invalidates it (`invalidate`) while it is queued; once a turn is
  admitted under it, invalidation no longer applies (that turn's effects
  are the partial-commit rule's).

  Attributes:
    session: The Session the turn runs on.
    view_id: The View that sent the message.
    lease: The channel lease's identity (`lease_digest`).
    binding_revision: The binding revision the message was accepted under.
    binding_generation: The registry's binding generation then.
    incarnation: The Session incarnation of the View's grant.
    confirmation: The confirmation outcome (`CONFIRMED`).
    payload_digest: The canonical payload's digest.
    provenance: The turn's admission (`invocation_origin=mcp_app`).
  """

  def __init__(
      self,
      *,
      session: SessionKey,
      view_id: str,
      lease: str,
      binding_revision: str,
      binding_generation: int,
      incarnation: int,
      confirmation: str,
      texts: Sequence[str],
      recheck: Recheck,
      provenance: Provenance = APP_MESSAGE_TURN,
  ) -> None:
    self.session = session
    self.view_id = view_id
    self.lease = lease
    self.binding_revision = binding_revision
    self.binding_generation = binding_generation
    self.incarnation = incarnation
    self.confirmation = confirmation
    self.payload_digest = payload_digest(texts)
    self.provenance = provenance
    self._recheck = recheck
    self._lock = threading.Lock()
    self._claimed = False
    self._admitted = False
    self._invalidated: Optional[OperationErrorReason] = None
    self.refusal: Optional[OperationError] = None
    """The refusal `revalidate` raised, if any (the channel answers it)."""

  @property
  def claimed(self) -> bool:
    """Whether a turn took the permit."""
    return self._claimed

  @property
  def admitted(self) -> bool:
    """Whether its turn passed revalidation."""
    return self._admitted

  @property
  def invalidated(self) -> Optional[OperationErrorReason]:
    """Why the permit was invalidated, if it was."""
    return self._invalidated

  def claim(self) -> bool:
    """Takes the permit for one turn; False once a turn took it."""
    with self._lock:
      if self._claimed:
        return False
      self._claimed = True
      return True

  def invalidate(self, reason: OperationErrorReason) -> bool:
    """Invalidates the permit unless its turn was already admitted.

    Returns:
      Whether the permit is now invalid.
    """
    with self._lock:
      if self._admitted:
        return False
      if self._invalidated is None:
        self._invalidated = reason
      return True

  async def revalidate(
      self, new_message: Any
  ) -> contextlib.AbstractContextManager[Any]:
    """Revalidates the permit for `new_message`, the Session owned.

    Returns:
      The turn's admission scope (the permit's provenance).

    Raises:
      OperationError: Stale (`refusal` keeps it): the reason the channel's
        recheck gave, `MESSAGE_PERMIT_STALE`, or the invalidation's.
    """
    try:
      self._fresh()
      await self._recheck(self)
      texts = content_texts(new_message)
      if texts is None or payload_digest(texts) != self.payload_digest:
        raise OperationError(
            OperationErrorReason.MESSAGE_PERMIT_STALE,
            'the turn delivers another message than the permit admits',
        )
      with self._lock:
        self._fresh()
        self._admitted = True
    except OperationError as refusal:
      self.refusal = refusal
      raise
    return _admitted_turn(self.provenance)

  def _fresh(self) -> None:
    if self._invalidated is not None:
      raise OperationError(
          self._invalidated, 'the message permit was invalidated'
      )
