"""What each console page does, over HTTP (the browser tests are in test_console_browser.py,
marked slow): review decisions, edits and undo through the library, the assistants' reads, the
health page's queue actions."""

from __future__ import annotations

import json
from pathlib import Path

from pcp_cli import api
from pcp_cli.console.views import evidence_context
from tests.console.helpers import running_console
from tests.mcp.http_helpers import token


def _queue(root: Path) -> list[dict]:
    with api.open_store(root) as store:
        return api.review_queue(store)


def test_review_shows_evidence_in_its_turn_and_decides(console_store: Path) -> None:
    waiting = _queue(console_store)
    first, second, third = (i["page_id"] for i in waiting[:3])
    with running_console(console_store) as console:
        console.signin()
        page = console.get("/review").body
        assert f'id="p-{first}"' in page and "<mark>I use Emacs for my notes.</mark>" in page
        assert "Noted, thanks for telling me." in page  # the turn after it
        reply = console.post("/review/decide", [("action", f"accept:{first}:{second}")])
        assert reply.status == 303 and reply.location == f"/review#p-{second}"
        assert f"accepted 1: {first}" in console.get("/review").body
        reply = console.post("/review/decide", [("action", "reject-selected"),
                                                ("selected", second), ("selected", third)])
        assert reply.status == 303
        # a decided one again: refused, nothing changed
        reply = console.post("/review/decide", [("action", f"reject:{first}:")])
        assert "is not awaiting review" in console.get("/review").body
    with api.open_store(console_store) as store:
        assert store.current(first).state.review_status == "affirmed"
        assert {store.current(p).state.review_status for p in (second, third)} == {"rejected"}


def test_edit_then_accept_and_undo(console_store: Path) -> None:
    target = _queue(console_store)[0]["page_id"]
    with running_console(console_store) as console:
        console.signin()
        form = console.get(f"/review/{target}/edit").body
        assert 'name="content"' in form and 'name="sensitivity"' in form
        reply = console.post(f"/review/{target}/accept", [
            ("content", "Writes notes in Emacs."), ("category", "rule"),
            ("sensitivity", "low"), ("date", "")])
        assert reply.status == 303
        with api.open_store(console_store) as store:
            state = store.current(target).state
        assert state.content == "Writes notes in Emacs.\n" and state.record["category"] == "rule"
        page = console.get("/review").body
        assert "Last decisions" in page and f'href="/page/{target}"' in page
        reply = console.post("/review/undo", [])
        assert reply.location == f"/review#p-{target}"
        assert "took back the acceptance of " + target in console.get("/review").body
        assert target in {i["page_id"] for i in _queue(console_store)}
        bad = console.post(f"/review/{target}/accept", [("content", "x"), ("category", "job")])
        assert bad.status == 303 and "is not a keystone category" in console.get("/review").body


def test_the_evidence_context_is_the_turn_and_its_neighbours() -> None:
    body = ("### User · 2024-01-01 10:00\n\nHello there. I use Vim daily. Bye.\n\n"
            "### Assistant · 2024-01-01 10:01\n\nNoted.\n")
    start = body.index("I use Vim")
    context = evidence_context(body, start, start + len("I use Vim daily."))
    assert context["turn"]["who"] == "User" and context["turn"]["when"] == "2024-01-01 10:00"
    assert context["turn"]["match"] == "I use Vim daily."
    assert context["turn"]["before"] == "Hello there. " and context["turn"]["after"] == " Bye."
    assert context["next"]["text"] == "Noted." and "previous" not in context
    assert evidence_context(body, 5, 2) is None and evidence_context(body, 0, 10_000) is None


def test_an_assistants_calls_show_the_pages_it_read(console_store: Path) -> None:
    from pcp_cli.mcp.audit import AuditLog
    from pcp_cli.mcp.grants import resolve_grant
    from pcp_cli.mcp.session import ToolSession
    from pcp_cli.mcp.store_backend import StoreBackend

    secret = token(console_store, "tidewatch")
    assert secret.startswith("pcp_")
    with api.open_store(console_store) as store:
        grant = resolve_grant(store.manifest.to_dict(), "tidewatch")
    session = ToolSession(StoreBackend(console_store), grant, AuditLog(console_store))
    session.call("pcp_read_pages", {"ids": ["tidewatch-architecture"]})
    with running_console(console_store) as console:
        console.signin()
        listing = console.get("/assistants").body
        assert 'href="/assistants/tidewatch"' in listing and "project:tidewatch" in listing
        page = console.get("/assistants/tidewatch").body
        assert "pcp_read_pages" in page and 'href="/page/tidewatch-architecture"' in page
        assert console.post("/assistants/tidewatch/revoke", []).status == 303
        assert "revoked 1 token(s) of tidewatch" in console.get("/assistants/tidewatch").body
        assert console.post("/assistants/tidewatch/remove", []).location == "/assistants"
        assert 'href="/assistants/tidewatch"' in console.get("/assistants").body  # seen, no grant
    log = [json.loads(line) for line in
           (console_store / ".pcp" / "audit.jsonl").read_text().splitlines()]
    assert [r["tool"] for r in log if r.get("client_id") == "console"] == [
        "console.grant_revoke_tokens", "console.grant_remove"]
    with api.open_store(console_store) as store:
        assert "tidewatch" not in api.client_grants(store)


def test_pages_search_toggles_page_history_and_profile(console_store: Path) -> None:
    with api.open_store(console_store) as store:
        api.revise_page(store, "ks-001", content="Ada is a freelance data developer.")
    with running_console(console_store) as console:
        console.signin()
        hits = console.get("/pages?q=health").body
        sensitive = console.get("/pages?q=health&sensitive=1").body
        assert "health-notes" not in hits and 'href="/page/health-notes"' in sensitive
        scoped = console.get("/pages?q=tidewatch&namespace=project%3Atidewatch").body
        assert "scopes project:tidewatch;" in scoped
        page = console.get("/page/ks-001").body
        assert "Changes from" in page and "+Ada is a freelance data developer." in page
        assert console.get("/page/nope").status == 404
        profile = console.get("/profile").body
        assert "micro_prompt" in profile and "Left out, and why" in profile
        assert console.get("/timeline").status == 200


def test_health_shows_the_queue_and_drops_an_entry(console_store: Path) -> None:
    queue = console_store / ".pcp" / "hooks" / "queue"
    queue.mkdir(parents=True)
    (queue / "0001.json").write_text(json.dumps({"agent": "codex", "session": "s-1"}))
    with running_console(console_store) as console:
        console.signin()
        page = console.get("/health").body
        assert "codex:s-1" in page and "Run the checks" in page
        assert "no problem found" in console.get("/health?doctor=1").body
        reply = console.post("/health/queue", [("action", "drop"), ("session", "codex:s-1")])
        assert reply.status == 303
        assert "dropped codex:s-1" in console.get("/health").body
        console.post("/health/queue", [("action", "drop"), ("session", "codex:s-1")])
        assert "nothing of codex:s-1 waits" in console.get("/health").body
    assert not list(queue.glob("*.json"))
