"""A known token id with the wrong secret, against a real `pcp serve --http` on 127.0.0.1.

The other HTTP tests only try unknown token ids, which the lookup alone refuses; these keep
the id of a live token and change only its secret, so a server that skipped the secret check
(trusting the id) would answer 200 here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from pcp_cli.mcp.audit import read_audit
from tests.mcp.http_helpers import Running, make_store, running_server, token

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream",
           "mcp-protocol-version": "2025-06-18"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_store(tmp_path_factory.mktemp("http-secrets") / "store")


@pytest.fixture(scope="module")
def server(store: Path) -> Iterator[Running]:
    with running_server(store) as running:
        yield running


def _post(server: Running, bearer: str) -> httpx2.Response:
    return httpx2.post(server.url, content=json.dumps(LIST).encode(), timeout=30,
                       headers={**HEADERS, "authorization": f"Bearer {bearer}"})


def _split(real: str) -> tuple[str, str]:
    """`pcp_<id>` and `<secret>` (the secret may hold '_' itself; the hex id never does)."""
    pcp, token_id, secret = real.split("_", 2)
    return f"{pcp}_{token_id}", secret


def _forgeries(real: str) -> dict[str, str]:
    prefix, secret = _split(real)
    flipped = ("A" if secret[0] != "A" else "B") + secret[1:]
    return {
        "one_character_changed": f"{prefix}_{flipped}",
        "another_tokens_secret_length": f"{prefix}_{'x' * len(secret)}",
        "empty_secret": f"{prefix}_",
        "secret_cut_short": f"{prefix}_{secret[:-1]}",
        "secret_with_more": f"{prefix}_{secret}x",
    }


def test_a_known_token_id_with_a_wrong_secret_is_refused(server: Running, store: Path) -> None:
    real = token(store, "tidewatch")
    assert _post(server, real).status_code == 200  # the id is live
    before = sum(1 for r in read_audit(store) if r.get("tool") == "http_auth")
    for name, forged in _forgeries(real).items():
        refused = _post(server, forged)
        assert refused.status_code == 401, name
        assert 'error="invalid_token"' in refused.headers["www-authenticate"], name
    after = sum(1 for r in read_audit(store) if r.get("tool") == "http_auth")
    assert after == before + len(_forgeries(real))  # each refusal audited
    assert _post(server, real).status_code == 200  # the real token still works


def test_another_clients_secret_does_not_open_this_clients_id(server: Running,
                                                              store: Path) -> None:
    mine = token(store, "tidewatch")
    theirs = token(store, "claude-desktop")
    crossed = f"{_split(mine)[0]}_{_split(theirs)[1]}"
    assert _post(server, crossed).status_code == 401
    assert _post(server, mine).status_code == 200 and _post(server, theirs).status_code == 200
