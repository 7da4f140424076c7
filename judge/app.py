"""Wiring: a Config becomes a running Judge (store, sources, transport)."""

from __future__ import annotations

from judge.clock import Clock, SystemClock
from judge.config import Config
from judge.daemon import Judge
from judge.sources.maildir import MaildirSource
from judge.store.db import make_engine, session_factory, upgrade
from judge.transports.base import Transport
from judge.transports.maildir import MaildirTransport
from judge.transports.smtp import SmtpTransport


def make_transport(config: Config) -> Transport:
    if config.transport == "smtp":
        return SmtpTransport(config.smtp)
    return MaildirTransport(config.outbox_path)


def make_source(config: Config, judge: Judge):
    if config.inbox_type == "imap":
        from judge.sources.imap import ImapSource
        from judge.sources.watermark import WatermarkStore

        return ImapSource(config.imap, WatermarkStore(judge.sessions), max_bytes=config.max_message_bytes)
    return MaildirSource(config.inbox_path, name="maildir:inbox", max_bytes=config.max_message_bytes)


def build_judge(config: Config, clock: Clock | None = None, *, with_io: bool = True) -> Judge:
    """Open (and upgrade) the store; with_io adds the configured source and transport."""
    config.data_dir.mkdir(parents=True, exist_ok=True)
    engine = make_engine(config.database_url)
    upgrade(engine)
    judge = Judge(config=config, sessions=session_factory(engine), clock=clock or SystemClock())
    if with_io:
        judge.sources = [make_source(config, judge)]
        judge.transport = make_transport(config)
        if config.forum is not None:
            # A Discourse forum: its posts are read as mail, and replies to
            # forum players are posted in their topics.
            from judge.sources.discourse import DiscourseSource
            from judge.sources.watermark import WatermarkStore
            from judge.transports.discourse import CompositeTransport, DiscourseTransport

            judge.sources.append(DiscourseSource(config.forum, WatermarkStore(judge.sessions)))
            judge.transport = CompositeTransport([DiscourseTransport(config.forum), judge.transport])
    return judge
