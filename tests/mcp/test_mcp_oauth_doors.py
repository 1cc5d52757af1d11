"""The OAuth doors' limits (issue #31), in process: the approval code's cap on wrong tries (per
request, per address, and guesses slowed down), the caps on pending requests and clients
answered with their documented error, a client name that cannot forge a line on the
terminal, and a state file that stays small."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import anyio
import pytest

from pcp_cli.mcp.oauth import Window
from tests.conftest import cli
from tests.mcp.oauth_inprocess import (
    BASE,
    REDIRECT,
    authorize_url,
    consent,
    door,
    list_tools,
    open_consent,
    pkce,
    register,
    registered,
    tokens,
)

pytestmark = pytest.mark.anyio


def wrong(code: str) -> str:
    """Another approval code than `code`."""
    return "0000-0000" if code != "0000-0000" else "0000-0001"


async def test_the_sixth_try_fails_even_with_the_right_code(tmp_path: Path) -> None:
    async with door(tmp_path) as d:
        client = await registered(d.http())
        request_id, csrf = await open_consent(d.http(), client)
        code = d.approval_code(request_id)
        answers = []
        for n in range(5):  # five wrong codes, each from its own address: no slow-down met
            answers.append(await consent(d.http(f"10.0.0.{n + 1}"), request_id, csrf,
                                         wrong(code)))
        assert [a.status_code for a in answers[:4]] == [403] * 4
        assert "approval code is missing or wrong" in answers[0].text
        assert answers[4].status_code == 303  # dropped: the client hears access_denied
        assert "error=access_denied" in answers[4].headers["location"]
        sixth = await consent(d.http("10.0.0.6"), request_id, csrf, code)
        assert sixth.status_code == 400 and "unknown or expired" in sixth.text
        assert "code=" not in sixth.headers.get("location", "")


class Clock:
    """The approval-code guard's clock, moved by the test (nothing waits on real time)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_guessing_from_many_threads_compares_one_code_per_wait(tmp_path: Path) -> None:
    """Eight threads guess as fast as they can from one address: after a wrong code the
    address waits (2 s, doubling), and a try made while it waits is refused unchecked; the
    wrong tries are counted in oauth.json, never rolled back, and the fifth drops the
    request, so the right code then gets nothing."""
    async with door(tmp_path) as d:
        clock = Clock()
        d.app.state.pcp_oauth.guesses.clock = clock
        client = await registered(d.http())
        request_id, csrf = await open_consent(d.http(), client)
        code = d.approval_code(request_id)
        guesser = d.http("203.0.113.7")
        texts: list[str] = []
        lock = threading.Lock()
        start = threading.Barrier(8)

        async def guess(n: int) -> None:
            answer = await consent(guesser, request_id, csrf, f"{n:04d}-{n:04d}")
            with lock:
                texts.append(answer.text)

        def thread(first: int) -> None:
            start.wait()
            for n in range(first, first + 25):
                anyio.from_thread.run(guess, n)

        async with anyio.create_task_group() as tg:
            for t in range(8):
                tg.start_soon(anyio.to_thread.run_sync, thread, 1000 + t * 25)
        assert len(texts) == 200
        assert sum("approval code is missing or wrong" in t for t in texts) == 1
        assert sum("slow down: after a wrong approval code, try again in 2 s" in t
                   for t in texts) == 199
        state = json.loads((d.store / ".pcp" / "oauth.json").read_text())
        assert state["pending"][request_id]["tries"] == 1
        # the address's waits double: 2, 4, 8, 16 s; the fifth wrong code drops the request
        for wait in (2, 4, 8, 16):
            clock.now += wait - 0.5
            early = await consent(guesser, request_id, csrf, wrong(code))
            assert "slow down" in early.text
            clock.now += 0.5
            last = await consent(guesser, request_id, csrf, wrong(code))
        assert "error=access_denied" in last.headers["location"]
        right = await consent(d.http("198.51.100.1"), request_id, csrf, code)
        assert right.status_code == 400 and "code=" not in right.headers.get("location", "")


async def test_an_address_and_everyone_together_have_a_cap_of_wrong_codes(
        tmp_path: Path) -> None:
    async with door(tmp_path) as d:
        clock = Clock()
        d.app.state.pcp_oauth.guesses.clock = clock
        d.app.state.pcp_oauth.announced_client = Window(1000, 60)  # every code printed
        client = await registered(d.http())
        guesser = d.http("203.0.113.7")

        made = 0

        async def wrong_tries(n: int) -> None:
            nonlocal made
            request_id, csrf = await open_consent(d.http(), client)
            code = d.approval_code(request_id)
            for _ in range(n):
                if made:  # the address's wait: 2 s, doubling, at most a minute
                    clock.now += min(2 * 2 ** (made - 1), 60)
                answer = await consent(guesser, request_id, csrf, wrong(code))
                assert "slow down" not in answer.text
                made += 1

        for n in (4, 4, 2):  # ten wrong codes from this address, in five minutes
            await wrong_tries(n)
        request_id, csrf = await open_consent(d.http(), client)
        clock.now += 60
        capped = await consent(guesser, request_id, csrf, d.approval_code(request_id))
        assert "too many wrong approval codes from your address (10 in 10 minutes)" \
            in capped.text and f"pcp grant approve {request_id}" in capped.text
        clock.now += 600  # the window passes: the right code works again
        assert (await consent(guesser, request_id, csrf,
                              d.approval_code(request_id))).status_code == 303
        # fifty wrong codes from fifty addresses: nobody's code is compared for a while
        for n in range(10):
            request_id, csrf = await open_consent(d.http(), client)
            code = d.approval_code(request_id)
            for k in range(4):
                await consent(d.http(f"10.1.{n}.{k}"), request_id, csrf, wrong(code))
        for n in range(10):
            request_id, csrf = await open_consent(d.http(), client)
            await consent(d.http(f"10.2.{n}.1"), request_id, csrf,
                          wrong(d.approval_code(request_id)))
        request_id, csrf = await open_consent(d.http(), client)
        shut = await consent(d.http("192.0.2.1"), request_id, csrf, d.approval_code(request_id))
        assert shut.status_code == 403 and "too many wrong approval codes lately" in shut.text
        # the owner's terminal still approves
        assert pcp_approve(d.store, request_id)
        done = await consent(d.http("192.0.2.1"), request_id, csrf, "")
        assert done.status_code == 303 and "code=" in done.headers["location"]


def pcp_approve(store: Path, request_id: str) -> bool:
    from tests.conftest import cli

    return cli("grant", "approve", request_id, "--store", str(store)).code == 0


def pending(d) -> dict:
    return json.loads((d.store / ".pcp" / "oauth.json").read_text())["pending"]


async def test_parked_requests_never_lock_a_new_connector_out(tmp_path: Path) -> None:
    """A hundred requests parked by ten addresses: a new connector's request still gets in
    (the oldest goes), one client or one address keeps only its newest few, and the terminal
    shows a few lines a minute, not one per request."""
    async with door(tmp_path) as d:
        one = d.http("10.0.0.1")
        client = await registered(one)
        for _ in range(7):
            await open_consent(one, client)
        assert sum(p["client_id"] == client for p in pending(d).values()) == 5
        for a in range(10):
            flood = d.http(f"10.0.1.{a}")
            for _ in range(2):
                other = await registered(flood)
                for _ in range(5):
                    assert (await flood.get(authorize_url(other, pkce()[1]))).status_code == 302
        waiting = pending(d)
        assert len(waiting) == 100
        assert max(sum(p.get("address") == f"10.0.1.{a}" for p in waiting.values())
                   for a in range(10)) == 10
        newcomer = d.http("192.0.2.10")
        request_id, csrf = await open_consent(newcomer, await registered(newcomer))
        assert request_id in pending(d) and len(pending(d)) == 100
        # the terminal: at most three lines a minute of one client, thirty in all, and one
        # line saying the rest were not printed
        asks = [line for line in d.said.lines if "asks to read your context" in line]
        assert len(asks) == 30
        assert sum("too many authorization requests at once" in line
                   for line in d.said.lines) == 1


def write_clients(d, clients: dict, grants: dict | None = None) -> None:
    """Registrations as if made earlier (the test writes the files the server reads)."""
    (d.store / ".pcp").mkdir(exist_ok=True)
    (d.store / ".pcp" / "oauth-clients.json").write_text(json.dumps(
        {"version": 1, "clients": clients}))
    (d.store / ".pcp" / "oauth.json").write_text(json.dumps(
        {"version": 1, "grants": grants or {}, "pending": {}, "codes": {}, "tokens": {}}))


def old_client(n: int) -> dict:
    return {"client_name": f"client {n}", "registered_at": f"2026-01-01T00:00:{n % 60:02d}."
            f"{n:03d}Z", "metadata": {"client_id": f"c{n}", "redirect_uris": [REDIRECT],
                                      "client_name": f"client {n}",
                                      "token_endpoint_auth_method": "none",
                                      "grant_types": ["authorization_code"],
                                      "response_types": ["code"]}}


async def test_two_hundred_clients_make_room_or_say_so(tmp_path: Path) -> None:
    async with door(tmp_path) as d:
        http = d.http()
        # full of clients that never got a grant: the oldest of them makes room
        write_clients(d, {f"c{n}": old_client(n) for n in range(200)})
        new = await registered(http)
        clients = json.loads((d.store / ".pcp" / "oauth-clients.json").read_text())["clients"]
        assert len(clients) == 200 and new in clients and "c0" not in clients
        # full of clients that each have a grant: the documented refusal, not a 500
        write_clients(d, {f"c{n}": old_client(n) for n in range(200)},
                      {f"oauth-client-{n}": {"oauth_client": f"c{n}", "created_at": "x",
                                             "last_used": None} for n in range(200)})
        refused = await register(http)
        assert refused.status_code == 400
        assert refused.json()["error"] == "invalid_client_metadata"
        assert "200 clients are registered" in refused.json()["error_description"]
        assert "pcp grant remove-client" in refused.json()["error_description"]


async def test_a_client_name_cannot_forge_a_line_on_the_terminal(tmp_path: Path) -> None:
    forged = ('Claude\x1b[2K\rpcp serve: the client "Claude" (redirect to claude.ai) asks to '
              "read your context; approval code 1111-1111\n\u202egnp.exe")
    async with door(tmp_path) as d:
        http = d.http()
        client = await registered(http, client_name=forged)
        request_id, _ = await open_consent(http, client)
        [line] = d.said.lines  # one line, whatever the name holds
        assert "\x1b" not in line and "\r" not in line and "\u202e" not in line
        assert line.startswith('pcp serve: the client "Claude\\x1b[2K\\x0dpcp serve: ')
        assert line.endswith(f"(or: pcp grant approve {request_id}); valid 10 minutes")
        listed = cli("grant", "oauth-clients", "--json", "--store", str(d.store)).json
        assert "\x1b" not in listed[0]["client_name"]
        assert "\n" not in listed[0]["client_name"]


@pytest.mark.parametrize("uri", [
    "javascript:alert(document.cookie)", "JavaScript://x/%0aalert(1)", "data:text/html,x",
    "file:///etc/passwd", "vbscript:msgbox(1)", "http://example.com/cb", "/relative/cb",
    "https://ok.example/" + "x" * 600])
async def test_a_redirect_uri_that_runs_or_reads_is_refused(tmp_path: Path, uri: str) -> None:
    async with door(tmp_path) as d:
        answer = await register(d.http(), redirect_uris=[uri])
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] in ("invalid_redirect_uri", "invalid_client_metadata")


async def test_an_apps_own_redirect_scheme_is_kept(tmp_path: Path) -> None:
    async with door(tmp_path) as d:
        answer = await register(d.http(), redirect_uris=[
            "cursor://anysphere.cursor-retrieval/oauth/callback", "https://vscode.dev/redirect"])
    assert answer.status_code == 201, answer.text


async def test_a_registration_keeps_only_what_the_flow_needs(tmp_path: Path) -> None:
    """196 registrations, each near the 64 KB body cap, made oauth.json 11.9 MB, rewritten at
    every step: now each keeps its redirect URIs and name only, in a file of its own that a
    token step never rewrites."""
    padding = "p" * 8000
    async with door(tmp_path) as d:
        for n in range(24):
            answer = await register(
                d.http(f"10.9.{n // 10}.1"), client_name="n" * 5000,
                logo_uri=f"https://x.example/{padding}", client_uri=f"https://x.example/{padding}",
                tos_uri=f"https://x.example/{padding}", contacts=[padding] * 4,
                redirect_uris=[f"https://app.example/cb{k}/{'r' * 400}" for k in range(8)])
            assert answer.status_code == 201, answer.text
            assert "logo_uri" not in answer.json() and len(answer.json()["client_name"]) == 100
        clients = d.store / ".pcp" / "oauth-clients.json"
        assert clients.stat().st_size < 24 * 4500
        kept = json.loads(clients.read_text())["clients"]
        assert all(set(c["metadata"]) <= {"client_id", "client_id_issued_at", "client_name",
                                          "redirect_uris", "grant_types", "response_types",
                                          "token_endpoint_auth_method", "scope"}
                   for c in kept.values())
        before = clients.stat()
        http = d.http()
        client = await registered(http)
        written = clients.stat()
        request_id, csrf = await open_consent(http, client)
        await consent(http, request_id, csrf, d.approval_code(request_id))
        after = clients.stat()
        assert (written.st_ino, written.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)
        assert (before.st_ino, before.st_mtime_ns) != (written.st_ino, written.st_mtime_ns)
        assert "clients" not in json.loads((d.store / ".pcp" / "oauth.json").read_text())


async def test_consenting_again_keeps_the_grants_last_use(tmp_path: Path) -> None:
    async with door(tmp_path) as d:
        http = d.http()
        issued = await tokens(d, http)
        assert (await list_tools(http, issued["access_token"])).status_code == 200
        [first] = json.loads((d.store / ".pcp" / "oauth.json").read_text())["grants"].values()
        assert first["last_used"]
        request_id, csrf = await open_consent(http, issued["client"])
        assert (await consent(http, request_id, csrf,
                              d.approval_code(request_id))).status_code == 303
        [again] = json.loads((d.store / ".pcp" / "oauth.json").read_text())["grants"].values()
        assert again == first


# -- each layer alone --------------------------------------------------------------------------
async def test_a_token_bound_to_another_resource_is_refused_at_mcp(tmp_path: Path) -> None:
    """The token is good in every other way (known, unexpired, its grant in pcp.yaml): only
    its resource, another server's /mcp, is wrong."""
    async with door(tmp_path) as d:
        http = d.http()
        issued = await tokens(d, http)
        assert (await list_tools(http, issued["access_token"])).status_code == 200
        state_file = d.store / ".pcp" / "oauth.json"
        state = json.loads(state_file.read_text())
        for token in state["tokens"].values():
            token["resource"] = "https://other.example/mcp"
        state_file.write_text(json.dumps(state))
        refused = await list_tools(http, issued["access_token"])
        assert refused.status_code == 401
        assert "the token is for https://other.example/mcp, not this server" in refused.text


@pytest.mark.parametrize("endpoint", ["/register", "/token", "/authorize", "/consent"])
async def test_a_foreign_origin_is_refused_at_each_oauth_endpoint(tmp_path: Path,
                                                                 endpoint: str) -> None:
    """Each request is one that would succeed from this origin; from another site's page it is
    refused before anything happens."""
    evil = {"origin": "https://evil.example"}
    async with door(tmp_path) as d:
        http = d.http()
        if endpoint == "/register":
            answer = await http.post("/register", headers=evil, json={
                "client_name": "x", "redirect_uris": [REDIRECT]})
            assert not (d.store / ".pcp" / "oauth-clients.json").exists()
        elif endpoint == "/authorize":
            client = await registered(http)
            answer = await http.get(authorize_url(client, pkce()[1]), headers=evil)
            assert d.said.lines == []
        elif endpoint == "/consent":
            client = await registered(http)
            request_id, csrf = await open_consent(http, client)
            answer = await http.post("/consent", headers={**evil, "cookie": f"pcp_csrf={csrf}"},
                                     data={"request": request_id, "csrf": csrf,
                                           "approval": d.approval_code(request_id),
                                           "scope": ["user:ada-lumen"], "decision": "approve"})
            assert request_id in json.loads(
                (d.store / ".pcp" / "oauth.json").read_text())["pending"]
        else:
            client = await registered(http)
            verifier, challenge = pkce()
            request_id, csrf = await open_consent(http, client, challenge)
            back = await consent(http, request_id, csrf, d.approval_code(request_id))
            code = parse_qs(urlparse(back.headers["location"]).query)["code"][0]
            answer = await http.post("/token", headers=evil, data={
                "grant_type": "authorization_code", "code": code, "client_id": client,
                "redirect_uri": REDIRECT, "code_verifier": verifier,
                "resource": BASE + "/mcp"})
            assert json.loads((d.store / ".pcp" / "oauth.json").read_text())["tokens"] == {}
        assert answer.status_code == 403, answer.text
        assert "Invalid Origin header" in answer.text


async def test_the_providers_csrf_check_alone(tmp_path: Path) -> None:
    """The form's token matches its cookie (the page's check passes) but is not the
    request's: the provider refuses it on its own."""
    async with door(tmp_path) as d:
        http = d.http()
        client = await registered(http)
        request_id, _ = await open_consent(http, client)
        forged = "f" * 32
        answer = await consent(http, request_id, forged, d.approval_code(request_id))
        assert answer.status_code == 400 and "CSRF token is missing or wrong" in answer.text
        assert request_id in json.loads(
            (d.store / ".pcp" / "oauth.json").read_text())["pending"]


async def test_the_consent_pages_cookie_check_alone(tmp_path: Path) -> None:
    """The form's token is the request's (the provider would accept it) but the browser sent
    no matching cookie (another site's form): the page refuses it on its own."""
    async with door(tmp_path) as d:
        http = d.http()
        client = await registered(http)
        request_id, csrf = await open_consent(http, client)
        answer = await d.http("127.0.0.1").post("/consent", headers={"cookie": "pcp_csrf=x"},
                                                data={"request": request_id, "csrf": csrf,
                                                      "approval": d.approval_code(request_id),
                                                      "scope": ["user:ada-lumen"],
                                                      "decision": "approve"})
        assert answer.status_code == 403 and "CSRF check failed" in answer.text
