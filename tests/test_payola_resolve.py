"""`judge resolve` of one Payola movement phase (judge/methods/payola/replay.py):
the issue's JSON in, orders, money and the `diplomacy` package's
adjudication out; through the function and through the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from judge.methods.payola.replay import resolve_file
from judge.resolution.errors import ResolveInputError
from judge.templating import render

BIN = Path(sys.executable).parent

ISSUE = {"method": "payola", "variant": "standard", "phase": "S1901M",
         "units": {"A PAR": "France", "F LON": "England"},
         "balances": {"France": 48, "England": 48},
         "acceptance": {"France": "FEGRAIT", "England": "E?"},
         "sheets": {"France": "4 : A PAR - BUR\n2 : F LON - ENG", "England": "3 : F LON - NTH"}}


def test_the_issues_example():
    """The issue's input: France's 2 for F LON - ENG loses to England's 3
    for NTH (5.1); PAR goes to Burgundy for 4."""
    r = resolve_file(ISSUE, b"\x01")
    for key in ("orders", "spent", "balances", "reductions", "draws", "rejected", "adjudication"):
        assert key in r
    assert r["orders"] == {"A PAR": "A PAR - BUR", "F LON": "F LON - NTH"}
    assert r["spent"]["France"] == 4 and r["spent"]["England"] == 3
    assert r["balances"]["France"] == 44 and r["balances"]["England"] == 45
    assert r["adjudication"] == {"A PAR": [], "F LON": []}
    assert r["units_after"] == {"A BUR": "France", "F NTH": "England"}
    # England's "E?" left six powers to chance: five recorded draws.
    assert len([d for d in r["draws"] if d["what"] == "acceptance ?"]) == 5
    json.dumps(r)  # a JSON record
    assert resolve_file(ISSUE, b"\x01") == r  # the same file and seed, the same record


def test_units_default_to_the_starting_position_only_at_the_first_phase():
    data = {k: v for k, v in ISSUE.items() if k != "units"}
    r = resolve_file(data, b"\x02")
    assert len(r["orders"]) == 22
    with pytest.raises(ResolveInputError, match="units: needed for F1901M"):
        resolve_file({**data, "phase": "F1901M"}, b"\x02")


def test_random_order_given_replays_a_record():
    """The issue: `random_order` given explicitly replays the "?" draws."""
    first = resolve_file(ISSUE, b"\x03")
    again = resolve_file({**ISSUE, "random_order": first["random_order"]}, b"\x04")
    assert again["orders"] == first["orders"] and again["random_order"] == first["random_order"]
    assert not again["draws"]


def test_rejected_lines_name_power_line_and_reason():
    data = {**ISSUE, "sheets": {"France": "4 : A PAR - BUR\n4 : A PAR - MUN\n0 : F LON H"}}
    r = resolve_file(data, b"\x05")
    assert [(x["power"], x["line"]) for x in r["rejected"]] == [("France", 2), ("France", 3)]
    assert "MUN is not adjacent to PAR" in r["rejected"][0]["reason"]
    assert r["orders"]["A PAR"] == "A PAR - BUR"


def test_the_adjudication_is_the_diplomacy_engines_for_the_same_orders():
    """The issue: the chosen orders are adjudicated by the `diplomacy`
    package. A supported attack dislodges, a standoff bounces, a convoy
    carries: the record's results equal a Game of the package given the
    same orders, and the dislodgement follows the rules of Diplomacy."""
    from diplomacy import Game

    units = {"A PAR": "France", "A MAR": "France", "A BUR": "Germany", "A MUN": "Germany", "A RUH": "Germany",
             "A LON": "England", "F NTH": "England", "A BEL": "Germany"}
    sheets = {"France": "5 : A PAR - BUR\n5 : A MAR S A PAR - BUR",
              "Germany": "2 : A MUN - RUH\n1 : A BUR H\n1 : A BEL H",
              "England": "4 : A LON - NWY VIA\n4 : F NTH C A LON - NWY"}
    data = {"method": "payola", "variant": "standard", "phase": "F1903M", "units": units,
            "balances": {"France": 10, "Germany": 10, "England": 10}, "sheets": sheets,
            "acceptance": {p: p[0] + "?" for p in ("France", "Germany", "England")}}
    r = resolve_file(data, b"\x06")
    game = Game(map_name="standard")
    game.set_current_phase("F1903M")
    game.clear_units()
    for power in ("France", "Germany", "England"):
        game.set_units(power.upper(), [u for u, o in units.items() if o == power])
        game.set_orders(power.upper(), [r["orders"][u] for u, o in units.items() if o == power])
    game.process()
    engine = {u: sorted(str(x) for x in res) for u, res in game.result_history["F1903M"].items()}
    assert r["adjudication"] == engine
    assert r["orders"]["A BUR"] == "A BUR H" and r["dislodged"] == ["A BUR"]
    assert r["adjudication"]["A MUN"] == ["bounce"]  # MUN - RUH into a unit that holds
    assert r["units_after"]["A NWY"] == "England" and r["units_after"]["A BUR"] == "France"


@pytest.mark.parametrize("bad, message", [
    ({"colour": 1}, "unknown key colour"),
    ({"phase": "S1901R"}, "a movement phase"),
    ({"variant": "nowhere"}, "nowhere"),
    ({"units": {"A PAR": "Spain"}}, "Spain"),
    ({"units": {"A XYZ": "France"}}, "A XYZ"),
    ({"sheets": {"Spain": "4 : A PAR H"}}, "Spain"),
    ({"balances": {"France": "lots"}}, "balance of France"),
    ({"acceptance": {"France": "FQ"}}, "Q is no power's initial"),
])
def test_bad_inputs_are_refused_with_the_reason(bad, message):
    with pytest.raises(ResolveInputError, match=message):
        resolve_file({**ISSUE, **bad}, b"\x07")


def test_the_text_and_bbcode_templates():
    r = resolve_file({**ISSUE, "sheets": {**ISSUE["sheets"], "England": "3 : F LON - NTH\nnonsense"}}, b"\x08")
    text = render("results/payola/offline.txt.j2", result=r)
    assert "A PAR - BUR" in text and "France" in text and "succeeds" in text
    assert "England, line 2: nonsense" in text and "^" in text
    assert "France: 4 to A PAR - BUR" in text and "England: 3 to F LON - NTH" in text
    bb = render("results/payola/offline.bbcode.j2", result=r)
    assert "[table]" in bb and "[td]A PAR - BUR[/td]" in bb and "England, line 2:" in bb


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_through_the_cli(fmt, tmp_path):
    """`judge resolve FILE --seed HEX --format json|text` (the method's
    registry line is payola-game's; the resolution is this module's)."""
    path = tmp_path / "phase.json"
    path.write_text(json.dumps(ISSUE))
    run = subprocess.run([str(BIN / "judge"), "resolve", str(path), "--seed", "0a0b", "--format", fmt],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    if fmt == "json":
        out = json.loads(run.stdout)
        assert out["orders"] == resolve_file(ISSUE, bytes.fromhex("0a0b"))["orders"]
        assert out["seed"] == "0a0b"
    else:
        assert "A PAR - BUR" in run.stdout and "Spent" in run.stdout


def test_the_cli_refuses_a_bad_file_with_the_reason(tmp_path):
    path = tmp_path / "phase.json"
    path.write_text(json.dumps({**ISSUE, "phase": "X"}))
    run = subprocess.run([str(BIN / "judge"), "resolve", str(path), "--seed", "01"], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode != 0 and "a movement phase" in run.stderr


# Issue 26: DPjudge's rules, dummies and order forms through `judge resolve`.

BOARD = {"A PAR": "France", "A MAR": "France", "A BUR": "Germany", "A MUN": "Germany", "A VIE": "Austria",
         "F LON": "England"}
POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]


def phase(sheets, **more):
    data = {"method": "payola", "variant": "standard", "phase": "S1901M", "units": BOARD,
            "balances": {p: 30 for p in POWERS}, "sheets": sheets,
            "acceptance": {"France": "FGEARIT", "Germany": "GFEARIT", "Austria": "AFGERIT", "England": "EFGARIT"},
            **more}
    return resolve_file(data, b"\x26")


def refusals(result):
    return [(r["power"], r["line"], r["reason"]) for r in result["rejected"]]


def test_dpjudges_support_to_hold_with_h_is_taken():
    """The issue: `A PAR S A BUR H` was refused; DPjudge's expandOrder takes it."""
    r = phase({"France": "2 : A PAR S A BUR H\n1 : A MAR SUPPORTS A BUR HOLD"})
    assert not r["rejected"]
    assert r["orders"]["A PAR"] == "A PAR S A BUR" and r["orders"]["A MAR"] == "A MAR S A BUR"


@pytest.mark.parametrize("rule, sheet, refused", [
    ("NO_SAVINGS", "5 $", "savings ($) are not allowed"),
    ("NO_SAVINGS", "5#3 : A PAR - PIC", "plateaus (#) are not allowed"),
    ("NO_PLATEAU", "5# : A PAR - PIC", "plateaus (#) are not allowed"),
    ("DIRECT_ONLY", "5 & A BUR - MUN", "only direct offers"),
    ("DIRECT_ONLY", "2*2 : A PAR - PIC", "repetition (*) and augmentation (+)"),
    ("LIMIT_OFFERS", "20 : A PAR - PIC\n20 : A BUR - RUH", "more than the 30 AgP you hold"),
    ("PAY_DUMMIES", "3 : A BUR - RUH", "only dummies' units are bribed"),
])
def test_each_rule_that_refuses_a_line(rule, sheet, refused):
    plain = phase({"France": sheet})
    assert not plain["rejected"]
    r = phase({"France": sheet}, rules=[rule], dummies=["Austria"] if rule == "PAY_DUMMIES" else [])
    (reason,) = [x[2] for x in refusals(r)]
    assert refused in reason and r["rules"] == [rule]


def test_zero_foreign_takes_a_zero_offer_to_a_foreign_unit():
    assert "zero offer" in refusals(phase({"France": "0 : A BUR - RUH"}))[0][2]
    assert not phase({"France": "0 : A BUR - RUH"}, rules=["ZERO_FOREIGN"])["rejected"]


def test_ebayola_and_public_totals():
    """France 9#6 for BUR-RUH against Germany's 4 for BUR-MUN... Germany owns
    A BUR: its 0 : H is beaten; France pays one more than Germany's 4: 5
    (its plateau 6 is kept: it pays 6); under PUBLIC_TOTALS the plateau
    does not count: 5."""
    sheets = {"France": "9#6 : A BUR - RUH", "Germany": "4 : A BUR - MUN"}
    assert phase(sheets)["spent"]["France"] == 9
    assert phase(sheets, rules=["EBAYOLA"])["spent"]["France"] == 6
    r = phase(sheets, rules=["EBAYOLA", "PUBLIC_TOTALS"])
    assert r["spent"]["France"] == 5 and r["chart"]["A BUR"]["paid"] == 5


def test_zerosum_counts_what_each_owner_was_paid():
    r = phase({"France": "7 : A BUR - RUH", "England": "2 : F LON - NTH"}, rules=["ZEROSUM"])
    assert r["profits"]["Germany"] == 7 and r["profits"]["England"] == 2 and r["profits"]["France"] == 0
    assert phase({"France": "7 : A BUR - RUH"})["profits"] == {}


def test_dummies_hold_on_a_tie_between_powers_and_have_no_list():
    """pages/Rules 3.5 (bestOffer): Austria is a dummy; France and Germany
    offer 5 each for different orders of A VIE: it holds, nobody pays."""
    r = phase({"France": "5 : A VIE - BOH", "Germany": "5 : A VIE - TYR"}, dummies=["austria"])
    assert r["orders"]["A VIE"] == "A VIE H" and r["dummy_holds"] == ["A VIE"]
    assert r["spent"]["France"] == r["spent"]["Germany"] == 0
    assert sorted(r["random_order"]["Austria"]) == POWERS  # "?" alone: every power drawn
    not_dummy = phase({"France": "5 : A VIE - BOH", "Germany": "5 : A VIE - TYR"})
    assert not_dummy["orders"]["A VIE"] == "A VIE - BOH"  # Austria's list puts France before Germany
    with pytest.raises(ResolveInputError, match="a dummy sends no offer sheet"):
        phase({"Austria": "3 : A VIE H"}, dummies=["Austria"])
    with pytest.raises(ResolveInputError, match="no Payola rule the judge plays"):
        phase({}, rules=["EXCHANGE"])
