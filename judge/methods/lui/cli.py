"""`judge lui log GAME`: a Lowest Unique Integer mail game's log as the file
`judge resolve` replays (docs/lui.md), as `judge pt3 log` does for PT3. It
reads the store, like `judge log`.
"""

from __future__ import annotations

import json

import click


@click.group()
def lui() -> None:
    """Lowest Unique Integer: a mail game's log for `judge resolve` (docs/lui.md)."""


@lui.command("log")
@click.argument("game")
@click.pass_context
def log_(ctx: click.Context, game: str) -> None:
    """The replay file of mail game GAME: its settings and players as they
    were at START and every command the engine took, with its time; `until`
    is the game's clock now, so that `judge resolve` of it gives the game
    as it stands (finished or running)."""
    from judge.app import build_judge
    from judge.cli import _config
    from judge.driver.view import game_view
    from judge.games import find_game
    from judge.methods import method_of
    from judge.methods.lui import METHOD
    from judge.methods.lui.live import Live, replay_input

    judge = build_judge(_config(ctx), with_io=False)
    with judge.sessions() as s:
        found = find_game(s, game.lstrip("?"))
        if found is None:
            raise click.ClickException(f"no game {game!r}")
        if method_of(found) is not METHOD:
            raise click.ClickException(f"?{found.name} is a {found.method} game, not Lowest Unique Integer")
        if not found.method_state:
            raise click.ClickException(f"?{found.name} has not started (it is {found.state})")
        view = game_view(found)
    live = Live.of(view)
    data = {**replay_input(view, live), "until": live.state.clock}
    click.echo(json.dumps(data, indent=2))
