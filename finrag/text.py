"""Text helpers shared by the core."""

from __future__ import annotations


def clip(text: str, limit: int) -> str:
    """Whitespace folded to single spaces, cut to ``limit`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
