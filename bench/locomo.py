"""LoCoMo conversations as people's AI histories: the loader the memory benchmarks share.

    python bench/locomo.py --out /tmp/locomo-exports      # one ChatGPT export per person

LoCoMo ("Evaluating Very Long-Term Conversational Memory of LLM Agents", Maharana et al., ACL
2024) has conversations of 19-32 dated sessions between two people. Its licence (CC BY-NC 4.0)
keeps it out of this repository: the benchmarks read it from `../shared/locomo-dev/` beside
the checkout (or `--locomo PATH`) and say so when it is not there.

Each speaker of a conversation is a person of their own: one session is one conversation, the
person's turns are `user` and the other speaker's are `assistant` (and the other way round for
the second person). The exports are real ChatGPT exports (`conversations.json` of `mapping`
trees, and `user.json` as ChatGPT writes it: an id and an email address, no name) or Claude
exports (`users.json` with `full_name`), built with the same renderer as the `pcp propose`
corpus (`bench/propose/build_corpus.py`), so they go through `pcp import` unchanged.

`Turn.dia_id` keeps LoCoMo's turn id (`D3:14`: session 3, turn 14), which the benchmark's
questions (`qa[].evidence`) and facts (`observation`) point at.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import zipfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "propose"))

import build_corpus  # noqa: E402  (bench/propose/build_corpus.py: the export renderer)

DEFAULT = HERE.parent.parent / "shared" / "locomo-dev" / "locomo-dev.json"


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str


@dataclass(frozen=True)
class Session:
    number: int
    when: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Person:
    """One speaker of one LoCoMo conversation, seen as the owner of a history."""

    sample_id: str
    name: str
    other: str
    sessions: tuple[Session, ...]
    raw: dict[str, Any]  # the whole LoCoMo record (qa, observation, summaries)

    @property
    def key(self) -> str:
        return f"{self.sample_id}-{self.name.lower()}"

    def conversation_id(self, session: Session, fmt: str = "chatgpt") -> str:
        return build_corpus.conversation_id(_as_conversation(self, session, fmt))

    def turn(self, dia_id: str) -> tuple[Session, int, Turn] | None:
        """The session, the turn's index in it and the turn, for a LoCoMo `dia_id`."""
        for session in self.sessions:
            for index, turn in enumerate(session.turns):
                if turn.dia_id == dia_id:
                    return session, index, turn
        return None

    def observations(self) -> list[tuple[int, str, str]]:
        """(session number, fact, dia_id) for every LoCoMo observation about this person."""
        found = []
        for key, by_speaker in self.raw.get("observation", {}).items():
            number = int(re.search(r"\d+", key).group())
            for fact, dia_id in by_speaker.get(self.name, []):
                # a few observations cite several turns ("D8:6; D9:17"): keep the first
                found.append((number, fact, str(dia_id).split(";")[0].strip()))
        return sorted(found, key=lambda row: (row[0], _turn_number(row[2])))


def find(path: str | Path | None = None) -> Path | None:
    """The LoCoMo file to read: the one named, else `../shared/locomo-dev/` if it exists."""
    candidate = Path(path) if path else DEFAULT
    return candidate if candidate.is_file() else None


def load(path: str | Path) -> list[dict[str, Any]]:
    return json.loads(Path(path).read_text("utf-8"))


def people(records: list[dict[str, Any]]) -> list[Person]:
    """Both speakers of every conversation, in file order."""
    found = []
    for record in records:
        conv = record["conversation"]
        sessions = tuple(_sessions(conv))
        a, b = conv["speaker_a"], conv["speaker_b"]
        found += [Person(record["sample_id"], a, b, sessions, record),
                  Person(record["sample_id"], b, a, sessions, record)]
    return found


def session_time(text: str) -> datetime:
    """LoCoMo's session times: '4:04 pm on 20 January, 2023'."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")


def write_chatgpt_export(person: Person, folder: Path) -> Path:
    """`<folder>/<person>-chatgpt.zip`: every session as one ChatGPT conversation."""
    folder.mkdir(parents=True, exist_ok=True)
    conversations = [build_corpus.chatgpt_conversation(_as_conversation(person, s, "chatgpt"))
                     for s in person.sessions]
    digest = hashlib.sha256(person.key.encode()).hexdigest()
    user = {"id": f"user-{digest[:24]}", "email": f"{person.name.lower()}@example.com",
            "chatgpt_plus_user": False, "phone_number": None}
    path = folder / f"{person.key}-chatgpt.zip"
    _write_zip(path, {"conversations.json": conversations, "user.json": user})
    return path


def write_claude_export(person: Person, folder: Path) -> Path:
    """`<folder>/<person>-claude.zip`: the sessions as Claude conversations, with `users.json`."""
    folder.mkdir(parents=True, exist_ok=True)
    account = str(build_corpus._uid("locomo-account", person.key))
    conversations = [build_corpus.claude_conversation(_as_conversation(person, s, "claude"),
                                                      account)
                     for s in person.sessions]
    users = [{"uuid": account, "full_name": person.name,
              "email_address": f"{person.name.lower()}@example.com", "verified_phone_number": None}]
    path = folder / f"{person.key}-claude.zip"
    _write_zip(path, {"conversations.json": conversations, "users.json": users})
    return path


def _sessions(conv: dict[str, Any]) -> list[Session]:
    found = []
    for key, turns in conv.items():
        match = re.fullmatch(r"session_(\d+)", key)
        if not match or not turns:
            continue
        number = int(match.group(1))
        when = session_time(conv[f"session_{number}_date_time"])
        found.append(Session(number, when, tuple(
            Turn(t["dia_id"], t["speaker"], t["text"]) for t in turns)))
    return sorted(found, key=lambda s: s.number)


def _as_conversation(person: Person, session: Session, fmt: str) -> build_corpus.Conversation:
    turns = [build_corpus.Turn("user" if t.speaker == person.name else "assistant", t.text)
             for t in session.turns]
    return build_corpus.Conversation(
        persona=person.key, key=f"session-{session.number}", fmt=fmt, split="locomo",
        title=f"{person.name} and {person.other}, session {session.number}",
        start=session.when, turns=turns, facts=[], traps=[])


def _turn_number(dia_id: str) -> tuple[int, int]:
    numbers = [int(n) for n in re.findall(r"\d+", dia_id)] + [0, 0]
    return numbers[0], numbers[1]


def _write_zip(path: Path, files: dict[str, Any]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, value in files.items():
            info = zipfile.ZipInfo(name, build_corpus.FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, json.dumps(value, ensure_ascii=False))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", help=f"the LoCoMo JSON file (default: {DEFAULT})")
    parser.add_argument("--out", required=True, help="where to write the exports")
    parser.add_argument("--format", choices=("chatgpt", "claude"), default="chatgpt")
    args = parser.parse_args()
    path = find(args.locomo)
    if path is None:
        print(f"no LoCoMo file at {args.locomo or DEFAULT}", file=sys.stderr)
        return 2
    write = write_chatgpt_export if args.format == "chatgpt" else write_claude_export
    for person in people(load(path)):
        exported = write(person, Path(args.out))
        print(f"{exported}\t{len(person.sessions)} sessions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
