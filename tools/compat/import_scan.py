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

"""Imports each named module of one ADK tree; prints what failed and why.

Runs inside a leg's virtualenv with `PYTHONPATH` = the tree's `src`:

    python import_scan.py < modules.txt

reads one module name per line and prints one JSON object on its last
stdout line: `{"adk_file": ..., "errors": {module: "Type: message"},
"missing": {module: top-level package it could not find}}`. A module absent
from `errors` imported. Modules are imported in the order given, in one
process, so two trees scanned with the same list see the same order.
Standard library only (besides the tree itself).
"""

from __future__ import annotations

import importlib
import io
import json
import logging
import sys
import warnings


def main() -> None:
  modules = [line.strip() for line in sys.stdin if line.strip()]
  errors: dict[str, str] = {}
  missing: dict[str, str] = {}
  logging.disable(logging.CRITICAL)
  warnings.simplefilter('ignore')
  real_stdout = sys.stdout
  for name in modules:
    # A module that prints on import must not corrupt the JSON line.
    sys.stdout = io.StringIO()
    try:
      importlib.import_module(name)
    except BaseException as e:  # pylint: disable=broad-except
      errors[name] = f'{type(e).__name__}: {e}'[:300]
      if isinstance(e, ModuleNotFoundError) and e.name:
        missing[name] = e.name.split('.')[0]
    finally:
      sys.stdout = real_stdout
  import google.adk  # pylint: disable=g-import-not-at-top

  print(
      json.dumps({
          'adk_file': google.adk.__file__,
          'errors': errors,
          'missing': missing,
          'loaded': sorted(
              m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')
          ),
      })
  )


if __name__ == '__main__':
  main()
