"""`finrag mcp`: ask, search and facts as tools of an MCP server over stdio (the official
`mcp` package, the optional extra ``finrag-cli[mcp]``), so an agent can use a store.

Each tool's arguments are its CLI command's fields (finrag.serve.fields), its reply the
JSON of the command's --json; an error is the error's JSON, as a tool error. stdout is
the protocol's: nothing else may be printed there.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from finrag.cli.ask_cmd import ask_command, ask_outcome
from finrag.cli.facts_cmd import facts_command, facts_outcome
from finrag.cli.render import json_text
from finrag.cli.search_cmd import search_command, search_report
from finrag.config import Settings
from finrag.db import Store, open_store
from finrag.errors import ConfigError, FinragError
from finrag.serve.fields import RequestField, command_fields

TOOLS = {
    "ask": (
        ask_command,
        "Answer a question from the stored financial filings (10-K, 10-Q...), citing "
        "document and page; each number checked against the facts store. Returns the JSON "
        "of `finrag ask --json`. no_llm: true answers from stored facts only (fast).",
    ),
    "search": (
        search_command,
        "Hybrid search of the stored filings: the ranked passages for a question, with "
        "document, page and scores (the JSON of `finrag search --json`).",
    ),
    "facts": (
        facts_command,
        "A company's reported numbers: a statement (income, balance, cash flow) by period, "
        "or one line item (metric: revenue, capex, ...), each value with its document and "
        "page (the JSON of `finrag facts --json`).",
    ),
}


def require_mcp() -> None:
    """The optional `mcp` package, or a clear error saying how to install it."""
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        raise ConfigError(
            "the MCP server needs the mcp package, which is not installed",
            hint="pip install 'finrag-cli[mcp]'",
        ) from None


def build_server(settings: Settings, store: Store) -> Any:
    """The MCP server, its tools answering from ``store``."""
    require_mcp()
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from finrag import __version__

    def lent(_settings: Settings) -> contextlib.AbstractContextManager[Store]:
        return contextlib.nullcontext(store)

    def data_of(name: str, options: dict[str, Any]) -> Any:
        if name == "ask":
            return ask_outcome(settings, opened=lent, **options).report.data
        if name == "search":
            return search_report(settings, opened=lent, **options)[1].data
        return facts_outcome(settings, opened=lent, **options).report.data

    server = MCPServer(
        name="finrag",
        version=__version__,
        instructions="Grounded, cited answers over the financial filings in a finrag store.",
        log_level="WARNING",
    )
    for name, (command, description) in TOOLS.items():
        fields = command_fields(command)

        def call(name: str = name, fields: list[RequestField] = fields, **given: Any) -> str:
            options = {f.param: given.get(f.name, f.default) for f in fields}
            try:
                return json_text(data_of(name, options))
            except FinragError as exc:
                raise ToolError(json_text(exc.as_dict())) from None

        server.add_tool(
            _with_signature(call, name, fields),
            name=name,
            description=description,
            structured_output=False,
        )
    return server


def _with_signature(
    call: Callable[..., str], name: str, fields: list[RequestField]
) -> Callable[..., str]:
    """``call`` with the command's fields as its keyword arguments: the tool's input
    schema (types, ranges, help) comes from them."""

    def tool(**given: Any) -> str:
        return call(**given)

    tool.__name__ = name
    tool.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(
                f.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=inspect.Parameter.empty if f.required else f.default,
                annotation=Annotated[f.annotation, Field(description=f.help, ge=f.low, le=f.high)],
            )
            for f in fields
        ],
        return_annotation=str,
    )
    return tool


def serve_mcp(settings: Settings) -> None:
    """Serve MCP over stdin/stdout until the client closes it; the store stays open
    meanwhile and is closed after."""
    require_mcp()  # before the store starts
    with open_store(settings) as store:
        build_server(settings, store).run("stdio")
