"""Where inbound mail comes from: a Source hands out raw mails and is told (ack)
when each one is safely stored, so nothing is lost if the daemon dies between."""

from judge.sources.base import RawMail, Source

__all__ = ["RawMail", "Source"]
