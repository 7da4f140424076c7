"""The wrap-around rectangular board: seat letters and neighbours.

Seats are lettered in reading order (left to right, top to bottom) so that
the last seat is Z: 4 rows of 3 are O-Z (F11), 3 rows of 3 are R-Z (F8). The
board is a torus: the seat left of a row's first seat is that row's last,
the seat above the top row is in the bottom row.

Both sides must be at least 3. On a side of 2 a seat's two neighbours along
that side are one and the same seat, on a side of 1 they are the seat itself,
so a seat would have fewer than the "exactly 4 other seats" the seed promises
and the Tokens of Life would no longer add up (always 6 in F11, 5 in F8).
Such boards are refused. 3 x 3 is therefore the smallest board, and at most
26 seats fit the alphabet.
"""

from __future__ import annotations

from dataclasses import dataclass
from string import ascii_uppercase

MIN_SIDE = 3
MAX_SEATS = len(ascii_uppercase)


class BoardError(ValueError):
    """A board size the game cannot be played on."""


@dataclass(frozen=True)
class Board:
    rows: int
    cols: int

    def __post_init__(self) -> None:
        for label, v in (("rows", self.rows), ("cols", self.cols)):
            if not isinstance(v, int) or isinstance(v, bool):
                raise BoardError(f"{label} must be a whole number, not {v!r}")
            if v < MIN_SIDE:
                raise BoardError(
                    f"{label} = {v}: each side needs at least {MIN_SIDE} seats, or a seat's neighbours "
                    "along that side are the same seat (or itself) and it has fewer than 4")
        if self.rows * self.cols > MAX_SEATS:
            raise BoardError(f"{self.rows} x {self.cols} = {self.rows * self.cols} seats; at most {MAX_SEATS} "
                             "have a letter")

    @property
    def size(self) -> int:
        return self.rows * self.cols

    @property
    def seats(self) -> tuple[str, ...]:
        """The letters in reading order, the last one Z."""
        return tuple(ascii_uppercase[MAX_SEATS - self.size:])

    def __contains__(self, seat: object) -> bool:
        return isinstance(seat, str) and seat in self.seats

    def index(self, seat: str) -> int:
        try:
            return self.seats.index(seat)
        except ValueError:
            raise KeyError(f"{seat!r} is no seat of this board ({self.describe()})") from None

    def position(self, seat: str) -> tuple[int, int]:
        """(row, column), both from 0, the top left seat (0, 0)."""
        return divmod(self.index(seat), self.cols)

    def at(self, row: int, col: int) -> str:
        """The seat at (row, col), wrapping around both ways."""
        return self.seats[(row % self.rows) * self.cols + col % self.cols]

    def neighbours(self, seat: str) -> tuple[str, str, str, str]:
        """The four seats sharing an edge with `seat`: above, right, below,
        left (clockwise from the top). Four different seats, never `seat`."""
        r, c = self.position(seat)
        return (self.at(r - 1, c), self.at(r, c + 1), self.at(r + 1, c), self.at(r, c - 1))

    def grid(self) -> tuple[tuple[str, ...], ...]:
        """The seats row by row, as the board is drawn."""
        s = self.seats
        return tuple(s[r * self.cols:(r + 1) * self.cols] for r in range(self.rows))

    def describe(self) -> str:
        s = self.seats
        return f"{self.rows} rows of {self.cols}, seats {s[0]}-{s[-1]}"
