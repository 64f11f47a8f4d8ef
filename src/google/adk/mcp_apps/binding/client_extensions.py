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

"""What an Apps-bound MCP connection advertises, and what it leaves out.

`AppsClientBinding` is what the binding registry hands down
`McpToolset -> MCPSessionManager -> SessionContext -> ClientSession`: the
client extensions map and whether the connection omits the sampling,
elicitation and roots callbacks. Without a binding every function here is a
no-op. Client extensions need MCP SDK 2.x; asking on 1.x raises
`ClientExtensionsUnsupportedError`. Design: docs/design/binding.md.

Example:

  binding = AppsClientBinding(readiness.client_extensions())
  toolset = spec.build(_apps_client_binding=binding)
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
import hashlib
import json
from typing import Any
from typing import TYPE_CHECKING

from ...dependencies import _mcp
from ..profile.capabilities import EXTENSION_ID
from ..profile.capabilities import MCP_APP_MIME_TYPE
from .errors import McpAppBindingError

if TYPE_CHECKING:
  from mcp.client.extension import ClientExtension

  from .registry_loop import RegistryEventLoop


class ClientExtensionsError(McpAppBindingError, ValueError):
  """A client extensions map that must not be advertised."""


class ClientExtensionsUnsupportedError(McpAppBindingError):
  """Client extensions were asked of an MCP SDK that cannot send them."""

  def __init__(self) -> None:
    super().__init__(
        'MCP client extensions (the MCP Apps host) need MCP SDK 2.x'
        ' (mcp>=2.3,<3, the google-adk[mcpapps] extra); the installed SDK'
        ' is 1.x. Model-only MCP toolsets work on 1.x unchanged.'
    )


def _require_sdk_v2() -> None:
  # Read at call time, so the 1.x path can be exercised on a 2.x install.
  if not _mcp.IS_MCP_SDK_V2:
    raise ClientExtensionsUnsupportedError()


def _canonical_json(value: Any, what: str) -> str:
  try:
    return json.dumps(
        value, sort_keys=True, separators=(',', ':'), allow_nan=False
    )
  except (TypeError, ValueError) as e:
    raise ClientExtensionsError(f'{what} is not plain JSON: {e}') from e


def _check_identifier(identifier: object) -> None:
  # `ClientSession` takes any key; only the SDK's high-level `Client` checks
  # the SEP-2133 grammar. Imported here: the module must import on 1.x.
  from mcp.shared.extension import validate_extension_identifier

  try:
    validate_extension_identifier(identifier, owner='AppsClientBinding')
  except TypeError as e:
    raise ClientExtensionsError(str(e)) from e


def _check_apps_settings(settings: Mapping[str, Any]) -> None:
  mime_types = settings.get('mimeTypes')
  if (
      not isinstance(mime_types, (list, tuple))
      or not mime_types
      or not all(isinstance(m, str) and m for m in mime_types)
  ):
    raise ClientExtensionsError(
        f'{EXTENSION_ID} settings need "mimeTypes", a non-empty list of'
        f' MIME type strings (e.g. [{MCP_APP_MIME_TYPE!r}]); got {mime_types!r}'
    )


class AppsClientBinding:
  """The client extensions and callback policy of one Apps-bound connection.

  Immutable and hashable. The extensions map is validated and stored as
  canonical JSON, so no caller can alias or mutate what a live session was
  built with; `extensions` returns a fresh copy each time.

  Equality, hash, `fingerprint` and pickling cover what the connection
  advertises and nothing else. The optional `registry_loop` is where the
  connection's I/O runs: a live, process-local object that cannot be
  fingerprinted stably across processes nor pickled, and two bindings that
  advertise the same are the same advertisement wherever their I/O runs (a
  pool key scope, a profile fingerprint or a pickled manager must not change
  with it). Copies keep the loop; a pickled binding restores without it,
  because the loop it named does not exist in the process that unpickles
  it; the registry binds again there.

  Attributes:
    extensions: Extension identifier to settings, as `ClientSession`
      advertises them under `capabilities.extensions`.
    app_safe: Build the connection without sampling, elicitation and roots
      callbacks, whatever the toolset was configured with, so neither era
      advertises those capabilities.
    fingerprint: A digest of both, stable across processes.
    registry_loop: The registry loop the connection's I/O runs on, or None
      (the caller's loop, as upstream).
  """

  __slots__ = ('_extensions_json', '_app_safe', '_registry_loop', '_scope')

  _extensions_json: str
  _app_safe: bool
  _registry_loop: RegistryEventLoop | None
  _scope: str

  def __init__(
      self,
      extensions: Mapping[str, Mapping[str, Any]],
      *,
      app_safe: bool = True,
      registry_loop: RegistryEventLoop | None = None,
      scope: str = '',
  ) -> None:
    """Validates and freezes a client extensions map.

    Args:
      extensions: Extension identifier (`vendor-prefix/name`) to its settings
        object. May be empty: an app-safe connection that advertises nothing.
      app_safe: Whether the connection omits the input-request callbacks.
      registry_loop: Run the connection's transport I/O on this registry
        loop (see `loop_routing`); None keeps it on the caller's loop.
      scope: An opaque digest of everything else the connection's
        configuration depends on (the registry passes the host profile's
        fingerprint), folded into `fingerprint` and so into pool and
        `tools/list` cache keys: a fingerprint change never reuses a key.

    Raises:
      ClientExtensionsUnsupportedError: The installed MCP SDK is 1.x.
      ClientExtensionsError: An identifier is malformed, a settings value is
        not a JSON object, or the Apps extension's settings lack a non-empty
        `mimeTypes` list.
      TypeError: `registry_loop` is not a `RegistryEventLoop`.
    """
    _require_sdk_v2()
    if not isinstance(extensions, Mapping):
      raise ClientExtensionsError(
          'extensions must map identifiers to settings, got'
          f' {type(extensions).__name__}'
      )
    if not isinstance(app_safe, bool):
      raise ClientExtensionsError('app_safe must be a bool')
    for identifier, settings in extensions.items():
      _check_identifier(identifier)
      if not isinstance(settings, Mapping):
        raise ClientExtensionsError(
            f'settings of {identifier} must be a JSON object, got'
            f' {type(settings).__name__}'
        )
      if identifier == EXTENSION_ID:
        _check_apps_settings(settings)
    canonical = _canonical_json(
        {key: dict(value) for key, value in extensions.items()},
        'the extensions map',
    )
    object.__setattr__(self, '_extensions_json', canonical)
    object.__setattr__(self, '_app_safe', app_safe)
    object.__setattr__(self, '_registry_loop', _checked_loop(registry_loop))
    if not isinstance(scope, str):
      raise ClientExtensionsError('scope must be a string')
    object.__setattr__(self, '_scope', scope)

  @classmethod
  def for_mcp_apps(
      cls,
      mime_types: Sequence[str] = (MCP_APP_MIME_TYPE,),
      *,
      app_safe: bool = True,
      registry_loop: RegistryEventLoop | None = None,
  ) -> AppsClientBinding:
    """The MCP Apps advertisement: `{"mimeTypes": [...]}` under the ui id.

    Args:
      mime_types: The View MIME types the host renders.
      app_safe: Whether the connection omits the input-request callbacks.
      registry_loop: The registry loop the connection's I/O runs on.

    Returns:
      The binding.
    """
    return cls(
        {EXTENSION_ID: {'mimeTypes': list(mime_types)}},
        app_safe=app_safe,
        registry_loop=registry_loop,
    )

  @classmethod
  def from_client_extensions(
      cls,
      extensions: Sequence[ClientExtension],
      *,
      app_safe: bool = True,
      registry_loop: RegistryEventLoop | None = None,
  ) -> AppsClientBinding:
    """Folds SDK `ClientExtension`s (e.g. from `advertise()`) into a binding.

    The SDK's `Client` does the same fold into `ClientSession(extensions=)`.
    ADK wires no result claims or notification bindings, so an extension
    that declares either is refused rather than advertised without them.

    Args:
      extensions: Advertise-only client extensions.
      app_safe: Whether the connection omits the input-request callbacks.
      registry_loop: The registry loop the connection's I/O runs on.

    Returns:
      The binding.

    Raises:
      ClientExtensionsError: An identifier repeats, or an extension claims
        results or binds notifications.
    """
    ad: dict[str, Mapping[str, Any]] = {}
    for extension in extensions:
      identifier = getattr(extension, 'identifier', None)
      if not isinstance(identifier, str):
        raise ClientExtensionsError(
            f'{type(extension).__name__} has no string `identifier`'
        )
      if identifier in ad:
        raise ClientExtensionsError(f'{identifier} is given more than once')
      if extension.claims() or extension.notifications():
        raise ClientExtensionsError(
            f'{identifier} claims results or binds notifications, which ADK'
            ' sessions do not wire; only advertise-only extensions bind'
        )
      ad[identifier] = extension.settings()
    return cls(ad, app_safe=app_safe, registry_loop=registry_loop)

  def with_registry_loop(
      self, registry_loop: RegistryEventLoop | None
  ) -> AppsClientBinding:
    """The same advertisement, with its I/O on `registry_loop`.

    Args:
      registry_loop: The registry loop, or None for the caller's loop.

    Returns:
      A new binding equal to this one.
    """
    return AppsClientBinding(
        self.extensions,
        app_safe=self._app_safe,
        registry_loop=registry_loop,
        scope=self._scope,
    )

  @property
  def extensions(self) -> dict[str, dict[str, Any]]:
    """A fresh copy of the extensions map."""
    result: dict[str, dict[str, Any]] = json.loads(self._extensions_json)
    return result

  @property
  def app_safe(self) -> bool:
    """Whether the connection omits the input-request callbacks."""
    return self._app_safe

  @property
  def registry_loop(self) -> RegistryEventLoop | None:
    """The registry loop the connection's I/O runs on, if any."""
    return self._registry_loop

  @property
  def advertises_apps(self) -> bool:
    """Whether the map carries the MCP Apps extension."""
    return EXTENSION_ID in self.extensions

  @property
  def fingerprint(self) -> str:
    """SHA-256 over the extensions map, `app_safe` and the scope."""
    value: dict[str, Any] = {
        'appSafe': self._app_safe,
        'extensions': self.extensions,
    }
    if self._scope:
      value['scope'] = self._scope
    material = _canonical_json(value, 'the binding')
    return hashlib.sha256(material.encode()).hexdigest()

  def __setattr__(self, name: str, value: Any) -> None:
    raise AttributeError(f'{type(self).__name__} is immutable')

  def __delattr__(self, name: str) -> None:
    raise AttributeError(f'{type(self).__name__} is immutable')

  def __eq__(self, other: object) -> bool:
    if not isinstance(other, AppsClientBinding):
      return NotImplemented
    return (self._extensions_json, self._app_safe, self._scope) == (
        other._extensions_json,
        other._app_safe,
        other._scope,
    )

  def __hash__(self) -> int:
    return hash((self._extensions_json, self._app_safe, self._scope))

  def __repr__(self) -> str:
    routed = (
        ''
        if self._registry_loop is None
        else f', registry_loop={self._registry_loop.name!r}'
    )
    return (
        f'AppsClientBinding({self._extensions_json},'
        f' app_safe={self._app_safe}{routed})'
    )

  def __copy__(self) -> AppsClientBinding:
    return self  # Immutable; a copy keeps the registry loop.

  def __deepcopy__(self, memo: dict[int, Any]) -> AppsClientBinding:
    return self

  def __reduce__(self) -> tuple[Any, ...]:
    # The registry loop is process-local: it is not pickled (class docstring).
    return (_restore, (self._extensions_json, self._app_safe, self._scope))


def _checked_loop(loop: object) -> RegistryEventLoop | None:
  if loop is None:
    return None
  # Imported here: it is needed only when a binding names a loop.
  # pylint: disable-next=g-import-not-at-top
  from .registry_loop import RegistryEventLoop

  if isinstance(loop, RegistryEventLoop):
    return loop
  raise TypeError(
      f'registry_loop takes a RegistryEventLoop, got {type(loop).__name__}'
  )


def _restore(
    extensions_json: str, app_safe: bool, scope: str = ''
) -> AppsClientBinding:
  """Unpickles a binding (it must still be requested on SDK 2.x)."""
  return AppsClientBinding(
      json.loads(extensions_json), app_safe=app_safe, scope=scope
  )


def checked(binding: object) -> AppsClientBinding | None:
  """Admits the private session-manager parameter, or refuses it.

  Args:
    binding: What was passed as `_apps_client_binding`.

  Returns:
    The binding, or None when none was given.

  Raises:
    TypeError: Something other than an `AppsClientBinding` was passed.
    ClientExtensionsUnsupportedError: A binding on MCP SDK 1.x.
  """
  if binding is None:
    return None
  if not isinstance(binding, AppsClientBinding):
    raise TypeError(
        '_apps_client_binding takes an AppsClientBinding (set by the MCP Apps'
        f' binding registry only), got {type(binding).__name__}'
    )
  _require_sdk_v2()
  return binding


def pool_key_scope(binding: AppsClientBinding | None) -> str:
  """The prefix of every pool key of a bound session manager.

  Keeps a bound manager's session keys, and the `tools/list` cache keys
  derived from them, textually disjoint from any unbound manager's (and from
  a differently bound one's), on top of the pools being separate objects.

  Args:
    binding: The manager's binding, or None.

  Returns:
    `''` without a binding, so upstream's keys are unchanged.
  """
  if binding is None:
    return ''
  return f'apps_{binding.fingerprint[:16]}:'


def client_session_kwargs(
    binding: AppsClientBinding | None,
) -> dict[str, Any]:
  """The extra `ClientSession` keyword arguments a binding calls for.

  Args:
    binding: The connection's binding, or None.

  Returns:
    `{}` without a binding or with an empty map, so the session is built
    exactly as upstream builds it; otherwise `{"extensions": <fresh copy>}`.

  Raises:
    ClientExtensionsUnsupportedError: A binding on MCP SDK 1.x.
  """
  if binding is None:
    return {}
  _require_sdk_v2()
  extensions = binding.extensions
  return {'extensions': extensions} if extensions else {}
