"""A PT3 State as JSON and back (games.method_state; the replay's output).

Amounts are written as decimal strings ("3.25"), never floats, and times
in ISO 8601: from_json(to_json(s)) == s (tests/test_pt3_engine.py).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from judge.methods.pt3.engine import SealedBid, Season, State


def _t(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _d(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def _m(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


def season_json(s: Season) -> dict[str, Any]:
    return {"number": s.number, "mark": s.mark, "winner": s.winner, "bid": _m(s.bid), "square": s.square,
            "by_deadline": s.by_deadline, "at": _t(s.at), "missing": list(s.missing),
            "balances": {"X": str(s.balances[0]), "O": str(s.balances[1])}, "board": s.board}


def to_json(state: State) -> dict[str, Any]:
    return {
        "names": {"X": state.names[0], "O": state.names[1]},
        "board": state.board,
        "balances": {"X": str(state.balances[0]), "O": str(state.balances[1])},
        "places": state.places,
        "season_hours": state.season_hours,
        "advice": state.advice,
        "season": state.season,
        "deadline": _t(state.deadline),
        "bids": [{"side": b.side, "amount": str(b.amount), "square": b.square, "at": _t(b.at)} for b in state.bids],
        "seasons": [season_json(s) for s in state.seasons],
        "winner": state.winner,
        "line": None if state.line is None else list(state.line),
    }


def from_json(data: dict[str, Any]) -> State:
    def season(s: dict[str, Any]) -> Season:
        return Season(s["number"], s["mark"], s["winner"], None if s["bid"] is None else Decimal(s["bid"]),
                      s["square"], s["by_deadline"], _d(s["at"]), tuple(s["missing"]),
                      (Decimal(s["balances"]["X"]), Decimal(s["balances"]["O"])), s["board"])

    return State(
        names=(data["names"]["X"], data["names"]["O"]),
        board=data["board"],
        balances=(Decimal(data["balances"]["X"]), Decimal(data["balances"]["O"])),
        places=data["places"],
        season_hours=data["season_hours"],
        advice=data["advice"],
        season=data["season"],
        deadline=_d(data["deadline"]),
        bids=tuple(SealedBid(b["side"], Decimal(b["amount"]), b["square"], _d(b["at"])) for b in data["bids"]),
        seasons=tuple(season(s) for s in data["seasons"]),
        winner=data["winner"],
        line=None if data["line"] is None else tuple(data["line"]),
    )
