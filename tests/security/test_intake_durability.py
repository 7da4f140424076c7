"""A stored mail survives a power loss (issue 9): SQLite ran with
synchronous=NORMAL, which in WAL mode may drop the last commits at a power
loss, while the source had already let the mail go (the Maildir file moved
to cur/, the IMAP mail flagged or moved) right after the commit."""

from __future__ import annotations

from sqlalchemy import text

from judge.store.db import make_engine


def test_every_sqlite_connection_syncs_fully(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'j.sqlite3'}")
    try:
        for _ in range(2):  # a fresh connection and one from the pool
            with engine.connect() as c:
                assert c.execute(text("PRAGMA synchronous")).scalar() == 2  # FULL
                assert c.execute(text("PRAGMA journal_mode")).scalar() == "wal"
    finally:
        engine.dispose()


def test_the_busy_timeout_is_30_s_unless_the_url_says(tmp_path):
    for url, ms in ((f"sqlite:///{tmp_path / 'a.sqlite3'}", 30_000),
                    (f"sqlite:///{tmp_path / 'b.sqlite3'}?timeout=2.5", 2_500)):
        engine = make_engine(url)
        try:
            with engine.connect() as c:
                assert c.execute(text("PRAGMA busy_timeout")).scalar() == ms
        finally:
            engine.dispose()
