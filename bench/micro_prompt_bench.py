"""How long does `pcp export --format micro_prompt` take, as a whole process, on a big store?

    python bench/micro_prompt_bench.py [--pages 100000] [--runs 15] [--store DIR] [--rebuild]

Builds (or reuses) a store of PAGES pages: mostly notes spread over 20 project namespaces,
50 affirmed keystones, 5 proposals, 10 timeline events and a profile. The files are written
directly in the store format with the store's own serializers (`render_head`, `file_json`),
not through 100,000 CLI calls. Then it times, as separate processes:

- the first run with a cold catalog (`.pcp/` deleted: every head file is scanned once), and
- RUNS runs with a warm catalog (median, min, max reported).

The contract's target is under 0.3 s whole-process with a warm catalog.

    python bench/micro_prompt_bench.py --fresh STORE --baseline CHECKOUT [--pairs 3]

times the first micro_prompt on a fresh clone instead: STORE (e.g. a copy of a generated
100k store; its `.pcp/` is deleted before every run) with this checkout's code and with
CHECKOUT's (another checkout, e.g. `git worktree add /tmp/base main`), taking turns. Each run
is a separate process; wall time, the child's CPU time (user + system) and its peak RSS are
reported, medians per side, and the outputs must be identical.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pcp_cli.model.page import (  # noqa: E402
    Actor,
    PageState,
    ProvenanceStep,
    Revision,
    file_json,
)
from pcp_cli.store.headfile import render_head  # noqa: E402
from pcp_cli.store.manifest import Manifest, write_manifest  # noqa: E402

OWNER = "bench"
NAMESPACE = "user:bench"
USER = Actor("user", OWNER)
KEYSTONES = 50
PROPOSALS = 5
EVENTS = 10
CATEGORIES = ("identity", "objective", "constraint", "preference", "rule", "relationship",
              "glossary", "other")


def _revision(state: PageState, n: int) -> Revision:
    stamp = f"2026-01-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:00.000Z"
    rev_id = f"rev_bench{n:010d}"
    step = ProvenanceStep("write", "user", OWNER, stamp)
    return Revision(rev_id, state, stamp, USER, (step,), stamp)


def _write(root: Path, state: PageState, n: int) -> None:
    revision = _revision(state, n)
    rev_dir = root / "revisions" / state.page_id
    rev_dir.mkdir()
    (rev_dir / f"{revision.revision_id}.json").write_text(
        file_json(revision.to_dict()), encoding="utf-8", newline="\n")
    head_dir = root / "pages" / Path(*state.namespace.split(":"))
    head_dir.mkdir(parents=True, exist_ok=True)
    (head_dir / f"{state.page_id}.md").write_text(render_head(revision), encoding="utf-8",
                                                   newline="\n")


def build(root: Path, pages: int) -> None:
    if root.exists():
        shutil.rmtree(root)
    for folder in ("pages", "revisions", "relations", "events"):
        (root / folder).mkdir(parents=True)
    manifest = Manifest.new(OWNER, NAMESPACE)
    write_manifest(root / "pcp.yaml", manifest)

    def state(page_id: str, page_type: str, content: str, namespace: str = NAMESPACE,
              **fields: object) -> PageState:
        return PageState(page_id=page_id, type=page_type, namespace=namespace,
                         owner_id=OWNER, content=content, title=content[:60], **fields)

    n = 0
    _write(root, state("profile", "profile",
                       "A benchmark persona who writes software and keeps notes.",
                       record={"name": "Bench Mark", "profession": "Software engineer",
                               "primary_focus": "Keeping the micro_prompt fast",
                               "values": ["Speed", "Honesty"], "pinned": []}), n)
    n += 1
    for i in range(KEYSTONES):
        cat = CATEGORIES[i % len(CATEGORIES)]
        _write(root, state(f"ks-{i:03d}", "keystone",
                           f"Keystone number {i} about {cat}: the person likes fact {i}.",
                           review_status="affirmed", epistemic_status="affirmed",
                           sensitivity="high" if i % 17 == 0 else "low",
                           record={"category": cat, "importance": (i % 10) / 10,
                                   "source": "user_stated",
                                   "created_at": f"2025-12-{1 + i % 28:02d}T10:00:00Z"}), n)
        n += 1
    for i in range(PROPOSALS):
        _write(root, state(f"ks-p{i:02d}", "keystone", f"Proposed claim {i}, never served.",
                           review_status="proposed", origin="inferred",
                           record={"category": "preference", "source": "inferred"}), n)
        n += 1
    for i in range(EVENTS):
        _write(root, state(f"tl-{i:03d}", "timeline_event", f"Event {i} happened.",
                           record={"date": f"{2015 + i}", "category": "milestone"}), n)
        n += 1
    body = "A note about something, long enough to look like a real note.\n" * 4
    i = 0
    while n < pages:
        namespace = f"project:p{i % 20:02d}"
        _write(root, state(f"note-{i:06d}", "note", f"# Note {i}\n\n{body}",
                           namespace=namespace), n)
        n += 1
        i += 1


def run_once(root: Path) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pcp_cli", "export", "--format", "micro_prompt", "--store",
         str(root)], capture_output=True, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"pcp failed ({proc.returncode}): {proc.stderr}")
    return elapsed, proc.stdout


def fresh_run(root: Path, code: Path) -> dict[str, object]:
    """One first micro_prompt on `root` without `.pcp/`, with the pcp_cli of `code`."""
    shutil.rmtree(root / ".pcp", ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    rss_file = root.parent / f".{root.name}-rss"
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "%M", "-o", str(rss_file),
         sys.executable, "-c", "import sys; from pcp_cli.cli.main import run; "
         "sys.exit(run(sys.argv[1:]))", "export", "--format", "micro_prompt", "--store",
         str(root)], capture_output=True, text=True, cwd=code,
        env={**os.environ, "PYTHONPATH": str(code)},
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"pcp failed ({proc.returncode}): {proc.stderr}")
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 2),
        "peak_rss_mb": round(int(rss_file.read_text().split()[-1]) / 1024),
        "catalog_built": (root / ".pcp" / "catalog.sqlite").exists(),
        "output": proc.stdout,
    }


def fresh(root: Path, baseline: Path, pairs: int) -> None:
    sides = {"branch": ROOT, "baseline": baseline}
    runs: dict[str, list[dict[str, object]]] = {name: [] for name in sides}
    for pair in range(pairs):
        for name, code in (sides.items() if pair % 2 == 0 else reversed(sides.items())):
            load = os.getloadavg()[0]
            run = fresh_run(root, code)
            run["load"] = round(load, 1)
            runs[name].append(run)
            print(json.dumps({"side": name, **{k: v for k, v in run.items() if k != "output"}}),
                  file=sys.stderr, flush=True)
    outputs = {str(run["output"]) for side in runs.values() for run in side}
    result = {
        name: {
            "wall_s_median": statistics.median(float(r["wall_s"]) for r in side),  # type: ignore[arg-type]
            "cpu_s_median": statistics.median(float(r["cpu_s"]) for r in side),  # type: ignore[arg-type]
            "peak_rss_mb_max": max(int(r["peak_rss_mb"]) for r in side),  # type: ignore[call-overload]
            "catalog_built": [r["catalog_built"] for r in side],
        }
        for name, side in runs.items()
    }
    result["identical_output"] = len(outputs) == 1
    print(json.dumps(result, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--store", type=Path, default=Path("/tmp/pcp-bench-store"))
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--fresh", type=Path, default=None)
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    if args.fresh is not None:
        if args.baseline is None:
            parser.error("--fresh needs --baseline CHECKOUT")
        fresh(args.fresh, args.baseline, args.pairs)
        return

    marker = args.store / ".bench-pages"
    if args.rebuild or not marker.exists() or marker.read_text() != str(args.pages):
        start = time.perf_counter()
        build(args.store, args.pages)
        marker.write_text(str(args.pages))
        print(f"built {args.pages:,} pages in {time.perf_counter() - start:.1f} s",
              file=sys.stderr)

    shutil.rmtree(args.store / ".pcp", ignore_errors=True)
    cold, first = run_once(args.store)
    times = []
    outputs = set()
    for _ in range(args.runs):
        elapsed, out = run_once(args.store)
        times.append(elapsed)
        outputs.add(out)
    outputs.add(first)
    result = {
        "pages": args.pages,
        "cold_catalog_s": round(cold, 3),
        "warm_runs": args.runs,
        "warm_median_s": round(statistics.median(times), 3),
        "warm_min_s": round(min(times), 3),
        "warm_max_s": round(max(times), 3),
        "identical_output": len(outputs) == 1,
        "characters": len(first.rstrip("\n")),
        "target_s": 0.3,
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
