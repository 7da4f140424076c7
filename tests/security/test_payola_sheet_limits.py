"""Issue 24's attack: seven throwaway players each mail a worst-case Payola
sheet (499 lines of +-joined NN*NNNN#NNN offers); PROCESS then ran 24-35 s
and ~600 MB inside the mail transaction while every other mail waited.
A line and a sheet now have limits, checked before the parser
(docs/payola.md, "Limits"; bench/bench_payola.py --worst)."""

from __future__ import annotations

from judge.methods.payola.bribes import MAX_SHEET_BRIBES, check_sheet
from tests.test_payola_rules import BOARD, refused, taken


def test_the_limits_of_a_line_and_a_sheet():
    """docs/payola.md, "Limits": at most 8 amounts joined by + on a line, at
    most MAX_SHEET_BRIBES bribes a sheet; the lines past it are refused
    before any map check or pass."""
    nine = "+".join(["99*9999#999"] * 9) + " : A PAR H"
    reason = refused("France", nine)
    assert "at most 8 amounts joined by +" in reason and f"column {len('+'.join(['99*9999#999'] * 8)) + 1}:" in reason
    # Refused before the parser reads the line (issue 24's lines of 83 pieces), whatever follows.
    assert "at most 8 amounts" in refused("France", "+".join(["1"] * 83) + " : no order at all ((")
    assert taken("France", "4 : A PAR - PIC % a+b+c+d+e+f+g+h+i").lines  # a comment's + are no pieces
    eight = "+".join(["99*9999#999"] * 8) + " : A PAR - PIC | - BUR | H"
    sheet = "\n".join([eight] * 60)
    got = check_sheet(variant="standard", units=BOARD, power="France", text=sheet)
    per_line = 8 * 3
    assert len(got.lines) == MAX_SHEET_BRIBES // per_line
    assert len(got.rejected) == 1 and "The lines from here on are not read" in got.rejected[0].reason


def test_a_sheet_of_garbage_costs_little_to_refuse():
    """Issue 24: what a line costs to read is bounded before the parser (at
    most 16 alternatives, counted like the + pieces), DPjudge's forms are
    looked for only on a short line (48 words), and a sheet is read no
    further after 50 refused lines."""
    from judge.methods.payola.bribes import MAX_REFUSED
    from judge.methods.payola.orders import dpjudge_form

    long = "4 : A PAR - BUR" + " | - GAS" * 16
    assert "at most 16 orders in an offer" in refused("France", long)
    assert taken("France", "4 : A PAR - BUR" + " | - GAS | - PIC | H | S A MAR - BUR").lines
    assert dpjudge_form("standard", "4 : A PAR S A BUR H") == "4 : A PAR S A BUR"
    assert dpjudge_form("standard", "4 : A PAR S A BUR H" + " | SUPPORTS ARMY MARSEILLES" * 11) is None  # 50 words
    sheet = "\n".join(f"{k} : A PAR - NOWHERE" for k in range(1, 200)) + "\n4 : A PAR - PIC"
    got = check_sheet(variant="standard", units=BOARD, power="France", text=sheet)
    assert len(got.rejected) == MAX_REFUSED + 1 and not got.lines
    assert got.rejected[-1].line == MAX_REFUSED + 1 and "the lines from here on are not read" in got.rejected[-1].reason
