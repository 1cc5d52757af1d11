"""A store that fills itself: the coding agents' hooks (`pcp hooks`) and `pcp watch`.

Above the library facade: the imports go through `pcp_cli.api` (the files it writes for
itself, under `.pcp/hooks/` and in the agents' configuration, through `store.atomic`), and
nothing below the CLI imports this package.
"""
