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


"""Identifiers shared by the deployment contracts.

ADK scopes a Session by `(app_name, user_id, session_id)`. Several contracts
(authorization, the stores) speak about exactly that triple, so it has one
type here rather than three loose strings in every signature.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class SessionKey:
  """The ADK scope of one Session.

  Attributes:
    app_name: The ADK app name.
    user_id: The ADK user id (the Session's owner, not the calling
      principal).
    session_id: The ADK Session id.
  """

  app_name: str
  user_id: str
  session_id: str

  def __post_init__(self) -> None:
    for field in dataclasses.fields(self):
      value = getattr(self, field.name)
      if not isinstance(value, str) or not value:
        raise ValueError(f'SessionKey.{field.name} must be a non-empty str')
