"""A LUI State as JSON and back, for games.method_state.

The state itself is stored, not the command log: a bid then costs one load
and one store, whatever the length of the game (replaying a log would make
the 1,000th bid replay 999). The log is kept anyway: every line's outcome
and every event are in the audit trail, and the state's own bid history
holds every valid bid with its time. Every class of the state is a frozen
dataclass of numbers, strings, tuples and frozensets, so the codec is
generic: a dataclass is an object tagged with its class ("$"), a tuple a
list, a frozenset {"$set": [...]}. A tuple of records of one class whose
fields are all numbers, strings or None (the history, the players, the
standing bids) is a table, {"$rows": class, "rows": [[field values in the
class's order], ...]}: the class's name and field names once, not once a
record (the history of a long game was most of the state's JSON, and the
JSON is written and read on every bid). States stored before (records as
tagged objects) read as they did. from_json(to_json(s)) == s
(tests/test_lui_resolve.py).

A bid changes a few objects of a state that holds every bid of the game,
so both ways take a `memo` (a Memo, kept by the caller for one game's load
and stores): from_json notes each object it made with the JSON it came
from, to_json gives that JSON back for an object the engine left as it was
(the states are immutable: the same object is the same value), and notes
what it encodes, so that a second store of the same state encodes nothing
again. Without it a bid's store encoded the whole history, twice (issue 29).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from judge.methods.lui import engine, settings, tiebreak

_CLASSES = {c.__name__: c for c in (
    engine.State, engine.Player, engine.Standing, engine.WonSeat, engine.PregameBid, engine.BidRecord,
    engine.Gift, engine.RosterChange, settings.Settings, settings.TolRules, settings.Prize, tiebreak.Tiebreak, tiebreak.Step)}
# Each class's fields in their order (the JSON's keys after "$", a row's values).
_FIELDS = {c: tuple(f.name for f in fields(c)) for c in _CLASSES.values()}
# The records stored as tables' rows: their fields are given in order (no
# keyword-only field) and their objects need no check of their own (no
# __post_init__), so a row of all their fields is read by setting them.
_ROWS = {c: names for c, names in _FIELDS.items() if c in (
    engine.Player, engine.Standing, engine.WonSeat, engine.PregameBid, engine.BidRecord, engine.Gift,
    engine.RosterChange)}
assert all(not f.kw_only and f.init for c in _ROWS for f in fields(c))
assert not any(hasattr(c, "__post_init__") for c in _ROWS)
_PLAIN = frozenset({bool, int, float, str, type(None)})  # stored as they are

# id(object) -> (the object, its JSON): the object is held, so that its id
# names no other object while the memo lives. A record's row is kept under
# ~id(record) (a negative number: never an id), apart from its tagged form.
Memo = dict[int, tuple[Any, Any]]


def to_json(state: engine.State, memo: Memo | None = None) -> dict[str, Any]:
    return _enc(state, {} if memo is None else memo)


def from_json(data: dict[str, Any], memo: Memo | None = None) -> engine.State:
    state = _dec(data, memo)
    if not isinstance(state, engine.State):
        raise ValueError("not a LUI state")
    return state


def _enc(v: Any, memo: Memo) -> Any:
    t = type(v)
    if t in _PLAIN:
        return v
    fieldnames = _FIELDS.get(t)
    if fieldnames is not None:
        known = memo.get(id(v))
        if known is not None and known[0] is v:
            return known[1]
        out: dict[str, Any] = {"$": t.__name__}
        for name in fieldnames:
            x = getattr(v, name)
            out[name] = x if type(x) in _PLAIN else _enc(x, memo)
        memo[id(v)] = (v, out)
        return out
    if t is tuple:
        known = memo.get(id(v))
        if known is not None and known[0] is v:
            return known[1]
        items = _table(v, memo) if v and type(v[0]) in _ROWS else None
        if items is None:
            items = [x if type(x) in _PLAIN else _enc(x, memo) for x in v]
        memo[id(v)] = (v, items)
        return items
    return _enc_other(v, memo)


def _table(records: tuple, memo: Memo) -> dict[str, Any] | None:
    """Records of one class as a table, or None if they are not all of one
    class with plain values."""
    cls = type(records[0])
    names = _ROWS[cls]
    rows = []
    for r in records:
        if type(r) is not cls:
            return None
        known = memo.get(~id(r))
        if known is not None and known[0] is r:
            rows.append(known[1])
            continue
        row = [getattr(r, name) for name in names]
        if not all(type(x) in _PLAIN for x in row):
            return None
        memo[~id(r)] = (r, row)
        rows.append(row)
    return {"$rows": cls.__name__, "rows": rows}


def _enc_other(v: Any, memo: Memo) -> Any:
    """What _enc's exact types leave: subclasses, and what cannot be stored."""
    from dataclasses import is_dataclass

    if is_dataclass(v) and not isinstance(v, type):
        raise TypeError(f"{type(v).__name__} is not part of a LUI state")
    if isinstance(v, frozenset):
        return {"$set": sorted(v)}
    if isinstance(v, (tuple, list)):
        return [_enc(x, memo) for x in v]
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise TypeError(f"{v!r} cannot be stored")


def _dec(v: Any, memo: Memo | None) -> Any:
    t = type(v)
    if t is dict:
        if "$rows" in v:
            return _dec_table(v, memo)
        if "$set" in v:
            return frozenset(v["$set"])
        cls = _CLASSES[v["$"]]
        obj = cls(**{k: (x if type(x) in _PLAIN else _dec(x, memo)) for k, x in v.items() if k != "$"})
        if memo is not None:
            memo[id(obj)] = (obj, v)
        return obj
    if t is list:
        items = tuple([x if type(x) in _PLAIN else _dec(x, memo) for x in v])
        if memo is not None and items and type(items[0]) not in _ROWS:  # records of before: stored as a table
            memo[id(items)] = (items, v)
        return items
    return v


def _dec_table(v: dict[str, Any], memo: Memo | None) -> tuple:
    cls = _CLASSES[v["$rows"]]
    names = _ROWS[cls]
    new = object.__new__
    records = []
    for row in v["rows"]:
        if len(row) == len(names) and all(type(x) in _PLAIN for x in row):
            # A frozen dataclass's __init__ sets each field through
            # object.__setattr__; setting them at once is a third of its
            # time, and a long game's history has thousands of records.
            r = new(cls)
            r.__dict__.update(zip(names, row))
        else:
            r = cls(*row)  # fewer fields: a state stored before a field was added has its default
        if memo is not None:
            memo[~id(r)] = (r, row)
        records.append(r)
    out = tuple(records)
    if memo is not None:
        memo[id(out)] = (out, v)
    return out
