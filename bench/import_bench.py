"""Benchmark the ChatGPT parser, and `pcp import` end to end, on a large synthetic export.

    python bench/import_bench.py                 # ~200 MB, written to a temporary folder
    python bench/import_bench.py --mb 50 --zip   # smaller, and read from inside a zip
    python bench/import_bench.py --keep out/     # keep the generated export
    python bench/import_bench.py --store         # also import it into a new store, twice

The export is deterministic (seeded) and shaped like a real one: one JSON line, mapping trees
with a hidden system root, regenerated assistant replies and edited user messages (branches),
multimodal parts, code blocks, null times. Parsing runs in a child process so that its peak
resident size (ru_maxrss) is not polluted by the generator; a second child measures the
tracemalloc peak, which is slower because every allocation is traced.

With --store, a third child imports the export into a new, empty store through the library
entry point (`api.import_path`, what `pcp import` calls), then imports it again (every page
comes back unchanged): time, peak RSS and pages per second for each run.

    python bench/import_bench.py --markdown 3000 10000 [--from FOLDER] [--contend]
                                 [--code OTHER_CHECKOUT] [--repeat 3]

imports a Markdown folder of each size (the first N `.md` files under FOLDER, e.g. a generated
store's `pages/`, else generated notes) into a new store, with fsync as pcp runs: wall time,
CPU time (user + system of the child) and pages per second. `--contend` runs each import
twice, the second time beside a competing disk writer (a loop writing 8 MB and fsyncing it).
`--code` runs the same imports with another checkout's `pcp_cli` first (the baseline), in
alternating turns, so both are measured under the same load. `--reimport` measures the second
import of the folder into that store instead (every note `unchanged`).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORDS = [
    "the",
    "a",
    "sensor",
    "buoy",
    "dashboard",
    "ocean",
    "data",
    "python",
    "rust",
    "query",
    "index",
    "page",
    "revision",
    "store",
    "context",
    "export",
    "import",
    "stream",
    "memory",
    "branch",
    "message",
    "reply",
    "user",
    "assistant",
    "model",
    "token",
    "海",
    "数据",
    "传感器",
    "東京",
    "データ",
]


def _text(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def _message(rng: random.Random, node_id: str, role: str, when: float | None) -> dict[str, Any]:
    content: dict[str, Any]
    if role == "user" and rng.random() < 0.08:
        content = {
            "content_type": "multimodal_text",
            "parts": [
                {
                    "content_type": "image_asset_pointer",
                    "asset_pointer": f"file-service://{node_id}",
                    "size_bytes": 123456,
                    "width": 1024,
                    "height": 768,
                },
                _text(rng, 5, 40),
            ],
        }
    elif role == "assistant" and rng.random() < 0.1:
        content = {"content_type": "code", "language": "python", "text": _text(rng, 20, 120)}
    else:
        long = role == "assistant"
        content = {
            "content_type": "text",
            "parts": [_text(rng, 40 if long else 5, 600 if long else 80)],
        }
    return {
        "id": node_id,
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": when,
        "update_time": None,
        "content": content,
        "status": "finished_successfully",
        "end_turn": role == "assistant",
        "weight": 1.0,
        "metadata": {
            "model_slug": "gpt-4o",
            "request_id": f"req-{node_id}",
            "timestamp_": "absolute",
        },
        "recipient": "all",
    }


def _conversation(rng: random.Random, index: int) -> dict[str, Any]:
    start = 1_650_000_000 + index * 3_600.0
    mapping: dict[str, dict[str, Any]] = {}

    def add(node_id: str, parent: str | None, message: dict[str, Any] | None) -> None:
        mapping[node_id] = {"id": node_id, "message": message, "parent": parent, "children": []}
        if parent is not None:
            mapping[parent]["children"].append(node_id)

    root = f"{index:08d}-root"
    add(root, None, None)
    system = f"{index:08d}-sys"
    hidden = _message(rng, system, "system", None)
    hidden["content"] = {"content_type": "text", "parts": [""]}
    hidden["metadata"]["is_visually_hidden_from_conversation"] = True
    add(system, root, hidden)
    parent, when = system, start
    for counter in range(1, rng.randint(2, 30) + 1):
        user = f"{index:08d}-u{counter}"
        if rng.random() < 0.05:  # an edited user message: an abandoned sibling subtree
            add(f"{user}-edit", parent, _message(rng, f"{user}-edit", "user", when))
        add(user, parent, _message(rng, user, "user", None if rng.random() < 0.03 else when))
        when += rng.uniform(5, 120)
        replies = 1 + (rng.random() < 0.15) + (rng.random() < 0.05)  # regenerations
        reply = ""
        for alt in range(replies):
            reply = f"{index:08d}-a{counter}.{alt}"
            add(reply, user, _message(rng, reply, "assistant", when))
            when += rng.uniform(1, 30)
        parent = reply
    return {
        "title": _text(rng, 2, 6).capitalize(),
        "create_time": start,
        "update_time": when,
        "mapping": mapping,
        "moderation_results": [],
        "current_node": parent,
        "plugin_ids": None,
        "conversation_id": f"conv-{index:08d}",
        "conversation_template_id": None,
        "gizmo_id": None,
        "is_archived": False,
        "safe_urls": [],
        "default_model_slug": "gpt-4o",
        "id": f"conv-{index:08d}",
    }


def generate(path: Path, megabytes: float, seed: int = 42) -> int:
    """Write a conversations.json of about `megabytes` MB on one line; return conversations."""
    rng = random.Random(seed)
    target = int(megabytes * 1_000_000)
    written = 0
    count = 0
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        while written < target:
            chunk = ("," if count else "") + json.dumps(
                _conversation(rng, count), ensure_ascii=False
            )
            out.write(chunk)
            written += len(chunk.encode("utf-8"))
            count += 1
        out.write("]")
    return count


def parse(path: Path, trace: bool) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    from pcp_cli.adapters.base import ImportItem
    from pcp_cli.adapters.chatgpt import iter_items

    if trace:
        tracemalloc.start()
    began = time.perf_counter()
    items = problems = messages = 0
    for result in iter_items(path):
        if isinstance(result, ImportItem):
            items += 1
            messages += result.record["message_count"]
        else:
            problems += 1
    seconds = time.perf_counter() - began
    report: dict[str, Any] = {
        "items": items,
        "problems": problems,
        "messages": messages,
        "seconds": round(seconds, 2),
        "maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    if trace:
        report["tracemalloc_peak_mb"] = round(tracemalloc.get_traced_memory()[1] / 1e6, 2)
    return report


def import_into(path: Path, root: Path, no_fsync: bool = False) -> dict[str, Any]:
    """Import `path` into a new store at `root`, then again; time and peak RSS of each.

    `no_fsync` (diagnosis only, never how pcp runs) turns fsync into a no-op, to show how much
    of the time is spent waiting for the disk rather than computing.
    """
    sys.path.insert(0, str(ROOT))
    if no_fsync:
        import os

        os.fsync = lambda fd: None
    from pcp_cli import api
    from pcp_cli.store.store import Store

    Store.init(root, owner_id="bench").close()
    runs = []
    for label in ("first", "again"):
        began = time.perf_counter()
        with api.open_store(root) as store:
            summary = api.import_path(store, path)
        seconds = time.perf_counter() - began
        pages = summary["created"] + summary["revised"] + summary["unchanged"]
        runs.append({
            "run": label,
            "seconds": round(seconds, 2),
            "created": summary["created"],
            "unchanged": summary["unchanged"],
            "failed": summary["failed"],
            "pages_per_second": round(pages / seconds, 1),
            "maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        })
    store_bytes = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
    return {"runs": runs, "store_mb": round(store_bytes / 1e6, 1)}


def markdown_folder(folder: Path, n: int, source: Path | None) -> int:
    """A folder of `n` Markdown files: copies of the first `n` under `source`, else generated."""
    folder.mkdir(parents=True, exist_ok=True)
    if source is not None:
        files = sorted(source.rglob("*.md"))[:n]
        for i, path in enumerate(files):
            (folder / f"{i // 1000:03d}").mkdir(exist_ok=True)
            (folder / f"{i // 1000:03d}" / path.name).write_bytes(path.read_bytes())
        return len(files)
    rng = random.Random(n)
    for i in range(n):
        sub = folder / f"{i // 1000:03d}"
        sub.mkdir(exist_ok=True)
        body = "\n\n".join(_text(rng, 40, 160) for _ in range(rng.randint(1, 5)))
        (sub / f"note-{i:06d}.md").write_text(
            f"---\ntitle: Note {i}\ntags: [bench]\n---\n# Note {i}\n\n{body}\n", "utf-8")
    return n


def import_markdown(folder: Path, root: Path, reimport: bool = False) -> dict[str, Any]:
    """One `api.import_path` of `folder` into a new store at `root` (run in a child); with
    `reimport`, the folder is imported once first and the second import is measured."""
    from pcp_cli import api
    from pcp_cli.store.store import Store

    Store.init(root, owner_id="bench").close()
    if reimport:
        with api.open_store(root) as store:
            api.import_path(store, folder)
    before = resource.getrusage(resource.RUSAGE_SELF)
    began = time.perf_counter()
    with api.open_store(root) as store:
        summary = api.import_path(store, folder)
    seconds = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    pages = summary["created"] + summary["revised"] + summary["unchanged"]
    return {"pages": pages, "failed": summary["failed"], "seconds": round(seconds, 2),
            "cpu_seconds": round(cpu, 2), "pages_per_second": round(pages / seconds, 1)}


DISK_WRITER = """
import os, sys
chunk = b"\\0" * (1 << 20)
path = sys.argv[1]
while True:
    with open(path, "wb") as fh:
        for _ in range(8):
            fh.write(chunk)
        fh.flush()
        os.fsync(fh.fileno())
"""


def markdown_runs(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    import os
    import statistics

    codes = {"this": ROOT}
    if args.code:
        codes = {"baseline": args.code.resolve(), "this": ROOT}
    loads = ["quiet", "contended"] if args.contend else ["quiet"]
    results: dict[str, Any] = {"load_before": os.getloadavg()}
    for n in args.markdown:
        folder = scratch / f"md-{n}"
        count = markdown_folder(folder, n, args.source)
        for load in loads:
            for turn in range(args.repeat):
                for label, code in codes.items():
                    writer = None
                    if load == "contended":
                        writer = subprocess.Popen([sys.executable, "-c", DISK_WRITER,
                                                   str(scratch / "disk-writer.bin")])
                        time.sleep(1.0)
                    try:
                        store = scratch / f"store-{label}-{n}-{load}-{turn}"
                        env = {**os.environ, "PYTHONPATH": str(code)}
                        again = ["--reimport"] if args.reimport else []
                        done = subprocess.run(
                            [sys.executable, __file__, "--import-markdown", str(folder),
                             str(store), *again], check=True, capture_output=True, text=True,
                            env=env)
                    finally:
                        if writer is not None:
                            writer.kill()
                            writer.wait()
                    run = json.loads(done.stdout)
                    results.setdefault(f"{label} {count} pages {load}", []).append(run)
                    print(f"{label} {count} {load} turn {turn}: {run}", file=sys.stderr)
                    subprocess.run(["rm", "-rf", str(store)], check=True)
    summary: dict[str, Any] = {}
    for key, runs in results.items():
        if key == "load_before":
            summary[key] = [round(x, 2) for x in runs]
            continue
        summary[key] = {
            "median_pages_per_second": statistics.median(r["pages_per_second"] for r in runs),
            "median_seconds": statistics.median(r["seconds"] for r in runs),
            "median_cpu_seconds": statistics.median(r["cpu_seconds"] for r in runs),
            "runs": runs,
        }
    summary["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return summary


def _child(path: Path, trace: bool) -> dict[str, Any]:
    args = [sys.executable, __file__, "--parse-only", str(path)] + (["--trace"] if trace else [])
    done = subprocess.run(args, check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=200.0, help="size of the export in MB")
    parser.add_argument("--zip", action="store_true", help="parse from inside a zip")
    parser.add_argument("--keep", type=Path, help="folder to keep the generated export in")
    parser.add_argument("--no-trace", action="store_true", help="skip the tracemalloc run")
    parser.add_argument("--store", action="store_true",
                        help="also import the export into a new store (end to end), twice")
    parser.add_argument("--parse-only", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--no-fsync", action="store_true",
                        help="diagnosis: also time the import with fsync turned off")
    parser.add_argument("--import-into", type=Path, nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--markdown", type=int, nargs="+", metavar="N",
                        help="import Markdown folders of N pages instead (with fsync)")
    parser.add_argument("--from", dest="source", type=Path,
                        help="with --markdown: copy the first N .md files under this folder")
    parser.add_argument("--contend", action="store_true",
                        help="with --markdown: also import beside a competing disk writer")
    parser.add_argument("--code", type=Path,
                        help="with --markdown: also run another checkout (the baseline)")
    parser.add_argument("--repeat", type=int, default=3, help="with --markdown: turns each")
    parser.add_argument("--reimport", action="store_true",
                        help="with --markdown: measure a re-import (every note unchanged)")
    parser.add_argument("--import-markdown", type=Path, nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.import_markdown:
        print(json.dumps(import_markdown(*args.import_markdown, reimport=args.reimport)))
        return
    if args.markdown:
        with tempfile.TemporaryDirectory(dir=args.keep) as scratch:
            print(json.dumps(markdown_runs(args, Path(scratch)), indent=2))
        return
    if args.parse_only:
        print(json.dumps(parse(args.parse_only, args.trace)))
        return
    if args.import_into:
        print(json.dumps(import_into(*args.import_into, no_fsync=args.no_fsync)))
        return

    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        export = folder / "conversations.json"
        began = time.perf_counter()
        conversations = generate(export, args.mb)
        size = export.stat().st_size
        print(
            f"generated {size / 1e6:.1f} MB, {conversations} conversations "
            f"in {time.perf_counter() - began:.1f} s",
            file=sys.stderr,
        )
        target = export
        if args.zip:
            target = folder / "chatgpt-export.zip"
            with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
                archive.write(export, "conversations.json")
        plain = _child(target, trace=False)
        result: dict[str, Any] = {
            "file_mb": round(size / 1e6, 1),
            "source": "zip" if args.zip else "bare file",
            "conversations": conversations,
            **plain,
            "mb_per_second": round(size / 1e6 / plain["seconds"], 1),
        }
        if not args.no_trace:
            traced = _child(target, trace=True)
            result["tracemalloc_peak_mb"] = traced["tracemalloc_peak_mb"]
            result["seconds_under_tracemalloc"] = traced["seconds"]
        if args.store:
            command = [sys.executable, __file__, "--import-into", str(target),
                       str(folder / "store")]
            done = subprocess.run(command, check=True, capture_output=True, text=True)
            result["import"] = json.loads(done.stdout)
            if args.no_fsync:
                command[-1] = str(folder / "store-no-fsync")
                done = subprocess.run([*command, "--no-fsync"], check=True,
                                      capture_output=True, text=True)
                result["import_without_fsync"] = json.loads(done.stdout)
        print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
