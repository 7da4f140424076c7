"""Who holds an outbox row, and whether that sender still lives.

A process that sends claims rows under its own name, OWNER: host, pid and a
start id. On Linux the start id is the kernel's boot id, the process's pid
namespace and its start time (/proc/self/stat), which together name one
process of one boot: another judge process on the same machine can then
tell at once, from /proc, that a sender is gone. Elsewhere (another host,
or no /proc) only the lease tells: the sender renews it while it works
(judge/outbox.py), and a claim whose lease ran out is taken to be dead.

Besides the database, a sender keeps a journal, a file of its own (one per
store it sends for) under the data directory: it writes "A <Message-ID>"
after the commit point is committed and before the step after which the
server may have the mail (the final dot), and "S" or "R" with the
Message-ID when the server accepted or refused it. Plain writes, never synced: the journal only has to outlive its
process, not the machine, and the page cache outlives a killed process. It
is read only when its writer is certainly dead and of the same boot; then a
row left "data_sent" without "A" never went out (the kill came before the
dot: requeued), one with "S" was accepted (sent), and only one with "A" and
nothing after it is truly unknown ("unconfirmed"). A journal that cannot be
read, or whose writer is only presumed dead (lease), changes nothing: such
rows are "unconfirmed", as without a journal.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

log = logging.getLogger(__name__)

JOURNALS = "outbox-journal"


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _stat_fields(pid: int | str) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (which may hold
    blanks and parentheses): [state, ppid, ...]; None if there is no such
    process (or no /proc)."""
    text = _read(f"/proc/{pid}/stat")
    if text is None or ")" not in text:
        return None
    return text[text.rindex(")") + 2:].split()


def _kernel() -> str | None:
    """This boot and pid namespace: a process of another boot is gone, and
    pids are only comparable within one namespace."""
    boot = _read("/proc/sys/kernel/random/boot_id")
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        return None
    if not boot:
        return None
    inode = "".join(c for c in namespace if c.isdigit())
    return f"{boot.strip().replace('-', '')}.{inode}"


@dataclass(frozen=True)
class Identity:
    host: str
    pid: int
    start: str  # KERNEL.STARTTIME on Linux, "r" + a random token elsewhere

    def __str__(self) -> str:
        return f"{self.host}:{self.pid}:{self.start}"

    @property
    def kernel(self) -> str | None:
        kernel, dot, _ = self.start.rpartition(".")
        return kernel if dot and not self.start.startswith("r") else None

    @property
    def started(self) -> str:
        return self.start.rpartition(".")[2]

    def journal_name(self, store: str) -> str:
        return f"{self.pid}.{self.start}.{store}.log"


def parse(owner: str | None) -> Identity | None:
    if not owner:
        return None
    host, _, rest = owner.rpartition(":")
    host, _, pid = host.rpartition(":")
    if not pid.isdigit() or not rest:
        return None
    return Identity(host, int(pid), rest)


def _identity() -> Identity:
    host = (socket.gethostname() or "localhost")[:64].replace(":", "_")
    pid = os.getpid()
    kernel = _kernel()
    fields = _stat_fields("self")
    if kernel and fields and len(fields) > 19:
        return Identity(host, pid, f"{kernel}.{fields[19]}")
    return Identity(host, pid, "r" + secrets.token_hex(8))


_ME: Identity | None = None
_ME_PID = -1


def me() -> Identity:
    """This process's identity (made again in a forked child)."""
    global _ME, _ME_PID
    if _ME is None or _ME_PID != os.getpid():
        _ME, _ME_PID = _identity(), os.getpid()
    return _ME


def certainly_dead(owner: Identity) -> bool:
    """True only when `owner` is known to be gone: a process of this kernel
    (same boot, same pid namespace) that no longer runs, or that is a
    zombie, or whose pid now belongs to a process started at another time.
    (This process's own claims are judged by Holdings, not here.)"""
    here = me()
    if owner.kernel is None or owner.kernel != here.kernel or owner == here:
        return False
    fields = _stat_fields(owner.pid)
    if fields is None or len(fields) <= 19:
        return True
    return fields[0] in ("Z", "X") or fields[19] != owner.started


def store_key(url: object) -> str:
    """A short name of the store a sender works on (its database URL made
    plain: an SQLite file's real path; a server's host, port and database),
    so that each store has a journal of its own."""
    from sqlalchemy import make_url

    parsed = make_url(str(url)) if not hasattr(url, "drivername") else url
    if parsed.get_backend_name() == "sqlite":
        plain = "sqlite:" + os.path.realpath(parsed.database or ":memory:")
    else:
        plain = f"{parsed.get_backend_name()}://{parsed.host}:{parsed.port}/{parsed.database}"
    return hashlib.sha256(plain.encode("utf-8", "surrogateescape")).hexdigest()[:12]


class Holdings:
    """The outbox rows this process's senders hold right now, per store: a
    claim of this process that is not here belongs to a sender that stopped
    (an exception, a dropped connection to the store) and is resolved as a
    dead one's."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[str, set[str]] = {}

    def take(self, store: str, ids: Iterable[str]) -> None:
        with self._lock:
            self._held.setdefault(store, set()).update(ids)

    def release(self, store: str, ids: Iterable[str]) -> None:
        with self._lock:
            self._held.get(store, set()).difference_update(ids)

    def holds(self, store: str, message_id: str) -> bool:
        with self._lock:
            return message_id in self._held.get(store, ())

    def idle(self, store: str) -> bool:
        with self._lock:
            return not self._held.get(store)


HELD = Holdings()


class Journal:
    """This process's journal of one store (see the module docstring),
    opened at its first claim, in the data directory of the judge that
    claimed first."""

    def __init__(self, path: Path, store: str) -> None:
        self.path, self.store = path, store
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._lock = threading.Lock()
        # Set when a sender stopped with rows unresolved: their lines must
        # stay until a recovery has read them (outbox.recover clears it).
        self.keep = False

    def write(self, mark: str, message_ids: Iterable[str]) -> None:
        """One line per mail; raises OSError if the line could not be
        written (the caller must then not take the step it marks)."""
        data = "".join(f"{mark} {m}\n" for m in message_ids).encode("ascii", "replace")
        if not data:
            return
        with self._lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]

    def trim(self) -> None:
        """Empty the journal when nothing it says is still needed: no row
        of its store held, none left unresolved."""
        with self._lock:
            if not self.keep and HELD.idle(self.store):
                os.ftruncate(self._fd, 0)


_JOURNALS: dict[str, Journal] = {}
_JOURNALS_LOCK = threading.Lock()


def journal(data_dir: Path, store: str) -> Journal:
    """This process's journal of `store`: one per process and store, made in
    the data directory of the first judge of this process that sends."""
    with _JOURNALS_LOCK:
        found = _JOURNALS.get(store)
        if found is None or found.path.name != me().journal_name(store):
            found = _JOURNALS[store] = Journal(Path(data_dir) / JOURNALS / me().journal_name(store), store)
        return found


def journal_settled(store: str) -> None:
    """No row of this process's stopped senders is left unresolved on
    `store`: its journal may be emptied again."""
    with _JOURNALS_LOCK:
        own = _JOURNALS.get(store)
    if own is not None:
        own.keep = False


@dataclass
class Fates:
    """What a dead sender's journal says: Message-IDs past the commit
    point (armed), accepted by the server, refused by it."""
    armed: set[str]
    accepted: set[str]
    refused: set[str]


def read_journal(data_dir: Path | None, owner: Identity, store: str) -> Fates | None:
    """The journal of `owner` for `store`, a sender that is certainly dead,
    of this boot (or this process's own); None if there is none to trust
    (then its rows past the commit point stay unknown). Every sender that
    records a commit point has its journal file already, so a journal found
    is the whole of what its sender did on that store."""
    if owner == me():
        own = _JOURNALS.get(store)
        path = own.path if own is not None and own.path.name == owner.journal_name(store) else None
    else:
        path = Path(data_dir) / JOURNALS / owner.journal_name(store) if data_dir is not None else None
    text = _read(str(path)) if path is not None else None
    if text is None:
        return None
    fates = Fates(set(), set(), set())
    marks = {"A": fates.armed, "S": fates.accepted, "R": fates.refused}
    for line in text.splitlines():
        mark, _, message_id = line.partition(" ")
        if mark in marks and message_id:
            marks[mark].add(message_id)
    return fates


def forget_journal(data_dir: Path, owner: Identity, store: str) -> None:
    """Remove a dead sender's journal once its rows are resolved (without
    it, such rows would be "unconfirmed": never a mail sent twice)."""
    if owner == me():
        return
    try:
        (Path(data_dir) / JOURNALS / owner.journal_name(store)).unlink()
    except OSError:
        pass


def stale_journals(data_dir: Path, store: str) -> list[Identity]:
    """The owners of the journals of `store` under `data_dir` that are
    certainly dead or of an earlier boot (journals of live senders are
    theirs)."""
    folder = Path(data_dir) / JOURNALS
    suffix = f".{store}.log"
    try:
        names = [p.name for p in folder.iterdir() if p.name.endswith(suffix)]
    except OSError:
        return []
    here = me()
    owners = []
    for name in names:
        pid, _, start = name[:-len(suffix)].partition(".")
        if not pid.isdigit():
            continue
        owner = Identity(here.host, int(pid), start)
        if owner == here:
            continue
        of_another_boot = owner.kernel is not None and here.kernel is not None \
            and owner.kernel.split(".")[0] != here.kernel.split(".")[0]
        if certainly_dead(owner) or of_another_boot:
            owners.append(owner)
    return owners
