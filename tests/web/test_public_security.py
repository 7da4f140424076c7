"""What the public pages must never do: show who plays which power in a
blind game (searched in every page, fragment and feed, before and after the
results), show a player's address, or let a player's name be markup (HTML,
script, BBCode) in a page or a feed. A real server, a real store (SQLite
and PostgreSQL), a real browser for the script test."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from sqlalchemy import select

from judge.games import find_game
from judge.store.models import Resolution

from tests.test_e2e_blinding import PLAYERS, judges, play_round, start_game, the_record, tp_url  # noqa: F401
from tests.web.conftest import LiveWeb
from tests.web.games import POWERS, blind_auction

ATOM = "{http://www.w3.org/2005/Atom}"


def public_texts(web: LiveWeb, game: str) -> dict[str, str]:
    """Every public URL of the site and of the game, with what it answers."""
    out = {}
    for path in ("/", "/feed.atom", f"/game/{game}", f"/game/{game}/live", f"/game/{game}/feed.atom",
                 f"/game/{game}/resolution.json", f"/game/{game}/board.png", "/?sort=-players"):
        r = web.get(path)
        out[path] = f"{r.status_code}\n{r.text if r.status_code == 200 else ''}"
    return out


def assert_no_power(texts: dict[str, str], where: str) -> None:
    for path, text in texts.items():
        for power in POWERS:
            assert power not in text, f"{power} in {path} ({where})"


def test_a_blind_game_shows_no_power_anywhere(harness, tmp_path, tp_url, page):
    a, b, post = judges(harness, tmp_path, tp_url)
    start_game(a, post)
    web = LiveWeb(a.config, a.config.database_url)
    try:
        running = public_texts(web, "bg")
        assert "200" in running["/game/bg"] and "blind game" in running["/game/bg"]
        assert_no_power(running, "while the protocol runs")

        play_round(a, b, post)
        record = the_record(a)
        assert sorted(record.values()) == sorted(POWERS)  # every player has a power, in the store
        done = public_texts(web, "bg")
        assert "resolved" in done["/game/bg"] and "told their own power" in done["/game/bg"]
        assert done["/game/bg/resolution.json"].startswith("404")  # the record would tell
        assert "bg: results" in done["/game/bg/feed.atom"] and "bg: results" in done["/feed.atom"]
        assert_no_power(done, "after the results")
        with a.judge.sessions() as s:
            secret = find_game(s, "bg").secret_seed
            seed = s.scalars(select(Resolution.seed)).one()
        for text in done.values():
            assert "@example.test" not in text  # no address either
            assert secret not in text and seed not in text  # no seed, no secret: they would tell too

        # And in the page as the browser renders it, scripts run.
        page.goto(web.url + "/game/bg")
        page.wait_for_timeout(500)
        rendered = page.inner_text("body") + page.content()
        for power in POWERS:
            assert power not in rendered
    finally:
        web.stop()
        b.close()


HOSTILE = ["<script>window.pwned=1</script>", '<img src=x onerror="window.pwned=2">',
           "[url=http://evil.example/]click[/url]", '"><b id=bold>bold</b>', "[b]Big[/b] & Co",
           "{{ 7*7 }} {% raw %}", "Normal Ann"]


@pytest.fixture
def hostile_game(harness):
    addresses = [f"h{k}@example.test" for k in range(len(HOSTILE))]
    blind_auction(harness, "hostile", HOSTILE, addresses=addresses)
    return harness


def test_hostile_names_are_text_in_every_page(hostile_game, live_web, page):
    page.on("dialog", lambda d: d.dismiss())
    for path in ("/", "/game/hostile"):
        page.goto(live_web.url + path)
        page.wait_for_timeout(300)
        assert page.evaluate("window.pwned") is None
    assert page.query_selector("#bold") is None and page.query_selector("main img") is None
    assert page.query_selector("a[href^='http://evil']") is None
    shown = page.inner_text("#players")
    for name in HOSTILE:
        assert name in shown, name  # the name as written, as text
    assert "49" not in page.inner_text("#players")  # no template ran the name
    results = page.inner_text("#results")
    assert "<script>window.pwned=1</script>" in results
    html = live_web.get("/game/hostile").text + live_web.get("/game/hostile/live").json()["html"]
    assert "<script>window" not in html and "<img src=x" not in html and "<b id=bold>" not in html
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in html


def test_hostile_names_are_text_in_the_feeds(hostile_game, live_web):
    for path in ("/feed.atom", "/game/hostile/feed.atom"):
        r = live_web.get(path)
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/atom+xml")
        assert "<script>" not in r.text and "<b id=bold>" not in r.text
        root = ET.fromstring(r.content)  # well-formed XML whatever the names hold
        (entry,) = root.findall(f"{ATOM}entry")
        content = entry.find(f"{ATOM}content")
        assert content.get("type") == "text"
        for name in HOSTILE:
            assert name in content.text, name
        assert "@example.test" not in r.text


def test_hostile_names_stay_text_when_the_live_part_is_swapped_in(harness, live_web, page):
    addresses = [f"h{k}@example.test" for k in range(len(HOSTILE))]
    blind_auction(harness, "running", HOSTILE, addresses=addresses, resolve=False)
    page.goto(live_web.url + "/game/running")
    assert page.inner_text("#players").count("not yet") == len(HOSTILE)
    harness.mail(addresses[0], "SIGNON ?running pw\nNo Preference")
    assert "No Preference accepted" in harness.body(harness.last_to(addresses[0]))
    page.wait_for_function("() => [...document.querySelectorAll('#players td.submitted')]"
                           ".some(td => td.innerText === 'yes')",
                           timeout=15000)  # swapped in by the page's script (rows in the order of the names)
    assert page.evaluate("window.pwned") is None and page.query_selector("#bold") is None
    shown = page.inner_text("#players")
    for name in HOSTILE:
        assert name in shown, name
