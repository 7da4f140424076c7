"""A LUI State as JSON and back, for games.method_state.

The state itself is stored, not the command log: a bid then costs one load
and one store, whatever the length of the game (replaying a log would make
the 1,000th bid replay 999). The log is kept anyway: every line's outcome
and every event are in the audit trail, and the state's own bid history
holds every valid bid with its time. Every class of the state is a frozen
dataclass of numbers, strings, tuples and frozensets, so the codec is
generic: a dataclass is an object tagged with its class ("$"), a tuple a
list, a frozenset {"$set": [...]}. from_json(to_json(s)) == s
(tests/test_lui_resolve.py).
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import Any

from judge.methods.lui import engine, settings, tiebreak

_CLASSES = {c.__name__: c for c in (
    engine.State, engine.Player, engine.Standing, engine.WonSeat, engine.PregameBid, engine.BidRecord,
    engine.Gift, engine.RosterChange, settings.Settings, settings.TolRules, settings.Prize, tiebreak.Tiebreak, tiebreak.Step)}


def to_json(state: engine.State) -> dict[str, Any]:
    return _enc(state)


def from_json(data: dict[str, Any]) -> engine.State:
    state = _dec(data)
    if not isinstance(state, engine.State):
        raise ValueError("not a LUI state")
    return state


def _enc(v: Any) -> Any:
    if is_dataclass(v) and not isinstance(v, type):
        name = type(v).__name__
        if _CLASSES.get(name) is not type(v):
            raise TypeError(f"{name} is not part of a LUI state")
        out: dict[str, Any] = {"$": name}
        for f in fields(v):
            out[f.name] = _enc(getattr(v, f.name))
        return out
    if isinstance(v, frozenset):
        return {"$set": sorted(v)}
    if isinstance(v, (tuple, list)):
        return [_enc(x) for x in v]
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise TypeError(f"{v!r} cannot be stored")


def _dec(v: Any) -> Any:
    if isinstance(v, dict):
        if "$set" in v:
            return frozenset(v["$set"])
        cls = _CLASSES[v["$"]]
        return cls(**{k: _dec(x) for k, x in v.items() if k != "$"})
    if isinstance(v, list):
        return tuple(_dec(x) for x in v)
    return v
