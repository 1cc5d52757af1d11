"""The console's web application: a guard in front of every request, then one route per page.

The guard (`Guarded`, plain ASGI) runs before any route: the `Host` check, the session cookie
(the sign-in route aside), and for every state-changing request the same-origin `Origin` and
the session's CSRF token, read from the form body it parses itself (so no route can forget
it). Every response carries the security headers of `security.HEADERS`.

Pages are Jinja2 templates with autoescaping on (`templates/`), so a page title `<script>` is
text; the one script (`static/console.js`) only adds keys and selection to forms that work
without it. A write answers with a redirect (post, redirect, get), its outcome in a one-shot
message kept in the session.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pcp_cli import __version__
from pcp_cli.console import views
from pcp_cli.console.security import (
    CSRF_FIELD,
    HEADERS,
    SAFE_METHODS,
    SIGN_IN_HINT,
    Gate,
    Refusal,
    Session,
)
from pcp_cli.errors import InvalidInput, NotFound, PcpError, RevisionConflict, UsageError
from pcp_cli.model import vocab
from pcp_cli.render.visible import visible

MAX_FORM_BYTES = 256 * 1024
STATIC = {"console.css": "text/css; charset=utf-8",
          "console.js": "text/javascript; charset=utf-8"}


class Verbatim(Markup):
    """Text that goes back unchanged in a form (the claim being edited, a search box, a hidden
    field naming a queued session): escaped, but its characters are not replaced."""


def shown(value: Any) -> Any:
    """Jinja's `finalize`: every `{{ … }}` of a template passes here before it is escaped,
    and stored text that would disguise itself (bidi overrides, escape codes) is shown with
    marks (`render.visible`). The marks are plain characters, so escaped markup (a `join`)
    stays escaped."""
    if isinstance(value, Verbatim) or not isinstance(value, str):
        return value
    text = visible(value)
    return Markup(text) if isinstance(value, Markup) else text


def _number(text: str | None) -> int:
    """A non-negative number from a query or form field; 0 for anything else."""
    return int(text) if text and text.isascii() and text.isdigit() and len(text) < 10 else 0


def _plain(status: int, text: str) -> Response:
    return Response(text + "\n", status_code=status, media_type="text/plain; charset=utf-8")


class Guarded:
    """Host, session, Origin and CSRF checks before the application sees a request."""

    def __init__(self, app: ASGIApp, gate: Gate) -> None:
        self.app = app
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", [])
                           if k.decode("latin-1").lower() not in {h.lower() for h in HEADERS}]
                headers += [(k.encode("latin-1"), v.encode("latin-1"))
                            for k, v in HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        refusal, form = await self._check(scope, receive)
        if refusal is not None:
            await _plain(refusal.status, refusal.message)(scope, receive, send_with_headers)
            return
        scope.setdefault("state", {})["form"] = form
        await self.app(scope, receive, send_with_headers)

    async def _check(self, scope: Scope, receive: Receive
                     ) -> tuple[Refusal | None, dict[str, list[str]]]:
        request = Request(scope)
        refused = self.gate.check_host(request.headers.get("host"))
        if refused is not None:
            return refused, {}
        if scope["path"] == "/signin" and scope["method"] in SAFE_METHODS:
            return None, {}
        session = self.gate.session(request.cookies.get(self.gate.cookie))
        if session is None:
            return Refusal(401, SIGN_IN_HINT), {}
        scope.setdefault("state", {})["session"] = session
        if scope["method"] in SAFE_METHODS:
            return None, {}
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > MAX_FORM_BYTES:
                return Refusal(413, "Refused: the form is too large."), {}
            if not message.get("more_body"):
                break
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        form = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True) \
            if kind == "application/x-www-form-urlencoded" else {}
        token = (form.get(CSRF_FIELD) or [None])[0]
        refused = self.gate.check_write(session, request.headers.get("origin"), token)
        return refused, form


class Console:
    """The routes and what they render; `root` is the store's folder."""

    def __init__(self, root: Path, gate: Gate) -> None:
        self.root = root
        self.gate = gate
        self.flashes: dict[str, list[tuple[str, str]]] = {}
        self.writing = threading.Lock()  # one write at a time (the store's lock is per process)
        self.env = Environment(loader=PackageLoader("pcp_cli.console", "templates"),
                               autoescape=select_autoescape(default=True, default_for_string=True),
                               undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                               finalize=shown)
        self.env.globals.update(version=__version__, categories=vocab.KEYSTONE_CATEGORIES,
                                store_name=root.name)
        self.env.filters["day"] = lambda value: str(value or "")[:10]
        self.env.filters["when"] = lambda value: str(value or "")[:16].replace("T", " ")
        self.env.filters["verbatim"] = lambda value: Verbatim(escape(value))

    # -- helpers ------------------------------------------------------------------------------
    def _session(self, request: Request) -> Session:
        return request.scope["state"]["session"]  # type: ignore[no-any-return]

    def render(self, request: Request, template: str, status_code: int = 200,
               **context: Any) -> HTMLResponse:
        session = self._session(request)
        flashes = self.flashes.pop(session.session_id, [])
        html = self.env.get_template(template).render(
            csrf=session.csrf, flashes=flashes, path=request.url.path, **context)
        return HTMLResponse(html, status_code=status_code)

    def flash(self, request: Request, kind: str, message: str) -> None:
        self.flashes.setdefault(self._session(request).session_id, []).append((kind, message))

    @staticmethod
    def form(request: Request, name: str, default: str = "") -> str:
        values = request.scope["state"].get("form", {}).get(name)
        return values[0] if values else default

    @staticmethod
    def form_list(request: Request, name: str) -> list[str]:
        return list(request.scope["state"].get("form", {}).get(name) or [])

    async def read(self, request: Request, template: str,
                   work: Callable[[], dict[str, Any]]) -> Response:
        try:
            data = await run_in_threadpool(work)
        except PcpError as exc:
            return self.error(request, exc)
        return self.render(request, template, **data)

    async def write(self, request: Request, work: Callable[[], str], back: str) -> Response:
        """Run one write; its message (or the refusal) is shown on the page it goes back to.

        A write runs to its end and is answered even when the console is told to stop
        meanwhile: uvicorn cancels a request that outlives its grace period, but the write
        would go on in its thread, unanswered (the person would not know it was done)."""
        def locked() -> str:
            with self.writing:
                return work()

        # A plain future, not a task: at shutdown asyncio cancels every task, and a cancelled
        # task stops waiting for its thread; this one waits, and the write is answered.
        task = asyncio.get_running_loop().run_in_executor(None, locked)
        stopping = False
        while not task.done():
            try:
                await asyncio.wait({task})  # a cancellation stops this wait, not the write
            except asyncio.CancelledError:
                stopping = True
        try:
            kind, message = "ok", task.result()
        except PcpError as exc:
            kind, message = "error", exc.message + (f" ({exc.hint})" if exc.hint else "")
        if stopping:  # nothing will serve the page a redirect leads to: say it here
            return _plain(200 if kind == "ok" else 409,
                          f"{message}\n\npcp console stopped meanwhile; start it again to go on.")
        self.flash(request, kind, message)
        return RedirectResponse(back, status_code=303)

    def error(self, request: Request, exc: PcpError) -> Response:
        status = 404 if isinstance(exc, NotFound) else \
            400 if isinstance(exc, UsageError | InvalidInput) else \
            409 if isinstance(exc, RevisionConflict) else 500
        return self.render(request, "error.html", status_code=status, message=exc.message,
                           hint=exc.hint)

    # -- sign-in ------------------------------------------------------------------------------
    async def signin(self, request: Request) -> Response:
        if self.gate.session(request.cookies.get(self.gate.cookie)) is not None:
            return RedirectResponse("/", status_code=303)
        if request.method == "HEAD":  # a link preview or a checker: the link stays unspent
            return _plain(200, "")
        session = self.gate.sign_in(request.query_params.get("token"))
        if session is None:
            return _plain(401, "This sign-in link is not valid (it works once). "
                          + SIGN_IN_HINT)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(self.gate.cookie, session.session_id, httponly=True,
                            samesite="strict", path="/")
        return response

    async def signout(self, request: Request) -> Response:
        self.gate.sign_out(self._session(request))
        response = _plain(200, "Signed out. " + SIGN_IN_HINT)
        response.delete_cookie(self.gate.cookie, path="/")
        return response

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return _plain(404, "Not found.")
        data = resources.files("pcp_cli.console").joinpath("static", name).read_bytes()
        return Response(data, media_type=STATIC[name])

    async def home(self, request: Request) -> Response:
        waiting = await run_in_threadpool(views.waiting, self.root)
        return RedirectResponse("/review" if waiting else "/pages", status_code=303)

    # -- review -------------------------------------------------------------------------------
    async def review(self, request: Request) -> Response:
        start = _number(request.query_params.get("start"))
        return await self.read(request, "review.html",
                               lambda: views.review(self.root, start=start))

    async def review_edit(self, request: Request) -> Response:
        page_id = request.path_params["page_id"]
        return await self.read(request, "edit.html",
                               lambda: {"item": views.proposal(self.root, page_id),
                                        "timeline_categories": vocab.TIMELINE_CATEGORIES,
                                        "sensitivities": vocab.SENSITIVITIES})

    async def review_decide(self, request: Request) -> Response:
        action = self.form(request, "action")
        verb, _, rest = action.partition(":")
        page_id, _, after = rest.partition(":")
        if verb in ("accept", "reject") and page_id:
            ids = [page_id]
        elif verb in ("accept-selected", "reject-selected"):
            ids, verb = self.form_list(request, "selected"), verb.split("-")[0]
        else:
            return self.error(request, UsageError(f"unknown action {action[:40]!r}"))
        start = _number(self.form(request, "start"))
        back = (f"/review?start={start}" if start else "/review") + \
            (f"#p-{quote(after)}" if after else "")

        def work() -> str:
            claims = views.decide(self.root, verb, ids)
            past = "accepted" if verb == "accept" else "rejected"
            named = ", ".join(f"“{views.clip(claim, 80)}”" for claim in claims[:3])
            return f"{past} {len(claims)}: {named}" + \
                (f" and {len(claims) - 3} more" if len(claims) > 3 else "")

        return await self.write(request, work, back)

    async def review_accept_edited(self, request: Request) -> Response:
        page_id = request.path_params["page_id"]

        def work() -> str:
            views.accept_edited(self.root, page_id, content=self.form(request, "content"),
                                category=self.form(request, "category"),
                                sensitivity=self.form(request, "sensitivity"),
                                date=self.form(request, "date"),
                                stale_after=self.form(request, "stale_after"))
            return f"accepted {page_id} (edited)"

        return await self.write(request, work, "/review")

    async def review_undo(self, request: Request) -> Response:
        page_id = self.form(request, "page_id") or None
        target: dict[str, str] = {}

        def work() -> str:
            result = views.withdraw(self.root, page_id)
            target["id"] = result["page_id"]
            restored = result["restored"]
            what = "acceptance" if result["withdrawn"] == "accepted" else "rejection"
            return (f"took back the {what} of {result['page_id']}: it waits for review again"
                    + (f"; {', '.join(restored)} current again" if restored else ""))

        response = await self.write(request, work, "/review")
        if target and response.status_code == 303:
            response.headers["location"] = f"/review#p-{quote(target['id'])}"
        return response

    # -- pages --------------------------------------------------------------------------------
    async def pages(self, request: Request) -> Response:
        params = request.query_params
        query = params.get("q", "")
        toggles = {"sensitive": params.get("sensitive") == "1",
                   "superseded": params.get("superseded") == "1",
                   "namespace": params.get("namespace") or None}

        def work() -> dict[str, Any]:
            found = views.search(self.root, query, cursor=params.get("cursor") or None,
                                 **toggles)
            return {**found, **toggles, "namespaces": views.namespaces(self.root)}

        return await self.read(request, "pages.html", work)

    async def page(self, request: Request) -> Response:
        page_id = request.path_params["page_id"]
        params = request.query_params
        return await self.read(request, "page.html", lambda: views.page(
            self.root, page_id, rev_a=params.get("a") or None, rev_b=params.get("b") or None))

    async def timeline(self, request: Request) -> Response:
        params = request.query_params
        sensitive = params.get("sensitive") == "1"
        return await self.read(request, "timeline.html", lambda: {
            **views.timeline(self.root, sensitive=sensitive,
                             cursor=params.get("cursor") or None), "sensitive": sensitive})

    async def profile(self, request: Request) -> Response:
        return await self.read(request, "profile.html", lambda: views.profile(self.root))

    # -- assistants ---------------------------------------------------------------------------
    async def assistants(self, request: Request) -> Response:
        return await self.read(request, "assistants.html", lambda: views.assistants(self.root))

    async def assistant(self, request: Request) -> Response:
        # The id is a query parameter, not a path segment: a client id from the audit log can
        # be anything a client sent (an OAuth client's id is a URL for some), and a path
        # would be cut at its `/`, `?` or `#` or folded at its `..`.
        client_id = request.query_params.get("id", "")
        return await self.read(request, "assistant.html",
                               lambda: views.assistant(self.root, client_id))

    async def assistant_action(self, request: Request) -> Response:
        client_id = self.form(request, "client_id")
        action = request.path_params["action"]

        def work() -> str:
            if action == "revoke":
                done = views.revoke_tokens(self.root, client_id)
                return f"revoked {done['tokens_revoked']} token(s) of {client_id}"
            if action == "remove":
                done = views.remove_grant(self.root, client_id)
                return (f"removed the grant of {client_id} and {done['tokens_revoked']} "
                        "token(s)")
            raise UsageError(f"unknown action {action[:40]!r}")

        back = "/assistants" if action == "remove" else \
            f"/assistant?id={quote(client_id, safe='')}"
        return await self.write(request, work, back)

    # -- health -------------------------------------------------------------------------------
    async def health(self, request: Request) -> Response:
        doctor = request.query_params.get("doctor") == "1"
        return await self.read(request, "health.html",
                               lambda: {**views.health(self.root, doctor=doctor),
                                        "doctor": doctor})

    async def queue_action(self, request: Request) -> Response:
        action, name = self.form(request, "action"), self.form(request, "session")

        def work() -> str:
            views.queue_action(self.root, action, name)
            return f"{'retrying' if action == 'retry' else 'dropped'} {name}"

        return await self.write(request, work, "/health")

    def routes(self) -> list[Route]:
        get, post = ["GET", "HEAD"], ["POST"]
        return [
            Route("/", self.home, methods=get),
            Route("/signin", self.signin, methods=get),
            Route("/signout", self.signout, methods=post),
            Route("/static/{name}", self.static, methods=get),
            Route("/favicon.ico", lambda request: Response(status_code=204), methods=get),
            Route("/review", self.review, methods=get),
            Route("/review/decide", self.review_decide, methods=post),
            Route("/review/undo", self.review_undo, methods=post),
            Route("/review/{page_id}/edit", self.review_edit, methods=get),
            Route("/review/{page_id}/accept", self.review_accept_edited, methods=post),
            Route("/pages", self.pages, methods=get),
            Route("/page/{page_id:path}", self.page, methods=get),
            Route("/timeline", self.timeline, methods=get),
            Route("/profile", self.profile, methods=get),
            Route("/assistants", self.assistants, methods=get),
            Route("/assistant", self.assistant, methods=get),
            Route("/assistant/{action}", self.assistant_action, methods=post),
            Route("/health", self.health, methods=get),
            Route("/health/queue", self.queue_action, methods=post),
        ]


def build_app(root: Path, gate: Gate) -> ASGIApp:
    """The console for the store at `root`, behind `gate` (usable in-process by tests)."""
    console = Console(root, gate)

    async def not_found(request: Request, exc: Exception) -> Response:
        return _plain(404, "Nothing here.")

    app = Starlette(routes=console.routes(), exception_handlers={404: not_found, 405: not_found})
    return Guarded(app, gate)

