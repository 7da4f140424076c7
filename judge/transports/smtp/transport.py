"""Outgoing mail over SMTP (smtplib), connections kept open between sends.

Every failure becomes a TransportError whose `temporary` flag is the outbox's
only question: try again later, or give up on this mail?

Speed (a deadline queues thousands of result mails at once): a batch of
mails goes out on one kept connection, one after another, each mail's
commit point between its body and its final dot (the outbox records it for
many mails at once: judge/outbox.py). Where the server offers PIPELINING
(RFC 2920) the commands go in one write, MAIL, RCPT..., DATA, and the final
dot of one mail rides with the commands of the next: one round trip a
mail. Every socket has TCP_NODELAY, so a small write (the dot) never waits
for the server's delayed ACK of the body. With `connections` above 1, the
mails of a batch go side by side over that many connections (for a server
far away, or one slow to answer each mail), one commit point for each
round of them; a sender killed then leaves up to that many mails whose
fate is unknown, one otherwise.

    temporary (retry):  refused/timed-out/dropped connections, other network
                        errors, TLS handshake trouble, any 4xx reply
    permanent (give up): any 5xx reply, every recipient refused with a 5xx
                        (all refusals 4xx, e.g. greylisting, stay temporary),
                        failed authentication (535), no STARTTLS/AUTH or no
                        common auth mechanism, an untrusted server certificate
"""

from __future__ import annotations

import logging
import re
import smtplib
import socket
import ssl
from collections import deque
from collections.abc import Collection, Sequence
from typing import Callable

from judge.transports.base import ClaimLost, OutgoingMail, Outcome, Transport, TransportError, no_commit_point
from judge.transports.smtp.settings import SmtpSettings

log = logging.getLogger(__name__)

_BARE_LINE_END = re.compile(rb"\r\n|\r|\n")
_LEADING_DOT = re.compile(rb"(?m)^\.")


def tls_context(settings: SmtpSettings) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=settings.cafile)
    if not settings.verify:
        # For test setups and self-signed relays on localhost only.
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def to_crlf(raw: bytes) -> bytes:
    """SMTP needs CRLF line ends; bare LF is rejected by many servers
    (SMTP smuggling defences) and smtplib does not fix it for bytes."""
    crlf = raw.count(b"\r\n")
    if raw.count(b"\n") == crlf and raw.count(b"\r") == crlf:
        return raw  # compose() writes CRLF already: no regex over every mail
    return _BARE_LINE_END.sub(b"\r\n", raw)


def _reply_text(message: bytes | str) -> str:
    if isinstance(message, bytes):
        return message.decode("utf-8", "replace")
    return str(message)


def _reply_error(what: str, code: int, message: bytes | str) -> TransportError:
    # Only a 5xx reply is the server's final word; 4xx says "later", and odd
    # codes (smtplib uses -1 for "no reply at all") are network trouble.
    return TransportError(f"{what}: {code} {_reply_text(message)}", temporary=not 500 <= code < 600)


def classify(error: Exception) -> TransportError:
    """The TransportError an smtplib/socket/ssl exception stands for."""
    if isinstance(error, TransportError):
        return error
    if isinstance(error, smtplib.SMTPRecipientsRefused):
        refusals = error.recipients or {}
        details = "; ".join(
            f"{rcpt}: {code} {_reply_text(text)}" for rcpt, (code, text) in sorted(refusals.items())
        )
        all_temporary = bool(refusals) and all(400 <= code < 500 for code, _ in refusals.values())
        return TransportError(f"all recipients refused: {details}", temporary=all_temporary)
    if isinstance(error, smtplib.SMTPAuthenticationError):
        return _reply_error("authentication failed", error.smtp_code, error.smtp_error)
    if isinstance(error, smtplib.SMTPSenderRefused):
        return _reply_error(f"sender {error.sender} refused", error.smtp_code, error.smtp_error)
    if isinstance(error, smtplib.SMTPDataError):
        return _reply_error("message refused", error.smtp_code, error.smtp_error)
    if isinstance(error, smtplib.SMTPResponseException):
        return _reply_error("server error", error.smtp_code, error.smtp_error)
    if isinstance(error, smtplib.SMTPNotSupportedError):
        return TransportError(f"server lacks a needed feature: {error}", temporary=False)
    if isinstance(error, smtplib.SMTPServerDisconnected):
        return TransportError(f"server disconnected: {error}", temporary=True)
    if isinstance(error, ssl.SSLCertVerificationError):
        return TransportError(f"server certificate not trusted: {error}", temporary=False)
    if isinstance(error, (socket.timeout, TimeoutError)):
        return TransportError(f"timed out: {error}", temporary=True)
    if isinstance(error, ConnectionRefusedError):
        return TransportError(f"connection refused: {error}", temporary=True)
    if isinstance(error, OSError):
        return TransportError(f"{type(error).__name__}: {error}", temporary=True)
    if isinstance(error, smtplib.SMTPException):
        # smtplib raises the bare class for setup mismatches such as "No
        # suitable authentication method found": retrying cannot help.
        return TransportError(f"SMTP setup problem: {error}", temporary=False)
    return TransportError(f"unexpected {type(error).__name__}: {error}", temporary=True)


# Errors after which a reused connection is presumed stale (server closed an
# idle connection, restarted...): reconnect and try once more.
_STALE_CONNECTION = (smtplib.SMTPServerDisconnected, ConnectionError, BrokenPipeError)


class _Lane:
    """One connection; the mail whose commands it has sent and whose
    replies are to be read (`next`, with its body); the mail whose body it
    has written and whose final dot waits for the commit point (`mail`)."""

    __slots__ = ("conn", "mail", "refused", "next", "body")

    def __init__(self) -> None:
        self.conn: smtplib.SMTP | None = None
        self.mail: OutgoingMail | None = None
        self.refused: dict[str, tuple[int, bytes]] = {}
        self.next: OutgoingMail | None = None
        self.body = b""

    @property
    def open(self) -> bool:
        return self.conn is not None and getattr(self.conn, "sock", None) is not None


class SmtpTransport(Transport):
    def __init__(self, settings: SmtpSettings) -> None:
        self.settings = settings
        self.name = f"smtp:{settings.host}:{settings.port}"
        self._lanes = [_Lane() for _ in range(settings.connections)]

    def describe(self) -> str:
        return f"smtp ({self.settings.host}:{self.settings.port})"

    # ------------------------------------------------------------ connection

    def _connect(self) -> smtplib.SMTP:
        s = self.settings
        conn: smtplib.SMTP
        if s.security == "tls":
            conn = smtplib.SMTP_SSL(
                s.host, s.port, local_hostname=s.local_hostname, timeout=s.timeout, context=tls_context(s)
            )
        else:
            conn = smtplib.SMTP(s.host, s.port, local_hostname=s.local_hostname, timeout=s.timeout)
        try:
            # A small write (the final dot, a pipelined command group) must
            # not wait for the server's delayed ACK of the write before it.
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.ehlo()
            if s.security == "starttls":
                # starttls() raises SMTPNotSupportedError itself if not offered.
                conn.starttls(context=tls_context(s))
                conn.ehlo()
            if s.username is not None:
                conn.login(s.username, s.password or "")
        except BaseException:
            _close_quietly(conn)
            raise
        return conn

    def _drop(self, lane: _Lane) -> None:
        if lane.conn is not None:
            _close_quietly(lane.conn)
            lane.conn = None

    # ------------------------------------------------------------------ send

    def send(self, mail: OutgoingMail, commit_point: Callable[[], None] = no_commit_point) -> None:
        outcome: list[Outcome] = []

        def commit(group: Sequence[OutgoingMail]) -> Collection[str]:
            commit_point()  # ClaimLost, or anything else, abandons the mail
            return {mail.message_id}

        _Round(self, [mail], commit, lambda _mail, result: outcome.append(result), 1).run()
        if outcome and outcome[0] is not None:
            raise outcome[0]

    def send_batch(self, mails: Sequence[OutgoingMail],
                   commit: Callable[[Sequence[OutgoingMail]], Collection[str]],
                   done: Callable[[OutgoingMail, Outcome], None]) -> None:
        _Round(self, list(mails), commit, done, min(len(self._lanes), len(mails))).run()

    def _open(self, lane: _Lane) -> None:
        """Connect `lane` unless its kept connection is open."""
        if not lane.open:
            self._drop(lane)
            lane.conn = self._connect()

    @staticmethod
    def _options(conn: smtplib.SMTP, mail: OutgoingMail, body: bytes) -> list[str]:
        options: list[str] = []
        addresses = (mail.envelope_from, *mail.recipients)
        if not all(address.isascii() for address in addresses):
            if not conn.has_extn("smtputf8"):
                raise smtplib.SMTPNotSupportedError("non-ASCII address and server lacks SMTPUTF8")
            options.append("SMTPUTF8")
        if not body.isascii() and conn.has_extn("8bitmime"):
            options.append("BODY=8BITMIME")
        return options

    @staticmethod
    def _pipelines(conn: smtplib.SMTP) -> bool:
        conn.ehlo_or_helo_if_needed()
        return bool(conn.has_extn("pipelining"))

    def _commands(self, conn: smtplib.SMTP, mail: OutgoingMail, body: bytes) -> bytes:
        """MAIL, RCPT... and DATA of `mail` as one write (RFC 2920)."""
        options = self._options(conn, mail, body)
        commands = [f"MAIL FROM:{_path(mail.envelope_from)}{''.join(' ' + o for o in options)}\r\n"]
        commands += [f"RCPT TO:{_path(rcpt)}\r\n" for rcpt in mail.recipients]
        commands.append("DATA\r\n")
        return "".join(commands).encode("utf-8" if "SMTPUTF8" in options else "ascii")

    def _replies(self, conn: smtplib.SMTP, mail: OutgoingMail) -> dict[str, tuple[int, bytes]]:
        """The replies to _commands(): the recipients the server refused (a
        mail refused whole raises, the session reset)."""
        sender = conn.getreply()
        replies = [conn.getreply() for _ in mail.recipients]
        return self._judge_envelope(conn, mail, sender, replies, conn.getreply())

    def _stepwise(self, conn: smtplib.SMTP, mail: OutgoingMail, body: bytes) -> dict[str, tuple[int, bytes]]:
        """MAIL, RCPT..., DATA one at a time, for a server without PIPELINING."""
        options = self._options(conn, mail, body)
        sender = conn.mail(mail.envelope_from, options)
        replies = [conn.rcpt(rcpt) for rcpt in mail.recipients] if sender[0] == 250 else []
        data = (0, b"")
        if sender[0] == 250 and any(code in (250, 251) for code, _ in replies):
            conn.putcmd("data")
            data = conn.getreply()
        return self._judge_envelope(conn, mail, sender, replies, data)

    @staticmethod
    def _judge_envelope(conn: smtplib.SMTP, mail: OutgoingMail, sender: tuple[int, bytes],
                        replies: list[tuple[int, bytes]], data: tuple[int, bytes]) -> dict[str, tuple[int, bytes]]:
        refused = {rcpt: reply for rcpt, reply in zip(mail.recipients, replies) if reply[0] not in (250, 251)}
        if sender[0] == 250 and len(refused) < len(mail.recipients) and data[0] == 354:
            return refused
        if data[0] == 354:
            # A pipelining server may take DATA with no recipient left: an
            # empty mail ends it (RFC 2920), refused for want of them.
            conn.send(b".\r\n")
            conn.getreply()
        conn.rset()
        if sender[0] != 250:
            raise smtplib.SMTPSenderRefused(sender[0], sender[1], mail.envelope_from)
        if len(refused) == len(mail.recipients):
            raise smtplib.SMTPRecipientsRefused(refused)
        raise smtplib.SMTPDataError(*data)

    @staticmethod
    def _usable(lane: _Lane, error: Exception) -> bool:
        # After a refused sender/recipient/data the session was reset and is
        # clean; anything else (network errors, 421 closing) means the
        # connection cannot be trusted for the next mail.
        return isinstance(
            error, (smtplib.SMTPRecipientsRefused, smtplib.SMTPSenderRefused, smtplib.SMTPDataError)
        ) and lane.open

    def close(self) -> None:
        for lane in self._lanes:
            conn, lane.conn = lane.conn, None
            if conn is None:
                continue
            try:
                conn.quit()
            except Exception:
                pass
            _close_quietly(conn)


def _wire(mail: OutgoingMail) -> bytes:
    """The mail as DATA carries it: CRLF line ends, leading dots doubled,
    ending in CRLF; without the final dot."""
    body = to_crlf(mail.raw)
    if body.startswith(b".") or b"\n." in body:
        body = _LEADING_DOT.sub(b"..", body)
    return body if body.endswith(b"\r\n") else body + b"\r\n"


_PLAIN_ADDRESS = re.compile(r"[^\s<>()\[\]\\,;:\"]+@[^\s<>()\[\]\\,;:\"@]+")


def _path(address: str) -> str:
    """An address as MAIL FROM and RCPT TO carry it (smtplib.quoteaddr,
    without its parser for the plain ones)."""
    return f"<{address}>" if _PLAIN_ADDRESS.fullmatch(address) else smtplib.quoteaddr(address)


class _Round:
    """One send_batch: `mails` over the first `width` connections. Each idle
    connection takes the next mail and sends all of it but its final dot;
    then the commit point of every mail waiting so is recorded at once, the
    dots go out (each with the next mail's commands, where the server
    pipelines) and the answers are read; and so on until none is left."""

    def __init__(self, transport: SmtpTransport, mails: list[OutgoingMail],
                 commit: Callable[[Sequence[OutgoingMail]], Collection[str]],
                 done: Callable[[OutgoingMail, Outcome], None], width: int) -> None:
        self.transport, self.commit, self.done = transport, commit, done
        self.pending = deque(mails)
        self.lanes = transport._lanes[:max(1, width)]
        self.retried: set[str] = set()

    def run(self) -> None:
        try:
            self.fill()
            while True:
                group = [lane for lane in self.lanes if lane.mail is not None]
                if not group:
                    break
                self.finish(group)
                self.fill()
        finally:
            for lane in self.lanes:
                if lane.mail is not None or lane.next is not None:
                    # Left in the middle (an exception): closing the
                    # connection before the dot makes the server drop it.
                    self.transport._drop(lane)
                    lane.mail = lane.next = None

    # -- up to the final dot ----------------------------------------------
    def fill(self) -> None:
        """Every idle connection takes a mail: commands written on all
        first, then the answers read and the bodies written."""
        while self.pending:
            idle = [lane for lane in self.lanes if lane.mail is None and lane.next is None]
            if not idle:
                return
            asked = [lane for lane in idle if self.pending and self.start(lane, self.pending.popleft())]
            for lane in asked:
                self.answer(lane)

    def start(self, lane: _Lane, mail: OutgoingMail) -> bool:
        """Send `mail`'s commands on `lane`; True if their answers are still
        to be read (pipelining), False if the mail is done with for now."""
        if not mail.recipients:
            self.done(mail, TransportError(f"{mail.message_id}: no recipients", temporary=False))
            return False
        try:
            self.transport._open(lane)
        except Exception as error:
            self.fail(lane, mail, error, opening=True)
            return False
        try:
            body = _wire(mail)
            if self.transport._pipelines(lane.conn):
                lane.conn.send(self.transport._commands(lane.conn, mail, body))
                lane.next, lane.body = mail, body
                return True
            lane.refused = self.transport._stepwise(lane.conn, mail, body)
            lane.conn.send(body)
            lane.mail = mail
        except Exception as error:
            self.fail(lane, mail, error)
        return False

    def answer(self, lane: _Lane) -> None:
        """Read the answers to the commands of `lane.next`; on 354, its body."""
        mail, body = lane.next, lane.body
        lane.next, lane.body = None, b""
        try:
            lane.refused = self.transport._replies(lane.conn, mail)
            lane.conn.send(body)
            lane.mail = mail
        except Exception as error:
            self.fail(lane, mail, error)

    def fail(self, lane: _Lane, mail: OutgoingMail, error: Exception, opening: bool = False) -> None:
        """`mail` met `error` before its commit point: the server cannot
        have it."""
        if isinstance(error, _STALE_CONNECTION) and not opening and mail.message_id not in self.retried:
            # A kept connection that the server closed (idle too long, or it
            # restarted): once more on a new one.
            self.retried.add(mail.message_id)
            self.transport._drop(lane)
            self.pending.appendleft(mail)
            return
        if opening or not self.transport._usable(lane, error):
            self.transport._drop(lane)
        err = classify(error)
        self.done(mail, err)
        if opening:
            # The server cannot be reached (or will not have us): the rest
            # of the batch waits for its next attempt, untried.
            while self.pending:
                self.done(self.pending.popleft(), TransportError(f"not tried: {err}", temporary=True))

    # -- the commit point, the dots, the answers ----------------------------
    def finish(self, group: list[_Lane]) -> None:
        try:
            ours = set(self.commit([lane.mail for lane in group]))
        except ClaimLost:
            ours = set()
        except Exception as error:  # the record failed: no dot goes out
            for lane in group:
                mail, lane.mail = lane.mail, None
                self.transport._drop(lane)
                self.done(mail, TransportError(f"{mail.message_id}: its commit point could not be recorded "
                                               f"({type(error).__name__}: {error}); not sent", temporary=True))
            return
        wrote = []
        for lane in group:
            mail = lane.mail
            if mail.message_id not in ours:
                lane.mail = None
                self.transport._drop(lane)
                self.done(mail, ClaimLost(mail.message_id))
                continue
            data = self.dot_and_next(lane)
            try:
                lane.conn.sock.sendall(data)
            except OSError as error:
                # The connection was gone before the dot left: the server
                # drops an unfinished mail, so it may go again.
                lane.mail = None
                self.transport._drop(lane)
                self.repend(lane)
                self.done(mail, TransportError(f"{mail.message_id}: the connection failed before the end of the mail "
                                               f"({error}); not sent", temporary=True))
                continue
            wrote.append(lane)
        for lane in wrote:
            mail, lane.mail = lane.mail, None
            try:
                code, resp = lane.conn.getreply()
            except (OSError, smtplib.SMTPServerDisconnected) as error:
                self.transport._drop(lane)
                self.repend(lane)
                self.done(mail, TransportError(f"{mail.message_id}: the connection failed after the whole mail was "
                                               f"sent ({error}); the server may have it",
                                               temporary=True, unconfirmed=True))
                continue
            if code != 250:
                # The server answered: it does not have the mail, retrying is safe.
                self.done(mail, classify(smtplib.SMTPDataError(code, resp)))
            else:
                if lane.refused:
                    # Accepted for the other recipients: raising would make
                    # the outbox send it again to them, so report and carry on.
                    refusals = "; ".join(f"{rcpt}: {c} {_reply_text(text)}" for rcpt, (c, text) in lane.refused.items())
                    log.warning("%s: some recipients refused: %s", mail.message_id, refusals)
                self.done(mail, None)
            if lane.next is not None:
                self.answer(lane)

    def dot_and_next(self, lane: _Lane) -> bytes:
        """The final dot, and where the server pipelines, the commands of the
        next mail in the same write (RFC 2920 lets a group start with the
        end of a mail's data)."""
        while self.pending and lane.conn.has_extn("pipelining"):
            mail = self.pending.popleft()
            if not mail.recipients:
                self.done(mail, TransportError(f"{mail.message_id}: no recipients", temporary=False))
                continue
            try:
                body = _wire(mail)
                commands = self.transport._commands(lane.conn, mail, body)
            except Exception as error:  # nothing was written: e.g. SMTPUTF8 needed and not offered
                self.done(mail, classify(error))
                continue
            lane.next, lane.body = mail, body
            return b".\r\n" + commands
        return b".\r\n"

    def repend(self, lane: _Lane) -> None:
        """The mail whose commands rode with a failed dot: not sent, to try again."""
        if lane.next is not None:
            self.pending.appendleft(lane.next)
            lane.next, lane.body = None, b""


def _close_quietly(conn: smtplib.SMTP) -> None:
    try:
        conn.close()
    except Exception:
        pass
