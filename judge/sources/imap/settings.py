"""The IMAP source's settings: the [imap] table, read when `[inbox] type =
"imap"` (or when the file has the table: it is checked at start either
way)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import TYPE_CHECKING

from judge.tables import Table

if TYPE_CHECKING:
    import ssl

TABLE = "imap"
KEYS = frozenset({"host", "port", "security", "username", "password", "folder", "processed", "cafile", "verify",
                  "timeout", "idle_timeout"})
SECURITY = ("none", "starttls", "tls")


def is_loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost.localdomain") or host.lower().endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class ImapSettings:
    host: str
    port: int | None = None  # None: 993 for "tls", 143 otherwise
    security: str = "tls"  # none (loopback only) | starttls | tls
    username: str = ""
    password: str = ""
    folder: str = "INBOX"
    processed: str = "flag"  # "flag": keyword $JudgeDone; anything else: the folder to move mail to
    cafile: str | None = None
    verify: bool = True
    timeout: float = 30.0  # seconds, for connecting and every command
    idle_timeout: float = 600.0  # longest single IDLE before it is renewed (servers drop at ~30 min)
    backoff_initial: float = 1.0
    backoff_max: float = 300.0

    def __post_init__(self) -> None:
        if self.security not in SECURITY:
            raise ValueError(f"IMAP security must be one of {', '.join(SECURITY)}, not {self.security!r}")
        if self.security == "none" and not is_loopback(self.host):
            raise ValueError(f"IMAP without TLS is only allowed to a loopback host, not {self.host!r}")
        if not self.host:
            raise ValueError("IMAP host missing")
        if not self.processed:
            raise ValueError('IMAP "processed" must be "flag" or a folder name')
        if self.processed == self.folder:
            raise ValueError("IMAP processed folder must differ from the folder read")
        if self.port is not None and not 0 < self.port < 65536:
            raise ValueError(f"bad IMAP port {self.port}")

    @property
    def effective_port(self) -> int:
        return self.port or (993 if self.security == "tls" else 143)

    def ssl_context(self) -> ssl.SSLContext:
        import ssl  # here: reading the configuration (every `judge deliver`) needs no TLS

        ctx = ssl.create_default_context(cafile=self.cafile)
        if not self.verify:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        return ctx


def read_settings(table: Table) -> ImapSettings:
    try:
        return ImapSettings(
            host=table.get("host", str, "localhost"),
            port=table.get("port", int, None),
            security=table.get("security", str, "tls"),
            username=table.get("username", str, ""),
            password=table.get("password", str, ""),
            folder=table.get("folder", str, "INBOX"),
            processed=table.get("processed", str, "flag"),
            cafile=table.get("cafile", str, None),
            verify=table.get("verify", bool, True),
            timeout=table.number("timeout", 30.0),
            idle_timeout=table.number("idle_timeout", 600.0),
        )
    except ValueError as err:
        raise table.error(None, str(err)) from err


# config.imap, as the Config named it before the sources read their own tables.
CONFIG_NAMES = {"imap": lambda settings: settings}
