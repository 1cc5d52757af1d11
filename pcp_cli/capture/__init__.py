"""A store that fills itself: the coding agents' hooks (`pcp hooks`) and `pcp watch`.

Above the library facade: both import through `pcp_cli.api`, like a front end would, and
never the other way round.
"""
