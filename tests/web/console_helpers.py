"""Helpers of the console's tests: a judge with a moderator account, a
TestClient (httpx) on its web app, the login, a form's CSRF token."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

from judge.web.app import create_app
from judge.web.auth import set_moderator
from tests.harness import Harness

MOD, MOD_PASSWORD = "mod", "a long moderator password"
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def add_moderator(h: Harness, name: str = MOD, password: str = MOD_PASSWORD) -> None:
    with h.judge.sessions.begin() as s:
        set_moderator(s, name, password, h.clock.now(), cost=4)


def client(h: Harness, store_url: str | None = None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # starlette's note on httpx vs httpx2: the client works the same
        from starlette.testclient import TestClient

    app = create_app(h.config, store_url=store_url)
    return TestClient(app, follow_redirects=False)


def csrf_of(html: str) -> str:
    m = _CSRF.search(html)
    assert m, "no CSRF token in the page"
    return m.group(1)


def log_in(c, name: str = MOD, password: str = MOD_PASSWORD):
    token = csrf_of(c.get("/console/login").text)
    return c.post("/console/login", data={"csrf": token, "name": name, "password": password,
                                          "next": "/console/"})


def make_harness(tmp_path: Path, url: str | None = None) -> Harness:
    return Harness(tmp_path / "data", url or f"sqlite:///{tmp_path / 'j.sqlite3'}")


def quarantine(h: Harness, monkeypatch, node: type, sender: str, body: str, boom: str, **kw) -> None:
    """`sender` mails `body`, whose command (of type `node`) meets a bug
    (RuntimeError `boom`), so the mail is quarantined; the handler is mended
    after it, for a rerun to succeed. `kw`: the mail's (subject...)."""
    from judge import commands

    def broken(ctx, node_):
        raise RuntimeError(boom)

    with monkeypatch.context() as m:
        m.setitem(commands.HANDLERS, node, broken)
        h.mail(sender, body, **kw)
