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
from judge.methods.payola.rules import NONE, Rules, rules_from


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
    rules: Rules = NONE  # the DPjudge rules in force (rules.py)
    dummies: tuple[str, ...] = ()  # powers in civil disorder: nobody plays them (unclaimed, or EJECTed)
    early: dict[str, str] = field(default_factory=dict)  # power -> its sheet for the next movement phase
    profits: dict[str, int] = field(default_factory=dict)  # ZEROSUM: what each power's units were paid this year
    year_centres: dict[str, list[str]] = field(default_factory=dict)  # each power's centres at the last income

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


def new_game(variant: str, start_balance: int | None = None, rules: Rules = NONE,
             dummies: tuple[str, ...] | list[str] = ()) -> State:
    """The variant's opening position; every power's account opened with
    `start_balance` AgP, or (None) the income of its home centres as the
    rules count it (DPjudge's PayolaPower.initialize: ZEROSUM's 10 a home
    centre, TAX, FLAT_TAX, CAP; half the victory centres a unit when that
    comes to nothing). `dummies`: the powers nobody plays."""
    g = _diplomacy_game(None, variant)
    win = victory(g)
    centres_now = {title(p): sorted(c) for p, c in sorted(g.get_centers().items())}
    units_now = {title(p): len(u) for p, u in g.get_units().items()}
    start = {}
    for p, c in centres_now.items():
        if start_balance is not None:
            start[p] = start_balance
        elif "ZEROSUM" in rules:
            start[p] = 10 * len(c) if rules.cap is None else min(rules.cap, 10 * len(c))
        else:
            start[p] = (ledgers.income(len(c), win, rules=rules, owned=c, powers=len(centres_now))
                        or (win // 2) * units_now.get(p, 0))
    idle = tuple(sorted({_power_name(centres_now, d) for d in dummies}))
    state = State(variant, _saved(g), ledgers.open_accounts(start, g.get_current_phase()), rules=rules,
                  dummies=idle, year_centres=centres_now)
    return replace(state, accept={p: default_accept(state, p) for p in start})


def _power_name(powers: Mapping[str, Any], written: str) -> str:
    found = {p.casefold(): p for p in powers}.get(str(written).casefold())
    if found is None:
        raise ValueError(f"{written!r} is not a power of this map ({', '.join(powers)})")
    return found


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
    (DPjudge's initAccept: abbreviation + '?'); a dummy's is '?' alone."""
    return "?" if power in state.dummies else letters(state)[power] + "?"


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


def with_early_sheet(state: State, power: str, text: str) -> State:
    """A sheet sent in a retreat or adjustment phase, kept for the next
    movement phase (DPjudge players send them early: issue 26). It becomes
    that phase's sheet when the phase begins, is checked against the
    position then (at the deadline, as every sheet), and a later one
    replaces it as a later mail's sheet does."""
    if phase_type(state) == "M":
        return with_sheet(state, power, text)
    return replace(state, early={**state.early, power: text})


def check_early_sheet(state: State, power: str, text: str) -> list[tuple[int, str]]:
    """What can be checked of an early sheet now: each line's syntax, and
    the rules' forms (the units it names may move before its phase).
    (line, reason) for every line refused."""
    from judge.methods.payola import bribes
    from judge.methods.payola.orders import dpjudge_form
    from judge.methods.payola.sheet import SheetSyntaxError, iter_sheet

    refused = []
    for number, parsed in iter_sheet(text, lambda line: dpjudge_form(state.variant, line)):
        if isinstance(parsed, SheetSyntaxError):
            refused.append((number, parsed.render()))
            continue
        try:
            bribes.rule_form(parsed, state.rules)
        except bribes.OrderError as err:
            refused.append((number, str(err)))
    return refused


def with_dummy(state: State, power: str) -> State:
    """`power` in civil disorder from now on (EJECT, or a power nobody
    claimed): it sends nothing (its sheet and orders that stood are
    dropped; its units take the defaults), its acceptance list is '?'."""
    return replace(state, dummies=tuple(sorted(set(state.dummies) | {power})), accept={**state.accept, power: "?"},
                   sheets={p: t for p, t in state.sheets.items() if p != power},
                   early={p: t for p, t in state.early.items() if p != power},
                   orders={p: o for p, o in state.orders.items() if p != power})


def with_player(state: State, power: str) -> State:
    """A dummy played again (a replacement took it): its own list back."""
    state = replace(state, dummies=tuple(p for p in state.dummies if p != power))
    return replace(state, accept={**state.accept, power: default_accept(state, power)})


def transfer(state: State, giver: str, receiver: str, amount: int) -> State:
    """TRANSFER by the game's rules (ledger.transfer: NO_TRANSFER,
    ONE_TRANSFER, ANON_TRANSFER); LedgerError when refused."""
    return with_ledger(state, ledgers.transfer(state.ledger, giver, receiver, amount, phase(state),
                                               rules=state.rules))


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
    sheets = {p: t for p, t in state.sheets.items() if p not in state.dummies}
    result = bribes.choose_orders(variant=state.variant, units=units(state), balances=before,
                                  acceptance=dict(state.accept), sheets=sheets, stream=stream,
                                  rules=state.rules, dummies=state.dummies)
    paid = ledgers.debit_bribes(state.ledger, result.spent, phase(state))
    bribe = {"balances_before": before, "spent": dict(result.spent), "balances": paid.as_dict(),
             "reductions": dict(result.reductions), "accepted": dict(result.accepted),
             "rejected": [r.__dict__ for r in result.rejected], "draws": list(result.draws),
             "random_order": dict(result.random_order), "chart": dict(result.chart),
             "savings": dict(getattr(result, "savings", {}) or {}),
             "sheets": sheets, "acceptance": dict(state.accept), "dummies": list(state.dummies),
             "dummy_holds": list(result.dummy_holds), "profits": dict(result.profits)}
    profits = {p: state.profits.get(p, 0) + result.profits.get(p, 0) for p in set(state.profits) | set(result.profits)}
    return adjudicate(replace(with_ledger(state, paid), profits=profits), dict(result.orders), bribe=bribe)


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
    needed = {p: needs_orders(state, p) for p in powers(state)} if g.phase_type == "A" else {}
    g.process()
    results = {u: [str(r) for r in rs] for u, rs in (g.result_history.last_value() or {}).items()}
    now = g.get_current_phase()
    # A sheet sent early waits for the next movement phase (with_early_sheet).
    early_now = now.endswith("M")
    new = replace(state, saved=_saved(g), sheets=dict(state.early) if early_now else {}, orders={},
                  early={} if early_now else dict(state.early))
    report: dict[str, Any] = {"phase": played, "orders": given, "results": results,
                              "owners": owner, "next": now, "rules": sorted(state.rules.flags)}
    if needed:
        # Builds the engine does not list among its orders: waived, by the power or left unordered.
        report["waived"] = {p: n - len(given.get(p, [])) for p, n in needed.items()
                            if _builds(state, p) and n > len(given.get(p, []))}
    if bribe is not None:
        report["bribes"] = bribe
        if "PUBLIC_TOTALS" in state.rules:
            report["totals"] = {u: row["paid"] for u, row in bribe["chart"].items()}
    if now.startswith("S") and now.endswith("M") and now[1:5] != played[1:5]:
        owned = {title(p): sorted(c) for p, c in g.get_centers().items()}
        counts = {p: len(c) for p, c in owned.items()}
        before_income = new.ledger
        new = with_ledger(new, ledgers.credit_income(new.ledger, counts, now, victory(g), rules=state.rules,
                                                     owned=owned, profits=state.profits, before=state.year_centres))
        report["income"] = {p: sum(x.amount for x in new.ledger.lines[len(before_income.lines):]
                                   if x.power == p and x.kind in ("income", "bribe profits"))
                            for p in counts}
        new = replace(new, profits={}, year_centres=owned)
    report["units"] = units(new)
    report["centres"] = centres(new)
    report["balances"] = new.ledger.as_dict()
    report["over"] = bool(g.is_game_done)
    # The last year's reports stay in the state (the results mails and tests
    # read them); every phase's record is in the audit trail for good.
    return replace(new, reports=(state.reports + (report,))[-KEEP_REPORTS:]), report


def _builds(state: State, power: str) -> bool:
    p = state.view().get_power(power.upper())
    return len(p.centers) > len(p.units)


def to_json(state: State) -> dict[str, Any]:
    return {"variant": state.variant, "saved": state.saved, "ledger": ledgers.to_json(state.ledger),
            "accept": state.accept, "sheets": state.sheets, "orders": state.orders,
            "reports": list(state.reports), "rules": state.rules.as_dict(), "dummies": list(state.dummies),
            "early": state.early, "profits": state.profits, "year_centres": state.year_centres}


def from_json(data: Mapping[str, Any]) -> State:
    # A state stored before issue 26 has no rules, dummies, early sheets or year's centres.
    return State(data["variant"], dict(data["saved"]), ledgers.from_json(data["ledger"]), dict(data["accept"]),
                 dict(data["sheets"]), {k: list(v) for k, v in data["orders"].items()}, tuple(data["reports"]),
                 rules_from(data.get("rules")), tuple(data.get("dummies", ())), dict(data.get("early", {})),
                 dict(data.get("profits", {})), {k: list(v) for k, v in data.get("year_centres", {}).items()})
