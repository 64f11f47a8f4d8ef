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

"""The resource-read policy: which resource URIs a View may read.

A View may read the widget URI its descriptor declares and whatever the
host profile's entries admit: an exact entry admits one canonical URI, a
prefix entry admits a URI and the path segments beneath it (never across a
scheme, authority or `%2F`). Requests and every returned item are checked
on `CanonicalUri` values; `revision` digests everything that decides
admission. The matching rules are in docs/design/resources.md.

Example:

  policy = ResourceReadPolicy(
      'ui://bqaa/dash', [ResourcePolicyEntry.prefix('ui://bqaa/assets/')]
  )
  policy.check('ui://bqaa/assets/app.js')  # Else ResourceReadDeniedError.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
from typing import Iterable
from typing import Optional
from typing import Union

from ..errors import McpAppsError
from .uri import CanonicalUri
from .uri import DEFAULT_URI_CANONICALIZER
from .uri import McpAppUriError
from .uri import UriCanonicalizer

_REVISION_FORMAT = 1


class ResourceMatchKind(enum.Enum):
  """How a policy entry matches a URI."""

  EXACT = 'exact'
  """Admits exactly the entry's canonical URI."""

  PREFIX = 'prefix'
  """Admits the entry's URI and the URIs beneath it, segment-bounded."""


@dataclasses.dataclass(frozen=True)
class ResourcePolicyEntry:
  """One profile entry that widens what a View may read.

  The URI is canonicalized, and checked, when the entry is put in a
  `ResourceReadPolicy`; a policy's `entries` hold canonical strings.

  Attributes:
    uri: The URI of the entry.
    kind: Whether the entry is exact or prefix-inclusive.
  """

  uri: str
  kind: ResourceMatchKind

  @classmethod
  def exact(cls, uri: Union[str, CanonicalUri]) -> ResourcePolicyEntry:
    """An entry that admits exactly `uri`."""
    return cls(str(uri), ResourceMatchKind.EXACT)

  @classmethod
  def prefix(cls, uri: Union[str, CanonicalUri]) -> ResourcePolicyEntry:
    """An entry that admits `uri` and its segment-bounded sub-resources."""
    return cls(str(uri), ResourceMatchKind.PREFIX)


class ResourceReadDenialReason(enum.Enum):
  """Why a resource read was refused."""

  INVALID_URI = 'invalid_uri'
  """The URI could not be canonicalized."""

  NOT_ADMITTED = 'not_admitted'
  """The URI is neither the widget URI nor admitted by a profile entry."""


class ResourceReadDeniedError(McpAppsError):
  """A resource read is outside the resource-read policy.

  Raised before any remote read is issued for a request, and for a response
  item that is outside the policy.

  Attributes:
    reason: Why the read was denied.
    uri_excerpt: A truncated `repr` of the requested URI, safe to log.
    canonical_uri: The canonical URI, or None if the URI is invalid.
    policy_revision: The revision of the policy that denied the read.
  """

  def __init__(
      self,
      reason: ResourceReadDenialReason,
      *,
      uri_excerpt: str,
      policy_revision: str,
      canonical_uri: Optional[CanonicalUri] = None,
      detail: str = '',
  ) -> None:
    self.reason = reason
    self.uri_excerpt = uri_excerpt
    self.policy_revision = policy_revision
    self.canonical_uri = canonical_uri
    message = f'Resource read of {uri_excerpt} denied: {reason.value}'
    super().__init__(f'{message} ({detail})' if detail else message)


def _excerpt(uri: object) -> str:
  text = (
      str(uri) if isinstance(uri, (str, CanonicalUri)) else type(uri).__name__
  )
  if len(text) <= 80:
    return repr(text)
  return f'{text[:80]!r}... ({len(text)} characters)'


def _within_prefix(prefix: CanonicalUri, candidate: CanonicalUri) -> bool:
  if (
      candidate.scheme != prefix.scheme
      or candidate.authority != prefix.authority
  ):
    return False
  if candidate.path == prefix.path:
    return True
  boundary = prefix.path if prefix.path.endswith('/') else prefix.path + '/'
  return candidate.path.startswith(boundary)


@dataclasses.dataclass(frozen=True, init=False)
class ResourceReadPolicy:
  """Decides which resource URIs one View may read.

  Attributes:
    widget_uri: The canonical widget URI the View's descriptor declares.
    entries: The profile entries, canonical, deduplicated and sorted.
    revision: A digest of everything that decides admission.
    canonicalizer: The canonicalization rules the policy matches under.
  """

  widget_uri: CanonicalUri
  entries: tuple[ResourcePolicyEntry, ...]
  revision: str
  canonicalizer: UriCanonicalizer = dataclasses.field(compare=False, repr=False)
  _exact: frozenset[CanonicalUri] = dataclasses.field(compare=False, repr=False)
  _prefixes: tuple[CanonicalUri, ...] = dataclasses.field(
      compare=False, repr=False
  )

  def __init__(
      self,
      widget_uri: Union[str, CanonicalUri],
      entries: Iterable[ResourcePolicyEntry] = (),
      *,
      canonicalizer: Optional[UriCanonicalizer] = None,
  ) -> None:
    """Creates the policy for one View.

    Args:
      widget_uri: The widget URI declared by the View's descriptor.
      entries: The profile's entries; none means the widget URI only.
      canonicalizer: The profile's canonicalization rules; the built-in
        rules if None.

    Raises:
      McpAppUriError: If the widget URI or an entry URI is invalid.
      ValueError: If a prefix entry has a query or is not hierarchical.
    """
    canonicalizer = canonicalizer or DEFAULT_URI_CANONICALIZER
    widget = canonicalizer.canonicalize(widget_uri)
    canonical_entries: dict[tuple[str, str], CanonicalUri] = {}
    for entry in entries:
      if not isinstance(entry, ResourcePolicyEntry):
        raise ValueError(f'Not a ResourcePolicyEntry: {entry!r}')
      uri = canonicalizer.canonicalize(entry.uri)
      if entry.kind is ResourceMatchKind.PREFIX:
        if uri.query is not None:
          raise ValueError(f'Prefix entry {_excerpt(uri)} has a query')
        if uri.authority is None and not uri.path.startswith('/'):
          raise ValueError(f'Prefix entry {_excerpt(uri)} is not hierarchical')
      canonical_entries[(entry.kind.value, str(uri))] = uri
    keys = sorted(canonical_entries)
    revision_input = json.dumps(
        {
            'format': _REVISION_FORMAT,
            'canonicalizer': canonicalizer.revision,
            'widget_uri': str(widget),
            'entries': keys,
        },
        sort_keys=True,
        separators=(',', ':'),
    )
    revision = 'sha256:' + hashlib.sha256(revision_input.encode()).hexdigest()
    fields = {
        'widget_uri': widget,
        'entries': tuple(
            ResourcePolicyEntry(uri, ResourceMatchKind(kind))
            for kind, uri in keys
        ),
        'revision': revision,
        'canonicalizer': canonicalizer,
        '_exact': frozenset(
            [widget]
            + [
                canonical_entries[key]
                for key in keys
                if key[0] == ResourceMatchKind.EXACT.value
            ]
        ),
        '_prefixes': tuple(
            canonical_entries[key]
            for key in keys
            if key[0] == ResourceMatchKind.PREFIX.value
        ),
    }
    for name, value in fields.items():
      object.__setattr__(self, name, value)

  def admits(self, uri: Union[str, CanonicalUri]) -> bool:
    """Whether the View may read `uri`. Never raises; invalid is False.

    Args:
      uri: The requested or returned URI, in any spelling.

    Returns:
      True iff `uri` is valid and its canonical form is admitted.
    """
    try:
      candidate = self.canonicalizer.canonicalize(uri)
    except McpAppUriError:
      return False
    return self._admits_canonical(candidate)

  def check(self, uri: Union[str, CanonicalUri]) -> CanonicalUri:
    """Returns the canonical form of `uri` if the View may read it.

    Args:
      uri: The requested or returned URI, in any spelling.

    Returns:
      The canonical URI, which is what the read should be identified by.

    Raises:
      ResourceReadDeniedError: If `uri` is invalid or not admitted.
    """
    try:
      candidate = self.canonicalizer.canonicalize(uri)
    except McpAppUriError as e:
      raise ResourceReadDeniedError(
          ResourceReadDenialReason.INVALID_URI,
          uri_excerpt=_excerpt(uri),
          policy_revision=self.revision,
          detail=f'{type(e).__name__} in {e.part}',
      ) from e
    if not self._admits_canonical(candidate):
      raise ResourceReadDeniedError(
          ResourceReadDenialReason.NOT_ADMITTED,
          uri_excerpt=_excerpt(uri),
          policy_revision=self.revision,
          canonical_uri=candidate,
      )
    return candidate

  def _admits_canonical(self, candidate: CanonicalUri) -> bool:
    if candidate in self._exact:
      return True
    return any(_within_prefix(p, candidate) for p in self._prefixes)
