"""START (open the auction, or assign by preference lists at once) and
PROCESS (resolve an auction now, before the deadline)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from judge import driver
from judge.commands.base import CommandRejected, Context, handles
from judge.config import Config
from judge.deadlines import format_time
from judge.games import (
    AssignmentRefused,
    Drawn,
    active_players,
    deadline_ahead,
    draw_resolution,
    game_params,
    missing_players,
    notify,
    observers,
    param_warnings,
    power_list,
    record_refusal,
    refusal_text,
    resolve_game,
    seats,
    set_state,
    tell_observers,
)
from judge.methods import method_of
from judge.methods.interface import bids_of, restart_hint
from judge.store.models import Game
from judge.syntax import nodes


class Refused(CommandRejected):
    """START or PROCESS met the solver's refusal (games.AssignmentRefused):
    the message is the master's explanation, and nothing of the resolution
    was written. The start by itself and the deadline tell the players too."""

    def __init__(self, text: str, refusal: AssignmentRefused) -> None:
        super().__init__(text)
        self.refusal = refusal


def _drawn(session: Session, config: Config, now: datetime, game: Game, command: str) -> Drawn:
    """The game's resolution, computed before anything is written; a refusal
    is recorded and raised as Refused (what to send: `command`)."""
    try:
        return draw_resolution(session, game)
    except AssignmentRefused as refusal:
        record_refusal(session, game, now, refusal, command=command)
        raise Refused(refusal_text(config, game, refusal, command), refusal) from refusal


@handles(nodes.Start)
def start(ctx: Context, node: nodes.Start) -> str:
    game = ctx.require_master()
    if game.state != "forming":
        again = restart_hint(method_of(game)) if game.state in ("bidding", "waiting") else ""
        raise CommandRejected(f"the game has started already (?{game.name} is {game.state}).{again}")
    return begin(ctx.session, ctx.config, ctx.now, game, job="start")


def begin(session: Session, config: Config, now: datetime, game: Game, *, job: str | None = None) -> str:
    """Start a forming game, as START does (the scheduler calls it at the
    deadline of a game that is not an auction, and for a job): what the
    master is told, or CommandRejected with why it cannot start. `job`
    (a mail's START, or the start by itself): a game assigned at once is
    checked now and drawn as a job of its own (judge.scheduler.handle_job),
    outside the mail's transaction."""
    players = active_players(game)
    U = seats(game)
    if len(players) != U:
        raise CommandRejected(f"?{game.name} has {len(players)} of its {U} players; it starts when all {U} have joined")
    try:
        warnings = param_warnings(game)
    except ValueError as err:  # each method's ParamError
        raise CommandRejected(f"?{game.name} cannot start: {err}. Fix it with SET first") from err
    method = method_of(game)
    own = driver.begin(session, config, now, game)
    if own is not None:
        return own
    drawn_at_start = method.ASSIGNMENT is not None and method.ASSIGNMENT.resolves_at_start
    if drawn_at_start and job is not None:
        # A heavy draw (a preference game of 100 powers) must not hold up the
        # other mails: the scheduler draws it in a transaction of its own,
        # under the game's lock, right after this mail (same pass).
        game.job = job
        return (f"?{game.name} starts now: its powers are drawn as a job of their own, and the results go to all "
                f"{len(players)} players and to you in a moment, in mails of their own")
    if drawn_at_start:
        # Preference lists are in already: the assignment is made now. It is
        # drawn before the game changes, so that a refusal (Refused) leaves
        # the game forming, as it was: the master may SET PRFRAND and START.
        drawn = _drawn(session, config, now, game, "START")
        set_state(session, game, "bidding", now)
        game.started_at = now
        resolve_game(session, config, game, now, drawn=drawn)
        return f"?{game.name} started: powers assigned; results sent to all {len(players)} players and to you"
    deadline_ahead(config, game, now)
    set_state(session, game, "bidding", now)
    game.started_at = now
    params = game_params(game)
    for p in players:
        notify(session, config, now, "player/auction_open.txt.j2", [p.address], game=game,
               player=p, params=params, powers=power_list(game))
    tell_observers(session, config, now, game)
    return (f"the auction of ?{game.name} is open until {format_time(game.deadline)}; "
            f"{len(players)} players were sent the rules" + "".join(f"\n  Warning: {w}" for w in warnings))


@handles(nodes.Process)
def process(ctx: Context, node: nodes.Process) -> str:
    game = ctx.require_master_in(("bidding", "waiting"), "there is no open auction to process")
    refusal = method_of(game).refusal("PROCESS", game)
    if refusal is not None:
        raise CommandRejected(refusal)
    missing = missing_players(ctx.session, game)
    if missing:
        bidding = bids_of(method_of(game))
        late = [p for p in missing if bidding is not None and bidding.late(ctx.session, game, p)]
        who = ", ".join(f"{p.name} <{p.address}>" for p in missing)
        wait = ""
        if late:
            named = ", ".join(p.name for p in late)
            wait = (f" ({named}, named after the deadline, may still bid until your PROCESS: wait for their bids, "
                    f"or decide for them)")
        raise CommandRejected(
            f"no bids yet from {who}{wait}. Decide for each first: EJECT player, REPLACE player newaddress, "
            f"or NO PREFERENCE FOR player")
    # Resolved as a job of its own (judge.scheduler.handle_job), under the
    # game's lock but outside this mail's transaction, right after it.
    game.job = "process"
    return (f"?{game.name} is resolved now, as a job of its own: the results go to all "
            f"{len(active_players(game))} players and to you in a moment, in mails of their own")


def process_now(session: Session, config: Config, now: datetime, game: Game) -> str:
    """PROCESS's work (judge.scheduler.handle_job): the draw, then the
    results; Refused if the solver refused to draw."""
    drawn = _drawn(session, config, now, game, "PROCESS")
    resolution = resolve_game(session, config, game, now, drawn=drawn)
    return f"?{game.name} resolved; results sent to all {len(resolution.result['assignment'])} players and the master"
