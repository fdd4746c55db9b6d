"""A throwaway PostgreSQL cluster for the tests: initdb into a temporary folder, a free port, stopped at exit.

Debian's `postgresql` package (`.ci/run` installs it) puts the server in /usr/lib/postgresql/<N>/bin.
initdb and postgres refuse to run as root, so as root both run as the `postgres` user the package
creates (`runuser -u postgres`). Each pytest-xdist worker starts its own cluster (one per session,
only when a test asks for it); tests make one database per module. The cluster listens on 127.0.0.1
only, with password (scram) authentication over TCP so URLs carry a real password, and trusts the
owner over its private Unix socket for setup.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

SUPERUSER = "postgres"


class ClusterUnavailable(Exception):
    """No server can be started here; the message says why (tests skip with it)."""


def _bin_dir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).resolve().parent
    raise ClusterUnavailable("PostgreSQL server binaries not found (apt-get install postgresql)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    root: Path
    port: int
    password: str
    bin_dir: Path
    as_user: list[str] = field(default_factory=list)

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, database: str, *, password: str | None = None, user: str = SUPERUSER) -> str:
        """A TCP URL with a password, as a user would type it."""
        secret = self.password if password is None else password
        return f"postgresql://{user}:{secret}@127.0.0.1:{self.port}/{database}"

    def admin_dsn(self, database: str = "postgres") -> str:
        """The owner over the private Unix socket (trusted): for setup and checks, never for the code under test."""
        return f"host={self.root} port={self.port} user={SUPERUSER} dbname={database}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.admin_dsn(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def _run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.as_user, *args], capture_output=True, text=True, timeout=timeout,
                              cwd=self.root, check=False)

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run(str(self.bin_dir / "pg_ctl"), "stop", "-D", str(self.data), "-m", "immediate", "-w", timeout=30)
        shutil.rmtree(self.root, ignore_errors=True)


def start_cluster() -> Cluster:
    """initdb and start a private server; raises ClusterUnavailable with the reason when it cannot."""
    bin_dir = _bin_dir()
    as_user: list[str] = []
    if os.geteuid() == 0:
        runuser = shutil.which("runuser")
        try:
            import pwd

            owner = pwd.getpwnam(SUPERUSER)
        except KeyError:
            raise ClusterUnavailable("running as root and there is no 'postgres' user to run the server") from None
        if runuser is None:
            raise ClusterUnavailable("running as root and runuser is missing")
        as_user = [runuser, "-u", SUPERUSER, "--"]
    root = Path(tempfile.mkdtemp(prefix="ctxi-pg-"))
    if as_user:
        os.chown(root, owner.pw_uid, owner.pw_gid)
    password = secrets.token_urlsafe(12)
    pwfile = root / "pwfile"
    pwfile.write_text(password + "\n")
    if as_user:
        os.chown(pwfile, owner.pw_uid, owner.pw_gid)
    cluster = Cluster(root=root, port=0, password=password, bin_dir=bin_dir, as_user=as_user)
    init = cluster._run(str(bin_dir / "initdb"), "-D", str(cluster.data), "-U", SUPERUSER, "-E", "UTF8",
                        "--no-locale", "--no-sync", "--no-instructions", "--auth-local=trust", "--auth-host=scram-sha-256", f"--pwfile={pwfile}")
    if init.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise ClusterUnavailable(f"initdb failed: {(init.stderr or init.stdout).strip()[-400:]}")
    last_error = ""
    for _ in range(3):  # the free port can be taken between choosing and binding it
        cluster.port = _free_port()
        # fsync off and no autovacuum: a throwaway cluster, and no background writes while tests compare
        options = (f"-p {cluster.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={root} "
                   "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c autovacuum=off "
                   "-c shared_buffers=16MB -c max_connections=30")
        started = cluster._run(str(bin_dir / "pg_ctl"), "start", "-D", str(cluster.data), "-w", "-t", "60",
                               "-l", str(root / "server.log"), "-o", options, timeout=90)
        if started.returncode == 0:
            return cluster
        log = root / "server.log"
        last_error = (log.read_text(errors="replace") if log.exists() else started.stderr)[-400:]
        time.sleep(0.2)
    cluster.stop()
    raise ClusterUnavailable(f"the server did not start: {last_error.strip()}")
