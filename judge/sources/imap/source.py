"""Inbound mail from an IMAP folder.

fetch() returns the mails whose UID is above the watermark (judge.sources.
watermark: mailbox, UIDVALIDITY, last UID, kept in the database), oldest
first, read with BODY.PEEK[] so that nothing is marked \\Seen by the judge.
Each mail's RFC822.SIZE is asked first: a mail over the size limit is read
as its header block only (RawMail.oversize), and a backlog is read in steps
bounded in bytes, so a flood of large mails never fills the memory.
ack() advances the watermark and marks the mail processed on the server:
the keyword $JudgeDone, or a move to another folder.

Folder names are written in the configuration with "/" between the levels
(`processed = "Judge/Done"`); the judge asks the server for its own
hierarchy separator (LIST "" "": "/" or ".", Dovecot's default layout) and
writes the names with it. check(), at the daemon's start, makes sure both
folders work: a folder the server refuses stops the daemon with one line
(ConfigError) instead of a retry loop that reads no mail.

A new UIDVALIDITY (the folder was recreated or rebuilt) is logged at ERROR and
the watermark starts over at 0: every mail of the folder is fetched again and
the judge's Message-ID guard drops those it stored before.

Network faults never leave fetch()/ack()/wait(): they are logged, the
connection is dropped and retried with exponential backoff (capped), so the
daemon never exits because the mail server is away.
"""

from __future__ import annotations

import imaplib
import logging
import socket
import ssl
import time
from collections.abc import Callable, Sequence

from imapclient import IMAPClient
from imapclient.exceptions import IMAPClientAbortError, IMAPClientError
from sqlalchemy.orm import Session

from judge.sources.base import RawMail, Source
from judge.sources.imap.settings import ImapSettings
from judge.sources.size_limit import DEFAULT_MAX_BYTES, HEADER_CAP, batch_bytes, header_block
from judge.sources.watermark import Watermark, WatermarkStore
from judge.tables import ConfigError

log = logging.getLogger(__name__)

DONE_KEYWORD = "$JudgeDone"
# Mails a FETCH asks for: a backlog is fetched in few round trips (the
# plan keeps the bytes of one fetch() under batch_bytes()).
FETCH_CHUNK = 200
# wait() looks at its stop condition this often, also inside one IDLE: a
# SIGTERM stops the daemon within a second.
STOP_SLICE = 0.5
SIZE_CHUNK = 500  # RFC822.SIZE answers are a few bytes each
_WHOLE = "BODY.PEEK[]"
# The header of a mail over the limit, and at most HEADER_CAP of it: a mail
# of nothing but header lines is not downloaded whole either.
_HEADER = f"BODY.PEEK[HEADER]<0.{HEADER_CAP}>"
# What a broken connection or server may raise (imaplib.IMAP4.error covers imapclient's errors).
NETWORK_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, imaplib.IMAP4.error, IMAPClientError,
                                                   ssl.SSLError, socket.timeout)


def _body(item: dict | None) -> bytes | None:
    """The one BODY[...] section of a FETCH answer (its key names the section
    asked for, e.g. BODY[HEADER]<0>)."""
    for key, value in (item or {}).items():
        if key.startswith(b"BODY[") and value is not None:
            return bytes(value)
    return None


def server_name(name: str, separator: str | None) -> str:
    """A folder name of the configuration ("/" between its levels) as the
    server writes it."""
    return name.replace("/", separator) if separator and separator != "/" else name


class ImapSource(Source):
    def __init__(self, settings: ImapSettings, watermarks: WatermarkStore, name: str | None = None, *,
                 max_bytes: int = DEFAULT_MAX_BYTES, sleep: Callable[[float], None] = time.sleep,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.max_bytes = max_bytes
        self.watermarks = watermarks
        self.name = name or f"imap:{settings.username}@{settings.host}/{settings.folder}"
        self._sleep = sleep
        self._monotonic = monotonic
        self._client: IMAPClient | None = None
        self._uidvalidity: int | None = None  # of the folder as last selected
        self._backoff = 0.0
        self._retry_at = 0.0
        self._unmarked: set[tuple[int, int]] = set()  # (uidvalidity, uid) stored but not yet marked on the server
        self._progressed: set[str] = set()  # refs whose watermark the daemon's transaction already wrote
        self._fetched: dict[int, int] = {}  # UIDVALIDITY -> highest UID fetched by this process
        # The folders' names as the server writes them (its separator), per connection.
        self._folder_name = settings.folder
        self._processed_name = settings.processed

    def describe(self) -> str:
        st = self.settings
        return f"IMAP {st.username}@{st.host}:{st.effective_port} ({st.security}), folder {st.folder}"

    # -- connection -----------------------------------------------------
    def _connect(self) -> IMAPClient:
        client = self._login()
        try:
            self._prepare(client)
        except BaseException:
            self._shutdown(client)
            raise
        return client

    def _login(self) -> IMAPClient:
        st = self.settings
        client = IMAPClient(st.host, port=st.effective_port, ssl=st.security == "tls",
                            ssl_context=st.ssl_context() if st.security == "tls" else None, timeout=st.timeout)
        try:
            if st.security == "starttls":
                client.starttls(st.ssl_context())
            client.login(st.username, st.password)
        except BaseException:
            self._shutdown(client)
            raise
        log.info("%s: connected to %s:%s", self.name, st.host, st.effective_port)
        return client

    def _prepare(self, client: IMAPClient) -> None:
        """The folders' names in the server's separator; the processed
        folder made if it is not there."""
        separator = self.separator(client)
        self._folder_name = server_name(self.settings.folder, separator)
        if self.settings.processed != "flag":
            self._processed_name = server_name(self.settings.processed, separator)
            if not client.folder_exists(self._processed_name):
                client.create_folder(self._processed_name)

    @staticmethod
    def separator(client: IMAPClient) -> str | None:
        """The server's hierarchy separator (RFC 3501 LIST "" ""); None for a
        flat server."""
        listed = client.list_folders("", "")
        separator = listed[0][1] if listed else None
        if isinstance(separator, bytes):
            separator = separator.decode("ascii", "replace")
        return separator or None

    def check(self) -> None:
        """At start: log in and make sure the folder read and the processed
        folder work. A server that does not answer, or refuses the login, is
        left to the loop's retries (it may be away for a while); a folder the
        server refuses is a wrong setting: ConfigError, one line naming it."""
        st = self.settings
        try:
            client = self._login()
        except NETWORK_ERRORS as exc:
            log.warning("%s: cannot check the folders now (%s: %s); the daemon goes on and retries", self.name,
                        type(exc).__name__, exc)
            return
        try:
            separator = self.separator(client)
            shown = f"separator {separator!r}" if separator else "no hierarchy"
            try:
                self._prepare(client)
            except IMAPClientAbortError:
                raise
            except IMAPClientError as exc:
                raise ConfigError(f"[imap] processed: the server refuses the folder {st.processed!r} (written "
                                  f"{self._processed_name!r}, the server's {shown}): {exc}") from exc
            try:
                client.select_folder(self._folder_name, readonly=True)
            except IMAPClientAbortError:
                raise
            except IMAPClientError as exc:
                raise ConfigError(f"[imap] folder: the server has no folder {st.folder!r} to read (written "
                                  f"{self._folder_name!r}, the server's {shown}): {exc}") from exc
        except NETWORK_ERRORS as exc:
            self._shutdown(client)
            log.warning("%s: the check of the folders was cut short (%s: %s); the daemon goes on and retries",
                        self.name, type(exc).__name__, exc)
            return
        except BaseException:
            self._shutdown(client)
            raise
        self._drop()
        self._client = client

    @staticmethod
    def _shutdown(client: IMAPClient) -> None:
        try:
            client.logout()
        except NETWORK_ERRORS as exc:
            log.debug("logout failed (%s); closing the socket", exc)
            try:
                client.shutdown()
            except NETWORK_ERRORS as exc2:
                log.debug("socket shutdown failed (%s)", exc2)

    def _drop(self) -> None:
        if self._client is not None:
            self._shutdown(self._client)
        self._client = None

    def _failed(self, what: str, exc: BaseException) -> None:
        self._drop()
        st = self.settings
        self._backoff = min(st.backoff_max, self._backoff * 2 if self._backoff else st.backoff_initial)
        self._retry_at = self._monotonic() + self._backoff
        log.warning("%s: %s failed (%s: %s); retrying in %.0f s", self.name, what, type(exc).__name__, exc,
                    self._backoff)
        self.watermarks.note_error(self.name, st.folder, f"{what} failed ({type(exc).__name__}: {exc})")

    def _ok(self) -> None:
        self._backoff = 0.0
        self._retry_at = 0.0

    def _may_try(self) -> bool:
        return self._client is not None or self._monotonic() >= self._retry_at

    def _with_client(self, what: str, op: Callable[[IMAPClient], object]) -> tuple[bool, object]:
        """Run op on a connection; a stale connection is replaced and op retried once.
        Returns (ok, result); network errors are logged, never raised."""
        if not self._may_try():
            log.debug("%s: %s skipped, server retry not due yet", self.name, what)
            return False, None
        for attempt in (1, 2):
            fresh = self._client is None
            try:
                if self._client is None:
                    self._client = self._connect()
                result = op(self._client)
            except NETWORK_ERRORS as exc:
                if not fresh and attempt == 1:  # a connection that had worked: the server may have dropped it
                    log.info("%s: connection lost (%s: %s); reconnecting", self.name, type(exc).__name__, exc)
                    self._drop()
                    continue
                self._failed(what, exc)
                return False, None
            self._ok()
            return True, result
        return False, None  # pragma: no cover - the loop always returns

    def _select(self, client: IMAPClient) -> Watermark:
        """Select the folder and return the watermark valid for its UIDVALIDITY."""
        info = client.select_folder(self._folder_name)
        uidvalidity = int(info[b"UIDVALIDITY"])
        self._uidvalidity = uidvalidity
        mark = self.watermarks.get(self.name)
        if mark is None:
            return Watermark(self.settings.folder, uidvalidity, 0)
        if mark.uidvalidity != uidvalidity or mark.mailbox != self.settings.folder:
            log.error("%s: UIDVALIDITY of %s changed from %s to %s (was %s): the folder was recreated or rebuilt; "
                      "fetching all its mail again, the Message-ID guard drops what was stored before",
                      self.name, self.settings.folder, mark.uidvalidity, uidvalidity, mark.mailbox)
            self._unmarked = {u for u in self._unmarked if u[0] == uidvalidity}
            return self.watermarks.reset(self.name, self.settings.folder, uidvalidity, 0)
        return mark

    # -- Source ---------------------------------------------------------
    def fetch(self, limit: int | None = None) -> list[RawMail]:
        def op(client: IMAPClient) -> list[RawMail]:
            mark = self._select(client)
            self._mark_pending(client)
            uids = sorted(u for u in client.search(["UID", f"{mark.last_uid + 1}:*"]) if u > mark.last_uid)
            if limit is not None:
                uids = uids[:limit]
            plan = self._plan(client, uids)
            if plan:
                self._fetched[mark.uidvalidity] = max(self._fetched.get(mark.uidvalidity, 0), plan[-1][0])
            got: dict[int, RawMail] = {}
            whole = [uid for uid, size in plan if size is None]
            big = dict(p for p in plan if p[1] is not None)
            for part, uid_list in ((_WHOLE, whole), (_HEADER, list(big))):
                for i in range(0, len(uid_list), FETCH_CHUNK):
                    chunk = uid_list[i:i + FETCH_CHUNK]
                    data = client.fetch(chunk, [part])
                    for uid in chunk:
                        raw = _body(data.get(uid))
                        if raw is None:
                            continue  # expunged meanwhile
                        if uid in big:
                            raw = header_block(raw)
                        got[uid] = RawMail(raw=raw, source=self.name, ref=f"{mark.uidvalidity}:{uid}",
                                           oversize=big.get(uid))
            return [got[uid] for uid, _ in plan if uid in got]

        ok, mails = self._with_client("fetch", op)
        return mails if ok else []  # type: ignore[return-value]

    def _plan(self, client: IMAPClient, uids: list[int]) -> list[tuple[int, int | None]]:
        """The UIDs to fetch now, oldest first, each with its size if it is
        over the limit (None: fetched whole): sizes are asked first, so no
        mail over the limit is ever downloaded, and a backlog is taken in
        steps of at most batch_bytes() (at least one mail)."""
        plan: list[tuple[int, int | None]] = []
        budget = batch_bytes(self.max_bytes)
        for i in range(0, len(uids), SIZE_CHUNK):
            chunk = uids[i:i + SIZE_CHUNK]
            sizes = client.fetch(chunk, ["RFC822.SIZE"])
            for uid in chunk:
                size = sizes.get(uid, {}).get(b"RFC822.SIZE")
                if size is None:
                    continue  # expunged meanwhile
                over = size > self.max_bytes
                cost = HEADER_CAP if over else size
                if plan and cost > budget:
                    return plan
                budget -= cost
                plan.append((uid, size if over else None))
        return plan

    def progress(self, mail: RawMail, session: Session) -> None:
        self.progress_batch([mail], session)

    def progress_batch(self, mails: Sequence[RawMail], session: Session) -> None:
        # Fetched in UID order and stored together: the watermark moves once,
        # to the highest UID of the batch.
        current = [(int(v), int(u), m.ref) for m in mails for v, u in [m.ref.split(":")]
                   if self._uidvalidity is None or int(v) == self._uidvalidity]
        if not current:
            return
        uidvalidity, uid = max((v, u) for v, u, _ in current)
        self.watermarks.advance(session, self.name, uidvalidity, uid, self.settings.folder)
        self._progressed.update(ref for _, _, ref in current)

    def ack(self, mail: RawMail, session: Session | None = None) -> None:
        """Advance the watermark past `mail` (in `session` if given, which the
        caller commits; else in a transaction of its own), then mark the mail
        processed on the server. Idempotent; server faults are logged and the
        marking retried on a later fetch."""
        self._take(mail, session)
        if self._client is not None:
            self._with_client("marking as processed", self._mark_pending)

    def ack_batch(self, mails: Sequence[RawMail]) -> None:
        for mail in mails:
            self._take(mail, None)
        if self._client is not None:  # one UID STORE (or MOVE) for the whole batch
            self._with_client("marking as processed", self._mark_pending)

    def _take(self, mail: RawMail, session: Session | None) -> None:
        if mail.source != self.name:
            raise ValueError(f"mail from {mail.source!r} acknowledged at {self.name!r}")
        try:
            uidvalidity, uid = (int(x) for x in mail.ref.split(":"))
        except ValueError:
            raise ValueError(f"not an IMAP reference of this source: {mail.ref!r}") from None
        if self._uidvalidity is not None and uidvalidity != self._uidvalidity:
            log.warning("%s: ack of UID %s of the old UIDVALIDITY %s ignored", self.name, uid, uidvalidity)
            return
        if session is not None:
            self.watermarks.advance(session, self.name, uidvalidity, uid, self.settings.folder)
        elif mail.ref in self._progressed:
            self._progressed.discard(mail.ref)  # written with the raw mail already: not twice
        else:
            with self.watermarks.sessions.begin() as s:
                self.watermarks.advance(s, self.name, uidvalidity, uid, self.settings.folder)
        self._unmarked.add((uidvalidity, uid))

    def _mark_pending(self, client: IMAPClient) -> None:
        uids = sorted(u for v, u in self._unmarked if v == self._uidvalidity)
        self._unmarked = {x for x in self._unmarked if x[0] == self._uidvalidity}
        if not uids:
            return
        if self.settings.processed == "flag":
            client.add_flags(uids, [DONE_KEYWORD.encode()], silent=True)
        elif client.has_capability("MOVE"):
            client.move(uids, self._processed_name)
        else:
            client.copy(uids, self._processed_name)
            client.add_flags(uids, [b"\\Deleted"], silent=True)
            if client.has_capability("UIDPLUS"):
                client.uid_expunge(uids)
            else:
                client.expunge()
        self._unmarked.difference_update((self._uidvalidity, u) for u in uids)

    def wait(self, timeout: float, should_stop: Callable[[], bool] = lambda: False) -> bool:
        """Wait up to `timeout` seconds for new mail: IMAP IDLE if the server
        offers it, else sleep. True if woken by the server before the end.
        `should_stop` is asked every STOP_SLICE seconds (the daemon's SIGTERM):
        once true, the wait ends (False)."""
        deadline = self._monotonic() + timeout

        def idle(client: IMAPClient) -> bool | None:
            if not client.has_capability("IDLE"):
                return None
            mark = self._select(client)
            # Mail that arrived between the last fetch and now raises no
            # EXISTS during IDLE: look before waiting.
            seen = max(mark.last_uid, self._fetched.get(mark.uidvalidity, 0))
            if any(u > seen for u in client.search(["UID", f"{seen + 1}:*"])):
                return True
            while not should_stop():
                left = deadline - self._monotonic()
                if left <= 0:
                    return False
                # One IDLE command, renewed after idle_timeout; its answers
                # read in slices, so that a stop is seen between them.
                renew = self._monotonic() + min(left, self.settings.idle_timeout)
                client.idle()
                responses: list = []
                try:
                    while not responses and not should_stop():
                        slice_left = renew - self._monotonic()
                        if slice_left <= 0:
                            break
                        responses = client.idle_check(timeout=min(slice_left, STOP_SLICE))
                finally:
                    responses += client.idle_done()[1]
                if any(isinstance(r, tuple) and len(r) > 1 and r[1] in (b"EXISTS", b"RECENT") for r in responses):
                    return True
            return False

        ok, woke = self._with_client("IDLE", idle)
        if ok and woke is not None:
            return bool(woke)
        while not should_stop():
            left = deadline - self._monotonic()
            if left <= 0:
                break
            self._sleep(min(left, STOP_SLICE))
        return False

    def close(self) -> None:
        self._drop()
