"""Does `pcp search` find what was said? LoCoMo questions asked as written, beside plain BM25.

    python bench/memory_search.py                      # dev (conv-30, conv-44), every mode
    python bench/memory_search.py --split heldout      # conv-48: measure only, never tune
    python bench/memory_search.py --split own          # bench/memory_questions.json
    PYTHONPATH=/path/to/other/checkout python bench/memory_search.py   # another pcp, same data

For each person (each speaker of a LoCoMo conversation: bench/locomo.py), a fresh store
(`pcp init`) with their sessions imported from a ChatGPT export (one session, one conversation
page), then every question of the conversation (`qa`, category 5 — adversarial, no answer —
left out and counted) asked exactly as written, in each mode, in-process through
`api.search`. Scored:

- **session R@k** (k = 1, 5, 10): an answering session (one holding an `evidence` turn) among
  the first k results;
- **turn in a snippet**: an evidence turn visible in one of the first 10 results' snippets (at
  least 60 consecutive characters of the turn, or all of a shorter one, whitespace collapsed);
- **time per query**: the median and p95 of `api.search` in this process (warm: the store and
  index open, the vectors built before the first query).

Beside them, in the same run: BM25 (`rank_bm25.BM25Okapi`, lowercased `\\w+` tokens) over the
sessions, and over the turns (a session ranked by its best turn; the turn shown is the turn
ranked). `rank_bm25` is this bench's dependency, not pcp's: `pip install rank_bm25`.

`run(locomo_path, args) -> str` returns the Markdown report (bench/memory_quality.py calls it);
`args` may name `split` (dev, heldout, all, own), `modes`, `people` (keys such as
`conv-30-jon`), `engine` (whoosh, tantivy) and `out`.

The `own` split is this project's held-out corpus: the held-out conversations of the
`pcp propose` quality corpus (bench/propose/heldout/, fictional people) with the questions in
bench/memory_questions.json, written from the conversations before any result was looked at;
each names its answer by a quote from the answering turn.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import locomo  # noqa: E402  (bench/locomo.py)

SPLITS = {"dev": ("conv-30", "conv-44"), "heldout": ("conv-48",),
          "all": ("conv-30", "conv-44", "conv-48")}
MODES = ("text", "auto", "hybrid", "semantic")
KS = (1, 5, 10)
SEEN_CHARS = 60  # consecutive characters of a turn a snippet must show
OWN_QUESTIONS = HERE / "memory_questions.json"
OWN_CORPUS = HERE / "propose" / "heldout"


@dataclass
class Turn:
    session: str  # the page's key: a session number (LoCoMo) or a conversation title (own)
    text: str
    key: str = ""  # LoCoMo's dia_id


@dataclass
class Question:
    text: str
    answers: list[Turn]  # the answering turns
    category: int | str = ""


@dataclass
class History:
    """One person's conversations, as imported, and the questions about them."""

    key: str
    exports: list[Path]  # the exports to import
    sessions: dict[str, list[Turn]]  # session key -> its turns in order
    questions: list[Question]
    skipped: int = 0  # adversarial questions left out
    page_of: dict[str, str] = field(default_factory=dict)  # session key -> page id


@dataclass
class Score:
    hits: dict[int, int] = field(default_factory=lambda: dict.fromkeys(KS, 0))
    seen: int = 0
    asked: int = 0
    seconds: list[float] = field(default_factory=list)
    why: dict[str, int] = field(default_factory=dict)  # auto: which mode ran

    def add(self, ranked: list[str], answering: set[str], shown: bool, spent: float) -> None:
        self.asked += 1
        for k in KS:
            self.hits[k] += bool(answering & set(ranked[:k]))
        self.seen += shown
        self.seconds.append(spent)

    def row(self, name: str) -> str:
        def pct(n: int) -> str:
            return f"{100 * n / self.asked:.1f}" if self.asked else "-"
        ms = sorted(s * 1000 for s in self.seconds)
        median = f"{statistics.median(ms):.0f}" if ms else "-"
        p95 = f"{ms[min(len(ms) - 1, int(0.95 * len(ms)))]:.0f}" if ms else "-"
        return (f"| {name} | {pct(self.hits[1])} | {pct(self.hits[5])} | {pct(self.hits[10])} "
                f"| {pct(self.seen)} | {median} | {p95} |")


# --- the data ---------------------------------------------------------------------------------
_WS = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip()


def visible(snippet: str, turn: str) -> bool:
    """The snippet shows the turn: SEEN_CHARS consecutive characters of it (all of a shorter
    one), whitespace collapsed, `…` marks ignored."""
    text = _norm(turn)
    need = min(SEEN_CHARS, len(text))
    if need == 0:
        return False
    for piece in _norm(snippet).split("…"):
        piece = piece.strip()
        if len(piece) < need:
            continue
        for start in range(0, len(text) - need + 1, max(1, need // 4)):
            if text[start:start + need] in piece:
                return True
        if text[-need:] in piece:
            return True
    return False


def locomo_histories(path: Path, samples: Iterable[str], folder: Path) -> list[History]:
    out = []
    wanted = set(samples)
    for person in locomo.people(locomo.load(path)):
        if person.sample_id not in wanted:
            continue
        sessions = {str(s.number): [Turn(str(s.number), t.text, t.dia_id) for t in s.turns]
                    for s in person.sessions}
        by_dia = {t.key: t for turns in sessions.values() for t in turns}
        questions, skipped = [], 0
        for qa in person.raw["qa"]:
            if qa.get("category") == 5:
                skipped += 1
                continue
            answers = [by_dia[d.strip()] for e in qa.get("evidence", [])
                       for d in str(e).split(";") if d.strip() in by_dia]
            if answers:
                questions.append(Question(qa["question"], answers, qa.get("category", "")))
        export = locomo.write_chatgpt_export(person, folder / "exports")
        history = History(person.key, [export], sessions, questions, skipped)
        history.page_of = {str(s.number): person.conversation_id(s) for s in person.sessions}
        out.append(history)
    return out


def own_histories() -> list[History]:
    """The held-out propose corpus and bench/memory_questions.json."""
    spec = json.loads(OWN_QUESTIONS.read_text("utf-8"))
    out = []
    for persona, asked in spec["people"].items():
        sessions: dict[str, list[Turn]] = {}
        for path in sorted(OWN_CORPUS.glob(f"{persona}-*.zip")):
            with zipfile.ZipFile(path) as archive:
                convs = json.loads(archive.read("conversations.json"))
            for conv in convs:
                title = conv.get("title") or conv.get("name") or ""
                sessions[title] = [Turn(title, t) for t in _conversation_turns(conv)]
        questions = []
        for q in asked:
            turns = [t for t in sessions.get(q["conversation"], []) if q["quote"] in t.text]
            if not turns:
                raise SystemExit(f"{persona}: no turn of {q['conversation']!r} holds "
                                 f"{q['quote']!r}")
            questions.append(Question(q["question"], turns[:1], "own"))
        exports = sorted(OWN_CORPUS.glob(f"{persona}-*.zip"))
        out.append(History(persona, exports, sessions, questions))
    return out


def _conversation_turns(conv: dict[str, Any]) -> list[str]:
    """The message texts of a ChatGPT (mapping tree, current branch) or Claude conversation."""
    if "chat_messages" in conv:
        return [m.get("text") or "" for m in conv["chat_messages"]]
    mapping, node, texts = conv["mapping"], conv.get("current_node"), []
    while node:
        message = (mapping[node] or {}).get("message") or {}
        parts = (message.get("content") or {}).get("parts") or []
        text = "\n".join(p for p in parts if isinstance(p, str))
        if text.strip():
            texts.append(text)
        node = mapping[node].get("parent")
    return texts[::-1]


# --- pcp ---------------------------------------------------------------------------------------
def _import(api: Any, root: Path, history: History) -> None:
    store = api.init_store(root, owner_id="bench")
    store.close()
    with api.open_store(root) as store:
        for export in history.exports:
            api.import_path(store, export)
        pages = {}
        for entry in store.entries(statuses=None):
            record = entry.record or {}
            pages[str(record.get("source_id"))] = entry.page_id
            pages[entry.title] = entry.page_id
    # session key -> page id: LoCoMo sessions by their conversation id, own ones by title
    history.page_of = {key: pages.get(value, pages.get(key, ""))
                       for key, value in (history.page_of or
                                          {k: k for k in history.sessions}).items()}


def _ask(api: Any, store: Any, question: str, mode: str) -> tuple[list[dict[str, Any]], float,
                                                                     str]:
    started = time.perf_counter()
    try:
        data = api.search(store, question, mode=mode, limit=10)
    except Exception as exc:  # noqa: BLE001 - an old pcp refusing the question: no results
        return [], time.perf_counter() - started, f"error: {type(exc).__name__}"
    spent = time.perf_counter() - started
    return data["results"], spent, data["filters_applied"].get("mode", mode)


# --- BM25 ---------------------------------------------------------------------------------------
_TOKEN = re.compile(r"\w+")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


class Bm25:
    def __init__(self, history: History) -> None:
        from rank_bm25 import BM25Okapi

        self.sessions = list(history.sessions)
        self.by_session = BM25Okapi([_tokens(" ".join(t.text for t in history.sessions[s]))
                                     for s in self.sessions])
        self.turns = [t for s in self.sessions for t in history.sessions[s]]
        self.by_turn = BM25Okapi([_tokens(t.text) or ["_"] for t in self.turns])

    def sessions_ranked(self, question: str) -> list[str]:
        scores = self.by_session.get_scores(_tokens(question))
        order = sorted(range(len(scores)), key=lambda i: -scores[i])
        return [self.sessions[i] for i in order[:10]]

    def turns_ranked(self, question: str) -> tuple[list[str], list[Turn]]:
        scores = self.by_turn.get_scores(_tokens(question))
        order = sorted(range(len(scores)), key=lambda i: -scores[i])
        sessions: list[str] = []
        shown: list[Turn] = []
        for i in order:
            turn = self.turns[i]
            if len(shown) < 10:
                shown.append(turn)
            if turn.session not in sessions:
                sessions.append(turn.session)
            if len(sessions) >= 10 and len(shown) >= 10:
                break
        return sessions, shown


# --- the run ------------------------------------------------------------------------------------
def run(locomo_path: str | Path | None, args: Any = None) -> str:
    """The Markdown report of one run (see the module docstring)."""
    def arg(name: str, default: Any) -> Any:
        if args is None:
            return default
        value = args.get(name) if isinstance(args, dict) else getattr(args, name, None)
        return default if value is None else value

    split = arg("split", "dev")
    modes = tuple(arg("modes", MODES))
    people = set(arg("people", ()))
    engine = arg("engine", None)
    if engine:
        os.environ["PCP_INDEX_ENGINE"] = engine
    from pcp_cli import api

    with tempfile.TemporaryDirectory(prefix="pcp-memory-search-") as tmp:
        folder = Path(tmp)
        if split == "own":
            histories = own_histories()
        else:
            path = locomo.find(locomo_path)
            if path is None:
                return (f"## Memory search\n\nNo LoCoMo file at {locomo_path or locomo.DEFAULT}: "
                        "skipped.\n")
            histories = locomo_histories(path, SPLITS[split], folder)
        if people:
            histories = [h for h in histories if h.key in people]
        totals = {name: Score() for name in (*modes, "bm25 sessions", "bm25 turns")}
        per_person: list[str] = []
        skipped = 0
        cost = {"conversations": 0, "import": 0.0, "index": 0.0}
        for history in histories:
            root = folder / history.key
            started = time.perf_counter()
            _import(api, root, history)
            cost["import"] += time.perf_counter() - started
            cost["conversations"] += len(history.sessions)
            session_of = {page: key for key, page in history.page_of.items()}
            bm25 = Bm25(history)
            skipped += history.skipped
            mine = {name: Score() for name in totals}
            with api.open_store(root) as store:
                started = time.perf_counter()
                api.search(store, "warm up", mode="semantic" if "semantic" in modes
                           else "text", limit=1)  # build the index (and the vectors)
                cost["index"] += time.perf_counter() - started
                for q in history.questions:
                    answering = {a.session for a in q.answers}
                    for mode in modes:
                        results, spent, ran = _ask(api, store, q.text, mode)
                        ranked = [session_of.get(r["id"], r["id"]) for r in results]
                        shown = any(visible(r.get("snippet", ""), a.text)
                                    for r in results[:10] for a in q.answers)
                        for score in (totals[mode], mine[mode]):
                            score.add(ranked, answering, shown, spent)
                            score.why[ran] = score.why.get(ran, 0) + 1
                    started = time.perf_counter()
                    ranked = bm25.sessions_ranked(q.text)
                    spent = time.perf_counter() - started
                    for score in (totals["bm25 sessions"], mine["bm25 sessions"]):
                        score.add(ranked, answering, False, spent)
                    started = time.perf_counter()
                    ranked, turns = bm25.turns_ranked(q.text)
                    spent = time.perf_counter() - started
                    shown = any(t is a or t.text == a.text for t in turns for a in q.answers)
                    for score in (totals["bm25 turns"], mine["bm25 turns"]):
                        score.add(ranked, answering, shown, spent)
            per_person.append(f"| {history.key} | {len(history.questions)} | " + " | ".join(
                f"{100 * mine[m].hits[5] / max(1, mine[m].asked):.1f}" for m in totals) + " |")
        return _report(split, totals, per_person, skipped, modes, api, cost)


def _report(split: str, totals: dict[str, Score], per_person: list[str], skipped: int,
            modes: tuple[str, ...], api: Any, cost: dict[str, float]) -> str:
    import platform

    from pcp_cli import __version__

    asked = next(iter(totals.values())).asked
    lines = [
        f"## Memory search: {split} ({asked} questions asked as written"
        + (f"; {skipped} adversarial left out" if skipped else "") + ")",
        "",
        f"pcp {__version__} from {Path(api.__file__).resolve().parent.parent}, "
        f"engine {_engine()}, "
        f"{platform.python_version()}, load {os.getloadavg()[0]:.2f}",
        "",
        "| ranking | R@1 | R@5 | R@10 | turn in a top-10 snippet | ms/query median | p95 |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, score in totals.items():
        label = name if name.startswith("bm25") else f"pcp {name}"
        lines.append(score.row(label))
    per = 1000 / max(1, cost["conversations"])
    asked_ms = statistics.median(sum((s.seconds for n, s in totals.items()
                                      if not n.startswith("bm25")), [])) * 1000
    lines += ["", f"Cost: {cost['conversations']:.0f} conversations imported in "
              f"{cost['import']:.1f} s and indexed (text index"
              f"{' and vectors' if 'semantic' in modes else ''}) in {cost['index']:.1f} s: "
              f"{cost['import'] * per:.0f} s and {cost['index'] * per:.0f} s per 1,000 "
              f"conversations (in process, wall time); a question "
              f"{asked_ms:.0f} ms (median over the modes above)."]
    auto = totals.get("auto")
    if auto is not None and auto.asked:
        ran = ", ".join(f"{m} {100 * n / auto.asked:.0f}%" for m, n in sorted(auto.why.items()))
        lines += ["", f"`auto` ran: {ran}."]
    lines += ["", "R@5 by person:", "",
              "| person | questions | " + " | ".join(totals) + " |",
              "|---|---|" + "---|" * len(totals)] + per_person
    return "\n".join(lines) + "\n"


def _engine() -> str:
    """The index engine the stores were built with: PCP_INDEX_ENGINE, else pcp's default."""
    try:
        from pcp_cli.index import DEFAULT_ENGINE
    except ImportError:  # an older pcp, before the engine was chosen
        DEFAULT_ENGINE = "whoosh"  # noqa: N806
    return os.environ.get("PCP_INDEX_ENGINE") or DEFAULT_ENGINE


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", help=f"the LoCoMo JSON file (default: {locomo.DEFAULT})")
    parser.add_argument("--split", choices=(*SPLITS, "own"), default="dev")
    parser.add_argument("--modes", default=",".join(MODES),
                        help="comma-separated: text, auto, hybrid, semantic, exact")
    parser.add_argument("--people", default="", help="comma-separated keys (conv-30-jon, ilse)")
    parser.add_argument("--engine", choices=("whoosh", "tantivy"))
    parser.add_argument("--out", help="also write the report to this file")
    args = parser.parse_args()
    report = run(args.locomo, {
        "split": args.split, "modes": [m for m in args.modes.split(",") if m],
        "people": [p for p in args.people.split(",") if p], "engine": args.engine})
    sys.stdout.write(report)
    if args.out:
        Path(args.out).write_text(report, "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
