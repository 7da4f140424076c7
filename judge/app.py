"""Wiring: a Config becomes a running Judge (store, sources, transport).

The mail channels are those the configuration names, found by name in
judge/channels.py, each opened with the settings it read from its own
table: this module names none of them.
"""

from __future__ import annotations

from sqlalchemy import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, OperationalError

from judge import channels
from judge.clock import Clock, SystemClock
from judge.config import Config
from judge.daemon import Judge
from judge.sources.base import Intake, Source
from judge.store.db import make_engine, session_factory, upgrade
from judge.transports.base import Transport
from judge.transports.composite import CompositeTransport


def make_transport(config: Config, name: str | None = None) -> Transport:
    """The transport `name` ([outbox] transport by default), with its settings."""
    name = name or config.transport
    return channels.transport(name).open_transport(config.part(f"transports.{name}"))


def make_source(config: Config, judge: Judge, name: str | None = None) -> Source:
    """The source `name` ([inbox] type by default), with its settings."""
    from judge.sources.watermark import WatermarkStore

    name = name or config.inbox_type
    intake = Intake(max_bytes=config.max_message_bytes, watermarks=WatermarkStore(judge.sessions))
    return channels.source(name).open_source(config.part(f"sources.{name}"), intake)


def build_judge(config: Config, clock: Clock | None = None, *, with_io: bool = True) -> Judge:
    """Open (and upgrade) the store; with_io adds the configured sources and transport."""
    config.data_dir.mkdir(parents=True, exist_ok=True)
    engine = make_engine(config.database_url)
    upgrade(engine)
    judge = Judge(config=config, sessions=session_factory(engine), clock=clock or SystemClock())
    if with_io:
        judge.sources = [make_source(config, judge)]
        judge.transport = make_transport(config)
        if config.forum_type is not None:
            # A forum: its posts are read as mail, and what goes to its
            # players is posted there; the rest goes by the mail transport.
            judge.sources.append(make_source(config, judge, config.forum_type))
            judge.transport = CompositeTransport([make_transport(config, config.forum_type), judge.transport])
    return judge


# SQLite faults that pass: another process holds the lock, the disk is full
# or failing. Any other (cannot open, read-only, not a database) needs the
# administrator.
_SQLITE_TEMPORARY = ("SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_FULL", "SQLITE_IOERR", "SQLITE_NOMEM")
# PostgreSQL's answers that no retry changes (libpq gives no SQLSTATE for a
# failed connection, only its message).
_PG_CONFIG = ("does not exist", "authentication failed", "no pg_hba.conf entry")


def start_failure(err: BaseException, config: Config) -> tuple[bool, str] | None:
    """(temporary, one line for the administrator) if `err`, raised while
    the judge starts, is its environment's fault: temporary (the database
    locked or unreachable: start again later) or the configuration's (the
    data directory not writable, a database URL that cannot work). None for
    anything else: a bug, whose traceback should be seen."""
    try:
        where = make_url(config.database_url).render_as_string(hide_password=True)
    except ArgumentError:
        where = "(unparsable URL)"
    if isinstance(err, OSError):  # a folder of the data directory, a Maildir, ...
        return False, f"cannot use {err.filename}: {err.strerror}" if err.filename else f"cannot start: {err}"
    if isinstance(err, (ArgumentError, NoSuchModuleError)):
        return False, f"unusable database URL {where}: {err}"
    if not isinstance(err, DBAPIError):
        return None
    orig = err.orig
    reason = (str(orig).strip().splitlines() or [type(orig).__name__])[0]
    name = getattr(orig, "sqlite_errorname", None)
    if name is not None:
        temporary = name.startswith(_SQLITE_TEMPORARY)
        hint = "" if temporary else f" (is the data directory {config.data_dir} writable?)"
        return temporary, f"cannot use the database {where}: {reason}{hint}"
    if not isinstance(err, OperationalError):
        return None  # PostgreSQL refused a statement: a bug, not the environment
    temporary = not any(text in str(orig) for text in _PG_CONFIG)
    return temporary, f"cannot use the database {where}: {reason}"
