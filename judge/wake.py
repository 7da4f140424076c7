"""Waking the daemon when `judge deliver` has stored a mail.

`judge deliver` runs once per mail from the MTA and must be quick: it only
stores the mail, then wakes the daemon running on the same store, which
processes it (GNU Mailman's model: the MTA hand-off queues, runners run).
The wake-up is a FIFO in the data directory, one per database URL:

- The daemon (Judge.run_forever) holds it open for reading, and between its
  passes waits on it (select) instead of sleeping, so a wake-up starts a
  pass at once instead of after its poll interval.
- `judge deliver` opens it for writing without blocking. Opening a FIFO that
  no process has open for reading fails (ENXIO): no daemon runs, whatever
  files a dead one left behind, and deliver then processes the mail itself.
  A live reader is the proof of a daemon; a stale file proves nothing and
  costs nothing, which a pid file (a pid may be reused) could not promise.

A wake-up is only a hint: the mail is committed before it is sent, and every
pass of the daemon runs all stored mail that waits (status 'new'), so a
wake-up that is lost (the daemon stopping at that moment) delays a mail
until the daemon's next pass or start, or the next `judge deliver` that runs
mail itself; it never loses one.

Standard library only: `judge deliver` imports this on its light path.
"""

from __future__ import annotations

import errno
import hashlib
import os
import select
import stat
from pathlib import Path


def wake_path(data_dir: Path, database_url: str) -> Path:
    """The FIFO of the daemon on this store. Named after the database URL
    too, so that a daemon on another database in the same data directory is
    never taken for this store's (its mail would wait for nobody)."""
    digest = hashlib.sha256(database_url.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return data_dir / f"wake-{digest}.fifo"


def wake_daemon(path: Path) -> bool:
    """Wake the daemon reading the FIFO at `path`; False if none reads it
    (no file, a stale one, no permission: the caller runs the mail)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:  # ENXIO: no reader; ENOENT: no daemon ever; EACCES ...
        return False
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False  # some other file: nobody is woken by writing to it
        try:
            os.write(fd, b"\n")
        except BlockingIOError:
            pass  # the pipe is full of wake-ups the daemon has yet to read: it will run
        except OSError as err:
            if err.errno == errno.EPIPE:  # the reader closed after our open: the daemon stopped
                return False
            raise
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


class WakeChannel:
    """The daemon's end of the FIFO, open from start to stop."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            if not stat.S_ISFIFO(os.lstat(path).st_mode):
                path.unlink()  # not ours to keep: a FIFO is made in its place
        except FileNotFoundError:
            pass
        try:
            os.mkfifo(path, 0o660)
        except FileExistsError:
            pass  # left by an earlier daemon, or one running now: both fine
        self._reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        # A writer of our own keeps the FIFO from reading as at its end (and
        # select from waking) each time the last `judge deliver` closes it.
        self._keep = os.open(path, os.O_WRONLY | os.O_NONBLOCK)

    def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for a wake-up; True if woken. All
        wake-ups sent so far are taken, before the pass they start reads the
        store: one sent later starts another pass."""
        ready, _, _ = select.select([self._reader], [], [], max(0.0, timeout))
        if not ready:
            return False
        self.drain()
        return True

    def drain(self) -> bool:
        """Take the wake-ups waiting now; True if there were any."""
        woken = False
        while True:
            try:
                chunk = os.read(self._reader, 4096)
            except BlockingIOError:
                return woken
            if not chunk:
                return woken
            woken = True

    def close(self) -> None:
        """Stop being woken: from now on `judge deliver` runs its mail itself."""
        for fd in (self._reader, self._keep):
            try:
                os.close(fd)
            except OSError:
                pass
