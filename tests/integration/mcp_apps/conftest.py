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

"""Reusable fixtures for MCP Apps integration tests against real servers.

`ServerProcess` starts any module that follows the readiness convention of
the conformance server (`READY <url>` on stdout once it accepts connections),
waits for that line, and on exit terminates and reaps the process. The
fixtures below start the conformance server over streamable HTTP (stateful
legacy era or stateless 2026-07-28 era), SSE and stdio, and put the
round-robin proxy in front of several servers. `child_pids` reads /proc so a
test can prove that nothing it started outlives it.

The helpers use only the MCP SDK's own client, never google-adk, so the
fixture server is validated independently of the code under test.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
import contextlib
import dataclasses
import json
import os
from pathlib import Path
import selectors
import subprocess
import sys
import tempfile
import time
from typing import Any

from mcp import Client
from mcp.client import advertise
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import DEFAULT_MAX_SSE_EVENT_SIZE
from mcp.client.streamable_http import streamable_http_client
from mcp.server.apps import APP_MIME_TYPE
from mcp.server.apps import EXTENSION_ID
import pytest
import third_party_support

FIXTURES_DIR = Path(__file__).resolve().parents[1] / "fixtures"
SERVER_MODULE = "mcp_apps_conformance_server"
PROXY_MODULE = "mcp_apps_conformance_server.round_robin"
READY_TIMEOUT_SECONDS = 30.0
STOP_TIMEOUT_SECONDS = 10.0


def fixture_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
  """Returns an environment whose PYTHONPATH can import the fixtures."""
  env = dict(os.environ)
  paths = [str(FIXTURES_DIR)]
  if env.get("PYTHONPATH"):
    paths.append(env["PYTHONPATH"])
  env["PYTHONPATH"] = os.pathsep.join(paths)
  env["PYTHONUNBUFFERED"] = "1"
  env.update(extra or {})
  return env


def child_pids(parent: int | None = None) -> set[int]:
  """Returns the pids of the live direct children of `parent` (default: us)."""
  parent = os.getpid() if parent is None else parent
  children = set()
  for entry in Path("/proc").iterdir():
    if not entry.name.isdigit():
      continue
    try:
      stat = (entry / "stat").read_text()
    except OSError:
      continue
    # Fields after the parenthesised command: state, ppid, ...
    fields = stat[stat.rfind(")") + 2 :].split()
    if len(fields) > 1 and int(fields[1]) == parent and fields[0] != "Z":
      children.add(int(entry.name))
  return children


def server_args(
    transport: str = "streamable-http",
    *,
    stateless: bool = False,
    options: Mapping[str, Any] | None = None,
    port: int = 0,
) -> list[str]:
  """Builds the conformance server's command-line arguments."""
  args = ["--transport", transport, "--port", str(port)]
  if stateless:
    args.append("--stateless")
  if options:
    args += ["--options", json.dumps(dict(options))]
  return args


@dataclasses.dataclass
class ServerProcess:
  """A server subprocess that announces `READY <url>` on stdout.

  Use as a context manager: entering starts the process and waits for the
  readiness line (failing with the process's stderr if it exits or stays
  silent), exiting terminates it (SIGTERM, then SIGKILL) and reaps it.

  Attributes:
    module: The module to run with `python -m`.
    args: Its arguments.
    env: Extra environment variables.
    ready_timeout: Seconds to wait for the readiness line.
  """

  module: str
  args: Sequence[str] = ()
  env: Mapping[str, str] | None = None
  ready_timeout: float = READY_TIMEOUT_SECONDS
  url: str = dataclasses.field(init=False, default="")
  process: subprocess.Popen[bytes] | None = dataclasses.field(
      init=False, default=None
  )
  _stderr: Any = dataclasses.field(init=False, default=None)

  @property
  def pid(self) -> int:
    """The server's pid."""
    assert self.process is not None
    return self.process.pid

  @property
  def stderr_text(self) -> str:
    """Everything the server wrote to stderr so far."""
    if self._stderr is None:
      return ""
    self._stderr.flush()
    self._stderr.seek(0)
    return self._stderr.read().decode(errors="replace")

  def __enter__(self) -> ServerProcess:
    self._stderr = tempfile.TemporaryFile()
    self.process = subprocess.Popen(
        [sys.executable, "-m", self.module, *self.args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=self._stderr,
        env=fixture_env(self.env),
    )
    try:
      self.url = self._await_ready()
    except BaseException:
      self.__exit__(None, None, None)
      raise
    return self

  def _await_ready(self) -> str:
    assert self.process is not None and self.process.stdout is not None
    deadline = time.monotonic() + self.ready_timeout
    buffer = b""
    with selectors.DefaultSelector() as selector:
      selector.register(self.process.stdout, selectors.EVENT_READ)
      while b"\n" not in buffer:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
          raise TimeoutError(f"{self.module} not ready:\n{self.stderr_text}")
        if not selector.select(remaining):
          continue
        chunk = os.read(self.process.stdout.fileno(), 4096)
        if not chunk:
          raise RuntimeError(
              f"{self.module} exited with {self.process.wait()} before READY:"
              f"\n{self.stderr_text}"
          )
        buffer += chunk
    line = buffer.split(b"\n", 1)[0].decode().strip()
    word, _, url = line.partition(" ")
    if word != "READY" or not url:
      raise RuntimeError(f"unexpected readiness line {line!r}")
    return url

  def stop(self) -> int:
    """Terminates and reaps the process; returns its exit status."""
    assert self.process is not None
    if self.process.poll() is None:
      self.process.terminate()
      try:
        self.process.wait(STOP_TIMEOUT_SECONDS)
      except subprocess.TimeoutExpired:
        self.process.kill()
        self.process.wait()
    return self.process.returncode

  def __exit__(self, *exc_info: object) -> None:
    if self.process is not None:
      self.stop()
      if self.process.stdout is not None:
        self.process.stdout.close()
    if self._stderr is not None:
      self._stderr.close()
      self._stderr = None


def conformance_server(
    transport: str = "streamable-http",
    *,
    stateless: bool = False,
    options: Mapping[str, Any] | None = None,
) -> ServerProcess:
  """Returns an un-entered `ServerProcess` for the conformance server."""
  return ServerProcess(
      SERVER_MODULE,
      server_args(transport, stateless=stateless, options=options),
  )


def round_robin_proxy(backends: Sequence[str]) -> ServerProcess:
  """Returns an un-entered `ServerProcess` for the round-robin proxy."""
  args = ["--port", "0"]
  for backend in backends:
    args += ["--backend", backend]
  return ServerProcess(PROXY_MODULE, args)


def stdio_parameters(
    options: Mapping[str, Any] | None = None,
) -> StdioServerParameters:
  """Returns SDK stdio parameters that spawn the conformance server."""
  return StdioServerParameters(
      command=sys.executable,
      args=["-m", SERVER_MODULE, *server_args("stdio", options=options)],
      env={"PYTHONPATH": str(FIXTURES_DIR)},
  )


def apps_extensions() -> list[Any]:
  """Returns the client extensions that advertise MCP Apps support."""
  return [advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})]


def connect(
    target: str | StdioServerParameters,
    *,
    mode: str = "auto",
    apps: bool = True,
    max_sse_event_size: int | None = DEFAULT_MAX_SSE_EVENT_SIZE,
    **client_kwargs: Any,
) -> Client:
  """Returns an un-entered SDK `Client` for a conformance endpoint.

  Args:
    target: A streamable-HTTP URL, an SSE URL (ending in `/sse`), or stdio
      parameters.
    mode: The SDK client's era negotiation (`"auto"`, `"legacy"` or a
      2026-07-28 version pin).
    apps: Whether to advertise `io.modelcontextprotocol/ui`.
    max_sse_event_size: The SDK client's per-event SSE limit on streamable
      HTTP (1 MiB by default; `None` lifts it, as large results need).
    **client_kwargs: Passed to `Client` (callbacks, extensions, ...).
  """
  server: Any = target
  if isinstance(target, str) and target.endswith("/sse"):
    server = sse_client(target)
  elif isinstance(target, str):
    server = streamable_http_client(
        target, max_sse_event_size=max_sse_event_size
    )
  client_kwargs.setdefault("extensions", apps_extensions() if apps else None)
  client_kwargs.setdefault("read_timeout_seconds", 30)
  # Listings must reach the server every time; the SDK caches by default.
  client_kwargs.setdefault("cache", None)
  return Client(server, mode=mode, **client_kwargs)


@pytest.fixture
def start_server() -> Iterator[Callable[..., ServerProcess]]:
  """Factory fixture: starts conformance servers, stops them at teardown."""
  with contextlib.ExitStack() as stack:

    def start(
        transport: str = "streamable-http",
        *,
        stateless: bool = False,
        options: Mapping[str, Any] | None = None,
    ) -> ServerProcess:
      return stack.enter_context(
          conformance_server(transport, stateless=stateless, options=options)
      )

    yield start


@pytest.fixture
def start_proxy() -> Iterator[Callable[[Sequence[str]], ServerProcess]]:
  """Factory fixture: starts round-robin proxies, stops them at teardown."""
  with contextlib.ExitStack() as stack:

    def start(backends: Sequence[str]) -> ServerProcess:
      return stack.enter_context(round_robin_proxy(backends))

    yield start


@pytest.fixture(scope="module")
def legacy_http_server() -> Iterator[ServerProcess]:
  """A default conformance server: stateful streamable HTTP, 2025-11-25."""
  with conformance_server("streamable-http") as server:
    yield server


@pytest.fixture(scope="module")
def modern_http_server() -> Iterator[ServerProcess]:
  """A default conformance server: stateless streamable HTTP, 2026-07-28."""
  with conformance_server("streamable-http", stateless=True) as server:
    yield server


@pytest.fixture(scope="module")
def sse_server() -> Iterator[ServerProcess]:
  """A default conformance server on the SSE transport."""
  with conformance_server("sse") as server:
    yield server


@pytest.fixture
def no_leaked_processes() -> Iterator[None]:
  """Fails the test if a server it started outlives it.

  Use it with `pytest.mark.usefixtures("no_leaked_processes")`. A child
  gets five seconds to be reaped after the test's own shutdown.
  """
  before = child_pids()
  yield
  deadline = time.monotonic() + 5.0
  while (leaked := child_pids() - before) and time.monotonic() < deadline:
    time.sleep(0.05)
  assert not leaked, f"child processes left behind: {sorted(leaked)}"


@pytest.fixture
def no_leaked_descendants() -> Iterator[None]:
  """Fails the test if it leaves any descendant process behind.

  Stricter than `no_leaked_processes`: it counts grandchildren (the npm
  servers' node processes) and gives no grace. Use it with
  `pytest.mark.usefixtures("no_leaked_descendants")`.
  """
  servers = third_party_support.servers
  before = servers.descendant_pids()
  yield
  leaked = servers.new_descendants(before)
  assert not leaked, servers.describe_processes(leaked)


@pytest.fixture(scope="module")
def third_party_packages() -> Path:
  """Installs the published servers' pinned npm packages once (`npm ci`)."""
  installed: Path = third_party_support.servers.ensure_installed()
  return installed


@dataclasses.dataclass(frozen=True)
class Helpers:
  """The module's helper functions, handed to tests as one fixture.

  Test modules in this directory are not a package, so they reach the
  helpers through the `mcp_apps` fixture rather than by importing conftest.
  """

  connect: Callable[..., Client] = connect
  stdio_parameters: Callable[..., StdioServerParameters] = stdio_parameters
  apps_extensions: Callable[[], list[Any]] = apps_extensions
  child_pids: Callable[..., set[int]] = child_pids
  conformance_server: Callable[..., ServerProcess] = conformance_server
  round_robin_proxy: Callable[[Sequence[str]], ServerProcess] = (
      round_robin_proxy
  )
  server_args: Callable[..., list[str]] = server_args
  fixture_env: Callable[..., dict[str, str]] = fixture_env


@pytest.fixture
def mcp_apps() -> Helpers:
  """The helper functions of this conftest (see `Helpers`)."""
  return Helpers()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
  """The run's PostgreSQL server, shared by every pytest-xdist worker.

  Tests take a fresh database each (`create_database()`). The server refuses
  `kill()` and `start()`: a test that crashes or restarts it takes
  `private_pg_server`.
  """
  from postgres_server import shared_postgres_server  # pylint: disable=g-import-not-at-top

  with shared_postgres_server(os.environ.get("PYTEST_XDIST_TESTRUNUID")) as s:
    yield s


@pytest.fixture
def private_pg_server() -> Iterator[Any]:
  """A PostgreSQL server of the test's own, free to crash and restart."""
  from postgres_server import postgres_server  # pylint: disable=g-import-not-at-top

  with postgres_server() as server:
    yield server
