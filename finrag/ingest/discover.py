"""Walk the paths given to `finrag ingest` and sort files into what we can parse and what not."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

KINDS = {
    ".pdf": "pdf",
    ".htm": "html",
    ".html": "html",
    ".xhtml": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
}


@dataclass(frozen=True)
class SourceFile:
    path: Path  # absolute
    kind: str  # a value of KINDS
    root: Path  # the folder it was found under: path metadata reads the layout below it


@dataclass(frozen=True)
class Skipped:
    path: Path
    reason: str


def discover(paths: Iterable[Path]) -> tuple[list[SourceFile], list[Skipped]]:
    """Supported files under ``paths`` (sorted, each once) and everything passed over."""
    found: dict[Path, SourceFile] = {}
    skipped: list[Skipped] = []
    for given in paths:
        path = given.expanduser().resolve()
        if not path.exists():
            skipped.append(Skipped(path, "no such file or directory"))
            continue
        if path.is_file():
            candidates: Iterable[Path] = [path]
            root = path.parent
        else:
            root = path
            candidates = sorted(
                p
                for p in path.rglob("*")
                if p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
        for file in candidates:
            kind = KINDS.get(file.suffix.lower())
            if kind is None:
                skipped.append(Skipped(file, f"unsupported file type {file.suffix or '(none)'}"))
            else:
                found.setdefault(file, SourceFile(file, kind, root))
    return sorted(found.values(), key=lambda f: str(f.path)), skipped
