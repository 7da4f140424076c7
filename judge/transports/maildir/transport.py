"""Outgoing mail delivered into a Maildir instead of the network.

Used for tests, dry runs and sites that hand mail to the MTA by other means.
The file name is derived from the Message-ID, so sending the same mail twice
(a retry after a crash) leaves exactly one copy.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path
from typing import Callable

from judge.sources.maildir import ensure_maildir
from judge.transports.base import OutgoingMail, Transport, TransportError, no_commit_point


def message_file_name(message_id: str) -> str:
    """The Maildir file name a message with this Message-ID is stored under."""
    return hashlib.sha256(message_id.encode("utf-8", "surrogatepass")).hexdigest() + ".judge"


class MaildirTransport(Transport):
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.name = f"maildir:{self.path}"
        ensure_maildir(self.path)

    def describe(self) -> str:
        return f"maildir ({self.path})"

    def _already_there(self, file_name: str) -> bool:
        if (self.path / "new" / file_name).exists():
            return True
        # A reader may have moved it to cur/, adding ":2,<flags>".
        cur = self.path / "cur"
        return (cur / file_name).exists() or any(cur.glob(f"{file_name}:*"))

    def send(self, mail: OutgoingMail, commit_point: Callable[[], None] = no_commit_point) -> None:
        # Idempotent per Message-ID (one file name per mail): no commit point needed.
        file_name = message_file_name(mail.message_id)
        if self._already_there(file_name):
            return
        tmp = self.path / "tmp" / f"{file_name}.{os.getpid()}.{uuid.uuid4().hex}"
        try:
            with open(tmp, "xb") as handle:
                handle.write(mail.raw)
                handle.flush()
                os.fsync(handle.fileno())
            try:
                # link() refuses to replace an existing file, so two concurrent
                # senders of one mail still leave exactly one copy.
                os.link(tmp, self.path / "new" / file_name)
            except FileExistsError:
                pass
        except OSError as error:
            # Disk full, permissions: an operator can fix these, so keep the mail
            # queued rather than dropping it.
            raise TransportError(f"cannot write to Maildir {self.path}: {error}", temporary=True) from error
        finally:
            try:
                tmp.unlink()
            except OSError:
                pass


def read_all(path: Path) -> list[bytes]:
    """Raw bytes of every message in path/new and path/cur, in delivery order
    (file modification time, then name: the names are hashes, not sequence)."""
    found: list[tuple[int, str, bytes]] = []
    for sub in ("new", "cur"):
        folder = Path(path) / sub
        if not folder.is_dir():
            continue
        for item in folder.iterdir():
            if item.name.startswith("."):
                continue
            try:
                if not item.is_file():
                    continue
                found.append((item.stat().st_mtime_ns, item.name, item.read_bytes()))
            except FileNotFoundError:
                continue
    return [raw for _, _, raw in sorted(found)]
