"""`judge deliver`'s light path: store one raw mail with the database's own
driver (sqlite3, psycopg), without SQLAlchemy.

The MTA runs `judge deliver` once per mail, so its start-up is paid per mail
(issue 12: at most 0.3 s as a process). SQLAlchemy's import alone costs
about 0.17 s (its ORM 0.28 s), so the one row a delivered mail needs is
written here with the DB-API: the very row Judge.receive() writes through
the store's InboundMessage model (the same columns and values, the same
dedup by (Message-ID, From key); tests/test_deliver_light.py compares the
two rows on SQLite and PostgreSQL).

Only a store whose schema is at the code's newest migration is written
here. Anything else (a new or older database, a URL or driver option this
module does not read) raises FullPathNeeded before anything is written, and
the caller takes the full path (judge.app.build_judge, which migrates).
Faults of the database itself (locked, unreachable) are raised as they
are: the caller asks the MTA to retry.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime, timezone
from pathlib import Path

from judge.config import Config
from judge.mail.inbound import dedup_key_of
from judge.store.revisions import head_revisions  # stdlib only, as the store reads them

log = logging.getLogger(__name__)

SOURCE = "deliver"  # inbound_messages.source of a piped mail, as Judge.receive(raw, "deliver") writes it
# The engine's SQLite busy timeout (judge.store.db.make_engine), unless the
# URL sets ?timeout=.
SQLITE_TIMEOUT = 30.0


class FullPathNeeded(Exception):
    """This store is not for the light path (nothing was written)."""


# -- the URL ----------------------------------------------------------------
_USERINFO_PASSWORD = re.compile(r"^([\w+]+://[^:/@]*):.*@")
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&]*")


def shown_url(url: str) -> str:
    """The database URL for a log line, its password hidden, as SQLAlchemy's
    render_as_string(hide_password=True) shows it for an ordinary URL. When
    in doubt more is hidden, never less (up to the last '@'; also a
    password= parameter)."""
    return _QUERY_PASSWORD.sub(r"\1***", _USERINFO_PASSWORD.sub(r"\1:***@", url))


def _sqlite_target(url: str) -> tuple[str, float]:
    """(path, busy timeout) of a plain sqlite:///PATH[?timeout=N] URL."""
    if not url.startswith("sqlite:///"):
        raise FullPathNeeded(f"not a plain SQLite file URL: {shown_url(url)}")
    path, _, query = url[len("sqlite:///"):].partition("?")
    timeout = SQLITE_TIMEOUT
    for item in filter(None, query.split("&")):
        key, _, value = item.partition("=")
        if key != "timeout":
            raise FullPathNeeded(f"SQLite option {key!r} is the full path's")
        try:
            timeout = float(value)
        except ValueError:
            raise FullPathNeeded(f"SQLite timeout {value!r}") from None
    if not path or "%" in path:
        raise FullPathNeeded("in-memory or percent-encoded SQLite path")
    return path, timeout


# -- storing ----------------------------------------------------------------
def store(config: Config, raw: bytes, oversize: int | None) -> tuple[int | None, str]:
    """Store the mail as Judge.receive(raw, "deliver", oversize=oversize)
    does: (its row's id, or None if that Message-ID from that sender is
    stored already; its Message-ID). FullPathNeeded if this store is not
    for the light path."""
    url = config.database_url
    message_id, from_key = dedup_key_of(raw)
    heads = head_revisions()
    if heads is None:
        raise FullPathNeeded("the migrations' revisions could not be read")
    # The store's UTCDateTime: naive UTC.
    row = {"source": SOURCE, "message_id": message_id, "from_key": from_key, "raw": raw,
           "received_at": datetime.now(timezone.utc).replace(tzinfo=None), "status": "new",
           "authenticated": False, "oversize": oversize}
    if url.startswith("sqlite"):
        stored = _store_sqlite(url, heads, row)
    elif url.startswith(("postgresql://", "postgresql+psycopg://")):
        stored = _store_postgresql(url, heads, row)
    else:
        raise FullPathNeeded(f"no light path for {shown_url(url)}")
    if stored is None:
        log.info("duplicate %s from %s dropped", message_id, SOURCE)
    return stored, message_id


_COLUMNS = ("source", "message_id", "from_key", "raw", "received_at", "status", "authenticated", "oversize")


def _store_sqlite(url: str, heads: set[str], row: dict) -> int | None:
    import sqlite3
    from urllib.parse import quote

    path, timeout = _sqlite_target(url)
    try:
        # mode=rw: a missing file is not created here (the full path creates
        # and migrates it).
        conn = sqlite3.connect(f"file:{quote(path)}?mode=rw", uri=True, timeout=timeout, isolation_level=None)
    except sqlite3.OperationalError as err:
        if not Path(path).exists():
            raise FullPathNeeded(f"no database file yet at {path}") from err
        raise
    try:
        # As the engine's connections (judge.store.db.make_engine): the
        # commit is on disk before deliver exits 0 and the MTA drops the mail.
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            if _sqlite_revisions(conn) != heads:
                raise FullPathNeeded("the schema is not at the newest migration")
            if conn.execute("SELECT 1 FROM inbound_messages WHERE message_id = ? AND from_key = ?",
                            (row["message_id"], row["from_key"])).fetchone():
                conn.execute("ROLLBACK")
                return None
            values = {**row, "received_at": row["received_at"].strftime("%Y-%m-%d %H:%M:%S.%f"),
                      "authenticated": int(row["authenticated"])}
            cur = conn.execute(f"INSERT INTO inbound_messages ({', '.join(_COLUMNS)}) "
                               f"VALUES ({', '.join('?' * len(_COLUMNS))})", [values[c] for c in _COLUMNS])
            stored = cur.lastrowid
            conn.execute("COMMIT")
            return stored
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    finally:
        conn.close()


def _sqlite_revisions(conn) -> set[str]:
    import sqlite3

    try:
        return {r[0] for r in conn.execute("SELECT version_num FROM alembic_version")}
    except sqlite3.OperationalError:  # no such table: a database never migrated
        return set()


def _store_postgresql(url: str, heads: set[str], row: dict) -> int | None:
    import psycopg

    conninfo = "postgresql://" + url.split("://", 1)[1]
    try:
        conn = psycopg.connect(conninfo)
    except psycopg.ProgrammingError as err:  # a URL libpq does not read as SQLAlchemy does
        raise FullPathNeeded(f"libpq cannot read {shown_url(url)}") from err
    try:
        with conn.transaction():
            try:
                with conn.transaction():  # a savepoint: a missing table leaves the transaction usable
                    revisions = {r[0] for r in conn.execute("SELECT version_num FROM alembic_version")}
            except psycopg.errors.UndefinedTable:
                revisions = set()
            if revisions != heads:
                raise FullPathNeeded("the schema is not at the newest migration")
            if conn.execute("SELECT 1 FROM inbound_messages WHERE message_id = %s AND from_key = %s",
                            (row["message_id"], row["from_key"])).fetchone():
                return None
            try:
                with conn.transaction():
                    return conn.execute(f"INSERT INTO inbound_messages ({', '.join(_COLUMNS)}) "
                                        f"VALUES ({', '.join(['%s'] * len(_COLUMNS))}) RETURNING id",
                                        [row[c] for c in _COLUMNS]).fetchone()[0]
            except psycopg.errors.UniqueViolation:  # another process stored it first
                return None
    finally:
        conn.close()
