"""Outgoing mail over SMTP (smtplib), one connection kept open between sends.

Every failure becomes a TransportError whose `temporary` flag is the outbox's
only question: try again later, or give up on this mail?

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
from dataclasses import dataclass
from typing import Callable

from judge.transports.base import OutgoingMail, Transport, TransportError, no_commit_point

log = logging.getLogger(__name__)

_SECURITY_MODES = ("none", "starttls", "tls")
_BARE_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class SmtpSettings:
    host: str = "localhost"
    port: int = 25
    security: str = "none"  # "none" | "starttls" | "tls" (implicit TLS, port 465)
    username: str | None = None
    password: str | None = None
    timeout: float = 30.0
    cafile: str | None = None  # CA bundle to verify the server with; None: system CAs
    verify: bool = True
    # Name sent in EHLO; None lets smtplib use the host's FQDN.
    local_hostname: str | None = None

    def __post_init__(self) -> None:
        if self.security not in _SECURITY_MODES:
            raise ValueError(f"security must be one of {_SECURITY_MODES}, not {self.security!r}")
        if not 0 < self.port < 65536:
            raise ValueError(f"bad SMTP port {self.port}")
        if self.timeout <= 0:
            raise ValueError("timeout must be positive")

    def __repr__(self) -> str:  # never print the password into logs
        shown = "***" if self.password is not None else None
        return (
            f"SmtpSettings(host={self.host!r}, port={self.port}, security={self.security!r}, "
            f"username={self.username!r}, password={shown!r}, timeout={self.timeout}, "
            f"cafile={self.cafile!r}, verify={self.verify}, local_hostname={self.local_hostname!r})"
        )


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


class SmtpTransport(Transport):
    def __init__(self, settings: SmtpSettings) -> None:
        self.settings = settings
        self.name = f"smtp:{settings.host}:{settings.port}"
        self._conn: smtplib.SMTP | None = None

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

    def _connection(self) -> tuple[smtplib.SMTP, bool]:
        """The open connection (reused=True) or a new one."""
        if self._conn is not None and getattr(self._conn, "sock", None) is not None:
            return self._conn, True
        self._conn = None
        self._conn = self._connect()
        return self._conn, False

    def _drop(self) -> None:
        if self._conn is not None:
            _close_quietly(self._conn)
            self._conn = None

    # ------------------------------------------------------------------ send

    def send(self, mail: OutgoingMail, commit_point: Callable[[], None] = no_commit_point) -> None:
        if not mail.recipients:
            raise TransportError(f"{mail.message_id}: no recipients", temporary=False)
        data = to_crlf(mail.raw)
        try:
            conn, reused = self._connection()
            try:
                refused = self._transact(conn, mail, data, commit_point)
            except _STALE_CONNECTION:
                # Only before the commit point: a stale connection found while
                # the server cannot have the mail yet.
                if not reused:
                    raise
                self._drop()
                conn, _ = self._connection()
                refused = self._transact(conn, mail, data, commit_point)
        except TransportError:
            self._drop()
            raise
        except Exception as error:
            self._drop_unless_usable(error)
            raise classify(error) from error
        if refused:
            # Accepted for the other recipients: raising would make the outbox
            # send it again to them, so report and carry on.
            log.warning(
                "%s: some recipients refused: %s",
                mail.message_id,
                "; ".join(f"{rcpt}: {code} {_reply_text(text)}" for rcpt, (code, text) in refused.items()),
            )

    def _transact(self, conn: smtplib.SMTP, mail: OutgoingMail, data: bytes,
                  commit_point: Callable[[], None]) -> dict[str, tuple[int, bytes]]:
        """smtplib's sendmail, step by step, so that the commit point falls
        just before the final dot: until then the server throws away an
        unfinished mail; after it, the server may have it."""
        options: list[str] = []
        addresses = (mail.envelope_from, *mail.recipients)
        if not all(address.isascii() for address in addresses):
            if not conn.has_extn("smtputf8"):
                raise smtplib.SMTPNotSupportedError("non-ASCII address and server lacks SMTPUTF8")
            options.append("SMTPUTF8")
        if not data.isascii() and conn.has_extn("8bitmime"):
            options.append("BODY=8BITMIME")
        conn.ehlo_or_helo_if_needed()
        code, resp = conn.mail(mail.envelope_from, options)
        if code != 250:
            conn.rset()
            raise smtplib.SMTPSenderRefused(code, resp, mail.envelope_from)
        refused: dict[str, tuple[int, bytes]] = {}
        for rcpt in mail.recipients:
            code, resp = conn.rcpt(rcpt)
            if code not in (250, 251):
                refused[rcpt] = (code, resp)
        if len(refused) == len(mail.recipients):
            conn.rset()
            raise smtplib.SMTPRecipientsRefused(refused)
        conn.putcmd("data")
        code, resp = conn.getreply()
        if code != 354:
            conn.rset()
            raise smtplib.SMTPDataError(code, resp)
        body = re.sub(rb"(?m)^\.", b"..", data)
        if not body.endswith(b"\r\n"):
            body += b"\r\n"
        conn.send(body)
        commit_point()
        try:
            conn.send(b".\r\n")
            code, resp = conn.getreply()
        except (OSError, smtplib.SMTPServerDisconnected) as error:
            raise TransportError(f"{mail.message_id}: the connection failed after the whole mail was sent "
                                 f"({error}); the server may have it", temporary=True, unconfirmed=True) from error
        if code != 250:
            # The server answered: it does not have the mail, retrying is safe.
            raise smtplib.SMTPDataError(code, resp)
        return refused

    def _drop_unless_usable(self, error: Exception) -> None:
        # After a refused sender/recipient/data smtplib has sent RSET and the
        # session is clean; anything else (network errors, 421 closing) means
        # the connection cannot be trusted for the next mail.
        usable = isinstance(
            error, (smtplib.SMTPRecipientsRefused, smtplib.SMTPSenderRefused, smtplib.SMTPDataError)
        ) and self._conn is not None and getattr(self._conn, "sock", None) is not None
        if not usable:
            self._drop()

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            conn.quit()
        except Exception:
            pass
        _close_quietly(conn)


def _close_quietly(conn: smtplib.SMTP) -> None:
    try:
        conn.close()
    except Exception:
        pass
