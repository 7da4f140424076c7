"""`judge web` and `judge serve --web` as real processes on real stores:
the pages are served from the store the daemon writes, the port comes from
the config or --port, and the daemon goes on answering mail at once while
twenty clients keep asking for pages."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import httpx

from tests.harness import make_mail
from tests.test_deliver_daemon import JUDGE_BIN, SETTLE, deliver, until, write_config


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running(args: list[str], env: dict, log: Path, ready: bytes):
    with log.open("ab") as out:
        proc = subprocess.Popen([JUDGE_BIN, *args], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env)
    try:
        until(lambda: ready in log.read_bytes() or proc.poll() is not None)
        assert proc.poll() is None, log.read_text()
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=SETTLE)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def wait_http(url: str) -> httpx.Response:
    end = time.monotonic() + SETTLE
    while True:
        try:
            return httpx.get(url, timeout=10)
        except httpx.TransportError:
            assert time.monotonic() < end, f"{url} never answered"
            time.sleep(0.1)


def test_judge_web_serves_the_store_on_the_port_given(tmp_path):
    env = write_config(tmp_path)
    port = free_port()
    with running(["web", "--port", str(port)], env, tmp_path / "web.log", b"Uvicorn running") as proc:
        assert f"web pages on http://127.0.0.1:{port}/" in (tmp_path / "web.log").read_text()
        page = wait_http(f"http://127.0.0.1:{port}/")
        assert page.status_code == 200 and ">g<" in page.text and "preference" in page.text
        assert wait_http(f"http://127.0.0.1:{port}/static/web.js").status_code == 200
    assert proc.returncode in (0, -signal.SIGTERM)


def test_serve_web_answers_mail_at_once_while_pages_are_read(tmp_path, database_url):
    env = write_config(tmp_path, database_url)
    port = free_port()
    config = Path(env["JUDGE_CONFIG"])
    config.write_text(config.read_text() + f"\n[web]\nport = {port}\n")  # the port from the config
    with running(["serve", "--web"], env, tmp_path / "serve.log", b"judge: running"):
        base = f"http://127.0.0.1:{port}"
        assert "p" in wait_http(base + "/game/g").text
        stop = threading.Event()
        answered: list[int] = []

        def reader() -> None:
            with httpx.Client(timeout=30) as client:
                while not stop.is_set():
                    answered.append(client.get(base + "/game/g").status_code)

        readers = [threading.Thread(target=reader) for _ in range(20)]
        for t in readers:
            t.start()
        try:
            until(lambda: len(answered) > 40)
            # A player joins by mail: `judge deliver` stores it and wakes the
            # daemon, which answers while the pages are being read.
            started = time.monotonic()
            out = deliver(env, make_mail("Quentin Q <q@example.test>", "SIGNON ?g pw"), "--no-process")
            assert "stored" in out or "processed" in out
            until(lambda: "Quentin Q" in httpx.get(base + "/game/g", timeout=30).text)
            took = time.monotonic() - started
        finally:
            stop.set()
            for t in readers:
                t.join()
    assert set(answered) == {200} and len(answered) > 40
    assert took < 15, took  # the daemon's poll is 600 s: it was woken, and not held up by the pages


def test_the_web_listens_on_the_loopback_8080_unless_told(tmp_path):
    import pytest

    from judge.config import ConfigError, load_config

    config = load_config(None, data_dir=tmp_path)
    assert (config.web_host, config.web_port) == ("127.0.0.1", 8080)
    config = load_config(None, data_dir=tmp_path, overrides={"web": {"host": "0.0.0.0", "port": 9000}})
    assert (config.web_host, config.web_port) == ("0.0.0.0", 9000)
    with pytest.raises(ConfigError, match=r"\[web\] port"):
        load_config(None, data_dir=tmp_path, overrides={"web": {"port": 70000}})
    with pytest.raises(ConfigError, match=r"\[web\] unknown option"):
        load_config(None, data_dir=tmp_path, overrides={"web": {"listen": "x"}})
