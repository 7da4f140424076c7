"""The toy transport itself: one file per mail in each recipient's folder,
named by the Message-ID's digest, so that a mail sent twice is one letter."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from judge.transports.base import OutgoingMail, Transport, TransportError, no_commit_point


class LetterboxTransport(Transport):
    def __init__(self, settings) -> None:
        self.settings = settings
        self.name = f"letterbox:{settings.path}"

    def describe(self) -> str:
        return f"letterboxes ({self.settings.path})"

    def send(self, mail: OutgoingMail, commit_point: Callable[[], None] = no_commit_point) -> None:
        letter = hashlib.sha256(mail.message_id.encode()).hexdigest() + ".eml"
        for recipient in mail.recipients:
            box = self.settings.path / recipient.lower()
            box.mkdir(parents=True, exist_ok=True)
            if (box / letter).exists():
                continue
            if len(list(box.iterdir())) >= self.settings.limit:
                raise TransportError(f"the letterbox of {recipient} is full", temporary=False)
            (box / letter).write_bytes(mail.raw)


def letters(path, address: str) -> list[bytes]:
    """Every letter in `address`'s box, oldest first."""
    box = path / address.lower()
    files = sorted(box.iterdir(), key=lambda f: (f.stat().st_mtime_ns, f.name)) if box.is_dir() else []
    return [f.read_bytes() for f in files]
