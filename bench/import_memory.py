"""Peak memory of every importer on its largest inputs (issue #26): `pcp import` of a ChatGPT
export, a Claude export, a Markdown folder and a PCP v1 archive, and `pcp ingest` of one long
conversation and of many.

    python bench/import_memory.py                    # the default sizes (a few minutes)
    python bench/import_memory.py --chatgpt-mb 200 --claude-mb 200 --notes 20000

Each run is a real `pcp` child process into a new, empty store; its peak resident size is
measured by /usr/bin/time (GNU time, `%M`), and the baseline is `pcp status` on an empty store (the
interpreter and pcp's modules). The goal is a peak of at most a few times the input's size.
Inputs are deterministic (seeded): the ChatGPT export comes from bench/import_bench.py.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

WORDS = ("tide river harbour estuary model sensor pipeline python review deploy budget garden "
         "recipe piano marathon library schedule release testing answer context profile").split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def run(*args: str) -> tuple[int, float, float]:
    """(exit status, seconds, peak RSS in MiB) of one `pcp` child.

    Measured by /usr/bin/time, not by this process's wait4: a child forked from this process
    (which holds the generated inputs) counts the parent's pages in its ru_maxrss before exec.
    """
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        started = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name, sys.executable,
                               "-m", "pcp_cli", *args], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        seconds = time.perf_counter() - started
        peak_kib = int(rss.read().strip().splitlines()[-1])
    if done.returncode not in (0, 9):  # 9: imported with problems
        sys.stderr.write(done.stderr)
    return done.returncode, seconds, peak_kib / 1024


def new_store(folder: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pcp_cli", "init", str(folder), "--owner", "bench"],
                   check=True, capture_output=True)
    return folder


def claude_export(path: Path, megabytes: float, seed: int = 5) -> None:
    rng = random.Random(seed)
    conversations = []
    size = 0
    index = 0
    while size < megabytes * 1024 * 1024:
        messages = [{"uuid": f"m{index}-{i}", "sender": "human" if i % 2 == 0 else "assistant",
                     "text": sentence(rng, 15 if i % 2 == 0 else 120),
                     "created_at": f"2025-0{1 + index % 9}-1{i % 9}T10:00:00Z"}
                    for i in range(rng.randint(4, 40))]
        conversation = {"uuid": f"conv-{index}", "name": sentence(rng, 4),
                        "created_at": "2025-01-01T10:00:00Z",
                        "updated_at": "2025-01-02T10:00:00Z", "chat_messages": messages}
        size += len(json.dumps(conversation))
        conversations.append(conversation)
        index += 1
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("conversations.json", json.dumps(conversations))
        archive.writestr("users.json", json.dumps([{"uuid": "u1", "full_name": "Bench"}]))


def markdown_folder(folder: Path, notes: int, seed: int = 3) -> None:
    rng = random.Random(seed)
    for i in range(notes):
        sub = folder / f"area-{i % 20}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"note-{i}.md").write_text(f"# {sentence(rng, 4)}\n\n" + "\n\n".join(
            sentence(rng, 80) for _ in range(rng.randint(2, 12))) + "\n", "utf-8")


def events(path: Path, count: int, conversations: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    with path.open("w") as out:
        for i in range(count):
            minute = i // conversations
            out.write(json.dumps({
                "type": "message", "conversation_id": f"c{i % conversations}",
                "role": "user" if i % 2 == 0 else "assistant",
                "content": sentence(rng, 12 if i % 2 == 0 else 60),
                "timestamp": f"2026-05-{1 + minute // 1440 % 28:02d}T{minute // 60 % 24:02d}:"
                             f"{minute % 60:02d}:{i % 60:02d}Z"}) + "\n")


def v1_archive(path: Path, example: Path, keystones: int, seed: int = 9) -> None:
    """A PCP v1 full archive: the example store's profile, `keystones` keystones and as many
    timeline events."""
    rng = random.Random(seed)
    exported = subprocess.run([sys.executable, "-m", "pcp_cli", "export", "--format",
                               "archive", "--store", str(example)], check=True,
                              capture_output=True, text=True).stdout
    data = json.loads(exported)
    data["keystones"] = [{
        "id": f"ks-{i}", "content": sentence(rng, 40), "category": "preference",
        "confidence": 0.9, "importance": 0.5, "source": "user_stated", "status": "active",
        "sensitivity": "low", "created_at": "2025-09-02T14:10:00Z", "extensions": {}}
        for i in range(keystones)]
    data["timeline_events"] = [{
        "id": f"tl-{i}", "date": f"{2000 + i % 25}", "summary": sentence(rng, 20),
        "category": "milestone", "confidence": 1, "source": "user_stated", "extensions": {}}
        for i in range(keystones)]
    path.write_text(json.dumps(data), "utf-8")


def size_of(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chatgpt-mb", type=float, default=50)
    parser.add_argument("--claude-mb", type=float, default=50)
    parser.add_argument("--notes", type=int, default=5000)
    parser.add_argument("--long", type=int, default=20000, help="messages in one conversation")
    parser.add_argument("--many", type=int, default=20000, help="events over 500 conversations")
    parser.add_argument("--keystones", type=int, default=5000)
    args = parser.parse_args()
    from import_bench import generate  # the ChatGPT export generator

    rows = []
    with tempfile.TemporaryDirectory(prefix="pcp-import-memory-") as scratch:
        tmp = Path(scratch)
        base = new_store(tmp / "empty")
        _, _, baseline = run("status", "--store", str(base))
        chatgpt = tmp / "chatgpt.json"
        generate(chatgpt, args.chatgpt_mb)
        chatgpt_zip = tmp / "chatgpt.zip"
        with zipfile.ZipFile(chatgpt_zip, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.write(chatgpt, "conversations.json")
        claude = tmp / "claude.zip"
        claude_export(claude, args.claude_mb)
        notes = tmp / "notes"
        markdown_folder(notes, args.notes)
        long_events, many_events = tmp / "long.jsonl", tmp / "many.jsonl"
        events(long_events, args.long, 1)
        events(many_events, args.many, 500)
        cases = [
            ("ChatGPT export (conversations.json)", "import", chatgpt, size_of(chatgpt)),
            ("ChatGPT export (zip)", "import", chatgpt_zip, size_of(chatgpt)),
            ("Claude export (zip)", "import", claude, None),
            (f"Markdown folder ({args.notes} notes)", "import", notes, size_of(notes)),
            (f"ingest: one conversation of {args.long} messages", "ingest", long_events,
             size_of(long_events)),
            (f"ingest: {args.many} events, 500 conversations", "ingest", many_events,
             size_of(many_events)),
        ]
        example = tmp / "example"
        import shutil

        shutil.copytree(HERE.parent / "store_layout" / "example", example,
                        ignore=shutil.ignore_patterns(".pcp"))
        archive = tmp / "archive.json"
        v1_archive(archive, example, args.keystones)
        cases.append((f"PCP v1 archive ({args.keystones} keystones and timeline events)",
                      "import", archive, size_of(archive)))
        for number, (name, command, path, size) in enumerate(cases):
            if size is None:
                with zipfile.ZipFile(path) as archive:
                    size = sum(i.file_size for i in archive.infolist())
            store = new_store(tmp / f"store-{number}")
            code, seconds, peak = run(command, str(path), "--store", str(store))
            rows.append((name, size, code, seconds, peak))
    print(f"baseline (pcp status, empty store): {baseline:.0f} MiB peak RSS\n")
    print("| input | size | exit | time | peak RSS | peak − baseline | (peak − baseline) / size |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, size, code, seconds, peak in rows:
        mib = size / 1024 / 1024
        print(f"| {name} | {mib:.1f} MiB | {code} | {seconds:.1f} s | {peak:.0f} MiB | "
              f"{peak - baseline:.0f} MiB | {(peak - baseline) / mib:.1f}x |")


if __name__ == "__main__":
    main()
