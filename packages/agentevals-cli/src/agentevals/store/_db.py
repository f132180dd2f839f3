"""The two databases behind the run store, one schema: SQLite (stdlib) by default, Postgres by URL.

SQL is written once with ``?`` placeholders; the Postgres connection rewrites them to ``%s``.
Migrations are numbered SQL scripts applied in order and recorded in ``schema_migrations``; SQLite
applies them when opened, Postgres only on ``agentevals store migrate`` (a shared database is
upgraded on purpose, not by whichever CI job runs first).
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional

from ..core.redact import redact_url
from ..errors import MissingDependencyError, StoreError

__all__ = ["MIGRATIONS", "Database", "connect", "sqlite_path"]

MIGRATIONS: list[tuple[int, str, list[str]]] = [
    (1, "runs, cases, metric results", [
        """CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            status TEXT NOT NULL,
            command TEXT NOT NULL,
            cwd TEXT,
            config_digest TEXT,
            eval_set_digest TEXT,
            versions TEXT NOT NULL,
            options TEXT NOT NULL,
            totals TEXT,
            exit_code INTEGER,
            run_json TEXT
        )""",
        "CREATE INDEX runs_started ON runs (started_at)",
        """CREATE TABLE cases (
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            case_id TEXT NOT NULL,
            status TEXT NOT NULL,
            case_json TEXT NOT NULL,
            PRIMARY KEY (run_id, idx)
        )""",
        """CREATE TABLE metric_results (
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            pos INTEGER NOT NULL,
            case_id TEXT NOT NULL,
            evaluator TEXT NOT NULL,
            metric TEXT NOT NULL,
            status TEXT NOT NULL,
            score DOUBLE PRECISION,
            work_key TEXT,
            metric_json TEXT NOT NULL,
            PRIMARY KEY (run_id, idx, pos)
        )""",
        "CREATE INDEX metric_results_key ON metric_results (work_key)",
    ]),
    (2, "cases by case id (serve replaces a re-evaluated session's case)", [
        "CREATE INDEX cases_case_id ON cases (run_id, case_id)",
    ]),
    (3, "the pull sources each run read and their windows (--since last, --resume of sourced runs)", [
        """CREATE TABLE run_sources (
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            pos INTEGER NOT NULL,
            uri TEXT NOT NULL,
            source_key TEXT NOT NULL,
            window_start TEXT NOT NULL,
            window_end TEXT NOT NULL,
            traces INTEGER NOT NULL,
            newest TEXT,
            error TEXT,
            PRIMARY KEY (run_id, pos)
        )""",
        "CREATE INDEX run_sources_key ON run_sources (source_key)",
    ]),
    (4, "the trace ids of each stored case (serve --pull de-duplicates, run --unscored backfills)", [
        """CREATE TABLE case_traces (
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            trace_id TEXT NOT NULL,
            PRIMARY KEY (run_id, idx, trace_id)
        )""",
        "CREATE INDEX case_traces_trace ON case_traces (trace_id)",
    ]),
    (5, "human labels of stored cases and metrics (agentevals labels)", [
        """CREATE TABLE labels (
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            case_id TEXT NOT NULL,
            metric TEXT,
            verdict TEXT,
            score DOUBLE PRECISION,
            note TEXT,
            labeler TEXT,
            created_at TEXT NOT NULL
        )""",
        # One label per (case, metric, labeler): labelling again replaces (NULL metric = the whole case).
        "CREATE UNIQUE INDEX labels_one ON labels (run_id, idx, COALESCE(metric, ''), COALESCE(labeler, ''))",
    ]),
    (6, "input files' digests by stat (a rerun of unchanged files does not read them; store._digests)", [
        """CREATE TABLE file_digests (
            path TEXT PRIMARY KEY,
            size BIGINT NOT NULL,
            mtime_ns BIGINT NOT NULL,
            ctime_ns BIGINT NOT NULL,
            inode TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            hashed_ns BIGINT NOT NULL
        )""",
    ]),
    (7, "each input file's key and the cases it made (a rerun takes an unchanged file's cases; store._perfile)", [
        """CREATE TABLE run_files (
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            pos INTEGER NOT NULL,
            file_key TEXT NOT NULL,
            first_idx INTEGER NOT NULL,
            cases INTEGER NOT NULL,
            sessions INTEGER NOT NULL,
            PRIMARY KEY (run_id, pos)
        )""",
        "CREATE INDEX run_files_key ON run_files (file_key)",
    ]),
    (8, "each input file's session ids (a rerun takes a file with session ids that no other file shares)", [
        "ALTER TABLE run_files ADD COLUMN session_ids TEXT",
    ]),
]
"""(version, what it adds, statements). Append; never edit a released entry."""

SCHEMA_VERSION = MIGRATIONS[-1][0]


class Database:
    """A DB-API connection with ``?`` placeholders on both backends.

    Safe to share between threads (``serve`` writes live results on its evaluation thread while the API
    reads on others): each statement, and each transaction as a whole, holds the connection's lock.
    """

    kind: str = "sqlite"

    def __init__(self, conn: Any, location: str) -> None:
        self.conn = conn
        self.location = location
        self.lock = threading.RLock()

    def _sql(self, sql: str) -> str:
        return sql

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.lock:
            cur = self.conn.cursor()
            try:
                cur.execute(self._sql(sql), tuple(params))
                return list(cur.fetchall()) if cur.description else []
            finally:
                cur.close()

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            with self.lock:
                cur = self.conn.cursor()
                try:
                    cur.executemany(self._sql(sql), [tuple(r) for r in rows])
                finally:
                    cur.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.lock:
            try:
                yield
                self.conn.commit()
            except BaseException:
                self.conn.rollback()
                raise

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    # Migrations -----------------------------------------------------------------------------------
    def schema_version(self) -> int:
        """The highest applied migration (0 for an empty database)."""
        if not self._has_table("schema_migrations"):
            return 0
        rows = self.execute("SELECT MAX(version) FROM schema_migrations")
        return int(rows[0][0] or 0)

    def migrate(self) -> list[int]:
        """Apply every pending migration; returns the versions applied.

        Raises ``StoreError`` when the store is at a newer schema than this agentevals knows.
        """
        applied = []
        with self.transaction():
            self.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                         "description TEXT NOT NULL, applied_at TEXT NOT NULL)")
        current = self.schema_version()
        self.check_not_newer(current)
        for version, description, statements in MIGRATIONS:
            if version <= current:
                continue
            with self.transaction():
                for statement in statements:
                    self.execute(statement)
                self.execute("INSERT INTO schema_migrations (version, description, applied_at) VALUES (?, ?, ?)",
                             (version, description, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
            applied.append(version)
        return applied

    def check_not_newer(self, version: Optional[int] = None) -> None:
        """Raise ``StoreError`` when the store was written by a newer agentevals (a schema this one does not
        know: reading or writing it could misread or corrupt what the newer version stored)."""
        version = self.schema_version() if version is None else version
        if version > SCHEMA_VERSION:
            raise StoreError(f"run store {redact_url(self.location)} is at schema version {version}, written by a "
                             f"newer agentevals; this agentevals knows up to version {SCHEMA_VERSION}: upgrade "
                             "agentevals-cli (or use another --store)")

    def _has_table(self, name: str) -> bool:
        rows = self.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
        return bool(rows)


class PostgresDatabase(Database):
    """Postgres in autocommit mode with explicit transactions: a long-lived reader (``serve``'s API)
    never sits "idle in transaction" between requests (which servers may cut off)."""

    kind = "postgres"

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.lock, self.conn.transaction():
            yield

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s")

    def _has_table(self, name: str) -> bool:
        rows = self.execute("SELECT to_regclass(?)::text", (name,))
        return bool(rows and rows[0][0])


POSTGRES_SCHEMES = ("postgresql", "postgres")
SQLITE_SCHEMES = ("sqlite",)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def sqlite_path(location: str) -> Optional[Path]:
    """The SQLite file ``location`` names (a path, or ``sqlite:///PATH``), None for a Postgres URL.

    Raises ``StoreError`` for any other URL scheme (``mysql://…``): without that, it would become a local
    folder named after the URL, password included. The message names the scheme only, never the URL.

        sqlite_path("runs.sqlite")               # Path("runs.sqlite")
        sqlite_path("sqlite:////tmp/runs.db")    # Path("/tmp/runs.db")
        sqlite_path("postgresql://u@h/db")       # None
    """
    match = _SCHEME.match(location)
    # One letter before ':' is a Windows drive (C://runs.sqlite), not a scheme.
    if match is None or len(match.group(1)) == 1:
        return Path(location).expanduser()
    scheme, rest = match.group(1).lower(), location[match.end():]
    if scheme in POSTGRES_SCHEMES:
        return None
    # As SQLAlchemy reads it: sqlite:///runs.db is relative, sqlite:////tmp/runs.db absolute.
    if scheme in SQLITE_SCHEMES and rest.startswith("/") and len(rest) > 1:
        return Path(rest[1:]).expanduser()
    raise StoreError(f"run store: unsupported location scheme {scheme!r}: use a file path, sqlite:///PATH, "
                     "or postgresql://USER@HOST/DB")


def connect(location: str, *, migrate: Optional[bool] = None, timeout: float = 10.0) -> Database:
    """Open the store at ``location``: a file path or ``sqlite:///PATH`` (SQLite), or a ``postgresql://``
    (``postgres://``) URL; any other scheme is refused (``sqlite_path``).

    ``migrate``: apply pending migrations (default: yes for SQLite, no for Postgres, which then must
    already be at the current schema). A store at a newer schema than this agentevals knows is refused.
    Raises ``StoreError`` with the location and the cause.
    """
    path = sqlite_path(location)
    if path is None:
        db: Database = _connect_postgres(location, timeout)
        do_migrate = bool(migrate)
    else:
        db = _connect_sqlite(path, timeout)
        do_migrate = migrate is not False
    try:
        if do_migrate:
            db.migrate()
        elif migrate is None:
            version = db.schema_version()
            db.check_not_newer(version)
            if version < SCHEMA_VERSION:
                raise StoreError(f"run store {redact_url(location)} is at schema version {version}, "
                                 f"this agentevals needs {SCHEMA_VERSION}: run 'agentevals store migrate --store URL'")
    except StoreError:
        db.close()
        raise
    except Exception as exc:
        db.close()
        raise StoreError(f"run store {redact_url(location)}: {type(exc).__name__}: {str(exc).strip()}") from None
    return db


def _connect_sqlite(path: Path, timeout: float) -> Database:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), timeout=timeout, check_same_thread=False)  # see Database
        # WAL: readers (``runs list`` in another terminal) never block the run writing case by case.
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"run store {path}: cannot open: {exc} (use --store PATH or --no-store)") from None
    return Database(conn, str(path))


def _connect_postgres(url: str, timeout: float) -> Database:
    try:
        import psycopg
    except ImportError:
        raise MissingDependencyError("a postgresql:// run store", "postgres") from None
    try:
        conn = psycopg.connect(url, connect_timeout=max(1, int(timeout)), autocommit=True)
    except psycopg.Error as exc:
        raise StoreError(f"run store {redact_url(url)}: cannot connect: {str(exc).strip().splitlines()[0]}") from None
    return PostgresDatabase(conn, url)
