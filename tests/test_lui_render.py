"""The Lowest Unique Integer board as text, BBCode and PNG
(judge/methods/lui/render.py), from real games played on the engine."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest

from judge.methods.lui.engine import board_view
from judge.methods.lui.render import (
    CELL_H,
    CELL_W,
    GAP,
    MARGIN,
    PALETTE,
    board_bbcode,
    board_png,
    board_text,
    contrast,
    cut,
    drawn,
    ink_on,
    pad,
    seat_box,
    text_colour,
    text_width,
    tint,
    _rgb,
)
from tests.lui_helpers import Game

Image = pytest.importorskip("PIL.Image")

ROOT = Path(__file__).resolve().parent.parent
ELEVEN = ["reds", "crawron", "ann", "bob", "zoe", "kim", "evil", "long", "eve", "jose", "sakura"]
NAMES = {
    "reds": "Reds Toad",
    "evil": "[b]evil[/b]",
    "long": "A very very long display name that no column can hold",
    "jose": "José",
    "sakura": "中村さくら",  # East Asian wide: two columns a character
    "zoe": "Zoe\u0301",  # a combining accent: no column of its own
}


def f11_game() -> Game:
    """An F11 game at hour 30: O, Z, S, W, Q, X won; R, U, Y under standing
    bids (timers from 51h00 to 53h00); P, T, V open."""
    g = Game("F11", players=ELEVEN, prizes={"Z": (3, 1), "O": (2, 0), "S": (1, 2)})
    g.ok("reds", "BID Z 5", -20)
    g.ok("ann", "BID O 7", -10)
    g.tick(0)
    g.ok("crawron", "BID Z 6", 0.5)  # outbids reds; wins Z at 24h30
    g.ok("bob", "BID S 1", 2)
    g.ok("sakura", "BID Q 3", 4.25)
    g.ok("evil", "BID W 12", 5)
    g.ok("long", "BID X 9", 6)
    g.tick(26)
    g.ok("eve", "BID Y 4", 27)
    g.ok("jose", "BID U 8", 28.1)
    g.ok("kim", "BID R 10", 29)
    g.tick(30)
    return g


def f8_game() -> Game:
    """An F8 game at hour 24h30: V won by a; R and S under standing bids."""
    g = Game("F8", players=list("abcdefgh"), prizes={"V": (2, 1)})
    g.ok("a", "BID V 1", 0.2)
    g.ok("b", "BID R 3", 1)
    g.ok("c", "BID S 2", 20)
    g.tick(24.5)
    return g


@pytest.fixture(scope="module")
def f11():
    return board_view(f11_game().state)


@pytest.fixture(scope="module")
def f8():
    return board_view(f8_game().state)


def cells(view):
    return {c.seat: c for row in view.rows for c in row}


# --------------------------------------------------------------------------
# The text table
# --------------------------------------------------------------------------

def grid_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("+", "|"))]


def test_the_known_state_is_what_the_renderings_are_checked_against(f11):
    c = cells(f11)
    assert {s for s, v in c.items() if v.won} == {"O", "Q", "S", "W", "X", "Z"}
    assert {s for s, v in c.items() if v.standing} == {"R", "U", "Y"}
    assert (c["Z"].won.player, c["Z"].won.amount, c["Z"].won.at) == ("crawron", 6, 24.5)
    assert (c["R"].standing.player, c["R"].standing.amount, c["R"].standing.ends_at) == ("kim", 10, 53)


def test_text_table_has_the_seats_in_their_grid_positions(f11):
    text = board_text(f11, NAMES)
    lines = grid_lines(text)
    # 4 rows of 3 seats: a rule, 3 lines per row, a rule after each row
    assert len(lines) == 1 + 4 * 4
    letters = [re.findall(r"\| ([O-Z]) ", line) for line in lines[1::4]]
    assert letters == [["O", "P", "Q"], ["R", "S", "T"], ["U", "V", "W"], ["X", "Y", "Z"]]


def test_text_table_stays_aligned_with_long_wide_and_combining_names(f11):
    lines = grid_lines(board_text(f11, NAMES))
    widths = {text_width(line) for line in lines}
    assert widths == {70}, widths  # every line of the grid the same width, within a mail line
    # the column separators sit at the same display columns on every line
    def bars(line):
        out, col = [], 0
        for ch in line:
            if ch in "|+":
                out.append(col)
            col += text_width(ch)
        return out
    assert len({tuple(bars(line)) for line in lines}) == 1
    text = board_text(f11, NAMES)
    assert "中村さくら" in text  # wide names kept whole where they fit
    assert "A very very long display name that no column can hold" not in text
    assert re.search(r"\* A very[^|]*\u2026 +won 9 \|", text)  # cut with an ellipsis, the bid kept


def test_text_table_shows_bids_bidders_timers_wins_and_prizes(f11):
    text = board_text(f11, NAMES)
    rows = grid_lines(text)
    row = lambda r: "\n".join(rows[1 + 4 * r: 4 + 4 * r])  # noqa: E731
    # standing bid: bidder, amount, the timer's end
    assert re.search(r"\| kim +bid 10 \|", row(1)) and "ends 53h00" in row(1)
    assert re.search(r"\| José +bid 8 \|", row(2)) and "ends 52h06" in row(2)
    # won seats: winner (marked *), winning bid, when
    assert re.search(r"\| \* crawron +won 6 \|", row(3)) and "at 24h30" in row(3)
    assert re.search(r"\| \* ann +won 7 \|", row(0)) and "at 24h00" in row(0)  # a pregame bid
    # open seats, prizes
    assert re.search(r"\| open +\|", row(0))  # P
    assert re.search(r"\| Z +3G 1P \|", row(3)) and re.search(r"\| O +2G 0P \|", row(0))
    assert "the board at 30h00" in text


def test_text_table_ends_with_everyones_chips_left(f11):
    text = board_text(f11, NAMES)
    chips = text.split("Chips left for bidding:\n", 1)[1].splitlines()
    assert len(chips) == len(ELEVEN)
    left = dict(f11.chips_left)
    for line, player in zip(chips, ELEVEN):
        name = NAMES.get(player, player)
        assert line.startswith("  " + cut(name, 24))
        assert re.search(rf"\s{left[player]}(\s|$)", line)
    assert re.search(r"kim +10 +\(standing: 10 on R\)", text)
    # the numbers stand in one column, whatever the names' scripts
    ends = {text_width(line.split("(")[0].rstrip()) for line in chips}
    assert len(ends) == 1


def test_text_times_in_utc_when_the_shell_knows_when_the_auction_opened(f11):
    opened = datetime(2026, 11, 25, 18, 0, tzinfo=timezone.utc)
    text = board_text(f11, NAMES, opens_at=opened)
    assert "the board at Fri 27 Nov 2026 00:00 UTC" in text
    assert "ends 27 Nov 23:00" in text  # kim's bid: hour 53
    assert "at 26 Nov 18:30" in text  # Z won at hour 24.5
    assert {text_width(line) for line in grid_lines(text)} == {70}


def test_f8_text_table_is_three_by_three(f8):
    text = board_text(f8, {"a": "Alice"})
    lines = grid_lines(text)
    assert len(lines) == 1 + 3 * 4
    assert [re.findall(r"\| ([R-Z]) ", line) for line in lines[1::4]] == [["R", "S", "T"], ["U", "V", "W"],
                                                                        ["X", "Y", "Z"]]
    assert re.search(r"\* Alice +won 1 \|", text) and re.search(r"\| b +bid 3 \|", text)


def test_cut_and_pad_count_display_columns():
    assert text_width("中村") == 4 and text_width("e\u0301") == 1
    assert cut("中村さくら", 6) == "中村\u2026" and text_width(cut("中村さくら", 6)) == 5
    assert text_width(pad("中村さくら", 7)) == 7
    assert cut("line\nbreak\u202e", 20) == "line break"  # one line, no bidi control


# --------------------------------------------------------------------------
# BBCode
# --------------------------------------------------------------------------

def test_bbcode_escapes_names_and_keeps_its_own_tags(f11):
    post = board_bbcode(f11, NAMES)
    assert "[b]evil[/b]" not in post and "(b)evil(/b)" in post
    tags = Counter(re.findall(r"\[/?([a-z*]+)", post))
    assert set(tags) <= {"b", "table", "tr", "td", "color", "list", "*"}
    for tag in ("b", "table", "tr", "td", "color", "list"):
        assert post.count(f"[{tag}]") + post.count(f"[{tag}=") == post.count(f"[/{tag}]"), tag
    assert post.count("[tr]") == 4 and post.count("[td]") == 12


def test_bbcode_rows_follow_the_grid_and_colour_each_player(f11):
    post = board_bbcode(f11, NAMES)
    rows = re.findall(r"\[tr\](.*?)\[/tr\]", post)
    assert [re.findall(r"\[td\]\[b\]([O-Z])\[/b\]", r) for r in rows] == [
        ["O", "P", "Q"], ["R", "S", "T"], ["U", "V", "W"], ["X", "Y", "Z"]]
    colour = {p: text_colour(PALETTE[k]) for k, p in enumerate(ELEVEN)}
    assert f"won by [color={colour['crawron']}][b]crawron[/b][/color] with [b]6[/b]" in post
    assert f"[color={colour['kim']}][b]kim[/b][/color] bids [b]10[/b], ends 53h00" in post
    assert f"[*][color={colour['sakura']}]中村さくら[/color]: 17" in post


# --------------------------------------------------------------------------
# The picture
# --------------------------------------------------------------------------

def decode(png: bytes):
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    img = Image.open(io.BytesIO(png))
    img.load()
    assert img.format == "PNG"
    return img.convert("RGB")


def pixels(img) -> list[tuple[int, int, int]]:
    flat = getattr(img, "get_flattened_data", None) or img.getdata  # getdata: Pillow < 12.1
    return list(flat())


def dominant(img, box) -> tuple[int, int, int]:
    return Counter(pixels(img.crop((box[0], box[1], box[2] + 1, box[3] + 1)))).most_common(1)[0][0]


def centre(img, box, r=8) -> tuple[int, int, int]:
    """The colour most of a small square at the box's centre has (the
    seat's fill, whatever letter crosses it)."""
    cx, cy = (box[0] + box[2]) // 2, (box[1] + box[3]) // 2
    return dominant(img, (cx - r, cy - r, cx + r, cy + r))


def text_pixels(img, box, fill) -> int:
    """Pixels of the box's inside that stand out from its fill: the text."""
    inner = img.crop((box[0] + 8, box[1] + 8, box[2] - 7, box[3] - 7))
    return sum(1 for px in pixels(inner) if contrast(px, fill) > 2)


@pytest.fixture(scope="module")
def f11_png(f11):
    return decode(board_png(f11, NAMES))


def test_picture_size_follows_the_board(f11, f11_png, f8):
    w, h = f11_png.size
    assert w == 2 * MARGIN + 3 * CELL_W + 2 * GAP
    assert h > 4 * CELL_H + 3 * GAP + 11 * 20  # the grid and a legend of 11 players
    f8_png = decode(board_png(f8, {}))
    assert f8_png.size[0] == w and f8_png.size[1] < h  # 3 columns again, one row fewer, fewer players


def test_picture_is_not_blank(f11_png):
    colours = f11_png.getcolors(maxcolors=1 << 16)
    assert colours is not None and len(colours) > 20
    # nearly half the picture is ink or fill, not background
    white = dict((c, n) for n, c in colours).get((255, 255, 255), 0)
    assert white < 0.6 * f11_png.size[0] * f11_png.size[1]


def test_won_seats_are_filled_with_the_winners_colour(f11, f11_png):
    board = drawn(f11, NAMES)
    colour = {p: _rgb(PALETTE[k]) for k, p in enumerate(ELEVEN)}
    for seat, winner in {"Z": "crawron", "O": "ann", "S": "bob", "W": "evil", "Q": "sakura", "X": "long"}.items():
        box = seat_box(board, seat)
        assert centre(f11_png, box) == colour[winner], seat
        assert dominant(f11_png, box) == colour[winner], seat


def test_a_standing_bid_differs_from_an_open_seat(f11, f11_png):
    board = drawn(f11, NAMES)
    opens = {centre(f11_png, seat_box(board, s)) for s in "PTV"}
    assert len(opens) == 1
    (open_fill,) = opens
    for seat, bidder in {"R": "kim", "U": "jose", "Y": "eve"}.items():
        box = seat_box(board, seat)
        fill = centre(f11_png, box)
        assert fill == tint(PALETTE[ELEVEN.index(bidder)]) and fill != open_fill, seat
        # framed in the bidder's colour
        assert f11_png.getpixel((box[0] + 1, (box[1] + box[3]) // 2)) == _rgb(PALETTE[ELEVEN.index(bidder)])


def test_every_seat_has_its_text(f11, f11_png):
    board = drawn(f11, NAMES)
    for cell in board.cells:
        box = seat_box(board, cell.seat)
        fill = centre(f11_png, box)
        assert text_pixels(f11_png, box, fill) > 150, cell.seat  # letter, prize, and bid or winner or "open"
        if cell.state != "won" or ink_on(fill) != (255, 255, 255):
            inner = f11_png.crop((box[0] + 8, box[1] + 8, box[2] - 7, box[3] - 7))
            assert sum(1 for px in pixels(inner) if sum(px) < 3 * 110) > 60, cell.seat  # dark text


def test_the_legend_shows_each_player_in_their_colour(f11, f11_png):
    found = set(pixels(f11_png))
    for k in range(len(ELEVEN)):
        assert _rgb(PALETTE[k]) in found  # reds and zoe won nothing and bid nothing: only the legend has them


def test_f8_picture(f8):
    img = decode(board_png(f8, {"a": "Alice", "h": "Иван"}))
    board = drawn(f8, {})
    assert centre(img, seat_box(board, "V")) == _rgb(PALETTE[0])  # a won V
    assert centre(img, seat_box(board, "R")) == tint(PALETTE[1])  # b bids on R
    assert centre(img, seat_box(board, "Z")) != centre(img, seat_box(board, "R"))


def test_hostile_names_do_not_break_the_picture(f8):
    names = {p: "\u202e" + "中" * 40 + "\n[/table]" for p in "abcdefgh"}
    img = decode(board_png(f8, names))
    assert img.size == decode(board_png(f8, {})).size


def test_palette_is_distinct_and_readable():
    assert len(set(PALETTE)) == len(PALETTE) >= 11  # an F11 game's players all differ
    for c in PALETTE:
        assert contrast(_rgb(c), ink_on(_rgb(c))) >= 4  # the text on a won seat
        assert contrast(_rgb(text_colour(c)), (255, 255, 255)) >= 3  # a name in a forum post


# --------------------------------------------------------------------------
# Packaging
# --------------------------------------------------------------------------

def test_pillow_is_a_dependency_and_imported_only_to_draw():
    assert re.search(r'^\s*"pillow>=10",?\s*$', (ROOT / "pyproject.toml").read_text(), re.M)
    code = ("import sys, judge.methods.lui.render as r; "
            "assert 'PIL' not in sys.modules, 'Pillow imported at start-up'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
