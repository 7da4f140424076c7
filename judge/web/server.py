"""Running the web app: uvicorn in the foreground (`judge web`) or in a
thread beside the daemon (`judge serve --web`).

In a thread the server has its own event loop and its own store engine:
the daemon's loop never waits on a page, and a page never waits on the
daemon's transaction (SQLite in WAL mode and PostgreSQL both let readers
read while a writer writes).
"""

from __future__ import annotations

import threading
import time

import uvicorn

from judge.config import Config


def make_server(config: Config, host: str | None = None, port: int | None = None, *,
                store_url: str | None = None, log_level: str = "info") -> uvicorn.Server:
    from judge.web.app import create_app

    app = create_app(config, store_url=store_url)
    # proxy_headers off: uvicorn would believe X-Forwarded-For from any
    # loopback client ($FORWARDED_ALLOW_IPS); the app believes it from
    # [web] trusted_proxies alone (judge.web.app).
    settings = uvicorn.Config(app, host=host or config.web_host, port=config.web_port if port is None else port,
                              log_level=log_level, access_log=False, lifespan="off", proxy_headers=False)
    return uvicorn.Server(settings)


class Background:
    """The server in a daemon thread; `stop()` ends it."""

    def __init__(self, server: uvicorn.Server) -> None:
        self.server = server
        self.thread = threading.Thread(target=server.run, name="judge-web", daemon=True)

    def start(self, timeout: float = 20.0) -> Background:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("the web server stopped at its start (is the port taken?)")
            if time.monotonic() > deadline:
                raise RuntimeError("the web server did not start in time")
            time.sleep(0.02)
        return self

    @property
    def port(self) -> int:
        """The port it listens on (the one the OS chose for port 0)."""
        return self.server.servers[0].sockets[0].getsockname()[1]

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
