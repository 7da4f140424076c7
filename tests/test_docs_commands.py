"""Every example mail of docs/commands.md runs through a real judge, and the
reply excerpt shown after it is what the judge answers (issue 11).

Each ```mail block has an HTML comment on the lines before it (invisible on
GitHub) that says who sends it and to which judge:

    <!-- from: Alice <alice@example.org>; given: spring-6 -->

- `from`: the mail's From: header (the name in it is the player's name);
- `given`: one of STATES below, built once and copied for each example; or
  `previous`: the same judge as the example mail before it (a story, like
  the walk-through);
- `at` (optional): the judge's clock is moved to this time first, and the
  judge makes one pass (a deadline that passed fires);
- `excerpt` (optional): `mail to ADDRESS`: the ```reply block after the
  mail is a mail the judge sent to ADDRESS because of it, not the reply;
- `not run` instead of `given`: why this judge cannot run the mail (the
  blinding protocol's lines go to the third party, another judge); it
  still parses (tests/test_grammar.py).

The ```reply block right after a mail block is its excerpt: each of its
lines is a line of the real reply, in order and one after the other; a line
that is just `...` stands for any number of lines cut, and `...` inside a
line for any text cut. What differs from run to run is matched as such: a
run of 8 or more hexadecimal digits (a seed, a commitment) stands for any
hexadecimal digits of that length, and the one-time token of the doc
(TOKEN_PLACEHOLDER) for the token the judge mailed the sender. A mail block
without an excerpt must be done without a refusal (unless marked
<!-- error example -->, see tests/test_grammar.py).

Runs on SQLite only: tests/test_docs_examples.py and the rest of the suite
run the same code on PostgreSQL."""

from __future__ import annotations

import email
import email.policy
import re
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import make_msgid
from pathlib import Path
from typing import Callable

import pytest

from tests.harness import Harness

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "commands.md"
_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)
ERROR_MARKER = "error example"
TOKEN_PLACEHOLDER = "K7QX2MRW9T"
_TOKEN_IN_MAIL = re.compile(r"^SIGNON \?\S+ ([A-Z0-9]{10})$", re.M)
_TIME = "%a %d %b %Y %H:%M UTC"
START = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)

# The judge of the page: its variant `classical` is the one docs/commands.md
# shows in its configuration example; CREATE's default method is the real one.
JUDGE_OPTIONS = {"default_method": "preference"}
SECTIONS = {"variants": {"classical": {"powers": ["Carthage", "Egypt", "Greece", "Persia", "Rome"]}}}


# --------------------------------------------------------------------------
# The states the examples start from: each built once, by mail, from its parent
# --------------------------------------------------------------------------

def who(name: str, domain: str = "example.org") -> str:
    return f"{name} <{name.lower()}@{domain}>"


GM = "gm@example.org"
SPRING = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace"]
AUTUMN = ["Hank", "Ivy", "Jack", "Kate", "Liam", "Mia", "Noah"]
WINTER = ["Anna", "Ben", "Chloe", "Dan", "Eva", "Finn", "Gus"]
BG = ["Pia", "Quinn", "Rosa", "Sam", "Tess", "Uma", "Vic"]


def _join(h: Harness, game: str, names: list[str]) -> None:
    for name in names:
        h.mail(who(name), f"SIGNON ?{game} {name.lower()}pw")


def _spring_full(h: Harness) -> None:
    _join(h, "spring", SPRING[6:])
    # Alice's new password, as in the example of SET PASSWORD; the bid lines'
    # examples sign on with it.
    h.mail(who("Alice"), "SIGNON ?spring alicepw\nSET PASSWORD n3wSecret")
    # The deadline of SET DEADLINE's example (its last line counts).
    h.mail(GM, "SIGNON Mspring gmsecret\nSET DEADLINE +48h")


def _spring_bids_but_grace(h: Harness) -> None:
    for name in SPRING[:6]:
        pw = "n3wSecret" if name == "Alice" else f"{name.lower()}pw"
        h.mail(who(name), f"SIGNON ?spring {pw}\nA 40, E 30, F 25, G 20, I 15, R 6, T 4")


def _at(when: str) -> Callable[[Harness], None]:
    def move(h: Harness) -> None:
        h.clock.set(datetime.strptime(when, _TIME).replace(tzinfo=timezone.utc))
        h.run()
    return move


def _autumn_bidding(h: Harness) -> None:
    h.mail(GM, "CREATE ?autumn gmsecret blind-auction")
    _join(h, "autumn", AUTUMN)
    h.mail(GM, "SIGNON Mautumn gmsecret\nSET DEADLINE 2026-03-06 12:00 UTC\nSTART")


def _autumn_bids_but_hank_and_ivy(h: Harness) -> None:
    # Each wins the power of their 70; Olga, Ivy's replacement, gets Austria.
    for name, power in zip(AUTUMN[2:], ["Turkey", "France", "Germany", "Russia", "England"]):
        others = [p for p in ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"] if p != power]
        bids = ", ".join(f"{p} {b}" for p, b in zip(others, [20, 15, 12, 10, 8, 5]))
        h.mail(who(name), f"SIGNON ?autumn {name.lower()}pw\n{power} 70, {bids}")


def _jack_locked(h: Harness) -> None:
    # Someone tries Jack's password 10 times, waiting out each back-off.
    for k in range(10):
        h.mail(who("Jack"), f"SIGNON ?autumn guess{k}")
        h.clock.advance(seconds=60 * 2 ** k)


def _autumn_resolved(h: Harness) -> None:
    # The story of REPLACE's examples, then the master's PROCESS.
    h.mail(GM, "SIGNON Mautumn gmsecret\nEJECT hank@example.org\nREPLACE Ivy WITH olga@example.net")
    token = _token_for(h, "olga@example.net")
    h.mail(who("Olga", "example.net"), f"SIGNON ?autumn {token}\nSET PASSWORD olgapw\n"
                                        "Austria 30, England 25, France 20, Germany 15, Italy 10, Russia 5, Turkey 1")
    h.mail(GM, "SIGNON Mautumn gmsecret\nPROCESS")


def _lists_forming(h: Harness) -> None:
    h.mail(GM, "CREATE ?lists gmpass preference\nSET PRFBOTH")
    h.mail(who("Anna"), "SIGNON ?lists annapw\nSET PREFERENCE E[FGR][TAI]")


def _bg_started(h: Harness) -> None:
    h.mail(GM, "CREATE ?bg gmpass blind-random\nSET THIRDPARTY tp-judge@other.example")
    _join(h, "bg", BG)
    h.mail(GM, "SIGNON Mbg gmpass\nSTART")


def _winter_full(h: Harness) -> None:
    h.mail("Wanda <wanda@example.org>", "CREATE ?winter w1nterGM blind-auction standard")
    for name in WINTER:
        h.mail(who(name), f"SIGNON ?winter {name.lower()}-pw")


@dataclass(frozen=True)
class State:
    parent: str | None
    build: Callable[[Harness], None]
    what: str


STATES: dict[str, State] = {
    "nothing": State(None, lambda h: None, "no game; Sun 01 Mar 2026 12:00 UTC"),
    "spring-forming": State("nothing", lambda h: h.mail(GM, "CREATE ?spring gmsecret blind-auction"),
                            "?spring, a Blind Auction of gm@example.org (master password gmsecret), no player"),
    "spring-6": State("spring-forming", lambda h: _join(h, "spring", SPRING[:6]),
                      "Alice, Bob, Carol, Dave, Erin and Frank joined (passwords alicepw, bobpw...)"),
    "spring-full": State("spring-6", _spring_full,
                         "Grace joined too; Alice's password is n3wSecret; deadline Tue 03 Mar 2026 12:00 UTC"),
    "spring-bidding": State("spring-full", lambda h: h.mail(GM, "SIGNON Mspring gmsecret\nSTART"),
                            "the auction is open until Tue 03 Mar 2026 12:00 UTC; nobody has bid"),
    "spring-grace-missing": State("spring-bidding", _spring_bids_but_grace, "everybody but Grace has bid"),
    "spring-waiting": State("spring-grace-missing", _at("Tue 03 Mar 2026 13:00 UTC"),
                            "the deadline passed without Grace's bids"),
    "spring-resolved": State("spring-waiting", lambda h: h.mail(
        GM, "SIGNON Mspring gmsecret\nNO PREFERENCE FOR grace@example.org\nPROCESS"), "the powers are assigned"),
    "autumn-bidding": State("nothing", _autumn_bidding,
                            "?autumn of gm@example.org (gmsecret), Hank to Noah, open until Fri 06 Mar 2026 12:00 UTC"),
    "autumn-jack-locked": State("autumn-bidding", _jack_locked, "Jack's password locked after 10 wrong tries"),
    "autumn-waiting": State("autumn-bidding", lambda h: (_autumn_bids_but_hank_and_ivy(h),
                                                         _at("Fri 06 Mar 2026 14:00 UTC")(h)),
                            "the deadline passed without Hank's and Ivy's bids"),
    "autumn-resolved": State("autumn-waiting", _autumn_resolved,
                             "Hank ejected, Ivy replaced by Olga, resolved with 6 players"),
    "lists-forming": State("nothing", _lists_forming,
                           "?lists, a PRFBOTH preference game of gm@example.org (gmpass); Anna sent E[FGR][TAI]"),
    "bg-started": State("nothing", _bg_started, "?bg, a blind-random game of gm@example.org (gmpass), started"),
    "winter-full": State("nothing", _winter_full, "the walk-through's ?winter with its 7 players, not started"),
}


def _token_for(h: Harness, address: str) -> str:
    """The one-time token of the newest invitation to `address` (reminders
    may have come after it)."""
    for mail in reversed(h.sent_to(address)):
        found = _TOKEN_IN_MAIL.findall(h.body(mail))
        if found:
            return found[-1]
    raise AssertionError(f"no one-time token in the mails to {address}")


_BUILT: dict[str, tuple[Path, datetime]] = {}


def _harness(base: Path, clock: datetime) -> Harness:
    h = Harness(base / "data", f"sqlite:///{base / 'judge.sqlite3'}", sections=SECTIONS, **JUDGE_OPTIONS)
    h.clock.set(clock)
    return h


def _snapshot(name: str, factory: pytest.TempPathFactory) -> tuple[Path, datetime]:
    """The state's judge (data and database) as files, built once per run."""
    if name not in _BUILT:
        state = STATES[name]
        base = factory.mktemp(name)
        if state.parent is None:
            clock = START
        else:
            parent, clock = _snapshot(state.parent, factory)
            shutil.rmtree(base)
            shutil.copytree(parent, base)
        h = _harness(base, clock)
        try:
            state.build(h)
            clock = h.clock.now()
        finally:
            h.close()
        _BUILT[name] = (base, clock)
    return _BUILT[name]


# --------------------------------------------------------------------------
# The example mails of the page
# --------------------------------------------------------------------------

@dataclass
class Example:
    line: int
    body: str
    settings: dict[str, str]
    error_example: bool
    excerpt: str | None
    excerpt_line: int | None

    def __str__(self) -> str:
        return f"docs/commands.md:{self.line}"


@dataclass
class Story:
    examples: list[Example] = field(default_factory=list)

    def __str__(self) -> str:
        return str(self.examples[0])


def _comments_before(text: str, start: int) -> list[str]:
    lines = text[:start].rstrip("\n").split("\n")
    out = []
    while lines and lines[-1].strip().startswith("<!--"):
        out.insert(0, re.fullmatch(r"\s*<!--\s*(.*?)\s*-->\s*", lines.pop()).group(1))
    return out


def examples() -> list[Example]:
    text = DOC.read_text(encoding="utf-8")
    fences = list(_FENCE.finditer(text))
    out = []
    for i, m in enumerate(fences):
        if m.group(1).strip() != "mail":
            continue
        settings, error_example = {}, False
        for comment in _comments_before(text, m.start()):
            if comment == ERROR_MARKER:
                error_example = True
                continue
            for part in comment.split(";"):
                key, _, value = part.partition(":")
                settings[key.strip()] = value.strip()
        nxt = fences[i + 1] if i + 1 < len(fences) else None
        has_excerpt = nxt is not None and nxt.group(1).strip() == "reply"
        out.append(Example(text.count("\n", 0, m.start()) + 1, m.group(2), settings, error_example,
                           nxt.group(2) if has_excerpt else None,
                           text.count("\n", 0, nxt.start()) + 1 if has_excerpt else None))
    return out


def stories() -> list[Story]:
    out: list[Story] = []
    for ex in examples():
        if "not run" in ex.settings:
            continue
        if ex.settings.get("given") == "previous" and out:
            out[-1].examples.append(ex)
        else:
            out.append(Story([ex]))
    return out


EXAMPLES = examples()


def test_every_example_mail_says_who_sends_it_and_to_which_judge():
    assert len(EXAMPLES) >= 50
    for ex in EXAMPLES:
        if "not run" in ex.settings:
            assert len(ex.settings["not run"]) >= 20, f"{ex}: `not run` needs a reason a reader understands"
            continue
        assert {"from", "given"} <= ex.settings.keys(), (
            f"{ex}: put <!-- from: Name <address>; given: STATE --> on the line before the mail block; "
            f"the states are {sorted(STATES)} or previous")
        assert ex.settings["given"] in STATES or ex.settings["given"] == "previous", (
            f"{ex}: no state {ex.settings['given']!r}; the states are {sorted(STATES)}")
        unknown = set(ex.settings) - {"from", "given", "at", "excerpt"}
        assert not unknown, f"{ex}: unknown settings {unknown}"
    assert EXAMPLES[0].settings["given"] != "previous"


def test_the_states_are_all_used():
    used = {ex.settings.get("given") for ex in EXAMPLES}
    needed = set(used)
    for name in used:
        while name in STATES and STATES[name].parent:
            name = STATES[name].parent
            needed.add(name)
    assert set(STATES) <= needed, f"states no example needs: {set(STATES) - needed}"


# --------------------------------------------------------------------------
# Matching an excerpt against a real mail
# --------------------------------------------------------------------------

def _pattern(line: str, token: str | None) -> re.Pattern:
    parts = []
    for piece in re.split(r"(\.\.\.|[0-9a-f]{8,}|" + TOKEN_PLACEHOLDER + ")", line.rstrip()):
        if piece == "...":
            parts.append(".*")
        elif piece == TOKEN_PLACEHOLDER:
            parts.append(re.escape(token) if token else "[A-Z0-9]{10}")
        elif re.fullmatch(r"[0-9a-f]{8,}", piece):
            parts.append(f"[0-9a-f]{{{len(piece)}}}")
        else:
            parts.append(re.escape(piece))
    return re.compile("".join(parts))


def mismatch(excerpt: str, text: str, token: str | None = None) -> str | None:
    """None if `excerpt` is found in `text` as the page promises; else which
    of its lines was not found where it should be."""
    lines = [line.rstrip() for line in text.split("\n")]
    segments: list[list[str]] = [[]]
    for line in excerpt.rstrip("\n").split("\n"):
        if line.strip() == "...":
            segments.append([])
        else:
            segments[-1].append(line)
    at = 0
    for segment in segments:
        if not segment:
            continue
        patterns = [_pattern(line, token) for line in segment]
        for start in range(at, len(lines) - len(segment) + 1):
            if all(p.fullmatch(lines[start + k]) for k, p in enumerate(patterns)):
                at = start + len(segment)
                break
        else:
            best = max(n for n in range(len(segment) + 1) if any(
                all(p.fullmatch(lines[s + k]) for k, p in enumerate(patterns[:n]))
                for s in range(at, len(lines) - n + 1)))
            return (f"not found in this order: {segment[best] if best < len(segment) else segment!r}"
                    f" (after {best} of its lines matched)")
    return None


def test_the_matching_of_excerpts():
    reply = "> LIST\nDone: Games:\n  ?autumn  resolved\n  ?spring  bidding\n\nseed 0123abcd99\n> SIGNOFF"
    assert mismatch("> LIST\nDone: Games:\n  ...\n  ?spring  bidding", reply) is None
    assert mismatch("Done: Games:\n  ?spring  bidding", reply) is not None  # a cut needs its ...
    assert mismatch("  ?spring  bidding\n...\n> LIST", reply) is not None  # in order
    assert mismatch("  ?autumn  ...", reply) is None
    assert mismatch("seed ffffeeee00", reply) is None
    assert mismatch("seed ffffeeee0", reply) is not None
    assert mismatch("> SIGNON ?autumn K7QX2MRW9T", "> SIGNON ?autumn ABCDEFGH23", "ABCDEFGH23") is None
    assert mismatch("> SIGNON ?autumn K7QX2MRW9T", "> SIGNON ?autumn ABCDEFGH24", "ABCDEFGH23") is not None


# --------------------------------------------------------------------------
# Running them
# --------------------------------------------------------------------------

# The page shows what the judge should answer; where it does not yet, the
# story fails as expected, and must pass (strict) once the bug is fixed. Keyed
# by the first line of the example mail.
KNOWN_BUGS: dict[str, str] = {}


def _params() -> list:
    out = []
    for story in stories():
        bugs = [KNOWN_BUGS[ex.body.split("\n", 1)[0]] for ex in story.examples
                if ex.body.split("\n", 1)[0] in KNOWN_BUGS]
        marks = [pytest.mark.xfail(strict=True, reason="; ".join(bugs))] if bugs else []
        out.append(pytest.param(story, marks=marks, id=str(story)))
    return out


def test_the_known_bugs_are_examples_of_the_page():
    firsts = {ex.body.split("\n", 1)[0] for ex in EXAMPLES}
    assert set(KNOWN_BUGS) <= firsts


@pytest.mark.parametrize("story", _params())
def test_an_example_mail_gets_the_reply_the_page_shows(story, tmp_path, tmp_path_factory):
    first = story.examples[0]
    base, clock = _snapshot(first.settings["given"], tmp_path_factory)
    shutil.copytree(base, tmp_path / "judge")
    h = _harness(tmp_path / "judge", clock)
    try:
        for ex in story.examples:
            if "at" in ex.settings:
                when = datetime.strptime(ex.settings["at"], _TIME).replace(tzinfo=timezone.utc)
                assert when >= h.clock.now(), f"{ex}: `at` goes back in time"
                _at(ex.settings["at"])(h)
            sender = ex.settings["from"]
            address = email.utils.parseaddr(sender)[1]
            token = None
            body = ex.body
            if TOKEN_PLACEHOLDER in body:
                token = _token_for(h, address)
                body = body.replace(TOKEN_PLACEHOLDER, token)
            seen = {str(m["Message-ID"]) for m in h.sent()}
            mid = make_msgid(domain="players.test")
            h.mail(sender, body, message_id=mid)
            new = [m for m in h.sent() if str(m["Message-ID"]) not in seen]
            replies = [m for m in new if str(m["In-Reply-To"]) == mid]
            assert len(replies) == 1, f"{ex}: {len(replies)} replies"
            reply = h.body(replies[0])
            if ex.excerpt is None:
                if not ex.error_example:
                    assert "Rejected:" not in reply and "Not done." not in reply, f"{ex}: refused:\n{reply}"
                continue
            target = ex.settings.get("excerpt")
            if target:
                to = re.fullmatch(r"mail to (\S+@\S+)", target)
                assert to, f"{ex}: excerpt: mail to ADDRESS"
                texts = [h.body(m) for m in new if to.group(1).lower() in str(m["To"]).lower() and m not in replies]
                assert texts, f"{ex}: no mail to {to.group(1)}"
            else:
                texts = [reply]
            problems = [mismatch(ex.excerpt, text, token) for text in texts]
            if all(problems):
                pytest.fail(f"{ex}: the reply excerpt at docs/commands.md:{ex.excerpt_line} is not what the "
                            f"judge sends: {problems[0]}\n--- the judge's mail:\n" + "\n---\n".join(texts))
    finally:
        h.close()
