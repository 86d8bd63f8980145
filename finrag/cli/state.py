"""What the root callback hands to every command: the options and the lazily loaded settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer
from pydantic import ValidationError

from finrag.config import Settings, load_settings, with_mode
from finrag.errors import UsageError
from finrag.files import check_home


@dataclass
class AppState:
    config_file: Path | None = None
    debug: bool = False
    _settings: Settings | None = field(default=None, repr=False)

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            settings = load_settings(self.config_file)
            check_home(settings.home)  # a clear settings error, not an OSError mid-command
            self._settings = settings
        return self._settings


def app_state(ctx: typer.Context) -> AppState:
    state = ctx.find_object(AppState)
    if state is None:  # a command invoked without the root callback (tests of one group)
        state = ctx.ensure_object(AppState)
    return state


def with_options(settings: Settings, section: str, **changes: Any) -> Settings:
    """``settings`` with the given command-line options applied to one section,
    validated like the settings file is; options left at None change nothing."""
    changes = {k: v for k, v in changes.items() if v is not None}
    if not changes:
        return settings
    current = getattr(settings, section)
    try:
        updated = type(current).model_validate(current.model_dump() | changes)
    except ValidationError as exc:
        problem = exc.errors()[0]
        raise UsageError(
            f"invalid option --{str(problem['loc'][0]).replace('_', '-')}: {problem['msg']}",
            hint="see the command's --help",
        ) from None
    return settings.model_copy(update={section: updated})


def with_mode_option(settings: Settings, mode: str | None) -> Settings:
    """``settings`` under ``--mode`` (None: as configured); explicit settings stay."""
    return settings if mode is None else with_mode(settings, mode.strip().lower())


def without_model(settings: Settings) -> Settings:
    """--no-llm: answer.use_llm off, and a mode's LLM reranker with it (--mode precise
    --no-llm calls no model); a reranker set explicitly stays, as asked."""
    settings = with_options(settings, "answer", use_llm=False)
    if settings.retrieve.reranker == "llm" and "retrieve.reranker" not in settings.explicit:
        settings = with_options(settings, "retrieve", reranker="none")
    return settings
