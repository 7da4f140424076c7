"""Moderators' commands: resume a stuck game, lift a master's (or a
player's) password lock, run a quarantined mail again, make an account of
the web console. All act on the store only; the daemon carries on."""

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


@click.group(invoke_without_command=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def quarantine(ctx: click.Context, fmt: str) -> None:
    """List the quarantined mails (a bug met them) with their error."""
    if ctx.invoked_subcommand is not None:
        return
    import json

    from judge.failures import quarantined_mails

    with _judge(ctx).sessions() as s:
        rows = quarantined_mails(s)
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("no mail is quarantined")
    for r in rows:
        click.echo(f"#{r['id']:<6} {r['received_at'][:19].replace('T', ' ')}  from {r['sender']}: {r['subject']!r}"
                   f"\n        error: {r['error']}")


@quarantine.command("rerun")
@click.argument("ids", nargs=-1, type=int, required=True)
@click.pass_context
def quarantine_rerun(ctx: click.Context, ids: tuple[int, ...]) -> None:
    """Run quarantined mails again (after the cause is mended), at the next pass."""
    from judge.cli import each_id
    from judge.failures import rerun_mail

    each_id(_judge(ctx.parent), ids, lambda s, mail_id, now: rerun_mail(s, mail_id, now, by="judge quarantine rerun"),
            "queued to run again")


@click.group()
def moderator() -> None:
    """Accounts of the web console (`judge web`, /console/)."""


@moderator.command("add")
@click.argument("name")
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input (one line), "
              "not from the terminal.")
@click.pass_context
def moderator_add(ctx: click.Context, name: str, password_stdin: bool) -> None:
    """Make (or give a new password to) the console account NAME."""
    import sys

    from judge.clock import SystemClock
    from judge.web.auth import AccountError, set_moderator

    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    judge = _judge(ctx.parent)
    try:
        with judge.sessions.begin() as s:
            made = set_moderator(s, name, password, SystemClock().now(), cost=judge.config.password_cost)
    except AccountError as err:
        raise click.ClickException(str(err)) from err
    click.echo(f"moderator {name}: {'account made' if made else 'password changed'}")


@moderator.command("remove")
@click.argument("name")
@click.pass_context
def moderator_remove(ctx: click.Context, name: str) -> None:
    """Delete the console account NAME (its open sessions end)."""
    from judge.web.auth import remove_moderator

    with _judge(ctx.parent).sessions.begin() as s:
        if not remove_moderator(s, name):
            raise click.ClickException(f"no moderator {name!r}")
    click.echo(f"moderator {name}: account removed")


@moderator.command("list")
@click.pass_context
def moderator_list(ctx: click.Context) -> None:
    """The console's accounts."""
    from judge.web.auth import moderators

    with _judge(ctx.parent).sessions() as s:
        rows = moderators(s)
    for r in rows:
        click.echo(f"{r['name']:<20} since {r['created_at'][:16].replace('T', ' ')}")
    if not rows:
        click.echo("no moderator accounts (judge moderator add NAME)")
