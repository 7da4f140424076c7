"""A Lowest Unique Integer game's board, live: the page is open in Chromium
when a bid mail is delivered through the real mail path (the Maildir inbox
and the daemon's iteration); the page shows the bid without a reload. On
SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta
from email.utils import formataddr

from judge.games import find_game

GM = "gm@example.test"
PLAYERS = [f"p{k}" for k in range(1, 9)]


def name(p: str) -> str:
    return f"Player {p[1:]} Smith"


def lui_game(h, game: str = "f8") -> datetime:
    """An F8 game started, its auction open; returns when it opened."""
    h.mail(GM, f"CREATE ?{game} gmpw lui\nSET PRESET F8")
    for p in PLAYERS:
        h.send(formataddr((name(p), f"{p}@example.test")), f"SIGNON ?{game} pw")
    h.run()
    prizes = "\n".join(f"SET PRIZE {seat} {k % 3} {k % 2}" for k, seat in enumerate("RSTUVWXYZ"))
    h.mail(GM, f"SIGNON M{game} gmpw\n{prizes}\nSTART")
    assert f"?{game} started" in h.body(h.last_to(GM))
    with h.judge.sessions() as s:
        opens = datetime.fromisoformat(find_game(s, game).method_state["opens_at"])
    h.clock.advance(seconds=(opens + timedelta(hours=1) - h.clock.now()).total_seconds())
    h.run()  # the auction opens
    return opens


def board_text(page) -> str:
    return page.inner_text("#board pre")


def test_the_board_updates_while_the_page_is_open(harness, live_web, page):
    h = harness
    lui_game(h)
    page.goto(live_web.url + "/game/f8")
    page.wait_for_selector("#board")
    assert "Players (8/8)" in page.inner_text("main")  # F8's eight seats, not the variant's seven powers
    before = board_text(page)
    assert "Lowest Unique Integer: the board at" in before and "bid 3" not in before
    img = page.wait_for_function(
        "() => { const i = document.querySelector('#board img'); return i && i.complete && i.naturalWidth; }")
    assert img.json_value() > 300
    first_picture = page.get_attribute("#board img", "src")
    version = page.get_attribute("#live", "data-version")

    # A bid arrives by mail while the page is open: the daemon reads it.
    h.send(formataddr((name("p3"), "p3@example.test")), "SIGNON ?f8 pw\nBID S 3")
    h.run()
    assert "Done: your bid of" in h.body(h.last_to("p3@example.test"))
    page.wait_for_function("() => document.querySelector('#board pre').innerText.includes('bid 3')",
                           timeout=15000)
    after = board_text(page)
    assert "Player 3 Smith" in after  # named by their name, never the address's local part
    assert page.get_attribute("#live", "data-version") != version
    assert page.get_attribute("#board img", "src") != first_picture  # the picture follows
    page.wait_for_function(
        "() => { const i = document.querySelector('#board img'); return i.complete && i.naturalWidth > 300; }")

    # A second bid, outbidding: the page follows again.
    h.send(formataddr((name("p5"), "p5@example.test")), "SIGNON ?f8 pw\nBID S 5")
    h.run()
    page.wait_for_function("() => document.querySelector('#board pre').innerText.includes('bid 5')",
                           timeout=15000)
    html = page.content()
    assert "@example.test" not in html
    assert "Player 5 Smith" in board_text(page)


def test_the_live_part_is_a_small_json_fragment(harness, live_web):
    lui_game(harness)
    first = live_web.get("/game/f8/live").json()
    again = live_web.get("/game/f8/live").json()
    assert first["version"] == again["version"] and first["state"] == "bidding"
    assert "Lowest Unique Integer" in first["html"] and "<html" not in first["html"]
    harness.mail("p2@example.test", "SIGNON ?f8 pw\nBID T 2")
    changed = live_web.get("/game/f8/live").json()
    assert changed["version"] != first["version"] and "bid 2" in changed["html"]
    png = live_web.get("/game/f8/board.png")
    assert png.status_code == 200 and png.content[:8] == b"\x89PNG\r\n\x1a\n"
