"""Benchmark IngestEvent end to end: `pcp ingest` of JSON Lines, and `pcp import` of Claude Code
session logs, first run, the same input again, and a session that grew.

    python bench/ingest_bench.py                       # 5,000 events; 40 sessions x 250 records
    python bench/ingest_bench.py --events 20000 --sessions 100 --records 400 --runs 5

Everything runs through real `pcp` processes on new stores in a temporary folder; each scenario
is repeated `--runs` times and the median is printed with the min and max, and the machine's load
average before and after (the numbers are only comparable within one run of this script).
The inputs are deterministic (seeded).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS = ("tide gauge sensor drift thermal mount calibrate harbor crane buoy reading offset "
         "afternoon compensation log warning fix test deploy branch merge review").split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def events_file(path: Path, count: int, conversations: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    with path.open("w") as out:
        for i in range(count):
            conv = f"c{i % conversations}"
            minute = i // conversations
            stamp = f"2026-05-{1 + minute // 1440 % 28:02d}T{minute // 60 % 24:02d}:" \
                    f"{minute % 60:02d}:00Z"
            kind = i % 5
            if kind == 3:
                event = {"type": "tool_call", "conversation_id": conv, "name": "grep",
                         "input": {"q": rng.choice(WORDS)}, "output": sentence(rng, 30),
                         "timestamp": stamp}
            elif kind == 4:
                event = {"type": "reasoning", "conversation_id": conv,
                         "content": sentence(rng, 40), "timestamp": stamp}
            else:
                event = {"type": "message", "conversation_id": conv,
                         "role": "user" if kind == 0 else "assistant",
                         "content": sentence(rng, 12 if kind == 0 else 60), "timestamp": stamp,
                         "idempotency_key": f"e{i}"}
            out.write(json.dumps(event) + "\n")


def claude_projects(root: Path, sessions: int, records: int, seed: int = 11) -> list[Path]:
    rng = random.Random(seed)
    files = []
    for s in range(sessions):
        project = root / f"-home-ada-code-project{s % 5}"
        project.mkdir(parents=True, exist_ok=True)
        session_id = f"00000000-0000-4000-8000-{s:012d}"
        path = project / f"{session_id}.jsonl"
        with path.open("w") as out:
            for r in range(records):
                out.write(json.dumps(claude_record(rng, session_id, s, r)) + "\n")
        files.append(path)
    return files


def claude_record(rng: random.Random, session_id: str, s: int, r: int) -> dict:
    base = {"parentUuid": None, "isSidechain": False, "userType": "external",
            "cwd": f"/home/ada/code/project{s % 5}", "sessionId": session_id,
            "version": "1.0.3", "gitBranch": "main",
            "uuid": f"{s:08d}-0000-4000-8000-{r:012d}",
            "timestamp": f"2025-05-{1 + s % 28:02d}T{r // 60 % 24:02d}:{r % 60:02d}:00.000Z"}
    kind = r % 4
    if kind == 0:
        return {**base, "type": "user", "message": {"role": "user",
                                                     "content": sentence(rng, 15)}}
    if kind == 1:
        blocks = [{"type": "thinking", "thinking": sentence(rng, 40), "signature": "x"},
                  {"type": "text", "text": sentence(rng, 50)},
                  {"type": "tool_use", "id": f"toolu_{s}_{r}", "name": "Bash",
                   "input": {"command": "grep -c drift log"}}]
        return {**base, "type": "assistant", "message": {
            "id": f"msg_{s}_{r}", "role": "assistant", "model": "claude-sonnet-4",
            "content": blocks, "usage": {"input_tokens": 4, "output_tokens": 80}}}
    if kind == 2:
        return {**base, "type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{s}_{r - 1}",
             "content": sentence(rng, 80)}]}}
    return {**base, "type": "assistant", "message": {
        "id": f"msg_{s}_{r}", "role": "assistant", "model": "claude-sonnet-4",
        "content": [{"type": "text", "text": sentence(rng, 40)}]}}


def pcp(*args: str) -> tuple[float, dict]:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pcp_cli", *args, "--json"],
                          capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"pcp {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return elapsed, json.loads(proc.stdout)


def new_store(folder: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pcp_cli", "init", str(folder), "--owner", "ada"],
                   check=True, capture_output=True, cwd=ROOT,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    return folder


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def report(name: str, times: list[float], unit_count: int, unit: str) -> None:
    median = statistics.median(times)
    print(f"| {name} | {median:.2f} s (min {min(times):.2f}, max {max(times):.2f}) | "
          f"{unit_count / median:,.0f} {unit}/s |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--records", type=int, default=250)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pcp-ingest-bench-") as tmp_name:
        tmp = Path(tmp_name)
        jsonl = tmp / "events.jsonl"
        events_file(jsonl, args.events, args.conversations)
        projects = tmp / "projects"
        files = claude_projects(projects, args.sessions, args.records)
        size = sum(f.stat().st_size for f in files)
        print(f"load average before: {load()}")
        print(f"{args.events:,} events in {args.conversations} conversations "
              f"({jsonl.stat().st_size / 1e6:.1f} MB); {args.sessions} Claude Code sessions x "
              f"{args.records} records ({size / 1e6:.1f} MB)\n")
        print("| scenario | median time | rate |\n|---|---|---|")
        first, again, imp, reimp, reread, grown = [], [], [], [], [], []
        stored = events_in_sessions = 0
        for run in range(args.runs):
            store = new_store(tmp / f"s{run}")
            t, out = pcp("ingest", str(jsonl), "--store", str(store))
            first.append(t)
            stored = out["events"]["stored"]
            t, out = pcp("ingest", str(jsonl), "--store", str(store))
            assert out["events"]["stored"] == 0
            again.append(t)
            store2 = new_store(tmp / f"p{run}")
            t, out = pcp("import", str(projects), "--store", str(store2))
            imp.append(t)
            events_in_sessions = out["events"]["stored"]
            t, out = pcp("import", str(projects), "--store", str(store2))
            assert out["events"]["stored"] == 0
            reimp.append(t)
            (store2 / ".pcp" / "imported-sessions.json").unlink()  # every file read again
            t, out = pcp("import", str(projects), "--store", str(store2))
            assert out["events"]["stored"] == 0 and out["sessions_not_read"] == 0
            reread.append(t)
            # one session grows by 20 records (an agent still at work), then re-import
            rng = random.Random(run)
            grow = files[run % len(files)]
            session_id = grow.stem
            with grow.open("a") as out_file:
                for r in range(args.records + 20 * run, args.records + 20 * (run + 1)):
                    out_file.write(json.dumps(claude_record(rng, session_id, 0, r)) + "\n")
            t, out = pcp("import", str(projects), "--store", str(store2))
            assert out["revised"] == 1, out
            grown.append(t)
        report(f"`pcp ingest`, new store ({stored:,} events stored)", first, stored, "events")
        report("`pcp ingest`, the same file again (nothing stored)", again, args.events,
               "events")
        report(f"`pcp import` sessions, new store ({events_in_sessions:,} events, "
               f"{args.sessions} pages)", imp, events_in_sessions, "events")
        report("`pcp import` sessions again (nothing new; unchanged files not read)", reimp,
               events_in_sessions, "events")
        report("`pcp import` sessions again, every file read (no .pcp memory)", reread,
               events_in_sessions, "events")
        report("`pcp import` after one session grew by 20 records", grown, events_in_sessions,
               "events")
        print(f"\nload average after: {load()}")


if __name__ == "__main__":
    main()
