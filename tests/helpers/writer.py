"""A writer process for the concurrency and crash tests.

    python writer.py STORE WORKER OPS SEED MODE PAGE_ID...

MODE is `lib` (a loop calling pcp_cli.api in this process; a Store per operation), `lib-long`
(one Store kept open for the whole loop, like a server) or `cli` (each operation is a real
`python -m pcp_cli` process). OPS <= 0 loops until killed.

Each operation is one of: add a new page, revise a shared page, or revise a shared page with
the head revision read just before as the expectation. After a write *returns*, one JSON line
is printed and flushed: {"op", "page_id", "revision_id", "status"} for an acknowledged write, or
{"op": "conflict", ...} for an expectation that no longer held. Nothing is printed for a write
that did not return, so every printed revision id was acknowledged to the caller.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time


def emit(**record: object) -> None:
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def run_cli(store: str, *args: str) -> tuple[int, dict]:
    proc = subprocess.run([sys.executable, "-m", "pcp_cli", *args, "--store", store, "--json"],
                          capture_output=True, text=True)
    if proc.returncode == 0:
        return 0, json.loads(proc.stdout)
    try:
        return proc.returncode, json.loads(proc.stderr)
    except ValueError:
        return proc.returncode, {"raw": proc.stderr}


def main() -> None:
    store_path, worker, ops, seed, mode, *pages = sys.argv[1:]
    worker_n, total = int(worker), int(ops)
    rng = random.Random(int(seed))
    from pcp_cli import api
    from pcp_cli.errors import PcpError, RevisionConflict

    long_lived = api.open_store(store_path) if mode == "lib-long" else None
    i = 0
    while total <= 0 or i < total:
        i += 1
        choice = rng.random()
        text = f"worker {worker_n} op {i} seed {seed} {time.time_ns()}"
        page = rng.choice(pages)
        if mode == "cli":
            if choice < 0.3:
                code, data = run_cli(store_path, "add", text)
                op = "add"
            elif choice < 0.65:
                code, data = run_cli(store_path, "revise", page, text)
                op = "revise"
            else:
                _, shown = run_cli(store_path, "show", page)
                expect = shown["revision_id"]
                code, data = run_cli(store_path, "revise", page, text, "--expect", expect)
                op = "revise_expect"
            if code == 0:
                emit(op=op, **data)
            elif code == 4:
                emit(op="conflict", page_id=page, code=code)
            else:
                emit(op="error", code=code, detail=data)
            continue
        store = long_lived or api.open_store(store_path)
        try:
            if choice < 0.3:
                result = api.add_page(store, text)
                op = "add"
            elif choice < 0.65:
                result = api.revise_page(store, page, content=text)
                op = "revise"
            else:
                expect = store.current(page).revision_id
                if rng.random() < 0.5:
                    time.sleep(rng.random() / 100)  # widen the window for a conflict
                try:
                    result = api.revise_page(store, page, content=text,
                                             expected_revision_id=expect)
                except RevisionConflict:
                    emit(op="conflict", page_id=page, code=4)
                    continue
                op = "revise_expect"
            emit(op=op, **result.to_dict())
        except PcpError as exc:
            emit(op="error", code=int(exc.exit_status), detail=exc.message)
        finally:
            if long_lived is None:
                store.close()
    if long_lived is not None:
        long_lived.close()
    os._exit(0)


if __name__ == "__main__":
    main()
