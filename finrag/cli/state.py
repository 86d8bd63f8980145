"""What the root callback hands to every command: the options and the lazily loaded settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import typer

from finrag.config import Settings, load_settings


@dataclass
class AppState:
    config_file: Path | None = None
    debug: bool = False
    _settings: Settings | None = field(default=None, repr=False)

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = load_settings(self.config_file)
        return self._settings


def app_state(ctx: typer.Context) -> AppState:
    state = ctx.find_object(AppState)
    if state is None:  # a command invoked without the root callback (tests of one group)
        state = ctx.ensure_object(AppState)
    return state
