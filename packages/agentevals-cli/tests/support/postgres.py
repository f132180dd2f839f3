"""A throwaway PostgreSQL server for tests: initdb + pg_ctl in a temporary folder, on 127.0.0.1.

Uses Debian's ``postgresql`` package (``apt-get install postgresql``). Postgres refuses to run as root,
so under root the cluster belongs to the ``postgres`` user (or ``nobody``) and is started with
``runuser``. ``start_postgres`` returns None with the reason when something is missing.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Optional, Union

__all__ = ["PostgresServer", "start_postgres"]


@dataclass
class PostgresServer:
    url: str
    """``postgresql://agentevals@127.0.0.1:PORT/postgres``"""
    datadir: str
    bindir: str
    user: Optional[str]

    def url_for(self, database: str) -> str:
        return self.url.rsplit("/", 1)[0] + "/" + database

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url_for(name)

    def stop(self) -> None:
        _as(self.user, [os.path.join(self.bindir, "pg_ctl"), "-D", self.datadir, "-m", "immediate", "-w", "stop"],
            timeout=30, check=False)
        shutil.rmtree(os.path.dirname(self.datadir), ignore_errors=True)


def _bindir() -> Optional[str]:
    found = shutil.which("initdb")
    if found:
        return os.path.dirname(os.path.realpath(found))
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return os.path.dirname(candidates[-1]) if candidates else None


def _as(user: Optional[str], cmd: list[str], *, timeout: float, check: bool = True) -> subprocess.CompletedProcess:
    if user is not None:
        cmd = ["runuser", "-u", user, "--", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=check)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_was_taken(log: str) -> bool:
    try:
        with open(log) as fh:
            return "Address already in use" in fh.read()
    except OSError:
        return False


def start_postgres() -> Union[PostgresServer, str]:
    """A running server, or the reason there is none."""
    bindir = _bindir()
    if bindir is None:
        return "PostgreSQL is not installed (apt-get install postgresql)"
    user = None
    if os.geteuid() == 0:
        for name in ("postgres", "nobody"):
            try:
                pwd.getpwnam(name)
                user = name
                break
            except KeyError:
                continue
        if user is None or not shutil.which("runuser"):
            return "running as root without a postgres/nobody user and runuser to start PostgreSQL"
    root = tempfile.mkdtemp(prefix="agentevals-pg-")
    datadir = os.path.join(root, "data")
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    try:
        _as(user, [os.path.join(bindir, "initdb"), "-D", datadir, "-A", "trust", "-U", "agentevals",
                   "--no-sync", "-E", "UTF8"], timeout=120)
        # PostgreSQL cannot take port 0: the OS picks a free port, which another process (other test runs
        # share the machine) may take before the server binds it; then it is tried with another.
        for attempt in range(3):
            port = _free_port()
            try:
                _as(user, [os.path.join(bindir, "pg_ctl"), "-D", datadir, "-w", "-t", "60", "-l",
                           os.path.join(root, "log"), "-o",
                           f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off", "start"],
                    timeout=90)
                break
            except subprocess.CalledProcessError:
                if attempt == 2 or not _port_was_taken(os.path.join(root, "log")):
                    raise
    except (subprocess.SubprocessError, OSError) as exc:
        log = ""
        try:
            with open(os.path.join(root, "log")) as fh:
                log = fh.read()[-500:]
        except OSError:
            pass
        shutil.rmtree(root, ignore_errors=True)
        detail = getattr(exc, "stderr", "") or str(exc)
        return f"PostgreSQL did not start: {detail.strip()[-300:]} {log}".strip()
    server = PostgresServer(f"postgresql://agentevals@127.0.0.1:{port}/postgres", datadir, bindir, user)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return server
        except OSError:
            time.sleep(0.2)
    server.stop()
    return "PostgreSQL started but does not accept connections on 127.0.0.1"
