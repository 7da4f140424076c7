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


def session_secret(config: Config) -> str:
    """The key that signs session cookies: a file of the data directory,
    made once (0600), so sessions outlive a restart and no option is needed."""
    path = Path(config.data_dir) / SECRET_FILE
    try:
        return path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(48)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first: use theirs
        return path.read_text(encoding="ascii").strip()
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(key + "\n")
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
    app = Starlette(
        routes=routes,
        middleware=[Middleware(SessionMiddleware, secret_key=session_secret(config),
                               session_cookie="judge_session", same_site="strict", https_only=False)],
    )
    app.state.config = config
    app.state.engine = engine
    app.state.sessions = session_factory(engine)
    app.state.templates = templates_environment(config)
    return app
