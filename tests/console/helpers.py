"""A real console for the tests: uvicorn serving `pcp_cli.console.app` on 127.0.0.1 (a free
port) in a thread of the test process, and a small HTTP client that keeps the session cookie.

`running_console(store)` yields a `Console` whose `signin()` opens the one-time link; the
server stops (and the thread is joined) on exit. The process-level behaviour (`pcp console`
printing its link first, stopping on SIGTERM) is tested on the real command in
test_console_process.py.
"""

from __future__ import annotations

import http.client
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from tests.mcp.http_helpers import REPO

CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: str

    @property
    def location(self) -> str:
        return self.headers.get("location", "")


@dataclass
class Console:
    root: Path
    signin_url: str
    host: str
    port: int
    cookie: str | None = None
    csrf: str | None = None
    server: object = field(default=None, repr=False)

    @property
    def origin(self) -> str:
        return f"http://{self.host}"

    def request(self, method: str, path: str, body: str | None = None, *,
                headers: dict[str, str] | None = None, cookie: bool = True) -> Reply:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        sent = {"Host": self.host}
        if cookie and self.cookie:
            sent["Cookie"] = f"pcp_console_{self.port}={self.cookie}"
        if body is not None:
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        sent.update(headers or {})
        sent = {k: v for k, v in sent.items() if v is not None}
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for key, value in sent.items():
            conn.putheader(key, value)
        data = body.encode() if body is not None else None
        if data is not None:
            conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data)
        response = conn.getresponse()
        reply = Reply(response.status, {k.lower(): v for k, v in response.getheaders()},
                      response.read().decode("utf-8", "replace"))
        conn.close()
        return reply

    def get(self, path: str, **options: object) -> Reply:
        reply = self.request("GET", path, **options)  # type: ignore[arg-type]
        found = CSRF.search(reply.body)
        if found:
            self.csrf = found.group(1)
        return reply

    def post(self, path: str, fields: list[tuple[str, str]] | None = None, *,
             csrf: bool = True, origin: str | None = "", **options: object) -> Reply:
        from urllib.parse import urlencode

        if self.csrf is None:
            self.get("/review")
        pairs = ([("csrf", self.csrf or "")] if csrf else []) + list(fields or [])
        headers = {"Origin": self.origin if origin == "" else origin}
        return self.request("POST", path, urlencode(pairs), headers=headers,  # type: ignore
                            **options)

    def signin(self) -> Reply:
        parts = urlsplit(self.signin_url)
        reply = self.request("GET", f"{parts.path}?{parts.query}", cookie=False)
        cookie = reply.headers.get("set-cookie", "")
        found = re.match(rf"pcp_console_{self.port}=([^;]+)", cookie)
        assert found, (reply.status, reply.headers)
        self.cookie = found.group(1)
        return reply


@contextmanager
def running_console(root: Path) -> Iterator[Console]:
    import uvicorn

    from pcp_cli.console.app import build_app
    from pcp_cli.console.commands import bind
    from pcp_cli.console.security import Gate

    sock = bind(0)
    port = sock.getsockname()[1]
    gate = Gate(host=f"127.0.0.1:{port}")
    config = uvicorn.Config(build_app(root, gate), log_level="warning", access_log=False,
                            lifespan="off", ws="none")
    server = uvicorn.Server(config)
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:  # set by uvicorn once it listens; the socket is bound already
            if not thread.is_alive():
                raise RuntimeError("the console did not start")
            thread.join(0.01)
        yield Console(root, gate.signin_url, gate.host, port, server=server)
    finally:
        server.should_exit = True
        thread.join()
        sock.close()


@contextmanager
def pcp_console(store: Path, *, stop: int = signal.SIGTERM) -> Iterator[str]:
    """`pcp console --no-browser` as a process; yields the sign-in link it prints first."""
    env = {**os.environ, "PCP_STORE": str(store), "PYTHONPATH": str(REPO)}
    process = subprocess.Popen([sys.executable, "-m", "pcp_cli", "console", "--no-browser"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env, text=True)
    try:
        line = process.stdout.readline().strip()  # type: ignore[union-attr]
        assert line.startswith("http://127.0.0.1:") and "/signin?token=" in line, \
            process.stderr.read()  # type: ignore[union-attr]
        yield line
    finally:
        process.send_signal(stop)
        assert process.wait(timeout=30) == 0
        assert "pcp console: stopped" in process.stderr.read()  # type: ignore[union-attr]
