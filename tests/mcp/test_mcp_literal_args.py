"""Tool arguments sent as strings (the MCP Inspector CLI before 0.16.6 sends every
`--tool-arg` as one): a string that is exactly a literal of the integer, number or boolean type a
parameter's published schema asks for is taken as that value; anything else keeps the error."""

from __future__ import annotations

import pytest

from pcp_cli.errors import InvalidInput
from pcp_cli.mcp.tools import TOOLS_BY_NAME, validate_arguments

SEARCH = TOOLS_BY_NAME["pcp_search"]


def test_literals_of_the_schemas_type_are_taken() -> None:
    args = validate_arguments(SEARCH, {"query": "tide", "limit": "2", "min_score": "0.25",
                                       "include_sensitive": "true",
                                       "include_superseded": "false"})
    assert args["limit"] == 2 and isinstance(args["limit"], int)
    assert args["min_score"] == 0.25
    assert args["include_sensitive"] is True and args["include_superseded"] is False
    assert validate_arguments(SEARCH, {"query": "tide", "min_score": "1"})["min_score"] == 1


def test_a_string_parameter_keeps_its_string() -> None:
    assert validate_arguments(SEARCH, {"query": "25"})["query"] == "25"


@pytest.mark.parametrize(("name", "value", "message"), [
    ("limit", "two", "limit must be an integer or null, not 'two'"),
    ("limit", " 2", "limit must be an integer or null, not ' 2'"),
    ("limit", "2.0", "limit must be an integer or null, not '2.0'"),
    ("limit", "02", "limit must be an integer or null, not '02'"),
    ("limit", "null", "limit must be an integer or null, not 'null'"),
    ("limit", "99", "limit 99 is out of range"),
    ("include_sensitive", "yes", "include_sensitive must be true or false or null"),
    ("include_sensitive", "True", "include_sensitive must be true or false or null"),
    ("min_score", "1e999", "min_score inf is out of range"),
    ("min_score", "NaN", "min_score must be a number or null"),
])
def test_anything_else_keeps_the_clear_error(name: str, value: str, message: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        validate_arguments(SEARCH, {"query": "tide", name: value})
    assert message in caught.value.message
