"""The public pages in a real headless Chromium, over a real server and a
real store (SQLite and PostgreSQL): the games list and its sorting, a
resolved Blind Auction's page with its results and record (which `judge
verify` accepts), a screenshot whose pixels and text are there."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys

from tests.web.conftest import wait_for
from tests.web.games import GM, NAMES, addr, blind_auction, forming


def column(page, n: int) -> list[str]:
    return page.eval_on_selector_all(f"#games tbody tr td:nth-child({n})", "tds => tds.map(td => td.innerText)")


def test_games_list_sorts_by_a_clicked_header(harness, live_web, page):
    h = harness
    forming(h, "charlie", "preference", 3, deadline="+24h")
    forming(h, "alpha", "random", 5)
    forming(h, "bravo", "blind-auction", 1, deadline="+96h")
    page.goto(live_web.url + "/")
    assert column(page, 1) == ["alpha", "bravo", "charlie"]  # by name at first
    assert column(page, 2) == ["random", "blind-auction", "preference"]
    assert column(page, 6) == ["5/7", "1/7", "3/7"]

    page.click("#games th[data-key=players] a")
    assert column(page, 1) == ["bravo", "charlie", "alpha"]
    page.click("#games th[data-key=players] a")
    assert column(page, 1) == ["alpha", "charlie", "bravo"]
    page.click("#games th[data-key=deadline] a")
    assert column(page, 1) == ["charlie", "bravo", "alpha"]  # no deadline: last
    page.click("#games th[data-key=method] a")
    assert column(page, 1) == ["bravo", "charlie", "alpha"]

    # The deadline: UTC in the HTML, the reader's own zone (New York here) beside it.
    deadline = page.inner_text("#games tbody tr:nth-child(1) td:nth-child(5)").replace("\u202f", " ")
    assert "Mar 5, 2026, 7:00 AM (2026-03-05 12:00 UTC)" == deadline, deadline  # bravo: +96h

    # Without script the headers are links the server sorts by.
    html = live_web.get("/?sort=-players").text
    assert html.index(">alpha<") < html.index(">charlie<") < html.index(">bravo<")


def test_a_resolved_blind_auction_shows_its_results_and_its_record_verifies(harness, live_web, page, tmp_path):
    h = harness
    blind_auction(h)
    page.goto(live_web.url + "/game/spring")
    text = page.inner_text("main")
    assert "State: resolved" in text
    for name in NAMES:
        assert name in text
    results = page.inner_text("#results")
    assert "Assignment:" in results and "All bids:" in results and "Steps and draws:" in results
    assert "players tied at 40 for Austria: Ann, Bob" in results  # the draw, by name
    assert "Gus" in results and "(No Preference)" in results
    powers = page.eval_on_selector_all("#players td.power", "tds => tds.map(td => td.innerText)")
    assert sorted(powers) == ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]
    seed = page.inner_text("#seed")
    assert len(seed) == 64 and page.inner_text("#reveal").count("\n") >= 4

    # Never an address: not in the page, not in the published record.
    html = page.content()
    assert "@example.test" not in html
    with page.expect_download() as download:
        page.click("#record")
    path = tmp_path / "resolution.json"
    download.value.save_as(path)
    data = path.read_bytes()
    assert b"@example.test" not in data
    record = json.loads(data)
    assert record["result"]["seed"] == seed
    assert sorted(record["names"].values()) == sorted(NAMES)
    run = subprocess.run([sys.executable, "-m", "judge", "verify", str(path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "secret matches the commitment" in run.stdout and "re-run identically" in run.stdout


def test_the_game_page_screenshot_has_pixels_and_text(harness, live_web, page):
    from PIL import Image

    blind_auction(harness)
    page.goto(live_web.url + "/game/spring")
    page.wait_for_selector("#results")
    shot = Image.open(io.BytesIO(page.screenshot(full_page=True))).convert("RGB")
    assert shot.size[0] >= 1000 and shot.size[1] > 600
    colours = shot.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 20  # text, table lines, shades: not a blank page
    white = max(count for count, c in colours if c == (255, 255, 255))
    assert white < 0.97 * shot.size[0] * shot.size[1]
    # The words a reader sees are there (the page's text, as rendered).
    body = page.inner_text("body")
    assert "spring" in body and "Ann" in body and "Results" in body


def test_a_game_page_before_the_results_shows_who_is_in_never_what(harness, live_web, page):
    h = harness
    blind_auction(h, resolve=False)
    h.send(addr("Ann"), "SIGNON ?spring pw\nAustria: 40\nEngland: 30\nFrance: 20\nGermany: 15\nItaly: 10\n"
                        "Russia: 5\nTurkey: 1")
    h.run()
    assert "Done: bid list accepted" in h.body(h.last_to(addr("Ann")))
    page.goto(live_web.url + "/game/spring")
    rows = page.eval_on_selector_all("#players tbody tr", "trs => trs.map(tr => tr.innerText)")
    assert rows[0].split("\t") == ["Ann", "yes"] and rows[1].split("\t") == ["Bob", "not yet"]
    html = page.content()
    assert "Austria" not in html and ">40<" not in html  # never what
    assert page.inner_text("#state") == "bidding"
    countdown = page.inner_text("p.state")
    assert "UTC" in countdown and "(passed)" in countdown  # the harness's clock is in March 2026
    assert page.query_selector("#record") is None and "Commitment to the secret seed" in page.inner_text("main")
    assert GM not in html

    # A deadline ahead of the browser's clock counts down, second by second.
    # (The harness's clock is in March 2026: the deadline is moved in the store.)
    from datetime import datetime, timedelta, timezone

    from judge.games import find_game

    with h.judge.sessions.begin() as s:
        find_game(s, "spring").deadline = datetime.now(timezone.utc) + timedelta(hours=2, minutes=30)
    page.reload()
    first = page.inner_text("span.countdown")
    assert re.fullmatch(r" \(in 2h (29|30)m \d\ds\)", first), first
    page.wait_for_timeout(1500)
    assert page.inner_text("span.countdown") != first


def test_a_preference_game_shows_lists_and_values_and_its_record_verifies_without_addresses(
        harness, live_web, tmp_path):
    h = harness
    lists = ["EFGRTAI", "FEGRTAI", "AEFGRTI", "RTAIEFG", "TRAIEFG", "IAEFGRT", "GFERTAI"]
    h.mail(GM, "create ?prefs gmpw preference standard\nset manual start\nsignoff")
    for name, text in zip(NAMES, lists):
        # An ENTROPY line: hashed into the seed with its sender's address.
        h.send(f"{name} <{addr(name)}>", f"signon ?prefs pw\nENTROPY {name} likes tea\nset preference {text}\n"
                                         "signoff")
    h.run()
    h.mail(GM, "signon Mprefs gmpw\nstart")
    html = live_web.get("/game/prefs").text
    assert "Lists and values:" in html and "How it was decided:" in html
    assert "@example.test" not in html and "ENTROPY line(s)" in html
    record = live_web.get("/game/prefs/resolution.json")
    assert record.status_code == 200 and b"@example.test" not in record.content
    path = tmp_path / "resolution.json"
    path.write_bytes(record.content)
    run = subprocess.run([sys.executable, "-m", "judge", "verify", str(path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "re-run identically" in run.stdout


def test_a_random_game_shows_its_draws_by_name(harness, live_web):
    h = harness
    forming(h, "dice", "random", 7)
    h.mail(GM, "SIGNON Mdice gmsecret\nSTART")
    page = live_web.get("/game/dice").text
    assert "Random assignment: 7 powers, 7 players" in page and "drew" in page
    assert "P3 drew" in page or "P3" in page
    assert "@example.test" not in page
    feed = live_web.get("/game/dice/feed.atom").text
    assert "dice: results" in feed and "P3" in feed and "@example.test" not in feed


def test_every_method_s_forming_game_has_a_page(harness, live_web):
    """Every method of the registry (those to come too): a game of it has a
    page, a place in the list and a feed, with its players by name."""
    from judge.methods import METHODS

    h = harness
    for method in METHODS:
        h.mail(GM, f"CREATE ?m-{method} gmsecret {method}\nSIGNOFF")
        h.send(f"Zed Zulu <zed-{method}@example.test>", f"SIGNON ?m-{method} pw\nSIGNOFF")
    h.run()
    listing = live_web.get("/").text
    for method in METHODS:
        page = live_web.get(f"/game/m-{method}")
        assert page.status_code == 200, (method, page.text[-500:])
        assert f"m-{method}" in listing and "@example.test" not in page.text
        assert live_web.get(f"/game/m-{method}/live").status_code == 200
        assert live_web.get(f"/game/m-{method}/feed.atom").status_code == 200
        assert "Zed Zulu" in page.text, (method, page.text[-800:])


def test_names_that_are_addresses_or_alike_never_show_an_address(harness, live_web):
    h = harness
    h.mail(GM, "CREATE ?names gmsecret random standard\nSIGNOFF")
    h.send("bob@example.test <bob@example.test>", "SIGNON ?names pw\nSIGNOFF")
    h.run()
    page = live_web.get("/game/names").text
    assert ">bob<" in page and "@example.test" not in page  # the judge kept the local part as the name

    # Names stored before the judge cleaned them (or by another path): the web
    # still shows no address, and no two players under one name.
    from types import SimpleNamespace

    from judge.web.queries import public_names

    game = SimpleNamespace(players=[SimpleNamespace(name=n, address=a) for n, a in [
        ("carl@example.test", "carl@example.test"), ("Ann", "a1@example.test"), ("ann", "a2@example.test"),
        ("", "x@example.test")]])
    assert public_names(game) == {"carl@example.test": "player 1", "a1@example.test": "Ann",
                                  "a2@example.test": "ann (2)", "x@example.test": "player 4"}
