"""finrag's own files: its home checked before use, and what it writes there kept private.

Parsed filings, exported models and caches are the user's business: folders finrag
creates are 0700 and files 0600 whatever the umask, as XDG asks of data directories.
Folders that already exist are left as they are: finrag never changes the mode of a
directory it did not create.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

from finrag.errors import ConfigError

DIR_MODE = 0o700
FILE_MODE = 0o600
_HOME_HINT = "set FINRAG_HOME (or `home` in the config file) to a directory finrag may write"


def private_dir(path: Path) -> Path:
    """``path`` as a directory, creating it and any missing parents 0700."""
    missing = []
    for folder in (path, *path.parents):
        if folder.is_dir():
            break
        missing.append(folder)
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            if not folder.is_dir():
                raise
            continue  # another process made it meanwhile: it is theirs to have set up
        folder.chmod(DIR_MODE)  # mkdir's mode passes through the umask
    return path


def open_private(path: Path, mode: str = "w", **kwargs: Any) -> IO[Any]:
    """``open(path, mode)`` for a new file (write modes only), created 0600."""
    if not mode.startswith(("w", "x")):
        raise ValueError(f"open_private creates files; mode {mode!r} does not")
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if mode.startswith("x") else os.O_TRUNC)
    fd = os.open(path, flags, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)  # a file that was there keeps its mode through O_TRUNC
        return os.fdopen(fd, mode.replace("x", "w"), **kwargs)
    except BaseException:
        os.close(fd)
        raise


def check_home(home: Path) -> None:
    """Raise ``ConfigError`` unless finrag can use ``home``: an existing directory it may
    write, or a path whose nearest existing folder it may write (nothing is created)."""
    path = home
    try:
        while not path.exists() and path.parent != path:
            path = path.parent
        is_dir = path.is_dir()
    except OSError as exc:
        raise ConfigError(
            f"finrag's home {home} cannot be reached: {exc.strerror}", hint=_HOME_HINT
        ) from None
    if not is_dir:
        where = "is a file" if path == home else f"is inside {path}, which is a file"
        raise ConfigError(f"finrag's home {home} {where}, not a directory", hint=_HOME_HINT)
    if not os.access(path, os.W_OK | os.X_OK):
        where = "is" if path == home else f"would be created in {path}, which is"
        raise ConfigError(f"finrag's home {home} {where} not writable", hint=_HOME_HINT)
