"""Where finrag's shipped data directories (``sql/``, ``prompts/``) are found.

They live at the top of the repository, as the design card lays it out; the wheel
carries them inside the package (``finrag/sql``, ``finrag/prompts``: hatch's
``force-include``). So the package's copy is looked for first (a wheel install), then
the repository root (a clone, or an editable install of one).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from finrag.errors import FinragError

_PACKAGE = Path(__file__).resolve().parent
DATA_DIRS = ("sql", "prompts")


def candidates(name: str) -> list[Path]:
    """The places ``name`` is looked for, in order."""
    return [_PACKAGE / name, _PACKAGE.parent / name]


@cache
def data_dir(name: str) -> Path:
    """The directory holding finrag's ``name`` files (``sql`` or ``prompts``)."""
    if name not in DATA_DIRS:
        raise ValueError(f"{name!r} is not one of finrag's data directories {DATA_DIRS}")
    tried = candidates(name)
    for path in tried:
        if path.is_dir():
            return path
    raise FinragError(
        f"finrag's {name}/ directory is missing: looked in {tried[0]} and {tried[1]}",
        hint="reinstall finrag (the wheel carries it), or run from a full clone of the repository",
    )
