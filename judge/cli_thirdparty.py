"""`judge thirdparty`: the operator's side of this judge as the blinding
protocol's third party (docs/blinding.md). A THIRDPARTY request from a judge
not in `[blinding] trusted_judges` waits until the operator accepts it."""

from __future__ import annotations

import click


@click.group()
def thirdparty() -> None:
    """Accept or refuse being the third party of another judge's game."""


def _decide(ctx: click.Context, game: str, gm: str | None, accept: bool) -> None:
    from judge import audit, blindmail
    from judge.cli_moderate import _judge
    from judge.clock import SystemClock

    judge = _judge(ctx)
    now = SystemClock().now()
    with judge.sessions.begin() as s:
        runs = [r for r in blindmail.tp_runs(s, game.lstrip("?")) if r.state.get("pending")
                and (gm is None or r.gm.casefold() == gm.casefold())]
        if not runs:
            raise click.ClickException(f"no request to be the third party of ?{game.lstrip('?')} waits")
        if len(runs) > 1:
            raise click.ClickException("several requests wait for that game: name the GM's judge with --gm ("
                                       + ", ".join(r.gm for r in runs) + ")")
        (run,) = runs
        if accept:
            run.state = {**run.state, "pending": False}
        else:
            run.finished = True
            run.state = {**run.state, "pending": False, "closed": "refused by the operator"}
        audit.record(s, now, "state", run=run.id, blinding="accepted" if accept else "refused by the operator")
        click.echo(f"?{run.game} of {run.gm}: " + ("this judge is its third party" if accept else "refused"))


def _command(name: str, accept: bool, doc: str) -> None:
    """`judge thirdparty accept|refuse GAME [--gm JUDGE]`."""
    def command(ctx: click.Context, game: str, gm: str | None) -> None:
        _decide(ctx, game, gm, accept)

    command.__doc__ = doc
    option = click.option("--gm", help="The GM's judge, when several ask for the same game name.")
    thirdparty.command(name)(click.argument("game")(option(click.pass_context(command))))


_command("accept", True, "Be the third party of GAME, as its GM's judge asked.")
_command("refuse", False, "Refuse to be the third party of GAME.")
