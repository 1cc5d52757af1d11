"""The OAuth endpoints of `pcp serve --http`: the SDK's handlers behind one ASGI layer of ours.

Each endpoint (/authorize, /token, /register, /revoke, /consent and the RFC 8414 metadata) is
wrapped by `Endpoint`, which in this order: checks Host and Origin as /mcp does; reads the body,
at most `MAX_BODY` bytes (413 beyond); keeps the form's fields for the provider (the RFC 8707
`resource` of a token request, which the SDK does not pass on); runs the handler; and records
every refusal it answered (an error status, or a redirect carrying `error=`) in the audit log,
through the same per-minute cap as /mcp's refusals. What went through is recorded by the
provider (`pcp_cli.mcp.oauth`), with what it did.
"""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import anyio.to_thread
from mcp.server.auth.handlers.authorize import AuthorizationHandler
from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.handlers.revoke import RevocationHandler
from mcp.server.auth.handlers.token import TokenHandler
from mcp.server.auth.middleware.client_auth import ClientAuthenticator
from mcp.server.auth.routes import build_metadata
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from pydantic import AnyHttpUrl
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route, request_response
from starlette.types import Message, Receive, Scope, Send

from pcp_cli import api
from pcp_cli.mcp import connections, oauth
from pcp_cli.mcp.audit import AuditLog, AuditUnavailable
from pcp_cli.mcp.grants import DEFAULT_ACTOR

MAX_BODY = 64 * 1024
REGISTRATION = ClientRegistrationOptions(enabled=True, valid_scopes=list(oauth.SCOPES),
                                         default_scopes=list(oauth.SCOPES))
CSRF_COOKIE = "pcp_csrf"
PAGE_HEADERS = {"Cache-Control": "no-store", "X-Frame-Options": "DENY",
                # not no-referrer: with it Chromium posts the form with `Origin: null`, which the
                # Origin check refuses; same-origin keeps the URL from the redirect target
                "Referrer-Policy": "same-origin",
                "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
                                           "frame-ancestors 'none'"}


def make_provider(root: Path, audit: AuditLog, announce: Any = None) -> oauth.Provider:
    def record(event: str, client_id: str | None, params: dict[str, Any]) -> None:
        try:
            audit.record(client_id=client_id, actor=DEFAULT_ACTOR, tool=event, params=params,
                         outcome="allowed")
        except AuditUnavailable as exc:
            print(f"pcp serve: {exc.message}", file=sys.stderr)

    def say(line: str) -> None:
        stream = announce or sys.stderr
        stream.write(line + "\n")
        stream.flush()

    return oauth.Provider(root, audit=record, announce=say)


def _oauth_error(status: int, error: str, description: str) -> Response:
    return JSONResponse({"error": error, "error_description": description}, status_code=status,
                        headers={"Cache-Control": "no-store"})


class Endpoint:
    """See the module docstring."""

    def __init__(self, guard: Any, name: str, app: Any) -> None:
        self.guard = guard
        self.name = name
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        refused = self.guard.check_headers(request)
        if refused is not None:
            await refused(scope, receive, send)
            return
        body = await self._body(request, receive)
        if body is None:
            await self._refused(request, {"reason": f"request body over {MAX_BODY} bytes"},
                                "invalid_request")
            await _oauth_error(413, "invalid_request", f"the request body is larger than "
                               f"{MAX_BODY} bytes")(scope, receive, send)
            return
        form: dict[str, str] = {}
        if request.headers.get("content-type", "").startswith(
                "application/x-www-form-urlencoded"):
            try:
                parsed = parse_qs(body.decode("utf-8"), keep_blank_values=True)
                form = {k: v[0] for k, v in parsed.items()}
            except (UnicodeDecodeError, ValueError):
                form = {}
            if self.name == "revoke" and form and "client_secret" not in form:
                # the SDK's RevocationRequest requires the field even of a public client
                # (RFC 7009 §2.1 does not): supply it empty rather than refuse every client
                body += b"&client_secret="
        status, location, chunks = 0, "", bytearray()
        notes: list[str] = []

        async def watch(message: Message) -> None:
            # a refusal is in the audit log before the client has the whole answer
            nonlocal status, location
            if message["type"] == "http.response.start":
                status = message["status"]
                for key, value in message.get("headers", []):
                    if key.lower() == b"location":
                        location = value.decode("latin-1")
            elif message["type"] == "http.response.body":
                if len(chunks) < 4096:
                    chunks.extend(message.get("body", b"")[:4096])
                if not message.get("more_body"):
                    await self._audit(request, form, notes, status, location, bytes(chunks))
            await send(message)

        tokens = (oauth.request_base.set(self.guard.base_url(request)),
                  oauth.request_form.set(form), oauth.request_notes.set(notes),
                  oauth.request_address.set(request.client.host if request.client else ""))
        try:
            await self.app(scope, connections.replaying(receive, body), watch)
        finally:
            oauth.request_address.reset(tokens[3])
            oauth.request_notes.reset(tokens[2])
            oauth.request_form.reset(tokens[1])
            oauth.request_base.reset(tokens[0])

    async def _audit(self, request: Request, form: dict[str, str], notes: list[str],
                     status: int, location: str, body: bytes) -> None:
        error, description = self._error_of(status, location, body)
        if error:
            params: dict[str, Any] = {"reason": "; ".join(notes) or description or error}
            client = form.get("client_id") or request.query_params.get("client_id")
            if client:
                params["oauth_client"] = client[:200]
            await self._refused(request, params, error)

    @staticmethod
    async def _body(request: Request, receive: Receive) -> bytes | None:
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_BODY:
            return None
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            body.extend(message.get("body", b""))
            if len(body) > MAX_BODY:
                return None
            if not message.get("more_body"):
                break
        return bytes(body)

    @staticmethod
    def _error_of(status: int, location: str, body: bytes) -> tuple[str | None, str | None]:
        if status in (302, 303) and location:
            query = parse_qs(urlparse(location).query)
            if "error" in query:
                return query["error"][0], (query.get("error_description") or [None])[0]
            return None, None
        if status < 400:
            return None, None
        try:
            data = json.loads(body)
            return str(data.get("error") or f"http_{status}"), data.get("error_description")
        except (ValueError, AttributeError):
            return f"http_{status}", None

    async def _refused(self, request: Request, params: dict[str, Any], error: str) -> None:
        await self.guard.audit_refusal(request, params, tool=f"oauth_{self.name}",
                                       error_code=error[:40])


def routes(guard: Any, provider: oauth.Provider) -> list[Route]:
    authenticator = ClientAuthenticator(provider)  # type: ignore[arg-type]

    async def metadata(request: Request) -> Response:
        base = guard.base_url(request)
        document = build_metadata(AnyHttpUrl(base), None, REGISTRATION,
                                  RevocationOptions(enabled=True))
        document.token_endpoint_auth_methods_supported = ["none"]
        document.revocation_endpoint_auth_methods_supported = ["none"]
        document.authorization_response_iss_parameter_supported = True
        document.client_id_metadata_document_supported = True
        body = json.loads(document.model_dump_json(exclude_none=True))
        body["issuer"] = base  # RFC 8414/9207 compare issuers as strings: no trailing slash
        return JSONResponse(body, headers={"Cache-Control": "max-age=300"})

    async def consent(request: Request) -> Response:
        if request.method == "GET":
            request_id = request.query_params.get("request", "")
            return await _consent_page(provider, request_id, None, 200)
        form = await request.form()
        request_id = str(form.get("request") or "")
        decision = form.get("decision")
        csrf = str(form.get("csrf") or "")
        if not csrf or request.cookies.get(CSRF_COOKIE) != csrf:
            oauth.note("the consent form came without its CSRF token or cookie")
            return _page_error(403, "This form did not come from this page (CSRF check "
                               "failed). Start the connection again from your assistant.")
        if decision not in ("approve", "deny"):
            oauth.note("the consent form has no decision")
            return _page_error(400, "Say approve or deny.")
        chosen = [str(v) for v in form.getlist("scope")]
        known = await anyio.to_thread.run_sync(_namespaces, provider.root)
        scopes = [s for s in chosen if s in known]
        if decision == "approve" and not scopes:
            oauth.note("approve without a namespace")
            return await _consent_page(provider, request_id, "Pick at least one namespace.",
                                       400)
        try:
            target = await anyio.to_thread.run_sync(lambda: provider.decide(
                request_id, csrf=csrf, approval=str(form.get("approval") or ""),
                approve=decision == "approve", scopes=scopes,
                sensitive=form.get("sensitive") == "yes", write=form.get("write") == "yes",
                address=request.client.host if request.client else ""))
        except oauth.ConsentRefused as refused:
            oauth.note(refused.reason)
            if refused.redirect:
                return RedirectResponse(refused.redirect, status_code=303,
                                        headers={"Cache-Control": "no-store"})
            if refused.retry:
                return await _consent_page(provider, request_id, refused.reason, 403)
            return _page_error(400, refused.reason)
        return RedirectResponse(target, status_code=303, headers={"Cache-Control": "no-store"})

    def wrap(name: str, handler: Any) -> Any:
        return Endpoint(guard, name, request_response(handler))

    return [
        Route("/.well-known/oauth-authorization-server", wrap("metadata", metadata),
              methods=["GET"]),
        Route("/authorize", wrap("authorize", AuthorizationHandler(provider).handle),  # type: ignore[arg-type]
              methods=["GET", "POST"]),
        Route("/token", wrap("token", TokenHandler(provider, authenticator).handle),  # type: ignore[arg-type]
              methods=["POST"]),
        Route("/register", wrap("register", RegistrationHandler(
            provider, options=REGISTRATION).handle), methods=["POST"]),  # type: ignore[arg-type]
        Route("/revoke", wrap("revoke", RevocationHandler(provider, authenticator).handle),  # type: ignore[arg-type]
              methods=["POST"]),
        Route("/consent", wrap("consent", consent), methods=["GET", "POST"]),
    ]


def _namespaces(root: Path) -> list[str]:
    with api.open_store(root, readonly=True) as store:
        return [row["namespace"] for row in api.list_scopes(store)["scopes"]]


async def _consent_page(provider: oauth.Provider, request_id: str, error: str | None,
                        status: int) -> Response:
    pending = provider.pending(request_id)
    if pending is None:
        oauth.note("unknown or expired authorization request")
        return _page_error(400, "This authorization request is unknown or has expired. Start "
                           "the connection again from your assistant.")
    namespaces = await anyio.to_thread.run_sync(_namespaces, provider.root)
    response = HTMLResponse(oauth.consent_page(pending, request_id, namespaces, error),
                            status_code=status, headers=PAGE_HEADERS)
    response.set_cookie(CSRF_COOKIE, pending["csrf"], httponly=True, samesite="strict",
                        path="/consent", max_age=oauth.REQUEST_TTL)
    return response


def _page_error(status: int, message: str) -> Response:
    return HTMLResponse(f"<!doctype html><meta charset=utf-8><title>pcp</title>"
                        f"<p>{html.escape(message)}</p>", status_code=status,
                        headers=PAGE_HEADERS)

