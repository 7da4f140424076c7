"""Moderators' commands: resume a stuck game, lift a master's (or a
player's) password lock. Both act on the store only; the daemon carries on."""

from __future__ import annotations

import click


def _judge(ctx: click.Context):
    """The store only: no sources, no transport."""
    from judge.app import build_judge
    from judge.cli import _config

    return build_judge(_config(ctx), with_io=False)


@click.command()
@click.argument("game")
@click.pass_context
def unstick(ctx: click.Context, game: str) -> None:
    """Resume a stuck GAME in the state it had (after its cause is mended)."""
    from judge.clock import SystemClock
    from judge.failures import unstick as resume
    from judge.games import find_game

    judge = _judge(ctx)
    with judge.sessions.begin() as s:
        g = find_game(s, game.lstrip("?"))
        if g is None:
            raise click.ClickException(f"no game {game!r}")
        try:
            state = resume(s, g, SystemClock().now())
        except ValueError as err:
            raise click.ClickException(str(err)) from err
    click.echo(f"?{game.lstrip('?')} resumed: {state}")


@click.command()
@click.argument("game")
@click.argument("player", required=False)
@click.pass_context
def unlock(ctx: click.Context, game: str, player: str | None) -> None:
    """Lift the password lock of GAME's master, or of PLAYER (address or name)."""
    from judge import lockout
    from judge.clock import SystemClock
    from judge.games import find_game, find_player

    judge = _judge(ctx)
    with judge.sessions.begin() as s:
        g = find_game(s, game.lstrip("?"))
        if g is None:
            raise click.ClickException(f"no game {game!r}")
        who = None
        if player is not None:
            who = find_player(g, player)
            if who is None:
                raise click.ClickException(f"no player {player!r} in ?{g.name}")
        lockout.unlock(s, g, who, SystemClock().now())
    click.echo(f"?{g.name}: the password of {who.address if who else 'the master'} is unlocked")
