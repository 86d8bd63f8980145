"""The embedded server's lifecycle across real processes: sharing, crashes, pinning."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from finrag.db.embedded import EmbeddedServer
from finrag.errors import DatabaseError
from tests.conftest import run_finrag

# A client process: join the server, report, then wait for a file before exiting.
CLIENT = r"""
import pathlib, sys, time
import psycopg
from finrag.db.embedded import EmbeddedServer

home, go, sql = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
server = EmbeddedServer(home)
url = server.acquire()
conn = psycopg.connect(url)
if sql:
    conn.execute(sql)
    if "COMMIT" in sys.argv[4:]:
        conn.commit()
print(server.status().pid, flush=True)
while not go.exists():
    time.sleep(0.02)
"""


def start_client(home: Path, go: Path, sql: str = "", *flags: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", CLIENT, str(home), str(go), sql, *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_ready(proc: subprocess.Popen) -> int:
    line = proc.stdout.readline()
    assert line.strip(), f"client failed: {proc.stderr.read()}"
    return int(line)


def test_two_processes_starting_at_once_share_one_server(home: Path, tmp_path: Path) -> None:
    go = tmp_path / "go"
    first, second = start_client(home, go), start_client(home, go)
    pids = {wait_ready(first), wait_ready(second)}
    assert len(pids) == 1, "both clients must use the same postmaster"

    status = EmbeddedServer(home).status()
    assert status.running
    assert sorted(status.clients) == sorted([first.pid, second.pid])

    go.touch()
    assert first.wait(30) == 0
    assert second.wait(30) == 0
    after = EmbeddedServer(home).status()
    assert not after.running, "the last client to leave stops the server"
    assert after.clients == []


def test_sigkilled_client_is_pruned_and_nothing_is_corrupted(home: Path, tmp_path: Path) -> None:
    go = tmp_path / "go"
    writer = start_client(
        home, go, "CREATE TABLE kept (n int); INSERT INTO kept VALUES (1)", "COMMIT"
    )
    wait_ready(writer)
    # A second client dies in the middle of a transaction it never committed.
    victim = start_client(home, go, "INSERT INTO kept SELECT generate_series(2, 1000)")
    wait_ready(victim)
    writer.send_signal(signal.SIGKILL)
    victim.send_signal(signal.SIGKILL)
    writer.wait(10)
    victim.wait(10)

    server = EmbeddedServer(home)
    assert server.status().clients == [], "dead pids are pruned"

    url = server.acquire()
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT n FROM kept").fetchall()
    assert rows == [(1,)], "committed data survives; the killed transaction left nothing"
    server.release()
    assert not EmbeddedServer(home).status().running, "a clean stop after the crash"


def test_recycled_pid_does_not_count_as_a_client(home: Path) -> None:
    server = EmbeddedServer(home)
    server.start()
    # Our own pid, but with a different start time: a recycled pid, not the old client.
    (home / "pg-clients.json").write_text(
        f'{{"pinned": false, "clients": [{{"pid": {os.getpid()}, "started": 1.0}}]}}'
    )
    assert server.status().clients == []


def test_db_start_keeps_the_server_until_db_stop(home: Path, tmp_path: Path) -> None:
    started = run_finrag("db", "start")
    assert started.returncode == 0, started.stderr

    go = tmp_path / "go"
    client = start_client(home, go)
    wait_ready(client)
    refused = run_finrag("db", "stop")
    assert refused.returncode == 4
    assert f"pids {client.pid}" in refused.stderr
    go.touch()
    assert client.wait(30) == 0
    assert EmbeddedServer(home).status().running, "pinned: the last client does not stop it"

    stopped = run_finrag("db", "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert not EmbeddedServer(home).status().running


def test_stop_force_while_a_client_is_connected(home: Path, tmp_path: Path) -> None:
    go = tmp_path / "go"
    client = start_client(home, go)
    wait_ready(client)
    assert EmbeddedServer(home).stop(force=True)
    go.touch()
    client.wait(30)
    assert not EmbeddedServer(home).status().running


def test_stop_does_not_count_the_calling_process(home: Path) -> None:
    server = EmbeddedServer(home)
    server.acquire()
    other = EmbeddedServer(home)
    # This process is a client itself; only *other* processes block a stop.
    assert other.stop() is True
    server.release()


def test_status_starts_nothing(home: Path) -> None:
    status = EmbeddedServer(home).status()
    assert not status.initialized
    assert not status.running
    assert status.url is None
    assert not (home / "pgdata" / "PG_VERSION").exists()


def test_nonempty_foreign_pgdata_is_refused(home: Path) -> None:
    (home / "pgdata").mkdir(parents=True)
    (home / "pgdata" / "notes.txt").write_text("not a cluster")
    with pytest.raises(DatabaseError, match="holds no PostgreSQL cluster"):
        EmbeddedServer(home).acquire()
    assert (home / "pgdata" / "notes.txt").read_text() == "not a cluster", "nothing lost"


def test_sigterm_releases_the_server(home: Path) -> None:
    """A finrag process stopped with SIGTERM still counts itself out."""
    script = (
        "import signal, sys, time\n"
        "from finrag.cli.app import _terminate\n"
        "signal.signal(signal.SIGTERM, _terminate)\n"
        "from finrag.db.embedded import EmbeddedServer\n"
        f"EmbeddedServer(__import__('pathlib').Path({str(home)!r})).acquire()\n"
        "print('up', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "up"
    proc.terminate()
    proc.wait(30)
    deadline = time.monotonic() + 10
    while EmbeddedServer(home).status().running and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not EmbeddedServer(home).status().running


def test_a_server_whose_clients_were_all_killed_stops_by_itself(home: Path, tmp_path: Path) -> None:
    """The watchdog started with the server: nobody is left to release it."""
    client = start_client(home, tmp_path / "never")
    wait_ready(client)
    server = EmbeddedServer(home)
    assert server.status().running
    client.send_signal(signal.SIGKILL)
    client.wait(10)

    deadline = time.monotonic() + 30  # a hang guard; the watchdog polls every 2 s
    while server.status().running and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not server.status().running, "the server outlived its last client"


def test_the_watchdog_leaves_a_pinned_server_running(home: Path) -> None:
    server = EmbeddedServer(home)
    server.start()
    pid = server.status().pid
    assert pid is not None
    assert server.stop_if_abandoned(pid) is False
    assert server.status().running
