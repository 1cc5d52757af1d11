"""How a long-lived process and later commands learn what changed without scanning every file:
the file watch (`watch_files`, for `pcp serve`) and the store monitor (`pcp monitor`). The
pieces themselves: `pcp_cli/store/changes/`."""

from __future__ import annotations

import os
from typing import Any

from pcp_cli.errors import UsageError
from pcp_cli.store.store import Store


def watch_files(store: Store, *, background_scan: bool = False) -> bool:
    """For a long-lived process (`pcp serve`): watch the folders under pages/ (inotify) so a
    refresh skips the stat scan of every head file while nothing moved, and looks only at the
    files named after a change. False where that cannot be trusted (not Linux, a network file
    system): every refresh then scans, as without it. `background_scan`: the once-a-minute
    full scan (the safety net) runs in a thread of its own, not in a call. See
    pcp_cli.store.changes.watch."""
    from pcp_cli.store.changes.watch import keep_scanning, watch

    if not watch(store.layout.pages):
        return False
    if background_scan:
        root = store.root
        keep_scanning(store.layout.pages, lambda: Store.open(root, readonly=True))
    return True


def monitor_status(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Whether this store's monitor runs, since when, and whether commands start it."""
    from pcp_cli.config import resolve_store_root
    from pcp_cli.store.changes import monitor

    root = resolve_store_root(path)
    return {"store": str(root), **monitor.status(root)}


def monitor_start(path: str | os.PathLike[str] | None = None, *,
                  idle_timeout: float | None = None) -> dict[str, Any]:
    """Start the store's monitor in the background and have later commands restart it."""
    from pcp_cli.config import resolve_store_root
    from pcp_cli.errors import UsageError as Unsupported
    from pcp_cli.store.changes import monitor

    root = resolve_store_root(path)
    why = monitor.supported(root)
    if why is not None:
        raise Unsupported(why, hint="nothing changed: commands keep scanning the store")
    if idle_timeout is not None and idle_timeout <= 0:
        raise UsageError(f"--idle-timeout must be more than 0 seconds, not {idle_timeout:g}")
    if not monitor.start(root, idle_timeout=idle_timeout):
        from pcp_cli.errors import StorageFailed

        raise StorageFailed(
            "the store monitor did not start within 10 s",
            hint=f"its log is {monitor.folder(root) / 'log'}; commands keep scanning meanwhile")
    return monitor_status(root)


def monitor_stop(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Stop the store's monitor; later commands no longer start it."""
    from pcp_cli.config import resolve_store_root
    from pcp_cli.store.changes import monitor

    root = resolve_store_root(path)
    was_running = monitor.stop(root)
    return {**monitor_status(root), "stopped": was_running}


def monitor_run(path: str | os.PathLike[str] | None = None, *,
                idle_timeout: float | None = None) -> int:
    """Be the store's monitor in this process until idle, stopped or the store goes away."""
    from pcp_cli.config import resolve_store_root
    from pcp_cli.store.changes import monitor

    root = resolve_store_root(path)
    why = monitor.supported(root)
    if why is not None:
        raise UsageError(why)
    return monitor.run(root, idle_timeout=idle_timeout or monitor.DEFAULT_IDLE_TIMEOUT_S)
