"""Inbound mail from a local Maildir (filled by the MTA, fetchmail, procmail...).

Unread mail lives in new/; acknowledging a mail moves it to cur/ with the
"seen" flag (":2,S"), exactly what a mail reader would do, so the folder stays
readable with ordinary tools and nothing is ever deleted.
"""

from __future__ import annotations

import os
from pathlib import Path

from judge.sources.base import RawMail, Source

_SUBDIRS = ("tmp", "new", "cur")


def ensure_maildir(path: Path) -> None:
    """Create path/{tmp,new,cur} as needed (private to the judge's user)."""
    for sub in _SUBDIRS:
        (path / sub).mkdir(mode=0o700, parents=True, exist_ok=True)


def _fsync_dir(path: Path) -> None:
    # A rename is durable only once the directory itself is flushed.
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class MaildirSource(Source):
    def __init__(self, path: Path, name: str | None = None) -> None:
        self.path = Path(path)
        self.name = name or f"maildir:{self.path.name}"
        ensure_maildir(self.path)

    def fetch(self, limit: int | None = None) -> list[RawMail]:
        new = self.path / "new"
        entries: list[tuple[int, str]] = []
        with os.scandir(new) as scan:
            for entry in scan:
                # Dot files are editor/MTA leftovers, not messages (Maildir spec).
                if entry.name.startswith("."):
                    continue
                try:
                    if not entry.is_file():
                        continue
                    entries.append((entry.stat().st_mtime_ns, entry.name))
                except FileNotFoundError:
                    continue  # taken away meanwhile
        entries.sort()
        mails: list[RawMail] = []
        for _, file_name in entries:
            if limit is not None and len(mails) >= limit:
                break
            try:
                raw = (new / file_name).read_bytes()
            except FileNotFoundError:
                continue
            mails.append(RawMail(raw=raw, source=self.name, ref=file_name))
        return mails

    def ack(self, mail: RawMail) -> None:
        ref = mail.ref
        if not ref or ref in (".", "..") or "/" in ref or os.sep in ref or "\0" in ref:
            raise ValueError(f"not a Maildir key of this source: {ref!r}")
        if mail.source != self.name:
            raise ValueError(f"mail from {mail.source!r} acknowledged at {self.name!r}")
        unique = ref.split(":", 1)[0]  # files in new/ should carry no info, but be safe
        try:
            os.rename(self.path / "new" / ref, self.path / "cur" / f"{unique}:2,S")
        except FileNotFoundError:
            return  # already acknowledged, or removed by someone else: both fine
        _fsync_dir(self.path / "cur")
        _fsync_dir(self.path / "new")
