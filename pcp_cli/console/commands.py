"""`pcp console`: what the CLI runs (the one module of `pcp_cli.console` it imports, inside the
command function, so no other command loads starlette, uvicorn or Jinja2).

Everything that can fail before serving (no store, a port in use) raises the usual PcpError;
then the first line on stdout is the sign-in URL, the browser is opened on it (unless told
not to), and the console serves until Ctrl-C or SIGTERM, after which it returns normally.
"""

from __future__ import annotations

import os
import signal
import socket
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
    app = build_app(root, gate)
    out.write(gate.signin_url + "\n")
    out.flush()
    log.write(f"pcp console: store {root}; open the link above (it signs in once); "
              "Ctrl-C stops\n")
    log.flush()
    if open_browser:
        import webbrowser

        webbrowser.open(gate.signin_url)
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                            ws="none", server_header=False, timeout_graceful_shutdown=3)
    # uvicorn stops on SIGINT and SIGTERM, then raises the signal again for the handler that
    # was there before it: ours, which has nothing left to do, so `pcp console` ends normally.
    stops = (signal.SIGINT, signal.SIGTERM)
    before = {sig: signal.signal(sig, lambda *_: None) for sig in stops}
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        sock.close()
    log.write("pcp console: stopped\n")
    log.flush()
