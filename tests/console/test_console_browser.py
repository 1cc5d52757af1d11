"""The console in a real browser: Debian's Chromium (`/usr/bin/chromium`) driven by Playwright
against the real `pcp console` process, as the consent page's test does.

Signed in through the link `pcp console` prints first, the person reviews fifty proposals with
the keyboard alone, accepts several at once, edits one before accepting it, undoes a decision,
finds a page, sees which pages an assistant read after a real MCP call (over `pcp serve --http`
with a token) and revokes its token; the same flows work with JavaScript off (plain forms).
No request leaves the console's origin.

Skipped when Chromium or the `playwright` package is missing, unless PCP_REQUIRE_BROWSER=1
(`.ci/run` sets it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pcp_cli import api
from tests.console.conftest import HOSTILE, add_conversations
from tests.console.helpers import pcp_console
from tests.mcp.http_helpers import make_store, running_server, token
from tests.mcp.test_mcp_oauth_browser import CHROMIUM, _browser_or_skip

pytestmark = pytest.mark.slow
LAUNCH = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def _waiting(store: Path) -> list[dict]:
    with api.open_store(store) as opened:
        return api.review_queue(opened)


@pytest.fixture
def big_store(tmp_path: Path) -> Path:
    store = make_store(tmp_path / "store")
    add_conversations(store, 60)
    assert len(_waiting(store)) >= 60
    return store


def test_review_fifty_with_the_keyboard_then_bulk_edit_undo(big_store: Path) -> None:
    _browser_or_skip()
    from playwright.sync_api import sync_playwright

    with pcp_console(big_store) as link, sync_playwright() as pw:
        base = link.split("/signin")[0]
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH)
        try:
            page = browser.new_context().new_page()
            external: list[str] = []
            page.on("request", lambda r: external.append(r.url)
                    if not r.url.startswith(base) else None)
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(link)
            assert page.url == base + "/review"
            assert "<script>" in page.content().replace("&lt;script&gt;", "<script>")
            assert page.locator(".proposal").count() == min(50, len(_waiting(big_store)))
            assert page.locator("text=" + HOSTILE).count() >= 1  # the title, as text
            decided = []
            for number in range(50):
                current = page.locator(".proposal.current")
                decided.append(current.get_attribute("data-id"))
                key = "a" if number % 2 == 0 else "r"
                with page.expect_navigation():
                    page.keyboard.press(key)
            left = _waiting(big_store)
            assert not {i["page_id"] for i in left} & set(decided)
            with api.open_store(big_store) as opened:
                statuses = {p: opened.current(p).state.review_status for p in decided}
            assert [statuses[p] for p in decided] == ["affirmed", "rejected"] * 25
            # j/k move, x selects, A accepts the selection
            page.keyboard.press("j")
            page.keyboard.press("k")
            first = page.locator(".proposal.current").get_attribute("data-id")
            page.keyboard.press("x")
            page.keyboard.press("j")
            second = page.locator(".proposal.current").get_attribute("data-id")
            page.keyboard.press("x")
            assert page.inner_text("#selected-count") == "2 selected"
            with page.expect_navigation():
                page.keyboard.press("A")
            assert "accepted 2" in page.inner_text(".flash")
            with api.open_store(big_store) as opened:
                assert {opened.current(p).state.review_status for p in (first, second)} == \
                    {"affirmed"}
            # edit one, then accept it
            target = page.locator(".proposal.current").get_attribute("data-id")
            with page.expect_navigation():
                page.keyboard.press("e")
            page.fill('textarea[name="content"]', "Writes every note in Emacs.")
            page.select_option('select[name="category"]', "rule")
            page.select_option('select[name="sensitivity"]', "low")
            with page.expect_navigation():
                page.click("button.accept")
            with api.open_store(big_store) as opened:
                state = opened.current(target).state
            assert state.content == "Writes every note in Emacs.\n"
            assert state.record["category"] == "rule" and state.review_status == "affirmed"
            # undo the last decision: it waits again, and is the current item
            with page.expect_navigation():
                page.keyboard.press("u")
            assert "took back the acceptance of " + target in page.inner_text(".flash")
            assert page.locator(".proposal.current").get_attribute("data-id") == target
            assert target in {i["page_id"] for i in _waiting(big_store)}
            # find a page
            page.click("nav >> text=Pages")
            page.fill('input[name="q"]', "Obsidian")
            with page.expect_navigation():
                page.keyboard.press("Enter")
            page.click(".hits a.title >> nth=0")
            assert "Obsidian" in page.inner_text("pre.content")
            assert page.locator("h2", has_text="History").count() == 1
            page.screenshot(path=str(big_store.parent / "page.png"))
        finally:
            browser.close()
    assert not errors, errors
    assert not external, external


def test_what_an_assistant_read_after_a_real_mcp_call_then_revoke(tmp_path: Path) -> None:
    _browser_or_skip()
    import httpx2 as httpx  # the mcp SDK's HTTP client
    from playwright.sync_api import sync_playwright

    store = make_store(tmp_path / "store")
    secret = token(store, "claude-desktop")
    with running_server(store) as server:
        headers = {"Authorization": f"Bearer {secret}", "Accept": "application/json, "
                   "text/event-stream", "Content-Type": "application/json"}
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "pcp_search", "arguments": {"query": "tidewatch dashboard", "limit": 3}}}
        answer = httpx.post(server.url, headers=headers, json=call, timeout=60)
        assert answer.status_code == 200, answer.text
        results = json.loads(answer.json()["result"]["content"][0]["text"])["results"]
        read = [r["extensions"]["org.pcp-cli"]["page_id"] for r in results]
        assert read
        with pcp_console(store) as link, sync_playwright() as pw:
            base = link.split("/signin")[0]
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH)
            try:
                page = browser.new_context(java_script_enabled=False).new_page()
                page.goto(link)
                page.click("nav >> text=Assistants")
                assert page.locator("td", has_text="never").count() >= 1
                page.click("a:text-is('claude-desktop')")
                assert page.url == base + "/assistant?id=claude-desktop"
                calls = page.locator(".calls .call")
                assert calls.count() == 1
                assert "pcp_search" in calls.first.inner_text()
                for page_id in read:
                    with api.open_store(store) as opened:
                        title = api.page_entry(opened, page_id).title
                    assert calls.first.locator(f'a[href="/page/{page_id}"]').inner_text() \
                        == title
                with page.expect_navigation():
                    page.click("#revoke")
                assert "revoked 1 token(s) of claude-desktop" in page.inner_text(".flash")
            finally:
                browser.close()
        refused = httpx.post(server.url, headers=headers, json=call, timeout=60)
        assert refused.status_code == 401  # the revoked token fails on its next request


def test_the_refusals_in_a_browser(tmp_path: Path) -> None:
    """No cookie: 401 and nothing of the store. DNS rebinding (a foreign name resolving to
    127.0.0.1): 421. A foreign page posting a form to the console: refused, nothing changed.
    A page titled `<script>` runs nothing."""
    _browser_or_skip()
    from playwright.sync_api import sync_playwright

    store = make_store(tmp_path / "store")
    add_conversations(store, 6)
    with api.open_store(store) as opened:
        api.add_page(opened, "Body of a hostile page.", title=HOSTILE, page_id="hostile")
    before = len(_waiting(store))
    with pcp_console(store) as link, sync_playwright() as pw:
        base = link.split("/signin")[0]
        port = base.rsplit(":", 1)[1]
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=[
            *LAUNCH, "--host-resolver-rules=MAP rebind.test 127.0.0.1"])
        try:
            stranger = browser.new_context().new_page()
            answer = stranger.goto(base + "/review")
            assert answer.status == 401 and "Emacs" not in stranger.content()
            page = browser.new_context().new_page()
            dialogs: list[str] = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(link)
            page.goto(base + "/page/hostile")
            assert page.inner_text("h1") == HOSTILE
            page.goto(base + "/pages?q=hostile")
            page.goto(base + "/review")
            assert not dialogs
            rebound = page.goto(f"http://rebind.test:{port}/review")
            assert rebound.status == 421 and "Emacs" not in page.content()
            # a foreign page's form, posted from the signed-in browser
            page_id = _waiting(store)[0]["page_id"]
            evil = f"""<form id=f method=post action="{base}/review/decide">
                <input name=action value="accept:{page_id}:"></form>
                <script>document.getElementById('f').submit()</script>"""
            page.route("http://evil.test/", lambda route: route.fulfill(
                status=200, body=evil, content_type="text/html"))
            with page.expect_navigation(url=base + "/review/decide"):
                page.goto("http://evil.test/")
            assert page.locator("body").inner_text().startswith(("Refused", "Sign in"))
        finally:
            browser.close()
    assert len(_waiting(store)) == before


def test_what_a_hostile_page_or_text_tries_in_the_browser(tmp_path: Path) -> None:
    """In Chromium: the CSP stops script injected into a console page (inline, and an inline
    handler); a page on another port of 127.0.0.1 (same site: the cookie goes with its
    requests) can neither post a form to the console (Origin) nor frame it (frame-ancestors);
    a title reversed by U+202E shows as written, with a mark where the override was."""
    _browser_or_skip()
    from playwright.sync_api import sync_playwright

    store = make_store(tmp_path / "store")
    add_conversations(store, 6)
    with api.open_store(store) as opened:
        api.add_page(opened, "Body.", title="Invoice \u202efdp.exe", page_id="reversed")
    before = len(_waiting(store))
    with pcp_console(store) as link, sync_playwright() as pw:
        base = link.split("/signin")[0]
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH)
        try:
            page = browser.new_context().new_page()
            page.goto(link)
            page.goto(base + "/page/reversed")
            assert page.inner_text("h1") == "Invoice [U+202E]fdp.exe"
            violations = page.evaluate("""() => new Promise(done => {
                const seen = [];
                document.addEventListener('securitypolicyviolation',
                    e => seen.push(e.violatedDirective));
                const script = document.createElement('script');
                script.textContent = 'window.injected = 1';
                document.body.appendChild(script);
                document.body.insertAdjacentHTML('beforeend',
                    '<img src="/static/none.png" onerror="window.handled = 1">');
                setTimeout(() => done(seen), 500);
            })""")
            assert page.evaluate("[window.injected, window.handled]") == [None, None]
            assert any(v.startswith("script-src") for v in violations), violations
            # a page served on another port of 127.0.0.1: the same site, the cookie goes along
            hostile = "http://127.0.0.1:9/"
            page_id = _waiting(store)[0]["page_id"]
            page.route(hostile + "post", lambda route: route.fulfill(
                status=200, content_type="text/html", body=f"""
                <form id=f method=post action="{base}/review/decide">
                <input name=action value="accept:{page_id}:"></form>
                <script>document.getElementById('f').submit()</script>"""))
            with page.expect_navigation(url=base + "/review/decide"):
                page.goto(hostile + "post")
            assert page.locator("body").inner_text().startswith("Refused")
            page.route(hostile + "frame", lambda route: route.fulfill(
                status=200, content_type="text/html",
                body=f'<iframe id=c src="{base}/review" width=800 height=600></iframe>'))
            page.goto(hostile + "frame")
            page.wait_for_load_state("load")
            framed = page.frames[1]
            assert not framed.url.startswith(base) or "Review" not in framed.content()
        finally:
            browser.close()
    assert len(_waiting(store)) == before


def test_two_consoles_and_a_phone_sized_window(tmp_path: Path) -> None:
    """Signed in to two consoles (two stores) in one browser, both stay signed in; at 375 px
    wide no console page is wider than the window; after a key decides a proposal, the next
    one and the message saying what was done are both in sight, below the sticky bar."""
    _browser_or_skip()
    from playwright.sync_api import sync_playwright

    first, second = make_store(tmp_path / "one"), make_store(tmp_path / "two")
    add_conversations(first, 12)
    with pcp_console(first) as one, pcp_console(second) as two, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 720})
            page = context.new_page()
            page.goto(one)
            page.goto(two)
            for link, name in ((one, "one"), (two, "two")):
                answer = page.goto(link.split("/signin")[0] + "/pages")
                assert answer.status == 200 and page.inner_text(".brand span") == name
            base = one.split("/signin")[0]
            page.goto(base + "/review")
            for _ in range(3):
                page.keyboard.press("j")
            with page.expect_navigation():
                page.keyboard.press("r")
            bar = page.locator(".bulk").bounding_box()
            current = page.locator(".proposal.current").bounding_box()
            assert bar and current and current["y"] >= bar["y"] + bar["height"] - 1
            assert current["y"] < 720
            assert page.locator(".bulk .flash").is_visible()
            assert page.inner_text(".bulk .flash").startswith("rejected 1: “")
            phone = browser.new_context(viewport={"width": 375, "height": 740},
                                        is_mobile=True, has_touch=True)
            phone.add_cookies(context.cookies())
            small = phone.new_page()
            for path in ("/review", "/pages", "/pages?q=Emacs", "/page/ks-001", "/timeline",
                         "/profile", "/assistants", "/assistant?id=claude-desktop",
                         "/health"):
                small.goto(base + path)
                width = small.evaluate("document.documentElement.scrollWidth")
                assert width <= 375, (path, width)
            small.goto(base + "/assistants")
            small.screenshot(path=str(tmp_path / "assistants-phone.png"))
        finally:
            browser.close()
