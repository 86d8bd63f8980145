"""`finrag serve` (the local HTTP API) and `finrag mcp` (ask/search/facts as MCP tools over
stdio): other programs and agents use the store through the CLI's own JSON."""

from __future__ import annotations

from typing import Annotated

import typer

from finrag.cli.state import app_state


def serve_command(
    ctx: typer.Context,
    host: Annotated[
        str | None,
        typer.Option(
            "--host",
            help="Address to listen on (default: serve.host, 127.0.0.1); any other than "
            "loopback needs a token.",
        ),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option("--port", help="TCP port (default: serve.port, 8765).", min=1, max=65535),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            help="Bearer token every request must carry (default: serve.token, or "
            "FINRAG_SERVE__TOKEN); required beyond loopback.",
        ),
    ] = None,
    mcp: Annotated[
        bool, typer.Option("--mcp", help="Serve MCP over stdio instead (as `finrag mcp`).")
    ] = False,
) -> None:
    """A local HTTP API: POST /ask, /search, /facts, /kpi; GET /docs, /health. Replies are
    the JSON of the commands' --json; requests take their options as JSON fields named
    like the flags (no_llm for --no-llm); OpenAPI page at /api/docs."""
    settings = app_state(ctx).settings
    if mcp:
        from finrag.serve.mcp_tools import serve_mcp

        serve_mcp(settings)
        return
    from finrag.serve.run import serve

    secret = settings.serve.token.get_secret_value() if settings.serve.token else None
    serve(
        settings,
        host=host or settings.serve.host,
        port=port or settings.serve.port,
        token=token or secret or None,
    )


def mcp_command(ctx: typer.Context) -> None:
    """An MCP server over stdio: the tools ask, search and facts, each answering with the
    JSON of the command's --json (needs: pip install 'finrag-cli[mcp]')."""
    from finrag.serve.mcp_tools import serve_mcp

    serve_mcp(app_state(ctx).settings)
