"""The PT3 board as a text grid, BBCode and a PNG picture (Pillow).

`view` makes the plain data every form draws (pure); the words are in
templates/pt3/ (board.txt.j2, board.bbcode.j2, picture.j2). The picture's
geometry is public (`cell_box`) so that tests can read a mark's pixels.
"""

from __future__ import annotations

from typing import Any

from judge.methods.api import template_words
from judge.methods.pt3.engine import State, mark_of, money, square_name

MARGIN = 30
HEADER = 70  # title and note above the grid
LABEL = 28  # the row letters' and column numbers' band
CELL = 110
WIDTH = 2 * MARGIN + LABEL + 3 * CELL
HEIGHT = MARGIN + HEADER + LABEL + 3 * CELL + 40 + MARGIN
WHITE, INK, GRID, FAINT = (255, 255, 255), (20, 20, 20), (90, 90, 90), (110, 110, 110)
X_INK, O_INK, LINE_INK = (200, 30, 30), (30, 70, 190), (240, 190, 0)
STROKE = 9


def view(state: State, game: str) -> dict[str, Any]:
    """What a board shows: marks, names, balances, seasons, the end."""
    b = state.board
    return {
        "game": game,
        "board": b,
        "rows": [list(b[3 * r:3 * r + 3]) for r in range(3)],
        "names": {"X": state.names[0], "O": state.names[1]},
        "balances": {"X": money(state.balances[0], state.places), "O": money(state.balances[1], state.places)},
        "season": state.season,
        "mark": mark_of(state.season),
        "over": state.over,
        "winner": state.winner,
        "line": None if state.line is None else [square_name(i) for i in state.line],
        "line_index": None if state.line is None else list(state.line),
        "seasons": [{"number": s.number, "mark": s.mark, "winner": s.winner, "square": square_name(s.square),
                     "bid": None if s.bid is None else money(s.bid, state.places)} for s in state.seasons],
    }


def board_text(v: dict[str, Any]) -> str:
    from judge.methods.api import render

    return render("pt3/board.txt.j2", view=v).rstrip("\n")


def board_bbcode(v: dict[str, Any]) -> str:
    from judge.methods.api import render

    return render("pt3/board.bbcode.j2", view=v).rstrip("\n")


def cell_box(index: int) -> tuple[int, int, int, int]:
    """The square `index` (0..8, reading order) in the picture: x0, y0, x1, y1."""
    x0 = MARGIN + LABEL + (index % 3) * CELL
    y0 = MARGIN + HEADER + LABEL + (index // 3) * CELL
    return x0, y0, x0 + CELL, y0 + CELL


def centre(index: int) -> tuple[int, int]:
    x0, y0, x1, y1 = cell_box(index)
    return (x0 + x1) // 2, (y0 + y1) // 2


_words, _ = template_words("pt3/picture.j2")  # the picture's words, loaded when first drawn


def _font(size: int):
    from PIL import ImageFont

    return ImageFont.load_default(size=size)


def board_png(v: dict[str, Any]) -> bytes:
    """The board as a PNG: a red X (two strokes crossing at the square's
    centre), a blue O (a ring round it), X's winning line struck through in
    yellow; the title, the season or the end, and the balances."""
    import io

    from PIL import Image, ImageDraw

    words = _words()
    img = Image.new("RGB", (WIDTH, HEIGHT), WHITE)
    draw = ImageDraw.Draw(img)
    draw.text((MARGIN, MARGIN), str(words.title(v)).strip(), font=_font(22), fill=INK)
    draw.text((MARGIN, MARGIN + 32), str(words.note(v)).strip(), font=_font(15), fill=FAINT)
    label = _font(18)
    for k in range(3):
        x0, y0, x1, y1 = cell_box(k)
        draw.text(((x0 + x1) // 2, y0 - 6), str(k + 1), font=label, fill=INK, anchor="mb")
        x0, y0, x1, y1 = cell_box(3 * k)
        draw.text((x0 - 10, (y0 + y1) // 2), "ABC"[k], font=label, fill=INK, anchor="rm")
    left, top, _, _ = cell_box(0)
    right, bottom = left + 3 * CELL, top + 3 * CELL
    for k in (1, 2):  # the grid's inner lines
        draw.line((left + k * CELL, top, left + k * CELL, bottom), fill=GRID, width=3)
        draw.line((left, top + k * CELL, right, top + k * CELL), fill=GRID, width=3)
    pad = CELL // 4
    for i, mark in enumerate(v["board"]):
        x0, y0, x1, y1 = cell_box(i)
        if mark == "X":
            draw.line((x0 + pad, y0 + pad, x1 - pad, y1 - pad), fill=X_INK, width=STROKE)
            draw.line((x0 + pad, y1 - pad, x1 - pad, y0 + pad), fill=X_INK, width=STROKE)
        elif mark == "O":
            draw.ellipse((x0 + pad, y0 + pad, x1 - pad, y1 - pad), outline=O_INK, width=STROKE)
    if v["line_index"]:
        a, b = centre(v["line_index"][0]), centre(v["line_index"][-1])
        draw.line((*a, *b), fill=LINE_INK, width=5)
    draw.text((MARGIN, bottom + 14), str(words.balances(v)).strip(), font=_font(16), fill=INK)
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue()
