"""Payola Tic-Tac-Toe's exact solver (judge/methods/pt3/solver.py), checked by
hand on small positions, by the symmetries of the board, by the seed's own
derivation step by step, and against an independent brute force of the bidding
game itself in whole units."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction as F
from functools import lru_cache

import pytest
from click.testing import CliRunner

from judge.cli import main
from judge.methods.pt3 import solver as S
from judge.methods.pt3.solver import INF, advise, b_value, combine


def every_position() -> list[str]:
    """Every board a game can reach (play stops at X's line or a full board)."""
    seen: set[str] = set()
    todo = [S.EMPTY_BOARD]
    while todo:
        board = todo.pop()
        if board in seen:
            continue
        seen.add(board)
        todo.extend(child for _, child in S.children(board))
    return sorted(seen)


ALL = every_position()


# --- boards, squares, infinity -------------------------------------------------

def test_squares_are_named_in_reading_order():
    assert [S.square_name(i) for i in range(9)] == ["A1", "A2", "A3", "B1", "B2", "B3", "C1", "C2", "C3"]
    assert S.square_index("b2") == S.square_index("5") == 4
    with pytest.raises(S.BoardError):
        S.square_index("D1")


@pytest.mark.parametrize("text", ["XX.......", "O........", "X.O......X", "X.Q......", "XOXOXOXOX."])
def test_impossible_boards_are_refused(text):
    with pytest.raises(S.BoardError):
        S.parse_board(text)


def test_boards_are_read_leniently():
    assert S.parse_board("x.o/.../...") == "X.O......"
    assert S.to_place("X.O......") == "X" and S.to_place("X........") == "O"


def test_infinity_is_above_every_fraction_and_equal_only_to_itself():
    assert F(10**9) < INF and INF > F(0) and not INF < F(3) and INF >= INF and INF == INF
    assert min(F(2), INF) == F(2) and max(F(2), INF) is INF
    assert INF != F(10**9) and str(INF) == "inf"


def test_combine_and_its_limits():
    assert combine(F(0), INF) == 1  # the lowest mixed node: A_X > A_O
    assert combine(F(1), INF) == 2  # 1 + b_1
    assert combine(F(0), F(1)) == F(1, 2)  # b_N / (1 + b_N)
    assert combine(F(1, 2), F(2)) == 1  # 2 (3/2) / 3
    assert combine(INF, INF) is INF and combine(F(0), F(0)) == 0 and combine(F(3), F(3)) == 3


# --- hand-checked positions ------------------------------------------------------

def test_finished_boards():
    assert b_value("XXXOO....") == 0  # X's line: X has won
    assert b_value("XOXXOOOXX") is INF  # full without X's line
    assert S.to_place("XXXOO....") is None


def test_one_move_from_the_end():
    # X O X / O X O / O X .  X places the 9th mark on C3: the diagonal A1 B2 C3.
    assert b_value("XOXOXOOX.") == 0
    # X O X / X O O / O X .  X on C3 makes no line: O has won.
    assert b_value("XOXXOOOX.") is INF


def test_two_children_the_lowest_mixed_node():
    # . . O / O X X / X O X, O to place on A1 or A2 (X then fills the other):
    # O on A1 leaves X A2 (no line: b = inf); O on A2 leaves X A1, the diagonal
    # A1 B2 C3 (b = 0). Whoever wins the bid decides: X wins iff A_X > A_O.
    board = "..OOXXXOX"
    assert [b_value(c) for _, c in S.children(board)] == [INF, 0]
    assert b_value(board) == 1
    a = advise(board, F(5), F(3))
    assert a.winner == "X" and a.square == 1  # X puts O on A2
    # O must not be able to match (D_X > A_O = 3); winning the bid wins, so all of A_X may go.
    assert (a.bid_range.lo, a.bid_range.hi, a.bid_range.lo_open, a.bid_range.hi_open) == (3, 5, True, False)
    assert a.bid == 4
    a = advise(board, F(3), F(3))  # a tie of balances is O's: O bids all of A_O = 3
    assert a.winner == "O" and a.square == 0 and a.bid == 3
    assert (a.bid_range.lo, a.bid_range.hi) == (3, 3)


def test_a_forced_x_win():
    # . . O / O X X / O X X, O to place: A1 gives X the column A2 B2 C2, A2
    # gives X the diagonal A1 B2 C3. X wins with nothing against anything.
    board = "..OOXXOXX"
    assert b_value(board) == 0
    a = advise(board, F(0), F(100))
    assert a.x_wins and a.bid == 0


def test_a_forced_o_win():
    # . . X / O O X / X X O, O to place: X's last mark on A1 or A2 makes no line.
    board = "..XOOXXXO"
    assert b_value(board) is INF
    a = advise(board, F(100), F(0))
    assert not a.x_wins and a.winner == "O" and a.bid == 0


def test_three_in_a_row_for_o_ends_nothing():
    # X X . / O O O / X . .: O's line B1 B2 B3 (the seed: O wins only by X
    # failing), so the game goes on: X placed on A3 makes the top row, and
    # anywhere else leaves two open lines (A3 and C2 or C3) for X's next mark.
    board = "XX.OOOX.."
    assert S.to_place(board) == "X" and not S.is_over(board)
    assert b_value(dict(S.children(board))[2]) == 0
    assert b_value(board) == 0


def test_the_empty_board():
    assert b_value(S.EMPTY_BOARD) == F(73017, 125800)
    a = advise(S.EMPTY_BOARD)
    assert a.to_place == "X" and a.b1 == F(2, 5) and S.square_name(a.x_square) == "B2"


# --- the symmetries ----------------------------------------------------------------

def test_the_symmetries_are_the_eight_of_the_square():
    perms = set(S.SYMMETRIES)
    assert len(perms) == 8
    compose = {tuple(p[q[i]] for i in range(9)) for p in perms for q in perms}
    assert compose == perms  # a group
    lines = {frozenset(line) for line in S.LINES}
    for p in perms:
        assert {frozenset(p.index(i) for i in line) for line in S.LINES} == lines


def test_b_is_invariant_under_the_eight_symmetries():
    plain = S.Solver(canonical=False)  # one entry per board: no symmetry assumed
    for board in ALL:
        images = {plain.b(S.transform(board, p)) for p in S.SYMMETRIES}
        assert len(images) == 1, board
        assert images == {b_value(board)}  # and the canonical memo agrees
    assert plain.nodes == len(ALL) == 5646
    canon = S.Solver()
    canon.b(S.EMPTY_BOARD)
    assert canon.nodes == len({S.canonical(b) for b in ALL}) == 794


# --- the seed's derivation, step by step ----------------------------------------------

def seed_bounds(b1, bN, ax, ao):
    """The seed's two inequalities on D_X: O outbids and reaches node N,
    A_X > b_N (A_O - D_X), so D_X > A_O - A_X / b_N; or X's bid wins and
    reaches node 1, A_X - D_X > b_1 A_O, so D_X < A_X - b_1 A_O."""
    lo = ao if bN is INF else ao - ax / bN
    return lo, ax - b1 * ao


def test_the_seed_two_children_derivation_step_by_step():
    # The shape of the seed's figures 2 and 3: a mother above two mixed
    # daughters of different b, themselves above the lowest mixed nodes
    # (b = 1) and leaves. Here: . . O / . . X / X X O, O to place.
    mother = "..O..XXXO"
    kids = dict(S.children(mother))
    bs = {sq: b_value(c) for sq, c in kids.items()}
    assert sorted(bs.values()) == [F(1, 2), F(1, 2), 2, 2]
    # The daughters, one level down: b = 1/2 from {0, 1}, b = 2 from {1, inf}.
    for sq, child in kids.items():
        grand = [b_value(g) for _, g in S.children(child)]
        assert combine(min(grand), max(grand)) == bs[sq]
        assert set(grand) in ({0, 1}, {1, INF})
        for _, g in S.children(child):
            if b_value(g) == 1:  # a lowest mixed node: its children are leaves
                assert {b_value(l) for _, l in S.children(g)} == {0, INF}
    b1, bN = F(1, 2), F(2)
    # The mother: the interval on D_X is not empty iff A_X (1 + 1/b_N) > A_O (1 + b_1),
    # i.e. A_X > b_N (1 + b_1) / (1 + b_N) A_O = 1 * A_O.
    assert bN * (1 + b1) / (1 + bN) == 1 == b_value(mother)
    node1 = next(c for sq, c in kids.items() if bs[sq] == b1)
    nodeN = next(c for sq, c in kids.items() if bs[sq] == bN)
    grid = [F(n, 4) for n in range(0, 41)]
    for ax in grid:
        for ao in grid:
            lo, hi = seed_bounds(b1, bN, ax, ao)
            assert (lo < hi) == (ax > ao) == S.x_wins(b_value(mother), ax, ao)
            # Inside the interval both outcomes of the bid keep X's win; at or
            # beyond an end one of them loses.
            for d in (lo, (lo + hi) / 2, hi):
                if not 0 <= d <= ax:
                    continue
                matched = d <= ao and not S.x_wins(b_value(nodeN), ax, ao - d)
                outbid = not S.x_wins(b_value(node1), ax - d, ao)
                assert (not matched and not outbid) == (lo < d < hi)
            if ax > ao:
                r = advise(mother, ax, ao).bid_range
                assert (r.lo, r.hi) == (max(lo, 0), hi)


# --- the brute force of the bidding game ----------------------------------------------
#
# Independent of the solver: its own lines and moves, and no b. Money in whole
# units (think cents); each season X chooses (bid D, square), O chooses (bid E,
# square), sealed; D > E: X pays D and chooses, else (a tie is O's) O pays E and
# chooses. X wins iff some (D, square) of X wins against every (E, square) of O.
# (A pure strategy always exists for one side: this is not a matrix game here.)

_LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


# The searches below meet the same boards millions of times: their pure
# helpers are remembered (the answers are the same, a minute less).
@lru_cache(maxsize=None)
def _x_line(board: str) -> bool:
    return any(all(board[i] == "X" for i in line) for line in _LINES)


@lru_cache(maxsize=None)
def _moves(board: str) -> dict[int, str]:
    mark = "X" if board.count("X") == board.count("O") else "O"
    return {i: board[:i] + mark + board[i + 1:] for i, c in enumerate(board) if c == "."}


@lru_cache(maxsize=None)
def brute(board: str, x: int, o: int) -> bool:
    if _x_line(board):
        return True
    moves = _moves(board)
    if not moves:
        return False
    # any(x_strategy_wins(board, x, o, d, sq) for d, sq), with "O bids E >= D
    # and loses wherever it places" gathered from O's top bid down, once for
    # every D rather than once per (D, square).
    if any(brute(m, x - d, o) for d in range(o + 1, x + 1) for m in moves.values()):
        return True  # D above all of O's money: O has no reply
    for d in range(o, -1, -1):
        if not all(brute(m, x, o - d) for m in moves.values()):
            return False  # O wins by bidding this; so against every lower D
        if d <= x and (d == 0 or any(brute(m, x - d, o) for m in moves.values())):
            return True
    return False


@lru_cache(maxsize=None)
def x_strategy_wins(board: str, x: int, o: int, d: int, sq: int) -> bool:
    moves = _moves(board)
    # O bids E < D (possible when D >= 1): X pays and places on sq.
    if d >= 1 and not brute(moves[sq], x - d, o):
        return False
    # O bids E >= D (up to all of o) and places anywhere.
    return all(brute(moves[so], x, o - e) for e in range(d, o + 1) for so in moves)


def o_strategy_wins(board: str, x: int, o: int, e: int, sq: int) -> bool:
    moves = _moves(board)
    return not brute(moves[sq], x, o - e) and not any(
        brute(moves[sx], x - d, o) for d in range(e + 1, x + 1) for sx in moves)


def sample(empties: int, every: int) -> list[str]:
    boards = [b for b in ALL if b.count(".") == empties and not _x_line(b)]
    return boards[::every]


@pytest.mark.parametrize("empties,every,top", [(2, 6, 12), (3, 25, 14), (4, 15, 14), (5, 30, 12)])
def test_the_solver_agrees_with_a_brute_force_of_the_bidding_game(empties, every, top):
    """Whole units favour O (a bid must beat the other's by a unit; a tie is
    O's), so: a brute-force X win is a solver X win everywhere (by induction:
    the brute force's winning D lies in the seed's interval); away from the
    threshold, A_X - b A_O >= 3 units, X wins the brute force too (the worst
    gap seen with up to 5 empty squares is 2 units). And the advice, played in
    whole units, wins the brute-force game: O's whenever O wins, X's away
    from the threshold."""
    boards = sample(empties, every)
    assert len(boards) >= 8
    checked = 0
    for board in boards:
        b = b_value(board)
        for x in range(top + 1):
            for o in range(top + 1):
                exact = S.x_wins(b, F(x), F(o))
                won = brute(board, x, o)
                if won:
                    assert exact, (board, x, o)
                far = b is INF or b == 0 or x - b * o >= 3 or x <= b * o
                if far:
                    assert won == exact, (board, x, o, b)
                    checked += 1
                a = advise(board, F(x), F(o), step=F(1))
                if a.bid is None or not far:
                    continue
                if a.winner == "X":
                    assert x_strategy_wins(board, x, o, int(a.bid), a.x_square), (board, x, o)
                else:
                    assert o_strategy_wins(board, x, o, int(a.bid), a.o_square), (board, x, o)
    assert checked > len(boards) * (top + 1) ** 2 // 2


# --- decimals -------------------------------------------------------------------------

def test_bids_are_whole_cents_inside_the_range():
    r = S.BidRange(F(1), F(2), True, True)
    assert S.step_bid(r, F(1, 100)) == F(3, 2)
    assert S.step_bid(S.BidRange(F(1), F(2), True, True), F(1)) is None  # (1, 2) holds no whole unit
    assert S.step_bid(S.BidRange(F(1, 300), F(2, 300), True, True), F(1, 100)) is None
    assert S.step_bid(S.BidRange(F(0), F(1, 100), True, False), F(1, 100)) == F(1, 100)
    assert S.decimal_text(F(13, 4)) == "3.25" and S.decimal_text(F(0)) == "0.00"


def test_advice_bids_keep_the_win_by_the_exact_condition():
    """The advised cent bid, whichever way the bid goes, leaves the winner
    winning by the exact condition at the child it reaches."""
    for board in ALL[::7]:
        if S.to_place(board) is None:
            continue
        kids = dict(S.children(board))
        for ax, ao in ((F(10), F(7)), (F("3.17"), F("5.02")), (F(1), F(4)), (F("12.5"), F(6))):
            a = advise(board, ax, ao)
            if a.bid is None:
                continue
            d = a.bid
            assert a.bid in a.bid_range and d * 100 == int(d * 100)
            if a.b1 == a.bN:
                assert d == 0
                continue
            if a.winner == "X":
                # O matches and places as it likes, or X's bid wins and X places.
                assert all(S.x_wins(b_value(c), ax, ao - d) for c in kids.values()) or d > ao
                assert d == 0 or S.x_wins(b_value(kids[a.x_square]), ax - d, ao)
            else:
                assert not S.x_wins(b_value(kids[a.o_square]), ax, ao - d)
                assert all(not S.x_wins(b_value(c), ax - e, ao) for c in kids.values()
                           for e in (d + F(1, 100), min(ax, d + 1), ax) if d < e <= ax)


# --- the command ------------------------------------------------------------------------

def test_cli_json():
    result = CliRunner().invoke(main, ["pt3", "solve", "--board", "..O..XXXO", "--x", "5", "--o", "3",
                                       "--format", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["board"] == "..O..XXXO" and out["to_place"] == "O"
    assert out["b"] == "1" and out["b_float"] == 1.0 and out["b1"] == "1/2" and out["bN"] == "2"
    assert out["x_wins"] is True and out["winner"] == "X"
    assert out["bid_range"] == ["1/2", "7/2"] and out["bid_range_open"] == [True, True]
    assert out["bid"] == "2.00" and out["square"] == "A1"


def test_cli_json_empty_board_without_balances():
    result = CliRunner().invoke(main, ["pt3", "solve", "--format", "json"])
    out = json.loads(result.output)
    assert out["board"] == "........." and out["b"] == "73017/125800" and "x_wins" not in out
    result = CliRunner().invoke(main, ["pt3", "solve", "--board", "XOXXOOOX.", "--format", "json"])
    assert json.loads(result.output)["b"] == "inf" and json.loads(result.output)["b_float"] is None


def test_cli_text():
    result = CliRunner().invoke(main, ["pt3", "solve", "--x", "10", "--o", "10"])
    assert result.exit_code == 0, result.output
    assert "b = 73017/125800" in result.output and "X wins with best play" in result.output
    assert "Advice: X bids 3.00 and takes B2" in result.output


@pytest.mark.parametrize("args", [["--x", "3"], ["--board", "XX......."], ["--x", "-1", "--o", "2"],
                                  ["--x", "abc", "--o", "2"]])
def test_cli_refuses_bad_input(args):
    result = CliRunner().invoke(main, ["pt3", "solve", *args])
    assert result.exit_code == 2 and "Error" in result.output


def test_judge_help_does_not_load_the_solver():
    # (It loads judge/methods/pt3/cli.py, for the one-line summary, as with every lazy
    # command, and the methods' light packages for their CLI: not the solver.)
    probe = ("import sys\nfrom judge.cli import main\n"
             "try:\n    main(['--help'], prog_name='judge')\nexcept SystemExit:\n    pass\n"
             "print('PT3', 'judge.methods.pt3.solver' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run.stdout.strip().endswith("PT3 False")
