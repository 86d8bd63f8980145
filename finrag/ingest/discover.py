"""Walk the paths given to `finrag ingest` and sort files into what we can parse and what not.

Symbolic links are followed, to files and to folders; a link that cannot be followed (its
target is gone, or it leads back into a folder that contains it) is reported as skipped
with the reason, never silently left out.
"""

from __future__ import annotations

import errno
import os
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


class _Unfollowable(Exception):
    """A symbolic link that leads nowhere: the message says why."""


def discover(paths: Iterable[Path]) -> tuple[list[SourceFile], list[Skipped]]:
    """Supported files under ``paths`` (sorted, each once) and everything passed over."""
    found: dict[Path, SourceFile] = {}
    skipped: list[Skipped] = []
    for given in paths:
        given = given.expanduser().absolute()
        try:
            path = _resolve(given)
        except _Unfollowable as exc:
            skipped.append(Skipped(given, str(exc)))
            continue
        except OSError as exc:
            skipped.append(Skipped(given, (exc.strerror or str(exc)).lower()))
            continue
        if path.is_dir():
            _walk(path, path, {_identity(path): path}, found, skipped)
        else:
            _add(path, path.parent, found, skipped)
    return sorted(found.values(), key=lambda f: str(f.path)), skipped


def _walk(
    folder: Path,
    root: Path,
    ancestors: dict[tuple[int, int], Path],
    found: dict[Path, SourceFile],
    skipped: list[Skipped],
) -> None:
    """Depth first, in name order; ``ancestors`` are the folders that contain ``folder``
    and ``folder`` itself (by device and inode, so a loop is seen however it is spelt)."""
    here = next(reversed(ancestors.values()))  # where ``folder`` really is
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        skipped.append(Skipped(folder, f"cannot read the folder: {exc.strerror}"))
        return
    for entry in entries:
        if entry.name.startswith("."):  # .git, .DS_Store, editors' swap files
            continue
        path = Path(entry.path)
        try:
            link = entry.is_symlink()
            target = _resolve(path) if link else here / entry.name
        except _Unfollowable as exc:
            skipped.append(Skipped(path, str(exc)))
            continue
        except OSError as exc:
            skipped.append(Skipped(path, f"cannot follow the link: {exc.strerror}"))
            continue
        if not target.is_dir():
            _add(path, root, found, skipped)
            continue
        identity = _identity(target)
        # A link to a folder above the walk ('ln -s ../.. up') leads back into it too.
        if identity in ancestors or (link and here.is_relative_to(target)):
            skipped.append(
                Skipped(
                    path, f"symbolic link loop: it leads to {target}, a folder that contains it"
                )
            )
            continue
        _walk(path, root, {**ancestors, identity: target}, found, skipped)


def _add(file: Path, root: Path, found: dict[Path, SourceFile], skipped: list[Skipped]) -> None:
    if not file.is_file():  # a FIFO would block the parser forever; a device, worse
        skipped.append(Skipped(file, "not a regular file"))
        return
    kind = KINDS.get(file.suffix.lower())
    if kind is None:
        skipped.append(Skipped(file, f"unsupported file type {file.suffix or '(none)'}"))
    else:
        found.setdefault(file, SourceFile(file, kind, root))


def _resolve(path: Path) -> Path:
    """Where ``path`` leads, every link followed; _Unfollowable for loops and dangling links."""
    try:
        return path.resolve(strict=True)
    except RuntimeError:  # Python < 3.13 says "Symlink loop" this way
        raise _Unfollowable(f"symbolic link loop: {_chain(path)}") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _Unfollowable(f"symbolic link loop: {_chain(path)}") from None
        if exc.errno == errno.ENOENT and path.is_symlink():
            target = path.parent / path.readlink()
            raise _Unfollowable(f"broken symbolic link: {target} does not exist") from None
        raise


def _chain(path: Path, limit: int = 8) -> str:
    """'a -> b -> a': the links a loop goes through, as far as ``limit``."""
    hops = [str(path)]
    seen = {path}
    while path.is_symlink() and len(hops) <= limit:
        path = path.parent / path.readlink()
        hops.append(str(path))
        if path in seen:
            break
        seen.add(path)
    return " -> ".join(hops)


def _identity(folder: Path) -> tuple[int, int]:
    stat = folder.stat()
    return stat.st_dev, stat.st_ino
