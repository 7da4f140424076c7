"""A whole PT3 game from its log, with no database (`judge resolve`).

The file (docs/pt3.md, "The log and judge resolve"): the players by side,
the starting balances and settings, the moment season 1 opened, and every
command the game took in the order it took them, each with its time and
who sent it ("X", "O" or "GM"). The engine replays them; deadlines fire at
their own times in between, and up to "until" after the last (the moment
the log was written; without it, the last command's time). The output is
the game as the daemon holds it: the board, the balances, every season,
the winner. The daemon writes the same file (live.log_file), so every
result by mail replays to the same state (tests/test_e2e_pt3.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from judge.methods.pt3 import engine
from judge.methods.pt3.commands import Pt3SyntaxError, parse_line
from judge.methods.pt3.persist import season_json

_KEYS = {"method", "players", "balances", "places", "season_hours", "advice", "start", "events", "until"}


class ReplayError(ValueError):
    """A log the replay cannot read; says which field."""


def _time(value: Any, where: str) -> datetime:
    try:
        t = datetime.fromisoformat(str(value))
    except ValueError as err:
        raise ReplayError(f"{where}: {value!r} is not an ISO 8601 time") from err
    if t.tzinfo is None:
        raise ReplayError(f"{where}: {value!r} has no time zone (write it like 2026-03-01T12:00:00+00:00)")
    return t


def _sides(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    if not isinstance(value, dict) or set(value) != {"X", "O"}:
        raise ReplayError(f"{key} must be an object {{\"X\": ..., \"O\": ...}}")
    return value


def start_state(data: dict[str, Any]) -> tuple[engine.State, datetime]:
    unknown = set(data) - _KEYS
    if unknown:
        raise ReplayError(f"unknown key {', '.join(sorted(unknown))}")
    players = _sides(data, "players")
    balances = _sides(data, "balances")
    raw = {"balance_x": str(balances["X"]), "balance_o": str(balances["O"]),
           **{k: data[k] for k in ("places", "season_hours", "advice") if k in data}}
    try:
        params = engine.params_from(raw, 2)
        start = _time(data.get("start"), "start")
        return engine.new_game(params, (str(players["X"]), str(players["O"])), start), start
    except (engine.ParamError, engine.GameError) as err:
        raise ReplayError(str(err)) from err


def run(data: dict[str, Any]) -> tuple[engine.State, list[dict[str, Any]]]:
    """The state after the whole log, and each command's outcome."""
    state, start = start_state(data)
    events = data.get("events", [])
    if not isinstance(events, list):
        raise ReplayError("events must be a list")
    log, last = [], start
    for k, e in enumerate(events):
        where = f"events[{k}]"
        if not isinstance(e, dict) or set(e) != {"at", "by", "text"}:
            raise ReplayError(f"{where} must be {{\"at\": time, \"by\": \"X\"|\"O\"|\"GM\", \"text\": line}}")
        at = _time(e["at"], where)
        if at < last:
            raise ReplayError(f"{where}: the events must be in time order")
        if e["by"] not in ("X", "O", engine.GM):
            raise ReplayError(f"{where}: by must be X, O or GM")
        try:
            command = parse_line(str(e["text"]), k + 1)
        except Pt3SyntaxError as err:
            raise ReplayError(f"{where}: {err}") from err
        state, out = engine.apply(state, e["by"], command, at)
        rejected = [x.reason for x in out if isinstance(x, engine.Rejected)]
        log.append({"at": e["at"], "by": e["by"], "text": e["text"],
                    "outcome": f"not done ({rejected[0]})" if rejected else "done"})
        last = at
    until = _time(data["until"], "until") if "until" in data else last
    if until < last:
        raise ReplayError("until: before the last event")
    state, _ = engine.tick(state, until)
    return state, log


def output(state: engine.State, log: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The game as JSON: what `judge resolve` prints and the results show."""
    from judge.methods.pt3.render import view

    out = {
        "method": engine.NAME,
        "players": {"X": state.names[0], "O": state.names[1]},
        "board": state.board,
        "balances": {"X": str(state.balances[0]), "O": str(state.balances[1])},
        "places": state.places,
        "over": state.over,
        "winner": state.winner,
        "line": None if state.line is None else [engine.square_name(i) for i in state.line],
        "season": state.season,
        "deadline": None if state.deadline is None else state.deadline.isoformat(),
        "sealed_bids_from": sorted(b.side for b in state.bids),  # who has bid; the bids stay sealed
        "seasons": [{**season_json(s), "square": engine.square_name(s.square)} for s in state.seasons],
        "view": view(state, ""),
    }
    if log is not None:
        out["log"] = log
    return out


def replay(data: dict[str, Any]) -> dict[str, Any]:
    state, log = run(data)
    return output(state, log)


def resolve(powers: Any, raw_params: Any, submissions: Any, stream: Any) -> dict[str, Any]:
    """The assignment's resolver signature (judge.resolution): PT3 assigns
    nothing. Its log is timed commands, read by `replay` (judge resolve hands
    it the whole file through Method.resolve_file)."""
    raise ReplayError("a PT3 game is replayed from its timed log (judge resolve FILE), not from submissions")
