"""`finrag config`: what finrag will use, and where each value came from."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

import typer
from pydantic import SecretStr

from finrag.cli.conventions import setting_words
from finrag.cli.options import ModeOption
from finrag.cli.render import print_json, print_table
from finrag.cli.state import app_state, with_mode_option
from finrag.config import MODES, explain_settings, resolve_config_file
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
    mode: ModeOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Print every effective setting and its source (default, file, env, or the mode
    (answer.mode) that set it); --mode shows what another mode would set."""
    state = app_state(ctx)
    settings = with_mode_option(state.settings, mode)
    rows = [
        replace(r, source="flag --mode") if mode and r.key == "answer.mode" else r
        for r in explain_settings(settings, state.config_file)
    ]
    path, _ = resolve_config_file(state.config_file)
    chosen = settings.answer.mode
    # What the mode would set and what an explicit setting keeps as given.
    preset = {
        key: {"value": value, "applied": key not in settings.explicit}
        for key, value in MODES[chosen].items()
    }
    if as_json:
        print_json(
            {
                "config_file": str(path),
                "config_file_exists": path.is_file(),
                "mode": chosen,
                "mode_sets": preset,
                "settings": {r.key: {"value": _display(r.value), "source": r.source} for r in rows},
            }
        )
        return
    sets = ", ".join(
        f"{key} = {setting_words(p['value'])}" + ("" if p["applied"] else " (set explicitly: kept)")
        for key, p in preset.items()
    )
    print_table(
        ["setting", "value", "source"],
        ([r.key, setting_words(_display(r.value)), r.source] for r in rows),
        title=f"config file: {path}{'' if path.is_file() else ' (absent)'}",
        caption=f"mode {chosen} sets: {sets or 'nothing (the defaults)'}",
    )
