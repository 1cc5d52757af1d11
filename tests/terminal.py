"""Run a real `pcp` process whose stdin and stdout are a terminal (a pseudo-terminal).

For what pcp does only on a terminal: the pager, short ids in tables, `show` bounding a long
text, `pcp add` opening the editor. stderr stays a pipe, so messages can be told from data.
"""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class TerminalResult:
    screen: str  # what reached the terminal (stdout), with \r\n made \n
    stderr: str
    code: int


def run_in_terminal(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
                    columns: int = 100, rows: int = 40, typed: str = "",
                    timeout: float = 60, stderr_too: bool = False) -> TerminalResult:
    """`stderr_too`: stderr on the terminal as well (progress bars), so `screen` has both."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    full_env = {**os.environ, "COLUMNS": str(columns), "LINES": str(rows), "TERM": "dumb",
                **(env or {})}
    proc = subprocess.Popen([sys.executable, "-m", "pcp_cli", *map(str, args)], stdin=slave,
                            stdout=slave, stderr=slave if stderr_too else subprocess.PIPE,
                            cwd=cwd, env=full_env,
                            close_fds=True)
    os.close(slave)
    if typed:
        os.write(master, typed.encode("utf-8"))
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while True:
        if time.monotonic() > deadline:
            proc.kill()
            raise TimeoutError(f"pcp {' '.join(args)} did not finish")
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # every writer closed the terminal (Linux says EIO)
                data = b""
            if data:
                chunks.append(data)
                continue
            proc.wait(timeout=max(1.0, deadline - time.monotonic()))
            break
        if proc.poll() is not None and not select.select([master], [], [], 0.2)[0]:
            break
    os.close(master)
    stderr = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    screen = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    return TerminalResult(screen, stderr, proc.returncode)
