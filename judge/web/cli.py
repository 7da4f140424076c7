"""`judge web`: the web pages alone (docs/web.md). Its own module: the CLI
loads Starlette and uvicorn only for this command and `judge serve --web`."""

from __future__ import annotations

import click


@click.command()
@click.option("--host", help="Address to listen on (default: [web] host, else 127.0.0.1).")
@click.option("--port", type=int, help="Port to listen on (default: [web] port, else 8080).")
@click.pass_context
def web(ctx: click.Context, host: str | None, port: int | None) -> None:
    """Serve the public pages and the moderators' console over the store."""
    import sys

    from judge.cli import EXIT_CONFIG, _config
    from judge.config import ConfigError
    from judge.store.db import make_engine, upgrade
    from judge.web.server import make_server

    config = _config(ctx)
    config.data_dir.mkdir(parents=True, exist_ok=True)
    upgrade(make_engine(config.database_url))  # a fresh store gets its tables, as for every command
    try:
        server = make_server(config, host, port)
    except ConfigError as err:  # the session key unusable: one line, and systemd's "do not restart"
        click.echo(f"judge: configuration error: {err}", err=True)
        sys.exit(EXIT_CONFIG)
    click.echo(f"judge: web pages on http://{server.config.host}:{server.config.port}/")
    server.run()
