// Copyright 2026 Google LLC
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

// RFC 8785 oracle for the ADK Canonical JSON v1 tests.
//
// Reads one JSON document per line on stdin and writes, per line, the
// document's canonical form from the npm `canonicalize` package (pinned in
// package-lock.json), or `!ERROR <message>` if it refuses the document.
// A canonical form never holds a raw line feed, so one line answers one
// line. Output is written as each line arrives, so a caller may stream.

import canonicalize from 'canonicalize';
import { createInterface } from 'node:readline';

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  let answer;
  try {
    answer = canonicalize(JSON.parse(line));
  } catch (error) {
    answer = `!ERROR ${String(error.message).replace(/\n/g, ' ')}`;
  }
  process.stdout.write(answer + '\n');
}
