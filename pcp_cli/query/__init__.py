"""Queries over a store: search (with the §4.2 safeguards), timeline, stats, scopes and
capabilities. The CLI and the MCP server reach these through `pcp_cli.api`.

How a search runs: `pages.py` (`search_pages`: the request, its modes, filters and channels)
first; it runs the safeguards and the text channel of `search.py` over `pcp_cli.index`, and the
semantic channel of `semantic.py`."""
