"""`pcp console`: what the CLI runs (the one module of `pcp_cli.console` it imports, inside the
command function, so no other command loads starlette, uvicorn or Jinja2).

Everything that can fail before serving (no store, a port in use) raises the usual PcpError;
then the first line on stdout is the sign-in URL, the browser is opened on it (unless told
not to; through a page only this user can read, so the token is on no command line), and the
console serves until Ctrl-C or SIGTERM, after which it returns normally.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
from pathlib import Path
from typing import Any

from pcp_cli import api
from pcp_cli.errors import UsageError

HOST = "127.0.0.1"


def bind(port: int) -> socket.socket:
    """The listening socket on 127.0.0.1 (port 0: a free one)."""
    from pcp_cli.listen import listen

    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port} is not a port number", hint="0 to 65535 (0: any free)")
    return listen(HOST, port, hint="pick another --port, or leave it out for a free one")


def _open_in_browser(url: str) -> Path:
    """Open `url` in the browser through a page only this user can read, and return its
    folder (removed when the console stops). A URL given to the browser is on a command line
    (xdg-open's, the browser's), which every user of the machine can read (`ps`): the
    one-time token in it could be used first. Jupyter opens its link the same way."""
    import tempfile
    import webbrowser
    from html import escape

    folder = Path(tempfile.mkdtemp(prefix="pcp-console-"))  # mode 0700
    page = folder / "open.html"
    with open(os.open(page, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w",
              encoding="utf-8") as out:
        out.write(f'<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" '
                  f'content="0;url={escape(url)}"><title>pcp console</title>'
                  f'<p><a href="{escape(url)}">Open the pcp console</a></p>\n')
    webbrowser.open(page.as_uri())
    return folder


def serve_console(store_path: str | os.PathLike[str] | None, *, port: int, open_browser: bool,
                  out: Any, log: Any) -> None:
    """Serve the console for the store until interrupted. `out` gets the sign-in URL (its first
    line), `log` the rest."""
    with api.open_store(store_path) as store:
        root = store.root
        # each page's refresh looks only at what changed under pages/
        api.watch_files(store, background_scan=True)
    sock = bind(port)
    from pcp_cli.console.app import build_app
    from pcp_cli.console.security import Gate

    gate = Gate(host=f"{HOST}:{sock.getsockname()[1]}")
    import uvicorn

    config = uvicorn.Config(build_app(root, gate), log_level="warning", access_log=False,
                            lifespan="off", ws="none", server_header=False,
                            timeout_graceful_shutdown=3)
    server = uvicorn.Server(config)

    def stop(*_: Any) -> None:
        server.should_exit = True  # before it serves: it starts, then stops at its first tick

    # From the moment the link is printed, Ctrl-C and SIGTERM stop the console normally (exit
    # 0): uvicorn takes them over while it serves, and raises them again for this handler
    # when it is done.
    stops = (signal.SIGINT, signal.SIGTERM)
    before = {sig: signal.signal(sig, stop) for sig in stops}
    opener = None
    try:
        out.write(gate.signin_url + "\n")
        out.flush()
        log.write(f"pcp console: store {root}; open the link above (it signs in once); "
                  "Ctrl-C stops\n")
        log.flush()
        opener = _open_in_browser(gate.signin_url) if open_browser else None
        server.run(sockets=[sock])
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        sock.close()
        if opener is not None:
            shutil.rmtree(opener, ignore_errors=True)
    log.write("pcp console: stopped\n")
    log.flush()
