"""Names that forge lines (issue 9).

The attack: a display name holding a line break and BBCode
(`Eve\\n  Austria mallory <-- FAKE\\n[/list][url=http://evil]...`) added
lines to every results mail and to the forum post; `[url]`, `[img]`,
`[/table]` passed into the BBCode; `Аlice` (Cyrillic А) showed as `Alice`;
U+202E was kept. Now a name is one line of printable text (judge.names),
every name in a BBCode post passes the `bbcode` filter, and a name that
looks like another player's (TS#39 skeletons, case ignored) is refused at
SIGNON and at REPLACE.
"""

from __future__ import annotations

import base64
import re

from sqlalchemy import select

from judge.games import find_game
from judge.store.models import Player
from tests.harness import JUDGE

GM = "gm@example.test"
MAX_NAME = 60  # judge.names.MAX_NAME (imported in the tests that need the module)
ATTACK = "Eve\n  Austria mallory <-- FAKE\n[/list][url=http://evil]click[/url]"
# The same in the line breaks today's mail reader keeps in a display name.
ATTACK_LS = "Eve2\u2028  Austria mallory <-- FAKE\u2028[/list][url=http://evil]click[/url]"
ATTACK_NEL = "Zed\x85  Turkey mallory <-- FAKE [img]http://evil/x.png[/img]"
PLAYERS = {  # address: the name in its From
    "alice@example.test": "Alice",
    "eve@evil.example": ATTACK,
    "eve2@evil.example": ATTACK_LS,
    "zed@evil.example": ATTACK_NEL,
    "ivan@evil.example": "Ivan[img]http://evil/x.png[/img]",
    "tom@evil.example": "Tom[/td][/tr][/table]FAKE",
    "bob@evil.example": "Bob\u202eevil",
}
LINE_BREAKS = ("\n", "\r", "\u2028", "\u2029", "\x85", "\x0b", "\x0c")
BIDI = "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u061c"


def raw_mail(name: str, address: str, body: str) -> bytes:
    """A mail whose From display name is `name`, exactly (an encoded word:
    the email package refuses a line break in a display name it writes)."""
    encoded = "=?utf-8?b?" + base64.b64encode(name.encode()).decode() + "?="
    return (f"From: {encoded} <{address}>\r\nTo: {JUDGE}\r\nSubject: commands\r\n"
            f"Message-ID: <{abs(hash((name, address, body)))}@players.test>\r\n"
            f"Date: Thu, 01 Jan 2026 00:00:00 +0000\r\n\r\n{body}\r\n").encode()


def test_names_are_one_line_of_printable_text():
    from judge.names import MAX_NAME, clean_name
    from judge.templating import bbcode

    assert clean_name(ATTACK) == "Eve Austria mallory <-- FAKE [/list][url=http://evil]click[/url]"[:MAX_NAME]
    assert clean_name(ATTACK_LS).startswith("Eve2 Austria mallory <-- FAKE [/list]")
    assert clean_name("Al\u202eice") == "Alice" and clean_name("\u2066Bob\u2069 \u200f") == "Bob"
    assert clean_name("Tab\there\x00\x1b[31mred") == "Tab here [31mred"
    assert len(clean_name("x" * 500)) == MAX_NAME
    assert clean_name(" \n\u202e ", "ann") == "ann" and clean_name(None, "ann") == "ann"
    for name in (ATTACK, ATTACK_LS, ATTACK_NEL, "a\u2029b\x0bc\x0cd\re"):
        cleaned = clean_name(name)
        assert cleaned.isprintable() and not any(b in cleaned for b in LINE_BREAKS)
    post = bbcode(ATTACK)
    assert "[" not in post and "]" not in post and "\n" not in post
    assert post == "Eve Austria mallory <-- FAKE (/list)(url=http://evil)click(/url)"


def test_names_that_look_alike_are_found_by_their_skeletons():
    from judge.names import looks_like

    others = [("Alice", "alice"), ("paypal", "paypal"), ("Bob", "bob")]
    assert looks_like("\u0410lice", others) == "alice"  # Cyrillic А
    assert looks_like("ALICE", others) == "alice"
    assert looks_like("\u0391lice", others) == "alice"  # Greek Α
    assert looks_like("paypaI", others) == "paypal"  # capital I for l
    assert looks_like("\u0412ob", others) == "bob"  # Cyrillic В
    assert looks_like("Alina", others) is None and looks_like("Bobby", others) is None


def test_names_forge_lines_in_results_mails_and_the_forum_post(harness):
    h = harness
    h.mail(GM, "CREATE ?spring gmsecret blind-auction standard\nSET DEADLINE +48h")
    addresses = list(PLAYERS)
    h.inbox.add(raw_mail(PLAYERS[addresses[0]], addresses[0], "SIGNON ?spring pw"))
    h.run()
    # Names that look like Alice's are refused, with what to do.
    for i, lookalike in enumerate(["\u0410lice", "ALICE", "Al\u202eice"]):
        h.inbox.add(raw_mail(lookalike, f"mallory{i}@evil.example", "SIGNON ?spring pw\nLIST"))
        h.run()
        reply = h.body(h.last_to(f"mallory{i}@evil.example"))
        assert "looks like the name of the player 'Alice' of ?spring" in reply, reply
        assert "From shows a name of your own" in reply and "Ignored: 1 line" in reply
    for address in addresses[1:]:
        h.inbox.add(raw_mail(PLAYERS[address], address, "SIGNON ?spring pw"))
    h.run()
    with h.judge.sessions() as s:
        names = {p.address: p.name for p in s.scalars(select(Player))}
    assert sorted(names) == sorted(addresses)
    for name in names.values():
        assert name.isprintable() and len(name) <= MAX_NAME and not set(name) & set(BIDI)
    assert names["bob@evil.example"] == "Bobevil"

    h.mail(GM, "SIGNON Mspring gmsecret\nSTART")
    for address in addresses:
        h.send(address, "SIGNON ?spring pw\nNo Preference")
    h.run()
    h.mail(GM, "SIGNON Mspring gmsecret\nPROCESS")
    assert "?spring is resolved now, as a job of its own: the results go to all 7 players" in h.body(h.sent_to_kind(GM, "reply")[-1])

    results = [h.body(h.sent_to_kind(a, "result")[0]) for a in [*addresses, GM]]
    for body in results:
        assert not any(ch in body for ch in (*LINE_BREAKS[1:], *BIDI))
        for line in body.splitlines():
            # The forged text stays on its name's line: no line of its own.
            if "mallory" in line:
                assert re.search(r"(Eve2|Zed) Austria mallory|(Eve2|Zed) Turkey mallory", line), line
    assert "You, Eve2 Austria mallory <-- FAKE [/list]" in results[2]
    post = results[-1].split("For the forum, paste this post:", 1)[1]
    assert "[url" not in post and "[img" not in post and "[/td][/tr]" not in post.replace(
        "[/td][/tr]\n", "")
    assert post.count("[/table]") == 1 and post.count("[/list]") == 2 and post.count("[list") == 2
    assert "Eve2 Austria mallory <-- FAKE (/list)(url=http://evil)click" in post
    assert "Tom(/td)(/tr)(/table)FAKE" in post and "Ivan(img)http://evil/x.png(/img)" in post


def test_names_given_by_replace_are_cleaned_and_checked(harness):
    h = harness
    h.mail(GM, "CREATE ?g gmpw\nSET DEADLINE +24h")
    h.mail("Alice <alice@example.test>", "SIGNON ?g pw")
    for i in range(6):
        h.send(f"p{i}@example.test", "SIGNON ?g pw")
    h.run()
    h.mail(GM, "SIGNON Mg gmpw\nSTART\nREPLACE p5@example.test with \u0410lice <a2@evil.example>\n"
               f"REPLACE p5@example.test with \"Mallory [url=http://evil]x[/url] {'x' * 80}\" <m@evil.example>")
    reply = h.body(h.last_to(GM))
    assert "the name 'Аlice' looks like that of the player 'Alice'" in reply
    cut = ("Mallory [url=http://evil]x[/url] " + "x" * 80)[:MAX_NAME]
    assert f"replaced by m@evil.example ({cut})" in reply
    with h.judge.sessions() as s:
        assert find_game(s, "g").players[-1].name == cut
