"""The JSON Schemas pcp ships (the store's files, the v1 objects, the MCP tools' arguments) and
checking data against them. jsonschema is imported here and nowhere else. Checking a whole
store folder (`pcp validate`): `pcp_cli/upkeep/validate.py`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any


@cache
def schema(name: str) -> dict[str, Any]:
    """A schema shipped with pcp: 'revision', 'frontmatter', …, or 'v1/keystone'."""
    ref = resources.files("pcp_cli.model").joinpath("schemas", f"{name}.schema.json")
    return json.loads(ref.read_text("utf-8"))


@cache
def validator(name: str) -> Any:
    from jsonschema import Draft202012Validator, FormatChecker

    return Draft202012Validator(schema(name), format_checker=FormatChecker())


def errors_for(name: str, data: Any) -> list[str]:
    """Every schema error for `data`, as 'path.inside: reason'."""
    found = []
    for error in sorted(validator(name).iter_errors(data), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        found.append(f"{where}: {error.message}")
    return found


# -- any JSON Schema (the MCP tools' published argument schemas) ------------------------------
@dataclass(frozen=True)
class Violation:
    """One way an instance breaks a schema, without jsonschema's types: where (a path of keys
    and indexes), which keyword failed, what the keyword asked for, and the offending value."""

    path: tuple[str | int, ...]
    keyword: str
    expected: Any
    value: Any
    message: str


def schema_checker(schema: dict[str, Any]) -> Any:
    """A function `check(instance) -> list[Violation]` for `schema` (Draft 2020-12), the
    violations ordered most relevant first (jsonschema's own `best_match` order)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import relevance

    Draft202012Validator.check_schema(schema)
    checker = Draft202012Validator(schema)

    def check(instance: Any) -> list[Violation]:
        errors = sorted(checker.iter_errors(instance), key=relevance, reverse=True)
        return [
            Violation(tuple(e.absolute_path), str(e.validator), e.validator_value, e.instance,
                      e.message)
            for e in errors
        ]

    return check
