"""Payola's phases (judge/methods/payola/game.py) with orders given
directly, as the bribes would choose them: a unit dislodged and retreated
by its owner, a retreat not ordered (disbanded), an adjustment phase
ordered by the owners (a build; a disband left to civil disorder), the
year's income before Spring; the adjudication equal to the diplomacy
engine's own for the same orders; the state's JSON round trip."""

from __future__ import annotations

import json

import pytest

from judge.methods.payola import game as G

SPRING = {"A PAR": "A PAR - BUR", "A VIE": "A VIE - TYR", "A MUN": "A MUN H", "F BRE": "F BRE - MAO"}
FALL = {"A BUR": "A BUR - MUN", "A TYR": "A TYR S A BUR - MUN", "A MUN": "A MUN H",
        "F MAO": "F MAO - POR"}


def fall_1901():
    state = G.new_game("standard")
    state, spring = G.adjudicate(state, SPRING)
    assert spring["phase"] == "S1901M" and spring["next"] == "F1901M"
    state, fall = G.adjudicate(state, FALL)
    return state, spring, fall


def test_the_engine_adjudicates_the_chosen_orders_like_the_engine_alone():
    from diplomacy import Game

    state, spring, fall = fall_1901()
    ref = Game(map_name="standard")
    for orders in (SPRING, FALL):
        owners = {u.lstrip("*"): p for p, us in ref.get_units().items() for u in us}
        by = {}
        for unit, order in orders.items():
            by.setdefault(owners[unit], []).append(order)
        for p, o in by.items():
            ref.set_orders(p, o)
        ref.process()
    assert fall["results"] == {u: [str(r) for r in rs] for u, rs in ref.result_history.last_value().items()}
    assert fall["results"]["A MUN"] == ["dislodged"]
    assert G.phase(state) == ref.get_current_phase() == "F1901R"
    assert G.units(state) == {u: G.title(p) for p, us in ref.get_units().items() for u in us}


def test_a_dislodged_unit_and_its_attacker_are_both_shown():
    """Issue 26: after French A BUR - MUN dislodges German A MUN, the
    position showed France without A MUN and Germany with it (one key for
    both). Both are shown, the dislodged one marked as such."""
    from judge.templating import render

    state, _, fall = fall_1901()
    units = G.units(state)
    assert units["A MUN"] == "France" and units["*A MUN"] == "Germany"
    assert G.standing_units(state)["A MUN"] == "France" and "*A MUN" not in G.standing_units(state)
    assert fall["units"]["A MUN"] == "France" and fall["units"]["*A MUN"] == "Germany"
    text = render("payola/position.txt.j2", phase=G.phase(state), centres=G.centres(state), units=units,
                  players={}, over=False)
    lines = {line.split()[0]: line for line in text.splitlines() if line.strip()}
    assert "A MUN" in lines["France"] and "A MUN (dislodged)" not in lines["France"]
    assert "A MUN (dislodged)" in lines["Germany"]


def test_a_retreat_ordered_by_its_owner_then_adjustments():
    state, _, _ = fall_1901()
    assert G.phase_type(state) == "R"
    assert G.needs_orders(state, "Germany") == 1 and G.needs_orders(state, "France") == 0
    with pytest.raises(G.OrderError, match="nothing to order"):
        G.check_order(state, "France", "A BUR R PAR")
    with pytest.raises(G.OrderError, match="no retreat order"):
        G.check_order(state, "Germany", "A MUN R BUR")  # where the attack came from
    assert G.check_order(state, "Germany", "a mun - boh") == "A MUN R BOH"
    state = G.with_orders(state, "Germany", ["A MUN R BOH"])
    state, report = G.adjudicate(state)
    assert report["phase"] == "F1901R" and report["orders"] == {"Germany": ["A MUN R BOH"]}
    assert G.units(state)["A BOH"] == "Germany"

    # Winter: France took MUN and POR (5 centres, 3 units): two builds;
    # Germany kept BER and KIE with 3 units: one disband.
    assert G.phase(state) == "W1901A"
    assert G.centres(state)["France"] == ["BRE", "MAR", "MUN", "PAR", "POR"]
    assert G.needs_orders(state, "France") == 2 and G.needs_orders(state, "Germany") == 1
    with pytest.raises(G.OrderError):
        G.check_order(state, "France", "A MUN B")  # not a home centre
    state = G.with_orders(state, "France", [G.check_order(state, "France", "A PAR B"),
                                            G.check_order(state, "France", "WAIVE")])
    # Germany sends nothing: the engine's civil disorder disbands a unit.
    state, report = G.adjudicate(state)
    assert report["phase"] == "W1901A" and report["next"] == "S1902M"
    assert G.units(state)["A PAR"] == "France"
    assert len([u for u, p in G.units(state).items() if p == "Germany"]) == 2
    assert len([u for u, p in G.units(state).items() if p == "France"]) == 4

    # Before Spring 1902: income from the centres owned.
    assert report["income"]["France"] == 75 and report["income"]["Germany"] == 33
    assert state.ledger.balance("France") == 48 + 75
    assert state.ledger.balance("Germany") == 48 + 33
    assert state.ledger.balance("Russia") == 62 + 62
    assert state.ledger.lines_of("France")[-1].phase == "S1902M"


def test_a_retreat_not_ordered_disbands():
    state, _, _ = fall_1901()
    state, report = G.adjudicate(state)
    assert report["orders"] == {}
    assert not any(u.endswith("MUN") for u, p in G.units(state).items() if p == "Germany")
    assert G.phase(state) == "W1901A"


def test_income_only_before_spring_and_no_second_income_in_1901():
    state = G.new_game("standard", start_balance=100)
    assert state.ledger.as_dict() == {p: 100 for p in G.powers(state)}
    state, report = G.adjudicate(state, {})
    assert "income" not in report and state.ledger.as_dict()["France"] == 100
    state, report = G.adjudicate(state, {})  # F1901M, nothing moves: no adjustments, straight to 1902
    assert report["next"] == "S1902M" and report["income"]["France"] == 48
    assert state.ledger.balance("France") == 148


def test_the_state_round_trips_through_json():
    state, _, _ = fall_1901()
    again = G.from_json(json.loads(json.dumps(G.to_json(state))))
    assert again == state and G.phase(again) == "F1901R"


def test_acceptance_lists_start_with_the_own_letter():
    state = G.new_game("standard")
    assert state.accept["France"] == "F?" and G.letters(state)["Turkey"] == "T"


def test_only_maps_whose_convoy_paths_ship_are_playable():
    assert G.playable("standard") and G.playable("modern") and G.playable("ancmed")
    assert not G.playable("world")  # loading it would compute its convoy paths for minutes
    assert not G.playable("classical")  # no map of the package (a power list of the judge's)
