"""The Lowest Unique Integer board three ways, from `engine.board_view` only.

    board_text(view, names)    -> str    a table for a fixed-width mail
    board_bbcode(view, names)  -> str    a [table] for a forum post
    board_png(view, names)     -> bytes  a PNG picture, drawn with Pillow

`names` maps a player to the name people read (a player missing from it is
shown by its key). Names are hostile input: each is put on one line
(judge.names.one_line), BBCode brackets become round ones (the templates'
`bbcode` filter), and in the text table a name is cut with an ellipsis to
its column, counting the columns a fixed-width font gives each character
(two for East Asian wide ones, none for combining marks), so that no name
can push the grid out of line.

Times are the game's clock, hours after the auction opened (hour 0): shown
as "24h30", or as UTC dates and times when the shell passes `opens_at`, the
moment hour 0 was. A timer's end is shown to the minute it falls in
(rounded down: a bid at that minute may already be too late, never the
reverse).

The words are in templates/lui/ (board.txt.j2, board.bbcode.j2, and the
picture's labels in board_picture.j2). The picture is drawn with Pillow's
ImageDraw in the font that ships inside Pillow (ImageFont.load_default at a
size, Pillow >= 10.1), never a system font, so it looks the same on every
host. Pillow is imported inside board_png only: `judge deliver` starts for
every mail and most mails draw no board.
"""

from __future__ import annotations

import io
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import cache
from typing import Any, Mapping

from judge.methods.api import format_time
from judge.methods.api import template_words
from judge.methods.lui.engine import BoardView, SeatView
from judge.names import one_line
from judge.methods.api import render

ELLIPSIS = "\u2026"
TEXT_WIDTH = 72  # a mail line; the grid of an F11 or F8 board fits in it

# One colour per player, in roster order: nine of Matplotlib's "tab10" (D3's
# category10; not its grey, which a tint would turn into an open seat's) and
# three of "tab20b"; medium tones that stay apart from each other and carry
# white or black text (text_colour darkens the pale ones for a forum page).
PALETTE = (
    "#1f77b4",  # blue
    "#d62728",  # red
    "#2ca02c",  # green
    "#ff7f0e",  # orange
    "#9467bd",  # purple
    "#8c564b",  # brown
    "#e377c2",  # pink
    "#17becf",  # cyan
    "#bcbd22",  # olive
    "#393b79",  # navy
    "#7b4173",  # plum
    "#637939",  # moss
)
UNKNOWN = "#555555"  # a player missing from the view's roster (none should be)


# --------------------------------------------------------------------------
# Names and widths in a fixed-width font
# --------------------------------------------------------------------------

def char_width(ch: str) -> int:
    """Columns `ch` takes in a fixed-width font: 0 for combining marks, 2 for
    East Asian wide and full-width characters (CJK, most emoji), else 1."""
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def text_width(text: str) -> int:
    return sum(char_width(ch) for ch in text)


def cut(text: Any, width: int) -> str:
    """`text` on one line, at most `width` columns: cut with an ellipsis
    when it is longer."""
    text = one_line(str(text))
    if text_width(text) <= width:
        return text
    out, used = [], 0
    for ch in text:
        w = char_width(ch)
        if used + w > width - 1:
            break
        out.append(ch)
        used += w
    return "".join(out).rstrip() + ELLIPSIS if width > 0 else ""


def pad(text: Any, width: int) -> str:
    """`text` cut to `width` columns and padded to exactly `width`."""
    t = cut(text, width)
    return t + " " * (width - text_width(t))


def rpad(text: Any, width: int) -> str:
    """Right-aligned in `width` columns."""
    t = cut(text, width)
    return " " * (width - text_width(t)) + t


def spread(left: Any, right: Any, width: int) -> str:
    """`left` at the start and `right` at the end of `width` columns; `left`
    is the one cut when both do not fit, with a space at least between."""
    r = cut(right, width)
    room = width - text_width(r) - 1
    if room < 1:
        return pad(r, width)
    l = cut(left, room)
    return l + " " * (width - text_width(l) - text_width(r)) + r


# --------------------------------------------------------------------------
# The view as the three renderings read it
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Cell:
    """A seat as drawn: `state` is "won", "bid" (a standing bid) or "open".
    player/name/amount/time are the winner's or the standing bidder's, and
    `time` the moment the seat was won or the bid's timer runs out."""

    seat: str
    garnets: int
    priority: int
    state: str
    player: str | None = None
    name: str = ""
    amount: int | None = None
    hours: float | None = None
    time: str = ""
    colour: str = UNKNOWN
    row: int = 0
    col: int = 0

    @property
    def text_colour(self) -> str:
        return text_colour(self.colour)


@dataclass(frozen=True)
class Chips:
    """A player's line of the legend: chips left for bidding, and the
    standing bids that hold the rest, as (seat, amount)."""

    player: str
    name: str
    left: int
    bids: tuple[tuple[str, int], ...]
    colour: str

    @property
    def text_colour(self) -> str:
        return text_colour(self.colour)


@dataclass(frozen=True)
class Drawn:
    """Everything the three renderings show, worked out once from a BoardView."""

    at: float
    now: str  # the view's moment, in words
    real_times: bool
    rows: tuple[tuple[Cell, ...], ...]
    chips: tuple[Chips, ...]

    @property
    def cols(self) -> int:
        return len(self.rows[0]) if self.rows else 0

    @property
    def cells(self) -> tuple[Cell, ...]:
        return tuple(c for row in self.rows for c in row)


def hours_label(hours: float) -> str:
    """Game hours as "24h30", rounded down to the minute ("-3h00" in the
    pregame)."""
    minutes = int(hours * 60 // 1)
    sign = "-" if minutes < 0 else ""
    h, m = divmod(abs(minutes), 60)
    return f"{sign}{h}h{m:02d}"


def _moment(hours: float, opens_at: datetime | None) -> datetime:
    t = opens_at + timedelta(hours=hours)
    return t.replace(second=0, microsecond=0).astimezone(timezone.utc)


def time_label(hours: float, opens_at: datetime | None) -> str:
    """A timer's end or a seat's win, short enough for a seat's box."""
    if opens_at is None:
        return hours_label(hours)
    return _moment(hours, opens_at).strftime("%d %b %H:%M")


def colours(view: BoardView) -> dict[str, str]:
    """Each player's colour: the palette in roster order; past its end the
    palette again, darker, then lighter (the legend tells them apart)."""
    out = {}
    for k, (player, _) in enumerate(view.chips_left):
        base = PALETTE[k % len(PALETTE)]
        lap = k // len(PALETTE)
        out[player] = base if lap == 0 else _hex(_mix(_rgb(base), (0, 0, 0) if lap % 2 else (255, 255, 255), 0.35))
    return out


def drawn(view: BoardView, names: Mapping[str, str] | None = None, *,
          opens_at: datetime | None = None) -> Drawn:
    """The view with what it leaves to its readers worked out: each seat's
    state, display name, colour and times, each player's standing bids."""
    names = names or {}
    colour = colours(view)

    def name(player: str) -> str:
        return one_line(str(names.get(player, player))) or one_line(player) or "?"

    rows = []
    for r, row in enumerate(view.rows):
        out = []
        for c, s in enumerate(row):
            out.append(_cell(s, r, c, name, colour, opens_at))
        rows.append(tuple(out))
    bids: dict[str, list[tuple[str, int]]] = {}
    for s in (s for row in view.rows for s in row):
        if s.standing is not None:
            bids.setdefault(s.standing.player, []).append((s.seat, s.standing.amount))
    chips = tuple(Chips(p, name(p), left, tuple(bids.get(p, ())), colour.get(p, UNKNOWN))
                  for p, left in view.chips_left)
    now = format_time(_moment(view.at, opens_at)) if opens_at is not None else hours_label(view.at)
    return Drawn(view.at, now, opens_at is not None, tuple(rows), chips)


def _cell(s: SeatView, r: int, c: int, name, colour: Mapping[str, str], opens_at: datetime | None) -> Cell:
    base = dict(seat=s.seat, garnets=s.prize_garnets, priority=s.prize_priority, row=r, col=c)
    if s.won is not None:
        w = s.won
        return Cell(**base, state="won", player=w.player, name=name(w.player), amount=w.amount, hours=w.at,
                    time=time_label(w.at, opens_at), colour=colour.get(w.player, UNKNOWN))
    if s.standing is not None:
        b = s.standing
        return Cell(**base, state="bid", player=b.player, name=name(b.player), amount=b.amount, hours=b.ends_at,
                    time=time_label(b.ends_at, opens_at), colour=colour.get(b.player, UNKNOWN))
    return Cell(**base, state="open")


# --------------------------------------------------------------------------
# Text and BBCode
# --------------------------------------------------------------------------

def cell_width(cols: int) -> int:
    """Columns inside a seat's box: the grid fits a mail line up to 4
    columns of seats; wider boards keep readable boxes and a longer line."""
    return max(14, min(20, (TEXT_WIDTH - 1) // max(cols, 1) - 3))


def board_text(view: BoardView, names: Mapping[str, str] | None = None, *,
               opens_at: datetime | None = None) -> str:
    """The board as a fixed-width table (templates/lui/board.txt.j2)."""
    d = drawn(view, names, opens_at=opens_at)
    name_w = min(24, max([text_width(c.name) for c in d.chips] + [6]))
    return render("lui/board.txt.j2", board=d, w=cell_width(d.cols), name_w=name_w,
                  pad=pad, rpad=rpad, spread=spread, cut=cut)


def board_bbcode(view: BoardView, names: Mapping[str, str] | None = None, *,
                 opens_at: datetime | None = None) -> str:
    """The board as a forum post (templates/lui/board.bbcode.j2): a [table]
    of seats in their grid positions, each bidder and winner in their
    colour, and a list of everyone's chips left."""
    return render("lui/board.bbcode.j2", board=drawn(view, names, opens_at=opens_at))


# --------------------------------------------------------------------------
# The picture
# --------------------------------------------------------------------------

CELL_W, CELL_H, GAP, MARGIN = 232, 124, 8, 20  # pixels: a seat's box, between boxes, round the picture
_HEADER_H = 64  # the title and its note, above the grid
WHITE, INK, FAINT = (255, 255, 255), (34, 34, 34), (120, 120, 120)
OPEN_FILL, OPEN_LINE = (246, 246, 246), (190, 190, 190)
TINT = 0.22  # a standing bid's fill: this much of the bidder's colour in white


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    h = hex_colour.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def _hex(rgb: tuple[int, int, int]) -> str:
    return "#%02x%02x%02x" % rgb


def _mix(a: tuple[int, int, int], b: tuple[int, int, int], share_b: float) -> tuple[int, int, int]:
    return tuple(round(x + (y - x) * share_b) for x, y in zip(a, b))  # type: ignore[return-value]


def _luminance(rgb: tuple[int, int, int]) -> float:
    def lin(c: int) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (lin(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def ink_on(fill: tuple[int, int, int]) -> tuple[int, int, int]:
    """White or near-black, whichever contrasts more with `fill` (WCAG)."""
    return WHITE if contrast(fill, WHITE) >= contrast(fill, INK) else INK


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG contrast ratio, 1 to 21."""
    la, lb = sorted((_luminance(a), _luminance(b)))
    return (lb + 0.05) / (la + 0.05)


def text_colour(colour: str) -> str:
    """`colour`, darkened until it reads as text on a white page (contrast
    3:1 at least): the forum post's names."""
    rgb = _rgb(colour)
    while contrast(rgb, WHITE) < 3:
        rgb = _mix(rgb, (0, 0, 0), 0.15)
    return _hex(rgb)


def tint(colour: str) -> tuple[int, int, int]:
    return _mix(WHITE, _rgb(colour), TINT)


def seat_box(board: Drawn, seat: str) -> tuple[int, int, int, int]:
    """The pixel box (left, top, right, bottom) of `seat` in board_png's
    picture of `board`."""
    cell = next(c for c in board.cells if c.seat == seat)
    x = MARGIN + cell.col * (CELL_W + GAP)
    y = MARGIN + _HEADER_H + cell.row * (CELL_H + GAP)
    return x, y, x + CELL_W - 1, y + CELL_H - 1



@cache
def _font(size: int):
    from PIL import ImageFont

    return ImageFont.load_default(size=size)


def drawable(text: str) -> str:
    """`text` in the characters Pillow's built-in font has."""
    # Pillow's own font (Aileron) draws ASCII and little else: a name in
    # another script is drawn in its Latin transliteration ("Иван" -> "Ivan",
    # "中村" -> "ZhongCun", by anyascii: pure Python tables, one lookup a
    # character, so linear and with no ICU to install), what is left over as
    # "?". The colour ties it to the text mail's exact name.
    text = one_line(text)
    if not text.isascii():
        from anyascii import anyascii

        text = anyascii(text)
        text = "".join(ch if ch.isascii() and ch.isprintable() else "?" for ch in text)
    return text


def _fit(text: str, font, width: float) -> str:
    """`text` cut with an ellipsis to at most `width` pixels in `font`."""
    if font.getlength(text) <= width:
        return text
    while text and font.getlength(text + ELLIPSIS) > width:
        text = text[:-1]
    return text.rstrip() + ELLIPSIS


_labels, _ = template_words("lui/board_picture.j2")  # the picture's words


def board_png(view: BoardView, names: Mapping[str, str] | None = None, *,
              opens_at: datetime | None = None) -> bytes:
    """The board as a PNG picture: the seats in their grid positions, each
    with its letter and prize; a won seat filled with its winner's colour,
    with the winner and the winning bid; a standing bid as a frame in the
    bidder's colour round a pale tint of it, with the bidder, the bid and
    the timer's end; an open seat pale grey. Below, the legend: each
    player's colour, name and chips left for bidding."""
    from PIL import Image, ImageDraw

    board = drawn(view, names, opens_at=opens_at)
    words = _labels()
    f_title, f_note, f_letter = _font(22), _font(13), _font(34)
    f_name, f_line, f_small = _font(18), _font(15), _font(13)

    cols, rows = board.cols, len(board.rows)
    grid_w = cols * CELL_W + (cols - 1) * GAP
    width = max(2 * MARGIN + grid_w, 560)
    legend_cols = max(1, min(4, (width - 2 * MARGIN) // 300))
    legend_rows = -(-len(board.chips) // legend_cols)
    legend_top = MARGIN + _HEADER_H + rows * CELL_H + (rows - 1) * GAP + 22
    height = legend_top + 30 + legend_rows * 26 + 24 + MARGIN

    img = Image.new("RGB", (width, height), WHITE)
    draw = ImageDraw.Draw(img)

    draw.text((MARGIN, MARGIN), _fit(str(words.title(board)), f_title, width - 2 * MARGIN), font=f_title, fill=INK)
    draw.text((MARGIN, MARGIN + 32), _fit(str(words.note(board)), f_note, width - 2 * MARGIN), font=f_note,
              fill=FAINT)

    for cell in board.cells:
        x0, y0, x1, y1 = seat_box(board, cell.seat)
        if cell.state == "won":
            fill = _rgb(cell.colour)
            draw.rectangle((x0, y0, x1, y1), fill=fill)
            ink = faint = ink_on(fill)
        elif cell.state == "bid":
            fill = tint(cell.colour)
            draw.rectangle((x0, y0, x1, y1), fill=fill, outline=_rgb(cell.colour), width=5)
            ink, faint = INK, (70, 70, 70)
        else:
            fill = OPEN_FILL
            draw.rectangle((x0, y0, x1, y1), fill=fill, outline=OPEN_LINE, width=1)
            ink, faint = (90, 90, 90), FAINT
        pad_x = 14
        draw.text((x0 + pad_x, y0 + 10), cell.seat, font=f_letter, fill=ink)
        for k, line in enumerate((words.prize_garnets(cell), words.prize_priority(cell))):
            draw.text((x1 - pad_x, y0 + 12 + 16 * k), str(line), font=f_small, fill=faint, anchor="ra")
        inner = CELL_W - 2 * pad_x
        if cell.state == "open":
            draw.text((x0 + pad_x, y0 + 84), str(words.open(cell)), font=f_line, fill=faint)
            continue
        draw.text((x0 + pad_x, y0 + 56), _fit(drawable(cell.name), f_name, inner), font=f_name, fill=ink)
        line = words.won(cell) if cell.state == "won" else words.bid(cell)
        draw.text((x0 + pad_x, y0 + 86), _fit(str(line), f_line, inner), font=f_line, fill=ink)

    # The legend: players, colours, chips left for bidding
    draw.text((MARGIN, legend_top), str(words.legend_title(board)), font=f_line, fill=INK)
    col_w = min(340, (width - 2 * MARGIN) // legend_cols)
    for k, ch in enumerate(board.chips):
        lx = MARGIN + (k // legend_rows) * col_w
        ly = legend_top + 30 + (k % legend_rows) * 26
        draw.rectangle((lx, ly, lx + 17, ly + 17), fill=_rgb(ch.colour))
        num = str(ch.left)
        num_w = f_line.getlength(num)
        right = lx + col_w - 16
        draw.text((lx + 26, ly), _fit(drawable(ch.name), f_line, right - num_w - 10 - (lx + 26)), font=f_line,
                  fill=INK)
        draw.text((right, ly), num, font=f_line, fill=INK, anchor="ra")
    draw.text((MARGIN, height - MARGIN - 14), _fit(str(words.key(board)), f_note, width - 2 * MARGIN), font=f_note,
              fill=FAINT)

    out = io.BytesIO()
    img.save(out, format="PNG", compress_level=6)  # optimize=True: 4x the time (50 ms), 3% smaller
    return out.getvalue()


__all__ = ["PALETTE", "board_bbcode", "board_png", "board_text", "cut", "drawn", "seat_box", "text_width"]
