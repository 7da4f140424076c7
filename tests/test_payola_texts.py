"""What Payola's players and GM read (issue 26, point 14, and the texts of
the rules): the results mails rendered from the engine's own reports
(judge/methods/payola/game.py), `judge resolve --format text|bbcode`, the
reply lines of templates/payola/words.j2, read the way a player reads them."""

from __future__ import annotations

from datetime import datetime, timezone

from judge.methods.payola import game as G
from judge.methods.payola.bribes import check_sheet
from judge.methods.payola.orders import initial_units
from judge.methods.payola.replay import resolve_file
from judge.methods.payola.rules import rules_from
from judge.rng import DrawStream
from judge.templating import render, render_mail

DEADLINE = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)


class Game:
    name = "pay"
    params: dict = {}


def mail(report, state, power=None, template=None, **more):
    template = template or ("results/payola/player.txt.j2" if power else "results/payola/master.txt.j2")
    lines = [x for x in state.ledger.lines_of(power) if x.phase in (report["phase"], report["next"])] if power else []
    context = dict(report=report, played=report["phase"], next_phase=G.phase(state), state=state, players={},
                   deadline=DEADLINE, svg_name="pay.svg", reveal=None, winner=None)
    if power is None:
        more.setdefault("observer", False)
        more.setdefault("bbcode", render("results/payola/forum.bbcode.j2", game=Game, **context))
    return render_mail(template, game=Game, docs_url="https://judge.example/docs", power=power, lines=lines,
                       **context, **more)[1]


def spring(rules=(), sheets=None):
    state = G.new_game("standard", rules=rules_from({"rules": list(rules)}))
    for power, text in (sheets or {"France": "4 : A PAR - BUR\n3 : F LON - NTH\nnonsense here",
                                    "England": "2 : F LON - ENG"}).items():
        state = G.with_sheet(state, power, text)
    return G.movement(state, DrawStream(b"texts"))


def test_the_statement_as_dpjudge_sends_it():
    """sendLedgers: the power's units as paid and ordered, the bribes
    accepted, the sheet, the lines the deadline did not take (with their
    line and reason), the previous balance, the cost and the new one."""
    state, report = spring()
    text = mail(report, state, "France")
    units = text[text.index("Your units were paid and ordered as follows:\n"):text.index("Your accepted bribes")]
    assert units.splitlines()[1:] == ["     0 AgP  A MAR H", "     4 AgP  A PAR - BUR", "     0 AgP  F BRE H"]
    assert "Your accepted bribes:\n" in text and "     3 AgP  F LON - NTH\n" in text
    assert "Lines of it not taken at the deadline (the rest stood):\n  line 3: nonsense here\n    column" in text
    assert "Previous balance:                48 AgP" in text and "New balance:                     41 AgP" in text


def test_hide_cost_hide_offers_and_public_totals():
    """pages/Rules 3.4: HIDE_COST leaves out what each unit was paid;
    HIDE_OFFERS leaves only the units' orders, their totals and the new
    balance; PUBLIC_TOTALS shows every unit's total to all."""
    state, report = spring(["HIDE_COST"])
    text = mail(report, state, "France")
    assert "Your units were ordered as follows:\n  A MAR H\n  A PAR - BUR\n" in text and "Your accepted bribes" in text
    state, report = spring(["HIDE_OFFERS"])
    text = mail(report, state, "France")
    assert "Your units were paid and ordered as follows:" in text
    assert "Your accepted bribes" not in text and "Your offer sheet" not in text and "Previous balance" not in text
    assert "New balance:                     41 AgP" in text
    state, report = spring(["PUBLIC_TOTALS"])
    assert "A PAR - BUR  (bounce)  (4 AgP paid)" not in mail(report, state, "England")  # PAR moved: no bounce
    assert "  A PAR - BUR  (4 AgP paid)\n" in mail(report, state, "England")
    assert "(4 AgP paid)" not in mail(*reversed(spring()), "England")


def test_zerosum_tells_the_owner_what_its_units_earned():
    state, report = spring(["ZEROSUM"])
    # England's F LON obeyed France's 3 for NTH (England's 2 for ENG lost): 3 AgP are England's.
    assert "Net income for your units:        3 AgP (credited at the year's end)" in mail(report, state, "England")


def test_builds_read_plainly_and_waived_builds_are_said():
    """Issue 26: a build printed as "A BUD B  ()", and a waived build was not
    mentioned at all."""
    state = G.new_game("standard")
    state, _ = G.adjudicate(state, {"A PAR": "A PAR - BUR", "A MAR": "A MAR - SPA", "A VIE": "A VIE - GAL",
                                    "A BUD": "A BUD - SER"})
    state, _ = G.adjudicate(state, {"A BUR": "A BUR - BEL", "A SER": "A SER H"})
    assert G.phase(state) == "W1901A"
    state = G.with_orders(state, "France", ["A PAR B"])
    state, report = G.adjudicate(state)
    text = mail(report, state)
    assert "France:\n  A PAR B\n" in text and "()" not in text
    assert "France waived 1 build." in text and "Austria waived 1 build." in text
    assert "France waived 1 build." in render("results/payola/forum.bbcode.j2", game=Game, report=report,
                                              played="W1901A", next_phase="S1902M")


def test_the_forum_post_ends_before_the_separator():
    """Issue 26: the BBCode joined "Next: F1901M." onto the separator line."""
    state, report = spring()
    text = mail(report, state)
    assert "Next: F1901M.\n----------" in text


def test_an_anonymous_transfer_names_nobody():
    """ANON_TRANSFER: "the recipient of the transfer is not told from whom
    the money was sent" (the template reads the game's rules)."""
    class Anonymous(Game):
        params = {"rules": ["ANON_TRANSFER"]}

    subject, body = render_mail("payola/transfer.txt.j2", game=Anonymous, docs_url="", amount=5, giver="France",
                                power="Germany", balance=53)
    assert "France" not in subject + body and body.startswith("Someone transferred 5 AgP")
    subject, body = render_mail("payola/transfer.txt.j2", game=Game, docs_url="", amount=5, giver="France",
                                power="Germany", balance=53)
    assert subject.endswith("5 AgP from France")


def test_the_offline_text_names_who_paid_not_the_owner_beside_the_money():
    """Issue 26: `judge resolve --format text` showed the unit's owner next to
    an amount another power paid (A PAR - BUR  France  4 AgP, paid by Germany)."""
    r = resolve_file({"method": "payola", "phase": "S1901M", "balances": {"Germany": 10},
                      "sheets": {"Germany": "4 : A PAR - BUR"}}, b"\x01")
    text = render("results/payola/offline.txt.j2", result=r)
    line = next(x for x in text.splitlines() if "A PAR - BUR" in x)
    assert "(France's)" in line and "4 AgP by Germany 4" in line


def test_a_refused_line_is_named_by_its_line_in_the_mail():
    """Issue 26: a refused offer line was reported as "line 1" when it was
    the mail's 7th (each line is checked alone): check_sheet takes the
    line's number in the mail."""
    got = check_sheet(variant="standard", units=initial_units("standard"), power="France",
                      text="4 : A PAR BURR", first_line=7)
    assert got.rejected[0].line == 7 and got.rejected[0].reason.startswith("line 7: 4 : A PAR BURR\n")


def test_a_mail_of_offers_says_what_a_sheet_is_once():
    """Issue 26: every accepted line repeated ~30 words; the first says it,
    the others give their number (and sheet_summary says the whole sheet
    once, with its total against the balance)."""
    from judge.methods.payola.live import _w

    first = _w("offer_taken", count=1, phase="S1901M", deadline=DEADLINE, savings=0)
    assert "replaces your previous sheet" in first
    assert _w("offer_taken", count=7, phase="S1901M", deadline=DEADLINE, savings=0) == "offer 7"
    summary = _w("sheet_summary", phase="S1901M", lines=7, offered=60, savings=5, balance=48)
    assert "7 lines, offers of up to 60 AgP and 5 AgP kept back, against your balance of 48 AgP" in summary
    assert "overspending" in summary
