"""Pure renderers: profile JSON / Markdown / micro_prompt, the full archive, distillation and the
AGENTS.md block. Standard library only (plus the package's model and errors): no whoosh,
jsonschema, mcp, rich or typer, so `pcp export --format micro_prompt` stays light.
"""

from pcp_cli.render.agents_md import agents_md_block
from pcp_cli.render.distill import DistillResult, distill
from pcp_cli.render.markdown import profile_markdown
from pcp_cli.render.micro_prompt import EMPTY, LIMIT, micro_prompt
from pcp_cli.render.portable import (
    archive,
    keystone_object,
    profile_json,
    profile_object,
    timeline_object,
)

__all__ = [
    "EMPTY",
    "LIMIT",
    "DistillResult",
    "agents_md_block",
    "archive",
    "distill",
    "keystone_object",
    "micro_prompt",
    "profile_json",
    "profile_markdown",
    "profile_object",
    "timeline_object",
]
