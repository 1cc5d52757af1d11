"""`pcp propose --llm`: a fake OpenAI-compatible server on 127.0.0.1 stands in for the model.

It answers what each test tells it to (a good answer, garbage, an answer outside the schema,
or nothing until the client gives up) and records every request it was sent."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import cli, snapshot

CONVERSATION = """### User · 2024-06-12 10:00

I'm a data engineer at Frachtwerk. My sister lives in Lyon.

```
I'm a python developer
```

### Assistant · 2024-06-12 10:01

You sound busy. I live in the cloud.
"""


class FakeModel:
    def __init__(self, answer: Callable[[dict[str, Any]], bytes | None]) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.release = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                fake.requests.append(body)
                fake.headers.append(dict(self.headers))
                reply = fake.answer(body)
                if reply is None:  # hang until the test ends (the client times out)
                    fake.release.wait(10)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def chat(content: str) -> bytes:
    return json.dumps({"choices": [{"message": {"role": "assistant",
                                                 "content": content}}]}).encode()


def good(body: dict[str, Any]) -> bytes:
    text = body["messages"][-1]["content"]
    proposals = [
        {"kind": "keystone", "category": "identity", "content": "Is a data engineer.",
         "date": None, "confidence": 0.9,
         "evidence": "I'm a data engineer at Frachtwerk."},
        # the model's own paraphrase is not the person's text: dropped
        {"kind": "keystone", "category": "identity", "content": "Lives in Lyon.",
         "date": None, "confidence": 0.8, "evidence": "The person lives in Lyon."},
        # code was masked before the model saw it: a quote from it is not found
        {"kind": "keystone", "category": "identity", "content": "Is a Python developer.",
         "date": None, "confidence": 0.8, "evidence": "I'm a python developer"},
    ]
    assert "python developer" not in text and "Assistant" not in text
    return chat(json.dumps({"proposals": proposals}))


@pytest.fixture
def conversation_store(store: Path) -> Path:
    result = cli("add", "--type", "conversation", "--title", "chat", "--store", str(store), "-",
                 input=CONVERSATION)
    assert result.code == 0, result.stderr
    return store


def _run(store: Path, url: str, *args: str) -> Any:
    return cli("propose", "--llm", url, "--model", "fake-model", "--json", *args, "--store",
               str(store))


def test_a_models_answer_becomes_proposals_only_with_verbatim_evidence(
        conversation_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_MODEL_KEY", "sk-test-123")
    with FakeModel(good) as model:
        result = _run(conversation_store, model.url, "--api-key-env", "FAKE_MODEL_KEY")
    assert result.code == 0, result.stderr
    assert "1 call(s)" in result.stderr and "fake-model" in result.stderr
    data = result.json
    assert [p["content"] for p in data["proposals"]] == ["Is a data engineer."]
    assert data["counts"]["llm_calls"] == 1
    assert data["counts"]["llm_dropped_evidence_not_found"] == 2
    [evidence] = data["proposals"][0]["evidence"]
    assert evidence["text"] == "I'm a data engineer at Frachtwerk."
    body = cli("show", evidence["page_id"], "--json", "--store",
               str(conversation_store)).json["page"]["payload"]["content"]
    assert body[evidence["start"]:evidence["end"]] == evidence["text"]
    [request] = model.requests
    assert request["model"] == "fake-model"
    assert request["response_format"]["type"] == "json_schema"
    assert request["response_format"]["json_schema"]["schema"]["required"] == ["proposals"]
    assert model.headers[0]["Authorization"] == "Bearer sk-test-123"
    page = cli("show", data["proposals"][0]["id"], "--json", "--store",
               str(conversation_store)).json["page"]
    assert (page["review_status"], page["origin"], page["instruction_policy"],
            page["record"]["source"]) == ("proposed", "inferred", "data_only", "inferred")
    assert "data engineer" not in cli("export", "--format", "micro_prompt", "--store",
                                      str(conversation_store)).stdout


@pytest.mark.parametrize(("answer", "count"), [
    (lambda body: b"this is not json at all", "llm_dropped_malformed"),
    (lambda body: chat("Sure! Here are the facts: the person is an engineer."),
     "llm_dropped_malformed"),
    (lambda body: chat(json.dumps({"proposals": [
        {"kind": "keystone", "category": "superpower", "content": "Can fly.", "date": None,
         "confidence": 2, "evidence": "I'm a data engineer at Frachtwerk."}]})),
     "llm_dropped_out_of_schema"),
    (lambda body: chat(json.dumps({"facts": ["Is a data engineer"]})),
     "llm_dropped_out_of_schema"),
    (lambda body: chat(json.dumps({"proposals": [
        {"kind": "timeline_event", "category": "move", "content": "Moved.",
         "date": "2024-02-30", "confidence": 0.5,
         "evidence": "I'm a data engineer at Frachtwerk."}]})),
     "llm_dropped_out_of_schema"),
], ids=["garbage", "prose", "bad-enum", "wrong-shape", "impossible-date"])
def test_a_bad_answer_is_dropped_and_counted_never_stored(
        conversation_store: Path, answer: Any, count: str) -> None:
    before = snapshot(conversation_store)
    with FakeModel(answer) as model:
        result = _run(conversation_store, model.url)
    assert result.code == 0, result.stderr
    assert result.json["proposals"] == []
    assert result.json["counts"][count] == 1
    assert snapshot(conversation_store) == before


def test_a_model_that_never_answers_times_out_and_is_counted(conversation_store: Path) -> None:
    with FakeModel(lambda body: None) as model:
        result = _run(conversation_store, model.url, "--timeout", "0.5")
    assert result.code == 0, result.stderr
    assert result.json["counts"]["llm_calls_failed"] == 1
    assert result.json["proposals"] == []


def test_max_calls_caps_the_cost_and_says_so_before_it_starts(store: Path) -> None:
    for day in range(1, 5):
        cli("add", "--type", "conversation", "--title", f"c{day}", "--store", str(store), "-",
            input=f"### User · 2024-06-0{day} 10:00\n\nI'm a data engineer at Frachtwerk.\n")
    with FakeModel(good) as model:
        result = _run(store, model.url, "--max-calls", "2")
    assert result.code == 0, result.stderr
    assert len(model.requests) == 2
    assert "2 call(s)" in result.stderr and "2 more chunk(s) left out" in result.stderr
    assert result.json["counts"]["llm_chunks_skipped"] == 2
    [proposal] = result.json["proposals"]  # one fact, said twice in what was read
    assert len(proposal["evidence"]) == 2


def test_the_api_key_comes_only_from_the_named_variable(conversation_store: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    result = cli("propose", "--llm", "http://127.0.0.1:9/v1", "--api-key-env",
                 "NO_SUCH_KEY_VAR", "--store", str(conversation_store))
    assert result.code == 2 and "NO_SUCH_KEY_VAR" in result.stderr
    lone = cli("propose", "--model", "x", "--store", str(conversation_store))
    assert lone.code == 2 and "--llm" in lone.stderr


def test_an_unreachable_endpoint_is_counted(conversation_store: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = _run(conversation_store, f"http://127.0.0.1:{port}/v1")
    assert result.code == 0, result.stderr
    assert result.json["counts"]["llm_calls_failed"] == 1
