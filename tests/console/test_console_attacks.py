"""What a hostile page, client or local process tried against the console, over HTTP (each
refusal is checked here, in the default run; the browser's side is in test_console_browser.py):
text that disguises itself (bidi overrides, escape codes) in every place stored or client-sent
text is shown, client ids that are not path segments, two consoles in one browser, requests
that used to end in a server error."""

from __future__ import annotations

import html
import http.cookiejar
import re
import urllib.request
from pathlib import Path
from urllib.parse import quote, urlsplit

from pcp_cli import api
from pcp_cli.mcp import commands
from pcp_cli.mcp.audit import AuditLog
from pcp_cli.mcp.oauth_state import transaction
from tests.console.helpers import Console, running_console
from tests.mcp.http_helpers import make_store

RLO, PDF, ESC = "\u202e", "\u202c", "\x1b"
# How the console shows them: a visible mark each, never the character itself.
SHOWN_RLO, SHOWN_ESC = "[U+202E]", "[U+001B]"
DISGUISED = f"Invoice {RLO}fdp.exe {ESC}[2J{ESC}]52;c;cGNw{chr(7)}"


def _disguising_store(root: Path) -> Path:
    """A store whose titles, bodies, proposals' evidence, grant description, audit records
    and OAuth client name all carry a right-to-left override and escape codes."""
    make_store(root)
    with api.open_store(root) as store:
        api.add_page(store, f"A note: {DISGUISED} and the word quince.\n", title=DISGUISED,
                     page_id="disguised")
        api.add_page(store, f"### User · 2024-01-10 10:00\n\nHere is my setup. I use "
                     f"Emacs {RLO}xe{PDF} for my notes.\n\n### Assistant · 2024-01-10 10:00\n\n"
                     f"Noted {ESC}[31m.\n\n", page_type="conversation", title=DISGUISED)
        api.propose(store)
    commands.grant_add(root, "hostile", scopes=["user:ada-lumen"], sensitive=False,
                       write=False, description=DISGUISED)
    AuditLog(root).record(client_id="hostile", actor="client", tool="pcp_search",
                          params={"query": DISGUISED}, outcome="allowed", result_count=1,
                          page_ids=["disguised"])
    with transaction(root) as data:
        data["clients"]["c-1"] = {"client_name": DISGUISED, "registered_at": "2026-01-01T00:00Z",
                                  "metadata": {"redirect_uris": ["http://127.0.0.1:9/cb"]}}
    return root


def test_bidi_overrides_and_escape_codes_are_shown_never_obeyed(tmp_path: Path) -> None:
    root = _disguising_store(tmp_path / "store")
    with api.open_store(root) as store:
        proposal = next(i for i in api.review_queue(store) if "Emacs" in i["content"])
    with running_console(root) as console:
        console.signin()
        for path in ("/review", "/pages", "/pages?q=quince", "/page/disguised", "/assistants",
                     "/assistant?id=hostile", f"/review/{proposal['page_id']}/edit"):
            body = console.get(path).body
            assert SHOWN_RLO in body, path
            assert RLO not in body.replace(proposal["content"], ""), path  # the edit box aside
            assert ESC not in body and chr(7) not in body, path
        assert SHOWN_ESC in console.get("/page/disguised").body
        # what goes back in a form is unchanged: the claim being edited, the search box
        edit = console.get(f"/review/{proposal['page_id']}/edit").body
        assert f">{html.escape(proposal['content'], quote=False)}</textarea>" in edit
        search = console.get("/pages?q=" + quote(f"quince {RLO}")).body
        assert f'value="quince {RLO}"' in search


def test_a_client_id_that_is_no_path_segment_still_has_its_page(tmp_path: Path) -> None:
    """An OAuth client that registers by a metadata document is audited under its URL."""
    root = make_store(tmp_path / "store")
    url = "https://client.example/pcp/meta.json?v=1#top"
    AuditLog(root).record(client_id=url, actor="client", tool="oauth_register",
                          params={"client_name": "Example"}, outcome="allowed")
    with running_console(root) as console:
        console.signin()
        listing = console.get("/assistants").body
        link = re.search(r'<a href="([^"]+)">' + re.escape(html.escape(url)), listing)
        assert link, listing
        target = html.unescape(link.group(1)).split("#")[0]  # as a browser follows it
        page = console.get(target)
        assert page.status == 200 and "oauth_register" in page.body
        assert f"<h1>{html.escape(url)}</h1>" in page.body


def test_the_oauth_clients_table_names_the_grant_made_for_each(tmp_path: Path) -> None:
    root = make_store(tmp_path / "store")
    with transaction(root) as data:
        data["clients"]["c-1"] = {"client_name": "Claude", "registered_at": "2026-01-01T00:00Z",
                                  "metadata": {"redirect_uris": ["http://127.0.0.1:9/cb"]}}
        data["grants"]["oauth-claude-abc123"] = {"oauth_client": "c-1",
                                                 "created_at": "2026-01-01T00:01Z"}
    with running_console(root) as console:
        console.signin()
        table = console.get("/assistants").body.split("<h2>OAuth clients</h2>")[1]
        assert 'href="/assistant?id=oauth-claude-abc123"' in table


def test_two_consoles_in_one_browser_keep_their_sessions(tmp_path: Path) -> None:
    """Cookies are kept per host, not per port: the second console's sign-in must not replace
    the first one's session (whose one-time link is spent)."""
    first, second = make_store(tmp_path / "one"), make_store(tmp_path / "two")
    jar = http.cookiejar.CookieJar()  # keeps cookies as a browser does: by host, path, name
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with running_console(first) as one, running_console(second) as two:
        for console in (one, two):
            with browser.open(console.signin_url) as answer:
                assert answer.status == 200 and urlsplit(answer.url).path == "/review"
        for console in (one, two):
            with browser.open(f"{console.origin}/pages") as answer:
                assert answer.status == 200
                assert console.root.name in answer.read().decode()
        assert len(jar) == 2


def test_a_revision_id_that_is_not_one_shows_the_page_with_a_message(console_store: Path) -> None:
    with api.open_store(console_store) as store:
        api.revise_page(store, "ks-001", content="Ada is a freelance data developer.")
    with running_console(console_store) as console:
        console.signin()
        for query in ("a=../../pcp.yaml", "a=rev_nope&b=..%2Fx", "a=%00&b=x"):
            reply = console.get(f"/page/ks-001?{query}")
            assert reply.status == 200, (query, reply.body[-400:])
            assert 'class="flash error"' in reply.body and "History" in reply.body



def test_one_consoles_link_cookie_and_token_are_nothing_to_another(tmp_path: Path) -> None:
    """A sign-in link, session cookie or CSRF token of one console (another store, or the same
    store before a restart) opens nothing in another; a HEAD of the link does not spend it."""
    first, second = make_store(tmp_path / "one"), make_store(tmp_path / "two")
    with running_console(first) as one, running_console(second) as two:
        token = urlsplit(one.signin_url).query
        assert two.request("GET", f"/signin?{token}", cookie=False).status == 401
        assert one.request("HEAD", f"/signin?{token}", cookie=False).status == 200
        one.signin()  # still unspent
        two.signin()
        one.get("/review")
        two.get("/review")
        stolen = Console(two.root, two.signin_url, two.host, two.port, cookie=one.cookie)
        assert stolen.get("/review").status == 401
        foreign = two.post("/assistant/revoke", [("client_id", "claude-desktop"),
                                                 ("csrf", one.csrf or "")], csrf=False)
        assert foreign.status == 403
    with api.open_store(second) as store:
        assert api.client_grants(store)["claude-desktop"]
