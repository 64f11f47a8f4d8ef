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

// Preload for the published MCP App example servers' HTTP mode.
//
// Loaded with `node --import <file URL of this module> .../dist/index.js`.
// The packaged entry points call `app.listen(port, callback)` with the port
// from $PORT (default 3001) and no host, so Node binds every interface, and
// they log the requested port, which is useless with PORT=0. This preload
// rewrites a numeric-port `listen` into `listen(port, host, callback)` with
// host $MCP_APPS_LISTEN_HOST (default 127.0.0.1), and once the socket is
// listening prints one line on stdout:
//
//   READY http://127.0.0.1:<actual port>/mcp
//
// Nothing else about the server changes.

import net from "node:net";

const host = process.env.MCP_APPS_LISTEN_HOST || "127.0.0.1";
const originalListen = net.Server.prototype.listen;

net.Server.prototype.listen = function listen(...args) {
  const first = args[0];
  const isPort =
    typeof first === "number" ||
    (typeof first === "string" && /^\d+$/.test(first));
  if (!isPort || typeof args[1] === "string") {
    return originalListen.apply(this, args);
  }
  const callback = args.find((arg) => typeof arg === "function");
  this.once("listening", () => {
    const address = this.address();
    const shown = address.family === "IPv6" ? `[${address.address}]`
      : address.address;
    process.stdout.write(`READY http://${shown}:${address.port}/mcp\n`);
  });
  return callback
    ? originalListen.call(this, Number(first), host, callback)
    : originalListen.call(this, Number(first), host);
};
