"""Payola on the `diplomacy` package's other maps (issue 26, point 5):
`modern` (ten powers) and `ancmed` (five), each played through a whole
year at the engine (judge/methods/payola/game.py): sheets from every power,
a bribe of a foreign unit, the builds ordered by the owners,
the income before the next Spring; every movement phase's record replayed
by `judge resolve` to the same orders."""

from __future__ import annotations

import pytest

from judge.methods.payola import game as G
from judge.methods.payola import ledger as L
from judge.methods.payola.bribes import check_acceptance
from judge.methods.payola.replay import resolve_file
from judge.rng import DrawStream


def _moves(state, power):
    """Each of `power`'s units to its first possible move (the package's
    list, sorted), 1 AgP each: a sheet the map must read."""
    from judge.methods.payola.orders import board

    position = board(state.variant, G.units(state))
    lines = []
    for unit in sorted(u for u, p in G.units(state).items() if p == power):
        moves = sorted(o for o in position.possible if o.startswith(unit + " - ") and not o.endswith("VIA"))
        lines.append(f"1 : {moves[0]}" if moves else f"{unit} H")
    return "\n".join(lines)


def _movement(state, seed):
    for power in G.powers(state):
        state = G.with_sheet(state, power, _moves(state, power))
    # One power bribes another's unit: the first power's 2 AgP for the last power's first unit to hold.
    first, last = G.powers(state)[0], G.powers(state)[-1]
    target = sorted(u for u, p in G.units(state).items() if p == last)[0]
    state = G.with_sheet(state, first, state.sheets[first] + f"\n2 : {target} H")
    before = state
    state, report = G.movement(state, DrawStream(seed))
    b = report["bribes"]
    assert not b["rejected"], b["rejected"]
    record = {"method": "payola", "variant": before.variant, "phase": report["phase"], "units": report["owners"],
              "balances": b["balances_before"], "acceptance": b["acceptance"], "sheets": b["sheets"],
              "random_order": b["random_order"]}
    replayed = resolve_file(record, b"any seed: the draws are given")
    chosen = {o.split(" ")[0] + " " + o.split(" ")[1]: o for orders in report["orders"].values() for o in orders}
    assert {u: o for u, o in replayed["orders"].items()} == {u: chosen.get(u, f"{u} H")
                                                             for u in replayed["orders"]}
    assert replayed["orders"][target] == f"{target} H"  # the foreign bribe won over the owner's 1 AgP move
    return state, report


def _owners_orders(state):
    """Retreats or adjustments: each power gives the first order the engine
    allows at each of its locations, as many as it may give."""
    for power in G.powers(state):
        allowed = G.orderable(state, power)
        orders = []
        for loc, options in sorted(allowed.items()):
            if len(orders) < G.needs_orders(state, power):
                order = next((o for o in options if o != "WAIVE"), options[0])
                orders.append(G.check_order(state, power, order))
        state = G.with_orders(state, power, orders)
    return G.adjudicate(state)


@pytest.mark.parametrize("variant, powers, first", [
    ("modern", ["Britain", "Egypt", "France", "Germany", "Italy", "Poland", "Russia", "Spain", "Turkey",
                "Ukraine"], "S1994M"),
    ("ancmed", ["Carthage", "Egypt", "Greece", "Persia", "Rome"], "S0001M"),
])
def test_a_year_on_another_map(variant, powers, first):
    state = G.new_game(variant)
    assert G.powers(state) == powers and G.phase(state) == first
    letters = G.letters(state)
    assert sorted(letters.values()) == sorted(p[0] for p in powers)  # one initial a power
    full = "".join(letters[p] for p in reversed(powers))
    assert check_acceptance(variant, powers[0], full) == full
    state = G.with_accept(state, powers[0], check_acceptance(variant, powers[0], full[:2]))
    win = G.victory(state.view())
    start = {p: L.income(len(c), win) for p, c in G.centres(state).items()}
    assert state.ledger.as_dict() == start

    year = first[1:5]
    state, spring = _movement(state, b"spring")
    assert spring["phase"] == first
    state, fall = _movement(state, b"fall")
    assert fall["phase"] == f"F{year}M"
    while G.phase_type(state) in ("R", "A"):
        state, _ = _owners_orders(state)
    assert G.phase(state) == f"S{int(year) + 1:04d}M"
    # The year's income, before the next Spring: each power's centres as the map counts them.
    incomes = {p: sum(x.amount for x in state.ledger.lines_of(p) if x.kind == "income") for p in powers}
    assert incomes == {p: L.income(len(c), win) for p, c in G.centres(state).items()}
    spent = {p: sum(-x.amount for x in state.ledger.lines_of(p) if x.kind == "bribes") for p in powers}
    assert state.ledger.as_dict() == {p: start[p] - spent[p] + incomes[p] for p in powers}
    assert G.from_json(G.to_json(state)) == state
