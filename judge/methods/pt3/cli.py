"""`judge pt3`: the exact solver of Payola Tic-Tac-Toe (docs/pt3.md).

`judge pt3 solve` needs neither a configuration nor the store. `judge pt3
advise GAME` (the solver's advice in a running mail game) and `judge pt3 log
GAME` (the game's replay file for `judge resolve`) read the store, like
`judge log`.
"""

from __future__ import annotations

import json

import click


@click.group()
def pt3() -> None:
    """Payola Tic-Tac-Toe: the exact solver, a mail game's advice and log (docs/pt3.md)."""


@pt3.command()
@click.option("--board", default="." * 9, show_default=True,
              help="The position: 9 marks X, O, . in reading order (A1 A2 A3 B1 ... C3); '/' between rows allowed.")
@click.option("--x", "ax", metavar="AMOUNT", help="X's balance (a decimal, e.g. 12.50).")
@click.option("--o", "ao", metavar="AMOUNT", help="O's balance (a decimal).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def solve(board: str, ax: str | None, ao: str | None, fmt: str) -> None:
    """The victory condition A_X > b * A_O of a position and, with both
    balances, who wins with best play, the winner's bids and square.

    JSON: "board", "to_place" ("X", "O", or null when the game is over), "b"
    (exact: "p/q", "p" or "inf"), "b_float" (null for inf), "b1" and "bN" (the
    children's smallest and largest b), "x_square" and "o_square" (the square
    each side takes if it wins the bid); with balances also "x" and "o" (the
    balances, exact like b), "x_wins",
    "winner", "bid_range" [lo, hi] (the winner's bids that keep the win, as
    exact fractions "p/q" like b), "bid_range_open" [lo open?, hi open?],
    "bid_range_float", "bid" (the whole-cent bid inside the range nearest its
    middle, as a decimal "3.25", or null when the range holds no whole cent)
    and "square" (the winner's). Squares: A1..C3, rows A-C from the top,
    columns 1-3 from the left (A1 = square 1, C3 = square 9, reading order).
    """
    from judge.methods.pt3 import solver as S

    if (ax is None) != (ao is None):
        raise click.UsageError("give both balances, --x and --o, or neither")
    try:
        position = S.parse_board(board)
        balances = (S.parse_amount(ax), S.parse_amount(ao)) if ax is not None else (None, None)
    except S.BoardError as err:
        raise click.BadParameter(str(err)) from err
    advice = S.advise(position, *balances)
    if fmt == "json":
        click.echo(json.dumps(S.as_json(advice), indent=2))
    else:
        click.echo(text_report(advice))


def _stored_game(ctx: click.Context, name: str):
    """(the judge, the game's id) of a started PT3 game in the store; a
    click error if there is none."""
    from judge.cli import started_game
    from judge.methods.pt3 import METHOD

    with started_game(ctx, name, METHOD, "Payola Tic-Tac-Toe") as (judge, _, game):
        return judge, game.id


@pt3.command()
@click.argument("game")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def advise(ctx: click.Context, game: str, fmt: str) -> None:
    """What the solver says of a running mail game GAME, as it stands: who
    wins with best play at the balances after the last season, the bids
    that keep the win and the square (the season's sealed bids are not
    counted; ADVICE by mail says the same to a player)."""
    from fractions import Fraction

    from judge.methods.pt3 import solver as S
    from judge.methods.pt3.live import Live
    from judge.store.models import Game

    judge, game_id = _stored_game(ctx, game)
    with judge.sessions() as s:
        g = s.get(Game, game_id)
        live, name = Live(g.method_state), g.name
    state = live.state
    ax, ao = (Fraction(b) for b in state.balances)
    advice = S.advise(state.board, ax, ao, step=Fraction(1, 10 ** state.places))
    if fmt == "json":
        out = {"game": name, "season": state.season, "over": state.over, "winner_so_far": state.winner,
               "names": {"X": state.names[0], "O": state.names[1]}, **S.as_json(advice)}
        click.echo(json.dumps(out, indent=2))
        return
    click.echo(f"?{name}, " + (f"over: {state.winner} won." if state.over else
                               f"season {state.season}: X is {state.names[0]}, O is {state.names[1]}."))
    click.echo(text_report(advice))


@pt3.command("log")
@click.argument("game")
@click.pass_context
def log_(ctx: click.Context, game: str) -> None:
    """The replay file of mail game GAME (docs/pt3.md): `judge resolve` of
    it gives the game's state."""
    from judge.driver.view import game_view
    from judge.methods.pt3.live import log_file
    from judge.store.models import Game

    judge, game_id = _stored_game(ctx, game)
    with judge.sessions() as s:
        data = log_file(game_view(s.get(Game, game_id)))
    click.echo(json.dumps(data, indent=2))


def text_report(advice) -> str:
    from judge.methods.pt3 import solver as S

    b = advice.b
    lines = ["    1 2 3"]
    for r in range(3):
        lines.append(f" {S.ROWS[r]}  " + " ".join(advice.board[3 * r:3 * r + 3]))
    b_text = "inf" if b is S.INF else f"{b} = {float(b):.6f}"
    if advice.to_place is None:
        lines.append(f"The game is over: {'X' if b == 0 else 'O'} has won (b = {b_text}).")
        return "\n".join(lines)
    if b == 0 or b is S.INF:
        condition = f"{'X' if b == 0 else 'O'} wins whatever the balances"
    else:
        condition = "X wins iff A_X > b * A_O"
    lines.append(f"{advice.to_place} is placed next. b = {b_text}: {condition}.")
    lines.append(f"The children's b: smallest {S.format_fraction(advice.b1)}, largest {S.format_fraction(advice.bN)}; "
                 f"X would take {S.square_name(advice.x_square)}, O {S.square_name(advice.o_square)}.")
    if advice.x_wins is None:
        return "\n".join(lines)
    lines.append(f"Balances: X {_amount(advice.ax)}, O {_amount(advice.ao)}. {advice.winner} wins with best play.")
    r = advice.bid_range
    lines.append(f"{advice.winner}'s bids that keep the win: {r.text()} (= {float(r.lo):.4f} .. {float(r.hi):.4f}).")
    if advice.bid is None:
        lines.append("No whole cent lies inside that range: the decimal game may go either way.")
    else:
        lines.append(f"Advice: {advice.winner} bids {S.decimal_text(advice.bid)} and takes "
                     f"{S.square_name(advice.square)} on winning the bid.")
    return "\n".join(lines)


def _amount(value) -> str:
    from judge.methods.pt3 import solver as S

    return S.decimal_text(value) if (value * 100).denominator == 1 else str(value)
