"""SMTP server fixtures for any test module that needs one.

tests/conftest.py imports them, so every test module can ask for them:

"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from tests.smtp_server import SmtpTestServer, TlsFiles, make_self_signed_cert


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    """One self-signed certificate (for 127.0.0.1/localhost) per test session."""
    return make_self_signed_cert(Path(tmp_path_factory.mktemp("smtp-tls")))


@pytest.fixture
def smtp_server() -> Iterator[SmtpTestServer]:
    """A running plain-text SMTP server without AUTH on a free loopback port."""
    server = SmtpTestServer(mode="plain").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def smtp_server_factory(tls_files: TlsFiles) -> Iterator[Callable[..., SmtpTestServer]]:
    """make(mode="plain"|"starttls"|"tls", auth=False) -> a started server;
    all are stopped after the test."""
    servers: list[SmtpTestServer] = []

    def make(mode: str = "plain", *, auth: bool = False, **kwargs: Any) -> SmtpTestServer:
        server = SmtpTestServer(mode=mode, auth=auth, tls=tls_files if mode != "plain" else None, **kwargs)
        servers.append(server)
        return server.start()

    try:
        yield make
    finally:
        for server in servers:
            server.stop()
