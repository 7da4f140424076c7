"""A Lowest Unique Integer game driven by a fake clock, and the invariants
every state of a game must keep (used by the engine, replay and property
tests)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from judge.methods.lui import engine
from judge.methods.lui.commands import parse_line
from judge.methods.lui.engine import GM, Event, Rejected, State, apply, new_game, next_tick, tick
from judge.methods.lui.settings import preset


class Game:
    """One game, its clock moved by the test: `send` a line as a player (or
    the GM, None) at a time, `tick` the clock; every event is kept, and every
    input logged as the replay reads it."""

    def __init__(self, name: str = "F11", players=("reds", "crawron", "ann", "bob"), *, garnets=None,
                 priority=None, previous_priority=(), prizes=None, **settings: Any) -> None:
        self.settings = preset(name, **settings)
        if prizes:
            self.settings = self.settings.with_prizes(prizes)
        if priority is None:  # distinct by default: the roster's order, first highest
            priority = {p: len(players) - k for k, p in enumerate(players)}
        self.state = new_game(self.settings, list(players), garnets=garnets, priority=priority,
                              previous_priority=previous_priority)
        self.events: list[Event] = []
        self.log: list[dict[str, Any]] = []  # {at, player, text}, as replay.py reads events
        self.inputs = {"name": name, "players": list(players), "garnets": garnets or {}, "priority": priority,
                       "previous_priority": list(previous_priority), "settings": settings, "prizes": prizes}
        check(self.state)

    def send(self, player: str | None, text: str, at: float) -> tuple[Event, ...]:
        self.state, events = apply(self.state, player, parse_line(text), at)
        self.events.extend(events)
        self.log.append({"at": at, "player": player, "text": text})
        check(self.state)
        return events

    def tick(self, at: float) -> tuple[Event, ...]:
        self.state, events = tick(self.state, at)
        self.events.extend(events)
        check(self.state)
        return events

    def run_out(self) -> tuple[Event, ...]:
        """Tick until nothing waits on the clock."""
        out: list[Event] = []
        while (t := next_tick(self.state)) is not None:
            out.extend(self.tick(t))
        return tuple(out)

    def ok(self, player: str | None, text: str, at: float) -> tuple[Event, ...]:
        events = self.send(player, text, at)
        bad = [e for e in events if isinstance(e, Rejected) and e.at == at and e.player == player]
        assert not bad, bad
        return events

    def no(self, player: str | None, text: str, at: float, rule: str) -> Rejected:
        """A command that must be refused by `rule`, changing nothing but the clock."""
        self.tick(at)
        before = self.state
        events = self.send(player, text, at)
        assert self.state == before, "a rejected command changed the state"
        (rejected,) = events
        assert isinstance(rejected, Rejected), events
        assert rejected.rule == rule, rejected
        return rejected

    def of(self, kind: type, events=None) -> list:
        return [e for e in (self.events if events is None else events) if isinstance(e, kind)]

    def replay_data(self, until: float | None = None) -> dict[str, Any]:
        i = self.inputs
        params = {"preset": i["name"], **i["settings"]}
        data = {"method": "lui", "params": params, "players": i["players"], "garnets": i["garnets"],
                "priority": i["priority"], "previous_priority": i["previous_priority"], "events": self.log}
        if i["prizes"]:
            data["prizes"] = {k: list(v) for k, v in i["prizes"].items()}
        if until is not None:
            data["until"] = until
        return data


def check(state: State) -> None:
    """The invariants of every state.

    Rules (1)-(4) hold of the board at every moment: no standing bid on a
    won seat, one per seat at most; every accepted bid a positive integer
    larger than the bid it displaced, by another player; each player's
    standing bids within the chips they hold; every standing and winning
    amount distinct.

    Conservation, for every player p (W(p): the seats p won, each with the
    amount paid and the prize received then):
      chips(p)    = starting_chips + bought(p) - sum of W(p)'s amounts
      garnets(p)  = garnets at the start + W(p)'s prize garnets
                    - chip_price * bought(p) - fees(p)
      priority(p) = priority at the start + W(p)'s prize priority
                    (+ the tiebreak's gain once the game is over)
      fees(p)     = bid_fee * (p's bids placed after fee_after_hours)
    and never a negative number of chips or garnets. So chips are only made
    by BUY (paid for) and only leave by winning a seat; garnets only come
    from seats and only go on chips and fees.
    """
    s = state.settings
    start = {p.name: p for p in state.start}
    # Rules (1) and (4)
    seats = [b.seat for b in state.standing]
    assert len(seats) == len(set(seats))
    assert not set(seats) & {w.seat for w in state.won}
    amounts = [b.amount for b in state.standing] + [w.amount for w in state.won]
    assert len(amounts) == len(set(amounts)), amounts
    assert all(isinstance(a, int) and a >= 1 for a in amounts)
    # Rule (2) and the "their own bid" half of rule (1), over the history
    by_seat: dict[str, list] = {}
    for r in state.history:
        by_seat.setdefault(r.seat, []).append(r)
    for seat, records in by_seat.items():
        for a, b in zip(records, records[1:]):
            assert b.at >= a.at
            if a.outcome == "cancelled":  # an ejected player's bid: the seat was open again
                assert a.outcome_at <= b.at
                continue
            assert b.amount > a.amount and b.player != a.player
            assert a.outcome == "outbid" and a.outcome_at == b.at
        last = records[-1]
        won, standing = state.won_seat(seat), state.standing_on(seat)
        if won is not None:
            assert (last.player, last.amount, last.outcome) == (won.player, won.amount, "won")
        elif standing is not None:
            assert (last.player, last.amount, last.outcome) == (standing.player, standing.amount, "standing")
            assert standing.ends_at == standing.placed_at + s.timer_hours
        else:
            assert last.outcome == "cancelled"
    fee_bids = Counter(r.player for r in state.history if r.fee)
    assert all(r.fee == s.bid_fee and r.at > s.fee_after_hours for r in state.history if r.fee)
    for p in state.players:
        mine = [w for w in state.won if w.player == p.name]
        assert p.chips == s.starting_chips + p.bought - sum(w.amount for w in mine)
        assert p.garnets == (start[p.name].garnets + sum(w.garnets for w in mine) - s.chip_price * p.bought
                             - p.fees)
        assert p.fees == s.bid_fee * fee_bids[p.name]
        gain = dict(state.tiebreak.gains)[p.name] if state.tiebreak else 0
        assert p.priority == start[p.name].priority + sum(w.priority for w in mine) + gain
        assert p.chips >= 0 and p.garnets >= 0 and p.bought >= 0
        assert state.committed(p.name) <= p.chips  # rule (3)
    # The whole bank, once more as totals
    n = len(state.players)
    assert sum(p.chips for p in state.players) + sum(w.amount for w in state.won) == \
        n * s.starting_chips + sum(p.bought for p in state.players)
    # The phases
    if state.phase in (engine.PREGAME, engine.AUCTION):
        assert state.ended_at is None and all(p.tol == 0 for p in state.players)
    else:
        assert not state.standing and state.ended_at is not None
        assert sum(p.tol for p in state.players) == sum(k for _, k in state.tol_awarded)
        if state.winner is not None and s.tol.unclaimed_to_winner:
            assert sum(k for _, k in state.tol_awarded) == s.tol.total()
        assert len({p.priority for p in state.players}) == n  # every tie broken
    if state.phase in (engine.GIFTS, engine.FINISHED):
        assert state.ec in state.ec_candidates or (state.ec is None and not state.ec_candidates)
    # An ejected player has nothing standing and takes no part in the end game.
    for p in state.players:
        if p.out:
            assert not any(b.player == p.name for b in state.standing)
            assert not any(b.player == p.name for b in state.pregame_bids)
            assert p.name not in state.ec_candidates or state.ec == p.name
    names = [p.name for p in state.players]
    assert len(names) == len(set(names)) and [p.name for p in state.start] == names


def rejected(events, player=None) -> list[Rejected]:
    return [e for e in events if isinstance(e, Rejected) and (player is None or e.player == player)]


__all__ = ["GM", "Game", "check", "rejected"]
