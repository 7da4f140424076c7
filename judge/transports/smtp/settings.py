"""The SMTP transport's settings: the [smtp] table, read when `[outbox]
transport = "smtp"` (or when the file has the table: it is checked at start
either way)."""

from __future__ import annotations

from dataclasses import dataclass

from judge.tables import Table

TABLE = "smtp"
KEYS = frozenset({"host", "port", "security", "username", "password", "timeout", "cafile", "verify"})
_SECURITY_MODES = ("none", "starttls", "tls")
# The port of each kind of security when [smtp] port is not given.
_PORTS = {"none": 25, "starttls": 587, "tls": 465}


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
    # Connections a batch of mails is sent over side by side.
    connections: int = 1

    def __post_init__(self) -> None:
        if self.security not in _SECURITY_MODES:
            raise ValueError(f"security must be one of {_SECURITY_MODES}, not {self.security!r}")
        if not 0 < self.port < 65536:
            raise ValueError(f"bad SMTP port {self.port}")
        if self.timeout <= 0:
            raise ValueError("timeout must be positive")
        if self.connections < 1:
            raise ValueError("connections must be at least 1")

    def __repr__(self) -> str:  # never print the password into logs
        shown = "***" if self.password is not None else None
        return (
            f"SmtpSettings(host={self.host!r}, port={self.port}, security={self.security!r}, "
            f"username={self.username!r}, password={shown!r}, timeout={self.timeout}, "
            f"cafile={self.cafile!r}, verify={self.verify}, local_hostname={self.local_hostname!r}, "
            f"connections={self.connections})"
        )


def read_settings(table: Table) -> SmtpSettings:
    security = table.get("security", str, "none")
    if security not in _SECURITY_MODES:
        raise table.error("security", f"'none', 'starttls' or 'tls', not {security!r}")
    try:
        return SmtpSettings(
            host=table.get("host", str, "localhost"),
            port=table.get("port", int, _PORTS[security]),
            security=security,
            username=table.get("username", str, None),
            password=table.get("password", str, None),
            timeout=table.number("timeout", 30.0),
            cafile=table.get("cafile", str, None),
            verify=table.get("verify", bool, True),
        )
    except ValueError as err:
        raise table.error(None, str(err)) from err


# config.smtp, as the Config named it before the transports read their own tables.
CONFIG_NAMES = {"smtp": lambda settings: settings}
