"""The picture of a Payola board: the `diplomacy` package's own SVG map of
the position (units, supply centres in their owners' colours, the
provinces' abbreviations), attached to the results as image/svg+xml. No
conversion: every mail reader's browser shows SVG, and PNG would need a
converter (cairosvg and libcairo) the judge does not depend on."""

from __future__ import annotations

from typing import Any


def board_svg(state: Any) -> bytes:
    """The position of `state` (game.State) as an SVG document."""
    return state.engine().render(incl_abbrev=True).encode("utf-8")
