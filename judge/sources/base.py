"""The contract every inbound mail source fulfils, and what the judge hands
a source beside its settings (a source is a package judge/sources/NAME/,
found through judge/channels.py)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from judge.sources.watermark import WatermarkStore


@dataclass(frozen=True)
class RawMail:
    raw: bytes
    source: str  # the source's name, e.g. "maildir:inbox"
    ref: str  # the source's own handle for ack (e.g. the Maildir file name)
    # Over [limits] max_message_bytes at the source: `raw` holds only the
    # header block, and this is the whole mail's size (checked before the
    # mail is read whole, so a huge mail never fills the memory).
    oversize: int | None = None


@dataclass(frozen=True)
class Intake:
    """What every source is given beside its own settings: the judge's
    limits on inbound mail, and the store's record of how far each source
    has read. A source reads no configuration of its own accord."""

    max_bytes: int  # [limits] max_message_bytes: a larger mail is taken as its header only (RawMail.oversize)
    watermarks: WatermarkStore


class Source(ABC):
    """A queue of raw inbound mails with at-least-once delivery.

    fetch() keeps returning a mail until ack() is called for it, and ack() is
    only called once the raw bytes are stored durably; a crash in between means
    the mail is fetched again, which the store deduplicates by Message-ID.
    """

    name: str

    @abstractmethod
    def fetch(self, limit: int | None = None) -> list[RawMail]:
        """Mails not yet acknowledged, oldest first (at most `limit`)."""

    @abstractmethod
    def ack(self, mail: RawMail) -> None:
        """Mark a fetched mail as done. Idempotent."""

    def progress(self, mail: RawMail, session) -> None:
        """Record, in the caller's transaction (the one that stores the raw
        mail), that `mail` is taken: sources with a watermark in the
        database advance it here, so storing and advancing commit together."""

    def progress_batch(self, mails: Sequence[RawMail], session) -> None:
        """progress() for mails stored together in one transaction, in the
        order fetched; sources with a watermark may write it once."""
        for mail in mails:
            self.progress(mail, session)

    def ack_batch(self, mails: Sequence[RawMail]) -> None:
        """ack() for mails stored together; sources may mark them at once."""
        for mail in mails:
            self.ack(mail)

    def describe(self) -> str:
        """Where the source reads mail, for the daemon's start-up lines
        (never a password)."""
        return self.name

    def close(self) -> None:
        """Release connections or handles; the default has none."""
