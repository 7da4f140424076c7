"""The web console as it is deployed, behind a reverse proxy or not (issue
25, point 10). Each attack that got through:

- X-Forwarded-For was believed from any loopback client (uvicorn's own
  default), so 12 wrong passwords with rotating values were never limited,
  and a login through a forged value worked. Now it is believed from
  `[web] trusted_proxies` alone; tested over a real uvicorn server.
- A session cookie replayed after logout still worked for 12 hours. Now
  logout ends the session in the store.
- Feed links were built from the request's Host header (`Host: evil.example`
  gave `http://evil.example/...`). Now from `[web] public_url`, else the
  address the server listens on.
- A disk-full first start left an empty `web_session_secret`, and the next
  start signed cookies with an empty key. Now the key is written whole or
  not at all, and a start on an empty or short key is refused.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import httpx
import pytest

from judge.config import ConfigError
from judge.web.app import SECRET_FILE, create_app, session_secret
from judge.web.auth import LoginLimiter
from judge.web.server import Background, make_server
from tests.web.console_helpers import MOD, MOD_PASSWORD, add_moderator, client, csrf_of, log_in, make_harness
from tests.web.games import blind_auction

JUDGE_BIN = str(Path(sys.executable).with_name("judge"))
ATOM = "{http://www.w3.org/2005/Atom}"


def with_web(h, **web) -> None:
    """The harness's configuration with these [web] settings."""
    h.config = h.judge.config = dataclasses.replace(h.config, **web)


class Served:
    """`judge web`'s server (uvicorn, as make_server builds it) on a free
    loopback port, over the harness's store."""

    def __init__(self, h) -> None:
        self.background = Background(make_server(h.config, "127.0.0.1", 0, log_level="warning")).start()
        self.url = f"http://127.0.0.1:{self.background.port}"
        self.app = self.background.server.config.app
        self.app.state.login_limiter = LoginLimiter(limit=5, window=900)

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, follow_redirects=False, timeout=30)

    def log_in(self, c: httpx.Client, password: str, forwarded: str | None = None) -> httpx.Response:
        headers = {"X-Forwarded-For": forwarded} if forwarded else {}
        token = csrf_of(c.get("/console/login", headers=headers).text)
        return c.post("/console/login", headers=headers,
                      data={"csrf": token, "name": MOD, "password": password, "next": "/console/"})

    def stop(self) -> None:
        self.background.stop()


@pytest.fixture
def served(tmp_path):
    made = []

    def serve(**web):
        h = make_harness(tmp_path)
        add_moderator(h)
        with_web(h, **web)
        made.append((h, Served(h)))
        return made[-1]

    yield serve
    for h, s in made:
        s.stop()
        h.close()


def test_a_forwarded_address_from_an_untrusted_client_is_ignored(served, caplog):
    """No trusted proxy configured: rotating X-Forwarded-For values are one
    client (the loopback), and the account is locked after five guesses."""
    h, web = served()
    with web.client() as c, caplog.at_level("WARNING", logger="judge.web.console"):
        for i in range(12):
            r = web.log_in(c, f"guess{i}", forwarded=f"203.0.113.{i}")
            assert r.status_code == (401 if i < 5 else 429), (i, r.status_code)
        assert web.log_in(c, MOD_PASSWORD, forwarded="198.51.100.1").status_code == 429
    said = "\n".join(r.getMessage() for r in caplog.records)
    assert "203.0.113." not in said and "failed login from 127.0.0.1" in said


def test_a_trusted_proxy_names_the_client_and_the_limits_still_hold(served, caplog):
    h, web = served(web_trusted_proxies=("127.0.0.1",))
    with web.client() as c, caplog.at_level("WARNING", logger="judge.web.console"):
        for i in range(12):  # every guess from another address: the account's count still holds
            r = web.log_in(c, f"guess{i}", forwarded=f"203.0.113.{i}")
            assert r.status_code == (401 if i < 5 else 429), (i, r.status_code)
        # A forged hop before the proxy's is not the client: the proxy's own
        # entry (the last) is, which the proxy appends.
        assert web.log_in(c, "guess", forwarded="127.0.0.1, 203.0.113.99").status_code == 429
    said = "\n".join(r.getMessage() for r in caplog.records)
    assert "failed login from 203.0.113.0" in said and "failed login from 203.0.113.4" in said
    assert "failed login from 127.0.0.1" not in said


def test_a_proxy_not_listed_is_not_believed(served):
    """The proxy names 10.0.0.0/8 only: a loopback client's header is its own text."""
    h, web = served(web_trusted_proxies=("10.0.0.0/8",))
    with web.client() as c:
        assert web.log_in(c, "guess", forwarded="203.0.113.7").status_code == 401
    with h.judge.sessions() as s:
        from sqlalchemy import select

        from judge.store.models import LoginFailure

        assert s.scalars(select(LoginFailure.address)).all() == ["127.0.0.1"]


def test_trusted_proxies_refuse_a_wildcard_in_the_configuration():
    from judge.config import load_config

    for bad in (["*"], ["proxy.example"], "127.0.0.1"):
        with pytest.raises(ConfigError, match=r"\[web\] trusted_proxies"):
            load_config(None, overrides={"web": {"trusted_proxies": bad}})


def test_a_cookie_replayed_after_logout_is_refused(tmp_path):
    h = make_harness(tmp_path)
    add_moderator(h)
    c = client(h)
    assert log_in(c).status_code == 303
    copied = dict(c.cookies)  # what an attacker took off the moderator's machine
    assert c.get("/console/").status_code == 200
    token = csrf_of(c.get("/console/").text)
    assert c.post("/console/logout", data={"csrf": token}).status_code == 303
    assert c.get("/console/").status_code == 303
    replay = client(h)
    for name, value in copied.items():
        replay.cookies.set(name, value)
    assert replay.get("/console/").status_code == 303  # to the login: no session
    assert replay.post("/console/outbox/1/retry", data={"csrf": token}).status_code == 403
    # Another login (another session) is not ended by this one's logout.
    other = client(h)
    assert log_in(other).status_code == 303 and other.get("/console/").status_code == 200
    h.close()


def test_feed_links_never_come_from_the_host_header(tmp_path):
    h = make_harness(tmp_path)
    blind_auction(h)
    # No public URL configured: the address the server listens on.
    web = Served(h)
    try:
        feed = httpx.get(web.url + "/game/spring/feed.atom", headers={"Host": "evil.example"}, timeout=30).text
        assert "evil.example" not in feed
        links = [e.get("href") for e in ET.fromstring(feed).iter(f"{ATOM}link")]
        assert links and all(link.startswith(web.url + "/") for link in links), links
    finally:
        web.stop()
    with_web(h, web_public_url="https://judge.example.org")
    web = Served(h)
    try:
        for path in ("/feed.atom", "/game/spring/feed.atom"):
            feed = httpx.get(web.url + path, headers={"Host": "evil.example", "X-Forwarded-Host": "evil.example"},
                             timeout=30).text
            links = [e.get("href") for e in ET.fromstring(feed).iter(f"{ATOM}link")]
            assert links and all(link.startswith("https://judge.example.org/") for link in links), links
            assert "evil.example" not in feed
    finally:
        web.stop()
        h.close()


def test_the_session_key_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    """A write that fails half-way (the disk full) leaves no key file: the
    next start makes a whole one."""
    h = make_harness(tmp_path)
    key = Path(h.config.data_dir) / SECRET_FILE
    real_fsync = os.fsync

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        session_secret(h.config)
    assert not key.exists() and not list(Path(h.config.data_dir).glob(f".{SECRET_FILE}*"))
    monkeypatch.setattr(os, "fsync", real_fsync)
    made = session_secret(h.config)
    assert len(made) >= 64 and key.read_text().strip() == made and oct(key.stat().st_mode & 0o777) == "0o600"
    assert session_secret(h.config) == made  # kept across starts
    h.close()


@pytest.mark.parametrize("content", ["", "\n", "short-key\n"])
def test_a_start_on_an_empty_or_short_key_is_refused(tmp_path, content):
    h = make_harness(tmp_path)
    (Path(h.config.data_dir) / SECRET_FILE).write_text(content)
    with pytest.raises(ConfigError, match="empty or too short"):
        create_app(h.config)
    config = tmp_path / "judge.toml"
    config.write_text(f'[judge]\ndata_dir = "{h.config.data_dir}"\ndatabase = "{h.config.database_url}"\n'
                      f'password_cost = 4\n[web]\nport = 1\n')
    env = {k: v for k, v in os.environ.items() if k not in ("JUDGE_CONFIG", "JUDGE_DATA_DIR")}
    for command in (["web"], ["serve", "--web", "--once"]):
        run = subprocess.run([JUDGE_BIN, "-c", str(config), *command], capture_output=True, text=True, env=env,
                             timeout=120, stdin=subprocess.DEVNULL)
        assert run.returncode == 2, (command, run.stderr)
        assert "configuration error: the web's session key" in run.stderr and "Traceback" not in run.stderr
    h.close()
