"""A whole Lowest Unique Integer game replayed from a JSON log, no database.

The input, as issue 13 gives it (`at`: hours after the pregame ends):

    {"method": "lui", "params": {"preset": "F11", "timer_hours": 24},
     "players": ["reds", "crawron", "ann"],
     "priority": {"reds": 3, "crawron": 1, "ann": 2},
     "garnets": {"reds": 2, "crawron": 0, "ann": 1},
     "prizes": {"O": [1, 0], "P": [0, 1]},
     "pregame": {"reds": "BID 5 Z"},
     "events": [{"at": 0.5, "player": "crawron", "text": "BID Z 6"},
                {"at": 30, "player": "crawron", "text": "EC ann"}]}

`params` holds the preset and any of its settings (settings.Settings' field
names). Optional: "previous_priority" (earlier rounds' standings, latest
first, for the tiebreak), "until" (hours). An event's player null (or
"gm": true) is the GM. An event's text may hold several lines, taken in
order. Pregame texts are sent when the pregame starts, in roster order.

After the last event the clock runs on until the game waits on nobody's
clock (finished, or waiting on a player or the GM), or to "until". The engine
is the daemon's: this is the game.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from judge.methods.lui import engine
from judge.methods.lui.commands import Command, LuiSyntaxError, parse_lines
from judge.methods.lui.engine import GM, Event, Rejected, State, apply, new_game, next_tick, tick
from judge.methods.lui.settings import SettingsError, preset

_KEYS = {"method", "params", "players", "priority", "garnets", "prizes", "pregame", "events", "until",
         "previous_priority"}


class ReplayError(ValueError):
    """A log that cannot be replayed (as opposed to a command the game refuses)."""


def _log_of(data: dict[str, Any]) -> dict[str, Any]:
    """The log itself, also from a game's own record: the resolution.json of
    its results mail or web page (judge/record.py), or `judge resolve
    --format json`'s output, each of which holds it as "input"."""
    from judge.record import FORMAT

    for _ in range(3):  # a resolve output of a record holds the record, which holds the log
        if not (data.get("format") == FORMAT or ("input" in data and "events" not in data)):
            return data
        inner = data.get("input")
        if not isinstance(inner, dict):
            raise ReplayError("the record holds no log (its \"input\")")
        if data.get("method", engine.NAME) != engine.NAME:
            raise ReplayError(f"the record is of a {data.get('method')!r} game, not {engine.NAME!r}")
        data = inner
    raise ReplayError("a record within a record within a record: give the game's log or its record")


@dataclass(frozen=True)
class Replayed:
    state: State
    results: tuple[dict[str, Any], ...]  # one per event
    pregame: dict[str, dict[str, Any]]  # player -> the fate of their pregame bid
    log: tuple[Event, ...]  # every event the engine gave, in order


def replay(data: dict[str, Any]) -> dict[str, Any]:
    """The issue's JSON contract: input as above, output as `output`."""
    return output(run(data))


def run(data: dict[str, Any]) -> Replayed:
    if not isinstance(data, dict):
        raise ReplayError("the log is a JSON object")
    data = _log_of(data)
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ReplayError(f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; the keys are "
                          f"{', '.join(sorted(_KEYS))}")
    if data.get("method", "lui") != engine.NAME:
        raise ReplayError(f"method {data.get('method')!r} is not {engine.NAME!r}")
    params = dict(data.get("params") or {})
    try:
        settings = preset(params.pop("preset", "F11"), **params)
        if data.get("prizes"):
            prizes = data["prizes"]
            if not isinstance(prizes, dict):
                raise SettingsError("prizes map seats to [garnets, priority]")
            settings = settings.with_prizes({str(k).upper(): _prize(k, v) for k, v in prizes.items()})
    except (SettingsError, TypeError) as err:
        raise ReplayError(f"params: {err}") from err
    players = data.get("players")
    if not isinstance(players, list) or not players:
        raise ReplayError("players: a list of names")
    try:
        state = new_game(settings, players, garnets=data.get("garnets"), priority=data.get("priority"),
                         previous_priority=data.get("previous_priority") or ())
    except (engine.GameError, TypeError, ValueError) as err:
        raise ReplayError(str(err)) from err
    log: list[Event] = []
    pregame: dict[str, dict[str, Any]] = {}
    texts = data.get("pregame") or {}
    if not isinstance(texts, dict):
        raise ReplayError("pregame: an object player -> text")
    start = state.clock
    for name in players:
        if name in texts:
            state, result = _send(state, name, texts[name], start, log)
            pregame[name] = result
    for name in texts:
        if name not in players:
            raise ReplayError(f"pregame: {name!r} is not a player")
    results: list[dict[str, Any]] = []
    for k, ev in enumerate(_events(data.get("events") or [], start)):
        at, actor, text = ev
        state, events = tick(state, at)
        log.extend(events)
        _pregame_outcomes(events, pregame)
        state, result = _send(state, actor, text, at, log)
        results.append(result)
    until = data.get("until")
    if until is not None:
        if not _number(until):
            raise ReplayError(f"until: a number of hours, not {until!r}")
        if until >= state.clock:
            state, events = tick(state, float(until))
            log.extend(events)
            _pregame_outcomes(events, pregame)
    else:
        while (t := next_tick(state)) is not None:
            state, events = tick(state, t)
            log.extend(events)
            _pregame_outcomes(events, pregame)
    return Replayed(state, tuple(results), pregame, tuple(log))


def _prize(seat: object, v: object) -> tuple[int, int]:
    if not isinstance(v, (list, tuple)) or len(v) != 2:
        raise SettingsError(f"seat {seat}'s prize is [garnets, priority], not {v!r}")
    return v[0], v[1]


def _number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _events(events: object, start: float) -> list[tuple[float, str | None, str]]:
    if not isinstance(events, list):
        raise ReplayError("events: a list")
    out = []
    last = start
    for k, ev in enumerate(events):
        where = f"events[{k}]"
        if not isinstance(ev, dict):
            raise ReplayError(f"{where}: an object {{at, player, text}}")
        at, text = ev.get("at"), ev.get("text")
        if not _number(at):
            raise ReplayError(f"{where}: at must be a number of hours, not {at!r}")
        if at < last:
            raise ReplayError(f"{where}: at {at} is before {last}; events are taken in the order they came")
        if not isinstance(text, str):
            raise ReplayError(f"{where}: text must be a string")
        actor = ev.get("player")
        if ev.get("gm") is True:
            actor = GM
        elif actor is not None and not isinstance(actor, str):
            raise ReplayError(f"{where}: player must be a name (or null for the GM)")
        last = float(at)
        out.append((last, actor, text))
    return out


def _send(state: State, actor: str | None, text: object, at: float,
          log: list[Event]) -> tuple[State, dict[str, Any]]:
    """Every line of one message, in order; its result."""
    if not isinstance(text, str):
        raise ReplayError(f"a text must be a string, not {text!r}")
    lines = parse_lines(text)
    if not lines:
        return state, {"ok": False, "rule": "syntax", "message": "No command in this text."}
    outcomes = []
    for _, parsed in lines:
        if isinstance(parsed, LuiSyntaxError):
            outcomes.append({"ok": False, "rule": "syntax", "message": parsed.render()})
            continue
        state, events = apply(state, actor, parsed, at)
        log.extend(events)
        outcomes.append(_outcome(events, actor, parsed))
    if len(outcomes) == 1:
        return state, outcomes[0]
    failed = [o for o in outcomes if not o["ok"]]
    first = failed[0] if failed else {"ok": True}
    return state, {**first, "ok": not failed, "lines": outcomes}


def _outcome(events: tuple[Event, ...], actor: str | None, command: Command) -> dict[str, Any]:
    for e in events:
        if isinstance(e, Rejected) and e.player == actor and e.command is command:
            return {"ok": False, "rule": e.rule, "message": e.message}
    return {"ok": True}


def _pregame_outcomes(events: tuple[Event, ...], pregame: dict[str, dict[str, Any]]) -> None:
    """The pregame's bids are judged when it ends: their fate replaces the
    'stored' result of the text that sent them."""
    opened = next((e for e in events if isinstance(e, engine.AuctionOpened)), None)
    if opened is None:
        return
    for e in events:
        if isinstance(e, engine.BidPlaced) and e.pregame:
            pregame[e.player] = {"ok": True, "seat": e.seat, "bid": e.amount}
        elif isinstance(e, Rejected) and e.at == opened.at and e.player in pregame:
            pregame[e.player] = {"ok": False, "rule": e.rule, "message": e.message}


def output(r: Replayed) -> dict[str, Any]:
    s = r.state
    st = s.settings
    seats: dict[str, Any] = {}
    for seat in st.board.seats:
        w = s.won_seat(seat)
        seats[seat] = None if w is None else {"winner": w.player, "bid": w.amount, "at": w.at,
                                              "garnets": w.garnets, "priority": w.priority}
    winning = s.won_seat(s.winning_seat) if s.winning_seat else None
    warnings = [e.message for e in r.log if isinstance(e, engine.GmWarning)]
    warnings += [w for w in st.warnings() if w not in warnings]
    return {
        "method": engine.NAME,
        "settings": st.as_dict(),
        "phase": s.phase,
        "clock": s.clock,
        "seats": seats,
        "standing": {b.seat: {"player": b.player, "bid": b.amount, "placed_at": b.placed_at, "ends_at": b.ends_at}
                     for b in s.standing},
        "chips": {p.name: p.chips for p in s.players},
        "chips_left": {p.name: s.chips_left(p.name) for p in s.players},
        "bought": {p.name: p.bought for p in s.players},
        "garnets": {p.name: p.garnets for p in s.players},
        "fees": {p.name: p.fees for p in s.players},
        "priority": {p.name: p.priority for p in s.players},
        "results": list(r.results),
        "pregame": r.pregame,
        "ended_at": s.ended_at,
        "end_reason": s.end_reason,
        "winner": s.winner,
        "winning_seat": s.winning_seat,
        "winning_bid": winning.amount if winning else None,
        "tol": {p.name: p.tol for p in s.players if p.tol},
        "tol_awarded": dict(s.tol_awarded),
        "ec": s.ec,
        "ec_by": s.ec_by,
        "ec_candidates": list(s.ec_candidates),
        "ec_chooser": s.ec_chooser if len(s.ec_candidates) > 1 else None,
        "ec_deadline": s.ec_deadline,
        "gifts": [{"at": g.at, "from": g.giver, "to": g.to} for g in s.gifts],
        "finished_at": s.finished_at,
        "roster_changes": [{"at": c.at, "old": c.old, "new": c.new} for c in s.roster_changes],
        "ejected": [p.name for p in s.players if p.out],
        "history": [{"at": h.at, "player": h.player, "seat": h.seat, "bid": h.amount, "fee": h.fee,
                     "pregame": h.pregame, "outcome": h.outcome, "outcome_at": h.outcome_at} for h in s.history],
        "warnings": warnings,
        "log": [event_dict(e) for e in r.log],
    }


def event_dict(e: Event) -> dict[str, Any]:
    """An event as JSON: its type and fields (a rejected command as its kind)."""
    out: dict[str, Any] = {"type": type(e).__name__}
    for f in fields(e):
        out[f.name] = _plain(getattr(e, f.name))
    return out


def _plain(v: Any) -> Any:
    if isinstance(v, Command):
        return type(v).__name__
    if is_dataclass(v):
        return {f.name: _plain(getattr(v, f.name)) for f in fields(v)}
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    return v


def resolve(powers: Any, raw_params: Any, submissions: Any, stream: Any) -> dict[str, Any]:
    """The assignment's resolver signature (judge.resolution): LUI is no
    assignment. Its log is timed events, read by `replay` (judge resolve
    hands it the whole file through Method.resolve_file)."""
    raise ReplayError("a LUI game is replayed from its timed log (judge resolve FILE), not from submissions")
