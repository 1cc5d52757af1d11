"""`pcp console`: a local web console that is the owner's, and only the owner's.

A front end beside the CLI and the MCP server: server-rendered HTML (Jinja2 templates, escaped
everywhere) served by starlette + uvicorn (which the `mcp` SDK already brings) on 127.0.0.1.

- `security.py`: the one-time sign-in token, sessions, CSRF tokens, the Host/Origin checks and
  the response headers (SDK-free, testable on its own).
- `views.py`: what each page shows, gathered through `pcp_cli.api` (and the MCP front end's
  door, `pcp_cli.mcp.commands`, for grants, tokens and the audit log); every write goes
  through the same library call as the CLI and is recorded in the audit log as the owner's.
- `app.py`: the routes, the guard in front of every one of them, the templates.
- `commands.py`: what `pcp console` runs (the CLI imports only this module, inside the
  command, so `pcp --help` loads none of the rest).
"""
