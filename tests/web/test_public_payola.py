"""A Payola game's public page (issue 16 with issue 14), on SQLite and
PostgreSQL, with the real server and Chromium: a game driven by mail shows
its phase, deadline, position, the last phase's orders with their results
and the map (SVG, by an <img>), and while it runs nothing of the accounts:
no offer sheet's amount, no balance, no ledger line, in the page, its live
part or the feeds. When the game ends (the 18th centre, as in
tests/test_e2e_payola_end.py) every power's ledger is published on the
page, with the winner and the revealed secret. Hostile player names stay
text throughout."""

from __future__ import annotations

import hashlib
import re
from email.utils import formataddr

from judge.games import find_game
from judge.methods.payola import game as G
from judge.methods.payola.live import load
from tests.payola_helpers import near_the_end
from tests.web.conftest import wait_for

GM = "gm@example.test"
# Player k's name: hostile ones among them (tests/web/test_public_security.py).
NAMES = {1: "<script>window.pwned=1</script>", 2: '<img src=x onerror="window.pwned=2">',
         3: '"><b id=bold>bold</b>', 4: "{{ 7*7 }} Dora", 5: "Eve", 6: "Fay", 7: "Gus"}
START = 7319  # every power's balance before Spring 1901: four digits, seen nowhere else
SHEETS = {1: "3851 : A VIE - GAL", 3: "4187 : A PAR - BUR", 4: "2659 : A MUN - RUH"}
TRANSFER = 1234  # England (p2) to Italy (p5)


def addr(k: int) -> str:
    return f"p{k}@example.test"


def signon(h, k: int, text: str) -> str:
    h.mail(formataddr((NAMES[k], addr(k))), f"SIGNON ?pay pw\n{text}")
    return h.body(h.last_to(addr(k)))


def gm(h, text: str) -> str:
    """The GM's reply, and after it what the GM was mailed since (PROCESS
    is answered at once, and the phase's results follow in a mail of their own)."""
    before = len(h.sent_to(GM))
    h.mail(GM, f"SIGNON Mpay gmpw\n{text}")
    return "\n".join(h.body(m) for m in h.sent_to(GM)[before:])


def started(h) -> str:
    """A standard Payola game by mail, started: every power has START AgP;
    p1 Austria, p2 England, p3 France, p4 Germany, p5 Italy (the GM's SET
    POWER), the other two drawn. Returns the commitment mailed at CREATE."""
    h.mail(GM, "CREATE ?pay gmpw payola standard")
    commitment = h.body(h.last_to(GM)).split("SHA-256 ")[1].split(".")[0]
    for k in range(1, 8):
        h.send(formataddr((NAMES[k], addr(k))), "SIGNON ?pay pw")
    h.run()
    given = "\n".join(f"SET POWER {addr(k)} {p}" for k, p in
                      zip(range(1, 6), ["Austria", "England", "France", "Germany", "Italy"]))
    assert "started" in gm(h, f"SET BALANCE {START}\n{given}\nSTART")
    return commitment


def secrets(h) -> set[str]:
    """Every amount and balance of the accounts so far, and the sheets'
    amounts: the four-digit ones (a smaller number is found anywhere)."""
    with h.judge.sessions() as s:
        state, _ = load(find_game(s, "pay"))
    numbers = {abs(x.amount) for x in state.ledger.lines} | {x.balance for x in state.ledger.lines}
    numbers |= {int(t.split()[0]) for t in SHEETS.values()}
    return {str(n) for n in numbers if n >= 1000}


def without_hashes(text: str) -> str:
    # Versions, commitments and secrets are hex: a four-digit run may be in one by chance.
    return re.sub(r"[0-9a-f]{16,}", "", text)


def assert_nothing_private(h, web, page) -> None:
    numbers = secrets(h)
    assert {"7319", "4187", "2659", "3851", "1234"} <= numbers
    texts = {"page": page.content(), "html": web.get("/game/pay").text, "live": web.get("/game/pay/live").text,
             "feed": web.get("/game/pay/feed.atom").text, "all feed": web.get("/feed.atom").text,
             "index": web.get("/").text}
    for where, text in texts.items():
        text = without_hashes(text)
        for n in numbers:
            assert n not in text, (where, n)
        assert "AgP" not in text and "ledger" not in text.lower(), where
    assert page.query_selector("#board-ledgers") is None
    assert page.query_selector("#board-end") is None
    assert web.get("/game/pay/resolution.json").status_code == 404


def assert_names_are_text(page) -> None:
    assert page.evaluate("window.pwned") is None
    assert page.query_selector("#bold") is None and page.query_selector("img[src=x]") is None
    assert "49 Dora" not in page.inner_text("main")  # no template ran a name


def test_a_payola_page_shows_the_position_and_orders_but_no_account_until_the_end(harness, live_web, page):
    h, web = harness, live_web
    page.on("dialog", lambda d: d.dismiss())
    commitment = started(h)

    # Spring 1901: the page is open while the sheets come in and the GM plays the phase.
    page.goto(web.url + "/game/pay")
    position = page.inner_text("#board-position")
    assert "The position: S1901M" in position and "Phase S1901M (movement" in position
    assert NAMES[3] in position and "France" in position and "A PAR" in position
    assert page.query_selector("#board-orders") is None  # nothing played yet
    assert page.query_selector("time[data-countdown]") is not None  # the phase's deadline
    for k, sheet in SHEETS.items():
        assert "offer 1 of the sheet" in signon(h, k, sheet)
    assert f"{TRANSFER} AgP sent to Italy" in signon(h, 2, f"TRANSFER {TRANSFER} TO Italy")
    assert "S1901M of ?pay is played now" in gm(h, "PROCESS")
    # The live part follows without a reload: the orders the bribes bought, with their results.
    page.wait_for_selector("#board-orders", timeout=15000)
    orders = page.inner_text("#board-orders")
    assert "The orders of S1901M, as adjudicated" in orders
    for order in ("A PAR - BUR", "A MUN - RUH", "A VIE - GAL"):
        assert order in orders, order
    position = page.inner_text("#board-position")
    assert "The position: F1901M" in position and "A BUR" in position and "A PAR" not in position
    assert re.search(r"France\s+.*3 centres \(BRE MAR PAR\)", position)
    assert NAMES[1] in position and NAMES[2] in position  # hostile names, as written
    assert_names_are_text(page)

    # The map: the results mails' SVG, shown by an <img> from its own route.
    src = page.get_attribute("#board img", "src")
    assert re.fullmatch(r"/game/pay/board\.svg\?v=[0-9a-f]{16}", src), src
    width = wait_for(lambda: page.evaluate(
        "() => { const i = document.querySelector('#board img'); return i.complete && i.naturalWidth; }"))
    assert width > 300
    svg = web.get(src)
    assert svg.status_code == 200 and svg.headers["content-type"] == "image/svg+xml"
    assert "default-src 'none'" in svg.headers["content-security-policy"] and b"<svg" in svg.content
    assert web.get("/game/pay/board.png").status_code == 404  # a Payola map is SVG only

    assert_nothing_private(h, web, page)

    # Fall 1901 and the income before Spring 1902: still nothing of the accounts.
    assert "F1901M of ?pay is played now" in gm(h, "PROCESS")
    page.wait_for_function("() => document.querySelector('#board-orders h3').innerText.includes('F1901M')",
                           timeout=15000)
    with h.judge.sessions() as s:
        state, _ = load(find_game(s, "pay"))
    assert any(x.kind == "income" for x in state.ledger.lines)
    assert "S1902M" in page.inner_text("#board-position")
    assert_nothing_private(h, web, page)

    # The end: France's 18th centre in Fall 1902. Every ledger is published.
    near_the_end(h, "pay")
    assert "S1902M of ?pay is played now" in gm(h, "PROCESS")
    assert "offer 1 of the sheet" in signon(h, 3, "1 : F NAF - TUN")
    assert "The game is over" in gm(h, "PROCESS")  # the results mail
    page.wait_for_selector("#board-ledgers", timeout=15000)
    with h.judge.sessions() as s:
        game = find_game(s, "pay")
        assert game.state == "resolved"
        state, _ = load(game)
    ledgers = page.inner_text("#board-ledgers")
    for power in G.powers(state):
        assert f"{power} " in ledgers
        lines = [x for x in state.ledger.lines if x.power == power]
        assert f"{state.ledger.balance(power)} AgP at the end" in ledgers
        for x in lines:  # every line: its phase, kind, amount and the balance after it
            amount = re.escape(f"{x.amount:+d}")
            assert re.search(rf"{x.phase}\s+{x.kind}\s+{amount} AgP\s+balance\s+{x.balance}\b", ledgers), x
    for kind in ("start", "bribes", "transfer out", "transfer in", "income"):
        assert kind in ledgers, kind
    assert f"-{TRANSFER} AgP" in ledgers and f"+{TRANSFER} AgP" in ledgers
    assert "-4187 AgP" in ledgers and f"France ({NAMES[3]})" in ledgers
    end = page.inner_text("#board-end")
    assert "France wins with 18 centres" in end
    secret = end.split("revealed with the last results: ")[1].split()[0]
    assert hashlib.sha256(bytes.fromhex(secret)).hexdigest() == commitment
    assert "The final position" in page.inner_text("#board-position")
    assert "The orders of F1902M" in page.inner_text("#board-orders")
    assert "F NAF - TUN" in page.inner_text("#board-orders")
    assert_names_are_text(page)
    html = web.get("/game/pay").text + web.get("/game/pay/live").json()["html"]
    assert "<script>window" not in html and "<img src=x" not in html and "<b id=bold>" not in html
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in html
    assert "@example.test" not in html
