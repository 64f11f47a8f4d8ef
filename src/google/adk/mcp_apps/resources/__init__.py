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

"""Resource identity and the resource-read policy of the MCP Apps host.

`uri` is the single URI canonicalization contract; `policy` decides which
resources a View may read, using it.
"""

from __future__ import annotations

from .policy import ResourceMatchKind
from .policy import ResourcePolicyEntry
from .policy import ResourceReadDenialReason
from .policy import ResourceReadDeniedError
from .policy import ResourceReadPolicy
from .uri import canonicalize
from .uri import canonicalize_generic
from .uri import CanonicalUri
from .uri import DEFAULT_URI_CANONICALIZER
from .uri import McpAppUriError
from .uri import SchemeCanonicalizer
from .uri import UriCanonicalizer
from .uri import UriErrorReason
from .uri import uris_equal

__all__ = [
    'CanonicalUri',
    'DEFAULT_URI_CANONICALIZER',
    'McpAppUriError',
    'ResourceMatchKind',
    'ResourcePolicyEntry',
    'ResourceReadDenialReason',
    'ResourceReadDeniedError',
    'ResourceReadPolicy',
    'SchemeCanonicalizer',
    'UriCanonicalizer',
    'UriErrorReason',
    'canonicalize',
    'canonicalize_generic',
    'uris_equal',
]
