"""The chat REPL's slash commands: /sources, /trace, /filters, /reset, /kpi, /help, /quit."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.text import Text

from finrag.agent.session import ChatSession
from finrag.cli.ask_cmd import print_citations
from finrag.cli.kpi_cmd import chat_kpi
from finrag.cli.render import out, print_error
from finrag.errors import FinragError

HELP = """Commands:
  /sources   citations of the last answer, with quotes
  /trace     the last turn's path through the graph, with timings and tokens
  /filters   the filters the last question set (company, year, quarter, form)
  /reset     forget this conversation and start over
  /kpi       KPIs by period from the facts store: /kpi AAPL [--kpi gross_margin] [--years 2022-2024]
  /help      this list
  /quit      leave (Ctrl-D works too; Ctrl-C cancels an answer, not the session)"""


def run_command(chat: ChatSession, line: str, *, as_json: bool) -> str | None:
    name = line.split()[0].lower()
    last = chat.last
    data: Any
    if name in ("/quit", "/exit", "/q"):
        return "quit"
    if name == "/help":
        data = HELP
    elif name == "/reset":
        chat.reset()
        data = "conversation reset"
    elif name == "/kpi":
        try:
            data = chat_kpi(chat.store, line, as_json=as_json)
        except FinragError as exc:  # a typo in a command costs the command, not the session
            print_error(exc.message, exc.hint)
            return None
        if data is None:  # printed already
            return None
    elif last is None:
        data = "nothing asked yet"
    elif name == "/sources":
        data = [c.as_dict() for c in last.citations]
    elif name == "/trace":
        data = last.trace
    elif name == "/filters":
        data = last.filters
    else:
        data = f"unknown command {name}; /help lists them"
    if as_json:
        sys.stdout.write(json.dumps({"command": name, "result": data}, default=str) + "\n")
        sys.stdout.flush()
        return None
    if isinstance(data, str):
        out.print(Text(data))
    elif name == "/sources":
        print_citations(last.citations) if last.citations else out.print("no citations")
    elif name == "/trace":
        for step in data["steps"]:
            tokens = step["tokens"]
            out.print(
                Text(
                    f"{step['node']:<14} {step['ms'] / 1000:7.2f} s  {tokens['prompt']:>6} in "
                    f"{tokens['completion']:>5} out  {step['out']}"
                )
            )
    else:
        out.print(Text(json.dumps(data, indent=2, default=str)))
    return None
