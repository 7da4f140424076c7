"""The web application: one Starlette app over the judge's store.

The web side only reads the store, through its own engine and connections
(never the daemon's), so a slow page cannot hold up a mail or a deadline.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from jinja2 import Environment
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from judge.config import Config
from judge.resources import data_dir
from judge.store.db import make_engine, session_factory

SECRET_FILE = "web_session_secret"
# The key signs every session cookie: a short one could be guessed. Made
# as 64 characters (48 random bytes); fewer than this is refused.
SECRET_MIN = 32


def session_secret(config: Config) -> str:
    """The key that signs session cookies: a file of the data directory,
    made once (0600), so sessions outlive a restart and no option is needed.
    It is written whole under a name of its own and linked into place, so a
    full disk or a crash never leaves an empty or cut key behind; a key
    file that is empty or short all the same (written by hand, or by an
    older judge) stops the start (ConfigError) instead of signing cookies
    with it."""
    path = Path(config.data_dir) / SECRET_FILE
    try:
        return _checked_secret(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{SECRET_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(secrets.token_urlsafe(48) + "\n")
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(partial, path)  # in place at once and whole, unless another process made one first
        except FileExistsError:
            pass  # theirs is used
    finally:
        partial.unlink(missing_ok=True)
    return _checked_secret(path)


def _checked_secret(path: Path) -> str:
    from judge.config import ConfigError

    try:
        key = path.read_text(encoding="ascii").strip()
    except UnicodeDecodeError:
        key = ""
    if len(key) < SECRET_MIN:
        raise ConfigError(f"the web's session key {path} is empty or too short ({len(key)} characters, at least "
                          f"{SECRET_MIN}): remove the file, and a new key is made at the next start")
    return key


def templates_environment(config: Config) -> Environment:
    """The pages' jinja2 environment: templates/ (templates/web/ for the
    pages), HTML autoescaped always, so a player's name is text, never markup."""
    from judge.templating import build_environment

    env = build_environment(html=True)
    env.globals["judge_name"] = config.name
    env.globals["docs_url"] = config.docs_url
    env.globals["judge_address"] = config.address  # a forming game's "how to join" box
    return env


def create_app(config: Config, *, store_url: str | None = None) -> Starlette:
    """The whole site over the store at `store_url` (default: the config's).
    request.app.state has: config, engine, sessions (a sessionmaker),
    templates (the jinja2 environment)."""
    from judge.web import console, metrics, public

    engine = make_engine(store_url or config.database_url)
    routes = [*public.routes(),
              Mount("/console", routes=console.routes()),
              Route("/metrics", metrics.endpoint),
              Mount("/static", app=StaticFiles(directory=str(data_dir("templates") / "web" / "static")),
                    name="static")]
    middleware = [Middleware(SessionMiddleware, secret_key=session_secret(config),
                             session_cookie="judge_session", same_site="strict", https_only=False)]
    if config.web_trusted_proxies:
        # X-Forwarded-For and -Proto believed from these clients only (the
        # server's own reading of them is off: judge.web.server).
        from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

        middleware.insert(0, Middleware(ProxyHeadersMiddleware, trusted_hosts=list(config.web_trusted_proxies)))
    app = Starlette(routes=routes, middleware=middleware)
    app.state.config = config
    app.state.engine = engine
    app.state.sessions = session_factory(engine)
    app.state.templates = templates_environment(config)
    return app
