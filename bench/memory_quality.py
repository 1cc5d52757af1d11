"""Memory that knows the person (issue #30), measured: proposals from history, and search.

    python bench/memory_quality.py --locomo ../shared/locomo-dev/locomo-dev.json
    python bench/memory_quality.py --baseline "env PYTHONPATH=/tmp/main python -m pcp_cli"
    python bench/memory_quality.py --unjudged        # list proposals no verdict covers yet

One command for both halves of the issue. The search half is `bench/memory_search.py`'s
`run(locomo_path, args)` (printed when that file is there). The proposals half, here:

**LoCoMo** (`bench/locomo.py`: each speaker of a conversation is a person, each session one
conversation; the first speaker's history is a ChatGPT export, whose `user.json` holds an id
and an email and no name, the second's a Claude export, whose `users.json` gives the name).
For each person: a fresh store, `pcp import`, `pcp propose --json` (timed), then

- *which observations are durable*: LoCoMo's `observation` lists facts about each speaker
  with the turn (`dia_id`) they come from. `durable()` below is the rule that keeps the
  durable ones (work, family and partner, pets, places, likes, plans, constraints) and gives
  each a PCP keystone category; it leaves out events ("went to a concert yesterday"), feelings
  about the other speaker and opinions. It was written reading the observations of conv-30
  and conv-44 only, and is applied to conv-48 unread.
- *matching a proposal to an observation* (strict): the proposal's evidence must include the
  observation's own turn, and every key word of the proposal (its words less the claim's
  verb and function words: "Has a kitten named Mochi" → kitten, mochi) must be in the
  observation, compared after folding case and plural or verb endings. Recall is the share
  of durable observations matched by a proposal not judged wrong.
- *precision*: every proposal is judged right, wrong or not self-contained ("Likes holding
  them."), by hand; the verdicts are in `bench/memory_judgments.json`, keyed by a digest of
  (conversation, speaker, kind, claim), so the file holds no LoCoMo text. A proposal without
  a verdict that strictly matches an observation counts as right; any other is *unjudged*
  and shown as such (`--unjudged` lists them, with their evidence, on the terminal only).
  Not self-contained counts as wrong.
- *category agreement*: a matched proposal's category against the observation's (a timeline
  event's category is read as a keystone's: job and move → identity).
- *the micro_prompt*: every proposal counted right is accepted (and the Claude export's name
  proposal), then `pcp profile distill` and `pcp export --format micro_prompt`; the text is
  printed, and whether it names the person's role: a key word of one of their durable work
  observations.

**Our own corpus** (`bench/propose/`, scored by `bench/propose_quality.py`: dev 18, held-out 23
conversations with labelled facts and traps).

**Cost**: `pcp propose --dry-run --json` on one store of `--scale` conversations (the own
corpus repeated with new ids and dates), as a whole process, median of `--repeat`; with
`--baseline PCP`, every figure again for that pcp, in the same run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import locomo  # noqa: E402
import propose_quality  # noqa: E402

JUDGMENTS = HERE / "memory_judgments.json"
DEV = ("conv-30", "conv-44")  # tuned on; everything else is held out
VERDICTS = ("right", "wrong", "not_self_contained")


# --- which observations are durable ---------------------------------------------------------
_LIFE_EVENT = {
    "identity": re.compile(
        r"\b(?:(?:new|first|dream) job|started (?:a |his |her |their )?(?:new )?job|"
        r"lost (?:his|her|their) job|quit (?:his|her|their) job|left (?:his|her|their) "
        r"(?:secure )?(?:9-5 )?job|got (?:a |the )?job|promoted|hired|graduated|"
        r"moved (?:to|into|in)|relocated|started (?:his|her|their) own|opened (?:a|an|his|her|"
        r"their)|launched (?:a|an|his|her|their))\b", re.I),
    "relationship": re.compile(
        r"\b(?:adopted|got (?:a|another|her|his) (?:new )?(?:puppy|pup|dog|cat|kitten|"
        r"pet|turtle|snake)|married|engaged|had a baby|gave birth|passed away|died)\b", re.I),
}
_EVENT = re.compile(
    r"\b(?:went|attended|visited|took (?:a|her|his|their|some)|had (?:a|an|some)|shared|"
    r"posted|showed|saw|watched|tried|found (?:a|an|some)|made (?:a|some)|cooked|baked|"
    r"bought|ran (?:a|in)|played|volunteered|spent|celebrated|received|won|hosted|met|"
    r"recently|yesterday|last (?:week|weekend|month|year|night|friday|monday|tuesday|"
    r"wednesday|thursday|saturday|sunday)|this (?:week|weekend|month)|today|tomorrow|"
    r"next (?:week|month|weekend)|the day before|the other day|on (?:monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday))\b", re.I)
_NOT_ABOUT_THEM = re.compile(
    r"\b(?:believes?|thinks?|appreciates?|finds? (?!it hard)|feels?|is grateful|is thankful|"
    r"is supportive|is excited|encourag\w+|prais\w+|express\w+|suggest\w+|advis\w+|agrees?|"
    r"hopes? (?!to)|wishes|is happy|is proud|is impressed|is inspired|acknowledg\w+|"
    r"compliment\w+|is curious|is sorry|admires?|values?|recommend\w+|offer\w+|mentioned)\b",
    re.I)
_PETS = (r"(?:dogs?|pups?|puppy|puppies|cats?|kittens?|pets?|turtles?|snakes?|guinea pigs?|"
         r"hamsters?|rabbits?|birds?|parrots?|fish|horses?|fur bab\w+|furry friends?)")
_KIN = (r"(?:girlfriend|boyfriend|wife|husband|partner|fianc\w+|mother|mom|father|dad|parents?|"
        r"sisters?|brothers?|siblings?|sons?|daughters?|kids|children|family|grandma|"
        r"grandmother|grandpa|grandfather|aunt|uncle|cousins?|nieces?|nephews?)")
_ROLES = (r"(?:banker|analyst|teacher|instructor|student|engineer|dancer|nurse|designer|writer|"
          r"artist|owner|entrepreneur|chef|doctor|lawyer|developer|manager|accountant|"
          r"scientist|researcher|photographer|musician|coach|trainer|therapist|mechanic|"
          r"farmer|volunteer|intern|athlete|player|blogger|influencer)")
_BUSINESS = r"(?:business|studio|store|shop|boutique|company|startup|clinic|bakery|restaurant)"
# A durable fact is stated by what it predicates, not by a word it holds: "Audrey has four
# dogs" is, "Audrey's dogs wore party hats" is not.
_KINDS = (
    ("relationship", re.compile(
        rf"\b(?:has|have|had|adopted|got|owns?)\s+(?:(?:a|an|two|three|four|five|\d+|her|his|"
        rf"their|another|several|many|at least \d+|new|own|pet|little|young)\s+)*(?:\w+\s+){{0,2}}"
        rf"(?:{_PETS}|{_KIN})\b|'s\s+(?:\w+\s+)?(?:{_PETS}|{_KIN})\s+(?:is|are|was|were|named|"
        rf"called|has|have)\b|\b(?:{_PETS}|{_KIN})\s+(?:named|called)\b|names of \w+'s|"
        rf"\b(?:is|are) (?:married|engaged|in a relationship)|\bpassed away\b", re.I)),
    ("identity", re.compile(
        rf"\b(?:works? (?:as|at|for|in)|job (?:as|at)|new job|lost (?:his|her|their) job|"
        rf"(?:is|was|works as) an? (?:\w+\s+){{0,2}}{_ROLES}|(?:runs?|owns?|has|opened|started|"
        rf"launched|is starting|is opening) (?:an?|his|her|their) (?:own )?(?:\w+\s+){{0,2}}"
        rf"{_BUSINESS}|internship|studies|studying|career|profession|"
        rf"lives? (?:in|near|with)|living in|moved (?:to|into)|grew up|is from|hometown|"
        rf"got a new place|lives in an? apartment|is a person living|speaks?)\b", re.I)),
    ("objective", re.compile(
        r"\b(?:plans? to|planning to|wants? to|dreams? (?:of|is|to)|dream (?:is|of)|goal is|"
        r"aims? to|hopes? to|aspires? to|bucket list|intends? to|is determined to|"
        r"is working towards)\b", re.I)),
    ("constraint", re.compile(
        r"\b(?:allergic|can't (?:eat|drink|have)|cannot|unable to|on a budget|vegetarian|vegan|"
        r"injur\w+)\b", re.I)),
    ("preference", re.compile(
        r"\b(?:loves?|enjoys?|likes?|favou?rite|passionate about|passion for|fan of|go-to|"
        r"hobby|hobbies|is into|interested in|prefers?|dislikes?|hates?)\b", re.I)),
)


def durable(fact: str, name: str) -> str | None:
    """The keystone category of a LoCoMo observation that states a durable fact about the
    person `name` (its subject: "Audrey has four dogs", not "Audrey's dogs love the park"),
    else None (an event, a feeling, an opinion, someone else's doing)."""
    subject = re.match(rf"{re.escape(name)}(?:'s (?:favou?rite|go-to|goal|dream|passion|"
                       rf"bucket list|hobby|hobbies|job|career|\w+ (?:is|are) (?:named|called)))?"
                       rf"\b(?!'s)", fact)
    if subject is None:
        return None
    for category, pattern in _LIFE_EVENT.items():
        if pattern.search(fact):
            return category
    if _EVENT.search(fact) or _NOT_ABOUT_THEM.search(fact):
        return None
    for category, pattern in _KINDS:
        if pattern.search(fact):
            return category
    return None


def observations(person: locomo.Person) -> list[dict[str, Any]]:
    """Every observation of the person: its turns, text, digest and durable category."""
    found = []
    for key, by_speaker in person.raw.get("observation", {}).items():
        del key
        for fact, dia in by_speaker.get(person.name, []):
            turns = set(re.findall(r"D\d+:\d+", str(dia)))
            found.append({"fact": fact, "turns": turns, "category": durable(fact, person.name),
                          "digest": hashlib.sha256(fact.encode()).hexdigest()[:12]})
    return found


# --- matching a proposal to an observation -------------------------------------------------
_CLAIM_WORDS = frozenset((
    "a", "an", "the", "is", "are", "was", "be", "been", "has", "have", "had", "likes", "like",
    "loves", "love", "enjoys", "works", "work", "lives", "live", "wants", "want", "to", "of",
    "in", "on", "at", "as", "for", "with", "and", "or", "their", "they", "them", "own", "named",
    "called", "runs", "run", "is", "does", "do", "into", "about", "from", "by", "its", "his",
    "her", "favourite", "favorite", "uses", "use", "prefers", "around", "week", "weekend",
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "said", "some", "any", "thinking", "looking",
))


def _stem(word: str) -> str:
    """A word without its plural or verb ending, and without a final "e", so that "dance",
    "dances" and "dancing" (or "store" and "stores") are one word."""
    word = word.casefold()
    for ending in ("ies", "ing", "ed", "es", "s"):
        if len(word) > len(ending) + 2 and word.endswith(ending):
            word = word[: -len(ending)] + ("y" if ending == "ies" else "")
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def key_words(content: str) -> set[str]:
    words = re.findall(r"[A-Za-z][A-Za-z'-]*", content)
    return {_stem(w) for w in words if w.casefold() not in _CLAIM_WORDS and len(w) > 1}


def matches(proposal: dict[str, Any], observation: dict[str, Any]) -> bool:
    """Strict: the observation's turn is among the proposal's evidence, and every key word of
    the proposal is in the observation."""
    if not observation["turns"] & set(proposal["turns"]):
        return False
    keys = key_words(proposal["content"])
    have = {_stem(w) for w in re.findall(r"[A-Za-z][A-Za-z'-]*", observation["fact"])}
    return bool(keys) and keys <= have


# --- verdicts -------------------------------------------------------------------------------
def verdict_key(sample_id: str, speaker: str, proposal: dict[str, Any]) -> str:
    text = f"{sample_id}|{speaker}|{proposal['kind']}|{proposal['content']}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_verdicts() -> dict[str, str]:
    if not JUDGMENTS.exists():
        return {}
    data = json.loads(JUDGMENTS.read_text("utf-8"))
    return {k: v for k, v in data.get("verdicts", {}).items() if v in VERDICTS}


# --- one person -----------------------------------------------------------------------------
def _session_of(title: str) -> int | None:
    found = re.search(r"session (\d+)", title or "")
    return int(found.group(1)) if found else None


def _turns_of(person: locomo.Person, evidence: list[dict[str, Any]],
              titles: dict[str, str]) -> list[str]:
    """The LoCoMo turns (dia_id) a proposal's evidence sentences come from."""
    found = []
    for item in evidence:
        number = _session_of(titles.get(item.get("page_id", ""), ""))
        text = " ".join(str(item.get("text", "")).rstrip("…").split())[:80]
        for session in person.sessions:
            if session.number != number:
                continue
            for turn in session.turns:
                if turn.speaker == person.name and text and text in " ".join(turn.text.split()):
                    found.append(turn.dia_id)
                    break
    return found


def run_person(pcp: propose_quality.Pcp, person: locomo.Person, fmt: str, work: Path,
               verdicts: dict[str, str]) -> dict[str, Any]:
    folder = work / person.key
    export = (locomo.write_chatgpt_export if fmt == "chatgpt" else locomo.write_claude_export)(
        person, folder / "export")
    store = folder / "store"
    pcp.init(store, person.key)
    pcp.import_(store, export)
    start = time.perf_counter()
    done = pcp.run("propose", "--json", store=store)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"pcp propose failed on {person.key}: {done.stderr.strip()[:500]}")
    proposals = json.loads(done.stdout)["proposals"]
    listing = pcp.run("ls", "--type", "conversation", "--json", store=store)
    pages = json.loads(listing.stdout)
    pages = pages.get("pages", pages) if isinstance(pages, dict) else pages
    titles = {p.get("page_id") or p.get("id"): p.get("title", "") for p in pages}
    obs = observations(person)
    rows = []
    for proposal in proposals:
        proposal["turns"] = _turns_of(person, proposal.get("evidence") or [], titles)
        key = verdict_key(person.sample_id, person.name, proposal)
        matched = [o for o in obs if matches(proposal, o)]
        verdict = verdicts.get(key) or ("right" if matched else None)
        rows.append({"proposal": proposal, "key": key, "verdict": verdict,
                     "judged": key in verdicts, "matched": matched})
    found = {o["digest"] for row in rows if row["verdict"] != "wrong"
             and row["verdict"] != "not_self_contained"
             for o in row["matched"] if o["category"]}
    agrees = Counter()
    for row in rows:
        if row["verdict"] == "right":
            for o in row["matched"]:
                if o["category"]:
                    agrees["matched"] += 1
                    agrees["agree"] += _category(row["proposal"]) == o["category"]
                    break
    micro = _micro_prompt(pcp, store, rows)
    work_words = {_stem(m.group(0)) for o in obs if o["category"] == "identity"
                  for m in _ROLE_NOUN.finditer(o["fact"])}
    headline = micro.split("\n\n")[0] if micro else ""
    named = sorted(w for w in work_words if re.search(rf"\b{re.escape(w)}", headline, re.I))
    return {"person": person.key, "sample": person.sample_id, "format": fmt, "rows": rows,
            "observations": obs, "found": found, "agrees": agrees, "propose_s": took,
            "micro_prompt": micro, "role_words": sorted(work_words), "role_named": named}


# What names a role or a line of work in an observation; the micro_prompt "names the role"
# when its first paragraph (identity and role) holds one of the person's.
_ROLE_NOUN = re.compile(
    r"\b(?:banker|analyst|teacher|instructor|student|engineer|dancer|nurse|designer|writer|"
    r"artist|owner|entrepreneur|chef|doctor|lawyer|developer|manager|accountant|scientist|"
    r"researcher|photographer|musician|coach|trainer|therapist|mechanic|farmer|volunteer|"
    r"studio|store|shop|boutique|business|company|startup|clinic|bakery|restaurant)s?\b", re.I)


def _category(proposal: dict[str, Any]) -> str:
    if proposal.get("kind") == "timeline_event":
        return {"job": "identity", "move": "identity", "relationship": "relationship"}.get(
            str(proposal.get("category")), "other")
    return str(proposal.get("category"))


def _micro_prompt(pcp: propose_quality.Pcp, store: Path, rows: list[dict[str, Any]]) -> str:
    right = [r["proposal"]["id"] for r in rows if r["verdict"] == "right" and r["proposal"]["id"]]
    queue = pcp.run("review", "list", "--json", store=store)
    try:
        items = json.loads(queue.stdout)
    except json.JSONDecodeError:
        items = []
    items = items.get("proposals", items) if isinstance(items, dict) else items
    right += [i["page_id"] for i in items if isinstance(i, dict) and i.get("kind") == "profile"]
    if right:
        done = pcp.run("review", "accept", *right, store=store)
        if done.returncode != 0:
            print(f"warning: review accept: {done.stderr.strip()[:300]}", file=sys.stderr)
    pcp.run("profile", "distill", store=store)
    return pcp.run("export", "--format", "micro_prompt", store=store).stdout.strip()


# --- reporting ------------------------------------------------------------------------------
def summarise(results: list[dict[str, Any]]) -> dict[str, Any]:
    total = Counter()
    for result in results:
        for row in result["rows"]:
            total["proposals"] += 1
            total[row["verdict"] or "unjudged"] += 1
        total["durable"] += sum(1 for o in result["observations"] if o["category"])
        total["observations"] += len(result["observations"])
        total["found"] += len(result["found"])
        total["matched"] += result["agrees"]["matched"]
        total["agree"] += result["agrees"]["agree"]
        total["role_people"] += bool(result["role_words"])
        total["role_named"] += bool(result["role_named"])
    judged = total["right"] + total["wrong"] + total["not_self_contained"]
    return {"total": total, "judged": judged,
            "precision": total["right"] / judged if judged else None,
            "precision_floor": total["right"] / total["proposals"] if total["proposals"] else None,
            "recall": total["found"] / total["durable"] if total["durable"] else None,
            "category_agreement": total["agree"] / total["matched"] if total["matched"] else None}


def _f(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def print_locomo(label: str, results: list[dict[str, Any]], show_prompts: bool) -> dict[str, Any]:
    split = {"dev (conv-30, conv-44)": [r for r in results if r["sample"] in DEV],
             "held out (other conversations)": [r for r in results if r["sample"] not in DEV]}
    print(f"\n## LoCoMo, {label}\n")
    print("| | proposals | right / wrong / not self-contained / unjudged | precision "
          "(judged; floor) | durable obs. | recall | category agrees | role named |")
    print("|---|---|---|---|---|---|---|---|")
    out = {}
    for name, group in split.items():
        if not group:
            continue
        s = summarise(group)
        t = s["total"]
        out[name] = {"total": dict(t), "precision": s["precision"], "recall": s["recall"],
                     "precision_floor": s["precision_floor"],
                     "category_agreement": s["category_agreement"]}
        print(f"| {name} | {t['proposals']} | {t['right']} / {t['wrong']} / "
              f"{t['not_self_contained']} / {t['unjudged']} | {_f(s['precision'])}; "
              f"{_f(s['precision_floor'])} | {t['durable']} of {t['observations']} | "
              f"{_f(s['recall'])} ({t['found']}/{t['durable']}) | "
              f"{_f(s['category_agreement'])} ({t['agree']}/{t['matched']}) | "
              f"{t['role_named']}/{t['role_people']} |")
    print("\n| person | export | proposals | precision (judged) | recall | `pcp propose` |")
    print("|---|---|---|---|---|---|")
    for result in results:
        s = summarise([result])
        t = s["total"]
        print(f"| {result['person']} | {result['format']} | {t['proposals']} | "
              f"{_f(s['precision'])} | {_f(s['recall'])} ({t['found']}/{t['durable']}) | "
              f"{result['propose_s']:.2f} s |")
    if show_prompts:
        for result in results:
            named = ", ".join(result["role_named"]) or "no"
            print(f"\n### micro_prompt of {result['person']} (role named: {named})\n")
            print("```text")
            print(result["micro_prompt"])
            print("```")
    return out


def list_unjudged(results: list[dict[str, Any]]) -> None:
    for result in results:
        for row in result["rows"]:
            if row["judged"]:
                continue
            p = row["proposal"]
            mark = "matched" if row["matched"] else "UNJUDGED"
            evidence = (p.get("evidence") or [{}])[0].get("text", "")
            print(f"{row['key']}\t{mark}\t{result['person']}\t[{p['kind']}/{p['category']}] "
                  f"{p['content']}\t<- {','.join(p['turns'][:3])} {evidence[:140]!r}",
                  file=sys.stderr)


def list_missed(results: list[dict[str, Any]]) -> None:
    for result in results:
        for o in result["observations"]:
            if o["category"] and o["digest"] not in result["found"]:
                print(f"MISSED\t{result['person']}\t[{o['category']}] {o['fact']}\t"
                      f"{','.join(sorted(o['turns']))}", file=sys.stderr)


def _timed(pcp: propose_quality.Pcp, *args: str, store: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one whole pcp process (user + system, `os.wait4`): CPU time
    says what the command costs on a machine other work keeps busy."""
    import subprocess

    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("PCP_STORE", None)
    start = time.perf_counter()
    proc = subprocess.Popen([*pcp.base, "--store", str(store), *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                            cwd=tempfile.gettempdir())
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"pcp {' '.join(args)} failed on {store}")
    return wall, usage.ru_utime + usage.ru_stime


def cost(pcp: propose_quality.Pcp, scale: int, repeat: int, work: Path) -> dict[str, Any]:
    folder = work / "scaled"
    folder.mkdir(parents=True, exist_ok=True)
    exports, count = propose_quality.scaled_exports(folder, scale)
    store = work / "scaled-store"
    pcp.init(store, "scaled")
    for export in exports:
        pcp.import_(store, export)
    runs = [_timed(pcp, "propose", "--dry-run", "--json", store=store) for _ in range(repeat)]
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    return {"conversations": count, "runs": runs, "median_s": wall, "median_cpu_s": cpu,
            "per_1000_s": wall * 1000 / count, "per_1000_cpu_s": cpu * 1000 / count}


def measure(command: str, args: argparse.Namespace, verdicts: dict[str, str],
            label: str) -> dict[str, Any]:
    pcp = propose_quality.Pcp(command, [], args.timeout)
    version = pcp.run("--version")
    print(f"\n# {label}: pcp {version.stdout.strip() or version.stderr.strip()}")
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="pcp-memory-bench-") as tmp:
        work = Path(tmp)
        if args.locomo_path is not None:
            people = [p for p in locomo.people(locomo.load(args.locomo_path))
                      if not args.dev_only or p.sample_id in DEV]
            results = []
            for index, person in enumerate(people):
                fmt = "chatgpt" if index % 2 == 0 else "claude"
                results.append(run_person(pcp, person, fmt, work, verdicts))
            report["locomo"] = print_locomo(label, results, args.prompts)
            if args.unjudged:
                list_unjudged(results)
            if args.missed:
                list_missed(results)
        if args.own:
            report["own"] = {}
            for split in propose_quality.SPLITS:
                summary = propose_quality.run_split(pcp, split, 1, work / "own", False)
                propose_quality.print_split(f"own corpus {split} ({label})", summary, False)
                t = summary["total"]
                report["own"][split] = {
                    "precision": t["correct"] / t["proposals"] if t["proposals"] else None,
                    "recall": t["found"] / t["facts"] if t["facts"] else None,
                    "total": dict(t)}
        if args.scale:
            report["cost"] = c = cost(pcp, args.scale, args.repeat, work)
            print(f"\n`pcp propose --dry-run --json` on {c['conversations']} conversations "
                  f"({label}): median {c['median_cpu_s']:.2f} s CPU, {c['median_s']:.2f} s "
                  f"wall (runs, wall/CPU: "
                  f"{', '.join(f'{w:.2f}/{u:.2f}' for w, u in c['runs'])}) → "
                  f"**{c['per_1000_cpu_s']:.2f} s of CPU per 1,000 conversations**")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", help="the LoCoMo JSON (default: ../shared/locomo-dev/)")
    parser.add_argument("--pcp", default="", help="the pcp to measure (default: python -m "
                        "pcp_cli of this checkout)")
    parser.add_argument("--baseline", help="a second pcp to measure in the same run (main)")
    parser.add_argument("--no-own", dest="own", action="store_false",
                        help="leave out the bench/propose corpus")
    parser.add_argument("--no-search", dest="search", action="store_false",
                        help="leave out the search half (bench/memory_search.py)")
    parser.add_argument("--scale", type=int, default=1000,
                        help="conversations in the timed store (0: no cost run)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--no-prompts", dest="prompts", action="store_false",
                        help="do not print each person's micro_prompt")
    parser.add_argument("--dev-only", action="store_true",
                        help="LoCoMo: only the conversations tuned on (conv-30, conv-44)")
    parser.add_argument("--missed", action="store_true",
                        help="list the durable observations no proposal matched (stderr)")
    parser.add_argument("--unjudged", action="store_true",
                        help="list the proposals no verdict covers (stderr)")
    parser.add_argument("--json", dest="json_out", help="also write the figures here")
    args = parser.parse_args(argv)
    args.locomo_path = locomo.find(args.locomo)
    if args.locomo_path is None:
        print(f"no LoCoMo file at {args.locomo or locomo.DEFAULT}: LoCoMo figures left out",
              file=sys.stderr)
    load = os.getloadavg()
    print(f"# memory quality — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, "
          f"load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    verdicts = load_verdicts()
    report = {"pcp": measure(args.pcp, args, verdicts, "this pcp")}
    if args.baseline:
        report["baseline"] = measure(args.baseline, args, verdicts, "baseline")
    if args.search and args.locomo_path is not None and (HERE / "memory_search.py").exists():
        import memory_search  # the search helper's half

        print(memory_search.run(str(args.locomo_path), args))
    load = os.getloadavg()
    print(f"\n(load at the end {load[0]:.1f} {load[1]:.1f} {load[2]:.1f})")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=1, default=str) + "\n",
                                       encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
