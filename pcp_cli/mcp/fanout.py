"""The client side of the PCP device registry: ask other registered PCP sources the same
question over MCP (stdio or streamable HTTP, as each entry says), all at once, each within its
own timeout, and return one group per source.

Results are grouped by source, never merged: registry-v1 §4 leaves cross-store ranking open (whose
score wins?), and each source's `filters_applied` describes only what that source ran. A source
that cannot be launched, refuses, answers with an error or does not answer in time is one group
with `status` `failed` or `timed_out` and an `error`, and the other groups are unaffected.
Stored content from another source is data, never an instruction, like our own.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import math
import os
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import anyio

from pcp_cli import api


def describe(entry: dict[str, Any]) -> dict[str, Any]:
    """The part of a registry entry a result group repeats (never its env or headers)."""
    return {key: entry[key] for key in ("id", "name", "kind", "transport") if key in entry}


def query_sources(entries: Sequence[dict[str, Any]], tool: str, arguments: dict[str, Any], *,
                  timeout: float) -> list[dict[str, Any]]:
    """Call `tool` with `arguments` on every entry at once; one group per entry, in order:
    `{source, status: ok|failed|timed_out, error, data}` where `data` is the tool's own
    structured answer (its envelope: results or events, filters_applied, …)."""
    groups: list[dict[str, Any]] = [{} for _ in entries]

    async def main() -> None:
        async with anyio.create_task_group() as tasks:
            for at, entry in enumerate(entries):
                tasks.start_soon(_one, at, entry)

    async def _one(at: int, entry: dict[str, Any]) -> None:
        groups[at] = await _query(entry, tool, arguments, timeout)

    if entries:
        # the SDK's client is imported before any source's clock starts (about a second of a
        # loaded machine's time that is not the source's)
        import mcp.client.stdio  # noqa: F401
        import mcp.client.streamable_http  # noqa: F401

        with _sdk_log_kept():
            anyio.run(main)
    return groups


# The group whose source the running task talks to: the SDK's client logs a line (with a
# traceback) for every line a source writes that is not a JSON-RPC message; those are counted
# into that source's group, never printed (a source printing `y` forever wrote 270,000 lines of
# tracebacks on the terminal).
_group: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "pcp_fanout_group", default=None)


class _KeepSdkLog(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        group = _group.get()
        if group is not None:
            said = group.setdefault("_said", [0, ""])
            said[0] += 1
            if not said[1]:
                said[1] = record.getMessage()


@contextlib.contextmanager
def _sdk_log_kept() -> Iterator[None]:
    sdk = logging.getLogger("mcp")
    handler, before = _KeepSdkLog(), sdk.propagate
    sdk.addHandler(handler)
    sdk.propagate = False
    try:
        yield
    finally:
        sdk.removeHandler(handler)
        sdk.propagate = before


async def _query(entry: dict[str, Any], tool: str, arguments: dict[str, Any],
                 timeout: float) -> dict[str, Any]:
    group: dict[str, Any] = {"source": describe(entry), "status": "ok", "error": None,
                             "data": None}
    _group.set(group)  # this task's context, and its children's
    with StderrTail() as errlog:
        try:
            with anyio.fail_after(timeout):
                group["data"] = await _call(entry, tool, arguments, errlog.file)
        except TimeoutError:
            group.update(status="timed_out", error=f"no answer within {_seconds(timeout)}")
        except SourceFailed as exc:
            group.update(status="failed", error=str(exc))
        except Exception as exc:  # noqa: BLE001 - any failure of one source is that source's
            group.update(status="failed", error=_why(exc, errlog.text()))
    said = group.pop("_said", None)
    if said and group["status"] != "ok":
        group["error"] += (f"; the MCP client logged {said[0]:,} problem"
                           f"{'s' if said[0] != 1 else ''} with it (the first: {said[1][:200]})")
    return group


class StderrTail:
    """A stdio source's stderr: a pipe read by a thread that keeps only its last `LIMIT` bytes,
    for the error's "last words". A source writing without end fills neither the disk (a
    temporary file did, for as long as the timeout let it) nor memory."""

    LIMIT = 64 * 1024

    def __init__(self) -> None:
        read, write = os.pipe()
        self._read = read
        self.file = os.fdopen(write, "w", encoding="utf-8", errors="replace")
        self._kept = bytearray()
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()

    def _drain(self) -> None:
        try:
            while chunk := os.read(self._read, 65536):
                self._kept += chunk
                if len(self._kept) > 2 * self.LIMIT:
                    del self._kept[:-self.LIMIT]
        except OSError:
            pass
        finally:
            os.close(self._read)

    def text(self) -> str:
        """What the source said last (its process ended, or the rest waits: a process it left
        behind may hold the pipe open)."""
        self.file.close()
        self._drainer.join(timeout=1)
        return bytes(self._kept[-self.LIMIT:]).decode("utf-8", "replace")

    def __enter__(self) -> StderrTail:
        return self

    def __exit__(self, *exc: object) -> None:
        self.file.close()


class SourceFailed(Exception):
    """The source answered, but not with a usable result (its own words)."""


async def _call(entry: dict[str, Any], tool: str, arguments: dict[str, Any],
                errlog: Any) -> dict[str, Any]:
    from mcp import Client

    if entry["transport"] == "stdio":
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=entry["command"], args=[str(a) for a in entry.get("args") or []],
            env={str(k): str(v) for k, v in (entry.get("env") or {}).items()} or None)
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            result = await client.call_tool(tool, arguments)
        return _answer(result)
    headers = {str(k): str(v) for k, v in (entry.get("headers") or {}).items()}
    if any(api.REGISTRY_PLACEHOLDER in value for value in headers.values()):
        raise SourceFailed("its headers still hold the token placeholder: put the token from "
                           "`pcp grant token CLIENT` in the registry entry")
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client(headers=headers) as http, Client(
            streamable_http_client(entry["url"], http_client=http), mode="legacy") as client:
        result = await client.call_tool(tool, arguments)
    return _answer(result)


def _answer(result: Any) -> dict[str, Any]:
    """The tool's structured answer; its text when it sent no structured content (older
    servers put the JSON there)."""
    data = result.structured_content
    text = " ".join(getattr(c, "text", "") for c in result.content or []).strip()
    if result.is_error:
        error = (data or {}).get("error") if isinstance(data, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        raise SourceFailed(f"the source answered with an error: {message or text or '?'}")
    if not isinstance(data, dict):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
    if not isinstance(data, dict):
        raise SourceFailed("the source's answer is not a JSON object")
    return data


def _why(exc: BaseException, stderr: str) -> str:
    """One line: what went wrong, and the last thing the source said on stderr."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    words = str(exc).strip().splitlines()
    reason = f"{type(exc).__name__}: {words[0]}" if words else type(exc).__name__
    if isinstance(exc, FileNotFoundError):
        reason = f"cannot launch it ({exc.strerror}: {exc.filename})"
    said = [line.strip() for line in stderr.splitlines() if line.strip()]
    return f"{reason}; its last words: {said[-1][:300]}" if said else reason


def _seconds(timeout: float) -> str:
    return f"{timeout:g} s" if math.isfinite(timeout) else "ever"
