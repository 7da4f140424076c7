"""Engines, sessions and schema upgrades for SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config as AlembicConfig
from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def make_engine(url: str) -> Engine:
    if url.startswith("postgresql://"):
        # psycopg 3 is the driver we ship.
        url = "postgresql+psycopg://" + url[len("postgresql://"):]
    if url.startswith("sqlite"):
        # Wait up to 30 s for another process's write lock, unless the URL
        # says otherwise (sqlite:///judge.sqlite3?timeout=5).
        waits = {} if "timeout" in make_url(url).query else {"timeout": 30}
        engine = create_engine(url, connect_args=waits)

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record):  # pragma: no cover - trivial
            cur = dbapi_conn.cursor()
            # WAL lets `judge log` read while the daemon writes; foreign keys
            # are off by default in SQLite.
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            # FULL, not NORMAL: in WAL mode NORMAL may lose the last commits
            # at a power loss, and a source's mail is acknowledged (the file
            # moved to cur/, the IMAP mail flagged or moved) right after the
            # commit that stores it: a lost commit would lose the mail.
            cur.execute("PRAGMA synchronous=FULL")
            cur.close()

        return engine
    return create_engine(url, pool_pre_ping=True)


def alembic_config(engine: Engine) -> AlembicConfig:
    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["engine"] = engine
    return cfg


def upgrade(engine: Engine) -> None:
    """Bring the schema to the newest migration (idempotent)."""
    command.upgrade(alembic_config(engine), "head")


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)
