"""The consent page in a real browser: Debian's Chromium (`/usr/bin/chromium`) driven by
Playwright, with JavaScript off (the page must work without it). The browser follows /authorize
to the consent page, the test types the approval code from the server's stderr, ticks a
namespace, presses `<button name="decision" value="approve">`, and the browser is sent back to
the client's redirect URI with a code that the token endpoint accepts.

Skipped when Chromium or the `playwright` package is missing, unless PCP_REQUIRE_BROWSER=1
(`.ci/run` installs both and sets it, so in CI a missing browser fails). Playwright's own
browser download (`playwright install`) is never used."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from tests.mcp.http_helpers import make_store, running_server
from tests.mcp.test_mcp_oauth import (
    REDIRECT,
    approval_code,
    authorize_url,
    exchange,
    pkce,
    register,
)

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
REQUIRED = os.environ.get("PCP_REQUIRE_BROWSER") == "1"
pytestmark = pytest.mark.slow


def _browser_or_skip() -> None:
    missing = [what for what, ok in (
        ("chromium", Path(CHROMIUM).exists()),
        ("the playwright package", __import__("importlib").util.find_spec("playwright")))
        if not ok]
    if missing:
        if REQUIRED:
            pytest.fail(f"PCP_REQUIRE_BROWSER=1 but {', '.join(missing)} is missing")
        pytest.skip(f"{', '.join(missing)} is not installed")


def test_consent_in_chromium_without_javascript(tmp_path: Path) -> None:
    _browser_or_skip()
    from playwright.sync_api import sync_playwright

    store = make_store(tmp_path / "store")
    with running_server(store) as server, sync_playwright() as pw:
        client = register(server)
        verifier, challenge = pkce()
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            context = browser.new_context(java_script_enabled=False)
            page = context.new_page()
            landed: list[str] = []

            def callback(route, request):  # the client's redirect URI: nothing listens there
                landed.append(request.url)
                route.fulfill(status=200, body="signed in", content_type="text/plain")

            page.route(REDIRECT + "*", callback)
            external: list[str] = []
            page.on("request", lambda r: external.append(r.url)
                    if not r.url.startswith((server.base, REDIRECT)) else None)
            page.goto(authorize_url(server, client["client_id"], challenge))
            assert urlparse(page.url).path == "/consent"
            assert "Test Assistant" in page.title()
            request_id = parse_qs(urlparse(page.url).query)["request"][0]
            page.check('input[name="scope"][value="project:tidewatch"]')
            page.fill('input[name="approval"]', approval_code(server, request_id))
            page.click('button[name="decision"][value="approve"]')
            page.wait_for_url(REDIRECT + "*")
            assert page.inner_text("body") == "signed in"
        finally:
            browser.close()
        assert not external, external  # no external assets
        query = parse_qs(urlparse(landed[-1]).query)
        assert query["state"] == ["st8"]
        answer = exchange(server, client["client_id"], query["code"][0], verifier)
        assert answer.status_code == 200, answer.text
