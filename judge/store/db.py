"""Engines, sessions and schema upgrades for SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, create_engine, event, inspect, make_url, text
from sqlalchemy.orm import Session, sessionmaker

from judge.store.revisions import head_revisions  # noqa: F401  (also for the tests: one reading of the migrations)

if TYPE_CHECKING:
    from alembic.config import Config as AlembicConfig

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
    from alembic.config import Config as AlembicConfig

    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["engine"] = engine
    return cfg


def upgrade(engine: Engine) -> None:
    """Bring the schema to the newest migration (idempotent)."""
    # Every `judge deliver` opens the store: when it is at the newest
    # migration already (nearly always), alembic's import and its run of
    # env.py (a sixth of a second) are not paid.
    heads = head_revisions()
    if heads is not None and current_revisions(engine) == heads:
        return
    from alembic import command

    command.upgrade(alembic_config(engine), "head")


def current_revisions(engine: Engine) -> set[str]:
    """The migrations the database is at (none for a new database)."""
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return set()
        return {row[0] for row in conn.execute(text("SELECT version_num FROM alembic_version"))}


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)
