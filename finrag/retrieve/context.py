"""How retrieved chunks are laid out for a language model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def order_for_context(ranked: Sequence[T]) -> list[T]:
    """Strongest at both ends, weakest in the middle: models read the start and the end
    of a long context best ("lost in the middle", Liu et al. 2023).

    Ranks 1..6 become 1, 3, 5, 6, 4, 2.
    """
    front = list(ranked[0::2])
    back = list(ranked[1::2])
    return front + back[::-1]
