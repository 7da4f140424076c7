"""A Payola game's phases (issue 14), pure apart from the `diplomacy`
package, which keeps the board and adjudicates (DATC-compliant).

The state (State) is what games.method_state stores: the diplomacy game in
its own saved-game format, the accounts (ledger.py), each power's
acceptance list, the offer sheets and the retreat or adjustment orders that
stand for the phase, and a report of every phase played.

- A movement phase: bribes.choose_orders (payola-core) picks each unit's
  order from the sheets that stand; the accepted bribes are debited; the
  orders are set for the units' owners and the engine adjudicates.
- A retreat or adjustment phase: the units' owners order them (rules 1.2),
  checked against the engine's possible orders; what is not ordered gets
  the engine's default (a retreat not ordered disbands; a build not ordered
  is waived; a disband not ordered is the engine's civil disorder choice).
- After the Winter adjustments (the engine skips phases with nothing to
  order), before the next Spring movement phase: each power's income from
  the centres it owns (ledger.credit_income). The first year's money is the
  starting balance.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from judge.methods.payola import ledger as ledgers
from judge.methods.payola.ledger import Ledger


KEEP_REPORTS = 8  # phases of reports kept in the state: two years at most


class OrderError(ValueError):
    """An order a power may not give now (the reason is the reply)."""


def _diplomacy_game(saved: Mapping[str, Any] | None = None, variant: str = "standard") -> Any:
    from diplomacy import Game

    if saved is None:
        return Game(map_name=variant)
    from diplomacy.utils.export import from_saved_game_format

    return from_saved_game_format(dict(saved))


def _saved(g: Any) -> dict[str, Any]:
    from diplomacy.utils.export import to_saved_game_format

    return to_saved_game_format(g)


def title(power: str) -> str:
    """The engine's FRANCE -> France (the names of the seam)."""
    return power.replace("_", " ").title()


@dataclass(frozen=True)
class State:
    variant: str
    saved: dict[str, Any]  # the diplomacy game, to_saved_game_format
    ledger: Ledger
    accept: dict[str, str] = field(default_factory=dict)  # power -> acceptance list ("FEGRAIT?")
    sheets: dict[str, str] = field(default_factory=dict)  # power -> its sheet for this movement phase
    orders: dict[str, list[str]] = field(default_factory=dict)  # power -> retreat/adjustment orders
    reports: tuple[dict[str, Any], ...] = ()  # one per phase played, oldest first

    def engine(self) -> Any:
        """A fresh diplomacy game of this state (adjudicate changes it)."""
        return _diplomacy_game(self.saved)

    def view(self) -> Any:
        """The same, loaded once per State, for reading only (units, phase,
        orders allowed): a sheet of 20 lines reads the position 20 times,
        and loading a game of many years takes tens of milliseconds."""
        cached = self.__dict__.get("_view")
        if cached is None:
            cached = _diplomacy_game(self.saved)
            object.__setattr__(self, "_view", cached)
        return cached


def playable(variant: str) -> bool:
    """Whether the diplomacy package ships the convoy paths of the variant's
    map: without them, loading the map first computes them, for minutes
    (`world`: four), which a daemon must not do while mail waits."""
    import os
    import pickle

    from diplomacy import settings
    from diplomacy.utils import convoy_paths

    path = os.path.join(settings.PACKAGE_DIR, "maps", f"{variant.lower()}.map")
    if not os.path.exists(path) or not os.path.exists(convoy_paths.INTERNAL_CACHE_PATH):
        return False
    with open(convoy_paths.INTERNAL_CACHE_PATH, "rb") as f:
        cache = pickle.load(f)  # the package's own file, as the package itself reads it
    return convoy_paths.get_file_md5(path) in cache


def new_game(variant: str, start_balance: int | None = None) -> State:
    """The variant's opening position; every power's account opened with
    `start_balance` AgP, or (None) the income of its home centres."""
    g = _diplomacy_game(None, variant)
    win = victory(g)
    start = {title(p): (start_balance if start_balance is not None else ledgers.income(len(c), win))
             for p, c in sorted(g.get_centers().items())}
    state = State(variant, _saved(g), ledgers.open_accounts(start, g.get_current_phase()))
    return replace(state, accept={p: default_accept(state, p) for p in start})


def victory(g: Any) -> int:
    """Centres to win: the map's, else a majority of its centres."""
    return int(g.map.victory[0]) if g.map.victory else len(g.map.scs) // 2 + 1


def powers(state: State) -> list[str]:
    return [title(p) for p in sorted(state.view().powers)]


def letters(state: State) -> dict[str, str]:
    """power -> the letter of an acceptance list: payola-core's, the one
    check_acceptance reads (what the players are told must be what it takes)."""
    from judge.methods.payola.orders import power_letters

    return power_letters(state.variant)


def default_accept(state: State, power: str) -> str:
    """Until a player sets one: their own letter, then the others at random
    (DPjudge's initAccept: abbreviation + '?')."""
    return letters(state)[power] + "?"


def phase(state: State) -> str:
    return state.view().get_current_phase()


def phase_type(state: State) -> str:
    """M (movement), R (retreats), A (adjustments), or '' once the game is over."""
    p = phase(state)
    return "" if p == "COMPLETED" else p[-1]


def is_over(state: State) -> bool:
    g = state.view()
    return bool(g.is_game_done)


def units(state: State) -> dict[str, str]:
    """unit -> owner ("A PAR" -> "France"). In a retreat phase a dislodged
    unit keeps the package's '*' ("*A MUN" -> "Germany"), beside the unit
    that dislodged it ("A MUN" -> "France"): without it the two shared one
    key and one power lost its unit in every view (issue 26)."""
    out = {}
    for p, us in sorted(state.view().get_units().items()):
        for u in us:
            out[u] = title(p)
    return out


def standing_units(state: State) -> dict[str, str]:
    """units() without the dislodged ones: the units on the board."""
    return {u: p for u, p in units(state).items() if not u.startswith("*")}


def centres(state: State) -> dict[str, list[str]]:
    return {title(p): sorted(c) for p, c in sorted(state.view().get_centers().items())}


def orderable(state: State, power: str) -> dict[str, list[str]]:
    """A retreat or adjustment phase: location -> the orders the engine
    allows there for `power` (empty in a movement phase)."""
    g = state.view()
    if g.phase_type not in ("R", "A"):
        return {}
    possible = g.get_all_possible_orders()
    return {loc: sorted(possible.get(loc, [])) for loc in g.get_orderable_locations(power.upper())}


def needs_orders(state: State, power: str) -> int:
    """How many orders `power` may give this retreat/adjustment phase."""
    g = state.view()
    if g.phase_type == "R":
        return len(orderable(state, power))
    if g.phase_type == "A":
        p = g.get_power(power.upper())
        return abs(len(p.centers) - len(p.units))
    return 0


def check_order(state: State, power: str, text: str) -> str:
    """A retreat or adjustment order of `power` as the engine writes it, or
    OrderError with the reason. Accepted forms: the engine's ("A MUN R BOH",
    "A MUN D", "A PAR B", "WAIVE") and "A MUN - BOH" for a retreat."""
    g = state.view()
    words = " ".join(text.upper().split())
    if g.phase_type not in ("R", "A"):
        raise OrderError("this is a movement phase: units obey bribes; send an offer sheet")
    allowed = orderable(state, power)
    if not allowed:
        raise OrderError(f"{power} has nothing to order in {g.get_current_phase()}")
    if g.phase_type == "R":
        words = words.replace(" - ", " R ")
    if words == "WAIVE":
        if g.phase_type == "A" and any("WAIVE" in v for v in allowed.values()):
            return "WAIVE"
        raise OrderError(f"{power} has no build to waive")
    for options in allowed.values():
        if words in options:
            return words
    kind = "retreat" if g.phase_type == "R" else "adjustment"
    shown = "; ".join(f"{loc}: {', '.join(o)}" for loc, o in sorted(allowed.items()))
    raise OrderError(f"'{text.strip()}' is no {kind} order {power} may give now. Possible: {shown}")


def with_orders(state: State, power: str, orders: list[str]) -> State:
    """`power`'s retreat/adjustment orders replaced (the last mail counts)."""
    return replace(state, orders={**state.orders, power: list(orders)})


def with_sheet(state: State, power: str, text: str) -> State:
    return replace(state, sheets={**state.sheets, power: text})


def with_accept(state: State, power: str, accept: str) -> State:
    return replace(state, accept={**state.accept, power: accept})


def with_ledger(state: State, new: Ledger) -> State:
    return replace(state, ledger=new)


def movement(state: State, stream: Any) -> tuple[State, dict[str, Any]]:
    """A movement phase at its deadline: the bribes choose the orders
    (payola-core's choose_orders on the sheets that stand), the accepted
    bribes are paid, the engine adjudicates."""
    from judge.methods.payola import bribes

    before = dict(state.ledger.balances)
    result = bribes.choose_orders(variant=state.variant, units=units(state), balances=before,
                                  acceptance=dict(state.accept), sheets=dict(state.sheets), stream=stream)
    paid = ledgers.debit_bribes(state.ledger, result.spent, phase(state))
    bribe = {"balances_before": before, "spent": dict(result.spent), "balances": paid.as_dict(),
             "reductions": dict(result.reductions), "accepted": dict(result.accepted),
             "rejected": [r.__dict__ for r in result.rejected], "draws": list(result.draws),
             "random_order": dict(result.random_order), "chart": dict(result.chart),
             "savings": dict(getattr(result, "savings", {}) or {}),
             "sheets": dict(state.sheets), "acceptance": dict(state.accept)}
    return adjudicate(with_ledger(state, paid), dict(result.orders), bribe=bribe)


def adjudicate(state: State, chosen: Mapping[str, str] | None = None, *,
               bribe: dict[str, Any] | None = None) -> tuple[State, dict[str, Any]]:
    """The phase adjudicated by the engine: a movement phase with `chosen`
    (unit -> order, whoever owns it), a retreat or adjustment phase with the
    owners' orders that stand. Then, before a Spring movement phase after the
    first year, the income. Returns the new state and the phase's report."""
    g = state.engine()
    played = g.get_current_phase()
    owner = units(state)
    if g.phase_type == "M":
        by_power: dict[str, list[str]] = {}
        for unit, order in (chosen or {}).items():
            if unit in owner:
                by_power.setdefault(owner[unit], []).append(order)
        for p, orders in by_power.items():
            g.set_orders(p.upper(), orders)
    else:
        for p, orders in state.orders.items():
            g.set_orders(p.upper(), list(orders))
    given = {title(p): list(o) for p, o in g.get_orders().items() if o}
    g.process()
    results = {u: [str(r) for r in rs] for u, rs in (g.result_history.last_value() or {}).items()}
    new = replace(state, saved=_saved(g), sheets={}, orders={})
    report: dict[str, Any] = {"phase": played, "orders": given, "results": results,
                              "owners": owner, "next": g.get_current_phase()}
    if bribe is not None:
        report["bribes"] = bribe
    now = g.get_current_phase()
    if now.startswith("S") and now.endswith("M") and now[1:5] != played[1:5]:
        counts = {title(p): len(c) for p, c in g.get_centers().items()}
        new = with_ledger(new, ledgers.credit_income(new.ledger, counts, now, victory(g)))
        report["income"] = {p: ledgers.income(n, victory(g)) for p, n in counts.items()}
    report["units"] = units(new)
    report["centres"] = centres(new)
    report["balances"] = new.ledger.as_dict()
    report["over"] = bool(g.is_game_done)
    # The last year's reports stay in the state (the results mails and tests
    # read them); every phase's record is in the audit trail for good.
    return replace(new, reports=(state.reports + (report,))[-KEEP_REPORTS:]), report


def to_json(state: State) -> dict[str, Any]:
    return {"variant": state.variant, "saved": state.saved, "ledger": ledgers.to_json(state.ledger),
            "accept": state.accept, "sheets": state.sheets, "orders": state.orders,
            "reports": list(state.reports)}


def from_json(data: Mapping[str, Any]) -> State:
    return State(data["variant"], dict(data["saved"]), ledgers.from_json(data["ledger"]), dict(data["accept"]),
                 dict(data["sheets"]), {k: list(v) for k, v in data["orders"].items()}, tuple(data["reports"]))
