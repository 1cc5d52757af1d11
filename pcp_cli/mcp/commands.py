"""The MCP front end's entry points for the CLI: `pcp serve`, `pcp audit`, `pcp grant`,
`pcp mcp-config`.

The CLI imports this one module of `pcp_cli.mcp`, inside its command functions (the layer test
holds it to that), so `pcp --help` loads none of it. Nothing here imports the SDK at module
level: serving imports it after everything that can fail before serving (no store, a bad
`pcp.yaml`, a bad option) has raised the usual PcpError. Each function returns JSON-able data,
the same shape `--json` prints; the CLI renders it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pcp_cli import api
from pcp_cli.config import resolve_store_root
from pcp_cli.errors import NotFound, UsageError
from pcp_cli.mcp.grants import (
    GRANT_KEYS,
    check_client_id,
    intersect_scopes,
    is_scope_pattern,
    resolve_grant,
)

CONFIG_TARGETS = ("claude-desktop", "cursor", "claude-code", "vscode", "json")
TOKEN_PLACEHOLDER = api.REGISTRY_PLACEHOLDER + " pcp grant token {client}>"


# -- serving ----------------------------------------------------------------------------------
def _grant_line(grant: Any) -> str:
    return (f"client {grant.client_id or '(none)'} ({grant.granted_by}); scopes "
            f"{', '.join(grant.scopes) or '(none)'}; sensitive "
            f"{'allowed' if grant.allow_sensitive else 'never'}; writes "
            f"{'on' if grant.allow_write else 'off'}")


def serve_stdio(store_path: str | os.PathLike[str] | None, *, client_id: str | None,
                scopes: Sequence[str] | None, allow_write: bool, log: Any) -> None:
    """`pcp serve`: resolve the client's grant, then serve MCP on stdio until the client
    leaves. Logs go to `log` (stderr). The SDK is imported once the store and the grant are
    known good (`stdio_server`), so a bad argument answers at once."""
    server = stdio_server(store_path, client_id=client_id, scopes=scopes,
                          allow_write=allow_write, log=log)
    from pcp_cli.mcp.server import run_stdio

    run_stdio(server)


def stdio_server(store_path: str | os.PathLike[str] | None, *, client_id: str | None,
                 scopes: Sequence[str] | None, allow_write: bool, log: Any,
                 watch: bool = True) -> Any:
    """The server `pcp serve` runs on stdio, ready to run: the client's grant resolved, the
    store's files watched (`watch`; without it every call's refresh scans, as on a file system
    that cannot be watched). The tests connect to it in-process, where a process-wide watch
    would outlive the test."""
    from pcp_cli.mcp.audit import AuditLog
    from pcp_cli.mcp.store_backend import StoreBackend

    started = time.perf_counter()
    with api.open_store(store_path, readonly=True, refresh=False) as store:
        root = store.root
        grant = resolve_grant(store.manifest.to_dict(), client_id, list(scopes or []) or None,
                              allow_write)
        # each call's refresh scans only what changed under pages/; the full scan of the
        # safety net runs in the background
        if watch:
            api.watch_files(store, background_scan=True)
    for notice in grant.notices:
        log.write(f"pcp serve: {notice}\n")
    log.write(f"pcp serve: store {root}; {_grant_line(grant)}\n")
    from pcp_cli.mcp.server import build_server

    server = build_server(StoreBackend(root), grant, AuditLog(root))
    log.write(f"pcp serve: ready in {time.perf_counter() - started:.2f}s; serving MCP on stdio\n")
    log.flush()
    return server


def serve_http(store_path: str | os.PathLike[str] | None, *, address: str,
               scopes: Sequence[str] | None, allow_write: bool, allow_remote: bool,
               insecure_http: bool, tls_cert: str | None, tls_key: str | None,
               allowed_hosts: Sequence[str], allowed_origins: Sequence[str],
               max_body_bytes: int, max_concurrent: int, call_timeout: float, log: Any,
               public_url: str | None = None) -> None:
    """`pcp serve --http [HOST:]PORT`: serve every client that has a token and a grant. Every
    argument, the store and each grant are checked before the SDK, Starlette and uvicorn are
    imported (`pcp_cli.mcp.http_options`), so a typo answers at once."""
    from pcp_cli.mcp.audit import AuditLog
    from pcp_cli.mcp.http_options import HttpOptions, check_exposure, parse_address
    from pcp_cli.mcp.store_backend import StoreBackend
    from pcp_cli.mcp.tokens import read_tokens

    host, port = parse_address(address)
    if max_body_bytes < 1024 or max_concurrent < 1 or call_timeout <= 0:
        raise UsageError("--max-body-bytes must be >= 1024, --max-concurrent >= 1 and "
                         "--call-timeout > 0", hint="or leave them at their defaults")
    if public_url is not None:
        parsed = urlsplit(public_url)
        if parsed.scheme != "https" or not parsed.hostname or parsed.path.strip("/") \
                or parsed.query or parsed.fragment:
            raise UsageError(f"--public-url {public_url[:80]!r} is not https://NAME[:PORT]",
                             hint="e.g. --public-url https://pcp.example.net (the proxy's "
                             "address, without /mcp)")
        public_url = public_url.rstrip("/")
    options = HttpOptions(host=host, port=port, tls_cert=tls_cert, tls_key=tls_key,
                          public_url=public_url,
                          allowed_hosts=tuple(allowed_hosts),
                          allowed_origins=tuple(allowed_origins), max_body_bytes=max_body_bytes,
                          max_concurrent_per_client=max_concurrent, call_timeout=call_timeout)
    check_exposure(options, allow_remote=allow_remote, insecure_http=insecure_http)
    with api.open_store(store_path, readonly=True, refresh=False) as store:
        root = store.root
        manifest = store.manifest.to_dict()
        # each call's refresh scans only what changed under pages/; the full scan of the
        # safety net runs in the background
        api.watch_files(store, background_scan=True)
    clients = sorted(manifest.get("clients") or {})
    for client in clients:  # a bad grant fails now, not on the client's first request
        resolve_grant(manifest, client, list(scopes or []) or None, allow_write)
    with_tokens = sorted({r.client_id for r in read_tokens(root)} & set(clients))
    log.write(f"pcp serve: store {root}; {len(clients)} client grant(s), with tokens: "
              f"{', '.join(with_tokens) or 'none (run `pcp grant token CLIENT`)'}\n")
    from pcp_cli.mcp.http import bind, build_app, run_http

    sock = bind(options)
    app = build_app(root, StoreBackend(root), AuditLog(root), options,
                    narrow_scopes=list(scopes or []) or None, allow_write=allow_write,
                    announce=log)
    run_http(app, options, sock, log)


def audit_records(store_path: str | os.PathLike[str] | None, *, client: str | None = None,
                  since: str | None = None) -> list[dict[str, Any]]:
    """`pcp audit`: the MCP access log, oldest first, optionally for one client or since a date."""
    from pcp_cli.mcp.audit import read_audit

    return read_audit(resolve_store_root(store_path), client=client, since=since)


def audit_newest(store_path: str | os.PathLike[str] | None, *, client: str | None = None,
                 limit: int | None = None, max_bytes: int | None = None
                 ) -> tuple[list[dict[str, Any]], bool]:
    """The newest audit records first (`pcp console`'s Assistants pages), read from the log's
    end, at most `limit` and about `max_bytes` of it: `(records, whole log read)`."""
    from pcp_cli.mcp.audit import read_audit_newest

    return read_audit_newest(resolve_store_root(store_path), client=client, limit=limit,
                             max_bytes=max_bytes)


def verify_audit(store_path: str | os.PathLike[str] | None) -> dict[str, Any]:
    """`pcp audit --verify`: check the log's hash chain; says where it was cut or changed."""
    from pcp_cli.mcp.audit import verify_audit as verify

    return verify(resolve_store_root(store_path))


# The client id and actor of what the owner does in `pcp console`, in the same log as the MCP
# calls (the console is a front end of its own; its writes are the person's).
CONSOLE_CLIENT = "console"
OWNER_ACTOR = "user"


@contextlib.contextmanager
def owner_action(root: Path, action: str, params: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Record one thing the owner did in the console: the log is opened first (a log that
    cannot be written refuses the action before it changes anything), the caller fills
    `page_ids` in the dict it is given, and the record says how it ended (`allowed`, or
    `refused` with the error's code when a PcpError stopped it, `error` otherwise)."""
    from pcp_cli.errors import PcpError
    from pcp_cli.mcp.audit import AuditLog

    done: dict[str, Any] = {"page_ids": []}
    outcome, code = "allowed", None
    with AuditLog(root).open() as sink:
        try:
            yield done
        except PcpError as exc:
            outcome, code = "refused", exc.code
            raise
        except BaseException:
            outcome, code = "error", "internal"
            raise
        finally:
            sink.write(client_id=CONSOLE_CLIENT, actor=OWNER_ACTOR, tool=f"console.{action}",
                       params=params, outcome=outcome, error_code=code,
                       result_count=len(done["page_ids"]), page_ids=done["page_ids"])


def audit_findings(store: api.Store) -> list[Any]:
    """`pcp doctor`'s findings for the audit log: where its hash chain was cut or changed
    (never repaired: it is evidence)."""
    from pcp_cli.mcp.audit import verify_audit as verify

    return [api.doctor_finding("audit_log", f".pcp/{problem['file']}",
                               f"line {problem['line']}: {problem['problem']}", fixable=False)
            for problem in verify(store.root)["problems"]]


@contextmanager
def owner_audit(store_root: Path, action: str, params: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Record one of the person's irreversible acts (`pcp retention collect`) in the audit
    log, as a tool call of the actor `user`: the log is opened first, so a broken log stops
    the act before it starts; the caller may set `result_count` in what is yielded. A failure
    is recorded as outcome `error` with its code, and raised on."""
    from pcp_cli.errors import PcpError
    from pcp_cli.mcp.audit import AuditLog

    fields: dict[str, Any] = {"result_count": None}
    with AuditLog(store_root).open() as sink:
        try:
            yield fields
        except PcpError as exc:
            sink.write(client_id=None, actor="user", tool=action, params=params,
                       outcome="error", error_code=exc.code)
            raise
        sink.write(client_id=None, actor="user", tool=action, params=params,
                   outcome="allowed", result_count=fields["result_count"])


# -- grants -----------------------------------------------------------------------------------
def _grant_view(root: Path, client_id: str, entry: Any,
                oauth: dict[str, Any] | None = None,
                default_namespace: str | None = None) -> dict[str, Any]:
    from pcp_cli.mcp.grants import MANIFEST_NAME, implicit_defaults
    from pcp_cli.mcp.tokens import client_tokens

    if oauth is None:
        oauth = _oauth_grants(root)
    entry = entry if isinstance(entry, dict) else {}
    made = oauth.get(client_id)
    scopes = list(entry.get("scopes") or [])
    defaults, source = list(entry.get("default_scopes") or []), MANIFEST_NAME
    if not defaults:  # what a call naming no scopes reads under this grant
        implicit, source = implicit_defaults(tuple(scopes), default_namespace)
        defaults = list(implicit)
    return {
        "client_id": client_id,
        "scopes": scopes,
        "default_scopes": defaults,
        "default_scopes_source": source,
        "pcp_version": entry.get("pcp_version", "1.2"),
        "allow_sensitive": bool(entry.get("allow_sensitive", False)),
        "allow_write": bool(entry.get("allow_write", False)),
        "description": entry.get("description"),
        "tokens": [t.public() for t in client_tokens(root, client_id)],
        # made by OAuth consent (`pcp serve --http`): which client, when, last used
        "oauth": None if made is None else {
            "client_id": made["oauth_client"], "client_name": made.get("client_name"),
            "created_at": made.get("created_at"), "last_used": made.get("last_used")},
    }


def _oauth_grants(root: Path) -> dict[str, Any]:
    from pcp_cli.mcp.oauth_state import oauth_grants

    return oauth_grants(root)


def _no_grant(client_id: str) -> NotFound:
    return NotFound(f"client {client_id} has no grant in pcp.yaml",
                    hint=f"add one: pcp grant add {client_id} --scope NAMESPACE")


def grant_list(store_path: str | os.PathLike[str] | None) -> list[dict[str, Any]]:
    with api.open_store(store_path, readonly=True, refresh=False) as store:
        clients = api.client_grants(store)
        oauth = _oauth_grants(store.root)
        return [_grant_view(store.root, c, clients[c], oauth, store.default_namespace)
                for c in sorted(clients)]


def grant_show(store_path: str | os.PathLike[str] | None, client_id: str) -> dict[str, Any]:
    check_client_id(client_id)
    with api.open_store(store_path, readonly=True, refresh=False) as store:
        clients = api.client_grants(store)
        if client_id not in clients:
            raise _no_grant(client_id)
        view = _grant_view(store.root, client_id, clients[client_id],
                           default_namespace=store.default_namespace)
        grant = resolve_grant(store.manifest.to_dict(), client_id, None, True)
        view["effective"] = grant.to_dict()
        return view


def grant_add(store_path: str | os.PathLike[str] | None, client_id: str, *,
              scopes: Sequence[str], sensitive: bool, write: bool,
              description: str | None,
              default_scopes: Sequence[str] = (),
              pcp_version: str | None = None) -> dict[str, Any]:
    """Add a grant, or replace the one `client_id` has (its tokens keep working).
    `default_scopes`: what a call naming no scopes reads, each inside `scopes` (none: the
    owner's namespace if granted, else the first scope; grants.implicit_defaults).
    `pcp_version`: the Portable Context Protocol version it is served ("1.2", "1.1")."""
    from pcp_cli.mcp.grants import PCP_VERSIONS

    check_client_id(client_id)
    if pcp_version is not None and pcp_version not in PCP_VERSIONS:
        raise UsageError(f"--pcp-version {pcp_version[:20]!r} is not a version pcp serves",
                         hint=f"one of: {', '.join(PCP_VERSIONS)}")
    if not scopes:
        raise UsageError("a grant needs at least one --scope",
                         hint=f"e.g. pcp grant add {client_id} --scope user:you --scope "
                         "'project:*'")
    bad = [s for s in scopes if not is_scope_pattern(s)]
    if bad:
        raise UsageError(f"--scope {bad[0][:80]!r} is not a namespace or pattern",
                         hint="a scope is a namespace (user:ada-lumen), a prefix pattern "
                         "(project:*) or *")
    bad = [s for s in default_scopes if not is_scope_pattern(s)]
    if bad:
        raise UsageError(f"--default-scope {bad[0][:80]!r} is not a namespace or pattern",
                         hint="a scope is a namespace (user:ada-lumen), a prefix pattern "
                         "(project:*) or *")
    outside = [s for s in default_scopes
               if s != "*" and intersect_scopes(tuple(scopes), [s])[0] != (s,)]
    if outside:
        raise UsageError(f"--default-scope {outside[0][:80]} is not inside the grant's scopes",
                         hint=f"a default scope is one of the --scope values, or inside one: "
                         f"{', '.join(scopes)}")
    entry: dict[str, Any] = {"scopes": list(dict.fromkeys(scopes)),
                             "allow_sensitive": sensitive, "allow_write": write}
    if default_scopes:
        entry["default_scopes"] = list(dict.fromkeys(default_scopes))
    if description:
        entry["description"] = description
    if pcp_version is not None:
        entry["pcp_version"] = pcp_version
    assert set(entry) <= set(GRANT_KEYS)
    with api.open_store(store_path, refresh=False) as store:
        clients = api.client_grants(store)
        replaced = client_id in clients
        clients[client_id] = entry
        resolve_grant({**store.manifest.to_dict(), "clients": clients}, client_id)
        api.set_client_grants(store, clients)
        view = _grant_view(store.root, client_id, entry,
                           default_namespace=store.default_namespace)
    view["replaced"] = replaced
    return view


def grant_remove(store_path: str | os.PathLike[str] | None, client_id: str) -> dict[str, Any]:
    """Remove the grant and every token of `client_id` (its requests fail at once), OAuth's
    included."""
    from pcp_cli.mcp.oauth_state import forget_grant
    from pcp_cli.mcp.tokens import revoke_tokens

    check_client_id(client_id)
    with api.open_store(store_path, refresh=False) as store:
        clients = api.client_grants(store)
        if client_id not in clients:
            raise _no_grant(client_id)
        del clients[client_id]
        with store.locked():
            revoked = revoke_tokens(store.root, client_id)
            api.set_client_grants(store, clients)
        oauth_revoked = forget_grant(store.root, client_id)
    return {"client_id": client_id, "removed": True,
            "tokens_revoked": len(revoked) + oauth_revoked}


def oauth_clients(store_path: str | os.PathLike[str] | None) -> list[dict[str, Any]]:
    """`pcp grant oauth-clients`: the OAuth clients registered with `pcp serve --http`."""
    from pcp_cli.mcp.oauth_state import list_clients

    return list_clients(resolve_store_root(store_path))


def oauth_remove_client(store_path: str | os.PathLike[str] | None,
                        client_id: str) -> dict[str, Any]:
    """`pcp grant remove-client`: forget the registration, its tokens and the grant made for
    it in pcp.yaml."""
    from pcp_cli.mcp.oauth_state import remove_client

    with api.open_store(store_path, refresh=False) as store:
        result = remove_client(store.root, client_id)
        clients = api.client_grants(store)
        if any(g in clients for g in result["grants"]):
            api.set_client_grants(store, {k: v for k, v in clients.items()
                                          if k not in result["grants"]})
    return result


def oauth_pending(store_path: str | os.PathLike[str] | None) -> list[dict[str, Any]]:
    from pcp_cli.mcp.oauth_state import pending_requests

    return pending_requests(resolve_store_root(store_path))


def oauth_approve(store_path: str | os.PathLike[str] | None, request_id: str) -> dict[str, Any]:
    from pcp_cli.mcp.oauth_state import approve_request

    return approve_request(resolve_store_root(store_path), request_id)


def grant_token(store_path: str | os.PathLike[str] | None, client_id: str, *,
                rotate: bool) -> dict[str, Any]:
    from pcp_cli.mcp.tokens import issue_token

    check_client_id(client_id)
    with api.open_store(store_path, refresh=False) as store:
        if client_id not in api.client_grants(store):
            raise _no_grant(client_id)
        with store.locked():
            token, record = issue_token(store.root, client_id, rotate=rotate)
    return {"client_id": client_id, "token": token, "token_id": record.token_id,
            "created_at": record.created_at, "rotated": rotate,
            "note": "shown once; only a salted hash is kept, in .pcp/ (never committed)"}


def grant_revoke_tokens(store_path: str | os.PathLike[str] | None,
                        client_id: str) -> dict[str, Any]:
    from pcp_cli.mcp.tokens import revoke_tokens

    check_client_id(client_id)
    with api.open_store(store_path, refresh=False) as store, store.locked():
        gone = revoke_tokens(store.root, client_id)
    return {"client_id": client_id, "tokens_revoked": len(gone),
            "token_ids": [t.token_id for t in gone]}


# -- client configurations --------------------------------------------------------------------
def _bridge_refuses_plain_http(url: str) -> bool:
    """mcp-remote refuses an http:// URL unless its host is localhost or 127.0.0.1 (a server
    behind --insecure-http, say) or it is given --allow-http."""
    parts = urlsplit(url)
    return parts.scheme == "http" and parts.hostname not in ("localhost", "127.0.0.1")


def serve_launch(client: str, root: Path, *, allow_write: bool = False) -> dict[str, Any]:
    """How a client launches `pcp serve` over stdio for `client` on the store at `root`: this
    interpreter and absolute paths, so it runs from apps that do not see the shell's PATH.
    `pcp mcp-config` and `pcp register` both write it."""
    return {"command": sys.executable,
            "args": ["-m", "pcp_cli", "serve", "--client-id", client,
                     *(["--allow-write"] if allow_write else []), "--store", str(root)]}


def mcp_config(store_path: str | os.PathLike[str] | None, client_id: str | None, *,
               target: str, http_url: str | None, allow_write: bool = False) -> dict[str, Any]:
    """The configuration to paste into `target` for `client_id`: stdio (this interpreter, this
    store, absolute paths) or, with `http_url`, the URL and an Authorization header whose token
    is a placeholder. `grant` is None when `client_id` has no grant (the CLI then says so and
    prints the `pcp grant add` command). With `allow_write`, the stdio server offers the write
    tools (over HTTP the running server decides: `pcp serve --http … --allow-write`);
    `write_command` is the `pcp grant add` that lets the grant write, when it does not."""
    if target not in CONFIG_TARGETS:
        raise UsageError(f"--for {target!r} is not one of {', '.join(CONFIG_TARGETS)}",
                         hint=f"use one of: {', '.join(CONFIG_TARGETS)}")
    if client_id is not None:
        check_client_id(client_id)
    client = client_id or target.replace("json", "my-client")
    with api.open_store(store_path, readonly=True, refresh=False) as store:
        root = store.root.resolve()
        clients = api.client_grants(store)
        default_ns = store.default_namespace
    name = "pcp"
    if http_url:
        if not http_url.startswith(("http://", "https://")):
            raise UsageError(f"--http {http_url[:80]!r} is not an http(s) URL",
                             hint="e.g. --http http://127.0.0.1:8765/mcp")
        header = f"Bearer {TOKEN_PLACEHOLDER.format(client=client)}"
        server: dict[str, Any] = {"url": http_url, "headers": {"Authorization": header}}
        if target in ("vscode", "claude-code", "json"):
            server = {"type": "http", **server}
        if target == "claude-desktop":
            # Claude Desktop's config file launches stdio servers only; bridge with mcp-remote.
            server = {"command": "npx", "args": [
                "-y", "mcp-remote", http_url, "--header", f"Authorization:{header}"]}
            if _bridge_refuses_plain_http(http_url):
                server["args"].append("--allow-http")
        command = None
    else:
        server = serve_launch(client, root, allow_write=allow_write)
        if target in ("vscode", "claude-code", "json"):
            server = {"type": "stdio", **server}
        command = shlex.join([server["command"], *server["args"]])
    if target == "vscode":
        config: dict[str, Any] = {"servers": {name: server}}
    else:
        config = {"mcpServers": {name: server}}
    where = {
        "claude-desktop": "Claude Desktop: Settings > Developer > Edit Config "
                          "(claude_desktop_config.json); merge into mcpServers, then restart",
        "cursor": "Cursor: ~/.cursor/mcp.json (or .cursor/mcp.json in a project)",
        "claude-code": ".mcp.json at the project root (or `claude mcp add-json pcp '<server>'`)",
        "vscode": "VS Code: .vscode/mcp.json in the workspace",
        "json": "any client that takes the common mcpServers JSON",
    }[target]
    grant_cmd = (f"pcp grant add {client} --scope {default_ns}"
                 + (" --write" if allow_write else "") + f" --store {shlex.quote(str(root))}")
    grant = clients.get(client)
    write_cmd = None
    if allow_write and isinstance(grant, dict) and not grant.get("allow_write"):
        write_cmd = shlex.join([
            "pcp", "grant", "add", client,
            *[part for scope in grant.get("scopes") or [default_ns]
              for part in ("--scope", str(scope))],
            *(["--sensitive"] if grant.get("allow_sensitive") else []), "--write",
            "--store", str(root)])
    out: dict[str, Any] = {
        "client_id": client,
        "for": target,
        "transport": "http" if http_url else "stdio",
        "store": str(root),
        "config": config,
        "where": where,
        "grant": grant,
        "grant_command": None if client in clients else grant_cmd,
        "allow_write": allow_write,
        "write_command": write_cmd,
    }
    if command:
        out["command"] = command
    if http_url:
        out["token_command"] = f"pcp grant token {client} --store {shlex.quote(str(root))}"
    return out


# -- the PCP device registry (~/.pcp/sources.json) --------------------------------------------
REGISTRY_CLIENT = "registry"  # the client id a registered source's `pcp serve` uses by default
REGISTRY_TRANSPORTS = ("stdio", "http")


def register_source(store_path: str | os.PathLike[str] | None, *, name: str | None,
                    source_id: str | None, transport: str, client_id: str | None,
                    url: str | None) -> dict[str, Any]:
    """`pcp register`: this store's entry in `~/.pcp/sources.json` (first-party, `added_by:
    app`), launching `pcp serve` as `pcp mcp-config` does, or at `url` over HTTP."""
    if transport not in REGISTRY_TRANSPORTS:
        raise UsageError(f"--transport {transport!r} is not stdio or http",
                         hint="use --transport stdio (the default) or --transport http")
    if url is not None and transport != "http":
        raise UsageError("--url is for --transport http", hint="add --transport http")
    client = check_client_id(client_id or REGISTRY_CLIENT)
    if source_id is not None and not source_id.strip():
        raise UsageError("--id must not be empty", hint="e.g. --id pcp-work")
    with api.open_store(store_path, readonly=True, refresh=False) as store:
        root = store.root.resolve()
        entry: dict[str, Any] = {
            "id": source_id or "pcp-" + (_slug(root.name) or "store"),
            "name": name or f"pcp: {root.name}",
            "kind": "context-store",
            "description": f"pcp context store at {root} (owner {store.owner_id})",
            "transport": transport,
        }
        if transport == "stdio":
            entry.update(serve_launch(client, root))
        else:
            url = url or "http://127.0.0.1:8765/mcp"
            if not url.startswith(("http://", "https://")):
                raise UsageError(f"--url {url[:80]!r} is not an http(s) URL",
                                 hint="e.g. --url http://127.0.0.1:8765/mcp")
            entry.update(url=url, headers={
                "Authorization": f"Bearer {TOKEN_PLACEHOLDER.format(client=client)}"})
        entry["added_by"] = "app"
        out = api.register_source(store, entry)
        has_grant = client in api.client_grants(store)
        default_ns = store.default_namespace
    out["client_id"] = client
    out["grant_command"] = None if has_grant else (
        f"pcp grant add {client} --scope {default_ns} --store {shlex.quote(str(root))}")
    out["token_command"] = (f"pcp grant token {client} --store {shlex.quote(str(root))}"
                            if transport == "http" else None)
    return out


def unregister_source(store_path: str | os.PathLike[str] | None,
                      source_id: str | None) -> dict[str, Any]:
    """`pcp unregister`: remove this store's entry from `~/.pcp/sources.json`."""
    with api.open_store(store_path, readonly=True, refresh=False) as store:
        return api.unregister_source(store, source_id)


def list_sources(own_store_id: str | None) -> dict[str, Any]:
    """`pcp sources`: the registered sources, header and env values left out (they may hold
    tokens); `this_store` marks the entry of the store pcp runs in."""
    from pcp_cli.mcp.fanout import describe

    data = api.registered_sources()
    shown = []
    for entry in data["sources"]:
        view = {**describe(entry), "description": entry.get("description"),
                "added_by": entry.get("added_by"), "file": entry["file"],
                "this_store": own_store_id is not None
                and api.source_store_id(entry) == own_store_id}
        if entry["transport"] == "stdio":
            view["launch"] = shlex.join([entry["command"], *map(str, entry.get("args") or [])])
            view["env"] = sorted(entry.get("env") or {})
            view["approval"] = entry["approval"]
        else:
            view["url"] = entry["url"]
            view["headers"] = sorted(entry.get("headers") or {})
        shown.append(view)
    return {"files": data["files"], "sources": shown, "problems": data["problems"]}


def query_sources(selection: Sequence[str], tool: str, arguments: dict[str, Any], *,
                  timeout: float, own_store_id: str | None) -> dict[str, Any]:
    """`pcp search|timeline list --sources`: call `tool` on the selected registered sources
    (`all`, or ids) other than this store, each within `timeout` seconds. `{this_store,
    groups, problems}`; each group is `{source, status, error, **the tool's answer}`."""
    from pcp_cli.mcp.fanout import describe
    from pcp_cli.mcp.fanout import query_sources as fan_out

    if not timeout > 0:
        raise UsageError("--source-timeout must be more than 0 seconds", hint="e.g. 20")
    data = api.registered_sources()
    known = {e["id"]: e for e in data["sources"]}
    wanted = [part.strip() for item in selection for part in item.split(",") if part.strip()]
    if not wanted:
        raise UsageError("--sources needs `all` or source ids",
                         hint="`pcp sources` lists them")
    if "all" in wanted:
        chosen = list(known.values())
    else:
        missing = [w for w in wanted if w not in known]
        if missing:
            raise UsageError(f"no registered source {', '.join(map(repr, missing))}",
                             hint=f"registered: {', '.join(known) or 'none'} (`pcp sources`; "
                             "`pcp register` adds a store)")
        chosen = [known[w] for w in dict.fromkeys(wanted)]
    def is_mine(entry: dict[str, Any]) -> bool:
        return own_store_id is not None and api.source_store_id(entry) == own_store_id

    mine = next((e for e in data["sources"] if is_mine(e)), None)
    others = [e for e in chosen if not is_mine(e)]  # this store is searched locally
    runs = [e["transport"] != "stdio" or e["approval"] == "approved" for e in others]
    asked = iter(fan_out([e for e, ok in zip(others, runs, strict=True) if ok], tool,
                         arguments, timeout=timeout))
    groups = []
    for entry, ok in zip(others, runs, strict=True):
        if not ok:
            groups.append(_not_approved(entry))
            continue
        group = next(asked)
        answer = group.pop("data") or {}
        answer.pop("schema_version", None)
        groups.append({**group, **answer})
    return {"this_store": describe(mine) if mine else None, "groups": groups,
            "problems": data["problems"]}


def _not_approved(entry: dict[str, Any]) -> dict[str, Any]:
    """The group of a stdio source the person has not approved (or whose command changed since):
    it is not started, and the error says what it would run and how to approve it."""
    from pcp_cli.mcp.fanout import describe

    launch = shlex.join([entry["command"], *map(str, entry.get("args") or [])])
    why = "its command changed since you approved it" if entry["approval"] == "changed" \
        else "you have not approved it"
    return {"source": describe(entry), "status": "not_approved",
            "error": f"not started: it would run `{launch[:300]}` and {why}; if you trust it, "
                     f"run: pcp sources approve {shlex.quote(entry['id'])}"}


def _slug(name: str) -> str:
    import re

    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40]
