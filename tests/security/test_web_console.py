"""The web console's defences (issue 16): no page or action without a
moderator's session, no action without the session's CSRF token, login
guessing limited per account and per address, hostile names and mails shown as text, and no
password of any mail on any console page."""

from __future__ import annotations

import base64
import json
import re
from datetime import datetime, timezone
from email.message import EmailMessage
from email.utils import format_datetime

import pytest
from itsdangerous import TimestampSigner
from sqlalchemy import select, update

from judge import commands
from judge.store.models import Game, InboundMessage, OutboxMessage, Player
from judge.syntax import nodes
from judge.web import console
from judge.web.auth import LoginLimiter
from tests.harness import JUDGE
from tests.web.console_helpers import MOD, MOD_PASSWORD, add_moderator, client, csrf_of, log_in, make_harness
from tests.web.test_console_pages import _fail_sending

PARAMS = {"name": "vienna", "mail_id": "1", "row_id": "1"}


def _urls() -> list[tuple[str, str]]:
    """Every (method, path) of the console, its parameters filled in."""
    out = []
    for route in console.routes():
        path = "/console" + re.sub(r"\{(\w+)(?::\w+)?\}", lambda m: PARAMS[m.group(1)], route.path)
        for method in sorted(route.methods - {"HEAD"}):
            out.append((method, path))
    return out


@pytest.fixture
def quarantined_and_failed(harness, monkeypatch):
    """A game, a quarantined mail and a failed outbox row: what the actions act on."""
    harness.mail("gm@example.test", "CREATE ?vienna gmpw")

    def broken(ctx, node):
        raise RuntimeError("boom")

    with monkeypatch.context() as m:
        m.setitem(commands.HANDLERS, nodes.Help, broken)
        harness.mail("ann@example.test", "HELP")
    _fail_sending(harness)
    harness.mail("bob@example.test", "LIST")
    return harness


def _state(h) -> tuple:
    with h.judge.sessions() as s:
        return (tuple(s.execute(select(InboundMessage.id, InboundMessage.status).order_by(InboundMessage.id))),
                tuple(s.execute(select(OutboxMessage.id, OutboxMessage.status, OutboxMessage.attempts)
                                .order_by(OutboxMessage.id))))


def test_every_console_url_is_refused_without_a_session(quarantined_and_failed):
    h = quarantined_and_failed
    add_moderator(h)
    before = _state(h)
    urls = _urls()
    assert len(urls) >= 10 and ("POST", "/console/outbox/1/retry") in urls
    forged = TimestampSigner("not the judge's key").sign(base64.b64encode(json.dumps(
        {"moderator": "mod", "fp": "0" * 32, "csrf": "x" * 43}).encode())).decode()
    for cookies in ({}, {"judge_session": forged}):
        c = client(h)
        for name, value in cookies.items():
            c.cookies.set(name, value)
        for method, path in urls:
            if (method, path) == ("GET", "/console/login"):
                assert c.get(path).status_code == 200  # the one page for everyone
                continue
            r = c.request(method, path, data={"csrf": "x" * 43})
            if method == "GET":
                assert r.status_code == 303 and r.headers["location"].startswith("/console/login?next="), path
            else:
                assert r.status_code == 403, (method, path, r.status_code)
                assert "Log in first" in r.text or "out of date" in r.text, path
        c.close()
    assert _state(h) == before  # nothing was retried, run again or changed


def test_a_forged_csrf_token_is_refused_and_changes_nothing(quarantined_and_failed):
    h = quarantined_and_failed
    add_moderator(h)
    add_moderator(h, "other", "the other moderator's password")
    c, other = client(h), client(h)
    log_in(c)
    log_in(other, "other", "the other moderator's password")
    token, others_token = csrf_of(c.get("/console/outbox").text), csrf_of(other.get("/console/outbox").text)
    with h.judge.sessions() as s:
        failed = s.scalars(select(OutboxMessage.id).where(OutboxMessage.status == "failed")).first()
        quarantined = s.scalars(select(InboundMessage.id).where(InboundMessage.status == "quarantined")).one()
    before = _state(h)
    for path in (f"/console/outbox/{failed}/retry", f"/console/quarantine/{quarantined}/rerun", "/console/logout"):
        for data in ({}, {"csrf": ""}, {"csrf": "forged" * 8}, {"csrf": others_token}, {"csrf": token[:-1]}):
            r = c.post(path, data=data)
            assert r.status_code == 403 and "out of date" in r.text, (path, data)
    assert _state(h) == before
    assert c.get("/console/").status_code == 200  # still logged in: the forged logout did nothing
    # A token in the query string instead of the form is no token either.
    assert c.post(f"/console/outbox/{failed}/retry?csrf={token}").status_code == 403
    assert c.post(f"/console/outbox/{failed}/retry", data={"csrf": token}).status_code == 303
    assert _state(h) != before


def test_login_guessing_is_limited_per_account_and_per_address(tmp_path):
    """Issue 25: failures were counted per address alone, so a guesser at the
    moderator's address (every client behind a proxy that is not trusted)
    locked the moderator out with five wrong names. Now an account's
    failures lock that account, from every address; an address is refused
    whatever name it sends only after address_limit failures."""
    h = make_harness(tmp_path)
    add_moderator(h)
    add_moderator(h, "bob", "bob's long password")
    now = [0.0]
    c = client(h)
    c.app.state.login_limiter = limits = LoginLimiter(limit=5, window=900, clock=lambda: now[0], address_limit=25)
    for guess in range(5):
        assert log_in(c, MOD, f"guess{guess}").status_code == 401
    for _ in range(20):  # the account is refused now, without checking anything
        r = log_in(c)
        assert r.status_code == 429 and "Too many failed logins for this name or from your address" in r.text
    from starlette.testclient import TestClient

    elsewhere = TestClient(c.app, client=("192.0.2.7", 40000), follow_redirects=False)
    assert log_in(elsewhere).status_code == 429  # from every address
    # The other moderator, at the guesser's address, is not held up.
    assert log_in(c, "bob", "bob's long password").status_code == 303
    c.cookies.clear()
    # Names sprayed from one address: 5 + 20 failures there, and it is
    # refused whatever the name.
    for guess in range(20):
        assert log_in(c, f"name{guess}", "guess").status_code == 401
    assert log_in(c, "bob", "bob's long password").status_code == 429
    assert log_in(elsewhere, "bob", "bob's long password").status_code == 303
    now[0] = 901
    assert log_in(c).status_code == 303
    assert limits.wait("testclient", MOD) == 0
    h.close()


def test_the_limit_holds_across_two_apps_and_a_restart(tmp_path, migrated_database_url):
    """The attack that got through while the count lived in one process's
    memory: guesses spread over two web processes (two apps over one store)
    each got their own 5, and a restart gave 5 more. The count is the
    store's now: together they get 5, and a new app forgets none."""
    h = make_harness(tmp_path, migrated_database_url)
    add_moderator(h)
    now = [1000.0]
    first, second = client(h), client(h)
    for c in (first, second):
        c.app.state.login_limiter = LoginLimiter(limit=5, window=900, clock=lambda: now[0])
    for i in range(5):  # the guesses spread over both
        assert log_in(first if i % 2 else second, MOD, "guess").status_code == 401
    for c in (first, second):
        assert log_in(c).status_code == 429
        c.close()
    restarted = client(h)
    restarted.app.state.login_limiter = LoginLimiter(limit=5, window=900, clock=lambda: now[0])
    assert "about 15 minutes" in log_in(restarted).text
    now[0] += 900
    assert log_in(restarted).status_code == 303
    restarted.close()
    h.close()


HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>[url=javascript:alert(1)]click[/url]'


def test_hostile_names_and_mails_are_shown_as_text(harness, monkeypatch):
    h = harness
    add_moderator(h)
    h.mail("gm@example.test", "CREATE ?vienna gmpw")
    h.mail(f'"{HOSTILE}" <ann@example.test>', f"SIGNON ?vienna annpw\n{HOSTILE}", subject=HOSTILE)

    def broken(ctx, node):
        raise RuntimeError(HOSTILE)

    with monkeypatch.context() as m:
        m.setitem(commands.HANDLERS, nodes.Help, broken)
        h.mail("bob@example.test", f"HELP\n{HOSTILE}", subject=HOSTILE)
    _fail_sending(h)
    h.mail("cat@example.test", "LIST", subject=HOSTILE)
    with h.judge.sessions.begin() as s:
        # Names the mail commands refuse, as if the store held them anyway.
        s.execute(update(Game).values(name=HOSTILE[:100]))
        s.execute(update(Player).values(name=HOSTILE[:200]))
        s.execute(update(OutboxMessage).where(OutboxMessage.status == "failed").values(last_error=HOSTILE))
    from judge.sources.watermark import WatermarkStore

    WatermarkStore(h.judge.sessions).note_error(HOSTILE, HOSTILE, HOSTILE)
    c = client(h)
    log_in(c)
    pages = [c.get(p) for p in ("/console/", "/console/outbox", "/console/outbox?all=1", "/console/quarantine",
                                "/console/sources")]
    game_link = re.search(r'href="(/console/game/[^"]+)"', pages[0].text).group(1)
    pages.append(c.get(game_link.replace("&amp;", "&")))
    with h.judge.sessions() as s:
        pages += [c.get(f"/console/mail/{i}") for i in s.scalars(select(InboundMessage.id))]
    assert all(p.status_code == 200 for p in pages), [(p.url, p.status_code) for p in pages]
    trail = pages[5].text
    assert "&lt;script&gt;alert(" in trail  # the game's name and the subjects, as text
    for p in pages:
        assert "<script>alert" not in p.text and "<img src=x" not in p.text, p.url
        assert "onerror=alert" not in p.text.replace("&lt;img src=x onerror=alert", ""), p.url
    assert sum("[url=javascript:alert(1)]" in p.text for p in pages) >= 5  # BBCode stays plain text
    assert not any('href="javascript' in p.text for p in pages)


def _mime(sender: str, subject: str, body: str, cte: str, message_id: str) -> bytes:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"], msg["Message-ID"] = sender, JUDGE, subject, message_id
    msg["Date"] = format_datetime(datetime(2026, 1, 1, tzinfo=timezone.utc))
    msg.set_content(body, cte=cte)
    return msg.as_bytes()


SECRETS = ["GmSecret11", "AnnSecret22", "BobSecret33", "CarolSecret44", "DanSecret55", "NewSecret66",
           "EveSecret77", "FayToken88"]


def test_no_password_of_any_mail_appears_on_any_console_page(harness, monkeypatch):
    h = harness
    add_moderator(h)
    h.mail("gm@example.test", f"CREATE ?vienna {SECRETS[0]}")
    h.mail("ann@example.test", f"SIGNON ?vienna {SECRETS[1]}\nSET PASSWORD {SECRETS[5]}")
    h.inbox.add(_mime("bob@example.test", "base64", f"SIGNON ?vienna {SECRETS[2]}\n", "base64", "<b64@x>"))
    h.inbox.add(_mime("carol@example.test", "qp", f"SIGNON ?vienna {SECRETS[3]} =\n", "quoted-printable",
                      "<qp@x>"))
    h.inbox.add(_mime("dan@example.test", f"=?utf-8?b?{base64.b64encode(f'SIGNON ?vienna {SECRETS[4]}'.encode()).decode()}?=",
                      f"hello, as I said: signon ?vienna {SECRETS[4]}\nLIST", "7bit", "<subj@x>"))
    h.run()

    def broken(ctx, node):  # a bug whose error quotes the command, password and all
        raise RuntimeError(f"cannot handle {node!r}")

    with monkeypatch.context() as m:
        m.setitem(commands.HANDLERS, nodes.Signon, broken)
        h.mail("eve@example.test", f"SIGNON ?vienna {SECRETS[6]}")
    h.mail("gm@example.test", f"SIGNON Mvienna {SECRETS[0]}\nSET PASSWORD {SECRETS[7]}")
    with h.judge.sessions() as s:
        assert s.scalars(select(InboundMessage.status).where(InboundMessage.sender == "eve@example.test")).one() \
            == "quarantined"
        assert any(SECRETS[6] in (r or "") for r in s.scalars(select(InboundMessage.reason)))  # the bug did quote it
        mail_ids = list(s.scalars(select(InboundMessage.id)))
        players = [p.address for p in s.scalars(select(Player))]
    c = client(h)
    log_in(c)
    pages = {p: c.get(p).text for p in ("/console/", "/console/outbox", "/console/outbox?all=1",
                                        "/console/quarantine", "/console/sources", "/metrics")}
    kinds = re.findall(r'<option value="([a-z_]+)">', c.get("/console/game/vienna").text)
    for query in [{}, *({"player": a} for a in players + ["gm@example.test"]), *({"kind": k} for k in kinds)]:
        pages[f"/console/game/vienna?{query}"] = c.get("/console/game/vienna", params=query).text
    for i in mail_ids:
        pages[f"/console/mail/{i}"] = c.get(f"/console/mail/{i}").text
    assert len(pages) > 15 and "SIGNON ?vienna ***" in pages["/console/game/vienna?{}"]
    assert "cannot handle" in pages["/console/quarantine"]
    encoded = [base64.b64encode(f"SIGNON ?vienna {s}\n".encode()).decode()[:16] for s in SECRETS]
    for url, html in pages.items():
        for secret in SECRETS:
            assert secret not in html, (url, secret)
        for word in encoded:
            assert word not in html, (url, word)
    assert MOD_PASSWORD not in "".join(pages.values())


def test_guesses_sent_at_once_to_the_real_server_are_limited_too(harness):
    """Many login guesses in parallel against a real server (uvicorn): at
    most five are checked, the others refused, and then the right password
    too."""
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    from tests.web.conftest import LiveWeb

    add_moderator(harness)
    web = LiveWeb(harness.config, harness.config.database_url)
    try:
        with httpx.Client(base_url=web.url, timeout=30) as c:
            token = csrf_of(c.get("/console/login").text)
            cookies = dict(c.cookies)

        def guess(i: int) -> int:
            with httpx.Client(base_url=web.url, timeout=30, cookies=cookies) as one:
                return one.post("/console/login", data={"csrf": token, "name": "mod", "password": f"guess{i}"},
                                follow_redirects=False).status_code

        with ThreadPoolExecutor(max_workers=20) as pool:
            codes = list(pool.map(guess, range(40)))
        assert codes.count(401) == 5 and codes.count(429) == 35, codes
        with httpx.Client(base_url=web.url, timeout=30, cookies=cookies) as c:
            right = c.post("/console/login", data={"csrf": token, "name": "mod", "password": MOD_PASSWORD})
        assert right.status_code == 429
    finally:
        web.stop()
