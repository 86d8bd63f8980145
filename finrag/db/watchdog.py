"""Stops an embedded server whose clients all died without releasing it.

Started detached by the process that started the server: ``python -m
finrag.db.watchdog HOME POSTMASTER_PID``. Every ``INTERVAL_S`` it prunes dead clients
from the registry under the server's lock, and stops the server when none is left and
``finrag db start`` did not pin it. It ends when that postmaster is gone, so a server
outlives its last client by at most one interval plus its shutdown.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

INTERVAL_S = 2.0


def watch(home: Path, postmaster_pid: int, interval_s: float = INTERVAL_S) -> None:
    from finrag.db.embedded import EmbeddedServer

    server = EmbeddedServer(home)
    while True:
        time.sleep(interval_s)
        if server.stop_if_abandoned(postmaster_pid):
            return


def main(argv: list[str]) -> int:
    try:
        home, pid = Path(argv[0]), int(argv[1])
    except (IndexError, ValueError):
        sys.stderr.write("usage: python -m finrag.db.watchdog HOME POSTMASTER_PID\n")
        return 2
    try:
        watch(home, pid)
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
