"""`pcp profile …`: the distilled "who I am" page."""

from __future__ import annotations

import typer

from pcp_cli import api
from pcp_cli.cli.output import JsonOpt, StoreOpt, emit, text
from pcp_cli.cli.pages import write_result

profile_app = typer.Typer(help="Your profile (who you are, how you work).", no_args_is_help=True)


@profile_app.command("set")
def profile_set(field: str, value: str, store_path: StoreOpt = None,
                as_json: JsonOpt = False) -> None:
    """Set a profile field by hand (pinned: distillation never overwrites it).

    List fields (domain_expertise, values) take items separated by ';'.
    """
    with api.open_store(store_path) as store:
        result = api.set_profile_field(store, field, value)
    write_result(result, as_json, "set")


@profile_app.command("show")
def profile_show(store_path: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Show the profile (the strict v1 profile object under --json)."""
    from pcp_cli.render.portable import profile_object

    with api.open_store(store_path) as store:
        obj = profile_object(api.profile_revision(store))

    def human() -> None:
        if len(obj) == 1:
            text("No profile is available yet in this context store.")
            return
        for key, value in obj.items():
            if key in ("schema_version", "extensions"):
                continue
            shown = "; ".join(value) if isinstance(value, list) else value
            text(f"{key}: {shown}")

    emit(obj, as_json, human)


def register(app: typer.Typer) -> None:
    app.add_typer(profile_app, name="profile")
