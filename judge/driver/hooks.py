"""The shell's ways into a game's method: every change to a game passes
here (docs/architecture.md, "The game driver").

A method that keeps its own state (its LIVE_GAME capability,
judge.methods.interface.LiveCapability) is called with a GameView of its game, read under the game's lock, and hands
back an Outcome that store_outcome writes in the same transaction. The
other methods (the assignments) take the session in their hooks (their
ASSIGNMENT's, and a protocol's THIRD_PARTIES' START and deadline): their
work is the shell's own (judge.games), run under the same lock.

The caller holds the game's lock: the mail runner locks every game a mail
names (judge.games.find_game in a mail's session), the scheduler each game
it fires (lock_game).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from judge.config import Config
from judge.driver import precompute
from judge.driver.outcome import store_outcome
from judge.driver.view import game_view, player_view
from judge.failures import STUCK
from judge.methods import method_of
from judge.methods.api import Actor, Outcome, Refusal, Seed
from judge.methods.interface import AssignmentCapability
from judge.store.models import Game, Player


def stopped(game: Game) -> str | None:
    """Why a command to this game is not run: a stuck game takes none (but
    LIST) until a moderator's `judge unstick`; None if it runs."""
    if game.state != STUCK:
        return None
    from judge.templating import render

    return render("stopped.txt.j2", game=game).strip()


def _hook(game: Game, name: str) -> Any | None:
    """The pure hook `name` of the game's method if it keeps a state of its
    own and has that hook (its LIVE_GAME), else None."""
    live = method_of(game).LIVE_GAME
    return live.hook(name) if live is not None else None


# What a game that keeps no state of its own (no live hook) is asked: its
# ASSIGNMENT's hooks, or the shell's defaults if it has none.
_DEFAULTS = AssignmentCapability()


def _assignment(game: Game) -> AssignmentCapability:
    return method_of(game).ASSIGNMENT or _DEFAULTS


def seed_of(session: Session, game: Game) -> Seed:
    """The game's committed seed (its secret and the ENTROPY lines so far,
    judge.commitment), or a fresh one for a game without a secret."""
    from judge.games import committed_seed
    from judge.rng import new_seed

    if game.secret_seed:
        value, entropy = committed_seed(session, game)
        return Seed(value, tuple(tuple(e) for e in entropy))
    return Seed(new_seed(), ())


# -- a mail's lines ------------------------------------------------------

def actor_of(ctx: Any) -> Actor:
    return Actor(role=ctx.role, player=player_view(ctx.player) if ctx.player is not None else None,
                 for_player=bool(ctx.acting_master and ctx.role == "player"))


def mail_line(ctx: Any, number: int, line: str) -> tuple[str, str] | None:
    """A line of a signed-on mail offered to its game's method first: the
    method's answer if the line is its own, None to leave it to the
    command grammar."""
    game = ctx.game
    live = method_of(game).LIVE_GAME
    if live is None or not live.claims(line):
        return None
    why = stopped(game)
    if why is not None:
        return "rejected", why
    scratch = ctx.scratch.setdefault(game.id, {})
    at = ctx.inbound.received_at if getattr(ctx, "inbound", None) is not None else ctx.now
    outcome = live.load().command(game_view(game), actor_of(ctx), number, line, at, scratch)
    _store(ctx, game, outcome)
    if scratch and game.id not in ctx.mail_ends:
        # Once all the mail's lines have run: what the method gathered from
        # them (a sheet, one board mail for two bids), under the same lock.
        ctx.mail_ends.add(game.id)
        ctx.after.append(lambda: _end_of_mail(ctx, game, scratch, at))  # its reply: an entry of the mail's
    return outcome.reply


def _store(ctx: Any, game: Game, outcome: Outcome) -> None:
    if outcome.private_reply and ctx.player is not None:
        # To the registered address of whoever sent it: after FOR player,
        # the master (the player hears of it by the FOR notice); the reply
        # went to the player before, and the master never saw it.
        ctx.reveal_to = game.gm_address if ctx.acting_master else ctx.player.address
    store_outcome(ctx.session, ctx.config, ctx.now, game, outcome, inbound_id=ctx.inbound.id)


def _end_of_mail(ctx: Any, game: Game, scratch: dict, at: datetime) -> tuple[str, str] | None:
    """What the method gathered from the mail's lines, stored; its reply
    (a Payola sheet summed up once) is an entry of the mail's reply."""
    end = _hook(game, "end_of_mail")
    outcome = end(game_view(game), scratch, at) if end is not None else None
    if outcome is None:
        return None
    _store(ctx, game, outcome)
    return outcome.reply


# -- the life cycle -------------------------------------------------------

def begin(session: Session, config: Config, now: datetime, game: Game) -> str | None:
    """START of a forming game in its method's own way: what the master is
    told; None: the shell's assignment or auction start. A method's refusal
    is the shell's CommandRejected."""
    from judge.commands.base import CommandRejected

    hook = _hook(game, "begin")
    if hook is None:
        protocol = method_of(game).THIRD_PARTIES
        return protocol.begin(session, config, now, game) if protocol is not None else None
    try:
        outcome = hook(game_view(game), now, seed_of(session, game))
    except Refusal as err:
        raise CommandRejected(str(err)) from err
    outcome.tell_observers = True
    store_outcome(session, config, now, game, outcome)
    return outcome.reply[1] if outcome.reply else ""


def roster_changed(ctx: Any, game: Game, old: Player | None = None, new: Player | None = None) -> str:
    """EJECT (new None) or REPLACE changed a game's players: what the
    master's reply adds."""
    hook = _hook(game, "roster_changed")
    if hook is None:
        return _assignment(game).roster_changed(ctx, game, old=old, new=new)
    if old is None:
        return ""
    at = ctx.inbound.received_at if getattr(ctx, "inbound", None) is not None else ctx.now
    outcome = hook(game_view(game), player_view(old), None if new is None else player_view(new), at)
    _store(ctx, game, outcome)
    return outcome.reply[1] if outcome.reply else ""


def tick(session: Session, config: Config, now: datetime, game: Game, at: datetime) -> str | None:
    """games.next_tick fired (at `at`, its own time; `now` is when it runs)."""
    hook = _hook(game, "tick")
    if hook is None:
        # A game without a state of its own keeps the shell's one timer:
        # the master's daily digest while it forms (SET NOTICES DAILY).
        from judge.notices import send_digest

        return send_digest(session, config, now, game)
    outcome = hook(game_view(game), now, at)
    store_outcome(session, config, now, game, outcome)
    return outcome.log


def at_deadline(session: Session, config: Config, now: datetime, game: Game) -> str | None:
    """A running game's deadline in its method's own way (the operator's
    log line); None: the shell's (missing players, else resolve). The
    method's work was done ahead, outside the lock, if the scheduler could
    (precompute_deadline): it is used when the game is as it was then."""
    hook = _hook(game, "at_deadline")
    if hook is None:
        protocol = method_of(game).THIRD_PARTIES
        return protocol.at_deadline(session, config, now, game) if protocol is not None else None
    view, seed = game_view(game), seed_of(session, game)
    outcome = precompute.computed(_deadline_key(view, seed, now), lambda: hook(view, now, seed))
    if outcome is None:
        return None
    store_outcome(session, config, now, game, outcome)
    return outcome.log or f"{game.name}: deadline"


def _deadline_key(view: Any, seed: Seed, now: datetime) -> str:
    return precompute.digest("deadline", view.id, view.version, view.method_state, view.params, view.deadline,
                             [(p.id, p.address, p.status, p.power) for p in view.players], seed.value,
                             list(seed.entropy), now)


def precompute_deadline(session: Session, game: Game, now: datetime) -> None:
    """The method's deadline work for `game` as read now (no lock; the
    caller's transaction is only read from and ends before the work): done
    here, outside the lock, and kept for at_deadline."""
    hook = _hook(game, "at_deadline")
    if hook is None or game.state != "bidding" or game.deadline is None or game.deadline > now:
        return
    view, seed = game_view(game), seed_of(session, game)
    session.rollback()  # no transaction, and no snapshot, is held while the work runs
    precompute.remember(_deadline_key(view, seed, now), hook(view, now, seed))


# -- what a method shows (read only) ---------------------------------------

def list_view(ctx: Any, game: Game, master: bool) -> dict | None:
    hook = _hook(game, "list_view")
    if hook is None:
        return _assignment(game).list_view(ctx, game, master)
    return hook(game_view(game))


def public_board(game: Game, names: dict[str, str]) -> dict | None:
    hook = _hook(game, "public_board")
    if hook is None:
        return None  # only a live game shows a board of its own
    return hook(game_view(game), names)


def standing_line(session: Session, game: Game, player: Player) -> str:
    hook = _hook(game, "standing_line")
    if hook is None:
        return _assignment(game).standing_line(session, game, player)
    return hook(game_view(game), player_view(player))


def not_in_yet(session: Session, game: Game) -> list[tuple[Player, dict]] | None:
    """The players the deadline waits for, each with what their reminder
    says; None: those without a valid submission (the shell's reading)."""
    hook = _hook(game, "not_in_yet")
    if hook is None:
        return _assignment(game).not_in_yet(session, game)
    late = hook(game_view(game))
    if late is None:
        return None
    by_id = {p.id: p for p in game.players}
    return [(by_id[player_id], context) for player_id, context in late if player_id in by_id]
