"""Queries over a store: search (with the §4.2 safeguards), timeline, stats, scopes and
capabilities. The CLI and the MCP server reach these through `pcp_cli.api`."""
