"""What each console page does, over HTTP (the browser tests are in test_console_browser.py,
marked slow): review decisions, edits and undo through the library, the assistants' reads, the
health page's queue actions."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from pcp_cli import api
from pcp_cli.console.views import evidence_context
from tests.console.conftest import add_conversations
from tests.console.helpers import running_console
from tests.mcp.http_helpers import make_store, token


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
        claim = waiting[0]["content"].strip()
        assert f"accepted 1: “{claim}”" in console.get("/review").body
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
        # the day it goes stale, as `pcp review accept --stale-after` sets it
        assert 'name="stale_after"' in console.get(f"/review/{target}/edit").body
        bad = console.post(f"/review/{target}/accept", [("content", "Writes notes in Emacs."),
                                                          ("stale_after", "next spring")])
        assert bad.status == 303 and "next spring" in html.unescape(console.get("/review").body)
        reply = console.post(f"/review/{target}/accept", [("content", "Writes notes in Emacs."),
                                                            ("stale_after", "2031-06-30")])
        assert reply.status == 303
    with api.open_store(console_store) as store:
        state = store.current(target).state
    assert state.review_status == "affirmed" and state.record["stale_after"] == "2031-06-30"


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
        assert 'href="/assistant?id=tidewatch"' in listing and "project:tidewatch" in listing
        page = console.get("/assistant?id=tidewatch").body
        assert "pcp_read_pages" in page and 'href="/page/tidewatch-architecture"' in page
        assert console.post("/assistant/revoke", [("client_id", "tidewatch")]).status == 303
        assert "revoked 1 token(s) of tidewatch" in console.get("/assistant?id=tidewatch").body
        removed = console.post("/assistant/remove", [("client_id", "tidewatch")])
        assert removed.location == "/assistants"
        assert 'href="/assistant?id=tidewatch"' in console.get("/assistants").body  # seen, no grant
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
    log = [json.loads(line) for line in
           (console_store / ".pcp" / "audit.jsonl").read_text().splitlines()]
    assert [(r["tool"], r["actor"], r["outcome"], r["params"]) for r in log
            if r.get("client_id") == "console"] == [
        ("console.capture_drop", "user", outcome, {"session": "codex:s-1"})
        for outcome in ("allowed", "refused")]


def test_the_newest_pages_are_fifty_whatever_their_sensitivity(tmp_path: Path) -> None:
    """High-sensitivity pages are left out before the window is cut, not after it (the
    listing showed fewer than 50, or none, when the newest pages were sensitive)."""
    root = make_store(tmp_path / "store")
    with api.open_store(root) as store, store.batch():
        for number in range(60):
            api.add_page(store, f"Plain note {number}.", title=f"plain {number}")
        for number in range(60):
            api.add_page(store, f"Private note {number}.", title=f"private {number}",
                         sensitivity="high")
    with running_console(root) as console:
        console.signin()
        listing = console.get("/pages").body
        assert listing.count('class="title"') == 50 and "private" not in listing
        more = re.search(r'<a href="(/pages\?[^"]+)">More</a>', listing)
        assert more and "plain" in console.get(html.unescape(more.group(1))).body
        assert console.get("/pages?sensitive=1").body.count(">private ") == 50


def test_a_long_queue_is_reviewed_fifty_at_a_time(tmp_path: Path) -> None:
    """Hundreds of proposals (a first `propose` over years of conversations) are not all laid
    out, with their evidence, on every load: fifty at a time, numbered as `pcp review`
    numbers them, the next fifty a link away, a decision there coming back there."""
    root = make_store(tmp_path / "store")
    add_conversations(root, 60)
    numbers = {item["page_id"]: n for n, item in enumerate(
        (i for _label, group in _groups(root) for i in group), 1)}
    with running_console(root) as console:
        console.signin()
        first = console.get("/review").body
        assert first.count('<article class="proposal"') == 50
        assert f"{len(numbers)} waiting, #1–#50 shown" in first
        assert '<a href="/review?start=50" rel="next">' in first
        rest = console.get("/review?start=50").body
        shown = re.findall(r'id="p-([^"]+)"', rest)
        assert len(shown) == len(numbers) - 50
        assert [numbers[p] for p in shown] == list(range(51, len(numbers) + 1))
        assert f'<span class="num">#{numbers[shown[0]]}</span>' in rest
        reply = console.post("/review/decide", [("action", f"reject:{shown[0]}:{shown[1]}"),
                                                ("start", "50")])
        assert reply.location == f"/review?start=50#p-{shown[1]}"
        assert console.get("/review?start=x").status == 200


def _groups(root: Path) -> list:
    with api.open_store(root) as store:
        return api.queue_groups(api.review_queue(store))


def test_the_profile_page_names_a_few_of_what_was_left_out_per_reason(tmp_path: Path) -> None:
    root = make_store(tmp_path / "store")
    with api.open_store(root) as store, store.batch():
        for number in range(60):
            api.add_keystone(store, f"Prefers option {number} of many, written out at length "
                             "so that sixty of them cannot fit in fourteen hundred characters.",
                             category="preference", page_id=f"ks-p{number}")
    with running_console(root) as console:
        console.signin()
        page = console.get("/profile").body
    listed = re.findall(r'<li><a href="/page/ks-p\d+">', page)
    assert 25 <= len(listed) < 60
    assert re.search(r'<li class="more">and \d+ more</li>', page)


def test_an_assistant_page_shows_its_newest_calls_read_from_the_logs_end(tmp_path: Path) -> None:
    root = make_store(tmp_path / "store")
    log = root / ".pcp" / "audit.jsonl"
    log.parent.mkdir(exist_ok=True)
    log.write_text("".join(json.dumps({
        "time": f"2026-11-{1 + n // 10:02d}T09:{n % 60:02d}:00.000Z", "client_id": "busy",
        "actor": "client", "tool": "pcp_search", "params": {"query": f"q{n}"},
        "outcome": "allowed", "result_count": 0, "page_ids": []}) + "\n" for n in range(205)))
    with running_console(root) as console:
        console.signin()
        page = console.get("/assistant?id=busy").body
        listing = console.get("/assistants").body
    assert page.count('<li class="call') == 200 and "its newest 200 calls" in page
    assert "“q204”" in page and "“q4”" not in page  # newest first, the oldest five left out
    assert 'href="/assistant?id=busy"' in listing


def test_a_long_transcript_keeps_its_history_in_reach(console_store: Path) -> None:
    turn = "### User · 2024-05-01 10:02\n\n" + "I keep a garden with tomatoes. " * 40 + "\n\n"
    with api.open_store(console_store) as store:
        api.add_page(store, turn * 40, page_type="conversation", title="Long",
                     page_id="long-one")
    with running_console(console_store) as console:
        console.signin()
        page = console.get("/page/long-one").body
        short = console.get("/page/ks-001").body
    assert '<pre class="content long" tabindex="0">' in page and 'href="#history"' in page
    assert 'id="history"' in page and '<pre class="content">' in short
