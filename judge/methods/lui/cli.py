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
    from judge.cli import started_game
    from judge.driver.view import game_view
    from judge.methods.lui import METHOD
    from judge.methods.lui.live import Live, replay_input

    with started_game(ctx, game, METHOD, "Lowest Unique Integer") as (_, _, found):
        view = game_view(found)
    live = Live.of(view)
    data = {**replay_input(view, live), "until": live.state.clock}
    click.echo(json.dumps(data, indent=2))
