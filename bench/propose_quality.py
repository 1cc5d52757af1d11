"""How good are `pcp propose`'s proposals? Precision, recall, traps taken, time per 1,000.

    python bench/propose_quality.py                       # dev and heldout, offline extractor
    python bench/propose_quality.py --split heldout --pcp "/path/to/.venv/bin/python -m pcp_cli"
    python bench/propose_quality.py --llm http://127.0.0.1:8080/v1 --model smollm2 --scale 0

The corpus is `bench/propose/{dev,heldout}/`: one ChatGPT and/or Claude export per persona,
each with `<export>.labels.json` beside it (built by `bench/propose/build_corpus.py`). For each
split and persona the bench makes a fresh store (`pcp init`), imports that persona's exports,
and runs `pcp propose --dry-run --json` as a whole process, timed. One store per persona: a
store is one person's, and mixing people would turn one person's move into another's
superseding claim.

Scoring (the labels list the facts each conversation states about the person in the person's
own turns, and trap sentences that must not become proposals):

- a proposal *matches* a fact when their kinds agree and every `match` word of the fact occurs,
  case-insensitively, in the proposal's content; a proposal *takes* a trap when every `match`
  word of the trap occurs in its content (its evidence may be a sentence that holds both a
  fact and a trap: "my partner Amani is finishing her residency" states a partner, and only
  a proposal saying the residency is the person's takes the trap);
- a proposal is *correct* when it matches a fact and takes no trap; precision is correct
  proposals / proposals; a correct proposal whose facts were all found by earlier proposals is
  also counted as a *duplicate*;
- the same fact (same kind and match words) stated in several conversations of a persona is
  one fact; recall is facts matched by a correct proposal / facts;
- category agreement (the proposal's category is the label's) and date agreement (a timeline
  event's date and the label's agree to the shorter of the two) are reported on their own and
  do not change precision or recall.

`--scale N` (default 1000) also times one store of N conversations made by repeating the whole
corpus with new conversation ids and shifted dates, for the time per 1,000 conversations.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "propose"
SPLITS = ("dev", "heldout")


# --- running pcp ---------------------------------------------------------------------------


class Pcp:
    def __init__(self, command: str, extra: list[str], timeout: float) -> None:
        self.base = shlex.split(command) if command else [sys.executable, "-m", "pcp_cli"]
        self.extra = extra
        self.timeout = timeout

    def run(self, *args: str, store: Path | None = None) -> subprocess.CompletedProcess[str]:
        argv = [*self.base, *(["--store", str(store)] if store else []), *args]
        env = {**os.environ, "NO_COLOR": "1"}
        env.pop("PCP_STORE", None)
        # Run outside any checkout: `python -m pcp_cli` imports the package in its working
        # folder first, so starting it in this repository would measure this checkout's code.
        return subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=self.timeout,
            env=env,
            check=False,
            cwd=tempfile.gettempdir(),
        )

    def init(self, store: Path, owner: str) -> None:
        done = self.run("init", str(store), "--owner", owner)
        if done.returncode != 0:
            raise SystemExit(f"pcp init failed ({done.returncode}): {done.stderr.strip()}")

    def import_(self, store: Path, export: Path) -> float:
        start = time.perf_counter()
        done = self.run("import", str(export), store=store)
        took = time.perf_counter() - start
        if done.returncode not in (0, 9):
            raise SystemExit(f"pcp import {export.name} failed: {done.stderr.strip()}")
        if done.returncode == 9:
            print(f"warning: {export.name}: some items failed to import", file=sys.stderr)
        return took

    def propose(self, store: Path) -> tuple[dict[str, Any], float]:
        start = time.perf_counter()
        done = self.run("propose", "--dry-run", "--json", *self.extra, store=store)
        took = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(
                f"pcp propose failed ({done.returncode}): {done.stderr.strip()[:2000]}"
            )
        try:
            data = json.loads(done.stdout)
        except json.JSONDecodeError as exc:
            raise SystemExit(
                f"pcp propose --json printed no JSON ({exc}): {done.stdout[:300]}"
            ) from None
        if not isinstance(data, dict) or not isinstance(data.get("proposals"), list):
            raise SystemExit("pcp propose --json: no `proposals` list in its output")
        return data, took


# --- the corpus ----------------------------------------------------------------------------


def personas(split: str) -> dict[str, list[Path]]:
    """persona → its export files in this split."""
    out: dict[str, list[Path]] = defaultdict(list)
    for export in sorted((CORPUS / split).glob("*.zip")):
        out[export.stem.rsplit("-", 1)[0]].append(export)
    return dict(out)


def labels_of(exports: list[Path]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """(distinct facts, traps, conversation count) of one persona's exports."""
    facts: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {}
    traps: list[dict[str, Any]] = []
    conversations = 0
    for export in exports:
        labels = json.loads(export.with_suffix(".labels.json").read_text(encoding="utf-8"))
        for conv in labels["conversations"]:
            conversations += 1
            for fact in conv["facts"]:
                key = (fact["kind"], tuple(sorted(w.casefold() for w in fact["match"])))
                entry = facts.setdefault(key, {**fact, "conversations": []})
                entry["conversations"].append(conv["key"])
                entry["current"] = entry["current"] and fact["current"]
            for trap in conv["traps"]:
                traps.append({**trap, "conversation": conv["key"]})
    return list(facts.values()), traps, conversations


# --- scoring -------------------------------------------------------------------------------


def _has_all(words: list[str], text: str) -> bool:
    folded = text.casefold()
    return all(w.casefold() in folded for w in words)


def _dates_agree(label: str | None, proposed: object) -> bool:
    if not label or not isinstance(proposed, str) or not proposed:
        return False
    shorter = min(len(label), len(proposed))
    return label[:shorter] == proposed[:shorter]


def score(
    proposals: list[dict[str, Any]], facts: list[dict[str, Any]], traps: list[dict[str, Any]]
) -> dict[str, Any]:
    found: dict[int, dict[str, Any]] = {}  # fact index → the proposal that found it
    rows = []
    taken: list[dict[str, Any]] = []
    for proposal in proposals:
        content = str(proposal.get("content") or "")
        trapped = [t for t in traps if _has_all(t["match"], content)]
        taken += [{**t, "proposal": content} for t in trapped]
        matches = [
            i
            for i, fact in enumerate(facts)
            if fact["kind"] == proposal.get("kind") and _has_all(fact["match"], content)
        ]
        row = {"proposal": proposal, "fact": None, "duplicate": False, "trapped": bool(trapped)}
        if matches and not trapped:
            fresh = [i for i in matches if i not in found]
            if fresh:
                best = max(fresh, key=lambda i: len(facts[i]["match"]))
                found[best] = proposal
                row["fact"] = best
            else:
                row["fact"] = matches[0]
                row["duplicate"] = True
        rows.append(row)
    return {"rows": rows, "found": found, "taken": taken}


def summarise(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over personas: precision, recall and the breakdowns."""
    total = Counter()
    by_category: dict[tuple[str, str], Counter] = defaultdict(Counter)
    traps_by_kind: dict[str, Counter] = defaultdict(Counter)
    wrong: list[str] = []
    missed: list[str] = []
    taken_list: list[str] = []
    for result in results:
        facts, traps, scored = result["facts"], result["traps"], result["score"]
        for index, fact in enumerate(facts):
            cat = by_category[(fact["kind"], fact["category"])]
            cat["facts"] += 1
            total["facts"] += 1
            total[f"facts_{fact.get('lang', 'en')}"] += 1
            if fact["current"]:
                total["facts_current"] += 1
            if index in scored["found"]:
                cat["found"] += 1
                total["found"] += 1
                total[f"found_{fact.get('lang', 'en')}"] += 1
                if fact["current"]:
                    total["found_current"] += 1
            else:
                missed.append(
                    f"{result['persona']}: [{fact['kind']}/{fact['category']}] {fact['fact']}"
                )
        for row in scored["rows"]:
            proposal = row["proposal"]
            total["proposals"] += 1
            kind = str(proposal.get("kind"))
            by_category[(kind, str(proposal.get("category")))]["proposed"] += 1
            if proposal.get("supersedes"):
                total["supersedes"] += 1
            if row["fact"] is None:
                wrong.append(
                    f"{result['persona']}: [{kind}/{proposal.get('category')}] "
                    f"{str(proposal.get('content'))[:160]!r}"
                    + (" (trap)" if row["trapped"] else "")
                )
                continue
            fact = facts[row["fact"]]
            total["correct"] += 1
            by_category[(kind, str(proposal.get("category")))]["proposed_correct"] += 1
            if row["duplicate"]:
                total["duplicates"] += 1
                continue
            if proposal.get("category") == fact["category"]:
                total["category_agrees"] += 1
            if fact["kind"] == "timeline_event":
                total["timeline_credited"] += 1
                if _dates_agree(fact.get("date"), proposal.get("date")):
                    total["date_agrees"] += 1
        for trap in traps:
            traps_by_kind[trap["kind"]]["traps"] += 1
        seen = set()
        for item in scored["taken"]:
            key = (item["conversation"], item["text"])
            if key not in seen:
                seen.add(key)
                traps_by_kind[item["kind"]]["taken"] += 1
                taken_list.append(
                    f"{result['persona']}: [{item['kind']}] {item['text'][:100]!r} → "
                    f"{item['proposal'][:100]!r}"
                )
        total["traps"] += len(traps)
    total["taken"] = sum(c["taken"] for c in traps_by_kind.values())
    return {
        "total": total,
        "by_category": by_category,
        "traps_by_kind": traps_by_kind,
        "wrong": wrong,
        "missed": missed,
        "taken": taken_list,
    }


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.2f}" if b else "–"


# --- the scaled run ------------------------------------------------------------------------


def scaled_exports(folder: Path, target: int) -> tuple[list[Path], int]:
    """The whole corpus repeated with new ids and shifted dates until `target` conversations."""
    pools: dict[str, list[dict[str, Any]]] = {"chatgpt": [], "claude": []}
    extras: dict[str, dict[str, Any]] = {}
    for split in SPLITS:
        for export in sorted((CORPUS / split).glob("*.zip")):
            fmt = export.stem.rsplit("-", 1)[1]
            with zipfile.ZipFile(export) as archive:
                pools[fmt] += json.loads(archive.read("conversations.json"))
                if fmt == "claude" and "users.json" not in extras:
                    extras["users.json"] = json.loads(archive.read("users.json"))
    source = [(fmt, conv) for fmt in ("chatgpt", "claude") for conv in pools[fmt]]
    out: dict[str, list[dict[str, Any]]] = {"chatgpt": [], "claude": []}
    for n in range(target):
        fmt, conv = source[n % len(source)]
        copy = n // len(source)
        out[fmt].append(_perturb(fmt, conv, copy) if copy else conv)
    paths = []
    for fmt, conversations in out.items():
        if not conversations:
            continue
        path = folder / f"scaled-{fmt}.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("conversations.json", json.dumps(conversations))
            if fmt == "claude":
                archive.writestr("users.json", json.dumps(extras.get("users.json", [])))
                archive.writestr("projects.json", "[]")
        paths.append(path)
    return paths, target


def _perturb(fmt: str, conv: dict[str, Any], copy: int) -> dict[str, Any]:
    shift = copy * 86400 * 3  # three days per copy
    text = json.dumps(conv)
    data = json.loads(text)
    if fmt == "chatgpt":
        new_id = f"{conv['conversation_id']}-copy{copy}"
        data["id"] = data["conversation_id"] = new_id
        data["title"] = f"{conv['title']} ({copy})"
        for key in ("create_time", "update_time"):
            data[key] = (data[key] or 0) + shift
        for node in data["mapping"].values():
            message = node.get("message")
            if message and message.get("create_time"):
                message["create_time"] += shift
    else:
        data["uuid"] = f"{conv['uuid']}-copy{copy}"
        data["name"] = f"{conv['name']} ({copy})"
        for message in data["chat_messages"]:
            message["uuid"] = f"{message['uuid']}-copy{copy}"
    return data


# --- reporting -----------------------------------------------------------------------------


def run_split(pcp: Pcp, split: str, repeat: int, work: Path, verbose: bool) -> dict[str, Any]:
    results = []
    wall = 0.0
    conversations = 0
    for persona, exports in personas(split).items():
        store = work / f"{split}-{persona}"
        pcp.init(store, persona)
        for export in exports:
            pcp.import_(store, export)
        facts, traps, count = labels_of(exports)
        conversations += count
        times = []
        data: dict[str, Any] = {}
        for _ in range(repeat):
            data, took = pcp.propose(store)
            times.append(took)
        wall += statistics.median(times)
        proposals = [p for p in data["proposals"] if isinstance(p, dict)]
        results.append(
            {
                "persona": persona,
                "facts": facts,
                "traps": traps,
                "conversations": count,
                "score": score(proposals, facts, traps),
                "counts": data.get("counts"),
            }
        )
    summary = summarise(results)
    counts: Counter = Counter()
    for result in results:
        for key, value in (result["counts"] or {}).items():
            if isinstance(value, int):
                counts[key] += value
    summary["counts"] = counts
    summary["conversations"] = conversations
    summary["personas"] = len(results)
    summary["wall"] = wall
    return summary


def print_split(split: str, s: dict[str, Any], verbose: bool) -> None:
    t = s["total"]
    print(f"\n## {split}: {s['conversations']} conversations, {s['personas']} personas\n")
    print("| measure | value |\n|---|---|")
    print(f"| proposals | {t['proposals']} |")
    print(
        f"| precision (correct / proposals) | {_ratio(t['correct'], t['proposals'])} "
        f"({t['correct']}/{t['proposals']}) |"
    )
    print(
        f"| recall (facts found / facts) | {_ratio(t['found'], t['facts'])} "
        f"({t['found']}/{t['facts']}) |"
    )
    print(
        f"| recall, facts still current | {_ratio(t['found_current'], t['facts_current'])} "
        f"({t['found_current']}/{t['facts_current']}) |"
    )
    other_langs = sorted(
        k[len("facts_") :]
        for k in t
        if k.startswith("facts_") and k not in ("facts_current", "facts_en")
    )
    for lang in other_langs:
        print(
            f"| recall, facts stated in `{lang}` | "
            f"{_ratio(t[f'found_{lang}'], t[f'facts_{lang}'])} "
            f"({t[f'found_{lang}']}/{t[f'facts_{lang}']}) |"
        )
    credited = t["correct"] - t["duplicates"]
    print(f"| duplicates (correct, fact already found) | {t['duplicates']} |")
    print(
        f"| category agrees with the label | {_ratio(t['category_agrees'], credited)} "
        f"({t['category_agrees']}/{credited}) |"
    )
    print(
        f"| timeline date agrees | {_ratio(t['date_agrees'], t['timeline_credited'])} "
        f"({t['date_agrees']}/{t['timeline_credited']}) |"
    )
    print(f"| proposals marked as superseding | {t['supersedes']} |")
    print(f"| traps taken | {t['taken']}/{t['traps']} |")
    print(f"| `pcp propose` wall, all personas (median per store) | {s['wall']:.2f} s |")
    if s["counts"]:
        shown = ", ".join(f"{k} {v}" for k, v in sorted(s["counts"].items()))
        print(f"| `counts` from pcp propose, summed | {shown} |")
    print("\n| kind / category | facts | found | recall | proposed | correct | precision |")
    print("|---|---|---|---|---|---|---|")
    for (kind, cat), c in sorted(s["by_category"].items()):
        print(
            f"| {kind} / {cat} | {c['facts']} | {c['found']} | {_ratio(c['found'], c['facts'])}"
            f" | {c['proposed']} | {c['proposed_correct']} "
            f"| {_ratio(c['proposed_correct'], c['proposed'])} |"
        )
    print("\n| trap kind | traps | taken |\n|---|---|---|")
    for kind, c in sorted(s["traps_by_kind"].items()):
        print(f"| {kind} | {c['traps']} | {c['taken']} |")
    if verbose:
        for title, items in (
            ("wrong proposals", s["wrong"]),
            ("traps taken", s["taken"]),
            ("facts missed", s["missed"]),
        ):
            print(f"\n{title} ({len(items)}):")
            for item in items:
                print(f"  - {item}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=(*SPLITS, "both"), default="both")
    parser.add_argument("--pcp", default="", help="the pcp to run (default: python -m pcp_cli)")
    parser.add_argument("--llm", help="passed to pcp propose: an OpenAI-compatible base URL")
    parser.add_argument("--model", help="passed to pcp propose with --llm")
    parser.add_argument(
        "--propose-arg",
        action="append",
        default=[],
        help="one more argument for pcp propose (repeatable)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="propose runs per store (median)")
    parser.add_argument(
        "--scale", type=int, default=1000, help="conversations in the timed scaled store (0: skip)"
    )
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="list wrong proposals, traps taken and facts missed",
    )
    parser.add_argument("--json", dest="json_out", help="also write the numbers to this file")
    args = parser.parse_args(argv)
    extra = list(args.propose_arg)
    if args.llm:
        extra += ["--llm", args.llm] + (["--model", args.model] if args.model else [])
    pcp = Pcp(args.pcp, extra, args.timeout)
    version = pcp.run("--version")
    print(
        f"# pcp propose quality — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
        f"{os.cpu_count()} cores, pcp {version.stdout.strip() or version.stderr.strip()}, "
        f"{'--llm ' + args.llm if args.llm else 'offline extractor'}"
    )
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="pcp-propose-bench-") as tmp:
        work = Path(tmp)
        for split in SPLITS if args.split == "both" else (args.split,):
            summary = run_split(pcp, split, args.repeat, work, args.verbose)
            print_split(split, summary, args.verbose)
            report[split] = {
                "conversations": summary["conversations"],
                "total": dict(summary["total"]),
                "wall_s": summary["wall"],
                "counts": dict(summary["counts"]),
                "by_category": {
                    f"{k[0]}/{k[1]}": dict(v) for k, v in summary["by_category"].items()
                },
                "traps_by_kind": {k: dict(v) for k, v in summary["traps_by_kind"].items()},
            }
        if args.scale:
            folder = work / "scaled"
            folder.mkdir()
            exports, count = scaled_exports(folder, args.scale)
            store = work / "scaled-store"
            pcp.init(store, "scaled")
            imported = sum(pcp.import_(store, e) for e in exports)
            times = []
            proposals = 0
            for _ in range(args.repeat):
                data, took = pcp.propose(store)
                times.append(took)
                proposals = len(data["proposals"])
            median = statistics.median(times)
            print(
                f"\n## scaled: {count} conversations in one store (the corpus repeated with "
                f"new ids and dates)\n"
            )
            print("| measure | value |\n|---|---|")
            print(f"| `pcp import` (all files, once) | {imported:.1f} s |")
            print(f"| `pcp propose --dry-run --json`, median of {args.repeat} | {median:.2f} s |")
            print(f"| runs | {', '.join(f'{x:.2f}' for x in times)} s |")
            print(f"| time per 1,000 conversations | {median * 1000 / count:.2f} s |")
            print(f"| proposals | {proposals} |")
            report["scaled"] = {
                "conversations": count,
                "propose_s": times,
                "per_1000_s": median * 1000 / count,
                "proposals": proposals,
            }
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
