"""The exact solver of Payola Tic-Tac-Toe (PT3), as pure functions.

Rules and derivation: ../shared/seeds/payola-bidding.html (Frank Mayer,
"Overheard at the Ministry of Finance II"). Nothing here does I/O; all the
arithmetic is `fractions.Fraction`, with infinity as the explicit `INF`.

Positions. A board is 9 characters `X`, `O`, `.` in reading order (squares
1..9, also named `A1`..`C3`: rows A, B, C from top to bottom, columns 1, 2, 3
from left to right, so A1 = 1, A3 = 3, B1 = 4, C3 = 9). The mark placed next
follows from the counts: X when both counts are equal, else O. A board is over
when X has three in a row (X wins) or when it is full without that (O wins).
Three O in a row end nothing: the seed's O wins only by X failing, so play goes
on (X can still make a line elsewhere); the recursion finds such positions to be
O's anyway when X has no line left.

The victory condition. At every position X wins with best play of both sides
iff A_X > b * A_O, where b is propagated from the leaves:

- a board X has won: b = 0 (X has won whatever the balances);
- a full board without X's line: b = INF (O has won whatever the balances);
- a mother whose children have smallest b_1 and largest b_N:

      b = b_N (1 + b_1) / (1 + b_N)

  (the seed's two-children derivation: X bids D_X for the child of b_1, O may
  match it to reach the child of b_N; X keeps the win in both cases iff
  A_O - A_X / b_N < D_X < A_X - b_1 A_O, an interval that is not empty iff
  A_X (1 + 1/b_N) > A_O (1 + b_1), which is the formula). Its limits:

      b_1 = b_N             ->  b = b_N (one child, or all alike; also INF, INF)
      b_N = INF, b_1 finite ->  b = 1 + b_1   (X must outbid all of A_O: D_X > A_O)
      b_1 = 0,   b_N finite ->  b = b_N / (1 + b_N)   (the formula itself)
      b_1 = 0,   b_N = INF  ->  b = 1   (the lowest mixed node: A_X > A_O)

  The children between b_1 and b_N do not matter (the seed's argument: neither
  side can force them).

With b = 0 X wins even with nothing (every line of play ends in X's line); with
b = INF O wins whatever the balances; otherwise X wins iff A_X > b A_O exactly
(a tie of the condition is O's, as a tie of bids is).

Bids that keep the win. X (when X wins) bids D_X with

      A_O - A_X / b_N < D_X < A_X - b_1 A_O,

the lower end replaced by D_X >= 0 when it is negative (O's matching is then
harmless) and by D_X > A_O when b_N = INF (O must not be able to match); the
upper end D_X <= A_X when b_1 = 0 (winning the bid wins the game). O's bounds
are the symmetric ones, derived the same way (the seed gives only X's): O (when
O wins) bids D_O with

      A_X - b_1 A_O <= D_O <= A_O - A_X / b_N,

both ends closed because a tie of bids is O's and so is a tie of the condition;
the lower end is D_O >= 0 when negative, the upper end D_O <= A_O when
b_N = INF. A bid below the range loses to an opponent who bids just above it
and takes the square best for them; a bid above it leaves too little money
for the position the winning bid reaches.

Decimals. The game's bids are decimals with 2 places (`step` = 1/100): the
advice's `bid` is the multiple of `step` inside the exact range nearest its
midpoint (the lower one when two are as near), keeping slack on both sides,
whether the bid wins or is matched; None when no multiple of `step` lies
inside (the range is narrower than a cent); 0 when all the children have the
same b (who places the mark changes nothing then). The square is the child of b_1
for X and of b_N for O, the lowest square number among equals. The exact
analysis is the seed's continuous one; with whole cents the threshold moves by
at most a few cents (tests/test_pt3_solver.py checks the winner against a
brute force of the game in whole units away from the threshold).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Union

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
EMPTY_BOARD = "." * 9
ROWS = "ABC"


class BoardError(ValueError):
    """A text that is not a PT3 position."""


class _Infinity:
    """The b of a position O has won: above every Fraction, equal only to itself."""

    _instance: "_Infinity | None" = None

    def __new__(cls) -> "_Infinity":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "INF"

    def __str__(self) -> str:
        return "inf"

    def __eq__(self, other: object) -> bool:
        return other is self

    def __hash__(self) -> int:
        return hash("pt3-infinity")

    def __lt__(self, other: object) -> bool:
        return False

    def __le__(self, other: object) -> bool:
        return other is self

    def __gt__(self, other: object) -> bool:
        return other is not self

    def __ge__(self, other: object) -> bool:
        return True

    def __reduce__(self):  # one instance, also after a copy or a pickle
        return (_Infinity, ())


INF = _Infinity()
B = Union[Fraction, _Infinity]


# --- squares and boards ------------------------------------------------------

def square_name(index: int) -> str:
    """0-based index -> `A1`..`C3`."""
    return f"{ROWS[index // 3]}{index % 3 + 1}"


def square_index(text: str) -> int:
    """`A1`..`C3` (any case) or `1`..`9` -> 0-based index."""
    t = text.strip().upper()
    if len(t) == 1 and t in "123456789":
        return int(t) - 1
    if len(t) == 2 and t[0] in ROWS and t[1] in "123":
        return ROWS.index(t[0]) * 3 + int(t[1]) - 1
    raise BoardError(f"{text!r} is not a square: A1..C3 or 1..9")


def parse_board(text: str) -> str:
    """A board from text: 9 marks `X`, `O`, `.` (also `x`, `o`, `-`, `_`), in
    reading order; `/`, spaces and newlines between them are ignored. The counts
    must be those of a game (X first, in turn)."""
    marks = [c for c in text if c not in "/ \t\r\n|"]
    table = {"X": "X", "x": "X", "O": "O", "o": "O", "0": "O", ".": ".", "-": ".", "_": "."}
    if len(marks) != 9 or any(c not in table for c in marks):
        raise BoardError(f"{text!r} is not a board: 9 marks X, O or . in reading order")
    board = "".join(table[c] for c in marks)
    nx, no = board.count("X"), board.count("O")
    if nx not in (no, no + 1):
        raise BoardError(f"{board}: X places first and the marks alternate, so X count = O count or O count + 1")
    return board


def x_has_line(board: str) -> bool:
    return any(board[i] == board[j] == board[k] == "X" for i, j, k in LINES)


def is_over(board: str) -> bool:
    return x_has_line(board) or "." not in board


def to_place(board: str) -> str | None:
    """The mark placed next, or None when the game is over."""
    if is_over(board):
        return None
    return "X" if board.count("X") == board.count("O") else "O"


def children(board: str) -> list[tuple[int, str]]:
    """(square index, board after the next mark there), squares in order."""
    mark = to_place(board)
    if mark is None:
        return []
    return [(i, board[:i] + mark + board[i + 1:]) for i in range(9) if board[i] == "."]


# The 8 symmetries of the square as permutations: new[i] = old[perm[i]].
def _perm(f) -> tuple[int, ...]:
    return tuple(f(i // 3, i % 3) for i in range(9))


SYMMETRIES: tuple[tuple[int, ...], ...] = (
    _perm(lambda r, c: 3 * r + c),            # identity
    _perm(lambda r, c: 3 * (2 - c) + r),      # rotation by 90 degrees
    _perm(lambda r, c: 3 * (2 - r) + 2 - c),  # 180
    _perm(lambda r, c: 3 * c + 2 - r),        # 270
    _perm(lambda r, c: 3 * r + 2 - c),        # mirror left-right
    _perm(lambda r, c: 3 * (2 - r) + c),      # mirror top-bottom
    _perm(lambda r, c: 3 * c + r),            # main diagonal
    _perm(lambda r, c: 3 * (2 - c) + 2 - r),  # anti-diagonal
)


def transform(board: str, perm: tuple[int, ...]) -> str:
    return "".join(board[p] for p in perm)


def canonical(board: str) -> str:
    """The least of the 8 images of the board (its class under the symmetries)."""
    return min(transform(board, p) for p in SYMMETRIES)


# --- b ------------------------------------------------------------------------

def combine(b1: B, bN: B) -> B:
    """The mother's b from its children's smallest b1 and largest bN (the
    seed's formula and its limits, see the module's docstring)."""
    if b1 == bN:
        return b1
    if bN is INF:
        return 1 + b1
    return bN * (1 + b1) / (1 + bN)


class Solver:
    """b for every position, memoised. `canonical`: one entry per class of the
    8 symmetries (the default); False: one per board, to check the symmetry."""

    def __init__(self, canonical: bool = True) -> None:
        self.canonical = canonical
        self.memo: dict[str, B] = {}

    def b(self, board: str) -> B:
        key = canonical(board) if self.canonical else board
        value = self.memo.get(key)
        if value is None:
            value = self._compute(key)
            self.memo[key] = value
        return value

    def _compute(self, board: str) -> B:
        if x_has_line(board):
            return Fraction(0)
        if "." not in board:
            return INF
        bs = [self.b(child) for _, child in children(board)]
        return combine(min(bs), max(bs))

    @property
    def nodes(self) -> int:
        """Distinct positions solved (classes, when canonical)."""
        return len(self.memo)


_DEFAULT = Solver()


def b_value(board: str) -> B:
    """b of a (parsed) board, from a module-wide memo."""
    return _DEFAULT.b(board)


def x_wins(b: B, ax: Fraction, ao: Fraction) -> bool:
    """Does X win with best play from a position of `b` with balances ax, ao?"""
    if b is INF:
        return False
    if b == 0:
        return True
    return ax > b * ao


def format_fraction(value: B) -> str:
    """"p/q" (or "p" when whole), "inf" for INF."""
    if value is INF:
        return "inf"
    return str(value)


def as_float(value: B) -> float:
    return float("inf") if value is INF else float(value)


def parse_amount(text: str) -> Fraction:
    """A balance or bid: a decimal ("12.5") or a fraction ("25/2"), not negative."""
    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError) as err:
        raise BoardError(f"{text!r} is not an amount: a decimal such as 12.50") from err
    if value < 0:
        raise BoardError(f"{text!r}: amounts are not negative")
    return value


# --- advice -------------------------------------------------------------------

@dataclass(frozen=True)
class BidRange:
    """Bids lo..hi (exact), each end open or closed."""

    lo: Fraction
    hi: Fraction
    lo_open: bool
    hi_open: bool

    def __contains__(self, d: Fraction) -> bool:
        above = d > self.lo if self.lo_open else d >= self.lo
        below = d < self.hi if self.hi_open else d <= self.hi
        return above and below

    def text(self) -> str:
        return f"{'(' if self.lo_open else '['}{self.lo}, {self.hi}{')' if self.hi_open else ']'}"


@dataclass(frozen=True)
class Advice:
    board: str
    to_place: str | None  # None: the game is over
    b: B
    b1: B | None  # smallest and largest b of the children (None when over)
    bN: B | None
    x_square: int | None  # the square X takes on winning the bid (0-based)
    o_square: int | None
    ax: Fraction | None = None
    ao: Fraction | None = None
    x_wins: bool | None = None  # with balances only
    winner: str | None = None
    bid_range: BidRange | None = None  # the winner's, when bidding matters
    bid: Fraction | None = None  # a multiple of step inside bid_range

    @property
    def square(self) -> int | None:
        """The square the winning side takes (X's without balances)."""
        if self.winner == "O":
            return self.o_square
        return self.x_square


def x_range(b1: B, bN: B, ax: Fraction, ao: Fraction) -> BidRange:
    """X's bids that keep X's win (call only when X wins)."""
    if bN is INF:
        lo, lo_open = ao, True
    elif bN == 0:
        lo, lo_open = Fraction(0), False
    else:
        lo, lo_open = ao - ax / bN, True
    if lo < 0:
        lo, lo_open = Fraction(0), False
    if b1 == 0:
        hi, hi_open = ax, False
    else:
        hi, hi_open = ax - b1 * ao, True
    return BidRange(lo, hi, lo_open, hi_open)


def o_range(b1: B, bN: B, ax: Fraction, ao: Fraction) -> BidRange:
    """O's bids that keep O's win (call only when O wins)."""
    lo = Fraction(0) if b1 is INF else ax - b1 * ao
    hi = ao if bN is INF else ao - ax / bN
    return BidRange(max(lo, Fraction(0)), min(hi, ao), False, False)


def step_bid(r: BidRange, step: Fraction) -> Fraction | None:
    """The multiple of `step` inside r nearest its midpoint (the lower of two
    as near), or None when r holds none."""
    mid = (r.lo + r.hi) / 2
    below = (mid // step) * step
    candidates = sorted({below, below + step, below - step, below + 2 * step}, key=lambda d: (abs(d - mid), d))
    for d in candidates:
        if d in r:
            return d
    # The range is narrow: walk its multiples from the bottom (there are at most two).
    d = -(-r.lo // step) * step
    while d <= r.hi:
        if d in r:
            return d
        d += step
    return None


def _best_square(kids: list[tuple[int, str]], bs: list[B], want_min: bool) -> int:
    target = min(bs) if want_min else max(bs)
    return next(i for (i, _), b in zip(kids, bs) if b == target)


def advise(board: str, ax: Fraction | None = None, ao: Fraction | None = None,
           step: Fraction = Fraction(1, 100), solver: Solver | None = None) -> Advice:
    """Everything the solver says about a position, and with both balances,
    who wins, the winner's bids and square."""
    solver = solver or _DEFAULT
    b = solver.b(board)
    mark = to_place(board)
    if mark is None:
        advice = Advice(board, None, b, None, None, None, None)
    else:
        kids = children(board)
        bs = [solver.b(child) for _, child in kids]
        advice = Advice(board, mark, b, min(bs), max(bs),
                        _best_square(kids, bs, True), _best_square(kids, bs, False))
    if ax is None or ao is None:
        return advice
    wins = x_wins(b, ax, ao)
    bid_range = bid = None
    if mark is not None:
        bid_range = (x_range if wins else o_range)(advice.b1, advice.bN, ax, ao)
        # All children alike: the bid changes nothing but the money; spend none.
        bid = Fraction(0) if advice.b1 == advice.bN else step_bid(bid_range, step)
    return Advice(advice.board, mark, b, advice.b1, advice.bN, advice.x_square, advice.o_square,
                  ax, ao, wins, "X" if wins else "O", bid_range, bid)


def as_json(advice: Advice) -> dict:
    """The CLI's JSON: fractions as "p/q" strings (whole numbers as "p"),
    squares as A1..C3, the bid as a decimal with 2 places; "b_float" is null
    when b is "inf" (JSON has no infinity)."""
    def sq(i: int | None) -> str | None:
        return None if i is None else square_name(i)

    out: dict = {
        "board": advice.board,
        "to_place": advice.to_place,
        "b": format_fraction(advice.b),
        "b_float": None if advice.b is INF else float(advice.b),
        "b1": None if advice.b1 is None else format_fraction(advice.b1),
        "bN": None if advice.bN is None else format_fraction(advice.bN),
        "x_square": sq(advice.x_square),
        "o_square": sq(advice.o_square),
    }
    if advice.x_wins is not None:
        r = advice.bid_range
        out.update({
            "x": str(advice.ax),
            "o": str(advice.ao),
            "x_wins": advice.x_wins,
            "winner": advice.winner,
            "bid_range": None if r is None else [str(r.lo), str(r.hi)],
            "bid_range_open": None if r is None else [r.lo_open, r.hi_open],
            "bid_range_float": None if r is None else [float(r.lo), float(r.hi)],
            "bid": None if advice.bid is None else decimal_text(advice.bid),
            "square": sq(advice.square) if advice.to_place else None,
        })
    return out


def decimal_text(value: Fraction, places: int = 2) -> str:
    """A multiple of 10**-places as a decimal with that many places."""
    scaled = value * 10 ** places
    if scaled.denominator != 1:
        return str(value)
    n = scaled.numerator
    sign = "-" if n < 0 else ""
    n = abs(n)
    return f"{sign}{n // 10 ** places}.{n % 10 ** places:0{places}d}"
