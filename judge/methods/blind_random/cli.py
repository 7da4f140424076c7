"""blind-random's `judge` subcommands (its Method's CLI; docs/blinding.md).

`judge blind`: the players' side of the blinding protocol. A player needs
nothing but these commands: make a blinding factor, add it to the message
the GM sent, and at the end find their power among the published blinds.
The judge plays the GM (and, when configured, the third party) by mail.

`judge thirdparty`: the operator's side of this judge as the protocol's
third party. A THIRDPARTY request from a judge not in `[blinding]
trusted_judges` waits until the operator accepts it.
"""

from __future__ import annotations

import os
import re

import click

from judge.methods.blind_random import blinding
from judge.variants import (
    STANDARD_POWERS,
    PowerListError,
    make_power_list,
    variant_powers,
)


def urandom_digits(n: int) -> str:
    """`n` digits from the operating system's randomness (os.urandom): each
    byte below 250 gives one digit (byte mod 10); bytes 250-255 are skipped so
    that every digit is equally likely."""
    out: list[str] = []
    while len(out) < n:
        for byte in os.urandom(n):
            if byte < 250 and len(out) < n:
                out.append(str(byte % 10))
    return "".join(out)


def _number(text: str, label: str) -> str:
    value = text.strip()
    try:
        return blinding.check_digits(value, label)
    except ValueError as err:
        raise click.ClickException(str(err)) from err


def _power_names(text: str | None) -> list[str]:
    if not text:
        return list(STANDARD_POWERS)
    try:
        if "," in text:
            return make_power_list(n for n in text.split(",") if n.strip()).names
        return variant_powers(text.strip()).names
    except PowerListError as err:
        raise click.ClickException(f"--powers: {err}") from err


@click.group()
def blind() -> None:
    """Blinding: get a random power in a blind game without anyone, even the
    GM, being able to choose it for you.

    \b
    What you do as a player (docs/blinding.md tells the whole story):
      1. The GM mails you a number (a power message the GM has blinded).
      2. Run `judge blind new` to make your own secret blinding factor, and
         WRITE IT DOWN: you will need it again.
      3. Run `judge blind add GM_NUMBER YOUR_BLIND` and mail the result to the
         third party named by the GM (not to the GM).
      4. When the third party asks, mail them your blinding factor.
      5. The GM mails you one more number and publishes the message format;
         the third party publishes everybody's blinding factors.
      6. Run `judge blind reveal YOUR_NUMBER BLIND1 BLIND2 ... --format PATTERN`:
         it tells you your power. Nobody else learns it from you.
    """


@blind.command("new", short_help="Make your own secret blinding factor (step 3).")
@click.option("--digits", default=blinding.DEFAULT_LENGTH, show_default=True, type=click.IntRange(1, 1000),
              help="How many digits; the same number as the messages of your game.")
def new_cmd(digits: int) -> None:
    """Print a fresh random blinding factor for YOU, the player.

    The digits come from your own computer's randomness (os.urandom); the
    judge never sees them unless you send them. Keep the number: the third
    party will ask you for it later, and you cannot change it then.
    """
    click.echo(urandom_digits(digits))


@blind.command("add")
@click.argument("a")
@click.argument("b")
def add_cmd(a: str, b: str) -> None:
    """Add B to A digit by digit, with no carrying (7 + 5 gives 2, not 12).

    Use it to blind the number the GM sent you: `judge blind add GM_NUMBER
    YOUR_BLIND`, then mail the result to the third party. Both numbers must
    have the same number of digits.
    """
    try:
        click.echo(blinding.add(_number(a, "A"), _number(b, "B")))
    except ValueError as err:
        raise click.ClickException(str(err)) from err


@blind.command("sub")
@click.argument("a")
@click.argument("b")
def sub_cmd(a: str, b: str) -> None:
    """Subtract B from A digit by digit, with no borrowing (2 - 5 gives 7).

    It undoes `judge blind add`: adding a blind and subtracting it again gives
    back the number you started with. `judge blind reveal` does the
    subtractions for you at the end.
    """
    try:
        click.echo(blinding.sub(_number(a, "A"), _number(b, "B")))
    except ValueError as err:
        raise click.ClickException(str(err)) from err


@blind.command("reveal", short_help="Find your power among the published blinds (the last step).")
@click.argument("message")
@click.argument("blinds", nargs=-1, required=True)
@click.option("--format", "pattern", required=True,
              help="The message format the GM published, like 4456x464 (x marks the power number).")
@click.option("--powers", "powers",
              help="The game's powers in order, comma-separated (Austria,England,...), or a variant name; "
                   "default: the standard seven.")
def reveal_cmd(message: str, blinds: tuple[str, ...], pattern: str, powers: str | None) -> None:
    """Find your power: MESSAGE is the final number the GM sent you, BLINDS
    are all the blinding factors the third party published (separated by
    spaces or commas, in any order).

    Each blind in turn is subtracted from your message; the one that leaves a
    number in the published format shows your power (power 0 is the first of
    the list). Exit status 1 if no blind or several do: check that you copied
    every number exactly, then tell the GM, quoting the message you received.
    """
    names = _power_names(powers)
    message = _number(message, "MESSAGE")
    pieces = [p for arg in blinds for p in re.split(r"[\s,;]+", arg) if p]
    if not pieces:
        raise click.ClickException("give the published blinding factors after your message")
    blind_list = [_number(p, f"blind {i}") for i, p in enumerate(pieces, 1)]
    try:
        fmt = blinding.Format.parse(pattern, len(names))
        found = blinding.reveal(message, blind_list, fmt)
    except ValueError as err:
        raise click.ClickException(str(err)) from err
    lines = [f"blind {i + 1} ({blind_list[i]}) gives {blinding.sub(message, blind_list[i])}: "
             f"power {k}, {names[k]}" for i, k in found]
    if len(found) == 1:
        click.echo(lines[0])
        return
    if not found:
        raise click.ClickException(
            f"no blind turns {message} into a message of the format {fmt.pattern}. Check that you copied your "
            "message, every published blind and the format exactly. If you did, your message was corrupted "
            "in transit: tell the GM, quoting the message you received; the GM's record decides your power."
        )
    raise click.ClickException(
        "several blinds give a message of the right format:\n  " + "\n  ".join(lines)
        + "\nThis is very rare. Ask the GM: the GM decodes every message it sent, and its record decides."
    )


# --- judge thirdparty ---------------------------------------------------------


@click.group()
def thirdparty() -> None:
    """Accept or refuse being the third party of another judge's game."""


def _decide(ctx: click.Context, game: str, gm: str | None, accept: bool) -> None:
    from judge import audit
    from judge.cli_moderate import _judge
    from judge.clock import SystemClock
    from judge.methods.blind_random.runs import tp_runs

    judge = _judge(ctx)
    now = SystemClock().now()
    with judge.sessions.begin() as s:
        runs = [r for r in tp_runs(s, game.lstrip("?")) if r.state.get("pending")
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
