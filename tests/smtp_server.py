"""A real SMTP server for tests: aiosmtpd on a free 127.0.0.1 port.

    server = SmtpTestServer(mode="starttls", auth=True, tls=make_self_signed_cert(tmp))
    server.start()
    ...  # send with server.settings() -> judge.transports.smtp.SmtpSettings
    server.messages[0].raw           # what arrived (envelope + raw bytes)
    server.fail("RCPT", "550 5.1.1 no such user")   # inject faults
    server.restart()                 # outage: drops open connections, same port
    server.stop()

Modes: "plain", "starttls" (STARTTLS required before MAIL), "tls" (implicit
TLS). With auth=True the server offers AUTH LOGIN/PLAIN, accepts only
USERNAME/PASSWORD, and refuses MAIL from unauthenticated sessions (530).
With pipelining=True it offers PIPELINING.
"""

from __future__ import annotations

import socket
import ssl
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session

from judge.transports.smtp import SmtpSettings

USERNAME = "judge"
PASSWORD = "s3cret pass"
MODES = ("plain", "starttls", "tls")


@dataclass(frozen=True)
class TlsFiles:
    cert: Path  # self-signed, so it is also the CA file clients verify with
    key: Path


@dataclass(frozen=True)
class ReceivedMessage:
    mail_from: str
    rcpt_tos: tuple[str, ...]
    raw: bytes
    mail_options: tuple[str, ...]
    tls: bool
    auth_user: str | None


def make_self_signed_cert(directory: Path) -> TlsFiles:
    """A certificate for 127.0.0.1 and localhost, made with the openssl CLI."""
    directory.mkdir(parents=True, exist_ok=True)
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-nodes", "-days", "2",
            "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-keyout", str(key), "-out", str(cert),
            "-subj", "/CN=localhost",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ],
        check=True,
        capture_output=True,
    )
    return TlsFiles(cert=cert, key=key)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


class _Handler:
    """aiosmtpd hooks: record accepted mail, answer injected faults."""

    def __init__(self, owner: SmtpTestServer) -> None:
        self.owner = owner

    async def handle_EHLO(self, server: SMTP, session: Session, envelope: Envelope, hostname: str,
                          responses: list[str]) -> list[str]:
        session.host_name = hostname
        if self.owner.pipelining:
            # aiosmtpd reads commands from a stream, one line at a time, so
            # it answers pipelined ones in order (RFC 2920); it only does
            # not say so.
            responses.insert(-1, "250-PIPELINING")
        return responses

    async def handle_MAIL(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, mail_options: list[str]
    ) -> str:
        if self.owner.auth and not session.authenticated:
            return "530 5.7.0 Authentication required"
        fault = self.owner.fault_for("MAIL", address)
        if fault:
            return fault
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return "250 OK"

    async def handle_RCPT(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, rcpt_options: list[str]
    ) -> str:
        fault = self.owner.fault_for("RCPT", address)
        if fault:
            return fault
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        fault = self.owner.fault_for("DATA", None)
        if fault:
            return fault
        auth = session.auth_data
        user = auth.login.decode() if isinstance(auth, LoginPassword) else None
        content = envelope.original_content if envelope.original_content is not None else envelope.content
        self.owner.messages.append(
            ReceivedMessage(
                mail_from=str(envelope.mail_from),
                rcpt_tos=tuple(envelope.rcpt_tos),
                raw=bytes(content or b""),
                mail_options=tuple(envelope.mail_options),
                tls=_is_tls(server),
                auth_user=user,
            )
        )
        return "250 Message accepted for delivery"


def _is_tls(server: SMTP) -> bool:
    # session.ssl is only set by STARTTLS; implicit TLS shows on the transport.
    transport = server.transport
    return transport is not None and transport.get_extra_info("ssl_object") is not None


def _authenticator(
    server: SMTP, session: Session, envelope: Envelope, mechanism: str, auth_data: Any
) -> AuthResult:
    ok = (
        isinstance(auth_data, LoginPassword)
        and auth_data.login == USERNAME.encode()
        and auth_data.password == PASSWORD.encode()
    )
    return AuthResult(success=ok, handled=False, auth_data=auth_data if ok else None)


class _CountingController(Controller):
    """A Controller that remembers every session, to count connections and to
    cut them all when the server stops (a real outage drops clients too)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sessions: list[SMTP] = []

    def factory(self) -> SMTP:
        smtp = super().factory()
        self.sessions.append(smtp)
        return smtp

    def drop_clients(self) -> None:
        done = threading.Event()

        def close_all() -> None:
            for smtp in self.sessions:
                transport = getattr(smtp, "transport", None)
                if transport is not None:
                    transport.abort()
            done.set()

        self.loop.call_soon_threadsafe(close_all)
        done.wait(5)


@dataclass
class SmtpTestServer:
    mode: str = "plain"
    auth: bool = False
    tls: TlsFiles | None = None
    pipelining: bool = False  # offer PIPELINING in the EHLO answer
    host: str = "127.0.0.1"
    port: int = 0  # 0: pick a free port at the first start, then keep it
    messages: list[ReceivedMessage] = field(default_factory=list)
    faults: dict[str, str] = field(default_factory=dict)
    _controller: _CountingController | None = field(default=None, repr=False)
    _connections_before: int = field(default=0, repr=False)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        if self.mode != "plain" and self.tls is None:
            raise ValueError(f"mode {self.mode!r} needs tls=TlsFiles")

    # ------------------------------------------------------------- lifecycle

    def _server_context(self) -> ssl.SSLContext:
        assert self.tls is not None
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(self.tls.cert), str(self.tls.key))
        return context

    def start(self) -> SmtpTestServer:
        if self._controller is not None:
            raise RuntimeError("already running")
        if not self.port:
            self.port = free_port(self.host)
        kwargs: dict[str, Any] = {"hostname": self.host, "port": self.port, "ready_timeout": 5.0}
        if self.mode == "starttls":
            kwargs.update(tls_context=self._server_context(), require_starttls=True)
        elif self.mode == "tls":
            kwargs["ssl_context"] = self._server_context()
        if self.auth:
            kwargs.update(
                authenticator=_authenticator,
                # aiosmtpd only counts STARTTLS as TLS (implicit TLS would hide
                # AUTH), and plain mode has no TLS at all: offer AUTH regardless.
                auth_require_tls=self.mode == "starttls",
                # Mail without AUTH is refused in handle_MAIL instead of with
                # auth_required, which warns when combined with the line above.
                auth_required=False,
            )
        controller = _CountingController(_Handler(self), **kwargs)
        controller.start()
        self._controller = controller
        # start() opens one probe connection of its own; do not count it.
        self._connections_before = len(controller.sessions)
        return self

    def stop(self) -> None:
        controller, self._controller = self._controller, None
        if controller is None:
            return
        controller.drop_clients()
        controller.stop()

    def restart(self) -> None:
        """Stop (dropping all clients) and start again on the same port."""
        self.stop()
        self.start()

    @property
    def running(self) -> bool:
        return self._controller is not None

    @property
    def connections(self) -> int:
        """Client connections accepted since the last start."""
        if self._controller is None:
            return 0
        return len(self._controller.sessions) - self._connections_before

    # ---------------------------------------------------------------- faults

    def fail(self, command: str, reply: str, *, address: str | None = None) -> None:
        """Answer `command` ("MAIL", "RCPT" or "DATA") with `reply` from now on,
        e.g. fail("RCPT", "550 5.1.1 unknown user"); with address, only for it."""
        command = command.upper()
        if command not in ("MAIL", "RCPT", "DATA"):
            raise ValueError("faults can be injected into MAIL, RCPT or DATA")
        self.faults[f"{command}:{address.lower()}" if address else command] = reply

    def clear_faults(self) -> None:
        self.faults.clear()

    def fault_for(self, command: str, address: str | None) -> str | None:
        if address is not None:
            specific = self.faults.get(f"{command}:{address.lower()}")
            if specific:
                return specific
        return self.faults.get(command)

    # ----------------------------------------------------------------- client

    def settings(self, **overrides: Any) -> SmtpSettings:
        """SmtpSettings that reach this server (credentials and CA included)."""
        values: dict[str, Any] = {
            "host": self.host,
            "port": self.port,
            "security": {"plain": "none", "starttls": "starttls", "tls": "tls"}[self.mode],
            "timeout": 5.0,
            "local_hostname": "judge.test",
        }
        if self.auth:
            values.update(username=USERNAME, password=PASSWORD)
        if self.tls is not None:
            values["cafile"] = str(self.tls.cert)
        values.update(overrides)
        return SmtpSettings(**values)

    def __enter__(self) -> SmtpTestServer:
        return self.start() if not self.running else self

    def __exit__(self, *exc: object) -> None:
        self.stop()
