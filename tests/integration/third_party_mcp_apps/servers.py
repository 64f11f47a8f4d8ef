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

"""Installs and starts published MCP App servers for integration tests.

The MCP Apps host support is checked against servers someone else wrote, not
only against our own fixtures. This module pins three example servers from
the ``modelcontextprotocol/ext-apps`` project on npm (and CesiumJS, which
the map server's View loads from a CDN) (``package.json`` and
``package-lock.json`` next to this file, exact versions and integrity
hashes), installs them with ``npm ci`` when needed, and starts them.

What the packages do (version 2.0.3, read from ``dist/index.js``):

* The real entry point is ``dist/index.js`` (the package ``bin``;
  ``main`` is ``dist/server.js``, which only exports ``createServer``).
* ``--stdio`` anywhere in argv serves MCP over stdin/stdout; otherwise the
  server speaks stateless streamable HTTP at ``/mcp``.
* HTTP mode takes its port from ``$PORT`` (default 3001) and nothing else.
  It calls ``app.listen(port)`` without a host, so Node binds every
  interface, and ``createMcpExpressApp({host: "0.0.0.0"})`` disables the
  Host-header (DNS rebinding) check and prints a warning on stderr. It logs
  ``MCP server listening on http://localhost:<PORT>/mcp`` with the
  *requested* port, so ``PORT=0`` does not reveal the bound port. SIGINT and
  SIGTERM close the listener and exit 0.

:func:`start_http` therefore preloads ``loopback_listen.mjs`` (``node
--import``), which binds the listener to 127.0.0.1 instead and prints
``READY http://127.0.0.1:<bound port>/mcp`` once listening, so tests can run
on ``PORT=0`` without racing for a free port and without exposing a socket
beyond loopback.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import pathlib
import selectors
import shutil
import signal
import subprocess
import time

from mcp import StdioServerParameters

HERE = pathlib.Path(__file__).resolve().parent
"""Directory holding ``package.json`` and ``package-lock.json``."""

NODE_MODULES = HERE / "node_modules"
LOCKFILE = HERE / "package-lock.json"
STAMP_FILE = NODE_MODULES / ".adk-lockfile.sha256"
"""Records the lockfile hash ``node_modules`` was installed from."""

LOOPBACK_PRELOAD = HERE / "loopback_listen.mjs"

SERVER_PACKAGES: Mapping[str, str] = {
    "basic-vanillajs": "@modelcontextprotocol/server-basic-vanillajs",
    "system-monitor": "@modelcontextprotocol/server-system-monitor",
    "map": "@modelcontextprotocol/server-map",
}
"""Short names used by the tests -> npm package names."""

CESIUM_VERSION = "1.123"
"""The CesiumJS release the map server's View loads from its CDN."""

CESIUM_BUILD = NODE_MODULES / "cesium" / "Build" / "Cesium"
"""That release's build, from the npm package ``cesium`` pinned beside the
servers, so a browser test can answer the View's CDN requests offline."""

NPM_INSTALL_TIMEOUT_S = 300.0
READY_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 10.0


class ServerStartError(RuntimeError):
  """A server process exited or stayed silent instead of becoming ready."""


def lockfile_hash(project: pathlib.Path = HERE) -> str:
  """Returns the SHA-256 of a project's committed ``package-lock.json``."""
  return hashlib.sha256(
      (project / "package-lock.json").read_bytes()
  ).hexdigest()


def _lockfile_installed(project: pathlib.Path, packages: Iterable[str]) -> bool:
  stamp_file = project / "node_modules" / STAMP_FILE.name
  try:
    stamp = stamp_file.read_text(encoding="utf-8").strip()
  except FileNotFoundError:
    return False
  if stamp != lockfile_hash(project):
    return False
  return all(
      (project / "node_modules" / package / "package.json").is_file()
      for package in packages
  )


def install_lockfile(
    project: pathlib.Path, packages: Iterable[str], npm: str | None = None
) -> pathlib.Path:
  """Installs a committed npm lockfile with ``npm ci`` unless already current.

  ``node_modules`` counts as current when the stamp file inside it holds the
  hash of the lockfile and every named package is present. Otherwise
  ``npm ci`` rebuilds it from the lockfile alone (it never rewrites the
  lockfile) and the stamp is written last, so an interrupted install is
  redone next time. An exclusive ``flock`` on the lockfile keeps concurrent
  test processes from installing at once. Other npm-installed fixtures (the
  canonical JSON oracle) use this too.

  Args:
    project: The directory holding ``package.json`` and the lockfile.
    packages: Package names that must be installed.
    npm: The npm executable; found on PATH when None.

  Returns:
    The ``node_modules`` directory.

  Raises:
    RuntimeError: If npm is missing or ``npm ci`` fails.
  """
  packages = tuple(packages)
  node_modules = project / "node_modules"
  if _lockfile_installed(project, packages):
    return node_modules
  npm = npm or shutil.which("npm")
  if not npm:
    raise RuntimeError("npm is not on PATH; it is needed to install fixtures")
  with open(project / "package-lock.json", "rb") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    if _lockfile_installed(project, packages):
      return node_modules
    completed = subprocess.run(
        [
            npm,
            "ci",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--loglevel=error",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=NPM_INSTALL_TIMEOUT_S,
        check=False,
    )
    if completed.returncode != 0:
      raise RuntimeError(
          f"npm ci failed ({completed.returncode}):\n{completed.stderr}"
      )
    (node_modules / STAMP_FILE.name).write_text(
        lockfile_hash(project) + "\n", encoding="utf-8"
    )
  return node_modules


def is_installed() -> bool:
  """Whether ``node_modules`` exists and matches the current lockfile."""
  return _lockfile_installed(HERE, SERVER_PACKAGES.values())


def ensure_installed(npm: str | None = None) -> pathlib.Path:
  """Installs the pinned MCP App servers (see `install_lockfile`).

  Args:
    npm: The npm executable; found on PATH when None.

  Returns:
    The ``node_modules`` directory.
  """
  return install_lockfile(HERE, (*SERVER_PACKAGES.values(), "cesium"), npm)


def package_dir(name: str) -> pathlib.Path:
  """Returns the installed directory of the server called ``name``."""
  return NODE_MODULES / SERVER_PACKAGES[name]


def package_version(name: str) -> str:
  """Returns the installed version of the server called ``name``."""
  manifest = json.loads((package_dir(name) / "package.json").read_text())
  return str(manifest["version"])


def entry_point(name: str) -> pathlib.Path:
  """Returns the executable script the package's ``bin`` points at.

  Raises:
    FileNotFoundError: If the package declares no single ``bin`` script or
      the file is missing.
  """
  root = package_dir(name)
  manifest = json.loads((root / "package.json").read_text())
  bins = manifest.get("bin")
  if isinstance(bins, str):
    target = bins
  elif isinstance(bins, dict) and len(bins) == 1:
    (target,) = bins.values()
  else:
    raise FileNotFoundError(f"{SERVER_PACKAGES[name]} has no single bin")
  path = (root / target).resolve()
  if not path.is_file():
    raise FileNotFoundError(path)
  return path


def node_executable() -> str:
  """Returns the ``node`` executable on PATH."""
  node = shutil.which("node")
  if not node:
    raise RuntimeError("node is not on PATH")
  return node


def stdio_params(name: str) -> StdioServerParameters:
  """Returns parameters that start ``name`` over stdio (``--stdio``)."""
  return StdioServerParameters(
      command=node_executable(),
      args=[str(entry_point(name)), "--stdio"],
      cwd=str(HERE),
  )


@dataclasses.dataclass
class RunningServer:
  """A server process started by :func:`start_process`."""

  process: subprocess.Popen[str]
  url: str
  output: list[str]
  """Lines the process printed on stdout up to and including READY."""

  @property
  def pid(self) -> int:
    return self.process.pid


def wait_for_ready_line(
    process: subprocess.Popen[str],
    timeout: float = READY_TIMEOUT_S,
    marker: str = "READY ",
) -> tuple[str, list[str]]:
  """Reads ``process`` stdout until a line starting with ``marker``.

  Args:
    process: A process started with ``stdout=PIPE`` in text mode.
    timeout: Seconds to wait in total.
    marker: Prefix of the readiness line; the rest of it is returned.

  Returns:
    The text after the marker (the URL), and all lines read.

  Raises:
    ServerStartError: If the process exits or the deadline passes first.
  """
  assert process.stdout is not None
  deadline = time.monotonic() + timeout
  lines: list[str] = []
  buffer = ""
  fd = process.stdout.fileno()
  os.set_blocking(fd, False)
  with selectors.DefaultSelector() as selector:
    selector.register(fd, selectors.EVENT_READ)
    while True:
      remaining = deadline - time.monotonic()
      if remaining <= 0:
        raise ServerStartError(
            f"no {marker.strip()} line within {timeout}s; stdout: {lines}"
        )
      if not selector.select(remaining):
        continue
      chunk = os.read(fd, 65536).decode("utf-8", "replace")
      if not chunk:
        raise ServerStartError(
            f"process exited ({process.wait()}) before {marker.strip()};"
            f" stdout: {lines}"
        )
      buffer += chunk
      *complete, buffer = buffer.split("\n")
      for line in complete:
        lines.append(line)
        if line.startswith(marker):
          os.set_blocking(fd, True)
          return line[len(marker) :].strip(), lines


def stop_process(
    process: subprocess.Popen[str], timeout: float = STOP_TIMEOUT_S
) -> int:
  """Stops ``process`` with SIGTERM, then SIGKILL after ``timeout``.

  Returns:
    The exit code (negative for a signal, as ``Popen`` reports it).
  """
  if process.poll() is None:
    process.send_signal(signal.SIGTERM)
    try:
      process.wait(timeout)
    except subprocess.TimeoutExpired:
      process.kill()
      process.wait()
  for stream in (process.stdout, process.stderr):
    if stream is not None:
      stream.close()
  return process.returncode


@contextlib.contextmanager
def start_process(
    argv: Sequence[str],
    env: Mapping[str, str] | None = None,
    cwd: pathlib.Path | None = None,
    timeout: float = READY_TIMEOUT_S,
) -> Iterator[RunningServer]:
  """Runs ``argv`` until it prints ``READY <url>``; stops it on exit.

  stderr is inherited, so a crash message reaches the pytest output.

  Yields:
    The running server and its URL.
  """
  process = subprocess.Popen(
      list(argv),
      stdin=subprocess.DEVNULL,
      stdout=subprocess.PIPE,
      env={**os.environ, **(env or {})},
      cwd=cwd,
      text=True,
  )
  try:
    url, lines = wait_for_ready_line(process, timeout)
    yield RunningServer(process=process, url=url, output=lines)
  finally:
    stop_process(process)


@contextlib.contextmanager
def start_http(
    name: str, port: int = 0, timeout: float = READY_TIMEOUT_S
) -> Iterator[RunningServer]:
  """Starts ``name`` over streamable HTTP on 127.0.0.1.

  The port goes in through ``$PORT`` (the packages' only knob); the loopback
  preload binds it to 127.0.0.1 and reports the real port.

  Args:
    name: A key of :data:`SERVER_PACKAGES`.
    port: Port to request; 0 lets the OS pick.
    timeout: Seconds to wait for the READY line.

  Yields:
    The running server; ``url`` is ``http://127.0.0.1:<port>/mcp``.
  """
  argv = [
      node_executable(),
      "--import",
      LOOPBACK_PRELOAD.as_uri(),
      str(entry_point(name)),
  ]
  with start_process(
      argv, env={"PORT": str(port)}, cwd=HERE, timeout=timeout
  ) as server:
    yield server


def descendant_pids(root: int | None = None) -> set[int]:
  """Returns the PIDs of all live descendants of ``root`` (default: self).

  Reads ``/proc/<pid>/stat`` for every process; zombies count, since an
  unreaped child is a leak too.
  """
  root = os.getpid() if root is None else root
  children: dict[int, list[int]] = {}
  for entry in os.scandir("/proc"):
    if not entry.name.isdigit():
      continue
    try:
      with open(f"/proc/{entry.name}/stat", encoding="utf-8") as f:
        stat = f.read()
    except OSError:
      continue
    # The command name is in parentheses and may contain spaces.
    fields = stat[stat.rfind(")") + 2 :].split()
    children.setdefault(int(fields[1]), []).append(int(entry.name))
  found: set[int] = set()
  stack = [root]
  while stack:
    for child in children.get(stack.pop(), []):
      if child not in found:
        found.add(child)
        stack.append(child)
  return found


def listening_addresses(pid: int) -> set[tuple[str, int]]:
  """Returns the TCP (address, port) pairs ``pid`` is listening on.

  Matches the socket inodes in ``/proc/<pid>/fd`` against
  ``/proc/net/tcp`` and ``/proc/net/tcp6`` (state 0A is LISTEN).
  """
  inodes = set()
  for fd in os.scandir(f"/proc/{pid}/fd"):
    with contextlib.suppress(OSError):
      target = os.readlink(fd.path)
      if target.startswith("socket:["):
        inodes.add(target[len("socket:[") : -1])
  found: set[tuple[str, int]] = set()
  for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
    with contextlib.suppress(FileNotFoundError):
      with open(table, encoding="utf-8") as f:
        next(f)
        for row in f:
          cols = row.split()
          if cols[3] != "0A" or cols[9] not in inodes:
            continue
          hex_addr, hex_port = cols[1].split(":")
          found.add((_decode_proc_addr(hex_addr, width), int(hex_port, 16)))
  return found


def _decode_proc_addr(hex_addr: str, width: int) -> str:
  """Decodes the little-endian hex address used in ``/proc/net/tcp*``."""
  import ipaddress  # pylint: disable=g-import-not-at-top

  raw = bytes.fromhex(hex_addr)
  if width == 8:
    return str(ipaddress.IPv4Address(raw[::-1]))
  words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
  address = ipaddress.IPv6Address(words)
  return str(address.ipv4_mapped or address)


def describe_processes(pids: set[int]) -> list[str]:
  """Returns ``"<pid>: <command line>"`` for each PID, for failure messages."""
  described = []
  for pid in sorted(pids):
    try:
      raw = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
      described.append(f"{pid}: <gone>")
      continue
    command = raw.replace(b"\x00", b" ").decode("utf-8", "replace").strip()
    described.append(f"{pid}: {command}")
  return described


def new_descendants(before: set[int], timeout: float = 5.0) -> set[int]:
  """Returns descendants that were not in ``before``, after they settle.

  Polls until every new descendant is gone or ``timeout`` passes, so a
  process that is being reaped right now is not reported.
  """
  deadline = time.monotonic() + timeout
  leaked = descendant_pids() - before
  while leaked and time.monotonic() < deadline:
    time.sleep(0.05)
    leaked = descendant_pids() - before
  return leaked
