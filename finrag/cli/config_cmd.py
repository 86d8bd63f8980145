"""`finrag config`: what finrag will use, and where each value came from."""

from __future__ import annotations

from typing import Annotated

import typer
from pydantic import SecretStr

from finrag.cli.conventions import setting_words
from finrag.cli.render import print_json, print_table
from finrag.cli.state import app_state
from finrag.config import explain_settings, resolve_config_file
from finrag.db.connection import redact

app = typer.Typer(help="Show settings.", no_args_is_help=True)


def _display(value: object) -> object:
    if isinstance(value, SecretStr):
        secret = value.get_secret_value()
        # A URL shows all but its password; any other secret (serve.token) shows nothing.
        return redact(secret) if "://" in secret else "***"
    return value


@app.command("show")
def show(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Print every effective setting and its source (default, file, env)."""
    state = app_state(ctx)
    rows = explain_settings(state.settings, state.config_file)
    path, _ = resolve_config_file(state.config_file)
    if as_json:
        print_json(
            {
                "config_file": str(path),
                "config_file_exists": path.is_file(),
                "settings": {r.key: {"value": _display(r.value), "source": r.source} for r in rows},
            }
        )
        return
    print_table(
        ["setting", "value", "source"],
        ([r.key, setting_words(_display(r.value)), r.source] for r in rows),
        title=f"config file: {path}{'' if path.is_file() else ' (absent)'}",
    )
