"""The hostile corpus of issue 9 as mails: each attack the issue lists,
tests/bad_mail/corpus.py's malformed mails, and seeded fuzzers of mails and
of command lines. Pure builders (bytes in, bytes out; nothing of the judge
is imported), deterministic for a seed; bench/attack_corpus.py runs them
through `judge deliver` and `judge serve` and checks what came of them.

build(seed, fuzz_mails, fuzz_lines) returns the corpus as phases: each phase
is a list of chains, each chain a list of Mails that must reach the judge in
that order (mails of different chains are independent, and may be handed
in side by side); a phase starts once the one before it has been run. The
constants name the games, players, passwords and victims, so that a check
can tell whether an attack got through.
"""

from __future__ import annotations

import base64
import random
import re
from dataclasses import dataclass
from pathlib import Path

from tests.bad_mail import corpus as bad_mail
from tests.bad_mail.corpus import CRLF, _nested, raw_mail

ROOT = Path(__file__).resolve().parents[2]
JUDGE = bad_mail.JUDGE
VICTIM = "victim@v.org"
POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]
UNICODE_SPACES = {"U+00A0": "\u00a0", "U+3000": "\u3000", "U+2028": "\u2028", "U+0085": "\u0085",
                  "U+2029": "\u2029", "U+FEFF": "\ufeff"}


@dataclass
class Mail:
    family: str
    name: str  # unique in the corpus
    raw: bytes
    key: bool = False  # always in the `judge deliver` sample
    # Not in the `judge deliver` sample: too big to pipe in a bench, or it
    # needs a game the sample leaves out (the fuzz auction: nine processes).
    serve_only: bool = False
    secrets: tuple[str, ...] = ()  # passwords that must appear in no outbox row
    own_secrets: tuple[str, ...] = ()  # short passwords: in none of this mail's replies
    expect: str | None = None  # the bad-mail corpus's outcome: answered | ignored | quarantined
    lines: int = 0  # fuzzed command lines packed in the mail


@dataclass
class Phase:
    name: str
    chains: list[list[Mail]]
    required: bool = False  # every chain in the deliver sample (the games the attacks need)
    timed: bool = False  # run one mail at a time and time each (cost-of-input attacks)
    before: str | None = None  # a hook bench/attack_corpus.py runs on the store first
    measure_rss: bool = False  # the serve process's peak memory before and after

    def mails(self) -> list[Mail]:
        return [m for chain in self.chains for m in chain]


# -- games, players and passwords ----------------------------------------------
class G:
    """Who is who in the corpus."""

    # A forming game that forged senders try to join.
    OPEN, OPEN_GM, OPEN_PW = "open", "gm@open.test", "OpenGm-pw1"
    FORGED_PW = "Forged-Join-pw"
    # A running Blind Auction: its players are attacked.
    AUCTION, AUCTION_GM, AUCTION_PW = "auction", "gm@auction.test", "AuctionGm-pw2"
    PLAYERS = [f"a{i}@auction.test" for i in range(7)]
    PLAYER_PW = [f"Auction-P{i}-s3cret" for i in range(7)]
    REPLAY, PRESEND, FLOODED, TAKEN_OVER, REPLACED, UNICODE = 0, 2, 3, 4, 5, 6
    TAKEOVER_PW = "GmTakeover-77"
    GM_ENTROPY = "gm-chosen-entropy-x91"
    NEWBIE, CLAIM_PW = "newbie@auction.test", "Claim3d-Seat"
    MALLORY = "mallory@evil.example"
    PRESENT_ID = "<real-bid-a2@auction.test>"
    # The master password guessed from 300 addresses; the 251st guess is right.
    GUESS, GUESS_GM, GUESS_PW, GUESSES, RIGHT_GUESS = "guess", "gm@guess.test", "GuessRight-251", 300, 251
    # The poison game and the normal game beside it.
    POISON, POISON_GM, POISON_PW = "poison", "creator@evil.example", "Poison-pw"
    THIRD_PARTY = "tp@evil.example"
    NORMAL, NORMAL_GM, NORMAL_PW = "normal", "gm@normal.test", "NormalGm-pw"
    NORMAL_PLAYERS = [f"n{i}@normal.test" for i in range(7)]
    # Names that forge lines (a game of the `random` method: START resolves it).
    NAMES, NAMES_GM, NAMES_PW = "names", "gm@names.test", "NamesGm-pw"
    FAKE_NAME = "Eve\n  Austria mallory <-- FAKE\n[/list][url=http://evil]"
    FAKE_NAME_2 = "Eve\n  Austria mallory -- FAKE"  # one the mail parser keeps (on one line)
    URL_NAME = "Eve [/list][url=http://evil]win[/url]"
    BB_NAME = "BB [/table][img]http://evil/x.png[/img]"
    ALICE, ALICE_LOOKALIKE = "Alice", "\u0410lice"  # the second A is Cyrillic
    RTL_NAME = "Bob\u202egnp.exe"
    # Passwords in mistyped commands (issue 9's three, and the masking test's).
    SPRING_GM = "gm@spring.test"
    MISTYPED = ["MyN3wSecret", "pwa", "AutumnGmPw", "Sp4ceSecret", "GoodGmPw9", "Xy-2ndWordPw"]
    # Fuzzing: a running auction whose players and master send fuzzed lines.
    FUZZ, FUZZ_GM, FUZZ_PW = "fzgame", "gm@fuzz.test", "FzGm-pw"
    FUZZ_PLAYERS = [f"fzp{i}@fuzz.test" for i in range(7)]
    FUZZ_PLAYER_PW = [f"FzP{i}-pw" for i in range(7)]


def bid(power: str, *, sep: str = ", ") -> str:
    """A valid Blind Auction list (T = 140) with 40 on `power`."""
    rest = [p for p in POWERS if p != power]
    return sep.join([f"{power} 40"] + [f"{p} {v}" for p, v in zip(rest, (30, 25, 20, 15, 6, 4))])


class _Ids:
    """Deterministic Message-IDs: <family.n.seed@attack.test>."""

    def __init__(self, seed: int) -> None:
        self.seed, self.n = seed, 0

    def __call__(self, family: str) -> str:
        self.n += 1
        return f"<{family}.{self.n}.{self.seed}@attack.test>"


def _date(minute: int, year: int = 2020) -> str:
    """A Date in the past of any run (submissions are ordered by it)."""
    return f"Sun, 01 Mar {year} {10 + minute // 60:02d}:{minute % 60:02d}:00 +0000"


def ew(text: str) -> str:
    """`text` as one RFC 2047 encoded word (base64)."""
    return "=?utf-8?b?" + base64.b64encode(text.encode("utf-8")).decode() + "?="


# -- the phases ----------------------------------------------------------------
def build(seed: int = 9, fuzz_mails: int = 300, fuzz_lines: int = 5000, lines_per_mail: int = 50) -> list[Phase]:
    ids = _Ids(seed)

    def m(family: str, name: str, sender: str | None, body: str | bytes, **kw) -> Mail:
        mail_kw = {k: kw.pop(k) for k in ("headers", "subject", "content_type", "date", "message_id") if k in kw}
        mail_kw.setdefault("message_id", ids(family))
        return Mail(family, name, raw_mail(name, body, sender=sender, **mail_kw), **kw)

    setup = Phase("setup", [], required=True)
    attacks = Phase("attacks", [])
    heavy = Phase("long lines", [], timed=True)
    post = Phase("after the poison deadline", [], before="poison-deadline")
    fuzz_lines_phase = Phase("fuzzed lines", [])
    fuzz = Phase("fuzzed mails", [])

    # tests/bad_mail: its game first, then every case on its own.
    setup.chains.append([m("setup", "setup/bad", bad_mail.GM, bad_mail.SETUP)])
    for name, raw, outcome in bad_mail.corpus():
        secrets = tuple(bad_mail.REPLY_LACKS.get(name, ()))
        attacks.chains.append([Mail("bad-mail", f"bad/{name}", raw, expect=outcome, own_secrets=secrets)])

    # The games the attacks aim at.
    setup.chains.append([m("setup", "setup/open", G.OPEN_GM, f"CREATE ?{G.OPEN} {G.OPEN_PW} blind-auction")])
    auction = [m("setup", "setup/auction", G.AUCTION_GM,
                 f"CREATE ?{G.AUCTION} {G.AUCTION_PW} blind-auction standard\nSET DEADLINE +48h")]
    auction += [m("setup", f"setup/auction-a{i}", f"Player A{i} <{p}>", f"SIGNON ?{G.AUCTION} {G.PLAYER_PW[i]}",
                  secrets=(G.PLAYER_PW[i],)) for i, p in enumerate(G.PLAYERS)]
    auction.append(m("setup", "setup/auction-start", G.AUCTION_GM, f"SIGNON M{G.AUCTION} {G.AUCTION_PW}\nSTART"))
    setup.chains.append(auction)
    setup.chains.append([m("setup", "setup/guess", G.GUESS_GM, f"CREATE ?{G.GUESS} {G.GUESS_PW} blind-auction",
                           secrets=(G.GUESS_PW,))])
    fz = [m("setup", "setup/fuzz", G.FUZZ_GM, f"CREATE ?{G.FUZZ} {G.FUZZ_PW} blind-auction\nSET DEADLINE +48h",
            serve_only=True)]
    fz += [m("setup", f"setup/fuzz-p{i}", p, f"SIGNON ?{G.FUZZ} {G.FUZZ_PLAYER_PW[i]}", serve_only=True)
           for i, p in enumerate(G.FUZZ_PLAYERS)]
    fz.append(m("setup", "setup/fuzz-start", G.FUZZ_GM, f"SIGNON M{G.FUZZ} {G.FUZZ_PW}\nSTART", serve_only=True))
    setup.chains.append(fz)

    # Critical: the poison game, beside a normal game whose mail must flow.
    poison = [m("poison", "poison/create", G.POISON_GM,
                f"CREATE ?{G.POISON} {G.POISON_PW} blind-random standard\nSET THIRDPARTY {G.THIRD_PARTY}", key=True)]
    poison += [m("poison", f"poison/throwaway{i}", f"throwaway{i}@evil.example", f"SIGNON ?{G.POISON} p{i}", key=True)
               for i in range(7)]
    poison.append(m("poison", "poison/start", G.POISON_GM,
                    f"SIGNON M{G.POISON} {G.POISON_PW}\nSET DEADLINE +1m\nSTART", key=True))
    setup.chains.append(poison)
    setup.chains.append(
        [m("setup", "setup/normal", G.NORMAL_GM, f"CREATE ?{G.NORMAL} {G.NORMAL_PW} blind-auction standard")]
        + [m("setup", f"setup/normal-n{i}", p, f"SIGNON ?{G.NORMAL} npw{i}")
           for i, p in enumerate(G.NORMAL_PLAYERS[:6])])
    post.chains.append([m("poison", "poison/normal-7th-signon", G.NORMAL_PLAYERS[6], f"SIGNON ?{G.NORMAL} npw6",
                          key=True)])
    post.chains.append([m("poison", "poison/process", G.POISON_GM, f"SIGNON M{G.POISON} {G.POISON_PW}\nPROCESS",
                          key=True)])
    post.chains.append([m("poison", "poison/list", "bystander@normal.test", "LIST", key=True)])

    # High: forged senders.
    forged = [
        ("encoded-word-newline", f"=?utf-8?q?{VICTIM}=0A?= <p3@x.org>"),
        ("address-as-display-name", f"{VICTIM} <p3@x.org>"),
        ("encoded-word-b", f"{ew(VICTIM + chr(10))} <p4@x.org>"),
        ("encoded-word-at", "=?utf-8?q?victim=40v.org?= <p5@x.org>"),
        ("quoted-angle-in-name", f'"{VICTIM} <{VICTIM}>" <p6@x.org>'),
    ]
    for name, sender in forged:
        attacks.chains.append([m("forged-from", f"forged/{name}", sender,
                                 f"SIGNON ?{G.OPEN} {G.FORGED_PW}\nLIST", key=True, secrets=(G.FORGED_PW,))])
    attacks.chains.append([Mail("forged-from", "forged/two-from-headers", raw_mail(
        "two-from", f"SIGNON ?{G.OPEN} {G.FORGED_PW}\nLIST", sender=VICTIM, message_id=ids("forged-from"),
        headers=[("From", "p7@x.org")]), key=True)])
    attacks.chains.append([m("forged-from", "forged/two-addresses", f"{VICTIM}, p8@x.org",
                             f"SIGNON ?{G.OPEN} {G.FORGED_PW}\nLIST", key=True)])

    # High: cost of input (each mail alone, timed).
    long_lines = [
        ("signon-100k-spaces", "SIGNON ?a b" + " " * 100_000 + "x"),
        ("signon-1.5mb-spaces", "SIGNON ?a b" + " " * 1_500_000 + "x"),
        ("set-password-1mb-words", "SET PASSWORD " + "a " * 500_000),
        ("one-char-2mb", "x" * 2_000_000),
        ("bids-1.2mb", "Austria " + "1," * 600_000),
        ("create-1mb-game", "CREATE ?" + "g" * 1_000_000 + " pw"),
        ("nbsp-1.4mb", "\u00a0" * 700_000 + "HELP"),
        ("list-1.2mb", "LIST " + "?a " * 400_000),
        ("signon-colon-1mb", "SIGNON: ?a " + ":" * 1_000_000),
        ("help-30000-lines", "\n".join(["HELP"] * 30_000)),
        ("list-5000-lines", "\n".join(["LIST"] * 5_000)),
        ("bid-lines-40000", f"SIGNON ?{G.AUCTION} wrong\n" + "\n".join([bid("Austria")] * 40_000)),
    ]
    for name, body in long_lines:
        heavy.chains.append([m("long-lines", f"long/{name}", f"{name}@dos.test", body, key=True)])

    # Medium: a valid command followed by Unicode white space.
    a6 = G.PLAYERS[G.UNICODE]
    chain = []
    for k, (code, ch) in enumerate(UNICODE_SPACES.items()):
        body = f"SIGNON ?{G.AUCTION} {G.PLAYER_PW[G.UNICODE]}{ch}\n{bid(POWERS[k], sep=',' + ch)}{ch}\nSIGNOFF{ch}"
        chain.append(m("unicode-space", f"unicode/bids-{code}", a6, body, date=_date(k + 1), key=True,
                       secrets=(G.PLAYER_PW[G.UNICODE],)))
    attacks.chains.append(chain)
    for code, ch in UNICODE_SPACES.items():
        game = f"uni{code[2:].lower()}"
        secret = f"UniGm-{code[2:]}-s3cret"
        body = f"CREATE ?{game} {secret}{ch}\nSET T 140{ch}\nLIST{ch}\nHELP{ch}"
        attacks.chains.append([m("unicode-space", f"unicode/create-{code}", f"uni-{code[2:].lower()}@uni.test",
                                 body, key=True, secrets=(secret,))])

    # Medium: the master password guessed from 300 addresses.
    rng = random.Random(f"{seed}:guesses")
    chain = []
    for i in range(1, G.GUESSES + 1):
        guess = G.GUESS_PW if i == G.RIGHT_GUESS else f"guess-{i:03d}-{rng.randrange(10**6):06d}"
        chain.append(m("master-guess", f"guess/{i:03d}", f"guesser-{i:03d}@evil-guess.example",
                       f"SIGNON M{G.GUESS} {guess}\nSET DEADLINE +1h", key=i <= 5 or i == G.RIGHT_GUESS,
                       secrets=(guess,)))
    attacks.chains.append(chain)

    # Medium: 60 forged HELP "from" a player, then their real bid.
    a3 = G.PLAYERS[G.FLOODED]
    chain = [m("forged-flood", f"flood/help-{i:02d}", a3, "HELP") for i in range(60)]
    chain.append(m("forged-flood", "flood/real-bid", a3,
                   f"SIGNON ?{G.AUCTION} {G.PLAYER_PW[G.FLOODED]}\n{bid('Germany')}", key=True,
                   secrets=(G.PLAYER_PW[G.FLOODED],)))
    attacks.chains.append(chain)

    # Medium: backscatter through Reply-To.
    spam = "\n".join(["Dear friend, BUY CHEAP PILLS NOW at http://spam.example/"] * 40)
    for i in range(300):
        attacks.chains.append([m("backscatter", f"spam/{i:03d}", f"spammer-{i % 10}@spam.example", spam,
                                 headers=[("Reply-To", VICTIM)], key=i < 2)])

    # Medium: passwords in mistyped commands.
    s = G.MISTYPED
    mistyped = (f"CREATE ?spring {s[4]}\nSET PASSWORD: {s[0]}\nSIGNON: ?spring {s[1]}\nCREATE: ?autumn {s[2]}\n"
                f"signon ?spring   {s[3]} extra\nSet Password = {s[5]} two")
    attacks.chains.append([m("passwords-in-clear", "passwords/mistyped", G.SPRING_GM, mistyped,
                             subject=f"SIGNON ?spring {s[3]}", key=True,
                             secrets=tuple(x for x in s if len(x) >= 8), own_secrets=(s[1],))])
    attacks.chains.append([m("passwords-in-clear", "passwords/mistyped-player", "pl@spring.test",
                             f"SIGNON: ?spring {s[3]}\nSIGNON ?spring:{s[5]} x\nSETPASSWORD {s[0]}", key=True,
                             secrets=(s[3], s[5], s[0]))])

    # Medium: names that forge lines.
    names = [m("names", "names/create", G.NAMES_GM, f"CREATE ?{G.NAMES} {G.NAMES_PW} random", key=True)]
    # Seven seats: the look-alike Alice is refused where the judge is fixed,
    # and the last filler takes the seat then (else it is refused: full).
    for label, display, address in [("fake-lines", G.FAKE_NAME, "eve@names.test"),
                                    ("fake-lines-2", G.FAKE_NAME_2, "eve2@names.test"),
                                    ("url", G.URL_NAME, "url@names.test"),
                                    ("alice", G.ALICE, "alice@names.test"),
                                    ("cyrillic-alice", G.ALICE_LOOKALIKE, "alice2@names.test"),
                                    ("rtl-override", G.RTL_NAME, "bob@names.test"),
                                    ("bbcode", G.BB_NAME, "bb@names.test"),
                                    ("filler", "Filler One", "f1@names.test")]:
        names.append(m("names", f"names/{label}", f"{ew(display)} <{address}>", f"SIGNON ?{G.NAMES} nm-{label}",
                       key=True))
    names.append(m("names", "names/start", G.NAMES_GM, f"SIGNON M{G.NAMES} {G.NAMES_PW}\nSTART", key=True))
    names.append(m("names", "names/list", "reader@names.test", f"LIST ?{G.NAMES}", key=True))
    attacks.chains.append(names)

    # Medium: the master takes over a player with FOR.
    a4 = G.PLAYERS[G.TAKEN_OVER]
    attacks.chains.append([m("gm-takeover", "takeover/for-set-password", G.AUCTION_GM,
                             f"SIGNON M{G.AUCTION} {G.AUCTION_PW}\nFOR {a4}\nSET PASSWORD {G.TAKEOVER_PW}\n"
                             f"ENTROPY {G.GM_ENTROPY}\n{bid('Italy')}", key=True, secrets=(G.TAKEOVER_PW,))])
    post.chains.append([m("gm-takeover", "takeover/sign-on-as-player", a4,
                          f"SIGNON ?{G.AUCTION} {G.TAKEOVER_PW}\nLIST ?{G.AUCTION}", key=True)])

    # Medium: a replacement's seat claimed first by a forged SIGNON.
    attacks.chains.append([m("replacement-claim", "replace/gm-replaces", G.AUCTION_GM,
                             f"SIGNON M{G.AUCTION} {G.AUCTION_PW}\nREPLACE {G.PLAYERS[G.REPLACED]} Newbie <{G.NEWBIE}>",
                             key=True)])
    post.chains.append([m("replacement-claim", "replace/forged-claim", G.NEWBIE,
                          f"SIGNON ?{G.AUCTION} {G.CLAIM_PW}\nNO PREFERENCE", key=True, secrets=(G.CLAIM_PW,))])

    # Medium: a replayed mail with a new Message-ID; a pre-sent Message-ID.
    a0, pw0 = G.PLAYERS[G.REPLAY], G.PLAYER_PW[G.REPLAY]
    first = raw_mail("replay", f"SIGNON ?{G.AUCTION} {pw0}\n{bid('Austria')}", sender=a0,
                     date=_date(0, 2020), message_id=ids("replay"))
    second = m("replay", "replay/later-list", a0, f"SIGNON ?{G.AUCTION} {pw0}\n{bid('England')}",
               date=_date(60, 2020), key=True)
    replayed = re.sub(rb"Message-ID: <[^>]*>", b"Message-ID: <replayed.%d@evil.example>" % seed, first)
    attacks.chains.append([Mail("replay", "replay/first-list", first, key=True), second,
                           Mail("replay", "replay/replayed-first", replayed, key=True)])
    a2 = G.PLAYERS[G.PRESEND]
    attacks.chains.append([
        m("presend-message-id", "presend/stranger", G.MALLORY, "HELP", message_id=G.PRESENT_ID, key=True),
        m("presend-message-id", "presend/real-bid", a2,
          f"SIGNON ?{G.AUCTION} {G.PLAYER_PW[G.PRESEND]}\n{bid('France')}", message_id=G.PRESENT_ID, key=True)])

    # Low: MIME 1,000 deep; a 50 MB mail (serve only: its own phase, memory measured).
    inner = b"Content-Type: text/plain\r\n\r\nLIST"
    attacks.chains.append([Mail("mime-depth", "mime/multipart-1000", raw_mail(
        "mime1000", _nested(1000, inner).split(CRLF + CRLF, 1)[1], sender="mime1000@deep.test",
        content_type='multipart/mixed; boundary="n999"', message_id=ids("mime")), key=True)])
    attacks.chains.append([Mail("mime-depth", "mime/rfc822-1000", raw_mail(
        "rfc822-1000", _rfc822_nested(1000), sender="rfc822@deep.test", content_type="message/rfc822",
        message_id=ids("mime")), key=True)])
    huge = Phase("50 MB mail", [[Mail("huge-mail", "huge/50mb", big_mail(50_000_000, "big50@huge.test",
                                                                         ids("huge")), serve_only=True)]],
                 measure_rss=True)

    # Fuzzed mails and fuzzed command lines.
    rng = random.Random(f"{seed}:fuzz-mails")
    for i in range(fuzz_mails):
        raw, how = fuzzed_mail(rng, i, seed)
        fuzz.chains.append([Mail("fuzz-mail", f"fuzz/{i:04d}-{how}", raw)])
    rng = random.Random(f"{seed}:fuzz-lines")
    lines = [fuzz_line(rng) for _ in range(fuzz_lines)]
    for k in range(0, len(lines), lines_per_mail):
        pack = lines[k:k + lines_per_mail]
        i = k // lines_per_mail
        who = i % 3
        if who == 0:  # the master of a fresh game of its own: master commands run
            sender, head = f"fzgm{i}@fuzz.test", f"CREATE ?fzg{i} FzG{i}-pw blind-auction\n"
        elif who == 1:  # a player of the running fuzz auction: bids and player commands run
            p = i % 7
            sender, head = G.FUZZ_PLAYERS[p], f"SIGNON ?{G.FUZZ} {G.FUZZ_PLAYER_PW[p]}\n"
        else:  # a stranger
            sender, head = f"fzs{i}@fuzz.test", ""
        body = (head + "\n".join(pack)).replace("\n", "\r\n").encode("utf-8", "surrogatepass")
        raw = raw_mail(f"fuzzlines{i}", body, sender=sender, message_id=ids("fuzz-lines"),
                       headers=[("Content-Transfer-Encoding", "8bit")])
        fuzz_lines_phase.chains.append([Mail("fuzz-lines", f"fuzzlines/{i:04d}", raw, lines=len(pack),
                                             serve_only=who == 1)])

    # The poison game's deadline early, the mails that may hold the judge up
    # longest at the end: a judge stuck on one hides least of the rest.
    return [setup, huge, attacks, post, heavy, fuzz_lines_phase, fuzz]


def big_mail(size: int, sender: str, message_id: str) -> bytes:
    head = raw_mail("big", "HELP\r\n", sender=sender, message_id=message_id, subject="a big attachment",
                    content_type='multipart/mixed; boundary="big"').split(CRLF + CRLF, 1)[0] + CRLF + CRLF
    head += b"--big\r\nContent-Type: text/plain\r\n\r\nHELP\r\n--big\r\nContent-Type: application/octet-stream\r\n" \
            b"Content-Transfer-Encoding: base64\r\n\r\n"
    line = b"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAx\r\n"
    return head + line * ((size - len(head)) // len(line) + 1) + b"--big--\r\n"


def _rfc822_nested(depth: int) -> bytes:
    body = b"From: inner@deep.test\r\nContent-Type: text/plain\r\n\r\nLIST\r\n"
    for level in range(depth - 1):
        body = (f"From: level{level}@deep.test\r\nSubject: fwd {level}\r\n".encode()
                + b"Content-Type: message/rfc822\r\n\r\n" + body)
    return body


# -- fuzzed mails ----------------------------------------------------------------
_CHARSETS = ["utf-8", "us-ascii", "iso-8859-1", "windows-1252", "utf-16", "utf-16-le", "utf-7", "shift_jis",
             "iso-2022-jp", "koi8-r", "x-unknown", "", "utf8\"; x=\"", "base64", "utf-32", "gb18030", "\xff"]
_CTES = ["base64", "quoted-printable", "7bit", "8bit", "binary", "x-uuencode", "BASE64 ", "qp", "", "=?x?="]
_CTYPES = ['multipart/mixed; boundary="zz"', "multipart/alternative", "message/rfc822", "text/html; charset=utf-8",
           "application/octet-stream", "text/plain; format=flowed; delsp=yes", "text/", "",
           "multipart/mixed; boundary=",
           'multipart/report; report-type=delivery-status; boundary="r"', "message/partial; id=1; number=2",
           "text/plain; charset*=utf-8''%ff%fe", "multipart/signed; boundary=\"s\"; protocol=\"x\"",
           "message/delivery-status", "text/calendar; method=REQUEST", "image/png"]
_JUNK = [b"\x00", b"\r", b"\n", b"\r\n\r\n", b"=?", b"?=", b"--", b"\xff", b"\xc3", b":", b";", b'"', b"<", b">",
         b"=\r\n", b"\x1b[2J", b"\xe2\x80\xae", b"\xed\xa0\x80", b"\t", b" ", b"--zz\r\n", b"\r\n--zz--\r\n"]
_BODIES = ["HELP", "LIST", f"LIST ?{G.FUZZ}", "SIGNOFF", "HELP\nLIST ?bad\nSIGNOFF\n-- \nsig", bid("Austria"),
           "NO PREFERENCE", "ENTROPY dice", "Hello judge, please tell me how to join.", "CREATE ?fzc{i} FzC{i}-pw",
           "SIGNON ?bad FzJoin{i}\nLIST ?bad", "> quoted\nLIST\n\n\n"]


def base_mail(rng: random.Random, i: int, seed: int) -> bytes:
    """A valid mail of one of a few shapes, to be mutated."""
    body = rng.choice(_BODIES).format(i=i)
    sender = rng.choice([f"fuzz-{i}@fuzz.test", f"Fuzz {i} <fuzz-{i}@fuzz.test>",
                         f'"Fuzz, {i}" <fuzz-{i}@fuzz.test>', f"{ew(f'Füzz {i}')} <fuzz-{i}@fuzz.test>"])
    kw = dict(sender=sender, message_id=f"<fuzz-{seed}-{i}@fuzz.test>",
              subject=rng.choice(["commands", "Re: commands", ew("ümlaut subject"), "", "x" * 200]))
    shape = rng.randrange(7)
    if shape == 0:
        return raw_mail(f"f{i}", body, **kw)
    if shape == 1:
        qp = re.sub(rb"[=\x80-\xff]", lambda x: b"=%02X" % x.group()[0], body.encode("utf-8"))
        return raw_mail(f"f{i}", qp.replace(b"\n", CRLF), headers=[("Content-Transfer-Encoding", "quoted-printable")],
                        **kw)
    if shape == 2:
        enc = base64.encodebytes(body.encode("utf-8")).replace(b"\n", CRLF)
        return raw_mail(f"f{i}", enc, headers=[("Content-Transfer-Encoding", "base64")], **kw)
    if shape == 3:
        return bad_mail.multipart(f"f{i}", [("text/plain; charset=utf-8", body),
                                            ("text/html; charset=utf-8", f"<p>{body}</p>")], subtype="alternative",
                                  boundary="zz", **kw)
    if shape == 4:
        return raw_mail(f"f{i}", body.encode("latin-1", "replace").replace(b"\n", CRLF),
                        content_type="text/plain; charset=iso-8859-1", **kw)
    if shape == 5:
        pdf = ("application/pdf\r\nContent-Transfer-Encoding: base64", base64.b64encode(rng.randbytes(300)))
        return bad_mail.multipart(f"f{i}", [("text/plain", body), pdf], **kw)
    return raw_mail(f"f{i}", f"<html><body>{body}</body></html>", content_type="text/html; charset=utf-8", **kw)


def _split(raw: bytes) -> tuple[bytes, bytes, bytes]:
    for sep in (b"\r\n\r\n", b"\n\n"):
        if sep in raw:
            head, body = raw.split(sep, 1)
            return head, sep, body
    return raw, b"", b""


def _set_header(raw: bytes, name: bytes, value: bytes) -> bytes:
    head, sep, body = _split(raw)
    pattern = re.compile(rb"(?im)^" + re.escape(name) + rb":[^\r\n]*(\r?\n[ \t][^\r\n]*)*")
    if pattern.search(head):
        head = pattern.sub(lambda _: name + b": " + value, head, count=1)
    else:
        head += b"\r\n" + name + b": " + value
    return head + (sep or b"\r\n\r\n") + body


def mutate(rng: random.Random, raw: bytes) -> tuple[bytes, str]:
    """One random mutation of a mail's bytes, and its name."""
    kind = rng.choice(["flip", "insert", "truncate", "charset", "cte", "ctype", "dup-header", "drop-header",
                       "encoded-word", "line-ends", "fold", "long-header", "reencode", "wrap", "nest", "no-blank",
                       "8bit-header", "boundary"])
    head, sep, body = _split(raw)
    if kind == "flip" and raw:
        b = bytearray(raw)
        for _ in range(rng.randint(1, 12)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b), kind
    if kind == "insert":
        at = rng.randrange(len(raw) + 1)
        return raw[:at] + rng.choice(_JUNK) * rng.randint(1, 3) + raw[at:], kind
    if kind == "truncate":
        return raw[:rng.randrange(len(raw) + 1)], kind
    if kind == "charset":
        cs = rng.choice(_CHARSETS).encode("latin-1")
        if b"charset=" in raw:
            return re.sub(rb"charset=[^;\r\n]*", b"charset=" + cs, raw, count=1), kind
        return _set_header(raw, b"Content-Type", b"text/plain; charset=" + cs), kind
    if kind == "cte":
        return _set_header(raw, b"Content-Transfer-Encoding", rng.choice(_CTES).encode()), kind
    if kind == "ctype":
        return _set_header(raw, b"Content-Type", rng.choice(_CTYPES).encode("latin-1")), kind
    if kind in ("dup-header", "drop-header"):
        lines = head.split(b"\r\n")
        k = rng.randrange(len(lines))
        if kind == "dup-header":
            lines.insert(rng.randrange(len(lines) + 1), lines[k])
        else:
            del lines[k]
        return b"\r\n".join(lines) + sep + body, kind
    if kind == "encoded-word":
        cs = rng.choice(["utf-8", "iso-8859-1", "x-bogus", "utf-16", ""])
        enc = rng.choice(["B", "Q", "b", "X"])
        payload = rng.choice([base64.b64encode(rng.randbytes(rng.randint(0, 40))).decode(), "=FF=FE=00", "a_b?c",
                              "!!!", "", "victim=40v.org=0A", "=?nested?="])
        word = f"=?{cs}?{enc}?{payload}?=".encode()
        target = rng.choice([b"Subject", b"From", b"To", b"X-Word"])
        if target == b"From":
            addr = re.search(rb"fuzz-\d+@fuzz\.test", raw)
            value = word + b" <" + (addr.group() if addr else b"x@fuzz.test") + b">"
        else:
            value = word + b" " + word
        return _set_header(raw, target, value), kind
    if kind == "line-ends":
        end = rng.choice([b"\n", b"\r", b"\n\r", b"\r\r\n"])
        return raw.replace(b"\r\n", end), kind
    if kind == "fold":
        h = bytearray(head)
        for _ in range(rng.randint(1, 8)):
            at = rng.randrange(len(h) + 1)
            h[at:at] = rng.choice([b"\r\n\t", b"\r\n ", b"\r\n", b"\r\n\r\n "])
        return bytes(h) + sep + body, kind
    if kind == "long-header":
        return _set_header(raw, b"X-Long", rng.choice([b"y", b"=?utf-8?q?a?= ", b"\t", b", <a@b>"])
                           * rng.randint(1000, 60_000)), kind
    if kind == "reencode":
        cs = rng.choice(["utf-16", "utf-32", "cp1252", "koi8-r", "utf-7"])
        try:
            text = body.decode("utf-8", "replace").encode(cs, "replace")
        except LookupError:
            text = body
        cte = rng.choice(["base64", "quoted-printable", "8bit"])
        data = base64.encodebytes(text) if cte == "base64" else text
        raw = _set_header(head + sep + data, b"Content-Type", f"text/plain; charset={cs}".encode())
        return _set_header(raw, b"Content-Transfer-Encoding", cte.encode()), kind
    if kind in ("wrap", "nest"):
        depth = 1 if kind == "wrap" else rng.randint(2, 80)
        inner = b"Content-Type: text/plain; charset=utf-8\r\n\r\n" + body
        for level in range(depth):
            bnd = rng.choice([f"w{level}", "", "a" * 80, "-- --", "w"]).encode()
            close = rng.choice([b"--" + bnd + b"--", b"", b"--" + bnd])
            inner = (b'Content-Type: multipart/mixed; boundary="' + bnd + b'"\r\n\r\n--' + bnd + b"\r\n" + inner
                     + b"\r\n" + close)
        ctype, _, rest = inner.partition(b"\r\n\r\n")
        return _set_header(head + sep + rest, b"Content-Type", ctype.split(b": ", 1)[1]), kind
    if kind == "no-blank":
        return head + b"\r\n" + body, kind
    if kind == "8bit-header":
        name = bytes(rng.choice(b"XYZ\x80\xff\xe9:") for _ in range(rng.randint(1, 8)))
        return _set_header(raw, name, rng.randbytes(rng.randint(0, 60)).replace(b"\n", b" ")), kind
    # boundary garbage
    return raw.replace(b"--zz", rng.choice([b"--zz--", b"--z", b"", b"--zz\x00", b"-- zz"])), kind


def fuzzed_mail(rng: random.Random, i: int, seed: int) -> tuple[bytes, str]:
    raw = base_mail(rng, i, seed)
    hows = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        raw, how = mutate(rng, raw)
        hows.append(how)
    return raw, "+".join(hows)


# -- fuzzed command lines --------------------------------------------------------
def keywords() -> list[str]:
    """Every keyword of the command grammar (with the methods' grammars that extend it)."""
    from judge.methods import METHODS

    names = ["commands.lark", *(METHODS[m].GRAMMAR for m in METHODS if METHODS[m].GRAMMAR)]
    text = "\n".join((ROOT / "grammars" / name).read_text(encoding="utf-8") for name in names)
    return sorted(set(re.findall(r'"([A-Za-z]+)"i', text)))


_KEYWORDS = keywords()
_RARE = {"SIGNON", "CREATE", "SIGNOFF"}  # a failed SIGNON ends the mail; keep them rare
_SPACES = [" ", "\t", "\u00a0", "\u3000", "\u2028", "\u2029", "\u0085", "\u2000", "\u2003", "\u200a", "\u202f",
           "\u205f", "\u1680", "\ufeff", "\x0b", "\x0c"]
_CONTROLS = [chr(c) for c in range(32) if c not in (10, 13)] + ["\x7f", "\u200b", "\u200e", "\u202e", "\u00ad",
                                                               "\ud800", "\udfff", "\U000f0000", "\u2066", "\r"]
_ODD = ["\u0410", "\u03b1", "\U0001F600", "日本", "\u0301", "\u200d", "ß", "İ", "ﬁ", "Ⅻ", "①", "٣", "\uff21", "\uffff"]
_PUNCT = ":=,;?[]*<>@/\\'\"-.()!#$%&|~^`{}+"


def _case(rng: random.Random, word: str) -> str:
    how = rng.randrange(4)
    if how == 0:
        return word.upper()
    if how == 1:
        return word.lower()
    if how == 2:
        return word.capitalize()
    return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in word)


def _token(rng: random.Random) -> str:
    kind = rng.choices(["kw", "game", "num", "power", "punct", "email", "word", "when", "odd", "ctl"],
                       [6, 1.5, 2, 2, 2, 0.5, 1, 0.5, 0.7, 0.7])[0]
    if kind == "kw":
        word = rng.choice(_KEYWORDS)
        while word.upper() in _RARE and rng.random() < 0.8:
            word = rng.choice(_KEYWORDS)
        return _case(rng, word)
    if kind == "game":
        return rng.choice(["?fz1", "?fz2", "?fzx", "?", "?a.b-c", "??", "?" + "g" * rng.randint(1, 20), "Mfz1",
                           "Mfz2", "?bad", "?FZ1", "M", "¿fz1"])
    if kind == "num":
        return rng.choice([str(rng.randint(0, 300)), f"+{rng.randint(0, 99)}", f"-{rng.randint(0, 9)}", "4.5", "1e9",
                           "007", "9" * rng.randint(10, 40), "T/U", "٤٠", "0x10"])
    if kind == "power":
        p = rng.choice(POWERS)
        return rng.choice([p, p[0], p.lower(), p[:3], p.upper(), p + ":", p[0] + "="])
    if kind == "punct":
        return "".join(rng.choice(_PUNCT) for _ in range(rng.randint(1, 3)))
    if kind == "email":
        return rng.choice(["bob@example.org", "x@y", "@", "a@b@c", "<fzp1@fuzz.test>", "Olga <olga@x.net>"])
    if kind == "word":
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 10)))
    if kind == "when":
        return rng.choice(["+48h", "+1m", "2020-01-01", "12:00", "+3d", "tomorrow", "+99999999h"])
    if kind == "odd":
        return rng.choice(_ODD)
    return rng.choice(_CONTROLS)


def fuzz_line(rng: random.Random) -> str:
    """One random line over the grammar's alphabet, with Unicode spaces and
    controls. Never SET PASSWORD (it would change the password of the fuzz
    game's player and lock the next mails out) and never a bare SIGNOFF."""
    while True:
        if rng.random() < 0.01:
            line = "".join(_token(rng) + " " for _ in range(rng.randint(200, 600)))  # past max_line_length
        else:
            parts = [rng.choice(["", "", "", " ", rng.choice(_SPACES)])]
            for n in range(rng.randint(1, 10)):
                if n:
                    parts.append(rng.choices([" ", "", "  ", rng.choice(_SPACES), ", ", ":", "="],
                                             [8, 1, 1, 3, 1, 1, 1])[0])
                parts.append(_token(rng))
            if rng.random() < 0.2:
                parts.append(rng.choice(_SPACES))
            line = "".join(parts)
        line = line.replace("\n", " ")
        folded = line.casefold()
        if "set" in folded and "password" in folded.split("set", 1)[1]:
            continue
        if folded.strip(" \t\u00a0\u3000") in ("signoff", "--", "-- "):
            continue
        return line
