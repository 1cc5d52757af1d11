"""`pcp serve --http`: the same server over MCP streamable HTTP, for clients on other machines.

The SDK's `StreamableHTTPSessionManager` runs the transport, stateless and with JSON responses
(every POST is answered on its own, so nothing about a client lives in a connection). In front
of it, one ASGI layer of ours, in this order:

1. `Host` and `Origin` validation (DNS-rebinding protection): a `Host` this server was not bound
   or told to answer to is 421, an `Origin` not allowed is 403. A request without `Origin` (any
   non-browser client) passes.
2. Bearer token authentication: an OAuth access token (`pcp_cli.mcp.oauth`, issued by this
   server's own authorization endpoints, `pcp_cli.mcp.oauth_http`, for this /mcp only) or a
   `pcp grant token` token (`pcp_cli.mcp.tokens`): no token or a wrong one is 401 with a
   `WWW-Authenticate` header pointing at the RFC 9728 metadata, and an audit record. A token
   names one client id; a client with no grant in `pcp.yaml` is refused the same way.
3. `GET /mcp` is 405: the server is stateless and starts no messages, so a client's event
   stream would only sit open (and used to count as a request in flight).
4. At most `max_concurrent_per_client` requests in flight per client (429 beyond), and a cap on
   the whole request's time (a tool call past `call_timeout` is answered with an error).
5. The SDK's own body-size cap (413), JSON-RPC parsing (400 on malformed input) and, again, its
   Host/Origin check.

Before any of it, `pcp_cli.mcp.connections` bounds the connections themselves (a request head
must arrive within seconds; slow ones cannot crowd out clients; unauthenticated requests do not
keep their connection).

Which ToolSession answers a call: the authenticated client's, in one suppression context:
- the `Pcp-Session-Id` request header, when the client sends one (its own task or conversation
  id: 1-128 letters, digits, `.`, `_`, `-`; it spans connections);
- else the MCP session: the response to `initialize` carries an `Mcp-Session-Id` (issued here,
  random) that the client sends back with every later request, so each chat of one client has
  its own suppressions;
- else (a client that keeps no session, or the 2026-07-28 protocol, which has none) the
  client's default context.
Suppression is per (client, context), so one client's suppression never reaches another's.
The session ids are this server's own, over the SDK's stateless transport: the SDK's stateful
mode (`stateless=False`) keeps a server task and streams per session for 30 idle minutes and
caps the sessions of all clients together (one client opening 10,000 would lock every other
out), while pcp needs a key and nothing else. A session id pcp does not know (after a restart,
or idle for `CONTEXT_IDLE_SECONDS`) is not refused: it starts with nothing suppressed. At most
`MAX_CONTEXTS_PER_CLIENT` contexts per client are kept (the least recently used goes);
`DELETE /mcp` with an `Mcp-Session-Id` ends that one. Cursors carry their own state and need no
context.

The grant is re-read from `pcp.yaml` and the tokens from `.pcp/tokens.json` whenever those files
change: a revoked token or an edited grant takes effect on the next request.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import os
import re
import secrets
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import anyio
import anyio.to_thread
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from pcp_cli import api
from pcp_cli.mcp import connections, oauth_http
from pcp_cli.mcp.audit import AuditLog, AuditUnavailable
from pcp_cli.mcp.backend import Backend
from pcp_cli.mcp.grants import DEFAULT_ACTOR, Grant, resolve_grant
from pcp_cli.mcp.http_options import (  # noqa: F401 - names the tests and commands use
    DEFAULT_PORT,
    HttpOptions,
    check_exposure,
    is_loopback,
    parse_address,
)
from pcp_cli.mcp.oauth import ACCESS_PREFIX as OAUTH_ACCESS_PREFIX
from pcp_cli.mcp.oauth import SCOPES as OAUTH_SCOPES
from pcp_cli.mcp.server import configure_logging, make_server
from pcp_cli.mcp.session import ToolSession
from pcp_cli.mcp.tokens import TokenRegistry

log = logging.getLogger("pcp.mcp.http")

MCP_PATH = "/mcp"
PRM_PATH = "/.well-known/oauth-protected-resource"
SESSION_HEADER = "pcp-session-id"
CONTEXT_PATTERN = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
MCP_SESSION_HEADER = "mcp-session-id"
MCP_SESSION_PATTERN = re.compile(r"^[\x21-\x7e]{1,128}$")  # the spec: visible ASCII
CONTEXT_IDLE_SECONDS = 3600.0
MAX_CONTEXTS_PER_CLIENT = 256
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")

_client_var: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar(
    "pcp_http_client", default=None)


def _host_patterns(options: HttpOptions) -> list[str]:
    if is_loopback(options.host):
        hosts = ["127.0.0.1", "localhost", "[::1]"]
    else:
        bound = f"[{options.host}]" if ":" in options.host else options.host
        hosts = [] if options.host in ("0.0.0.0", "::") else [bound]
    hosts += list(options.allowed_hosts)
    if options.public_url:
        hosts.append(urlparse(options.public_url).netloc)
    return [h for name in hosts for h in (name, f"{name}:*")]


def _origin_patterns(options: HttpOptions) -> list[str]:
    origins = list(options.allowed_origins)
    if options.public_url:  # the consent form, posted by a browser that reached us there
        origins.append(options.public_url.rstrip("/"))
    if is_loopback(options.host):
        origins += [f"{scheme}://{name}:*" for scheme in ("http", "https")
                    for name in ("127.0.0.1", "localhost", "[::1]")]
        origins += [f"{scheme}://{name}" for scheme in ("http", "https")
                    for name in ("127.0.0.1", "localhost", "[::1]")]
    return origins


def _matches(value: str, patterns: Sequence[str]) -> bool:
    for pattern in patterns:
        if value == pattern:
            return True
        if pattern.endswith(":*") and value.startswith(pattern[:-1]) and value[
                len(pattern) - 1:].isdigit():
            return True
    return False


class Clients:
    """Authenticated client id -> grant (from pcp.yaml, re-read when it changes) -> sessions."""

    def __init__(self, root: Path, backend: Backend, audit: AuditLog, *,
                 narrow_scopes: list[str] | None, allow_write: bool) -> None:
        self.root = root
        self.backend = backend
        self.audit = audit
        self.narrow_scopes = narrow_scopes
        self.allow_write = allow_write
        self._manifest_stamp: tuple[int, int, int] | None = None
        self._clients: dict[str, Any] = {}
        self._manifest: dict[str, Any] = {}
        self._grants: dict[str, Grant] = {}
        self._sessions: dict[tuple[str, str], tuple[ToolSession, float]] = {}
        self._lock = threading.Lock()

    def _refresh(self) -> None:
        path = self.root / "pcp.yaml"
        st = path.stat()
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        if stamp == self._manifest_stamp:
            return
        with api.open_store(self.root, readonly=True, refresh=False) as store:
            manifest = store.manifest.to_dict()
        self._manifest = manifest
        self._clients = dict(manifest.get("clients") or {})
        self._grants = {}
        self._manifest_stamp = stamp

    def grant_for(self, client_id: str) -> Grant | None:
        """The client's grant, or None if pcp.yaml names no such client (or cannot be read)."""
        with self._lock:
            try:
                self._refresh()
            except Exception:  # a broken pcp.yaml mid-edit: nobody is let in until it is fixed
                log.exception("cannot read pcp.yaml; refusing requests until it is fixed")
                self._manifest_stamp = None
                return None
            if client_id not in self._clients:
                return None
            grant = self._grants.get(client_id)
            if grant is None:
                try:
                    grant = resolve_grant(self._manifest, client_id, self.narrow_scopes,
                                          self.allow_write)
                except Exception:
                    log.exception("the grant of %s in pcp.yaml is invalid", client_id)
                    return None
                self._grants[client_id] = grant
            return grant

    def session(self, client_id: str, context: str) -> ToolSession:
        grant = self.grant_for(client_id)
        if grant is None:  # removed between authentication and the call
            grant = resolve_grant({}, client_id)
            grant = Grant(client_id, grant.actor, (), False, False, "revoked")
        now = time.monotonic()
        key = (client_id, context)
        with self._lock:
            self._expire(now)
            found = self._sessions.get(key)
            if found is None:
                session = ToolSession(self.backend, grant, self.audit)
                kind, _, name = context.partition(":")
                session.suppression_scope = (
                    f"for this client's requests with {SESSION_HEADER} {name!r}"
                    if kind == "pcp" else "for this MCP session (its Mcp-Session-Id)"
                    if kind == "mcp" else "for this client's requests that carry no session")
                session.suppression_scope += (
                    f", until the server restarts or {CONTEXT_IDLE_SECONDS / 60:g} idle minutes")
                mine = sorted((t, k) for k, (_, t) in self._sessions.items() if k[0] == client_id)
                for _, old in mine[: max(0, len(mine) - MAX_CONTEXTS_PER_CLIENT + 1)]:
                    del self._sessions[old]
            else:
                session = found[0]
            self._sessions[key] = (session, now)
        if session.grant != grant:
            session.regrant(grant)
        return session

    def end(self, client_id: str, context: str) -> bool:
        """Forget one context (the client ended its MCP session); whether there was one."""
        with self._lock:
            return self._sessions.pop((client_id, context), None) is not None

    def _expire(self, now: float) -> None:
        for key, (_, used) in list(self._sessions.items()):
            if now - used > CONTEXT_IDLE_SECONDS:
                del self._sessions[key]


@dataclass
class _InFlight:
    counts: dict[str, int] = field(default_factory=dict)


# Refused requests are audited one by one up to this many a minute (PCP_AUDIT_REFUSALS_PER_MINUTE
# overrides it): a flood of bad tokens must neither fill the disk (rotated logs are kept) nor
# bury the log. Past the cap they are counted, and the count goes into the next refusal
# recorded (`not_recorded`), or into one record when the server stops.
REFUSALS_PER_MINUTE = 30


class RefusalCap:
    def __init__(self) -> None:
        self.per_minute = int(os.environ.get("PCP_AUDIT_REFUSALS_PER_MINUTE")
                              or REFUSALS_PER_MINUTE)
        self._window: float | None = None
        self._recorded = 0
        self._skipped = 0
        self._lock = threading.Lock()

    def admit(self) -> int | None:
        """None when this refusal is only counted; else how many went unrecorded before it."""
        with self._lock:
            now = time.monotonic()
            if self._window is None or now - self._window >= 60.0:
                self._window, self._recorded = now, 0
            if self._recorded >= self.per_minute:
                self._skipped += 1
                return None
            self._recorded += 1
            return self.take_skipped()

    def take_skipped(self) -> int:
        """How many refusals went unrecorded since the last record; counted from zero again."""
        skipped, self._skipped = self._skipped, 0
        return skipped


def _jsonrpc_error(status: int, code: int, message: str, headers: dict[str, str] | None = None
                   ) -> Response:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return JSONResponse(body, status_code=status, headers=headers)


class Guard:
    """The ASGI layer in front of the SDK transport (see the module docstring)."""

    def __init__(self, options: HttpOptions, manager: StreamableHTTPSessionManager,
                 registry: TokenRegistry, clients: Clients, audit: AuditLog,
                 provider: Any = None) -> None:
        self.provider = provider  # pcp_cli.mcp.oauth.Provider: OAuth access tokens
        self.options = options
        self.manager = manager
        self.registry = registry
        self.clients = clients
        self.audit = audit
        self.hosts = _host_patterns(options)
        self.origins = _origin_patterns(options)
        self.in_flight = _InFlight()
        self.refusals = RefusalCap()

    def check_headers(self, request: Request) -> Response | None:
        host = request.headers.get("host", "")
        if not _matches(host, self.hosts):
            return _jsonrpc_error(421, -32600, "Invalid Host header")
        origin = request.headers.get("origin")
        if origin is not None and not _matches(origin, self.origins):
            return _jsonrpc_error(403, -32600, "Invalid Origin header")
        return None

    def base_url(self, request: Request) -> str:
        """This server as its clients reach it: --public-url, else scheme and Host (checked)."""
        if self.options.public_url:
            return self.options.public_url.rstrip("/")
        return f"{self.options.scheme}://{request.headers.get('host', '')}"

    def resource_url(self, request: Request) -> str:
        return self.base_url(request) + MCP_PATH

    def metadata_url(self, request: Request) -> str:
        return self.base_url(request) + PRM_PATH + MCP_PATH

    async def audit_refusal(self, request: Request, params: dict[str, Any],
                            tool: str = "http_auth", error_code: str = "unauthorized") -> None:
        """One refusal, through the per-minute cap."""
        skipped = self.refusals.admit()
        if skipped is None:
            return
        params = {**params, "method": request.method,
                  "remote": request.client.host if request.client else None}
        if skipped:
            params["not_recorded"] = skipped
        await anyio.to_thread.run_sync(
            lambda: self.record_refusal(params, tool=tool, error_code=error_code))

    async def _refuse(self, request: Request, reason: str, error: str | None) -> Response:
        await self.audit_refusal(request, {"reason": reason})
        challenge = f'Bearer realm="pcp", resource_metadata="{self.metadata_url(request)}"'
        if error:
            challenge += f', error="{error}", error_description="{reason}"'
        body = {"error": error or "invalid_request", "error_description": reason}
        return JSONResponse(body, status_code=401, headers={"WWW-Authenticate": challenge})

    def record_refusal(self, params: dict[str, Any], *, tool: str = "http_auth",
                       error_code: str = "unauthorized") -> None:
        try:
            self.audit.record(client_id=None, actor=DEFAULT_ACTOR, tool=tool,
                              params=params, outcome="refused", error_code=error_code)
        except AuditUnavailable as exc:
            log.error("%s", exc.message)

    def record_unrecorded(self) -> None:
        """When the server stops: the refusals past the cap not yet counted in a record."""
        skipped = self.refusals.take_skipped()
        if skipped:
            self.record_refusal({"reason": "refusals past the per-minute cap",
                                 "not_recorded": skipped})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        refused = self.check_headers(request)
        if refused is None:
            refused = await self._authenticate(request)
        if isinstance(refused, Response):
            await refused(scope, receive, send)
            return
        client_id, context, mcp_session = refused
        scope["pcp.client"] = (client_id, context)
        if request.method == "DELETE" and mcp_session:
            # The client ends its session: its suppressions go with it.
            self.clients.end(client_id, f"mcp:{mcp_session}")
            await Response(status_code=204)(scope, receive, send)
            return
        issue = False  # an initialize request's answer gets an Mcp-Session-Id
        if request.method == "GET":
            # Stateless: no server-initiated messages, so no event stream to hold open (an
            # open one would count as a request in flight). The transport allows 405 here.
            await _jsonrpc_error(405, -32000, "this server sends no event stream; POST "
                                 "requests to /mcp", headers={"Allow": "POST"})(
                scope, receive, send)
            return
        counts = self.in_flight.counts
        if counts.get(client_id, 0) >= self.options.max_concurrent_per_client:
            await _jsonrpc_error(
                429, -32000, f"too many concurrent requests for client {client_id} "
                f"(the limit is {self.options.max_concurrent_per_client})",
                headers={"Retry-After": "1"})(scope, receive, send)
            return
        counts[client_id] = counts.get(client_id, 0) + 1
        started = released = False

        def release() -> None:
            # The slot is the client's again once its answer is complete, before the last
            # byte is sent: a client that sends its next request as soon as it has the answer
            # must never meet a slot the finished one still holds while its handler unwinds
            # (mcp-remote's four calls at once met a 429 so on a loaded machine).
            nonlocal released
            if not released:
                released = True
                counts[client_id] -= 1
                if not counts[client_id]:
                    del counts[client_id]

        async def watch(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                if issue and message["status"] == 200:
                    message = {**message, "headers": [
                        *message.get("headers", []),
                        (MCP_SESSION_HEADER.encode(), secrets.token_urlsafe(24).encode())]}
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                release()
            await send(message)

        token = _client_var.set((client_id, context))
        try:
            with anyio.move_on_after(self.options.call_timeout + 5) as cap:
                if request.method == "POST" and not mcp_session:
                    receive, issue = await _initializing(receive, self.options.max_body_bytes)
                await self.manager.handle_request(scope, receive, watch)
            if cap.cancelled_caught and not started:
                await _jsonrpc_error(503, -32000, "the request took too long")(
                    scope, receive, send)
        finally:
            _client_var.reset(token)
            release()

    async def _authenticate(self, request: Request) -> Response | tuple[str, str, str]:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if not header:
            return await self._refuse(request, "no bearer token", None)
        if scheme.lower() != "bearer" or not token.strip():
            return await self._refuse(request, "not a bearer token", "invalid_request")
        token = token.strip()
        if self.provider is not None and token.startswith(OAUTH_ACCESS_PREFIX):
            client_id, why = self.provider.verify(token, self.resource_url(request))
            if client_id is None:
                return await self._refuse(request, why, "invalid_token")
        else:
            client_id = self.registry.verify(token)
            if client_id is None:
                return await self._refuse(request, "unknown, revoked or rotated token",
                                          "invalid_token")
        if await anyio.to_thread.run_sync(self.clients.grant_for, client_id) is None:
            return await self._refuse(request, "this token's client has no grant in pcp.yaml",
                                      "invalid_token")
        context = request.headers.get(SESSION_HEADER, "")
        if context and CONTEXT_PATTERN.match(context) is None:
            return _jsonrpc_error(400, -32600, f"{SESSION_HEADER} must be 1-128 letters, "
                                  "digits, '.', '_' or '-'")
        mcp_session = request.headers.get(MCP_SESSION_HEADER, "")
        if mcp_session and MCP_SESSION_PATTERN.match(mcp_session) is None:
            return _jsonrpc_error(400, -32600, "Mcp-Session-Id must be 1-128 visible ASCII "
                                  "characters")
        chosen = f"pcp:{context}" if context else f"mcp:{mcp_session}" if mcp_session else ""
        return client_id, chosen, mcp_session


async def _initializing(receive: Receive, limit: int) -> tuple[Receive, bool]:
    """Whether this POST is an `initialize` request (its answer then gets an Mcp-Session-Id),
    and a `receive` that replays the body read to find out. A body over `limit` is not read to
    its end here: the SDK answers it with 413."""
    chunks: list[bytes] = []
    size, more = 0, True
    while more and size <= limit:
        message = await receive()
        if message["type"] != "http.request":
            return receive, False
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        more = bool(message.get("more_body"))
    body = b"".join(chunks)
    initialize = False
    if not more:
        try:
            message = json.loads(body)
            initialize = isinstance(message, dict) and message.get("method") == "initialize"
        except ValueError:
            pass
    return connections.replaying(receive, body, more), initialize


def _session_for(clients: Clients) -> Any:
    def session_for(ctx: Any) -> ToolSession:
        request = getattr(ctx, "request", None)
        who = None
        if request is not None and hasattr(request, "scope"):
            who = request.scope.get("pcp.client")
        who = who or _client_var.get()
        if who is None:  # unreachable: the guard answers every unauthenticated request
            raise RuntimeError("a request reached the MCP server without a client")
        return clients.session(*who)

    return session_for


def build_app(root: Path, backend: Backend, audit: AuditLog, options: HttpOptions, *,
              narrow_scopes: list[str] | None = None, allow_write: bool = False,
              announce: Any = None) -> Starlette:
    """The ASGI application `pcp serve --http` runs (also usable in-process by tests)."""
    clients = Clients(root, backend, audit, narrow_scopes=narrow_scopes, allow_write=allow_write)
    server = make_server(_session_for(clients), call_timeout=options.call_timeout)
    security = TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                         allowed_hosts=_host_patterns(options),
                                         allowed_origins=_origin_patterns(options))
    manager = StreamableHTTPSessionManager(
        app=server, stateless=True, json_response=True, security_settings=security,
        max_request_body_size=options.max_body_bytes,
    )
    provider = oauth_http.make_provider(root, audit, announce)
    guard = Guard(options, manager, TokenRegistry(root), clients, audit, provider)

    async def metadata(request: Request) -> Response:
        refused = guard.check_headers(request)
        if refused is not None:
            return refused
        # RFC 9728: this server is its own authorization server (`pcp grant token` tokens
        # work beside it)
        document = {
            "resource": guard.resource_url(request),
            "authorization_servers": [guard.base_url(request)],
            "scopes_supported": list(OAUTH_SCOPES),
            "bearer_methods_supported": ["header"],
            "resource_name": "pcp personal context",
        }
        return Response(json.dumps(document), media_type="application/json",
                        headers={"Cache-Control": "max-age=300"})

    async def not_found(request: Request) -> Response:
        return _jsonrpc_error(404, -32601, f"nothing at {request.url.path[:100]}; MCP is at "
                              f"{MCP_PATH}")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        async with manager.run():
            try:
                yield
            finally:
                guard.record_unrecorded()

    app = Starlette(routes=[
        Route(MCP_PATH, endpoint=guard, methods=["GET", "POST", "DELETE"]),
        Route(PRM_PATH + MCP_PATH, endpoint=metadata, methods=["GET"]),
        Route(PRM_PATH, endpoint=metadata, methods=["GET"]),
        *oauth_http.routes(guard, provider),
    ], lifespan=lifespan)

    async def on_404(request: Request, exc: Exception) -> Response:
        return await not_found(request)

    app.add_exception_handler(404, on_404)
    app.state.pcp_clients = clients
    app.state.pcp_oauth = provider
    return app


def bind(options: HttpOptions) -> socket.socket:
    """The listening socket (port 0 picks a free port)."""
    from pcp_cli.listen import listen

    return listen(options.host, options.port,
                  hint="pick another port, or stop what is using it")


def http_server(app: Starlette, options: HttpOptions) -> Any:
    """The uvicorn server `pcp serve --http` runs `app` in (`.run(sockets=[sock])` serves)."""
    import uvicorn

    # The connection limits, the header timeout and TCP_NODELAY: pcp_cli.mcp.connections.
    config = uvicorn.Config(
        connections.close_unless_authenticated(app), http=connections.protocol_class(),
        ws="none", log_level="warning", access_log=False, lifespan="on",
        ssl_certfile=options.tls_cert, ssl_keyfile=options.tls_key,
        limit_concurrency=connections.MAX_CONNECTIONS,
        timeout_keep_alive=connections.KEEP_ALIVE, timeout_graceful_shutdown=3,
        server_header=False,
    )
    return uvicorn.Server(config)


def run_http(app: Starlette, options: HttpOptions, sock: socket.socket, log_stream: Any) -> None:
    """Serve until interrupted (Ctrl-C / SIGTERM)."""
    configure_logging()
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    log_stream.write(f"pcp serve: serving MCP over HTTP at {options.scheme}://{shown}:{port}"
                     f"{MCP_PATH}\n")
    log_stream.flush()
    http_server(app, options).run(sockets=[sock])
