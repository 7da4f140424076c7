"""Inbound mail from a local Maildir (filled by the MTA, fetchmail, procmail...).

Unread mail lives in new/; acknowledging a mail moves it to cur/ with the
"seen" flag (":2,S"), exactly what a mail reader would do, so the folder stays
readable with ordinary tools and nothing is ever deleted.

A mail over the size limit is never read whole: only its header block is
returned, with its size (RawMail.oversize), so that the judge can answer it
without a 50 MB mail costing hundreds of MB of memory and database.
"""

from __future__ import annotations

import os
from pathlib import Path

from judge.sources.base import RawMail, Source
from judge.sources.size_limit import DEFAULT_MAX_BYTES, HEADER_CAP, batch_bytes, read_header_block, read_mail

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
    def __init__(self, path: Path, name: str | None = None, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.path = Path(path)
        self.name = name or f"maildir:{self.path.name}"
        self.max_bytes = max_bytes
        ensure_maildir(self.path)

    def describe(self) -> str:
        return f"the Maildir {self.path}"

    def fetch(self, limit: int | None = None) -> list[RawMail]:
        new = self.path / "new"
        entries: list[tuple[int, str, int]] = []
        with os.scandir(new) as scan:
            for entry in scan:
                # Dot files are editor/MTA leftovers, not messages (Maildir spec).
                if entry.name.startswith("."):
                    continue
                try:
                    if not entry.is_file():
                        continue
                    st = entry.stat()
                except FileNotFoundError:
                    continue  # taken away meanwhile
                entries.append((st.st_mtime_ns, entry.name, st.st_size))
        entries.sort()
        mails: list[RawMail] = []
        budget = batch_bytes(self.max_bytes)
        for _, file_name, size in entries:
            if limit is not None and len(mails) >= limit:
                break
            cost = size if size <= self.max_bytes else HEADER_CAP  # an oversize mail: its header only
            if mails and cost > budget:
                break  # the rest waits for the next fetch
            try:
                mail = self._read(new / file_name)
            except FileNotFoundError:
                continue
            budget -= len(mail.raw)
            mails.append(mail)
        return mails

    def _read(self, path: Path) -> RawMail:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > self.max_bytes:
                raw, oversize = read_header_block(f), size
            else:  # read_mail(): a file that grew since its stat is not read whole either
                raw, oversize = read_mail(f, self.max_bytes)
        return RawMail(raw=raw, source=self.name, ref=path.name, oversize=oversize)

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
