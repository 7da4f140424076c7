"""The Lowest Unique Integer state machine: pure, immutable, clock injected.

    state = new_game(settings, players, garnets=..., priority=...)
    state, events = apply(state, player, command, at)   # player None: the GM
    state, events = tick(state, at)                     # fire what is due up to at
    at = next_tick(state)                               # when to tick next, or None

Time is a float: hours on the game's clock, 0 being the end of the pregame
(the auction opens); the pregame runs from -settings.pregame_hours. Nothing
here reads a clock, does I/O or draws at random, and nothing needs to: every
tie the rules leave is broken by a rule written down in docs/lui.md.

`tick` fires each due thing at its own time, in time order: a timer that ran
out while nobody looked fires at the time it ran out, not at `at`. `apply`
ticks up to `at` first (its events come first), so a bid made at the very
moment a seat's timer runs out finds the seat won. A rejected command
changes nothing but the clock; its event says which rule and why (those
messages are the only wording here: the shell words everything else).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

from judge.methods.lui.commands import (
    Bid,
    Buy,
    ChooseEc,
    Command,
    Eject,
    GiveTol,
    ReplacePlayer,
    SetBoardMail,
    SetPrize,
    ShowBoard,
)
from judge.methods.lui.tiebreak import break_ties
from judge.methods.lui.state import (  # noqa: F401 (engine.py names them all)
    AUCTION,
    AuctionOpened,
    BidPlaced,
    BidRecord,
    BidsCancelled,
    BoardChanged,
    BoardMailSet,
    BoardShown,
    ChipsBought,
    EC,
    EcDecided,
    EcOverdue,
    Event,
    FeeStarts,
    FINISHED,
    GameError,
    GameFinished,
    GameOver,
    Gift,
    GIFTS,
    GiftsDue,
    GiftsOverdue,
    GM,
    GmWarning,
    NAME,
    new_game,
    Outbid,
    Player,
    PlayerEjected,
    PlayerReplaced,
    PREGAME,
    PregameBid,
    PregameBidTaken,
    PrizeSet,
    Rejected,
    RosterChange,
    SeatWon,
    Standing,
    State,
    TolGiven,
    WonSeat,
)
from judge.methods.lui.params import (  # noqa: F401 (engine.py names them all)
    _NOT_SETTINGS,
    BOARD_MAILS,
    check_params,
    default_params,
    DIGEST_FROM_PLAYERS,
    GM_LIMITS,
    GM_LONGEST,
    ParamError,
    Params,
    params_from,
    PRESET_PLAYERS,
)


# --------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------

def apply(state: State, player: str | None, command: Command, at: float) -> tuple[State, tuple[Event, ...]]:
    """`player` (None for the GM) sends `command` at `at`. Ticks to `at`
    first; returns the new state and the events, the tick's first."""
    at = float(at)
    state, events = tick(state, at)
    handler = _HANDLERS.get(type(command))
    if handler is None:
        raise TypeError(f"not a LUI command: {command!r}")
    if player is not GM and not state.has_player(player):
        out: tuple[State, tuple[Event, ...]] = state, (_reject(at, player, "player", f"{player} is not a player of "
                                                                "this game.", command),)
    elif player is not GM and not state.is_in(player):
        out = state, (_reject(at, player, "player", f"{player} was ejected from this game.", command),)
    else:
        out = handler(state, player, command, at)
    return out[0], events + out[1]


def _reject(at: float, player: str | None, rule: str, message: str, command: Command | None = None) -> Rejected:
    return Rejected(at, player, rule, message, command)


def _no(state: State, at: float, player: str | None, rule: str, message: str,
        command: Command) -> tuple[State, tuple[Event, ...]]:
    return state, (_reject(at, player, rule, message, command),)


def _h(x: float) -> str:
    return f"{x:g} h"


def _days(hours: float) -> str:
    d = hours / 24
    return f"{d:g} day{'' if d == 1 else 's'}"


def _bid(state: State, player: str | None, cmd: Bid, at: float) -> tuple[State, tuple[Event, ...]]:
    s = state.settings
    if player is GM:
        return _no(state, at, player, "player", "The GM does not bid.", cmd)
    if state.over:
        return _no(state, at, player, "phase", f"The auction is over (it ended at {_h(state.ended_at)}).", cmd)
    if cmd.seat not in s.board:
        return _no(state, at, player, "seat", f"{cmd.seat} is no seat of this board: the seats are "
                   f"{s.board.seats[0]}-{s.board.seats[-1]}.", cmd)
    if state.phase == PREGAME:
        close = -s.pregame_hours + s.pregame_bids_hours
        if at >= close:
            return _no(state, at, player, "phase", f"Pregame bids closed at {_h(close)}; the auction opens at "
                       f"{_h(0)}.", cmd)
        bad = _rule_2_form(cmd)
        if bad:
            return _no(state, at, player, "2", bad, cmd)
        old = next((b for b in state.pregame_bids if b.player == player), None)
        new = PregameBid(player, cmd.seat, cmd.amount, at)
        bids = tuple(b for b in state.pregame_bids if b.player != player) + (new,)
        return replace(state, pregame_bids=bids), (PregameBidTaken(at, player, cmd.seat, cmd.amount, old),)
    refusal = _check(state, player, cmd)
    if refusal:
        return _no(state, at, player, refusal[0], refusal[1], cmd)
    fee = s.bid_fee if at > s.fee_after_hours else 0
    if fee and state.player(player).garnets < fee:
        g = state.player(player).garnets
        return _no(state, at, player, "garnet", f"The game has run for more than {_days(s.fee_after_hours)}: every "
                   f"new bid costs {fee} garnet{'s' if fee > 1 else ''}, and you have {g}.", cmd)
    state, events = _place(state, player, cmd.seat, cmd.amount, at, fee=fee, pregame=False)
    return state, events + (_board_changed(state, at),)


_RULE = {
    "1": "Rule 1: A player cannot bid on a seat that is already won, or that has their own bid on it.",
    "2": "Rule 2: A bid may only be a positive integer amount, that's larger than the current bid.",
    "3": "Rule 3: The sum of all bids that a player has standing cannot exceed the total amount of chips they have.",
    "4": "Rule 4: No bid can be made that matches a standing bid or a winning bid.",
}


def _rule_2_form(cmd: Bid) -> str | None:
    if cmd.amount is None:
        return f"{_RULE['2']} {cmd.written} is not a whole number."
    if cmd.amount <= 0:
        return f"{_RULE['2']} {cmd.written} is not positive."
    return None


def _check(state: State, player: str, cmd: Bid) -> tuple[str, str] | None:
    """The four rules, in order; the first broken one as (rule, message)."""
    seat, amount = cmd.seat, cmd.amount
    won = state.won_seat(seat)
    if won is not None:
        return "1", f"{_RULE['1']} Seat {seat} is already won: {won.player} won it with {won.amount}."
    current = state.standing_on(seat)
    if current is not None and current.player == player:
        return "1", f"{_RULE['1']} Seat {seat} has your own bid of {current.amount} on it."
    bad = _rule_2_form(cmd)
    if bad:
        return "2", bad
    if current is not None and amount <= current.amount:
        return "2", (f"{_RULE['2']} The current bid on {seat} is {current.amount} ({current.player}); "
                     f"{amount} is not larger.")
    chips = state.player(player).chips
    mine = [s for s in state.standing if s.player == player]
    total = sum(s.amount for s in mine) + amount
    if total > chips:
        if mine:
            listed = ", ".join(f"{s.seat} {s.amount}" for s in mine)
            return "3", (f"{_RULE['3']} You have {_chips(chips)}; your standing bids ({listed}) and this one "
                         f"({amount}) would add up to {total}.")
        return "3", f"{_RULE['3']} You have {_chips(chips)}; a bid of {amount} is more."
    clash = _clash(state, amount)
    if clash is not None:
        lowest = _lowest_free(state, seat)
        return "4", f"{_RULE['4']} {amount} is {clash}. The lowest bid on {seat} that matches none is {lowest}."
    return None


def _chips(n: int) -> str:
    return f"{n} chip{'' if n == 1 else 's'}"


def _clash(state: State, amount: int) -> str | None:
    for s in state.standing:
        if s.amount == amount:
            return f"{s.player}'s standing bid on {s.seat}"
    for w in state.won:
        if w.amount == amount:
            return f"the winning bid on {w.seat} ({w.player})"
    return None


def _lowest_free(state: State, seat: str) -> int:
    current = state.standing_on(seat)
    used = {s.amount for s in state.standing} | {w.amount for w in state.won}
    n = (current.amount if current else 0) + 1
    while n in used:
        n += 1
    return n


def _place(state: State, player: str, seat: str, amount: int, at: float, *, fee: int,
           pregame: bool) -> tuple[State, tuple[Event, ...]]:
    """Record a bid that passed the rules."""
    s = state.settings
    events: list[Event] = []
    old = state.standing_on(seat)
    history = list(state.history)
    if old is not None:
        events.append(Outbid(at, old.player, seat, old.amount, player, amount))
        history = [_outcome(r, old, "outbid", at) for r in history]
    new = Standing(seat, player, amount, at, at + s.timer_hours)
    standing = tuple(sorted([x for x in state.standing if x.seat != seat] + [new], key=lambda x: s.board.index(x.seat)))
    history.append(BidRecord(at, player, seat, amount, fee=fee, pregame=pregame))
    players = state.players
    if fee:
        players = _update(players, player, lambda p: replace(p, garnets=p.garnets - fee, fees=p.fees + fee))
    state = replace(state, standing=standing, history=tuple(history), players=players, last_bid_at=at)
    events.insert(0, BidPlaced(at, player, seat, amount, new.ends_at, fee, pregame))
    return state, tuple(events)


def _outcome(r: BidRecord, bid: Standing, outcome: str, at: float) -> BidRecord:
    if r.outcome == "standing" and (r.seat, r.player, r.amount, r.at) == (bid.seat, bid.player, bid.amount,
                                                                          bid.placed_at):
        return replace(r, outcome=outcome, outcome_at=at)
    return r


def _update(players: tuple[Player, ...], name: str, change) -> tuple[Player, ...]:
    return tuple(change(p) if p.name == name else p for p in players)


def _board_changed(state: State, at: float) -> BoardChanged:
    return BoardChanged(at, tuple(p.name for p in state.players if p.board_mail))


def _buy(state: State, player: str | None, cmd: Buy, at: float) -> tuple[State, tuple[Event, ...]]:
    s = state.settings
    if player is GM:
        return _no(state, at, player, "player", "The GM does not buy chips.", cmd)
    if state.over:
        return _no(state, at, player, "phase", f"The auction is over (it ended at {_h(state.ended_at)}); chips "
                   "are no longer sold.", cmd)
    if cmd.count < 1:
        return _no(state, at, player, "buy", "Buy at least one chip.", cmd)
    cost = cmd.count * s.chip_price
    p = state.player(player)
    if p.garnets < cost:
        each = f"{s.chip_price} garnet{'s' if s.chip_price > 1 else ''}"
        return _no(state, at, player, "garnet", f"A chip costs {each}: {cmd.count} chip{'s' if cmd.count > 1 else ''} "
                   f"cost{'s' if cmd.count == 1 else ''} {cost}, and you have {p.garnets}.", cmd)
    p = replace(p, chips=p.chips + cmd.count, garnets=p.garnets - cost, bought=p.bought + cmd.count)
    state = replace(state, players=_update(state.players, player, lambda _: p))
    return state, (ChipsBought(at, player, cmd.count, cost, p.chips, p.garnets),)


def _show_board(state: State, player: str | None, cmd: ShowBoard, at: float) -> tuple[State, tuple[Event, ...]]:
    return state, (BoardShown(at, player),)


def _board_mail(state: State, player: str | None, cmd: SetBoardMail, at: float) -> tuple[State, tuple[Event, ...]]:
    if player is GM:
        return _no(state, at, player, "player", "SET BOARD MAIL is a player's setting.", cmd)
    state = replace(state, players=_update(state.players, player, lambda p: replace(p, board_mail=cmd.on)))
    return state, (BoardMailSet(at, player, cmd.on),)


def _set_prize(state: State, player: str | None, cmd: SetPrize, at: float) -> tuple[State, tuple[Event, ...]]:
    s = state.settings
    if player is not GM:
        return _no(state, at, player, "gm", "Only the GM sets the prizes.", cmd)
    if cmd.seat not in s.board:
        return _no(state, at, player, "seat", f"{cmd.seat} is no seat of this board: the seats are "
                   f"{s.board.seats[0]}-{s.board.seats[-1]}.", cmd)
    if state.over:
        return _no(state, at, player, "phase", "The auction is over; the prizes were paid.", cmd)
    won = state.won_seat(cmd.seat)
    if won is not None:
        return _no(state, at, player, "prize", f"Seat {cmd.seat} was won at {_h(won.at)} and its prize paid "
                   f"({won.garnets} garnets, {won.priority} priority); it cannot change now.", cmd)
    state = replace(state, settings=s.with_prize(cmd.seat, cmd.garnets, cmd.priority))
    return state, (PrizeSet(at, cmd.seat, cmd.garnets, cmd.priority),)


def _choose_ec(state: State, player: str | None, cmd: ChooseEc, at: float) -> tuple[State, tuple[Event, ...]]:
    if state.phase != EC:
        when = "after the auction" if not state.over else "once (it is decided)"
        return _no(state, at, player, "phase", f"The EC is chosen {when}.", cmd)
    if player is GM:
        if state.ec_chooser is not None and not state.ec_overdue:
            return _no(state, at, player, "ec", f"{state.ec_chooser} chooses the EC until {_h(state.ec_deadline)}; "
                       "then the GM.", cmd)
    elif player != state.ec_chooser or state.ec_overdue:
        if player == state.ec_chooser:
            return _no(state, at, player, "ec", f"The time to choose the EC ran out at {_h(state.ec_deadline)}; "
                       "the GM chooses.", cmd)
        who = state.ec_chooser if state.ec_chooser is not None else "The GM"
        return _no(state, at, player, "ec", f"{who} chooses the EC, not you.", cmd)
    if cmd.name not in state.ec_candidates:
        return _no(state, at, player, "ec", f"{cmd.name} is not among the EC candidates "
                   f"({', '.join(state.ec_candidates)}).", cmd)
    by = "gm" if player is GM else "winner"
    state = replace(state, ec=cmd.name, ec_by=by)
    state, events = _after_ec(state, at)
    return state, (EcDecided(at, cmd.name, by),) + events


def _give_tol(state: State, player: str | None, cmd: GiveTol, at: float) -> tuple[State, tuple[Event, ...]]:
    if player is GM:
        return _no(state, at, player, "player", "A player gives their own ToL (the GM may send it FOR them).", cmd)
    if state.phase != GIFTS:
        if state.phase in (PREGAME, AUCTION, EC):
            return _no(state, at, player, "phase", "ToL are given after the EC is decided.", cmd)
        return _no(state, at, player, "phase", "Every ToL has been given; the game is finished.", cmd)
    giver = state.player(player)
    if giver.tol <= 1:
        return _no(state, at, player, "tol", f"You hold {giver.tol} ToL; only a player holding more than one "
                   "gives any away.", cmd)
    name = cmd.name
    if not state.has_player(name):
        return _no(state, at, player, "tol", f"{name} is not a player of this game.", cmd)
    if not state.is_in(name):
        return _no(state, at, player, "tol", f"{name} was ejected from this game.", cmd)
    if name == player:
        return _no(state, at, player, "tol", "You cannot give a ToL to yourself.", cmd)
    if name == state.ec:
        return _no(state, at, player, "tol", f"{name} is the EC: a ToL goes to a player with neither a ToL nor "
                   "the EC.", cmd)
    if state.player(name).tol:
        return _no(state, at, player, "tol", f"{name} holds a ToL already: a ToL goes to a player with neither a "
                   "ToL nor the EC.", cmd)
    players = _update(state.players, player, lambda p: replace(p, tol=p.tol - 1))
    players = _update(players, name, lambda p: replace(p, tol=p.tol + 1))
    state = replace(state, players=players, gifts=state.gifts + (Gift(at, player, name),))
    events: tuple[Event, ...] = (TolGiven(at, player, name),)
    owed, eligible = _owed(state), _eligible(state)
    if not owed or not eligible:
        state, more = _finish(state, at)
        events += more
    return state, events


# --------------------------------------------------------------------------
# The GM's EJECT and REPLACE (docs/lui.md, "Players leaving")
# --------------------------------------------------------------------------

def _roster_check(state: State, player: str | None, name: str, what: str,
                  cmd: Command, at: float) -> tuple[State, tuple[Event, ...]] | None:
    if player is not GM:
        return _no(state, at, player, "gm", f"Only the GM may {what} a player.", cmd)
    if state.phase == FINISHED:
        return _no(state, at, player, "phase", "The game is finished.", cmd)
    if not state.has_player(name):
        return _no(state, at, player, "player", f"{name} is not a player of this game.", cmd)
    if not state.is_in(name):
        return _no(state, at, player, "player", f"{name} was ejected from this game already.", cmd)
    return None


def _eject(state: State, player: str | None, cmd: Eject, at: float) -> tuple[State, tuple[Event, ...]]:
    """The player leaves: their standing bids (or pregame bid) are cancelled,
    unpaid; their chips, garnets, priority and seats won stay theirs (so
    nothing is created or lost); from now on they send no command, are no
    EC candidate and receive no ToL; a seat they won counts for the ToL as
    an unclaimed one."""
    refused = _roster_check(state, player, cmd.name, "eject", cmd, at)
    if refused:
        return refused
    name = cmd.name
    cancelled = tuple(b for b in state.standing if b.player == name)
    history = state.history
    for b in cancelled:
        history = tuple(_outcome(r, b, "cancelled", at) for r in history)
    pregame = next((b for b in state.pregame_bids if b.player == name), None)
    state = replace(state, players=_update(state.players, name, lambda p: replace(p, out=True, board_mail=False)),
                    standing=tuple(b for b in state.standing if b.player != name), history=history,
                    pregame_bids=tuple(b for b in state.pregame_bids if b.player != name),
                    roster_changes=state.roster_changes + (RosterChange(at, name),))
    events: list[Event] = [PlayerEjected(at, name, cancelled, pregame)]
    if cancelled:
        events.append(_board_changed(state, at))
    if state.phase == EC:
        state, more = _ec_again(state, at)
        events.extend(more)
    elif state.phase == GIFTS:
        if not _owed(state) or not _eligible(state):
            state, more = _finish(state, at)
            events.extend(more)
    return state, tuple(events)


def _ec_again(state: State, at: float) -> tuple[State, tuple[Event, ...]]:
    """The EC's choice after a player left: the candidates again among the
    players still in; the GM chooses if the chooser left."""
    candidates = _candidates(state)
    chooser = state.ec_chooser if state.is_in(state.ec_chooser) else None
    events: list[Event] = []
    if chooser is None and state.ec_chooser is not None:
        events.append(GmWarning(at, f"{state.ec_chooser}, who was to choose the EC, left the game: the GM "
                                    f"chooses among {', '.join(candidates)}."))
    state = replace(state, ec_candidates=candidates, ec_chooser=chooser,
                    ec_deadline=state.ec_deadline if chooser is not None else None)
    return _ec_by_rule(state, at, events)


def _replace_player(state: State, player: str | None, cmd: ReplacePlayer,
                    at: float) -> tuple[State, tuple[Event, ...]]:
    """`new` takes over `old`'s seat, as a host hands a substitute the
    seat: standing bids, chips, garnets, priority, seats won, ToL, the EC's
    choice and gifts owed, all under the new name (the history too: the
    seat's bids, with the change recorded). Board mail starts on again: it
    was the old player's choice."""
    refused = _roster_check(state, player, cmd.old, "replace", cmd, at)
    if refused:
        return refused
    old, new = cmd.old, cmd.new
    if new != old and state.has_player(new):
        return _no(state, at, player, "player", f"{new} is a player of this game already.", cmd)
    state = _rename(state, old, new)
    state = replace(state, players=_update(state.players, new, lambda p: replace(p, board_mail=True)),
                    roster_changes=state.roster_changes + (RosterChange(at, old, new),))
    return state, (PlayerReplaced(at, old, new), _board_changed(state, at))


def _rename(state: State, old: str, new: str) -> State:
    def n(name):
        return new if name == old else name

    def names(t):
        return tuple(n(x) for x in t)

    def table(t):
        return tuple((n(k), v) for k, v in t)

    tb = state.tiebreak
    if tb is not None:
        tb = replace(tb, priority=table(tb.priority), gains=table(tb.gains),
                     steps=tuple(replace(st, group=names(st.group), stayed=n(st.stayed)) for st in tb.steps),
                     fallback=tuple(names(g) for g in tb.fallback))
    return replace(
        state,
        players=tuple(replace(p, name=n(p.name)) for p in state.players),
        start=tuple(replace(p, name=n(p.name)) for p in state.start),
        previous_priority=tuple(table(s) for s in state.previous_priority),
        pregame_bids=tuple(replace(b, player=n(b.player)) for b in state.pregame_bids),
        standing=tuple(replace(b, player=n(b.player)) for b in state.standing),
        won=tuple(replace(w, player=n(w.player)) for w in state.won),
        history=tuple(replace(r, player=n(r.player)) for r in state.history),
        winner=n(state.winner), tol_awarded=table(state.tol_awarded), tiebreak=tb,
        ec_candidates=names(state.ec_candidates), ec_chooser=n(state.ec_chooser), ec=n(state.ec),
        gifts=tuple(replace(g, giver=n(g.giver), to=n(g.to)) for g in state.gifts))


_HANDLERS = {Bid: _bid, Buy: _buy, ShowBoard: _show_board, SetBoardMail: _board_mail, SetPrize: _set_prize,
             ChooseEc: _choose_ec, GiveTol: _give_tol, Eject: _eject, ReplacePlayer: _replace_player}


# --------------------------------------------------------------------------
# The clock
# --------------------------------------------------------------------------

# What is due, in the order things due at the same moment fire.
_OPEN, _TIMER, _QUIET, _CANCEL, _FEE, _EC_DEADLINE, _GIFT_DEADLINE = range(7)


def _due(state: State) -> list[tuple[float, int, int]]:
    """(time, kind, seat index) of everything the state waits for."""
    s = state.settings
    out: list[tuple[float, int, int]] = []
    if state.phase == PREGAME:
        out.append((0.0, _OPEN, 0))
    elif state.phase == AUCTION:
        out.extend((b.ends_at, _TIMER, s.board.index(b.seat)) for b in state.standing)
        if not state.standing:
            out.append((state.last_bid_at + s.quiet_hours, _QUIET, 0))
        out.append((s.cancel_after_hours, _CANCEL, 0))
        if s.bid_fee and not state.fee_announced:
            out.append((s.fee_after_hours, _FEE, 0))
    elif state.phase == EC and state.ec_deadline is not None and not state.ec_overdue:
        out.append((state.ec_deadline, _EC_DEADLINE, 0))
    elif state.phase == GIFTS and state.gift_deadline is not None and not state.gifts_overdue:
        out.append((state.gift_deadline, _GIFT_DEADLINE, 0))
    return out


def next_tick(state: State) -> float | None:
    """The next time the game wants the clock (None: it waits on commands)."""
    due = _due(state)
    return min(due)[0] if due else None


def tick(state: State, at: float) -> tuple[State, tuple[Event, ...]]:
    """Fire everything due up to `at`, each at its own time, in time order."""
    at = float(at)
    if at < state.clock:
        raise GameError(f"the clock runs backwards: {at} is before {state.clock}")
    events: list[Event] = []
    while True:
        due = _due(state)
        if not due:
            break
        when, kind, index = min(due)
        if when > at:
            break
        state = replace(state, clock=max(state.clock, when))
        state, fired = _FIRE[kind](state, when, index)
        events.extend(fired)
    return replace(state, clock=at), tuple(events)


def _open(state: State, at: float, _: int) -> tuple[State, tuple[Event, ...]]:
    """The pregame ends: its bids, highest priority first, each checked when
    it is processed; all timers start now."""
    tb = break_ties({p.name: p.priority for p in state.players}, _previous(state, with_start=False),
                    [p.name for p in state.players])
    rank = {name: k for k, name in enumerate(tb.ranking())}
    bids = sorted(state.pregame_bids, key=lambda b: rank[b.player])
    state = replace(state, phase=AUCTION, last_bid_at=at, pregame_bids=())
    events: list[Event] = [AuctionOpened(at, tuple(b.player for b in bids))]
    for group in tb.fallback:
        events.append(GmWarning(at, _fallback_warning(group, "the pregame order")))
    events.extend(GmWarning(at, w) for w in state.settings.warnings())
    for b in bids:
        cmd = Bid(seat=b.seat, amount=b.amount, written=str(b.amount))
        refusal = _check(state, b.player, cmd)
        if refusal:
            events.append(_reject(at, b.player, refusal[0], refusal[1], cmd))
            continue
        state, placed = _place(state, b.player, b.seat, b.amount, at, fee=0, pregame=True)
        events.extend(placed)
    events.append(_board_changed(state, at))
    return state, tuple(events)


def _fallback_warning(group: Iterable[str], what: str) -> str:
    return (f"{', '.join(group)} are tied in priority now and in every earlier standing known; the seed has no "
            f"rule for this, so {what} follows the roster's order (earliest listed ranks lowest).")


def _previous(state: State, *, with_start: bool) -> list[dict[str, int]]:
    earlier = [dict(s) for s in state.previous_priority]
    if with_start:
        return [{p.name: p.priority for p in state.start}] + earlier
    return earlier


def _timer(state: State, at: float, index: int) -> tuple[State, tuple[Event, ...]]:
    s = state.settings
    seat = s.board.seats[index]
    bid = state.standing_on(seat)
    prize = s.prize(seat)
    won = WonSeat(seat, bid.player, bid.amount, at, prize.garnets, prize.priority)
    players = _update(state.players, bid.player, lambda p: replace(
        p, chips=p.chips - bid.amount, garnets=p.garnets + prize.garnets, priority=p.priority + prize.priority))
    state = replace(state, players=players,
                    standing=tuple(x for x in state.standing if x.seat != seat),
                    won=tuple(sorted(state.won + (won,), key=lambda w: s.board.index(w.seat))),
                    history=tuple(_outcome(r, bid, "won", at) for r in state.history))
    events: tuple[Event, ...] = (SeatWon(at, bid.player, seat, bid.amount, prize.garnets, prize.priority),
                                 _board_changed(state, at))
    if len(state.won) == s.board.size:
        state, more = _end(state, at, "all-won")
        events += more
    elif not state.standing and at >= state.last_bid_at + s.quiet_hours:
        state, more = _end(state, at, "quiet")
        events += more
    return state, events


def _quiet(state: State, at: float, _: int) -> tuple[State, tuple[Event, ...]]:
    return _end(state, at, "quiet")


def _cancel(state: State, at: float, _: int) -> tuple[State, tuple[Event, ...]]:
    cancelled = state.standing
    history = state.history
    for b in cancelled:
        history = tuple(_outcome(r, b, "cancelled", at) for r in history)
    state = replace(state, standing=(), history=history)
    events: tuple[Event, ...] = (BidsCancelled(at, cancelled),) if cancelled else ()
    state, more = _end(state, at, "day-15")
    return state, events + more


def _fee(state: State, at: float, _: int) -> tuple[State, tuple[Event, ...]]:
    return replace(state, fee_announced=True), (FeeStarts(at, state.settings.bid_fee),)


def _ec_deadline(state: State, at: float, _: int) -> tuple[State, tuple[Event, ...]]:
    return replace(state, ec_overdue=True), (EcOverdue(at, state.ec_candidates),)


def _gift_deadline(state: State, at: float, _: int) -> tuple[State, tuple[Event, ...]]:
    return replace(state, gifts_overdue=True), (GiftsOverdue(at, _owed(state)),)


_FIRE = {_OPEN: _open, _TIMER: _timer, _QUIET: _quiet, _CANCEL: _cancel, _FEE: _fee, _EC_DEADLINE: _ec_deadline,
         _GIFT_DEADLINE: _gift_deadline}


# --------------------------------------------------------------------------
# The end of the game, in the seed's order: winner and ToL, EC, gifts
# --------------------------------------------------------------------------

def _end(state: State, at: float, reason: str) -> tuple[State, tuple[Event, ...]]:
    s = state.settings
    # A seat won by a player since ejected counts as unclaimed (docs/lui.md).
    won = [w for w in state.won if state.is_in(w.player)]
    winner = min(won, key=lambda w: w.amount) if won else None
    tol = {p.name: 0 for p in state.players}
    if winner is not None:
        tol[winner.player] += s.tol.winner
        for seat in s.board.neighbours(winner.seat):
            w = state.won_seat(seat)
            if w is not None and state.is_in(w.player):
                tol[w.player] += s.tol.adjacent
            elif s.tol.unclaimed_to_winner:
                tol[winner.player] += s.tol.adjacent
    tb = break_ties({p.name: p.priority for p in state.players}, _previous(state, with_start=True),
                    [p.name for p in state.players])
    final = dict(tb.priority)
    players = tuple(replace(p, priority=final[p.name], tol=tol[p.name]) for p in state.players)
    candidates = _candidates(replace(state, players=players))
    chooser = winner.player if winner is not None else None
    deadline = at + s.ec_hours if len(candidates) > 1 and chooser is not None else None
    awarded = tuple((n, k) for n, k in tol.items() if k)
    state = replace(state, players=players, phase=EC, ended_at=at, end_reason=reason,
                    winner=chooser, winning_seat=winner.seat if winner else None, tol_awarded=awarded,
                    tiebreak=tb, ec_candidates=candidates, ec_chooser=chooser, ec_deadline=deadline)
    events: list[Event] = [GameOver(at, reason, chooser, state.winning_seat, winner.amount if winner else None,
                                    awarded, candidates, chooser if len(candidates) > 1 else None, deadline)]
    for group in tb.fallback:
        events.append(GmWarning(at, _fallback_warning(group, "the final priority")))
    if winner is None:
        events.append(GmWarning(at, "Nobody won a seat: there is no winner and no ToL is handed out."))
    return _ec_by_rule(state, at, events)


def _candidates(state: State) -> tuple[str, ...]:
    """The EC's candidates among the players still in: those holding at
    least the starting chips; if none, those with the fewest."""
    chips = {p.name: p.chips for p in state.players if not p.out}
    if not chips:
        return ()
    candidates = tuple(n for n, c in chips.items() if c >= state.settings.starting_chips)
    if not candidates:
        fewest = min(chips.values())
        candidates = tuple(n for n, c in chips.items() if c == fewest)
    return candidates


def _owed(state: State) -> tuple[tuple[str, int], ...]:
    return tuple((p.name, p.tol - 1) for p in state.players if p.tol > 1 and not p.out)


def _eligible(state: State) -> tuple[str, ...]:
    return tuple(p.name for p in state.players if p.tol == 0 and p.name != state.ec and not p.out)


def _ec_by_rule(state: State, at: float, events: list[Event]) -> tuple[State, tuple[Event, ...]]:
    """The EC's candidates just set: a lone candidate is the EC by rule, and
    with none the game goes on without one (_after_ec); `events`, the
    events so far, then these."""
    candidates = state.ec_candidates
    if len(candidates) == 1:
        state = replace(state, ec=candidates[0], ec_by="rule")
        events.append(EcDecided(at, candidates[0], "rule"))
        state, more = _after_ec(state, at)
        events.extend(more)
    elif not candidates:  # nobody left in the game to be the EC
        state, more = _after_ec(state, at)
        events.extend(more)
    return state, tuple(events)


def _after_ec(state: State, at: float) -> tuple[State, tuple[Event, ...]]:
    owed, eligible = _owed(state), _eligible(state)
    if owed and eligible:
        state = replace(state, phase=GIFTS, gift_deadline=at + state.settings.gift_hours)
        return state, (GiftsDue(at, owed, eligible),)
    return _finish(state, at)


def _finish(state: State, at: float) -> tuple[State, tuple[Event, ...]]:
    return replace(state, phase=FINISHED, finished_at=at), (GameFinished(at, _owed(state)),)


# --------------------------------------------------------------------------
# Views
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class SeatView:
    seat: str
    prize_garnets: int
    prize_priority: int
    standing: Standing | None
    won: WonSeat | None


@dataclass(frozen=True)
class BoardView:
    """What the board mail shows: the seats row by row, and each player's
    chips left for bidding."""

    at: float
    rows: tuple[tuple[SeatView, ...], ...]
    chips_left: tuple[tuple[str, int], ...]


def board_view(state: State) -> BoardView:
    s = state.settings
    rows = tuple(tuple(SeatView(seat, s.prize(seat).garnets, s.prize(seat).priority, state.standing_on(seat),
                                state.won_seat(seat)) for seat in row) for row in s.board.grid())
    return BoardView(state.clock, rows, tuple((p.name, state.chips_left(p.name)) for p in state.players))


