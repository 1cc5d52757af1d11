"""The console is the owner's: nothing without the session, only at its own Host, every write
with a same-origin Origin and the session's CSRF token, a strict CSP, content escaped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pcp_cli import api
from tests.console.conftest import HOSTILE
from tests.console.helpers import running_console

PAGES = ["/", "/review", "/pages", "/pages?q=emacs", "/page/ks-001", "/timeline", "/profile",
         "/assistants", "/assistant?id=claude-desktop", "/health", "/static/console.css",
         "/static/console.js"]


def test_nothing_without_the_session_cookie(console_store: Path) -> None:
    with running_console(console_store) as console:
        for path in PAGES:
            reply = console.get(path)
            assert reply.status == 401, path
            assert "Emacs" not in reply.body and "ada" not in reply.body.lower(), path
            assert "pcp console" in reply.body  # says how to sign in, nothing else
        reply = console.request("POST", "/review/decide", "action=accept-selected",
                                headers={"Origin": console.origin})
        assert reply.status == 401
        console.cookie = "forged-session"
        assert console.get("/review").status == 401


def test_the_sign_in_link_works_once_and_leaves_the_url(console_store: Path) -> None:
    with running_console(console_store) as console:
        reply = console.signin()
        assert reply.status == 303 and reply.location == "/"
        cookie = reply.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        assert console.get("/review").status == 200
        second = console.request("GET", "/signin?" + console.signin_url.split("?")[1],
                                 cookie=False)
        assert second.status == 401 and "set-cookie" not in second.headers
        wrong = console.request("GET", "/signin?token=guess", cookie=False)
        assert wrong.status == 401


@pytest.mark.parametrize("host", ["evil.example", "localhost:{port}", "127.0.0.1", None])
def test_a_foreign_host_is_refused_before_anything(console_store: Path, host: str | None) -> None:
    with running_console(console_store) as console:
        console.signin()
        header = None if host is None else host.format(port=console.port)
        reply = console.request("GET", "/review", headers={"Host": header})
        assert reply.status in (400, 421)
        assert "Emacs" not in reply.body
        signin = console.request("GET", "/signin?" + console.signin_url.split("?")[1],
                                 headers={"Host": header}, cookie=False)
        assert signin.status in (400, 421)


def _waiting(root: Path) -> int:
    with api.open_store(root) as store:
        return len(api.review_queue(store))


def test_a_write_needs_the_csrf_token_and_a_same_origin(console_store: Path) -> None:
    with running_console(console_store) as console:
        console.signin()
        first = api.open_store(console_store)
        page_id = api.review_queue(first)[0]["page_id"]
        first.close()
        before = _waiting(console_store)
        action = [("action", f"accept:{page_id}:")]
        refused = [
            console.post("/review/decide", action, csrf=False),
            console.post("/review/decide", action, origin=None),
            console.post("/review/decide", action, origin="http://evil.example"),
            console.post("/review/decide", action, origin=f"http://localhost:{console.port}"),
            console.request("POST", "/review/decide", f"csrf=wrong&action=accept:{page_id}:",
                            headers={"Origin": console.origin}),
            console.post("/assistant/revoke", [("client_id", "claude-desktop")], csrf=False),
            console.post("/signout", [], csrf=False),
        ]
        for reply in refused:
            assert reply.status == 403, reply
            assert "Emacs" not in reply.body
        assert _waiting(console_store) == before
        accepted = console.post("/review/decide", action)
        assert accepted.status == 303
        assert _waiting(console_store) == before - 1


def test_every_answer_carries_a_strict_content_security_policy(console_store: Path) -> None:
    with running_console(console_store) as console:
        for reply in (console.get("/review"), console.signin(), console.get("/review"),
                      console.get("/nowhere"), console.post("/review/decide", [], csrf=False)):
            csp = reply.headers["content-security-policy"]
            assert "default-src 'none'" in csp and "script-src 'self'" in csp
            assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
            assert reply.headers["x-content-type-options"] == "nosniff"
            assert reply.headers["referrer-policy"] == "same-origin"


def test_a_page_titled_script_is_text_everywhere(console_store: Path) -> None:
    with api.open_store(console_store) as store:
        page_id = api.add_page(store, f"A note whose body says {HOSTILE}", title=HOSTILE,
                               page_id="hostile-note").page_id
        api.add_keystone(store, HOSTILE, category="preference", page_id="hostile-ks")
    with running_console(console_store) as console:
        console.signin()
        for path in ("/review", f"/page/{page_id}", "/pages?q=alert", "/pages",
                     "/page/hostile-ks", "/profile", f"/pages?q={HOSTILE}"):
            reply = console.get(path)
            assert reply.status == 200, path
            assert "<script>alert" not in reply.body, path
            assert "&lt;script&gt;" in reply.body, path
        assert console.get("/review").body.count("<script") == 1  # the console's own file


def test_writes_are_in_the_audit_log_as_the_owners(console_store: Path) -> None:
    with running_console(console_store) as console:
        console.signin()
        with api.open_store(console_store) as store:
            ids = [i["page_id"] for i in api.review_queue(store)][:2]
        console.post("/review/decide", [("action", "accept-selected"),
                                        *(("selected", i) for i in ids)])
    log = [json.loads(line) for line in
           (console_store / ".pcp" / "audit.jsonl").read_text().splitlines()]
    record = log[-1]
    assert record["client_id"] == "console" and record["actor"] == "user"
    assert record["tool"] == "console.review_accept" and record["outcome"] == "allowed"
    assert record["page_ids"] == ids
