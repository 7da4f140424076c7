"""A real Dovecot (IMAP/IMAPS/LMTP) and SMTP sink on loopback (tests/mailrig.sh),
started once per test session and stopped at its end."""

from __future__ import annotations

import os
import shlex
import smtplib
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

RIG = Path(__file__).resolve().parent / "mailrig.sh"


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in socks]
    finally:
        for sock in socks:
            sock.close()


def _run(rig_env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(RIG), *args], check=False, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, env={**os.environ, **rig_env})


def parse_env(text: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for line in text.splitlines():
        words = shlex.split(line)
        if words[:1] != ["export"]:
            continue
        for w in words[1:]:
            key, _, value = w.partition("=")
            env[key] = value
    return env


@dataclass
class MailRig:
    env: dict[str, str]
    host: str
    imap_port: int
    imaps_port: int
    smtp_port: int
    lmtp_port: int
    cafile: str
    users: dict[str, str] = field(default_factory=dict)  # address -> password
    rig_env: dict[str, str] = field(default_factory=dict)  # its folder and ports, for tests/mailrig.sh

    @property
    def user(self) -> str:
        return next(iter(self.users))

    @property
    def dir(self) -> Path:
        return Path(self.rig_env["MAILRIG_DIR"])

    def password(self, user: str | None = None) -> str:
        return self.users[user or self.user]

    def deliver(self, to: str, raw: bytes) -> None:
        """Deliver straight into `to`'s INBOX over LMTP (one recipient per transaction)."""
        with smtplib.LMTP(self.host, self.lmtp_port, timeout=30) as c:
            c.sendmail("sender@players.test", [to], raw)

    def doveadm(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["doveadm", "-c", f"{self.env['MAILRIG_DIR']}/dovecot.conf", *args],
                              capture_output=True, text=True, timeout=60, check=True)

    def reset(self) -> None:
        r = _run(self.rig_env, "reset")
        assert r.returncode == 0, r.stderr

    def restart_dovecot(self) -> None:
        r = _run(self.rig_env, "restart-dovecot")
        assert r.returncode == 0, r.stderr

    def clean(self) -> None:
        """Stop the servers and remove the rig's folder."""
        _run(self.rig_env, "clean")


def start_mailrig(name: str, separator: str = "/") -> MailRig:
    """A rig of its own (folder /tmp/NAME-PID and free ports), so that two test
    sessions or a bench on one machine never stop or reset each other's
    servers; `separator`: its folders' hierarchy separator. Raises
    RuntimeError if it does not start."""
    imap, imaps, lmtp, smtp = _free_ports(4)
    rig_env = {"MAILRIG_DIR": f"/tmp/{name}-{os.getpid()}", "MAILRIG_IMAP_PORT": str(imap),
               "MAILRIG_IMAPS_PORT": str(imaps), "MAILRIG_LMTP_PORT": str(lmtp), "MAILRIG_SMTP_PORT": str(smtp),
               "MAILRIG_SEPARATOR": separator}
    try:
        r = _run(rig_env, "start", timeout=300)
    except subprocess.TimeoutExpired as e:
        raise RuntimeError(f"tests/mailrig.sh start timed out:\n{e.stderr}") from e
    if r.returncode != 0:
        raise RuntimeError(f"tests/mailrig.sh start failed ({r.returncode}):\n{r.stderr}")
    env = parse_env(r.stdout)
    users = {}
    for pair in env.get("MAILRIG_USERS", "").split():
        addr, _, pw = pair.partition(":")
        users[addr] = pw
    return MailRig(env=env, host=env["IMAP_HOST"], imap_port=int(env["IMAP_PORT"]),
                   imaps_port=int(env["IMAPS_PORT"]), smtp_port=int(env["SMTP_PORT"]),
                   lmtp_port=int(env["LMTP_PORT"]), cafile=env["MAILRIG_CAFILE"], users=users, rig_env=rig_env)


@pytest.fixture(scope="session")
def mailrig():
    try:
        rig = start_mailrig("judge-mailrig")
    except RuntimeError as err:
        pytest.fail(str(err))
    yield rig
    if not os.environ.get("MAILRIG_KEEP"):
        rig.clean()
