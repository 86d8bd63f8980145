"""Which personas exist, by name: the TOML files' stems in ``finrag/personas/``.

On the config floor (it imports nothing of finrag but errors), so that ``config.py`` can
check ``answer.persona`` without importing the personas package, which sits above it
(personas read the KPI definitions of ``facts/``).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from finrag.errors import UsageError

PERSONA_DIR = Path(__file__).with_name("personas")
# A setting or an option may say "off" (or "none") for no persona.
OFF = ("off", "none", "")


def persona_names() -> list[str]:
    """Every persona shipped, by name."""
    return list(_names())


@cache
def _names() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in PERSONA_DIR.glob("*.toml")))


def persona_name(text: str | None) -> str | None:
    """``text`` as a persona's name (case and spaces aside), None for "off"; an unknown
    name is a UsageError listing the personas."""
    if text is None or text.strip().lower() in OFF:
        return None
    name = text.strip().lower()
    names = persona_names()
    if name not in names:
        raise UsageError(
            f"no persona {text.strip()!r}: the personas are {', '.join(names)}",
            hint="e.g. --persona credit; off for none",
        )
    return name
